/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * RX classification: every received frame ends here as a reply rewritten
 * in place (ARP request, neighbour solicitation, ICMP or ICMPv6 echo
 * request for one of the port's addresses), a RoCEv2 frame for the
 * receive stage (UDP 4791 to one of the port's addresses), a neighbour
 * learnt, or a drop counted under one reason. No allocation: replies reuse the
 * request's mbuf.
 */

#include <string.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "dpr_wire.h"
#include "engine_private.h"

const char *const dpr_drop_names[DPR_DROP_MAX] = {
#define _(e, n, h) [DPR_DROP_ ## e] = #n,
	DPR_DROP_REASONS(_)
#undef _
};

const char *const dpr_drop_help[DPR_DROP_MAX] = {
#define _(e, n, h) [DPR_DROP_ ## e] = h,
	DPR_DROP_REASONS(_)
#undef _
};

#define DEFAULT_TTL 64

static inline enum dpr_rx_action
drop(struct dpr_port_counters *c, enum dpr_drop_reason r)
{
	c->drop[r]++;
	return DPR_RX_DROP;
}

static bool
learn4(const struct dpr_port *port, struct dpr_neigh_table *nt, rte_be32_t ip,
       const struct rte_ether_addr *mac, bool create)
{
	union dpr_gid g;

	if (ip == 0 || ip == port->ip)
		return false;   /* a probe, or someone claiming our address */
	dpr_gid_from_ipv4(&g, ip);
	return dpr_neigh_learn(nt, &g, mac, create);
}

/* RFC 826: answer a request for our address, in place; learn the
 * sender of a request for us and of a reply to us, and take a new MAC
 * from any other ARP message (gratuitous ARP) for a neighbour we know. */
static enum dpr_rx_action
rx_arp(const struct dpr_port *port, struct rte_mbuf *m,
       struct rte_ether_hdr *eth, struct dpr_port_counters *c,
       struct dpr_neigh_table *nt)
{
	struct rte_arp_hdr *arp;

	if (rte_pktmbuf_data_len(m) < sizeof(*eth) + sizeof(*arp))
		return drop(c, DPR_DROP_ARP_MALFORMED);
	arp = (struct rte_arp_hdr *)(eth + 1);
	if (arp->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    arp->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != 4)
		return drop(c, DPR_DROP_ARP_MALFORMED);
	/* a sender without a unicast MAC is nobody to answer or learn */
	if (rte_is_zero_ether_addr(&arp->arp_data.arp_sha) ||
	    rte_is_multicast_ether_addr(&arp->arp_data.arp_sha))
		return drop(c, DPR_DROP_ARP_MALFORMED);
	if (port->ip != 0 && arp->arp_data.arp_tip == port->ip &&
	    arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REPLY)) {
		/* the answer to our own request: a RoCE peer's MAC */
		learn4(port, nt, arp->arp_data.arp_sip, &arp->arp_data.arp_sha, true);
		c->arp_reply_rx++;
		return DPR_RX_CONSUMED;
	}
	if (port->ip == 0 || arp->arp_data.arp_tip != port->ip ||
	    arp->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST)) {
		/* not for us; but a neighbour we know may have moved */
		if (learn4(port, nt, arp->arp_data.arp_sip,
			   &arp->arp_data.arp_sha, false))
			return DPR_RX_CONSUMED;
		return drop(c, arp->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) ?
			    DPR_DROP_ARP_NOT_FOR_US : DPR_DROP_ARP_NOT_REQUEST);
	}
	c->arp_request_rx++;
	/* RFC 826: whoever asks for us is a neighbour worth knowing */
	learn4(port, nt, arp->arp_data.arp_sip, &arp->arp_data.arp_sha, true);

	/* the reply over the request (dpr_wire_arp reads the asker's
	 * addresses before it writes) */
	dpr_wire_arp(eth, &port->mac, port->ip, &arp->arp_data.arp_sha,
		     arp->arp_data.arp_sip);
	c->arp_reply_tx++;
	return DPR_RX_REPLY;
}

/* RFC 792 echo: reply in place with the request's identifier and data. */
static enum dpr_rx_action
rx_icmp(const struct dpr_port *port, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct rte_ipv4_hdr *ip, uint16_t ihl,
	uint16_t ip_len, struct dpr_port_counters *c)
{
	uint32_t off = sizeof(*eth) + ihl;
	uint32_t len = ip_len - ihl;
	struct rte_icmp_hdr *icmp;
	uint16_t sum;
	uint32_t tmp;

	if (len < sizeof(*icmp) ||
	    rte_pktmbuf_data_len(m) < off + sizeof(*icmp))
		return drop(c, DPR_DROP_ICMP_MALFORMED);
	icmp = rte_pktmbuf_mtod_offset(m, struct rte_icmp_hdr *, off);
	if (rte_raw_cksum_mbuf(m, off, len, &sum) != 0 || sum != 0xffff)
		return drop(c, DPR_DROP_ICMP_MALFORMED);
	if (icmp->icmp_type != RTE_IP_ICMP_ECHO_REQUEST || icmp->icmp_code != 0)
		return drop(c, DPR_DROP_ICMP_NOT_ECHO);
	c->icmp_echo_rx++;

	icmp->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	icmp->icmp_cksum = 0;
	rte_raw_cksum_mbuf(m, off, len, &sum);
	icmp->icmp_cksum = (uint16_t)~sum;

	tmp = ip->src_addr;
	ip->src_addr = port->ip;
	ip->dst_addr = tmp;
	ip->time_to_live = DEFAULT_TTL;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);

	eth->dst_addr = eth->src_addr;
	eth->src_addr = port->mac;
	/* Ethernet padding of a short request is not sent back. */
	if (rte_pktmbuf_pkt_len(m) > sizeof(*eth) + ip_len)
		rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - sizeof(*eth) - ip_len);
	m->ol_flags = 0;
	c->icmp_echo_reply_tx++;
	return DPR_RX_REPLY;
}

/* A RoCEv2 frame for the receive stage, counted. What was measured and
 * checked is not done again: the header lengths for the QP lookup
 * (dpr_wire_dqpn), the IPv4 checksum for dpr_wire_parse (as a NIC's
 * offload says it). */
static inline enum dpr_rx_action
roce(struct rte_mbuf *m, struct dpr_port_counters *c, uint16_t ihl)
{
	c->roce_rx_packets++;
	c->roce_rx_bytes += rte_pktmbuf_pkt_len(m);
	m->l2_len = RTE_ETHER_HDR_LEN;
	m->l3_len = ihl;
	m->ol_flags = (m->ol_flags & ~RTE_MBUF_F_RX_IP_CKSUM_MASK) |
		RTE_MBUF_F_RX_IP_CKSUM_GOOD;
	return DPR_RX_ROCE;
}

/*
 * The usual frame first: untagged IPv4 without options to the port's MAC
 * and address, not fragmented, UDP to 4791, lengths that hold, its header
 * checksum good. Exactly what the general path below takes as RoCEv2
 * (which also takes broadcast and options), in one pass over the headers;
 * whatever else, or whatever is wrong, goes the general way, which counts
 * why.
 */
static inline bool
roce_fast(const struct dpr_port *port, const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
	const struct rte_udp_hdr *udp = (const struct rte_udp_hdr *)(ip + 1);
	uint32_t ip_len, udp_len;

	if (unlikely(rte_pktmbuf_data_len(m) < sizeof(*eth) + sizeof(*ip) + sizeof(*udp)))
		return false;
	if (eth->ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4) ||
	    ((ip->version_ihl ^ 0x45) | (ip->next_proto_id ^ IPPROTO_UDP)) != 0 ||
	    ip->dst_addr != port->ip || port->ip == 0 ||
	    (ip->fragment_offset & RTE_BE16(RTE_IPV4_HDR_MF_FLAG |
					    RTE_IPV4_HDR_OFFSET_MASK)) != 0 ||
	    udp->dst_port != RTE_BE16(DPR_ROCEV2_PORT) ||
	    !rte_is_same_ether_addr(&eth->dst_addr, &port->mac))
		return false;
	ip_len = rte_be_to_cpu_16(ip->total_length);
	udp_len = rte_be_to_cpu_16(udp->dgram_len);
	if (ip_len < sizeof(*ip) + sizeof(*udp) ||
	    ip_len > rte_pktmbuf_pkt_len(m) - sizeof(*eth) ||
	    udp_len < sizeof(*udp) || udp_len > ip_len - sizeof(*ip))
		return false;
	switch (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) {
	case RTE_MBUF_F_RX_IP_CKSUM_GOOD:
		return true;
	case RTE_MBUF_F_RX_IP_CKSUM_BAD:
		return false;
	default:
		return dpr_ipv4_sum20(ip) == 0xffff;
	}
}

static enum dpr_rx_action
rx_ipv4(const struct dpr_port *port, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct dpr_port_counters *c)
{
	uint32_t l3_len = rte_pktmbuf_pkt_len(m) - sizeof(*eth);
	struct rte_ipv4_hdr *ip;
	uint16_t ihl, ip_len;

	if (rte_pktmbuf_data_len(m) < sizeof(*eth) + sizeof(*ip))
		return drop(c, DPR_DROP_RUNT);
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	ihl = rte_ipv4_hdr_len(ip);
	ip_len = rte_be_to_cpu_16(ip->total_length);
	if ((ip->version_ihl >> 4) != 4 || ihl < sizeof(*ip) ||
	    rte_pktmbuf_data_len(m) < sizeof(*eth) + ihl ||
	    ip_len < ihl || ip_len > l3_len)
		return drop(c, DPR_DROP_IP_MALFORMED);

	switch (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) {
	case RTE_MBUF_F_RX_IP_CKSUM_GOOD:
		break;
	case RTE_MBUF_F_RX_IP_CKSUM_BAD:
		return drop(c, DPR_DROP_IP_CSUM);
	default:
		if (rte_raw_cksum(ip, ihl) != 0xffff)
			return drop(c, DPR_DROP_IP_CSUM);
	}
	if (port->ip == 0 || ip->dst_addr != port->ip)
		return drop(c, DPR_DROP_IP_NOT_FOR_US);
	if ((ip->fragment_offset &
	     rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) != 0)
		return drop(c, DPR_DROP_IP_FRAGMENT);

	switch (ip->next_proto_id) {
	case IPPROTO_ICMP:
		return rx_icmp(port, m, eth, ip, ihl, ip_len, c);
	case IPPROTO_UDP: {
		struct rte_udp_hdr *udp;
		uint16_t udp_len;

		if (ip_len < ihl + sizeof(*udp) ||
		    rte_pktmbuf_data_len(m) < sizeof(*eth) + ihl + sizeof(*udp))
			return drop(c, DPR_DROP_UDP_MALFORMED);
		udp = (struct rte_udp_hdr *)((char *)ip + ihl);
		udp_len = rte_be_to_cpu_16(udp->dgram_len);
		if (udp_len < sizeof(*udp) || udp_len > ip_len - ihl)
			return drop(c, DPR_DROP_UDP_MALFORMED);
		if (udp->dst_port != RTE_BE16(DPR_ROCEV2_PORT))
			return drop(c, DPR_DROP_UDP_PORT);
		return roce(m, c, ihl);
	}
	default:
		return drop(c, DPR_DROP_IP_PROTO);
	}
}

/* The link-layer address option of type @p type in an ND message's
 * options (RFC 4861 4.6.1), or NULL; -1 for an option of length 0. */
static int
nd_lladdr(const uint8_t *opt, uint32_t len, uint8_t type,
	  const struct rte_ether_addr **mac)
{
	*mac = NULL;
	while (len >= 2) {
		uint32_t olen = opt[1] * 8u;

		if (olen == 0 || olen > len)
			return -1;
		if (opt[0] == type && olen >= 8)
			*mac = (const struct rte_ether_addr *)(opt + 2);
		opt += olen;
		len -= olen;
	}
	return 0;
}

/*
 * RFC 4861 neighbour discovery: a solicitation for one of our addresses
 * gets an advertisement in its place, and teaches @p nt the asker; an
 * advertisement teaches @p nt the target. The validity checks of 7.1.1
 * and 7.1.2: hop limit 255, code 0, 24 bytes or more, target not
 * multicast, options of non-zero length; a solicitation from the
 * unspecified address (duplicate address detection) goes to a
 * solicited-node group and carries no source address option.
 */
static enum dpr_rx_action
rx_nd(const struct dpr_port *port, struct rte_mbuf *m, struct rte_ether_hdr *eth,
      struct rte_ipv6_hdr *ip6, uint8_t *icmp, uint32_t len,
      struct dpr_port_counters *c, struct dpr_neigh_table *nt)
{
	static const union dpr_gid unspec;
	const struct rte_ether_addr *ll;
	union dpr_gid target, src;

	if (ip6->hop_limits != 255 || icmp[1] != 0 || len < 24 ||
	    icmp[8] == 0xff || nd_lladdr(icmp + 24, len - 24, icmp[0] ==
		DPR_ICMP6_ND_SOLICIT ? DPR_ND_OPT_SRC_LLADDR :
		DPR_ND_OPT_TGT_LLADDR, &ll) != 0)
		return drop(c, DPR_DROP_ICMP6_MALFORMED);
	memcpy(target.raw, icmp + 8, 16);
	memcpy(src.raw, ip6->src_addr, 16);
	if (icmp[0] == DPR_ICMP6_ND_ADVERT) {
		c->nd_advert_rx++;
		/* RFC 4861 7.2.5: a solicited one (ours answered) makes an
		 * entry; an unsolicited one only updates one we have */
		if (!dpr_port_owns(port, &target))
			dpr_neigh_learn(nt, &target, ll != NULL ? ll : &eth->src_addr,
					(icmp[4] & DPR_ND_NA_SOLICITED) != 0);
		return DPR_RX_CONSUMED;
	}
	if (!dpr_port_owns(port, &target))
		return drop(c, DPR_DROP_IP6_NOT_FOR_US);
	if (dpr_gid_eq(&src, &unspec) && (ll != NULL || ip6->dst_addr[0] != 0xff))
		return drop(c, DPR_DROP_ICMP6_MALFORMED);
	c->nd_solicit_rx++;
	if (m->nb_segs != 1 || rte_pktmbuf_data_len(m) + rte_pktmbuf_tailroom(m) < DPR_ND_FRAME_LEN)
		return drop(c, DPR_DROP_ICMP6_MALFORMED);
	/* RFC 4861 7.2.3: whoever asks learns us, and we them */
	if (ll != NULL)
		dpr_neigh_learn(nt, &src, ll, true);
	if (dpr_gid_eq(&src, &unspec)) {
		/* someone testing our address for duplicates: tell all nodes */
		union dpr_gid all;
		struct rte_ether_addr mc;

		dpr_ipv6_all_nodes(&all);
		dpr_ipv6_mcast_mac(&all, &mc);
		dpr_wire_nd(eth, &port->mac, &target, &mc, &all, &target,
			    DPR_ND_NA_OVERRIDE);
	} else {
		dpr_wire_nd(eth, &port->mac, &target,
			    ll != NULL ? ll : &eth->src_addr, &src, &target,
			    DPR_ND_NA_SOLICITED | DPR_ND_NA_OVERRIDE);
	}
	if (rte_pktmbuf_pkt_len(m) > DPR_ND_FRAME_LEN)
		rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - DPR_ND_FRAME_LEN);
	else if (rte_pktmbuf_pkt_len(m) < DPR_ND_FRAME_LEN)
		rte_pktmbuf_append(m, DPR_ND_FRAME_LEN - rte_pktmbuf_pkt_len(m));
	m->ol_flags = 0;
	c->nd_advert_tx++;
	return DPR_RX_REPLY;
}

/* ICMPv6 (RFC 4443): echo requests to our addresses are answered in
 * place; neighbour discovery as above; the rest counted and dropped. */
static enum dpr_rx_action
rx_icmp6(const struct dpr_port *port, struct rte_mbuf *m,
	 struct rte_ether_hdr *eth, struct rte_ipv6_hdr *ip6, uint32_t len,
	 bool to_us, struct dpr_port_counters *c, struct dpr_neigh_table *nt)
{
	uint32_t off = sizeof(*eth) + sizeof(*ip6);
	uint8_t *icmp;
	uint16_t sum;
	uint8_t tmp[16];

	if (len < 4 || rte_pktmbuf_data_len(m) < off + RTE_MIN(len, 32u) ||
	    m->nb_segs != 1)
		return drop(c, DPR_DROP_ICMP6_MALFORMED);
	icmp = rte_pktmbuf_mtod_offset(m, uint8_t *, off);
	/* over the checksum too: a sound one folds to 0xffff, returned
	 * complemented (0) for a protocol other than UDP */
	if (rte_ipv6_udptcp_cksum(ip6, icmp) != 0)
		return drop(c, DPR_DROP_ICMP6_MALFORMED);
	switch (icmp[0]) {
	case DPR_ICMP6_ND_SOLICIT:
	case DPR_ICMP6_ND_ADVERT:
		return rx_nd(port, m, eth, ip6, icmp, len, c, nt);
	case DPR_ICMP6_ECHO_REQUEST:
		if (!to_us)
			break;          /* to a group: nothing to answer */
		if (icmp[1] != 0 || len < 8)
			return drop(c, DPR_DROP_ICMP6_MALFORMED);
		c->icmp6_echo_rx++;
		icmp[0] = DPR_ICMP6_ECHO_REPLY;
		icmp[2] = 0;
		icmp[3] = 0;
		memcpy(tmp, ip6->src_addr, 16);
		memcpy(ip6->src_addr, ip6->dst_addr, 16);
		memcpy(ip6->dst_addr, tmp, 16);
		ip6->hop_limits = DEFAULT_TTL;
		sum = rte_ipv6_udptcp_cksum(ip6, icmp);
		memcpy(icmp + 2, &sum, 2);
		eth->dst_addr = eth->src_addr;
		eth->src_addr = port->mac;
		if (rte_pktmbuf_pkt_len(m) > off + len)
			rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - off - len);
		m->ol_flags = 0;
		c->icmp6_echo_reply_tx++;
		return DPR_RX_REPLY;
	default:
		break;
	}
	return drop(c, DPR_DROP_ICMP6_OTHER);
}

/*
 * IPv6 (RFC 8200) to one of our addresses, or to the solicited-node group
 * of one (neighbour solicitations) or all nodes: ICMPv6, and RoCEv2 over
 * UDP (IBTA A17.4: its UDP checksum is not checked, as rxe and ConnectX
 * do not: the ICRC covers the packet). No extension headers: a RoCEv2
 * sender uses none, and ND messages carry none.
 */
static enum dpr_rx_action
rx_ipv6(const struct dpr_port *port, struct rte_mbuf *m,
	struct rte_ether_hdr *eth, struct dpr_port_counters *c,
	struct dpr_neigh_table *nt)
{
	struct rte_ipv6_hdr *ip6;
	union dpr_gid dst, group, all;
	uint32_t plen;
	bool to_us;

	if (rte_pktmbuf_data_len(m) < sizeof(*eth) + sizeof(*ip6))
		return drop(c, DPR_DROP_RUNT);
	ip6 = (struct rte_ipv6_hdr *)(eth + 1);
	plen = rte_be_to_cpu_16(ip6->payload_len);
	if ((rte_be_to_cpu_32(ip6->vtc_flow) >> 28) != 6 ||
	    plen > rte_pktmbuf_pkt_len(m) - sizeof(*eth) - sizeof(*ip6))
		return drop(c, DPR_DROP_IP6_MALFORMED);
	memcpy(dst.raw, ip6->dst_addr, 16);
	to_us = dpr_port_owns(port, &dst) && !dpr_gid_is_ipv4(&dst);
	if (!to_us) {
		bool group_of_ours = false;

		dpr_ipv6_solicited_node(&port->ip6_ll, &group);
		group_of_ours = dpr_gid_eq(&group, &dst);
		if (port->has_ip6) {
			dpr_ipv6_solicited_node(&port->ip6, &group);
			group_of_ours |= dpr_gid_eq(&group, &dst);
		}
		dpr_ipv6_all_nodes(&all);
		group_of_ours |= dpr_gid_eq(&all, &dst);
		if (!group_of_ours || ip6->proto != IPPROTO_ICMPV6)
			return drop(c, DPR_DROP_IP6_NOT_FOR_US);
	}
	switch (ip6->proto) {
	case IPPROTO_ICMPV6:
		return rx_icmp6(port, m, eth, ip6, plen, to_us, c, nt);
	case IPPROTO_UDP: {
		struct rte_udp_hdr *udp;
		uint16_t udp_len;

		if (plen < sizeof(*udp) ||
		    rte_pktmbuf_data_len(m) < sizeof(*eth) + sizeof(*ip6) + sizeof(*udp))
			return drop(c, DPR_DROP_UDP_MALFORMED);
		udp = (struct rte_udp_hdr *)(ip6 + 1);
		udp_len = rte_be_to_cpu_16(udp->dgram_len);
		if (udp_len < sizeof(*udp) || udp_len != plen)
			return drop(c, DPR_DROP_UDP_MALFORMED);
		if (udp->dst_port != RTE_BE16(DPR_ROCEV2_PORT))
			return drop(c, DPR_DROP_UDP_PORT);
		return roce(m, c, sizeof(*ip6));
	}
	default:
		return drop(c, DPR_DROP_IP6_PROTO);
	}
}

enum dpr_rx_action
dpr_rx_classify(const struct dpr_port *port, struct rte_mbuf *m,
		struct dpr_port_counters *c, struct dpr_neigh_table *nt)
{
	struct rte_ether_hdr *eth;

	if (likely(roce_fast(port, m)))
		return roce(m, c, sizeof(struct rte_ipv4_hdr));
	if (unlikely(rte_pktmbuf_data_len(m) < sizeof(*eth)))
		return drop(c, DPR_DROP_RUNT);
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	/* ours, broadcast (ARP), or an IPv6 group (33:33:..., neighbour
	 * discovery: rx_ipv6 checks the group) */
	if (!rte_is_same_ether_addr(&eth->dst_addr, &port->mac) &&
	    !rte_is_broadcast_ether_addr(&eth->dst_addr) &&
	    !(eth->dst_addr.addr_bytes[0] == 0x33 &&
	      eth->dst_addr.addr_bytes[1] == 0x33 &&
	      eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV6)))
		return drop(c, DPR_DROP_L2_NOT_FOR_US);
	/* (IEEE 802: a source is one station) */
	if (unlikely(rte_is_zero_ether_addr(&eth->src_addr) ||
		     rte_is_multicast_ether_addr(&eth->src_addr)))
		return drop(c, DPR_DROP_L2_BAD_SRC);

	switch (eth->ether_type) {
	case RTE_BE16(RTE_ETHER_TYPE_IPV4):
		return rx_ipv4(port, m, eth, c);
	case RTE_BE16(RTE_ETHER_TYPE_ARP):
		return rx_arp(port, m, eth, c, nt);
	case RTE_BE16(RTE_ETHER_TYPE_VLAN):
	case RTE_BE16(RTE_ETHER_TYPE_QINQ):
		return drop(c, DPR_DROP_VLAN);
	case RTE_BE16(RTE_ETHER_TYPE_IPV6):
		return rx_ipv6(port, m, eth, c, nt);
	default:
		return drop(c, DPR_DROP_ETHERTYPE);
	}
}
