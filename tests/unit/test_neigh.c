/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The neighbour table (lib/engine/dpr_neigh.c) on its own, and between
 * two RC transports that start cold: each side's frames go through the
 * other's classifier (ARP answered and learnt there, RoCEv2 to its
 * transport), as in dprdmad, on a virtual clock. A QP made before its
 * peer's MAC is known sends its first frame to the right MAC; no frame
 * ever goes to 00:00:00:00:00:00.
 */

#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <rte_arp.h>
#include <rte_mbuf.h>

#include "dpr_test.h"
#include "engine_private.h"
#include "rc_harness.h"

#define MS 1000000ull
#define SEC 1000000000ull

static struct rte_mempool *pool;
static uint64_t clk;

/* One box: its port, its neighbour table, what the table sent. */
struct box {
	struct dpr_port port;
	struct dpr_port_counters ctr;
	struct dpr_neigh_table nt;
	struct dpr_transport *tp;       /* told of new MACs (NULL: none) */
	struct rte_mbuf *out[2048];     /* frames the table emitted */
	unsigned int n_out;
	unsigned int changed;           /* ops.changed calls */
	struct rte_ether_addr last_mac; /* ... the last one's MAC */
};

static struct box box[2];
static struct rc_harness H;

static void
box_emit(void *arg, struct rte_mbuf *m)
{
	struct box *b = arg;

	if (b->n_out == RTE_DIM(b->out)) {
		rte_pktmbuf_free(m);
		return;
	}
	b->out[b->n_out++] = m;
}

static void
box_changed(void *arg, const union dpr_gid *ip, const struct rte_ether_addr *mac)
{
	struct box *b = arg;

	b->changed++;
	b->last_mac = *mac;
	if (b->tp != NULL)
		dpr_transport_path_update(b->tp, ip, mac);
}

static const struct dpr_neigh_ops box_ops = {
	.emit = box_emit,
	.changed = box_changed,
};

static int
box_resolve(void *arg, const union dpr_gid *gid, struct rte_ether_addr *mac)
{
	return dpr_neigh_resolve(&((struct box *)arg)->nt, gid, mac);
}

static void
box_hold(void *arg, const union dpr_gid *gid, struct rte_mbuf *m)
{
	dpr_neigh_hold(&((struct box *)arg)->nt, gid, m);
}

static void
box_init(int i, const struct rte_ether_addr *mac, uint32_t ip)
{
	struct box *b = &box[i];

	memset(b, 0, sizeof(*b));
	b->port.mac = *mac;
	b->port.ip = ip;
	b->port.prefix_len = 24;
	dpr_ipv6_link_local(mac, &b->port.ip6_ll);
	b->port.mtu = 1500;
	dpr_neigh_init(&b->nt, &b->port, pool, &b->ctr, &clk, &box_ops, b);
}

static void
box_fini(int i)
{
	unsigned int k;

	for (k = 0; k < box[i].n_out; k++)
		rte_pktmbuf_free(box[i].out[k]);
	box[i].n_out = 0;
	dpr_neigh_fini(&box[i].nt);
}

static int
setup(void)
{
	pool = rte_pktmbuf_pool_create("neigh", 8191, 256, 0,
				       RTE_PKTMBUF_HEADROOM + 2048, SOCKET_ID_ANY);
	return pool == NULL ? -1 : 0;
}

static void
teardown(void)
{
	rte_mempool_free(pool);
}

static const struct rte_ether_addr mac_a = {{ 0x02, 0, 0, 0, 0, 0x0a }};
static const struct rte_ether_addr mac_b = {{ 0x02, 0, 0, 0, 0, 0x0b }};
#define IP_A 0x0a580001u        /* 10.88.0.1 */
#define IP_B 0x0a580002u
/* the harness's sides' IPv4 addresses, host order */
#define IP_A_OF(h) rte_be_to_cpu_32((h).side[0].gid.w[3])
#define IP_B_OF(h) rte_be_to_cpu_32((h).side[1].gid.w[3])

static const union dpr_gid *
v4(uint32_t ip)
{
	static union dpr_gid g;

	dpr_gid_from_ipv4(&g, rte_cpu_to_be_32(ip));
	return &g;
}

static bool
is_arp(const struct rte_mbuf *m, uint16_t op, uint32_t tip)
{
	const struct rte_ether_hdr *e = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_arp_hdr *a = (const struct rte_arp_hdr *)(e + 1);

	return e->ether_type == RTE_BE16(RTE_ETHER_TYPE_ARP) &&
		a->arp_opcode == rte_cpu_to_be_16(op) &&
		a->arp_data.arp_tip == rte_cpu_to_be_32(tip);
}

/* A frame as the transport builds one before the MAC is known. */
static struct rte_mbuf *
zero_mac_frame(uint8_t tag)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, 64);

	memset(p, 0, 64);
	p[12] = 0x08;
	p[63] = tag;
	return m;
}

static const struct rte_ether_addr *
dst_of(const struct rte_mbuf *m)
{
	return &rte_pktmbuf_mtod(m, const struct rte_ether_hdr *)->dst_addr;
}

/* -------------------------------------------------- the table alone */

static int
test_neigh_asks_with_backoff(void)
{
	/* retries 100, 200, 400, 800 ms, then every second */
	static const uint64_t gaps_ms[] = { 100, 200, 400, 800, 1000, 1000 };
	struct rte_ether_addr mac;
	uint64_t last;
	unsigned int k;

	clk = 1 * SEC;
	box_init(0, &mac_a, rte_cpu_to_be_32(IP_A));
	CHECK_EQ(dpr_neigh_resolve(&box[0].nt, v4(IP_B), &mac), -EAGAIN, "unknown");
	CHECK(box[0].n_out == 1 && is_arp(box[0].out[0], RTE_ARP_OP_REQUEST, IP_B),
	      "asked at once");
	CHECK(rte_is_broadcast_ether_addr(dst_of(box[0].out[0])), "broadcast");
	CHECK_EQ(dpr_neigh_resolve(&box[0].nt, v4(IP_B), &mac), -EAGAIN, "again");
	CHECK_EQ(box[0].n_out, 1, "not asked twice at once");
	last = clk;
	for (k = 0; k < RTE_DIM(gaps_ms); k++) {
		unsigned int before = box[0].n_out;

		/* wanted all along: the ask of a transport renews the want */
		while (box[0].n_out == before && clk < last + 2 * SEC) {
			clk += MS;
			if (clk % (500 * MS) == 0)
				dpr_neigh_resolve(&box[0].nt, v4(IP_B), &mac);
			dpr_neigh_poll(&box[0].nt);
		}
		CHECK_EQ((clk - last) / MS, gaps_ms[k], "request %u after the one before", k + 2);
		last = clk;
	}
	CHECK_EQ(box[0].ctr.arp_request_tx, RTE_DIM(gaps_ms) + 1, "counted");
	/* nobody wants it any more: the requests stop */
	{
		unsigned int before = box[0].n_out;

		clk += 10 * SEC;
		for (k = 0; k < 100; k++) {
			clk += 100 * MS;
			dpr_neigh_poll(&box[0].nt);
		}
		CHECK(box[0].n_out <= before + 1, "stops when nothing waits");
		CHECK(TAILQ_EMPTY(&box[0].nt.waiting), "nothing waits");
		before = box[0].n_out;
		CHECK_EQ(dpr_neigh_resolve(&box[0].nt, v4(IP_B), &mac), -EAGAIN, "wanted again");
		CHECK_EQ(box[0].n_out, before + 1, "asked again at once");
	}
	box_fini(0);
	return TEST_SUCCESS;
}

static int
test_neigh_holds_frames(void)
{
	struct rte_ether_addr mac;
	unsigned int k;

	clk = 1 * SEC;
	box_init(0, &mac_a, rte_cpu_to_be_32(IP_A));
	for (k = 0; k < 3; k++)
		dpr_neigh_hold(&box[0].nt, v4(IP_B), zero_mac_frame((uint8_t)k));
	CHECK(box[0].n_out == 1 && is_arp(box[0].out[0], RTE_ARP_OP_REQUEST, IP_B),
	      "the first held frame asks");
	CHECK_EQ(box[0].ctr.neigh_held, 3, "held");
	CHECK(dpr_neigh_learn(&box[0].nt, v4(IP_B), &mac_b, true), "learnt");
	CHECK_EQ(box[0].n_out, 4, "released");
	for (k = 0; k < 3; k++) {
		const struct rte_mbuf *m = box[0].out[1 + k];

		CHECK(rte_is_same_ether_addr(dst_of(m), &mac_b) &&
		      rte_pktmbuf_mtod(m, uint8_t *)[63] == k,
		      "frame %u with the MAC, in order", k);
	}
	CHECK(box[0].changed == 1 && rte_is_same_ether_addr(&box[0].last_mac, &mac_b),
	      "the owner told once");
	CHECK_EQ(dpr_neigh_resolve(&box[0].nt, v4(IP_B), &mac), 0, "known");
	CHECK(rte_is_same_ether_addr(&mac, &mac_b), "its MAC");
	/* a frame held for a known neighbour goes at once */
	dpr_neigh_hold(&box[0].nt, v4(IP_B), zero_mac_frame(9));
	CHECK(box[0].n_out == 5 && rte_is_same_ether_addr(dst_of(box[0].out[4]), &mac_b),
	      "straight out");

	/* bounded: DPR_NEIGH_HOLD_PER for one neighbour, the newest refused */
	for (k = 0; k < DPR_NEIGH_HOLD_PER + 10; k++)
		dpr_neigh_hold(&box[0].nt, v4(IP_B + 1), zero_mac_frame((uint8_t)k));
	CHECK_EQ(box[0].nt.n_hold, DPR_NEIGH_HOLD_PER, "held up to the limit");
	CHECK_EQ(box[0].ctr.drop[DPR_DROP_TX_UNRESOLVED], 10, "the rest dropped, counted");
	/* nobody answers: dropped after DPR_NEIGH_HOLD_NS, counted */
	while (box[0].nt.n_hold != 0 && clk < 10 * SEC) {
		clk += 10 * MS;
		dpr_neigh_poll(&box[0].nt);
	}
	CHECK_EQ(box[0].nt.n_hold, 0, "given up");
	CHECK(clk >= 1 * SEC + DPR_NEIGH_HOLD_NS && clk < 1 * SEC + DPR_NEIGH_HOLD_NS + 20 * MS,
	      "after %llu ms", (unsigned long long)((clk - 1 * SEC) / MS));
	CHECK_EQ(box[0].ctr.drop[DPR_DROP_TX_UNRESOLVED], DPR_NEIGH_HOLD_PER + 10, "counted");
	box_fini(0);
	return TEST_SUCCESS;
}

/* An ARP frame from @p sha/@p sip to @p tip (gratuitous: tip == sip). */
static struct rte_mbuf *
arp(uint16_t op, const struct rte_ether_addr *sha, uint32_t sip, uint32_t tip)
{
	struct rte_mbuf *m = dpr_wire_build_arp(pool, sha, rte_cpu_to_be_32(sip),
						NULL, rte_cpu_to_be_32(tip));
	struct rte_arp_hdr *a = rte_pktmbuf_mtod_offset(m, struct rte_arp_hdr *, 14);

	a->arp_opcode = rte_cpu_to_be_16(op);
	return m;
}

static int
test_neigh_mac_changes(void)
{
	static const struct rte_ether_addr mac_b2 = {{ 0x02, 0, 0, 0, 0, 0xb2 }};
	static const struct rte_ether_addr mac_b3 = {{ 0x02, 0, 0, 0, 0, 0xb3 }};
	static const struct rte_ether_addr zero;
	struct rte_ether_addr mac;
	struct rte_mbuf *m;

	clk = 5 * SEC;
	box_init(0, &mac_a, rte_cpu_to_be_32(IP_A));
	CHECK(dpr_neigh_learn(&box[0].nt, v4(IP_B), &mac_b, true), "known");
	/* gratuitous ARP (a request for its own address) with a new MAC */
	clk += 2 * SEC;
	m = arp(RTE_ARP_OP_REQUEST, &mac_b2, IP_B, IP_B);
	CHECK_EQ(dpr_rx_classify(&box[0].port, m, &box[0].ctr, &box[0].nt),
		 DPR_RX_CONSUMED, "taken (the other workers learn it too)");
	rte_pktmbuf_free(m);
	CHECK(dpr_neigh_resolve(&box[0].nt, v4(IP_B), &mac) == 0 &&
	      rte_is_same_ether_addr(&mac, &mac_b2), "the new MAC");
	CHECK(box[0].changed == 2 && box[0].ctr.neigh_changed == 1, "told, counted");
	/* within the locktime another one is ignored */
	clk += 500 * MS;
	m = arp(RTE_ARP_OP_REPLY, &mac_b3, IP_B, IP_B);
	dpr_rx_classify(&box[0].port, m, &box[0].ctr, &box[0].nt);
	rte_pktmbuf_free(m);
	CHECK(dpr_neigh_resolve(&box[0].nt, v4(IP_B), &mac) == 0 &&
	      rte_is_same_ether_addr(&mac, &mac_b2), "locked for a second");
	CHECK_EQ(box[0].ctr.neigh_change_locked, 1, "counted");
	clk += 600 * MS;
	m = arp(RTE_ARP_OP_REPLY, &mac_b3, IP_B, IP_B);
	dpr_rx_classify(&box[0].port, m, &box[0].ctr, &box[0].nt);
	rte_pktmbuf_free(m);
	CHECK(dpr_neigh_resolve(&box[0].nt, v4(IP_B), &mac) == 0 &&
	      rte_is_same_ether_addr(&mac, &mac_b3), "then taken");
	/* a gratuitous ARP of somebody unknown makes no entry */
	m = arp(RTE_ARP_OP_REQUEST, &mac_b, IP_B + 5, IP_B + 5);
	CHECK_EQ(dpr_rx_classify(&box[0].port, m, &box[0].ctr, &box[0].nt),
		 DPR_RX_DROP, "not for us");
	rte_pktmbuf_free(m);
	CHECK(dpr_neigh_find(&box[0].nt, v4(IP_B + 5)) == NULL, "nothing made");
	/* nor does a claim of our own address, or a zero MAC */
	CHECK(!dpr_neigh_learn(&box[0].nt, v4(IP_B + 6), &zero, true), "zero MAC");
	m = arp(RTE_ARP_OP_REQUEST, &mac_b, IP_A, IP_A);
	dpr_rx_classify(&box[0].port, m, &box[0].ctr, &box[0].nt);
	rte_pktmbuf_free(m);
	CHECK(dpr_neigh_find(&box[0].nt, v4(IP_A)) == NULL, "our own address");
	box_fini(0);
	return TEST_SUCCESS;
}

static int
test_neigh_table_full(void)
{
	struct rte_ether_addr mac;
	uint32_t k;

	clk = 1 * SEC;
	box_init(0, &mac_a, rte_cpu_to_be_32(IP_A));
	/* the first neighbour has a frame held: it is never the victim */
	dpr_neigh_hold(&box[0].nt, v4(0x0b000000), zero_mac_frame(1));
	for (k = 1; k < DPR_NEIGH_MAX + 100; k++)
		dpr_neigh_learn(&box[0].nt, v4(0x0b000000 + k), &mac_b, true);
	CHECK_EQ(box[0].nt.n, DPR_NEIGH_MAX, "full");
	CHECK_EQ(box[0].ctr.neigh_evicted, 100, "room made, counted");
	CHECK(dpr_neigh_find(&box[0].nt, v4(0x0b000000)) != NULL, "the waiting one stays");
	CHECK(dpr_neigh_resolve(&box[0].nt, v4(0x0b000000 + DPR_NEIGH_MAX + 99), &mac) == 0,
	      "the newest is there");
	CHECK(dpr_neigh_learn(&box[0].nt, v4(0x0b000000), &mac_b, true) &&
	      box[0].nt.n_hold == 0, "its frame released");
	box_fini(0);
	return TEST_SUCCESS;
}

/* ---------------------------------- two cold boxes, through transports */

/* every frame that went on the wire, a side's */
static unsigned int wire_frames[2], wire_zero_mac[2];
/* a side's ARP frames are lost on the way */
static bool lose_arp_from[2];

/* A frame from box @p from reaches box !from: its classifier, then, if
 * RoCEv2, its transport; what it answers in place goes back on the wire. */
static void
deliver(int from, struct rte_mbuf *m, struct rte_mbuf **back, unsigned int *n_back)
{
	struct box *to = &box[!from];

	wire_frames[from]++;
	if (rte_is_zero_ether_addr(dst_of(m)))
		wire_zero_mac[from]++;
	if (lose_arp_from[from] && rte_pktmbuf_mtod(m, const struct rte_ether_hdr *)
	    ->ether_type == RTE_BE16(RTE_ETHER_TYPE_ARP)) {
		rte_pktmbuf_free(m);
		return;
	}
	switch (dpr_rx_classify(&to->port, m, &to->ctr, &to->nt)) {
	case DPR_RX_REPLY:
		back[(*n_back)++] = m;
		break;
	case DPR_RX_ROCE:
		dpr_transport_rx(H.side[!from].tp, &m, 1, clk);
		break;
	default:
		rte_pktmbuf_free(m);
	}
}

/* Both boxes' loops, frames crossing at once, until quiet or @p ms of
 * virtual time; @p lose_arp[i]: box i's neighbour frames (ARP) are lost. */
static void
pump(uint64_t ms, const bool lose_arp[2])
{
	const uint64_t end = clk + ms * MS;

	lose_arp_from[0] = lose_arp != NULL && lose_arp[0];
	lose_arp_from[1] = lose_arp != NULL && lose_arp[1];
	while (clk < end) {
		bool moved = false;
		int i;

		for (i = 0; i < 2; i++) {
			struct rte_mbuf *pkts[256], *back[512];
			unsigned int n, k, n_back = 0;

			dpr_neigh_poll(&box[i].nt);
			dpr_transport_poll(H.side[i].tp, clk);
			n = dpr_transport_tx(H.side[i].tp, pkts, RTE_DIM(pkts));
			for (k = 0; k < box[i].n_out; k++)
				deliver(i, box[i].out[k], back, &n_back);
			moved |= box[i].n_out != 0 || n != 0;
			box[i].n_out = 0;
			for (k = 0; k < n; k++)
				deliver(i, pkts[k], back, &n_back);
			/* what the other box answered in place (ARP replies,
			 * which nobody answers) */
			for (k = 0; k < n_back; k++) {
				struct rte_mbuf *none[1];
				unsigned int n_none = 0;

				deliver(!i, back[k], none, &n_none);
			}
		}
		if (!moved)
			clk += 100 * 1000;   /* 100 us */
	}
}

static int
cold_pair(struct dpr_tqp **qa, struct dpr_tqp **qb)
{
	struct rc_faults f = {
		.resolve = box_resolve, .hold = box_hold,
		.resolve_arg = { &box[0], &box[1] },
	};
	struct rc_conn c;

	clk = 1 * SEC;
	memset(wire_frames, 0, sizeof(wire_frames));
	memset(wire_zero_mac, 0, sizeof(wire_zero_mac));
	if (rc_harness_init(&H, pool, 1, &f) != 0)
		return -1;
	box_init(0, &H.side[0].mac, H.side[0].gid.w[3]);
	box_init(1, &H.side[1].mac, H.side[1].gid.w[3]);
	box[0].tp = H.side[0].tp;
	box[1].tp = H.side[1].tp;
	rc_conn_defaults(&c);
	c.timeout = 10;         /* 4.2 ms */
	c.retry_cnt = 3;
	return rc_connect(&H, &c, qa, qb);
}

static void
cold_fini(struct dpr_tqp *qa, struct dpr_tqp *qb)
{
	dpr_qp_destroy(qa);
	dpr_qp_destroy(qb);
	box_fini(0);
	box_fini(1);
	rc_harness_fini(&H);
}

static int
write_to(struct dpr_tqp *qp, struct dpr_mr *src, struct dpr_mr *dst,
	 uint32_t len, uint64_t wr_id)
{
	struct dpr_send_wr wr = {
		.wr_id = wr_id, .num_sge = 1, .opcode = DPR_WR_RDMA_WRITE,
		.send_flags = DPR_SEND_SIGNALED,
		.remote_addr = dst->iova, .rkey = dst->rkey,
		.sge[0] = { src->iova, len, src->lkey },
	};

	return dpr_post_send(qp, &wr, 1, NULL);
}

static void
mr_free(struct dpr_mr *mr)
{
	void *a = mr->addr;

	dpr_mr_dereg(mr);
	free(a);
}

/* The first contact: A's QP reaches RTR and is given work before
 * A knows B's MAC. Nothing leaves until it does; then every frame of
 * both sides carries the right MAC, the fast path's too. */
static int
test_cold_qp_first_frame(void)
{
	struct dpr_tqp *qa, *qb;
	struct dpr_mr *src, *dst;
	struct dpr_qp_info info;
	struct dpr_cqe c[4];
	struct rte_mbuf *pkts[16];

	CHECK_EQ(cold_pair(&qa, &qb), 0, "two QPs, RTS, on boxes that know nobody");
	CHECK(box[0].n_out == 1 && is_arp(box[0].out[0], RTE_ARP_OP_REQUEST, IP_B_OF(H)),
	      "A asked for B at RTR");
	src = rc_mr(&H, 0, 4096, DPR_ACCESS_ALL);
	dst = rc_mr(&H, 1, 4096, DPR_ACCESS_ALL);
	memset(src->addr, 0x5a, 4096);
	CHECK_EQ(write_to(qa, src, dst, 64, 1), 0, "posted");
	dpr_transport_poll(H.side[0].tp, clk);
	CHECK_EQ(dpr_transport_tx(H.side[0].tp, pkts, RTE_DIM(pkts)), 0,
		 "nothing leaves before B's MAC is known");
	dpr_qp_info(qa, &info);
	CHECK(!info.mac_resolved && !info.on_work && info.timer_armed,
	      "the QP waits, off the work list, its ACK timer running");
	/* the boxes' ARP exchange, then the WRITE and its ACK */
	pump(50, NULL);
	CHECK_EQ(dpr_cq_poll(H.side[0].scq, c, 4), 1, "the WRITE completed");
	CHECK_EQ(c[0].status, DPR_WC_SUCCESS, "successfully");
	CHECK(memcmp(dst->addr, src->addr, 64) == 0, "the data landed");
	dpr_qp_info(qa, &info);
	CHECK(info.mac_resolved && info.stats.retransmits == 0 &&
	      info.stats.local_ack_timeouts == 0, "no retransmission, no timeout");
	/* the fast path's frames too: many WRITEs, every frame to the MAC */
	for (uint64_t k = 0; k < 100; k++)
		write_to(qa, src, dst, 64 + (uint32_t)k, 2 + k);
	pump(50, NULL);
	CHECK_EQ(dpr_cq_poll(H.side[0].scq, c, 4), 4, "completions");
	CHECK(dpr_transport_stats(H.side[0].tp)->tx_fast > 50, "the fast path sent (%llu)",
	      (unsigned long long)dpr_transport_stats(H.side[0].tp)->tx_fast);
	CHECK(wire_zero_mac[0] == 0 && wire_zero_mac[1] == 0,
	      "no frame to 00:00:00:00:00:00 (of %u and %u)", wire_frames[0],
	      wire_frames[1]);
	CHECK(box[0].ctr.drop[DPR_DROP_L2_NOT_FOR_US] == 0 &&
	      box[1].ctr.drop[DPR_DROP_L2_NOT_FOR_US] == 0, "every frame to its box");
	while (dpr_cq_poll(H.side[0].scq, c, 4) > 0)
		;
	mr_free(src);
	mr_free(dst);
	cold_fini(qa, qb);
	return TEST_SUCCESS;
}

/* Box @p who moves to @p mac (2 s on: past the locktime) and says so
 * with a gratuitous ARP to the other; then 20 WRITEs from @p qa must
 * complete, every frame to the box where it is now. */
static int
move_and_stream(int who, const struct rte_ether_addr *mac, struct dpr_tqp *qa,
		struct dpr_mr *src, struct dpr_mr *dst, uint64_t wr_id)
{
	struct dpr_cqe c[4];
	struct rte_mbuf *m;
	uint64_t k;

	clk += 2 * SEC;
	box[who].port.mac = *mac;
	m = arp(RTE_ARP_OP_REQUEST, mac, rte_be_to_cpu_32(H.side[who].gid.w[3]),
		rte_be_to_cpu_32(H.side[who].gid.w[3]));
	CHECK_EQ(dpr_rx_classify(&box[!who].port, m, &box[!who].ctr, &box[!who].nt),
		 DPR_RX_CONSUMED, "the other box takes the gratuitous ARP");
	rte_pktmbuf_free(m);
	for (k = 0; k < 20; k++)
		write_to(qa, src, dst, 64, wr_id + k);
	pump(50, NULL);
	CHECK_EQ(dpr_cq_poll(H.side[0].scq, c, 4), 4, "the stream goes on");
	while (dpr_cq_poll(H.side[0].scq, c, 4) > 0)
		;
	CHECK(box[who].ctr.drop[DPR_DROP_L2_NOT_FOR_US] == 0,
	      "box %d (at its new MAC) got every frame", who);
	return 0;
}

/* B never heard A's ARP request (lost), so B's answers to A's requests
 * wait in B's table; B asks again and they leave with A's MAC. Then A
 * moves to another MAC (gratuitous ARP): B's next frames follow. */
static int
test_cold_responder_holds_answers(void)
{
	static const struct rte_ether_addr mac_a2 = {{ 0x02, 0, 0, 0, 0, 0xa2 }};
	static const struct rte_ether_addr mac_b2 = {{ 0x02, 0, 0, 0, 0, 0xb2 }};
	const bool lose_a[2] = { true, false }, lose_b[2] = { false, true };
	struct dpr_tqp *qa, *qb;
	struct dpr_mr *src, *dst;
	struct dpr_cqe c[4];

	CHECK_EQ(cold_pair(&qa, &qb), 0, "two cold QPs");
	/* A learns B (B's request at RTR reaches A: A answers); A's own
	 * request and its answer to B's are lost on the way to B */
	pump(1, lose_a);
	CHECK(dpr_neigh_find(&box[0].nt, &H.side[1].gid) != NULL &&
	      dpr_neigh_find(&box[0].nt, &H.side[1].gid)->state == DPR_NEIGH_VALID,
	      "A knows B");
	CHECK(dpr_neigh_find(&box[1].nt, &H.side[0].gid)->state == DPR_NEIGH_INCOMPLETE,
	      "B does not know A");
	src = rc_mr(&H, 0, 4096, DPR_ACCESS_ALL);
	dst = rc_mr(&H, 1, 4096, DPR_ACCESS_ALL);
	CHECK_EQ(write_to(qa, src, dst, 64, 1), 0, "posted");
	/* B's ACK is held, B's requests to A lost until 150 ms */
	pump(3, lose_b);
	CHECK(box[1].ctr.neigh_held >= 1 && box[1].nt.n_hold >= 1,
	      "B's answer held (%llu)", (unsigned long long)box[1].ctr.neigh_held);
	CHECK_EQ(dpr_cq_poll(H.side[0].scq, c, 4), 0, "not complete yet");
	pump(150, NULL);
	CHECK_EQ(dpr_cq_poll(H.side[0].scq, c, 4), 1, "completed once B asked again");
	CHECK(box[1].ctr.arp_request_tx >= 2 && box[1].ctr.neigh_released >= 1,
	      "B asked again (%llu requests), the answer left",
	      (unsigned long long)box[1].ctr.arp_request_tx);
	CHECK(wire_zero_mac[0] == 0 && wire_zero_mac[1] == 0, "no frame to a zero MAC");

	/* A moves (its answers follow), then B (A's requests, the fast
	 * path's, follow) */
	CHECK_EQ(move_and_stream(0, &mac_a2, qa, src, dst, 10), 0, "A moved");
	CHECK_EQ(dpr_transport_stats(H.side[1].tp)->path_updates, 2,
		 "B's QP took A's MAC twice (first, then the new one)");
	CHECK_EQ(move_and_stream(1, &mac_b2, qa, src, dst, 40), 0, "B moved");
	mr_free(src);
	mr_free(dst);
	cold_fini(qa, qb);
	return TEST_SUCCESS;
}

/* A peer that never answers ARP: the QP's work ends as a lost path's
 * does, RETRY_EXC_ERR after retry_cnt + 1 ACK timeouts. */
static int
test_cold_unanswered_fails_in_bound(void)
{
	const bool lose_both[2] = { true, true };
	struct dpr_tqp *qa, *qb;
	struct dpr_mr *src, *dst;
	struct dpr_qp_info info;
	struct dpr_cqe c[4];
	uint64_t t0;

	CHECK_EQ(cold_pair(&qa, &qb), 0, "two cold QPs");
	src = rc_mr(&H, 0, 4096, DPR_ACCESS_ALL);
	dst = rc_mr(&H, 1, 4096, DPR_ACCESS_ALL);
	CHECK_EQ(write_to(qa, src, dst, 64, 1), 0, "posted");
	t0 = clk;
	while (dpr_cq_count(H.side[0].scq) == 0 && clk < t0 + SEC)
		pump(1, lose_both);
	CHECK_EQ(dpr_cq_poll(H.side[0].scq, c, 4), 1, "completed");
	CHECK_EQ(c[0].status, DPR_WC_RETRY_EXC_ERR, "in RETRY_EXC_ERR");
	/* 4 timeouts of 4.2 ms (retry_cnt 3) */
	CHECK((clk - t0) >= 4 * 4 * MS && (clk - t0) < 30 * MS,
	      "after %llu ms", (unsigned long long)((clk - t0) / MS));
	dpr_qp_info(qa, &info);
	CHECK(info.state == DPR_QPS_ERR && info.stats.local_ack_timeouts == 4,
	      "the QP in ERR after 4 timeouts (%llu)",
	      (unsigned long long)info.stats.local_ack_timeouts);
	CHECK(info.stats.req_packets == 0 && box[0].ctr.arp_request_tx >= 1,
	      "no request left, ARP asked");
	mr_free(src);
	mr_free(dst);
	cold_fini(qa, qb);
	return TEST_SUCCESS;
}

static const struct dpr_test_case neigh_cases[] = {
	DPR_TEST_CASE(test_neigh_asks_with_backoff),
	DPR_TEST_CASE(test_neigh_holds_frames),
	DPR_TEST_CASE(test_neigh_mac_changes),
	DPR_TEST_CASE(test_neigh_table_full),
	DPR_TEST_CASE(test_cold_qp_first_frame),
	DPR_TEST_CASE(test_cold_responder_holds_answers),
	DPR_TEST_CASE(test_cold_unanswered_fails_in_bound),
	DPR_TEST_CASES_END,
};

static struct dpr_test_suite neigh_suite = {
	.name = "engine_neigh",
	.needs_eal = true,
	.setup = setup,
	.teardown = teardown,
	.cases = neigh_cases,
};
DPR_TEST_SUITE(neigh_suite);
