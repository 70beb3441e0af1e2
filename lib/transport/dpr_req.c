/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The requester (rxe_req.c): turns send WQEs into request packets --
 * segmentation by path MTU into FIRST/MIDDLE/LAST/ONLY, PSNs, AckReq, the
 * READ/atomic limit and fences -- and rewinds for go-back-N retries.
 */

#include <errno.h>

#include "dpr_sec.h"
#include "transport_private.h"

/* The BTH opcodes of SEND and WRITE packets (IBA 9.4, table 35), by
 * work request opcode, first packet or not, last or not */
static const uint8_t send_write_op[DPR_WR_SEND_WITH_IMM + 1][2][2] = {
	[DPR_WR_RDMA_WRITE] = {
		{ DPR_OP_RC_WRITE_MIDDLE, DPR_OP_RC_WRITE_LAST },
		{ DPR_OP_RC_WRITE_FIRST, DPR_OP_RC_WRITE_ONLY } },
	[DPR_WR_RDMA_WRITE_WITH_IMM] = {
		{ DPR_OP_RC_WRITE_MIDDLE, DPR_OP_RC_WRITE_LAST_IMM },
		{ DPR_OP_RC_WRITE_FIRST, DPR_OP_RC_WRITE_ONLY_IMM } },
	[DPR_WR_SEND] = {
		{ DPR_OP_RC_SEND_MIDDLE, DPR_OP_RC_SEND_LAST },
		{ DPR_OP_RC_SEND_FIRST, DPR_OP_RC_SEND_ONLY } },
	[DPR_WR_SEND_WITH_IMM] = {
		{ DPR_OP_RC_SEND_MIDDLE, DPR_OP_RC_SEND_LAST_IMM },
		{ DPR_OP_RC_SEND_FIRST, DPR_OP_RC_SEND_ONLY_IMM } },
};

/* The BTH opcode of a packet of @p w (IBA 9.4, table 35). */
static inline uint8_t
req_opcode(const struct dpr_send_wqe *w, bool first, bool last)
{
	switch (w->opcode) {
	case DPR_WR_RDMA_READ:
		return DPR_OP_RC_READ_REQUEST;
	case DPR_WR_ATOMIC_CMP_AND_SWP:
		return DPR_OP_RC_CMP_SWAP;
	case DPR_WR_ATOMIC_FETCH_AND_ADD:
		return DPR_OP_RC_FETCH_ADD;
	case DPR_WR_SEND_WITH_INV:
		/* (RC only: IBA 9.4, table 35 has no UC opcode for it) */
		return last ? (first ? DPR_OP_RC_SEND_ONLY_INV : DPR_OP_RC_SEND_LAST_INV) :
			(first ? DPR_OP_RC_SEND_FIRST : DPR_OP_RC_SEND_MIDDLE);
	default:
		return send_write_op[w->opcode][first][last];
	}
}

/* Check the WQE's local buffers before its first packet (IBA 10.7.2.3:
 * a bad local key is a Local Protection Error). */
static bool
local_sges_check(struct dpr_tqp *qp, struct dpr_send_wqe *w, uint32_t access)
{
	uint32_t i;

	for (i = 0; i < w->num_sge; i++) {
		if (w->sge[i].length == 0)
			continue;
		if (dpr_mr_check_cached(qp->tp->ctx, &qp->req.lkey, w->mr_gen,
					w->sge[i].lkey, qp->pd, 0, w->sge[i].addr,
					w->sge[i].length, access) == NULL)
			return false;
	}
	return true;
}

static __rte_always_inline bool
local_sges_ok(struct dpr_tqp *qp, struct dpr_send_wqe *w)
{
	uint32_t access = wr_is_rd_atomic(w->opcode) ? DPR_ACCESS_LOCAL_WRITE : 0;

	w->mr = NULL;
	w->mr_gen = __atomic_load_n(qp->tp->mr_gen, __ATOMIC_ACQUIRE);
	if (likely(w->num_sge == 1)) {
		/* the key once per message, not per packet */
		if (w->sge[0].length != 0)
			w->mr = dpr_mr_check_cached(qp->tp->ctx, &qp->req.lkey,
						    w->mr_gen, w->sge[0].lkey, qp->pd, 0,
						    w->sge[0].addr, w->sge[0].length,
						    access);
		return w->mr != NULL || w->sge[0].length == 0;
	}
	return local_sges_check(qp, w, access);
}

/*
 * local_sges_ok() for a SEND or WRITE of the send fast path (nothing asked
 * of its MR's access), with the address its payload starts at in @p src
 * (NULL: none): the QP's cached key compared in line. The cache only ever
 * holds an MR of the QP's own PD, found at generation c->gen; at the run's
 * generation @p gen (read once a run: only this worker deregisters) it
 * is still that MR. Anything else: local_sges_ok() as the general way.
 */
static __rte_always_inline bool
fast_sges_ok(struct dpr_tqp *qp, struct dpr_send_wqe *w, uint64_t gen,
	     const uint8_t **src)
{
	const struct dpr_mr_cache *c = &qp->req.lkey;

	if (likely(w->num_sge == 1)) {
		const struct dpr_sge *s = w->sge;
		struct dpr_mr *mr = c->mr;

		if (likely(mr != NULL && s->lkey == c->key && c->gen == gen &&
			   s->length != 0 && dpr_mr_covers(mr, s->addr, s->length))) {
			w->mr = mr;
			w->mr_gen = gen;
			*src = dpr_mr_ptr(mr, s->addr);
			return true;
		}
	}
	if (!local_sges_ok(qp, w))
		return false;
	*src = (w->flags & DPR_SEND_INLINE) ? w->inline_data :
		w->mr != NULL ? dpr_mr_ptr(w->mr, w->sge[0].addr) : NULL;
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
static inline bool
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
				  (int32_t)(w->length == 0 ? 1 :
				  ((w->length - 1) >> qp->pmtu_shift) + 1)) - 1);
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
static inline void
count_send(struct dpr_tqp *qp, uint32_t psn, uint32_t last)
{
	struct dpr_transport *tp = qp->tp;

	QP_STAT(qp, req_packets);
	if (dpr_psn_lt(psn, qp->req.psn_hi))
		QP_STAT(qp, retransmits);
	if (dpr_psn_ge(last, qp->req.psn_hi)) {
		qp->req.psn_hi = dpr_psn_add(last, 1);
		/* (a READ's first response ends its sample: the round trip,
		 * not the whole transfer) */
		rtt_sample_start(qp, psn);
	}
	timers_start(tp, qp);
}

/*
 * The packet of @p w at byte @p off of its message (a READ: the request
 * for what is left from there; an atomic: the whole), its headers into
 * @p h and payload into @p segs. *@p paylen, *@p last: its payload and
 * whether it ends the message. @return 0, or -EACCES with the QP in error
 * (a key deregistered since the WQE started).
 */
static int
build_packet(struct dpr_tqp *qp, struct dpr_send_wqe *w, uint32_t off,
	     struct dpr_wire_hdrs *h, struct dpr_wire_seg *segs,
	     unsigned int *nseg, uint32_t *paylen, bool *last)
{
	bool first = true;

	*nseg = 0;
	*paylen = 0;
	*last = true;
	h->pkey = DPR_DEFAULT_PKEY;
	h->dqpn = qp->attr.dest_qp_num;
	/* a packet's PSN follows from its place in the WQE */
	h->psn = dpr_psn_add(w->first_psn, wr_is_atomic(w->opcode) ? 0 :
			     (int32_t)(off >> qp->pmtu_shift));
	if (w->opcode == DPR_WR_RDMA_READ) {
		/* one request for what is left: the responder answers it with
		 * npkts(left) PSNs, the span start_wqe() reserved */
		h->reth.va = w->remote_addr + off;
		h->reth.rkey = w->rkey;
		h->reth.len = w->length - off;
		h->ackreq = true;
	} else if (wr_is_atomic(w->opcode)) {
		h->atomic.va = w->remote_addr;
		h->atomic.rkey = w->rkey;
		if (w->opcode == DPR_WR_ATOMIC_CMP_AND_SWP) {
			h->atomic.compare = w->compare_add;
			h->atomic.swap_add = w->swap;
		} else {
			h->atomic.swap_add = w->compare_add;
		}
		h->ackreq = true;
	} else {
		*paylen = RTE_MIN(qp->pmtu, w->length - off);
		first = off == 0;
		*last = off + *paylen >= w->length;
		if (first && (w->opcode == DPR_WR_RDMA_WRITE ||
			      w->opcode == DPR_WR_RDMA_WRITE_WITH_IMM)) {
			h->reth.va = w->remote_addr;
			h->reth.rkey = w->rkey;
			h->reth.len = w->length;
		}
		h->imm = w->imm;
		h->ieth_rkey = w->rkey;         /* (SEND WITH INVALIDATE) */
		h->se = *last && (w->flags & DPR_SEND_SOLICITED);
		if (*paylen != 0 && (w->flags & DPR_SEND_INLINE)) {
			segs[0].addr = w->inline_data + off;
			segs[0].iova = (rte_iova_t)(uintptr_t)segs[0].addr;
			segs[0].len = *paylen;
			segs[0].shinfo = NULL;
			*nseg = 1;
		} else if (*paylen != 0 && cached_seg(qp, w, off, *paylen, segs)) {
			*nseg = 1;
		} else if (*paylen != 0 &&
			   dpr_sge_gather(qp, w->sge, w->num_sge, off, *paylen,
					  segs, MAX_SEGS_PER_PKT, nseg) != 0) {
			/* a key deregistered since the WQE started */
			dpr_qp_complete_send(qp, w, DPR_WC_LOC_PROT_ERR);
			qp->comp.index++;
			dpr_qp_error(qp, "an MR of a WQE in flight was deregistered "
				     "(LOC_PROT_ERR)");
			return -EACCES;
		}
	}
	h->opcode = req_opcode(w, first, *last);
	if (qp->type == DPR_QPT_UC) {
		/* UC's SEND and WRITE opcodes are RC's in the UC class */
		h->opcode |= 0x20;
		h->ackreq = false;
	}
	return 0;
}

/* One packet of @p w. @return 0, or -ENOBUFS/-ENOMEM to try later. */
static int
send_packet(struct dpr_tqp *qp, struct dpr_send_wqe *w)
{
	struct dpr_transport *tp = qp->tp;
	struct dpr_wire_seg segs[MAX_SEGS_PER_PKT];
	struct dpr_wire_hdrs h = { 0 };
	unsigned int nseg;
	uint32_t paylen;
	bool last;
	int rc;

	if (txq_room(tp) == 0)
		return -ENOBUFS;
	rc = build_packet(qp, w, w->offset, &h, segs, &nseg, &paylen, &last);
	if (rc != 0)
		return rc;
	if (w->opcode != DPR_WR_RDMA_READ && !wr_is_atomic(w->opcode) &&
	    qp->type != DPR_QPT_UC) {
		/* AckReq on the last packet, and every ack_every packets of a
		 * long message so that the window keeps moving (rxe: 64) */
		h.ackreq = last || ++qp->req.noack_pkts >= qp->req.ack_every;
		if (h.ackreq)
			qp->req.noack_pkts = 0;
	}
	rc = dpr_xmit(tp, qp, &h, segs, nseg);
	if (rc != 0)
		return rc;
	req_img_refresh(qp);
	count_send(qp, h.psn, w->opcode == DPR_WR_RDMA_READ ? w->last_psn : h.psn);
	if (w->opcode == DPR_WR_RDMA_READ || wr_is_atomic(w->opcode))
		w->offset = w->length;
	else
		w->offset += paylen;
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

/*
 * The packet that carries @p psn again, once, with AckReq, whatever the
 * requester's position: a probe (dpr_comp_rto()) or a selective
 * retransmission. A READ's is the request for what has not arrived; an
 * atomic's, the atomic (the responder replays its result).
 * @return 0, -ENOENT (no started WQE holds @p psn), or what dpr_xmit()
 * and build_packet() say.
 */
int
dpr_req_resend(struct dpr_tqp *qp, uint32_t psn)
{
	uint32_t i;

	for (i = qp->comp.index; i != qp->sq.prod; i++) {
		struct dpr_send_wqe *w = sq_wqe(qp, i);

		if (!w->started)
			break;
		if (w->state == WQE_DONE || dpr_psn_gt(psn, w->last_psn))
			continue;
		if (dpr_psn_lt(psn, w->first_psn))
			break;
		return dpr_req_resend_wqe(qp, w, psn);
	}
	return -ENOENT;
}

int
dpr_req_resend_wqe(struct dpr_tqp *qp, struct dpr_send_wqe *w, uint32_t psn)
{
	struct dpr_wire_seg segs[MAX_SEGS_PER_PKT];
	struct dpr_wire_hdrs h = { 0 };
	unsigned int nseg;
	uint32_t paylen, off;
	bool last;
	int rc;

	if (w->opcode == DPR_WR_RDMA_READ)
		off = w->read_done;
	else if (wr_is_atomic(w->opcode))
		off = 0;
	else
		off = (uint32_t)dpr_psn_diff(psn, w->first_psn) << qp->pmtu_shift;
	if (txq_room(qp->tp) == 0)
		return -ENOBUFS;
	rc = build_packet(qp, w, off, &h, segs, &nseg, &paylen, &last);
	if (rc != 0)
		return rc;
	h.ackreq = true;
	rc = dpr_xmit(qp->tp, qp, &h, segs, nseg);
	if (rc != 0)
		return rc;
	req_img_refresh(qp);
	count_send(qp, h.psn, w->opcode == DPR_WR_RDMA_READ ? w->last_psn : h.psn);
	return 0;
}

int
dpr_req_read_range(struct dpr_tqp *qp, struct dpr_send_wqe *w, uint32_t psn,
		   uint32_t npkts)
{
	const uint32_t off = (uint32_t)dpr_psn_diff(psn, w->first_psn) << qp->pmtu_shift;
	struct dpr_wire_hdrs h = {
		.opcode = DPR_OP_RC_READ_REQUEST,
		.pkey = DPR_DEFAULT_PKEY,
		.dqpn = qp->attr.dest_qp_num,
		.psn = psn,
		.ackreq = true,
		.reth = {
			.va = w->remote_addr + off,
			.rkey = w->rkey,
			.len = (uint32_t)RTE_MIN((uint64_t)npkts << qp->pmtu_shift,
						 (uint64_t)(w->length - off)),
		},
	};
	int rc;

	if (txq_room(qp->tp) == 0)
		return -ENOBUFS;
	rc = dpr_xmit(qp->tp, qp, &h, NULL, 0);
	if (rc != 0)
		return rc;
	req_img_refresh(qp);
	count_send(qp, psn, dpr_psn_add(psn, (int32_t)npkts - 1));
	return 0;
}

/* BTH and extension header bytes of SEND and WRITE packets, by opcode */
static const uint8_t req_hdr_len[DPR_OP_RC_WRITE_ONLY_IMM + 1] = {
	[DPR_OP_RC_SEND_FIRST] = 12, [DPR_OP_RC_SEND_MIDDLE] = 12,
	[DPR_OP_RC_SEND_LAST] = 12, [DPR_OP_RC_SEND_LAST_IMM] = 16,
	[DPR_OP_RC_SEND_ONLY] = 12, [DPR_OP_RC_SEND_ONLY_IMM] = 16,
	[DPR_OP_RC_WRITE_FIRST] = 28, [DPR_OP_RC_WRITE_MIDDLE] = 12,
	[DPR_OP_RC_WRITE_LAST] = 12, [DPR_OP_RC_WRITE_LAST_IMM] = 16,
	[DPR_OP_RC_WRITE_ONLY] = 28, [DPR_OP_RC_WRITE_ONLY_IMM] = 32,
};

/*
 * One request frame of the send fast path into @p m: the connection's
 * headers (qp->req_img) patched, the RETH of a first WRITE packet, the
 * immediate, @p paylen bytes of payload from @p src and the pad; the
 * ICRC is the caller's (its 4 bytes are zeroed). A frame of at least
 * @p copy_min bytes of payload (dpr_icrc_copy_min: the whole packet is
 * longer) is left without its payload and pad, and @p fill says what to
 * copy there (tp->txq_fill[@p slot]): the ICRC's pass copies it.
 * @return whether it was left so.
 */
static __rte_always_inline bool
req_fast_frame(struct rte_mbuf *m, const struct dpr_tqp *qp,
	       const struct dpr_send_wqe *w, uint16_t ip_id, uint8_t op,
	       bool first, bool se, bool ackreq, uint32_t psn,
	       const uint8_t *src, uint32_t paylen, uint32_t copy_min,
	       struct dpr_transport *tp, uint32_t slot)
{
	const uint32_t hl = req_hdr_len[op];
	uint8_t *const frame = rte_pktmbuf_mtod(m, uint8_t *);
	uint8_t *p = frame;
	const uint32_t len = dpr_wire_req_hdrs(p, &qp->req_img, ip_id, op, hl, se,
					       ackreq, psn, paylen);

	p += DPR_F_BTH + 12;
	if (first && w->opcode <= DPR_WR_RDMA_WRITE_WITH_IMM) {
		const struct dpr_reth reth = {
			.va = rte_cpu_to_be_64(w->remote_addr),
			.rkey = rte_cpu_to_be_32(w->rkey),
			.len = rte_cpu_to_be_32(w->length),
		};

		memcpy(p, &reth, sizeof(reth));
		p += sizeof(reth);
	}
	if (hl == 16 || hl == 32) {     /* an immediate */
		memcpy(p, &w->imm, 4);
		p += 4;
	}
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	if (unlikely(paylen >= copy_min)) {
		struct dpr_tx_fill *fill = &tp->txq_fill[slot & tp->txq_mask];

		fill->src = src;
		fill->poff = (uint16_t)(p - frame - DPR_F_L3);
		fill->n = (uint16_t)paylen;
		return true;
	}
	if (paylen != 0)
		payload_copy(p, src, paylen);
	memset(p + paylen, 0, 4);       /* the pad, and past it */
	return false;
}

/*
 * The send fast path: SEND and WRITE (with or without immediate) WQEs of
 * an RC QP whose payload is copied -- inline, or from the one SGE whose MR
 * was found when the WQE started -- into untagged IPv4 frames of one
 * segment each: the connection's request headers (qp->req_img) patched,
 * the RETH and immediate, the payload, the ICRC in one pass over the
 * frame. As many packets in a row as @p budget and the TX queue allow,
 * WQE after WQE, until one is not of that kind (or the window is full):
 * the general loop in dpr_req_run() takes it from there. The frames, the
 * counters and the state are start_wqe()'s and send_packet()'s for the
 * same packets (the oracle test compares them). A WQE of one packet
 * (every message up to the path MTU) is started and sent in one step,
 * its checks made once; longer ones go packet by packet. @return the
 * budget left.
 */
static uint32_t
req_fast(struct dpr_tqp *qp, uint32_t budget)
{
	struct dpr_transport *tp = qp->tp;
	const uint32_t max_unacked = qp->req.window;
	const uint32_t ack_every = qp->req.ack_every;
	const uint32_t pmtu = qp->pmtu, shift = qp->pmtu_shift;
	const uint32_t zc_min = tp->conf.zero_copy_min ? tp->conf.zero_copy_min :
		UINT32_MAX;
	const uint32_t comp_psn = req_window_base(qp), prod = qp->sq.prod;
	const bool rts = qp->state == DPR_QPS_RTS;
	/* the most payload a frame of the mbuf's room carries with the
	 * longest headers (RETH and immediate; the headers are written 64
	 * bytes at a time): past it, the general way */
	const bool seal = qp->sec != NULL;
	const uint32_t room = tp->tx_room - (DPR_F_BTH + 32 + 3 + DPR_ICRC_LEN) -
		(seal ? DPR_SEC_OVERHEAD : 0);
	/* at most that of a message's bytes are copied here, the rest is
	 * attached by the general way (zero_copy_min) */
	const uint32_t one_max = RTE_MIN(pmtu < room ? pmtu : room, zc_min - 1);
	/* what the run changes, kept here and written back at its end
	 * (stores through the WQE and the frames would otherwise make the
	 * compiler load them again every packet) */
	uint32_t idx = qp->req.index, req_psn = qp->req.psn;
	uint32_t psn_hi = qp->req.psn_hi, noack = qp->req.noack_pkts;
	const uint32_t psn_hi0 = psn_hi;
	uint32_t head = tp->txq_head, sent, retx = 0;
	uint16_t ip_id = qp->encap.ip_id;
	uint64_t copied = 0;
	/* (sent: head - head0; the run ends at head_end) */
	const uint32_t head0 = head, head_end = head + RTE_MIN(budget, txq_room(tp));
	/* PSNs outstanding once a new WQE's are given out, kept as they are
	 * (dpr_psn_diff(req_psn, comp_psn), not computed again per WQE);
	 * out of RTS none is started: as if the window were full */
	uint32_t win = rts ? (uint32_t)dpr_psn_diff(req_psn, comp_psn) : UINT32_MAX;
	/* (a frame to seal has its payload now: sealing reads it) */
	const uint32_t copy_min = seal ? UINT32_MAX : dpr_icrc_copy_min;
	const uint64_t gen = __atomic_load_n(tp->mr_gen, __ATOMIC_ACQUIRE);
	uint32_t fused = 0;             /* frames whose payload is to copy */

	if (unlikely(tp->tx_room < RTE_MAX(64u, DPR_F_BTH + 32 + 3 + DPR_ICRC_LEN)))
		return budget;          /* (mbufs too small for any frame here) */
	while (idx != prod && head != head_end) {
		struct dpr_send_wqe *w = sq_wqe(qp, idx);
		const uint32_t opc = w->opcode, flags = w->flags;
		uint32_t paylen, psn, off;
		const uint8_t *src = NULL;
		bool first, last, ackreq;
		struct rte_mbuf *m;

		if (opc > DPR_WR_SEND_WITH_IMM)
			break;
		if (w->state == WQE_POSTED) {
			/* start_wqe() for it (no READ or atomic: no limit, a
			 * fence waits only for those) */
			if (win >= max_unacked ||
			    ((flags & DPR_SEND_FENCE) && qp->req.rd_atomic > 0) ||
			    !fast_sges_ok(qp, w, gen, &src))
				break;
			paylen = w->length;
			if (likely(paylen <= one_max)) {
				/* one packet: started and sent here, or left
				 * as it was posted for the general way */
				if (paylen != 0 && src == NULL)
					break;
				m = stash_get(tp);
				if (m == NULL)
					break;  /* the general way counts it */
				psn = req_psn;
				req_psn = dpr_psn_add(psn, 1);
				win++;
				w->first_psn = psn;
				w->last_psn = psn;
				w->offset = paylen;
				w->read_done = 0;
				w->started = true;
				w->state = WQE_PENDING;
				idx++;
				noack = 0;
				fused += req_fast_frame(m, qp, w, ip_id++,
						send_write_op[opc][1][1], true,
						flags & DPR_SEND_SOLICITED, true, psn,
						src, paylen, copy_min, tp, head);
				/* count_send() for a new PSN: past every one
				 * sent (req_psn is, psn_hi never beyond it) */
				psn_hi = req_psn;
				goto queued_new;
			}
			w->first_psn = req_psn;
			w->last_psn = dpr_psn_add(req_psn, (int32_t)((paylen - 1) >> shift));
			req_psn = dpr_psn_add(w->last_psn, 1);
			win += ((paylen - 1) >> shift) + 1;
			w->offset = 0;
			w->read_done = 0;
			w->state = WQE_PROCESSING;
			w->started = true;
		} else if (w->state != WQE_PROCESSING) {
			break;
		}
		off = w->offset;
		psn = dpr_psn_add(w->first_psn, (int32_t)(off >> shift));
		if ((uint32_t)dpr_psn_diff(psn, comp_psn) >= max_unacked)
			break;
		paylen = RTE_MIN(pmtu, w->length - off);
		if (paylen > room)
			break;
		if (paylen != 0) {
			if (flags & DPR_SEND_INLINE) {
				src = w->inline_data + off;
			} else {
				/* copied, not attached; its MR still the one
				 * found */
				if (paylen >= zc_min || w->mr == NULL || gen != w->mr_gen)
					break;
				src = dpr_mr_ptr(w->mr, w->sge[0].addr + off);
			}
		}
		m = stash_get(tp);
		if (m == NULL)
			break;          /* the general way counts it */
		first = off == 0;
		last = off + paylen >= w->length;
		/* AckReq as send_packet() sets it */
		ackreq = last || noack + 1 >= ack_every;
		noack = ackreq ? 0 : noack + 1;
		fused += req_fast_frame(m, qp, w, ip_id++,
				send_write_op[opc][first][last], first,
				last && (flags & DPR_SEND_SOLICITED), ackreq, psn,
				src, paylen, copy_min, tp, head);
		w->offset = off + paylen;
		if (last) {
			w->state = WQE_PENDING;
			idx++;
		}
		/* count_send() */
		if (dpr_psn_lt(psn, psn_hi))
			retx++;
		else
			psn_hi = dpr_psn_add(psn, 1);
queued_new:
		tp->txq[head++ & tp->txq_mask] = m;
		if (!(flags & DPR_SEND_INLINE))
			copied += paylen;
	}
	/* (a WQE may have started, and stopped before its first packet) */
	qp->req.psn = req_psn;
	sent = head - head0;
	if (sent == 0)
		return budget;
	/* The ICRCs, once every frame of the run is built: by now the
	 * stores that built a frame have reached the cache (a CRC load that
	 * spans two pending stores waits for them), and one frame's multiply
	 * chain runs beside the next one's. A long frame's payload is copied
	 * in here, by the same pass (one pass over its bytes, not two); its
	 * txq_fill slot is cleared again (a slot's src is NULL between runs,
	 * so a run of short frames never writes one). Two loops, not one
	 * that tests the slot (or a count of them) per frame: that one
	 * measured 785/756/5650 instructions per message against 780/752/
	 * 5634 (write64, send64, write4k requester; callgrind). */
	if (unlikely(seal)) {
		/* a secure QP's: sealed (the sealed frame's ICRC made there,
		 * in place where the mbuf has room); one that cannot be is
		 * gone as on a lossy path (counted; its QP to ERR unless
		 * the pool was empty) */
		uint32_t kept = 0;

		for (uint32_t i = 0; i < sent; i++) {
			struct rte_mbuf *s = dpr_secqp_seal(qp,
				tp->txq[(head0 + i) & tp->txq_mask]);

			if (s != NULL)
				tp->txq[(head0 + kept++) & tp->txq_mask] = s;
		}
		head = head0 + kept;
	} else if (likely(fused == 0)) {
		for (uint32_t i = 0; i < sent; i++) {
			struct rte_mbuf *m = tp->txq[(head - sent + i) & tp->txq_mask];
			uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
			const uint32_t len = m->data_len;
			const uint32_t icrc = rte_cpu_to_le_32(dpr_icrc_ipv4(p + DPR_F_L3,
						len - DPR_F_L3 - DPR_ICRC_LEN));

			memcpy(p + len - DPR_ICRC_LEN, &icrc, DPR_ICRC_LEN);
		}
	} else {
		for (uint32_t i = 0; i < sent; i++) {
			const uint32_t slot = (head - sent + i) & tp->txq_mask;
			struct rte_mbuf *m = tp->txq[slot];
			struct dpr_tx_fill *f = &tp->txq_fill[slot];
			uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
			const uint32_t len = m->data_len;
			uint32_t icrc;

			if (f->src == NULL) {
				icrc = dpr_icrc_ipv4(p + DPR_F_L3,
						     len - DPR_F_L3 - DPR_ICRC_LEN);
			} else {
				icrc = dpr_icrc_ipv4_copy(p + DPR_F_L3,
						len - DPR_F_L3 - DPR_ICRC_LEN,
						f->poff, f->src, f->n);
				f->src = NULL;
			}
			icrc = rte_cpu_to_le_32(icrc);
			memcpy(p + len - DPR_ICRC_LEN, &icrc, DPR_ICRC_LEN);
		}
	}
	qp->req.index = idx;
	qp->req.psn_hi = psn_hi;
	qp->req.noack_pkts = noack;
	qp->encap.ip_id = ip_id;
	tp->txq_head = head;
	tp->stats.tx_frames += sent;
	tp->stats.tx_fast += sent;
	tp->stats.tx_payload_copied += copied;
	qp->stats.req_packets += sent;
	tp->stats.req_packets += sent;
	qp->stats.retransmits += retx;
	tp->stats.retransmits += retx;
	/* (the run's first new request is timed, when none is: the one
	 * count_send() would time) */
	if (qp->comp.rtt_sent == 0 && retx < sent)
		rtt_sample_start(qp, psn_hi0);
	if ((qp->comp.ack_deadline | qp->comp.rto_deadline) == 0)
		timers_start(tp, qp);
	return budget - sent;
}

/*
 * A bind or a local invalidation (@p w, the requester's next WQE): no
 * packet, no PSN. It waits for every WQE before it to complete -- more
 * than IBA 10.8.3.3 asks (only a fence waits), less to go wrong: it then
 * takes effect and completes in order at once, and no replay or
 * selective resend ever meets it. As rxe: a window that cannot be bound
 * completes in MW_BIND_ERR, a key that cannot be invalidated in
 * LOC_QP_OP_ERR, and the QP goes to error. @return false if it must wait
 * (or failed).
 */
static bool
local_op(struct dpr_tqp *qp, struct dpr_send_wqe *w)
{
	struct dpr_verbs_ctx *ctx = qp->tp->ctx;
	const bool bind = w->opcode == DPR_WR_BIND_MW;
	int rc;

	if (qp->comp.index != qp->req.index || qp->state == DPR_QPS_SQD)
		return false;
	rc = bind ? dpr_mw_bind(ctx, qp->pd, qp->qpn, &w->bind) :
		dpr_mw_invalidate(ctx, w->rkey, qp->pd, qp->qpn, false);
	QP_STAT(qp, mw_ops);
	dpr_qp_complete_send(qp, w, rc == 0 ? DPR_WC_SUCCESS :
			     bind ? DPR_WC_MW_BIND_ERR : DPR_WC_LOC_QP_OP_ERR);
	qp->comp.index++;
	qp->req.index++;
	if (rc != 0) {
		dpr_qp_error(qp, bind ? "a memory window bind was refused "
			     "(MW_BIND_ERR: window, MR, PD, access or range)" :
			     "a local invalidation was refused (LOC_QP_OP_ERR: "
			     "not a bound type 2 window of the QP's PD)");
		return false;
	}
	return true;
}

bool
dpr_req_run(struct dpr_tqp *qp, uint32_t budget)
{
	/* a QP a CNP has slowed down goes through its pacer (dpr_cc.c) */
	if (unlikely(qp->cc.limited))
		return dpr_cc_req_run(qp, budget);
	return dpr_req_run_unpaced(qp, budget);
}

bool
dpr_req_run_unpaced(struct dpr_tqp *qp, uint32_t budget)
{
	struct dpr_transport *tp = qp->tp;
	uint32_t base;

	if (qp->type == DPR_QPT_UD)
		return dpr_ud_req_run(qp, budget);
	if ((qp->state != DPR_QPS_RTS && qp->state != DPR_QPS_SQD) ||
	    qp->comp.rnr_wait || unlikely(secqp_blocked(qp)))
		return false;
	if (unlikely(!qp->mac_resolved) && !dpr_qp_path_resolve(qp)) {
		/* Nothing leaves before the peer's MAC is known: the QP waits
		 * on the transport's path list (dpr_transport_path_update()
		 * puts it back to work). Its ACK timer runs as if the first
		 * packet had gone, so a peer that never answers ARP/ND ends
		 * in RETRY_EXC_ERR as a lost path does (dpr_comp_timeout()). */
		if (qp->req.index != qp->sq.prod && qp->comp.ack_deadline == 0 &&
		    !qp->comp.rnr_wait && qp->attr.timeout != 0) {
			ack_timer_set(tp, qp, tp->now + ack_timeout_ns(qp->attr.timeout));
			qp->comp.attempt_start = tp->now;
		}
		return false;
	}
	/* the usual packets first, the rest (and what stopped them) here */
	if (likely((qp->tmpl_fresh | qp->sec_fast) && qp->type == DPR_QPT_RC &&
		   !tp->conf.slow_only))
		budget = req_fast(qp, budget);
	base = req_window_base(qp);
	while (qp->req.index != qp->sq.prod) {
		struct dpr_send_wqe *w = sq_wqe(qp, qp->req.index);

		if (w->state == WQE_DONE || w->state == WQE_PENDING) {
			qp->req.index++;
			continue;
		}
		if (unlikely(wr_is_local(w->opcode)) && w->state == WQE_POSTED) {
			if (!local_op(qp, w))
				return false;
			continue;
		}
		if (w->state == WQE_POSTED) {
			uint32_t out = (uint32_t)dpr_psn_diff(qp->req.psn, base);

			/* a READ's responses are placed by PSN within the
			 * window: all of its span fits, or
			 * it waits (unless it is all there is) */
			if (w->opcode == DPR_WR_RDMA_READ && read_placed(qp) && out != 0 &&
			    w->length != 0)
				out += (w->length - 1) >> qp->pmtu_shift;
			/* SQD: what has started finishes, nothing new starts;
			 * the window: at most req.window PSNs outstanding */
			if (qp->state == DPR_QPS_SQD || out >= qp->req.window ||
			    !start_wqe(qp, w))
				return false;
		}
		if (!wr_is_rd_atomic(w->opcode) &&
		    (uint32_t)dpr_psn_diff(dpr_psn_add(w->first_psn,
				(int32_t)(w->offset >> qp->pmtu_shift)), base) >=
		    qp->req.window)
			return false;
		if (budget == 0 || txq_room(tp) == 0)
			return true;
		if (send_packet(qp, w) != 0)
			return qp->state == DPR_QPS_RTS || qp->state == DPR_QPS_SQD;
		budget--;
	}
	return false;
}

void
dpr_req_window_set(struct dpr_tqp *qp, uint32_t w)
{
	w = RTE_MAX(w, 1u);
	qp->req.window = w;
	/* AckReq four times a window at least (rxe's every 64 where the
	 * window is larger) */
	qp->req.ack_every = qp->tp->conf.ack_every < w / 4 ? qp->tp->conf.ack_every :
		w / 4 != 0 ? w / 4 : 1;
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
