/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Building frames: Ethernet [802.1Q] IPv4|IPv6 UDP BTH [extension headers]
 * payload pad ICRC, as Linux rxe sends them (rxe_net.c: DF set, UDP
 * checksum 0, TOS 0 by default). The payload is read where it lies: into a
 * linear buffer, copied after the headers of an mbuf, or attached to the
 * chain as external buffers, with the ICRC computed over the same bytes.
 */

#include <stddef.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "dpr_wire.h"

/* The checksum field for a folded header sum, as rte_ipv4_cksum() gives
 * it: ~sum, but 0xFFFF stays. */
static inline uint16_t
ipv4_cksum_field(uint16_t sum)
{
	return sum == 0xffff ? sum : (uint16_t)~sum;
}

static inline uint32_t
l3_len(const struct dpr_wire_encap *e)
{
	return e->ipv6 ? sizeof(struct rte_ipv6_hdr) : sizeof(struct rte_ipv4_hdr);
}

static inline uint32_t
l2_len(const struct dpr_wire_encap *e)
{
	return sizeof(struct rte_ether_hdr) +
		(e->vlan ? sizeof(struct rte_vlan_hdr) : 0);
}

uint32_t
dpr_wire_hdr_len(const struct dpr_wire_encap *e, uint8_t opcode)
{
	return l2_len(e) + l3_len(e) + sizeof(struct rte_udp_hdr) +
		dpr_opcode[opcode].length;
}

static void
write_transport(uint8_t *p, const struct dpr_wire_hdrs *h, uint32_t pad)
{
	struct dpr_bth *bth = (struct dpr_bth *)p;
	struct dpr_reth *reth;
	struct dpr_aeth *aeth;
	struct dpr_atmeth *atm;
	struct dpr_atmack *ack;
	struct dpr_immdt *imm;
	struct dpr_ieth *ieth;
	struct dpr_deth *deth;
	struct dpr_cnp *cnp;

	bth->opcode = h->opcode;
	bth->flags = (h->se ? DPR_BTH_SE : 0) | (h->mig ? DPR_BTH_MIG : 0) |
		(uint8_t)(pad << DPR_BTH_PAD_SHIFT) | (h->tver & DPR_BTH_TVER_MASK);
	bth->pkey = rte_cpu_to_be_16(h->pkey);
	bth->qpn = rte_cpu_to_be_32((h->fecn ? DPR_BTH_FECN : 0) |
				    (h->becn ? DPR_BTH_BECN : 0) |
				    (h->dqpn & DPR_BTH_QPN_MASK));
	bth->apsn = rte_cpu_to_be_32((h->ackreq ? DPR_BTH_ACKREQ : 0) |
				     (h->psn & DPR_PSN_MASK));

	deth = dpr_hdr(bth, DPR_HDR_DETH);
	if (deth != NULL) {
		deth->qkey = rte_cpu_to_be_32(h->deth.qkey);
		deth->sqpn = rte_cpu_to_be_32(h->deth.sqpn & DPR_BTH_QPN_MASK);
	}
	reth = dpr_hdr(bth, DPR_HDR_RETH);
	if (reth != NULL) {
		reth->va = rte_cpu_to_be_64(h->reth.va);
		reth->rkey = rte_cpu_to_be_32(h->reth.rkey);
		reth->len = rte_cpu_to_be_32(h->reth.len);
	}
	atm = dpr_hdr(bth, DPR_HDR_ATMETH);
	if (atm != NULL) {
		atm->va = rte_cpu_to_be_64(h->atomic.va);
		atm->rkey = rte_cpu_to_be_32(h->atomic.rkey);
		atm->swap_add = rte_cpu_to_be_64(h->atomic.swap_add);
		atm->compare = rte_cpu_to_be_64(h->atomic.compare);
	}
	aeth = dpr_hdr(bth, DPR_HDR_AETH);
	if (aeth != NULL)
		aeth->smsn = rte_cpu_to_be_32((uint32_t)h->aeth.syndrome << 24 |
					      (h->aeth.msn & DPR_PSN_MASK));
	ack = dpr_hdr(bth, DPR_HDR_ATMACK);
	if (ack != NULL)
		ack->orig = rte_cpu_to_be_64(h->atomic_orig);
	imm = dpr_hdr(bth, DPR_HDR_IMMDT);
	if (imm != NULL)
		imm->imm = h->imm;
	ieth = dpr_hdr(bth, DPR_HDR_IETH);
	if (ieth != NULL)
		ieth->rkey = rte_cpu_to_be_32(h->ieth_rkey);
	cnp = dpr_hdr(bth, DPR_HDR_CNP);
	if (cnp != NULL)
		memset(cnp, 0, sizeof(*cnp));
}

uint32_t
dpr_wire_write_hdrs(uint8_t *dst, const struct dpr_wire_encap *e,
		    const struct dpr_wire_hdrs *h, uint32_t paylen)
{
	const struct dpr_opcode_info *oi = &dpr_opcode[h->opcode];
	uint32_t pad = dpr_wire_pad(paylen);
	uint32_t udp_len = sizeof(struct rte_udp_hdr) + oi->length + paylen +
		pad + DPR_ICRC_LEN;
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)dst;
	uint16_t l3_type = e->ipv6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4;
	struct rte_udp_hdr *udp;
	uint8_t *p;

	eth->dst_addr = e->dst_mac;
	eth->src_addr = e->src_mac;
	if (e->vlan) {
		struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)(eth + 1);

		eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_VLAN);
		vh->vlan_tci = rte_cpu_to_be_16(e->vlan_tci);
		vh->eth_proto = rte_cpu_to_be_16(l3_type);
	} else {
		eth->ether_type = rte_cpu_to_be_16(l3_type);
	}
	p = dst + l2_len(e);

	if (e->ipv6) {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)p;

		ip6->vtc_flow = rte_cpu_to_be_32(6u << 28 | (uint32_t)e->tos << 20 |
						 (e->flow_label & 0xfffff));
		ip6->payload_len = rte_cpu_to_be_16((uint16_t)udp_len);
		ip6->proto = IPPROTO_UDP;
		ip6->hop_limits = e->ttl;
		memcpy(ip6->src_addr, e->sgid.raw, 16);
		memcpy(ip6->dst_addr, e->dgid.raw, 16);
	} else {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)p;

		ip->version_ihl = RTE_IPV4_VHL_DEF;
		ip->type_of_service = e->tos;
		ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + udp_len));
		ip->packet_id = rte_cpu_to_be_16(e->ip_id);
		ip->fragment_offset = e->df ? RTE_BE16(RTE_IPV4_HDR_DF_FLAG) : 0;
		ip->time_to_live = e->ttl;
		ip->next_proto_id = IPPROTO_UDP;
		ip->hdr_checksum = 0;
		ip->src_addr = dpr_gid_to_ipv4(&e->sgid);
		ip->dst_addr = dpr_gid_to_ipv4(&e->dgid);
		ip->hdr_checksum = ipv4_cksum_field(dpr_ipv4_sum20(ip));
	}
	p += l3_len(e);

	udp = (struct rte_udp_hdr *)p;
	udp->src_port = rte_cpu_to_be_16(e->sport);
	udp->dst_port = RTE_BE16(DPR_ROCEV2_PORT);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)udp_len);
	udp->dgram_cksum = rte_cpu_to_be_16(e->udp_csum);
	p += sizeof(*udp);

	write_transport(p, h, pad);
	return (uint32_t)(p - dst) + oi->length;
}

static inline void
put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

uint32_t
dpr_wire_build_linear(uint8_t *buf, uint32_t size,
		      const struct dpr_wire_encap *e, const struct dpr_wire_hdrs *h,
		      const void *payload, uint32_t paylen)
{
	const struct dpr_opcode_info *oi = &dpr_opcode[h->opcode];
	uint32_t hl = dpr_wire_hdr_len(e, h->opcode);
	uint32_t pad = dpr_wire_pad(paylen);
	uint32_t len = hl + paylen + pad + DPR_ICRC_LEN;
	uint32_t crc;

	if (oi->name == NULL || len > size ||
	    (paylen != 0 && !(oi->mask & DPR_PAYLOAD_MASK)))
		return 0;
	dpr_wire_write_hdrs(buf, e, h, paylen);
	memcpy(buf + hl, payload, paylen);
	memset(buf + hl + paylen, 0, pad);
	crc = dpr_icrc_hdrs(buf + l2_len(e), e->ipv6, oi->length);
	crc = dpr_icrc_update(crc, buf + hl, paylen + pad);
	put_le32(buf + hl + paylen + pad, crc);
	return len;
}

/* A direct mbuf at the tail with room for @p len more bytes. */
static struct rte_mbuf *
tail_room(struct rte_mempool *pool, struct rte_mbuf *head,
	  struct rte_mbuf **tail, uint32_t len)
{
	struct rte_mbuf *t = *tail;

	if (RTE_MBUF_DIRECT(t) && rte_pktmbuf_tailroom(t) >= len)
		return t;
	t = rte_pktmbuf_alloc(pool);
	if (t == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	if (rte_pktmbuf_tailroom(t) < len || rte_pktmbuf_chain(head, t) != 0) {
		rte_pktmbuf_free(t);
		rte_errno = EINVAL;
		return NULL;
	}
	*tail = t;
	return t;
}

/* Does @p t hold the headers of @p e (the IPv4 identification aside)? */
static inline bool
tmpl_matches(const struct dpr_wire_tmpl *t, const struct dpr_wire_encap *e)
{
	const size_t id = offsetof(struct dpr_wire_encap, ip_id);
	const size_t rest = id + sizeof(e->ip_id);

	return t->len != 0 && memcmp(&t->key, e, id) == 0 &&
		memcmp((const uint8_t *)&t->key + rest, (const uint8_t *)e + rest,
		       sizeof(*e) - rest) == 0;
}

static void
tmpl_make(struct dpr_wire_tmpl *t, const struct dpr_wire_encap *e)
{
	uint8_t buf[sizeof(t->hdr) + 64];
	const struct dpr_wire_hdrs h = { .opcode = DPR_OP_RC_ACK };
	uint32_t len = l2_len(e) + l3_len(e) + sizeof(struct rte_udp_hdr);

	memcpy(&t->key, e, sizeof(t->key));
	t->key.ip_id = 0;
	dpr_wire_write_hdrs(buf, &t->key, &h, 0);
	t->l2_len = (uint8_t)l2_len(e);
	t->ip_sum = 0;
	if (!e->ipv6) {
		uint8_t *ip = buf + t->l2_len;

		/* total_length and hdr_checksum to 0; packet_id is 0 in key:
		 * the folded sum of what stays (ones' complement sums fold
		 * at any point, so the two changing words are added later) */
		memset(ip + offsetof(struct rte_ipv4_hdr, total_length), 0, 2);
		memset(ip + offsetof(struct rte_ipv4_hdr, hdr_checksum), 0, 2);
		t->ip_sum = dpr_ipv4_sum20(ip);
	}
	memcpy(t->hdr, buf, len);
	t->len = (uint8_t)len;
}

/* Headers from the template: copy, then the lengths, the identification
 * and the checksum; the transport headers as dpr_wire_write_hdrs(). */
static uint32_t
write_hdrs_tmpl(uint8_t *dst, struct dpr_wire_tmpl *t,
		const struct dpr_wire_encap *e, const struct dpr_wire_hdrs *h,
		uint32_t paylen)
{
	const struct dpr_opcode_info *oi = &dpr_opcode[h->opcode];
	uint32_t pad = dpr_wire_pad(paylen);
	uint16_t udp_len = (uint16_t)(sizeof(struct rte_udp_hdr) + oi->length +
				      paylen + pad + DPR_ICRC_LEN);
	struct rte_udp_hdr *udp;

	if (!tmpl_matches(t, e))
		tmpl_make(t, e);
	/* IPv4 (42 or 46 bytes): one fixed-size copy the compiler inlines;
	 * its tail lands where the BTH goes next (a frame has at least the
	 * 12 bytes of a BTH after UDP) */
	if (t->len <= 48)
		memcpy(dst, t->hdr, 48);
	else
		memcpy(dst, t->hdr, t->len);
	if (e->ipv6) {
		struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(dst + t->l2_len);

		ip6->payload_len = rte_cpu_to_be_16(udp_len);
	} else {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(dst + t->l2_len);
		uint32_t sum;

		ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + udp_len));
		ip->packet_id = rte_cpu_to_be_16(e->ip_id);
		/* the constant words' sum, plus the two that change */
		sum = t->ip_sum + ip->total_length + ip->packet_id;
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		ip->hdr_checksum = ipv4_cksum_field((uint16_t)sum);
	}
	udp = (struct rte_udp_hdr *)(dst + t->len - sizeof(*udp));
	udp->dgram_len = rte_cpu_to_be_16(udp_len);
	write_transport(dst + t->len, h, pad);
	return t->len + oi->length;
}

/* build() flags */
#define BUILD_GENERAL 0x1       /* never the one-segment IPv4 path */
#define BUILD_NO_ICRC 0x2       /* the ICRC field left 0: sealed after */

static struct rte_mbuf *
build(struct rte_mempool *pool, struct dpr_wire_tmpl *tmpl,
      const struct dpr_wire_encap *e, const struct dpr_wire_hdrs *h,
      const struct dpr_wire_seg *segs, unsigned int nseg, unsigned int flags)
{
	const struct dpr_opcode_info *oi = &dpr_opcode[h->opcode];
	struct rte_mbuf *m, *tail, *t;
	uint32_t paylen = 0, hl, pad, crc;
	unsigned int i;
	uint8_t *p, *hdr;

	for (i = 0; i < nseg; i++)
		paylen += segs[i].len;
	if (oi->name == NULL || (paylen != 0 && !(oi->mask & DPR_PAYLOAD_MASK))) {
		rte_errno = EINVAL;
		return NULL;
	}
	pad = dpr_wire_pad(paylen);
	hl = dpr_wire_hdr_len(e, h->opcode);

	m = rte_pktmbuf_alloc(pool);
	if (m == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	/* The usual frame: IPv4, untagged, every piece copied, all of it in
	 * the one mbuf. Headers, payload and pad written in a row, then the
	 * ICRC in one pass over them (dpr_icrc_ipv4): the same bytes
	 * as the general case below, in fewer instructions. */
	if (!(flags & BUILD_GENERAL) && !e->ipv6 && !e->vlan &&
	    hl + paylen + pad + DPR_ICRC_LEN <= rte_pktmbuf_tailroom(m)) {
		for (i = 0; i < nseg && segs[i].shinfo == NULL; i++)
			;
		if (i == nseg) {
			uint32_t len = hl + paylen + pad + DPR_ICRC_LEN, off = hl;

			p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
			if (tmpl != NULL)
				write_hdrs_tmpl(p, tmpl, e, h, paylen);
			else
				dpr_wire_write_hdrs(p, e, h, paylen);
			for (i = 0; i < nseg; i++) {
				memcpy(p + off, segs[i].addr, segs[i].len);
				off += segs[i].len;
			}
			memset(p + off, 0, pad);
			crc = flags & BUILD_NO_ICRC ? 0 :
				dpr_icrc_ipv4(p + RTE_ETHER_HDR_LEN,
					      len - RTE_ETHER_HDR_LEN - DPR_ICRC_LEN);
			put_le32(p + off + pad, crc);
			return m;
		}
	}
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)hl);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		rte_errno = EINVAL;
		return NULL;
	}
	if (tmpl != NULL)
		write_hdrs_tmpl(p, tmpl, e, h, paylen);
	else
		dpr_wire_write_hdrs(p, e, h, paylen);
	hdr = p;
	tail = m;

	for (i = 0; i < nseg; i++) {
		const struct dpr_wire_seg *s = &segs[i];
		uint32_t done = 0;

		if (s->shinfo == NULL) {
			t = tail_room(pool, m, &tail, s->len);
			if (t == NULL)
				goto fail;
			/* appends to the last segment, which is t */
			memcpy(rte_pktmbuf_append(m, (uint16_t)s->len), s->addr,
			       s->len);
			continue;
		}
		/* an mbuf holds at most 64 KiB - 1: longer pieces take several */
		while (done < s->len) {
			uint16_t n = (uint16_t)RTE_MIN(s->len - done, (uint32_t)UINT16_MAX);

			t = rte_pktmbuf_alloc(pool);
			if (t == NULL) {
				rte_errno = ENOMEM;
				goto fail;
			}
			rte_mbuf_ext_refcnt_update(s->shinfo, 1);
			rte_pktmbuf_attach_extbuf(t, (uint8_t *)s->addr + done,
						  s->iova + done, n, s->shinfo);
			t->data_len = n;
			t->pkt_len = n;
			if (rte_pktmbuf_chain(m, t) != 0) {
				rte_pktmbuf_free(t);
				rte_errno = EINVAL;
				goto fail;
			}
			tail = t;
			done += n;
		}
	}

	t = tail_room(pool, m, &tail, pad + DPR_ICRC_LEN);
	if (t == NULL)
		goto fail;
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(pad + DPR_ICRC_LEN));
	memset(p, 0, pad);
	if (flags & BUILD_NO_ICRC) {
		put_le32(p + pad, 0);
		return m;
	}
	/* the ICRC over the masked headers, then each payload piece from
	 * where it was taken (the copies in the frame hold the same bytes;
	 * attached ones are read in place), then the pad: no walk of the
	 * chain it was built into */
	crc = dpr_icrc_hdrs(hdr + l2_len(e), e->ipv6, oi->length);
	for (i = 0; i < nseg; i++)
		if (segs[i].len != 0)
			crc = dpr_icrc_update(crc, segs[i].addr, segs[i].len);
	if (pad != 0)
		crc = dpr_icrc_update(crc, p, pad);
	put_le32(p + pad, crc);
	return m;
fail:
	rte_pktmbuf_free(m);
	return NULL;
}

struct rte_mbuf *
dpr_wire_build(struct rte_mempool *pool, const struct dpr_wire_encap *e,
	       const struct dpr_wire_hdrs *h, const struct dpr_wire_seg *segs,
	       unsigned int nseg)
{
	return build(pool, NULL, e, h, segs, nseg, 0);
}

struct rte_mbuf *
dpr_wire_build_tmpl(struct rte_mempool *pool, struct dpr_wire_tmpl *t,
		    const struct dpr_wire_encap *e, const struct dpr_wire_hdrs *h,
		    const struct dpr_wire_seg *segs, unsigned int nseg)
{
	return build(pool, t, e, h, segs, nseg, 0);
}

struct rte_mbuf *
dpr_wire_build_unsealed(struct rte_mempool *pool, struct dpr_wire_tmpl *t,
			const struct dpr_wire_encap *e, const struct dpr_wire_hdrs *h,
			const struct dpr_wire_seg *segs, unsigned int nseg)
{
	return build(pool, t, e, h, segs, nseg, BUILD_NO_ICRC);
}

struct rte_mbuf *
dpr_wire_build_chain(struct rte_mempool *pool, struct dpr_wire_tmpl *t,
		     const struct dpr_wire_encap *e, const struct dpr_wire_hdrs *h,
		     const struct dpr_wire_seg *segs, unsigned int nseg)
{
	return build(pool, t, e, h, segs, nseg, BUILD_GENERAL);
}

void
dpr_wire_req_img_make(struct dpr_wire_req_img *img, const struct dpr_wire_tmpl *t,
		      uint16_t pkey, uint32_t dqpn)
{
	uint8_t *bth = img->hdr + t->len;

	memset(img, 0, sizeof(*img));
	memcpy(img->hdr, t->hdr, t->len);
	img->ip_sum = t->ip_sum;
	/* BTH: opcode, flags, AckReq and PSN per packet; FECN, BECN, Resv
	 * zero as rxe sends them */
	bth[2] = (uint8_t)(pkey >> 8);
	bth[3] = (uint8_t)pkey;
	bth[5] = (uint8_t)(dqpn >> 16);
	bth[6] = (uint8_t)(dqpn >> 8);
	bth[7] = (uint8_t)dqpn;
}

struct rte_mbuf *
dpr_wire_build_arp(struct rte_mempool *pool, const struct rte_ether_addr *sha,
		   rte_be32_t sip, const struct rte_ether_addr *tha, rte_be32_t tip)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *f = m != NULL ? rte_pktmbuf_append(m, DPR_ARP_FRAME_LEN) : NULL;

	if (f == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	dpr_wire_arp(f, sha, sip, tha, tip);
	return m;
}

void
dpr_wire_nd(void *buf, const struct rte_ether_addr *mac, const union dpr_gid *src,
	    const struct rte_ether_addr *dst_mac, const union dpr_gid *dst,
	    const union dpr_gid *target, uint8_t flags)
{
	/* copies first: the answer is written over the question */
	const struct rte_ether_addr from = *mac;
	const union dpr_gid s = *src, t = *target;
	const bool advert = dst_mac != NULL;
	struct rte_ether_addr to;
	union dpr_gid d;
	uint8_t *f = buf;
	struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(f + RTE_ETHER_HDR_LEN);
	uint8_t *icmp = (uint8_t *)(ip6 + 1);
	uint16_t ck;

	if (advert) {
		to = *dst_mac;
		d = *dst;
	} else {
		dpr_ipv6_solicited_node(&t, &d);
		dpr_ipv6_mcast_mac(&d, &to);
	}
	memcpy(f, &to, RTE_ETHER_ADDR_LEN);
	memcpy(f + 6, &from, RTE_ETHER_ADDR_LEN);
	f[12] = 0x86;
	f[13] = 0xdd;
	ip6->vtc_flow = RTE_BE32(6u << 28);
	ip6->payload_len = RTE_BE16(24 + 8);
	ip6->proto = IPPROTO_ICMPV6;
	ip6->hop_limits = 255;
	memcpy(ip6->src_addr, s.raw, 16);
	memcpy(ip6->dst_addr, d.raw, 16);
	icmp[0] = advert ? DPR_ICMP6_ND_ADVERT : DPR_ICMP6_ND_SOLICIT;
	icmp[1] = 0;
	icmp[2] = 0;
	icmp[3] = 0;
	icmp[4] = advert ? flags : 0;
	memset(icmp + 5, 0, 3);
	memcpy(icmp + 8, t.raw, 16);
	icmp[24] = advert ? DPR_ND_OPT_TGT_LLADDR : DPR_ND_OPT_SRC_LLADDR;
	icmp[25] = 1;   /* in units of 8 bytes */
	memcpy(icmp + 26, &from, RTE_ETHER_ADDR_LEN);
	ck = rte_ipv6_udptcp_cksum(ip6, icmp);
	memcpy(icmp + 2, &ck, 2);
}

struct rte_mbuf *
dpr_wire_build_ns(struct rte_mempool *pool, const struct rte_ether_addr *mac,
		  const union dpr_gid *src, const union dpr_gid *target)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *f = m != NULL ? rte_pktmbuf_append(m, DPR_ND_FRAME_LEN) : NULL;

	if (f == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	dpr_wire_nd(f, mac, src, NULL, NULL, target, 0);
	return m;
}
