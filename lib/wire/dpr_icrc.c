/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The RoCEv2 invariant CRC (IBTA Annex A17.3.3), as Linux rxe computes it
 * in rxe_icrc.c: CRC-32 (the Ethernet polynomial, reflected) over the
 * masked pseudo-header and then the rest of the packet where it lies.
 * ISA-L's crc32_gzip_refl is incremental (its result seeds the next
 * call) and PCLMUL-fast; DPDK's rte_net_crc_calc cannot be continued.
 *
 * The payload is never copied (DESIGN.md): one CRC call over the masked
 * headers, then one per segment of payload where it lies. What costs,
 * measured with tests/bench/bench_wire.c: ISA-L's fixed cost per call
 * (~10 ns, which small frames feel), and byte stores followed by 16-byte
 * loads of the same bytes (a store-forwarding stall). So the headers are
 * masked 16 bytes at a time in registers as they are copied.
 *
 * ISA-L's AVX-512 CRC (Debian's 2.30 takes it from 256 bytes on CPUs with
 * VPCLMULQDQ) returns with the upper halves of the vector registers
 * dirty: it does not end with vzeroupper. Every legacy-SSE instruction
 * after it (a portable build's whole data path, this file's masking
 * included) then pays the SSE/AVX transition: measured on a Xeon with
 * AVX-512, 190 ns more per 1 KiB frame, 7 times the CRC itself. So every
 * call here clears them after (one vzeroupper where the CPU has AVX).
 */

#include <string.h>

#include <isa-l/crc.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "dpr_wire.h"

static bool cpu_has_avx;

__attribute__((constructor)) static void
icrc_cpu_init(void)
{
#if defined(RTE_ARCH_X86_64)
	__builtin_cpu_init(); /* before __builtin_cpu_supports in a constructor */
	cpu_has_avx = __builtin_cpu_supports("avx");
#endif
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
 * every ICRC starts from it (checked by the unit tests) */
#define ICRC_LRH_SEED 0x2144df1cu

/* IPv4 with options (60), UDP (8), the longest transport headers (40) */
#define MAX_HDRS (60 + 8 + 40)

/* a frame whose covered bytes fit here is masked whole into a buffer of
 * this size and CRCed in one call (below ISA-L's 256-byte vector path) */
#define SMALL_MAX 240

/*
 * Positions the ICRC masks, as OR masks over IP header + UDP header + BTH
 * (IPv4 without options; IPv6). Zero past them, long enough for any
 * 16-byte window of the headers.
 */
static const uint8_t mask_ipv4[SMALL_MAX] __rte_aligned(16) = {
	[1] = 0xff,                       /* TOS */
	[8] = 0xff,                       /* TTL */
	[10] = 0xff, [11] = 0xff,         /* header checksum */
	[20 + 6] = 0xff, [20 + 7] = 0xff, /* UDP checksum */
	[20 + 8 + 4] = 0xff,              /* BTH FECN, BECN, Resv6 */
};
static const uint8_t mask_ipv6[SMALL_MAX] __rte_aligned(16) = {
	[0] = 0x0f, [1] = 0xff, [2] = 0xff, [3] = 0xff, /* class, flow label */
	[7] = 0xff,                       /* hop limit */
	[40 + 6] = 0xff, [40 + 7] = 0xff, /* UDP checksum */
	[40 + 8 + 4] = 0xff,              /* BTH FECN, BECN, Resv6 */
};

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

static uint32_t icrc_inplace_bytes(uint8_t *l3, uint32_t len);

uint32_t
dpr_icrc_update(uint32_t crc, const void *buf, uint64_t len)
{
	return crc_raw(crc, buf, len);
}

uint32_t
dpr_icrc_hdrs(const uint8_t *l3, bool ipv6, uint32_t hdr_len)
{
	uint8_t ps[MAX_HDRS] __rte_aligned(16);
	uint32_t iplen = ipv6 ? sizeof(struct rte_ipv6_hdr) : (l3[0] & 0x0f) * 4u;

	/* hdr_len is at most 40, the longest entry of the opcode table */
	if (iplen + 8 + hdr_len > sizeof(ps))
		return 0;
	return crc_raw(ICRC_LRH_SEED, ps,
			       masked_hdrs(ps, l3, ipv6, hdr_len));
}

uint32_t
dpr_icrc_ipv4_inplace(uint8_t *l3, uint32_t len)
{
	/* The masked fields all lie in the first 33 bytes. Where the 48
	 * bytes from l3 are ours (a packet of 44 bytes and more, its ICRC
	 * after), they are masked by three 16-byte stores and put back by
	 * three more: the CRC's 16-byte loads then take the stored values
	 * from the store buffer, where after byte stores each load that
	 * overlaps one waits for it to reach the cache (measured: 64 B
	 * WRITE frame 10.9 ns against 35 ns, ISA-L alone on the same
	 * bytes 9.9 ns). */
	if (len + DPR_ICRC_LEN >= 48) {
		dpr_v16 a = dpr_load16(l3), b = dpr_load16(l3 + 16);
		dpr_v16 c = dpr_load16(l3 + 32), v;
		uint32_t crc;

		v = a | dpr_load16(mask_ipv4);
		memcpy(l3, &v, sizeof(v));
		v = b | dpr_load16(mask_ipv4 + 16);
		memcpy(l3 + 16, &v, sizeof(v));
		v = c | dpr_load16(mask_ipv4 + 32);
		memcpy(l3 + 32, &v, sizeof(v));
		crc = crc_raw(ICRC_LRH_SEED, l3, len);
		memcpy(l3, &a, sizeof(a));
		memcpy(l3 + 16, &b, sizeof(b));
		memcpy(l3 + 32, &c, sizeof(c));
		return crc;
	}
	return icrc_inplace_bytes(l3, len);
}

/* the same, masking byte by byte (a packet shorter than 48 bytes) */
static uint32_t
icrc_inplace_bytes(uint8_t *l3, uint32_t len)
{
	/* the bytes the ICRC reads as ones: TOS, TTL, header checksum, UDP
	 * checksum, BTH byte 4 (FECN, BECN, Resv6); kept, then put back */
	uint8_t *const tos = l3 + 1, *const ttl = l3 + 8;
	uint8_t *const b4 = l3 + 20 + 8 + 4;
	uint8_t k_tos = *tos, k_ttl = *ttl, k_b4 = *b4;
	uint16_t k_sum, k_udp;
	uint32_t crc;

	memcpy(&k_sum, l3 + 10, 2);
	memcpy(&k_udp, l3 + 20 + 6, 2);
	*tos = 0xff;
	*ttl = 0xff;
	*b4 = 0xff;
	memset(l3 + 10, 0xff, 2);
	memset(l3 + 20 + 6, 0xff, 2);
	/* one call over the whole packet: ISA-L's fixed cost once */
	crc = crc_raw(ICRC_LRH_SEED, l3, len);
	*tos = k_tos;
	*ttl = k_ttl;
	*b4 = k_b4;
	memcpy(l3 + 10, &k_sum, 2);
	memcpy(l3 + 20 + 6, &k_udp, 2);
	return crc;
}

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

uint32_t
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
	if (m->data_len >= pi->payload_off + body && hdrs + body <= SMALL_MAX &&
	    (pi->encap.ipv6 || (l3[0] & 0x0f) == 5)) {
		/* a small frame in one piece: headers and payload masked
		 * into one buffer, one CRC call (its fixed cost once) */
		copy_masked(small, l3, pi->encap.ipv6 ? mask_ipv6 : mask_ipv4,
			    hdrs + body);
		return crc_raw(ICRC_LRH_SEED, small, hdrs + body);
	}
	n = masked_hdrs(ps, l3, pi->encap.ipv6, pi->hdr_len);
	/* the payload where it lies, segment by segment */
	return crc_segments(crc_raw(ICRC_LRH_SEED, ps, n), m,
			    pi->payload_off, body);
}
