/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The completer (rxe_comp.c): ACKs, NAKs, READ responses and atomic ACKs
 * retire send WQEs in order and write their completions; sequence NAKs,
 * lost responses and ACK timeouts send the requester back (go-back-N,
 * IBA 9.7.5.2); RNR NAKs make it wait; retry counters run out into
 * RETRY_EXC_ERR and RNR_RETRY_EXC_ERR.
 */

#include <string.h>

#include "transport_private.h"

static void
qp_fail(struct dpr_tqp *qp, enum dpr_wc_status status)
{
	if (qp->comp.index != qp->sq.prod) {
		dpr_qp_complete_send(qp, sq_wqe(qp, qp->comp.index), status);
		qp->comp.index++;
	}
	dpr_qp_error(qp, status == DPR_WC_RETRY_EXC_ERR ?
		     "no ACK after retry_cnt retries (peer unreachable or gone)" :
		     status == DPR_WC_RNR_RETRY_EXC_ERR ?
		     "RNR NAKs beyond rnr_retry (the peer posts no receives)" :
		     status == DPR_WC_REM_ACCESS_ERR ?
		     "remote access error NAK (bad rkey, range or access)" :
		     status == DPR_WC_REM_INV_REQ_ERR ?
		     "invalid request NAK from the peer" :
		     status == DPR_WC_REM_OP_ERR ?
		     "remote operational error NAK" :
		     status == DPR_WC_BAD_RESP_ERR ?
		     "unexpected response from the peer" :
		     "local protection error (a key or range of a WQE)");
}

/* An RTT sample (RFC 6298 2.2, 2.3), @p r ns. */
static void
rtt_update(struct dpr_tqp *qp, uint64_t r)
{
	uint32_t rtt = (uint32_t)RTE_MIN(r, (uint64_t)UINT32_MAX / 2);

	if (qp->comp.srtt == 0) {
		qp->comp.srtt = rtt;
		qp->comp.rttvar = rtt / 2;
		qp->comp.min_rtt = rtt;
		return;
	}
	qp->comp.rttvar = (3 * qp->comp.rttvar +
			   (rtt > qp->comp.srtt ? rtt - qp->comp.srtt : qp->comp.srtt - rtt)) / 4;
	qp->comp.srtt = (7 * qp->comp.srtt + rtt) / 8;
	if (rtt < qp->comp.min_rtt)
		qp->comp.min_rtt = rtt;
}

/*
 * The in-flight cap at the measured bandwidth-delay product (IRN's BDP-FC,
 * with the BDP measured rather than configured): every 2 least RTTs (at
 * least DPR_RATE_SAMPLE_NS) of progress the PSNs acknowledged give a
 * delivery rate; the window is twice the highest rate of late (it decays
 * by an eighth a sample) times the least RTT, plus min_unacked (a
 * software path batches -- a burst each way -- and its idle RTT does not
 * count that), at most max_unacked. A fixed window of 1024 packets
 * between two boxes over memif queued a millisecond of requests ahead of
 * whatever was sent again: at 1% loss 64 KiB WRITEs kept 0.77 of their
 * loss-free goodput, SENDs 0.61; this window (about 180 there) 0.99 and
 * 0.97, and the same loss-free rate. A QP with nothing outstanding starts
 * its measurement anew.
 */
static void
window_sample(struct dpr_tqp *qp)
{
	struct dpr_transport *tp = qp->tp;
	uint64_t el, bdp;
	uint32_t n, rate, w;

	if (tp->conf.min_unacked == 0)
		return;
	if (qp->comp.dr_time == 0) {
		qp->comp.dr_time = tp->now;
		qp->comp.dr_psn = qp->comp.psn;
		return;
	}
	el = tp->now - qp->comp.dr_time;
	if (el < RTE_MAX(2ull * qp->comp.min_rtt, (uint64_t)DPR_RATE_SAMPLE_NS))
		return;
	n = (uint32_t)dpr_psn_diff(qp->comp.psn, qp->comp.dr_psn);
	rate = (uint32_t)RTE_MIN(((uint64_t)n << 20) / el, (uint64_t)UINT32_MAX);
	qp->comp.dr_rate = RTE_MAX(rate, qp->comp.dr_rate - qp->comp.dr_rate / 8);
	qp->comp.dr_time = tp->now;
	qp->comp.dr_psn = qp->comp.psn;
	/* (the rate without an RTT too: a QP whose every timed request was
	 * sent again -- a queue deeper than its RTO -- has none, and DCQCN
	 * starts its first cut from this rate, else from the line rate) */
	if (qp->comp.min_rtt == 0)
		return;
	bdp = ((uint64_t)qp->comp.dr_rate * qp->comp.min_rtt) >> 20;
	w = (uint32_t)RTE_MIN(2 * bdp + tp->conf.min_unacked,
			      (uint64_t)tp->conf.max_unacked);
	if (w != qp->req.window)
		dpr_req_window_set(qp, w);
}

/* Forward progress: counters back to full, the RTT sampled when the timed
 * request is acknowledged, the ACK and retransmission timers restarted
 * (or stopped with nothing outstanding). */
static void
progress(struct dpr_tqp *qp)
{
	struct dpr_transport *tp = qp->tp;

	qp->comp.retry_cnt = qp->attr.retry_cnt;
	qp->comp.rnr_retry = qp->attr.rnr_retry;
	qp->comp.rto_backoff = 0;
	if (qp->comp.replaying && !dpr_psn_lt(qp->comp.psn, qp->comp.retry_end))
		qp->comp.replaying = false;
	if (qp->comp.rtt_sent != 0 && dpr_psn_gt(qp->comp.psn, qp->comp.rtt_psn)) {
		rtt_update(qp, tp->now - qp->comp.rtt_sent);
		qp->comp.rtt_sent = 0;
		qp->comp.rto_karn = 0;
	} else if (qp->comp.rto_karn != 0 &&
		   dpr_psn_gt(qp->comp.psn, qp->comp.karn_psn)) {
		qp->comp.rto_karn = 0;
	}
	window_sample(qp);
	if (qp->comp.index == qp->req.index && qp->comp.psn == qp->req.psn) {
		qp->comp.dr_time = 0;
		dpr_timer_cancel(tp, &qp->timer);
		qp->comp.ack_deadline = 0;
		qp->comp.rto_deadline = 0;
		if (qp->state == DPR_QPS_SQD && qp->req.index == qp->sq.prod &&
		    qp->attr.en_sqd_async_notify)
			dpr_verbs_event(tp->ctx, DPR_EVENT_SQ_DRAINED, qp->qpn);
	} else if (!qp->comp.rnr_wait) {
		if (qp->attr.timeout != 0) {
			ack_timer_set(tp, qp, tp->now + ack_timeout_ns(qp->attr.timeout));
			qp->comp.attempt_start = tp->now;
		}
		if (tp->conf.rto_min_ns != UINT32_MAX)
			rto_timer_set(tp, qp, tp->now + rto_ns(qp));
	}
	qp_work(qp);
}

/* Where going back starts: the oldest PSN not acknowledged, or where a
 * READ or atomic at the head resumes. */
static uint32_t
go_back_psn(struct dpr_tqp *qp)
{
	const struct dpr_send_wqe *w = qp->comp.index != qp->sq.prod ?
		sq_wqe(qp, qp->comp.index) : NULL;

	return w != NULL && w->started && wr_is_rd_atomic(w->opcode) ?
		wqe_resume_psn(qp, w) : qp->comp.psn;
}

/*
 * Go back to @p psn, once per point until something moves (as rxe's
 * started_retry): a duplicated NAK, or the responses of a long READ
 * pipeline still arriving after the gap, must not send the window again
 * nor spend the retry count; only progress or the ACK timer ends it.
 * (Counting each of them emptied retry_cnt against rxe with 128 READs of
 * 64 KiB outstanding and 1% loss.)
 */
static void
retry(struct dpr_tqp *qp, uint32_t psn, bool count)
{
	if (qp->comp.retried && qp->comp.retry_psn == psn)
		return;
	/* one replay at a time: a slow responder (rxe under emulation) that
	 * is sent a new window for every gap of the last one collapses under
	 * the backlog of replays, never catching up. So a NAK for a point at
	 * or before the one this replay went back to is stale (the replay
	 * resends it) and is passed over; one past it is news whatever the
	 * replay has resent so far: the responder holds everything before
	 * it, and waits there in silence (one NAK per gap) -- the resend of
	 * that point was lost, or the replay went back further than needed
	 * (an RTO goes back to the oldest request not acknowledged) and
	 * would otherwise resend what arrived before it gets there. Passing
	 * those over cost an RTO pair (probe, then go back) for 5% of the
	 * NAKs at 1% loss: 64 KiB WRITEs to a go-back-N peer kept 0.06 of
	 * their loss-free goodput, now 0.25. */
	if (qp->comp.replaying && dpr_psn_lt(qp->comp.psn, qp->comp.retry_end) &&
	    dpr_psn_lt(psn, qp->comp.retry_end) &&
	    !(count && dpr_psn_gt(psn, qp->comp.retry_psn)))
		return;
	if (count) {
		if (qp->comp.retry_cnt == 0) {
			qp_fail(qp, DPR_WC_RETRY_EXC_ERR);
			return;
		}
		qp->comp.retry_cnt--;
	}
	qp->comp.retried = true;
	qp->comp.probing = false;
	qp->comp.retry_nak = count;
	qp->comp.retry_psn = psn;
	qp->comp.replaying = true;
	qp->comp.retry_end = qp->req.psn;
	qp->comp.rtt_sent = 0;          /* (Karn: no sample across a resend) */
	dpr_req_retry(qp, psn);
	qp_work(qp);
}

/* READ @p w, at the head, has all its responses. */
static void
read_complete(struct dpr_tqp *qp, struct dpr_send_wqe *w)
{
	dpr_qp_complete_send(qp, w, DPR_WC_SUCCESS);
	qp->comp.index++;
	qp->req.rd_atomic--;
	if ((int32_t)(qp->comp.index - qp->req.index) > 0)
		qp->req.index = qp->comp.index;
	if (dpr_psn_gt(w->last_psn, dpr_psn_add(qp->comp.psn, -1)))
		qp->comp.psn = dpr_psn_add(w->last_psn, 1);
	qp->comp.retried = false;
}

/*
 * Selective repeat: the READs at the head whose responses have all
 * arrived (the rest placed out of order before) complete, in order.
 * @return whether the head moved.
 */
static bool
read_drain(struct dpr_tqp *qp)
{
	const uint32_t idx = qp->comp.index;

	while (qp->comp.index != qp->sq.prod) {
		struct dpr_send_wqe *w = sq_wqe(qp, qp->comp.index);

		if (w->opcode != DPR_WR_RDMA_READ || !w->started)
			break;
		if (w->length == 0) {
			/* its one response: here, or placed */
			if (!w->answered)
				break;
			dpr_sr_read_take(qp, w->first_psn);
		}
		while (w->read_done < w->length &&
		       dpr_sr_read_take(qp, wqe_resume_psn(qp, w)))
			w->read_done += RTE_MIN(qp->pmtu, w->length - w->read_done);
		if (w->read_done < w->length)
			break;
		read_complete(qp, w);
	}
	return qp->comp.index != idx;
}

/*
 * Everything up to and including @p psn has arrived (an ACK, or implied by
 * a NAK or a response, IBA 9.7.5.1.1): complete SEND and WRITE WQEs it
 * covers. A READ or atomic in the way stops it; if the peer has already
 * answered beyond it, its responses were lost and it is asked again.
 * @return true if anything moved.
 */
static bool
ack_through(struct dpr_tqp *qp, uint32_t psn)
{
	/* the ring walked in locals (stores through a WQE would otherwise
	 * have the compiler load the QP's fields again every WQE), written
	 * back before anything that reads them */
	struct dpr_send_wqe *const ring = qp->sq.wqe;
	const uint32_t mask = qp->sq.mask, prod = qp->sq.prod;
	const bool sig_all = qp->sq_sig_all;
	uint32_t idx = qp->comp.index;
	bool moved = false;

	/* The usual WQE (an unsignaled SEND or WRITE, all sent) by one
	 * compare of its opcode, flags, num_sge and state bytes: opcode 0-3,
	 * SIGNALED clear, WQE_PENDING (which implies started) */
	static const uint8_t usual_mask_b[4] = { 0xfc, DPR_SEND_SIGNALED, 0, 0xff };
	static const uint8_t usual_want_b[4] = { 0, 0, 0, WQE_PENDING };
	uint32_t usual_mask, usual_want;

	RTE_BUILD_BUG_ON(offsetof(struct dpr_send_wqe, flags) !=
			 offsetof(struct dpr_send_wqe, opcode) + 1);
	RTE_BUILD_BUG_ON(offsetof(struct dpr_send_wqe, state) !=
			 offsetof(struct dpr_send_wqe, opcode) + 3);
	RTE_BUILD_BUG_ON(DPR_WR_RDMA_WRITE != 0 || DPR_WR_RDMA_WRITE_WITH_IMM != 1 ||
			 DPR_WR_SEND != 2 || DPR_WR_SEND_WITH_IMM != 3 ||
			 DPR_WR_RDMA_READ < 4 || DPR_WR_ATOMIC_CMP_AND_SWP < 4 ||
			 DPR_WR_ATOMIC_FETCH_AND_ADD < 4);
	memcpy(&usual_mask, usual_mask_b, 4);
	memcpy(&usual_want, usual_want_b, 4);
	if (sig_all)
		usual_want = ~0u;       /* (never: every WQE completes) */
	for (; idx != prod; idx++) {
		struct dpr_send_wqe *w = &ring[idx & mask];
		uint32_t head;

		memcpy(&head, &w->opcode, 4);
		if (likely((head & usual_mask) == usual_want)) {
			if (dpr_psn_gt(w->last_psn, psn))
				break;
			w->state = WQE_DONE;
			moved = true;
			continue;
		}
		if (w->state == WQE_DONE)
			continue;
		if (!w->started)
			break;
		if (wr_is_rd_atomic(w->opcode)) {
			/* (a READ whose responses came before it was the
			 * head: done now) */
			if (w->opcode == DPR_WR_RDMA_READ && qp->sr_tx != NULL) {
				qp->comp.index = idx;
				if (read_drain(qp)) {
					idx = qp->comp.index - 1;
					moved = true;
					continue;
				}
			}
			if (dpr_psn_gt(psn, w->last_psn)) {
				qp->comp.index = idx;
				/* a peer with selective repeat is asked for
				 * the runs missing, not the whole READ */
				if (w->opcode == DPR_WR_RDMA_READ && read_placed(qp))
					dpr_sr_read_holes(qp, dpr_psn_add(psn, 1 - SR_DUPTHRESH));
				else
					retry(qp, wqe_resume_psn(qp, w), false);
				idx = qp->comp.index;
			}
			break;
		}
		if (dpr_psn_gt(w->last_psn, psn))
			break;
		/* an unsignaled WQE only ends (dpr_qp_complete_send()) */
		if (likely(!(w->flags & DPR_SEND_SIGNALED) && !sig_all))
			w->state = WQE_DONE;
		else {
			qp->comp.index = idx;   /* (as the CQ's hooks see it) */
			dpr_qp_complete_send(qp, w, DPR_WC_SUCCESS);
		}
		moved = true;
	}
	qp->comp.index = idx;
	if (dpr_psn_ge(psn, qp->comp.psn) && dpr_psn_lt(psn, qp->req.psn_hi)) {
		qp->comp.psn = dpr_psn_add(psn, 1);
		moved = true;
	}
	/* a late ACK may cover WQEs a retry was about to resend */
	if ((int32_t)(qp->comp.index - qp->req.index) > 0)
		qp->req.index = qp->comp.index;
	if (moved)
		qp->comp.retried = false;
	return moved;
}

/*
 * An ACK of @p psn while a head probe is out (dpr_comp_rto()). The probe
 * went last, so the responder's answer to it says where it stands after
 * everything sent before it: an ACK of exactly the probe's PSN, with more
 * sent past it, means it took the probe as the next in order -- it had
 * been waiting there, and dropped what came after (its NAK went missing:
 * one per gap, C9-97); that is a NAK, and the rest goes again now. An ACK
 * past the probe (a duplicate's answer, IBA 9.7.5.1.2: all arrived up to
 * there) needs nothing more.
 */
static void
probe_answer(struct dpr_tqp *qp, uint32_t psn)
{
	if (dpr_psn_lt(psn, qp->comp.probe_psn))
		return;         /* an answer to something before it */
	qp->comp.probing = false;
	if (psn != qp->comp.probe_psn || qp->state == DPR_QPS_ERR ||
	    !dpr_psn_lt(dpr_psn_add(psn, 1), qp->comp.probe_hi) ||
	    !dpr_psn_lt(psn, qp->comp.psn))
		return;
	QP_STAT(qp, probe_gobacks);
	retry(qp, go_back_psn(qp), false);
}

static void
rx_ack(struct dpr_tqp *qp, const struct dpr_wire_hdrs *h)
{
	struct dpr_transport *tp = qp->tp;
	uint8_t syn = h->aeth.syndrome;
	uint32_t psn = h->psn;

	switch (syn & DPR_AETH_TYPE_MASK) {
	case DPR_AETH_ACK:
		QP_STAT(qp, ack_rx);
		if (ack_through(qp, psn))
			progress(qp);
		if (unlikely(qp->comp.probing))
			probe_answer(qp, psn);
		return;
	case DPR_AETH_RNR_NAK:
		/* IBA 9.7.5.2.8: wait the encoded time, then resend from psn */
		QP_STAT(qp, rnr_nak_rx);
		if (ack_through(qp, dpr_psn_add(psn, -1)))
			progress(qp);
		if (qp->state == DPR_QPS_ERR)
			return;
		if (qp->comp.rnr_retry == 0) {
			qp_fail(qp, DPR_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		if (qp->comp.rnr_retry != 7)       /* 7: retry for ever */
			qp->comp.rnr_retry--;
		qp->comp.rnr_wait = true;
		qp->comp.rnr_psn = psn;
		qp->comp.retried = false;
		qp->comp.replaying = false;
		/* the timer is the RNR wait's; the others start again with
		 * the resend */
		qp->comp.ack_deadline = 0;
		qp->comp.rto_deadline = 0;
		QP_STAT(qp, rnr_waits);
		dpr_timer_arm(tp, &qp->timer, tp->now + dpr_rnr_timer_ns(syn));
		return;
	case DPR_AETH_NAK:
		break;
	default:
		return;   /* reserved syndrome: ignored */
	}
	if (ack_through(qp, dpr_psn_add(psn, -1)))
		progress(qp);
	if (qp->state == DPR_QPS_ERR)
		return;
	/* a NAK of a request already complete answers its duplicate (a READ
	 * asked again too soon, a probe): stale, as any response to a PSN
	 * before the oldest outstanding: a duplicate, as IBA has it) */
	if (dpr_psn_lt(psn, qp->comp.psn)) {
		QP_STAT(qp, dup_response_rx);
		return;
	}
	switch (syn & 0x1f) {
	case DPR_NAK_PSN_SEQ_ERR:
		/* the responder expects psn: go back to it (C9-118) */
		QP_STAT(qp, nak_seq_rx);
		retry(qp, psn, true);
		return;
	case DPR_NAK_INVALID_REQ:
		QP_STAT(qp, nak_err_rx);
		qp_fail(qp, DPR_WC_REM_INV_REQ_ERR);
		return;
	case DPR_NAK_REM_ACCESS_ERR:
		QP_STAT(qp, nak_err_rx);
		qp_fail(qp, DPR_WC_REM_ACCESS_ERR);
		return;
	case DPR_NAK_REM_OP_ERR:
		QP_STAT(qp, nak_err_rx);
		qp_fail(qp, DPR_WC_REM_OP_ERR);
		return;
	default:
		QP_STAT(qp, nak_err_rx);
		qp_fail(qp, DPR_WC_REM_INV_REQ_ERR);
		return;
	}
}

/*
 * A selective acknowledgement (dprdma's; doc/architecture.rst, "Selective
 * repeat"): an ACK of its PSN, then the runs the responder holds past the
 * gap -- what is missing below them is sent again (dpr_sr.c). Only a peer
 * we told that we read them sends them: with selective repeat off here
 * (and from anyone else) they are counted and dropped, nothing believed.
 */
static void
rx_sack(struct dpr_tqp *qp, const struct rte_mbuf *m,
	const struct dpr_pkt_info *pi, const struct dpr_wire_hdrs *h)
{
	if (qp->tp->conf.sr == DPR_SR_OFF ||
	    (h->aeth.syndrome & DPR_AETH_TYPE_MASK) != DPR_AETH_ACK ||
	    pi->paylen % sizeof(struct dpr_sack_block) != 0 ||
	    pi->paylen > DPR_SACK_MAX_BLOCKS * sizeof(struct dpr_sack_block)) {
		QP_STAT(qp, sack_ignored);
		return;
	}
	QP_STAT(qp, sack_rx);
	if (ack_through(qp, h->psn))
		progress(qp);
	if (qp->state == DPR_QPS_RTS || qp->state == DPR_QPS_SQD)
		dpr_sr_rx_sack(qp, m, pi, h);
}

/*
 * A READ response, from any peer (read_placed(); doc/architecture.rst,
 * "Selective repeat"): placed where its PSN says in whichever READ holds
 * it, in order or not -- each response but a READ's last carries a path
 * MTU and the last the rest, so its length is what there is to check (a
 * range asked for again is answered FIRST..LAST wherever it lies); the
 * READs at the head complete as far as their responses have all
 * arrived; a run missing SR_DUPTHRESH PSNs below the highest placed is
 * asked for again (dpr_sr_read_holes()).
 */
static void
rx_read_response(struct dpr_tqp *qp, const struct rte_mbuf *m,
		 const struct dpr_pkt_info *pi, const struct dpr_wire_hdrs *h)
{
	const uint32_t psn = h->psn;
	struct dpr_send_wqe *w;
	uint32_t idx, off, want;
	int32_t d;

	/* a response implies every earlier request arrived */
	if (ack_through(qp, dpr_psn_add(psn, -1)))
		progress(qp);
	if (qp->state == DPR_QPS_ERR || qp->comp.index == qp->sq.prod)
		return;
	idx = qp->comp.index;
	w = sq_wqe(qp, idx);
	if (w->opcode != DPR_WR_RDMA_READ || !w->started) {
		QP_STAT(qp, dup_response_rx);
		return;
	}
	d = dpr_psn_diff(psn, wqe_resume_psn(qp, w));
	if (d < 0 || d >= SR_WIN || (d != 0 && dpr_sr_tx_get(qp) == NULL)) {
		QP_STAT(qp, dup_response_rx);   /* (too far ahead: asked again) */
		return;
	}
	while (dpr_psn_gt(psn, w->last_psn)) {
		if (++idx == qp->sq.prod || !(w = sq_wqe(qp, idx))->started) {
			QP_STAT(qp, dup_response_rx);
			return;
		}
	}
	if (w->opcode != DPR_WR_RDMA_READ || dpr_psn_lt(psn, w->first_psn)) {
		QP_STAT(qp, dup_response_rx);
		return;
	}
	off = (uint32_t)dpr_psn_diff(psn, w->first_psn) << qp->pmtu_shift;
	want = RTE_MIN(qp->pmtu, w->length - off);
	if (pi->paylen != want) {
		qp_fail(qp, DPR_WC_BAD_RESP_ERR);
		return;
	}
	if (d != 0 && !dpr_sr_read_place(qp, psn)) {
		QP_STAT(qp, dup_response_rx);
		return;
	}
	if (want != 0 &&
	    dpr_sge_scatter(qp, w->sge, w->num_sge, off, m, pi->payload_off, want) != 0) {
		qp_fail(qp, DPR_WC_LOC_PROT_ERR);
		return;
	}
	w->answered = true;
	if (d != 0) {
		QP_STAT(qp, sr_read_placed);
		if (psn != dpr_psn_add(qp->req.psn_hi, -1)) {
			dpr_sr_read_holes(qp, dpr_psn_add(qp->sr_tx->rd_high,
							  1 - SR_DUPTHRESH));
			return;
		}
		/* the newest response asked for: nothing is coming behind
		 * what is missing (no reordering to wait out), and what was
		 * asked for again comes in a round trip of an idle peer, or
		 * is lost too: the retransmission timer waits that long, not
		 * an RTO whose RTT samples waited behind a window of
		 * responses (a probe too early asks twice) */
		dpr_sr_read_holes(qp, qp->req.psn_hi);
		if (qp->comp.rto_deadline != 0 && qp->comp.min_rtt != 0)
			rto_timer_set(qp->tp, qp, qp->tp->now +
				      RTE_MAX(4ull * qp->comp.min_rtt, (uint64_t)DPR_SR_PTO_MIN_NS));
		return;
	}
	/* in order: the head READ, and whatever arrived after it */
	dpr_sr_read_arrived(qp, psn);
	w->read_done += want;
	read_drain(qp);
	/* SENDs and WRITEs after them that were acknowledged meanwhile */
	ack_through(qp, dpr_psn_add(qp->comp.psn, -1));
	progress(qp);
}

static void
rx_atomic_ack(struct dpr_tqp *qp, const struct dpr_wire_hdrs *h)
{
	struct dpr_transport *tp = qp->tp;
	struct dpr_send_wqe *w;
	struct dpr_mr *mr;
	uint64_t orig = h->atomic_orig;

	if (ack_through(qp, dpr_psn_add(h->psn, -1)))
		progress(qp);
	if (qp->state == DPR_QPS_ERR || qp->comp.index == qp->sq.prod)
		return;
	w = sq_wqe(qp, qp->comp.index);
	if (!wr_is_atomic(w->opcode) || !w->started || w->first_psn != h->psn) {
		QP_STAT(qp, dup_response_rx);
		return;
	}
	/* the original value, in host order, to the local 8 bytes */
	mr = dpr_mr_check(tp->ctx, w->sge[0].lkey, qp->pd, 0, w->sge[0].addr, 8,
			  DPR_ACCESS_LOCAL_WRITE);
	if (mr == NULL) {
		qp_fail(qp, DPR_WC_LOC_PROT_ERR);
		return;
	}
	memcpy(dpr_mr_ptr(mr, w->sge[0].addr), &orig, sizeof(orig));
	dpr_qp_complete_send(qp, w, DPR_WC_SUCCESS);
	qp->comp.index++;
	qp->req.rd_atomic--;
	if ((int32_t)(qp->comp.index - qp->req.index) > 0)
		qp->req.index = qp->comp.index;
	qp->comp.psn = dpr_psn_add(h->psn, 1);
	qp->comp.retried = false;
	progress(qp);
}

/*
 * The local ACK timeout measures the responder's silence (IBA 9.7.6.1.3),
 * not the wait for one response: a response to a PSN not yet acknowledged
 * shows the peer working through its queue even when it makes no progress
 * here, so the timer starts again (the retry count does not). A slow
 * responder with a deep READ pipeline (rxe under emulation: 128 READs of
 * 64 KiB take seconds to answer) otherwise times out retry after retry
 * while its answers to the older requests are still on their way, behind
 * the one that was lost. Two limits keep the QP live whatever the peer
 * sends: responses to PSNs already acknowledged (duplicate ACKs) restart
 * nothing, and one attempt lasts at most DPR_ACK_TIMEOUT_STRETCH timeouts.
 */
static void
responder_alive(struct dpr_tqp *qp, uint32_t psn, bool read)
{
	struct dpr_transport *tp = qp->tp;
	uint64_t t = ack_timeout_ns(qp->attr.timeout), deadline;

	if (t == 0 || qp->comp.rnr_wait || qp->comp.ack_deadline == 0)
		return;
	/* a response to a PSN already acknowledged is no sign of work --
	 * but one of the READ being completed is: the responder sending it
	 * again from where it was asked to (its earlier responses, still on
	 * their way, came first) */
	if (dpr_psn_lt(psn, qp->comp.psn)) {
		const struct dpr_send_wqe *w;

		if (!read || qp->comp.index == qp->sq.prod)
			return;
		w = sq_wqe(qp, qp->comp.index);
		if (w->opcode != DPR_WR_RDMA_READ || !w->started ||
		    dpr_psn_lt(psn, w->first_psn))
			return;
	}
	deadline = RTE_MIN(tp->now + t,
			   qp->comp.attempt_start + DPR_ACK_TIMEOUT_STRETCH * t);
	if (deadline > qp->comp.ack_deadline)
		ack_timer_set(tp, qp, deadline);
}

void
dpr_comp_rx(struct dpr_tqp *qp, const struct rte_mbuf *m,
	    const struct dpr_pkt_info *pi, const struct dpr_wire_hdrs *h)
{
	/* a response to a PSN never sent is not ours to believe */
	if (!dpr_psn_lt(h->psn, qp->req.psn_hi)) {
		QP_STAT(qp, dup_response_rx);
		return;
	}
	responder_alive(qp, h->psn, (pi->mask & DPR_READ_MASK) != 0);
	/* READ responses, new or again, are the responder streaming: while
	 * they come, going back would only make it start over (it answers a
	 * READ request again from the PSN asked for, and what it had queued
	 * still arrives first): the retransmission timeout waits for their
	 * silence (the ACK timeout, which only progress restarts, bounds it) */
	if ((pi->mask & DPR_READ_MASK) && qp->comp.rto_deadline != 0)
		qp->comp.rto_deadline = qp->tp->now + rto_ns(qp);
	if (pi->opcode == DPR_OP_RC_ACK)
		rx_ack(qp, h);
	else if (pi->mask & DPR_READ_MASK)
		rx_read_response(qp, m, pi, h);
	else if (pi->opcode == DPR_OP_RC_ATOMIC_ACK)
		rx_atomic_ack(qp, h);
	else if (pi->opcode == DPR_OP_DPR_SACK)
		rx_sack(qp, m, pi, h);
}

/*
 * The adaptive retransmission timeout: nothing made progress for an RTO
 * (rto_ns(): SRTT + 4 RTTVAR, backed off), and the IBA local ACK timeout
 * (perftest asks for 67 ms) is far off. Without spending retry_cnt (the
 * local ACK timeout runs beside it and alone counts retries, so a peer
 * that is gone ends as it did):
 * - the first RTO since the last progress sends one request again, alone,
 *   with AckReq: a probe, whose answer says where the responder stands.
 *   An RTO that came too early costs one packet. To a go-back-N peer it
 *   is the oldest request not acknowledged (a head probe): if everything
 *   arrived and only ACKs went missing, the responder answers the
 *   duplicate with an ACK of it all (IBA 9.7.5.1.2); if it waits there --
 *   the packet was lost at the tail, so nothing came after it to make a
 *   NAK, or its one NAK for the gap (C9-97) was lost and it drops the
 *   rest without a word -- it takes the probe and ACKs exactly it, and
 *   the requester goes back past it at once (probe_answer()). A tail
 *   probe would be dropped unanswered in that second case, for a second
 *   RTO: one NAK in a hundred is lost at 1% loss, and each cost three
 *   floors of the RTO. To a peer with selective repeat it is the newest
 *   (a tail probe): the peer holds what arrived and SACKs the holes.
 *   Where the probe would be a READ or an atomic there is none (answers
 *   to it would come out of order, which the completer takes for lost
 *   responses), and where the oldest is one nothing is asked again yet:
 *   a READ request asked again makes the responder start its responses
 *   over from there, while those it had queued still come first.
 * - the next one (the probe too went unanswered) goes back to the oldest
 *   request not acknowledged, as the ACK timeout would; with a peer with
 *   selective repeat it sends that oldest request alone (dpr_sr_rto()):
 *   the peer holds what came after it.
 * The timer doubles with each RTO and keeps the doubling past progress
 * until an RTT is sampled again (rto_karn).
 * With a peer with selective repeat a READ at the head asks for every
 * response still missing (dpr_sr_read_rto()) at the first RTO: READ
 * responses restart the timer while they come, so it fires only once
 * they have stopped.
 */
/* Is the newest request sent a SEND or WRITE packet? */
static bool
tail_is_plain(struct dpr_tqp *qp)
{
	uint32_t last = dpr_psn_add(qp->req.psn_hi, -1), i;

	for (i = qp->comp.index; i != qp->sq.prod; i++) {
		const struct dpr_send_wqe *w = sq_wqe(qp, i);

		if (!w->started)
			break;
		if (dpr_psn_ge(last, w->first_psn) && dpr_psn_le(last, w->last_psn))
			return !wr_is_rd_atomic(w->opcode);
	}
	return false;
}

/* What an RTO does, by what is outstanding and what the peer is */
enum rto_stage {
	RTO_NOTHING,            /* the tail is a READ or atomic: wait on */
	RTO_READ_REPAIR,        /* a READ's responses stopped: ask for the rest */
	RTO_SR_HOLE,            /* backing off, a selective-repeat peer: the
				 * oldest hole again */
	RTO_GO_BACK,            /* backing off (or a NAKed resend lost) with a
				 * go-back-N peer: from the oldest on */
	RTO_HEAD_PROBE,         /* a go-back-N peer: the oldest request */
	RTO_TAIL_PROBE,         /* a selective-repeat peer: the newest */
};

static enum rto_stage
rto_stage(struct dpr_tqp *qp, const struct dpr_send_wqe *w)
{
	const bool sr = (qp->sr_tx != NULL && qp->sr_tx->sacked) || sr_on(qp);

	if (w != NULL && w->started && w->opcode == DPR_WR_RDMA_READ &&
	    read_placed(qp))
		return RTO_READ_REPAIR;
	if (qp->comp.rto_backoff != 0 && sr && dpr_sr_tx_get(qp) != NULL)
		return RTO_SR_HOLE;
	if (qp->comp.rto_backoff != 0 ||
	    (qp->comp.retried && qp->comp.retry_nak &&
	     qp->comp.retry_psn == qp->comp.psn))
		return RTO_GO_BACK;
	if (!sr)
		return RTO_HEAD_PROBE;
	if (tail_is_plain(qp) && (w == NULL || !wr_is_rd_atomic(w->opcode)))
		return RTO_TAIL_PROBE;
	return RTO_NOTHING;
}

/*
 * A tail probe (RTO_TAIL_PROBE) waits for DPR_SR_PROBE_MIN_NS without
 * progress: then the timer is set for then, and nothing else happens.
 * The head probe of a go-back-N peer and a READ's repair keep the RTO's
 * floor: they earn it (with 100 us, 3% loss: READ 0.63 -> 0.42 of
 * loss-free); a tail probe of a stream whose holes SACKs reveal seldom
 * does.
 */
static bool
tail_probe_waits(struct dpr_tqp *qp)
{
	uint64_t rto = rto_ns(qp);

	if (rto >= DPR_SR_PROBE_MIN_NS)
		return false;
	if (qp->comp.tail_at == 0 || qp->comp.tail_psn != qp->comp.psn) {
		/* progress since any wait: a new one */
		qp->comp.tail_psn = qp->comp.psn;
		qp->comp.tail_at = qp->tp->now + DPR_SR_PROBE_MIN_NS - rto;
	} else if (qp->tp->now >= qp->comp.tail_at) {
		qp->comp.tail_at = 0;
		return false;
	}
	rto_timer_set(qp->tp, qp, qp->comp.tail_at);
	return true;
}

void
dpr_comp_rto(struct dpr_tqp *qp)
{
	struct dpr_transport *tp = qp->tp;
	struct dpr_send_wqe *w;
	enum rto_stage stage;
	uint32_t psn;

	qp->comp.rto_deadline = 0;
	if ((qp->comp.index == qp->req.index && qp->comp.psn == qp->req.psn) ||
	    !qp->mac_resolved || qp->comp.rnr_wait)
		return;
	w = qp->comp.index != qp->sq.prod ? sq_wqe(qp, qp->comp.index) : NULL;
	stage = rto_stage(qp, w);
	if (stage == RTO_TAIL_PROBE && tail_probe_waits(qp))
		return;
	QP_STAT(qp, rto_timeouts);
	qp->comp.rtt_sent = 0;          /* (Karn) */
	/* what the probe's answer says is acted on: the pass before is
	 * over (retried stays: the same point is not counted twice) */
	qp->comp.replaying = false;
	qp->comp.probing = false;
	psn = go_back_psn(qp);
	switch (stage) {
	case RTO_READ_REPAIR:
		dpr_sr_read_rto(qp);
		break;
	case RTO_SR_HOLE:
		/* a responder that holds what arrived past a gap (it said
		 * so on QP1, or sent SACKs): the oldest hole again, not the
		 * window; once it has that it acknowledges all it holds and
		 * SACKs what is still missing */
		dpr_sr_rto(qp, psn);
		break;
	case RTO_GO_BACK:
		/* (a go-back-N peer that NAKed the oldest request and has
		 * said nothing since lost its resend: it waits there and
		 * drops a probe without a word -- straight back) */
		QP_STAT(qp, rto_gobacks);
		qp->comp.retried = false;
		retry(qp, psn, false);
		break;
	case RTO_HEAD_PROBE:
		if (w != NULL && w->started && !wr_is_rd_atomic(w->opcode) &&
		    dpr_req_resend(qp, qp->comp.psn) == 0) {
			QP_STAT(qp, rto_probes);
			qp->comp.probing = true;
			qp->comp.probe_psn = qp->comp.psn;
			qp->comp.probe_hi = qp->req.psn_hi;
		}
		break;
	case RTO_TAIL_PROBE:
		QP_STAT(qp, rto_probes);
		dpr_req_resend(qp, dpr_psn_add(qp->req.psn_hi, -1));
		break;
	case RTO_NOTHING:
		break;
	}
	if (qp->comp.rto_backoff < UINT8_MAX)
		qp->comp.rto_backoff++;
	if (qp->comp.rto_karn < 16)
		qp->comp.rto_karn++;
	qp->comp.karn_psn = qp->req.psn_hi;
	rto_timer_set(tp, qp, tp->now + rto_ns(qp));
}

void
dpr_comp_timeout(struct dpr_tqp *qp)
{
	if (qp->comp.index == qp->req.index && qp->comp.psn == qp->req.psn) {
		if (qp->mac_resolved || qp->req.index == qp->sq.prod)
			return;   /* nothing outstanding */
		/* work waits for the peer's MAC and nobody has answered
		 * ARP/ND: a timeout of a lost path (IBA 9.7.6.1.3) */
		QP_STAT(qp, local_ack_timeouts);
		if (qp->comp.retry_cnt == 0) {
			qp_fail(qp, DPR_WC_RETRY_EXC_ERR);
			return;
		}
		qp->comp.retry_cnt--;
		qp_work(qp);    /* asks again and arms the timer again */
		return;
	}
	QP_STAT(qp, local_ack_timeouts);
	/* IBA 9.7.6.1.3: resend from the oldest unacknowledged PSN */
	qp->comp.retried = false;
	qp->comp.replaying = false;
	retry(qp, go_back_psn(qp), true);
}
