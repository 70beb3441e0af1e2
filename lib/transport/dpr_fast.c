/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The receive fast path: the usual frame of an RC connection, matched
 * against its QP's header template (dpr_wire_rx_tmpl_match: our MAC and
 * address, the peer's, UDP 4791, P_Key, QP number, in four vector
 * compares) and handled start to end in one pass. RDMA WRITE without
 * immediate, in order, is written to memory here, every packet of it,
 * and so is SEND into a receive WQE of one SGE (with its completion);
 * other frames of that shape are parsed in one pass (dpr_wire_parse_fast)
 * and given to the general stages. Whatever is not exactly the usual case
 * -- another shape, a PSN out of order, a NAK pending, an error to answer,
 * a QP not yet established -- is declined before anything changes, and the
 * general code (dpr_wire_parse, dpr_resp_rx, dpr_comp_rx) decides. That
 * code stays the reference: tests/unit/rc_oracle.sh runs the same traffic
 * through both (tp->conf.slow_only) and compares every frame sent, every
 * completion and every counter.
 */

#include <string.h>

#include <rte_ip.h>
#include <rte_udp.h>

#include "dpr_sec.h"
#include "transport_private.h"

/* Byte reads of the fields rather than lib/wire's dpr_bth_*() and
 * dpr_reth_*() accessors on the packed structs: with them the responder
 * spends 19 more instructions per 64 B WRITE (callgrind, 697 -> 716). */
static inline uint32_t
be16_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

/* The 24 bits that end at @p p + 3 (a PSN, a QP number): one load. */
static inline uint32_t
be24_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p - 1, sizeof(v));
	return rte_be_to_cpu_32(v) & 0xffffff;
}

/*
 * A request packet of @p hdr_len bytes of BTH and extension headers: its
 * IPv4 and UDP lengths as dpr_wire_parse() checks them. @return the bytes
 * between the headers and the ICRC (payload and pad), or UINT32_MAX.
 */
static __rte_always_inline uint32_t
request_body(const struct rte_mbuf *m, const uint8_t *p, uint32_t hdr_len)
{
	const uint32_t ip_len = be16_at(p + DPR_F_L3 + 2);
	const uint32_t udp_len = be16_at(p + DPR_F_L4 + 4);

	if (DPR_F_L3 + ip_len > m->data_len ||
	    udp_len + sizeof(struct rte_ipv4_hdr) != ip_len ||
	    udp_len < sizeof(struct rte_udp_hdr) + hdr_len + DPR_ICRC_LEN)
		return UINT32_MAX;
	return udp_len - (uint32_t)sizeof(struct rte_udp_hdr) - hdr_len - DPR_ICRC_LEN;
}

/*
 * A request packet of @p hdr_len bytes of BTH and extension headers:
 * its shape (request_body()), and the responder's usual case
 * (IBA 9.7.5.1: the expected PSN; 9.8.3: the next packet of the message;
 * C9-91, C9-92: the lengths). @return its payload length, or UINT32_MAX
 * when anything would go another way (a pad longer than the body wraps
 * the length past the MTU).
 */
static __rte_always_inline uint32_t
usual_request(const struct dpr_tqp *qp, const struct rte_mbuf *m, const uint8_t *p,
	      uint32_t hdr_len, uint32_t mask)
{
	const uint32_t body = request_body(m, p, hdr_len);
	const uint8_t state = qp->state;
	uint32_t paylen;

	if (body == UINT32_MAX)
		return UINT32_MAX;
	paylen = body - ((p[DPR_F_BTH + 1] >> 4) & 3);
	if (unlikely(be24_at(p + DPR_F_BTH + 9) != qp->resp.psn || paylen > qp->pmtu ||
		     (state != DPR_QPS_RTS && state != DPR_QPS_RTR &&
		      state != DPR_QPS_SQD) ||
		     !qp->comm_established || qp->resp.sent_psn_nak ||
		     qp->resp.nak_pending ||
		     (!(mask & DPR_END_MASK) && paylen != qp->pmtu)))
		return UINT32_MAX;
	return paylen;
}

/* What done_request() leaves behind for a usual request packet taken
 * (its PSN the expected one): the next PSN, the message counted at its
 * end or else going on as @p kind, an ACK owed when it asks for one (no
 * NAK is pending: usual_request() checked). */
static __rte_always_inline void
usual_done(struct dpr_tqp *qp, const uint8_t *p, uint32_t mask, uint32_t kind)
{
	qp->resp.psn = dpr_psn_add(qp->resp.psn, 1);
	if (mask & DPR_END_MASK) {
		qp->resp.msn = (qp->resp.msn + 1) & DPR_PSN_MASK;
		qp->resp.in_msg = 0;
	} else {
		qp->resp.in_msg = kind;
	}
	if (p[DPR_F_BTH + 8] & 0x80) {          /* AckReq */
		qp->resp.ack_pending = true;
		qp_work(qp);
	}
}

/*
 * An RDMA WRITE packet (FIRST, MIDDLE, LAST or ONLY, no immediate) that
 * the responder expects: what dpr_resp_rx(), rx_write() and
 * done_request() do for it, in one pass, or nothing (false) when anything
 * would go another way there.
 */
static __rte_always_inline bool
fast_write(struct dpr_tqp *qp, struct rte_mbuf *m, uint8_t *p, uint32_t mask,
	   uint64_t gen, const bool opened)
{
	const uint32_t hdr_len = (mask & DPR_START_MASK) ? 28 : 12;
	const uint32_t ip_len = be16_at(p + DPR_F_L3 + 2);
	const uint8_t *reth = p + DPR_F_BTH + sizeof(struct dpr_bth);
	uint32_t paylen, rkey, left, len = 0;
	struct dpr_mr *mr = NULL;
	uint64_t va;

	paylen = usual_request(qp, m, p, hdr_len, mask);
	if (paylen == UINT32_MAX ||
	    !(qp->attr.qp_access_flags & DPR_ACCESS_REMOTE_WRITE))
		return false;
	if (mask & DPR_START_MASK) {
		if (qp->resp.in_msg != 0)
			return false;
		va = rte_be_to_cpu_64(((const struct dpr_reth *)reth)->va);
		rkey = rte_be_to_cpu_32(((const struct dpr_reth *)reth)->rkey);
		len = rte_be_to_cpu_32(((const struct dpr_reth *)reth)->len);
		left = len;
		/* the key with the whole DMA length, at the first packet */
		if (len != 0 && (mr = resp_remote_mr(qp, gen, rkey, va, len)) == NULL)
			return false;
	} else {
		if (qp->resp.in_msg != DPR_WRITE_MASK)
			return false;
		va = qp->resp.write_va;
		rkey = qp->resp.write_rkey;
		left = qp->resp.write_left;
	}
	if (paylen > left || ((mask & DPR_END_MASK) && paylen != left))
		return false;
	if (paylen != 0 && mr == NULL &&
	    (mr = resp_remote_mr(qp, gen, rkey, va, paylen)) == NULL)
		return false;
	/* the frame is sound: its header checksum, then its ICRC (an
	 * opened frame's tag vouched for it, its header made again) */
	if (!opened && !dpr_wire_ipv4_sound(p + DPR_F_L3, ip_len, m->ol_flags))
		return false;

	/* what rx_write() and done_request() leave behind */
	if (paylen != 0)
		payload_copy(dpr_mr_ptr(mr, va), p + DPR_F_BTH + hdr_len, paylen);
	if (mask & DPR_START_MASK) {
		qp->resp.write_rkey = rkey;
		qp->resp.write_len = len;
	}
	qp->resp.write_va = va + paylen;
	qp->resp.write_left = left - paylen;
	usual_done(qp, p, mask, DPR_WRITE_MASK);
	return true;
}

/*
 * A SEND packet (FIRST, MIDDLE, LAST or ONLY, with or without immediate)
 * that the responder expects, into a receive WQE of the QP's own queue
 * with one SGE (or none, for an empty message): what dpr_resp_rx(),
 * rx_send(), complete_recv() and done_request() do for it, in one pass,
 * or nothing (false) when anything would go another way there (an SRQ, no
 * receive WQE: the RNR NAK, a message longer than the WQE, a bad key).
 */
static __rte_always_inline bool
fast_send(struct dpr_tqp *qp, struct rte_mbuf *m, uint8_t *p, uint32_t mask,
	  uint64_t gen, const bool opened)
{
	const uint32_t hdr_len = (mask & DPR_IMMDT_MASK) ? 16 : 12;
	const uint32_t ip_len = be16_at(p + DPR_F_L3 + 2);
	const struct dpr_recv_wqe *r;
	uint32_t paylen, off;
	struct dpr_mr *mr = NULL;
	uint32_t imm = 0;

	paylen = usual_request(qp, m, p, hdr_len, mask);
	if (paylen == UINT32_MAX || qp->srq != NULL)
		return false;
	if (mask & DPR_START_MASK) {
		if (qp->resp.in_msg != 0 || !rq_has_wqe(qp))
			return false;
		off = 0;
	} else {
		if (qp->resp.in_msg != DPR_SEND_MASK || !qp->resp.have_wqe)
			return false;
		off = qp->resp.recv_off;
	}
	r = rq_cur(qp);         /* (the QP's own queue: rq_take() is nothing) */
	if (paylen != 0) {
		/* dpr_sge_scatter() of one SGE; the key through the cache */
		if (r->num_sge != 1 || off + paylen > r->sge[0].length ||
		    (mr = dpr_mr_check_cached(qp->tp->ctx, &qp->resp.lkey, gen,
				r->sge[0].lkey, qp->pd, 0, r->sge[0].addr + off, paylen,
				DPR_ACCESS_LOCAL_WRITE)) == NULL)
			return false;
	}
	if (!opened && !dpr_wire_ipv4_sound(p + DPR_F_L3, ip_len, m->ol_flags))
		return false;

	if (mask & DPR_START_MASK)
		qp->resp.have_wqe = true;
	if (paylen != 0)
		payload_copy(dpr_mr_ptr(mr, r->sge[0].addr + off),
			     p + DPR_F_BTH + hdr_len, paylen);
	qp->resp.recv_off = off + paylen;
	if (mask & DPR_END_MASK) {
		if (mask & DPR_IMMDT_MASK)
			memcpy(&imm, p + DPR_F_BTH + 12, sizeof(imm));
		resp_complete_recv(qp, DPR_WC_SUCCESS, DPR_WC_RECV, off + paylen,
				   mask & DPR_IMMDT_MASK ? DPR_WC_WITH_IMM : 0, imm);
	}
	usual_done(qp, p, mask, DPR_SEND_MASK);
	return true;
}

/* Any other frame of the usual shape: parsed in one pass, then the
 * general stages. */
static bool
fast_general(struct dpr_tqp *qp, struct rte_mbuf *m)
{
	struct dpr_pkt_info pi;
	struct dpr_wire_hdrs h;

	if (!dpr_wire_parse_fast(m, &qp->rxt, 4096, &pi, &h) ||
	    !(pi.mask & DPR_RC_MASK) ||      /* UC, UD: rx_one's checks */
	    !((pi.mask & DPR_REQ_MASK) ?
	      qp->state == DPR_QPS_RTR || qp->state == DPR_QPS_RTS ||
	      qp->state == DPR_QPS_SQD :
	      qp->state == DPR_QPS_RTS || qp->state == DPR_QPS_SQD))
		return false;
	if (pi.mask & DPR_REQ_MASK)
		dpr_resp_rx(qp, m, &pi, &h);
	else
		dpr_comp_rx(qp, m, &pi, &h);
	return true;
}

/*
 * A WRITE or SEND packet past a gap that its QP's peer repairs with
 * selective repeat: a WRITE's FIRST or MIDDLE written to memory at once
 * where it can be (dpr_sr_place()), else held as dpr_resp_rx() holds it
 * (dpr_sr_hold()),
 * after the checks of dpr_wire_parse_fast() that the hold needs (the
 * lengths, the header checksum, the ICRC) and without its parse -- at
 * 1% loss or reordering most frames come this way, and each is checked
 * again when the gap fills and it is taken. Declined with nothing changed
 * otherwise: the first frame past a new gap, a peer not yet known, an RNR
 * wait, anything else. (Not inlined: in the loop of the in-order frames
 * it cost them 9 instructions each.)
 */
static __rte_noinline bool
fast_hold(struct dpr_tqp *qp, struct rte_mbuf *m, const uint8_t *p, uint64_t gen)
{
	const uint32_t psn = be24_at(p + DPR_F_BTH + 9);
	const uint8_t state = qp->state;
	uint32_t hdr_len, body;
	int32_t d;

	if (!qp->resp.sent_psn_nak || qp->sr != SR_YES || qp->resp.rnr_gap ||
	    !qp->comm_established ||
	    (state != DPR_QPS_RTS && state != DPR_QPS_RTR && state != DPR_QPS_SQD))
		return false;
	switch (p[DPR_F_BTH]) {
	case DPR_OP_RC_WRITE_FIRST:
	case DPR_OP_RC_WRITE_ONLY:
		hdr_len = 28;
		break;
	case DPR_OP_RC_WRITE_MIDDLE:
	case DPR_OP_RC_WRITE_LAST:
	case DPR_OP_RC_SEND_FIRST:
	case DPR_OP_RC_SEND_MIDDLE:
	case DPR_OP_RC_SEND_LAST:
	case DPR_OP_RC_SEND_ONLY:
		hdr_len = 12;
		break;
	case DPR_OP_RC_SEND_LAST_IMM:
	case DPR_OP_RC_SEND_ONLY_IMM:
		hdr_len = 16;
		break;
	default:
		return false;
	}
	d = dpr_psn_diff(psn, qp->resp.psn);
	if (d <= 0)
		return false;
	body = request_body(m, p, hdr_len);
	if (body == UINT32_MAX || ((p[DPR_F_BTH + 1] >> 4) & 3) > body ||
	    body > qp->pmtu + 3 ||
	    !dpr_wire_ipv4_sound(p + DPR_F_L3, be16_at(p + DPR_F_L3 + 2), m->ol_flags))
		return false;
	QP_STAT(qp, out_of_seq_rx);
	/* a WRITE's FIRST or MIDDLE written to memory now if it can be,
	 * anything else held */
	if (!dpr_sr_place(qp, p, psn, d, body - ((p[DPR_F_BTH + 1] >> 4) & 3), gen))
		dpr_sr_hold(qp, m, psn, d);
	return true;
}

/* The one-pass handler of frame @p m (at @p p) for @p qp, whose
 * template it matched: taken, or declined with nothing changed. */
static __rte_always_inline bool
fast_one(struct dpr_tqp *qp, struct rte_mbuf *m, uint8_t *p, uint64_t gen,
	 const bool opened)
{
	switch (p[DPR_F_BTH]) {
	case DPR_OP_RC_WRITE_FIRST:
		return fast_write(qp, m, p, DPR_START_MASK, gen, opened);
	case DPR_OP_RC_WRITE_MIDDLE:
		return fast_write(qp, m, p, DPR_MIDDLE_MASK, gen, opened);
	case DPR_OP_RC_WRITE_LAST:
		return fast_write(qp, m, p, DPR_END_MASK, gen, opened);
	case DPR_OP_RC_WRITE_ONLY:
		return fast_write(qp, m, p, DPR_START_MASK | DPR_END_MASK, gen, opened);
	case DPR_OP_RC_SEND_FIRST:
		return fast_send(qp, m, p, DPR_START_MASK, gen, opened);
	case DPR_OP_RC_SEND_MIDDLE:
		return fast_send(qp, m, p, DPR_MIDDLE_MASK, gen, opened);
	case DPR_OP_RC_SEND_LAST:
		return fast_send(qp, m, p, DPR_END_MASK, gen, opened);
	case DPR_OP_RC_SEND_LAST_IMM:
		return fast_send(qp, m, p, DPR_END_MASK | DPR_IMMDT_MASK, gen, opened);
	case DPR_OP_RC_SEND_ONLY:
		return fast_send(qp, m, p, DPR_START_MASK | DPR_END_MASK, gen, opened);
	case DPR_OP_RC_SEND_ONLY_IMM:
		return fast_send(qp, m, p, DPR_START_MASK | DPR_END_MASK |
				 DPR_IMMDT_MASK, gen, opened);
	default:
		return false;
	}
}

/* The QP number of frame @p m, read as the one-pass path reads it (of
 * a frame too short for that path: bytes of its buffer that mean
 * nothing, never used -- the frame is declined before its turn). */
static __rte_always_inline uint32_t
qpn_of(const struct rte_mbuf *m)
{
	return be24_at(rte_pktmbuf_mtod(m, const uint8_t *) + DPR_F_BTH + 5);
}

/*
 * The lines of a QP that taking a request in one pass reads or writes,
 * loaded ahead of its frame: its state and attributes, the receive
 * template, the responder's state and its place on the work list (laid
 * out together from the top of struct dpr_tqp), the send template its ACK
 * is built from, the counters of that ACK. With thousands of QPs each
 * frame's QP is a cold one, and the misses one after another were the
 * receive path's time (16,384 QPs: a third of dpr_transport_rx_fast() on
 * the first read of the QP, dpr_qpn_lookup() 8% of the worker).
 */
static __rte_always_inline void
qp_prefetch(const struct dpr_tqp *qp)
{
	const char *b = (const char *)qp;
	const size_t end = offsetof(struct dpr_tqp, tmpl) + sizeof(qp->tmpl);
	size_t off;

	for (off = 0; off < end; off += RTE_CACHE_LINE_SIZE)
		rte_prefetch0(b + off);
	rte_prefetch0(&qp->stats.ack_tx);
}

/* the frames of a burst whose QPs are loaded ahead (the rest, of a
 * burst configured longer, wait for their turn) */
#define RX_AHEAD 64

/*
 * The QPs of the @p n frames @p pkts, loaded before the first frame is
 * taken (VPP's way): the slots of their numbers, then their lines -- the
 * loads of a stage in flight together, not one miss after another.
 * Only while bursts hold several QPs (the last one did): one QP's stream
 * costs a compare a burst.
 */
static __rte_always_inline void
rx_prefetch(const struct dpr_transport *tp, struct rte_mbuf **pkts, uint16_t n)
{
	const struct dpr_qp_table *qpt = tp->qpt;
	uint32_t qn[RX_AHEAD];
	uint16_t i, k = 0;

	if (likely(tp->rx_qps < 2))
		return;
	n = RTE_MIN(n, (uint16_t)RX_AHEAD);
	for (i = 0; i < n; i++) {
		const uint32_t q = qpn_of(pkts[i]);

		if (k == 0 || q != qn[k - 1]) {
			dpr_qp_table_prefetch(qpt, q);
			qn[k++] = q;
		}
	}
	for (i = 0; i < k; i++) {
		const struct dpr_tqp *qp = dpr_qp_table_get(qpt, qn[i]);

		if (qp != NULL)
			qp_prefetch(qp);
	}
}

/*
 * The frames at @p pkts of one secure QP, as many in a row as are sealed
 * and match its template with TVer 1 (never a plain frame this way):
 * opened and taken as the general way takes an opened frame, without its
 * parse to the BTH. @return how many it took.
 */
static __rte_noinline uint16_t
rx_sealed_run(struct dpr_transport *tp, struct rte_mbuf **pkts, uint16_t n)
{
	const uint8_t *p0 = rte_pktmbuf_mtod(pkts[0], const uint8_t *);
	struct dpr_tqp *qp;
	uint16_t k;

	if (pkts[0]->data_len < DPR_F_MIN)
		return 0;
	qp = dpr_qp_table_get(tp->qpt, be24_at(p0 + DPR_F_BTH + 5));
	if (qp == NULL || qp->tp != tp || qp->rxt.on || !qp->rxt_made ||
	    qp->sec_state != SECS_ON)
		return 0;
	for (k = 0; k < n; k++) {
		struct rte_mbuf *m = pkts[k];
		const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);

		if (m->nb_segs != 1 || m->data_len < DPR_F_MIN ||
		    be24_at(p + DPR_F_BTH + 5) != qp->qpn ||
		    !dpr_wire_rx_tmpl_match_tver(&qp->rxt, p, DPR_SEC_TVER))
			break;
		dpr_rx_sealed(qp, m);
	}
	tp->stats.rx_frames += k;
	tp->stats.rx_fast += k;
	return k;
}

/* The plain frames' loop: as many frames as it takes in a row. */
static __rte_noinline uint16_t
rx_fast_run(struct dpr_transport *tp, struct rte_mbuf **pkts, uint16_t n)
{
	struct dpr_tqp *qp = NULL;
	uint32_t qp_num = UINT32_MAX;   /* the QP of the frame before (none) */
	const uint64_t gen = __atomic_load_n(tp->mr_gen, __ATOMIC_ACQUIRE);
	uint16_t i, qps = 0;

	rx_prefetch(tp, pkts, n);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
		uint32_t qpn;
		bool took;

		if (m->nb_segs != 1 || m->data_len < DPR_F_MIN)
			break;
		/* frames of a burst mostly come from one QP: looked up once */
		qpn = be24_at(p + DPR_F_BTH + 5);
		if (qpn != qp_num) {
			qp = dpr_qp_table_get(tp->qpt, qpn);
			if (qp == NULL || qp->tp != tp || !qp->rxt.on)
				break;
			qp_num = qpn;
			qps++;
		}
		if (!dpr_wire_rx_tmpl_match(&qp->rxt, p))
			break;
		took = fast_one(qp, m, p, gen, false);
		/* (what the one-pass handlers decline is held if it came past
		 * a gap, else the general stages take it after a one-pass
		 * parse, unless that declines too) */
		if (!took && !fast_hold(qp, m, p, gen) && !fast_general(qp, m))
			break;
	}
	tp->rx_qps = qps;
	tp->stats.rx_frames += i;
	tp->stats.rx_fast += i;
	return i;
}

uint16_t
dpr_transport_rx_fast(struct dpr_transport *tp, struct rte_mbuf **pkts, uint16_t n,
		      uint64_t now)
{
	uint16_t i, k;

	if (unlikely(tp->conf.slow_only))
		return 0;
	tp->now = now;
	i = rx_fast_run(tp, pkts, n);
	/* a secure QP's frames stop the plain frames' loop: taken by their
	 * own, and the loop goes on after them (so that it costs plain
	 * frames nothing) */
	while (unlikely(i < n) && (k = rx_sealed_run(tp, &pkts[i], n - i)) != 0) {
		i += k;
		if (i < n)
			i += rx_fast_run(tp, &pkts[i], n - i);
	}
	return i;
}

bool
dpr_fast_take(struct dpr_tqp *qp, struct rte_mbuf *m)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);

	/* the template with TVer 0, as the peer built the frame (a secure
	 * QP's: as it built the frame it sealed; qp->rxt.on stays off for a
	 * secure QP: a plain frame to it must never come this way) */
	return !qp->tp->conf.slow_only && m->nb_segs == 1 && m->data_len >= DPR_F_MIN &&
		qp->rxt_made && dpr_wire_rx_tmpl_match(&qp->rxt, p) &&
		fast_one(qp, m, p, __atomic_load_n(qp->tp->mr_gen, __ATOMIC_ACQUIRE),
			 true);
}
