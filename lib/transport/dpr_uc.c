/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The Unreliable Connection responder (IBA 9.8.2, rxe's UC paths in
 * check_psn(), check_op_seq() and the class D errors of rxe_resp.c). A
 * connection as RC (one peer, PSNs, SEND and WRITE in FIRST/MIDDLE/LAST
 * packets) without ACKs or retries: a packet that is not the one expected
 * -- a PSN gap, a MIDDLE or LAST with no message begun, a message that
 * does not fit or has a bad rkey, no receive WQE -- drops the message it
 * belongs to, and every packet after it until the next FIRST or ONLY,
 * which starts again (counted uc_dropped). A dropped SEND leaves its WQE
 * for the next message. The requester is RC's (dpr_req.c) with UC
 * opcodes, no AckReq, and WQEs complete once their last packet is queued.
 */

#include <string.h>

#include "transport_private.h"

/* The message in progress is given up: the rest of it is discarded. */
static void
drop_msg(struct dpr_tqp *qp)
{
	if (!qp->resp.uc_drop)
		QP_STAT(qp, uc_dropped);
	qp->resp.uc_drop = true;
	qp->resp.in_msg = 0;
	qp->resp.have_wqe = false;      /* the WQE stays for the next (D1) */
}

static bool
uc_send(struct dpr_tqp *qp, const struct rte_mbuf *m,
	const struct dpr_pkt_info *pi, const struct dpr_wire_hdrs *h)
{
	struct dpr_recv_wqe *r;

	if (pi->mask & DPR_START_MASK) {
		if (!rq_has_wqe(qp))
			return false;           /* no RNR on UC: dropped */
		rq_take(qp);
		qp->resp.have_wqe = true;
		qp->resp.recv_off = 0;
	}
	r = rq_cur(qp);
	if (pi->paylen != 0) {
		if (qp->resp.recv_off + pi->paylen > r->length ||
		    dpr_sge_scatter(qp, r->sge, r->num_sge, qp->resp.recv_off, m,
				    pi->payload_off, pi->paylen) != 0)
			return false;
		qp->resp.recv_off += pi->paylen;
	}
	qp->resp.in_msg = DPR_SEND_MASK;
	if (pi->mask & DPR_END_MASK) {
		dpr_resp_complete_recv(qp, DPR_WC_SUCCESS, DPR_WC_RECV,
				       qp->resp.recv_off, h, pi->mask & DPR_IMMDT_MASK);
		qp->resp.in_msg = 0;
	}
	return true;
}

static bool
uc_write(struct dpr_tqp *qp, const struct rte_mbuf *m,
	 const struct dpr_pkt_info *pi, const struct dpr_wire_hdrs *h)
{
	struct dpr_verbs_ctx *ctx = qp->tp->ctx;

	if (pi->mask & DPR_START_MASK) {
		if (!(qp->attr.qp_access_flags & DPR_ACCESS_REMOTE_WRITE) ||
		    (h->reth.len != 0 &&
		     dpr_mr_check(ctx, h->reth.rkey, qp->pd, qp->qpn, h->reth.va,
				  h->reth.len, DPR_ACCESS_REMOTE_WRITE) == NULL))
			return false;
		qp->resp.write_va = h->reth.va;
		qp->resp.write_rkey = h->reth.rkey;
		qp->resp.write_left = h->reth.len;
		qp->resp.write_len = h->reth.len;
	}
	if (pi->paylen > qp->resp.write_left ||
	    ((pi->mask & DPR_END_MASK) && pi->paylen != qp->resp.write_left))
		return false;
	/* WRITE with immediate consumes a receive WQE: there must be one */
	if ((pi->mask & DPR_RWR_MASK) && !rq_has_wqe(qp))
		return false;
	if (pi->paylen != 0 && !dpr_resp_place_write(qp, NULL, m, pi))
		return false;
	qp->resp.in_msg = DPR_WRITE_MASK;
	if (pi->mask & DPR_END_MASK) {
		if (pi->mask & DPR_IMMDT_MASK) {
			rq_take(qp);
			dpr_resp_complete_recv(qp, DPR_WC_SUCCESS,
					       DPR_WC_RECV_RDMA_WITH_IMM,
					       qp->resp.write_len, h, true);
		}
		qp->resp.in_msg = 0;
	}
	return true;
}

void
dpr_uc_rx(struct dpr_tqp *qp, const struct rte_mbuf *m,
	  const struct dpr_pkt_info *pi, const struct dpr_wire_hdrs *h)
{
	const bool start = (pi->mask & DPR_START_MASK) != 0;
	bool ok;

	/* rxe check_psn (UC): out of order, or inside a dropped message,
	 * only a first packet starts again */
	if (h->psn != qp->resp.psn || qp->resp.uc_drop) {
		if (!start) {
			drop_msg(qp);
			qp->resp.psn = dpr_psn_add(h->psn, 1);
			return;
		}
		if (qp->resp.in_msg != 0)
			drop_msg(qp);
		qp->resp.uc_drop = false;
	}
	qp->resp.psn = dpr_psn_add(h->psn, 1);
	/* rxe check_op_seq (UC): a message begun takes only its own next
	 * packets; a new first packet gives the old message up (D1) */
	if (qp->resp.in_msg != 0 &&
	    (start || !(pi->mask & qp->resp.in_msg))) {
		drop_msg(qp);
		if (!start)
			return;
		qp->resp.uc_drop = false;
	} else if (qp->resp.in_msg == 0 && !start) {
		drop_msg(qp);
		return;
	}
	if (pi->paylen > qp->pmtu ||
	    (!(pi->mask & DPR_END_MASK) && pi->paylen != qp->pmtu)) {
		drop_msg(qp);
		return;
	}
	ok = (pi->mask & DPR_SEND_MASK) ? uc_send(qp, m, pi, h) :
	     (pi->mask & DPR_WRITE_MASK) ? uc_write(qp, m, pi, h) : false;
	if (!ok)
		drop_msg(qp);
}
