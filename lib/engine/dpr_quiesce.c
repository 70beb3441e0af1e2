/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * A grace period before a port's shared memory is unmapped.
 *
 * DPDK 22.11's memif PMD tears a connection down on the EAL interrupt
 * thread when its peer goes (memif_disconnect(): the connected flag
 * cleared, the rings' region unmapped at once), and nothing orders that
 * against a worker inside rx_burst or tx_burst on the same rings: a
 * worker that read the flag just before it was cleared then reads an
 * unmapped ring, and dprdmad dies of a SEGV in the PMD's copy loop (seen
 * in CI: the gen test, a dprdma-gen peer that exited while the daemon was
 * still receiving its frames; under ASan that case crashed the daemon
 * after 2, 6 and 12 such exits, and after none of 120 with this file).
 * The PMD takes no lock the datapath shares, and
 * ethdev offers no hook between the flag and the unmapping.
 *
 * So dprdmad interposes munmap(). Called on the EAL interrupt thread
 * while workers run, it first waits for a grace period of DPDK's QSBR
 * (rte_rcu_qsbr): each worker reports a quiescent state at the top of
 * its loop, outside any burst, and is offline while it naps. Once every
 * online worker has reported after the wait began, none is still inside
 * a burst that began before the flag was cleared, and every later burst
 * sees the flag cleared (QSBR's token orders the two). Other threads'
 * munmap() go straight through, and so does the interrupt thread's when
 * no worker runs. A worker stuck in one loop for longer than
 * QUIESCE_MAX_NS lets the unmapping go ahead (logged): today's behaviour,
 * never a hang of the interrupt thread.
 */

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <rte_common.h>
#include <rte_interrupts.h>
#include <rte_rcu_qsbr.h>

#include "engine_private.h"

#define QUIESCE_MAX_NS 1000000000ull    /* 1 s */

struct rte_rcu_qsbr *dpr_quiesce_v;
static uint64_t quiesce_waits, quiesce_timeouts;

/* The munmap() this one stands in front of: AddressSanitizer's (linked
 * into the executable, when it is), else the next in the lookup order
 * (libc's), else the system call. */
extern int __interceptor_munmap(void *addr, size_t len) __attribute__((weak));
static int (*next_munmap)(void *addr, size_t len);

static void __attribute__((constructor))
find_next_munmap(void)
{
	next_munmap = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
}

static int
real_munmap(void *addr, size_t len)
{
	if (__interceptor_munmap != NULL)
		return __interceptor_munmap(addr, len);
	if (next_munmap != NULL && next_munmap != munmap)
		return next_munmap(addr, len);
	return (int)syscall(SYS_munmap, addr, len);
}

/* On the interrupt thread: until every online worker passed the top of
 * its loop (or QUIESCE_MAX_NS). */
static void
quiesce_wait(struct rte_rcu_qsbr *v)
{
	const uint64_t token = rte_rcu_qsbr_start(v);
	const uint64_t until = dpr_engine_ns() + QUIESCE_MAX_NS;
	const struct timespec us10 = { .tv_nsec = 10000 };

	__atomic_fetch_add(&quiesce_waits, 1, __ATOMIC_RELAXED);
	while (rte_rcu_qsbr_check(v, token, false) == 0) {
		if (dpr_engine_ns() >= until) {
			__atomic_fetch_add(&quiesce_timeouts, 1, __ATOMIC_RELAXED);
			ENGINE_LOG(WARNING, "a worker passed no quiescent point in "
				   "1 s: a port's memory is unmapped without it");
			return;
		}
		nanosleep(&us10, NULL);
	}
}

int
munmap(void *addr, size_t len)
{
	struct rte_rcu_qsbr *v = __atomic_load_n(&dpr_quiesce_v, __ATOMIC_ACQUIRE);

	if (v != NULL && rte_thread_is_intr())
		quiesce_wait(v);
	return real_munmap(addr, len);
}

/* The QSBR variable, made once for DPR_MAX_WORKERS and kept for the
 * process's life: an unmapping on the interrupt thread may still look at
 * it whatever the engine does (workers register as they start). */
int
dpr_quiesce_init(void)
{
	const size_t sz = rte_rcu_qsbr_get_memsize(DPR_MAX_WORKERS);
	struct rte_rcu_qsbr *v;

	if (dpr_quiesce_v != NULL)
		return 0;
	v = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL(sz, RTE_CACHE_LINE_SIZE));
	if (v == NULL)
		return -ENOMEM;
	if (rte_rcu_qsbr_init(v, DPR_MAX_WORKERS) != 0) {
		free(v);
		return -EINVAL;
	}
	__atomic_store_n(&dpr_quiesce_v, v, __ATOMIC_RELEASE);
	return 0;
}

void
dpr_quiesce_stats(uint64_t *waits, uint64_t *timeouts)
{
	*waits = __atomic_load_n(&quiesce_waits, __ATOMIC_RELAXED);
	*timeouts = __atomic_load_n(&quiesce_timeouts, __ATOMIC_RELAXED);
}
