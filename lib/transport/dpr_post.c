/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Posting work requests: ibv_post_send and ibv_post_recv as the transport
 * takes them, from the daemon's own callers and from a shim client's
 * ring (dpr_post_send_shared(): the usual request read in place, once).
 * Checks as rxe's (and the IBA's) for each WR, the WQE filled, the
 * requester woken.
 */

#include <errno.h>
#include <string.h>

#include "transport_private.h"

/* a field of memory another process may write, read once */
#define READ_SHARED(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/* Send WQE @p w from @p wr: @p opcode, @p flags and its message's @p len
 * bytes as the caller checked them, the other fields read once (@p wr
 * may be shared memory; on private memory the relaxed loads are plain
 * ones). The SGEs or inline bytes, an atomic's operands and the producer
 * index are the caller's. */
static inline void
wqe_fill(struct dpr_send_wqe *w, const struct dpr_send_wr *wr, uint32_t opcode,
	 uint32_t flags, uint32_t len)
{
	w->wr_id = READ_SHARED(wr->wr_id);
	w->opcode = (uint8_t)opcode;
	w->flags = (uint8_t)flags;
	w->imm = READ_SHARED(wr->imm_data);
	w->length = len;
	w->state = WQE_POSTED;
	w->started = false;
	w->offset = 0;
	w->read_done = 0;
	w->answered = false;
	w->remote_addr = READ_SHARED(wr->remote_addr);
	w->rkey = READ_SHARED(wr->rkey);
}

/* wqe_fill() into the next send WQE */
static inline struct dpr_send_wqe *
wqe_post(struct dpr_tqp *qp, const struct dpr_send_wr *wr, uint32_t opcode,
	 uint32_t flags, uint32_t len)
{
	struct dpr_send_wqe *w = sq_wqe(qp, qp->sq.prod);

	wqe_fill(w, wr, opcode, flags, len);
	return w;
}

/* The usual request, the QP's part: an RC QP in RTS */
static inline bool
usual_qp(const struct dpr_tqp *qp)
{
	return qp->type == DPR_QPT_RC && qp->state == DPR_QPS_RTS &&
	       qp->sq.max_sge != 0;
}

/* The usual request, the request's part, on values read once: a SEND or
 * WRITE (with or without immediate) of one SGE, not inline */
static inline bool
usual_wr(uint32_t opcode, uint32_t flags, uint32_t num_sge, uint32_t len)
{
	return opcode <= DPR_WR_SEND_WITH_IMM && num_sge == 1 &&
	       !(flags & DPR_SEND_INLINE) && len <= (1u << 31);
}

/* The usual request (what dpr_post_send()'s general checks accept of it) */
static inline bool
usual_request(const struct dpr_tqp *qp, uint32_t opcode, uint32_t flags,
	      uint32_t num_sge, uint32_t len)
{
	return usual_qp(qp) && usual_wr(opcode, flags, num_sge, len);
}

/* Send WQE @p w from a usual request (as checked): wqe_fill() and its
 * one SGE */
static inline void
usual_fill(struct dpr_send_wqe *w, const struct dpr_send_wr *wr, uint32_t opcode,
	   uint32_t flags, uint32_t len)
{
	struct dpr_sge *const sge = w->sge;     /* (read once: the stores
						 * below could alias it) */

	wqe_fill(w, wr, opcode, flags, len);
	sge->addr = READ_SHARED(wr->sge[0].addr);
	sge->length = len;
	sge->lkey = READ_SHARED(wr->sge[0].lkey);
	w->num_sge = 1;
}

/*
 * The usual requests at the head of @p wrs (@p n of them) into the send
 * queue, as many as it has room for, the QP's fields read once for all
 * of them (stores into the WQEs would otherwise make the compiler read
 * them again for each). @return how many were posted.
 */
static unsigned int
usual_run(struct dpr_tqp *qp, const struct dpr_send_wr *wrs, unsigned int n)
{
	const uint32_t mask = qp->sq.mask, limit = qp->comp.index + qp->sq.size;
	struct dpr_send_wqe *const wqe = qp->sq.wqe;
	uint32_t prod = qp->sq.prod;
	/* (as many as the ring has room for: prod never passes limit) */
	const struct dpr_send_wr *wr = wrs, *const end = wrs + RTE_MIN(n, limit - prod);

	if (!usual_qp(qp))
		return 0;
	for (; wr != end; wr++) {
		const uint32_t opcode = wr->opcode, flags = wr->send_flags;
		const uint32_t len = wr->sge[0].length;

		if (!usual_wr(opcode, flags, wr->num_sge, len))
			break;
		usual_fill(&wqe[prod++ & mask], wr, opcode, flags, len);
	}
	qp->sq.prod = prod;
	return (unsigned int)(wr - wrs);
}

int
dpr_post_send_shared(struct dpr_tqp *qp, const struct dpr_send_wr *wr)
{
	const uint32_t opcode = READ_SHARED(wr->opcode);
	const uint32_t flags = READ_SHARED(wr->send_flags);
	const uint32_t len = READ_SHARED(wr->sge[0].length);

	if (unlikely(!usual_request(qp, opcode, flags, READ_SHARED(wr->num_sge), len)))
		return -EAGAIN;
	/* as dpr_post_send(): the QP is looked at again, full or not */
	qp_work(qp);
	if (qp->sq.prod - qp->comp.index >= qp->sq.size)
		return -ENOMEM;
	usual_fill(sq_wqe(qp, qp->sq.prod), wr, opcode, flags, len);
	qp->sq.prod++;
	return 0;
}

int
dpr_post_send(struct dpr_tqp *qp, const struct dpr_send_wr *wrs, unsigned int n,
	      unsigned int *n_posted)
{
	unsigned int k;
	int rc = 0;

	for (k = 0; k < n; k++) {
		const struct dpr_send_wr *wr;
		struct dpr_send_wqe *w;
		uint64_t len = 0;
		uint32_t i;
		bool inl;

		/* usual requests, checked and copied in fewer steps */
		k += usual_run(qp, &wrs[k], n - k);
		if (k == n)
			break;
		wr = &wrs[k];
		inl = wr->send_flags & DPR_SEND_INLINE;
		if (usual_request(qp, wr->opcode, wr->send_flags, wr->num_sge,
				  wr->sge[0].length)) {
			rc = -ENOMEM;   /* (what stopped usual_run()) */
			break;
		}
		if (qp->state < DPR_QPS_RTS || wr->opcode > DPR_WR_SEND_WITH_INV) {
			rc = -EINVAL;
			break;
		}
		/* windows: binds and invalidations on RC and UC QPs (IBA
		 * 10.6.7, 10.8.2.x); SEND WITH INVALIDATE has RC opcodes only */
		if ((wr_is_local(wr->opcode) || wr->opcode == DPR_WR_SEND_WITH_INV) &&
		    qp->type != DPR_QPT_RC &&
		    (qp->type != DPR_QPT_UC || wr->opcode == DPR_WR_SEND_WITH_INV)) {
			rc = -EINVAL;
			break;
		}
		if (wr_is_local(wr->opcode)) {
			if (qp->sq.prod - qp->comp.index >= qp->sq.size) {
				rc = -ENOMEM;
				break;
			}
			/* no data: what it binds or invalidates */
			w = wqe_post(qp, wr, wr->opcode, wr->send_flags, 0);
			w->num_sge = 0;
			if (wr->opcode == DPR_WR_BIND_MW)
				w->bind = wr->bind;
			qp->sq.prod++;
			if (qp->state == DPR_QPS_ERR)
				dpr_qp_flush_send(qp);
			continue;
		}
		if (inl) {
			/* num_sge counts the inline bytes */
			if (wr->num_sge > qp->sq.max_inline || wr_is_rd_atomic(wr->opcode)) {
				rc = -EINVAL;
				break;
			}
			len = wr->num_sge;
		} else {
			if (wr->num_sge > qp->sq.max_sge) {
				rc = -EINVAL;
				break;
			}
			for (i = 0; i < wr->num_sge; i++)
				len += wr->sge[i].length;
		}
		if (len > (1ull << 31) ||
		    (wr_is_atomic(wr->opcode) && (inl || wr->num_sge != 1 || len != 8))) {
			rc = -EINVAL;
			break;
		}
		if (qp->type == DPR_QPT_UD) {
			rc = dpr_ud_check_send(qp, wr, len);
			if (rc != 0)
				break;
		}
		/* UC: SENDs and WRITEs only (IBA 9.8.2, table 38) */
		if (qp->type == DPR_QPT_UC && wr_is_rd_atomic(wr->opcode)) {
			rc = -EINVAL;
			break;
		}
		if (qp->sq.prod - qp->comp.index >= qp->sq.size) {
			rc = -ENOMEM;
			break;
		}
		w = wqe_post(qp, wr, wr->opcode, wr->send_flags, (uint32_t)len);
		w->compare_add = wr->compare_add;
		w->swap = wr->swap;
		if (qp->type == DPR_QPT_UD)
			w->ud = wr->ud;
		if (inl) {
			/* copied now: the request may be gone by the time it is sent */
			memcpy(w->inline_data, wr->inline_data, len);
			w->num_sge = 0;
		} else {
			for (i = 0; i < wr->num_sge; i++)
				w->sge[i] = wr->sge[i];
			w->num_sge = (uint8_t)wr->num_sge;
		}
		qp->sq.prod++;
		if (qp->state == DPR_QPS_ERR)
			dpr_qp_flush_send(qp);
	}
	if (n_posted != NULL)
		*n_posted = k;
	if (qp->state == DPR_QPS_RTS)
		qp_work(qp);
	return rc;
}

int
dpr_post_recv(struct dpr_tqp *qp, const struct dpr_recv_wr *wrs, unsigned int n,
	      unsigned int *n_posted)
{
	unsigned int k;
	int rc = 0;

	for (k = 0; k < n; k++) {
		const struct dpr_recv_wr *wr = &wrs[k];

		if (qp->state == DPR_QPS_RESET || qp->srq != NULL ||
		    wr->num_sge > qp->rq.max_sge) {
			rc = -EINVAL;
			break;
		}
		if (qp->rq.prod - qp->rq.cons >= qp->rq.size) {
			rc = -ENOMEM;
			break;
		}
		recv_wqe_fill(&qp->rq.wqe[qp->rq.prod & qp->rq.mask], wr);
		qp->rq.prod++;
		if (qp->state == DPR_QPS_ERR)
			dpr_qp_flush_recv(qp);
	}
	if (n_posted != NULL)
		*n_posted = k;
	return rc;
}
