/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The shim on the workers: once per loop (dpr_shim_worker_poll, the
 * engine's worker hook) each worker takes the doorbells of the clients it
 * serves and drains the rung QPs' send and receive rings into the
 * transport; the transport's completions go into the clients' CQ rings
 * (shim_cq_push, with a word down a completion channel for a client that
 * sleeps), and its events to the clients' event queues. Everything read
 * from shared memory is copied before it is checked.
 */

#include <assert.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_prefetch.h>

#include "shim_private.h"

/* An asynchronous event for a client (on its worker: one writer). */
static void
raise_event(struct shim_client *c, enum dpr_event_type type, uint32_t handle)
{
	struct dpr_shm_ctrl *ctrl = c->ctrl;
	uint32_t i = ctrl->ev_prod;
	const uint64_t one = 1;

	ctrl->ev[i % DPR_SHM_EVENTS].type = type;
	ctrl->ev[i % DPR_SHM_EVENTS].handle = handle;
	__atomic_store_n(&ctrl->ev_prod, i + 1, __ATOMIC_RELEASE);
	shim.ws[c->worker].async_events++;
	if (c->async_fd >= 0 && write(c->async_fd, &one, sizeof(one)) < 0)
		return;         /* a full eventfd still wakes the reader */
}

struct port_event {
	uint16_t pi;
	unsigned int wi;                /* the worker it runs on */
	enum dpr_event_type type;
};

/* On a worker: the event to each of its clients of the port. */
static int
port_event_run(void *arg)
{
	const struct port_event *pe = arg;
	unsigned int wi = pe->wi;

	for (unsigned int i = 0; i < shim.wn[wi]; i++) {
		struct shim_client *c = shim.wl[wi][i];

		if (c->port == pe->pi)
			raise_event(c, pe->type, 1);    /* port number 1 */
	}
	return 0;
}

/* On a worker, dprdmad stopping: each of its clients' QPs to ERR (their
 * work flushed), then DEVICE_FATAL to the client, as overflow_to_err()
 * does for one CQ. */
static int
drain_run(void *arg)
{
	const unsigned int wi = (unsigned int)(uintptr_t)arg;
	struct dpr_qp_attr a = { .qp_state = DPR_QPS_ERR };

	for (unsigned int i = 0; i < shim.wn[wi]; i++) {
		struct shim_client *c = shim.wl[wi][i];

		for (unsigned int k = 0; k < c->slot_hi; k++)
			if (c->qps[k] != NULL)
				dpr_qp_modify(c->qps[k]->qp, &a, DPR_QP_STATE);
		raise_event(c, DPR_EVENT_DEVICE_FATAL, 0);
	}
	return 0;
}

void
shim_drain_clients(void)
{
	for (unsigned int wi = 0; wi < dpr_engine_n_workers(); wi++)
		dpr_engine_run_on(wi, drain_run, (void *)(uintptr_t)wi);
}

/*
 * The link of each port, looked at every 100 ms from the main lcore: a
 * change is logged and every client of the port gets IBV_EVENT_PORT_ERR
 * or IBV_EVENT_PORT_ACTIVE (as rxe raises them when its netdev's carrier
 * goes). memif's link follows its peer, af_packet's and tap's their
 * interface's.
 */
void
shim_link_watch(void)
{
	static uint64_t next_ms;
	static int8_t last[RTE_MAX_ETHPORTS];
	struct timespec ts;
	uint64_t now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	if (now < next_ms)
		return;
	next_ms = now + 100;
	for (uint16_t pi = 0; pi < dpr_engine_n_ports(); pi++) {
		struct dpr_port_info info;
		struct port_event pe = { .pi = pi };
		int8_t up;

		if (dpr_engine_port_info(pi, &info) != 0)
			continue;
		up = info.link_up ? 1 : -1;
		if (last[pi] == up)
			continue;
		if (last[pi] != 0) {
			SHIM_LOG(NOTICE, "dprdma%u (%s): link %s", pi, info.name,
				 up > 0 ? "up" : "down");
			pe.type = up > 0 ? DPR_EVENT_PORT_ACTIVE : DPR_EVENT_PORT_ERR;
			for (pe.wi = 0; pe.wi < dpr_engine_n_workers(); pe.wi++)
				dpr_engine_run_on(pe.wi, port_event_run, &pe);
		}
		last[pi] = up;
	}
}

/* Per port: QP table slot -> the client's QP, for the transport's events
 * (written by the QP's worker when it is made or goes). By slot, not by
 * number: QPNs carry random bits above the slot (lib/verbs). */
static struct shim_qp **qp_by_slot[RTE_MAX_ETHPORTS];
static uint32_t qp_by_slot_len[RTE_MAX_ETHPORTS];

int
shim_qp_table_init(uint16_t pi, uint32_t n)
{
	free(qp_by_slot[pi]);
	qp_by_slot[pi] = calloc(n, sizeof(*qp_by_slot[pi]));
	if (qp_by_slot[pi] == NULL) {
		qp_by_slot_len[pi] = 0;
		return -ENOMEM;
	}
	qp_by_slot_len[pi] = n;
	return 0;
}

void
shim_qp_table_set(uint16_t pi, uint32_t qpn, struct shim_qp *q)
{
	uint32_t s = dpr_qpn_slot(dpr_engine_verbs(pi), qpn);

	/* (a slot's next QP may be in the table before its last one's
	 * destruction job clears it) */
	if (s < qp_by_slot_len[pi] &&
	    (q != NULL || (qp_by_slot[pi][s] != NULL && qp_by_slot[pi][s]->qpn == qpn)))
		qp_by_slot[pi][s] = q;
}

void
shim_verbs_event(void *arg, enum dpr_event_type type, uint32_t obj)
{
	uint16_t pi = (uint16_t)(uintptr_t)arg;
	uint32_t s = dpr_qpn_slot(dpr_engine_verbs(pi), obj);
	struct shim_qp *q;

	/* CQ errors of clients are raised where they overflow (shim_cq_push) */
	if (type == DPR_EVENT_CQ_ERR || s >= qp_by_slot_len[pi])
		return;
	q = qp_by_slot[pi][s];
	if (q != NULL && q->qpn == obj)
		raise_event(q->c, type, q->handle);
}

/* A CQ overflowed: the QPs that complete into it go to ERR (their work
 * flushed), each with a QP_FATAL event, as a device does. */
static void
overflow_to_err(struct shim_client *c)
{
	struct dpr_qp_attr a = { .qp_state = DPR_QPS_ERR };
	unsigned int i;

	c->overflow_pending = false;
	for (i = 0; i < c->slot_hi; i++) {
		struct shim_qp *q = c->qps[i];

		if (q == NULL || q->errored ||
		    !(q->scq->overflowed || q->rcq->overflowed))
			continue;
		q->errored = true;
		dpr_qp_modify(q->qp, &a, DPR_QP_STATE);
		raise_event(c, DPR_EVENT_QP_FATAL, q->handle);
	}
}

/* A sleeping client asked to be woken: one word down its channel (a
 * pipe, not an eventfd: it says which CQ). Solicited-only arming wakes on
 * any completion: a spurious wake-up, which verbs allow.
 * The client stores armed and then loads prod; we have stored prod and
 * now load armed. Without a full fence between the two, x86 lets our load
 * pass our store in the store buffer: both sides read the old value, the
 * client sleeps on a CQ it saw empty and we send no word, a lost wake-up
 * (ibv_rc_pingpong -e hung both ends about 1 run in 25). Only CQs with a
 * channel pay for the fence. */
static void
channel_signal(struct shim_cq *s, unsigned int wi)
{
	uint32_t h = s->handle;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&s->ring->armed, __ATOMIC_RELAXED) == 0 ||
	    __atomic_exchange_n(&s->ring->armed, 0, __ATOMIC_ACQ_REL) == 0)
		return;
	if (write(s->chan_fd, &h, sizeof(h)) == sizeof(h))
		shim.ws[wi].channel_signals++;
}

int
shim_cq_push(struct dpr_cq *cq, const struct dpr_cqe *e)
{
	struct shim_cq *s = cq->push_arg;
	unsigned int wi = s->c->worker;
	struct dpr_shm_cqe *o;

	if (unlikely(s->prod - s->cons_seen >= s->cqe))
		s->cons_seen = __atomic_load_n(&s->ring->cons, __ATOMIC_ACQUIRE);
	if (s->overflowed || s->prod - s->cons_seen >= s->cqe) {
		if (!s->overflowed) {
			/* IBA 11.4.2.1: the CQ is in error from now on */
			s->overflowed = true;
			__atomic_store_n(&s->ring->overflow, 1, __ATOMIC_RELEASE);
			shim.ws[wi].cq_overflows++;
			raise_event(s->c, DPR_EVENT_CQ_ERR, s->handle);
			s->c->overflow_pending = true;
		}
		return -ENOSPC;
	}
	o = dpr_shm_ring_entry(s->ring, sizeof(*o), s->size - 1, s->prod);
	o->wr_id = e->wr_id;
	o->status = e->status;
	o->opcode = e->opcode;
	o->vendor_err = e->vendor_err;
	o->byte_len = e->byte_len;
	o->imm_data = e->imm_data;
	o->qp_num = e->qp_num;
	o->src_qp = e->src_qp;
	RTE_BUILD_BUG_ON((uint32_t)DPR_WC_NET_IPV4 != DPR_SHM_WC_NET_IPV4 ||
			 (uint32_t)DPR_WC_NET_IPV6 != DPR_SHM_WC_NET_IPV6);
	o->wc_flags = e->wc_flags;
	s->prod++;
	__atomic_store_n(&s->ring->prod, s->prod, __ATOMIC_RELEASE);
	shim.ws[wi].cqes++;
	if (s->chan_fd >= 0)
		channel_signal(s, wi);
	return 0;
}

static void
flush_error(struct shim_qp *q, const struct dpr_send_wr *w)
{
	struct dpr_cqe e = {
		.wr_id = w->wr_id,
		.status = DPR_WC_LOC_QP_OP_ERR,
		.opcode = DPR_WC_SEND,
		.qp_num = q->qpn,
	};

	dpr_cq_push(q->scq->cq, &e);
}

/* The ring entries are the transport's work requests, field for field:
 * one shape from the client to dpr_post_send(), which checks them. */
static_assert(sizeof(struct dpr_shm_swqe) == sizeof(struct dpr_send_wr), "swqe");
static_assert(offsetof(struct dpr_shm_swqe, num_sge) ==
	      offsetof(struct dpr_send_wr, num_sge), "swqe num_sge");
static_assert(offsetof(struct dpr_shm_swqe, rkey) ==
	      offsetof(struct dpr_send_wr, rkey), "swqe rkey");
static_assert(offsetof(struct dpr_shm_swqe, sge) ==
	      offsetof(struct dpr_send_wr, sge), "swqe sge");
static_assert(offsetof(struct dpr_shm_swqe, compare_add) ==
	      offsetof(struct dpr_send_wr, compare_add) &&
	      offsetof(struct dpr_shm_swqe, ud) == offsetof(struct dpr_send_wr, ud) &&
	      sizeof(((struct dpr_shm_swqe *)0)->ud) == sizeof(struct dpr_ud_dest),
	      "swqe atomics, UD destination");
static_assert(offsetof(struct dpr_shm_swqe, bind) == offsetof(struct dpr_send_wr, bind) &&
	      offsetof(struct dpr_shm_swqe, bind.addr) ==
	      offsetof(struct dpr_send_wr, bind.addr) &&
	      sizeof(((struct dpr_shm_swqe *)0)->bind) == sizeof(struct dpr_mw_bind),
	      "swqe bind");
static_assert(sizeof(struct dpr_shm_sge) == sizeof(struct dpr_sge), "sge");
static_assert(DPR_SHM_MAX_SEND_SGE == DPR_WR_MAX_SGE &&
	      DPR_SHM_MAX_INLINE == DPR_WR_MAX_INLINE &&
	      DPR_SHM_MAX_RECV_SGE == DPR_RECV_WR_MAX_SGE, "limits");
static_assert(sizeof(struct dpr_shm_rwqe) == sizeof(struct dpr_recv_wr), "rwqe");
static_assert(offsetof(struct dpr_shm_rwqe, sge) ==
	      offsetof(struct dpr_recv_wr, sge), "rwqe sge");

/* Ring entries taken per post (a copy on the worker's stack). */
#define DRAIN_BATCH 16
/* Send ring entries asked for (prefetched) a round ahead, at most */
#define DRAIN_AHEAD 32

/*
 * A send ring entry into @p wr: the header, then only the SGEs or inline
 * bytes it names, at most what the request holds (the count as copied is
 * what dpr_post_send() checks: nothing is read twice from shared memory),
 * and the atomic operands or the UD destination where they count (@p ud:
 * the QP is UD). A one-SGE SEND, WRITE or READ is read from one line.
 */
static void
copy_swqe(struct dpr_send_wr *wr, const struct dpr_shm_swqe *src, bool ud)
{
	memcpy(wr, src, offsetof(struct dpr_send_wr, sge));
	if (wr->send_flags & DPR_SEND_INLINE)
		memcpy(wr->inline_data, src->inline_data,
		       RTE_MIN(wr->num_sge, (uint32_t)DPR_WR_MAX_INLINE));
	else if (likely(wr->num_sge == 1))
		/* (a variable-length copy here became rep movsq, whose start
		 * cost a third of the drain: perf, WRITE 64 B) */
		memcpy(wr->sge, src->sge, sizeof(wr->sge[0]));
	else
		memcpy(wr->sge, src->sge, RTE_MIN(wr->num_sge,
		       (uint32_t)DPR_WR_MAX_SGE) * sizeof(wr->sge[0]));
	if (ud)
		memcpy(&wr->ud, &src->ud, sizeof(wr->ud));
	else if (wr->opcode == DPR_WR_ATOMIC_CMP_AND_SWP ||
		 wr->opcode == DPR_WR_ATOMIC_FETCH_AND_ADD)
		memcpy(&wr->compare_add, &src->compare_add, 2 * sizeof(uint64_t));
	else if (wr->opcode == DPR_WR_BIND_MW)
		memcpy(&wr->bind, &src->bind, sizeof(wr->bind));
}

/* The send ring's entry at @p idx */
static inline const struct dpr_shm_swqe *
sq_entry(const struct shim_qp *q, uint32_t idx)
{
	return dpr_shm_ring_entry(q->sq, sizeof(struct dpr_send_wr), q->sq_size - 1, idx);
}

/*
 * Take what the client posted to its SQ into the transport. The entries'
 * lines are the client's core's, each read a transfer between the cores:
 * while the client keeps posting (the last round found new entries too),
 * the entries found in one round are asked for (prefetched) then and
 * taken in the next, when their lines have come (at 64 B WRITEs through
 * the shim the worker stalled on each round's first entry). Entries found
 * after a round that found none, as those of a client posting one
 * request and waiting for it, are taken at once: no round added to its
 * latency. @return true while entries are left (for the next round, or
 * the transport's queue was full).
 */
static bool
drain_sq(struct shim_qp *q, unsigned int wi)
{
	const uint32_t prod = __atomic_load_n(&q->sq->prod, __ATOMIC_ACQUIRE);
	uint32_t cons = q->sq_cons, seen = q->sq_seen, ahead, take, k;
	bool left = false;

	if (prod == cons) {
		q->sq_streak = false;
		return false;   /* (cons not written again: the client reads it) */
	}
	if (prod - cons > q->sq_size) {
		if (!q->broken)
			shim.ws[wi].ring_index_errors++;
		q->broken = true;
		return false;
	}
	if (seen - cons > prod - cons)
		seen = cons;    /* (a client that moved its producer back) */
	ahead = seen + RTE_MIN(prod - seen, (uint32_t)DRAIN_AHEAD);
	for (k = seen; k != ahead; k++)
		rte_prefetch0(sq_entry(q, k));
	take = q->sq_streak ? seen : ahead;
	q->sq_streak = ahead != seen;
	q->sq_seen = ahead;
	while (cons != take) {
		const struct dpr_shm_swqe *e = sq_entry(q, cons);
		struct dpr_send_wr wr;
		int rc;

		/* the usual request from the ring into the WQE, each field
		 * read once (one copy); another kind copied first, then
		 * checked whole by dpr_post_send() */
		rc = dpr_post_send_shared(q->qp, (const struct dpr_send_wr *)e);
		if (rc == -EAGAIN) {
			copy_swqe(&wr, e, q->ud);
			rc = dpr_post_send(q->qp, &wr, 1, NULL);
			if (rc != 0 && rc != -ENOMEM) {
				/* the library checks what it can before it
				 * posts: what gets here was made by hand */
				shim.ws[wi].bad_wqes++;
				flush_error(q, &wr);
				cons++;
				continue;
			}
		}
		if (rc == -ENOMEM) {
			left = true;    /* full: again on the next poll */
			break;
		}
		shim.ws[wi].send_wqes++;
		q->send_wqes++;
		cons++;
	}
	q->sq_cons = cons;
	__atomic_store_n(&q->sq->cons, cons, __ATOMIC_RELEASE);
	return left || cons != prod;
}

/* The transport's two receive posts, one shape for drain_recv(); the
 * QP's bad entries (freed at once: they never complete) */
typedef int (*recv_post_fn)(void *to, const struct dpr_recv_wr *wr,
			    unsigned int n, unsigned int *done);

static int
post_to_qp(void *to, const struct dpr_recv_wr *wr, unsigned int n,
	   unsigned int *done)
{
	return dpr_post_recv(to, wr, n, done);
}

static int
post_to_srq(void *to, const struct dpr_recv_wr *wr, unsigned int n,
	    unsigned int *done)
{
	return dpr_post_srq_recv(to, wr, n, done);
}

/* A receive ring of @p size entries (a QP's or an SRQ's) into the
 * transport from *@p cons on. @return true while entries are left (the
 * transport's queue was full). */
static bool
drain_recv(struct dpr_shm_ring *ring, uint32_t size, uint32_t *cons_io,
	   bool *broken, recv_post_fn post, void *to, uint64_t *taken,
	   unsigned int wi, struct shim_qp *q)
{
	uint32_t prod = __atomic_load_n(&ring->prod, __ATOMIC_ACQUIRE);
	uint32_t cons = *cons_io;
	bool left = false;

	if (prod == cons || *broken)
		return false;
	if (prod - cons > size) {
		shim.ws[wi].ring_index_errors++;
		*broken = true;
		return false;
	}
	while (cons != prod && !left) {
		struct dpr_recv_wr wr[DRAIN_BATCH];
		unsigned int n = RTE_MIN(prod - cons, (uint32_t)DRAIN_BATCH), k, done;

		for (k = 0; k < n; k++)
			memcpy(&wr[k], dpr_shm_ring_entry(ring, sizeof(wr[0]),
							  size - 1, cons + k),
			       sizeof(wr[0]));
		for (k = 0; k < n; k += done) {
			int rc = post(to, &wr[k], n - k, &done);

			shim.ws[wi].recv_wqes += done;
			*taken += done;
			if (rc == -ENOMEM) {
				left = true;
				break;
			}
			if (rc != 0) {
				shim.ws[wi].bad_wqes++;
				done++;
				if (q != NULL)
					q->rq_freed++;
			}
		}
		cons += k;
	}
	*cons_io = cons;
	/* an SRQ's room is what the worker has taken (its limit event
	 * counts what is in the transport's SRQ); a QP's own receive
	 * queue's is what has completed (rq_freed, rq_slot_freed()) */
	__atomic_store_n(&ring->cons, q != NULL ? q->rq_freed : cons,
			 __ATOMIC_RELEASE);
	return left;
}

static bool
drain_rq(struct shim_qp *q, unsigned int wi)
{
	return drain_recv(q->rq, q->rq_size, &q->rq_cons, &q->broken, post_to_qp,
			  q->qp, &q->recv_wqes, wi, q);
}

/* A receive WQE of the QP completed (its completion is pushed next): its
 * ring slot is the client's again. */
static void
rq_slot_freed(void *arg)
{
	struct shim_qp *q = arg;

	__atomic_store_n(&q->rq->cons, ++q->rq_freed, __ATOMIC_RELEASE);
}

/* The transport found the QP's receive queue empty for a message that
 * just came: the client's ring may hold receives the doorbell round has
 * not taken yet (a UD datagram would be dropped, an RC SEND RNR NAKed). */
static void
rq_pull(void *arg)
{
	struct shim_qp *q = arg;

	if (!q->broken)
		drain_rq(q, q->c->worker);
}

void
shim_qp_attach(struct shim_qp *q)
{
	dpr_qp_set_rq_pull(q->qp, rq_pull, q);
	dpr_qp_set_rq_done(q->qp, rq_slot_freed, q);
}

/* What the client posted to an SRQ's ring into the transport's SRQ. */
static void
drain_srq(struct shim_srq *s, unsigned int wi)
{
	drain_recv(s->ring, s->size, &s->cons, &s->broken, post_to_srq, s->srq,
		   &s->recv_wqes, wi, NULL);
}

static void
srq_pull(void *arg)
{
	struct shim_srq *s = arg;

	drain_srq(s, s->c->worker);
}

static void
srq_limit(void *arg)
{
	struct shim_srq *s = arg;

	raise_event(s->c, DPR_EVENT_SRQ_LIMIT_REACHED, s->handle);
}

void
shim_srq_attach(struct shim_srq *s)
{
	dpr_srq_set_pull(s->srq, srq_pull, s);
	dpr_srq_set_limit_cb(s->srq, srq_limit, s);
}

/* Rounds a polled QP's rings may stay empty before the worker lets it go
 * (its client rings its doorbell again then), and for at least
 * SHIM_POLL_IDLE_NS: a client posting one message at a time, waiting for
 * each (a ping-pong), keeps its QP polled and never rings, and so does one
 * that keeps posting from a core it shares (a client descheduled for a
 * few hundred microseconds is not idle; a round count alone let go of it
 * sooner the faster the worker ran: send_bw --yield rang once per 180
 * WQEs on one machine). Then SHIM_POLL_GRACE more rounds with idle set, for a
 * producer the client stored before it read idle = 0 to become visible
 * (lib/shm/dpr_shm.h, Doorbells); and every SHIM_SWEEP_NS the producers
 * of SHIM_SWEEP_SLOTS QPs not polled are looked at, whatever happened (a
 * client's first 1,024 QPs each millisecond, 65,536 in 64 ms). */
#define SHIM_POLL_ROUNDS 256
#define SHIM_POLL_IDLE_NS 2000000
#define SHIM_POLL_GRACE 32
#define SHIM_SWEEP_NS 1000000
#define SHIM_SWEEP_SLOTS 1024

/* A QP onto the worker's list: its rings looked at every round, the
 * client told it need not ring. */
static void
poll_start(struct shim_client *c, struct shim_qp *q)
{
	q->polled = true;
	q->empty_rounds = 0;
	c->polled[q->slot / 64] |= 1ull << (q->slot % 64);
	c->polled_sum[q->slot / 4096] |= 1ull << (q->slot / 64 % 64);
	__atomic_store_n(&q->sq->idle, 0, __ATOMIC_RELAXED);
}

/* Slot @p s off the worker's list (and its word off the summary when it
 * was the word's last). */
static inline void
polled_clear(struct shim_client *c, uint32_t s)
{
	c->polled[s / 64] &= ~(1ull << (s % 64));
	if (c->polled[s / 64] == 0)
		c->polled_sum[s / 4096] &= ~(1ull << (s / 64 % 64));
}

/* Anything in @p q's rings the worker has not taken? */
static bool
rings_moved(const struct shim_qp *q)
{
	return __atomic_load_n(&q->sq->prod, __ATOMIC_RELAXED) != q->sq_cons ||
	       __atomic_load_n(&q->rq->prod, __ATOMIC_RELAXED) != q->rq_cons;
}

/* A round of a polled QP: its rings drained; after SHIM_POLL_ROUNDS
 * empty ones idle is set, after SHIM_POLL_GRACE more the QP is off the
 * list. @return whether it had work. */
static bool
poll_qp(struct shim_client *c, struct shim_qp *q, unsigned int wi, uint64_t now_ns)
{
	const uint32_t sq_cons = q->sq_cons, rq_cons = q->rq_cons;
	bool left;

	left = drain_sq(q, wi);
	left = drain_rq(q, wi) || left;
	if (left || q->sq_cons != sq_cons || q->rq_cons != rq_cons) {
		if (q->empty_rounds >= SHIM_POLL_ROUNDS)
			__atomic_store_n(&q->sq->idle, 0, __ATOMIC_RELAXED);
		q->empty_rounds = 0;
		return true;
	}
	if (q->empty_rounds == 0)
		q->empty_since_ns = now_ns;
	if (q->empty_rounds == SHIM_POLL_ROUNDS - 1 &&
	    now_ns - q->empty_since_ns < SHIM_POLL_IDLE_NS)
		return false;           /* (not idle long enough: polled on) */
	q->empty_rounds++;
	if (q->empty_rounds == SHIM_POLL_ROUNDS) {
		__atomic_store_n(&q->sq->idle, 1, __ATOMIC_RELAXED);
	} else if (q->empty_rounds >= SHIM_POLL_ROUNDS + SHIM_POLL_GRACE) {
		q->polled = false;
		polled_clear(c, q->slot);
	}
	return false;
}

/* Every SHIM_SWEEP_NS: the next SHIM_SWEEP_SLOTS slots of @p c (all of
 * them, for a client of no more QPs) -- the QPs not polled whose rings
 * hold something and whose doorbell is not rung (a doorbell the client
 * did not ring) back on the list. A client of many QPs is swept over
 * several periods: no round pays for all of its QPs. */
static void
sweep(struct shim_client *c, uint64_t now_ns)
{
	const uint64_t *db = c->ctrl->doorbell;
	const uint32_t hi = __atomic_load_n(&c->slot_hi, __ATOMIC_ACQUIRE);
	uint32_t s = c->sweep_from < hi ? c->sweep_from : 0;
	const uint32_t end = RTE_MIN(hi, s + SHIM_SWEEP_SLOTS);

	c->next_sweep_ns = now_ns + SHIM_SWEEP_NS;
	for (; s < end; s++) {
		struct shim_qp *q = c->qps[s];

		if (q != NULL && !q->polled && !q->broken && rings_moved(q) &&
		    !(__atomic_load_n(&db[s / 64], __ATOMIC_RELAXED) & (1ull << (s % 64)))) {
			shim.ws[c->worker].doorbells_missed++;
			poll_start(c, q);
		}
	}
	c->sweep_from = end;
}

/* The QPs of word @p w of @p c's doorbells that are rung or polled: each
 * polled for a round. */
static bool
poll_word(struct shim_client *c, uint32_t w, unsigned int wi, uint64_t now_ns)
{
	uint64_t *db = &c->ctrl->doorbell[w];
	uint64_t bits = c->polled[w];
	bool busy = false;

	if (__atomic_load_n(db, __ATOMIC_RELAXED) != 0) {
		const uint64_t rung = __atomic_exchange_n(db, 0, __ATOMIC_ACQ_REL);

		shim.ws[wi].doorbells += (uint64_t)__builtin_popcountll(rung);
		bits |= rung;
	}
	while (bits != 0) {
		const uint32_t s = w * 64 + (uint32_t)__builtin_ctzll(bits);
		struct shim_qp *q = s < shim.lim.qps ? c->qps[s] : NULL;

		bits &= bits - 1;
		if (q == NULL || q->broken) {
			polled_clear(c, s);
			continue;
		}
		if (!q->polled)
			poll_start(c, q);
		busy |= poll_qp(c, q, wi, now_ns);
	}
	return busy;
}

bool
dpr_shim_worker_poll(void *arg __rte_unused, unsigned int wi, uint64_t now_ns)
{
	bool busy = false;
	unsigned int i, k;

	for (i = 0; i < shim.wn[wi]; i++) {
		struct shim_client *c = shim.wl[wi][i];
		uint64_t *sum = c->ctrl->db_summary;
		/* the summary words of the slots in use (a client's bits
		 * above them name no QP) */
		const uint32_t n_sum = (__atomic_load_n(&c->slot_hi, __ATOMIC_ACQUIRE) +
					4095) / 4096;

		if (unlikely(c->overflow_pending))
			overflow_to_err(c);
		if (unlikely(now_ns >= c->next_sweep_ns))
			sweep(c, now_ns);
		/* SRQs have no doorbell: their rings are looked at each round
		 * (a load of prod each) and when a message finds one empty */
		if (__atomic_load_n(&c->n_srq, __ATOMIC_RELAXED) != 0)
			for (k = 0; k < SHIM_MAX_SRQ; k++)
				if (c->srqs[k] != NULL)
					drain_srq(c->srqs[k], wi);

		for (k = 0; k < n_sum; k++) {
			uint64_t words = c->polled_sum[k];

			if (__atomic_load_n(&sum[k], __ATOMIC_RELAXED) != 0)
				words |= __atomic_exchange_n(&sum[k], 0, __ATOMIC_ACQ_REL);
			while (words != 0) {
				const uint32_t w = k * 64 + (uint32_t)__builtin_ctzll(words);

				words &= words - 1;
				busy |= poll_word(c, w, wi, now_ns);
			}
		}
	}
	return busy;
}

/*
 * The worker's nap (lib/shm/dpr_shm.h, Naps): napping set in each of its
 * clients' control pages, a full fence, then one more round for what was
 * posted meanwhile -- work found, it stays awake. Woken, the marks go.
 */
bool
dpr_shim_worker_nap(void *arg, unsigned int wi, bool napping, uint64_t now_ns)
{
	unsigned int i;

	for (i = 0; i < shim.wn[wi]; i++)
		__atomic_store_n(&shim.wl[wi][i]->ctrl->napping, napping ? 1 : 0,
				 __ATOMIC_RELAXED);
	if (!napping)
		return true;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return !dpr_shim_worker_poll(arg, wi, now_ns);
}

