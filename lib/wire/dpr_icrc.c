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
 */

#include <string.h>

#include <isa-l/crc.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "dpr_wire.h"

/* CRC-32 of 8 bytes of ones, the masked LRH that RoCEv2 does not carry:
 * every ICRC starts from it (checked by the unit tests) */
#define ICRC_LRH_SEED 0x2144df1cu

/* IPv4 with options (60), UDP (8), the longest transport headers (40) */
#define MAX_HDRS (60 + 8 + 40)

/*
 * Positions the ICRC masks, as OR masks over IP header + UDP header + BTH
 * (IPv4 without options; IPv6). Zero past them, long enough for any
 * 16-byte window of the headers.
 */
static const uint8_t mask_ipv4[128] __rte_aligned(16) = {
	[1] = 0xff,                       /* TOS */
	[8] = 0xff,                       /* TTL */
	[10] = 0xff, [11] = 0xff,         /* header checksum */
	[20 + 6] = 0xff, [20 + 7] = 0xff, /* UDP checksum */
	[20 + 8 + 4] = 0xff,              /* BTH FECN, BECN, Resv6 */
};
static const uint8_t mask_ipv6[128] __rte_aligned(16) = {
	[0] = 0x0f, [1] = 0xff, [2] = 0xff, [3] = 0xff, /* class, flow label */
	[7] = 0xff,                       /* hop limit */
	[40 + 6] = 0xff, [40 + 7] = 0xff, /* UDP checksum */
	[40 + 8 + 4] = 0xff,              /* BTH FECN, BECN, Resv6 */
};

/*
 * Copy @p n (16 to 108) header bytes from @p src to @p dst with the mask
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
	return crc32_gzip_refl(crc, buf, len);
}

uint32_t
dpr_icrc_hdrs(const uint8_t *l3, bool ipv6, uint32_t hdr_len)
{
	uint8_t ps[MAX_HDRS] __rte_aligned(16);
	uint32_t iplen = ipv6 ? sizeof(struct rte_ipv6_hdr) : (l3[0] & 0x0f) * 4u;

	/* hdr_len is at most 40, the longest entry of the opcode table */
	if (iplen + 8 + hdr_len > sizeof(ps))
		return 0;
	return crc32_gzip_refl(ICRC_LRH_SEED, ps,
			       masked_hdrs(ps, l3, ipv6, hdr_len));
}

uint32_t
dpr_icrc_ipv4_inplace(uint8_t *l3, uint32_t len)
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
	crc = crc32_gzip_refl(ICRC_LRH_SEED, l3, len);
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

		crc = crc32_gzip_refl(crc, rte_pktmbuf_mtod_offset(m,
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
	const uint8_t *l3;
	uint32_t n;

	if (hdrs > MAX_HDRS)
		return ~pi->icrc; /* not a frame dpr_wire_parse() accepts */
	/* headers split across segments are gathered first (rare: NICs put
	 * them in the first segment) */
	l3 = rte_pktmbuf_read(m, pi->l3_off, hdrs, gathered);
	if (l3 == NULL)
		return ~pi->icrc;
	n = masked_hdrs(ps, l3, pi->encap.ipv6, pi->hdr_len);
	/* the payload where it lies, segment by segment */
	return crc_segments(crc32_gzip_refl(ICRC_LRH_SEED, ps, n), m,
			    pi->payload_off, body);
}
