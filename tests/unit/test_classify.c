/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/* lib/engine/dpr_classify.c: ARP, neighbour discovery, ICMP and ICMPv6
 * replies, RoCEv2 over IPv4 and IPv6, drop reasons. */

#include <arpa/inet.h>

#include <rte_arp.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "dpr_engine.h"
#include "dpr_wire.h"
#include "dpr_test.h"
#include "engine_private.h"

static struct rte_mempool *pool;
static struct dpr_port port;
static const struct rte_ether_addr peer_mac = {{ 0x02, 0, 0, 0, 0, 0x02 }};
#define PORT_IP RTE_IPV4(10, 77, 0, 1)
#define PEER_IP RTE_IPV4(10, 77, 0, 2)

static int
setup(void)
{
	pool = rte_pktmbuf_pool_create("classify", 256, 0, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (pool == NULL)
		return -1;
	memset(&port, 0, sizeof(port));
	port.mac = (struct rte_ether_addr){{ 0x02, 0, 0, 0, 0, 0x01 }};
	port.ip = rte_cpu_to_be_32(PORT_IP);
	port.prefix_len = 24;
	dpr_ipv6_link_local(&port.mac, &port.ip6_ll);
	inet_pton(AF_INET6, "fd77::1", port.ip6.raw);
	port.has_ip6 = true;
	port.ip6_prefix_len = 64;
	port.mtu = 1500;
	return 0;
}

static void
teardown(void)
{
	rte_mempool_free(pool);
}

static struct rte_mbuf *
eth_frame(uint16_t ether_type, const struct rte_ether_addr *dst, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	struct rte_ether_hdr *eth;

	if (m == NULL)
		return NULL;
	eth = (struct rte_ether_hdr *)rte_pktmbuf_append(m, len);
	memset(eth, 0, len);
	eth->dst_addr = *dst;
	eth->src_addr = peer_mac;
	eth->ether_type = rte_cpu_to_be_16(ether_type);
	return m;
}

static struct rte_mbuf *
arp_frame(uint16_t op, uint32_t tip)
{
	static const struct rte_ether_addr bcast = {{ 0xff, 0xff, 0xff, 0xff,
						      0xff, 0xff }};
	struct rte_mbuf *m = eth_frame(RTE_ETHER_TYPE_ARP, &bcast, 60);
	struct rte_arp_hdr *arp = rte_pktmbuf_mtod_offset(m, struct rte_arp_hdr *,
							  RTE_ETHER_HDR_LEN);

	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = 6;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(op);
	arp->arp_data.arp_sha = peer_mac;
	arp->arp_data.arp_sip = rte_cpu_to_be_32(PEER_IP);
	arp->arp_data.arp_tip = rte_cpu_to_be_32(tip);
	return m;
}

/* IPv4 frame to @p dst with @p l4_len bytes after the IP header. */
static struct rte_mbuf *
ip_frame(uint8_t proto, uint32_t dst, uint16_t l4_len, uint16_t pad)
{
	uint16_t len = RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv4_hdr) + l4_len;
	struct rte_mbuf *m = eth_frame(RTE_ETHER_TYPE_IPV4, &port.mac, len + pad);
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *,
							  RTE_ETHER_HDR_LEN);

	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16(len - RTE_ETHER_HDR_LEN);
	ip->time_to_live = 17;
	ip->next_proto_id = proto;
	ip->src_addr = rte_cpu_to_be_32(PEER_IP);
	ip->dst_addr = rte_cpu_to_be_32(dst);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	return m;
}

static struct rte_ipv4_hdr *
ip_of(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, RTE_ETHER_HDR_LEN);
}

static struct rte_mbuf *
echo_request(uint16_t data_len, uint16_t pad)
{
	struct rte_mbuf *m = ip_frame(IPPROTO_ICMP, PORT_IP,
				      sizeof(struct rte_icmp_hdr) + data_len, pad);
	struct rte_icmp_hdr *icmp = (struct rte_icmp_hdr *)(ip_of(m) + 1);
	uint8_t *data = (uint8_t *)(icmp + 1);
	uint16_t i;

	icmp->icmp_type = RTE_IP_ICMP_ECHO_REQUEST;
	icmp->icmp_ident = rte_cpu_to_be_16(0x1234);
	icmp->icmp_seq_nb = rte_cpu_to_be_16(7);
	for (i = 0; i < data_len; i++)
		data[i] = (uint8_t)(i * 7 + 1);
	icmp->icmp_cksum = ~rte_raw_cksum(icmp, sizeof(*icmp) + data_len);
	return m;
}

static int
test_arp_request_answered(void)
{
	struct dpr_port_counters c = { 0 };
	struct rte_mbuf *m = arp_frame(RTE_ARP_OP_REQUEST, PORT_IP);
	struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(eth + 1);

	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_REPLY, "ARP for us");
	CHECK(rte_is_same_ether_addr(&eth->dst_addr, &peer_mac), "to the asker");
	CHECK(rte_is_same_ether_addr(&eth->src_addr, &port.mac), "from us");
	CHECK_EQ(rte_be_to_cpu_16(arp->arp_opcode), RTE_ARP_OP_REPLY, "op");
	CHECK(rte_is_same_ether_addr(&arp->arp_data.arp_sha, &port.mac), "sha");
	CHECK_EQ(arp->arp_data.arp_sip, port.ip, "sip");
	CHECK(rte_is_same_ether_addr(&arp->arp_data.arp_tha, &peer_mac), "tha");
	CHECK_EQ(arp->arp_data.arp_tip, rte_cpu_to_be_32(PEER_IP), "tip");
	CHECK_EQ(c.arp_request_rx, 1, "counted");
	CHECK_EQ(c.arp_reply_tx, 1, "counted");
	rte_pktmbuf_free(m);
	return TEST_SUCCESS;
}

static int
test_arp_dropped(void)
{
	struct dpr_port_counters c = { 0 };
	struct rte_mbuf *m;

	m = arp_frame(RTE_ARP_OP_REQUEST, PEER_IP + 5);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "other address");
	rte_pktmbuf_free(m);
	CHECK_EQ(c.drop[DPR_DROP_ARP_NOT_FOR_US], 1, "reason");
	m = arp_frame(RTE_ARP_OP_REPLY, PORT_IP);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_CONSUMED, "reply");
	rte_pktmbuf_free(m);
	CHECK_EQ(c.arp_reply_rx, 1, "a reply for us is used, not dropped");
	m = arp_frame(3 /* RARP request */, PORT_IP);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "RARP");
	rte_pktmbuf_free(m);
	CHECK_EQ(c.drop[DPR_DROP_ARP_NOT_REQUEST], 1, "reason");
	m = arp_frame(RTE_ARP_OP_REQUEST, PORT_IP);
	rte_pktmbuf_mtod_offset(m, struct rte_arp_hdr *, 14)->arp_plen = 16;
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "plen 16");
	rte_pktmbuf_free(m);
	CHECK_EQ(c.drop[DPR_DROP_ARP_MALFORMED], 1, "reason");
	m = arp_frame(RTE_ARP_OP_REQUEST, PORT_IP);
	rte_pktmbuf_trim(m, 60 - 20);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "truncated");
	rte_pktmbuf_free(m);
	CHECK_EQ(c.drop[DPR_DROP_ARP_MALFORMED], 2, "reason");
	CHECK_EQ(c.arp_reply_tx, 0, "no reply");
	return TEST_SUCCESS;
}

/* An IPv4 address (host order) as the neighbour table's key. */
static const union dpr_gid *
v4(uint32_t ip)
{
	static union dpr_gid g;

	dpr_gid_from_ipv4(&g, rte_cpu_to_be_32(ip));
	return &g;
}

/* A neighbour table of the test port with no one to send to: what it
 * learns is what the checks look at. */
static uint64_t nt_clock = 1;

static int
nt_new(struct dpr_neigh_table *nt, struct dpr_port_counters *c)
{
	return dpr_neigh_init(nt, &port, pool, c, &nt_clock, NULL, NULL);
}

static bool
nt_knows(const struct dpr_neigh_table *nt, const union dpr_gid *ip,
	 const struct rte_ether_addr *mac)
{
	const struct dpr_neigh *n = dpr_neigh_find(nt, ip);

	return n != NULL && n->state == DPR_NEIGH_VALID &&
		(mac == NULL || rte_is_same_ether_addr(&n->mac, mac));
}

static int
test_arp_learns_neighbours(void)
{
	struct dpr_neigh_table nt;
	struct dpr_port_counters c = { 0 };
	struct rte_mbuf *m;

	CHECK_EQ(nt_new(&nt, &c), 0, "table");
	m = arp_frame(RTE_ARP_OP_REQUEST, PORT_IP);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, &nt), DPR_RX_REPLY, "request");
	rte_pktmbuf_free(m);
	CHECK(nt_knows(&nt, v4(PEER_IP), &peer_mac), "the asker is learnt");
	dpr_neigh_fini(&nt);
	CHECK_EQ(nt_new(&nt, &c), 0, "table");
	m = arp_frame(RTE_ARP_OP_REPLY, PORT_IP);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, &nt), DPR_RX_CONSUMED, "reply");
	rte_pktmbuf_free(m);
	CHECK(nt_knows(&nt, v4(PEER_IP), NULL), "the answer is learnt");
	CHECK(dpr_neigh_find(&nt, v4(PEER_IP + 1)) == NULL, "nobody else");
	dpr_neigh_fini(&nt);
	m = dpr_neigh_request(pool, &port, v4(PEER_IP + 1));
	CHECK(m != NULL, "request built");
	{
		struct rte_arp_hdr *a = rte_pktmbuf_mtod_offset(m, struct rte_arp_hdr *, 14);
		struct rte_ether_hdr *e = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);

		CHECK(rte_is_broadcast_ether_addr(&e->dst_addr) &&
		      a->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) &&
		      a->arp_data.arp_tip == rte_cpu_to_be_32(PEER_IP + 1) &&
		      a->arp_data.arp_sip == port.ip, "who-has, from us, broadcast");
	}
	rte_pktmbuf_free(m);
	return TEST_SUCCESS;
}

static int
test_echo_answered(void)
{
	static const uint16_t sizes[] = { 0, 18, 56, 1472 };
	unsigned int i;

	for (i = 0; i < RTE_DIM(sizes); i++) {
		struct dpr_port_counters c = { 0 };
		struct rte_mbuf *m = echo_request(sizes[i], sizes[i] < 18 ? 10 : 0);
		struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
		struct rte_ipv4_hdr *ip = ip_of(m);
		struct rte_icmp_hdr *icmp = (struct rte_icmp_hdr *)(ip + 1);
		uint16_t ip_len = rte_be_to_cpu_16(ip->total_length);

		CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_REPLY, "size %u",
			 sizes[i]);
		CHECK_EQ(icmp->icmp_type, RTE_IP_ICMP_ECHO_REPLY, "type");
		CHECK_EQ(rte_be_to_cpu_16(icmp->icmp_ident), 0x1234, "ident kept");
		CHECK_EQ(rte_be_to_cpu_16(icmp->icmp_seq_nb), 7, "seq kept");
		CHECK_EQ(rte_raw_cksum(icmp, ip_len - 20), 0xffff, "ICMP checksum");
		CHECK_EQ(rte_raw_cksum(ip, 20), 0xffff, "IP checksum");
		CHECK_EQ(ip->src_addr, port.ip, "from us");
		CHECK_EQ(ip->dst_addr, rte_cpu_to_be_32(PEER_IP), "to the peer");
		CHECK(rte_is_same_ether_addr(&eth->dst_addr, &peer_mac), "MAC");
		CHECK_EQ(rte_pktmbuf_pkt_len(m), 14 + ip_len, "padding trimmed");
		CHECK(((uint8_t *)(icmp + 1))[sizes[i] ? sizes[i] - 1 : 0] ==
		      (sizes[i] ? (uint8_t)((sizes[i] - 1) * 7 + 1) : 0) ||
		      sizes[i] == 0, "data echoed");
		CHECK_EQ(c.icmp_echo_rx, 1, "counted");
		CHECK_EQ(c.icmp_echo_reply_tx, 1, "counted");
		rte_pktmbuf_free(m);
	}
	return TEST_SUCCESS;
}

static int
test_ip_drops(void)
{
	struct dpr_port_counters c = { 0 };
	struct rte_mbuf *m;

	m = echo_request(8, 0);
	ip_of(m)->hdr_checksum ^= 1;
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "bad IP checksum");
	CHECK_EQ(c.drop[DPR_DROP_IP_CSUM], 1, "reason");
	rte_pktmbuf_free(m);

	m = echo_request(8, 0);
	rte_pktmbuf_mtod_offset(m, uint8_t *, 14 + 20 + 8)[0] ^= 0xff;
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "bad ICMP checksum");
	CHECK_EQ(c.drop[DPR_DROP_ICMP_MALFORMED], 1, "reason");
	rte_pktmbuf_free(m);

	m = ip_frame(IPPROTO_ICMP, PEER_IP + 9, 8, 0);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "not our IP");
	CHECK_EQ(c.drop[DPR_DROP_IP_NOT_FOR_US], 1, "reason");
	rte_pktmbuf_free(m);

	m = echo_request(8, 0);
	ip_of(m)->total_length = rte_cpu_to_be_16(200);
	ip_of(m)->hdr_checksum = 0;
	ip_of(m)->hdr_checksum = rte_ipv4_cksum(ip_of(m));
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "total length");
	CHECK_EQ(c.drop[DPR_DROP_IP_MALFORMED], 1, "reason");
	rte_pktmbuf_free(m);

	m = echo_request(8, 0);
	ip_of(m)->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG);
	ip_of(m)->hdr_checksum = 0;
	ip_of(m)->hdr_checksum = rte_ipv4_cksum(ip_of(m));
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "fragment");
	CHECK_EQ(c.drop[DPR_DROP_IP_FRAGMENT], 1, "reason");
	rte_pktmbuf_free(m);

	m = ip_frame(IPPROTO_TCP, PORT_IP, 20, 0);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "TCP");
	CHECK_EQ(c.drop[DPR_DROP_IP_PROTO], 1, "reason");
	rte_pktmbuf_free(m);

	m = echo_request(8, 0);
	((struct rte_icmp_hdr *)(ip_of(m) + 1))->icmp_type = 13; /* timestamp */
	((struct rte_icmp_hdr *)(ip_of(m) + 1))->icmp_cksum = 0;
	((struct rte_icmp_hdr *)(ip_of(m) + 1))->icmp_cksum =
		~rte_raw_cksum(ip_of(m) + 1, 16);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "not echo");
	CHECK_EQ(c.drop[DPR_DROP_ICMP_NOT_ECHO], 1, "reason");
	rte_pktmbuf_free(m);
	CHECK_EQ(c.icmp_echo_reply_tx, 0, "nothing answered");
	return TEST_SUCCESS;
}

static int
test_udp(void)
{
	struct dpr_port_counters c = { 0 };
	struct rte_mbuf *m;
	struct rte_udp_hdr *udp;

	m = ip_frame(IPPROTO_UDP, PORT_IP, 8 + 40, 0);
	udp = (struct rte_udp_hdr *)(ip_of(m) + 1);
	udp->dst_port = rte_cpu_to_be_16(4791);
	udp->dgram_len = rte_cpu_to_be_16(48);
	/* a BTH to QP 0x123456 after the UDP header */
	((uint8_t *)(udp + 1))[5] = 0x12;
	((uint8_t *)(udp + 1))[6] = 0x34;
	((uint8_t *)(udp + 1))[7] = 0x56;
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_ROCE, "RoCEv2");
	CHECK_EQ(c.roce_rx_packets, 1, "counted");
	/* what classify measured and checked, for those after it */
	CHECK(m->l2_len == 14 && m->l3_len == 20 &&
	      (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_GOOD,
	      "header lengths and the IPv4 checksum it verified recorded");
	CHECK_EQ(dpr_wire_dqpn(m), 0x123456, "the destination QP through lib/wire");
	udp->dgram_len = rte_cpu_to_be_16(49);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "UDP too long");
	CHECK_EQ(c.drop[DPR_DROP_UDP_MALFORMED], 1, "reason");
	udp->dgram_len = rte_cpu_to_be_16(48);
	udp->dst_port = rte_cpu_to_be_16(4792);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "other port");
	CHECK_EQ(c.drop[DPR_DROP_UDP_PORT], 1, "reason");
	rte_pktmbuf_free(m);
	return TEST_SUCCESS;
}

static int
test_l2_drops(void)
{
	static const struct rte_ether_addr other = {{ 2, 9, 9, 9, 9, 9 }};
	struct dpr_port_counters c = { 0 };
	struct rte_mbuf *m;

	m = eth_frame(RTE_ETHER_TYPE_IPV4, &other, 60);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "other MAC");
	CHECK_EQ(c.drop[DPR_DROP_L2_NOT_FOR_US], 1, "reason");
	rte_pktmbuf_free(m);
	m = eth_frame(RTE_ETHER_TYPE_IPV6, &port.mac, 60);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "IPv6 version 0");
	CHECK_EQ(c.drop[DPR_DROP_IP6_MALFORMED], 1, "reason");
	rte_pktmbuf_free(m);
	{
		static const struct rte_ether_addr mc = {{ 0x33, 0x33, 0xff, 0, 0, 1 }};

		m = eth_frame(RTE_ETHER_TYPE_IPV4, &mc, 60);
		CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP,
			 "an IPv6 group's MAC on IPv4");
		CHECK_EQ(c.drop[DPR_DROP_L2_NOT_FOR_US], 2, "reason");
		rte_pktmbuf_free(m);
	}
	m = eth_frame(RTE_ETHER_TYPE_VLAN, &port.mac, 60);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "VLAN");
	CHECK_EQ(c.drop[DPR_DROP_VLAN], 1, "reason");
	rte_pktmbuf_free(m);
	m = eth_frame(0x88cc, &port.mac, 60);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "LLDP");
	CHECK_EQ(c.drop[DPR_DROP_ETHERTYPE], 1, "reason");
	rte_pktmbuf_free(m);
	m = eth_frame(RTE_ETHER_TYPE_IPV4, &port.mac, 20);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "runt IPv4");
	CHECK_EQ(c.drop[DPR_DROP_RUNT], 1, "reason");
	rte_pktmbuf_free(m);
	return TEST_SUCCESS;
}

static int
test_unnumbered_port_answers_nothing(void)
{
	struct dpr_port_counters c = { 0 };
	struct dpr_port p = port;
	struct rte_mbuf *m;

	p.ip = 0;
	m = arp_frame(RTE_ARP_OP_REQUEST, PORT_IP);
	CHECK_EQ(dpr_rx_classify(&p, m, &c, NULL), DPR_RX_DROP, "no address, no ARP");
	rte_pktmbuf_free(m);
	m = echo_request(8, 0);
	CHECK_EQ(dpr_rx_classify(&p, m, &c, NULL), DPR_RX_DROP, "no address, no ping");
	rte_pktmbuf_free(m);
	return TEST_SUCCESS;
}

/* ----------------------------------------------------------- IPv6 */

static union dpr_gid peer_ll;

static void
peer_addrs(void)
{
	dpr_ipv6_link_local(&peer_mac, &peer_ll);
}

/* An IPv6 frame from the peer's link-local address (or @p src) to @p dst
 * with @p plen bytes of payload of next header @p proto, zeroed. */
static struct rte_mbuf *
ip6_frame(const struct rte_ether_addr *dmac, const union dpr_gid *src,
	  const union dpr_gid *dst, uint8_t proto, uint16_t plen)
{
	struct rte_mbuf *m = eth_frame(RTE_ETHER_TYPE_IPV6, dmac,
				       (uint16_t)(RTE_ETHER_HDR_LEN + 40 + plen));
	struct rte_ipv6_hdr *ip6 = rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *,
							   RTE_ETHER_HDR_LEN);

	ip6->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip6->payload_len = rte_cpu_to_be_16(plen);
	ip6->proto = proto;
	ip6->hop_limits = 255;
	memcpy(ip6->src_addr, (src != NULL ? src : &peer_ll)->raw, 16);
	memcpy(ip6->dst_addr, dst->raw, 16);
	return m;
}

static struct rte_ipv6_hdr *
ip6_of(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, RTE_ETHER_HDR_LEN);
}

static uint8_t *
icmp6_of(struct rte_mbuf *m)
{
	return (uint8_t *)(ip6_of(m) + 1);
}

static void
icmp6_sum(struct rte_mbuf *m)
{
	uint16_t ck;

	icmp6_of(m)[2] = 0;
	icmp6_of(m)[3] = 0;
	ck = rte_ipv6_udptcp_cksum(ip6_of(m), icmp6_of(m));
	memcpy(icmp6_of(m) + 2, &ck, 2);
}

static bool
icmp6_sound(struct rte_mbuf *m)
{
	return rte_ipv6_udptcp_cksum(ip6_of(m), icmp6_of(m)) == 0;
}

/* A neighbour solicitation from the peer for @p target, as Linux sends
 * one: to the solicited-node group, the source link-layer option. */
static struct rte_mbuf *
ns_frame(const union dpr_gid *target)
{
	union dpr_gid group;
	struct rte_ether_addr mc;
	struct rte_mbuf *m;

	dpr_ipv6_solicited_node(target, &group);
	dpr_ipv6_mcast_mac(&group, &mc);
	m = ip6_frame(&mc, NULL, &group, IPPROTO_ICMPV6, 32);
	icmp6_of(m)[0] = DPR_ICMP6_ND_SOLICIT;
	memcpy(icmp6_of(m) + 8, target->raw, 16);
	icmp6_of(m)[24] = DPR_ND_OPT_SRC_LLADDR;
	icmp6_of(m)[25] = 1;
	memcpy(icmp6_of(m) + 26, &peer_mac, 6);
	icmp6_sum(m);
	return m;
}

static int
test_nd_solicit_answered(void)
{
	const union dpr_gid *targets[] = { &port.ip6_ll, &port.ip6 };
	unsigned int i;

	peer_addrs();
	for (i = 0; i < RTE_DIM(targets); i++) {
		struct dpr_port_counters c = { 0 };
		struct dpr_neigh_table nt;
		struct rte_mbuf *m = ns_frame(targets[i]);
		struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
		uint8_t *icmp;

		CHECK_EQ(nt_new(&nt, &c), 0, "table");
		CHECK_EQ(dpr_rx_classify(&port, m, &c, &nt), DPR_RX_REPLY,
			 "solicitation %u answered", i);
		CHECK_EQ(c.nd_solicit_rx, 1, "counted");
		CHECK_EQ(c.nd_advert_tx, 1, "counted");
		CHECK_EQ(rte_pktmbuf_pkt_len(m), DPR_ND_FRAME_LEN, "length");
		icmp = icmp6_of(m);
		CHECK(rte_is_same_ether_addr(&eth->dst_addr, &peer_mac) &&
		      rte_is_same_ether_addr(&eth->src_addr, &port.mac), "MACs");
		CHECK(memcmp(ip6_of(m)->dst_addr, peer_ll.raw, 16) == 0 &&
		      memcmp(ip6_of(m)->src_addr, targets[i]->raw, 16) == 0,
		      "to the asker, from the target");
		CHECK_EQ(ip6_of(m)->hop_limits, 255, "hop limit");
		CHECK_EQ(icmp[0], DPR_ICMP6_ND_ADVERT, "type");
		CHECK_EQ(icmp[4], DPR_ND_NA_SOLICITED | DPR_ND_NA_OVERRIDE, "flags");
		CHECK(memcmp(icmp + 8, targets[i]->raw, 16) == 0, "target");
		CHECK(icmp[24] == DPR_ND_OPT_TGT_LLADDR && icmp[25] == 1 &&
		      memcmp(icmp + 26, &port.mac, 6) == 0, "our MAC in the option");
		CHECK(icmp6_sound(m), "checksum");
		CHECK(nt_knows(&nt, &peer_ll, &peer_mac), "the asker is learnt");
		dpr_neigh_fini(&nt);
		rte_pktmbuf_free(m);
	}
	return TEST_SUCCESS;
}

static int
test_nd_dropped(void)
{
	struct dpr_port_counters c = { 0 };
	union dpr_gid other, unspec;
	struct rte_mbuf *m;

	peer_addrs();
	inet_pton(AF_INET6, "fd77::99", other.raw);
	m = ns_frame(&other);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "another target");
	CHECK_EQ(c.drop[DPR_DROP_IP6_NOT_FOR_US], 1, "reason");
	rte_pktmbuf_free(m);
	m = ns_frame(&port.ip6);
	ip6_of(m)->hop_limits = 64;     /* RFC 4861 7.1.1: routed: forged */
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "hop limit");
	CHECK_EQ(c.drop[DPR_DROP_ICMP6_MALFORMED], 1, "reason");
	rte_pktmbuf_free(m);
	m = ns_frame(&port.ip6);
	icmp6_of(m)[30] ^= 1;
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "checksum");
	CHECK_EQ(c.drop[DPR_DROP_ICMP6_MALFORMED], 2, "reason");
	rte_pktmbuf_free(m);
	m = ns_frame(&port.ip6);
	icmp6_of(m)[25] = 0;            /* an option of length 0 */
	icmp6_sum(m);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "option length 0");
	CHECK_EQ(c.drop[DPR_DROP_ICMP6_MALFORMED], 3, "reason");
	rte_pktmbuf_free(m);
	/* duplicate address detection: from ::, with no source option */
	memset(&unspec, 0, sizeof(unspec));
	m = ns_frame(&port.ip6);
	memset(ip6_of(m)->src_addr, 0, 16);
	icmp6_sum(m);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP,
		 "from :: with a source option");
	CHECK_EQ(c.drop[DPR_DROP_ICMP6_MALFORMED], 4, "reason");
	rte_pktmbuf_free(m);
	m = ns_frame(&port.ip6);
	memset(ip6_of(m)->src_addr, 0, 16);
	ip6_of(m)->payload_len = rte_cpu_to_be_16(24);
	rte_pktmbuf_trim(m, 8);
	icmp6_sum(m);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_REPLY, "DAD answered");
	CHECK(ip6_of(m)->dst_addr[0] == 0xff && ip6_of(m)->dst_addr[15] == 1 &&
	      icmp6_of(m)[4] == DPR_ND_NA_OVERRIDE && icmp6_sound(m),
	      "to all nodes, not solicited");
	rte_pktmbuf_free(m);
	return TEST_SUCCESS;
}

/* Our own solicitation, answered by a second port whose address it asks
 * for, and the answer learnt by the first: both halves of RFC 4861. */
static int
test_nd_round_trip(void)
{
	struct dpr_port_counters c = { 0 };
	struct dpr_port other = port;
	struct dpr_neigh_table nt;
	struct rte_mbuf *m;

	CHECK_EQ(nt_new(&nt, &c), 0, "table");
	other.mac = (struct rte_ether_addr){{ 0x02, 0, 0, 0, 0, 0x07 }};
	dpr_ipv6_link_local(&other.mac, &other.ip6_ll);
	inet_pton(AF_INET6, "fd77::7", other.ip6.raw);
	m = dpr_neigh_request(pool, &port, &other.ip6);
	CHECK(m != NULL, "solicitation built");
	CHECK(rte_pktmbuf_mtod(m, uint8_t *)[0] == 0x33 &&
	      memcmp(ip6_of(m)->src_addr, port.ip6.raw, 16) == 0 &&
	      icmp6_of(m)[0] == DPR_ICMP6_ND_SOLICIT && icmp6_sound(m),
	      "to the group, from our address of the target's scope");
	CHECK_EQ(dpr_rx_classify(&other, m, &c, NULL), DPR_RX_REPLY, "answered");
	CHECK_EQ(dpr_rx_classify(&port, m, &c, &nt), DPR_RX_CONSUMED, "advertisement");
	CHECK_EQ(c.nd_advert_rx, 1, "counted");
	CHECK(nt_knows(&nt, &other.ip6, &other.mac), "learnt");
	dpr_neigh_fini(&nt);
	rte_pktmbuf_free(m);
	m = dpr_neigh_request(pool, &port, &other.ip6_ll);
	CHECK(memcmp(ip6_of(m)->src_addr, port.ip6_ll.raw, 16) == 0,
	      "link-local asks from link-local");
	rte_pktmbuf_free(m);
	return TEST_SUCCESS;
}

static int
test_echo6_answered(void)
{
	struct dpr_port_counters c = { 0 };
	union dpr_gid all = { .w = { RTE_BE32(0xff020000), 0, 0, RTE_BE32(1) } };
	struct rte_ether_addr mc;
	struct rte_mbuf *m;
	unsigned int k;

	peer_addrs();
	m = ip6_frame(&port.mac, NULL, &port.ip6_ll, IPPROTO_ICMPV6, 64);
	icmp6_of(m)[0] = DPR_ICMP6_ECHO_REQUEST;
	for (k = 4; k < 64; k++)
		icmp6_of(m)[k] = (uint8_t)k;
	icmp6_sum(m);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_REPLY, "echo");
	CHECK_EQ(icmp6_of(m)[0], DPR_ICMP6_ECHO_REPLY, "reply");
	CHECK(memcmp(ip6_of(m)->src_addr, port.ip6_ll.raw, 16) == 0 &&
	      memcmp(ip6_of(m)->dst_addr, peer_ll.raw, 16) == 0, "addresses swapped");
	CHECK(icmp6_sound(m) && icmp6_of(m)[63] == 63, "checksum, data kept");
	CHECK_EQ(c.icmp6_echo_reply_tx, 1, "counted");
	rte_pktmbuf_free(m);
	dpr_ipv6_mcast_mac(&all, &mc);
	m = ip6_frame(&mc, NULL, &all, IPPROTO_ICMPV6, 16);
	icmp6_of(m)[0] = DPR_ICMP6_ECHO_REQUEST;
	icmp6_sum(m);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "echo to all nodes");
	CHECK_EQ(c.drop[DPR_DROP_ICMP6_OTHER], 1, "reason");
	rte_pktmbuf_free(m);
	m = ip6_frame(&mc, NULL, &all, IPPROTO_UDP, 16);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "UDP to a group");
	CHECK_EQ(c.drop[DPR_DROP_IP6_NOT_FOR_US], 1, "reason");
	rte_pktmbuf_free(m);
	return TEST_SUCCESS;
}

static int
test_udp6(void)
{
	struct dpr_port_counters c = { 0 };
	union dpr_gid other;
	struct rte_mbuf *m;
	struct rte_udp_hdr *udp;
	uint8_t *bth;

	peer_addrs();
	m = ip6_frame(&port.mac, NULL, &port.ip6_ll, IPPROTO_UDP, 48);
	udp = (struct rte_udp_hdr *)icmp6_of(m);
	udp->dst_port = rte_cpu_to_be_16(4791);
	udp->dgram_len = rte_cpu_to_be_16(48);
	bth = (uint8_t *)(udp + 1);
	bth[5] = 0x12;
	bth[6] = 0x34;
	bth[7] = 0x56;
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_ROCE, "RoCEv2 over IPv6");
	CHECK_EQ(m->l3_len, 40, "l3_len");
	CHECK_EQ(dpr_wire_dqpn(m), 0x123456, "the destination QP");
	CHECK_EQ(c.roce_rx_packets, 1, "counted");
	udp->dgram_len = rte_cpu_to_be_16(40);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "UDP length");
	CHECK_EQ(c.drop[DPR_DROP_UDP_MALFORMED], 1, "reason");
	rte_pktmbuf_free(m);
	m = ip6_frame(&port.mac, NULL, &port.ip6, 0 /* hop-by-hop */, 48);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "extension header");
	CHECK_EQ(c.drop[DPR_DROP_IP6_PROTO], 1, "reason");
	rte_pktmbuf_free(m);
	inet_pton(AF_INET6, "fd77::99", other.raw);
	m = ip6_frame(&port.mac, NULL, &other, IPPROTO_UDP, 48);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "not ours");
	CHECK_EQ(c.drop[DPR_DROP_IP6_NOT_FOR_US], 1, "reason");
	ip6_of(m)->payload_len = rte_cpu_to_be_16(49);
	CHECK_EQ(dpr_rx_classify(&port, m, &c, NULL), DPR_RX_DROP, "payload length");
	CHECK_EQ(c.drop[DPR_DROP_IP6_MALFORMED], 1, "reason");
	rte_pktmbuf_free(m);
	return TEST_SUCCESS;
}

static int
test_active_mtu(void)
{
	/* rxe's table: netdev MTU minus 80 header bytes, rounded down */
	CHECK_EQ(dpr_active_mtu(1500), 1024, "1500");
	CHECK_EQ(dpr_active_mtu(4200), 4096, "4200");
	CHECK_EQ(dpr_active_mtu(9000), 4096, "9000");
	CHECK_EQ(dpr_active_mtu(2128), 2048, "2128");
	CHECK_EQ(dpr_active_mtu(2127), 1024, "2127");
	CHECK_EQ(dpr_active_mtu(576), 256, "576");
	CHECK_EQ(dpr_active_mtu(300), 0, "too small");
	return TEST_SUCCESS;
}

static const struct dpr_test_case classify_cases[] = {
	DPR_TEST_CASE(test_arp_request_answered),
	DPR_TEST_CASE(test_arp_dropped),
	DPR_TEST_CASE(test_arp_learns_neighbours),
	DPR_TEST_CASE(test_echo_answered),
	DPR_TEST_CASE(test_ip_drops),
	DPR_TEST_CASE(test_udp),
	DPR_TEST_CASE(test_l2_drops),
	DPR_TEST_CASE(test_nd_solicit_answered),
	DPR_TEST_CASE(test_nd_dropped),
	DPR_TEST_CASE(test_nd_round_trip),
	DPR_TEST_CASE(test_echo6_answered),
	DPR_TEST_CASE(test_udp6),
	DPR_TEST_CASE(test_unnumbered_port_answers_nothing),
	DPR_TEST_CASE(test_active_mtu),
	DPR_TEST_CASES_END,
};

static struct dpr_test_suite classify_suite = {
	.name = "engine_classify",
	.needs_eal = true,
	.setup = setup,
	.teardown = teardown,
	.cases = classify_cases,
};
DPR_TEST_SUITE(classify_suite);
