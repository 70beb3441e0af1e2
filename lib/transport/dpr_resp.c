/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The responder (rxe_resp.c): checks each request (PSN, opcode sequence,
 * lengths, keys and access) and executes it -- payload placed into the
 * receive WQE or the MR, READ responses, atomics executed once -- then
 * answers. Answers of one QP leave in PSN order: READ responses and atomic
 * ACKs as they were requested, then one coalesced ACK, or a NAK.
 */

#include <string.h>

#include "transport_private.h"

/* A NAK to send after the responses before it; the first one wins (an
 * RNR NAK is not replaced by the sequence NAKs of the packets behind it). */
static void
set_nak(struct dpr_tqp *qp, uint8_t syndrome, uint32_t psn)
{
	if (!qp->resp.nak_pending) {
		qp->resp.nak_pending = true;
		qp->resp.nak_syn = syndrome;
		qp->resp.nak_psn = psn;
	}
	qp->resp.ack_pending = false;
	qp_work(qp);
}

static void
set_ack(struct dpr_tqp *qp)
{
	if (!qp->resp.nak_pending)
		qp->resp.ack_pending = true;
	qp_work(qp);
}

static inline void
complete_recv(struct dpr_tqp *qp, enum dpr_wc_status status, uint32_t opcode,
	      uint32_t len, const struct dpr_wire_hdrs *h, bool imm)
{
	resp_complete_recv(qp, status, opcode, len,
			   imm && h != NULL ? DPR_WC_WITH_IMM : 0,
			   h != NULL ? h->imm : 0);
}

/* the same for the UC responder (out of line: the RC paths inline it) */
void
dpr_resp_complete_recv(struct dpr_tqp *qp, enum dpr_wc_status status,
		       uint32_t opcode, uint32_t len, const struct dpr_wire_hdrs *h,
		       bool imm)
{
	complete_recv(qp, status, opcode, len, h, imm);
}

/*
 * IBA 9.9.3.1 class C errors (rxe do_class_ac_error): NAK the request, and
 * the QP goes to the error state; the receive WQE in use, if any, takes
 * @p recv_status.
 */
static void
class_c(struct dpr_tqp *qp, uint8_t nak_code, uint32_t psn,
	enum dpr_event_type ev, enum dpr_wc_status recv_status)
{
	uint32_t owed = qp->resp.res_unsent;

	set_nak(qp, DPR_AETH_NAK | nak_code, psn);
	if (qp->resp.have_wqe)
		complete_recv(qp, recv_status, DPR_WC_RECV, qp->resp.recv_off,
			      NULL, false);
	dpr_verbs_event(qp->tp->ctx, ev, qp->qpn);
	dpr_qp_error(qp, nak_code == DPR_NAK_REM_ACCESS_ERR ?
		     "a request of the peer broke an MR's bounds or access (NAK sent)" :
		     nak_code == DPR_NAK_INVALID_REQ ?
		     "an invalid request from the peer (NAK sent)" :
		     "a request of the peer failed here (operational error NAK sent)");
	/* the answers to the READs and atomics accepted before this request
	 * were owed before it: they leave first, then the NAK, in PSN order
	 * as a responder that answers at once (rxe) sends them; without them
	 * the requester would take the NAK's implied ACK for their data */
	qp->resp.res_unsent = owed;
	qp_work(qp);
}

static void
nak_invalid(struct dpr_tqp *qp, uint32_t psn)
{
	class_c(qp, DPR_NAK_INVALID_REQ, psn, DPR_EVENT_QP_REQ_ERR,
		DPR_WC_REM_INV_REQ_ERR);
}

static void
nak_access(struct dpr_tqp *qp, uint32_t psn)
{
	class_c(qp, DPR_NAK_REM_ACCESS_ERR, psn, DPR_EVENT_QP_ACCESS_ERR,
		DPR_WC_REM_ACCESS_ERR);
}

/* IBA 9.7.5.2.8: no receive WQE: RNR NAK with our min_rnr_timer. */
static void
rnr_nak(struct dpr_tqp *qp, uint32_t psn)
{
	set_nak(qp, DPR_AETH_RNR_NAK | (qp->attr.min_rnr_timer & 0x1f), psn);
	/* the packets behind it are covered by this NAK */
	qp->resp.sent_psn_nak = true;
	qp->resp.rnr_gap = true;
}

static void
done_request(struct dpr_tqp *qp, const struct dpr_pkt_info *pi,
	     const struct dpr_wire_hdrs *h)
{
	qp->resp.psn = dpr_psn_add(h->psn, 1);
	if (pi->mask & DPR_END_MASK) {
		qp->resp.msn = (qp->resp.msn + 1) & DPR_PSN_MASK;
		qp->resp.in_msg = 0;
	}
	if (h->ackreq)
		set_ack(qp);
}

static void
rx_send(struct dpr_tqp *qp, const struct rte_mbuf *m,
	const struct dpr_pkt_info *pi, const struct dpr_wire_hdrs *h)
{
	struct dpr_recv_wqe *r;
	int rc;

	if (pi->mask & DPR_START_MASK) {
		if (!rq_has_wqe(qp)) {
			rnr_nak(qp, h->psn);
			return;
		}
		rq_take(qp);
		qp->resp.have_wqe = true;
		qp->resp.recv_off = 0;
	}
	r = rq_cur(qp);
	if (pi->paylen != 0) {
		if (qp->resp.recv_off + pi->paylen > r->length) {
			/* the message does not fit the receive WQE */
			class_c(qp, DPR_NAK_INVALID_REQ, h->psn,
				DPR_EVENT_QP_REQ_ERR, DPR_WC_LOC_LEN_ERR);
			return;
		}
		rc = dpr_sge_scatter(qp, r->sge, r->num_sge, qp->resp.recv_off, m,
				     pi->payload_off, pi->paylen);
		if (rc != 0) {
			/* rxe: a malformed WQE is a remote operational error */
			class_c(qp, DPR_NAK_REM_OP_ERR, h->psn,
				DPR_EVENT_QP_FATAL, DPR_WC_LOC_PROT_ERR);
			return;
		}
		qp->resp.recv_off += pi->paylen;
	}
	qp->resp.in_msg = DPR_SEND_MASK;
	if (unlikely(pi->mask & DPR_INV_MASK)) {
		/* SEND WITH INVALIDATE (IBA 10.6.7.2.2, 9.4.6): the type 2
		 * window of ours its IETH names, bound to this QP, is
		 * invalidated as the message completes; a key that cannot be
		 * is an invalid request (rxe: class J) */
		if (dpr_mw_invalidate(qp->tp->ctx, h->ieth_rkey, qp->pd,
				      qp->qpn, true) != 0) {
			nak_invalid(qp, h->psn);
			return;
		}
		QP_STAT(qp, mw_remote_inv);
		resp_complete_recv(qp, DPR_WC_SUCCESS, DPR_WC_RECV,
				   qp->resp.recv_off, DPR_WC_WITH_INV, h->ieth_rkey);
	} else if (pi->mask & DPR_END_MASK) {
		complete_recv(qp, DPR_WC_SUCCESS, DPR_WC_RECV, qp->resp.recv_off, h,
			      pi->mask & DPR_IMMDT_MASK);
	}
	done_request(qp, pi, h);
}

bool
dpr_resp_place_write(struct dpr_tqp *qp, struct dpr_mr *mr,
		     const struct rte_mbuf *m, const struct dpr_pkt_info *pi)
{
	uint8_t *dst;
	const void *src;

	if (mr == NULL)
		mr = dpr_mr_check(qp->tp->ctx, qp->resp.write_rkey, qp->pd, qp->qpn,
				  qp->resp.write_va, pi->paylen,
				  DPR_ACCESS_REMOTE_WRITE);
	if (mr == NULL)
		return false;
	dst = dpr_mr_ptr(mr, qp->resp.write_va);
	src = rte_pktmbuf_read(m, pi->payload_off, pi->paylen, dst);
	if (src != dst)
		memcpy(dst, src, pi->paylen);
	qp->resp.write_va += pi->paylen;
	qp->resp.write_left -= pi->paylen;
	return true;
}

static void
rx_write(struct dpr_tqp *qp, const struct rte_mbuf *m,
	 const struct dpr_pkt_info *pi, const struct dpr_wire_hdrs *h)
{
	struct dpr_verbs_ctx *ctx = qp->tp->ctx;
	struct dpr_mr *mr = NULL;

	/* WRITE with immediate consumes a receive WQE: check before placing */
	if ((pi->mask & DPR_RWR_MASK) && !rq_has_wqe(qp)) {
		rnr_nak(qp, h->psn);
		return;
	}
	if (pi->mask & DPR_START_MASK) {
		if (!(qp->attr.qp_access_flags & DPR_ACCESS_REMOTE_WRITE) ||
		    (h->reth.len != 0 &&
		     (mr = dpr_mr_check(ctx, h->reth.rkey, qp->pd, qp->qpn, h->reth.va,
					h->reth.len, DPR_ACCESS_REMOTE_WRITE)) == NULL)) {
			nak_access(qp, h->psn);
			return;
		}
		qp->resp.write_va = h->reth.va;
		qp->resp.write_rkey = h->reth.rkey;
		qp->resp.write_left = h->reth.len;
		qp->resp.write_len = h->reth.len;
	}
	if (pi->paylen > qp->resp.write_left ||
	    ((pi->mask & DPR_END_MASK) && pi->paylen != qp->resp.write_left)) {
		/* C9-91..93: the payloads must add up to the DMA length */
		nak_invalid(qp, h->psn);
		return;
	}
	/* the key again after the first packet (checked with the whole DMA
	 * length just above for it): it may have been deregistered since */
	if (pi->paylen != 0 &&
	    !dpr_resp_place_write(qp, (pi->mask & DPR_START_MASK) ? mr : NULL, m, pi)) {
		nak_access(qp, h->psn);
		return;
	}
	qp->resp.in_msg = DPR_WRITE_MASK;
	if ((pi->mask & DPR_END_MASK) && (pi->mask & DPR_IMMDT_MASK)) {
		rq_take(qp);
		qp->resp.have_wqe = true;
		complete_recv(qp, DPR_WC_SUCCESS, DPR_WC_RECV_RDMA_WITH_IMM,
			      qp->resp.write_len, h, true);
	}
	done_request(qp, pi, h);
}

/*
 * Responder resources (IBA 9.7.5.1.6, C9-122): the last max_dest_rd_atomic
 * READ and atomic requests, kept in a ring to answer their duplicates. A
 * new request takes the oldest slot (rxe recycles its ring the same way)
 * unless that slot's first answers have not all gone out yet: then every
 * slot still waits to answer, so the requester has more READs and atomics
 * outstanding than this QP's max_dest_rd_atomic, the responder error IBA
 * 9.9.3.1 names "too many RDMA READ or ATOMIC requests" (rxe:
 * RESPST_ERR_TOO_MANY_RDMA_ATM_REQ), class C: NAK Invalid Request, QP to
 * ERR; so does any READ or atomic to a QP that takes none
 * (max_dest_rd_atomic 0). A requester within its negotiated depth never
 * meets either: it sends a new one only after an older one's answer
 * arrived. An oldest slot busy only replaying answers to a duplicate of
 * its request (one that came late, or twice) gives the replay up: the
 * requester sending new requests past it has those answers already.
 * @return the slot, or NULL with the request NAKed.
 */
static struct dpr_resp_res *
take_res(struct dpr_tqp *qp, uint32_t psn)
{
	struct dpr_resp_res *res;

	if (qp->attr.max_dest_rd_atomic == 0) {
		nak_invalid(qp, psn);
		return NULL;
	}
	res = &qp->resp.res[qp->resp.res_head % qp->resp.res_num];
	if (res->to_send) {
		if (!res->replay) {
			QP_STAT(qp, rd_atomic_over);
			nak_invalid(qp, psn);
			return NULL;
		}
		qp->resp.res_unsent--;
	}
	qp->resp.res_head++;
	qp->resp.res_unsent++;
	memset(res, 0, sizeof(*res));
	res->to_send = true;
	return res;
}

/* Send a kept resource's answers again (a duplicate asked for them). */
static void
resend_res(struct dpr_tqp *qp, struct dpr_resp_res *res)
{
	if (!res->to_send) {
		res->to_send = true;
		res->replay = true;
		qp->resp.res_unsent++;
	}
	qp_work(qp);
}

static void
rx_read(struct dpr_tqp *qp, const struct dpr_pkt_info *pi,
	const struct dpr_wire_hdrs *h)
{
	struct dpr_resp_res *res;

	if (!(qp->attr.qp_access_flags & DPR_ACCESS_REMOTE_READ) ||
	    (h->reth.len != 0 &&
	     dpr_mr_check(qp->tp->ctx, h->reth.rkey, qp->pd, qp->qpn, h->reth.va,
			  h->reth.len, DPR_ACCESS_REMOTE_READ) == NULL)) {
		nak_access(qp, h->psn);
		return;
	}
	res = take_res(qp, h->psn);
	if (res == NULL)
		return;
	res->type = RES_READ;
	res->first_psn = h->psn;
	res->last_psn = dpr_psn_add(h->psn, (int32_t)npkts(h->reth.len, qp->pmtu) - 1);
	res->va = h->reth.va;
	res->rkey = h->reth.rkey;
	res->length = h->reth.len;
	res->streaming = true;
	res->answered = false;
	qp->resp.psn = dpr_psn_add(res->last_psn, 1);
	/* C9-148: a READ counts as done for the MSN once accepted; its
	 * responses, however long they wait behind others, carry this MSN */
	qp->resp.msn = (qp->resp.msn + 1) & DPR_PSN_MASK;
	res->msn = qp->resp.msn;
	(void)pi;
	qp_work(qp);
}

static void
rx_atomic(struct dpr_tqp *qp, const struct dpr_pkt_info *pi,
	  const struct dpr_wire_hdrs *h)
{
	struct dpr_resp_res *res;
	struct dpr_mr *mr;
	uint64_t *p, orig;

	if (!(qp->attr.qp_access_flags & DPR_ACCESS_REMOTE_ATOMIC)) {
		nak_access(qp, h->psn);
		return;
	}
	/* an atomic works on an 8-byte aligned VA (IBA 9.4.5); a misaligned
	 * one is a class C error, NAK Invalid Request (9.9.3.1, as rxe's
	 * RESPST_ERR_MISALIGNED_ATOMIC) */
	if (h->atomic.va & 7) {
		nak_invalid(qp, h->psn);
		return;
	}
	mr = dpr_mr_check(qp->tp->ctx, h->atomic.rkey, qp->pd, qp->qpn,
			  h->atomic.va, 8,
			  DPR_ACCESS_REMOTE_ATOMIC);
	if (mr == NULL) {
		nak_access(qp, h->psn);
		return;
	}
	res = take_res(qp, h->psn);
	if (res == NULL)
		return;
	/* executed once; the result is kept for duplicates (C9-125) */
	p = (uint64_t *)(void *)dpr_mr_ptr(mr, h->atomic.va);
	if (pi->opcode == DPR_OP_RC_CMP_SWAP) {
		orig = h->atomic.compare;
		__atomic_compare_exchange_n(p, &orig, h->atomic.swap_add, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_fetch_add(p, h->atomic.swap_add, __ATOMIC_SEQ_CST);
	}
	res->type = RES_ATOMIC;
	res->first_psn = res->last_psn = h->psn;
	res->orig = orig;
	QP_STAT(qp, atomic_executed);
	qp->resp.psn = dpr_psn_add(h->psn, 1);
	qp->resp.msn = (qp->resp.msn + 1) & DPR_PSN_MASK;
	res->msn = qp->resp.msn;
	qp_work(qp);
}

/*
 * A duplicate READ request of @p res from byte @p off on (IBA 9.7.5.1.2:
 * the requester lacks responses from there): one asking for the rest of
 * the READ (every requester going back, go-back-N) sends the READ again
 * from there; one asking for a part inside it (a requester with
 * selective repeat: a hole of its responses) has that part sent first,
 * and the READ's own responses, if they still go out, go on where they
 * were. Either is answered from the request as it first came: a
 * duplicate chooses where in it, never another address or key.
 */
static void
read_again(struct dpr_tqp *qp, struct dpr_resp_res *res, uint32_t off,
	   uint32_t len)
{
	uint32_t end = RTE_MIN((uint64_t)res->length, (uint64_t)off + len);

	/* its responses from there are still to go out (a requester's probe
	 * while they wait their turn): they will; starting over would only
	 * send again what it has, and a slow stream probed again and again
	 * would never end */
	if (res->streaming && off >= res->sent)
		return;
	if (end >= res->length) {
		res->start = off;
		res->sent = off;
		res->streaming = true;
		QP_STAT(qp, read_replays);
	} else {
		struct dpr_res_patch *p;

		/* (what its own run has still to send, it sends) */
		if (res->streaming && end > res->sent)
			end = res->sent;
		if (end <= off)
			return;

		if (res->npatch == DPR_RES_PATCHES) {
			/* (more holes at once than kept: the last one grows
			 * to cover this one too) */
			p = &res->patch[DPR_RES_PATCHES - 1];
			p->start = p->off = RTE_MIN(p->off, off);
			p->end = RTE_MAX(p->end, end);
		} else {
			p = &res->patch[res->npatch++];
			p->start = p->off = off;
			p->end = end;
		}
		QP_STAT(qp, read_patches);
	}
	if (!res->to_send) {
		res->to_send = true;
		res->replay = true;
		qp->resp.res_unsent++;
	}
	qp_work(qp);
}

/* IBA 9.7.5.1.2: a request already executed (C9-104..C9-106). */
static void
duplicate(struct dpr_tqp *qp, const struct dpr_pkt_info *pi,
	  const struct dpr_wire_hdrs *h)
{
	uint32_t i;

	QP_STAT(qp, dup_request_rx);
	if (pi->mask & (DPR_SEND_MASK | DPR_WRITE_MASK)) {
		set_ack(qp);            /* acknowledge again, do nothing else */
		return;
	}
	for (i = 0; i < qp->resp.res_num; i++) {
		struct dpr_resp_res *res = &qp->resp.res[i];

		if (pi->opcode == DPR_OP_RC_READ_REQUEST && res->type == RES_READ &&
		    dpr_psn_ge(h->psn, res->first_psn) &&
		    dpr_psn_le(h->psn, res->last_psn)) {
			read_again(qp, res, (uint32_t)dpr_psn_diff(h->psn, res->first_psn)
				   << qp->pmtu_shift, h->reth.len);
			return;
		}
		if ((pi->mask & DPR_ATOMIC_MASK) && res->type == RES_ATOMIC &&
		    res->first_psn == h->psn) {
			QP_STAT(qp, atomic_replays);
			resend_res(qp, res);
			return;
		}
	}
	/* too old to answer: the requester has moved on; dropped */
}

void
dpr_resp_rx(struct dpr_tqp *qp, const struct rte_mbuf *m,
	    const struct dpr_pkt_info *pi, const struct dpr_wire_hdrs *h)
{
	struct dpr_transport *tp = qp->tp;
	int32_t d;

	if (!qp->comm_established) {
		qp->comm_established = true;
		if (qp->state == DPR_QPS_RTR)
			dpr_verbs_event(tp->ctx, DPR_EVENT_COMM_EST, qp->qpn);
	}
	if (unlikely(pi->opcode == DPR_OP_DPR_PURGE)) {
		/* from a peer we sent SACKs (it said on QP1 it reads them) */
		if (qp->type == DPR_QPT_RC && sr_on(qp))
			dpr_sr_purge(qp, h->psn);
		else
			qp->tp->stats.rx_invalid++;
		return;
	}
	d = dpr_psn_diff(h->psn, qp->resp.psn);
	if (d > 0) {
		QP_STAT(qp, out_of_seq_rx);
		/* with a peer that reads SACKs: held until the gap fills
		 * (not past an RNR NAK: the requester waits, then goes back) */
		if (!qp->resp.rnr_gap && qp->type == DPR_QPT_RC && sr_on(qp)) {
			dpr_sr_hold(qp, m, h->psn, d);
			return;
		}
		/* IBA 9.7.5.1.1 (C9-97): one NAK per gap */
		if (!qp->resp.sent_psn_nak) {
			qp->resp.sent_psn_nak = true;
			set_nak(qp, DPR_AETH_NAK | DPR_NAK_PSN_SEQ_ERR, qp->resp.psn);
		}
		return;
	}
	if (d < 0) {
		duplicate(qp, pi, h);
		return;
	}
	dpr_resp_rx_expected(qp, m, pi, h);
	if (qp->sr_rx != NULL && qp->sr_rx->n != 0)
		dpr_sr_drain(qp, h->psn);
}

void
dpr_resp_rx_expected(struct dpr_tqp *qp, const struct rte_mbuf *m,
		     const struct dpr_pkt_info *pi, const struct dpr_wire_hdrs *h)
{
	uint32_t in = qp->resp.in_msg;

	qp->resp.sent_psn_nak = false;
	qp->resp.rnr_gap = false;
	if (qp->resp.nak_pending && qp->resp.nak_psn == h->psn &&
	    (qp->resp.nak_syn & DPR_AETH_TYPE_MASK) == DPR_AETH_NAK)
		qp->resp.nak_pending = false;   /* the gap has filled */

	/* IBA 9.8.3 (rxe check_op_seq): MIDDLE/LAST continue a message of
	 * the same kind; anything else starts one */
	if (in != 0 ? !(pi->mask & in) || (pi->mask & DPR_START_MASK) :
	    !(pi->mask & DPR_START_MASK)) {
		nak_invalid(qp, h->psn);
		return;
	}
	/* C9-91, C9-92: at most a path MTU, exactly one before the last */
	if (pi->paylen > qp->pmtu ||
	    ((pi->mask & (DPR_START_MASK | DPR_MIDDLE_MASK)) &&
	     !(pi->mask & DPR_END_MASK) && pi->paylen != qp->pmtu)) {
		nak_invalid(qp, h->psn);
		return;
	}
	if (pi->mask & DPR_SEND_MASK)
		rx_send(qp, m, pi, h);
	else if (pi->mask & DPR_WRITE_MASK)
		rx_write(qp, m, pi, h);
	else if (pi->opcode == DPR_OP_RC_READ_REQUEST)
		rx_read(qp, pi, h);
	else if (pi->mask & DPR_ATOMIC_MASK)
		rx_atomic(qp, pi, h);
}

bool
dpr_resp_has_output(const struct dpr_tqp *qp)
{
	return qp->resp.res_unsent != 0 || qp->resp.nak_pending ||
		qp->resp.ack_pending || qp->resp.sack_pending;
}

/* Responses of one run of a READ, bytes *@p off to @p end (FIRST at
 * @p start). @return false to stop (no room, or the key went: then the
 * READ is given up and NAKed -- or, asked again after it was answered in
 * full, given up silently). */
static bool
send_run(struct dpr_tqp *qp, struct dpr_resp_res *res, uint32_t start,
	 uint32_t *off, uint32_t end, uint32_t *budget)
{
	struct dpr_transport *tp = qp->tp;

	do {
		uint32_t paylen = RTE_MIN(qp->pmtu, end - *off);
		bool first = *off == start, last = *off + paylen >= end;
		struct dpr_wire_hdrs h = {
			.pkey = DPR_DEFAULT_PKEY,
			.dqpn = qp->attr.dest_qp_num,
			.psn = dpr_psn_add(res->first_psn,
					   (int32_t)(*off >> qp->pmtu_shift)),
			.aeth = { DPR_AETH_ACK | DPR_AETH_CREDIT_INVALID, res->msn },
		};
		struct dpr_wire_seg seg;
		unsigned int nseg = 0;

		if (*budget == 0 || txq_room(tp) == 0)
			return false;
		h.opcode = first ? (last ? DPR_OP_RC_READ_RESPONSE_ONLY :
				    DPR_OP_RC_READ_RESPONSE_FIRST) :
			(last ? DPR_OP_RC_READ_RESPONSE_LAST :
			 DPR_OP_RC_READ_RESPONSE_MIDDLE);
		if (paylen != 0) {
			/* the key again: it may have gone since the request */
			struct dpr_mr *mr = dpr_mr_check(tp->ctx, res->rkey, qp->pd, qp->qpn,
							 res->va + *off, paylen,
							 DPR_ACCESS_REMOTE_READ);

			if (mr == NULL) {
				res->to_send = false;
				res->streaming = false;
				res->npatch = 0;
				qp->resp.res_unsent--;
				/* a duplicate of a READ answered in full, the
				 * memory since deregistered: the requester had
				 * it all, and told its peer so (UCX's
				 * rendezvous: READ, then a message, then the
				 * sender lets the memory go), before a timeout
				 * that came too soon asked again. A NAK there
				 * would fail two healthy QPs; one that really
				 * lacks responses times out */
				if (res->answered) {
					QP_STAT(qp, read_replays_gone);
					return false;
				}
				nak_access(qp, h.psn);
				return false;
			}
			seg.addr = dpr_mr_ptr(mr, res->va + *off);
			seg.iova = (rte_iova_t)(uintptr_t)seg.addr;
			seg.len = paylen;
			dpr_payload_seg(qp, mr, &seg);
			nseg = 1;
		}
		if (dpr_xmit(tp, qp, &h, &seg, nseg) != 0)
			return false;
		QP_STAT(qp, read_resp_tx);
		QP_STAT(qp, resp_packets);
		(*budget)--;
		*off += paylen;
		if (last)
			break;
	} while (*off < end);
	return true;
}

/* Responses of one READ: the holes asked for first (the requester waits
 * on them), then its own run from where it stands. @return false to
 * stop. */
static bool
send_read(struct dpr_tqp *qp, struct dpr_resp_res *res, uint32_t *budget)
{
	while (res->npatch != 0) {
		struct dpr_res_patch *p = &res->patch[0];

		if (!send_run(qp, res, p->start, &p->off, p->end, budget))
			return false;
		res->npatch--;
		memmove(&res->patch[0], &res->patch[1],
			res->npatch * sizeof(res->patch[0]));
	}
	if (res->streaming) {
		if (!send_run(qp, res, res->start, &res->sent, res->length, budget))
			return false;
		res->streaming = false;
		res->answered = true;
	}
	res->to_send = false;
	qp->resp.res_unsent--;
	return true;
}

bool
dpr_resp_send(struct dpr_tqp *qp, uint32_t budget)
{
	struct dpr_transport *tp = qp->tp;
	uint32_t i;

	/* oldest resource first: they are in PSN order */
	for (i = 0; i < qp->resp.res_num && qp->resp.res_unsent != 0; i++) {
		uint32_t slot = (qp->resp.res_head + i) % qp->resp.res_num;
		struct dpr_resp_res *res = &qp->resp.res[slot];

		if (!res->to_send)
			continue;
		if (res->type == RES_READ) {
			if (!send_read(qp, res, &budget))
				return dpr_resp_has_output(qp);
		} else {
			struct dpr_wire_hdrs h = {
				.opcode = DPR_OP_RC_ATOMIC_ACK,
				.pkey = DPR_DEFAULT_PKEY,
				.dqpn = qp->attr.dest_qp_num,
				.psn = res->first_psn,
				.aeth = { DPR_AETH_ACK | DPR_AETH_CREDIT_INVALID,
					  res->msn },
				.atomic_orig = res->orig,
			};

			if (budget == 0 || dpr_xmit(tp, qp, &h, NULL, 0) != 0)
				return true;
			QP_STAT(qp, resp_packets);
			budget--;
			res->to_send = false;
			qp->resp.res_unsent--;
		}
	}
	if (qp->resp.res_unsent != 0)
		return true;
	if (qp->resp.nak_pending) {
		uint8_t syn = qp->resp.nak_syn;

		if (dpr_xmit_ack(qp, syn, qp->resp.nak_psn) != 0)
			return true;
		qp->resp.nak_pending = false;
		if ((syn & DPR_AETH_TYPE_MASK) == DPR_AETH_RNR_NAK)
			QP_STAT(qp, rnr_nak_tx);
		else if ((syn & 0x1f) == DPR_NAK_PSN_SEQ_ERR)
			QP_STAT(qp, nak_seq_tx);
		else
			QP_STAT(qp, nak_err_tx);
		QP_STAT(qp, resp_packets);
	} else if ((qp->resp.sack_pending ||
		    (qp->resp.ack_pending && qp->sr_rx != NULL && qp->sr_rx->n != 0)) &&
		   qp->state != DPR_QPS_ERR) {
		/* requests held past a gap: a SACK says which, and stands for
		 * the cumulative ACK */
		if (dpr_sr_send_sack(qp) != 0)
			return true;
		qp->resp.sack_pending = false;
		qp->resp.ack_pending = false;
	} else if (qp->resp.ack_pending && qp->state != DPR_QPS_ERR) {
		/* one cumulative ACK for everything received so far */
		if (dpr_xmit_ack(qp, DPR_AETH_ACK | DPR_AETH_CREDIT_INVALID,
				 dpr_psn_add(qp->resp.psn, -1)) != 0)
			return true;
		qp->resp.ack_pending = false;
		QP_STAT(qp, ack_tx);
		QP_STAT(qp, resp_packets);
	}
	return false;
}
