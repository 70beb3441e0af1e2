/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The transport instance and its receive stage (rxe_recv.c): validate the
 * frame (lib/wire), find the QP, check that it comes from the QP's peer
 * and that the QP is in a state to take it, then hand requests to the
 * responder and responses to the completer. Also the poll and TX sides.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include <rte_ip.h>
#include <rte_prefetch.h>
#include <rte_udp.h>

#include "dpr_sec.h"
#include "transport_private.h"

RTE_LOG_REGISTER(dpr_logtype_transport, dprdma.transport, INFO);

struct dpr_transport *
dpr_transport_create(const struct dpr_transport_conf *c)
{
	struct dpr_transport *tp;
	uint32_t ring;

	if (c->ctx == NULL || c->pool == NULL) {
		rte_errno = EINVAL;
		return NULL;
	}
	tp = calloc(1, sizeof(*tp));
	if (tp == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	tp->conf = *c;
	if (tp->conf.max_unacked == 0)
		tp->conf.max_unacked = 512;
	if (tp->conf.max_unacked > (1u << 22))
		tp->conf.max_unacked = 1u << 22;
	/* a selective-repeat responder keeps a window of SR_WIN PSNs: a
	 * requester never has more in flight (with go-back-N peers too: it
	 * may learn what its peer speaks after it sent) */
	if (tp->conf.sr != DPR_SR_OFF && tp->conf.max_unacked > SR_WIN)
		tp->conf.max_unacked = SR_WIN;
	if (tp->conf.min_unacked > tp->conf.max_unacked)
		tp->conf.min_unacked = tp->conf.max_unacked;
	if (tp->conf.ack_every == 0)
		tp->conf.ack_every = 64;
	if (tp->conf.qp_burst == 0)
		tp->conf.qp_burst = 32;
	if (tp->conf.rto_min_ns == 0)
		tp->conf.rto_min_ns = 100000;
	ring = tp->conf.tx_ring ? tp->conf.tx_ring : DPR_TX_RING;
	ring = rte_align32pow2(ring);
	tp->txq = calloc(ring, sizeof(*tp->txq));
	tp->txq_fill = calloc(ring, sizeof(*tp->txq_fill));
	if (tp->txq == NULL || tp->txq_fill == NULL) {
		free(tp->txq);
		free(tp->txq_fill);
		free(tp);
		rte_errno = ENOMEM;
		return NULL;
	}
	tp->txq_mask = ring - 1;
	tp->ctx = c->ctx;
	tp->qpt = dpr_verbs_qp_table(c->ctx);
	tp->mr_gen = dpr_verbs_mr_gen(c->ctx);
	tp->pool = c->pool;
	tp->tx_room = rte_pktmbuf_data_room_size(c->pool) > RTE_PKTMBUF_HEADROOM ?
		rte_pktmbuf_data_room_size(c->pool) - RTE_PKTMBUF_HEADROOM : 0;
	{
		/* what rte_pktmbuf_reset() leaves in rearm_data (stash_refill) */
		struct rte_mbuf mb = {
			.data_off = (uint16_t)RTE_MIN((uint32_t)RTE_PKTMBUF_HEADROOM,
						      rte_pktmbuf_data_room_size(c->pool)),
			.nb_segs = 1,
			.port = RTE_MBUF_PORT_INVALID,
		};

		const uintptr_t rearm = (uintptr_t)&mb.rearm_data;

		rte_mbuf_refcnt_set(&mb, 1);
		tp->mbuf_rearm = *(const uint64_t *)rearm;
	}
	/* external buffers carry an IOVA: the MR's own address in VA mode */
	if (rte_eal_iova_mode() != RTE_IOVA_VA)
		tp->conf.zero_copy_min = 0;
	if (tp->conf.zero_copy_min != 0)
		dpr_verbs_set_mr_release(tp->ctx, dpr_mr_release_shinfo);
	TAILQ_INIT(&tp->work);
	TAILQ_INIT(&tp->all);
	TAILQ_INIT(&tp->path_wait);
	TAILQ_INIT(&tp->sec_wait);
	dpr_wheel_init(&tp->wheel, 0);
	return tp;
}

void
dpr_transport_destroy(struct dpr_transport *tp)
{
	if (tp == NULL)
		return;
	while (tp->txq_tail != tp->txq_head)
		rte_pktmbuf_free(tp->txq[tp->txq_tail++ & tp->txq_mask]);
	if (tp->n_stash != 0)
		rte_pktmbuf_free_bulk(tp->stash, tp->n_stash);
	free(tp->txq);
	free(tp->txq_fill);
	free(tp);
}

const struct dpr_transport_stats *
dpr_transport_stats(const struct dpr_transport *tp)
{
	return &tp->stats;
}

/* Does @p qp take a frame of this class in its state? */
static inline bool
state_takes(const struct dpr_tqp *qp, uint32_t mask)
{
	return (mask & DPR_REQ_MASK) ?
		qp->state == DPR_QPS_RTR || qp->state == DPR_QPS_RTS ||
		qp->state == DPR_QPS_SQD :
		qp->state == DPR_QPS_RTS || qp->state == DPR_QPS_SQD;
}

/* @p g is one of our GIDs (a datagram may come to any of them). */
static bool
own_gid(const struct dpr_transport_conf *c, const union dpr_gid *g)
{
	unsigned int i;

	for (i = 0; i < c->n_gids; i++) {
		const union dpr_gid *o = dpr_conf_gid(c, i);

		if (o != NULL && dpr_gid_eq(o, g))
			return true;
	}
	return false;
}

/* A CNP (RoCEv2's congestion notification, from a peer's notification
 * point) for @p qp: from the QP's peer, to an RC or UC QP that sends.
 * Counted per QP, and it cuts the QP's rate (dpr_cc.c). */
static void
rx_cnp(struct dpr_tqp *qp, const struct rte_mbuf *m, const struct dpr_pkt_info *pi)
{
	struct dpr_transport *tp = qp->tp;

	if (qp->type == DPR_QPT_UD || !state_takes(qp, 0)) {
		tp->stats.rx_qp_state++;
		dpr_src_drop(tp, m, DPR_SRC_qp_state);
		return;
	}
	if (memcmp(&pi->encap.sgid, &qp->attr.ah_attr.dgid, sizeof(pi->encap.sgid)) ||
	    memcmp(&pi->encap.dgid, &qp->encap.sgid, sizeof(pi->encap.dgid))) {
		tp->stats.rx_wrong_peer++;
		dpr_src_drop(tp, m, DPR_SRC_wrong_peer);
		return;
	}
	QP_STAT(qp, cnp_rx);
	dpr_cc_cnp(qp);
}

static void rx_parsed(struct dpr_transport *tp, struct rte_mbuf *m,
		      struct dpr_pkt_info *pi, enum dpr_wire_err err, bool opened);

/* @p m, a frame of secure QP @p qp opened: the usual one of its QP as a
 * plain one would go (@return true), the rest parsed again and taken by
 * the general stages. */
static bool
rx_opened(struct dpr_transport *tp, struct dpr_tqp *qp, struct rte_mbuf *m)
{
	struct dpr_pkt_info pi;

	if (dpr_fast_take(qp, m))
		return true;
	rx_parsed(tp, m, &pi, dpr_wire_parse_again(m, &pi, 4096), true);
	return false;
}

void
dpr_rx_sealed(struct dpr_tqp *qp, struct rte_mbuf *m)
{
	if (dpr_secqp_open_qp(qp, m) == 0)
		rx_opened(qp->tp, qp, m);
}

static void
rx_one(struct dpr_transport *tp, struct rte_mbuf *m)
{
	struct dpr_pkt_info pi;
	struct dpr_tqp *qp;
	enum dpr_wire_err err;

	if (unlikely(tp->conf.quarantine_drops != 0) && dpr_src_quarantined(tp, m))
		return;
	/* payloads are bounded by the largest path MTU here, by the QP's
	 * own in the responder and completer */
	err = dpr_wire_parse(m, &pi, 4096);
	if (unlikely(err == DPR_WIRE_ERR_BAD_TVER) &&
	    dpr_bth_tver(rte_pktmbuf_mtod_offset(m, const struct dpr_bth *,
						 pi.bth_off)) == DPR_SEC_TVER) {
		/* a secure QP's frame (the parse stopped at its BTH: the
		 * headers before it are sound): opened in place into the
		 * frame its peer sealed (dpr_secqp.c counts what it refuses) */
		if (dpr_secqp_open(tp, m, pi.bth_off, &qp) == 0 &&
		    rx_opened(tp, qp, m))
			tp->stats.rx_fast++;
		return;
	}
	rx_parsed(tp, m, &pi, err, false);
}

/* @p m parsed into @p pi (@p err: how it went; @p opened: a secure QP's
 * frame, opened): to its QP's stage. */
static void
rx_parsed(struct dpr_transport *tp, struct rte_mbuf *m, struct dpr_pkt_info *pi,
	  enum dpr_wire_err err, bool opened)
{
	struct dpr_wire_hdrs h;
	struct dpr_tqp *qp;

	if (err != DPR_WIRE_OK) {
		tp->stats.rx_invalid++;
		dpr_src_drop(tp, m, DPR_SRC_invalid);
		return;
	}
	dpr_wire_decode(m, pi, &h);
	qp = dpr_qpn_lookup(tp->ctx, h.dqpn);
	if (qp == NULL) {
		tp->stats.rx_no_qp++;
		dpr_src_drop(tp, m, DPR_SRC_no_qp);
		return;
	}
	if (unlikely(pi->opcode == DPR_OP_CNP)) {
		/* a secure QP's peer seals its CNPs: a plain one is forged */
		if (unlikely(qp->sec_state != SECS_PLAIN) && !opened) {
			tp->stats.sec_drop_plain++;
			dpr_src_drop(tp, m, DPR_SRC_secure);
			return;
		}
		rx_cnp(qp, m, pi);
		return;
	}
	if (!(pi->mask & (DPR_RC_MASK | DPR_UC_MASK | DPR_UD_MASK))) {
		tp->stats.rx_invalid++;
		dpr_src_drop(tp, m, DPR_SRC_invalid);
		return;
	}
	if (unlikely(qp->sec_state != SECS_PLAIN) && !opened) {
		tp->stats.sec_drop_plain++;
		dpr_src_drop(tp, m, DPR_SRC_secure);
		return;
	}
	/* rxe check_type_state: the opcode's class is the QP's type */
	if (!(pi->mask & (qp->type == DPR_QPT_UD ? DPR_UD_MASK :
			 qp->type == DPR_QPT_UC ? DPR_UC_MASK : DPR_RC_MASK))) {
		tp->stats.rx_wrong_type++;
		dpr_src_drop(tp, m, DPR_SRC_wrong_type);
		return;
	}
	if (qp->type == DPR_QPT_UD) {
		/* a datagram comes from anyone: to our GID, our P_Key */
		if (!state_takes(qp, DPR_REQ_MASK)) {
			tp->stats.rx_qp_state++;
			dpr_src_drop(tp, m, DPR_SRC_qp_state);
			return;
		}
		if (!own_gid(&tp->conf, &pi->encap.dgid) ||
		    h.pkey != DPR_DEFAULT_PKEY) {
			tp->stats.rx_wrong_peer++;
			dpr_src_drop(tp, m, DPR_SRC_wrong_peer);
			return;
		}
		dpr_ud_rx(qp, m, pi, &h);
		return;
	}
	/* After the QP lookup, rxe's hdr_check checks the opcode's class
	 * against the QP's type and the QP's state (check_type_state), then
	 * the addresses (check_addr) and the P_Key (check_keys); it checks the
	 * ICRC last, once the header passed, where dpr_wire_parse above
	 * checked it first (a corrupt frame then never reaches a QP's
	 * counters). The state: IBA 10.3.1, a responder works from RTR on, a
	 * requester's completer in RTS/SQD; a QP in RESET or INIT has no peer
	 * yet. The peer: the QP's destination GID, our GID, the default
	 * P_Key. */
	if (!state_takes(qp, pi->mask)) {
		tp->stats.rx_qp_state++;
		dpr_src_drop(tp, m, DPR_SRC_qp_state);
		return;
	}
	if (memcmp(&pi->encap.sgid, &qp->attr.ah_attr.dgid, sizeof(pi->encap.sgid)) ||
	    memcmp(&pi->encap.dgid, &qp->encap.sgid, sizeof(pi->encap.dgid)) ||
	    h.pkey != DPR_DEFAULT_PKEY) {
		tp->stats.rx_wrong_peer++;
		dpr_src_drop(tp, m, DPR_SRC_wrong_peer);
		return;
	}
	if (unlikely(pi->ce)) {
		/* congestion on the way here: the sender is told */
		QP_STAT(qp, ce_rx);
		dpr_xmit_cnp(qp);
	}
	if (qp->type == DPR_QPT_UC)
		dpr_uc_rx(qp, m, pi, &h);
	else if (pi->mask & DPR_REQ_MASK)
		dpr_resp_rx(qp, m, pi, &h);
	else
		dpr_comp_rx(qp, m, pi, &h);
}

void
dpr_transport_rx(struct dpr_transport *tp, struct rte_mbuf **pkts, uint16_t n,
		 uint64_t now)
{
	uint16_t i;

	tp->now = now;
	for (i = 0; i < n; i++) {
		/* the usual frames the fast way (dpr_fast.c), the rest here */
		i += dpr_transport_rx_fast(tp, &pkts[i], n - i, now);
		if (i == n)
			break;
		tp->stats.rx_frames++;
		rx_one(tp, pkts[i]);
	}
	/* no stage keeps a received frame: all back to their pools at once */
	rte_pktmbuf_free_bulk(pkts, n);
}

void
dpr_transport_poll(struct dpr_transport *tp, uint64_t now)
{
	uint32_t n = 0;
	struct dpr_tqp *qp;

	tp->now = now;
	if (unlikely(!TAILQ_EMPTY(&tp->sec_wait)))
		dpr_secqp_poll(tp);
	dpr_wheel_run(tp, now);
	/* each QP with work once, responses before new requests */
	TAILQ_FOREACH(qp, &tp->work, work_link)
		n++;
	while (n-- > 0 && (qp = TAILQ_FIRST(&tp->work)) != NULL) {
		bool more;

		TAILQ_REMOVE(&tp->work, qp, work_link);
		qp->on_work = false;
		more = dpr_resp_send(qp, tp->conf.qp_burst);
		more |= dpr_req_run(qp, tp->conf.qp_burst);
		if (more)
			qp_work(qp);
	}
}

uint16_t
dpr_transport_tx(struct dpr_transport *tp, struct rte_mbuf **pkts, uint16_t max)
{
	uint32_t n = RTE_MIN((uint32_t)max, tp->txq_head - tp->txq_tail);
	uint32_t at = tp->txq_tail & tp->txq_mask;
	uint32_t run = RTE_MIN(n, tp->txq_mask + 1 - at);

	/* at most two runs of the ring */
	memcpy(pkts, &tp->txq[at], run * sizeof(pkts[0]));
	memcpy(&pkts[run], tp->txq, (n - run) * sizeof(pkts[0]));
	tp->txq_tail += n;
	return (uint16_t)n;
}

uint64_t
dpr_transport_next_timer(const struct dpr_transport *tp)
{
	return dpr_wheel_next(&tp->wheel);
}

uint64_t
dpr_transport_next_timer_before(const struct dpr_transport *tp, uint64_t limit)
{
	return dpr_wheel_next_before(&tp->wheel, limit);
}

bool
dpr_transport_busy(const struct dpr_transport *tp)
{
	return !TAILQ_EMPTY(&tp->work) || tp->txq_head != tp->txq_tail;
}
