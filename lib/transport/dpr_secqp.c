/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Secure RC/UC QPs (doc/security.rst): which QPs are, their wait for keys,
 * and their frames through lib/sec.
 *
 * When a QP gets its peer (RTR) on a transport with conf.sec_mode set, the
 * peer's capabilities decide, the same way on both sides: secure when the
 * peer holds our pre-shared key and runs secure QPs too, in the stronger of
 * the two modes; else plain, or ERR where the policy for the peer's
 * address says required (conf.sec_subnets, else conf.sec_required). A
 * peer whose subnet's policy is none is plain at once (the CM tells it we
 * run no secure QPs, so that it decides the same). Until
 * the capabilities are known (asked at first contact) and then until the
 * handshake (conf.sec_req, the CM driver over QP1) gives it keys, the QP
 * sends nothing and takes nothing: its peer sends again what it lost, as
 * after any loss. From then on every frame it sends is sealed in
 * dpr_xmit() (the fast paths, which build frames their own way, are off
 * for it) and every frame it takes must have been opened by
 * dpr_secqp_open(); a plain frame for it is dropped and counted
 * (sec_drop_plain), as a sealed one for a plain QP (sec_drop_unexpected).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_log.h>

#include "dpr_sec.h"
#include "dpr_sec_policy.h"
#include "transport_private.h"

extern int dpr_logtype_transport;

struct dpr_sec_qp {
	struct dpr_sec_tx tx;
	struct dpr_sec_rx rx;
};

static void
wait_set(struct dpr_tqp *qp, bool wait)
{
	if (wait == qp->sec_waiting)
		return;
	if (wait)
		TAILQ_INSERT_TAIL(&qp->tp->sec_wait, qp, sec_link);
	else
		TAILQ_REMOVE(&qp->tp->sec_wait, qp, sec_link);
	qp->sec_waiting = wait;
}

static void
req(struct dpr_tqp *qp, enum dpr_sec_req_op op)
{
	const struct dpr_transport_conf *c = &qp->tp->conf;
	struct dpr_sec_req r = {
		.op = (uint8_t)op,
		.mode = qp->sec_mode,
		.sgid_index = qp->attr.ah_attr.sgid_index,
		.owner = c->owner,
		.lqpn = qp->qpn,
		.rqpn = qp->attr.dest_qp_num,
		.gen = qp->sec_gen,
		.lgid = qp->encap.sgid,
		.rgid = qp->encap.dgid,
	};

	if (c->sec_req != NULL)
		c->sec_req(c->sec_arg, &r);
}

/* Plain after all: the receive fast path's template back. */
static void
go_plain(struct dpr_tqp *qp)
{
	wait_set(qp, false);
	qp->sec_state = SECS_PLAIN;
	dpr_qp_rx_tmpl(qp);
}

/* The peer's capabilities are known (@p caps, or < 0: it is not a box
 * of ours): secure, plain or refused. */
static void
decide(struct dpr_tqp *qp, int caps)
{
	struct dpr_transport *tp = qp->tp;
	uint8_t peer = caps < 0 ? 0 : (caps & DPR_PEER_SEC_ENC) ? DPR_SEC_ENCRYPT :
		(caps & DPR_PEER_SEC_AUTH) ? DPR_SEC_AUTH : 0;

	if (peer != 0 && (caps & DPR_PEER_SEC_KEY)) {
		qp->sec_mode = RTE_MAX(peer, tp->conf.sec_mode);
		qp->sec_gen = ++tp->sec_gen;
		qp->sec_state = SECS_KEYS;
		wait_set(qp, true);
		req(qp, DPR_SEC_REQ_BEGIN);
		return;
	}
	if (!qp->sec_required) {
		go_plain(qp);
		return;
	}
	/* to ERR at the next poll, whether the peer was known at RTR or
	 * learnt later: a program's modify to RTR and RTS succeed alike, and
	 * the QP fails with an event */
	qp->sec_refused_peer = peer != 0;
	qp->sec_state = SECS_REFUSE;
	wait_set(qp, true);
}

static void
refuse(struct dpr_tqp *qp)
{
	qp->tp->stats.sec_refused++;
	wait_set(qp, false);
	qp->sec_state = SECS_PLAIN;
	dpr_qp_error(qp, !qp->sec_refused_peer ?
		     "security required and the peer runs no secure QPs "
		     "(a plain RoCE device, or a dprdma box without [security])" :
		     "security required and the peer holds another pre-shared key");
}

void
dpr_secqp_begin(struct dpr_tqp *qp)
{
	const struct dpr_transport_conf *c = &qp->tp->conf;
	int caps, policy;

	dpr_secqp_end(qp);
	if (c->sec_mode == DPR_SEC_NONE || qp->type == DPR_QPT_UD)
		return;
	policy = dpr_sec_subnet_policy(c->sec_subnets, c->n_sec_subnets,
				       &qp->attr.ah_attr.dgid);
	if (policy == DPR_SEC_POLICY_NONE)
		return;
	qp->sec_required = policy < 0 ? c->sec_required :
		policy == DPR_SEC_POLICY_REQUIRED;
	/* nothing plain goes out or is taken until it is decided */
	qp->rxt.on = false;
	qp->tmpl_fresh = false;
	qp->sec_fast = false;
	caps = c->peer_caps != NULL ?
		c->peer_caps(c->peer_arg, &qp->attr.ah_attr.dgid,
			     qp->attr.ah_attr.sgid_index) : -ENOTSUP;
	if (caps == -EAGAIN) {
		qp->sec_state = SECS_CAPS;
		wait_set(qp, true);
		return;
	}
	decide(qp, caps);
}

void
dpr_secqp_poll(struct dpr_transport *tp)
{
	const struct dpr_transport_conf *c = &tp->conf;
	struct dpr_tqp *qp, *next;

	for (qp = TAILQ_FIRST(&tp->sec_wait); qp != NULL; qp = next) {
		int caps;

		next = TAILQ_NEXT(qp, sec_link);
		if (qp->sec_state == SECS_REFUSE) {
			refuse(qp);
			continue;
		}
		if (qp->sec_state != SECS_CAPS)
			continue;
		caps = c->peer_caps(c->peer_arg, &qp->attr.ah_attr.dgid,
				    qp->attr.ah_attr.sgid_index);
		if (caps != -EAGAIN)
			decide(qp, caps);
	}
}

void
dpr_secqp_end(struct dpr_tqp *qp)
{
	if (qp->sec_state == SECS_KEYS || qp->sec_state == SECS_ON)
		req(qp, DPR_SEC_REQ_END);
	wait_set(qp, false);
	qp->sec_fast = false;
	free(qp->sec);
	qp->sec = NULL;
	qp->sec_state = SECS_PLAIN;
	qp->sec_mode = DPR_SEC_NONE;
}

static struct dpr_tqp *
find(struct dpr_transport *tp, uint32_t lqpn, uint32_t gen)
{
	struct dpr_tqp *qp = dpr_qpn_lookup(tp->ctx, lqpn);

	if (qp == NULL || qp->tp != tp || qp->sec_state != SECS_KEYS ||
	    qp->sec_gen != gen)
		return NULL;
	return qp;
}

int
dpr_transport_sec_install(struct dpr_transport *tp, uint32_t lqpn, uint32_t gen,
			  uint8_t mode, const struct dpr_sec_key *tx,
			  const struct dpr_sec_key *rx)
{
	struct dpr_tqp *qp = find(tp, lqpn, gen);
	struct dpr_sec_qp *s;

	if (qp == NULL || mode != qp->sec_mode)
		return -ENOENT;
	/* (gcm_key_data wants 64-byte alignment for its AVX-512 loads) */
	s = aligned_alloc(64, RTE_ALIGN_CEIL(sizeof(*s), 64));
	if (s == NULL) {
		dpr_qp_error(qp, "no memory for a secure QP's keys");
		return -ENOMEM;
	}
	dpr_sec_tx_init(&s->tx, tx, mode);
	dpr_sec_rx_init(&s->rx, rx, mode);
	qp->sec = s;
	qp->sec_state = SECS_ON;
	wait_set(qp, false);
	if (qp->state == DPR_QPS_RTS || qp->state == DPR_QPS_SQD)
		qp_work(qp);
	return 0;
}

int
dpr_transport_sec_fail(struct dpr_transport *tp, uint32_t lqpn, uint32_t gen,
		       const char *why)
{
	struct dpr_tqp *qp = find(tp, lqpn, gen);

	if (qp == NULL)
		return -ENOENT;
	tp->stats.sec_refused++;
	wait_set(qp, false);
	dpr_qp_error(qp, why);
	return 0;
}

struct rte_mbuf *
dpr_secqp_seal(struct dpr_tqp *qp, struct rte_mbuf *m)
{
	struct dpr_transport *tp = qp->tp;
	struct rte_mbuf *s = dpr_sec_seal(&qp->sec->tx, m, tp->pool);

	if (s != NULL) {
		tp->stats.sec_sealed++;
		return s;
	}
	tp->stats.sec_seal_failed++;
	/* no mbuf: tried again as any frame the pool could not give; a
	 * frame that cannot be sealed never will be */
	if (rte_errno != ENOBUFS)
		dpr_qp_error(qp, rte_errno == EMSGSIZE ?
			     "secure QP: a sealed frame (32 bytes longer) would not "
			     "fit the port's buffers; lower the path MTU" :
			     "secure QP: a frame that cannot be sealed");
	return NULL;
}

int
dpr_secqp_open(struct dpr_transport *tp, struct rte_mbuf *m, uint32_t bth_off,
	       struct dpr_tqp **qpp)
{
	struct dpr_tqp *qp;
	uint32_t dqpn;

	/* its QP by the BTH dpr_wire_parse() found (the frame's lengths
	 * are dpr_sec_open()'s to check; the ICRC only of a frame refused) */
	dqpn = dpr_bth_qpn(rte_pktmbuf_mtod_offset(m, const struct dpr_bth *, bth_off));
	qp = dpr_qpn_lookup(tp->ctx, dqpn);
	if (qp == NULL || qp->tp != tp || qp->sec_state != SECS_ON) {
		if (dpr_sec_check(m, &dqpn) == DPR_SEC_ERR_ICRC) {
			tp->stats.rx_invalid++; /* as a corrupt plain frame */
			dpr_src_drop(tp, m, DPR_SRC_invalid);
		} else {
			tp->stats.sec_drop_unexpected++;
			dpr_src_drop(tp, m, DPR_SRC_secure);
		}
		return -ENOENT;
	}
	*qpp = qp;
	return dpr_secqp_open_qp(qp, m);
}

int
dpr_secqp_open_qp(struct dpr_tqp *qp, struct rte_mbuf *m)
{
	struct dpr_transport *tp = qp->tp;

	switch (dpr_sec_open(&qp->sec->rx, m)) {
	case DPR_SEC_OK:
		tp->stats.sec_opened++;
		return 0;
	case DPR_SEC_ERR_ICRC:
		tp->stats.rx_invalid++;         /* as a corrupt plain frame */
		dpr_src_drop(tp, m, DPR_SRC_invalid);
		return -EINVAL;
	case DPR_SEC_ERR_AUTH:
		tp->stats.sec_drop_auth++;
		break;
	case DPR_SEC_ERR_REPLAY:
		tp->stats.sec_drop_replay++;
		break;
	case DPR_SEC_ERR_KEY:
	case DPR_SEC_ERR_MODE:
		tp->stats.sec_drop_key++;
		break;
	default:
		tp->stats.sec_drop_malformed++;
		break;
	}
	dpr_src_drop(tp, m, DPR_SRC_secure);
	return -EPERM;
}

const char *
dpr_secqp_mode_name(const struct dpr_tqp *qp)
{
	switch (qp->sec_state) {
	case SECS_CAPS: return "asking";
	case SECS_KEYS: return "keying";
	case SECS_REFUSE: return "refused";
	case SECS_ON: return qp->sec_mode == DPR_SEC_ENCRYPT ? "encrypt" : "auth";
	default: return "none";
	}
}
