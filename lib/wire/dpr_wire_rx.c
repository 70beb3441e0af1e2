/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Validation of a received RoCEv2 frame, in the order rxe_recv.c checks
 * it: lengths of every layer, the BTH version, the opcode, the header
 * lengths the opcode table gives, the pad count, the payload against the
 * path MTU, and last the ICRC. Each refusal has its own reason.
 */

#include <string.h>

#include <rte_ip.h>
#include <rte_udp.h>

#include "dpr_wire.h"

static const char *const err_names[DPR_WIRE_NUM_ERR] = {
	[DPR_WIRE_OK] = "ok",
#define _(e, n) [DPR_WIRE_ERR_ ## e] = #n,
	DPR_WIRE_ERRORS(_)
#undef _
};

const char *
dpr_wire_err_name(enum dpr_wire_err e)
{
	return (unsigned int)e < DPR_WIRE_NUM_ERR ? err_names[e] : "unknown";
}

void
dpr_wire_mbuf_wrap(struct rte_mbuf *m, void *buf, uint16_t len)
{
	memset(m, 0, sizeof(*m));
	m->buf_addr = buf;
	m->buf_len = len;
	m->data_off = 0;
	m->data_len = len;
	m->pkt_len = len;
	m->nb_segs = 1;
	m->next = NULL;
	rte_mbuf_refcnt_set(m, 1);
}

static __rte_always_inline enum dpr_wire_err
parse(const struct rte_mbuf *m, struct dpr_pkt_info *pi, uint32_t max_payload,
      bool check_icrc)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint32_t seg = rte_pktmbuf_data_len(m);
	const uint32_t total = rte_pktmbuf_pkt_len(m);
	const struct rte_ether_hdr *eth = (const struct rte_ether_hdr *)p;
	const struct dpr_opcode_info *oi;
	const struct rte_udp_hdr *udp;
	const struct dpr_bth *bth;
	uint32_t off, ip_end, udp_len, roce_len, body;
	uint8_t icrc_buf[DPR_ICRC_LEN];
	const uint8_t *icrc_p;
	uint16_t type;

	memset(pi, 0, sizeof(*pi));
	if (seg < sizeof(*eth))
		return DPR_WIRE_ERR_SHORT_ETH;
	pi->encap.dst_mac = eth->dst_addr;
	pi->encap.src_mac = eth->src_addr;
	type = rte_be_to_cpu_16(eth->ether_type);
	off = sizeof(*eth);
	if (type == RTE_ETHER_TYPE_VLAN) {
		const struct rte_vlan_hdr *vh = (const void *)(p + off);

		if (seg < off + sizeof(*vh))
			return DPR_WIRE_ERR_SHORT_ETH;
		pi->encap.vlan = true;
		pi->encap.vlan_tci = rte_be_to_cpu_16(vh->vlan_tci);
		type = rte_be_to_cpu_16(vh->eth_proto);
		off += sizeof(*vh);
	}
	pi->l3_off = (uint16_t)off;

	if (type == RTE_ETHER_TYPE_IPV4) {
		const struct rte_ipv4_hdr *ip = (const void *)(p + off);
		uint32_t ihl, tot;

		if (seg < off + sizeof(*ip))
			return DPR_WIRE_ERR_IP_HDR_LEN;
		if ((ip->version_ihl >> 4) != 4)
			return DPR_WIRE_ERR_IP_VERSION;
		ihl = rte_ipv4_hdr_len(ip);
		if (ihl < sizeof(*ip) || seg < off + ihl)
			return DPR_WIRE_ERR_IP_HDR_LEN;
		tot = rte_be_to_cpu_16(ip->total_length);
		if (tot < ihl + sizeof(*udp) || off + tot > total)
			return DPR_WIRE_ERR_IP_LEN;
		if ((m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) ==
		    RTE_MBUF_F_RX_IP_CKSUM_BAD ||
		    ((m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) !=
		     RTE_MBUF_F_RX_IP_CKSUM_GOOD &&
		     (ihl == sizeof(*ip) ? dpr_ipv4_sum20(ip) :
		      rte_raw_cksum(ip, ihl)) != 0xffff))
			return DPR_WIRE_ERR_IP_CSUM;
		if ((ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG |
				RTE_IPV4_HDR_OFFSET_MASK)) != 0)
			return DPR_WIRE_ERR_IP_FRAG;
		if (ip->next_proto_id != IPPROTO_UDP)
			return DPR_WIRE_ERR_NOT_UDP;
		pi->encap.tos = ip->type_of_service;
		pi->encap.ttl = ip->time_to_live;
		pi->encap.ip_id = rte_be_to_cpu_16(ip->packet_id);
		pi->encap.df = (ip->fragment_offset &
				rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG)) != 0;
		dpr_gid_from_ipv4(&pi->encap.sgid, ip->src_addr);
		dpr_gid_from_ipv4(&pi->encap.dgid, ip->dst_addr);
		off += ihl;
		ip_end = pi->l3_off + tot;
	} else if (type == RTE_ETHER_TYPE_IPV6) {
		const struct rte_ipv6_hdr *ip6 = (const void *)(p + off);
		uint32_t vtc;

		if (seg < off + sizeof(*ip6))
			return DPR_WIRE_ERR_IP_HDR_LEN;
		vtc = rte_be_to_cpu_32(ip6->vtc_flow);
		if ((vtc >> 28) != 6)
			return DPR_WIRE_ERR_IP_VERSION;
		if (rte_be_to_cpu_16(ip6->payload_len) < sizeof(*udp) ||
		    off + sizeof(*ip6) + rte_be_to_cpu_16(ip6->payload_len) > total)
			return DPR_WIRE_ERR_IP_LEN;
		/* RoCEv2 senders use no IPv6 extension headers */
		if (ip6->proto != IPPROTO_UDP)
			return DPR_WIRE_ERR_NOT_UDP;
		pi->encap.ipv6 = true;
		pi->encap.tos = (uint8_t)(vtc >> 20);
		pi->encap.flow_label = vtc & 0xfffff;
		pi->encap.ttl = ip6->hop_limits;
		memcpy(pi->encap.sgid.raw, ip6->src_addr, 16);
		memcpy(pi->encap.dgid.raw, ip6->dst_addr, 16);
		off += sizeof(*ip6);
		ip_end = off + rte_be_to_cpu_16(ip6->payload_len);
	} else {
		return DPR_WIRE_ERR_NOT_IP;
	}
	pi->ecn = pi->encap.tos & 0x3;
	pi->ce = pi->ecn == 0x3;

	pi->l4_off = (uint16_t)off;
	if (seg < off + sizeof(*udp))
		return DPR_WIRE_ERR_UDP_LEN;
	udp = (const struct rte_udp_hdr *)(p + off);
	udp_len = rte_be_to_cpu_16(udp->dgram_len);
	if (udp_len != ip_end - off)
		return DPR_WIRE_ERR_UDP_LEN;
	if (udp->dst_port != RTE_BE16(DPR_ROCEV2_PORT))
		return DPR_WIRE_ERR_NOT_ROCE_PORT;
	pi->encap.sport = rte_be_to_cpu_16(udp->src_port);
	pi->encap.udp_csum = rte_be_to_cpu_16(udp->dgram_cksum);
	off += sizeof(*udp);

	pi->bth_off = (uint16_t)off;
	roce_len = udp_len - sizeof(*udp);
	if (roce_len < sizeof(*bth) + DPR_ICRC_LEN || seg < off + sizeof(*bth))
		return DPR_WIRE_ERR_SHORT_BTH;
	bth = (const struct dpr_bth *)(p + off);
	if (dpr_bth_tver(bth) != 0)
		return DPR_WIRE_ERR_BAD_TVER;
	pi->opcode = bth->opcode;
	oi = &dpr_opcode[bth->opcode];
	if (oi->name == NULL)
		return DPR_WIRE_ERR_BAD_OPCODE;
	pi->mask = oi->mask;
	pi->hdr_len = oi->length;
	if (roce_len < oi->length + DPR_ICRC_LEN || seg < off + oi->length)
		return DPR_WIRE_ERR_SHORT_HDRS;

	body = roce_len - oi->length - DPR_ICRC_LEN;
	pi->pad = dpr_bth_pad(bth);
	if (pi->pad > body)
		return DPR_WIRE_ERR_BAD_PAD;
	if (!(oi->mask & DPR_PAYLOAD_MASK) && body != 0)
		return DPR_WIRE_ERR_UNEXPECTED_PAYLOAD;
	pi->paylen = body - pi->pad;
	if (max_payload != 0 && pi->paylen > max_payload)
		return DPR_WIRE_ERR_PAYLOAD_TOO_LONG;
	pi->payload_off = off + oi->length;
	pi->frame_len = ip_end;

	icrc_p = rte_pktmbuf_read(m, ip_end - DPR_ICRC_LEN, DPR_ICRC_LEN,
				  icrc_buf);
	if (icrc_p == NULL)
		return DPR_WIRE_ERR_IP_LEN;
	pi->icrc = (uint32_t)icrc_p[0] | (uint32_t)icrc_p[1] << 8 |
		(uint32_t)icrc_p[2] << 16 | (uint32_t)icrc_p[3] << 24;
	if (check_icrc && dpr_icrc_mbuf(m, pi) != pi->icrc)
		return DPR_WIRE_ERR_BAD_ICRC;
	return DPR_WIRE_OK;
}

enum dpr_wire_err
dpr_wire_parse(const struct rte_mbuf *m, struct dpr_pkt_info *pi,
	       uint32_t max_payload)
{
	return parse(m, pi, max_payload, true);
}

enum dpr_wire_err
dpr_wire_parse_again(const struct rte_mbuf *m, struct dpr_pkt_info *pi,
		     uint32_t max_payload)
{
	return parse(m, pi, max_payload, false);
}

/* Every header field of the BTH at @p bth, whose opcode is described by
 * @p oi, into @p h (zeroed first). */
static inline void
decode_hdrs(const struct dpr_bth *bth, const struct dpr_opcode_info *oi,
	    struct dpr_wire_hdrs *h)
{
	const uint8_t *b = (const uint8_t *)bth;
	const uint32_t mask = oi->mask;

	memset(h, 0, sizeof(*h));
	h->opcode = bth->opcode;
	h->se = dpr_bth_se(bth);
	h->mig = dpr_bth_mig(bth);
	h->tver = dpr_bth_tver(bth);
	h->pkey = dpr_bth_pkey(bth);
	h->fecn = dpr_bth_fecn(bth);
	h->becn = dpr_bth_becn(bth);
	h->dqpn = dpr_bth_qpn(bth);
	h->ackreq = dpr_bth_ackreq(bth);
	h->psn = dpr_bth_psn(bth);
	if (mask & (1u << DPR_HDR_RETH)) {
		const struct dpr_reth *reth = (const void *)(b + oi->offset[DPR_HDR_RETH]);

		h->reth.va = dpr_reth_va(reth);
		h->reth.rkey = dpr_reth_rkey(reth);
		h->reth.len = dpr_reth_len(reth);
	}
	if (mask & (1u << DPR_HDR_AETH)) {
		const struct dpr_aeth *aeth = (const void *)(b + oi->offset[DPR_HDR_AETH]);

		h->aeth.syndrome = dpr_aeth_syn(aeth);
		h->aeth.msn = dpr_aeth_msn(aeth);
	}
	if (mask & (1u << DPR_HDR_ATMETH)) {
		const struct dpr_atmeth *atm = (const void *)(b + oi->offset[DPR_HDR_ATMETH]);

		h->atomic.va = dpr_atmeth_va(atm);
		h->atomic.rkey = dpr_atmeth_rkey(atm);
		h->atomic.swap_add = dpr_atmeth_swap_add(atm);
		h->atomic.compare = dpr_atmeth_compare(atm);
	}
	if (mask & (1u << DPR_HDR_ATMACK))
		h->atomic_orig = dpr_atmack_orig((const void *)(b + oi->offset[DPR_HDR_ATMACK]));
	if (mask & (1u << DPR_HDR_IMMDT))
		h->imm = ((const struct dpr_immdt *)(b + oi->offset[DPR_HDR_IMMDT]))->imm;
	if (mask & (1u << DPR_HDR_IETH))
		h->ieth_rkey = dpr_ieth_rkey((const void *)(b + oi->offset[DPR_HDR_IETH]));
	if (mask & (1u << DPR_HDR_DETH)) {
		const struct dpr_deth *deth = (const void *)(b + oi->offset[DPR_HDR_DETH]);

		h->deth.qkey = dpr_deth_qkey(deth);
		h->deth.sqpn = dpr_deth_sqpn(deth);
	}
}

void
dpr_wire_decode(const struct rte_mbuf *m, const struct dpr_pkt_info *pi,
		struct dpr_wire_hdrs *h)
{
	const struct dpr_bth *bth = rte_pktmbuf_mtod_offset(m,
			const struct dpr_bth *, pi->bth_off);

	decode_hdrs(bth, &dpr_opcode[bth->opcode], h);
}

/* ------------------------------------------------ the common frame */

/* Offsets in the shape the fast paths take (dpr_wire.h); the template's
 * windows (dpr_wire_rx_tmpl_match). */
#define F_L3 DPR_F_L3
#define F_L4 DPR_F_L4
#define F_BTH DPR_F_BTH
#define F_MIN DPR_F_MIN
/* (bytes 16-17, the IP total length, are not compared: the windows skip
 * them) */
static const uint8_t tmpl_at[3] = { 0, 18, 34 };

void
dpr_wire_rx_tmpl_make(struct dpr_wire_rx_tmpl *t, rte_be32_t peer_ip,
		      const struct rte_ether_addr *local_mac, rte_be32_t local_ip,
		      uint32_t qpn, uint16_t pkey)
{
	uint8_t val[64] = { 0 }, mask[64] = { 0 };
	unsigned int w;

	if (local_mac != NULL) {
		memcpy(val, local_mac->addr_bytes, RTE_ETHER_ADDR_LEN);
		memset(mask, 0xff, RTE_ETHER_ADDR_LEN);
	}

	/* EtherType IPv4 */
	val[12] = 0x08; val[13] = 0x00; mask[12] = mask[13] = 0xff;
	/* version 4, 20-byte header */
	val[14] = 0x45; mask[14] = 0xff;
	/* ECN Not-ECT or ECT(0): a frame marked CE (or ECT(1)) goes the
	 * full way, where the notification point sees it */
	mask[15] = 0x01;
	/* fragment offset and MF zero (DF either way) */
	mask[20] = 0x3f; mask[21] = 0xff;
	/* UDP */
	val[23] = IPPROTO_UDP; mask[23] = 0xff;
	memcpy(&val[26], &peer_ip, 4);
	memcpy(&val[30], &local_ip, 4);
	memset(&mask[26], 0xff, 8);
	/* UDP destination port 4791 */
	val[36] = DPR_ROCEV2_PORT >> 8; val[37] = DPR_ROCEV2_PORT & 0xff;
	mask[36] = mask[37] = 0xff;
	/* BTH: TVer 0 (low nibble of byte 1), P_Key, destination QP */
	mask[43] = 0x0f;
	val[44] = (uint8_t)(pkey >> 8); val[45] = (uint8_t)pkey;
	mask[44] = mask[45] = 0xff;
	val[47] = (uint8_t)(qpn >> 16); val[48] = (uint8_t)(qpn >> 8);
	val[49] = (uint8_t)qpn;
	mask[47] = mask[48] = mask[49] = 0xff;
	for (w = 0; w < RTE_DIM(tmpl_at); w++) {
		memcpy(t->val[w], &val[tmpl_at[w]], 16);
		memcpy(t->mask[w], &mask[tmpl_at[w]], 16);
	}
	t->on = true;
}

bool
dpr_wire_parse_fast(struct rte_mbuf *m, const struct dpr_wire_rx_tmpl *t,
		    uint32_t max_payload, struct dpr_pkt_info *pi,
		    struct dpr_wire_hdrs *h)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	const struct dpr_bth *bth = (const struct dpr_bth *)(p + F_BTH);
	const struct dpr_opcode_info *oi;
	uint32_t ip_len, udp_len, body, pad, paylen, icrc;

	if (!t->on || m->nb_segs != 1 || m->data_len < F_MIN ||
	    !dpr_wire_rx_tmpl_match(t, p))
		return false;
	oi = &dpr_opcode[bth->opcode];
	if (!(oi->mask & DPR_RC_MASK))
		return false;
	/* the lengths, as dpr_wire_parse() checks them */
	ip_len = (uint32_t)p[F_L3 + 2] << 8 | p[F_L3 + 3];
	udp_len = (uint32_t)p[F_L4 + 4] << 8 | p[F_L4 + 5];
	if (F_L3 + ip_len > m->data_len || udp_len + sizeof(struct rte_ipv4_hdr) != ip_len ||
	    udp_len < sizeof(struct rte_udp_hdr) + oi->length + DPR_ICRC_LEN)
		return false;
	body = udp_len - (uint32_t)sizeof(struct rte_udp_hdr) - oi->length - DPR_ICRC_LEN;
	pad = dpr_bth_pad(bth);
	if (pad > body || (!(oi->mask & DPR_PAYLOAD_MASK) && body != 0))
		return false;
	paylen = body - pad;
	if (max_payload != 0 && paylen > max_payload)
		return false;
	if (!dpr_wire_ipv4_sound(p + F_L3, ip_len, m->ol_flags))
		return false;
	memcpy(&icrc, p + F_L3 + ip_len - DPR_ICRC_LEN, sizeof(icrc));
	icrc = rte_le_to_cpu_32(icrc);

	pi->opcode = bth->opcode;
	pi->mask = oi->mask;
	pi->l3_off = F_L3;
	pi->l4_off = F_L4;
	pi->bth_off = F_BTH;
	pi->hdr_len = oi->length;
	pi->payload_off = F_BTH + oi->length;
	pi->paylen = paylen;
	pi->pad = (uint8_t)pad;
	pi->ecn = p[F_L3 + 1] & 0x3;
	pi->ce = pi->ecn == 0x3;
	pi->frame_len = F_L3 + ip_len;
	pi->icrc = icrc;
	decode_hdrs(bth, oi, h);
	return true;
}
