/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The RoCEv2 invariant CRC (IBTA Annex A17.3.3), as Linux rxe computes it
 * in rxe_icrc.c: CRC-32 (the Ethernet polynomial, reflected) over the
 * masked pseudo-header and then the rest of the packet where it lies.
 *
 * Two ways to the same value:
 *
 * - ISA-L's crc32_gzip_refl, incremental (its result seeds the next call)
 *   and fast over long buffers (Debian's 2.30 folds 64 bytes a step with
 *   VPCLMULQDQ where the CPU has it). It is the definition here: every
 *   piece of payload in a chain, and the reference of the unit tests.
 * - A carry-less multiply fold of our own (dpr_icrc_fold.h, PCLMULQDQ, the
 *   method of Intel's "Fast CRC Computation for Generic Polynomials Using
 *   PCLMULQDQ", with its constants for the reflected CRC-32), for the
 *   packets the fast paths send and receive. Why not ISA-L there: the
 *   ICRC masks bytes of the headers (TOS, TTL, checksums, BTH byte 4),
 *   and ISA-L can only read them from memory, so the headers had to be
 *   masked in the frame (stores), CRCed, and put back (stores again); and
 *   its call costs about 40 instructions of set-up before the first byte.
 *   The fold ORs the masks into the 16-byte blocks in registers as it
 *   loads them: the frame is only read, and a 64 B WRITE frame (120
 *   bytes) takes about 75 instructions where ISA-L and the masking took
 *   about 155 (callgrind), at the same speed (tests/bench/bench_wire.c).
 *   Its blocks depend on each other (one multiply chain), so past
 *   FOLD_MAX bytes ISA-L's wide loop takes the packet as it lies, in one
 *   call, and the fold adds what the masks change: the CRC is linear, so
 *   the CRC of the masked packet is that of the packet XOR the CRC of
 *   (masked XOR unmasked) bytes, which are zero past the first 48; their
 *   48 bytes fold to 128 bits, a multiply carries them to the end of the
 *   packet (shift_k[], x^(8N +- 32) mod P for every N a multiple of 4),
 *   and one reduction gives the correction.
 *
 * The payload is never copied (DESIGN.md). ISA-L's AVX-512 CRC returns
 * with the upper halves of the vector registers dirty (no vzeroupper), and
 * every legacy-SSE instruction after it (a portable build's whole data
 * path) then pays the SSE/AVX transition: measured on a Xeon with
 * AVX-512, 190 ns more per 1 KiB frame, 7 times the CRC itself. So every
 * ISA-L call here clears them after (one vzeroupper where the CPU has AVX).
 */

#include <errno.h>
#include <string.h>

#include <isa-l/crc.h>
#include <rte_ip.h>
#include <rte_udp.h>

#if defined(RTE_ARCH_X86_64)
#include <immintrin.h>
#endif

#include "dpr_wire.h"

static bool cpu_has_avx;
static bool cpu_has_avx512;     /* and VPCLMULQDQ: ISA-L's 64-byte loads */
static bool cpu_has_avx512bw;   /* byte masks: the copy in the fold */
static bool use_fold;           /* PCLMULQDQ and SSSE3: the fold */

/* the longest packet whose masks are corrected (LONG_MAX_LEN: every
 * RoCEv2 packet of a 4096-byte path MTU), and the fold-forward factors:
 * shift_k[j] = x^(32 j) mod P, bit-reflected, shifted left once (the
 * form of the fold constants); carrying 128 bits N bytes forward takes
 * x^(8N + 32) for the low half and x^(8N - 32) for the high one, j =
 * N/4 + 1 and N/4 - 1 */
#define LONG_MAX_LEN 4352
static uint64_t shift_k[(LONG_MAX_LEN + 48) / 4 + 2];
/* the 64-byte fold's factors, laid out as its vectors at start (built
 * per call, four 16-byte stores read back by one 64-byte load stall on
 * store forwarding: 3 times slower): every lane 64 bytes forward; the
 * last block's lanes 48, 32, 16 bytes forward and the last as it is */
static uint64_t fold64_k[8] __rte_aligned(64);
static uint64_t lanes_k[8] __rte_aligned(64);
/* the long packets' fold (fold_ipv4_zmm_long()): every lane 256 bytes
 * forward (its four accumulators' step), and 192, 128 bytes (merging them) */
static uint64_t fold256_k[8] __rte_aligned(64);
static uint64_t fold192_k[8] __rte_aligned(64);
static uint64_t fold128_k[8] __rte_aligned(64);
/* mask_ipv4's first 128 bytes after 64 zeros: the fold's two masked
 * blocks start up to 60 bytes before the packet */
static uint8_t mask_ipv4_z[64 + 128] __rte_aligned(64);

static uint32_t
reflect32(uint32_t v)
{
	uint32_t r = 0;
	int i;

	for (i = 0; i < 32; i++)
		r |= ((v >> i) & 1u) << (31 - i);
	return r;
}

/* ISA-L's CRC, the vector registers' upper halves clean after it */
static inline uint32_t
crc_raw(uint32_t crc, const void *buf, uint64_t len)
{
	crc = crc32_gzip_refl(crc, buf, len);
#if defined(RTE_ARCH_X86_64)
	/* right after the call: the clobbers keep the compiler from
	 * reloading vector values before it (a legacy-SSE load there pays
	 * the transition this is here to avoid) */
	if (cpu_has_avx)
		__asm__ volatile("vzeroupper" ::: "xmm0", "xmm1", "xmm2",
				 "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
				 "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",
				 "xmm14", "xmm15");
#endif
	return crc;
}

/* CRC-32 of 8 bytes of ones, the masked LRH that RoCEv2 does not carry:
 * every ICRC starts from it (checked by the unit tests). ISA-L's calls
 * take and give the CRC inverted; the fold works on the register itself,
 * ~ICRC_LRH_SEED. */
#define ICRC_LRH_SEED 0x2144df1cu

/* IPv4 with options (60), UDP (8), the longest transport headers (40) */
#define MAX_HDRS (60 + 8 + 40)

/* the fold alone up to this many bytes (above, ISA-L's wide loop after
 * the first 48) */
#define FOLD_MAX 256

/* without the fold: a frame whose covered bytes fit here is masked whole
 * into a buffer of this size and CRCed in one call (below ISA-L's
 * 256-byte vector path) */
#define SMALL_MAX 240

/*
 * Positions the ICRC masks, as OR masks over IP header + UDP header + BTH
 * (IPv4 without options; IPv6), and where the last masked byte ends.
 * Zero past them, long enough for any 16-byte window the fold or the
 * masked copies load (up to SMALL_MAX).
 */
static const uint8_t mask_ipv4[SMALL_MAX] __rte_aligned(16) = {
	[1] = 0xff,                       /* TOS */
	[8] = 0xff,                       /* TTL */
	[10] = 0xff, [11] = 0xff,         /* header checksum */
	[20 + 6] = 0xff, [20 + 7] = 0xff, /* UDP checksum */
	[20 + 8 + 4] = 0xff,              /* BTH FECN, BECN, Resv6 */
};
#define MASK_END_IPV4 (20 + 8 + 4 + 1)
static const uint8_t mask_ipv6[SMALL_MAX] __rte_aligned(16) = {
	[0] = 0x0f, [1] = 0xff, [2] = 0xff, [3] = 0xff, /* class, flow label */
	[7] = 0xff,                       /* hop limit */
	[40 + 6] = 0xff, [40 + 7] = 0xff, /* UDP checksum */
	[40 + 8 + 4] = 0xff,              /* BTH FECN, BECN, Resv6 */
};
#define MASK_END_IPV6 (40 + 8 + 4 + 1)

/* dpr_icrc_ipv4_copy() as two passes: the copy, then the ICRC */
static uint32_t
icrc_ipv4_copy_apart(uint8_t *l3, uint32_t len, uint32_t poff,
		     const void *src, uint32_t n)
{
	memcpy(l3 + poff, src, n);
	memset(l3 + poff + n, 0, len - poff - n);
	return dpr_icrc_ipv4_fn(l3, len);
}

#if defined(RTE_ARCH_X86_64)
/* pshufb controls: loaded at 16 - p, bytes move p places up, zeros in */
static const uint8_t shift_up[32] = {
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
};

/* The fold, twice: PCLMULQDQ with SSE (SSSE3 is in DPDK's baseline,
 * corei7), and with AVX's three-operand encoding (no register copies:
 * about 20 fewer instructions per 120-byte packet). The compiler emits
 * these instructions only where the fold's intrinsics ask, and they run
 * only where the CPU has them (icrc_cpu_init()). */
#define FOLD_TARGET __attribute__((target("pclmul")))
#define FOLD(name) name ## _sse
#include "dpr_icrc_fold.h"
#undef FOLD_TARGET
#undef FOLD
#define FOLD_TARGET __attribute__((target("avx,pclmul")))
#define FOLD(name) name ## _avx
#include "dpr_icrc_fold.h"
#undef FOLD_TARGET
#undef FOLD
/*
 * Where the CPU has AVX-512 with VPCLMULQDQ, every packet of whole words
 * from 48 bytes up takes a 64-byte fold of our own: short ones
 * (FOLD_MAX bytes at most) one chain, long ones four (the fold's
 * multiplies overlap as in ISA-L's loop, and there is no call, no set-up
 * and no store into the packet: 1 KiB packets 1.1 times ISA-L's raw speed
 * over the same bytes, against 0.66 when ISA-L took them with the masks
 * stored into the packet, medians of nine runs of dprdma-bench-wire).
 * Packets of other lengths (no RoCEv2 peer sends them): their masked
 * fields set in place by one 64-byte store and put back by another after
 * one ISA-L call over the packet as it lies (ISA-L's first 64-byte load
 * then takes its bytes from that one store: a load that spans several
 * smaller stores waits for them to reach the cache).
 */
/*
 * The fold 64 bytes a step (VPCLMULQDQ on four 128-bit lanes), for the
 * short packets of the fast paths (48 to FOLD_MAX bytes, whole words):
 * the 128-bit fold is one chain of multiplies, seven for a 64 B WRITE's
 * 120 bytes, and its latency is the packet's. Here the packet is
 * front-padded with zeros to whole 64-byte blocks (a masked load: the
 * bytes before it are neither read nor faulted on), the masks ORed into
 * the first two, each block folds the ones before it forward 64 bytes,
 * and the last block's four lanes fold by 48, 32, 16 and 0 bytes to one
 * (shift_k[]); fold_reduce() as in the 128-bit fold. The register's start
 * value goes into the packet's first four bytes, as there.
 */
/* @p x's four lanes each carried forward by the bytes of @p k (a
 * fold*_k[]), plus @p t */
static __attribute__((target("avx512f,vpclmulqdq"))) inline __m512i
fold_zmm(__m512i x, __m512i k, __m512i t)
{
	return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
					 _mm512_clmulepi64_epi128(x, k, 0x11), t, 0x96);
}

/* The first 64-byte block of a packet front-padded to whole blocks by
 * @p p bytes (@p b: the packet's address less p; the lanes before it are
 * masked off, never read), its masks (@p mask, as b) ORed in and the
 * register's start value in its first four bytes. */
static __attribute__((target("avx512f"))) inline __m512i
zmm_first(const uint8_t *b, const uint8_t *mask, uint32_t p)
{
	const __mmask16 head = (__mmask16)(0xffffu << (p / 4));

	return (_mm512_maskz_loadu_epi32(head, b) | _mm512_maskz_loadu_epi32(head, mask)) ^
		_mm512_maskz_set1_epi32((__mmask16)(1u << (p / 4)), (int)~ICRC_LRH_SEED);
}

/* The CRC register of the last block's four lanes: lanes 0-2 carried to
 * the end, lane 3 as it is, added to 128 bits, fold_reduce(). */
static __attribute__((target("avx512f,vpclmulqdq,avx,pclmul"))) inline uint32_t
zmm_last(__m512i x)
{
	__m256i y;

	x = fold_zmm(x, _mm512_load_si512(lanes_k), _mm512_maskz_mov_epi64(0xc0, x));
	y = _mm512_castsi512_si256(x) ^ _mm512_extracti64x4_epi64(x, 1);
	return fold_reduce_avx(_mm256_castsi256_si128(y) ^
			       _mm256_extracti128_si256(y, 1));
}

static __attribute__((target("avx512f,vpclmulqdq,avx,pclmul"))) uint32_t
fold_ipv4_zmm(const uint8_t *buf, uint32_t len)
{
	const uint32_t p = -len & 63;           /* a multiple of 4 */
	const __m512i k64 = _mm512_load_si512(fold64_k);
	/* (an address, not a pointer into the packet) */
	const uint8_t *b = (const uint8_t *)((uintptr_t)buf - p);
	const uint8_t *mask = mask_ipv4_z + 64 - p;
	uint32_t off;
	__m512i x, t;

	x = zmm_first(b, mask, p);
	for (off = 64; off < len + p; off += 64) {
		t = _mm512_loadu_si512(b + off);
		if (off == 64)  /* (the masks end at 33: at most here) */
			t |= _mm512_loadu_si512(mask + 64);
		x = fold_zmm(x, k64, t);
	}
	return zmm_last(x);
}

/*
 * fold_ipv4_zmm() for long packets (more than FOLD_MAX bytes, whole
 * words: every full packet of a 1024 B or larger path MTU). One chain of
 * 64-byte folds waits on each multiply's latency; here four accumulators
 * take a 64-byte block each and fold 256 bytes forward a step (four
 * independent chains, as ISA-L's own loop), then merge into one (the
 * first three carried 192, 128 and 64 bytes on to the fourth), and the
 * blocks left and the lanes end as in fold_ipv4_zmm(). The masks are ORed
 * into the first two blocks in registers: the packet is only read, where
 * ISA-L needs it masked in memory (a store before, another after), and
 * there is no call and no set-up of ISA-L's.
 */
static __attribute__((target("avx512f,vpclmulqdq,avx,pclmul"))) uint32_t
fold_ipv4_zmm_long(const uint8_t *buf, uint32_t len)
{
	const uint32_t p = -len & 63;           /* a multiple of 4 */
	const uint32_t end = len + p;           /* whole blocks, at least 5 */
	const __m512i k64 = _mm512_load_si512(fold64_k);
	const __m512i k256 = _mm512_load_si512(fold256_k);
	const uint8_t *b = (const uint8_t *)((uintptr_t)buf - p);
	const uint8_t *mask = mask_ipv4_z + 64 - p;
	__m512i x0, x1, x2, x3, x;
	uint32_t off;

	x0 = zmm_first(b, mask, p);
	x1 = _mm512_loadu_si512(b + 64) | _mm512_loadu_si512(mask + 64);
	x2 = _mm512_loadu_si512(b + 128);
	x3 = _mm512_loadu_si512(b + 192);
	for (off = 256; off + 256 <= end; off += 256) {
		x0 = fold_zmm(x0, k256, _mm512_loadu_si512(b + off));
		x1 = fold_zmm(x1, k256, _mm512_loadu_si512(b + off + 64));
		x2 = fold_zmm(x2, k256, _mm512_loadu_si512(b + off + 128));
		x3 = fold_zmm(x3, k256, _mm512_loadu_si512(b + off + 192));
	}
	x = fold_zmm(x0, _mm512_load_si512(fold192_k), x3) ^
		fold_zmm(x1, _mm512_load_si512(fold128_k), _mm512_setzero_si512()) ^
		fold_zmm(x2, k64, _mm512_setzero_si512());
	for (; off < end; off += 64)
		x = fold_zmm(x, k64, _mm512_loadu_si512(b + off));
	return zmm_last(x);
}

/*
 * fold_ipv4_zmm_long() over a frame whose payload it copies in: the send
 * side's one pass over the payload (issue 18, item 7). Block by block,
 * what lies in the payload is loaded from @p src and stored into the
 * frame, and the same register is folded; the headers before @p poff are
 * read from the frame (built earlier), the pad after the payload is
 * zeros (written too). The blocks are the fold's: front-padded so the
 * last one ends at the end of the pad, so a block that mixes headers,
 * payload and pad (the first one or two, the last) is put together by
 * masked byte loads (the lanes off the mask are neither read nor faulted
 * on) and stored by a masked store (the frame's bytes outside [poff,
 * len), the Ethernet header among them, are not written). Its own copy
 * of the four-chain loop, not one body with fold_ipv4_zmm_long() and a
 * block loader: fuse_block() needs AVX512BW, which the plain fold (its
 * dispatch: AVX512F and VPCLMULQDQ) must not be compiled for.
 */
struct fuse {
	uint8_t *b;             /* the frame's l3 less the front padding */
	int32_t l3;             /* l3 from b: the front padding */
	const uint8_t *s;       /* src less (poff + p): a block's source at + 64k */
	int32_t poff, pend, len;        /* from b: payload, pad, end */
};

/* lanes [lo, hi) of a block, clamped to 0..64 */
static inline uint64_t
lanes_between(int32_t lo, int32_t hi)
{
	lo = RTE_MAX(lo, 0);
	hi = RTE_MIN(hi, 64);
	if (hi <= lo)
		return 0;
	return (hi == 64 ? ~0ull : (1ull << hi) - 1) & ~((1ull << lo) - 1);
}

static __attribute__((target("avx512f,avx512bw"))) inline __m512i
fuse_block(const struct fuse *f, int32_t at)
{
	uint8_t *d = f->b + at;
	const uint8_t *s = (const uint8_t *)((uintptr_t)f->s + (uintptr_t)(intptr_t)at);
	__mmask64 hdr, pay;
	__m512i t;

	if (likely(at >= f->poff && at + 64 <= f->pend)) {
		t = _mm512_loadu_si512(s);
		_mm512_storeu_si512(d, t);
		return t;
	}
	hdr = lanes_between(f->l3 - at, f->poff - at);
	pay = lanes_between(f->poff - at, f->pend - at);
	t = _mm512_mask_loadu_epi8(_mm512_maskz_loadu_epi8(hdr, d), pay, s);
	_mm512_mask_storeu_epi8(d, lanes_between(f->poff - at, f->len - at), t);
	return t;
}

static __attribute__((target("avx512f,avx512bw,vpclmulqdq,avx,pclmul"))) uint32_t
fold_ipv4_zmm_copy(uint8_t *l3, uint32_t len, uint32_t poff,
		   const uint8_t *src, uint32_t n)
{
	const uint32_t p = -len & 63;           /* a multiple of 4 */
	const uint32_t end = len + p;           /* whole blocks, at least 5 */
	const __m512i k64 = _mm512_load_si512(fold64_k);
	const __m512i k256 = _mm512_load_si512(fold256_k);
	const uint8_t *mask = mask_ipv4_z + 64 - p;
	const struct fuse f = {
		.b = (uint8_t *)((uintptr_t)l3 - p),
		.l3 = (int32_t)p,
		.s = (const uint8_t *)((uintptr_t)src - (poff + p)),
		.poff = (int32_t)(poff + p),
		.pend = (int32_t)(poff + n + p),
		.len = (int32_t)end,
	};
	__m512i x0, x1, x2, x3, x;
	uint32_t off;

	/* the first two blocks with the masks (they end at 33 from l3) and
	 * the register's start value, as zmm_first() */
	x0 = (fuse_block(&f, 0) | _mm512_loadu_si512(mask)) ^
		_mm512_maskz_set1_epi32((__mmask16)(1u << (p / 4)), (int)~ICRC_LRH_SEED);
	x1 = fuse_block(&f, 64) | _mm512_loadu_si512(mask + 64);
	x2 = fuse_block(&f, 128);
	x3 = fuse_block(&f, 192);
	for (off = 256; off + 256 <= end; off += 256) {
		x0 = fold_zmm(x0, k256, fuse_block(&f, (int32_t)off));
		x1 = fold_zmm(x1, k256, fuse_block(&f, (int32_t)off + 64));
		x2 = fold_zmm(x2, k256, fuse_block(&f, (int32_t)off + 128));
		x3 = fold_zmm(x3, k256, fuse_block(&f, (int32_t)off + 192));
	}
	x = fold_zmm(x0, _mm512_load_si512(fold192_k), x3) ^
		fold_zmm(x1, _mm512_load_si512(fold128_k), _mm512_setzero_si512()) ^
		fold_zmm(x2, k64, _mm512_setzero_si512());
	for (; off < end; off += 64)
		x = fold_zmm(x, k64, fuse_block(&f, (int32_t)off));
	return zmm_last(x);
}

static uint32_t
icrc_ipv4_copy_avx512(uint8_t *l3, uint32_t len, uint32_t poff,
		      const void *src, uint32_t n)
{
	if (len > FOLD_MAX && (len & 3) == 0)
		return ~fold_ipv4_zmm_copy(l3, len, poff, src, n);
	return icrc_ipv4_copy_apart(l3, len, poff, src, n);
}

static __attribute__((target("avx512f,vpclmulqdq,avx,avx2,pclmul"))) uint32_t
icrc_ipv4_avx512(const uint8_t *l3c, uint32_t len)
{
	uint8_t *l3 = (uint8_t *)(uintptr_t)l3c;  /* masked, then put back */
	__m512i a;
	uint32_t crc;

	if (len >= 48 && len <= FOLD_MAX && (len & 3) == 0)
		return ~fold_ipv4_zmm(l3c, len);
	if (len <= FOLD_MAX)
		return icrc_ipv4_avx(l3c, len);
	if (likely((len & 3) == 0))
		return ~fold_ipv4_zmm_long(l3c, len);
	a = _mm512_loadu_si512(l3);
	_mm512_storeu_si512(l3, _mm512_or_si512(a, _mm512_loadu_si512(mask_ipv4)));
	crc = crc32_gzip_refl(ICRC_LRH_SEED, l3, len);
	_mm512_storeu_si512(l3, a);
	return crc;     /* (the compiler clears the upper halves on return) */
}

/* the general paths (dpr_icrc_hdrs, dpr_icrc_mbuf) take SSE's */
#define FOLD_TARGET __attribute__((target("pclmul")))
#else
#define FOLD_TARGET
/* not reached: use_fold stays false */
static uint32_t
fold_masked_sse(uint32_t reg, const uint8_t *buf, uint32_t len,
		const uint8_t *mask, uint32_t mask_end)
{
	RTE_SET_USED(reg);
	RTE_SET_USED(buf);
	RTE_SET_USED(len);
	RTE_SET_USED(mask);
	RTE_SET_USED(mask_end);
	return 0;
}

static uint32_t
icrc_long_sse(const uint8_t *l3, uint32_t len, bool ipv6)
{
	RTE_SET_USED(l3);
	RTE_SET_USED(len);
	RTE_SET_USED(ipv6);
	return 0;
}
#endif

/*
 * Copy @p n (16 to SMALL_MAX) bytes from @p src to @p dst with the mask
 * ORed in, 16 bytes at a time in registers, so that the CRC's 16-byte
 * loads do not follow byte stores of the same bytes.
 */
static inline void
copy_masked(uint8_t *dst, const uint8_t *src, const uint8_t *mask, uint32_t n)
{
	uint32_t i;

	for (i = 0; i + 16 <= n; i += 16) {
		dpr_v16 v = dpr_load16(src + i) | dpr_load16(mask + i);

		memcpy(dst + i, &v, sizeof(v));
	}
	if (i < n) {
		dpr_v16 v = dpr_load16(src + n - 16) | dpr_load16(mask + n - 16);

		memcpy(dst + n - 16, &v, sizeof(v));
	}
}

/* Masked copy of IP..last transport header into @p ps; returns its length
 * (at most MAX_HDRS for hdr_len <= 40). */
static uint32_t
masked_hdrs(uint8_t *ps, const uint8_t *l3, bool ipv6, uint32_t hdr_len)
{
	uint32_t iplen = ipv6 ? sizeof(struct rte_ipv6_hdr) : (l3[0] & 0x0f) * 4u;
	uint32_t n = iplen + sizeof(struct rte_udp_hdr) + hdr_len;

	if (ipv6 || iplen == sizeof(struct rte_ipv4_hdr)) {
		copy_masked(ps, l3, ipv6 ? mask_ipv6 : mask_ipv4, n);
		return n;
	}
	/* IPv4 with options: RoCEv2 senders send none; byte by byte */
	memcpy(ps, l3, n);
	ps[1] = 0xff;
	ps[8] = 0xff;
	ps[10] = 0xff;
	ps[11] = 0xff;
	ps[iplen + 6] = 0xff;
	ps[iplen + 7] = 0xff;
	ps[iplen + 8 + 4] = 0xff;
	return n;
}

uint32_t
dpr_icrc_update(uint32_t crc, const void *buf, uint64_t len)
{
	return crc_raw(crc, buf, len);
}

FOLD_TARGET uint32_t
dpr_icrc_hdrs(const uint8_t *l3, bool ipv6, uint32_t hdr_len)
{
	uint8_t ps[MAX_HDRS] __rte_aligned(16);
	uint32_t iplen = ipv6 ? sizeof(struct rte_ipv6_hdr) : (l3[0] & 0x0f) * 4u;

	/* hdr_len is at most 40, the longest entry of the opcode table */
	if (iplen + 8 + hdr_len > sizeof(ps))
		return 0;
	if (use_fold && (ipv6 || iplen == sizeof(struct rte_ipv4_hdr)))
		return ~fold_masked_sse(~ICRC_LRH_SEED, l3, iplen + 8 + hdr_len,
				    ipv6 ? mask_ipv6 : mask_ipv4,
				    ipv6 ? MASK_END_IPV6 : MASK_END_IPV4);
	return crc_raw(ICRC_LRH_SEED, ps, masked_hdrs(ps, l3, ipv6, hdr_len));
}

/* dpr_icrc_ipv4() by ISA-L alone: the masked fields all lie in the first
 * 33 bytes; a masked copy of the first 48 (or all of a shorter packet: at
 * least 44 bytes, IP, UDP, BTH and an AETH or the ICRC), then the rest
 * where it lies */
static uint32_t
icrc_ipv4_isal(const uint8_t *l3, uint32_t len)
{
	uint8_t ps[48] __rte_aligned(16);

	if (len <= sizeof(ps)) {
		copy_masked(ps, l3, mask_ipv4, len);
		return crc_raw(ICRC_LRH_SEED, ps, len);
	}
	copy_masked(ps, l3, mask_ipv4, sizeof(ps));
	return crc_raw(crc_raw(ICRC_LRH_SEED, ps, sizeof(ps)), l3 + sizeof(ps),
		       len - sizeof(ps));
}

uint32_t (*dpr_icrc_ipv4_fn)(const uint8_t *l3, uint32_t len) = icrc_ipv4_isal;
uint32_t (*dpr_icrc_ipv4_copy_fn)(uint8_t *l3, uint32_t len, uint32_t poff,
				  const void *src, uint32_t n) = icrc_ipv4_copy_apart;
uint32_t dpr_icrc_copy_min = UINT32_MAX;

/* Continue @p crc over @p len bytes from offset @p off of a chain. */
static uint32_t
crc_segments(uint32_t crc, const struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	while (m != NULL && len > 0) {
		uint32_t n = RTE_MIN(len, (uint32_t)m->data_len - off);

		crc = crc_raw(crc, rte_pktmbuf_mtod_offset(m,
					const uint8_t *, off), n);
		len -= n;
		off = 0;
		m = m->next;
	}
	return crc;
}

FOLD_TARGET uint32_t
dpr_icrc_mbuf(const struct rte_mbuf *m, const struct dpr_pkt_info *pi)
{
	uint32_t hdrs = pi->payload_off - pi->l3_off;
	uint32_t body = pi->paylen + pi->pad;
	uint8_t ps[MAX_HDRS] __rte_aligned(16);
	uint8_t gathered[MAX_HDRS];
	uint8_t small[SMALL_MAX] __rte_aligned(16);
	const uint8_t *l3;
	uint32_t n;

	if (hdrs > MAX_HDRS)
		return ~pi->icrc; /* not a frame dpr_wire_parse() accepts */
	/* headers split across segments are gathered first (rare: NICs put
	 * them in the first segment) */
	l3 = rte_pktmbuf_read(m, pi->l3_off, hdrs, gathered);
	if (l3 == NULL)
		return ~pi->icrc;
	if (m->data_len >= pi->payload_off + body &&
	    (pi->encap.ipv6 || (l3[0] & 0x0f) == 5)) {
		/* a frame in one piece: IPv4 as the fast paths take it
		 * (AVX-512's four-chain fold of a long packet among them);
		 * IPv6 masked in registers by the fold (the first bytes,
		 * when it is long), or masked whole into one buffer and
		 * CRCed in one call (its fixed cost once) */
		if (use_fold && !pi->encap.ipv6)
			return dpr_icrc_ipv4_fn(l3, hdrs + body);
		if (use_fold)
			return hdrs + body <= FOLD_MAX ?
				~fold_masked_sse(~ICRC_LRH_SEED, l3, hdrs + body,
					     pi->encap.ipv6 ? mask_ipv6 : mask_ipv4,
					     pi->encap.ipv6 ? MASK_END_IPV6 :
					     MASK_END_IPV4) :
				icrc_long_sse(l3, hdrs + body, pi->encap.ipv6);
		if (hdrs + body <= SMALL_MAX) {
			copy_masked(small, l3, pi->encap.ipv6 ? mask_ipv6 : mask_ipv4,
				    hdrs + body);
			return crc_raw(ICRC_LRH_SEED, small, hdrs + body);
		}
	}
	n = masked_hdrs(ps, l3, pi->encap.ipv6, pi->hdr_len);
	/* the payload where it lies, segment by segment */
	return crc_segments(crc_raw(ICRC_LRH_SEED, ps, n), m,
			    pi->payload_off, body);
}

int
dpr_icrc_set_way(enum dpr_icrc_way way)
{
	bool pclmul = false;

#if defined(RTE_ARCH_X86_64)
	pclmul = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("ssse3");
	if (way == DPR_ICRC_BEST)
		way = !pclmul ? DPR_ICRC_ISAL : cpu_has_avx512 ? DPR_ICRC_FOLD_AVX512 :
			cpu_has_avx ? DPR_ICRC_FOLD_AVX : DPR_ICRC_FOLD_SSE;
	if ((way == DPR_ICRC_FOLD_SSE && !pclmul) ||
	    (way == DPR_ICRC_FOLD_AVX && (!pclmul || !cpu_has_avx)) ||
	    (way == DPR_ICRC_FOLD_AVX512 && (!pclmul || !cpu_has_avx512)))
		return -ENOTSUP;
	dpr_icrc_ipv4_copy_fn = icrc_ipv4_copy_apart;
	dpr_icrc_copy_min = UINT32_MAX;
	switch (way) {
	case DPR_ICRC_FOLD_AVX512:
		dpr_icrc_ipv4_fn = icrc_ipv4_avx512;
		if (cpu_has_avx512bw) {
			dpr_icrc_ipv4_copy_fn = icrc_ipv4_copy_avx512;
			dpr_icrc_copy_min = FOLD_MAX + 1;
		}
		break;
	case DPR_ICRC_FOLD_SSE:
		dpr_icrc_ipv4_fn = icrc_ipv4_sse;
		break;
	case DPR_ICRC_FOLD_AVX:
		dpr_icrc_ipv4_fn = icrc_ipv4_avx;
		break;
	default:
		dpr_icrc_ipv4_fn = icrc_ipv4_isal;
		break;
	}
#else
	RTE_SET_USED(pclmul);
	if (way == DPR_ICRC_BEST)
		way = DPR_ICRC_ISAL;
	if (way != DPR_ICRC_ISAL)
		return -ENOTSUP;
	dpr_icrc_ipv4_fn = icrc_ipv4_isal;
#endif
	use_fold = way != DPR_ICRC_ISAL;
	return 0;
}

__attribute__((constructor)) static void
icrc_cpu_init(void)
{
	uint32_t v = 1;         /* x^0, normal bit order */
	unsigned int j, i;

	for (j = 0; j < RTE_DIM(shift_k); j++) {
		shift_k[j] = (uint64_t)reflect32(v) << 1;
		for (i = 0; i < 32; i++)        /* times x^32, mod P */
			v = (v << 1) ^ ((v >> 31) ? 0x04c11db7u : 0);
	}
	/* (lane i: low half x^(8N + 32), high x^(8N - 32), as fold_by()) */
	for (i = 0; i < 4; i++) {
		fold64_k[2 * i] = shift_k[64 / 4 + 1];
		fold64_k[2 * i + 1] = shift_k[64 / 4 - 1];
	}
	for (i = 0; i < 4; i++) {
		fold256_k[2 * i] = shift_k[256 / 4 + 1];
		fold256_k[2 * i + 1] = shift_k[256 / 4 - 1];
		fold192_k[2 * i] = shift_k[192 / 4 + 1];
		fold192_k[2 * i + 1] = shift_k[192 / 4 - 1];
		fold128_k[2 * i] = shift_k[128 / 4 + 1];
		fold128_k[2 * i + 1] = shift_k[128 / 4 - 1];
	}
	for (i = 0; i < 3; i++) {
		lanes_k[2 * i] = shift_k[(48 - 16 * i) / 4 + 1];
		lanes_k[2 * i + 1] = shift_k[(48 - 16 * i) / 4 - 1];
	}
	memcpy(mask_ipv4_z + 64, mask_ipv4, 128);
#if defined(RTE_ARCH_X86_64)
	__builtin_cpu_init(); /* before __builtin_cpu_supports in a constructor */
	cpu_has_avx = __builtin_cpu_supports("avx");
	cpu_has_avx512 = __builtin_cpu_supports("avx512f") &&
		__builtin_cpu_supports("vpclmulqdq");
	cpu_has_avx512bw = cpu_has_avx512 && __builtin_cpu_supports("avx512bw");
#endif
	dpr_icrc_set_way(DPR_ICRC_BEST);
}
