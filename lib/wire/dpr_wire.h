/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * RoCEv2 on the wire (IBTA vol. 1 ch. 9, Annex A17): transport headers and
 * their accessors, the opcode table, 24-bit PSN arithmetic, GIDs,
 * Ethernet/VLAN/IPv4/IPv6/UDP encapsulation, the ICRC, validation of a
 * received frame and the frame builder. No state: everything here is a
 * function of its arguments.
 *
 * Headers are kept in wire (big-endian) order. Each has raw accessors that
 * swap bytes (dpr_bth_psn(bth)); dpr_hdr() finds any header of a packet
 * through the opcode table, as rxe's header accessors do.
 */

#ifndef DPR_WIRE_H
#define DPR_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#ifdef __cplusplus
extern "C" {
#endif

/** RoCEv2 UDP destination port (IANA). */
#define DPR_ROCEV2_PORT 4791
/** UDP source ports RoCEv2 senders use: 0xC000-0xFFFF (Annex A17.3.2). */
#define DPR_ROCEV2_SPORT_BASE 0xC000
/** Default partition key. */
#define DPR_DEFAULT_PKEY 0xFFFF
/** Length of the invariant CRC trailer. */
#define DPR_ICRC_LEN 4u

/* transport headers, AETH syndromes, opcodes, PSNs */
#include "dpr_wire_bth.h"

/* ---------------------------------------------------------------------
 * GIDs: RoCEv2 addresses are IPv6 addresses; IPv4 ones are mapped
 * (::ffff:a.b.c.d), as GID index 1 of rxe holds them.
 */

union dpr_gid {
	uint8_t raw[16];
	rte_be32_t w[4];
};

/**
 * Where a frame's IP header starts (past one VLAN tag), and its
 * EtherType (network order) in *@p type; 0 when @p len holds no
 * Ethernet header. For the tools that look at raw frames off the data
 * path (the fault adapter, the transport's drop accounting).
 */
static inline uint32_t
dpr_frame_l3(const uint8_t *p, uint32_t len, uint16_t *type)
{
	uint32_t l3 = RTE_ETHER_HDR_LEN;

	if (len < l3)
		return 0;
	memcpy(type, p + 12, 2);
	if (*type == rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN)) {
		if (len < l3 + 4)
			return 0;
		memcpy(type, p + 16, 2);
		l3 += 4;
	}
	return l3;
}

static inline void
dpr_gid_from_ipv4(union dpr_gid *g, rte_be32_t ip)
{
	g->w[0] = 0;
	g->w[1] = 0;
	g->w[2] = RTE_BE32(0x0000ffff);
	g->w[3] = ip;
}

static inline bool
dpr_gid_is_ipv4(const union dpr_gid *g)
{
	return g->w[0] == 0 && g->w[1] == 0 && g->w[2] == RTE_BE32(0x0000ffff);
}

static inline rte_be32_t
dpr_gid_to_ipv4(const union dpr_gid *g)
{
	return g->w[3];
}

/** A GID as an address: dotted IPv4 for ::ffff:a.b.c.d, IPv6 otherwise
 * (@p len: at least INET6_ADDRSTRLEN). @return @p buf. */
static inline const char *
dpr_gid_ntop(const union dpr_gid *g, char *buf, socklen_t len)
{
	if (dpr_gid_is_ipv4(g))
		inet_ntop(AF_INET, &g->w[3], buf, len);
	else
		inet_ntop(AF_INET6, g->raw, buf, len);
	return buf;
}

/**
 * Flow label of a connection without one in its address vector, as Linux
 * computes it (rdma_calc_flow_label): 20 bits from local x remote QPN.
 */
static inline uint32_t
dpr_flow_label(uint32_t lqpn, uint32_t rqpn)
{
	uint64_t v = (uint64_t)lqpn * rqpn;

	v ^= v >> 20;
	v ^= v >> 40;
	return (uint32_t)(v & 0xfffff);
}

/**
 * UDP source port of an RC/UC QP, as Linux (rxe, mlx5) derives it from the
 * flow label (rdma_get_udp_sport): 0xC000 | the 14 low bits folded with
 * the 6 high ones. @p flow_label 0: computed from the QPNs.
 */
static inline uint16_t
dpr_udp_sport_rc(uint32_t lqpn, uint32_t rqpn, uint32_t flow_label)
{
	uint32_t fl = flow_label ? flow_label : dpr_flow_label(lqpn, rqpn);
	uint32_t low = fl & 0x3fff;

	low ^= (fl & 0xfc000) >> 14;
	return (uint16_t)(DPR_ROCEV2_SPORT_BASE | low);
}

/**
 * Ones' complement sum of a 20-byte IPv4 header (no options), folded to 16
 * bits, in network order as the header holds it: 0xFFFF when a received
 * header's checksum is right; ~sum with the checksum field 0 is the value
 * to write. Two 64-bit and one 32-bit load in place of rte_raw_cksum()'s
 * 16-bit loop (about a tenth of the instructions, on every frame each way).
 */
static inline uint16_t
dpr_ipv4_sum20(const void *hdr)
{
	const uint8_t *p = hdr;
	uint64_t a, b, sum;
	uint32_t c;

	memcpy(&a, p, 8);
	memcpy(&b, p + 8, 8);
	memcpy(&c, p + 16, 4);
	sum = (a & 0xffffffffu) + (a >> 32) + (b & 0xffffffffu) + (b >> 32) + c;
	sum = (sum & 0xffffffffu) + (sum >> 32);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/** Bytes of an Ethernet + ARP frame (RFC 826, IPv4 over Ethernet). */
#define DPR_ARP_FRAME_LEN (RTE_ETHER_HDR_LEN + 28)

/**
 * Write an Ethernet + ARP frame of DPR_ARP_FRAME_LEN bytes at @p buf: a
 * request from (@p sha, @p sip) for @p tip, broadcast, when @p tha is NULL;
 * else a reply to (@p tha, @p tip). Addresses in network order. @p buf may
 * be the request being answered (the reply is written in its place).
 */
static inline void
dpr_wire_arp(void *buf, const struct rte_ether_addr *sha, rte_be32_t sip,
	     const struct rte_ether_addr *tha, rte_be32_t tip)
{
	static const struct rte_ether_addr bcast = {{ 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }};
	static const struct rte_ether_addr zero;
	/* bytes, not struct stores: readers look at frames through
	 * rte_ether.h's 16-bit views, and @p tha or @p sha may point into
	 * @p buf (copied first) */
	const struct rte_ether_addr to = tha != NULL ? *tha : bcast;
	const struct rte_ether_addr from = *sha;
	const uint8_t fixed[10] = { 0x08, 0x06, 0, 1, 8, 0, RTE_ETHER_ADDR_LEN, 4,
				    0, tha != NULL ? 2 : 1 };
	uint8_t *f = buf;

	memcpy(f, &to, RTE_ETHER_ADDR_LEN);
	memcpy(f + 6, &from, RTE_ETHER_ADDR_LEN);
	memcpy(f + 12, fixed, sizeof(fixed));   /* ARP: Ethernet, IPv4, op */
	memcpy(f + 22, &from, RTE_ETHER_ADDR_LEN);
	memcpy(f + 28, &sip, 4);
	memcpy(f + 32, tha != NULL ? &to : &zero, RTE_ETHER_ADDR_LEN);
	memcpy(f + 38, &tip, 4);
}

/*
 * IPv6 neighbour discovery (RFC 4861) over Ethernet (RFC 2464): the
 * IPv6 twin of ARP. A solicitation goes to the target's solicited-node
 * group; the advertisement answers the asker directly.
 */

/** Bytes of an Ethernet + IPv6 + ICMPv6 neighbour solicitation or
 * advertisement carrying one link-layer address option. */
#define DPR_ND_FRAME_LEN (RTE_ETHER_HDR_LEN + 40 + 24 + 8)

#define DPR_ICMP6_ECHO_REQUEST 128
#define DPR_ICMP6_ECHO_REPLY   129
#define DPR_ICMP6_ND_SOLICIT   135
#define DPR_ICMP6_ND_ADVERT    136
#define DPR_ND_OPT_SRC_LLADDR  1
#define DPR_ND_OPT_TGT_LLADDR  2
#define DPR_ND_NA_ROUTER       0x80
#define DPR_ND_NA_SOLICITED    0x40
#define DPR_ND_NA_OVERRIDE     0x20

/** @p a and @p b are the same GID. */
static inline bool
dpr_gid_eq(const union dpr_gid *a, const union dpr_gid *b)
{
	return ((a->w[3] ^ b->w[3]) | (a->w[2] ^ b->w[2]) |
		(a->w[1] ^ b->w[1]) | (a->w[0] ^ b->w[0])) == 0;
}

/** ff02::1, all nodes on the link (RFC 4291 2.7.1). */
static inline void
dpr_ipv6_all_nodes(union dpr_gid *g)
{
	g->w[0] = RTE_BE32(0xff020000);
	g->w[1] = 0;
	g->w[2] = 0;
	g->w[3] = RTE_BE32(1);
}

/** ff02::1:ffXX:XXXX, the solicited-node group of @p ip (RFC 4291 2.7.1). */
static inline void
dpr_ipv6_solicited_node(const union dpr_gid *ip, union dpr_gid *group)
{
	group->w[0] = RTE_BE32(0xff020000);
	group->w[1] = 0;
	group->w[2] = RTE_BE32(0x00000001);
	group->w[3] = RTE_BE32(0xff000000) | (ip->w[3] & RTE_BE32(0x00ffffff));
}

/** 33:33 and the low 32 bits of multicast @p ip (RFC 2464 7). */
static inline void
dpr_ipv6_mcast_mac(const union dpr_gid *ip, struct rte_ether_addr *mac)
{
	mac->addr_bytes[0] = 0x33;
	mac->addr_bytes[1] = 0x33;
	memcpy(&mac->addr_bytes[2], &ip->raw[12], 4);
}

/** fe80::/64 with the modified EUI-64 of @p mac (RFC 4291 2.5.1): a
 * port's link-local address, and its GID index 0 (as rxe's). */
static inline void
dpr_ipv6_link_local(const struct rte_ether_addr *mac, union dpr_gid *ip)
{
	const uint8_t *a = mac->addr_bytes;

	memset(ip, 0, sizeof(*ip));
	ip->raw[0] = 0xfe;
	ip->raw[1] = 0x80;
	ip->raw[8] = a[0] ^ 2;
	ip->raw[9] = a[1];
	ip->raw[10] = a[2];
	ip->raw[11] = 0xff;
	ip->raw[12] = 0xfe;
	ip->raw[13] = a[3];
	ip->raw[14] = a[4];
	ip->raw[15] = a[5];
}

/** An IPv6 GID (not IPv4-mapped, not zero) that is link-local. */
static inline bool
dpr_gid_is_link_local(const union dpr_gid *g)
{
	return g->raw[0] == 0xfe && (g->raw[1] & 0xc0) == 0x80;
}

/**
 * Write an Ethernet + IPv6 + ICMPv6 frame of DPR_ND_FRAME_LEN bytes at
 * @p buf, hop limit 255: with @p dst_mac NULL, a neighbour solicitation
 * from (@p mac, @p src) for @p target to its solicited-node group, with
 * our link-layer address; else an advertisement of @p target at @p mac to
 * (@p dst_mac, @p dst) with @p flags (DPR_ND_NA_*). Every pointer may
 * point into @p buf (all are read before anything is written).
 */
void dpr_wire_nd(void *buf, const struct rte_ether_addr *mac,
		const union dpr_gid *src, const struct rte_ether_addr *dst_mac,
		const union dpr_gid *dst, const union dpr_gid *target,
		uint8_t flags);

/** A neighbour solicitation (dpr_wire_nd()) in a new mbuf from @p pool;
 * NULL when none is free. */
struct rte_mbuf *dpr_wire_build_ns(struct rte_mempool *pool,
		const struct rte_ether_addr *mac, const union dpr_gid *src,
		const union dpr_gid *target);

/** UDP source port of a UD QP, as rxe gives it: 0xC000 + hash_32(qpn, 14). */
static inline uint16_t
dpr_udp_sport_ud(uint32_t qpn)
{
	return (uint16_t)(DPR_ROCEV2_SPORT_BASE +
			  ((qpn * 0x61C88647u) >> (32 - 14)));
}

/* ---------------------------------------------------------------------
 * The fields of one frame: encapsulation and transport headers. Parsing
 * fills them; the builder writes them. Multi-byte fields in host order,
 * except imm (opaque, wire order).
 */

struct dpr_wire_encap {
	struct rte_ether_addr dst_mac;
	struct rte_ether_addr src_mac;
	bool vlan;            /**< one 802.1Q tag */
	uint16_t vlan_tci;
	bool ipv6;
	union dpr_gid sgid;   /**< IPv4: mapped */
	union dpr_gid dgid;
	uint8_t tos;          /**< IPv4 TOS / IPv6 traffic class: DSCP << 2 | ECN */
	uint8_t ttl;          /**< IPv4 TTL / IPv6 hop limit */
	uint16_t ip_id;       /**< IPv4 identification */
	bool df;              /**< IPv4 don't fragment (rxe sets it) */
	uint32_t flow_label;  /**< IPv6 */
	uint16_t sport;       /**< UDP source port */
	uint16_t udp_csum;    /**< as received; RoCEv2 senders send 0 */
};

struct dpr_wire_hdrs {
	uint8_t opcode;
	bool se, mig, fecn, becn, ackreq;
	uint8_t tver;
	uint16_t pkey;
	uint32_t dqpn;
	uint32_t psn;
	struct { uint64_t va; uint32_t rkey, len; } reth;
	struct { uint8_t syndrome; uint32_t msn; } aeth;
	struct { uint64_t va; uint32_t rkey; uint64_t swap_add, compare; } atomic;
	uint64_t atomic_orig;
	rte_be32_t imm;
	uint32_t ieth_rkey;
	struct { uint32_t qkey, sqpn; } deth;
};

/* ---------------------------------------------------------------------
 * Validation of a received frame.
 */

/* Why a frame is refused: enum suffix, counter name. */
#define DPR_WIRE_ERRORS(_) \
	_(SHORT_ETH, short_eth) \
	_(NOT_IP, not_ip) \
	_(IP_VERSION, ip_version) \
	_(IP_HDR_LEN, ip_hdr_len) \
	_(IP_LEN, ip_len) \
	_(IP_CSUM, ip_csum) \
	_(IP_FRAG, ip_fragment) \
	_(NOT_UDP, not_udp) \
	_(UDP_LEN, udp_len) \
	_(NOT_ROCE_PORT, not_roce_port) \
	_(SHORT_BTH, short_bth) \
	_(BAD_TVER, bad_tver) \
	_(BAD_OPCODE, bad_opcode) \
	_(SHORT_HDRS, short_hdrs) \
	_(BAD_PAD, bad_pad) \
	_(UNEXPECTED_PAYLOAD, unexpected_payload) \
	_(PAYLOAD_TOO_LONG, payload_too_long) \
	_(BAD_ICRC, bad_icrc)

enum dpr_wire_err {
	DPR_WIRE_OK = 0,
#define _(e, n) DPR_WIRE_ERR_ ## e,
	DPR_WIRE_ERRORS(_)
#undef _
	DPR_WIRE_NUM_ERR
};

/** "bad_icrc", ... ("ok" for DPR_WIRE_OK). */
const char *dpr_wire_err_name(enum dpr_wire_err e);

/** What parsing learnt about a frame; offsets from the frame start. */
struct dpr_pkt_info {
	uint8_t opcode;
	uint32_t mask;        /**< dpr_opcode[opcode].mask */
	uint16_t l3_off;      /**< IP header */
	uint16_t l4_off;      /**< UDP header */
	uint16_t bth_off;     /**< BTH */
	uint16_t hdr_len;     /**< BTH + extension headers */
	uint32_t payload_off;
	uint32_t paylen;      /**< payload bytes, pad excluded */
	uint8_t pad;
	uint8_t ecn;          /**< ECN bits of the IP header */
	bool ce;              /**< ECN congestion experienced */
	uint32_t frame_len;   /**< through the ICRC, Ethernet padding excluded */
	uint32_t icrc;        /**< as carried */
	struct dpr_wire_encap encap;
};

/**
 * Validate a received RoCEv2 frame and describe it. The Ethernet, IP, UDP
 * and transport headers must lie in the first segment; the payload and
 * the ICRC may span segments.
 *
 * @param max_payload
 *   Largest payload accepted (the path MTU), 0 for no limit.
 * @return
 *   DPR_WIRE_OK, or the reason the frame must be dropped.
 */
enum dpr_wire_err dpr_wire_parse(const struct rte_mbuf *m,
		struct dpr_pkt_info *pi, uint32_t max_payload);

/**
 * dpr_wire_parse() of a frame that it accepted before and that was kept
 * unchanged since (a request held past a gap): the same description,
 * without computing the ICRC again.
 */
enum dpr_wire_err dpr_wire_parse_again(const struct rte_mbuf *m,
		struct dpr_pkt_info *pi, uint32_t max_payload);

/**
 * What a QP expects of the frames it receives, for dpr_wire_parse_fast():
 * the bytes from the start of the frame to the end of the BTH that are the
 * same in every frame of its peer (our MAC, IPv4 without options or VLAN,
 * not fragmented, UDP to 4791, the two addresses, BTH version 0, the
 * P_Key, the QP number), under a mask; what varies (the peer's MAC,
 * lengths, identification, checksums, TOS and TTL, the UDP source port,
 * opcode, flags, PSN) is masked out and checked, where it must be, on its
 * own.
 */
struct dpr_wire_rx_tmpl {
	uint8_t val[3][16] __rte_aligned(16);
	uint8_t mask[3][16];
	bool on;              /**< made; else every frame goes to the full parse */
};

/* Offsets in an untagged IPv4 frame without options, the shape the fast
 * paths take, and the shortest RC frame of that shape (BTH, ICRC). */
#define DPR_F_L3 RTE_ETHER_HDR_LEN
#define DPR_F_L4 (DPR_F_L3 + 20u)
#define DPR_F_BTH (DPR_F_L4 + 8u)
#define DPR_F_MIN (DPR_F_BTH + 12u + DPR_ICRC_LEN)

typedef uint8_t dpr_v16 __attribute__((vector_size(16)));

static inline dpr_v16
dpr_load16(const uint8_t *p)
{
	dpr_v16 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/** Do the first 50 bytes at @p p (at least DPR_F_MIN there) match @p t,
 * but with TVer @p tver in the BTH (byte 43; 1: a sealed frame,
 * doc/security.rst)? Three 16-byte windows: at 0, 18 and 34 (bytes
 * 16-17, the IP total length, are not the template's). */
static inline bool
dpr_wire_rx_tmpl_match_tver(const struct dpr_wire_rx_tmpl *t, const uint8_t *p,
			    uint8_t tver)
{
	dpr_v16 tv = { 0 };
	dpr_v16 d;
	uint64_t lo, hi;

	tv[43 - 34] = tver;
	d = ((dpr_load16(p) ^ dpr_load16(t->val[0])) & dpr_load16(t->mask[0])) |
		((dpr_load16(p + 18) ^ dpr_load16(t->val[1])) & dpr_load16(t->mask[1])) |
		((dpr_load16(p + 34) ^ dpr_load16(t->val[2]) ^ tv) & dpr_load16(t->mask[2]));
	memcpy(&lo, &d, 8);
	memcpy(&hi, (const uint8_t *)&d + 8, 8);
	return (lo | hi) == 0;
}

/** The same with TVer 0 (a plain frame). */
static inline bool
dpr_wire_rx_tmpl_match(const struct dpr_wire_rx_tmpl *t, const uint8_t *p)
{
	return dpr_wire_rx_tmpl_match_tver(t, p, 0);
}

/** The template of a QP numbered @p qpn whose peer is @p peer_ip and that
 * receives at @p local_mac and @p local_ip (addresses in network order),
 * P_Key @p pkey. @p local_mac NULL: any destination MAC. */
void dpr_wire_rx_tmpl_make(struct dpr_wire_rx_tmpl *t, rte_be32_t peer_ip,
		const struct rte_ether_addr *local_mac, rte_be32_t local_ip,
		uint32_t qpn, uint16_t pkey);

/**
 * The common frame in few instructions: dpr_wire_parse() and
 * dpr_wire_decode() for a frame in one segment that matches @p t. It
 * accepts only frames that dpr_wire_parse() accepts (the ICRC checked in
 * one pass: see dpr_icrc_ipv4()) and then fills @p pi
 * and @p h as those two would for what the transport reads (opcode, mask,
 * payload offset and length; every header field); pi->encap is not
 * filled: the template stands for the addresses. It declines (false, @p m
 * unchanged) whatever it does not handle, valid or not: give those to
 * dpr_wire_parse().
 */
bool dpr_wire_parse_fast(struct rte_mbuf *m, const struct dpr_wire_rx_tmpl *t,
		uint32_t max_payload, struct dpr_pkt_info *pi,
		struct dpr_wire_hdrs *h);

/** Decode every header field of a frame dpr_wire_parse() accepted. */
void dpr_wire_decode(const struct rte_mbuf *m, const struct dpr_pkt_info *pi,
		struct dpr_wire_hdrs *h);

/**
 * Describe a linear buffer as a single-segment mbuf, for read-only parsing
 * without an EAL or a mempool (tools, tests). The mbuf must not be freed.
 */
void dpr_wire_mbuf_wrap(struct rte_mbuf *m, void *buf, uint16_t len);

/* ---------------------------------------------------------------------
 * ICRC (Annex A17.3.3): CRC-32 over 8 bytes of 0xFF, the IP header with
 * TOS/TTL/checksum (IPv6: traffic class, flow label, hop limit) set to
 * ones, the UDP header with its checksum set to ones, the BTH with FECN,
 * BECN and Resv6 set to ones, then the rest of the packet up to the ICRC,
 * computed where the bytes lie. Stored little-endian.
 */

/** CRC state after the masked pseudo-header and the rest of the transport
 * headers of a frame whose IP header is at @p l3 (contiguous).
 * @param hdr_len  BTH + extension headers. */
uint32_t dpr_icrc_hdrs(const uint8_t *l3, bool ipv6, uint32_t hdr_len);

/** Continue a CRC over @p len bytes at @p buf (ISA-L crc32_gzip_refl). */
uint32_t dpr_icrc_update(uint32_t crc, const void *buf, uint64_t len);

/** ICRC of a parsed frame, reading the payload where it lies (read only:
 * shared and read-only buffers are fine). */
uint32_t dpr_icrc_mbuf(const struct rte_mbuf *m, const struct dpr_pkt_info *pi);

/**
 * ICRC of a packet that lies in one piece, IPv4 without options: the
 * @p len bytes (at least 16) from its IP header @p l3 to the end of its
 * pad, read where they are: the masked fields are masked in registers
 * (dpr_icrc.c). One exception: on CPUs with AVX-512 a packet longer than
 * 256 bytes has its masked fields set in place and put back before this
 * returns, so the packet must be writable and not read by anyone else
 * meanwhile (a received or a built frame of the caller's). The same value
 * as dpr_icrc_mbuf().
 */
static inline uint32_t dpr_icrc_ipv4(const uint8_t *l3, uint32_t len);

/* dpr_icrc_ipv4()'s way on this CPU (set at start: the fold with AVX's or
 * SSE's encoding, or ISA-L alone) */
extern uint32_t (*dpr_icrc_ipv4_fn)(const uint8_t *l3, uint32_t len);

static inline uint32_t
dpr_icrc_ipv4(const uint8_t *l3, uint32_t len)
{
	return dpr_icrc_ipv4_fn(l3, len);
}

/**
 * dpr_icrc_ipv4() of a frame whose payload is copied in by the same call:
 * @p n bytes from @p src to @p l3 + @p poff, then zeros (the pad) up to
 * @p len, the bytes dpr_icrc_ipv4() covers; the headers before @p poff
 * must be in place. Where the CPU has AVX-512 (BW and VPCLMULQDQ), a
 * packet of at least dpr_icrc_copy_min bytes takes one pass over the
 * payload, each 64-byte block stored into the frame from the register it
 * is folded from; otherwise a copy, then dpr_icrc_ipv4(). Only bytes in
 * [poff, len) of the frame are written.
 */
static inline uint32_t dpr_icrc_ipv4_copy(uint8_t *l3, uint32_t len,
		uint32_t poff, const void *src, uint32_t n);

extern uint32_t (*dpr_icrc_ipv4_copy_fn)(uint8_t *l3, uint32_t len,
		uint32_t poff, const void *src, uint32_t n);

/** The shortest packet (@p len of dpr_icrc_ipv4_copy()) it copies in the
 * pass that computes the ICRC; UINT32_MAX: none, on this CPU and way. */
extern uint32_t dpr_icrc_copy_min;

static inline uint32_t
dpr_icrc_ipv4_copy(uint8_t *l3, uint32_t len, uint32_t poff, const void *src,
		   uint32_t n)
{
	return dpr_icrc_ipv4_copy_fn(l3, len, poff, src, n);
}

/** How dpr_icrc_ipv4() and the general paths' one-piece frames compute the
 * ICRC. */
enum dpr_icrc_way {
	DPR_ICRC_BEST,          /**< the fastest this CPU has (the default) */
	DPR_ICRC_ISAL,          /**< ISA-L alone, over masked copies */
	DPR_ICRC_FOLD_SSE,      /**< the PCLMULQDQ fold, SSE encoding */
	DPR_ICRC_FOLD_AVX,      /**< the PCLMULQDQ fold, AVX encoding */
	DPR_ICRC_FOLD_AVX512,   /**< VPCLMULQDQ: short packets folded 64
				     bytes a step, long ones masked in place
				     for ISA-L's 64-byte loads */
};

/**
 * For tests and benchmarks: compute the ICRC @p way (every way gives the
 * same values). @return 0, or -ENOTSUP where this CPU lacks it. Not
 * thread-safe: set it before traffic.
 */
int dpr_icrc_set_way(enum dpr_icrc_way way);

/**
 * Is a received IPv4 RoCEv2 packet in one piece sound: its IP header
 * checksum (as the port checked it, or summed here when it did not) and
 * its ICRC, the @p ip_len bytes from its IP header @p l3 (the ICRC in the
 * last four)? The one check both receive paths end with.
 */
static __rte_always_inline bool
dpr_wire_ipv4_sound(const uint8_t *l3, uint32_t ip_len, uint64_t ol_flags)
{
	uint32_t icrc;

	switch (ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) {
	case RTE_MBUF_F_RX_IP_CKSUM_GOOD:
		break;
	case RTE_MBUF_F_RX_IP_CKSUM_BAD:
		return false;
	default:
		if (dpr_ipv4_sum20(l3) != 0xffff)
			return false;
	}
	memcpy(&icrc, l3 + ip_len - DPR_ICRC_LEN, sizeof(icrc));
	return dpr_icrc_ipv4(l3, ip_len - DPR_ICRC_LEN) ==
	       rte_le_to_cpu_32(icrc);
}

/* ---------------------------------------------------------------------
 * Building frames.
 */

/** A piece of payload where it lies. */
struct dpr_wire_seg {
	void *addr;
	rte_iova_t iova;
	uint32_t len;
	/** Attach as an external buffer with this shared info (its refcnt
	 * is taken); NULL: copy into the header mbuf. */
	struct rte_mbuf_ext_shared_info *shinfo;
};

/** Length of Ethernet..last transport header for these fields. */
uint32_t dpr_wire_hdr_len(const struct dpr_wire_encap *e, uint8_t opcode);

/**
 * Write Ethernet [VLAN] IP UDP BTH and extension headers to @p dst for a
 * frame that carries @p paylen bytes of payload (pad and ICRC follow).
 * @return bytes written (dpr_wire_hdr_len()).
 */
uint32_t dpr_wire_write_hdrs(uint8_t *dst, const struct dpr_wire_encap *e,
		const struct dpr_wire_hdrs *h, uint32_t paylen);

/**
 * Build a whole frame in a linear buffer: headers, @p paylen bytes of
 * @p payload, pad, ICRC.
 * @return frame length, or 0 if it does not fit in @p size.
 */
uint32_t dpr_wire_build_linear(uint8_t *buf, uint32_t size,
		const struct dpr_wire_encap *e, const struct dpr_wire_hdrs *h,
		const void *payload, uint32_t paylen);

/**
 * Build a frame as an mbuf chain: headers in a fresh mbuf from @p pool;
 * payload segments copied after them (shinfo NULL) or attached as
 * external buffers where they lie; pad and ICRC after the payload. The
 * ICRC reads the payload where it lies.
 *
 * @return the frame, or NULL with rte_errno set (ENOMEM: pool empty,
 *   EINVAL: an opcode that takes no payload was given some, or copied
 *   payload that does not fit one mbuf).
 */
struct rte_mbuf *dpr_wire_build(struct rte_mempool *pool,
		const struct dpr_wire_encap *e, const struct dpr_wire_hdrs *h,
		const struct dpr_wire_seg *segs, unsigned int nseg);

/**
 * Ethernet [802.1Q] IPv4|IPv6 UDP of one connection, prebuilt: its frames
 * copy it and patch the lengths and the IPv4 identification and checksum
 * (the checksum from the sum of the constant words kept here). It follows
 * the encapsulation it is used with: when that differs from the one it
 * was made for (the identification aside), it is made again. Zero it
 * before first use.
 */
struct dpr_wire_tmpl {
	struct dpr_wire_encap key;   /**< what it was made for, ip_id 0 */
	uint32_t ip_sum;             /**< IPv4: folded header sum with the
					  length, identification and checksum 0 */
	uint8_t len;                 /**< bytes of hdr; 0: not made */
	uint8_t l2_len;
	uint8_t hdr[14 + 4 + 40 + 8];
};

/** dpr_wire_build() with the headers up to UDP from @p t (made or remade
 * from @p e as needed): the same bytes, fewer instructions per frame. An
 * IPv4 frame whose pieces are all copied and fit one mbuf is built in
 * one segment, its ICRC in one pass; others as a chain. */
struct rte_mbuf *dpr_wire_build_tmpl(struct rte_mempool *pool,
		struct dpr_wire_tmpl *t, const struct dpr_wire_encap *e,
		const struct dpr_wire_hdrs *h, const struct dpr_wire_seg *segs,
		unsigned int nseg);

/** dpr_wire_build_tmpl() for a frame that is sealed next (lib/sec, which
 * computes the ICRC over the sealed frame): the same bytes but the ICRC,
 * left 0 -- not computed over bytes about to be replaced. */
struct rte_mbuf *dpr_wire_build_unsealed(struct rte_mempool *pool,
		struct dpr_wire_tmpl *t, const struct dpr_wire_encap *e,
		const struct dpr_wire_hdrs *h, const struct dpr_wire_seg *segs,
		unsigned int nseg);

/**
 * The headers every RC request of one connection starts with, made once
 * (untagged IPv4): Ethernet, IPv4 and UDP from its dpr_wire_tmpl, and the
 * BTH with the P_Key and destination QP; a packet copies them and writes
 * the lengths, the identification and checksum, the opcode, flags, AckReq
 * and PSN (dpr_wire_req_hdrs()).
 */
struct dpr_wire_req_img {
	uint8_t hdr[64];     /**< 54 bytes, zeros after */
	uint32_t ip_sum;     /**< the IPv4 words that stay, folded */
};

/** Make @p img from @p t (made for an untagged IPv4 encapsulation: its
 * len is 42) for requests to QP @p dqpn under P_Key @p pkey. */
void dpr_wire_req_img_make(struct dpr_wire_req_img *img,
		const struct dpr_wire_tmpl *t, uint16_t pkey, uint32_t dqpn);

/* BTH flags: SE, and the pad count of a payload of @p paylen bytes */
static inline uint32_t
dpr_wire_pad(uint32_t paylen)
{
	return (4 - (paylen & 3)) & 3;
}

/**
 * Write an RC request's Ethernet, IPv4, UDP and BTH at @p p from @p img
 * (64 bytes are written: the 10 after the BTH are the caller's to fill),
 * for @p hdr_len bytes of BTH and extension headers and @p paylen bytes of
 * payload: the same bytes dpr_wire_write_hdrs() writes for them. The RETH
 * and immediate after the BTH, the payload, the pad and the ICRC are the
 * caller's. @return the frame's length, ICRC included.
 */
static __rte_always_inline uint32_t
dpr_wire_req_hdrs(uint8_t *p, const struct dpr_wire_req_img *img, uint16_t ip_id,
		  uint8_t opcode, uint32_t hdr_len, bool se, bool ackreq,
		  uint32_t psn, uint32_t paylen)
{
	const uint32_t pad = dpr_wire_pad(paylen);
	const uint32_t udp_len = 8 + hdr_len + paylen + pad + DPR_ICRC_LEN;
	const dpr_v16 a = dpr_load16(img->hdr), b = dpr_load16(img->hdr + 16);
	const dpr_v16 c = dpr_load16(img->hdr + 32), d = dpr_load16(img->hdr + 48);
	const uint16_t tl = rte_cpu_to_be_16((uint16_t)(20 + udp_len));
	const uint16_t id = rte_cpu_to_be_16(ip_id);
	const uint16_t ul = rte_cpu_to_be_16((uint16_t)udp_len);
	const uint32_t apsn = rte_cpu_to_be_32((ackreq ? 0x80000000u : 0) | psn);
	uint32_t sum = img->ip_sum + tl + id;
	uint16_t ck;

	memcpy(p, &a, 16);
	memcpy(p + 16, &b, 16);
	memcpy(p + 32, &c, 16);
	memcpy(p + 48, &d, 16);
	/* the header checksum: the constant words' sum, plus the two that
	 * change (rte_ipv4_cksum()'s value: ~sum, but 0xFFFF stays) */
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	ck = sum == 0xffff ? 0xffff : (uint16_t)~sum;
	memcpy(p + 16, &tl, 2);
	memcpy(p + 18, &id, 2);
	memcpy(p + 24, &ck, 2);
	memcpy(p + 38, &ul, 2);
	p[42] = opcode;
	p[43] = (uint8_t)((se ? DPR_BTH_SE : 0) | pad << DPR_BTH_PAD_SHIFT);
	memcpy(p + 50, &apsn, 4);
	return RTE_ETHER_HDR_LEN + 20 + udp_len;
}

/** dpr_wire_build_tmpl() always the general way (headers, then a chain
 * for the pieces, the ICRC piece by piece): the same bytes, the oracle of
 * the one-segment way (the transport's slow_only). @p t may be NULL. */
struct rte_mbuf *dpr_wire_build_chain(struct rte_mempool *pool,
		struct dpr_wire_tmpl *t, const struct dpr_wire_encap *e,
		const struct dpr_wire_hdrs *h, const struct dpr_wire_seg *segs,
		unsigned int nseg);

/**
 * The destination QP of a received RoCEv2 frame whose Ethernet and IP
 * headers a classifier has measured into m->l2_len and m->l3_len (the BTH
 * follows the UDP header). @return the QPN, or 0 when the first segment
 * ends before the BTH.
 */
static inline uint32_t
dpr_wire_dqpn(const struct rte_mbuf *m)
{
	uint32_t off = m->l2_len + m->l3_len + (uint32_t)sizeof(struct rte_udp_hdr);

	if (rte_pktmbuf_data_len(m) < off + sizeof(struct dpr_bth))
		return 0;
	return dpr_bth_qpn(rte_pktmbuf_mtod_offset(m, const struct dpr_bth *, off));
}

/** dpr_wire_arp() into a new mbuf from @p pool; NULL when none is free. */
struct rte_mbuf *dpr_wire_build_arp(struct rte_mempool *pool,
		const struct rte_ether_addr *sha, rte_be32_t sip,
		const struct rte_ether_addr *tha, rte_be32_t tip);

#ifdef __cplusplus
}
#endif

#endif /* DPR_WIRE_H */
