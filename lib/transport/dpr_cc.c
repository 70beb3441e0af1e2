/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * DCQCN's reaction point (Zhu et al., SIGCOMM 2015), as ConnectX runs it
 * and as the "Mellanox version" of the HPCC simulator models it step by
 * step: a CNP from the peer's notification point cuts an RC/UC QP's rate
 * to rate * (1 - alpha / 2) -- at most one cut per decrease period --
 * where alpha, the QP's estimate of congestion, moves by a gain each
 * alpha period towards 1 when a CNP came in it and towards 0 when none
 * did. With no CNP the rate climbs back in stages of the timer (one per
 * time_reset) and the byte counter (one per byte_reset bytes sent): while
 * both are below the threshold, fast recovery (half way to the target
 * rate, the rate before the cuts); then additive increase (the target
 * grows by ai_rate), then hyper increase (by hai_rate) once both are past
 * it. A pacer holds the QP to its rate: a bucket of tokens (bytes), its
 * frames counted as the requester queues them; a QP that owes tokens
 * waits on its own timer, off the worker's work list.
 *
 * Only QPs that have had a CNP are paced: the requester asks one flag of
 * every other (dpr_req_run()). Where a RoCE NIC climbs back to its line
 * rate, a software box has none to climb to: a QP starts at the delivery
 * rate it measured (its window's, dpr_comp.c) and sends unpaced again once
 * release_periods timer stages pass without a CNP, or its rate reaches
 * line_rate. Rates are doubles in bit/s: this runs on CNPs, timers and
 * the paced QPs' runs, never per packet of an unpaced one.
 */

#include "transport_private.h"

#define NS 1e9

/* @p x to the @p n (by squaring; no libm for one power) */
static double
power(double x, uint64_t n)
{
	double r = 1.0;

	for (; n != 0 && r != 0.0; n >>= 1, x *= x)
		if (n & 1)
			r *= x;
	return r;
}

void
dpr_cc_defaults(struct dpr_cc_params *p)
{
	/* ConnectX's (mlxconfig), but line_rate and release_periods */
	*p = (struct dpr_cc_params){
		.react = true, .ect = true,
		.line_rate_bps = 100000000000ull,
		.min_rate_bps = 1000000, .ai_rate_bps = 5000000,
		.hai_rate_bps = 50000000,
		.decrease_period_ns = 4000, .time_reset_ns = 300000,
		.byte_reset = 32767, .threshold = 1,
		.alpha_period_ns = 1000, .alpha_keep = 1019, .initial_alpha = 1023,
		.min_dec_fac = 50, .clamp = false, .release_periods = 10,
	};
}

/* alpha up to @p now: a period with a CNP moves it towards 1 by the gain,
 * one without towards 0 (computed for the periods passed, not ticked) */
static void
alpha_advance(struct dpr_tqp *qp, uint64_t now)
{
	const struct dpr_cc_params *p = &qp->tp->conf.cc;
	const double keep = p->alpha_keep / 1024.0;
	uint64_t n;

	if (now < qp->cc.alpha_time + p->alpha_period_ns)
		return;
	n = (now - qp->cc.alpha_time) / p->alpha_period_ns;
	qp->cc.alpha = keep * qp->cc.alpha + (qp->cc.alpha_cnp ? 1.0 - keep : 0.0);
	qp->cc.alpha_cnp = false;
	if (n > 1)
		qp->cc.alpha *= power(keep, n - 1);
	qp->cc.alpha_time += n * p->alpha_period_ns;
}

/* The timer at the next thing due: a cut a CNP asked for, a timer stage,
 * the release, the pacer's tokens */
static void
cc_arm(struct dpr_tqp *qp)
{
	const struct dpr_cc_params *p = &qp->tp->conf.cc;
	uint64_t d = qp->cc.next_increase;

	if (qp->cc.cnp_pending)
		d = RTE_MIN(d, qp->cc.last_cut + p->decrease_period_ns);
	if (p->release_periods != 0)
		d = RTE_MIN(d, qp->cc.last_cnp +
			    (uint64_t)p->release_periods * p->time_reset_ns);
	if (qp->cc.waiting)
		d = RTE_MIN(d, qp->cc.resume);
	dpr_timer_arm(qp->tp, &qp->cc.timer, d);
}

void
dpr_cc_stop(struct dpr_tqp *qp)
{
	qp->cc.limited = false;
	qp->cc.waiting = false;
	qp->cc.cnp_pending = false;
	dpr_timer_cancel(qp->tp, &qp->cc.timer);
}

/* Unpaced again */
static void
release(struct dpr_tqp *qp)
{
	const bool waited = qp->cc.waiting;

	dpr_cc_stop(qp);
	QP_STAT(qp, cc_released);
	if (waited)
		qp_work(qp);
}

/* A cut: DCQCN's rate decrease */
static void
cut(struct dpr_tqp *qp, uint64_t now)
{
	const struct dpr_cc_params *p = &qp->tp->conf.cc;
	double f;

	alpha_advance(qp, now);
	/* the target stays the rate before a run of cuts, unless a stage
	 * moved since the last one (clamp_tgt_rate_after_time_inc) */
	if (p->clamp || qp->cc.t_stage != 0 || qp->cc.b_stage != 0)
		qp->cc.target = qp->cc.rate;
	f = RTE_MAX(1.0 - qp->cc.alpha / 2, 1.0 - p->min_dec_fac / 100.0);
	qp->cc.rate = RTE_MAX(qp->cc.rate * f, (double)p->min_rate_bps);
	qp->cc.t_stage = 0;
	qp->cc.b_stage = 0;
	qp->cc.bytes = 0;
	qp->cc.cnp_pending = false;
	qp->cc.last_cut = now;
	qp->cc.next_increase = now + p->time_reset_ns;
	QP_STAT(qp, cc_cuts);
}

/* A stage passed with no CNP: fast recovery, additive or hyper increase
 * by the stages as they are (the caller moves its stage after) */
static void
increase(struct dpr_tqp *qp)
{
	const struct dpr_cc_params *p = &qp->tp->conf.cc;
	const uint32_t t = qp->cc.t_stage, b = p->byte_reset ? qp->cc.b_stage : t;

	if (RTE_MAX(t, b) < p->threshold)
		;                               /* fast recovery */
	else if (RTE_MIN(t, b) > p->threshold)
		qp->cc.target += (double)p->hai_rate_bps;
	else
		qp->cc.target += (double)p->ai_rate_bps;
	qp->cc.target = RTE_MIN(qp->cc.target, (double)p->line_rate_bps);
	qp->cc.rate = (qp->cc.rate + qp->cc.target) / 2;
	QP_STAT(qp, cc_increases);
	if (qp->cc.rate >= (double)p->line_rate_bps * 0.999)
		release(qp);
}

/* The rate a QP had before its first CNP: its delivery rate (PSNs per
 * 2^20 ns, full packets assumed), else the line rate */
static double
start_rate(const struct dpr_tqp *qp)
{
	const double line = (double)qp->tp->conf.cc.line_rate_bps;
	double r;

	if (qp->comp.dr_rate == 0)
		return line;
	r = (double)qp->comp.dr_rate * (qp->pmtu + DPR_F_BTH + DPR_ICRC_LEN) * 8 *
		NS / (double)(1u << 20);
	return RTE_MIN(r, line);
}

void
dpr_cc_cnp(struct dpr_tqp *qp)
{
	const struct dpr_cc_params *p = &qp->tp->conf.cc;
	const uint64_t now = qp->tp->now;
	bool first = false;

	if (!p->react || qp->type == DPR_QPT_UD)
		return;
	if (!qp->cc.limited) {
		qp->cc.limited = true;
		qp->cc.rate = qp->cc.target = start_rate(qp);
		qp->cc.alpha = p->initial_alpha / 1024.0;
		qp->cc.alpha_time = now;
		qp->cc.alpha_cnp = false;
		qp->cc.t_stage = qp->cc.b_stage = 0;
		qp->cc.bytes = 0;
		qp->cc.tokens = 0;
		qp->cc.token_time = now;
		qp->cc.waiting = false;
		qp->cc.next_increase = now + p->time_reset_ns;
		qp->cc.timer.kind = TIMER_CC;
		first = true;
	}
	alpha_advance(qp, now);
	qp->cc.alpha_cnp = true;
	qp->cc.cnp_pending = true;
	qp->cc.last_cnp = now;
	if (first || now - qp->cc.last_cut >= p->decrease_period_ns)
		cut(qp, now);
	cc_arm(qp);
}

void
dpr_cc_timer_fire(struct dpr_tqp *qp)
{
	const struct dpr_cc_params *p = &qp->tp->conf.cc;
	const uint64_t now = qp->tp->now;
	unsigned int k;

	if (!qp->cc.limited)
		return;
	if (qp->cc.cnp_pending && now - qp->cc.last_cut >= p->decrease_period_ns)
		cut(qp, now);
	/* (at most 64 stages at once: a clock that jumped) */
	for (k = 0; k < 64 && qp->cc.limited && now >= qp->cc.next_increase; k++) {
		increase(qp);
		qp->cc.t_stage++;
		qp->cc.next_increase += p->time_reset_ns;
	}
	if (!qp->cc.limited)
		return;
	if (now >= qp->cc.next_increase)
		qp->cc.next_increase = now + p->time_reset_ns;
	if (p->release_periods != 0 &&
	    now - qp->cc.last_cnp >= (uint64_t)p->release_periods * p->time_reset_ns) {
		release(qp);
		return;
	}
	if (qp->cc.waiting && now >= qp->cc.resume) {
		qp->cc.waiting = false;
		qp_work(qp);
	}
	cc_arm(qp);
}

/* The pacer holds @p qp until its tokens are back */
static void
hold(struct dpr_tqp *qp, uint64_t now)
{
	qp->cc.resume = now + (uint64_t)(-qp->cc.tokens * 8 * NS / qp->cc.rate) + 1;
	qp->cc.waiting = true;
	QP_STAT(qp, cc_paced);
	cc_arm(qp);
}

bool
dpr_cc_req_run(struct dpr_tqp *qp, uint32_t budget)
{
	const struct dpr_cc_params *p = &qp->tp->conf.cc;
	struct dpr_transport *tp = qp->tp;
	const uint64_t now = tp->now;
	const uint32_t h0 = tp->txq_head;
	/* a bucket of a decrease period's bytes, at least two frames */
	const double depth = RTE_MAX(2.0 * (qp->pmtu + 128),
				     qp->cc.rate * p->decrease_period_ns / (8 * NS));
	uint64_t bytes = 0;
	uint32_t n, i;
	unsigned int k;
	bool more;

	if (qp->cc.waiting && now < qp->cc.resume)
		return false;           /* (its timer puts it back to work) */
	qp->cc.waiting = false;
	qp->cc.tokens = RTE_MIN(qp->cc.tokens + (double)(now - qp->cc.token_time) *
				qp->cc.rate / (8 * NS), depth);
	qp->cc.token_time = now;
	if (qp->cc.tokens < 0) {
		hold(qp, now);
		return false;
	}
	n = (uint32_t)RTE_MIN((double)budget, qp->cc.tokens / qp->pmtu + 1);
	more = dpr_req_run_unpaced(qp, n);
	for (i = h0; i != tp->txq_head; i++)
		bytes += tp->txq[i & tp->txq_mask]->pkt_len;
	qp->cc.tokens -= (double)bytes;
	if (p->byte_reset != 0) {
		qp->cc.bytes += bytes;
		for (k = 0; k < 64 && qp->cc.limited && qp->cc.bytes >= p->byte_reset; k++) {
			qp->cc.bytes -= p->byte_reset;
			increase(qp);
			qp->cc.b_stage++;
		}
	}
	if (!qp->cc.limited)
		return more;
	if (qp->cc.tokens < 0 && more) {
		hold(qp, now);
		return false;
	}
	return more;
}

void
dpr_transport_set_cc(struct dpr_transport *tp, const struct dpr_cc_params *p)
{
	struct dpr_tqp *qp;

	tp->conf.cc = *p;
	TAILQ_FOREACH(qp, &tp->all, all_link)
		if (qp->cc.limited && !p->react)
			release(qp);
		else if (qp->cc.limited)
			cc_arm(qp);     /* (its next event by the new periods) */
}
