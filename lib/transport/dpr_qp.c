/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Queue pairs: creation, the state machine of ibv_modify_qp (IBA 10.3.1,
 * 11.2.4.2), completions, and the error state, where every outstanding
 * WQE completes with WR_FLUSH_ERR (IBA 10.3.1.1). Posting is dpr_post.c.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dpr_ratelimit.h"
#include "transport_private.h"

/* Required and optional attributes of each RC transition, as the kernel's
 * qp_state_table lists them (IBA 11.2.4.2 table 91). */
struct qp_trans {
	bool valid;
	uint32_t req;
	uint32_t opt;
};

#define T(r, o) { true, (r), (o) }
#define ANY_TO_RESET_ERR [DPR_QPS_RESET] = T(0, 0), [DPR_QPS_ERR] = T(0, 0)

static const struct qp_trans qp_table[DPR_QPS_NUM][DPR_QPS_NUM] = {
	[DPR_QPS_RESET] = {
		ANY_TO_RESET_ERR,
		[DPR_QPS_INIT] = T(DPR_QP_PKEY_INDEX | DPR_QP_PORT |
				   DPR_QP_ACCESS_FLAGS, 0),
	},
	[DPR_QPS_INIT] = {
		ANY_TO_RESET_ERR,
		[DPR_QPS_INIT] = T(0, DPR_QP_PKEY_INDEX | DPR_QP_PORT |
				   DPR_QP_ACCESS_FLAGS),
		[DPR_QPS_RTR] = T(DPR_QP_AV | DPR_QP_PATH_MTU | DPR_QP_DEST_QPN |
				  DPR_QP_RQ_PSN | DPR_QP_MAX_DEST_RD_ATOMIC |
				  DPR_QP_MIN_RNR_TIMER,
				  DPR_QP_ALT_PATH | DPR_QP_ACCESS_FLAGS |
				  DPR_QP_PKEY_INDEX),
	},
	[DPR_QPS_RTR] = {
		ANY_TO_RESET_ERR,
		[DPR_QPS_RTS] = T(DPR_QP_TIMEOUT | DPR_QP_RETRY_CNT |
				  DPR_QP_RNR_RETRY | DPR_QP_SQ_PSN |
				  DPR_QP_MAX_QP_RD_ATOMIC,
				  DPR_QP_CUR_STATE | DPR_QP_ALT_PATH |
				  DPR_QP_ACCESS_FLAGS | DPR_QP_MIN_RNR_TIMER |
				  DPR_QP_PATH_MIG_STATE),
	},
	[DPR_QPS_RTS] = {
		ANY_TO_RESET_ERR,
		[DPR_QPS_RTS] = T(0, DPR_QP_CUR_STATE | DPR_QP_ACCESS_FLAGS |
				  DPR_QP_ALT_PATH | DPR_QP_PATH_MIG_STATE |
				  DPR_QP_MIN_RNR_TIMER),
		[DPR_QPS_SQD] = T(0, DPR_QP_EN_SQD_ASYNC_NOTIFY),
	},
	[DPR_QPS_SQD] = {
		ANY_TO_RESET_ERR,
		[DPR_QPS_RTS] = T(0, DPR_QP_CUR_STATE | DPR_QP_ALT_PATH |
				  DPR_QP_ACCESS_FLAGS | DPR_QP_MIN_RNR_TIMER |
				  DPR_QP_PATH_MIG_STATE),
		[DPR_QPS_SQD] = T(0, DPR_QP_AV | DPR_QP_TIMEOUT |
				  DPR_QP_RETRY_CNT | DPR_QP_RNR_RETRY |
				  DPR_QP_MAX_QP_RD_ATOMIC |
				  DPR_QP_MAX_DEST_RD_ATOMIC | DPR_QP_ALT_PATH |
				  DPR_QP_ACCESS_FLAGS | DPR_QP_PKEY_INDEX |
				  DPR_QP_MIN_RNR_TIMER | DPR_QP_PATH_MIG_STATE),
	},
	[DPR_QPS_SQE] = {
		ANY_TO_RESET_ERR,
		[DPR_QPS_RTS] = T(0, DPR_QP_CUR_STATE | DPR_QP_ACCESS_FLAGS),
	},
	[DPR_QPS_ERR] = {
		ANY_TO_RESET_ERR,
	},
};

/* The same for UD: no path, no PSNs to receive, a Q_Key from INIT on. */
static const struct qp_trans qp_table_ud[DPR_QPS_NUM][DPR_QPS_NUM] = {
	[DPR_QPS_RESET] = {
		ANY_TO_RESET_ERR,
		[DPR_QPS_INIT] = T(DPR_QP_PKEY_INDEX | DPR_QP_PORT | DPR_QP_QKEY, 0),
	},
	[DPR_QPS_INIT] = {
		ANY_TO_RESET_ERR,
		[DPR_QPS_INIT] = T(0, DPR_QP_PKEY_INDEX | DPR_QP_PORT | DPR_QP_QKEY),
		[DPR_QPS_RTR] = T(0, DPR_QP_PKEY_INDEX | DPR_QP_QKEY),
	},
	[DPR_QPS_RTR] = {
		ANY_TO_RESET_ERR,
		[DPR_QPS_RTS] = T(DPR_QP_SQ_PSN, DPR_QP_CUR_STATE | DPR_QP_QKEY),
	},
	[DPR_QPS_RTS] = {
		ANY_TO_RESET_ERR,
		[DPR_QPS_RTS] = T(0, DPR_QP_CUR_STATE | DPR_QP_QKEY),
		[DPR_QPS_SQD] = T(0, DPR_QP_EN_SQD_ASYNC_NOTIFY),
	},
	[DPR_QPS_SQD] = {
		ANY_TO_RESET_ERR,
		[DPR_QPS_RTS] = T(0, DPR_QP_CUR_STATE | DPR_QP_QKEY),
		[DPR_QPS_SQD] = T(0, DPR_QP_PKEY_INDEX | DPR_QP_QKEY),
	},
	[DPR_QPS_SQE] = {
		ANY_TO_RESET_ERR,
		[DPR_QPS_RTS] = T(0, DPR_QP_CUR_STATE | DPR_QP_QKEY),
	},
	[DPR_QPS_ERR] = {
		ANY_TO_RESET_ERR,
	},
};

/* UC (IBA table 91, the kernel's qp_state_table): RC's without the
 * READ/atomic depths, the ACK timer and the retry counts. */
static const struct qp_trans qp_table_uc[DPR_QPS_NUM][DPR_QPS_NUM] = {
	[DPR_QPS_RESET] = {
		ANY_TO_RESET_ERR,
		[DPR_QPS_INIT] = T(DPR_QP_PKEY_INDEX | DPR_QP_PORT |
				   DPR_QP_ACCESS_FLAGS, 0),
	},
	[DPR_QPS_INIT] = {
		ANY_TO_RESET_ERR,
		[DPR_QPS_INIT] = T(0, DPR_QP_PKEY_INDEX | DPR_QP_PORT |
				   DPR_QP_ACCESS_FLAGS),
		[DPR_QPS_RTR] = T(DPR_QP_AV | DPR_QP_PATH_MTU | DPR_QP_DEST_QPN |
				  DPR_QP_RQ_PSN,
				  DPR_QP_ALT_PATH | DPR_QP_ACCESS_FLAGS |
				  DPR_QP_PKEY_INDEX),
	},
	[DPR_QPS_RTR] = {
		ANY_TO_RESET_ERR,
		[DPR_QPS_RTS] = T(DPR_QP_SQ_PSN,
				  DPR_QP_CUR_STATE | DPR_QP_ALT_PATH |
				  DPR_QP_ACCESS_FLAGS | DPR_QP_PATH_MIG_STATE),
	},
	[DPR_QPS_RTS] = {
		ANY_TO_RESET_ERR,
		[DPR_QPS_RTS] = T(0, DPR_QP_CUR_STATE | DPR_QP_ACCESS_FLAGS |
				  DPR_QP_ALT_PATH | DPR_QP_PATH_MIG_STATE),
		[DPR_QPS_SQD] = T(0, DPR_QP_EN_SQD_ASYNC_NOTIFY),
	},
	[DPR_QPS_SQD] = {
		ANY_TO_RESET_ERR,
		[DPR_QPS_RTS] = T(0, DPR_QP_CUR_STATE | DPR_QP_ALT_PATH |
				  DPR_QP_ACCESS_FLAGS | DPR_QP_PATH_MIG_STATE),
		[DPR_QPS_SQD] = T(0, DPR_QP_AV | DPR_QP_ALT_PATH |
				  DPR_QP_ACCESS_FLAGS | DPR_QP_PKEY_INDEX |
				  DPR_QP_PATH_MIG_STATE),
	},
	[DPR_QPS_SQE] = {
		ANY_TO_RESET_ERR,
		[DPR_QPS_RTS] = T(0, DPR_QP_CUR_STATE | DPR_QP_ACCESS_FLAGS),
	},
	[DPR_QPS_ERR] = {
		ANY_TO_RESET_ERR,
	},
};

/* What @p qp holds of the daemon's heap for its life: the daemon's side
 * of its queues (sized by its caps), and the rest -- the QP itself, its
 * responder's READ/atomic resources. */
static uint32_t
qp_queue_bytes(const struct dpr_tqp *qp)
{
	const size_t sq = (size_t)qp->sq.mask + 1, rq = (size_t)qp->rq.mask + 1;

	return (uint32_t)(sq * (sizeof(*qp->sq.wqe) + qp->sq.max_sge * sizeof(*qp->sq.sge) +
				qp->sq.max_inline + 1u) +
			  rq * (sizeof(*qp->rq.wqe) + qp->rq.max_sge * sizeof(*qp->rq.sge)));
}

static uint32_t
qp_bytes(const struct dpr_tqp *qp)
{
	return (uint32_t)(sizeof(*qp) + (size_t)qp->resp.res_num * sizeof(*qp->resp.res));
}

/* The transport's qp_bytes (a gauge) brought up to @p qp's now; its
 * queues never change size. */
static void
qp_bytes_sync(struct dpr_tqp *qp)
{
	const uint32_t now = qp_bytes(qp);

	if (qp->bytes_counted == 0)
		qp->tp->stats.qp_queue_bytes += qp_queue_bytes(qp);
	qp->tp->stats.qp_bytes += (uint64_t)now - qp->bytes_counted;
	qp->bytes_counted = now;
}

/*
 * The window a QP starts with, until its first delivery-rate sample with
 * an RTT sizes it (dpr_comp.c, window_sample()): min_inflight, not the
 * most it may have (max_inflight, 1,024). The first RTT comes within tens
 * of microseconds of a stream's start; QPs that start at once into a
 * bottleneck would otherwise each put 1,024 packets in its queue, and a
 * QP whose every timed request was sent again behind that queue (no RTT
 * sample) kept the full window for good: with 16 QPs of 64 KiB WRITEs
 * into a 1 Gbit/s link with 1 MiB of buffer (test_bottleneck), Jain's
 * fairness index 0.87 -> 0.98, drops 170-195k -> 73-105k, the 4 QPs'
 * backlog p99 1 MiB (the buffer) -> 500-670 KiB. With measuring off
 * (min_inflight 0) the window is max_inflight, as before.
 */
static uint32_t
first_window(const struct dpr_transport *tp)
{
	return tp->conf.min_unacked != 0 ? tp->conf.min_unacked : tp->conf.max_unacked;
}

struct dpr_tqp *
dpr_qp_create(struct dpr_transport *tp, const struct dpr_qp_init_attr *ia)
{
	const struct dpr_verbs_limits *lim = dpr_verbs_limits(tp->ctx);
	struct dpr_tqp *qp;
	uint32_t sq_size, rq_size, i;

	if (ia->qp_type != DPR_QPT_RC && ia->qp_type != DPR_QPT_UD &&
	    ia->qp_type != DPR_QPT_UC) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((ia->srq != NULL && (ia->srq->tp != tp || ia->qp_type == DPR_QPT_UC)) ||
	    ia->pd == NULL || ia->send_cq == NULL || ia->recv_cq == NULL ||
	    ia->max_send_wr == 0 || ia->max_send_wr > lim->max_qp_wr ||
	    ia->max_recv_wr > lim->max_qp_wr ||
	    ia->max_send_sge > lim->max_sge ||
	    ia->max_recv_sge > RTE_MIN(lim->max_sge, (uint32_t)DPR_RECV_WR_MAX_SGE) ||
	    ia->max_inline_data > lim->max_inline ||
	    (ia->gsi && ia->qp_type != DPR_QPT_UD)) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return NULL;
	sq_size = rte_align32pow2(ia->max_send_wr);
	rq_size = rte_align32pow2(ia->max_recv_wr ? ia->max_recv_wr : 1);
	qp->sq.size = ia->max_send_wr;
	qp->sq.mask = sq_size - 1;
	qp->sq.max_sge = ia->max_send_sge ? ia->max_send_sge : 1;
	qp->sq.max_inline = ia->max_inline_data;
	qp->rq.size = ia->max_recv_wr;
	qp->rq.mask = rq_size - 1;
	qp->rq.max_sge = ia->max_recv_sge ? ia->max_recv_sge : 1;
	qp->sq.wqe = calloc(sq_size, sizeof(*qp->sq.wqe));
	qp->sq.sge = calloc((size_t)sq_size * qp->sq.max_sge, sizeof(*qp->sq.sge));
	qp->sq.inline_buf = calloc((size_t)sq_size, qp->sq.max_inline + 1);
	qp->rq.wqe = calloc(rq_size, sizeof(*qp->rq.wqe));
	qp->rq.sge = calloc((size_t)rq_size * qp->rq.max_sge, sizeof(*qp->rq.sge));
	if (qp->sq.wqe == NULL || qp->sq.sge == NULL || qp->sq.inline_buf == NULL ||
	    qp->rq.wqe == NULL || qp->rq.sge == NULL ||
	    (qp->qpn = ia->gsi ? DPR_QPN_GSI : 0,
	     dpr_qpn_alloc(tp->ctx, qp, &qp->qpn) != 0)) {
		free(qp->sq.wqe);
		free(qp->sq.sge);
		free(qp->sq.inline_buf);
		free(qp->rq.wqe);
		free(qp->rq.sge);
		free(qp);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < sq_size; i++) {
		qp->sq.wqe[i].sge = &qp->sq.sge[(size_t)i * qp->sq.max_sge];
		qp->sq.wqe[i].inline_data =
			&qp->sq.inline_buf[(size_t)i * (qp->sq.max_inline + 1)];
	}
	for (i = 0; i < rq_size; i++)
		qp->rq.wqe[i].sge = &qp->rq.sge[(size_t)i * qp->rq.max_sge];
	qp->tp = tp;
	qp->type = ia->qp_type;
	qp->srq = ia->srq;
	if (qp->srq != NULL) {
		qp->srq->users++;
		qp->srq_wqe.sge = qp->srq_sge;
	}
	qp->pd = ia->pd;
	qp->scq = ia->send_cq;
	qp->rcq = ia->recv_cq;
	qp->sq_sig_all = ia->sq_sig_all;
	qp->state = DPR_QPS_RESET;
	dpr_req_window_set(qp, first_window(tp));
	qp->pd->refs++;
	qp->scq->refs++;
	qp->rcq->refs++;
	TAILQ_INSERT_TAIL(&tp->all, qp, all_link);
	qp_bytes_sync(qp);
	return qp;
}

/* On the transport's list of QPs waiting for their peer's MAC, or off */
static void
path_wait_set(struct dpr_tqp *qp, bool wait)
{
	if (wait == qp->path_wait)
		return;
	if (wait)
		TAILQ_INSERT_TAIL(&qp->tp->path_wait, qp, path_link);
	else
		TAILQ_REMOVE(&qp->tp->path_wait, qp, path_link);
	qp->path_wait = wait;
}

/* @p qp's frames go to @p mac from now on */
static void
path_take(struct dpr_tqp *qp, const struct rte_ether_addr *mac)
{
	qp->encap.dst_mac = *mac;
	qp->mac_resolved = true;
	qp->tmpl_fresh = false;        /* the fast paths' headers remade */
	qp->sec_fast = false;
	path_wait_set(qp, false);
}

bool
dpr_qp_path_resolve(struct dpr_tqp *qp)
{
	struct dpr_transport *tp = qp->tp;
	struct rte_ether_addr mac;

	if (qp->mac_resolved)
		return true;
	if (tp->conf.resolve(tp->conf.resolve_arg, &qp->encap.dgid, &mac) != 0)
		return false;
	path_take(qp, &mac);
	return true;
}

void
dpr_transport_path_update(struct dpr_transport *tp, const union dpr_gid *gid,
			  const struct rte_ether_addr *mac)
{
	struct dpr_tqp *qp, *next;

	/* the QPs that wait for it first: they send now */
	for (qp = TAILQ_FIRST(&tp->path_wait); qp != NULL; qp = next) {
		next = TAILQ_NEXT(qp, path_link);
		if (!dpr_gid_eq(&qp->encap.dgid, gid))
			continue;
		path_take(qp, mac);
		tp->stats.path_updates++;
		qp_work(qp);
	}
	/* a MAC that changed (the resolver lets that happen at most once
	 * a second per neighbour): every QP that had the old one */
	TAILQ_FOREACH(qp, &tp->all, all_link)
		if (qp->mac_resolved && qp->type != DPR_QPT_UD &&
		    dpr_gid_eq(&qp->encap.dgid, gid) &&
		    !rte_is_same_ether_addr(&qp->encap.dst_mac, mac)) {
			path_take(qp, mac);
			tp->stats.path_updates++;
			qp_work(qp);
		}
}

static void
qp_unlink(struct dpr_tqp *qp)
{
	dpr_timer_cancel(qp->tp, &qp->timer);
	dpr_cc_stop(qp);
	if (qp->on_work) {
		TAILQ_REMOVE(&qp->tp->work, qp, work_link);
		qp->on_work = false;
	}
	path_wait_set(qp, false);
	dpr_secqp_end(qp);
}

int
dpr_qp_destroy(struct dpr_tqp *qp)
{
	struct dpr_transport *tp = qp->tp;

	tp->stats.qp_bytes -= qp->bytes_counted;
	tp->stats.qp_queue_bytes -= qp_queue_bytes(qp);

	qp_unlink(qp);
	dpr_sr_reset(qp);
	TAILQ_REMOVE(&tp->all, qp, all_link);
	dpr_qpn_free(tp->ctx, qp->qpn);
	if (qp->srq != NULL)
		qp->srq->users--;
	qp->pd->refs--;
	qp->scq->refs--;
	qp->rcq->refs--;
	free(qp->resp.res);
	free(qp->sq.wqe);
	free(qp->sq.sge);
	free(qp->sq.inline_buf);
	free(qp->rq.wqe);
	free(qp->rq.sge);
	free(qp);
	return 0;
}

void
dpr_qp_set_rq_done(struct dpr_tqp *qp, dpr_rq_pull_cb fn, void *arg)
{
	qp->rq_done_cb = fn;
	qp->rq_done_arg = arg;
}

void
dpr_qp_set_rq_pull(struct dpr_tqp *qp, dpr_rq_pull_cb fn, void *arg)
{
	qp->rq_pull = fn;
	qp->rq_pull_arg = arg;
}

uint32_t
dpr_qp_num(const struct dpr_tqp *qp)
{
	return qp->qpn;
}

uint32_t
dpr_qp_owner(const struct dpr_tqp *qp)
{
	return qp->tp->conf.owner;
}

enum dpr_qp_state
dpr_qp_get_state(const struct dpr_tqp *qp)
{
	return qp->state;
}

const char *
dpr_qp_state_name(enum dpr_qp_state s)
{
	static const char *const names[DPR_QPS_NUM] = {
		[DPR_QPS_RESET] = "RESET", [DPR_QPS_INIT] = "INIT",
		[DPR_QPS_RTR] = "RTR", [DPR_QPS_RTS] = "RTS",
		[DPR_QPS_SQD] = "SQD", [DPR_QPS_SQE] = "SQE",
		[DPR_QPS_ERR] = "ERR",
	};

	return (unsigned int)s < DPR_QPS_NUM ? names[s] : "?";
}

void
dpr_qp_info(const struct dpr_tqp *qp, struct dpr_qp_info *info)
{
	const struct dpr_transport *tp = qp->tp;

	memset(info, 0, sizeof(*info));
	info->qpn = qp->qpn;
	info->type = qp->type;
	info->qkey = qp->attr.qkey;
	info->dest_qpn = qp->attr.dest_qp_num;
	info->state = qp->state;
	info->pmtu = qp->pmtu;
	info->dgid = qp->attr.ah_attr.dgid;
	info->sgid_index = qp->attr.ah_attr.sgid_index;
	info->sq_size = qp->sq.size;
	info->sq_posted = qp->sq.prod;
	info->sq_started = qp->req.index;
	info->sq_completed = qp->comp.index;
	info->req_psn = qp->req.psn;
	info->psn_hi = qp->req.psn_hi;
	info->comp_psn = qp->comp.psn;
	info->rd_atomic = qp->req.rd_atomic;
	info->max_rd_atomic = qp->attr.max_rd_atomic;
	info->retry_cnt = qp->attr.retry_cnt;
	info->retry_left = qp->comp.retry_cnt;
	info->rnr_retry = qp->attr.rnr_retry;
	info->rnr_left = qp->comp.rnr_retry;
	info->timeout = qp->attr.timeout;
	info->rnr_wait = qp->comp.rnr_wait;
	info->retried = qp->comp.retried;
	info->replaying = qp->comp.replaying;
	info->retry_psn = qp->comp.retry_psn;
	info->retry_end = qp->comp.retry_end;
	info->mac_resolved = qp->mac_resolved;
	info->on_work = qp->on_work;
	info->timer_armed = qp->timer.armed;
	if (qp->timer.armed) {
		uint64_t d = qp->comp.rnr_wait ? qp->timer.deadline :
			     qp->comp.ack_deadline;

		info->timer_left_ns = d > tp->now ? d - tp->now : 0;
	}
	info->window = qp->req.window;
	info->srtt_ns = qp->comp.srtt;
	info->min_rtt_ns = qp->comp.min_rtt;
	info->rate_pps = ((uint64_t)qp->comp.dr_rate * 1000000000ull) >> 20;
	info->mem_queue_bytes = qp_queue_bytes(qp);
	info->mem_bytes = qp_bytes(qp) +
		(qp->sr_rx != NULL ? (uint32_t)sizeof(*qp->sr_rx) : 0) +
		(qp->sr_tx != NULL ? (uint32_t)sizeof(*qp->sr_tx) : 0);
	info->cc_limited = qp->cc.limited;
	if (qp->cc.limited) {
		info->cc_rate_bps = (uint64_t)qp->cc.rate;
		info->cc_target_bps = (uint64_t)qp->cc.target;
		info->cc_alpha = (uint32_t)(qp->cc.alpha * 1024);
	}
	if (qp->comp.index != qp->sq.prod) {
		const struct dpr_send_wqe *w = &qp->sq.wqe[qp->comp.index & qp->sq.mask];

		info->head.wr_id = w->wr_id;
		info->head.opcode = w->opcode;
		info->head.state = w->state;
		info->head.first_psn = w->started ? w->first_psn : 0;
		info->head.last_psn = w->started ? w->last_psn : 0;
		info->head.length = w->length;
		info->head.offset = w->offset;
		info->head.read_done = w->read_done;
	}
	info->rq_posted = qp->rq.prod;
	info->rq_consumed = qp->rq.cons;
	info->resp_psn = qp->resp.psn;
	info->resp_msn = qp->resp.msn;
	info->max_dest_rd_atomic = qp->attr.max_dest_rd_atomic;
	info->res_unsent = qp->resp.res_unsent;
	info->ack_pending = qp->resp.ack_pending;
	info->nak_pending = qp->resp.nak_pending;
	info->nak_syndrome = qp->resp.nak_syn;
	info->nak_psn = qp->resp.nak_psn;
	info->sr = qp->sr == SR_YES;
	info->sec = dpr_secqp_mode_name(qp);
	info->sr_held = qp->sr_rx != NULL ? qp->sr_rx->n : 0;
	info->stats = qp->stats;
}

int
dpr_transport_foreach_qp(struct dpr_transport *tp,
			 int (*fn)(struct dpr_tqp *qp, void *arg), void *arg)
{
	struct dpr_tqp *qp;
	int rc = 0;

	TAILQ_FOREACH(qp, &tp->all, all_link) {
		rc = fn(qp, arg);
		if (rc != 0)
			break;
	}
	return rc;
}

int
dpr_qp_query(const struct dpr_tqp *qp, struct dpr_qp_attr *attr)
{
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->sq_psn = qp->req.psn;
	attr->rq_psn = qp->resp.psn;
	return 0;
}

/* Check every value before anything changes. */
static int
check_values(const struct dpr_tqp *qp, const struct dpr_qp_attr *a, int mask)
{
	const struct dpr_verbs_limits *lim = dpr_verbs_limits(qp->tp->ctx);

	if ((mask & DPR_QP_CUR_STATE) && a->cur_qp_state != qp->state)
		return -EINVAL;
	if ((mask & DPR_QP_ACCESS_FLAGS) && (a->qp_access_flags & ~DPR_ACCESS_ALL))
		return -EINVAL;
	if ((mask & DPR_QP_PKEY_INDEX) && a->pkey_index != 0)
		return -EINVAL;
	if ((mask & DPR_QP_PORT) && a->port_num != 1)
		return -EINVAL;
	if ((mask & DPR_QP_PATH_MTU) && dpr_mtu_bytes(a->path_mtu) == 0)
		return -EINVAL;
	if ((mask & DPR_QP_DEST_QPN) && a->dest_qp_num > DPR_PSN_MASK)
		return -EINVAL;
	if ((mask & DPR_QP_RQ_PSN) && a->rq_psn > DPR_PSN_MASK)
		return -EINVAL;
	if ((mask & DPR_QP_SQ_PSN) && a->sq_psn > DPR_PSN_MASK)
		return -EINVAL;
	if ((mask & DPR_QP_TIMEOUT) && a->timeout > 31)
		return -EINVAL;
	if ((mask & DPR_QP_RETRY_CNT) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & DPR_QP_RNR_RETRY) && a->rnr_retry > 7)
		return -EINVAL;
	if ((mask & DPR_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & DPR_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > lim->max_rd_atomic)
		return -EINVAL;
	if ((mask & DPR_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic > lim->max_rd_atomic)
		return -EINVAL;
	/* an AV names one of our GIDs, of the destination's family */
	if ((mask & DPR_QP_AV) &&
	    !dpr_conf_gid_reaches(&qp->tp->conf, a->ah_attr.sgid_index,
				  &a->ah_attr.dgid))
		return -EINVAL;
	return 0;
}

static void
build_encap(struct dpr_tqp *qp)
{
	struct dpr_transport *tp = qp->tp;
	struct dpr_wire_encap *e = &qp->encap;

	memset(e, 0, sizeof(*e));
	e->src_mac = tp->conf.mac;
	e->sgid = tp->conf.gid[qp->attr.ah_attr.sgid_index];
	e->dgid = qp->attr.ah_attr.dgid;
	e->ipv6 = !dpr_gid_is_ipv4(&e->dgid);
	/* ECT(0), as a RoCE NIC with DCQCN sends, so that a switch marks
	 * its frames CE instead of dropping them; else the AV's ECN bits */
	e->tos = tp->conf.cc.ect ? (qp->attr.ah_attr.traffic_class & 0xfc) | 0x2 :
		qp->attr.ah_attr.traffic_class;
	/* as rxe: the route's hop limit (64), not the AV's (rc_pingpong
	 * gives 1); DF set; UDP source port from the flow label */
	e->ttl = 64;
	e->df = true;
	e->ip_id = (uint16_t)(qp->qpn * 2654435761u >> 16);
	e->sport = dpr_udp_sport_rc(qp->qpn, qp->attr.dest_qp_num,
				    qp->attr.ah_attr.flow_label);
	e->flow_label = qp->attr.ah_attr.flow_label;
	qp->tmpl_fresh = false;
	qp->sec_fast = false;
	/* asked now (a request leaves at once), so that the answer is
	 * usually in before the first frame; until then the QP waits on
	 * the transport's path list, its timers running */
	if (tp->conf.resolve == NULL) {
		memset(&e->dst_mac, 0xff, sizeof(e->dst_mac));
		qp->mac_resolved = true;
	} else {
		qp->mac_resolved = tp->conf.resolve(tp->conf.resolve_arg,
						    &e->dgid, &e->dst_mac) == 0;
	}
	path_wait_set(qp, !qp->mac_resolved);
	dpr_qp_rx_tmpl(qp);
}

void
dpr_qp_rx_tmpl(struct dpr_tqp *qp)
{
	const struct dpr_wire_encap *e = &qp->encap;

	/* the peer's frames, for the receive fast path (RC over IPv4) */
	qp->rxt.on = false;
	if (qp->type == DPR_QPT_RC && !e->ipv6 && dpr_gid_is_ipv4(&e->sgid))
		dpr_wire_rx_tmpl_make(&qp->rxt, dpr_gid_to_ipv4(&e->dgid),
				      &e->src_mac, dpr_gid_to_ipv4(&e->sgid),
				      qp->qpn, DPR_DEFAULT_PKEY);
	qp->rxt_made = qp->rxt.on;
}

static void
reset_queues(struct dpr_tqp *qp)
{
	qp_unlink(qp);
	qp->sq.prod = 0;
	qp->rq.prod = 0;
	qp->rq.cons = 0;
	memset(&qp->req, 0, sizeof(qp->req));
	dpr_req_window_set(qp, first_window(qp->tp));
	memset(&qp->comp, 0, sizeof(qp->comp));
	free(qp->resp.res);
	memset(&qp->resp, 0, sizeof(qp->resp));
	qp->comm_established = false;
	dpr_sr_reset(qp);
	qp->sr = SR_UNKNOWN;
}

int
dpr_qp_modify(struct dpr_tqp *qp, const struct dpr_qp_attr *a, int mask)
{
	enum dpr_qp_state cur = qp->state;
	enum dpr_qp_state next = (mask & DPR_QP_STATE) ? a->qp_state : cur;
	const struct qp_trans *t;
	struct dpr_resp_res *res = NULL;
	int rc;

	if ((unsigned int)next >= DPR_QPS_NUM || (mask & ~((1 << 21) - 1)))
		return -EINVAL;
	t = qp->type == DPR_QPT_UD ? &qp_table_ud[cur][next] :
	    qp->type == DPR_QPT_UC ? &qp_table_uc[cur][next] : &qp_table[cur][next];
	if (!t->valid || (mask & t->req) != t->req ||
	    (mask & ~(t->req | t->opt | DPR_QP_STATE)) != 0)
		return -EINVAL;
	rc = check_values(qp, a, mask);
	if (rc != 0)
		return rc;
	if (mask & DPR_QP_MAX_DEST_RD_ATOMIC) {
		res = calloc(a->max_dest_rd_atomic ? a->max_dest_rd_atomic : 1,
			     sizeof(*res));
		if (res == NULL)
			return -ENOMEM;
	}

	/* nothing fails from here on */
	if (next == DPR_QPS_RESET) {
		reset_queues(qp);
		dpr_cc_stop(qp);
		qp->state = DPR_QPS_RESET;
		free(res);
		return 0;
	}
	if (next == DPR_QPS_ERR) {
		free(res);
		dpr_qp_error(qp, NULL);
		return 0;
	}
	if (mask & DPR_QP_ACCESS_FLAGS)
		qp->attr.qp_access_flags = a->qp_access_flags;
	if (mask & DPR_QP_PKEY_INDEX)
		qp->attr.pkey_index = a->pkey_index;
	if (mask & DPR_QP_QKEY)
		qp->attr.qkey = a->qkey;
	if (mask & DPR_QP_PORT)
		qp->attr.port_num = a->port_num;
	if (mask & DPR_QP_MIN_RNR_TIMER)
		qp->attr.min_rnr_timer = a->min_rnr_timer;
	if (mask & DPR_QP_PATH_MTU) {
		qp->attr.path_mtu = a->path_mtu;
		qp->pmtu = dpr_mtu_bytes(a->path_mtu);
		qp->pmtu_shift = qp->pmtu ? (uint8_t)__builtin_ctz(qp->pmtu) : 0;
	}
	if (mask & DPR_QP_DEST_QPN)
		qp->attr.dest_qp_num = a->dest_qp_num;
	if (mask & DPR_QP_AV)
		qp->attr.ah_attr = a->ah_attr;
	if (mask & DPR_QP_RQ_PSN)
		qp->resp.psn = a->rq_psn;
	if (mask & DPR_QP_MAX_DEST_RD_ATOMIC) {
		qp->attr.max_dest_rd_atomic = a->max_dest_rd_atomic;
		free(qp->resp.res);
		qp->resp.res = res;
		qp->resp.res_num = a->max_dest_rd_atomic ? a->max_dest_rd_atomic : 1;
		qp_bytes_sync(qp);
		qp->resp.res_head = qp->resp.res_unsent = 0;
	}
	if (mask & DPR_QP_TIMEOUT)
		qp->attr.timeout = a->timeout;
	if (mask & DPR_QP_RETRY_CNT) {
		qp->attr.retry_cnt = a->retry_cnt;
		qp->comp.retry_cnt = a->retry_cnt;
	}
	if (mask & DPR_QP_RNR_RETRY) {
		qp->attr.rnr_retry = a->rnr_retry;
		qp->comp.rnr_retry = a->rnr_retry;
	}
	if (mask & DPR_QP_MAX_QP_RD_ATOMIC)
		qp->attr.max_rd_atomic = a->max_rd_atomic;
	if (mask & DPR_QP_SQ_PSN) {
		qp->req.psn = a->sq_psn;
		qp->req.psn_hi = a->sq_psn;
		qp->comp.psn = a->sq_psn;
	}
	if (mask & DPR_QP_EN_SQD_ASYNC_NOTIFY)
		qp->attr.en_sqd_async_notify = a->en_sqd_async_notify;
	if (mask & (DPR_QP_AV | DPR_QP_DEST_QPN)) {
		build_encap(qp);
		/* whether the peer reads SACKs: asked now (a probe leaves if
		 * nobody knows yet), so that it is known by the first gap */
		qp->sr = SR_UNKNOWN;
		if (qp->type == DPR_QPT_RC)
			(void)dpr_sr_decide(qp);
	}

	qp->state = next;
	/* secure or plain with this peer (after the state: a QP refused
	 * goes to ERR from RTR) */
	if (mask & (DPR_QP_AV | DPR_QP_DEST_QPN))
		dpr_secqp_begin(qp);
	if (next == DPR_QPS_SQD && qp->comp.index == qp->req.index &&
	    qp->attr.en_sqd_async_notify)
		dpr_verbs_event(qp->tp->ctx, DPR_EVENT_SQ_DRAINED, qp->qpn);
	if (next == DPR_QPS_RTS)
		qp_work(qp);
	return 0;
}

static uint32_t
wc_opcode(uint8_t wr)
{
	switch (wr) {
	case DPR_WR_RDMA_WRITE:
	case DPR_WR_RDMA_WRITE_WITH_IMM:
		return DPR_WC_RDMA_WRITE;
	case DPR_WR_RDMA_READ:
		return DPR_WC_RDMA_READ;
	case DPR_WR_ATOMIC_CMP_AND_SWP:
		return DPR_WC_COMP_SWAP;
	case DPR_WR_ATOMIC_FETCH_AND_ADD:
		return DPR_WC_FETCH_ADD;
	case DPR_WR_BIND_MW:
		return DPR_WC_BIND_MW;
	case DPR_WR_LOCAL_INV:
		return DPR_WC_LOCAL_INV;
	default:
		return DPR_WC_SEND;
	}
}

void
dpr_qp_complete_send(struct dpr_tqp *qp, struct dpr_send_wqe *wqe,
		     enum dpr_wc_status status)
{
	if (status != DPR_WC_SUCCESS || qp->sq_sig_all ||
	    (wqe->flags & DPR_SEND_SIGNALED)) {
		struct dpr_cqe e = {
			.wr_id = wqe->wr_id,
			.status = status,
			.opcode = wc_opcode(wqe->opcode),
			.byte_len = wqe->length,
			.qp_num = qp->qpn,
		};

		dpr_cq_push(qp->scq, &e);
	}
	wqe->state = WQE_DONE;
}

void
dpr_qp_flush_recv(struct dpr_tqp *qp)
{
	if (qp->srq != NULL) {
		/* the SRQ's WQEs are the other QPs' too: only the one this
		 * QP's message took is flushed; then the last WQE is reached
		 * (IBA 11.6.3.1: the owner may now take the QP off the SRQ) */
		if (qp->resp.have_wqe) {
			struct dpr_cqe e = {
				.wr_id = qp->srq_wqe.wr_id,
				.status = DPR_WC_WR_FLUSH_ERR,
				.opcode = DPR_WC_RECV,
				.qp_num = qp->qpn,
			};

			dpr_cq_push(qp->rcq, &e);
		}
		qp->resp.have_wqe = false;
		dpr_verbs_event(qp->tp->ctx, DPR_EVENT_QP_LAST_WQE_REACHED, qp->qpn);
		return;
	}
	while (qp->rq.cons != qp->rq.prod) {
		struct dpr_recv_wqe *r = &qp->rq.wqe[qp->rq.cons & qp->rq.mask];
		struct dpr_cqe e = {
			.wr_id = r->wr_id,
			.status = DPR_WC_WR_FLUSH_ERR,
			.opcode = DPR_WC_RECV,
			.qp_num = qp->qpn,
		};

		rq_done(qp);
		dpr_cq_push(qp->rcq, &e);
	}
	qp->resp.have_wqe = false;
}

void
dpr_qp_flush_send(struct dpr_tqp *qp)
{
	while (qp->comp.index != qp->sq.prod) {
		struct dpr_send_wqe *w = sq_wqe(qp, qp->comp.index);

		if (w->state != WQE_DONE)
			dpr_qp_complete_send(qp, w, DPR_WC_WR_FLUSH_ERR);
		qp->comp.index++;
	}
	qp->req.index = qp->comp.index;
	qp->req.rd_atomic = 0;
}

void
dpr_qp_error(struct dpr_tqp *qp, const char *why)
{
	static struct dpr_ratelimit rl;
	uint32_t missed;

	if (qp->state == DPR_QPS_ERR)
		return;
	if (why != NULL && dpr_ratelimit(&rl, &missed)) {
		char peer[INET6_ADDRSTRLEN];

		TP_LOG(NOTICE, "QP 0x%06x (peer %s QP 0x%06x) to ERR: %s%s", qp->qpn,
		       dpr_gid_ntop(&qp->attr.ah_attr.dgid, peer, sizeof(peer)),
		       qp->attr.dest_qp_num, why, missed ?
		       " (and more QPs: lines suppressed)" : "");
	}
	qp->state = DPR_QPS_ERR;
	dpr_timer_cancel(qp->tp, &qp->timer);
	dpr_cc_stop(qp);
	qp->comp.rnr_wait = false;
	dpr_qp_flush_send(qp);
	dpr_qp_flush_recv(qp);
	/* responses not yet sent are dropped; an error NAK still goes out */
	qp->resp.res_unsent = 0;
	qp->resp.ack_pending = false;
	qp->resp.sack_pending = false;
	dpr_sr_reset(qp);
	if (qp->resp.nak_pending)
		qp_work(qp);
}

void
dpr_qp_timer_fire(struct dpr_tqp *qp)
{
	if (qp->state != DPR_QPS_RTS && qp->state != DPR_QPS_SQD)
		return;
	if (qp->comp.rnr_wait) {
		/* IBA 9.7.5.2.8: the RNR wait is over: resend from the NAK */
		qp->comp.rnr_wait = false;
		dpr_req_retry(qp, qp->comp.rnr_psn);
		qp_work(qp);
		return;
	}
	/* the retransmission timeout first: when it falls before the
	 * ACK timeout (and so on the way to it) */
	if (qp->comp.rto_deadline != 0 && qp->comp.rto_deadline <= qp->tp->now &&
	    (qp->comp.ack_deadline == 0 || qp->comp.ack_deadline > qp->tp->now))
		dpr_comp_rto(qp);
	/* early: the deadlines moved on since the entry was made */
	if (qp->comp.ack_deadline == 0 || qp->comp.ack_deadline > qp->tp->now) {
		uint64_t next = qp->comp.ack_deadline;

		if (qp->comp.rto_deadline != 0 && (next == 0 || qp->comp.rto_deadline < next))
			next = qp->comp.rto_deadline;
		if (next != 0 && (!qp->timer.armed || next < qp->timer.deadline))
			dpr_timer_arm(qp->tp, &qp->timer, next);
		return;
	}
	/* the local ACK timeout: both timers start again with the resend */
	qp->comp.ack_deadline = 0;
	qp->comp.rto_deadline = 0;
	dpr_comp_timeout(qp);
}
