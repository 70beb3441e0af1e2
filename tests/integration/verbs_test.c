/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdma-verbs-test: the verbs a program reaches through <infiniband/verbs.h>
 * and the drop-in libibverbs that the Debian programs in shim_dropin do
 * not: the extended CQ (ibv_create_cq_ex, ibv_start_poll/ibv_next_poll and
 * the ibv_wc_read_* accessors), address handles made from a completion
 * (ibv_create_ah_from_wc), ibv_query_qp's Q_Key, ibv_create_srq_ex and the
 * refusals that say what is not offered, a device that outlives its list
 * (UCX reads context->device's name after ibv_free_device_list()). QPs of
 * one daemon connected to each other (the frames loop back in its worker).
 *
 *   DPRDMA_SOCKET=... dprdma-verbs-test
 *   DPRDMA_SOCKET=... dprdma-verbs-test drain
 *
 * drain: what a program sees when dprdmad stops under it (SIGTERM): two
 * RC QPs looped back, 4 KiB WRITEs 32 deep, reposted as they complete;
 * "streaming" on stdout once 1000 have completed. Beside them, a second
 * pair where 4 SENDs wait on RNR NAKs (no receive posted, rnr_retry 7):
 * work surely outstanding when the daemon stops, whatever the WRITEs'
 * timing. Then it waits for
 * IBV_EVENT_DEVICE_FATAL (on the context's async_fd), posts nothing more,
 * polls until every WRITE posted has completed (success, or
 * IBV_WC_WR_FLUSH_ERR once the QP is in ERR: nothing else, nothing
 * missing), destroys what it made and prints one JSON line.
 *
 * Prints a line per check that fails and "verbs-test: N failures"; exit
 * status 0 when none failed.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/time.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

static int failures;

#define CHECK(cond, ...) do { \
		if (!(cond)) { \
			printf("FAIL: "); \
			printf(__VA_ARGS__); \
			printf("\n"); \
			failures++; \
		} \
	} while (0)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static uint8_t *buf;
static union ibv_gid gid;

static void
die(const char *what)
{
	printf("FAIL: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct ibv_qp *
make_qp(enum ibv_qp_type type, struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (qp == NULL)
		die("create_qp");
	return qp;
}

static void
rc_connect(struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		die("RC INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = 7;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = 1;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			  IBV_QP_MIN_RNR_TIMER))
		die("RC RTR");
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		die("RC RTS");
}

static void
ud_ready(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = qkey };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_QKEY))
		die("UD INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("UD RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("UD RTS");
}

static void
post_recv(struct ibv_qp *qp, struct ibv_srq *srq, uint32_t off, uint32_t len,
	  uint64_t id)
{
	struct ibv_sge sg = { (uintptr_t)buf + off, len, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1 }, *bad;

	if ((srq != NULL ? ibv_post_srq_recv(srq, &wr, &bad) :
	     ibv_post_recv(qp, &wr, &bad)) != 0)
		die("post_recv");
}

static void
post_send(struct ibv_qp *qp, struct ibv_ah *ah, uint32_t dqpn, uint32_t qkey,
	  uint32_t off, uint32_t len, uint64_t id, bool imm)
{
	struct ibv_sge sg = { (uintptr_t)buf + off, len, mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sg, .num_sge = 1,
		.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(0xfeed0000u + (uint32_t)id),
	}, *bad;

	if (ah != NULL) {
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = dqpn;
		wr.wr.ud.remote_qkey = qkey;
	}
	if (ibv_post_send(qp, &wr, &bad) != 0)
		die("post_send");
}

/* Up to @p n completions of @p cq, within 10 s. */
static int
poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n)
{
	time_t t0 = time(NULL);
	int got = 0;

	while (got < n && time(NULL) - t0 < 10) {
		int k = ibv_poll_cq(cq, n - got, wc + got);

		if (k < 0)
			return got;
		got += k;
	}
	return got;
}

static void
test_cq_ex(void)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(ctx, &ca);
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_qp *qa, *qb;
	int seen = 0, rc;
	time_t t0;

	CHECK(cqx != NULL, "ibv_create_cq_ex with the standard wc_flags (%s)",
	      strerror(errno));
	if (cqx == NULL)
		return;
	ca.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	errno = 0;
	CHECK(ibv_create_cq_ex(ctx, &ca) == NULL && errno == EOPNOTSUPP,
	      "completion timestamps refused with EOPNOTSUPP (%d)", errno);
	qa = make_qp(IBV_QPT_RC, ibv_cq_ex_to_cq(cqx), NULL);
	qb = make_qp(IBV_QPT_RC, ibv_cq_ex_to_cq(cqx), NULL);
	rc_connect(qa, qb->qp_num);
	rc_connect(qb, qa->qp_num);
	memset(buf, 0x5a, 100);
	post_recv(qb, NULL, 4096, 100, 2);
	post_send(qa, NULL, 0, 0, 0, 100, 1, true);
	/* both completions (the send on qa, the receive on qb) in one CQ */
	t0 = time(NULL);
	while (seen < 2 && time(NULL) - t0 < 10) {
		rc = ibv_start_poll(cqx, &pa);
		if (rc == ENOENT)
			continue;
		CHECK(rc == 0, "ibv_start_poll: %d", rc);
		if (rc != 0)
			break;
		do {
			CHECK(cqx->status == IBV_WC_SUCCESS, "status %d", cqx->status);
			if (cqx->wr_id == 1) {
				CHECK(ibv_wc_read_opcode(cqx) == IBV_WC_SEND &&
				      ibv_wc_read_qp_num(cqx) == qa->qp_num,
				      "the send: opcode %d", ibv_wc_read_opcode(cqx));
			} else {
				CHECK(cqx->wr_id == 2 &&
				      ibv_wc_read_opcode(cqx) == IBV_WC_RECV &&
				      ibv_wc_read_byte_len(cqx) == 100 &&
				      ibv_wc_read_qp_num(cqx) == qb->qp_num &&
				      ibv_wc_read_src_qp(cqx) == qa->qp_num &&
				      (ibv_wc_read_wc_flags(cqx) & IBV_WC_WITH_IMM) &&
				      be32toh(ibv_wc_read_imm_data(cqx)) == 0xfeed0001u &&
				      ibv_wc_read_slid(cqx) == 0 && ibv_wc_read_sl(cqx) == 0,
				      "the receive through ibv_wc_read_*: wr_id %llu len %u",
				      (unsigned long long)cqx->wr_id,
				      ibv_wc_read_byte_len(cqx));
			}
			seen++;
		} while (ibv_next_poll(cqx) == 0);
		ibv_end_poll(cqx);
	}
	CHECK(seen == 2, "two completions by the extended poll (%d)", seen);
	CHECK(memcmp(buf + 4096, buf, 100) == 0, "the SEND's bytes");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	CHECK(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)) == 0, "destroy the extended CQ");
}

static volatile sig_atomic_t alarms;

/* SIGALRM every 200 ms while a wait is meant to end: one that resumes after
 * each signal would block for good, so the tenth gives up. */
static void
on_alarm(int sig __attribute__((unused)))
{
	static const char msg[] = "FAIL: an event wait resumed after 10 "
		"SIGALRMs instead of returning EINTR\nverbs-test: 1 failures\n";

	if (++alarms >= 10) {
		if (write(1, msg, sizeof(msg) - 1) < 0)
			_exit(2);
		_exit(1);
	}
}

/* A signal whose handler was installed without SA_RESTART ends a blocked
 * ibv_get_cq_event() or ibv_get_async_event() with -1 and EINTR, as with
 * the kernel's uverbs: qperf's latency tests stop on SIGALRM that way, and
 * a wait that resumed by itself hung the side whose peer had stopped
 * first (qperf rc_lat, now and then). */
static void
test_event_wait_interrupted(void)
{
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	struct itimerval it = { .it_value = { .tv_usec = 200000 },
			       .it_interval = { .tv_usec = 200000 } };
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq = ch != NULL ? ibv_create_cq(ctx, 4, NULL, ch, 0) : NULL;
	struct ibv_async_event ae;
	struct ibv_cq *ecq;
	void *ectx;
	int rc, fl;

	CHECK(cq != NULL, "a CQ on a completion channel (%s)", strerror(errno));
	if (cq == NULL)
		return;
	CHECK(ibv_req_notify_cq(cq, 0) == 0, "arm the CQ");
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	alarms = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	errno = 0;
	rc = ibv_get_cq_event(ch, &ecq, &ectx);
	setitimer(ITIMER_REAL, &off, NULL);
	CHECK(rc == -1 && errno == EINTR && alarms == 1,
	      "SIGALRM ends ibv_get_cq_event on an idle CQ: -1, EINTR (%d, %s, "
	      "%d alarms)", rc, strerror(errno), (int)alarms);
	/* the events of the tests before (COMM_EST, SRQ_LIMIT_REACHED, ...)
	 * are taken first: the wait below is on an empty queue */
	fl = fcntl(ctx->async_fd, F_GETFL);
	fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	while (ibv_get_async_event(ctx, &ae) == 0)
		ibv_ack_async_event(&ae);
	fcntl(ctx->async_fd, F_SETFL, fl);
	alarms = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	errno = 0;
	rc = ibv_get_async_event(ctx, &ae);
	setitimer(ITIMER_REAL, &off, NULL);
	CHECK(rc == -1 && errno == EINTR && alarms == 1,
	      "SIGALRM ends ibv_get_async_event with none pending: -1, EINTR (%d, "
	      "%s, %d alarms)", rc, strerror(errno), (int)alarms);
	if (rc == 0)
		ibv_ack_async_event(&ae);
	sigaction(SIGALRM, &old, NULL);
	CHECK(ibv_destroy_cq(cq) == 0 && ibv_destroy_comp_channel(ch) == 0,
	      "destroy the CQ and its channel");
}

static void
test_ud_ah_from_wc(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
		.grh = { .dgid = gid, .sgid_index = 1, .hop_limit = 64 } };
	struct ibv_qp_attr qa_attr;
	struct ibv_qp_init_attr qi;
	struct ibv_qp *ua, *ub;
	struct ibv_ah *ah, *back;
	struct ibv_wc wc[2];
	int n;

	if (cq == NULL)
		die("create_cq");
	ua = make_qp(IBV_QPT_UD, cq, NULL);
	ub = make_qp(IBV_QPT_UD, cq, NULL);
	ud_ready(ua, 0x1111);
	ud_ready(ub, 0x2222);
	CHECK(ibv_query_qp(ub, &qa_attr, IBV_QP_QKEY, &qi) == 0 &&
	      qa_attr.qkey == 0x2222 && qi.qp_type == IBV_QPT_UD,
	      "ibv_query_qp: the Q_Key (%#x) and the type", qa_attr.qkey);
	aa.grh.sgid_index = 0;
	errno = 0;
	CHECK(ibv_create_ah(pd, &aa) == NULL && errno == EAFNOSUPPORT,
	      "an AH from the IPv6 GID to an IPv4 one: EAFNOSUPPORT (%d)", errno);
	aa.grh.sgid_index = 1;
	aa.is_global = 0;
	errno = 0;
	CHECK(ibv_create_ah(pd, &aa) == NULL && errno == EINVAL,
	      "an AH without a GRH: EINVAL (%d)", errno);
	aa.is_global = 1;
	{
		struct ibv_sge sg = { (uintptr_t)buf, 8, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 9, .sg_list = &sg, .num_sge = 1,
					  .opcode = IBV_WR_SEND }, *bad = NULL;

		CHECK(ibv_post_send(ua, &wr, &bad) == EINVAL && bad == &wr,
		      "a UD send without an AH: EINVAL, itself the bad WR");
	}
	ah = ibv_create_ah(pd, &aa);
	CHECK(ah != NULL, "ibv_create_ah to our own GID");
	if (ah == NULL)
		return;
	memset(buf + 8192, 0, 40 + 64);
	memset(buf, 0x33, 64);
	post_recv(ub, NULL, 8192, 40 + 64, 20);
	post_send(ua, ah, ub->qp_num, 0x2222, 0, 64, 10, false);
	n = poll_n(cq, wc, 2);
	CHECK(n == 2, "UD: send and receive completions (%d)", n);
	for (int i = 0; i < n; i++) {
		if (wc[i].wr_id != 20)
			continue;
		CHECK(wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len == 40 + 64 &&
		      wc[i].src_qp == ua->qp_num && (wc[i].wc_flags & IBV_WC_GRH),
		      "UD receive: len %u src_qp %u flags %#x", wc[i].byte_len,
		      wc[i].src_qp, wc[i].wc_flags);
		CHECK(buf[8192 + 20] == 0x45 && memcmp(buf + 8192 + 40, buf, 64) == 0,
		      "the GRH (IPv4 header at byte 20), then the payload");
		back = ibv_create_ah_from_wc(pd, &wc[i], (struct ibv_grh *)(buf + 8192), 1);
		CHECK(back != NULL, "ibv_create_ah_from_wc (%s)", strerror(errno));
		if (back == NULL)
			break;
		/* answer to the sender through it */
		post_recv(ua, NULL, 12288, 40 + 64, 21);
		post_send(ub, back, wc[i].src_qp, 0x1111, 0, 32, 11, true);
		{
			struct ibv_wc w2[2];
			int m = poll_n(cq, w2, 2), ok = 0;

			for (int k = 0; k < m; k++)
				ok += w2[k].wr_id == 21 && w2[k].status == IBV_WC_SUCCESS &&
				      w2[k].src_qp == ub->qp_num && w2[k].byte_len == 72 &&
				      (w2[k].wc_flags & IBV_WC_WITH_IMM);
			CHECK(ok == 1, "the answer through the AH from the completion");
		}
		ibv_destroy_ah(back);
	}
	ibv_destroy_ah(ah);
	ibv_destroy_qp(ua);
	ibv_destroy_qp(ub);
	ibv_destroy_cq(cq);
}

/* UD over the link-local IPv6 GID (index 0) to ourselves: the GRH is
 * the IPv6 header as it came, and the AH made from it answers back over
 * the same GID. Then what is refused: multicast; memory windows made,
 * and a bind on a UD QP refused. */
static void
test_ud_ipv6_and_refusals(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
		.grh = { .sgid_index = 0, .hop_limit = 64 } };
	struct ibv_qp *ua, *ub;
	struct ibv_ah *ah, *back = NULL;
	union ibv_gid ll, mc = { .raw = { 0xff, 0x02, [15] = 1 } };
	struct ibv_ah_attr from;
	struct ibv_wc wc[2];
	int n, got = 0;

	if (cq == NULL || ibv_query_gid(ctx, 1, 0, &ll) != 0)
		die("create_cq, query_gid 0");
	CHECK(ll.raw[0] == 0xfe && ll.raw[1] == 0x80, "GID 0 is link-local");
	ua = make_qp(IBV_QPT_UD, cq, NULL);
	ub = make_qp(IBV_QPT_UD, cq, NULL);
	ud_ready(ua, 0x1111);
	ud_ready(ub, 0x2222);
	aa.grh.dgid = ll;
	ah = ibv_create_ah(pd, &aa);
	CHECK(ah != NULL, "ibv_create_ah over IPv6 (GID 0 to fe80::)");
	if (ah == NULL)
		return;
	memset(buf + 8192, 0, 40 + 64);
	memset(buf, 0x66, 64);
	post_recv(ub, NULL, 8192, 40 + 64, 30);
	post_send(ua, ah, ub->qp_num, 0x2222, 0, 64, 31, false);
	n = poll_n(cq, wc, 2);
	for (int i = 0; i < n; i++) {
		if (wc[i].wr_id != 30)
			continue;
		got++;
		CHECK(wc[i].status == IBV_WC_SUCCESS && wc[i].byte_len == 40 + 64 &&
		      (wc[i].wc_flags & IBV_WC_GRH) &&
		      (buf[8192] >> 4) == 6 && memcmp(buf + 8192 + 8, ll.raw, 16) == 0 &&
		      memcmp(buf + 8192 + 24, ll.raw, 16) == 0 &&
		      memcmp(buf + 8192 + 40, buf, 64) == 0,
		      "UD over IPv6: the GRH is the IPv6 header (from and to fe80::), "
		      "then the payload");
		CHECK(ibv_init_ah_from_wc(ctx, 1, &wc[i], (struct ibv_grh *)(buf + 8192),
					  &from) == 0 && from.grh.sgid_index == 0 &&
		      memcmp(from.grh.dgid.raw, ll.raw, 16) == 0,
		      "ibv_init_ah_from_wc: back to fe80:: from GID 0");
		back = ibv_create_ah(pd, &from);
	}
	CHECK(got == 1 && back != NULL, "the datagram came, and an AH back (%d)", n);
	if (back != NULL) {
		post_recv(ua, NULL, 12288, 40 + 64, 32);
		post_send(ub, back, ua->qp_num, 0x1111, 0, 16, 33, false);
		n = poll_n(cq, wc, 2);
		got = 0;
		for (int i = 0; i < n; i++)
			got += wc[i].wr_id == 32 && wc[i].status == IBV_WC_SUCCESS &&
			       wc[i].byte_len == 40 + 16;
		CHECK(got == 1, "the answer over IPv6");
		ibv_destroy_ah(back);
	}
	aa.grh.dgid = mc;
	errno = 0;
	CHECK(ibv_create_ah(pd, &aa) == NULL && errno == EOPNOTSUPP,
	      "an AH to a multicast group: EOPNOTSUPP (%d)", errno);
	CHECK(ibv_attach_mcast(ub, &mc, 0) == EOPNOTSUPP,
	      "ibv_attach_mcast: EOPNOTSUPP");
	{
		/* windows (bound and used in tests/pyverbs/test_mw.py): both
		 * types made, a third refused; a UD QP binds none */
		struct ibv_mw *w1 = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
		struct ibv_mw *w2 = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
		struct ibv_device_attr da;
		struct ibv_send_wr bw = { .opcode = IBV_WR_BIND_MW }, *bad;

		CHECK(w1 != NULL && w2 != NULL && w1->rkey != w2->rkey &&
		      w1->type == IBV_MW_TYPE_1 && w2->pd == pd,
		      "memory windows of type 1 and 2");
		errno = 0;
		CHECK(ibv_alloc_mw(pd, (enum ibv_mw_type)3) == NULL && errno == EINVAL,
		      "a window of type 3: EINVAL (%d)", errno);
		bw.bind_mw.mw = w2;
		bw.bind_mw.rkey = ibv_inc_rkey(w2->rkey);
		CHECK(ibv_post_send(ua, &bw, &bad) == EINVAL,
		      "a bind on a UD QP: EINVAL");
		CHECK(ibv_query_device(ctx, &da) == 0 &&
		      (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
		      (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) &&
		      da.max_mw > 0, "device: windows of type 1 and 2B");
		CHECK(w1 != NULL && ibv_dealloc_mw(w1) == 0 && w2 != NULL &&
		      ibv_dealloc_mw(w2) == 0, "windows freed");
	}
	ibv_destroy_ah(ah);
	ibv_destroy_qp(ua);
	ibv_destroy_qp(ub);
	ibv_destroy_cq(cq);
}

static void
test_srq_ex(void)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 8, .max_sge = 1, .srq_limit = 2 },
		.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE,
		.srq_type = IBV_SRQT_BASIC,
		.pd = pd,
	};
	struct ibv_srq_attr q;
	struct ibv_srq *srq = ibv_create_srq_ex(ctx, &sa);

	CHECK(srq != NULL, "ibv_create_srq_ex, basic (%s)", strerror(errno));
	if (srq == NULL)
		return;
	CHECK(ibv_query_srq(srq, &q) == 0 && q.max_wr >= 8 && q.max_sge == 1 &&
	      q.srq_limit == 2, "ibv_query_srq: %u WQEs, limit %u", q.max_wr,
	      q.srq_limit);
	q.max_wr = 64;
	CHECK(ibv_modify_srq(srq, &q, IBV_SRQ_MAX_WR) == EOPNOTSUPP,
	      "resizing an SRQ: EOPNOTSUPP");
	CHECK(ibv_destroy_srq(srq) == 0, "destroy_srq");
	sa.srq_type = IBV_SRQT_XRC;
	errno = 0;
	CHECK(ibv_create_srq_ex(ctx, &sa) == NULL && errno == EOPNOTSUPP,
	      "an XRC SRQ: EOPNOTSUPP (%d)", errno);
}

/* The drain mode (see the top of the file). */
static int
do_drain(void)
{
	enum { DEPTH = 32, LEN = 4096 };
	struct ibv_cq *cq = ibv_create_cq(ctx, 4 * DEPTH, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 } };
	struct ibv_qp *a, *b, *c, *d;
	uint64_t ok = 0, flushed = 0, other = 0, posted = 0, done = 0;
	bool fatal = false, announced = false;
	time_t t0 = time(NULL), fatal_at = 0;
	int first_other = -1;

	if (cq == NULL)
		die("create_cq");
	ia.send_cq = ia.recv_cq = cq;
	a = ibv_create_qp(pd, &ia);
	b = ibv_create_qp(pd, &ia);
	c = ibv_create_qp(pd, &ia);
	d = ibv_create_qp(pd, &ia);
	if (a == NULL || b == NULL || c == NULL || d == NULL)
		die("create_qp");
	rc_connect(a, b->qp_num);
	rc_connect(b, a->qp_num);
	rc_connect(c, d->qp_num);
	rc_connect(d, c->qp_num);
	/* SENDs to a QP with no receive: RNR NAKs, retried for ever */
	for (int k = 0; k < 4; k++) {
		struct ibv_sge sg = { (uintptr_t)buf, 64, mr->lkey };
		struct ibv_send_wr wr = { .wr_id = UINT64_MAX, .sg_list = &sg,
			.num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED }, *bad;

		if (ibv_post_send(c, &wr, &bad) != 0)
			die("post_send (stuck SEND)");
		posted++;
	}
	if (fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK) != 0)
		die("async_fd O_NONBLOCK");
	for (;;) {
		struct ibv_wc wc[16];
		struct pollfd pf = { .fd = ctx->async_fd, .events = POLLIN };
		int n, i;

		while (!fatal && posted - done < DEPTH) {
			struct ibv_sge sg = { (uintptr_t)buf, LEN, mr->lkey };
			struct ibv_send_wr wr = { .wr_id = posted, .sg_list = &sg,
				.num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				.send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = { (uintptr_t)buf + 8 * LEN, mr->rkey } }, *bad;

			if (ibv_post_send(a, &wr, &bad) != 0)
				break;  /* the QP went to ERR between two polls */
			posted++;
		}
		n = ibv_poll_cq(cq, 16, wc);
		for (i = 0; i < n; i++) {
			if (wc[i].status == IBV_WC_SUCCESS)
				ok++;
			else if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
				flushed++;
			else if (other++ == 0)
				first_other = wc[i].status;
		}
		done += (uint64_t)(n > 0 ? n : 0);
		if (!announced && ok >= 1000) {
			printf("streaming\n");
			fflush(stdout);
			announced = true;
		}
		if (poll(&pf, 1, 0) == 1) {
			struct ibv_async_event ev;

			while (ibv_get_async_event(ctx, &ev) == 0) {
				if (ev.event_type == IBV_EVENT_DEVICE_FATAL && !fatal) {
					fatal = true;
					fatal_at = time(NULL);
				}
				ibv_ack_async_event(&ev);
			}
		}
		if (fatal && done == posted)
			break;
		if ((fatal && time(NULL) - fatal_at > 10) ||
		    (!fatal && time(NULL) - t0 > 120)) {
			printf("FAIL: %s\n", fatal ? "WRITEs still outstanding 10 s "
			       "after DEVICE_FATAL" : "no DEVICE_FATAL in 120 s");
			failures++;
			break;
		}
	}
	CHECK(other == 0, "only successes and flush errors (first other status %d)",
	      first_other);
	CHECK(ibv_destroy_qp(a) == 0 && ibv_destroy_qp(b) == 0 &&
	      ibv_destroy_qp(c) == 0 && ibv_destroy_qp(d) == 0,
	      "destroy the QPs after DEVICE_FATAL (%d)", errno);
	CHECK(ibv_destroy_cq(cq) == 0, "destroy the CQ (%d)", errno);
	printf("{\"device_fatal\": %s, \"posted\": %" PRIu64 ", \"completed\": %"
	       PRIu64 ", \"succeeded\": %" PRIu64 ", \"flushed\": %" PRIu64
	       ", \"other\": %" PRIu64 "}\n", fatal ? "true" : "false", posted,
	       done, ok, flushed, other);
	return 0;
}

/* rdma-core's devices outlive the list that handed them out: programs
 * (UCX, librdmacm) free the list and keep asking an open context's device
 * its name and GUID. The freed list's memory is handed out again and
 * scribbled over before the device is asked. */
static void
test_device_outlives_list(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL), **again;
	struct ibv_context *c;
	__be64 guid;
	void *scribble[80];     /* one block of each size 16 B - 1,280 B */

	if (l == NULL || l[0] == NULL) {
		CHECK(0, "a second ibv_get_device_list");
		return;
	}
	c = ibv_open_device(l[0]);
	guid = ibv_get_device_guid(l[0]);
	ibv_free_device_list(l);
	for (int i = 0; i < 80; i++) {
		scribble[i] = malloc(16 * ((size_t)i + 1));
		if (scribble[i] != NULL)
			memset(scribble[i], 0xa5, 16 * ((size_t)i + 1));
	}
	CHECK(c != NULL && strcmp(ibv_get_device_name(c->device), "dprdma0") == 0 &&
	      ibv_get_device_guid(c->device) == guid,
	      "a device opened from a freed list keeps its name and GUID");
	again = ibv_get_device_list(NULL);
	CHECK(again != NULL && c != NULL && again[0] == c->device,
	      "a new list hands out the same device");
	for (int i = 0; i < 80; i++)
		free(scribble[i]);
	ibv_free_device_list(again);
	if (c != NULL)
		ibv_close_device(c);
}

int
main(int argc, char **argv)
{
	struct ibv_device **list = ibv_get_device_list(NULL);

	if (list == NULL || list[0] == NULL)
		die("no device (DPRDMA_SOCKET?)");
	ctx = ibv_open_device(list[0]);
	if (ctx == NULL)
		die("open_device");
	if (ibv_query_gid(ctx, 1, 1, &gid) != 0)
		die("query_gid");
	pd = ibv_alloc_pd(ctx);
	buf = calloc(1, 65536);
	if (pd == NULL || buf == NULL)
		die("pd");
	mr = ibv_reg_mr(pd, buf, 65536, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (mr == NULL)
		die("reg_mr");
	if (argc > 1 && strcmp(argv[1], "drain") == 0) {
		do_drain();
		CHECK(ibv_dereg_mr(mr) == 0 && ibv_dealloc_pd(pd) == 0 &&
		      ibv_close_device(ctx) == 0, "release after DEVICE_FATAL");
		ibv_free_device_list(list);
		free(buf);
		printf("verbs-test: %d failures\n", failures);
		return failures != 0;
	}
	{
		struct ibv_device_attr_ex dx;

		CHECK(ibv_query_device_ex(ctx, NULL, &dx) == 0 &&
		      dx.orig_attr.max_srq > 0 && dx.orig_attr.max_srq_wr > 0 &&
		      dx.orig_attr.max_ah > 0 && dx.orig_attr.max_qp > 0 &&
		      dx.odp_caps.general_caps == 0 && dx.completion_timestamp_mask == 0,
		      "ibv_query_device_ex: SRQs and AHs offered, no ODP, no "
		      "completion timestamps");
	}
	test_device_outlives_list();
	test_cq_ex();
	test_ud_ah_from_wc();
	test_ud_ipv6_and_refusals();
	test_srq_ex();
	test_event_wait_interrupted();
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	printf("verbs-test: %d failures\n", failures);
	return failures != 0;
}
