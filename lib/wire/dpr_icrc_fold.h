/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The carry-less multiply fold of dpr_icrc.c, included there once per
 * instruction encoding it is compiled for: FOLD_TARGET names the target
 * (PCLMULQDQ with SSE's two-operand instructions, or with AVX's three:
 * no register copies), FOLD(name) the variant's names. Private to
 * lib/wire.
 */

/*
 * The CRC register after @p len (at least 16) bytes at @p buf from
 * register @p reg (not inverted), the bytes below @p mask_end ORed with
 * @p mask (readable up to mask_end + 16). The buffer is only read, and
 * never outside [buf, buf + len).
 *
 * A message of any length becomes whole 16-byte blocks by zero bytes in
 * front: with the register's start value XORed into its first four
 * bytes, a CRC from zero does not change for leading zeros. So the first
 * block is the first 16 - p bytes moved up p places (p = -len mod 16),
 * and every later load is a whole block. Each block folds the ones
 * before it forward 128 bits (two carry-less multiplies by x^(128+32)
 * and x^(128-32) mod P, reflected) and adds itself; the last 128 bits
 * fold to 64, then to 32, and a Barrett reduction gives the remainder.
 */

/* @p x (a 128-bit remainder) carried forward past the bytes whose fold
 * factors are @p k (low half: x^(8N + 32), high: x^(8N - 32), reflected) */
static FOLD_TARGET inline __m128i
FOLD(fold_fwd)(__m128i x, __m128i k)
{
	return _mm_clmulepi64_si128(x, k, 0x00) ^ _mm_clmulepi64_si128(x, k, 0x11);
}

/* The CRC register of a 128-bit remainder: 128 -> 64 bits (32 zero bits
 * appended), -> 32, Barrett reduction. */
static FOLD_TARGET inline uint32_t
FOLD(fold_reduce)(__m128i x)
{
	const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
	const __m128i k5 = _mm_set_epi64x(0, 0x0163cd6124LL);
	const __m128i poly = _mm_set_epi64x(0x01f7011641LL, 0x01db710641LL);
	const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);
	__m128i t;

	t = _mm_clmulepi64_si128(k3k4, x, 0x01);
	x = _mm_srli_si128(x, 8) ^ t;
	t = _mm_srli_si128(x, 4);
	x = _mm_clmulepi64_si128(x & low32, k5, 0x00) ^ t;
	t = x;
	x = _mm_clmulepi64_si128(x & low32, poly, 0x10) & low32;
	x = _mm_clmulepi64_si128(x, poly, 0x00) ^ t;
	return (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(x, 4));
}

/*
 * The CRC register after @p len (at least 16) bytes at @p buf from
 * register @p reg (not inverted), the bytes below @p mask_end ORed with
 * @p mask (readable up to mask_end + 16). The buffer is only read, and
 * never outside [buf, buf + len).
 *
 * A message of any length becomes whole 16-byte blocks by zero bytes in
 * front: with the register's start value XORed into its first four
 * bytes, a CRC from zero does not change for leading zeros. So the first
 * block is the first 16 - p bytes moved up p places (p = -len mod 16),
 * and every later load is a whole block. Each block folds the ones
 * before it forward 128 bits (two carry-less multiplies by x^(128+32)
 * and x^(128-32) mod P, reflected) and adds itself.
 */
static FOLD_TARGET uint32_t
FOLD(fold_masked)(uint32_t reg, const uint8_t *buf, uint32_t len,
	    const uint8_t *mask, uint32_t mask_end)
{
	const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
	const uint32_t p = -len & 15;
	uint32_t off = 16 - p;
	__m128i x, t;

	x = _mm_loadu_si128((const __m128i *)buf) |
		_mm_loadu_si128((const __m128i *)mask);
	x = _mm_shuffle_epi8(x ^ _mm_cvtsi32_si128((int)reg),
			     _mm_loadu_si128((const __m128i *)(shift_up + 16 - p)));
	if (unlikely(off < 4)) {
		/* (len mod 16 is 1..3: the register's last bytes fall on
		 * the second block; RoCEv2 packets are whole words) */
		t = _mm_loadu_si128((const __m128i *)(buf + off)) |
			_mm_loadu_si128((const __m128i *)(mask + off));
		x = FOLD(fold_fwd)(x, k3k4) ^ t ^ _mm_cvtsi32_si128((int)(reg >> (8 * off)));
		off += 16;
	}
	for (; off < len; off += 16) {
		t = _mm_loadu_si128((const __m128i *)(buf + off));
		if (off < mask_end)
			t |= _mm_loadu_si128((const __m128i *)(mask + off));
		x = FOLD(fold_fwd)(x, k3k4) ^ t;
	}
	return FOLD(fold_reduce)(x);
}

/*
 * fold_masked() for the packets of the fast paths: the ICRC register of
 * an IPv4 packet of @p len bytes, 36 to FOLD_MAX and whole words (an
 * ACK's 44 among them). The masked bytes (below 33) then lie in the
 * first three blocks whatever the padding in front (at most 12 bytes),
 * which are whole (three blocks: 48 - p >= 36 bytes), and every later
 * block is loaded as it is, counted from the packet's end: a jump into a
 * row of folds, one per block left (no loop: a loop's count, compare and
 * branch per turn cost a 64 B WRITE's 120 bytes ten instructions in about
 * 80, callgrind).
 */
#define FOLD_FROM_END(n)                                                  \
	case n:                                                           \
		x = FOLD(fold_fwd)(x, k3k4) ^                             \
			_mm_loadu_si128((const __m128i *)(end - 16 * (n))); \
		__attribute__((fallthrough));
/* fold_ipv4()'s first three blocks, for @p p (0, 4, 8 or 12) bytes of
 * padding in front: called with a constant, whose offsets then need no
 * arithmetic (the shift's table and the masks are read at fixed
 * addresses: about eight instructions fewer a packet than with p a
 * variable, callgrind) */
static FOLD_TARGET __rte_always_inline __m128i
FOLD(fold_ipv4_head)(const uint8_t *buf, const uint32_t p, __m128i k3k4)
{
	const uint32_t off = 16 - p;
	__m128i x;

	x = _mm_loadu_si128((const __m128i *)buf) |
		_mm_loadu_si128((const __m128i *)mask_ipv4);
	x = _mm_shuffle_epi8(x ^ _mm_cvtsi32_si128((int)~ICRC_LRH_SEED),
			     _mm_loadu_si128((const __m128i *)(shift_up + 16 - p)));
	x = FOLD(fold_fwd)(x, k3k4) ^ (_mm_loadu_si128((const __m128i *)(buf + off)) |
				 _mm_loadu_si128((const __m128i *)(mask_ipv4 + off)));
	return FOLD(fold_fwd)(x, k3k4) ^ (_mm_loadu_si128((const __m128i *)(buf + off + 16)) |
				 _mm_loadu_si128((const __m128i *)(mask_ipv4 + off + 16)));
}

static FOLD_TARGET inline uint32_t
FOLD(fold_ipv4)(const uint8_t *buf, uint32_t len)
{
	const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
	const uint8_t *const end = buf + len;
	__m128i x;

	switch (-len & 15) {    /* (whole words: 0, 4, 8 or 12) */
	case 0:
		x = FOLD(fold_ipv4_head)(buf, 0, k3k4);
		break;
	case 4:
		x = FOLD(fold_ipv4_head)(buf, 4, k3k4);
		break;
	case 8:
		x = FOLD(fold_ipv4_head)(buf, 8, k3k4);
		break;
	default:
		x = FOLD(fold_ipv4_head)(buf, 12, k3k4);
		break;
	}
	RTE_BUILD_BUG_ON((FOLD_MAX - 48) / 16 > 13);
	switch ((len + 15) / 16 - 3) {          /* the blocks left */
	FOLD_FROM_END(13)
	FOLD_FROM_END(12)
	FOLD_FROM_END(11)
	FOLD_FROM_END(10)
	FOLD_FROM_END(9)
	FOLD_FROM_END(8)
	FOLD_FROM_END(7)
	FOLD_FROM_END(6)
	FOLD_FROM_END(5)
	FOLD_FROM_END(4)
	FOLD_FROM_END(3)
	FOLD_FROM_END(2)
	FOLD_FROM_END(1)
	default:
		break;
	}
	return FOLD(fold_reduce)(x);
}
#undef FOLD_FROM_END

/* @p x carried @p n bytes forward (n a multiple of 4, at most
 * LONG_MAX_LEN + 48) */
static FOLD_TARGET inline __m128i
FOLD(fold_by)(__m128i x, uint32_t n)
{
	if (n == 0)
		return x;
	return FOLD(fold_fwd)(x, _mm_set_epi64x((long long)shift_k[n / 4 - 1],
					  (long long)shift_k[n / 4 + 1]));
}

/*
 * What the masks add to the CRC register of the @p len bytes at @p buf
 * (the masked bytes all in the first @p head, a multiple of 16; len -
 * head a multiple of 4, at most LONG_MAX_LEN): the CRC from zero of the
 * bytes the masks turn to ones (mask & ~byte) followed by zeros. Each
 * block of them is carried to the end on its own (independent multiplies,
 * not one chain), then one reduction.
 */
static FOLD_TARGET uint32_t
FOLD(fold_fix)(const uint8_t *buf, uint32_t len, const uint8_t *mask, uint32_t head)
{
	__m128i x = _mm_setzero_si128();
	uint32_t off;

	for (off = 0; off < head; off += 16)
		x ^= FOLD(fold_by)(_mm_andnot_si128(_mm_loadu_si128((const __m128i *)(buf + off)),
					      _mm_loadu_si128((const __m128i *)(mask + off))),
			     len - off - 16);
	return FOLD(fold_reduce)(x);
}

/* The ICRC (ISA-L's inverted form) of the @p len bytes at @p l3 (IPv4
 * without options or IPv6, more than FOLD_MAX bytes, headers unmasked):
 * ISA-L over them as they are, the masks added by fold_fix(); or, for a
 * length it does not take, the first 48 (64) bytes masked by the fold
 * and ISA-L from there. */
static FOLD_TARGET inline uint32_t
FOLD(icrc_long)(const uint8_t *l3, uint32_t len, bool ipv6)
{
	const uint32_t head = ipv6 ? 64 : 48;   /* whole blocks past the masks */
	const uint8_t *mask = ipv6 ? mask_ipv6 : mask_ipv4;
	uint32_t reg;

	if (likely((len & 3) == 0 && len - head <= LONG_MAX_LEN)) {
		/* (the correction first: its multiplies overlap ISA-L's loop) */
		reg = FOLD(fold_fix)(l3, len, mask, head);
		return crc_raw(ICRC_LRH_SEED, l3, len) ^ reg;
	}
	reg = FOLD(fold_masked)(~ICRC_LRH_SEED, l3, head, mask,
			  ipv6 ? MASK_END_IPV6 : MASK_END_IPV4);
	return crc_raw(~reg, l3 + head, len - head);
}

/* dpr_icrc_ipv4() with the fold */
static FOLD_TARGET uint32_t
FOLD(icrc_ipv4)(const uint8_t *l3, uint32_t len)
{
	if (likely(len > 32 && (len & 3) == 0 && len <= FOLD_MAX))
		return ~FOLD(fold_ipv4)(l3, len);
	if (len <= FOLD_MAX)
		return ~FOLD(fold_masked)(~ICRC_LRH_SEED, l3, len, mask_ipv4,
					  MASK_END_IPV4);
	return FOLD(icrc_long)(l3, len, false);
}
