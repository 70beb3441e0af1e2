/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The RoCEv2 invariant CRC (IBTA Annex A17.3.3), as Linux rxe computes it
 * in rxe_icrc.c: CRC-32 (the Ethernet polynomial, reflected) over the
 * masked pseudo-header and then the rest of the packet where it lies.
 * ISA-L's crc32_gzip_refl is incremental (its result seeds the next
 * call) and PCLMUL-fast; DPDK's rte_net_crc_calc cannot be continued.
 */

#include <string.h>

#include <isa-l/crc.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "dpr_wire.h"

/* 8 bytes of ones: the masked LRH that RoCEv2 does not carry */
static const uint8_t lrh_ones[8] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
};

uint32_t
dpr_icrc_update(uint32_t crc, const void *buf, uint64_t len)
{
	return crc32_gzip_refl(crc, buf, len);
}

uint32_t
dpr_icrc_hdrs(const uint8_t *l3, bool ipv6, uint32_t hdr_len)
{
	/* largest: IPv4 with options (60) + UDP (8) + BTH (12) */
	uint8_t ps[60 + sizeof(struct rte_udp_hdr) + sizeof(struct dpr_bth)];
	uint32_t iplen, n, crc;

	if (ipv6) {
		iplen = sizeof(struct rte_ipv6_hdr);
		memcpy(ps, l3, iplen + 8 + 12);
		/* traffic class, flow label, hop limit */
		ps[0] |= 0x0f;
		ps[1] = 0xff;
		ps[2] = 0xff;
		ps[3] = 0xff;
		ps[7] = 0xff;
	} else {
		iplen = (l3[0] & 0x0f) * 4u;
		memcpy(ps, l3, iplen + 8 + 12);
		ps[1] = 0xff;            /* TOS */
		ps[8] = 0xff;            /* TTL */
		ps[10] = 0xff;           /* header checksum */
		ps[11] = 0xff;
	}
	ps[iplen + 6] = 0xff;            /* UDP checksum */
	ps[iplen + 7] = 0xff;
	ps[iplen + 8 + 4] = 0xff;        /* BTH FECN, BECN, Resv6 */
	n = iplen + 8 + 12;

	crc = crc32_gzip_refl(0, lrh_ones, sizeof(lrh_ones));
	crc = crc32_gzip_refl(crc, ps, n);
	/* extension headers after the BTH, as they are */
	return crc32_gzip_refl(crc, l3 + n, hdr_len - sizeof(struct dpr_bth));
}

uint32_t
dpr_icrc_mbuf(const struct rte_mbuf *m, const struct dpr_pkt_info *pi)
{
	uint32_t off = pi->payload_off;
	uint32_t len = pi->paylen + pi->pad;
	/* IPv4 with options, UDP, the longest transport headers */
	uint8_t hdrs[60 + 8 + 40];
	const uint8_t *l3;
	uint32_t crc;

	/* headers split across segments are gathered (rare: NICs put
	 * them in the first segment) */
	l3 = rte_pktmbuf_read(m, pi->l3_off, pi->payload_off - pi->l3_off, hdrs);
	if (l3 == NULL || pi->payload_off - pi->l3_off > sizeof(hdrs))
		return ~pi->icrc; /* cannot match */
	crc = dpr_icrc_hdrs(l3, pi->encap.ipv6, pi->hdr_len);
	/* the payload where it lies, segment by segment */
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
