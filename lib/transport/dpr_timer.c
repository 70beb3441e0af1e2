/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Timers on the transport's clock: a hashed wheel of 1024 slots of 16.4 us.
 * A timer longer than a turn stays in its slot and is looked at once per
 * turn until due. rte_timer would read the TSC itself; these timers run on
 * the clock the transport is given, so tests run on virtual time.
 */

#include "transport_private.h"

/* IBA 9.7.5.2.8 table 45: RNR NAK timer field -> its wait in units of
 * 10 us (the table's 0.01 ms to 655.36 ms) */
static const uint32_t rnr_10us[32] = {
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
	12288, 16384, 24576, 32768, 49152,
};

uint64_t
dpr_rnr_timer_ns(uint8_t code)
{
	return (uint64_t)rnr_10us[code & 0x1f] * 10000;
}

void
dpr_wheel_init(struct dpr_wheel *w, uint64_t now)
{
	unsigned int i;

	for (i = 0; i < WHEEL_SLOTS; i++)
		TAILQ_INIT(&w->slot[i]);
	w->tick = now >> WHEEL_SHIFT;
	w->armed = 0;
}

void
dpr_timer_cancel(struct dpr_transport *tp, struct dpr_timer *t)
{
	if (!t->armed)
		return;
	TAILQ_REMOVE(&tp->wheel.slot[(t->deadline >> WHEEL_SHIFT) % WHEEL_SLOTS],
		     t, link);
	t->armed = false;
	tp->wheel.armed--;
}

void
dpr_timer_arm(struct dpr_transport *tp, struct dpr_timer *t, uint64_t deadline)
{
	dpr_timer_cancel(tp, t);
	/* never behind the slot the wheel is at */
	if ((deadline >> WHEEL_SHIFT) < tp->wheel.tick)
		deadline = tp->wheel.tick << WHEEL_SHIFT;
	t->deadline = deadline;
	t->armed = true;
	TAILQ_INSERT_TAIL(&tp->wheel.slot[(deadline >> WHEEL_SHIFT) % WHEEL_SLOTS],
			  t, link);
	tp->wheel.armed++;
}

void
dpr_wheel_run(struct dpr_transport *tp, uint64_t now)
{
	struct dpr_wheel *w = &tp->wheel;
	uint64_t end = now >> WHEEL_SHIFT, tick;

	if (w->armed == 0) {
		w->tick = end;
		return;
	}
	/* at most one turn: every slot once */
	tick = end - w->tick >= WHEEL_SLOTS ? end - WHEEL_SLOTS + 1 : w->tick;
	for (; tick <= end; tick++) {
		struct dpr_timer_list *l = &w->slot[tick % WHEEL_SLOTS];
		struct dpr_timer *t, *next;

		for (t = TAILQ_FIRST(l); t != NULL; t = next) {
			next = TAILQ_NEXT(t, link);
			if (t->deadline > now)
				continue;
			TAILQ_REMOVE(l, t, link);
			t->armed = false;
			w->armed--;
			if (t->kind == TIMER_CC)
				dpr_cc_timer_fire(container_of(t, struct dpr_tqp, cc.timer));
			else
				dpr_qp_timer_fire(container_of(t, struct dpr_tqp, timer));
			/* the handler may have re-armed timers in this slot */
			next = TAILQ_FIRST(l);
			while (next != NULL && next->deadline > now)
				next = TAILQ_NEXT(next, link);
		}
	}
	w->tick = end;
}

uint64_t
dpr_wheel_next_before(const struct dpr_wheel *w, uint64_t limit)
{
	const uint64_t end = limit >> WHEEL_SHIFT;
	uint64_t best = UINT64_MAX, tick;

	if (w->armed == 0 || end < w->tick)
		return UINT64_MAX;
	/* the slots from the wheel's to @p limit's, at most a turn: a nap
	 * is a few of them (100 us, 7) */
	for (tick = end - w->tick >= WHEEL_SLOTS ? end - WHEEL_SLOTS + 1 : w->tick;
	     tick <= end; tick++) {
		const struct dpr_timer *t;

		TAILQ_FOREACH(t, &w->slot[tick % WHEEL_SLOTS], link)
			if (t->deadline <= limit && t->deadline < best)
				best = t->deadline;
	}
	return best;
}

uint64_t
dpr_wheel_next(const struct dpr_wheel *w)
{
	/* (for tests and idle sleeps, not for the fast path: every slot) */
	return dpr_wheel_next_before(w, UINT64_MAX);
}
