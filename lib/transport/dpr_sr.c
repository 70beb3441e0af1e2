/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Selective repeat between peers that both speak it (doc/architecture.rst,
 * "Selective repeat"): IBA's responder drops everything past a gap and
 * its requester sends the whole window again (go-back-N); here the
 * responder keeps the requests that arrive past a gap, by PSN: the
 * frames themselves, executed in order when the gap fills (READs and
 * atomics run once each as they would have, every check of the in-order
 * path applies), or, for a WRITE's FIRST and MIDDLE packets whose place
 * is known, written at once with only their effects kept for the gap to
 * fill (dpr_sr_place()); tells the
 * requester which runs it holds (DPR_OP_DPR_SACK), and the requester
 * sends again only the PSNs missing below them. Neither side does so
 * with a peer that did not say it reads SACKs (the transport's
 * peer_caps): every other peer sees IBA's go-back-N, frame for frame.
 *
 * Loss is told from reordering as RFC 6675 tells it: a hole is taken for
 * lost once SR_DUPTHRESH PSNs past it have arrived, or after a
 * retransmission timeout. A hole sent again is not sent again for the
 * next SACKs unless SR_DUPTHRESH PSNs sent after that resend have arrived
 * while it is still missing (the resend was lost too), or a timeout says
 * so. READ responses past a hole
 * are placed by the requester as they come (dpr_comp.c); the runs missing
 * are asked for again as READ requests of just those runs
 * (dpr_sr_read_holes()), which the responder sends before the rest of
 * the READ (dpr_resp.c, read_again()).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport_private.h"

#define SR_HOLD_DEFAULT 2048

bool
dpr_sr_decide(struct dpr_tqp *qp)
{
	const struct dpr_transport_conf *c = &qp->tp->conf;
	int caps;

	if (qp->type != DPR_QPT_RC || c->sr == DPR_SR_OFF) {
		qp->sr = SR_NO;
		return false;
	}
	if (c->sr == DPR_SR_ON) {
		qp->sr = SR_YES;
		return true;
	}
	if (c->peer_caps == NULL) {
		qp->sr = SR_NO;
		return false;
	}
	caps = c->peer_caps(c->peer_arg, &qp->attr.ah_attr.dgid,
			     qp->attr.ah_attr.sgid_index);
	if (caps == -EAGAIN)
		return false;           /* being asked: known by a later gap */
	qp->sr = caps > 0 && (caps & DPR_PEER_SR) ? SR_YES : SR_NO;
	return qp->sr == SR_YES;
}

static inline void
map_set(uint64_t *map, uint32_t slot)
{
	map[slot >> 6] |= 1ull << (slot & 63);
}

static inline void
map_clear(uint64_t *map, uint32_t slot)
{
	map[slot >> 6] &= ~(1ull << (slot & 63));
}

static inline bool
map_test(const uint64_t *map, uint32_t slot)
{
	return (map[slot >> 6] >> (slot & 63)) & 1;
}

/* The frame held in slot @p slot (NULL: its packet was placed), taken
 * out of the hold. */
static struct rte_mbuf *
take(struct dpr_tqp *qp, struct dpr_sr_rx *r, uint32_t slot)
{
	struct rte_mbuf *m = r->m[slot];

	r->m[slot] = NULL;
	r->placed[slot] = 0;
	map_clear(r->map, slot);
	r->n--;
	qp->tp->sr_held--;
	return m;
}

/* Slot @p slot (PSN @p psn) let go: its frame freed; a WRITE begun
 * there placed forgotten with those after it (their packets placed
 * stay written, as a WRITE cut short by an error leaves its target). */
static void
release(struct dpr_tqp *qp, struct dpr_sr_rx *r, uint32_t slot, uint32_t psn)
{
	if (r->placed[slot] & SR_PL_START) {
		for (uint32_t i = 0; i < r->w_n; i++) {
			if (r->w[(r->w_head + i) % SR_WMSGS].psn == psn) {
				r->w_n = i;
				break;
			}
		}
	}
	rte_pktmbuf_free(take(qp, r, slot));
}

/* The most requests a transport keeps past gaps ([transport] sr_hold) */
static inline uint32_t
hold_max(const struct dpr_transport *tp)
{
	return tp->conf.sr_hold_max ? tp->conf.sr_hold_max : SR_HOLD_DEFAULT;
}

/* A request came past a gap: a SACK says what is here; and while a gap
 * is open the receive fast path leaves the QP's in-order frames to
 * dpr_resp_rx(), which drains what is kept when the gap fills */
static inline void
sack_owed(struct dpr_tqp *qp)
{
	qp->resp.sack_pending = true;
	qp->resp.sent_psn_nak = true;
	qp_work(qp);
}

/* Slot @p slot arrived (held or placed): a SACK owed for it. */
static void
arrived(struct dpr_tqp *qp, struct dpr_sr_rx *r, uint32_t slot)
{
	map_set(r->map, slot);
	r->n++;
	qp->tp->sr_held++;
	QP_STAT(qp, sr_held);
}

void
dpr_sr_hold(struct dpr_tqp *qp, const struct rte_mbuf *m, uint32_t psn, int32_t d)
{
	struct dpr_transport *tp = qp->tp;
	struct dpr_sr_rx *r = qp->sr_rx;
	const uint32_t slot = psn & SR_WIN_MASK;

	sack_owed(qp);          /* (whatever becomes of this one) */
	if ((uint32_t)d >= SR_WIN || tp->sr_held >= hold_max(tp)) {
		QP_STAT(qp, sr_hold_full);
		return;
	}
	if (r == NULL) {
		r = calloc(1, sizeof(*r));
		if (r == NULL) {
			QP_STAT(qp, sr_hold_full);
			return;
		}
		qp->sr_rx = r;
	}
	if (map_test(r->map, slot)) {
		QP_STAT(qp, dup_request_rx);    /* held or placed already */
		return;
	}
	/* the receive path frees every frame of its burst: this one keeps a
	 * reference of its own */
	rte_mbuf_refcnt_update((struct rte_mbuf *)(uintptr_t)m, 1);
	r->m[slot] = (struct rte_mbuf *)(uintptr_t)m;
	arrived(qp, r, slot);
}

/*
 * Placing WRITE packets on arrival (doc/architecture.rst, "Selective
 * repeat"). A packet past a gap is written where it goes at once when
 * every PSN between the gap and it is known to be a packet of an RDMA
 * WRITE: of the WRITE the responder is in (its FIRST taken in order, so
 * its key and bounds checked in order), or of a WRITE whose FIRST came
 * past the gap where the WRITEs known before it end (its key and bounds
 * checked then; nothing but WRITE packets before it can have changed
 * them: a SEND WITH INVALIDATE, a READ, an atomic there would break the
 * opcode sequence, and the in-order pass then fails the QP). Its effects
 * on the responder's state (PSN, MSN, the WRITE's place, an ACK asked
 * for) wait in r->placed[] for the gap to fill (placed_done()).
 *
 * Only FIRST and MIDDLE packets: a LAST or ONLY is held and executed in
 * order, so the bytes of a message's last packet are written after every
 * byte of every PSN before it, as a responder in order writes them. IBA
 * (o9-20) lets an application rely on a WRITE's target only after a
 * completion that follows it; programs that poll a WRITE's last byte
 * rely on that order anyway (NVIDIA makes its out-of-order placement an
 * opt-in for them), and keep it here.
 */
bool
dpr_sr_place(struct dpr_tqp *qp, const uint8_t *p, uint32_t psn, int32_t d,
	     uint32_t paylen, uint64_t gen)
{
	struct dpr_transport *tp = qp->tp;
	struct dpr_sr_rx *r = qp->sr_rx;
	const uint32_t slot = psn & SR_WIN_MASK, pmtu = qp->pmtu;
	const uint8_t op = p[DPR_F_BTH];
	uint32_t k = (uint32_t)d, rkey = qp->resp.write_rkey;
	uint32_t left = qp->resp.write_left, i, n;
	uint64_t va = qp->resp.write_va;
	uint8_t f = SR_PL_ON;
	bool past = false;
	struct dpr_mr *mr;

	if (r == NULL || qp->resp.in_msg != DPR_WRITE_MASK || k >= SR_WIN ||
	    tp->sr_held >= hold_max(tp) || map_test(r->map, slot) || paylen != pmtu ||
	    (op != DPR_OP_RC_WRITE_FIRST && op != DPR_OP_RC_WRITE_MIDDLE))
		return false;
	/* the message PSN k (from the expected one) falls in: the one in
	 * progress (k from its expected packet on), then those of w[] */
	for (i = 0;; i++) {
		const struct sr_wmsg *w;

		n = npkts(left, pmtu);
		if (k < n)
			break;
		k -= n;
		if (i == r->w_n) {
			past = true;
			break;
		}
		w = &r->w[(r->w_head + i) % SR_WMSGS];
		va = w->va;
		rkey = w->rkey;
		left = w->len;
	}
	if (past) {
		/* past the WRITEs known: a FIRST just where they end begins
		 * the next (k == 0), checked as rx_write() checks it */
		const uint8_t *reth = p + DPR_F_BTH + sizeof(struct dpr_bth);
		struct sr_wmsg *w;

		if (k != 0 || op != DPR_OP_RC_WRITE_FIRST || r->w_n == SR_WMSGS ||
		    !(qp->attr.qp_access_flags & DPR_ACCESS_REMOTE_WRITE))
			return false;
		va = rte_be_to_cpu_64(((const struct dpr_reth *)reth)->va);
		rkey = rte_be_to_cpu_32(((const struct dpr_reth *)reth)->rkey);
		left = rte_be_to_cpu_32(((const struct dpr_reth *)reth)->len);
		if (left <= pmtu || resp_remote_mr(qp, gen, rkey, va, left) == NULL)
			return false;
		w = &r->w[(r->w_head + r->w_n) % SR_WMSGS];
		w->va = va;
		w->rkey = rkey;
		w->len = left;
		w->psn = psn;
		r->w_n++;
		f |= SR_PL_START;
	} else if (op != DPR_OP_RC_WRITE_MIDDLE || k == 0 || k + 1 >= n) {
		/* a FIRST amid a WRITE, or a MIDDLE where its LAST goes: the
		 * opcode sequence broken, for the in-order pass to answer */
		return false;
	}
	va += (uint64_t)k * pmtu;
	mr = resp_remote_mr(qp, gen, rkey, va, pmtu);
	if (mr == NULL) {
		/* (a FIRST's key with its whole length just passed) */
		return false;
	}
	payload_copy(dpr_mr_ptr(mr, va), p + DPR_F_BTH + (f & SR_PL_START ? 28 : 12),
		     pmtu);
	if (p[DPR_F_BTH + 8] & 0x80)
		f |= SR_PL_ACKREQ;
	r->placed[slot] = f;
	sack_owed(qp);
	arrived(qp, r, slot);
	QP_STAT(qp, sr_placed);
	return true;
}

/* The packet placed in slot @p slot, the expected PSN's, now taken: what
 * rx_write() and done_request() leave behind for it. @return false if
 * the WRITE it belongs to is no longer known (never so: only a release of
 * its FIRST forgets it, and that releases what follows too) -- then the
 * slot is let go, the PSN missing again, for the requester to send it
 * again in order. */
static bool
placed_done(struct dpr_tqp *qp, struct dpr_sr_rx *r, uint32_t slot)
{
	const uint8_t f = r->placed[slot];

	if ((f & SR_PL_START) ?
	    r->w_n == 0 || r->w[r->w_head].psn != qp->resp.psn || qp->resp.in_msg != 0 :
	    qp->resp.in_msg != DPR_WRITE_MASK || qp->resp.write_left <= qp->pmtu) {
		take(qp, r, slot);
		QP_STAT(qp, sr_purged);
		return false;
	}
	if (f & SR_PL_START) {
		const struct sr_wmsg *w = &r->w[r->w_head];

		r->w_head = (r->w_head + 1) % SR_WMSGS;
		r->w_n--;
		qp->resp.write_va = w->va;
		qp->resp.write_rkey = w->rkey;
		qp->resp.write_left = w->len;
		qp->resp.write_len = w->len;
	}
	take(qp, r, slot);
	qp->resp.sent_psn_nak = false;
	qp->resp.rnr_gap = false;
	if (qp->resp.nak_pending && qp->resp.nak_psn == qp->resp.psn &&
	    (qp->resp.nak_syn & DPR_AETH_TYPE_MASK) == DPR_AETH_NAK)
		qp->resp.nak_pending = false;
	qp->resp.write_va += qp->pmtu;
	qp->resp.write_left -= qp->pmtu;
	qp->resp.in_msg = DPR_WRITE_MASK;
	qp->resp.psn = dpr_psn_add(qp->resp.psn, 1);
	if (f & SR_PL_ACKREQ) {
		if (!qp->resp.nak_pending)
			qp->resp.ack_pending = true;
		qp_work(qp);
	}
	return true;
}

/* What is held at PSNs strictly between @p from and the expected PSN:
 * taken by a request of several PSNs (a READ), not requests of their own
 * (a requester sends none there). */
static void
release_between(struct dpr_tqp *qp, struct dpr_sr_rx *r, uint32_t from)
{
	const int32_t span = dpr_psn_diff(qp->resp.psn, from);

	for (int32_t k = 1; k < span && k < SR_WIN && r->n != 0; k++) {
		const uint32_t psn = dpr_psn_add(from, k), slot = psn & SR_WIN_MASK;

		if (map_test(r->map, slot)) {
			QP_STAT(qp, dup_request_rx);
			release(qp, r, slot, psn);
		}
	}
}

void
dpr_sr_drain(struct dpr_tqp *qp, uint32_t done_psn)
{
	struct dpr_sr_rx *r = qp->sr_rx;

	release_between(qp, r, done_psn);
	while (r->n != 0 && (qp->state == DPR_QPS_RTR || qp->state == DPR_QPS_RTS ||
			     qp->state == DPR_QPS_SQD)) {
		const uint32_t psn = qp->resp.psn, slot = psn & SR_WIN_MASK;
		struct rte_mbuf *m;
		struct dpr_pkt_info pi;
		struct dpr_wire_hdrs h;

		if (r->m[slot] == NULL) {
			if (!r->placed[slot] || !placed_done(qp, r, slot))
				break;
			continue;
		}
		/* taken out first: what it does may reset the QP. The usual
		 * WRITE or SEND packet the one-pass way, as it would have gone
		 * had it come in order (at 1% loss most frames come past a
		 * gap: the general way cost the responder a quarter of its
		 * goodput) */
		m = take(qp, r, slot);
		if (dpr_fast_take(qp, m)) {
			/* (taken: the PSN moved on) */
		} else if (dpr_wire_parse_again(m, &pi, 4096) == DPR_WIRE_OK) {
			dpr_wire_decode(m, &pi, &h);
			if (h.psn == psn)       /* (held by its PSN: it is) */
				dpr_resp_rx_expected(qp, m, &pi, &h);
		}
		rte_pktmbuf_free(m);
		r = qp->sr_rx;
		if (r == NULL)
			return;         /* the QP went to ERR: all let go */
		/* NAKed (no receive WQE) or refused: the gap is there */
		if (qp->resp.psn == psn)
			break;
		release_between(qp, r, psn);
	}
	qp->resp.sent_psn_nak = r->n != 0 || qp->resp.rnr_gap;
	if (r->n != 0) {
		qp->resp.sack_pending = true;
		qp_work(qp);
	}
}

/* Positions from slot @p s on (cyclic) to the first whose bit in
 * @p map | @p or is @p v, at most @p lim. */
static uint32_t
run_to_or(const uint64_t *map, const uint64_t *or, uint32_t s, uint32_t lim, bool v)
{
	uint32_t k = 0;

	while (k < lim) {
		const uint32_t slot = (s + k) & SR_WIN_MASK;
		const uint32_t bit = slot & 63, avail = 64 - bit;
		uint64_t x = (map[slot >> 6] | or[slot >> 6]) >> bit;

		/* (looking for a 0: the bits shifted in become 1s past
		 * avail, where they are not taken) */
		if (!v)
			x = ~x;
		if (x != 0 && (uint32_t)__builtin_ctzll(x) < avail)
			return RTE_MIN(k + (uint32_t)__builtin_ctzll(x), lim);
		k += avail;
	}
	return lim;
}

/* ... in @p map alone */
static inline uint32_t
run_to(const uint64_t *map, uint32_t s, uint32_t lim, bool v)
{
	return run_to_or(map, map, s, lim, v);
}

int
dpr_sr_send_sack(struct dpr_tqp *qp)
{
	struct dpr_sack_block b[DPR_SACK_MAX_BLOCKS];
	const struct dpr_sr_rx *r = qp->sr_rx;
	const uint32_t base = qp->resp.psn;
	struct dpr_wire_hdrs h = {
		.opcode = DPR_OP_DPR_SACK,
		.pkey = DPR_DEFAULT_PKEY,
		.dqpn = qp->attr.dest_qp_num,
		.psn = dpr_psn_add(base, -1),
		.aeth = { DPR_AETH_ACK | DPR_AETH_CREDIT_INVALID, qp->resp.msn },
	};
	struct dpr_wire_seg seg;
	uint32_t n = 0, k = 1;
	int rc;

	/* the runs held, from the gap on (the expected PSN's slot is never
	 * held: it would have been taken) */
	while (r != NULL && r->n != 0 && n < DPR_SACK_MAX_BLOCKS && k < SR_WIN) {
		uint32_t e;

		k += run_to(r->map, (base + k) & SR_WIN_MASK, SR_WIN - k, true);
		if (k >= SR_WIN)
			break;
		e = k + run_to(r->map, (base + k) & SR_WIN_MASK, SR_WIN - k, false);
		b[n].first = rte_cpu_to_be_32(dpr_psn_add(base, (int32_t)k));
		b[n].last = rte_cpu_to_be_32(dpr_psn_add(base, (int32_t)e - 1));
		n++;
		k = e;
	}
	seg.addr = b;
	seg.iova = (rte_iova_t)(uintptr_t)b;
	seg.len = n * (uint32_t)sizeof(b[0]);
	seg.shinfo = NULL;
	rc = dpr_xmit(qp->tp, qp, &h, &seg, n != 0 ? 1 : 0);
	if (rc != 0)
		return rc;
	req_img_refresh(qp);
	QP_STAT(qp, sack_tx);
	QP_STAT(qp, resp_packets);
	return 0;
}

/* Was PSN @p p sent again (and not forgotten since)? */
static inline bool
was_resent(const struct dpr_sr_tx *t, uint32_t p)
{
	return t->rtx[p & SR_WIN_MASK].psn == (p | SR_RTX_VALID);
}

/* PSN @p p was sent again, before the PSNs from req.psn_hi on. */
static inline void
mark_resent(const struct dpr_tqp *qp, struct dpr_sr_tx *t, uint32_t p)
{
	t->rtx[p & SR_WIN_MASK].psn = p | SR_RTX_VALID;
	t->rtx[p & SR_WIN_MASK].mark = qp->req.psn_hi;
}

/* Send @p p, a hole of WQE @p w, again; record it. @return 0, or what
 * dpr_req_resend_wqe() said. */
static int
resend_hole(struct dpr_tqp *qp, struct dpr_sr_tx *t, struct dpr_send_wqe *w,
	    uint32_t p)
{
	int rc = dpr_req_resend_wqe(qp, w, p);

	if (rc != 0)
		return rc;
	mark_resent(qp, t, p);
	qp->comp.rtt_sent = 0;          /* (Karn: no sample across a resend) */
	/* the oldest hole went again: the RTO counts from now (as TCP
	 * re-arms it when it sends the head of its retransmission queue,
	 * RFC 6298 5.3), else with its 30 us floor it probes a hole whose
	 * repair is on its way. Not on every SACK: a SACK that says the
	 * hold is full names no run and repairs nothing -- only the RTO
	 * does (a SACK holding it off gave RETRY_EXC_ERR behind a
	 * tail-dropping bottleneck, c643423) */
	if (p == qp->comp.psn && qp->comp.rto_deadline != 0)
		qp->comp.rto_deadline = qp->tp->now + rto_ns(qp);
	QP_STAT(qp, sr_resends);
	return 0;
}

/* Is the resend @p e of a hole a SACK (its highest PSN @p high) still
 * shows missing lost too? When DupThresh PSNs sent after it arrived;
 * else the RTO says so (dpr_sr_rto() forgets every resend: each hole
 * goes once more). Not by time as RACK (RFC 8985) would: the RTT samples
 * (none across a resend, Karn) are taken when the queues are short, and
 * a resend behind a full window took longer: at 1% loss between two
 * busy boxes a resend out for 1.25 SRTT sent 3 packets a loss, this rule
 * 1.0, for 12% more goodput. */
static inline bool
resend_lost(const struct sr_rtx *e, uint32_t high)
{
	return dpr_psn_diff(high, e->mark) >= SR_DUPTHRESH;
}

/* A SACK without runs: the responder has a gap at @p p and dropped
 * what came past it (its hold was full, or it was too far ahead). The
 * READs and atomics from @p p on that nothing answered yet are sent
 * again, each once (the RTO, else): the one at the gap may be lost,
 * those after it were dropped, and no response of theirs will say so. */
static void
sack_gap_only(struct dpr_tqp *qp, uint32_t p)
{
	struct dpr_sr_tx *t = dpr_sr_tx_get(qp);
	uint32_t idx;

	if (t == NULL)
		return;
	t->sacked = true;
	for (idx = qp->comp.index; idx != qp->sq.prod; idx++) {
		struct dpr_send_wqe *w = sq_wqe(qp, idx);

		if (!w->started)
			return;
		if (dpr_psn_lt(w->first_psn, p) || !wr_is_rd_atomic(w->opcode) ||
		    w->state == WQE_DONE || w->answered || was_resent(t, w->first_psn))
			continue;
		if (resend_hole(qp, t, w, w->first_psn) != 0)
			return;
	}
}

/*
 * A SACK named PSNs from req.psn_hi on, which we never sent: frames
 * injected into the responder's hold (doc/security.rst, "Selective
 * repeat and a blind attacker"). Without this a blind attacker who knows
 * a plain QP's QPN needs to land a frame anywhere in the SR_WIN PSNs
 * past the expected one, not on it: 1,024 times fewer guesses than with
 * go-back-N's responder. A PURGE (dprdma's opcode; the peer sent us
 * SACKs, so it reads it) tells the responder to drop what it holds from
 * req.psn_hi on. A forged PURGE can only drop requests, as a lossy
 * path can.
 */
static void
send_purge(struct dpr_tqp *qp)
{
	struct dpr_wire_hdrs h = {
		.opcode = DPR_OP_DPR_PURGE,
		.pkey = DPR_DEFAULT_PKEY,
		.dqpn = qp->attr.dest_qp_num,
		.psn = qp->req.psn_hi,
	};

	QP_STAT(qp, sack_unsent);
	if (dpr_xmit(qp->tp, qp, &h, NULL, 0) == 0)
		req_img_refresh(qp);
}

void
dpr_sr_purge(struct dpr_tqp *qp, uint32_t psn)
{
	struct dpr_sr_rx *r = qp->sr_rx;
	int32_t k = dpr_psn_diff(psn, qp->resp.psn);

	if (r == NULL || r->n == 0)
		return;
	/* (a purge from before the gap filled names PSNs behind the
	 * expected one: the slot of the expected PSN is never held) */
	for (k = RTE_MAX(k, 1); k < SR_WIN && r->n != 0; k++) {
		const uint32_t p = dpr_psn_add(qp->resp.psn, k), slot = p & SR_WIN_MASK;

		if (map_test(r->map, slot)) {
			release(qp, r, slot, p);
			QP_STAT(qp, sr_purged);
		}
	}
	/* what is still held, if anything, said again */
	if (r->n != 0) {
		qp->resp.sack_pending = true;
		qp_work(qp);
	}
}

void
dpr_sr_rx_sack(struct dpr_tqp *qp, const struct rte_mbuf *m,
	       const struct dpr_pkt_info *pi, const struct dpr_wire_hdrs *h)
{
	struct dpr_sack_block buf[DPR_SACK_MAX_BLOCKS];
	const struct dpr_sack_block *b;
	uint32_t first[DPR_SACK_MAX_BLOCKS], last[DPR_SACK_MAX_BLOCKS];
	uint32_t n = pi->paylen / (uint32_t)sizeof(*b), nv = 0, i, j, p, high;
	uint32_t idx = qp->comp.index;
	struct dpr_sr_tx *t = qp->sr_tx;
	const bool timed_out = qp->comp.rto_backoff != 0;

	/* an RNR NAK's wait is not cut short */
	if (qp->comp.rnr_wait)
		return;
	if (n == 0) {
		/* nothing held past the gap: what arrived there was a READ or
		 * atomic request, dropped; the gap itself is lost */
		sack_gap_only(qp, dpr_psn_add(h->psn, 1));
		return;
	}
	b = rte_pktmbuf_read(m, pi->payload_off, pi->paylen, buf);
	if (b == NULL)
		return;
	/* the runs as far as they make sense: in order, past what is
	 * acknowledged (comp.psn is missing), within what was sent */
	p = qp->comp.psn;
	for (i = 0; i < n; i++) {
		const uint32_t f = rte_be_to_cpu_32(b[i].first);
		const uint32_t l = rte_be_to_cpu_32(b[i].last);

		if ((f | l) > DPR_PSN_MASK || !dpr_psn_gt(f, p) || dpr_psn_lt(l, f))
			break;
		if (!dpr_psn_lt(l, qp->req.psn_hi)) {
			/* the responder holds requests we never sent:
			 * injected (a blind attacker's WRITEs that fell in
			 * its window); it drops them at our word, before the
			 * PSNs we send next fill the gap below them */
			send_purge(qp);
			break;
		}
		first[nv] = f;
		last[nv++] = l;
		p = dpr_psn_add(l, 1);
	}
	if (nv == 0)
		return;
	t = dpr_sr_tx_get(qp);
	if (t == NULL)
		return;
	t->sacked = true;
	high = last[nv - 1];
	/* the holes below each run, oldest first, with the WQEs that hold
	 * them (both in PSN order: one walk) */
	p = qp->comp.psn;
	for (j = 0; j < nv; j++) {
		while (dpr_psn_lt(p, first[j])) {
			struct dpr_send_wqe *w = NULL;
			struct sr_rtx *e;
			int rc;

			/* reordering, until DupThresh PSNs past it arrived
			 * (the holes after this one are nearer still) */
			if (dpr_psn_diff(high, p) < SR_DUPTHRESH && !timed_out)
				return;
			while (idx != qp->sq.prod) {
				w = sq_wqe(qp, idx);
				if (!w->started || !dpr_psn_gt(p, w->last_psn))
					break;
				idx++;
			}
			if (idx == qp->sq.prod || !w->started || dpr_psn_lt(p, w->first_psn))
				return;         /* no WQE holds it (any more) */
			if (wr_is_rd_atomic(w->opcode)) {
				/* its request, if no answer to it came yet; the
				 * rest of its span is its answers' */
				bool ask = p == w->first_psn && w->state != WQE_DONE &&
					(w->opcode != DPR_WR_RDMA_READ || !w->answered);

				p = dpr_psn_add(w->last_psn, 1);
				if (!ask)
					continue;
				e = &t->rtx[w->first_psn & SR_WIN_MASK];
				if (was_resent(t, w->first_psn) &&
				    !resend_lost(e, high))
					continue;
				rc = resend_hole(qp, t, w, w->first_psn);
			} else {
				const uint32_t hole = p;

				p = dpr_psn_add(p, 1);
				if (w->state == WQE_DONE)
					continue;
				e = &t->rtx[hole & SR_WIN_MASK];
				if (was_resent(t, hole) &&
				    !resend_lost(e, high))
					continue;       /* sent again; not known lost */
				rc = resend_hole(qp, t, w, hole);
			}
			if (rc != 0)
				return;         /* no room now: the next SACK, or the RTO */
		}
		p = dpr_psn_add(last[j], 1);
	}
}

struct dpr_sr_tx *
dpr_sr_tx_get(struct dpr_tqp *qp)
{
	if (qp->sr_tx == NULL)
		qp->sr_tx = calloc(1, sizeof(*qp->sr_tx));
	return qp->sr_tx;
}

bool
dpr_sr_read_place(struct dpr_tqp *qp, uint32_t psn)
{
	struct dpr_sr_tx *t = qp->sr_tx;
	const uint32_t slot = psn & SR_WIN_MASK;

	if (map_test(t->rmap, slot))
		return false;
	map_set(t->rmap, slot);
	/* (one from an earlier pass, SR_WIN or more above, is no longer) */
	if (dpr_psn_gt(psn, t->rd_high) || dpr_psn_diff(t->rd_high, psn) >= SR_WIN)
		t->rd_high = psn;
	return true;
}

bool
dpr_sr_read_take(struct dpr_tqp *qp, uint32_t psn)
{
	struct dpr_sr_tx *t = qp->sr_tx;
	const uint32_t slot = psn & SR_WIN_MASK;

	if (t == NULL || !map_test(t->rmap, slot))
		return false;
	map_clear(t->rmap, slot);
	map_clear(t->amap, slot);
	return true;
}

void
dpr_sr_read_arrived(struct dpr_tqp *qp, uint32_t psn)
{
	if (qp->sr_tx != NULL)
		map_clear(qp->sr_tx->amap, psn & SR_WIN_MASK);
}

/* Ask for @p n responses of READ @p w from @p p on again. */
static int
read_ask(struct dpr_tqp *qp, struct dpr_sr_tx *t, struct dpr_send_wqe *w,
	 uint32_t p, uint32_t n)
{
	int rc = dpr_req_read_range(qp, w, p, n);

	if (rc != 0)
		return rc;
	for (uint32_t k = 0; k < n; k++)
		map_set(t->amap, dpr_psn_add(p, (int32_t)k) & SR_WIN_MASK);
	qp->comp.rtt_sent = 0;          /* (Karn) */
	QP_STAT(qp, sr_read_asks);
	return 0;
}

void
dpr_sr_read_holes(struct dpr_tqp *qp, uint32_t limit)
{
	struct dpr_sr_tx *t = qp->sr_tx;
	uint32_t idx = qp->comp.index, base;

	if (t == NULL || idx == qp->sq.prod)
		return;
	/* (the maps hold SR_WIN PSNs from the head READ's next) */
	base = wqe_resume_psn(qp, sq_wqe(qp, idx));
	if (dpr_psn_diff(limit, base) > SR_WIN)
		limit = dpr_psn_add(base, SR_WIN);
	for (; idx != qp->sq.prod; idx++) {
		struct dpr_send_wqe *w = sq_wqe(qp, idx);
		uint32_t p, end;

		if (!w->started || !dpr_psn_lt(w->first_psn, limit))
			break;
		if (w->opcode != DPR_WR_RDMA_READ || w->state == WQE_DONE)
			continue;
		p = idx == qp->comp.index ? base : w->first_psn;
		end = dpr_psn_lt(w->last_psn, limit) ? dpr_psn_add(w->last_psn, 1) : limit;
		if (!w->answered) {
			/* no response yet: its request may be what was lost,
			 * and a request for part of it would be a new READ of
			 * that part to a responder that never had it -- the
			 * request goes again whole */
			if (map_test(t->amap, w->first_psn & SR_WIN_MASK))
				continue;
			if (read_ask(qp, t, w, w->first_psn,
				     (uint32_t)dpr_psn_diff(w->last_psn, w->first_psn) + 1) != 0)
				return;
			continue;
		}
		while (dpr_psn_lt(p, end)) {
			uint32_t n = (uint32_t)dpr_psn_diff(end, p);

			/* past what arrived or was asked for, to the end of
			 * what did not and was not */
			p = dpr_psn_add(p, (int32_t)run_to_or(t->rmap, t->amap,
							      p & SR_WIN_MASK, n, false));
			if (!dpr_psn_lt(p, end))
				break;
			if (qp->sr != SR_YES)
				/* a go-back-N responder: the rest of the READ
				 * from its first hole, as its own requesters
				 * ask (a duplicate READ resumes
				 * the original), what came after it kept and
				 * its copy dropped */
				n = (uint32_t)dpr_psn_diff(w->last_psn, p) + 1;
			else
				n = run_to_or(t->rmap, t->amap, p & SR_WIN_MASK,
					      (uint32_t)dpr_psn_diff(end, p), true);
			if (read_ask(qp, t, w, p, n) != 0)
				return;         /* no room: the next response, or the RTO */
			p = dpr_psn_add(p, (int32_t)n);
		}
	}
}

void
dpr_sr_read_rto(struct dpr_tqp *qp)
{
	struct dpr_sr_tx *t = dpr_sr_tx_get(qp);
	uint32_t base, next;
	int32_t d;

	if (t == NULL || qp->comp.index == qp->sq.prod)
		return;
	/* silence: what was asked for and has not come was lost too, and
	 * so was every hole below the highest response placed; past that,
	 * the responder may only be slow (its own run is still to come,
	 * and asking for it again would send it twice; a busy box's
	 * responses can pause longer than an RTO): from the second RTO on,
	 * 1, 2, 4 ... PSNs of it are asked for, an RTO at a time, as a
	 * probe */
	memset(t->amap, 0, sizeof(t->amap));
	memset(t->rtx, 0, sizeof(t->rtx));
	base = wqe_resume_psn(qp, sq_wqe(qp, qp->comp.index));
	d = dpr_psn_diff(t->rd_high, base);
	next = d >= 0 && d < SR_WIN ? dpr_psn_add(t->rd_high, 1) : base;
	if (qp->comp.rto_backoff != 0)
		next = dpr_psn_add(next, (int32_t)(1u << RTE_MIN(qp->comp.rto_backoff - 1, 10)));
	dpr_sr_read_holes(qp, next);
}

void
dpr_sr_rto(struct dpr_tqp *qp, uint32_t psn)
{
	struct dpr_sr_tx *t = qp->sr_tx;

	/* the resends may be lost as well: every hole may go again at the
	 * next SACK, and the oldest goes now */
	memset(t->rtx, 0, sizeof(t->rtx));
	if (dpr_req_resend(qp, psn) == 0) {
		mark_resent(qp, t, psn);
		QP_STAT(qp, sr_resends);
	}
}

void
dpr_sr_reset(struct dpr_tqp *qp)
{
	struct dpr_sr_rx *r = qp->sr_rx;

	if (r != NULL) {
		for (uint32_t i = 0; i < SR_WIN / 64; i++) {
			uint64_t w = r->map[i];

			while (w != 0) {
				const uint32_t slot = i * 64 + (uint32_t)__builtin_ctzll(w);

				w &= w - 1;
				rte_pktmbuf_free(r->m[slot]);
			}
		}
		qp->tp->sr_held -= r->n;
		free(r);
		qp->sr_rx = NULL;
	}
	free(qp->sr_tx);
	qp->sr_tx = NULL;
	qp->resp.sack_pending = false;
}
