/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * lib/verbs and lib/transport through the two-endpoint harness: every
 * operation, every NAK kind, RNR, timeouts, retry exhaustion, PSN wrap,
 * the state machine and its masks, flushes.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rte_mbuf.h>

#include "dpr_test.h"
#include "rc_harness.h"
#include "transport_private.h"

/* our enumerations are rdma-core's, value for value */
static_assert((int)DPR_WC_RETRY_EXC_ERR == (int)IBV_WC_RETRY_EXC_ERR, "wc status");
static_assert((int)DPR_WC_RNR_RETRY_EXC_ERR == (int)IBV_WC_RNR_RETRY_EXC_ERR, "wc status");
static_assert((int)DPR_WC_REM_ACCESS_ERR == (int)IBV_WC_REM_ACCESS_ERR, "wc status");
static_assert((int)DPR_WC_REM_INV_REQ_ERR == (int)IBV_WC_REM_INV_REQ_ERR, "wc status");
static_assert((int)DPR_WC_WR_FLUSH_ERR == (int)IBV_WC_WR_FLUSH_ERR, "wc status");
static_assert((int)DPR_WC_LOC_LEN_ERR == (int)IBV_WC_LOC_LEN_ERR, "wc status");
static_assert((int)DPR_WC_LOC_PROT_ERR == (int)IBV_WC_LOC_PROT_ERR, "wc status");
static_assert((int)DPR_WC_BAD_RESP_ERR == (int)IBV_WC_BAD_RESP_ERR, "wc status");
static_assert((int)DPR_WC_RECV_RDMA_WITH_IMM == (int)IBV_WC_RECV_RDMA_WITH_IMM, "wc op");
static_assert((int)DPR_WC_FETCH_ADD == (int)IBV_WC_FETCH_ADD, "wc op");
static_assert((int)DPR_WR_ATOMIC_FETCH_AND_ADD == (int)IBV_WR_ATOMIC_FETCH_AND_ADD, "wr op");
static_assert((int)DPR_WR_SEND_WITH_IMM == (int)IBV_WR_SEND_WITH_IMM, "wr op");
static_assert((int)DPR_QP_DEST_QPN == (int)IBV_QP_DEST_QPN, "attr mask");
static_assert((int)DPR_QP_MAX_DEST_RD_ATOMIC == (int)IBV_QP_MAX_DEST_RD_ATOMIC, "attr mask");
static_assert((int)DPR_QPS_ERR == (int)IBV_QPS_ERR, "qp state");
static_assert((int)DPR_ACCESS_REMOTE_ATOMIC == (int)IBV_ACCESS_REMOTE_ATOMIC, "access");
static_assert((int)DPR_MTU_4096 == (int)IBV_MTU_4096, "mtu");
static_assert((int)DPR_EVENT_SQ_DRAINED == (int)IBV_EVENT_SQ_DRAINED, "event");

static struct rte_mempool *pool;
static struct rc_harness H;
static struct dpr_tqp *qa, *qb;

#define MS 1000000ull
#define SEC 1000000000ull

static int
setup(void)
{
	/* room for a 4 KiB path MTU in one segment */
	pool = rte_pktmbuf_pool_create("rc", 16383, 256, 0,
				       RTE_PKTMBUF_HEADROOM + 4096 + 256,
				       SOCKET_ID_ANY);
	return pool == NULL ? -1 : 0;
}

static void
teardown(void)
{
	rte_mempool_free(pool);
}

static int
conn(const struct rc_faults *f, const struct rc_conn *c0, uint64_t seed)
{
	struct rc_conn c;

	if (rc_harness_init(&H, pool, seed, f) != 0)
		return -1;
	if (c0 == NULL)
		rc_conn_defaults(&c);
	else
		c = *c0;
	return rc_connect(&H, &c, &qa, &qb);
}

static void
fini(void)
{
	rc_settle(&H, 10 * SEC);
	if (qa != NULL)
		dpr_qp_destroy(qa);
	if (qb != NULL)
		dpr_qp_destroy(qb);
	qa = qb = NULL;
	rc_harness_fini(&H);
}

static bool
is_atomic(enum dpr_wr_opcode op)
{
	return op == DPR_WR_ATOMIC_CMP_AND_SWP || op == DPR_WR_ATOMIC_FETCH_AND_ADD;
}

/* post_send() through dpr_post_send_shared() (the shim's path) */
static bool post_shared;
static unsigned int post_shared_hits;

static int
post_send(struct dpr_tqp *qp, enum dpr_wr_opcode op, struct dpr_mr *lmr,
	  uint64_t loff, uint32_t len, uint64_t raddr, uint32_t rkey,
	  uint64_t wr_id, unsigned int flags)
{
	struct dpr_send_wr wr = {
		.wr_id = wr_id,
		.num_sge = len || is_atomic(op) ? 1 : 0,
		.opcode = op,
		.send_flags = flags,
		.imm_data = rte_cpu_to_be_32(0xabc000u + (uint32_t)wr_id),
		.remote_addr = raddr,
		.rkey = rkey,
		/* fetch_add: add 5 */
		.compare_add = is_atomic(op) ? 5 : 0,
		.sge[0] = { lmr ? lmr->iova + loff : 0, len, lmr ? lmr->lkey : 0 },
	};

	int rc;

	if (!post_shared)
		return dpr_post_send(qp, &wr, 1, NULL);
	/* as the shim posts a client's ring entry: the usual request read
	 * in place, any other given to dpr_post_send() */
	rc = dpr_post_send_shared(qp, &wr);
	if (rc != -EAGAIN) {
		post_shared_hits++;
		return rc;
	}
	return dpr_post_send(qp, &wr, 1, NULL);
}

static int
post_recv(struct dpr_tqp *qp, struct dpr_mr *mr, uint64_t off, uint32_t len,
	  uint64_t wr_id)
{
	struct dpr_recv_wr wr = {
		.wr_id = wr_id, .num_sge = 1, .sge[0] = { mr->iova + off, len, mr->lkey },
	};

	return dpr_post_recv(qp, &wr, 1, NULL);
}

struct cq_wait {
	struct dpr_cq *cq;
	uint32_t n;
};

static bool
cq_has(struct rc_harness *h, void *arg)
{
	struct cq_wait *w = arg;

	(void)h;
	return dpr_cq_count(w->cq) >= w->n;
}

/* Run until @p cq holds @p n completions; take them. */
static int
wait_cq(struct dpr_cq *cq, uint32_t n, struct dpr_cqe *out, uint64_t max_ns)
{
	struct cq_wait w = { cq, n };

	if (!rc_run(&H, cq_has, &w, max_ns))
		return -1;
	return dpr_cq_poll(cq, out, (int)n);
}

static void
fill(struct dpr_mr *mr, uint64_t off, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		mr->addr[off + i] = (uint8_t)(seed + i * 131 + (i >> 8));
}

static void
mr_free(struct dpr_mr *mr)
{
	void *a = mr->addr;

	dpr_mr_dereg(mr);
	free(a);
}

/* ------------------------------------------------------------- verbs */

static int
test_verbs_objects(void)
{
	struct dpr_verbs_limits lim;
	struct dpr_verbs_ctx *ctx;
	struct dpr_pd *pd, *pd2;
	struct dpr_mr *mr[64], *m;
	static uint8_t buf[8192];
	uint32_t old_key;
	int i, j;

	dpr_verbs_default_limits(&lim);
	lim.max_mr = 64;
	lim.max_pd = 2;
	ctx = dpr_verbs_create(&lim);
	CHECK(ctx != NULL, "ctx");
	pd = dpr_pd_alloc(ctx, 1);
	pd2 = dpr_pd_alloc(ctx, 1);
	CHECK(pd && pd2, "PDs");
	CHECK(dpr_pd_alloc(ctx, 1) == NULL && errno == ENOMEM, "PD limit");
	for (i = 0; i < 64; i++) {
		mr[i] = dpr_mr_reg(pd, buf, 0x1000, sizeof(buf),
				   DPR_ACCESS_LOCAL_WRITE | DPR_ACCESS_REMOTE_READ);
		CHECK(mr[i] != NULL, "MR %d", i);
		for (j = 0; j < i; j++)
			CHECK(mr[i]->rkey != mr[j]->rkey, "distinct keys");
		CHECK(dpr_mr_lookup(ctx, mr[i]->rkey) == mr[i], "lookup");
	}
	CHECK(dpr_mr_reg(pd, buf, 0, 64, 0) == NULL && errno == ENOMEM, "MR limit");
	CHECK(dpr_pd_dealloc(pd) == -EBUSY, "PD in use");
	/* bounds, access, PD */
	m = mr[0];
	CHECK(dpr_mr_check(ctx, m->rkey, pd, 0, 0x1000, 8192, DPR_ACCESS_REMOTE_READ) == m,
	      "whole MR");
	CHECK(dpr_mr_check(ctx, m->rkey, pd, 0, 0x1001, 8192, 0) == NULL, "one past");
	CHECK(dpr_mr_check(ctx, m->rkey, pd, 0, 0xfff, 1, 0) == NULL, "one before");
	CHECK(dpr_mr_check(ctx, m->rkey, pd, 0, UINT64_MAX - 2, 8, 0) == NULL, "wrap");
	CHECK(dpr_mr_check(ctx, m->rkey, pd, 0, 0x1000 + 8191, 2, 0) == NULL, "straddle end");
	CHECK(dpr_mr_check(ctx, m->rkey, pd, 0, 0x1000, 8, DPR_ACCESS_REMOTE_WRITE) == NULL,
	      "no remote write");
	CHECK(dpr_mr_check(ctx, m->rkey, pd2, 0, 0x1000, 8, 0) == NULL, "other PD");
	CHECK(dpr_mr_check(ctx, m->rkey ^ 0x100, pd, 0, 0x1000, 8, 0) == NULL, "index bit");
	for (i = 0; i < 32; i++)
		CHECK(dpr_mr_check(ctx, m->rkey ^ (1u << i), pd, 0, 0x1000, 8, 0) == NULL,
		      "random key bit %d", i);
	/* a freed key is refused at once; its slot comes back last */
	old_key = m->rkey;
	dpr_mr_dereg(m);
	CHECK(dpr_mr_lookup(ctx, old_key) == NULL, "freed key refused");
	m = dpr_mr_reg(pd, buf, 0, 64, 0);
	CHECK(m != NULL && m->rkey != old_key, "new key differs");
	CHECK(dpr_mr_reg(pd, buf, 0, 64, DPR_ACCESS_REMOTE_WRITE) == NULL &&
	      errno == EINVAL, "remote write without local write (C10-53)");
	for (i = 1; i < 64; i++)
		dpr_mr_dereg(mr[i]);
	dpr_mr_dereg(m);
	CHECK(dpr_pd_dealloc(pd) == 0 && dpr_pd_dealloc(pd2) == 0, "PDs freed");
	dpr_verbs_destroy(ctx);

	/* keys not predictable from earlier ones: one slot registered 4096
	 * times (max_mr 1: one index bit) never gets its previous key back,
	 * and its 31 random bits repeat only by chance: under 4 of 4096 draws
	 * (the expected number of repeats is 0.004) */
	{
		static uint32_t keys[4096];
		uint32_t ones = 0;
		int same = 0;

		lim.max_mr = 1;
		ctx = dpr_verbs_create(&lim);
		pd = dpr_pd_alloc(ctx, 1);
		for (i = 0; i < 4096; i++) {
			m = dpr_mr_reg(pd, buf, 0, 64, 0);
			keys[i] = m->rkey;
			CHECK(((m->rkey >> 8) & 1) == 1, "one slot");
			CHECK(i == 0 || keys[i] != keys[i - 1], "previous key again");
			ones |= m->rkey;
			dpr_mr_dereg(m);
			CHECK(dpr_mr_lookup(ctx, keys[i]) == NULL, "freed at once");
		}
		for (i = 0; i < 4096; i++)
			for (j = 0; j < i; j++)
				same += keys[i] == keys[j];
		CHECK(same < 4, "%d repeated keys in 4096", same);
		CHECK(ones == UINT32_MAX, "every random bit used");
		dpr_pd_dealloc(pd);
		dpr_verbs_destroy(ctx);
	}
	return TEST_SUCCESS;
}

/* QPNs not predictable from earlier ones (lib/verbs/dpr_verbs.c): 10,000
 * creations, up to 250 QPs alive at a time as a program holds them. The
 * steps between consecutive QPNs repeat only by chance; guessing the next
 * QPN within 2^15 either side of the last one (a search of 2^16) does no
 * better than chance (1 in 256: 39 expected; 78 allowed); every live QPN
 * is found, a freed one and its neighbours are not; QPNs 0 and 1 are
 * never handed out; one slot never gets its previous QPN back. */
static int
test_qpns(void)
{
	static uint32_t q[10000];
	static int obj[250];
	struct dpr_verbs_limits lim;
	struct dpr_verbs_ctx *ctx;
	uint32_t live[250], i, j, near = 0, same_step = 0;

	dpr_verbs_default_limits(&lim);
	ctx = dpr_verbs_create(&lim);
	CHECK(ctx != NULL, "ctx");
	for (i = 0; i < 10000; i++) {
		const uint32_t k = i % 250;

		if (i >= 250) {
			dpr_qpn_free(ctx, live[k]);
			CHECK(dpr_qpn_lookup(ctx, live[k]) == NULL, "freed at once");
		}
		q[i] = 0;
		CHECK_EQ(dpr_qpn_alloc(ctx, &obj[k], &q[i]), 0, "alloc %u", i);
		CHECK(q[i] > 1 && q[i] < (1u << 24) && q[i] != 0xffffff,
		      "QPN %#x is an ordinary one", q[i]);
		CHECK(dpr_qpn_lookup(ctx, q[i]) == &obj[k], "lookup %#x", q[i]);
		CHECK(dpr_qpn_lookup(ctx, q[i] ^ 1u << 20) == NULL &&
		      dpr_qpn_lookup(ctx, q[i] + 1) != &obj[k], "neighbours of %#x",
		      q[i]);
		live[k] = q[i];
		if (i > 0 && ((q[i] - q[i - 1] + (1u << 15)) & 0xffffff) < (1u << 16))
			near++;
	}
	for (i = 2; i < 10000; i++) {
		const uint32_t step = (q[i] - q[i - 1]) & 0xffffff;

		for (j = i < 302 ? 2 : i - 300; j < i; j++)
			same_step += ((q[j] - q[j - 1]) & 0xffffff) == step;
	}
	CHECK(near <= 78, "%u of 9,999 next QPNs within 2^15 of the last", near);
	/* 300 earlier steps for each of 10,000: 3e6 pairs, 0.18 expected */
	CHECK(same_step <= 3, "%u steps repeated", same_step);
	CHECK(dpr_qpn_lookup(ctx, 0) == NULL && dpr_qpn_lookup(ctx, 1) == NULL,
	      "QPNs 0 and 1 are no QP's (no QP1 made)");
	dpr_verbs_destroy(ctx);

	lim.max_qp = 1;
	ctx = dpr_verbs_create(&lim);
	for (i = 0; i < 1000; i++) {
		q[i] = 0;
		CHECK_EQ(dpr_qpn_alloc(ctx, &obj[0], &q[i]), 0, "alloc");
		CHECK(i == 0 || q[i] != q[i - 1], "the slot's previous QPN again");
		dpr_qpn_free(ctx, q[i]);
	}
	dpr_verbs_destroy(ctx);
	return TEST_SUCCESS;
}

static int cq_events;
static void
count_cq_event(void *arg, enum dpr_event_type t, uint32_t h)
{
	(void)arg;
	(void)h;
	if (t == DPR_EVENT_CQ_ERR)
		cq_events++;
}

static int
test_cq_overflow(void)
{
	struct dpr_verbs_ctx *ctx = dpr_verbs_create(NULL);
	struct dpr_cq *cq = dpr_cq_create(ctx, 3, 0);
	struct dpr_cqe e = { .wr_id = 1 }, out[8];
	int i;

	dpr_verbs_set_event_cb(ctx, count_cq_event, NULL);
	for (i = 0; i < 3; i++)
		CHECK_EQ(dpr_cq_push(cq, &e), 0, "push %d", i);
	CHECK_EQ(dpr_cq_push(cq, &e), -ENOSPC, "overflow at the asked capacity");
	CHECK_EQ(dpr_cq_push(cq, &e), -ENOSPC, "stays in error");
	CHECK_EQ(cq_events, 1, "one CQ_ERR event");
	CHECK_EQ(dpr_cq_poll(cq, out, 8), 3, "three kept");
	dpr_cq_destroy(cq);
	dpr_verbs_destroy(ctx);
	return TEST_SUCCESS;
}

/* ---------------------------------------------------- state machine */

static int
test_state_machine(void)
{
	struct dpr_qp_attr a;
	struct dpr_tqp *q;
	const int init_mask = DPR_QP_STATE | DPR_QP_PKEY_INDEX | DPR_QP_PORT |
		DPR_QP_ACCESS_FLAGS;
	const int rtr_mask = DPR_QP_STATE | DPR_QP_AV | DPR_QP_PATH_MTU |
		DPR_QP_DEST_QPN | DPR_QP_RQ_PSN | DPR_QP_MAX_DEST_RD_ATOMIC |
		DPR_QP_MIN_RNR_TIMER;
	const int rts_mask = DPR_QP_STATE | DPR_QP_TIMEOUT | DPR_QP_RETRY_CNT |
		DPR_QP_RNR_RETRY | DPR_QP_SQ_PSN | DPR_QP_MAX_QP_RD_ATOMIC;
	struct dpr_qp_init_attr ia;
	int bit;

	CHECK(rc_harness_init(&H, pool, 1, NULL) == 0, "harness");
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = (enum dpr_qp_type)9;        /* XRC */
	ia.pd = H.side[0].pd;
	ia.send_cq = ia.recv_cq = H.side[0].scq;
	ia.max_send_wr = 16;
	ia.max_recv_wr = 16;
	errno = 0;
	CHECK(dpr_qp_create(H.side[0].tp, &ia) == NULL && errno == EOPNOTSUPP,
	      "an XRC QP is refused with EOPNOTSUPP");
	ia.qp_type = DPR_QPT_RC;
	ia.send_cq = ia.recv_cq = H.side[0].scq;
	ia.max_send_wr = 16;
	ia.max_recv_wr = 16;
	q = dpr_qp_create(H.side[0].tp, &ia);
	CHECK(q != NULL, "create");
	CHECK_EQ(dpr_qp_get_state(q), DPR_QPS_RESET, "starts in RESET");
	memset(&a, 0, sizeof(a));
	a.port_num = 1;
	a.qp_access_flags = DPR_ACCESS_REMOTE_WRITE;
	a.path_mtu = DPR_MTU_1024;
	a.dest_qp_num = 0x42;
	a.ah_attr.dgid = H.side[1].gid;
	a.ah_attr.sgid_index = 1;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	a.max_dest_rd_atomic = 1;

	/* RESET -> RTR/RTS skip a state: refused */
	a.qp_state = DPR_QPS_RTR;
	CHECK_EQ(dpr_qp_modify(q, &a, rtr_mask), -EINVAL, "RESET -> RTR");
	a.qp_state = DPR_QPS_RTS;
	CHECK_EQ(dpr_qp_modify(q, &a, rts_mask), -EINVAL, "RESET -> RTS");
	/* every required bit missing in turn, and an extra bit: refused */
	a.qp_state = DPR_QPS_INIT;
	for (bit = 1; bit < 21; bit++) {
		if (!(init_mask & (1 << bit)))
			continue;
		CHECK_EQ(dpr_qp_modify(q, &a, init_mask & ~(1 << bit)), -EINVAL,
			 "INIT without bit %d", bit);
	}
	CHECK_EQ(dpr_qp_modify(q, &a, init_mask | DPR_QP_SQ_PSN), -EINVAL,
		 "INIT with SQ_PSN");
	a.port_num = 2;
	CHECK_EQ(dpr_qp_modify(q, &a, init_mask), -EINVAL, "port 2");
	a.port_num = 1;
	CHECK_EQ(dpr_qp_get_state(q), DPR_QPS_RESET, "nothing changed");
	CHECK_EQ(dpr_qp_modify(q, &a, init_mask), 0, "RESET -> INIT");
	CHECK_EQ(dpr_qp_modify(q, &a, DPR_QP_ACCESS_FLAGS), 0, "INIT -> INIT");

	a.qp_state = DPR_QPS_RTR;
	for (bit = 1; bit < 21; bit++) {
		if (!(rtr_mask & (1 << bit)))
			continue;
		CHECK_EQ(dpr_qp_modify(q, &a, rtr_mask & ~(1 << bit)), -EINVAL,
			 "RTR without bit %d", bit);
	}
	a.path_mtu = 6;
	CHECK_EQ(dpr_qp_modify(q, &a, rtr_mask), -EINVAL, "MTU 6");
	a.path_mtu = DPR_MTU_1024;
	a.dest_qp_num = 1u << 24;
	CHECK_EQ(dpr_qp_modify(q, &a, rtr_mask), -EINVAL, "QPN > 24 bits");
	a.dest_qp_num = 0x42;
	a.max_dest_rd_atomic = 200;
	CHECK_EQ(dpr_qp_modify(q, &a, rtr_mask), -EINVAL, "rd_atomic over the limit");
	a.max_dest_rd_atomic = 1;
	CHECK_EQ(dpr_qp_get_state(q), DPR_QPS_INIT, "still INIT");
	CHECK_EQ(dpr_qp_modify(q, &a, rtr_mask), 0, "INIT -> RTR");
	{
		struct dpr_send_wr wr = { .opcode = DPR_WR_SEND };
		unsigned int posted = 9;

		CHECK_EQ(dpr_post_send(q, &wr, 1, &posted), -EINVAL, "post send in RTR");
		CHECK(posted == 0, "none posted: the first WR is the bad one");
	}
	a.qp_state = DPR_QPS_RTS;
	for (bit = 1; bit < 21; bit++) {
		if (!(rts_mask & (1 << bit)))
			continue;
		CHECK_EQ(dpr_qp_modify(q, &a, rts_mask & ~(1 << bit)), -EINVAL,
			 "RTS without bit %d", bit);
	}
	a.retry_cnt = 8;
	CHECK_EQ(dpr_qp_modify(q, &a, rts_mask), -EINVAL, "retry_cnt 8");
	a.retry_cnt = 7;
	a.timeout = 32;
	CHECK_EQ(dpr_qp_modify(q, &a, rts_mask), -EINVAL, "timeout 32");
	a.timeout = 14;
	CHECK_EQ(dpr_qp_modify(q, &a, rts_mask), 0, "RTR -> RTS");
	CHECK_EQ(dpr_qp_modify(q, &a, DPR_QP_TIMEOUT), -EINVAL,
		 "RTS -> RTS may not change the timeout");
	CHECK_EQ(dpr_qp_modify(q, &a, DPR_QP_MIN_RNR_TIMER), 0, "RTS -> RTS");
	a.qp_state = DPR_QPS_SQD;
	CHECK_EQ(dpr_qp_modify(q, &a, DPR_QP_STATE | DPR_QP_EN_SQD_ASYNC_NOTIFY), 0,
		 "RTS -> SQD");
	CHECK_EQ(dpr_qp_modify(q, &a, DPR_QP_TIMEOUT), 0, "SQD -> SQD timeout");
	a.qp_state = DPR_QPS_RTS;
	CHECK_EQ(dpr_qp_modify(q, &a, DPR_QP_STATE), 0, "SQD -> RTS");
	a.qp_state = DPR_QPS_INIT;
	CHECK_EQ(dpr_qp_modify(q, &a, init_mask), -EINVAL, "RTS -> INIT");
	a.qp_state = DPR_QPS_ERR;
	CHECK_EQ(dpr_qp_modify(q, &a, DPR_QP_STATE), 0, "RTS -> ERR");
	a.qp_state = DPR_QPS_RTS;
	CHECK_EQ(dpr_qp_modify(q, &a, DPR_QP_STATE), -EINVAL, "ERR -> RTS");
	a.qp_state = DPR_QPS_RESET;
	CHECK_EQ(dpr_qp_modify(q, &a, DPR_QP_STATE), 0, "ERR -> RESET");
	a.qp_state = DPR_QPS_INIT;
	CHECK_EQ(dpr_qp_modify(q, &a, init_mask), 0, "RESET -> INIT again");
	dpr_qp_destroy(q);
	rc_harness_fini(&H);
	return TEST_SUCCESS;
}

/* ------------------------------------------------------- operations */

static int
test_send_recv(void)
{
	static const uint32_t sizes[] = { 0, 1, 1023, 1024, 1025, 4096, 65536, 100003 };
	struct dpr_mr *src, *dst;
	struct dpr_cqe c[2];
	unsigned int i;

	CHECK(conn(NULL, NULL, 2) == 0, "connect");
	src = rc_mr(&H, 0, 1 << 17, DPR_ACCESS_LOCAL_WRITE);
	dst = rc_mr(&H, 1, 1 << 17, DPR_ACCESS_LOCAL_WRITE);
	/* each size twice: dpr_post_send(), then dpr_post_send_shared() */
	post_shared_hits = 0;
	for (i = 0; i < 2 * RTE_DIM(sizes); i++) {
		const uint32_t len = sizes[i % RTE_DIM(sizes)];
		bool imm = i % 2;

		post_shared = i >= RTE_DIM(sizes);
		/* nothing left to do on either side: a post must start its
		 * own work */
		rc_settle(&H, 10 * MS);

		fill(src, 0, len, i);
		memset(dst->addr, 0, 1 << 17);
		CHECK_EQ(post_recv(qb, dst, 0, 1 << 17, 100 + i), 0, "recv");
		CHECK_EQ(post_send(qa, imm ? DPR_WR_SEND_WITH_IMM : DPR_WR_SEND, src, 0,
				   len, 0, 0, i, DPR_SEND_SIGNALED), 0, "send");
		CHECK_EQ(wait_cq(H.side[0].scq, 1, c, SEC), 1, "send completion %u",
			 len);
		CHECK(c[0].status == DPR_WC_SUCCESS && c[0].opcode == DPR_WC_SEND &&
		      c[0].wr_id == i && c[0].byte_len == len, "send CQE %u: "
		      "status %u", len, c[0].status);
		CHECK_EQ(wait_cq(H.side[1].rcq, 1, c, SEC), 1, "recv completion");
		CHECK(c[0].status == DPR_WC_SUCCESS && c[0].opcode == DPR_WC_RECV &&
		      c[0].wr_id == 100 + i && c[0].byte_len == len &&
		      c[0].qp_num == dpr_qp_num(qb) && c[0].src_qp == dpr_qp_num(qa),
		      "recv CQE %u: len %u", len, c[0].byte_len);
		CHECK_EQ(!!(c[0].wc_flags & DPR_WC_WITH_IMM), imm, "imm flag");
		if (imm)
			CHECK_EQ(rte_be_to_cpu_32(c[0].imm_data), 0xabc000u + i, "imm");
		CHECK(memcmp(src->addr, dst->addr, len) == 0, "data %u", len);
		CHECK_EQ(dst->addr[len], 0, "nothing past the message");
	}
	post_shared = false;
	/* every size but 0 (no SGE: not the usual request) took the shared path */
	CHECK_EQ(post_shared_hits, RTE_DIM(sizes) - 1, "posted by dpr_post_send_shared");
	mr_free(src);
	mr_free(dst);
	fini();
	return TEST_SUCCESS;
}

static int
test_write_read_atomic(void)
{
	static const uint32_t sizes[] = { 0, 1, 1024, 1025, 4095, 65536, 1 << 20 };
	const uint32_t remote = DPR_ACCESS_LOCAL_WRITE | DPR_ACCESS_REMOTE_WRITE |
		DPR_ACCESS_REMOTE_READ | DPR_ACCESS_REMOTE_ATOMIC;
	struct dpr_mr *l, *r, *rbuf;
	struct dpr_cqe c[2];
	uint64_t v;
	unsigned int i;

	CHECK(conn(NULL, NULL, 3) == 0, "connect");
	l = rc_mr(&H, 0, 2 << 20, DPR_ACCESS_LOCAL_WRITE);
	r = rc_mr(&H, 1, 2 << 20, remote);
	rbuf = rc_mr(&H, 1, 64, DPR_ACCESS_LOCAL_WRITE);
	for (i = 0; i < RTE_DIM(sizes); i++) {
		fill(l, 0, sizes[i], 7 * i);
		CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE, l, 0, sizes[i],
				   r->iova + 333, r->rkey, i, DPR_SEND_SIGNALED), 0, "w");
		CHECK_EQ(wait_cq(H.side[0].scq, 1, c, SEC), 1, "write done");
		CHECK(c[0].status == DPR_WC_SUCCESS && c[0].opcode == DPR_WC_RDMA_WRITE,
		      "write CQE status %u", c[0].status);
		CHECK(memcmp(l->addr, r->addr + 333, sizes[i]) == 0, "write data %u",
		      sizes[i]);
		/* read it back into another place */
		memset(l->addr + (1 << 20), 0, sizes[i]);
		CHECK_EQ(post_send(qa, DPR_WR_RDMA_READ, l, 1 << 20, sizes[i],
				   r->iova + 333, r->rkey, 50 + i, DPR_SEND_SIGNALED), 0,
			 "r");
		CHECK_EQ(wait_cq(H.side[0].scq, 1, c, SEC), 1, "read done %u", sizes[i]);
		CHECK(c[0].status == DPR_WC_SUCCESS && c[0].opcode == DPR_WC_RDMA_READ &&
		      c[0].byte_len == sizes[i], "read CQE status %u", c[0].status);
		CHECK(memcmp(l->addr + (1 << 20), r->addr + 333, sizes[i]) == 0,
		      "read data %u", sizes[i]);
	}
	/* WRITE with immediate: data in the MR, a completion with the imm */
	CHECK_EQ(post_recv(qb, rbuf, 0, 64, 77), 0, "recv");
	fill(l, 0, 5000, 99);
	CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE_WITH_IMM, l, 0, 5000, r->iova,
			   r->rkey, 9, 0), 0, "write imm");
	CHECK_EQ(wait_cq(H.side[1].rcq, 1, c, SEC), 1, "imm completion");
	CHECK(c[0].opcode == DPR_WC_RECV_RDMA_WITH_IMM && c[0].byte_len == 5000 &&
	      (c[0].wc_flags & DPR_WC_WITH_IMM) &&
	      rte_be_to_cpu_32(c[0].imm_data) == 0xabc009u && c[0].wr_id == 77,
	      "RECV_RDMA_WITH_IMM CQE");
	rc_settle(&H, SEC);
	CHECK_EQ(dpr_cq_count(H.side[0].scq), 0, "unsignaled: no completion");
	CHECK(memcmp(l->addr, r->addr, 5000) == 0, "write imm data");

	/* atomics on 8 aligned bytes of the remote MR */
	v = 10;
	memcpy(r->addr + 64, &v, 8);
	CHECK_EQ(post_send(qa, DPR_WR_ATOMIC_FETCH_AND_ADD, l, 0, 8, r->iova + 64,
			   r->rkey, 1, DPR_SEND_SIGNALED), 0, "fetch add");
	{
		struct dpr_send_wr wr = {
			.wr_id = 2, .num_sge = 1,
			.opcode = DPR_WR_ATOMIC_CMP_AND_SWP,
			.send_flags = DPR_SEND_SIGNALED,
			.remote_addr = r->iova + 64, .rkey = r->rkey,
			.compare_add = 10 + 5,       /* after the add */
			.swap = 1000,
			.sge[0] = { l->iova + 8, 8, l->lkey },
		};

		CHECK_EQ(dpr_post_send(qa, &wr, 1, NULL), 0, "cmp swap");
	}
	CHECK_EQ(wait_cq(H.side[0].scq, 2, c, SEC), 2, "atomics done");
	CHECK(c[0].opcode == DPR_WC_FETCH_ADD && c[1].opcode == DPR_WC_COMP_SWAP &&
	      c[0].status == 0 && c[1].status == 0, "atomic CQEs");
	memcpy(&v, l->addr, 8);
	CHECK_EQ(v, 10, "fetch_add returned the original");
	memcpy(&v, l->addr + 8, 8);
	CHECK_EQ(v, 10 + 5, "cmp_swap returned the original");
	memcpy(&v, r->addr + 64, 8);
	CHECK_EQ(v, 1000, "swapped");
	mr_free(l);
	mr_free(r);
	mr_free(rbuf);
	fini();
	return TEST_SUCCESS;
}

/* ----------------------------------------------------------- errors */

/* WRITE through a bad key: REM_ACCESS_ERR at the requester, nothing
 * written, both QPs in ERR, the next WQE flushed (IBA 9.9.3.1.3). */
static int
one_access_error(const char *what, int how)
{
	const uint32_t remote = DPR_ACCESS_LOCAL_WRITE | DPR_ACCESS_REMOTE_WRITE |
		DPR_ACCESS_REMOTE_READ;
	struct dpr_mr *l, *r, *other;
	struct dpr_cqe c[2];
	struct dpr_pd *pd2;
	uint64_t va;
	uint32_t rkey, i;

	CHECK(conn(NULL, NULL, 10 + how) == 0, "connect");
	l = rc_mr(&H, 0, 8192, DPR_ACCESS_LOCAL_WRITE);
	r = rc_mr(&H, 1, 8192, how == 2 ? DPR_ACCESS_LOCAL_WRITE |
		  DPR_ACCESS_REMOTE_READ : remote);
	pd2 = dpr_pd_alloc(H.side[1].ctx, 0);
	other = dpr_mr_reg(pd2, r->addr, r->iova, 8192, remote);
	va = r->iova;
	rkey = r->rkey;
	switch (how) {
	case 0: rkey = other->rkey; break;                 /* another PD */
	case 1: { struct dpr_mr *f = rc_mr(&H, 1, 64, remote);
		rkey = f->rkey; mr_free(f); break; }          /* freed MR */
	case 2: break;                                     /* no remote write */
	case 3: va = r->iova + 8192 - 100; break;          /* past the end */
	case 4: va = UINT64_MAX - 50; break;               /* wrapping */
	}
	fill(l, 0, 4096, 3);
	CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE, l, 0, 4096, va, rkey, 1,
			   DPR_SEND_SIGNALED), 0, "post");
	CHECK_EQ(post_send(qa, DPR_WR_SEND, l, 0, 8, 0, 0, 2, DPR_SEND_SIGNALED), 0,
		 "post behind it");
	CHECK_EQ(wait_cq(H.side[0].scq, 2, c, SEC), 2, "%s: completions", what);
	CHECK(c[0].status == DPR_WC_REM_ACCESS_ERR && c[0].wr_id == 1,
	      "%s: REM_ACCESS_ERR (got %u)", what, c[0].status);
	CHECK(c[1].status == DPR_WC_WR_FLUSH_ERR && c[1].wr_id == 2,
	      "%s: the next flushed (got %u)", what, c[1].status);
	for (i = 0; i < 8192; i++)
		CHECK(r->addr[i] == 0, "%s: byte %u written", what, i);
	CHECK_EQ(dpr_qp_get_state(qa), DPR_QPS_ERR, "%s: requester in ERR", what);
	CHECK_EQ(dpr_qp_get_state(qb), DPR_QPS_ERR, "%s: responder in ERR", what);
	CHECK_EQ(H.side[1].events[DPR_EVENT_QP_ACCESS_ERR], 1, "%s: event", what);
	CHECK_EQ(dpr_transport_stats(H.side[1].tp)->nak_err_tx, 1, "%s: one NAK", what);
	dpr_mr_dereg(other);
	dpr_pd_dealloc(pd2);
	mr_free(l);
	mr_free(r);
	fini();
	return TEST_SUCCESS;
}

static int
test_remote_access_errors(void)
{
	int r = 0;

	r |= one_access_error("rkey of another PD", 0);
	r |= one_access_error("rkey of a freed MR", 1);
	r |= one_access_error("MR without remote write", 2);
	r |= one_access_error("va + len past the end", 3);
	r |= one_access_error("va + len wrapping 2^64", 4);
	return r ? TEST_FAILED : TEST_SUCCESS;
}

/*
 * Memory windows through the transport: a bind posted behind a long WRITE
 * completes after it (a bind waits for the WQEs before it); the peer
 * writes through the window's key, inside it only; a SEND WITH
 * INVALIDATE (its IETH on the wire) invalidates it as the receive
 * completes, with the key in the completion; the key is refused from
 * then on. A window's key is never an lkey.
 */
static int
test_memory_windows(void)
{
	const uint32_t big = 512 * 1024;
	struct dpr_mr *l, *r, *rbuf, *mw;
	struct dpr_cqe c[2];
	struct dpr_send_wr wr = { 0 };
	uint32_t key;

	CHECK(conn(NULL, NULL, 31) == 0, "connect");
	l = rc_mr(&H, 0, 1 << 20, DPR_ACCESS_ALL);
	r = rc_mr(&H, 1, 1 << 20, DPR_ACCESS_ALL);
	rbuf = rc_mr(&H, 1, 64, DPR_ACCESS_LOCAL_WRITE);
	CHECK(l && r && rbuf, "MRs");
	mw = dpr_mw_alloc(r->pd, 2);
	CHECK(mw != NULL && !mw->valid && mw->mw_type == 2, "window");
	CHECK(dpr_mw_alloc(r->pd, 3) == NULL && errno == EINVAL, "type 3");
	key = (mw->rkey & ~0xffu) | ((mw->rkey + 1) & 0xffu);
	/* B: a long WRITE, then the bind */
	CHECK_EQ(post_send(qb, DPR_WR_RDMA_WRITE, r, 0, big, l->iova, l->rkey, 1,
			   DPR_SEND_SIGNALED), 0, "write");
	wr.wr_id = 2;
	wr.opcode = DPR_WR_BIND_MW;
	wr.send_flags = DPR_SEND_SIGNALED;
	wr.bind = (struct dpr_mw_bind){
		.mw_key = mw->rkey, .new_key = key, .mr_lkey = r->lkey,
		.access = DPR_ACCESS_REMOTE_WRITE | DPR_ACCESS_REMOTE_READ |
			DPR_ACCESS_LOCAL_WRITE,
		.addr = r->iova + 4096, .length = 8192,
	};
	CHECK_EQ(dpr_post_send(qb, &wr, 1, NULL), 0, "bind posted");
	CHECK_EQ(wait_cq(H.side[1].scq, 2, c, SEC), 2, "both complete");
	CHECK(c[0].wr_id == 1 && c[0].opcode == DPR_WC_RDMA_WRITE &&
	      c[1].wr_id == 2 && c[1].opcode == DPR_WC_BIND_MW &&
	      c[1].status == DPR_WC_SUCCESS, "the WRITE, then the bind (%" PRIu64
	      " %u, %" PRIu64 " %u %u)", c[0].wr_id, c[0].opcode, c[1].wr_id,
	      c[1].opcode, c[1].status);
	CHECK(mw->valid && mw->rkey == key && mw->mw_qpn == dpr_qp_num(qb),
	      "bound to B's QP with its new key");
	CHECK(dpr_mr_check(H.side[1].ctx, key, r->pd, 0, r->iova + 4096, 8, 0) ==
	      NULL, "a window's key is no lkey");
	CHECK(dpr_mr_dereg(r) == -EBUSY, "its MR held");
	/* A writes through it */
	fill(l, 0, 8192, 5);
	CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE, l, 0, 8192, r->iova + 4096, key,
			   3, DPR_SEND_SIGNALED), 0, "write via window");
	CHECK_EQ(wait_cq(H.side[0].scq, 1, c, SEC), 1, "done");
	CHECK(c[0].status == DPR_WC_SUCCESS &&
	      memcmp(l->addr, r->addr + 4096, 8192) == 0, "landed in the window");
	/* and reads it back (responses attached from the MR's memory) */
	CHECK_EQ(post_send(qa, DPR_WR_RDMA_READ, l, 65536, 8192, r->iova + 4096,
			   key, 6, DPR_SEND_SIGNALED), 0, "read via window");
	CHECK_EQ(wait_cq(H.side[0].scq, 1, c, SEC), 1, "done");
	CHECK(c[0].status == DPR_WC_SUCCESS &&
	      memcmp(l->addr + 65536, r->addr + 4096, 8192) == 0, "read back");
	/* A invalidates it with a SEND */
	CHECK_EQ(post_recv(qb, rbuf, 0, 64, 40), 0, "recv");
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 4;
	wr.opcode = DPR_WR_SEND_WITH_INV;
	wr.send_flags = DPR_SEND_SIGNALED;
	wr.rkey = key;
	wr.num_sge = 1;
	wr.sge[0] = (struct dpr_sge){ l->iova, 16, l->lkey };
	CHECK_EQ(dpr_post_send(qa, &wr, 1, NULL), 0, "send with invalidate");
	CHECK_EQ(wait_cq(H.side[1].rcq, 1, c, SEC), 1, "received");
	CHECK(c[0].status == DPR_WC_SUCCESS && c[0].opcode == DPR_WC_RECV &&
	      c[0].byte_len == 16 && c[0].wc_flags == DPR_WC_WITH_INV &&
	      c[0].imm_data == key, "the receive says which key went");
	CHECK_EQ(wait_cq(H.side[0].scq, 1, c, SEC), 1, "sent");
	CHECK(c[0].status == DPR_WC_SUCCESS && c[0].opcode == DPR_WC_SEND, "sent");
	CHECK(!mw->valid && dpr_mr_lookup(H.side[1].ctx, key) == NULL,
	      "the window is invalid");
	CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE, l, 0, 8, r->iova + 4096, key,
			   5, DPR_SEND_SIGNALED), 0, "write via the old key");
	CHECK_EQ(wait_cq(H.side[0].scq, 1, c, SEC), 1, "done");
	CHECK_EQ(c[0].status, DPR_WC_REM_ACCESS_ERR, "refused");
	CHECK_EQ(dpr_mw_dealloc(mw), 0, "window freed");
	mr_free(l);
	mr_free(r);
	mr_free(rbuf);
	fini();
	return TEST_SUCCESS;
}

/*
 * DCQCN's reaction point against a reference model on virtual time: the
 * model below ticks alpha period by period and applies the rules as the
 * HPCC simulator's "Mellanox version" states them (a cut at once on the
 * first CNP and at most one per decrease period after, to rate * (1 -
 * alpha / 2), the target clamped only after an increase; timer stages
 * every time_reset: fast recovery below the threshold, additive at it,
 * hyper past it; released after release_periods without a CNP). The
 * transport computes alpha lazily and is driven through its own timer:
 * both must agree at every step, to 1e-9.
 */
struct cc_ref {
	double rate, target, alpha;
	bool cnp_in_period, pending;
	uint32_t t;
	uint64_t period_start, last_cut, next_inc, last_cnp;
	bool limited;
};

static void
ref_alpha(struct cc_ref *r, const struct dpr_cc_params *p, uint64_t now)
{
	const double keep = p->alpha_keep / 1024.0;

	while (now >= r->period_start + p->alpha_period_ns) {
		r->alpha = keep * r->alpha + (r->cnp_in_period ? 1 - keep : 0);
		r->cnp_in_period = false;
		r->period_start += p->alpha_period_ns;
	}
}

static void
ref_cut(struct cc_ref *r, const struct dpr_cc_params *p, uint64_t now)
{
	ref_alpha(r, p, now);
	if (r->t != 0)
		r->target = r->rate;
	r->rate = RTE_MAX(r->rate * (1 - r->alpha / 2), (double)p->min_rate_bps);
	r->t = 0;
	r->pending = false;
	r->last_cut = now;
	r->next_inc = now + p->time_reset_ns;
}

static void
ref_cnp(struct cc_ref *r, const struct dpr_cc_params *p, uint64_t now)
{
	bool first = !r->limited;

	if (first) {
		r->limited = true;
		r->rate = r->target = (double)p->line_rate_bps;
		r->alpha = p->initial_alpha / 1024.0;
		r->period_start = now;
		r->cnp_in_period = false;
		r->t = 0;
		r->next_inc = now + p->time_reset_ns;
	}
	ref_alpha(r, p, now);
	r->cnp_in_period = true;
	r->pending = true;
	r->last_cnp = now;
	if (first || now - r->last_cut >= p->decrease_period_ns)
		ref_cut(r, p, now);
}

/* what is due by @p now, in time order as a NIC's timers run them */
static void
ref_run(struct cc_ref *r, const struct dpr_cc_params *p, uint64_t now)
{
	if (r->pending && now >= r->last_cut + p->decrease_period_ns)
		ref_cut(r, p, now);
	while (r->limited && now >= r->next_inc) {
		if (r->t < p->threshold)
			;
		else if (r->t == p->threshold)
			r->target += (double)p->ai_rate_bps;
		else
			r->target += (double)p->hai_rate_bps;
		r->target = RTE_MIN(r->target, (double)p->line_rate_bps);
		r->rate = (r->rate + r->target) / 2;
		r->t++;
		r->next_inc += p->time_reset_ns;
	}
	if (r->limited && now - r->last_cnp >= (uint64_t)p->release_periods * p->time_reset_ns)
		r->limited = false;
}

static bool
near(double a, double b)
{
	const double d = a > b ? a - b : b - a, m = a > b ? a : b;

	return d <= 1e-9 * m;
}

static int
test_dcqcn_reference(void)
{
	struct dpr_cc_params p;
	struct cc_ref r = { 0 };
	/* CNPs at these times (us from t0): a burst, a pause of a few
	 * stages, one more, then silence until the QP is released */
	static const uint32_t cnps[] = { 0, 1, 2, 3, 5, 9, 13, 14, 700, 1500, 1501 };
	uint64_t t0, now, end;
	unsigned int i = 0, steps = 0, cuts = 0;

	dpr_cc_defaults(&p);
	p.line_rate_bps = 10000000000ull;
	p.byte_reset = 0;               /* (no traffic: the timer's stages) */
	CHECK(conn(NULL, NULL, 41) == 0, "connect");
	qa->tp->conf.cc = p;
	t0 = qa->tp->now;
	end = t0 + 1501000ull + 11ull * p.time_reset_ns;
	for (now = t0; now <= end; ) {
		uint64_t next_cnp = i < RTE_DIM(cnps) ? t0 + cnps[i] * 1000ull : UINT64_MAX;
		uint64_t next_timer = qa->cc.timer.armed ? qa->cc.timer.deadline : UINT64_MAX;

		now = RTE_MIN(next_cnp, next_timer);
		if (now == UINT64_MAX || now > end)
			break;
		qa->tp->now = now;
		ref_run(&r, &p, now);
		if (now == next_cnp) {
			dpr_cc_cnp(qa);
			ref_cnp(&r, &p, now);
			i++;
		}
		if (qa->cc.timer.armed && qa->cc.timer.deadline <= now) {
			dpr_timer_cancel(qa->tp, &qa->cc.timer);
			dpr_cc_timer_fire(qa);
		}
		steps++;
		CHECK(qa->cc.limited == r.limited, "step %u at %" PRIu64 " ns: limited %d, "
		      "model %d", steps, now - t0, qa->cc.limited, r.limited);
		if (!r.limited)
			break;
		CHECK(near(qa->cc.rate, r.rate) && near(qa->cc.target, r.target) &&
		      near(qa->cc.alpha, r.alpha), "step %u at %" PRIu64 " ns: rate %.6g "
		      "target %.6g alpha %.9f; model %.6g %.6g %.9f", steps, now - t0,
		      qa->cc.rate, qa->cc.target, qa->cc.alpha, r.rate, r.target, r.alpha);
	}
	cuts = (unsigned int)qa->stats.cc_cuts;
	CHECK(i == RTE_DIM(cnps) && !qa->cc.limited && !qa->cc.timer.armed,
	      "every CNP taken, the QP released at last (%u of %zu, limited %d)",
	      i, RTE_DIM(cnps), qa->cc.limited);
	/* the burst of 0-3 us is one cut then one at 4 us; 5 and 9 cut at 8
	 * and 12; 13, 14 at 13 and 17; 700, 1500 and 1501 at once or 4 us on */
	CHECK(cuts == 8 && qa->stats.cc_released == 1, "%u cuts, %" PRIu64
	      " released", cuts, qa->stats.cc_released);
	printf("    %u steps, %u cuts, %" PRIu64 " increases, released after %"
	       PRIu64 " us\n", steps, cuts, qa->stats.cc_increases, (now - t0) / 1000);
	fini();
	return TEST_SUCCESS;
}

/*
 * The pacer: a QP cut to 2 Gbit/s (and kept there: no stage moves) sends
 * 64 KiB WRITEs for 20 ms of virtual time at that rate, within 5%, where
 * the same QP unpaced sends several times as much; every WRITE lands.
 */
/* until the harness has nothing left to do (its clock would stand) */
static bool
all_quiet(struct rc_harness *h, void *arg)
{
	(void)arg;
	return h->n == 0 && !dpr_transport_busy(h->side[0].tp) &&
		!dpr_transport_busy(h->side[1].tp) &&
		dpr_transport_next_timer(h->side[0].tp) == UINT64_MAX &&
		dpr_transport_next_timer(h->side[1].tp) == UINT64_MAX;
}

static int
test_dcqcn_pacer(void)
{
	const uint32_t len = 64 * 1024, n = 256;
	struct dpr_cc_params p;
	struct dpr_mr *l, *r;
	uint64_t sent[2];
	unsigned int pass;

	dpr_cc_defaults(&p);
	p.time_reset_ns = 1000000000;   /* no stage in the run */
	p.release_periods = 0;
	p.byte_reset = 0;
	for (pass = 0; pass < 2; pass++) {
		struct rc_faults f = { .cc = &p };
		struct dpr_cqe c[16];
		uint32_t done = 0, i;

		CHECK(conn(&f, NULL, 42) == 0, "connect");
		l = rc_mr(&H, 0, len, DPR_ACCESS_LOCAL_WRITE);
		r = rc_mr(&H, 1, len, DPR_ACCESS_ALL);
		fill(l, 0, len, 3);
		if (pass == 0) {
			dpr_cc_cnp(qa);
			qa->cc.rate = qa->cc.target = 2e9;
		}
		for (i = 0; i < n; i++)
			CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE, l, 0, len, r->iova,
					   r->rkey, i, DPR_SEND_SIGNALED), 0, "post");
		rc_run(&H, all_quiet, NULL, 20 * 1000 * 1000);
		sent[pass] = dpr_transport_stats(H.side[1].tp)->rx_frames;
		if (pass == 0)
			CHECK(qa->cc.limited && qa->stats.cc_paced > 0, "paced (%" PRIu64
			      " holds)", qa->stats.cc_paced);
		/* then everything completes, data in place */
		while (done < n) {
			int k = wait_cq(H.side[0].scq, 1, c, 10 * SEC);

			CHECK(k == 1 && c[0].status == DPR_WC_SUCCESS, "WRITE %u", done);
			done++;
		}
		CHECK(memcmp(l->addr, r->addr, len) == 0, "data");
		mr_free(l);
		mr_free(r);
		fini();
	}
	{
		/* frames of 1024 B payload + 58 B of headers over 20 ms */
		const double want = 2e9 * 0.02 / 8 / (1024 + 58);

		printf("    20 ms: paced %" PRIu64 " frames (%.0f at 2 Gbit/s), "
		       "unpaced %" PRIu64 "\n", sent[0], want, sent[1]);
		CHECK(sent[0] > want * 0.95 && sent[0] < want * 1.05,
		      "paced at 2 Gbit/s within 5%%: %" PRIu64 " frames, %.0f wanted",
		      sent[0], want);
		CHECK(sent[1] > 2 * sent[0], "unpaced sends more");
	}
	return TEST_SUCCESS;
}

/*
 * Who sent what was dropped (dpr_sources.c): frames from an IPv4 source,
 * one behind a VLAN tag, an IPv6 one, each counted under its reason; a
 * source whose slot another takes is evicted (counted), the newcomer
 * counted from one; a frame with no IP header is not counted at all.
 */
static struct rte_mbuf *
src_frame(uint16_t type, bool vlan, const uint8_t *src, unsigned int srclen)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *p;
	uint32_t l3 = 14 + (vlan ? 4 : 0);

	if (m == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(m, 128);
	memset(p, 0, 128);
	if (vlan) {
		p[12] = 0x81;
		p[13] = 0x00;
	}
	p[l3 - 2] = (uint8_t)(type >> 8);
	p[l3 - 1] = (uint8_t)type;
	memcpy(p + l3 + (type == 0x0800 ? 12 : 8), src, srclen);
	return m;
}

static int
find_src(struct dpr_src_entry *e, unsigned int n, const union dpr_gid *g)
{
	for (unsigned int i = 0; i < n; i++)
		if (memcmp(&e[i].src, g, sizeof(*g)) == 0)
			return (int)i;
	return -1;
}

static int
test_drop_sources(void)
{
	static struct dpr_src_entry e[DPR_SRC_SLOTS];
	const uint8_t a[4] = { 10, 1, 2, 3 }, v6[16] = { 0xfd, 0x77, [15] = 9 };
	struct dpr_transport *tp;
	union dpr_gid ga, gb, g6;
	uint64_t evicted;
	struct rte_mbuf *m;
	unsigned int n, i, k;
	int x;

	CHECK(conn(NULL, NULL, 43) == 0, "connect");
	tp = H.side[0].tp;
	{
		rte_be32_t ip;

		memcpy(&ip, a, 4);
		dpr_gid_from_ipv4(&ga, ip);
	}
	memcpy(g6.raw, v6, 16);
	for (i = 0; i < 3; i++) {
		m = src_frame(0x0800, i == 2, a, 4);   /* (the third behind a VLAN) */
		dpr_src_drop(tp, m, DPR_SRC_wrong_peer);
		rte_pktmbuf_free(m);
	}
	m = src_frame(0x0800, false, a, 4);
	dpr_src_drop(tp, m, DPR_SRC_no_qp);
	rte_pktmbuf_free(m);
	m = src_frame(0x86dd, false, v6, 16);
	dpr_src_drop(tp, m, DPR_SRC_invalid);
	rte_pktmbuf_free(m);
	m = src_frame(0x0806, false, a, 4);             /* ARP: no IP source */
	dpr_src_drop(tp, m, DPR_SRC_invalid);
	rte_pktmbuf_free(m);
	n = dpr_transport_sources(tp, e, DPR_SRC_SLOTS, &evicted);
	x = find_src(e, n, &ga);
	CHECK(n == 2 && x >= 0 && e[x].n[DPR_SRC_wrong_peer] == 3 &&
	      e[x].n[DPR_SRC_no_qp] == 1 && evicted == 0,
	      "the IPv4 source: 3 wrong_peer (one tagged), 1 no_qp (%u sources)", n);
	x = find_src(e, n, &g6);
	CHECK(x >= 0 && e[x].n[DPR_SRC_invalid] == 1, "the IPv6 source: 1 invalid");
	/* another IPv4 source that lands in a's slot evicts it */
	for (k = 1; k < 1u << 20; k++) {
		uint8_t b[4] = { 10, (uint8_t)(k >> 16), (uint8_t)(k >> 8), (uint8_t)k };
		rte_be32_t ip;

		memcpy(&ip, b, 4);
		dpr_gid_from_ipv4(&gb, ip);
		m = src_frame(0x0800, false, b, 4);
		dpr_src_drop(tp, m, DPR_SRC_qp_state);
		rte_pktmbuf_free(m);
		n = dpr_transport_sources(tp, e, DPR_SRC_SLOTS, &evicted);
		if (find_src(e, n, &ga) < 0)
			break;
	}
	x = find_src(e, n, &gb);
	CHECK(k < 1u << 20 && evicted >= 1 && x >= 0 && e[x].n[DPR_SRC_qp_state] == 1 &&
	      e[x].n[DPR_SRC_wrong_peer] == 0,
	      "a source in a's slot evicts it and counts from one (after %u "
	      "sources, %" PRIu64 " evictions)", k, evicted);
	fini();
	return TEST_SUCCESS;
}

/*
 * A freed MR's key is refused at once, even for a request already in
 * flight: the responder checks the key again for every packet it places
 * or reads (rxe does the same through its MR reference), so a WRITE
 * whose MR is deregistered after its FIRST packet places nothing more and
 * is NAKed, and a READ whose MR goes mid-stream sends no more responses.
 */
static int
test_key_freed_in_flight(void)
{
	const uint32_t len = 64 * 1024;
	struct dpr_mr *l, *r;
	const struct dpr_transport_stats *st;
	struct dpr_cqe c[2];
	uint8_t *rbuf;
	uint64_t landed, i, nonzero;
	int op;

	for (op = 0; op < 2; op++) {
		bool write = op == 0;

		CHECK(conn(NULL, NULL, 100 + op) == 0, "connect");
		l = rc_mr(&H, 0, len, DPR_ACCESS_LOCAL_WRITE);
		r = rc_mr(&H, 1, len, DPR_ACCESS_ALL);
		CHECK(l != NULL && r != NULL, "MRs");
		fill(write ? l : r, 0, len, 7);
		rbuf = r->addr;
		st = dpr_transport_stats(H.side[1].tp);
		CHECK_EQ(post_send(qa, write ? DPR_WR_RDMA_WRITE : DPR_WR_RDMA_READ,
				   l, 0, len, r->iova, r->rkey, 1,
				   DPR_SEND_SIGNALED), 0, "post");
		/* step until part of the message has moved */
		for (i = 0; i < 100000 &&
		     (write ? st->rx_frames : st->read_resp_tx) < 4; i++)
			rc_step(&H);
		landed = write ? st->rx_frames : st->read_resp_tx;
		CHECK(landed >= 4 && landed < len / 1024, "%s: %" PRIu64
		      " of %u packets moved when the MR goes",
		      write ? "WRITE" : "READ", landed, len / 1024);
		dpr_mr_dereg(r);
		CHECK_EQ(wait_cq(H.side[0].scq, 1, c, SEC), 1, "completion");
		CHECK_EQ(c[0].status, DPR_WC_REM_ACCESS_ERR,
			 "%s: remote access error", write ? "WRITE" : "READ");
		CHECK_EQ(dpr_qp_get_state(qb), DPR_QPS_ERR, "responder in ERR");
		CHECK_EQ(st->nak_err_tx, 1, "one NAK");
		if (write) {
			/* nothing placed after the key went: the written bytes
			 * are a prefix no longer than what had arrived */
			for (nonzero = len; nonzero > 0 && rbuf[nonzero - 1] == 0;
			     nonzero--)
				;
			CHECK(nonzero > 0 && nonzero <= landed * 1024 &&
			      nonzero < len, "WRITE: %" PRIu64 " bytes placed, "
			      "all before the dereg", nonzero);
			printf("    WRITE: %" PRIu64 " of %u packets in when the MR "
			       "went, %" PRIu64 " bytes placed\n", landed,
			       len / 1024, nonzero);
		} else {
			printf("    READ: %" PRIu64 " of %u responses out when the "
			       "MR went, %" PRIu64 " in all\n", landed, len / 1024,
			       st->read_resp_tx);
			CHECK(st->read_resp_tx < len / 1024,
			      "READ: responses stopped at %" PRIu64,
			      st->read_resp_tx);
		}
		free(rbuf);
		mr_free(l);
		fini();
	}
	return TEST_SUCCESS;
}

static int
test_invalid_request_errors(void)
{
	struct dpr_mr *l, *r, *small;
	struct dpr_cqe c[2];

	/* an atomic at a misaligned address */
	CHECK(conn(NULL, NULL, 20) == 0, "connect");
	l = rc_mr(&H, 0, 4096, DPR_ACCESS_LOCAL_WRITE);
	r = rc_mr(&H, 1, 4096, DPR_ACCESS_ALL);
	CHECK_EQ(post_send(qa, DPR_WR_ATOMIC_FETCH_AND_ADD, l, 0, 8, r->iova + 4,
			   r->rkey, 1, DPR_SEND_SIGNALED), 0, "post");
	CHECK_EQ(wait_cq(H.side[0].scq, 1, c, SEC), 1, "completion");
	CHECK_EQ(c[0].status, DPR_WC_REM_INV_REQ_ERR, "misaligned atomic");
	CHECK_EQ(H.side[1].events[DPR_EVENT_QP_REQ_ERR], 1, "responder event");
	mr_free(l);
	mr_free(r);
	fini();

	/* a SEND longer than the receive buffer: a length error, IBA
	 * 9.9.3.1 class C: NAK Invalid Request (the requester completes with
	 * REM_INV_REQ_ERR), and the receive WQE with Local Length Error, as
	 * ibv_poll_cq(3) describes it ("a Work Request that was posted in a
	 * local Receive Queue isn't big enough for holding the incoming
	 * message"); current rxe answers the same NAK (RESPST_ERR_LENGTH), the
	 * 6.1 kernel's rxe a Remote Operational Error */
	CHECK(conn(NULL, NULL, 21) == 0, "connect");
	l = rc_mr(&H, 0, 8192, DPR_ACCESS_LOCAL_WRITE);
	small = rc_mr(&H, 1, 4096, DPR_ACCESS_LOCAL_WRITE);
	CHECK_EQ(post_recv(qb, small, 0, 1000, 5), 0, "recv");
	CHECK_EQ(post_send(qa, DPR_WR_SEND, l, 0, 3000, 0, 0, 1, DPR_SEND_SIGNALED),
		 0, "send");
	CHECK_EQ(wait_cq(H.side[0].scq, 1, c, SEC), 1, "completion");
	CHECK_EQ(c[0].status, DPR_WC_REM_INV_REQ_ERR, "requester status");
	CHECK_EQ(wait_cq(H.side[1].rcq, 1, c, SEC), 1, "recv completion");
	CHECK_EQ(c[0].status, DPR_WC_LOC_LEN_ERR, "responder: local length error");
	mr_free(l);
	mr_free(small);
	fini();
	return TEST_SUCCESS;
}

/* ------------------------------------------------- RNR and timeouts */

static int
test_rnr(void)
{
	struct rc_conn cc;
	struct dpr_mr *l, *r;
	struct dpr_cqe c[2];

	/* no receive ever posted: rnr_retry 2 -> three RNR NAKs, then error */
	rc_conn_defaults(&cc);
	cc.rnr_retry = 2;
	cc.min_rnr_timer = 14;            /* 1.28 ms */
	CHECK(conn(NULL, &cc, 30) == 0, "connect");
	l = rc_mr(&H, 0, 4096, DPR_ACCESS_LOCAL_WRITE);
	CHECK_EQ(post_send(qa, DPR_WR_SEND, l, 0, 100, 0, 0, 1, 0), 0, "send");
	CHECK_EQ(wait_cq(H.side[0].scq, 1, c, SEC), 1, "completion");
	CHECK_EQ(c[0].status, DPR_WC_RNR_RETRY_EXC_ERR, "RNR retries run out");
	CHECK_EQ(dpr_transport_stats(H.side[1].tp)->rnr_nak_tx, 3, "three RNR NAKs");
	CHECK(H.now >= 2 * 1280000ull, "waited the RNR timer twice (%lu ns)",
	      (unsigned long)H.now);
	mr_free(l);
	fini();

	/* the receive arrives during the wait: the SEND goes through */
	rc_conn_defaults(&cc);
	cc.rnr_retry = 7;                 /* for ever */
	cc.min_rnr_timer = 1;
	CHECK(conn(NULL, &cc, 31) == 0, "connect");
	l = rc_mr(&H, 0, 4096, DPR_ACCESS_LOCAL_WRITE);
	r = rc_mr(&H, 1, 4096, DPR_ACCESS_LOCAL_WRITE);
	fill(l, 0, 3000, 1);
	CHECK_EQ(post_send(qa, DPR_WR_SEND, l, 0, 3000, 0, 0, 1, DPR_SEND_SIGNALED),
		 0, "send");
	rc_run(&H, cq_has, &(struct cq_wait){ H.side[0].scq, 1 }, 300000);
	CHECK(dpr_transport_stats(H.side[0].tp)->rnr_waits >= 3, "several waits");
	CHECK_EQ(post_recv(qb, r, 0, 4096, 9), 0, "recv, late");
	CHECK_EQ(wait_cq(H.side[0].scq, 1, c, SEC), 1, "completion");
	CHECK_EQ(c[0].status, DPR_WC_SUCCESS, "delivered after the waits");
	CHECK(memcmp(l->addr, r->addr, 3000) == 0, "data");
	mr_free(l);
	mr_free(r);
	fini();
	return TEST_SUCCESS;
}

static int
test_timeout_retry_exhausted(void)
{
	struct rc_faults f = { .drop_a_to_b = true };
	struct rc_conn cc;
	struct dpr_mr *l;
	struct dpr_cqe c[4];
	const struct dpr_transport_stats *s;

	rc_conn_defaults(&cc);
	cc.retry_cnt = 3;
	cc.timeout = 5;                   /* 4.096 us x 32 = 131 us */
	CHECK(conn(&f, &cc, 40) == 0, "connect");
	l = rc_mr(&H, 0, 4096, DPR_ACCESS_LOCAL_WRITE);
	CHECK_EQ(post_send(qa, DPR_WR_SEND, l, 0, 64, 0, 0, 1, 0), 0, "send");
	CHECK_EQ(post_send(qa, DPR_WR_SEND, l, 0, 64, 0, 0, 2, 0), 0, "send");
	CHECK_EQ(wait_cq(H.side[0].scq, 2, c, SEC), 2, "completions");
	CHECK_EQ(c[0].status, DPR_WC_RETRY_EXC_ERR, "retries run out");
	CHECK_EQ(c[1].status, DPR_WC_WR_FLUSH_ERR, "the next one flushed");
	s = dpr_transport_stats(H.side[0].tp);
	CHECK_EQ(s->local_ack_timeouts, 4, "timeouts: first try + 3 retries");
	CHECK_EQ(s->req_packets, 2 * 4, "each packet sent 4 times");
	CHECK(H.now >= 4 * 131072ull && H.now < 6 * 131072ull,
	      "4 timeouts of 131 us (%lu ns)", (unsigned long)H.now);
	CHECK_EQ(dpr_qp_get_state(qa), DPR_QPS_ERR, "QP in ERR");
	mr_free(l);
	fini();
	return TEST_SUCCESS;
}

/* Run until side @p side's script has a frame; take it. */
static bool
kept_frame(struct rc_harness *h, void *arg)
{
	int side = *(int *)arg;

	return h->kept_head[side] != h->kept_tail[side];
}

static struct rte_mbuf *
script_take(int side, uint64_t max_ns)
{
	if (!rc_run(&H, kept_frame, &side, max_ns))
		return NULL;
	return rc_take(&H, side);
}

/*
 * Liveness against a peer that keeps answering without progress: after a
 * READ, a response for a later PSN of it arrives every half timeout, for
 * ever (what the rest of a READ pipeline behind a lost response looks
 * like, but without end). Such responses hold the ACK timer off (the peer
 * is working), but one attempt lasts at most DPR_ACK_TIMEOUT_STRETCH
 * timeouts: the READ ends in RETRY_EXC_ERR within (retry_cnt + 1) x that.
 */
static int
test_stale_responses_bounded(void)
{
	static uint8_t payload[1024];
	struct dpr_wire_hdrs req, rsp;
	struct dpr_pkt_info pi;
	struct rc_conn cc;
	struct rte_mbuf *m;
	struct dpr_mr *l;
	struct dpr_cqe c;
	uint64_t t, start, took;

	rc_conn_defaults(&cc);
	cc.retry_cnt = 3;
	cc.timeout = 8;                   /* 1.05 ms */
	t = 4096ull << cc.timeout;
	CHECK(conn(NULL, &cc, 41) == 0, "connect");
	rc_peer_mode(&H, 1, RC_PEER_SCRIPT);
	l = rc_mr(&H, 0, 8192, DPR_ACCESS_LOCAL_WRITE);
	start = H.now;
	CHECK_EQ(post_send(qa, DPR_WR_RDMA_READ, l, 0, 8192, 0x1000, 0x1234, 1,
			   DPR_SEND_SIGNALED), 0, "READ of 8 KiB");
	m = script_take(1, MS);
	CHECK(m != NULL && dpr_wire_parse(m, &pi, 0) == DPR_WIRE_OK &&
	      pi.opcode == DPR_OP_RC_READ_REQUEST, "the READ request is on the wire");
	dpr_wire_decode(m, &pi, &req);
	rte_pktmbuf_free(m);
	memset(&rsp, 0, sizeof(rsp));
	rsp.opcode = DPR_OP_RC_READ_RESPONSE_MIDDLE;
	rsp.pkey = DPR_DEFAULT_PKEY;
	rsp.dqpn = dpr_qp_num(qa);
	rsp.psn = dpr_psn_add(req.psn, 1);       /* the first one never comes */
	rsp.aeth.syndrome = DPR_AETH_ACK | DPR_AETH_CREDIT_INVALID;
	rc_repeat(&H, 1, &rsp, payload, sizeof(payload), t / 2);
	CHECK_EQ(wait_cq(H.side[0].scq, 1, &c, 10 * SEC), 1, "the READ completes");
	took = H.now - start;
	rc_repeat(&H, 1, &rsp, NULL, 0, 0);
	CHECK_EQ(c.status, DPR_WC_RETRY_EXC_ERR, "in RETRY_EXC_ERR");
	CHECK(took <= (cc.retry_cnt + 1ull) * DPR_ACK_TIMEOUT_STRETCH * t + t,
	      "within (retry_cnt + 1) x %u timeouts (%.3f ms)",
	      DPR_ACK_TIMEOUT_STRETCH, took / 1e6);
	CHECK(took > 2 * (cc.retry_cnt + 1ull) * t,
	      "after the responses held each timeout off (%.3f ms, plain "
	      "timeouts would take %.3f ms)", took / 1e6,
	      (cc.retry_cnt + 1ull) * t / 1e6);
	printf("    READ with responses ahead of a lost one every %.3f ms: "
	       "RETRY_EXC_ERR after %.3f ms (%" PRIu64 " timeouts, %" PRIu64
	       " requests)\n", t / 2e6, took / 1e6,
	       dpr_transport_stats(H.side[0].tp)->local_ack_timeouts,
	       dpr_transport_stats(H.side[0].tp)->req_packets);
	CHECK_EQ(dpr_qp_get_state(qa), DPR_QPS_ERR, "QP in ERR");
	mr_free(l);
	fini();
	return TEST_SUCCESS;
}

/* ---------------------------------------- the adaptive retransmission timeout */

/* Exactly @p ns of virtual time pass, every event in them handled. */
static void
run_for(uint64_t ns)
{
	H.until = H.now + ns;
	while (H.now < H.until)
		rc_step(&H);
	rc_step(&H);            /* what fell due at the end */
	H.until = 0;
}

/* Frames kept for scripted side 1 after @p ns more of virtual time,
 * freed; *@p first_psn: the PSN of the first (if any). */
static uint32_t
drain_after(uint64_t ns, uint32_t *first_psn)
{
	struct rte_mbuf *m;
	uint32_t n = 0;

	run_for(ns);
	while ((m = rc_take(&H, 1)) != NULL) {
		struct dpr_pkt_info pi;
		struct dpr_wire_hdrs h;

		if (n++ == 0 && first_psn != NULL &&
		    dpr_wire_parse(m, &pi, 0) == DPR_WIRE_OK) {
			dpr_wire_decode(m, &pi, &h);
			*first_psn = h.psn;
		}
		rte_pktmbuf_free(m);
	}
	return n;
}

/* The scripted side 1 answers with an AETH of @p syndrome at @p psn. */
static void
script_aeth(uint32_t psn, uint32_t msn, uint8_t syndrome)
{
	struct dpr_wire_hdrs h;

	memset(&h, 0, sizeof(h));
	h.opcode = DPR_OP_RC_ACK;
	h.pkey = DPR_DEFAULT_PKEY;
	h.dqpn = dpr_qp_num(qa);
	h.psn = psn;
	h.aeth.syndrome = syndrome;
	h.aeth.msn = msn;
	rc_inject(&H, 1, &h, NULL, 0);
}

/* ... acknowledging everything through @p psn */
static void
script_ack(uint32_t psn, uint32_t msn)
{
	script_aeth(psn, msn, DPR_AETH_ACK | DPR_AETH_CREDIT_INVALID);
}

/* ... NAKing a sequence error: it expects @p psn */
static void
script_nak(uint32_t psn, uint32_t msn)
{
	script_aeth(psn, msn, DPR_AETH_NAK | DPR_NAK_PSN_SEQ_ERR);
}

/* One WRITE of 64 B from A, its ACK @p answer_ns after the request left.
 * @return the packets A sent again meanwhile, or UINT32_MAX if the WRITE
 * did not go out or complete. */
static uint32_t
slow_exchange(struct dpr_mr *l, struct dpr_mr *r, uint64_t answer_ns,
	      uint32_t *msn)
{
	struct dpr_pkt_info pi;
	struct dpr_wire_hdrs h;
	struct rte_mbuf *m;
	struct dpr_cqe c;
	uint64_t sent;
	uint32_t again;

	if (post_send(qa, DPR_WR_RDMA_WRITE, l, 0, 64, r->iova, r->rkey, *msn,
		      DPR_SEND_SIGNALED) != 0 ||
	    (m = script_take(1, MS)) == NULL)
		return UINT32_MAX;
	sent = H.now;
	if (dpr_wire_parse(m, &pi, 0) != DPR_WIRE_OK) {
		rte_pktmbuf_free(m);
		return UINT32_MAX;
	}
	dpr_wire_decode(m, &pi, &h);
	rte_pktmbuf_free(m);
	again = drain_after(answer_ns - RTE_MIN(answer_ns, H.now - sent), NULL);
	script_ack(h.psn, ++*msn);
	if (wait_cq(H.side[0].scq, 1, &c, MS) != 1 || c.status != DPR_WC_SUCCESS)
		return UINT32_MAX;
	return again + drain_after(0, NULL);
}

/*
 * A peer that turns slower than the RTO -- its worker naps, or shares a
 * CPU with another (the rdma_memif_faults test's write_lat rounds took
 * 8 ms for that reason) -- costs a spurious timeout or two, not one per
 * exchange for ever: a request sent again gives no RTT sample (Karn), so
 * the RTO keeps its doubling until one is taken, and the RTT learnt from
 * it keeps the timer past the peer's answers. Then, with selective
 * repeat, the second RTO of a window sends only its oldest request again
 * (the peer holds the rest), where go-back-N sends the whole window.
 */
/*
 * A go-back-N peer's NAKs during a replay: one for a point past the one
 * the replay went back to is acted on even before the replay has resent
 * it (the peer holds everything before it and waits there in silence:
 * passing it over cost an RTO pair), one for the point itself again is
 * stale and passed over; and a NAKed request whose resend is lost is sent
 * again at the first RTO, not after a probe and a second one.
 */
/* The 16 WRITEs of wr_id 0-15 complete, in order, successfully. */
static int
sixteen_complete(void)
{
	struct dpr_cqe c[16];
	int i;

	CHECK_EQ(wait_cq(H.side[0].scq, 16, c, MS), 16, "all 16 complete");
	for (i = 0; i < 16; i++)
		CHECK(c[i].status == DPR_WC_SUCCESS && c[i].wr_id == (uint64_t)i,
		      "WRITE %d completes in order", i);
	return TEST_SUCCESS;
}

/*
 * Frames injected into a selective-repeat responder's hold (a blind
 * attacker who knows B's QPN and A's address: eight WRITEs at the eight
 * PSNs past the one B expects, to bytes nobody else writes): B holds them
 * and SACKs; A, which never sent those PSNs, sends a PURGE; B drops them
 * all before A's own WRITEs fill the gap. A's eight WRITEs then complete
 * and land, the injected bytes nowhere (without the purge the first of
 * them filled the gap and the eight injected were executed after it).
 */
static int
test_sr_purge(void)
{
	struct rc_faults f = { .sr = DPR_SR_ON };
	const struct dpr_transport_stats *sa, *sb;
	struct dpr_mr *l, *r;
	struct dpr_wire_hdrs h;
	struct dpr_cqe c[8];
	struct rc_conn cc;
	uint8_t evil[64];
	int i;

	rc_conn_defaults(&cc);
	CHECK(conn(&f, &cc, 61) == 0, "connect");
	l = rc_mr(&H, 0, 4096, DPR_ACCESS_LOCAL_WRITE);
	r = rc_mr(&H, 1, 8192, DPR_ACCESS_ALL);
	memset(r->addr, 0, 8192);
	memset(evil, 0xee, sizeof(evil));
	for (i = 1; i <= 8; i++) {
		memset(&h, 0, sizeof(h));
		h.opcode = DPR_OP_RC_WRITE_ONLY;
		h.pkey = DPR_DEFAULT_PKEY;
		h.dqpn = dpr_qp_num(qb);
		h.psn = cc.psn[0] + (uint32_t)i;
		h.ackreq = true;
		h.reth.va = r->iova + 4096;
		h.reth.rkey = r->rkey;
		h.reth.len = sizeof(evil);
		CHECK_EQ(rc_inject(&H, 0, &h, evil, sizeof(evil)), 0, "inject %d", i);
	}
	rc_settle(&H, 10 * MS);
	sa = dpr_transport_stats(H.side[0].tp);
	sb = dpr_transport_stats(H.side[1].tp);
	CHECK_EQ(sb->sr_held, 8, "B held the eight");
	CHECK(sa->sack_unsent >= 1, "A saw a SACK of PSNs it never sent");
	CHECK_EQ(sb->sr_purged, 8, "B dropped the eight at A's purge");
	fill(l, 0, 512, 5);
	for (i = 0; i < 8; i++)
		CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE, l, (uint64_t)i * 64, 64,
				   r->iova + (uint64_t)i * 64, r->rkey, (uint64_t)i,
				   DPR_SEND_SIGNALED), 0, "WRITE %d", i);
	CHECK_EQ(wait_cq(H.side[0].scq, 8, c, 100 * MS), 8, "A's eight complete");
	for (i = 0; i < 8; i++)
		CHECK(c[i].status == DPR_WC_SUCCESS, "WRITE %d succeeds", i);
	CHECK(memcmp(r->addr, l->addr, 512) == 0, "A's bytes landed");
	for (i = 4096; i < 4096 + (int)sizeof(evil); i++)
		CHECK_EQ(r->addr[i], 0, "no injected byte at %d", i);
	mr_free(l);
	mr_free(r);
	fini();
	return TEST_SUCCESS;
}

/* Packet @p k of the WRITEs test_sr_place() sends: @p op at PSN base + k,
 * 1 KiB of byte k + 1, a RETH (@p va, @p len) on a FIRST or ONLY. */
static int
place_inject(uint32_t base, uint32_t k, uint8_t op, const struct dpr_mr *r,
	     uint64_t va, uint32_t len)
{
	static uint8_t pl[1024];
	struct dpr_wire_hdrs h;

	memset(&h, 0, sizeof(h));
	memset(pl, (int)k + 1, sizeof(pl));
	h.opcode = op;
	h.pkey = DPR_DEFAULT_PKEY;
	h.dqpn = dpr_qp_num(qb);
	h.psn = base + k;
	h.ackreq = op == DPR_OP_RC_WRITE_LAST || op == DPR_OP_RC_WRITE_ONLY;
	h.reth.va = va;
	h.reth.rkey = r->rkey;
	h.reth.len = len;
	return rc_inject(&H, 0, &h, pl, sizeof(pl));
}

/* Is the KiB of @p r at @p off all @p v? */
static bool
kib_is(const struct dpr_mr *r, uint32_t off, uint8_t v)
{
	for (uint32_t i = 0; i < 1024; i++)
		if (r->addr[off + i] != v)
			return false;
	return true;
}

/*
 * WRITE packets past a gap written to memory as they come (dpr_sr_place):
 * a WRITE of 5 KiB whose second packet is missing, a WRITE of 3 KiB and
 * one of 1 KiB after it, from a scripted requester. The MIDDLE packets
 * after the first past the gap (that one starts the gap's hold: the slow
 * path) and the second WRITE's FIRST and MIDDLE are written at once; each
 * LAST and ONLY is held, its bytes written only in order, when the gap
 * fills (a program polling a WRITE's last byte sees it after the rest).
 * Then every byte is where it goes, one ACK covers all three.
 */
static int
test_sr_place(void)
{
	struct rc_faults f = { .sr = DPR_SR_ON };
	const struct dpr_transport_stats *sb;
	const uint32_t K = 1024;
	uint32_t base, k;
	struct dpr_pkt_info pi;
	struct dpr_wire_hdrs h;
	struct rte_mbuf *m;
	struct dpr_mr *r;
	struct rc_conn cc;
	bool acked = false;

	rc_conn_defaults(&cc);
	CHECK(conn(&f, &cc, 62) == 0, "connect");
	rc_peer_mode(&H, 0, RC_PEER_SCRIPT);
	r = rc_mr(&H, 1, 16 * K, DPR_ACCESS_ALL);
	memset(r->addr, 0, 16 * K);
	base = cc.psn[0];
	/* WRITE 1 at 0 (packets 0-4), WRITE 2 at 8 KiB (5-7), WRITE 3 at
	 * 12 KiB (8); packet 1 missing */
	CHECK_EQ(place_inject(base, 0, DPR_OP_RC_WRITE_FIRST, r, r->iova, 5 * K), 0, "0");
	for (k = 2; k <= 3; k++)
		CHECK_EQ(place_inject(base, k, DPR_OP_RC_WRITE_MIDDLE, r, 0, 0), 0, "%u", k);
	CHECK_EQ(place_inject(base, 4, DPR_OP_RC_WRITE_LAST, r, 0, 0), 0, "4");
	CHECK_EQ(place_inject(base, 5, DPR_OP_RC_WRITE_FIRST, r, r->iova + 8 * K, 3 * K),
		 0, "5");
	CHECK_EQ(place_inject(base, 6, DPR_OP_RC_WRITE_MIDDLE, r, 0, 0), 0, "6");
	CHECK_EQ(place_inject(base, 7, DPR_OP_RC_WRITE_LAST, r, 0, 0), 0, "7");
	CHECK_EQ(place_inject(base, 8, DPR_OP_RC_WRITE_ONLY, r, r->iova + 12 * K, K),
		 0, "8");
	rc_settle(&H, 10 * MS);
	sb = dpr_transport_stats(H.side[1].tp);
	CHECK_EQ(sb->sr_held, 7, "B kept the 7 packets past the gap");
	CHECK_EQ(sb->sr_placed, 3, "3 of them written at once (3, 5, 6)");
	CHECK(kib_is(r, 0, 1) && kib_is(r, K, 0), "packet 0 written, 1 missing");
	CHECK(kib_is(r, 2 * K, 0), "packet 2 held: the first past the gap");
	CHECK(kib_is(r, 3 * K, 4), "packet 3 (MIDDLE) written on arrival");
	CHECK(kib_is(r, 4 * K, 0), "packet 4 (LAST) held");
	CHECK(kib_is(r, 8 * K, 6) && kib_is(r, 9 * K, 7),
	      "WRITE 2's FIRST and MIDDLE written on arrival");
	CHECK(kib_is(r, 10 * K, 0) && kib_is(r, 12 * K, 0),
	      "WRITE 2's LAST and WRITE 3 (ONLY) held");
	while ((m = rc_take(&H, 0)) != NULL)
		rte_pktmbuf_free(m);            /* (the SACKs) */
	CHECK_EQ(place_inject(base, 1, DPR_OP_RC_WRITE_MIDDLE, r, 0, 0), 0, "1");
	rc_settle(&H, 10 * MS);
	for (k = 0; k <= 4; k++)
		CHECK(kib_is(r, k * K, (uint8_t)(k + 1)), "WRITE 1: KiB %u", k);
	for (k = 5; k <= 7; k++)
		CHECK(kib_is(r, (k + 3) * K, (uint8_t)(k + 1)), "WRITE 2: KiB %u", k - 5);
	CHECK(kib_is(r, 12 * K, 9), "WRITE 3");
	while ((m = rc_take(&H, 0)) != NULL) {
		if (dpr_wire_parse(m, &pi, 0) == DPR_WIRE_OK) {
			dpr_wire_decode(m, &pi, &h);
			if (h.opcode == DPR_OP_RC_ACK && h.psn == base + 8 &&
			    (h.aeth.syndrome & DPR_AETH_TYPE_MASK) == DPR_AETH_ACK)
				acked = true;
		}
		rte_pktmbuf_free(m);
	}
	CHECK(acked, "B ACKs the last PSN: all three WRITEs done");
	CHECK_EQ(sb->sr_held, 7, "nothing more held");
	mr_free(r);
	fini();
	return TEST_SUCCESS;
}

static int
test_nak_during_replay(void)
{
	struct rc_faults f = { .rto_min_ns = 100000, .sr = DPR_SR_OFF };
	uint32_t first = 0, again = 0, msn = 0;
	struct dpr_mr *l, *r;
	struct rc_conn cc;
	int i;

	rc_conn_defaults(&cc);
	CHECK(conn(&f, &cc, 48) == 0, "connect");
	rc_peer_mode(&H, 1, RC_PEER_SCRIPT);
	l = rc_mr(&H, 0, 4096, DPR_ACCESS_LOCAL_WRITE);
	r = rc_mr(&H, 1, 4096, DPR_ACCESS_ALL);
	CHECK_EQ(slow_exchange(l, r, 5000, &msn), 0, "one exchange in 5 us");
	for (i = 0; i < 16; i++)
		CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE, l, 0, 64, r->iova, r->rkey,
				   i, DPR_SEND_SIGNALED), 0, "WRITE %d", i);
	CHECK_EQ(drain_after(20000, &first), 16, "16 WRITEs on the wire");
	/* a stale NAK for an early point, then the peer's news: it has up
	 * to first + 7 -- in one burst, before the replay resent anything */
	script_nak(dpr_psn_add(first, 2), msn);
	script_nak(dpr_psn_add(first, 8), msn);
	CHECK_EQ(drain_after(20000, &again), 8, "the replay starts at the "
		 "later NAK: 8 WRITEs again, not 14");
	CHECK_EQ(again, dpr_psn_add(first, 8), "from the PSN the peer waits at");
	script_nak(dpr_psn_add(first, 8), msn);
	CHECK_EQ(drain_after(20000, NULL), 0, "the same NAK again: nothing");
	/* that resend of first + 8 is lost: the peer says nothing */
	CHECK_EQ(drain_after(100000, &again), 8, "the first RTO goes back at "
		 "once (no probe: the peer NAKed and drops it)");
	CHECK_EQ(again, dpr_psn_add(first, 8), "from the NAKed PSN");
	script_ack(dpr_psn_add(first, 15), msn + 16);
	CHECK_EQ(sixteen_complete(), TEST_SUCCESS, "all 16 complete, in order");
	mr_free(l);
	mr_free(r);
	fini();
	return TEST_SUCCESS;
}

/* A connection (@p seed) to a scripted peer, one exchange answered in
 * 5 us, then 16 WRITEs of 64 B at once, all on the wire: the first's PSN
 * in @p first. */
static int
sixteen_writes(const struct rc_faults *f, uint64_t seed, struct dpr_mr **l,
	       struct dpr_mr **r, uint32_t *msn, uint32_t *first)
{
	struct rc_conn cc;
	int i;

	rc_conn_defaults(&cc);
	*msn = 0;
	CHECK(conn(f, &cc, seed) == 0, "connect");
	rc_peer_mode(&H, 1, RC_PEER_SCRIPT);
	*l = rc_mr(&H, 0, 4096, DPR_ACCESS_LOCAL_WRITE);
	*r = rc_mr(&H, 1, 4096, DPR_ACCESS_ALL);
	CHECK_EQ(slow_exchange(*l, *r, 5000, msn), 0, "one exchange in 5 us");
	for (i = 0; i < 16; i++)
		CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE, *l, 0, 64, (*r)->iova,
				   (*r)->rkey, i, DPR_SEND_SIGNALED), 0, "WRITE %d", i);
	CHECK_EQ(drain_after(10000, first), 16, "16 WRITEs on the wire");
	return TEST_SUCCESS;
}

/* The scripted peer acknowledges the 16 WRITEs from @p first (MSN @p
 * msn before them): all complete, in order; the connection goes. */
static int
sixteen_acked(uint32_t first, uint32_t msn, struct dpr_mr *l, struct dpr_mr *r)
{
	script_ack(dpr_psn_add(first, 15), msn + 16);
	CHECK_EQ(sixteen_complete(), TEST_SUCCESS, "all 16 complete, in order");
	mr_free(l);
	mr_free(r);
	fini();
	return TEST_SUCCESS;
}

static int
test_rto_slow_peer(void)
{
	struct rc_faults f = { .rto_min_ns = 100000 };
	uint32_t msn = 0, again, first = 0, late = 0, probe = 0, oldest = 0;
	struct dpr_mr *l, *r;
	struct rc_conn cc;
	int i, sr;

	rc_conn_defaults(&cc);
	CHECK(conn(&f, &cc, 46) == 0, "connect");
	rc_peer_mode(&H, 1, RC_PEER_SCRIPT);
	l = rc_mr(&H, 0, 4096, DPR_ACCESS_LOCAL_WRITE);
	r = rc_mr(&H, 1, 4096, DPR_ACCESS_ALL);
	for (i = 0; i < 5; i++)
		CHECK_EQ(slow_exchange(l, r, 5000, &msn), 0,
			 "exchange %d answered in 5 us: nothing sent again", i);
	for (i = 0; i < 20; i++) {
		again = slow_exchange(l, r, 450000, &msn);
		CHECK(again != UINT32_MAX, "exchange %d answered in 450 us completes", i);
		first += i < 10 ? again : 0;
		late += i >= 10 ? again : 0;
	}
	printf("    a peer 450 us slow where the RTO was 100 us: %u packets sent "
	       "again in the first 10 exchanges, %u in the next 10\n", first, late);
	CHECK(first <= 4, "the first 10 exchanges sent at most 4 packets again "
	      "(%u; without Karn's rule 2 each)", first);
	CHECK_EQ(late, 0, "the next 10 none: the RTO learnt the peer's RTT");
	mr_free(l);
	mr_free(r);
	fini();

	for (sr = 0; sr < 2; sr++) {
		f.sr = sr ? DPR_SR_ON : DPR_SR_OFF;
		/* RTOs at 100 us (a probe: the newest to a peer with
		 * selective repeat, the oldest to a go-back-N one) and
		 * 300 us, not 700 us */
		CHECK_EQ(sixteen_writes(&f, 47, &l, &r, &msn, &first), TEST_SUCCESS,
			 "16 WRITEs on the wire at once");
		CHECK_EQ(drain_after(100000, &probe), 1, "first RTO: one probe");
		if (sr)
			CHECK_EQ(probe, dpr_psn_add(first, 15), "the probe is the newest");
		else
			CHECK_EQ(probe, first, "the probe is the oldest");
		again = drain_after(300000, &oldest);
		CHECK_EQ(oldest, first, "second RTO: from the oldest");
		if (sr)
			CHECK_EQ(again, 1, "with selective repeat, the oldest alone");
		else
			CHECK_EQ(again, 16, "going back N, all 16 again");
		CHECK_EQ(sixteen_acked(first, msn, l, r), TEST_SUCCESS,
			 "all 16 acknowledged and complete");
	}
	return TEST_SUCCESS;
}

/*
 * With the RTO's floor at 30 us, a tail probe to a peer with selective
 * repeat waits for DPR_SR_PROBE_MIN_NS (100 us) without progress -- a
 * stream's ACKs stopping that long on a shared core were no lost tail --
 * while a go-back-N peer's head probe goes at the RTO. Fails if the
 * tail probe goes at 30 us, or never.
 */
static int
test_tail_probe_waits(void)
{
	struct rc_faults f = { .rto_min_ns = 30000 };
	struct dpr_mr *l, *r;
	uint32_t msn = 0, first = 0, probe = 0;
	int sr;

	for (sr = 0; sr < 2; sr++) {
		f.sr = sr ? DPR_SR_ON : DPR_SR_OFF;
		CHECK_EQ(sixteen_writes(&f, 48, &l, &r, &msn, &first), TEST_SUCCESS,
			 "16 WRITEs on the wire at once");
		if (sr) {
			CHECK_EQ(drain_after(80000, NULL), 0,
				 "90 us: the tail probe waits");
			CHECK_EQ(drain_after(15000, &probe), 1,
				 "past 100 us: one probe");
			CHECK_EQ(probe, dpr_psn_add(first, 15), "the newest");
		} else {
			CHECK_EQ(drain_after(30000, &probe), 1,
				 "going back N, the head probe at 30 us");
			CHECK_EQ(probe, first, "the oldest");
		}
		CHECK_EQ(sixteen_acked(first, msn, l, r), TEST_SUCCESS,
			 "all 16 acknowledged and complete");
	}
	return TEST_SUCCESS;
}

/*
 * A READ answered in full, its memory deregistered since (UCX's
 * rendezvous: the requester completes the READ and says so, and the
 * responder's program lets the memory go), then asked again -- a
 * timeout that came too soon, the request late on the wire. The
 * responder gives the duplicate up without a NAK (read_replays_gone) and
 * stays in RTS; and a NAK of a PSN the requester has completed is stale:
 * dropped (dup_response_rx), the requester stays in RTS. The QPs carry on.
 * (Both failed an Open MPI allreduce between two yielding boxes.)
 */
static int
test_read_again_memory_gone(void)
{
	struct rc_faults f = { 0 };
	const struct dpr_transport_stats *sa, *sb;
	uint64_t dup_a;
	struct dpr_mr *l, *r;
	struct dpr_wire_hdrs h;
	struct dpr_cqe c[2];
	struct rc_conn cc;
	uint64_t r_iova;
	uint32_t r_rkey;

	rc_conn_defaults(&cc);
	CHECK(conn(&f, &cc, 67) == 0, "connect");
	l = rc_mr(&H, 0, 8192, DPR_ACCESS_LOCAL_WRITE);
	r = rc_mr(&H, 1, 8192, DPR_ACCESS_ALL);
	fill(r, 0, 8192, 9);
	r_iova = r->iova;
	r_rkey = r->rkey;
	CHECK_EQ(post_send(qa, DPR_WR_RDMA_READ, l, 0, 8192, r_iova, r_rkey, 1,
			   DPR_SEND_SIGNALED), 0, "READ 8 KiB");
	CHECK_EQ(wait_cq(H.side[0].scq, 1, c, 100 * MS), 1, "the READ completes");
	CHECK(c[0].status == DPR_WC_SUCCESS && memcmp(l->addr, r->addr, 8192) == 0,
	      "with B's bytes");
	mr_free(r);
	/* the READ again, as A sent it */
	memset(&h, 0, sizeof(h));
	h.opcode = DPR_OP_RC_READ_REQUEST;
	h.pkey = DPR_DEFAULT_PKEY;
	h.dqpn = dpr_qp_num(qb);
	h.psn = cc.psn[0];
	h.reth.va = r_iova;
	h.reth.rkey = r_rkey;
	h.reth.len = 8192;
	CHECK_EQ(rc_inject(&H, 0, &h, NULL, 0), 0, "the duplicate READ");
	rc_settle(&H, 10 * MS);
	sb = dpr_transport_stats(H.side[1].tp);
	CHECK_EQ(sb->read_replays_gone, 1, "B gave it up");
	CHECK_EQ(sb->nak_err_tx, 0, "without a NAK");
	CHECK_EQ(dpr_qp_get_state(qb), DPR_QPS_RTS, "B's QP in RTS");
	/* a remote access NAK of that PSN, as a responder that sent one */
	sa = dpr_transport_stats(H.side[0].tp);
	dup_a = sa->dup_response_rx;
	memset(&h, 0, sizeof(h));
	h.opcode = DPR_OP_RC_ACK;
	h.pkey = DPR_DEFAULT_PKEY;
	h.dqpn = dpr_qp_num(qa);
	h.psn = cc.psn[0];
	h.aeth.syndrome = DPR_AETH_NAK | DPR_NAK_REM_ACCESS_ERR;
	CHECK_EQ(rc_inject(&H, 1, &h, NULL, 0), 0, "a stale NAK");
	rc_settle(&H, 10 * MS);
	CHECK_EQ(sa->dup_response_rx, dup_a + 1, "A took it for stale");
	CHECK_EQ(sa->nak_err_rx, 0, "not for an error");
	CHECK_EQ(dpr_qp_get_state(qa), DPR_QPS_RTS, "A's QP in RTS");
	/* and on they go */
	r = rc_mr(&H, 1, 8192, DPR_ACCESS_ALL);
	fill(l, 0, 64, 3);
	CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE, l, 0, 64, r->iova, r->rkey, 2,
			   DPR_SEND_SIGNALED), 0, "a WRITE");
	CHECK_EQ(wait_cq(H.side[0].scq, 1, c, 100 * MS), 1, "it completes");
	CHECK(c[0].status == DPR_WC_SUCCESS && memcmp(l->addr, r->addr, 64) == 0,
	      "its bytes landed");
	mr_free(l);
	mr_free(r);
	fini();
	return TEST_SUCCESS;
}

/*
 * What a yielding worker asks before it naps: the earliest timer due at
 * or before a limit, looking only at the wheel's slots up to it. With 16
 * WRITEs on the wire, the requester's RTO is armed: asked up to it or
 * past it (a nap, a turn of the wheel and more) the answer is that
 * deadline; asked short of it, none.
 */
static int
test_next_timer_before(void)
{
	struct rc_faults f = { .rto_min_ns = 30000, .sr = DPR_SR_OFF };
	struct dpr_transport *tp;
	struct dpr_mr *l, *r;
	uint32_t msn = 0, first = 0;
	uint64_t due;

	CHECK_EQ(sixteen_writes(&f, 48, &l, &r, &msn, &first), TEST_SUCCESS,
		 "16 WRITEs on the wire at once");
	tp = H.side[0].tp;
	due = dpr_transport_next_timer(tp);
	CHECK(due != UINT64_MAX && due > H.now, "an RTO armed ahead");
	CHECK_EQ(dpr_transport_next_timer_before(tp, due), due, "up to it: it");
	CHECK_EQ(dpr_transport_next_timer_before(tp, due + 100000), due,
		 "a nap past it: it");
	CHECK_EQ(dpr_transport_next_timer_before(tp, H.now + 40000000ull), due,
		 "past a turn of the wheel: it");
	CHECK_EQ(dpr_transport_next_timer_before(tp, due - 1), UINT64_MAX,
		 "short of it: none");
	CHECK_EQ(dpr_transport_next_timer_before(tp, H.now), UINT64_MAX,
		 "now: none");
	CHECK_EQ(drain_after(30000, NULL), 1, "the probe at 30 us");
	CHECK_EQ(sixteen_acked(first, msn, l, r), TEST_SUCCESS,
		 "all 16 acknowledged and complete");
	return TEST_SUCCESS;
}

/*
 * A go-back-N peer whose one NAK for a gap was lost waits at the gap and
 * drops the rest without a word. The first RTO's head probe is the PSN it
 * waits at: it takes it and ACKs exactly it, and the requester goes back
 * past it at once, not at a second RTO. Where only ACKs were lost, the
 * answer to the probe (a duplicate) acknowledges everything: nothing
 * more is sent.
 */
static int
test_probe_lost_nak(void)
{
	struct rc_faults f = { .rto_min_ns = 100000, .sr = DPR_SR_OFF };
	uint32_t msn = 0, first = 0, probe = 0, again = 0;
	struct dpr_mr *l, *r;
	int dup;

	for (dup = 0; dup < 2; dup++) {
		CHECK_EQ(sixteen_writes(&f, 48, &l, &r, &msn, &first), TEST_SUCCESS,
			 "16 WRITEs on the wire at once");
		/* (the peer lost the first: its NAK, or all its ACKs, lost) */
		CHECK_EQ(drain_after(100000, &probe), 1, "first RTO: one probe");
		CHECK_EQ(probe, first, "the head probe: the oldest");
		if (dup) {
			script_ack(dpr_psn_add(first, 15), msn + 16);
			CHECK_EQ(drain_after(20000, NULL), 0, "a duplicate's answer "
				 "covers all: nothing sent again");
		} else {
			script_ack(first, msn + 1);
			CHECK_EQ(drain_after(20000, &again), 15, "the probe taken "
				 "as the next in order: the 15 after it again");
			CHECK_EQ(again, dpr_psn_add(first, 1), "from past the probe");
			script_ack(dpr_psn_add(first, 15), msn + 16);
		}
		CHECK_EQ(sixteen_complete(), TEST_SUCCESS, "all 16 complete, in order");
		CHECK_EQ(dpr_transport_stats(H.side[0].tp)->probe_gobacks, dup ? 0 : 1,
			 "probe_gobacks");
		mr_free(l);
		mr_free(r);
		fini();
	}
	return TEST_SUCCESS;
}

/* ------------------------------------------ memory back to its owner */

static void
count_release(void *arg)
{
	(*(int *)arg)++;
}

/*
 * An MR's memory goes back to its owner exactly once: at deregistration
 * when no frame points into it, else when the last such frame has gone
 * (payload attached from the MR, zero copy), never before.
 */
static int
test_mr_owner_release(void)
{
	struct rc_faults f = { .zero_copy_min = 256 };
	int released = 0;
	struct dpr_mr_owner own = { count_release, &released };
	struct dpr_mr *l, *r;
	struct dpr_cqe c;
	uint8_t *buf;

	/* copied payload: nothing holds the memory past the MR */
	CHECK(conn(NULL, NULL, 44) == 0, "connect");
	buf = aligned_alloc(64, 65536);
	l = dpr_mr_reg_owned(H.side[0].pd, buf, (uintptr_t)buf, 65536,
			     DPR_ACCESS_LOCAL_WRITE, &own);
	CHECK(l != NULL, "owned MR");
	CHECK_EQ(dpr_mr_dereg(l), 0, "dereg");
	CHECK_EQ(released, 1, "given back at deregistration, once");
	fini();

	/* attached payload: the frames in flight hold it */
	released = 0;
	CHECK(conn(&f, NULL, 45) == 0, "connect (zero copy)");
	l = dpr_mr_reg_owned(H.side[0].pd, buf, (uintptr_t)buf, 65536,
			     DPR_ACCESS_LOCAL_WRITE, &own);
	r = rc_mr(&H, 1, 65536, DPR_ACCESS_ALL);
	CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE, l, 0, 65536, r->iova, r->rkey,
			   1, DPR_SEND_SIGNALED), 0, "WRITE of 64 KiB");
	rc_step(&H);                      /* its first frames on the link */
	CHECK(H.n > 0, "frames attached to the MR in flight (%u)", H.n);
	CHECK_EQ(dpr_mr_dereg(l), 0, "dereg with frames in flight");
	CHECK_EQ(released, 0, "not given back while frames point into it");
	CHECK_EQ(wait_cq(H.side[0].scq, 1, &c, SEC), 1, "the WRITE completes");
	CHECK_EQ(c.status, DPR_WC_LOC_PROT_ERR, "its key gone mid-message");
	rc_settle(&H, SEC);
	CHECK_EQ(released, 1, "given back after the last frame, once");
	mr_free(r);
	fini();
	free(buf);
	return TEST_SUCCESS;
}

/* ------------------------------------- the responder's READ resources */

struct frame {
	uint8_t opcode;
	uint32_t psn;
	uint8_t syndrome;
	uint32_t msn;
};

/* Up to @p max frames delivered to scripted side @p side (waiting up to
 * @p max_ns for the first, then taking what follows it), decoded. */
static uint32_t
take_frames(int side, struct frame *out, uint32_t max, uint64_t max_ns)
{
	uint32_t n = 0;
	struct rte_mbuf *m = script_take(side, max_ns);

	while (m != NULL && n < max) {
		struct dpr_pkt_info pi;
		struct dpr_wire_hdrs h;

		if (dpr_wire_parse(m, &pi, 0) == DPR_WIRE_OK) {
			dpr_wire_decode(m, &pi, &h);
			out[n++] = (struct frame){ pi.opcode, h.psn, h.aeth.syndrome,
						   h.aeth.msn };
		}
		rte_pktmbuf_free(m);
		rc_settle(&H, MS);
		m = rc_take(&H, side);
	}
	if (m != NULL)
		rte_pktmbuf_free(m);
	return n;
}

/* B, played by hand, sends READ requests of 64 B for A's MR, PSNs
 * @p psn..psn + n - 1, in one burst. */
static void
inject_reads(uint32_t psn, uint32_t n, const struct dpr_mr *mr)
{
	struct dpr_wire_hdrs h;
	uint32_t i;

	for (i = 0; i < n; i++) {
		memset(&h, 0, sizeof(h));
		h.opcode = DPR_OP_RC_READ_REQUEST;
		h.pkey = DPR_DEFAULT_PKEY;
		h.dqpn = dpr_qp_num(qa);
		h.psn = dpr_psn_add(psn, (int32_t)i);
		h.ackreq = true;
		h.reth.va = mr->iova + 64 * ((psn + i) % 16);
		h.reth.rkey = mr->rkey;
		h.reth.len = 64;
		rc_inject(&H, 1, &h, NULL, 0);
	}
}

/*
 * READs queued behind each other at the responder: each READ's responses
 * carry the MSN of that READ (C9-148: a READ counts for the MSN when it is
 * accepted), not the MSN of the last request accepted when they leave, so
 * a requester that completes by MSN (NICs do) completes the right work.
 * Beyond max_dest_rd_atomic READs waiting at once: the spec's "too many
 * RDMA READ or ATOMIC requests" (IBA 9.9.3.1, class C): NAK Invalid
 * Request at the first PSN too many, QP to ERR (not a PSN sequence NAK).
 */
static int
test_read_resources_and_msn(void)
{
	struct frame f[16];
	struct rc_conn cc;
	struct dpr_mr *r;
	uint32_t n, i, psn;

	rc_conn_defaults(&cc);
	cc.rd_atomic = 4;                 /* max_dest_rd_atomic of A's QP */
	psn = cc.psn[1];                  /* what A's responder expects */
	CHECK(conn(NULL, &cc, 42) == 0, "connect");
	rc_peer_mode(&H, 1, RC_PEER_SCRIPT);
	r = rc_mr(&H, 0, 4096, DPR_ACCESS_ALL);

	/* four READs in one burst: all four wait at once, answered in order */
	inject_reads(psn, 4, r);
	n = take_frames(1, f, RTE_DIM(f), MS);
	CHECK_EQ(n, 4, "four responses");
	for (i = 0; i < n; i++) {
		CHECK(f[i].opcode == DPR_OP_RC_READ_RESPONSE_ONLY &&
		      f[i].psn == dpr_psn_add(psn, (int32_t)i) &&
		      f[i].syndrome == (DPR_AETH_ACK | DPR_AETH_CREDIT_INVALID),
		      "response %u: READ_RESPONSE_ONLY at its request's PSN", i);
		CHECK_EQ(f[i].msn, i + 1, "response %u carries its READ's MSN", i);
	}
	/* a late duplicate of the first READ and a new one in one burst: the
	 * new one recycles the oldest slot and the stale replay is given up */
	inject_reads(psn, 1, r);
	inject_reads(dpr_psn_add(psn, 4), 1, r);
	n = take_frames(1, f, RTE_DIM(f), MS);
	CHECK(n == 1 && f[0].opcode == DPR_OP_RC_READ_RESPONSE_ONLY &&
	      f[0].psn == dpr_psn_add(psn, 4) && f[0].msn == 5,
	      "a stale duplicate gives way to a new READ (%u frames, MSN %u)",
	      n, n ? f[0].msn : 0);
	/* a duplicate of the newest-but-one and a new READ: the replay keeps
	 * its READ's MSN, then the new one, in PSN order */
	inject_reads(dpr_psn_add(psn, 3), 1, r);
	inject_reads(dpr_psn_add(psn, 5), 1, r);
	n = take_frames(1, f, RTE_DIM(f), MS);
	CHECK(n == 2 && f[0].psn == dpr_psn_add(psn, 3) && f[0].msn == 4 &&
	      f[1].psn == dpr_psn_add(psn, 5) && f[1].msn == 6,
	      "a replayed READ carries its own MSN (4), the next its own (6)");
	CHECK_EQ(dpr_qp_get_state(qa), DPR_QPS_RTS, "A's QP still in RTS");

	/* eight new READs at once against four resources */
	psn = dpr_psn_add(psn, 6);
	inject_reads(psn, 8, r);
	n = take_frames(1, f, RTE_DIM(f), MS);
	CHECK_EQ(n, 5, "four responses and a NAK");
	for (i = 0; i < 4; i++)
		CHECK(f[i].opcode == DPR_OP_RC_READ_RESPONSE_ONLY &&
		      f[i].psn == dpr_psn_add(psn, (int32_t)i) && f[i].msn == 7 + i,
		      "response %u: PSN and MSN %u of its READ", i, 7 + i);
	CHECK(f[4].opcode == DPR_OP_RC_ACK &&
	      f[4].syndrome == (DPR_AETH_NAK | DPR_NAK_INVALID_REQ) &&
	      f[4].psn == dpr_psn_add(psn, 4),
	      "then NAK Invalid Request (syndrome 0x%02x) at the fifth READ's PSN",
	      f[4].syndrome);
	CHECK_EQ(dpr_qp_get_state(qa), DPR_QPS_ERR, "A's QP in ERR (class C)");
	CHECK_EQ(dpr_transport_stats(H.side[0].tp)->rd_atomic_over, 1,
		 "counted in rd_atomic_over");
	CHECK_EQ(H.side[0].events[DPR_EVENT_QP_REQ_ERR], 1, "QP_REQ_ERR event");
	mr_free(r);
	fini();

	/* the same seen by a requester of ours set up for 8 outstanding
	 * against 4 resources: the READs the responder accepted complete with
	 * their data, the fifth with REM_INV_REQ_ERR, the rest flushed */
	rc_conn_defaults(&cc);
	cc.rd_atomic = 8;
	cc.dest_rd_atomic[1] = 4;
	CHECK(conn(NULL, &cc, 43) == 0, "connect");
	{
		struct dpr_mr *l = rc_mr(&H, 0, 4096, DPR_ACCESS_LOCAL_WRITE);
		struct dpr_cqe c[8];

		r = rc_mr(&H, 1, 4096, DPR_ACCESS_ALL);
		fill(r, 0, 4096, 7);
		for (i = 0; i < 8; i++)
			CHECK_EQ(post_send(qa, DPR_WR_RDMA_READ, l, 64 * i, 64,
					   r->iova + 64 * i, r->rkey, i,
					   DPR_SEND_SIGNALED), 0, "READ %u", i);
		CHECK_EQ(wait_cq(H.side[0].scq, 8, c, SEC), 8, "eight completions");
		for (i = 0; i < 8; i++)
			CHECK_EQ(c[i].status, i < 4 ? DPR_WC_SUCCESS : i == 4 ?
				 DPR_WC_REM_INV_REQ_ERR : DPR_WC_WR_FLUSH_ERR,
				 "READ %u: status", i);
		CHECK(memcmp(l->addr, r->addr, 4 * 64) == 0,
		      "the four accepted READs brought their bytes");
		mr_free(l);
		mr_free(r);
	}
	fini();
	return TEST_SUCCESS;
}

/* ----------------------------------------------------- PSN and loss */

static int
test_psn_wrap(void)
{
	struct rc_conn cc;
	struct dpr_mr *l, *r;
	struct dpr_cqe c[4];

	rc_conn_defaults(&cc);
	cc.psn[0] = 0xfffff0;
	cc.psn[1] = 0xfffffe;
	cc.mtu = DPR_MTU_256;
	CHECK(conn(NULL, &cc, 50) == 0, "connect");
	l = rc_mr(&H, 0, 1 << 16, DPR_ACCESS_LOCAL_WRITE);
	r = rc_mr(&H, 1, 1 << 16, DPR_ACCESS_ALL);
	fill(l, 0, 32768, 5);
	/* 64 packets from 0xfffff0: across the wrap, then READ across it */
	CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE, l, 0, 16384, r->iova, r->rkey, 1,
			   DPR_SEND_SIGNALED), 0, "write");
	CHECK_EQ(post_send(qa, DPR_WR_RDMA_READ, l, 32768, 16384, r->iova, r->rkey,
			   2, DPR_SEND_SIGNALED), 0, "read");
	CHECK_EQ(post_send(qb, DPR_WR_RDMA_WRITE, NULL, 0, 0, 0, 0, 3,
			   DPR_SEND_SIGNALED), 0, "zero write the other way");
	CHECK_EQ(wait_cq(H.side[0].scq, 2, c, SEC), 2, "done");
	CHECK(c[0].status == 0 && c[1].status == 0, "success across the wrap");
	CHECK(memcmp(l->addr, r->addr, 16384) == 0, "written");
	CHECK(memcmp(l->addr + 32768, r->addr, 16384) == 0, "read back");
	CHECK_EQ(wait_cq(H.side[1].scq, 1, c, SEC), 1, "B's write");
	CHECK_EQ(c[0].status, 0, "B's PSN wrapped too");
	{
		struct dpr_qp_attr a;

		dpr_qp_query(qa, &a);
		CHECK_EQ(a.sq_psn, (0xfffff0 + 64 + 64) & 0xffffff, "sq_psn wrapped");
	}
	mr_free(l);
	mr_free(r);
	fini();
	return TEST_SUCCESS;
}

static int
test_nak_sequence_go_back_n(void)
{
	struct rc_faults f = { .loss = 0.05 };
	struct dpr_mr *l, *r;
	struct dpr_cqe c[64];
	const struct dpr_transport_stats *sa, *sb;
	int i, n = 0;

	CHECK(conn(&f, NULL, 60) == 0, "connect");
	l = rc_mr(&H, 0, 1 << 20, DPR_ACCESS_LOCAL_WRITE);
	r = rc_mr(&H, 1, 1 << 20, DPR_ACCESS_ALL);
	fill(l, 0, 1 << 20, 9);
	for (i = 0; i < 16; i++)
		CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE, l, (uint64_t)i << 16, 1 << 16,
				   r->iova + ((uint64_t)i << 16), r->rkey, i,
				   DPR_SEND_SIGNALED), 0, "write");
	while (n < 16) {
		int k = wait_cq(H.side[0].scq, 1, c + n, 10 * SEC);

		CHECK(k == 1, "completion %d", n);
		CHECK(c[n].status == 0 && c[n].wr_id == (uint64_t)n,
		      "in order, successful: %d (status %u)", n, c[n].status);
		n++;
	}
	CHECK(memcmp(l->addr, r->addr, 1 << 20) == 0, "1 MiB intact through 5%% loss");
	sa = dpr_transport_stats(H.side[0].tp);
	sb = dpr_transport_stats(H.side[1].tp);
	CHECK(sb->nak_seq_tx > 0 && sa->nak_seq_rx > 0 && sa->retransmits > 0,
	      "sequence NAKs and retransmissions happened (%lu NAKs, %lu resent)",
	      (unsigned long)sb->nak_seq_tx, (unsigned long)sa->retransmits);
	mr_free(l);
	mr_free(r);
	fini();
	return TEST_SUCCESS;
}

static int
test_flush_and_unsignaled(void)
{
	struct dpr_mr *l, *r;
	struct dpr_cqe c[8];
	struct dpr_qp_attr a = { .qp_state = DPR_QPS_ERR };
	int i;

	CHECK(conn(NULL, NULL, 70) == 0, "connect");
	l = rc_mr(&H, 0, 4096, DPR_ACCESS_LOCAL_WRITE);
	r = rc_mr(&H, 1, 4096, DPR_ACCESS_ALL);
	for (i = 0; i < 4; i++)
		CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE, l, 0, 64, r->iova, r->rkey,
				   i, i == 3 ? DPR_SEND_SIGNALED : 0), 0, "post");
	CHECK_EQ(wait_cq(H.side[0].scq, 1, c, SEC), 1, "one completion");
	CHECK_EQ(c[0].wr_id, 3, "only the signaled one");
	rc_settle(&H, SEC);
	CHECK_EQ(dpr_cq_count(H.side[0].scq), 0, "and no other");

	/* into ERR with work outstanding: every WQE and receive flushed */
	for (i = 0; i < 3; i++)
		CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE, l, 0, 64, r->iova, r->rkey,
				   10 + i, 0), 0, "post");
	CHECK_EQ(post_recv(qa, l, 0, 64, 20), 0, "recv");
	CHECK_EQ(dpr_qp_modify(qa, &a, DPR_QP_STATE), 0, "to ERR");
	CHECK_EQ(dpr_cq_poll(H.side[0].scq, c, 8), 3, "3 sends flushed");
	CHECK_EQ(dpr_cq_poll(H.side[0].rcq, c + 3, 5), 1, "1 receive flushed");
	for (i = 0; i < 4; i++)
		CHECK_EQ(c[i].status, DPR_WC_WR_FLUSH_ERR, "flush %d", i);
	CHECK(c[3].wr_id == 20 && c[3].opcode == DPR_WC_RECV, "the receive");
	CHECK_EQ(post_send(qa, DPR_WR_SEND, l, 0, 8, 0, 0, 30, 0), 0,
		 "posting in ERR is allowed");
	CHECK_EQ(dpr_cq_poll(H.side[0].scq, c, 8), 1, "and flushed at once");
	CHECK(c[0].wr_id == 30 && c[0].status == DPR_WC_WR_FLUSH_ERR, "flushed");
	mr_free(l);
	mr_free(r);
	fini();
	return TEST_SUCCESS;
}

static int
test_rd_atomic_limit_and_fence(void)
{
	struct rc_conn cc;
	struct dpr_mr *l, *r;
	struct dpr_cqe c[16];
	int i;

	rc_conn_defaults(&cc);
	cc.rd_atomic = 1;
	CHECK(conn(NULL, &cc, 80) == 0, "connect");
	l = rc_mr(&H, 0, 1 << 16, DPR_ACCESS_LOCAL_WRITE);
	r = rc_mr(&H, 1, 1 << 16, DPR_ACCESS_ALL);
	fill(r, 0, 1 << 16, 4);
	for (i = 0; i < 8; i++)
		CHECK_EQ(post_send(qa, DPR_WR_RDMA_READ, l, (uint64_t)i * 4096, 4096,
				   r->iova + (uint64_t)i * 4096, r->rkey, i,
				   DPR_SEND_SIGNALED), 0, "read");
	/* fenced: waits for the READs before it */
	CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE, l, 0, 4096, r->iova + 32768,
			   r->rkey, 8, DPR_SEND_SIGNALED | DPR_SEND_FENCE), 0, "w");
	CHECK_EQ(wait_cq(H.side[0].scq, 9, c, SEC), 9, "done");
	for (i = 0; i < 9; i++)
		CHECK(c[i].status == 0 && c[i].wr_id == (uint64_t)i, "in order %d", i);
	CHECK(memcmp(l->addr, r->addr, 32768) == 0, "read data");
	CHECK(memcmp(l->addr, r->addr + 32768, 4096) == 0,
	      "the fenced WRITE sent what the READ brought");
	CHECK_EQ(dpr_transport_stats(H.side[0].tp)->local_ack_timeouts, 0,
		 "never more READs outstanding than the responder takes");
	mr_free(l);
	mr_free(r);
	fini();
	return TEST_SUCCESS;
}


/* NAK remote operational error: the responder's receive WQE names a key
 * that does not exist (rxe: a malformed WQE). */
static int
test_remote_op_error(void)
{
	struct dpr_mr *l, *r;
	struct dpr_cqe c[2];
	struct dpr_recv_wr wr = { .wr_id = 8, .num_sge = 1 };
	struct dpr_sge sge;

	CHECK(conn(NULL, NULL, 22) == 0, "connect");
	l = rc_mr(&H, 0, 4096, DPR_ACCESS_LOCAL_WRITE);
	r = rc_mr(&H, 1, 4096, DPR_ACCESS_LOCAL_WRITE);
	sge.addr = r->iova;
	sge.length = 4096;
	sge.lkey = r->lkey ^ 0x5a;          /* no such key */
	wr.sge[0] = sge;
	CHECK_EQ(dpr_post_recv(qb, &wr, 1, NULL), 0, "recv");
	CHECK_EQ(post_send(qa, DPR_WR_SEND, l, 0, 100, 0, 0, 1, DPR_SEND_SIGNALED),
		 0, "send");
	CHECK_EQ(wait_cq(H.side[0].scq, 1, c, SEC), 1, "completion");
	CHECK_EQ(c[0].status, DPR_WC_REM_OP_ERR, "requester: REM_OP_ERR");
	CHECK_EQ(wait_cq(H.side[1].rcq, 1, c, SEC), 1, "recv completion");
	CHECK(c[0].status == DPR_WC_LOC_PROT_ERR && c[0].wr_id == 8,
	      "responder: LOC_PROT_ERR on the receive (got %u)", c[0].status);
	mr_free(l);
	mr_free(r);
	fini();
	return TEST_SUCCESS;
}

/* Every (from, to) pair of RC states, as IBA 10.3.1 fig. 114 allows them,
 * with the masks of IBA 11.2.4.2: each required bit missing, each bit the
 * transition does not take added: EINVAL with nothing changed. */
static const uint32_t REQ_INIT = DPR_QP_PKEY_INDEX | DPR_QP_PORT |
	DPR_QP_ACCESS_FLAGS;
static const uint32_t REQ_RTR = DPR_QP_AV | DPR_QP_PATH_MTU | DPR_QP_DEST_QPN |
	DPR_QP_RQ_PSN | DPR_QP_MAX_DEST_RD_ATOMIC | DPR_QP_MIN_RNR_TIMER;
static const uint32_t REQ_RTS = DPR_QP_TIMEOUT | DPR_QP_RETRY_CNT |
	DPR_QP_RNR_RETRY | DPR_QP_SQ_PSN | DPR_QP_MAX_QP_RD_ATOMIC;

struct trans_case {
	enum dpr_qp_state from, to;
	uint32_t req, opt;
};

static const struct trans_case allowed[] = {
	{ DPR_QPS_RESET, DPR_QPS_RESET, 0, 0 },
	{ DPR_QPS_RESET, DPR_QPS_INIT, REQ_INIT, 0 },
	{ DPR_QPS_RESET, DPR_QPS_ERR, 0, 0 },
	{ DPR_QPS_INIT, DPR_QPS_RESET, 0, 0 },
	{ DPR_QPS_INIT, DPR_QPS_INIT, 0, REQ_INIT },
	{ DPR_QPS_INIT, DPR_QPS_RTR, REQ_RTR, DPR_QP_ALT_PATH | DPR_QP_ACCESS_FLAGS |
	  DPR_QP_PKEY_INDEX },
	{ DPR_QPS_INIT, DPR_QPS_ERR, 0, 0 },
	{ DPR_QPS_RTR, DPR_QPS_RESET, 0, 0 },
	{ DPR_QPS_RTR, DPR_QPS_RTS, REQ_RTS, DPR_QP_CUR_STATE | DPR_QP_ALT_PATH |
	  DPR_QP_ACCESS_FLAGS | DPR_QP_MIN_RNR_TIMER | DPR_QP_PATH_MIG_STATE },
	{ DPR_QPS_RTR, DPR_QPS_ERR, 0, 0 },
	{ DPR_QPS_RTS, DPR_QPS_RESET, 0, 0 },
	{ DPR_QPS_RTS, DPR_QPS_RTS, 0, DPR_QP_CUR_STATE | DPR_QP_ACCESS_FLAGS |
	  DPR_QP_ALT_PATH | DPR_QP_PATH_MIG_STATE | DPR_QP_MIN_RNR_TIMER },
	{ DPR_QPS_RTS, DPR_QPS_SQD, 0, DPR_QP_EN_SQD_ASYNC_NOTIFY },
	{ DPR_QPS_RTS, DPR_QPS_ERR, 0, 0 },
	{ DPR_QPS_SQD, DPR_QPS_RESET, 0, 0 },
	{ DPR_QPS_SQD, DPR_QPS_RTS, 0, DPR_QP_CUR_STATE | DPR_QP_ALT_PATH |
	  DPR_QP_ACCESS_FLAGS | DPR_QP_MIN_RNR_TIMER | DPR_QP_PATH_MIG_STATE },
	{ DPR_QPS_SQD, DPR_QPS_SQD, 0, DPR_QP_AV | DPR_QP_TIMEOUT |
	  DPR_QP_RETRY_CNT | DPR_QP_RNR_RETRY | DPR_QP_MAX_QP_RD_ATOMIC |
	  DPR_QP_MAX_DEST_RD_ATOMIC | DPR_QP_ALT_PATH | DPR_QP_ACCESS_FLAGS |
	  DPR_QP_PKEY_INDEX | DPR_QP_MIN_RNR_TIMER | DPR_QP_PATH_MIG_STATE },
	{ DPR_QPS_SQD, DPR_QPS_ERR, 0, 0 },
	{ DPR_QPS_ERR, DPR_QPS_RESET, 0, 0 },
	{ DPR_QPS_ERR, DPR_QPS_ERR, 0, 0 },
};

static void
good_attr(struct dpr_qp_attr *a, enum dpr_qp_state to)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = to;
	a->port_num = 1;
	a->path_mtu = DPR_MTU_1024;
	a->dest_qp_num = 0x42;
	a->ah_attr.dgid = H.side[1].gid;
	a->ah_attr.sgid_index = 1;
	a->timeout = 14;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->max_rd_atomic = 1;
	a->max_dest_rd_atomic = 1;
}

/* A fresh QP brought to @p st. */
static struct dpr_tqp *
qp_in(enum dpr_qp_state st)
{
	static const enum dpr_qp_state path[] = { DPR_QPS_INIT, DPR_QPS_RTR,
						  DPR_QPS_RTS, DPR_QPS_SQD };
	static const uint32_t masks[] = { REQ_INIT, REQ_RTR, REQ_RTS, 0 };
	struct dpr_qp_init_attr ia = {
		.qp_type = DPR_QPT_RC,
		.pd = H.side[0].pd, .send_cq = H.side[0].scq,
		.recv_cq = H.side[0].rcq, .max_send_wr = 4, .max_recv_wr = 4,
	};
	struct dpr_tqp *q = dpr_qp_create(H.side[0].tp, &ia);
	struct dpr_qp_attr a;
	unsigned int i;

	if (st == DPR_QPS_ERR) {
		good_attr(&a, DPR_QPS_ERR);
		dpr_qp_modify(q, &a, DPR_QP_STATE);
		return q;
	}
	for (i = 0; i < RTE_DIM(path) && st != DPR_QPS_RESET; i++) {
		good_attr(&a, path[i]);
		dpr_qp_modify(q, &a, DPR_QP_STATE | (int)masks[i]);
		if (path[i] == st)
			break;
	}
	return q;
}

static int
test_every_transition_and_mask(void)
{
	static const enum dpr_qp_state states[] = { DPR_QPS_RESET, DPR_QPS_INIT,
		DPR_QPS_RTR, DPR_QPS_RTS, DPR_QPS_SQD, DPR_QPS_ERR };
	unsigned int f, t, k, bit, checked = 0;

	CHECK(rc_harness_init(&H, pool, 5, NULL) == 0, "harness");
	for (f = 0; f < RTE_DIM(states); f++) {
		for (t = 0; t < RTE_DIM(states); t++) {
			const struct trans_case *tc = NULL;
			struct dpr_qp_attr a;
			struct dpr_tqp *q;

			for (k = 0; k < RTE_DIM(allowed); k++)
				if (allowed[k].from == states[f] && allowed[k].to == states[t])
					tc = &allowed[k];
			q = qp_in(states[f]);
			CHECK_EQ(dpr_qp_get_state(q), states[f], "reached state %u", states[f]);
			good_attr(&a, states[t]);
			if (tc == NULL) {
				CHECK_EQ(dpr_qp_modify(q, &a, DPR_QP_STATE | REQ_INIT |
						       REQ_RTR | REQ_RTS), -EINVAL,
					 "%u -> %u is not a transition", states[f], states[t]);
				CHECK_EQ(dpr_qp_get_state(q), states[f], "unchanged");
				dpr_qp_destroy(q);
				continue;
			}
			/* each required bit missing */
			for (bit = 0; bit < 21; bit++) {
				if (!(tc->req & (1u << bit)))
					continue;
				CHECK_EQ(dpr_qp_modify(q, &a, (int)(DPR_QP_STATE |
						       (tc->req & ~(1u << bit)))), -EINVAL,
					 "%u -> %u without bit %u", states[f], states[t], bit);
				checked++;
			}
			/* each bit it does not take */
			for (bit = 1; bit < 21; bit++) {
				if ((tc->req | tc->opt) & (1u << bit))
					continue;
				CHECK_EQ(dpr_qp_modify(q, &a, (int)(DPR_QP_STATE | tc->req |
						       (1u << bit))), -EINVAL,
					 "%u -> %u with bit %u", states[f], states[t], bit);
				checked++;
			}
			CHECK_EQ(dpr_qp_get_state(q), states[f], "wrong masks change nothing");
			CHECK_EQ(dpr_qp_modify(q, &a, (int)(DPR_QP_STATE | tc->req)), 0,
				 "%u -> %u with its mask", states[f], states[t]);
			CHECK_EQ(dpr_qp_get_state(q), states[t], "now %u", states[t]);
			dpr_qp_destroy(q);
		}
	}
	printf("    %u wrong masks refused over %zu transitions\n", checked,
	       RTE_DIM(allowed));
	rc_harness_fini(&H);
	return TEST_SUCCESS;
}

static int
test_sqd_drains(void)
{
	struct dpr_mr *l, *r;
	struct dpr_qp_attr a = { .qp_state = DPR_QPS_SQD, .en_sqd_async_notify = 1 };
	struct dpr_cqe c[8];
	int i;

	CHECK(conn(NULL, NULL, 90) == 0, "connect");
	l = rc_mr(&H, 0, 1 << 16, DPR_ACCESS_LOCAL_WRITE);
	r = rc_mr(&H, 1, 1 << 16, DPR_ACCESS_ALL);
	for (i = 0; i < 4; i++)
		CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE, l, 0, 65536, r->iova, r->rkey,
				   i, DPR_SEND_SIGNALED), 0, "post");
	rc_step(&H);                      /* the first WQE is under way */
	CHECK_EQ(dpr_qp_modify(qa, &a, DPR_QP_STATE | DPR_QP_EN_SQD_ASYNC_NOTIFY),
		 0, "RTS -> SQD");
	rc_settle(&H, SEC);
	CHECK_EQ(H.side[0].events[DPR_EVENT_SQ_DRAINED], 1, "SQ_DRAINED raised");
	CHECK_EQ(dpr_cq_poll(H.side[0].scq, c, 8), 1, "what had started finished");
	a.qp_state = DPR_QPS_RTS;
	CHECK_EQ(dpr_qp_modify(qa, &a, DPR_QP_STATE), 0, "SQD -> RTS");
	CHECK_EQ(wait_cq(H.side[0].scq, 3, c, SEC), 3, "the rest resumed");
	mr_free(l);
	mr_free(r);
	fini();
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------ UD */

struct ud_trace {
	uint32_t n;
	struct dpr_pkt_info pi[8];
	struct dpr_wire_hdrs h[8];
};

static void
ud_trace(void *arg, int side, const struct rte_mbuf *m)
{
	struct ud_trace *t = arg;

	if (side != 0 || t->n >= RTE_DIM(t->pi) ||
	    dpr_wire_parse(m, &t->pi[t->n], 4096) != DPR_WIRE_OK)
		return;
	dpr_wire_decode(m, &t->pi[t->n], &t->h[t->n]);
	t->n++;
}

struct pull_arg {
	struct dpr_tqp *qp;
	struct dpr_mr *mr;
	uint32_t calls;
};

/* an owner holding one receive it has not posted: posts it when asked */
static void
pull_one(void *arg)
{
	struct pull_arg *p = arg;

	if (p->calls++ == 0)
		post_recv(p->qp, p->mr, 0, 40 + 1024, 70);
}

static struct dpr_tqp *
ud_qp(int side, uint32_t qkey, uint32_t sq_psn)
{
	struct dpr_qp_init_attr ia = {
		.qp_type = DPR_QPT_UD, .pd = H.side[side].pd,
		.send_cq = H.side[side].scq, .recv_cq = H.side[side].rcq,
		.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2,
		.max_recv_sge = 2, .max_inline_data = 64,
	};
	struct dpr_qp_attr a = { .qp_state = DPR_QPS_INIT, .port_num = 1,
				 .qkey = qkey, .sq_psn = sq_psn };
	struct dpr_tqp *qp = dpr_qp_create(H.side[side].tp, &ia);

	if (qp == NULL ||
	    dpr_qp_modify(qp, &a, DPR_QP_STATE | DPR_QP_PKEY_INDEX | DPR_QP_PORT |
			  DPR_QP_QKEY) != 0)
		return NULL;
	a.qp_state = DPR_QPS_RTR;
	if (dpr_qp_modify(qp, &a, DPR_QP_STATE) != 0)
		return NULL;
	a.qp_state = DPR_QPS_RTS;
	if (dpr_qp_modify(qp, &a, DPR_QP_STATE | DPR_QP_SQ_PSN) != 0)
		return NULL;
	return qp;
}

static int
ud_send(struct dpr_tqp *qp, struct dpr_mr *mr, uint32_t len, uint32_t dqpn,
	uint32_t qkey, bool imm, uint64_t wr_id)
{
	struct dpr_send_wr wr = {
		.wr_id = wr_id,
		.opcode = imm ? DPR_WR_SEND_WITH_IMM : DPR_WR_SEND,
		.send_flags = DPR_SEND_SIGNALED,
		.imm_data = rte_cpu_to_be_32(0x5ed00000u + (uint32_t)wr_id),
		.num_sge = len ? 1 : 0,
		.ud = { .remote_qpn = dqpn, .remote_qkey = qkey, .sgid_index = 1,
			.hop_limit = 1 },
		.sge[0] = { mr->iova, len, mr->lkey },
	};

	memcpy(wr.ud.dgid, H.side[1].gid.raw, 16);
	return dpr_post_send(qp, &wr, 1, NULL);
}

/* UD between two transports: one packet per message with a DETH, no
 * ACK; the receive buffer gets the GRH as rxe writes it, then the
 * payload; the completion names the sender's QP. What does not fit, or
 * has the wrong Q_Key, is dropped and counted, the QP untouched. */
static int
test_ud(void)
{
	static const uint32_t sizes[] = { 0, 1, 1000, 1024 };
	const uint32_t qkey = 0x11111111;
	const struct dpr_transport_stats *sb;
	struct ud_trace tr = { 0 };
	struct dpr_qp_attr bad = { .qp_state = DPR_QPS_INIT, .port_num = 1 };
	struct dpr_mr *src, *dst;
	struct dpr_tqp *ua, *ub;
	struct dpr_cqe c[2];
	unsigned int i;

	CHECK(rc_harness_init(&H, pool, 7, NULL) == 0, "harness");
	H.trace_tx = ud_trace;
	H.trace_arg = &tr;
	sb = dpr_transport_stats(H.side[1].tp);
	ua = ud_qp(0, 0x22222222, 100);
	ub = ud_qp(1, qkey, 200);
	CHECK(ua != NULL && ub != NULL, "two UD QPs to RTS");
	src = rc_mr(&H, 0, 4096, DPR_ACCESS_LOCAL_WRITE);
	dst = rc_mr(&H, 1, 4096, DPR_ACCESS_LOCAL_WRITE);

	/* the UD transitions: a Q_Key from RESET to INIT, no path */
	{
		struct dpr_qp_init_attr ia = {
			.qp_type = DPR_QPT_UD, .pd = H.side[0].pd,
			.send_cq = H.side[0].scq, .recv_cq = H.side[0].rcq,
			.max_send_wr = 4, .max_recv_wr = 4,
		};
		struct dpr_tqp *q = dpr_qp_create(H.side[0].tp, &ia);

		CHECK(q != NULL, "UD QP");
		CHECK_EQ(dpr_qp_modify(q, &bad, DPR_QP_STATE | DPR_QP_PKEY_INDEX |
				       DPR_QP_PORT), -EINVAL, "INIT without a Q_Key");
		CHECK_EQ(dpr_qp_modify(q, &bad, DPR_QP_STATE | DPR_QP_PKEY_INDEX |
				       DPR_QP_PORT | DPR_QP_QKEY | DPR_QP_ACCESS_FLAGS),
			 -EINVAL, "INIT with RC's access flags");
		CHECK_EQ(dpr_qp_modify(q, &bad, DPR_QP_STATE | DPR_QP_PKEY_INDEX |
				       DPR_QP_PORT | DPR_QP_QKEY), 0, "INIT");
		bad.qp_state = DPR_QPS_RTR;
		CHECK_EQ(dpr_qp_modify(q, &bad, DPR_QP_STATE | DPR_QP_AV), -EINVAL,
			 "RTR with an address vector");
		dpr_qp_destroy(q);
	}
	/* what a UD QP cannot send */
	CHECK_EQ(post_send(ua, DPR_WR_RDMA_WRITE, src, 0, 8, 0, 0, 1, 0), -EINVAL,
		 "RDMA WRITE on UD");
	CHECK_EQ(ud_send(ua, src, 1025, dpr_qp_num(ub), qkey, false, 1), -EINVAL,
		 "a message over the port MTU");
	{
		struct dpr_send_wr wr = { .opcode = DPR_WR_SEND,
					  .ud = { .remote_qpn = 5, .sgid_index = 1 } };

		wr.ud.dgid[0] = 0xfe;
		wr.ud.dgid[1] = 0x80;
		CHECK_EQ(dpr_post_send(ua, &wr, 1, NULL), -EINVAL,
			 "an IPv6 destination (not yet)");
	}

	for (i = 0; i < RTE_DIM(sizes); i++) {
		bool imm = i % 2;
		const uint8_t *g = dst->addr;

		fill(src, 0, sizes[i], i);
		memset(dst->addr, 0xee, 4096);
		CHECK_EQ(post_recv(ub, dst, 0, 40 + 1024, 50 + i), 0, "recv");
		CHECK_EQ(ud_send(ua, src, sizes[i], dpr_qp_num(ub), qkey, imm, i), 0,
			 "send %u", sizes[i]);
		CHECK_EQ(wait_cq(H.side[0].scq, 1, c, SEC), 1, "send CQE %u", sizes[i]);
		CHECK(c[0].status == DPR_WC_SUCCESS && c[0].opcode == DPR_WC_SEND &&
		      c[0].wr_id == i, "send CQE %u: status %u", sizes[i], c[0].status);
		CHECK_EQ(wait_cq(H.side[1].rcq, 1, c, SEC), 1, "recv CQE %u", sizes[i]);
		CHECK(c[0].status == DPR_WC_SUCCESS && c[0].opcode == DPR_WC_RECV &&
		      c[0].wr_id == 50 + i && c[0].byte_len == 40 + sizes[i] &&
		      c[0].qp_num == dpr_qp_num(ub) && c[0].src_qp == dpr_qp_num(ua),
		      "recv CQE %u: len %u src_qp %u", sizes[i], c[0].byte_len,
		      c[0].src_qp);
		CHECK_EQ(c[0].wc_flags, DPR_WC_GRH | DPR_WC_NET_IPV4 | (imm ? DPR_WC_WITH_IMM : 0),
			 "wc_flags %u", sizes[i]);
		if (imm)
			CHECK_EQ(rte_be_to_cpu_32(c[0].imm_data), 0x5ed00000u + i, "imm");
		/* the GRH: 20 zero bytes, then the IPv4 header as it came */
		for (unsigned int k = 0; k < 20; k++)
			CHECK_EQ(g[k], 0, "GRH byte %u", k);
		CHECK_EQ(g[20], 0x45, "IPv4 header in the GRH");
		CHECK(memcmp(g + 20 + 12, &H.side[0].gid.raw[12], 4) == 0 &&
		      memcmp(g + 20 + 16, &H.side[1].gid.raw[12], 4) == 0,
		      "its addresses");
		CHECK(memcmp(g + 40, src->addr, sizes[i]) == 0, "payload %u", sizes[i]);
		CHECK_EQ(g[40 + sizes[i]], 0xee, "nothing past it");
	}
	/* the frames, as rxe sends them (tests/data/captures/ud_pingpong_send) */
	CHECK_EQ(tr.n, RTE_DIM(sizes), "one frame per message, no ACKs (%u)", tr.n);
	for (i = 0; i < tr.n; i++) {
		CHECK_EQ(tr.h[i].opcode, i % 2 ? DPR_OP_UD_SEND_ONLY_IMM :
			 DPR_OP_UD_SEND_ONLY, "opcode");
		CHECK(!tr.h[i].ackreq && tr.h[i].psn == 100 + i &&
		      tr.h[i].dqpn == dpr_qp_num(ub), "AckReq clear, PSN %u", tr.h[i].psn);
		CHECK(tr.h[i].deth.qkey == qkey && tr.h[i].deth.sqpn == dpr_qp_num(ua),
		      "DETH");
		CHECK(tr.pi[i].encap.ttl == 64 && tr.pi[i].encap.df &&
		      tr.pi[i].encap.sport == dpr_udp_sport_ud(dpr_qp_num(ua)),
		      "TTL 64 (the AH's hop limit 1 aside, as rxe), DF, sport");
	}
	/* a Q_Key with its high bit set: the sender's own goes out, which
	 * the receiver does not take */
	CHECK_EQ(post_recv(ub, dst, 0, 40 + 1024, 60), 0, "recv");
	CHECK_EQ(ud_send(ua, src, 8, dpr_qp_num(ub), 0x80000000u, false, 10), 0, "send");
	CHECK_EQ(wait_cq(H.side[0].scq, 1, c, SEC), 1, "send CQE");
	rc_settle(&H, SEC);
	CHECK(tr.n == RTE_DIM(sizes) + 1 && tr.h[tr.n - 1].deth.qkey == 0x22222222,
	      "the controlled Q_Key rule: the QP's own");
	CHECK_EQ(sb->bad_qkey, 1, "wrong Q_Key dropped and counted");
	CHECK_EQ(dpr_cq_count(H.side[1].rcq), 0, "no completion for it");
	/* too long for the WQE (class D): dropped, the WQE kept for the next */
	CHECK_EQ(ud_send(ua, src, 1024 - 39, dpr_qp_num(ub), qkey, false, 11), 0, "send");
	rc_settle(&H, SEC);
	CHECK_EQ(sb->ud_too_long, 0, "fits");
	CHECK_EQ(wait_cq(H.side[1].rcq, 1, c, SEC), 1, "taken by the kept WQE");
	CHECK_EQ(c[0].wr_id, 60, "the WQE the Q_Key miss left");
	CHECK_EQ(post_recv(ub, dst, 0, 40 + 100, 61), 0, "a short recv");
	CHECK_EQ(ud_send(ua, src, 101, dpr_qp_num(ub), qkey, false, 12), 0, "send");
	rc_settle(&H, SEC);
	CHECK_EQ(sb->ud_too_long, 1, "over the WQE: dropped and counted");
	CHECK_EQ(ud_send(ua, src, 100, dpr_qp_num(ub), qkey, false, 13), 0, "send");
	CHECK_EQ(wait_cq(H.side[1].rcq, 1, c, SEC), 1, "the next that fits");
	CHECK(c[0].wr_id == 61 && c[0].byte_len == 140, "in the same WQE");
	/* no receive WQE: dropped (no RNR for a datagram) */
	CHECK_EQ(ud_send(ua, src, 8, dpr_qp_num(ub), qkey, false, 14), 0, "send");
	rc_settle(&H, SEC);
	CHECK_EQ(sb->ud_no_wqe, 1, "no WQE: dropped and counted");
	/* the owner's receives not given yet are asked for first */
	{
		struct pull_arg pa = { ub, dst, 0 };

		dpr_qp_set_rq_pull(ub, pull_one, &pa);
		CHECK_EQ(ud_send(ua, src, 8, dpr_qp_num(ub), qkey, false, 17), 0, "send");
		CHECK_EQ(wait_cq(H.side[1].rcq, 1, c, SEC), 1, "received");
		CHECK(c[0].wr_id == 70 && pa.calls == 1 && sb->ud_no_wqe == 1,
		      "into the receive the pull posted (%u calls)", pa.calls);
		dpr_qp_set_rq_pull(ub, NULL, NULL);
	}
	CHECK_EQ(post_recv(ub, dst, 0, 40 + 1024, 62), 0, "recv");
	/* a destination nobody resolves: the datagram is given to the
	 * resolver (here, none holds it: dropped), counted, and the queue
	 * moves on at once */
	{
		struct dpr_send_wr wr = {
			.wr_id = 15, .opcode = DPR_WR_SEND,
			.send_flags = DPR_SEND_SIGNALED,
			.ud = { .remote_qpn = 9, .remote_qkey = qkey, .sgid_index = 1 },
		};
		uint64_t t0 = H.now;

		while (dpr_cq_poll(H.side[0].scq, c, 2) > 0)
			;       /* the sends so far */
		memcpy(wr.ud.dgid, H.side[1].gid.raw, 16);
		wr.ud.dgid[15] ^= 0x40;   /* an address nobody has */
		CHECK_EQ(dpr_post_send(ua, &wr, 1, NULL), 0, "send to nowhere");
		CHECK_EQ(ud_send(ua, src, 8, dpr_qp_num(ub), qkey, false, 16), 0,
			 "and one behind it");
		CHECK_EQ(wait_cq(H.side[0].scq, 2, c, 3 * SEC), 2, "both complete");
		CHECK(c[0].wr_id == 15 && c[0].status == DPR_WC_SUCCESS &&
		      c[1].wr_id == 16 && c[1].status == DPR_WC_SUCCESS,
		      "in order, as sent");
		CHECK(H.now - t0 < 10 * MS, "without waiting for ARP");
		CHECK_EQ(dpr_transport_stats(H.side[0].tp)->ud_unresolved, 1,
			 "counted unresolved");
		CHECK_EQ(dpr_transport_stats(H.side[0].tp)->tx_unresolved, 1,
			 "and the frame not sent");
		CHECK_EQ(wait_cq(H.side[1].rcq, 1, c, SEC), 1, "the one behind arrives");
	}
	CHECK(dpr_qp_get_state(ua) == DPR_QPS_RTS && dpr_qp_get_state(ub) == DPR_QPS_RTS,
	      "both QPs still in RTS");
	CHECK_EQ(sb->ud_received, RTE_DIM(sizes) + 4, "received");
	while (dpr_cq_poll(H.side[0].scq, c, 2) > 0)
		;
	mr_free(src);
	mr_free(dst);
	dpr_qp_destroy(ua);
	dpr_qp_destroy(ub);
	rc_harness_fini(&H);
	return TEST_SUCCESS;
}

/* ----------------------------------------------------------------- SRQ */

static unsigned int srq_limit_hits;

static bool
never(struct rc_harness *h, void *arg)
{
	(void)h;
	(void)arg;
	return false;
}

static void
srq_limit_cb(void *arg)
{
	(void)arg;
	srq_limit_hits++;
}

/* Two RC connections whose receivers share one SRQ: multi-packet SENDs
 * of both interleave, each completes in the WQE it took at its first
 * packet; the limit event fires once, below the limit; an empty SRQ is
 * an RNR NAK and the SEND goes on after a post; a QP in error flushes
 * only what it took and reports its last WQE. */
static int
test_srq(void)
{
	struct dpr_tqp *a1, *b1, *a2, *b2;
	struct dpr_mr *src, *dst;
	struct dpr_srq *srq;
	struct dpr_cqe c[8];
	struct rc_conn cn;
	unsigned int i, got1 = 0, got2 = 0;

	CHECK(rc_harness_init(&H, pool, 11, NULL) == 0, "harness");
	srq = dpr_srq_create(H.side[1].tp, H.side[1].pd, 16, 2);
	CHECK(srq != NULL, "SRQ");
	CHECK(dpr_srq_create(H.side[1].tp, H.side[1].pd, 1u << 30, 1) == NULL &&
	      errno == EINVAL, "an SRQ over the WR limit: EINVAL");
	dpr_srq_set_limit_cb(srq, srq_limit_cb, NULL);
	rc_conn_defaults(&cn);
	cn.srq[1] = srq;
	CHECK(rc_connect(&H, &cn, &a1, &b1) == 0, "connection 1");
	cn.psn[0] += 1000;
	CHECK(rc_connect(&H, &cn, &a2, &b2) == 0, "connection 2");
	CHECK_EQ(dpr_srq_destroy(srq), -EBUSY, "an SRQ in use stays");
	src = rc_mr(&H, 0, 8192, DPR_ACCESS_LOCAL_WRITE);
	dst = rc_mr(&H, 1, 16 * 4096, DPR_ACCESS_LOCAL_WRITE);
	CHECK_EQ(post_recv(b1, dst, 0, 4096, 1), -EINVAL,
		 "ibv_post_recv on a QP with an SRQ: EINVAL");
	for (i = 0; i < 8; i++) {
		struct dpr_recv_wr wr = { .wr_id = 100 + i, .num_sge = 1,
			.sge[0] = { dst->iova + i * 4096, 4096, dst->lkey } };

		CHECK_EQ(dpr_post_srq_recv(srq, &wr, 1, NULL), 0, "post %u", i);
	}
	CHECK_EQ(dpr_srq_set_limit(srq, 17), -EINVAL, "a limit over the size");
	CHECK_EQ(dpr_srq_set_limit(srq, 3), 0, "limit 3");
	fill(src, 0, 8192, 5);
	/* 3 packets each at 1 KiB, both connections at once */
	for (i = 0; i < 3; i++) {
		CHECK_EQ(post_send(a1, DPR_WR_SEND, src, 0, 3000, 0, 0, 10 + i, 0), 0, "s1");
		CHECK_EQ(post_send(a2, DPR_WR_SEND, src, 4096, 2500, 0, 0, 20 + i, 0), 0, "s2");
	}
	CHECK_EQ(wait_cq(H.side[1].rcq, 6, c, SEC), 6, "six receives");
	for (i = 0; i < 6; i++) {
		const uint8_t *buf = dst->addr + (c[i].wr_id - 100) * 4096;
		bool one = c[i].qp_num == dpr_qp_num(b1);

		CHECK(c[i].status == DPR_WC_SUCCESS && c[i].opcode == DPR_WC_RECV &&
		      c[i].wr_id >= 100 && c[i].wr_id < 108 &&
		      c[i].byte_len == (one ? 3000u : 2500u), "CQE %u: QP %u len %u",
		      i, c[i].qp_num, c[i].byte_len);
		CHECK(memcmp(buf, src->addr + (one ? 0 : 4096), one ? 3000 : 2500) == 0,
		      "CQE %u: the message whole in its WQE", i);
		got1 += one;
		got2 += !one;
	}
	CHECK(got1 == 3 && got2 == 3, "three each");
	CHECK_EQ(dpr_srq_count(srq), 2, "two WQEs left");
	CHECK_EQ(srq_limit_hits, 1, "the limit event, once");
	{
		uint32_t mw, ms, lim;

		dpr_srq_query(srq, &mw, &ms, &lim);
		CHECK(mw == 16 && ms == 2 && lim == 0, "query: 16, 2, disarmed");
	}
	/* empty: RNR NAK, then the SEND lands once a WQE is there */
	for (i = 0; i < 3; i++)
		CHECK_EQ(post_send(a1, DPR_WR_SEND, src, 0, 100, 0, 0, 30 + i, 0), 0, "s");
	CHECK_EQ(wait_cq(H.side[1].rcq, 2, c, SEC), 2, "two fit");
	rc_run(&H, never, NULL, 2 * MS);
	CHECK(dpr_transport_stats(H.side[1].tp)->rnr_nak_tx > 0, "the third: RNR NAK");
	{
		struct dpr_recv_wr wr = { .wr_id = 200, .num_sge = 1,
			.sge[0] = { dst->iova, 4096, dst->lkey } };

		CHECK_EQ(dpr_post_srq_recv(srq, &wr, 1, NULL), 0, "post");
	}
	CHECK_EQ(wait_cq(H.side[1].rcq, 1, c, SEC), 1, "after the RNR wait");
	CHECK(c[0].wr_id == 200 && c[0].byte_len == 100, "into the new WQE");
	/* a QP of the SRQ to error: nothing of the SRQ's flushed */
	{
		struct dpr_qp_attr e = { .qp_state = DPR_QPS_ERR };
		struct dpr_recv_wr wr = { .wr_id = 201, .num_sge = 1,
			.sge[0] = { dst->iova, 4096, dst->lkey } };
		uint32_t ev = H.side[1].events[DPR_EVENT_QP_LAST_WQE_REACHED];

		CHECK_EQ(dpr_post_srq_recv(srq, &wr, 1, NULL), 0, "post");
		CHECK_EQ(dpr_qp_modify(b2, &e, DPR_QP_STATE), 0, "b2 to ERR");
		CHECK_EQ(dpr_cq_count(H.side[1].rcq), 0, "no flush of the SRQ's WQEs");
		CHECK_EQ(dpr_srq_count(srq), 1, "still there for b1");
		CHECK_EQ(H.side[1].events[DPR_EVENT_QP_LAST_WQE_REACHED], ev + 1,
			 "the last WQE reached event");
	}
	rc_settle(&H, SEC);
	while (dpr_cq_poll(H.side[0].scq, c, 8) > 0)
		;
	dpr_qp_destroy(a1);
	dpr_qp_destroy(b1);
	dpr_qp_destroy(a2);
	dpr_qp_destroy(b2);
	CHECK_EQ(dpr_srq_destroy(srq), 0, "destroyed once unused");
	mr_free(src);
	mr_free(dst);
	rc_harness_fini(&H);
	return TEST_SUCCESS;
}

/* ------------------------------------------------------------------ UC */

/* UC: SENDs and WRITEs of several packets, no ACK on the wire; READs and
 * atomics refused; over a link that loses frames every message either
 * arrives whole or not at all (its WQE then takes a later one), and the
 * connection goes on, never to error. */
static int
test_uc(void)
{
	struct rc_faults f = { .loss = 0.05 };
	struct dpr_mr *src, *dst;
	struct dpr_cqe c[64];
	struct rc_conn cn;
	unsigned int i, got = 0, sent = 0;
	const struct dpr_transport_stats *sb;

	/* clean link first */
	rc_conn_defaults(&cn);
	cn.uc = true;
	CHECK(rc_harness_init(&H, pool, 13, NULL) == 0, "harness");
	CHECK(rc_connect(&H, &cn, &qa, &qb) == 0, "UC connection");
	src = rc_mr(&H, 0, 1 << 16, DPR_ACCESS_LOCAL_WRITE);
	dst = rc_mr(&H, 1, 1 << 16, DPR_ACCESS_LOCAL_WRITE | DPR_ACCESS_REMOTE_WRITE);
	CHECK_EQ(post_send(qa, DPR_WR_RDMA_READ, src, 0, 8, dst->iova, dst->rkey, 1, 0),
		 -EINVAL, "READ on UC: EINVAL");
	CHECK_EQ(post_send(qa, DPR_WR_ATOMIC_FETCH_AND_ADD, src, 0, 8, dst->iova,
			   dst->rkey, 1, 0), -EINVAL, "atomic on UC: EINVAL");
	fill(src, 0, 1 << 16, 3);
	CHECK_EQ(post_recv(qb, dst, 0, 8192, 100), 0, "recv");
	CHECK_EQ(post_send(qa, DPR_WR_SEND_WITH_IMM, src, 0, 5000, 0, 0, 1,
			   DPR_SEND_SIGNALED), 0, "SEND 5000 (5 packets)");
	CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE, src, 8192, 3000, dst->iova + 16384,
			   dst->rkey, 2, DPR_SEND_SIGNALED), 0, "WRITE 3000");
	CHECK_EQ(post_recv(qb, dst, 0, 8192, 101), 0, "recv");
	CHECK_EQ(post_send(qa, DPR_WR_RDMA_WRITE_WITH_IMM, src, 12288, 2048,
			   dst->iova + 32768, dst->rkey, 3, DPR_SEND_SIGNALED), 0,
		 "WRITE with immediate");
	CHECK_EQ(wait_cq(H.side[0].scq, 3, c, SEC), 3, "three sends complete");
	CHECK_EQ(wait_cq(H.side[1].rcq, 2, c, SEC), 2, "two receives");
	CHECK(c[0].wr_id == 100 && c[0].opcode == DPR_WC_RECV && c[0].byte_len == 5000 &&
	      (c[0].wc_flags & DPR_WC_WITH_IMM), "the SEND: len %u", c[0].byte_len);
	CHECK(c[1].wr_id == 101 && c[1].opcode == DPR_WC_RECV_RDMA_WITH_IMM &&
	      c[1].byte_len == 2048, "the WRITE with immediate");
	CHECK(memcmp(dst->addr, src->addr, 5000) == 0 &&
	      memcmp(dst->addr + 16384, src->addr + 8192, 3000) == 0 &&
	      memcmp(dst->addr + 32768, src->addr + 12288, 2048) == 0, "the bytes");
	CHECK_EQ(H.frames[1][K_ACK] + H.frames[1][K_NAK], 0, "no ACK, no NAK");
	rc_settle(&H, SEC);
	dpr_qp_destroy(qa);
	dpr_qp_destroy(qb);
	mr_free(src);
	mr_free(dst);
	rc_harness_fini(&H);

	/* 5% loss: 40 SENDs of 4 packets into 40 receives */
	CHECK(rc_harness_init(&H, pool, 17, &f) == 0, "harness");
	CHECK(rc_connect(&H, &cn, &qa, &qb) == 0, "UC connection");
	sb = dpr_transport_stats(H.side[1].tp);
	src = rc_mr(&H, 0, 1 << 16, DPR_ACCESS_LOCAL_WRITE);
	dst = rc_mr(&H, 1, 40 * 4096, DPR_ACCESS_LOCAL_WRITE);
	for (i = 0; i < 40; i++) {
		struct dpr_recv_wr wr = { .wr_id = 200 + i, .num_sge = 1,
			.sge[0] = { dst->iova + i * 4096, 4096, dst->lkey } };

		CHECK_EQ(dpr_post_recv(qb, &wr, 1, NULL), 0, "recv");
	}
	for (i = 0; i < 40; i++) {
		/* message i: 4000 bytes of pattern i */
		fill(src, (i % 16) * 4096, 4000, 1000 + i);
		CHECK_EQ(post_send(qa, DPR_WR_SEND_WITH_IMM, src, (i % 16) * 4096, 4000,
				   0, 0, i, DPR_SEND_SIGNALED), 0, "send %u", i);
		if (wait_cq(H.side[0].scq, 1, c, SEC) == 1)
			sent++;
	}
	rc_settle(&H, SEC);
	CHECK_EQ(sent, 40, "every send completes, loss or not");
	while (got < 40) {
		int n = dpr_cq_poll(H.side[1].rcq, c, 64);

		if (n <= 0)
			break;
		for (int k = 0; k < n; k++) {
			uint32_t msg = rte_be_to_cpu_32(c[k].imm_data) - 0xabc000u;
			const uint8_t *b = dst->addr + (c[k].wr_id - 200) * 4096;
			uint8_t want[4000];

			for (uint32_t j = 0; j < 4000; j++)
				want[j] = (uint8_t)(1000 + msg + j * 131 + (j >> 8));
			CHECK(c[k].status == DPR_WC_SUCCESS && c[k].byte_len == 4000 &&
			      memcmp(b, want, 4000) == 0,
			      "message %u whole in WQE %llu", msg,
			      (unsigned long long)c[k].wr_id);
		}
		got += (unsigned int)n;
	}
	CHECK(got > 0 && got < 40, "some messages lost whole, the others whole "
	      "(%u of 40 arrived)", got);
	/* a message is counted when the receiver learns it is lost: the last
	 * one, cut short, may never be */
	CHECK(sb->uc_dropped + got == 40 || sb->uc_dropped + got == 39,
	      "each lost message counted once (%" PRIu64 " dropped)", sb->uc_dropped);
	CHECK(dpr_qp_get_state(qa) == DPR_QPS_RTS && dpr_qp_get_state(qb) == DPR_QPS_RTS,
	      "the connection goes on");
	dpr_qp_destroy(qa);
	dpr_qp_destroy(qb);
	qa = qb = NULL;
	mr_free(src);
	mr_free(dst);
	rc_harness_fini(&H);
	return TEST_SUCCESS;
}

/* payload_copy() (the fast paths' copy: pieces from both ends up to 64
 * bytes) at every length to 200 and every offset of either end: the
 * bytes asked for, none around them */
static int
test_payload_copy(void)
{
	uint8_t src[256 + 32], dst[256 + 32];
	uint32_t len, so, d_o, i;

	for (i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 1);
	for (len = 0; len <= 200; len++) {
		for (so = 0; so < 16; so += 3) {
			for (d_o = 0; d_o < 16; d_o += 5) {
				memset(dst, 0xa5, sizeof(dst));
				payload_copy(dst + 8 + d_o, src + so, len);
				for (i = 0; i < sizeof(dst); i++) {
					const bool in = i >= 8 + d_o && i < 8 + d_o + len;

					CHECK(dst[i] == (in ? src[so + i - 8 - d_o] : 0xa5),
					      "len %u src +%u dst +%u: byte %u", len, so, d_o, i);
				}
			}
		}
	}
	return TEST_SUCCESS;
}

static const struct dpr_test_case transport_cases[] = {
	DPR_TEST_CASE(test_payload_copy),
	DPR_TEST_CASE(test_verbs_objects),
	DPR_TEST_CASE(test_qpns),
	DPR_TEST_CASE(test_cq_overflow),
	DPR_TEST_CASE(test_state_machine),
	DPR_TEST_CASE(test_send_recv),
	DPR_TEST_CASE(test_write_read_atomic),
	DPR_TEST_CASE(test_remote_access_errors),
	DPR_TEST_CASE(test_key_freed_in_flight),
	DPR_TEST_CASE(test_memory_windows),
	DPR_TEST_CASE(test_dcqcn_reference),
	DPR_TEST_CASE(test_dcqcn_pacer),
	DPR_TEST_CASE(test_drop_sources),
	DPR_TEST_CASE(test_invalid_request_errors),
	DPR_TEST_CASE(test_remote_op_error),
	DPR_TEST_CASE(test_every_transition_and_mask),
	DPR_TEST_CASE(test_sqd_drains),
	DPR_TEST_CASE(test_rnr),
	DPR_TEST_CASE(test_timeout_retry_exhausted),
	DPR_TEST_CASE(test_stale_responses_bounded),
	DPR_TEST_CASE(test_rto_slow_peer),
	DPR_TEST_CASE(test_tail_probe_waits),
	DPR_TEST_CASE(test_next_timer_before),
	DPR_TEST_CASE(test_read_again_memory_gone),
	DPR_TEST_CASE(test_probe_lost_nak),
	DPR_TEST_CASE(test_nak_during_replay),
	DPR_TEST_CASE(test_read_resources_and_msn),
	DPR_TEST_CASE(test_mr_owner_release),
	DPR_TEST_CASE(test_psn_wrap),
	DPR_TEST_CASE(test_nak_sequence_go_back_n),
	DPR_TEST_CASE(test_flush_and_unsignaled),
	DPR_TEST_CASE(test_rd_atomic_limit_and_fence),
	DPR_TEST_CASE(test_ud),
	DPR_TEST_CASE(test_srq),
	DPR_TEST_CASE(test_uc),
	DPR_TEST_CASE(test_sr_purge),
	DPR_TEST_CASE(test_sr_place),
	DPR_TEST_CASES_END,
};

static struct dpr_test_suite transport_suite = {
	.name = "transport",
	.needs_eal = true,
	.setup = setup,
	.teardown = teardown,
	.cases = transport_cases,
};
DPR_TEST_SUITE(transport_suite);
