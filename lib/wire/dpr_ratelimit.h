/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Rate-limited log lines: an event an operator should hear of (a QP to
 * ERR, a client refused) may come by the thousand in a second; the first
 * DPR_RL_BURST lines of each second are printed, the rest counted and
 * announced with the next line that gets through. One state per kind of
 * event; workers may share one (the counts are then approximate, which a
 * log may be: relaxed atomics, no lock).
 */

#ifndef DPR_RATELIMIT_H
#define DPR_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#define DPR_RL_BURST 10

struct dpr_ratelimit {
	uint64_t sec;
	uint32_t n;
	uint32_t missed;
};

/** May a line be printed now? *@p missed: lines suppressed before it. */
static inline bool
dpr_ratelimit(struct dpr_ratelimit *rl, uint32_t *missed)
{
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec;
	if (__atomic_load_n(&rl->sec, __ATOMIC_RELAXED) != now) {
		__atomic_store_n(&rl->sec, now, __ATOMIC_RELAXED);
		__atomic_store_n(&rl->n, 0, __ATOMIC_RELAXED);
	}
	if (__atomic_fetch_add(&rl->n, 1, __ATOMIC_RELAXED) >= DPR_RL_BURST) {
		__atomic_fetch_add(&rl->missed, 1, __ATOMIC_RELAXED);
		return false;
	}
	*missed = __atomic_exchange_n(&rl->missed, 0, __ATOMIC_RELAXED);
	return true;
}

#endif /* DPR_RATELIMIT_H */
