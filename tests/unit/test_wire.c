/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * lib/wire: PSN arithmetic, the opcode table, ICRC over every kind of
 * buffer, validation with one case per refusal, the builder, and the real
 * Linux rxe frames of tests/data/captures.
 */

#include <glob.h>
#include <stdlib.h>
#include <arpa/inet.h>

#include <pcap/pcap.h>
#include <rte_arp.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "dpr_test.h"
#include "dpr_test_wire.h"
#include "dpr_wire.h"

static struct rte_mempool *pool;

/* ---------------------------------------------------------------- PSN */

static int
test_psn_arith(void)
{
	static const uint32_t edge[] = {
		0, 1, 2, 3, 0x7ffffe, 0x7fffff, 0x800000, 0x800001,
		0xfffffd, 0xfffffe, 0xffffff,
	};
	unsigned int i;
	int32_t n;

	for (i = 0; i < RTE_DIM(edge); i++) {
		for (n = -1000; n <= 1000; n++) {
			uint32_t b = dpr_psn_add(edge[i], n);
			uint32_t want = (uint32_t)(((int64_t)edge[i] + n +
						    (1 << 24)) % (1 << 24));

			CHECK_EQ(b, want, "add(%#x, %d)", edge[i], n);
			CHECK_EQ(dpr_psn_diff(b, edge[i]), n, "diff");
			CHECK_EQ(dpr_psn_diff(edge[i], b), -n, "antisymmetric");
			CHECK(dpr_psn_lt(edge[i], b) == (n > 0), "lt %d", n);
			CHECK(dpr_psn_le(edge[i], b) == (n >= 0), "le %d", n);
			CHECK(dpr_psn_gt(edge[i], b) == (n < 0), "gt %d", n);
			CHECK(dpr_psn_ge(edge[i], b) == (n <= 0), "ge %d", n);
		}
	}
	/* every pair within 512 of the wrap point, both orders */
	for (uint32_t a = 0xffff00; a != 0x100; a = (a + 1) & DPR_PSN_MASK)
		for (uint32_t b = 0xffff00; b != 0x100; b = (b + 1) & DPR_PSN_MASK) {
			int64_t d = ((int64_t)a - (int64_t)b) & DPR_PSN_MASK;

			if (d >= (1 << 23))
				d -= 1 << 24;
			CHECK_EQ(dpr_psn_diff(a, b), d, "diff(%#x, %#x)", a, b);
		}
	/* half the space is the boundary: 2^23 ahead reads as behind */
	CHECK_EQ(dpr_psn_diff(0x800000, 0), -0x800000, "half space");
	CHECK_EQ(dpr_psn_diff(0x7fffff, 0), 0x7fffff, "just under half");
	CHECK_EQ(dpr_psn_add(0xffffff, 1), 0, "wrap");
	CHECK_EQ(dpr_psn_add(0, -1), 0xffffff, "wrap back");
	CHECK_EQ(dpr_psn_add(0x123456, 1 << 24), 0x123456, "full turn");
	return TEST_SUCCESS;
}

/* -------------------------------------------------------- opcode table */

static const unsigned int hdr_size[DPR_NUM_HDR_TYPES] = {
	[DPR_HDR_BTH] = 12, [DPR_HDR_DETH] = 8, [DPR_HDR_RETH] = 16,
	[DPR_HDR_ATMETH] = 28, [DPR_HDR_AETH] = 4, [DPR_HDR_ATMACK] = 8,
	[DPR_HDR_IMMDT] = 4, [DPR_HDR_IETH] = 4, [DPR_HDR_CNP] = 16,
};

static int
test_opcode_table(void)
{
	unsigned int op, t, n = 0;

	for (op = 0; op < 256; op++) {
		const struct dpr_opcode_info *oi = &dpr_opcode[op];
		uint32_t m = oi->mask, len = 0, roles;
		const char *nm = oi->name;

		if (nm == NULL) {
			CHECK_EQ(m, 0, "opcode %#x has no name but a mask", op);
			continue;
		}
		n++;
		for (t = 0; t < DPR_HDR_PAYLOAD; t++)
			if (m & (1u << t)) {
				CHECK_EQ(oi->offset[t], len, "%s header %u offset", nm, t);
				len += hdr_size[t];
			}
		CHECK_EQ(oi->length, len, "%s length", nm);
		CHECK_EQ(oi->offset[DPR_HDR_PAYLOAD], len, "%s payload offset", nm);
		roles = m & (DPR_RC_MASK | DPR_UC_MASK | DPR_UD_MASK | DPR_CNP_PKT_MASK);
		CHECK(rte_is_power_of_2(roles), "%s has one transport", nm);
		/* the manufacturer-specific range (IBA 9.2.1, 0xC0-0xFF):
		 * dprdma's own, sent only to peers that speak them */
		CHECK_EQ(op >= 0xc0, strncmp(nm, "DPRDMA_", 7) == 0,
			 "%s: the vendor range is dprdma's", nm);
		if (op < 0xc0)
			CHECK_EQ((op >> 5) == 0, !!(m & DPR_RC_MASK), "%s RC range", nm);
		CHECK_EQ((op >> 5) == 1, !!(m & DPR_UC_MASK), "%s UC range", nm);
		CHECK_EQ((op >> 5) == 3, !!(m & DPR_UD_MASK), "%s UD range", nm);
		CHECK(!(m & DPR_CNP_PKT_MASK) || !(m & (DPR_REQ_MASK | DPR_ACK_MASK)),
		      "CNP is neither request nor response");
		if (!(m & DPR_CNP_PKT_MASK))
			CHECK(!!(m & DPR_REQ_MASK) != !!(m & DPR_ACK_MASK),
			      "%s is a request or a response", nm);
		/* (dprdma's purge is a requester's word, not acknowledged) */
		CHECK_EQ(!!(m & DPR_NEED_ACK_MASK),
			 !!(m & DPR_RC_MASK) && !!(m & DPR_REQ_MASK) && op < 0xc0,
			 "%s: RC requests and only they need an ACK", nm);
		CHECK_EQ(strstr(nm, "FIRST") != NULL,
			 (m & (DPR_START_MASK | DPR_END_MASK)) == DPR_START_MASK,
			 "%s FIRST", nm);
		CHECK_EQ(strstr(nm, "MIDDLE") != NULL, !!(m & DPR_MIDDLE_MASK),
			 "%s MIDDLE", nm);
		CHECK_EQ(strstr(nm, "LAST") != NULL,
			 (m & (DPR_START_MASK | DPR_END_MASK)) == DPR_END_MASK,
			 "%s LAST", nm);
		if (strstr(nm, "ONLY") != NULL)
			CHECK_EQ(m & DPR_ONLY_MASK, DPR_ONLY_MASK, "%s ONLY", nm);
		CHECK_EQ(strstr(nm, "IMMEDIATE") != NULL, !!(m & DPR_IMMDT_MASK),
			 "%s immediate", nm);
		CHECK_EQ(strstr(nm, "INVALIDATE") != NULL,
			 !!(m & DPR_IETH_MASK) && !!(m & DPR_INV_MASK),
			 "%s invalidate", nm);
		CHECK_EQ(!!(m & DPR_PAYLOAD_MASK),
			 (strstr(nm, "SEND") || strstr(nm, "WRITE") ||
			  strstr(nm, "RESPONSE") || strstr(nm, "SACK")) != 0,
			 "%s payload", nm);
		CHECK_EQ(!!(m & DPR_RETH_MASK),
			 (strstr(nm, "WRITE_FIRST") || strstr(nm, "WRITE_ONLY") ||
			  strstr(nm, "READ_REQUEST")) != 0, "%s RETH", nm);
		CHECK_EQ(!!(m & DPR_ATMETH_MASK),
			 (strstr(nm, "CMP_SWAP") || strstr(nm, "FETCH_ADD")) != 0,
			 "%s AtomicETH", nm);
		CHECK_EQ(!!(m & DPR_RWR_MASK),
			 (strstr(nm, "SEND_FIRST") || strstr(nm, "SEND_ONLY") ||
			  strstr(nm, "WITH_IMMEDIATE")) != 0 &&
			 !strstr(nm, "SEND_LAST"), "%s consumes a receive WQE", nm);
	}
	CHECK_EQ(n, 23 + 12 + 2 + 1 + 2, "RC 23, UC 12, UD 2, CNP, SACK, PURGE");
	/* known answers (IBTA table 35 and the header sizes of 9.3) */
	CHECK_EQ(dpr_opcode[DPR_OP_RC_WRITE_ONLY_IMM].length, 32, "BTH RETH ImmDt");
	CHECK_EQ(dpr_opcode[DPR_OP_RC_ATOMIC_ACK].length, 24, "BTH AETH AtomicAckETH");
	CHECK_EQ(dpr_opcode[DPR_OP_RC_CMP_SWAP].length, 40, "BTH AtomicETH");
	CHECK_EQ(dpr_opcode[DPR_OP_UD_SEND_ONLY_IMM].length, 24, "BTH DETH ImmDt");
	CHECK_EQ(dpr_opcode[DPR_OP_UD_SEND_ONLY_IMM].offset[DPR_HDR_IMMDT], 20,
		 "ImmDt after DETH");
	CHECK_EQ(dpr_opcode[DPR_OP_RC_READ_RESPONSE_MIDDLE].length, 12, "no AETH");
	CHECK_EQ(dpr_opcode[DPR_OP_RC_SEND_LAST_INV].length, 16, "BTH IETH");
	CHECK_EQ(dpr_opcode[DPR_OP_CNP].length, 28, "BTH + 16 reserved");
	CHECK_EQ(dpr_icrc_update(0, "\xff\xff\xff\xff\xff\xff\xff\xff", 8),
		 0x2144df1c, "the CRC of the masked LRH that seeds every ICRC");
	CHECK(strcmp(dpr_aeth_syndrome_name(0x1f), "ACK") == 0, "ACK");
	CHECK(strcmp(dpr_aeth_syndrome_name(0x2e), "RNR_NAK") == 0, "RNR");
	CHECK(strcmp(dpr_aeth_syndrome_name(0x62), "NAK_REM_ACCESS_ERR") == 0, "NAK");
	CHECK(strcmp(dpr_aeth_syndrome_name(0x60), "NAK_PSN_SEQ_ERR") == 0, "NAK");
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------ helpers */

static void
sample_hdrs(struct dpr_wire_hdrs *h, uint8_t op)
{
	memset(h, 0, sizeof(*h));
	h->opcode = op;
	h->pkey = DPR_DEFAULT_PKEY;
	h->dqpn = 0x000123;
	h->psn = 0xfffffe;
	h->ackreq = true;
	h->se = true;
	h->reth.va = 0x00007f1234560000ULL;
	h->reth.rkey = 0x1a2b;
	h->reth.len = 4000;
	h->aeth.syndrome = 0x1f;
	h->aeth.msn = 0x10203;
	h->atomic.va = 0x00007f0000000008ULL;
	h->atomic.rkey = 0x77;
	h->atomic.swap_add = 0x0102030405060708ULL;
	h->atomic.compare = 0x1112131415161718ULL;
	h->atomic_orig = 0x2122232425262728ULL;
	h->imm = rte_cpu_to_be_32(0xc0ffee);
	h->ieth_rkey = 0x55aa;
	h->deth.qkey = 0x11111111;
	h->deth.sqpn = 0x42;
}

static uint8_t frame[9000], payload[8192];

static void
fill_payload(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 31 + 7);
}

static uint32_t
build(uint8_t op, bool ipv6, bool vlan, uint32_t paylen)
{
	struct dpr_wire_encap e;
	struct dpr_wire_hdrs h;

	sample_encap(&e, ipv6, vlan);
	sample_hdrs(&h, op);
	return dpr_wire_build_linear(frame, sizeof(frame), &e, &h, payload,
				     paylen);
}

static enum dpr_wire_err
parse_buf(uint8_t *buf, uint32_t len, struct dpr_pkt_info *pi, uint32_t max)
{
	struct rte_mbuf m;

	dpr_wire_mbuf_wrap(&m, buf, (uint16_t)len);
	return dpr_wire_parse(&m, pi, max);
}

/* A chain of fresh mbufs holding @p buf split at the given offsets. */
static struct rte_mbuf *
chain_split(const uint8_t *buf, uint32_t len, const uint32_t *cuts,
	    unsigned int ncuts)
{
	struct rte_mbuf *head = NULL;
	uint32_t from = 0;
	unsigned int i;

	for (i = 0; i <= ncuts; i++) {
		uint32_t to = i < ncuts ? cuts[i] : len;
		struct rte_mbuf *s = rte_pktmbuf_alloc(pool);

		if (s == NULL)
			return NULL;
		memcpy(rte_pktmbuf_append(s, (uint16_t)(to - from)), buf + from,
		       to - from);
		if (head == NULL)
			head = s;
		else
			rte_pktmbuf_chain(head, s);
		from = to;
	}
	return head;
}

/* ---------------------------------------------------------------- ICRC */

static int
test_icrc_every_split(void)
{
	static const uint8_t ops[] = { DPR_OP_RC_WRITE_ONLY, DPR_OP_RC_SEND_ONLY_IMM,
		DPR_OP_UD_SEND_ONLY, DPR_OP_RC_READ_RESPONSE_MIDDLE };
	unsigned int o;

	for (o = 0; o < RTE_DIM(ops); o++) {
		struct dpr_pkt_info pi, pi2;
		uint32_t len = build(ops[o], o == 2, o == 3, 301 + o);
		uint32_t k, want;

		CHECK(len > 0, "build");
		CHECK_EQ(parse_buf(frame, len, &pi, 0), DPR_WIRE_OK, "linear");
		want = pi.icrc;
		for (k = 1; k < len; k++) {
			uint32_t cuts[2] = { k, k + (len - k) / 2 };
			struct rte_mbuf *m = chain_split(frame, len, cuts,
							 k + 1 < len ? 2 : 1);

			CHECK(m != NULL, "alloc");
			pi2 = pi;
			CHECK_EQ(dpr_icrc_mbuf(m, &pi2), want, "split at %u", k);
			/* parsing wants the headers in the first segment */
			CHECK_EQ(dpr_wire_parse(m, &pi2, 0) == DPR_WIRE_OK,
				 k >= pi.payload_off, "chain split at %u", k);
			rte_pktmbuf_free(m);
		}
	}
	return TEST_SUCCESS;
}

static int ext_freed;

static void
ext_free_cb(void *addr __rte_unused, void *opaque __rte_unused)
{
	ext_freed++;
}

/* Payload attached where it lies gives the same bytes and ICRC. */
static int
test_build_extbuf(void)
{
	struct rte_mbuf_ext_shared_info shinfo = {
		.free_cb = ext_free_cb,
	};
	static const uint32_t sizes[] = { 0, 1, 3, 4, 255, 1024, 4096 };
	unsigned int i, variant;

	rte_mbuf_ext_refcnt_set(&shinfo, 1);
	for (variant = 0; variant < 3; variant++) {
		for (i = 0; i < RTE_DIM(sizes); i++) {
			struct dpr_wire_encap e;
			struct dpr_wire_hdrs h;
			struct dpr_pkt_info pi;
			uint32_t p = sizes[i], len;
			struct dpr_wire_seg segs[3] = {
				{ payload, (rte_iova_t)(uintptr_t)payload, p / 3,
				  variant == 1 ? NULL : &shinfo },
				{ payload + p / 3, (rte_iova_t)(uintptr_t)(payload + p / 3),
				  p / 3, variant == 2 ? NULL : &shinfo },
				{ payload + 2 * (p / 3),
				  (rte_iova_t)(uintptr_t)(payload + 2 * (p / 3)),
				  p - 2 * (p / 3), &shinfo },
			};
			uint8_t lin[9000];
			struct rte_mbuf *m;

			sample_encap(&e, variant == 1, variant == 2);
			sample_hdrs(&h, DPR_OP_RC_WRITE_ONLY);
			len = dpr_wire_build_linear(frame, sizeof(frame), &e, &h,
						    payload, p);
			m = dpr_wire_build(pool, &e, &h, segs, 3);
			CHECK(m != NULL, "build %u: %s", p, rte_strerror(rte_errno));
			CHECK_EQ(rte_pktmbuf_pkt_len(m), len, "length %u", p);
			CHECK(memcmp(rte_pktmbuf_read(m, 0, len, lin), frame,
				     len) == 0, "same bytes as linear, %u", p);
			CHECK_EQ(dpr_wire_parse(m, &pi, 0), DPR_WIRE_OK, "parses");
			CHECK_EQ(pi.paylen, p, "payload length");
			if (variant == 0 && p >= 3)
				CHECK(rte_mbuf_ext_refcnt_read(&shinfo) > 1,
				      "payload attached, not copied");
			rte_pktmbuf_free(m);
			CHECK_EQ(rte_mbuf_ext_refcnt_read(&shinfo), 1,
				 "every attached piece released");
		}
	}
	CHECK_EQ(ext_freed, 0, "the owner's reference stays");
	return TEST_SUCCESS;
}

static int
test_build_refuses(void)
{
	struct dpr_wire_encap e;
	struct dpr_wire_hdrs h;
	struct dpr_wire_seg seg = { payload, 0, 8, NULL };
	struct dpr_wire_seg big = { payload, 0, 4000, NULL };

	sample_encap(&e, false, false);
	sample_hdrs(&h, DPR_OP_RC_ACK);
	CHECK(dpr_wire_build(pool, &e, &h, &seg, 1) == NULL && rte_errno == EINVAL,
	      "ACK with payload");
	CHECK_EQ(dpr_wire_build_linear(frame, sizeof(frame), &e, &h, payload, 8),
		 0, "linear ACK with payload");
	h.opcode = 0x15;
	CHECK(dpr_wire_build(pool, &e, &h, NULL, 0) == NULL, "opcode 0x15");
	h.opcode = DPR_OP_RC_SEND_ONLY;
	CHECK(dpr_wire_build(pool, &e, &h, &big, 1) == NULL && rte_errno == EINVAL,
	      "copied payload larger than an mbuf");
	CHECK_EQ(dpr_wire_build_linear(frame, 60, &e, &h, payload, 100), 0,
		 "buffer too small");
	return TEST_SUCCESS;
}

/* Round trip through parse and decode, every opcode, IPv4/IPv6/VLAN. */
static int
test_round_trip_every_opcode(void)
{
	unsigned int op, variant;

	for (variant = 0; variant < 3; variant++)
		for (op = 0; op < 256; op++) {
			const struct dpr_opcode_info *oi = &dpr_opcode[op];
			struct dpr_wire_encap e;
			struct dpr_wire_hdrs h, d;
			struct dpr_pkt_info pi;
			struct rte_mbuf m;
			uint32_t paylen, len;

			if (oi->name == NULL)
				continue;
			paylen = oi->mask & DPR_PAYLOAD_MASK ? op * 7 % 1025 : 0;
			sample_encap(&e, variant == 1, variant == 2);
			sample_hdrs(&h, (uint8_t)op);
			if (!(oi->mask & DPR_RETH_MASK))
				memset(&h.reth, 0, sizeof(h.reth));
			if (!(oi->mask & DPR_AETH_MASK))
				memset(&h.aeth, 0, sizeof(h.aeth));
			if (!(oi->mask & DPR_ATMETH_MASK))
				memset(&h.atomic, 0, sizeof(h.atomic));
			if (!(oi->mask & DPR_ATMACK_MASK))
				h.atomic_orig = 0;
			if (!(oi->mask & DPR_IMMDT_MASK))
				h.imm = 0;
			if (!(oi->mask & DPR_IETH_MASK))
				h.ieth_rkey = 0;
			if (!(oi->mask & DPR_DETH_MASK))
				memset(&h.deth, 0, sizeof(h.deth));
			len = dpr_wire_build_linear(frame, sizeof(frame), &e, &h,
						    payload, paylen);
			CHECK(len > 0, "%s", oi->name);
			dpr_wire_mbuf_wrap(&m, frame, (uint16_t)len);
			CHECK_EQ(dpr_wire_parse(&m, &pi, 0), DPR_WIRE_OK, "%s", oi->name);
			CHECK_EQ(pi.paylen, paylen, "%s payload", oi->name);
			CHECK_EQ(pi.pad, (4 - paylen % 4) % 4, "%s pad", oi->name);
			CHECK(memcmp(&pi.encap, &e, sizeof(e)) == 0, "%s encap",
			      oi->name);
			dpr_wire_decode(&m, &pi, &d);
			CHECK(memcmp(&d, &h, sizeof(h)) == 0, "%s fields", oi->name);
			CHECK(memcmp(frame + pi.payload_off, payload, paylen) == 0,
			      "%s payload bytes", oi->name);
		}
	return TEST_SUCCESS;
}

/* ---------------------------------------------------------- rejections */

static void
fix_ip_csum(uint8_t *f)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + 14);

	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

static int
expect_err(uint8_t op, uint32_t paylen, void (*mutate)(uint8_t *f, uint32_t *len),
	   uint32_t max, enum dpr_wire_err want, const char *what)
{
	struct dpr_pkt_info pi;
	uint32_t len = build(op, false, false, paylen);
	enum dpr_wire_err got;

	mutate(frame, &len);
	got = parse_buf(frame, len, &pi, max);
	CHECK(got == want, "%s: got %s, want %s", what, dpr_wire_err_name(got),
	      dpr_wire_err_name(want));
	return TEST_SUCCESS;
}

/* offsets in an untagged IPv4 frame */
#define IP 14
#define UDP (14 + 20)
#define BTH (14 + 20 + 8)

static void m_short_eth(uint8_t *f, uint32_t *l) { (void)f; *l = 10; }
static void m_arp(uint8_t *f, uint32_t *l) { (void)l; f[12] = 0x08; f[13] = 0x06; }
static void m_ipver(uint8_t *f, uint32_t *l) { (void)l; f[IP] = 0x55; fix_ip_csum(f); }
static void m_ihl(uint8_t *f, uint32_t *l) { (void)l; f[IP] = 0x44; }
static void m_iplen(uint8_t *f, uint32_t *l) { (void)l; f[IP + 3] += 8; fix_ip_csum(f); }
static void m_ipcsum(uint8_t *f, uint32_t *l) { (void)l; f[IP + 10] ^= 0x40; }
static void m_frag(uint8_t *f, uint32_t *l) { (void)l; f[IP + 6] = 0x20; fix_ip_csum(f); }
static void m_tcp(uint8_t *f, uint32_t *l) { (void)l; f[IP + 9] = 6; fix_ip_csum(f); }
static void m_udplen(uint8_t *f, uint32_t *l) { (void)l; f[UDP + 5] -= 4; }
static void m_port(uint8_t *f, uint32_t *l) { (void)l; f[UDP + 3] = 0xb8; }
static void m_tver(uint8_t *f, uint32_t *l) { (void)l; f[BTH + 1] |= 1; }
static void m_opcode(uint8_t *f, uint32_t *l) { (void)l; f[BTH] = 0x15; }
static void m_pad(uint8_t *f, uint32_t *l) { (void)l; f[BTH + 1] |= 0x30; }
static void m_none(uint8_t *f, uint32_t *l) { (void)f; (void)l; }
static void m_payload_bit(uint8_t *f, uint32_t *l) { f[*l - 10] ^= 1; }
static void m_icrc(uint8_t *f, uint32_t *l) { f[*l - 1] ^= 0x80; }
static void m_psn(uint8_t *f, uint32_t *l) { (void)l; f[BTH + 11] ^= 1; }

/* IP and UDP lengths cut down to the BTH (and to part of a header) */
static uint32_t cut_to;
static void
m_cut(uint8_t *f, uint32_t *l)
{
	uint32_t udp_len = cut_to - UDP;

	*l = cut_to;
	f[IP + 2] = (uint8_t)((cut_to - IP) >> 8);
	f[IP + 3] = (uint8_t)(cut_to - IP);
	fix_ip_csum(f);
	f[UDP + 4] = (uint8_t)(udp_len >> 8);
	f[UDP + 5] = (uint8_t)udp_len;
}

static int
test_parse_refusals(void)
{
	int r = 0;

	r |= expect_err(DPR_OP_RC_SEND_ONLY, 64, m_short_eth, 0, DPR_WIRE_ERR_SHORT_ETH, "short");
	r |= expect_err(DPR_OP_RC_SEND_ONLY, 64, m_arp, 0, DPR_WIRE_ERR_NOT_IP, "ARP");
	r |= expect_err(DPR_OP_RC_SEND_ONLY, 64, m_ipver, 0, DPR_WIRE_ERR_IP_VERSION, "v5");
	r |= expect_err(DPR_OP_RC_SEND_ONLY, 64, m_ihl, 0, DPR_WIRE_ERR_IP_HDR_LEN, "ihl 4");
	r |= expect_err(DPR_OP_RC_SEND_ONLY, 64, m_iplen, 0, DPR_WIRE_ERR_IP_LEN, "IP len");
	r |= expect_err(DPR_OP_RC_SEND_ONLY, 64, m_ipcsum, 0, DPR_WIRE_ERR_IP_CSUM, "IP csum");
	r |= expect_err(DPR_OP_RC_SEND_ONLY, 64, m_frag, 0, DPR_WIRE_ERR_IP_FRAG, "MF");
	r |= expect_err(DPR_OP_RC_SEND_ONLY, 64, m_tcp, 0, DPR_WIRE_ERR_NOT_UDP, "TCP");
	r |= expect_err(DPR_OP_RC_SEND_ONLY, 64, m_udplen, 0, DPR_WIRE_ERR_UDP_LEN, "UDP len");
	r |= expect_err(DPR_OP_RC_SEND_ONLY, 64, m_port, 0, DPR_WIRE_ERR_NOT_ROCE_PORT, "4792");
	r |= expect_err(DPR_OP_RC_SEND_ONLY, 64, m_tver, 0, DPR_WIRE_ERR_BAD_TVER, "tver 1");
	r |= expect_err(DPR_OP_RC_SEND_ONLY, 64, m_opcode, 0, DPR_WIRE_ERR_BAD_OPCODE, "0x15");
	r |= expect_err(DPR_OP_RC_ACK, 0, m_pad, 0, DPR_WIRE_ERR_BAD_PAD, "pad > body");
	r |= expect_err(DPR_OP_RC_SEND_ONLY, 1025, m_none, 1024,
			DPR_WIRE_ERR_PAYLOAD_TOO_LONG, "payload > MTU");
	r |= expect_err(DPR_OP_RC_SEND_ONLY, 1024, m_none, 1024, DPR_WIRE_OK, "= MTU");
	r |= expect_err(DPR_OP_RC_SEND_ONLY, 64, m_payload_bit, 0, DPR_WIRE_ERR_BAD_ICRC,
			"payload bit");
	r |= expect_err(DPR_OP_RC_SEND_ONLY, 64, m_icrc, 0, DPR_WIRE_ERR_BAD_ICRC, "ICRC bit");
	r |= expect_err(DPR_OP_RC_SEND_ONLY, 64, m_psn, 0, DPR_WIRE_ERR_BAD_ICRC, "PSN bit");
	cut_to = BTH + 12 + 3;
	r |= expect_err(DPR_OP_RC_SEND_ONLY, 64, m_cut, 0, DPR_WIRE_ERR_SHORT_BTH, "BTH+3");
	cut_to = BTH + 12 + 10 + 4;
	r |= expect_err(DPR_OP_RC_WRITE_ONLY, 64, m_cut, 0, DPR_WIRE_ERR_SHORT_HDRS,
			"RETH cut");
	return r ? TEST_FAILED : TEST_SUCCESS;
}

/* An ACK carrying bytes: rebuilt by hand since the builder refuses it. */
static int
test_unexpected_payload(void)
{
	struct dpr_pkt_info pi;
	uint32_t len = build(DPR_OP_RC_SEND_ONLY, false, false, 8), crc;

	frame[BTH] = DPR_OP_RC_ACK; /* 12 + 4: the 8 bytes become AETH + 4 */
	crc = dpr_icrc_hdrs(frame + IP, false, 16);
	crc = dpr_icrc_update(crc, frame + BTH + 16, 4);
	memcpy(frame + len - 4, &crc, 4);
	CHECK_EQ(parse_buf(frame, len, &pi, 0), DPR_WIRE_ERR_UNEXPECTED_PAYLOAD,
		 "ACK with 4 bytes of payload");
	return TEST_SUCCESS;
}

/* Fields the ICRC masks may change in flight without breaking it. */
static int
test_icrc_masks_variant_fields(void)
{
	struct dpr_pkt_info pi;
	uint32_t len = build(DPR_OP_RC_WRITE_ONLY, false, false, 100);

	frame[IP + 1] = 0xb3;            /* DSCP 44, ECN CE */
	frame[IP + 8] = 3;               /* TTL */
	fix_ip_csum(frame);
	frame[BTH + 4] |= 0xc0;          /* FECN, BECN */
	frame[UDP + 6] = 0x12;           /* UDP checksum */
	memcpy(payload + 4096, frame, len);
	CHECK_EQ(parse_buf(frame, len, &pi, 0), DPR_WIRE_OK, "IPv4 variant fields");
	CHECK(pi.ce && pi.ecn == 3, "CE reported");
	CHECK(memcmp(payload + 4096, frame, len) == 0,
	      "parsing leaves the frame as it was");
	fill_payload();

	len = build(DPR_OP_RC_WRITE_ONLY, true, false, 100);
	frame[IP] = 0x6f;                /* traffic class, flow label */
	frame[IP + 1] = 0xff;
	frame[IP + 3] = 0x01;
	frame[IP + 7] = 1;               /* hop limit */
	memcpy(payload + 4096, frame, len);
	CHECK_EQ(parse_buf(frame, len, &pi, 0), DPR_WIRE_OK, "IPv6 variant fields");
	CHECK(memcmp(payload + 4096, frame, len) == 0, "IPv6 frame unchanged");
	fill_payload();
	CHECK(pi.ce, "CE in the traffic class");
	frame[IP + 8] ^= 1;              /* the source address is not masked */
	CHECK_EQ(parse_buf(frame, len, &pi, 0), DPR_WIRE_ERR_BAD_ICRC, "IPv6 saddr");
	return TEST_SUCCESS;
}

static int
test_gid_and_sport(void)
{
	union dpr_gid g;

	dpr_gid_from_ipv4(&g, htonl(0x0a630002));
	CHECK(dpr_gid_is_ipv4(&g), "mapped");
	CHECK_EQ(g.raw[10], 0xff, "::ffff:");
	CHECK_EQ(g.raw[15], 2, "last octet");
	CHECK_EQ(dpr_gid_to_ipv4(&g), htonl(0x0a630002), "back");
	inet_pton(AF_INET6, "fe80::5054:ff:fe99:2", g.raw);
	CHECK(!dpr_gid_is_ipv4(&g), "link local is not mapped");
	for (uint32_t q = 0; q < (1 << 24); q += 4099) {
		CHECK(dpr_udp_sport_ud(q) >= 0xc000, "UD sport range");
		CHECK(dpr_udp_sport_rc(q, q + 7, 0) >= 0xc000, "RC sport range");
	}
	/* rdma_get_udp_sport() known answers: 0x11 x 0x11 = 0x121 */
	CHECK_EQ(dpr_udp_sport_rc(0x11, 0x11, 0), 0xc121, "flow label 0x121");
	CHECK_EQ(dpr_udp_sport_rc(1, 2, 0xfc001), 0xc000 | (1 ^ 0x3f), "fold");
	return TEST_SUCCESS;
}

/* ---------------------------------------------------- real rxe frames */

struct rxe_frame {
	uint8_t data[2048];
	uint32_t len;
};

static int
for_each_capture_frame(int (*fn)(const char *file, unsigned int n,
				 uint8_t *data, uint32_t len, void *arg),
		       void *arg, unsigned int *count)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	glob_t g;
	size_t i;

	*count = 0;
	CHECK(glob(DPR_SOURCE_ROOT "/tests/data/captures/*.pcap", 0, NULL, &g) == 0,
	      "captures in tests/data/captures");
	for (i = 0; i < g.gl_pathc; i++) {
		pcap_t *p = pcap_open_offline(g.gl_pathv[i], errbuf);
		struct pcap_pkthdr *ph;
		const uint8_t *data;
		unsigned int n = 0;

		CHECK(p != NULL, "%s: %s", g.gl_pathv[i], errbuf);
		while (pcap_next_ex(p, &ph, &data) == 1) {
			uint8_t *copy = malloc(ph->caplen);
			int r;

			n++;
			memcpy(copy, data, ph->caplen);
			r = fn(g.gl_pathv[i], n, copy, ph->caplen, arg);
			free(copy);
			if (r < 0) {
				pcap_close(p);
				globfree(&g);
				return TEST_FAILED;
			}
			*count += r;
		}
		pcap_close(p);
	}
	globfree(&g);
	return TEST_SUCCESS;
}

static int
rebuild_one(const char *file, unsigned int n, uint8_t *data, uint32_t len,
	    void *arg __rte_unused)
{
	struct dpr_pkt_info pi;
	struct dpr_wire_hdrs h;
	struct rte_mbuf m;
	enum dpr_wire_err err;
	uint32_t out;

	dpr_wire_mbuf_wrap(&m, data, (uint16_t)len);
	err = dpr_wire_parse(&m, &pi, 0);
	if (err == DPR_WIRE_ERR_NOT_ROCE_PORT || err == DPR_WIRE_ERR_NOT_IP ||
	    err == DPR_WIRE_ERR_NOT_UDP)
		return 0;   /* TCP of the out-of-band exchange, ARP */
	CHECK(err == DPR_WIRE_OK, "%s #%u: %s", file, n, dpr_wire_err_name(err));
	dpr_wire_decode(&m, &pi, &h);
	out = dpr_wire_build_linear(frame, sizeof(frame), &pi.encap, &h,
				    data + pi.payload_off, pi.paylen);
	CHECK_EQ(out, pi.frame_len, "%s #%u: rebuilt length", file, n);
	CHECK(memcmp(frame, data, out) == 0, "%s #%u: rebuilt bytes differ",
	      file, n);
	/* Linux rxe: UDP source port = 0xC000 + hash_32(local QPN, 14); in
	 * UD the local QPN travels in the DETH */
	if (pi.mask & DPR_DETH_MASK)
		CHECK_EQ(pi.encap.sport, dpr_udp_sport_ud(h.deth.sqpn),
			 "%s #%u: UD sport from the source QP", file, n);
	return 1;
}

static int
test_rxe_captures_rebuild(void)
{
	unsigned int count;

	CHECK_EQ(for_each_capture_frame(rebuild_one, NULL, &count), TEST_SUCCESS,
		 "captures");
	printf("    %u RoCEv2 frames of Linux rxe parsed, ICRC checked, rebuilt "
	       "byte for byte\n", count);
	CHECK(count > 300, "the captures hold RoCEv2 frames (%u)", count);
	return TEST_SUCCESS;
}

/*
 * The fast parse against the full one, on every RC frame of the captures
 * and on mutants of each (every byte of the headers changed in turn, one
 * random byte of the rest, lengths cut): whatever dpr_wire_parse_fast()
 * takes, dpr_wire_parse() takes too, with the same description and the
 * same decoded fields, and the frame comes back unchanged; the frames the
 * template stands for are taken; another QP's or another peer's are not.
 */
struct fast_counts {
	unsigned int taken, declined, frames;
};

static uint64_t
next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static int
fast_vs_full(struct rte_mbuf *m, const struct dpr_wire_rx_tmpl *t,
	     const char *what, unsigned int n, int *took)
{
	struct dpr_pkt_info a, b;
	struct dpr_wire_hdrs ha, hb;
	uint8_t before[2048];
	uint32_t len = rte_pktmbuf_data_len(m);

	memcpy(before, rte_pktmbuf_mtod(m, void *), len);
	memset(&a, 0, sizeof(a));
	*took = dpr_wire_parse_fast(m, t, 4096, &a, &ha);
	CHECK(memcmp(before, rte_pktmbuf_mtod(m, void *), len) == 0,
	      "%s #%u: the frame is as it was", what, n);
	if (!*took)
		return 0;
	CHECK(dpr_wire_parse(m, &b, 4096) == DPR_WIRE_OK,
	      "%s #%u: the fast parse took a frame the full one refuses", what, n);
	dpr_wire_decode(m, &b, &hb);
	CHECK(a.opcode == b.opcode && a.mask == b.mask && a.l3_off == b.l3_off &&
	      a.l4_off == b.l4_off && a.bth_off == b.bth_off &&
	      a.hdr_len == b.hdr_len && a.payload_off == b.payload_off &&
	      a.paylen == b.paylen && a.pad == b.pad && a.ecn == b.ecn &&
	      a.ce == b.ce && a.frame_len == b.frame_len && a.icrc == b.icrc,
	      "%s #%u: the same description", what, n);
	CHECK(memcmp(&ha, &hb, sizeof(ha)) == 0, "%s #%u: the same fields", what, n);
	return 0;
}

static int
fast_one(const char *file, unsigned int n, uint8_t *data, uint32_t len, void *arg)
{
	struct fast_counts *fc = arg;
	struct dpr_wire_rx_tmpl t, other;
	struct dpr_pkt_info pi;
	struct dpr_wire_hdrs h;
	struct rte_mbuf m;
	uint64_t rng = n * 7919ull + len;
	uint32_t i;
	int took;

	dpr_wire_mbuf_wrap(&m, data, (uint16_t)len);
	if (dpr_wire_parse(&m, &pi, 0) != DPR_WIRE_OK || !(pi.mask & DPR_RC_MASK) ||
	    pi.encap.ipv6 || pi.encap.vlan)
		return 0;
	dpr_wire_decode(&m, &pi, &h);
	fc->frames++;
	dpr_wire_rx_tmpl_make(&t, dpr_gid_to_ipv4(&pi.encap.sgid), &pi.encap.dst_mac,
			      dpr_gid_to_ipv4(&pi.encap.dgid), h.dqpn, h.pkey);
	CHECK_EQ(fast_vs_full(&m, &t, file, n, &took), 0, "fast vs full");
	CHECK(took, "%s #%u: the template's own frame is taken", file, n);
	dpr_wire_rx_tmpl_make(&other, dpr_gid_to_ipv4(&pi.encap.sgid), NULL,
			      dpr_gid_to_ipv4(&pi.encap.dgid), h.dqpn ^ 1, h.pkey);
	CHECK(!dpr_wire_parse_fast(&m, &other, 4096, &pi, &h),
	      "%s #%u: another QP's template declines it", file, n);
	dpr_wire_rx_tmpl_make(&other, dpr_gid_to_ipv4(&pi.encap.sgid) ^ RTE_BE32(1),
			      NULL, dpr_gid_to_ipv4(&pi.encap.dgid), h.dqpn, h.pkey);
	CHECK(!dpr_wire_parse_fast(&m, &other, 4096, &pi, &h),
	      "%s #%u: another peer's template declines it", file, n);
	dpr_wire_rx_tmpl_make(&other, dpr_gid_to_ipv4(&pi.encap.sgid), &pi.encap.src_mac,
			      dpr_gid_to_ipv4(&pi.encap.dgid), h.dqpn, h.pkey);
	CHECK(!dpr_wire_parse_fast(&m, &other, 4096, &pi, &h),
	      "%s #%u: a template of another MAC declines it", file, n);
	/* mutants: a bit of each header byte flipped in turn, of 16 random
	 * bytes of the rest, and the frame cut short */
	for (i = 0; i < RTE_MIN(len, 64u) + 16 + 8; i++) {
		uint32_t at = i < RTE_MIN(len, 64u) ? i : (uint32_t)(next_rand(&rng) % len);
		uint32_t cut = 0;
		uint8_t keep = data[at];

		if (i >= RTE_MIN(len, 64u) + 16) {
			cut = (i - RTE_MIN(len, 64u) - 16) * 2 + 1;
			dpr_wire_mbuf_wrap(&m, data, (uint16_t)(len - cut));
		} else {
			data[at] ^= (uint8_t)(1u << (next_rand(&rng) % 8));
		}
		CHECK_EQ(fast_vs_full(&m, &t, file, n, &took), 0, "mutant %u", i);
		if (took)
			fc->taken++;
		else
			fc->declined++;
		data[at] = keep;
		dpr_wire_mbuf_wrap(&m, data, (uint16_t)len);
	}
	return 1;
}

static int
test_parse_fast_vs_full(void)
{
	struct fast_counts fc = { 0 };
	unsigned int count;

	CHECK_EQ(for_each_capture_frame(fast_one, &fc, &count), TEST_SUCCESS,
		 "captures");
	printf("    %u RC frames of rxe taken by their template; of their "
	       "mutants %u taken (as the full parse takes them), %u declined\n",
	       fc.frames, fc.taken, fc.declined);
	CHECK(fc.frames > 200 && fc.declined > fc.frames * 50,
	      "the captures' RC frames and their mutants (%u, %u)", fc.frames,
	      fc.declined);
	return TEST_SUCCESS;
}

/*
 * RC: Linux derives a connection's source port from the flow label of its
 * local and remote QPNs; the remote QPN is the destination QP of its
 * frames, the local one the destination QP of the frames coming back.
 */
struct flows {
	uint32_t src[16], dst[16], dqpn[16];
	uint16_t sport[16];
	unsigned int n;
};

static int
collect_flow(const char *file, unsigned int n __rte_unused,
	     uint8_t *data, uint32_t len, void *arg)
{
	struct flows *fl = arg;
	struct dpr_pkt_info pi;
	struct dpr_wire_hdrs h;
	struct rte_mbuf m;
	unsigned int i;

	/* RDMA CM puts a flow label of its own in the path */
	if (strstr(file, "rdmacm") != NULL)
		return 0;
	dpr_wire_mbuf_wrap(&m, data, (uint16_t)len);
	if (dpr_wire_parse(&m, &pi, 0) != DPR_WIRE_OK || !(pi.mask & DPR_RC_MASK))
		return 0;
	dpr_wire_decode(&m, &pi, &h);
	for (i = 0; i < fl->n; i++)
		if (fl->src[i] == dpr_gid_to_ipv4(&pi.encap.sgid) &&
		    fl->dqpn[i] == h.dqpn && fl->sport[i] == pi.encap.sport)
			return 0;
	if (fl->n == RTE_DIM(fl->src))
		return 0;
	fl->src[fl->n] = dpr_gid_to_ipv4(&pi.encap.sgid);
	fl->dst[fl->n] = dpr_gid_to_ipv4(&pi.encap.dgid);
	fl->dqpn[fl->n] = h.dqpn;
	fl->sport[fl->n] = pi.encap.sport;
	fl->n++;
	return 1;
}

static int
test_rxe_sport_of_qpn(void)
{
	struct flows fl = { .n = 0 };
	unsigned int count, i, j, paired = 0, matched = 0;

	CHECK_EQ(for_each_capture_frame(collect_flow, &fl, &count),
		 TEST_SUCCESS, "captures");
	for (i = 0; i < fl.n; i++) {
		bool has_reverse = false, match = false;

		for (j = 0; j < fl.n; j++) {
			if (fl.src[j] != fl.dst[i] || fl.dst[j] != fl.src[i])
				continue;
			has_reverse = true;
			/* flow i: its local QPN is what flow j sends to */
			if (fl.sport[i] == dpr_udp_sport_rc(fl.dqpn[j], fl.dqpn[i], 0))
				match = true;
		}
		paired += has_reverse;
		matched += match;
	}
	printf("    %u RC flows with a reverse flow, %u source ports match "
	       "rdma_get_udp_sport()\n", paired, matched);
	CHECK(paired >= 10 && matched == paired, "every RC source port derives "
	      "from its QPNs (%u of %u)", matched, paired);
	return TEST_SUCCESS;
}

static int
setup(void)
{
	fill_payload();
	pool = rte_pktmbuf_pool_create("wire", 1023, 0, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	return pool == NULL ? -1 : 0;
}

static void
teardown(void)
{
	rte_mempool_free(pool);
}

/* The 20-byte IPv4 sum against DPDK's: random headers, carries, the
 * all-ones and all-zeros corners; and rte_ipv4_cksum()'s result. */
static int
test_ipv4_sum20(void)
{
	uint8_t h[20];
	uint32_t x = 12345;

	for (int k = 0; k < 100000; k++) {
		for (int i = 0; i < 20; i++) {
			x = x * 1103515245u + 12345u;
			h[i] = k < 2 ? (uint8_t)(k ? 0xff : 0) : (uint8_t)(x >> 16);
		}
		CHECK_EQ(dpr_ipv4_sum20(h), rte_raw_cksum(h, 20), "header %d", k);
		h[10] = h[11] = 0;
		{
			struct rte_ipv4_hdr *ip = (void *)h;
			uint16_t sum;

			h[0] = 0x45;
			sum = dpr_ipv4_sum20(h);
			CHECK_EQ(sum == 0xffff ? sum : (uint16_t)~sum, rte_ipv4_cksum(ip),
				 "checksum %d", k);
		}
	}
	return TEST_SUCCESS;
}

/* ARP frames read back through rte_arp.h's view: a request broadcast
 * with a zero target MAC, a reply to the asker, and a reply written over
 * the request it answers (as the engine answers in place). */
static int
test_wire_arp(void)
{
	const struct rte_ether_addr me = {{ 2, 0, 0, 0, 0, 1 }};
	const struct rte_ether_addr peer = {{ 2, 0, 0, 0, 0, 2 }};
	const rte_be32_t my_ip = htonl(0x0a000001), peer_ip = htonl(0x0a000002);
	uint8_t f[DPR_ARP_FRAME_LEN + 1];
	const struct rte_ether_hdr *e = (void *)f;
	const struct rte_arp_hdr *a = (void *)(e + 1);

	RTE_BUILD_BUG_ON(DPR_ARP_FRAME_LEN != sizeof(*e) + sizeof(*a));
	memset(f, 0x77, sizeof(f));
	dpr_wire_arp(f, &me, my_ip, NULL, peer_ip);
	CHECK(rte_is_broadcast_ether_addr(&e->dst_addr) &&
	      rte_is_same_ether_addr(&e->src_addr, &me) &&
	      e->ether_type == RTE_BE16(RTE_ETHER_TYPE_ARP), "request: Ethernet");
	CHECK(a->arp_hardware == RTE_BE16(RTE_ARP_HRD_ETHER) &&
	      a->arp_protocol == RTE_BE16(RTE_ETHER_TYPE_IPV4) &&
	      a->arp_hlen == 6 && a->arp_plen == 4 &&
	      a->arp_opcode == RTE_BE16(RTE_ARP_OP_REQUEST), "request: fixed fields");
	CHECK(rte_is_same_ether_addr(&a->arp_data.arp_sha, &me) &&
	      a->arp_data.arp_sip == my_ip && a->arp_data.arp_tip == peer_ip &&
	      rte_is_zero_ether_addr(&a->arp_data.arp_tha), "request: addresses");
	CHECK_EQ(f[DPR_ARP_FRAME_LEN], 0x77, "nothing written past the frame");
	/* the peer answers it in place, pointing into the request */
	dpr_wire_arp(f, &peer, peer_ip, &a->arp_data.arp_sha, a->arp_data.arp_sip);
	CHECK(rte_is_same_ether_addr(&e->dst_addr, &me) &&
	      rte_is_same_ether_addr(&e->src_addr, &peer) &&
	      a->arp_opcode == RTE_BE16(RTE_ARP_OP_REPLY) &&
	      rte_is_same_ether_addr(&a->arp_data.arp_sha, &peer) &&
	      a->arp_data.arp_sip == peer_ip &&
	      rte_is_same_ether_addr(&a->arp_data.arp_tha, &me) &&
	      a->arp_data.arp_tip == my_ip, "reply in place");
	return TEST_SUCCESS;
}

/* Frames from a connection's prebuilt headers are the bytes the general
 * builder (dpr_wire_build_chain) writes from scratch, and so are frames of
 * several copied pieces in one segment: IPv4/IPv6, with and without VLAN,
 * every identification (the checksum's carries), sizes across the pad,
 * and an address change remakes the template. dpr_wire_build_unsealed()
 * writes the same bytes but a zero ICRC. */
static int
test_build_tmpl(void)
{
	static const uint32_t sizes[] = { 0, 1, 3, 64, 1024 };
	struct dpr_wire_tmpl t;
	uint8_t a[2048], b[2048];

	memset(&t, 0, sizeof(t));
	for (unsigned int v = 0; v < 4; v++) {
		for (uint32_t id = 0; id < 65536; id += 97) {
			struct dpr_wire_encap e;
			struct dpr_wire_hdrs h;
			uint32_t p = sizes[id % RTE_DIM(sizes)];
			struct dpr_wire_seg seg = { payload, (rte_iova_t)(uintptr_t)payload,
						    p, NULL };
			struct rte_mbuf *m1, *m2;

			sample_encap(&e, v & 1, v & 2);
			e.ip_id = (uint16_t)id;
			if (id % 3 == 0)
				e.dst_mac.addr_bytes[5] = (uint8_t)id; /* a new peer */
			sample_hdrs(&h, (id & 1) ? DPR_OP_RC_WRITE_ONLY : DPR_OP_RC_SEND_ONLY);
			struct rte_mbuf *m3, *m4;
			/* the same payload in three copied pieces */
			struct dpr_wire_seg three[3] = {
				{ payload, 0, p / 3, NULL },
				{ payload + p / 3, 0, p / 3, NULL },
				{ payload + 2 * (p / 3), 0, p - 2 * (p / 3), NULL },
			};

			m1 = dpr_wire_build_chain(pool, NULL, &e, &h, &seg, p ? 1 : 0);
			m2 = dpr_wire_build_tmpl(pool, &t, &e, &h, &seg, p ? 1 : 0);
			m3 = dpr_wire_build(pool, &e, &h, three, 3);
			m4 = dpr_wire_build_unsealed(pool, &t, &e, &h, three, 3);
			CHECK(m1 != NULL && m2 != NULL && m3 != NULL && m4 != NULL, "built");
			CHECK_EQ(rte_pktmbuf_pkt_len(m1), rte_pktmbuf_pkt_len(m4), "length");
			CHECK_EQ(rte_pktmbuf_pkt_len(m1), rte_pktmbuf_pkt_len(m2), "length");
			CHECK_EQ(rte_pktmbuf_pkt_len(m1), rte_pktmbuf_pkt_len(m3), "length");
			/* (rte_pktmbuf_read() gives the mbuf's own bytes when
			 * they are contiguous: copied here to compare) */
			memcpy(a, rte_pktmbuf_read(m1, 0, rte_pktmbuf_pkt_len(m1), a),
			       rte_pktmbuf_pkt_len(m1));
			CHECK(memcmp(a, rte_pktmbuf_read(m2, 0, rte_pktmbuf_pkt_len(m2), b),
				     rte_pktmbuf_pkt_len(m1)) == 0,
			      "variant %u id %u size %u: same bytes", v, id, p);
			CHECK(memcmp(a, rte_pktmbuf_read(m3, 0, rte_pktmbuf_pkt_len(m3), b),
				     rte_pktmbuf_pkt_len(m1)) == 0,
			      "variant %u id %u size %u: three pieces, same bytes", v, id, p);
			{
				const uint32_t n = rte_pktmbuf_pkt_len(m4) - DPR_ICRC_LEN;
				static const uint8_t zero[DPR_ICRC_LEN];

				CHECK(memcmp(a, rte_pktmbuf_read(m4, 0, n, b), n) == 0 &&
				      memcmp(rte_pktmbuf_read(m4, n, DPR_ICRC_LEN, b), zero,
					     DPR_ICRC_LEN) == 0,
				      "variant %u id %u size %u: unsealed, the same but "
				      "a zero ICRC", v, id, p);
			}
			rte_pktmbuf_free(m4);
			/* copied pieces that fit: one segment */
			CHECK(m2->nb_segs == 1 && m3->nb_segs == 1,
			      "variant %u: one segment", v);
			rte_pktmbuf_free(m1);
			rte_pktmbuf_free(m2);
			rte_pktmbuf_free(m3);
		}
	}
	return TEST_SUCCESS;
}

/* dpr_icrc_ipv4(), dpr_icrc_hdrs() and dpr_icrc_mbuf() against the
 * definition (a masked copy, CRCed by ISA-L after the LRH's ones) for
 * every length from the shortest packet to past the fold's 256 bytes,
 * at every alignment mod 16, IPv4 and IPv6, every way this CPU has (ISA-L
 * alone, the fold in SSE's and AVX's encodings, AVX-512's 64-byte fold of
 * short packets, its four-chain fold of long ones and in-place mask of
 * long ones not of whole words); the buffer is as it was after each. */
static int
test_icrc_every_length(void)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0xff };
	uint8_t buf[16 + 400 + 4], keep[sizeof(buf)], ref[400];
	uint32_t len, i, want, got, seed = 12345, way, al;
	struct rte_mbuf m;
	struct dpr_pkt_info pi;

	for (way = DPR_ICRC_ISAL; way <= DPR_ICRC_FOLD_AVX512; way++) {
		if (dpr_icrc_set_way(way) != 0) {
			printf("    (ICRC way %u: not on this CPU)\n", way);
			continue;
		}

		for (len = 40; len <= 300; len++) {
			for (al = 0; al < 16; al += (len % 16 == 0 ? 1 : 5)) {
				uint8_t *l3 = buf + al;

				for (i = 0; i < sizeof(buf); i++) {
					seed = seed * 1103515245u + 12345u;
					buf[i] = (uint8_t)(seed >> 16);
				}
				l3[0] = 0x45; /* IPv4, no options */
				memcpy(keep, buf, sizeof(buf));
				memcpy(ref, l3, len);
				ref[1] = ref[8] = ref[10] = ref[11] = 0xff;
				ref[26] = ref[27] = ref[32] = 0xff;
				want = dpr_icrc_update(dpr_icrc_update(0, ones, 8), ref, len);
				got = dpr_icrc_ipv4(l3, len);
				CHECK_EQ(got, want, "way %u, length %u at %u", way,
					 len, al);
				/* the headers alone, continued by ISA-L */
				got = dpr_icrc_update(dpr_icrc_hdrs(l3, false, 12),
						      l3 + 40, len - 40);
				CHECK_EQ(got, want, "way %u, hdrs, length %u", way,
					 len);
				/* a frame of one segment through the parse's way */
				if (al == 0 && len + 4 <= 400) {
					memset(&pi, 0, sizeof(pi));
					pi.l3_off = 0;
					pi.payload_off = 40;
					pi.hdr_len = 12;
					pi.paylen = len - 40;
					pi.icrc = 0;
					dpr_wire_mbuf_wrap(&m, l3, (uint16_t)(len + 4));
					CHECK_EQ(dpr_icrc_mbuf(&m, &pi), want,
						 "way %u, mbuf, length %u", way, len);
				}
				CHECK(memcmp(buf, keep, sizeof(buf)) == 0,
				      "length %u: the buffer is only read", len);
				/* IPv6: traffic class, flow label, hop limit */
				if (len >= 60 && al == 3) {
					memcpy(ref, l3, len);
					ref[0] |= 0x0f;
					ref[1] = ref[2] = ref[3] = ref[7] = 0xff;
					ref[46] = ref[47] = ref[52] = 0xff;
					want = dpr_icrc_update(dpr_icrc_update(0, ones, 8),
							       ref, len);
					got = dpr_icrc_update(dpr_icrc_hdrs(l3, true, 12),
							      l3 + 60, len - 60);
					CHECK_EQ(got, want, "way %u, IPv6 hdrs, length %u",
						 way, len);
				}
			}
		}
	}
	dpr_icrc_set_way(DPR_ICRC_BEST);
	/* long packets, every length a path MTU of 4096 gives and some past
	 * it: ISA-L over the bytes, the masks added by the fold (a whole
	 * number of words), the head masked first (any other length) */
	{
		static uint8_t big[4600], bref[4600], orig[4600];

		for (i = 0; i < sizeof(big); i++) {
			seed = seed * 1103515245u + 12345u;
			big[i] = (uint8_t)(seed >> 16);
		}
		big[1] = 0x45;
		memcpy(orig, big, sizeof(big));
		memcpy(bref, big + 1, sizeof(big) - 1);
		bref[1] = bref[8] = bref[10] = bref[11] = 0xff;
		bref[26] = bref[27] = bref[32] = 0xff;
		for (way = DPR_ICRC_ISAL; way <= DPR_ICRC_FOLD_AVX512; way++) {
			if (dpr_icrc_set_way(way) != 0)
				continue;
			for (len = 257; len <= 4590; len += (len < 4200 ? 3 : 1)) {
				want = dpr_icrc_update(dpr_icrc_update(0, ones, 8), bref, len);
				CHECK_EQ(dpr_icrc_ipv4(big + 1, len), want,
					 "way %u, long, length %u", way, len);
				CHECK(memcmp(big, orig, sizeof(big)) == 0,
				      "way %u, long, length %u: the buffer as it was",
				      way, len);
			}
		}
		dpr_icrc_set_way(DPR_ICRC_BEST);
	}
	return TEST_SUCCESS;
}

/* dpr_icrc_ipv4_copy() against a copy, then dpr_icrc_ipv4(), every way
 * this CPU has: payload offsets of every header length the fast path
 * writes (BTH, RETH, immediate) at every alignment mod 4 of the frame and
 * of the source, payloads from none to 4096 bytes, pads of 0 to 3; the
 * frame's bytes are those of the copy, and the bytes outside [poff, len)
 * (the Ethernet header before, the ICRC and the room after) untouched. */
static int
test_icrc_copy(void)
{
	static uint8_t fr[64 + 4200 + 128], ref[sizeof(fr)], keep[sizeof(fr)];
	static uint8_t src[4200 + 64];
	static const uint32_t hdrs[] = { 40, 44, 56, 60 };
	uint32_t seed = 777, way, i, n, h, al, sal, len, pad, want, got, fused = 0;

	for (i = 0; i < sizeof(src); i++) {
		seed = seed * 1103515245u + 12345u;
		src[i] = (uint8_t)(seed >> 16);
	}
	for (way = DPR_ICRC_ISAL; way <= DPR_ICRC_FOLD_AVX512; way++) {
		if (dpr_icrc_set_way(way) != 0)
			continue;
		for (n = 0; n <= 4096; n += (n < 400 ? 1 : n < 1100 ? 7 : 61)) {
			h = hdrs[n % RTE_DIM(hdrs)];
			al = 14 + (n / 4) % 4;          /* l3 after an Ethernet header */
			sal = (n / 16) % 64;
			pad = -n & 3;
			len = h + n + pad;
			for (i = 0; i < sizeof(fr); i++) {
				seed = seed * 1103515245u + 12345u;
				fr[i] = (uint8_t)(seed >> 16);
			}
			fr[al] = 0x45;
			memcpy(keep, fr, sizeof(fr));
			memcpy(ref, fr, sizeof(fr));
			memcpy(ref + al + h, src + sal, n);
			memset(ref + al + h + n, 0, pad);
			want = dpr_icrc_ipv4(ref + al, len);
			got = dpr_icrc_ipv4_copy(fr + al, len, h, src + sal, n);
			CHECK_EQ(got, want, "way %u, payload %u after %u", way, n, h);
			CHECK(memcmp(fr, ref, sizeof(fr)) == 0,
			      "way %u, payload %u after %u: the frame as copied", way, n, h);
			CHECK(memcmp(fr, keep, al + h) == 0 &&
			      memcmp(fr + al + len, keep + al + len,
				     sizeof(fr) - al - len) == 0,
			      "way %u, payload %u: nothing outside it written", way, n);
			fused += len >= dpr_icrc_copy_min;
		}
	}
	dpr_icrc_set_way(DPR_ICRC_BEST);
	printf("    (%u packets copied in the ICRC's pass)\n", fused);
	return TEST_SUCCESS;
}

static const struct dpr_test_case wire_cases[] = {
	DPR_TEST_CASE(test_wire_arp),
	DPR_TEST_CASE(test_build_tmpl),
	DPR_TEST_CASE(test_ipv4_sum20),
	DPR_TEST_CASE(test_psn_arith),
	DPR_TEST_CASE(test_opcode_table),
	DPR_TEST_CASE(test_gid_and_sport),
	DPR_TEST_CASE(test_round_trip_every_opcode),
	DPR_TEST_CASE(test_parse_refusals),
	DPR_TEST_CASE(test_unexpected_payload),
	DPR_TEST_CASE(test_icrc_masks_variant_fields),
	DPR_TEST_CASE(test_icrc_copy),
	DPR_TEST_CASE(test_icrc_every_split),
	DPR_TEST_CASE(test_icrc_every_length),
	DPR_TEST_CASE(test_build_extbuf),
	DPR_TEST_CASE(test_build_refuses),
	DPR_TEST_CASE(test_rxe_captures_rebuild),
	DPR_TEST_CASE(test_parse_fast_vs_full),
	DPR_TEST_CASE(test_rxe_sport_of_qpn),
	DPR_TEST_CASES_END,
};

static struct dpr_test_suite wire_suite = {
	.name = "wire",
	.needs_eal = true,
	.setup = setup,
	.teardown = teardown,
	.cases = wire_cases,
};
DPR_TEST_SUITE(wire_suite);
