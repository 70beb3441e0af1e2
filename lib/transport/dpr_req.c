/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The requester (rxe_req.c): turns send WQEs into request packets --
 * segmentation by path MTU into FIRST/MIDDLE/LAST/ONLY, PSNs, AckReq, the
 * READ/atomic limit and fences -- and rewinds for go-back-N retries.
 */

#include <errno.h>

#include "transport_private.h"

/* The BTH opcode of a packet of @p w (IBA 9.4, table 35). */
static uint8_t
req_opcode(const struct dpr_send_wqe *w, bool first, bool last)
{
	switch (w->opcode) {
	case DPR_WR_SEND:
		return first ? (last ? DPR_OP_RC_SEND_ONLY : DPR_OP_RC_SEND_FIRST) :
			(last ? DPR_OP_RC_SEND_LAST : DPR_OP_RC_SEND_MIDDLE);
	case DPR_WR_SEND_WITH_IMM:
		return first ? (last ? DPR_OP_RC_SEND_ONLY_IMM : DPR_OP_RC_SEND_FIRST) :
			(last ? DPR_OP_RC_SEND_LAST_IMM : DPR_OP_RC_SEND_MIDDLE);
	case DPR_WR_RDMA_WRITE:
		return first ? (last ? DPR_OP_RC_WRITE_ONLY : DPR_OP_RC_WRITE_FIRST) :
			(last ? DPR_OP_RC_WRITE_LAST : DPR_OP_RC_WRITE_MIDDLE);
	case DPR_WR_RDMA_WRITE_WITH_IMM:
		return first ? (last ? DPR_OP_RC_WRITE_ONLY_IMM : DPR_OP_RC_WRITE_FIRST) :
			(last ? DPR_OP_RC_WRITE_LAST_IMM : DPR_OP_RC_WRITE_MIDDLE);
	case DPR_WR_RDMA_READ:
		return DPR_OP_RC_READ_REQUEST;
	case DPR_WR_ATOMIC_CMP_AND_SWP:
		return DPR_OP_RC_CMP_SWAP;
	default:
		return DPR_OP_RC_FETCH_ADD;
	}
}

/* Check the WQE's local buffers before its first packet (IBA 10.7.2.3:
 * a bad local key is a Local Protection Error). */
static bool
local_sges_ok(struct dpr_tqp *qp, struct dpr_send_wqe *w)
{
	uint32_t access = wr_is_rd_atomic(w->opcode) ? DPR_ACCESS_LOCAL_WRITE : 0;
	uint32_t i;

	w->mr = NULL;
	w->mr_gen = __atomic_load_n(qp->tp->mr_gen, __ATOMIC_ACQUIRE);
	for (i = 0; i < w->num_sge; i++) {
		struct dpr_mr *mr;

		if (w->sge[i].length == 0)
			continue;
		mr = dpr_mr_check_cached(qp->tp->ctx, &qp->req.lkey, w->mr_gen,
					 w->sge[i].lkey, qp->pd, w->sge[i].addr,
					 w->sge[i].length, access);
		if (mr == NULL)
			return false;
		if (w->num_sge == 1)
			w->mr = mr;     /* the key once per message, not per packet */
	}
	return true;
}

/* The payload of packet bytes [off, off + len) of a one-SGE WQE from the
 * MR found when it started, while no MR has gone since: the same segment
 * dpr_sge_gather() gives. @return false: ask dpr_sge_gather(). */
static inline bool
cached_seg(struct dpr_tqp *qp, const struct dpr_send_wqe *w, uint32_t off,
	   uint32_t len, struct dpr_wire_seg *seg)
{
	if (w->mr == NULL ||
	    __atomic_load_n(qp->tp->mr_gen, __ATOMIC_ACQUIRE) != w->mr_gen)
		return false;
	seg->addr = dpr_mr_ptr(w->mr, w->sge[0].addr + off);
	seg->iova = (rte_iova_t)(uintptr_t)seg->addr;
	seg->len = len;
	dpr_payload_seg(qp, w->mr, seg);
	return true;
}

/* @return false if the WQE must wait (or failed and the QP is in error). */
static bool
start_wqe(struct dpr_tqp *qp, struct dpr_send_wqe *w)
{
	uint32_t max_rd = qp->attr.max_rd_atomic ? qp->attr.max_rd_atomic : 1;

	if (wr_is_rd_atomic(w->opcode) && qp->req.rd_atomic >= max_rd)
		return false;
	/* IBA 10.8.3.3: a fenced WQE waits for earlier READs and atomics */
	if ((w->flags & DPR_SEND_FENCE) && qp->req.rd_atomic > 0)
		return false;
	if (!local_sges_ok(qp, w)) {
		dpr_qp_complete_send(qp, w, DPR_WC_LOC_PROT_ERR);
		qp->comp.index++;
		dpr_qp_error(qp, "a send WQE's buffer is outside its lkey's MR "
			     "(LOC_PROT_ERR)");
		return false;
	}
	/* the WQE's PSNs, for good: retries resend the same PSNs */
	w->first_psn = qp->req.psn;
	w->last_psn = dpr_psn_add(qp->req.psn, (wr_is_atomic(w->opcode) ? 1 :
				  (int32_t)npkts(w->length, qp->pmtu)) - 1);
	qp->req.psn = dpr_psn_add(w->last_psn, 1);
	w->offset = 0;
	w->read_done = 0;
	w->state = WQE_PROCESSING;
	w->started = true;
	if (wr_is_rd_atomic(w->opcode))
		qp->req.rd_atomic++;
	return true;
}

/* A request went out whose answers carry PSNs psn..last (a READ's
 * responses span several). */
static void
count_send(struct dpr_tqp *qp, uint32_t psn, uint32_t last)
{
	struct dpr_transport *tp = qp->tp;

	QP_STAT(qp, req_packets);
	if (dpr_psn_lt(psn, qp->req.psn_hi))
		QP_STAT(qp, retransmits);
	if (dpr_psn_ge(last, qp->req.psn_hi))
		qp->req.psn_hi = dpr_psn_add(last, 1);
	if (!qp->timer.armed && !qp->comp.rnr_wait && qp->attr.timeout != 0) {
		ack_timer_set(tp, qp, tp->now + ack_timeout_ns(qp->attr.timeout));
		qp->comp.attempt_start = tp->now;
	}
}

/* One packet of @p w. @return 0, or -ENOBUFS/-ENOMEM to try later. */
static int
send_packet(struct dpr_tqp *qp, struct dpr_send_wqe *w)
{
	struct dpr_transport *tp = qp->tp;
	struct dpr_wire_seg segs[MAX_SEGS_PER_PKT];
	struct dpr_wire_hdrs h = {
		.pkey = DPR_DEFAULT_PKEY,
		.dqpn = qp->attr.dest_qp_num,
		/* a packet's PSN follows from its place in the WQE */
		.psn = dpr_psn_add(w->first_psn, wr_is_atomic(w->opcode) ? 0 :
				   (int32_t)(w->offset / qp->pmtu)),
	};
	unsigned int nseg = 0;
	uint32_t paylen = 0;
	bool first = true, last = true;
	int rc;

	if (w->opcode == DPR_WR_RDMA_READ) {
		/* one request for what is left: the responder answers it with
		 * npkts(left) PSNs, the span start_wqe() reserved */
		h.reth.va = w->remote_addr + w->offset;
		h.reth.rkey = w->rkey;
		h.reth.len = w->length - w->offset;
		h.ackreq = true;
	} else if (wr_is_atomic(w->opcode)) {
		h.atomic.va = w->remote_addr;
		h.atomic.rkey = w->rkey;
		if (w->opcode == DPR_WR_ATOMIC_CMP_AND_SWP) {
			h.atomic.compare = w->compare_add;
			h.atomic.swap_add = w->swap;
		} else {
			h.atomic.swap_add = w->compare_add;
		}
		h.ackreq = true;
	} else {
		paylen = RTE_MIN(qp->pmtu, w->length - w->offset);
		first = w->offset == 0;
		last = w->offset + paylen >= w->length;
		if (first && (w->opcode == DPR_WR_RDMA_WRITE ||
			      w->opcode == DPR_WR_RDMA_WRITE_WITH_IMM)) {
			h.reth.va = w->remote_addr;
			h.reth.rkey = w->rkey;
			h.reth.len = w->length;
		}
		h.imm = w->imm;
		/* AckReq on the last packet, and every ack_every packets of a
		 * long message so that the window keeps moving (rxe: 64) */
		h.ackreq = last || ++qp->req.noack_pkts >= tp->conf.ack_every;
		if (h.ackreq)
			qp->req.noack_pkts = 0;
		h.se = last && (w->flags & DPR_SEND_SOLICITED);
		if (paylen != 0 && (w->flags & DPR_SEND_INLINE)) {
			segs[0].addr = w->inline_data + w->offset;
			segs[0].iova = (rte_iova_t)(uintptr_t)segs[0].addr;
			segs[0].len = paylen;
			segs[0].shinfo = NULL;
			nseg = 1;
		} else if (paylen != 0 && cached_seg(qp, w, w->offset, paylen, segs)) {
			nseg = 1;
		} else if (paylen != 0 &&
			   dpr_sge_gather(qp, w->sge, w->num_sge, w->offset, paylen,
					  segs, RTE_DIM(segs), &nseg) != 0) {
			/* a key deregistered since the WQE started */
			dpr_qp_complete_send(qp, w, DPR_WC_LOC_PROT_ERR);
			qp->comp.index++;
			dpr_qp_error(qp, "an MR of a WQE in flight was deregistered "
				     "(LOC_PROT_ERR)");
			return -EACCES;
		}
	}
	h.opcode = req_opcode(w, first, last);
	if (qp->type == DPR_QPT_UC) {
		/* UC's SEND and WRITE opcodes are RC's in the UC class */
		h.opcode |= 0x20;
		h.ackreq = false;
	}

	rc = dpr_xmit(tp, qp, &h, segs, nseg);
	if (rc != 0)
		return rc;
	/* the builder made the template for the encapsulation as it is */
	qp->tmpl_fresh = !qp->encap.ipv6 && !qp->encap.vlan;
	count_send(qp, h.psn, w->opcode == DPR_WR_RDMA_READ ? w->last_psn : h.psn);
	if (w->opcode == DPR_WR_RDMA_READ || wr_is_atomic(w->opcode)) {
		w->offset = w->length;
		last = true;
	} else {
		w->offset += paylen;
	}
	if (qp->type == DPR_QPT_UC) {
		/* nothing comes back: the window moves with what is sent,
		 * and a message is complete once its last packet is queued */
		qp->comp.psn = dpr_psn_add(h.psn, 1);
		if (last) {
			dpr_qp_complete_send(qp, w, DPR_WC_SUCCESS);
			qp->comp.index++;
			qp->req.index++;
		}
		return 0;
	}
	if (last) {
		w->state = WQE_PENDING;
		qp->req.index++;
	}
	return 0;
}

/* An mbuf for the fast path: from the transport's stash, refilled from
 * the pool in bulk. */
static inline struct rte_mbuf *
stash_get(struct dpr_transport *tp)
{
	if (unlikely(tp->n_stash == 0)) {
		if (rte_pktmbuf_alloc_bulk(tp->pool, tp->stash, RTE_DIM(tp->stash)) != 0)
			return rte_pktmbuf_alloc(tp->pool);
		tp->n_stash = RTE_DIM(tp->stash);
	}
	return tp->stash[--tp->n_stash];
}

/*
 * The send fast path: the next packet of a SEND or WRITE (with or without
 * immediate) whose payload is copied -- inline, or from the one SGE whose
 * MR was found when the WQE started -- into an untagged IPv4 frame whose
 * headers up to UDP are the connection's template: built in one segment
 * (dpr_wire_build_one), its ICRC in one pass. The frame, the counters and
 * the state are send_packet()'s for the same packet (the oracle test
 * compares them). @return 0 sent; -ENOBUFS/-ENOMEM as send_packet() (try
 * later); 1: not the usual case, send_packet() does it.
 */
static int
fast_packet(struct dpr_tqp *qp, struct dpr_send_wqe *w)
{
	struct dpr_transport *tp = qp->tp;
	const bool write = w->opcode == DPR_WR_RDMA_WRITE ||
		w->opcode == DPR_WR_RDMA_WRITE_WITH_IMM;
	uint32_t paylen, psn;
	const void *src = NULL;
	bool first, last;
	struct rte_mbuf *m;

	if (!qp->tmpl_fresh || qp->type != DPR_QPT_RC ||
	    (!write && w->opcode != DPR_WR_SEND && w->opcode != DPR_WR_SEND_WITH_IMM))
		return 1;
	paylen = RTE_MIN(qp->pmtu, w->length - w->offset);
	if (paylen != 0) {
		if (w->flags & DPR_SEND_INLINE) {
			src = w->inline_data + w->offset;
		} else {
			/* copied, not attached; its MR still the one found */
			if ((tp->conf.zero_copy_min != 0 && paylen >= tp->conf.zero_copy_min) ||
			    w->mr == NULL ||
			    __atomic_load_n(tp->mr_gen, __ATOMIC_ACQUIRE) != w->mr_gen)
				return 1;
			src = dpr_mr_ptr(w->mr, w->sge[0].addr + w->offset);
		}
	}
	if (txq_room(tp) == 0)
		return -ENOBUFS;
	m = stash_get(tp);
	if (m == NULL) {
		tp->stats.tx_no_mbuf++;
		return -ENOMEM;
	}
	first = w->offset == 0;
	last = w->offset + paylen >= w->length;
	psn = dpr_psn_add(w->first_psn, (int32_t)(w->offset / qp->pmtu));
	{
		struct dpr_wire_hdrs h = {
			.opcode = req_opcode(w, first, last),
			.pkey = DPR_DEFAULT_PKEY,
			.dqpn = qp->attr.dest_qp_num,
			.psn = psn,
			.imm = w->imm,
			.se = last && (w->flags & DPR_SEND_SOLICITED),
			/* AckReq as send_packet() sets it (counted once sent) */
			.ackreq = last || qp->req.noack_pkts + 1 >= tp->conf.ack_every,
		};

		if (first && write) {
			h.reth.va = w->remote_addr;
			h.reth.rkey = w->rkey;
			h.reth.len = w->length;
		}
		if (dpr_wire_build_one(m, &qp->tmpl, qp->encap.ip_id, &h, src,
				       paylen) == NULL) {
			/* a frame past the mbuf's room: the general way */
			tp->stash[tp->n_stash++] = m;
			return 1;
		}
		qp->req.noack_pkts = h.ackreq ? 0 : qp->req.noack_pkts + 1;
	}
	qp->encap.ip_id++;
	tp->txq[tp->txq_head & tp->txq_mask] = m;
	tp->txq_head++;
	tp->stats.tx_frames++;
	tp->stats.tx_fast++;
	if (paylen != 0 && !(w->flags & DPR_SEND_INLINE))
		tp->stats.tx_payload_copied += paylen;
	count_send(qp, psn, psn);
	w->offset += paylen;
	if (last) {
		w->state = WQE_PENDING;
		qp->req.index++;
	}
	return 0;
}

bool
dpr_req_run(struct dpr_tqp *qp, uint32_t budget)
{
	struct dpr_transport *tp = qp->tp;

	if (qp->type == DPR_QPT_UD)
		return dpr_ud_req_run(qp, budget);
	if ((qp->state != DPR_QPS_RTS && qp->state != DPR_QPS_SQD) ||
	    qp->comp.rnr_wait)
		return false;
	if (!qp->mac_resolved) {
		if (tp->conf.resolve(tp->conf.resolve_arg, &qp->encap.dgid,
				     &qp->encap.dst_mac) != 0)
			return qp->req.index != qp->sq.prod; /* ask again */
		qp->mac_resolved = true;
		qp->tmpl_fresh = false;        /* a new destination MAC */
	}
	while (qp->req.index != qp->sq.prod) {
		struct dpr_send_wqe *w = sq_wqe(qp, qp->req.index);

		if (w->state == WQE_DONE || w->state == WQE_PENDING) {
			qp->req.index++;
			continue;
		}
		if (w->state == WQE_POSTED) {
			/* SQD: what has started finishes, nothing new starts;
			 * the window: at most max_unacked PSNs outstanding */
			if (qp->state == DPR_QPS_SQD ||
			    (uint32_t)dpr_psn_diff(qp->req.psn, qp->comp.psn) >=
			    tp->conf.max_unacked || !start_wqe(qp, w))
				return false;
		}
		if (!wr_is_rd_atomic(w->opcode) &&
		    (uint32_t)dpr_psn_diff(dpr_psn_add(w->first_psn,
				(int32_t)(w->offset / qp->pmtu)), qp->comp.psn) >=
		    tp->conf.max_unacked)
			return false;
		if (budget == 0 || txq_room(tp) == 0)
			return true;
		{
			int rc = tp->conf.slow_only ? 1 : fast_packet(qp, w);

			if (rc > 0)
				rc = send_packet(qp, w);
			if (rc != 0)
				return qp->state == DPR_QPS_RTS || qp->state == DPR_QPS_SQD;
		}
		budget--;
	}
	return false;
}

void
dpr_req_retry(struct dpr_tqp *qp, uint32_t psn)
{
	bool found = false;
	uint32_t i;

	/* Every started WQE keeps its PSNs; going back only moves where the
	 * requester resends from: the WQE holding psn resumes there, the
	 * started ones after it start over, READs from what has arrived and
	 * atomics whole (the responder replays their saved result). */
	qp->req.noack_pkts = 0;
	for (i = qp->comp.index; i != qp->sq.prod; i++) {
		struct dpr_send_wqe *w = sq_wqe(qp, i);

		if (w->state == WQE_POSTED)
			break;
		if (w->state == WQE_DONE)
			continue;
		if (!found) {
			if (!wr_is_rd_atomic(w->opcode) && dpr_psn_gt(psn, w->last_psn))
				continue;   /* all received: waits for its ACK */
			found = true;
			qp->req.index = i;
			if (w->opcode == DPR_WR_RDMA_READ)
				w->offset = w->read_done;
			else if (wr_is_atomic(w->opcode))
				w->offset = 0;
			else
				w->offset = dpr_psn_lt(psn, w->first_psn) ? 0 :
					(uint32_t)dpr_psn_diff(psn, w->first_psn) *
					qp->pmtu;
		} else {
			w->offset = w->opcode == DPR_WR_RDMA_READ ? w->read_done : 0;
		}
		w->state = WQE_PROCESSING;
	}
}
