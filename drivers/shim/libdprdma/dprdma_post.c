/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * libdprdma's data path: WQEs written into a QP's or SRQ's ring under
 * its lock and published with one store (and a doorbell bit when the
 * worker sleeps on it), completions read from a CQ's ring. Nothing here
 * talks to the socket.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "libdprdma_private.h"

/* ibv values, as the ABI carries them */
enum { WR_SEND = 2, WR_SEND_WITH_IMM = 3, WR_RDMA_READ = 4,
       WR_ATOMIC_CMP_AND_SWP = 5, WR_ATOMIC_FETCH_AND_ADD = 6,
       WR_LOCAL_INV = 7, WR_BIND_MW = 8, WR_SEND_WITH_INV = 9 };
enum { QPT_UC = 3, QPT_UD = 4 };
#define SEND_INLINE 8u

/* --------------------------------------------------------------- CQ */

/* The calling thread's empty polls in a row, over all its CQs (a
 * program's progress loop polls several: UCX a send and a receive CQ a
 * transport). */
static __thread uint32_t empty_polls;

int
dprdma_poll_cq(struct dprdma_cq *cq, int n, dprdma_wc *wc)
{
	uint32_t prod;
	int i = 0;

	pthread_spin_lock(&cq->lock);
	prod = __atomic_load_n(&cq->ring->prod, __ATOMIC_ACQUIRE);
	while (i < n && cq->cons != prod) {
		wc[i++] = *(const dprdma_wc *)dpr_shm_ring_entry(cq->ring,
				sizeof(*wc), cq->size - 1, cq->cons);
		cq->cons++;
	}
	if (i != 0)
		__atomic_store_n(&cq->ring->cons, cq->cons, __ATOMIC_RELEASE);
	pthread_spin_unlock(&cq->lock);
	if (i != 0) {
		empty_polls = 0;
		return i;
	}
	if (__atomic_load_n(&cq->ring->overflow, __ATOMIC_ACQUIRE))
		return -EIO;
	/* a shared box: let the thread that makes the completion run */
	if (cq->ctx->poll_yield != 0 && ++empty_polls >= cq->ctx->poll_yield) {
		empty_polls = 0;
		sched_yield();
	}
	return 0;
}

void
dpr_cq_clean(struct dprdma_cq *cq, uint32_t qpn)
{
	uint32_t prod, i, freed = 0;

	pthread_spin_lock(&cq->lock);
	prod = __atomic_load_n(&cq->ring->prod, __ATOMIC_ACQUIRE);
	/* newest first: a kept entry moves up over the ones taken out,
	 * into slots below prod, which the daemon no longer writes; then
	 * the consumer index moves past what was freed */
	for (i = prod; i != cq->cons; i--) {
		dprdma_wc *e = dpr_shm_ring_entry(cq->ring, sizeof(*e),
						  cq->size - 1, i - 1);

		if (e->qp_num == qpn)
			freed++;
		else if (freed != 0)
			*(dprdma_wc *)dpr_shm_ring_entry(cq->ring, sizeof(*e),
					cq->size - 1, i - 1 + freed) = *e;
	}
	if (freed != 0) {
		cq->cons += freed;
		__atomic_store_n(&cq->ring->cons, cq->cons, __ATOMIC_RELEASE);
	}
	pthread_spin_unlock(&cq->lock);
}

int
dprdma_req_notify_cq(struct dprdma_cq *cq, int solicited_only)
{
	if (cq->ch == NULL)
		return EINVAL;
	/* the fence orders this store before the loads of prod in the
	 * ibv_poll_cq that follows (the daemon fences the other way) */
	__atomic_store_n(&cq->ring->armed, solicited_only ? 2 : 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 0;
}

/* --------------------------------------------------------------- QP */

/*
 * Ring lines this core is about to write, asked for with intent to write
 * (PREFETCHW) so that their transfer from the worker's core, which read
 * them a lap ago, overlaps the posts before them. A post's stores to a
 * line the worker's core holds each wait for that line (a transfer
 * between the cores), and the next post's lock waits for them: perf put
 * 85% of a client posting 64 B WRITEs in pthread_spin_lock, the shim at
 * 0.5-0.6 of the built-in client. Whether the CPU has the instruction is
 * asked at run time (CPUID PRFCHW): the library is built for the
 * baseline ISA, and older CPUs lack it.
 */
#if defined(__x86_64__) || defined(__i386__)
static bool have_prefetchw;

__attribute__((constructor)) static void
probe_prefetchw(void)
{
	unsigned int a, b, c, d;

	have_prefetchw = __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c & bit_PRFCHW);
}

static inline void
prefetch_for_write(const void *p)
{
	if (have_prefetchw)
		__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
}
#else
static inline void
prefetch_for_write(const void *p)
{
	__builtin_prefetch(p, 1, 3);
}
#endif

/* Entries asked for ahead of the producer (PREFETCHW) */
#define RING_WRITE_AHEAD 8

void
dprdma_post_begin(struct dprdma_qp *qp)
{
	pthread_spin_lock(&qp->lock);
}

struct dpr_shm_swqe *
dprdma_sq_next(struct dprdma_qp *qp)
{
	struct dpr_shm_swqe *w;

	if (qp->sq_prod - qp->sq_cons >= qp->sq_size) {
		qp->sq_cons = __atomic_load_n(&qp->sq->cons, __ATOMIC_ACQUIRE);
		if (qp->sq_prod - qp->sq_cons >= qp->sq_size)
			return NULL;
	}
	/* the producer's line, on a post's first send entry: the worker
	 * takes it each round */
	if (qp->sq_prod == qp->sq_pub)
		prefetch_for_write(&qp->sq->prod);
	w = dpr_shm_ring_entry(qp->sq, sizeof(*w), qp->sq_size - 1, qp->sq_prod);
	qp->sq_prod++;
	/* (a one-SGE request is its entry's first line) */
	prefetch_for_write(dpr_shm_ring_entry(qp->sq, sizeof(*w), qp->sq_size - 1,
					      qp->sq_prod + RING_WRITE_AHEAD));
	return w;
}

struct dpr_shm_rwqe *
dprdma_rq_next(struct dprdma_qp *qp)
{
	struct dpr_shm_rwqe *w;

	if (qp->rq_prod - qp->rq_cons >= qp->rq_size) {
		qp->rq_cons = __atomic_load_n(&qp->rq->cons, __ATOMIC_ACQUIRE);
		if (qp->rq_prod - qp->rq_cons >= qp->rq_size)
			return NULL;
	}
	w = dpr_shm_ring_entry(qp->rq, sizeof(*w), qp->rq_size - 1, qp->rq_prod);
	qp->rq_prod++;
	prefetch_for_write(dpr_shm_ring_entry(qp->rq, sizeof(*w), qp->rq_size - 1,
					      qp->rq_prod + RING_WRITE_AHEAD));
	return w;
}


/* The QP of @p slot's doorbell bit, then its word's summary bit (lib/shm,
 * Doorbells). Sequentially consistent, so that a summary bit seen set
 * (and so not set again) is one the worker takes after our doorbell
 * bit is in: it then takes that bit too. */
static inline void
ring_doorbell(struct dpr_shm_ctrl *ctrl, uint32_t slot)
{
	const uint64_t sbit = 1ull << (slot / 64 % 64);

	__atomic_fetch_or(&ctrl->doorbell[slot / 64], 1ull << (slot % 64),
			  __ATOMIC_SEQ_CST);
	if (!(__atomic_load_n(&ctrl->db_summary[slot / 4096], __ATOMIC_SEQ_CST) & sbit))
		__atomic_fetch_or(&ctrl->db_summary[slot / 4096], sbit, __ATOMIC_SEQ_CST);
}

void
dprdma_post_end(struct dprdma_qp *qp)
{
	bool rang = false;

	if (qp->sq_prod != qp->sq_pub) {
		__atomic_store_n(&qp->sq->prod, qp->sq_prod, __ATOMIC_RELEASE);
		qp->sq_pub = qp->sq_prod;
		rang = true;
	}
	if (qp->rq_prod != qp->rq_pub) {
		__atomic_store_n(&qp->rq->prod, qp->rq_prod, __ATOMIC_RELEASE);
		qp->rq_pub = qp->rq_prod;
		rang = true;
	}
	/* the doorbell only while the worker does not look at the rings
	 * every round (lib/shm/dpr_shm.h, Doorbells; no fence before the
	 * read of idle: the worker's grace and sweep cover its reordering
	 * before the producers' stores) */
	if (rang && __atomic_load_n(&qp->sq->idle, __ATOMIC_ACQUIRE) != 0)
		ring_doorbell(qp->ctx->ctrl, qp->slot);
	/* a worker that naps is woken (lib/shm/dpr_shm.h, Naps) */
	if (rang && __atomic_load_n(&qp->ctx->ctrl->napping, __ATOMIC_ACQUIRE) != 0 &&
	    qp->ctx->wake_fd >= 0) {
		const uint64_t one = 1;

		if (write(qp->ctx->wake_fd, &one, sizeof(one)) < 0) {
			/* a full eventfd wakes it all the same */
		}
	}
	pthread_spin_unlock(&qp->lock);
}

void
dprdma_post_abort(struct dprdma_qp *qp)
{
	qp->sq_prod = qp->sq_pub;
	qp->rq_prod = qp->rq_pub;
	pthread_spin_unlock(&qp->lock);
}

int
dprdma_check_send(const struct dprdma_qp *qp, uint32_t opcode, uint32_t flags,
		  uint64_t count)
{
	if (opcode > WR_SEND_WITH_INV)
		return EINVAL;
	/* a datagram service carries SENDs only (IBA 9.8.1) */
	if (qp->qp_type == QPT_UD && opcode != WR_SEND && opcode != WR_SEND_WITH_IMM)
		return EINVAL;
	/* UC: SENDs and WRITEs (IBA 9.8.2), binds and local invalidations */
	if (qp->qp_type == QPT_UC && opcode >= WR_RDMA_READ &&
	    opcode != WR_LOCAL_INV && opcode != WR_BIND_MW)
		return EINVAL;
	/* a bind or an invalidation carries no data */
	if (opcode == WR_LOCAL_INV || opcode == WR_BIND_MW)
		return 0;
	if (flags & SEND_INLINE)
		return count > qp->cap.max_inline_data || opcode == WR_RDMA_READ ||
		       opcode == WR_ATOMIC_CMP_AND_SWP ||
		       opcode == WR_ATOMIC_FETCH_AND_ADD ? EINVAL : 0;
	return count > qp->cap.max_send_sge ? EINVAL : 0;
}

int
dprdma_check_swqe(const struct dprdma_qp *qp, const struct dpr_shm_swqe *w)
{
	return dprdma_check_send(qp, w->opcode, w->send_flags, w->num_sge);
}

/* --------------------------------------------------------------- SRQ */

void
dprdma_srq_post_begin(struct dprdma_srq *srq)
{
	pthread_spin_lock(&srq->lock);
}

struct dpr_shm_rwqe *
dprdma_srq_next(struct dprdma_srq *srq)
{
	uint32_t cons = __atomic_load_n(&srq->ring->cons, __ATOMIC_ACQUIRE);
	struct dpr_shm_rwqe *w;

	if (srq->prod - cons >= srq->size)
		return NULL;
	w = dpr_shm_ring_entry(srq->ring, sizeof(*w), srq->size - 1, srq->prod);
	srq->prod++;
	return w;
}

void
dprdma_srq_post_end(struct dprdma_srq *srq)
{
	/* no doorbell: the daemon looks at SRQ rings every round */
	if (srq->prod != srq->pub) {
		__atomic_store_n(&srq->ring->prod, srq->prod, __ATOMIC_RELEASE);
		srq->pub = srq->prod;
	}
	pthread_spin_unlock(&srq->lock);
}
