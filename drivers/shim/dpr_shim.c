/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The daemon side of the verbs shim (lib/shm/dpr_shm.h has the ABI).
 *
 * Threads: the main lcore serves the socket (dpr_shim_poll) and owns the
 * client table. A client's verbs objects live on one worker, chosen when it
 * opens the device (the least loaded); every change to them runs on that
 * worker through dpr_engine_run_on(), so the data path never races with
 * the control path and needs no lock. Object tables shared by a port's
 * workers are changed under dpr_engine_verbs_lock().
 *
 * Memory: a client registers memory by sending a memfd (sealed against
 * shrinking, so that it cannot pull pages from under the daemon: that
 * would be a SIGBUS here) with the offset of the pages; the daemon maps
 * them and places payload straight into them. The mapping goes when the
 * MR is gone and no frame in flight still points into it (the MR's shared
 * info, whose free_cb unmaps). Rings and the control page are memfds the
 * daemon makes, seals and sends.
 *
 * Trust: nothing read from shared memory is trusted. Work requests are
 * copied before they are checked; ring indices that make no sense stop
 * that ring; handles are indexes into the client's own table, so a client
 * can only name its objects; keys are checked against the QP's PD, which
 * only that client's QPs and MRs have.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_telemetry.h>

#include "dpr_engine.h"
#include "dpr_shim.h"
#include "dpr_shm.h"
#include "dpr_transport.h"
#include "dpr_verbs.h"

RTE_LOG_REGISTER_SUFFIX(shim_logtype, shm, INFO);
#define SHIM_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, shim_logtype, "dprdma.shm: " fmt "\n", \
		## __VA_ARGS__)

/* Per-client quotas. */
#define SHIM_MAX_OBJS 4096
#define SHIM_MAX_PD 64
#define SHIM_MAX_MR 1024
#define SHIM_MAX_CQ 256
#define SHIM_MAX_CHANNELS 64
#define SHIM_MAX_MR_BYTES (64ull << 30)

enum obj_type { OBJ_FREE, OBJ_PD, OBJ_MR, OBJ_CQ, OBJ_QP, OBJ_CHANNEL };

struct shim_client;

struct shim_mem {                   /* a daemon-side mapping */
	void *addr;
	size_t len;
	bool sysv;                      /* shmat()ed, not mmap()ed */
	struct rte_mbuf_ext_shared_info si;
};

struct shim_cq {
	struct dpr_cq *cq;
	struct shim_client *c;
	struct dpr_shm_ring *ring;
	size_t map_bytes;
	uint32_t handle, cqe, size, prod;
	int chan_fd;                    /* -1: no completion channel */
	uint32_t chan_handle;
	bool overflowed;
	uint32_t users;                 /* QPs */
};

struct shim_qp {
	struct dpr_tqp *qp;
	struct shim_client *c;
	struct shim_cq *scq, *rcq;
	uint32_t pd_handle;
	struct dpr_shm_ring *sq, *rq;
	size_t map_bytes;
	uint32_t handle, slot, qpn;
	uint32_t sq_size, rq_size, sq_cons, rq_cons;
	bool broken;                    /* the client scribbled on an index */
	bool errored;                   /* moved to ERR for its CQ's overflow */
	uint64_t send_wqes, recv_wqes;  /* taken from its rings (worker) */
	struct dpr_shm_qp_caps cap;
};

struct shim_obj {
	uint8_t type;
	void *p;
};

struct shim_client {
	int fd;
	uint32_t id;
	pid_t pid;
	uid_t uid;
	gid_t gid;
	unsigned int worker;
	uint16_t port;
	bool opened;
	struct dpr_shm_ctrl *ctrl;
	struct dpr_verbs_ctx *ctx;
	struct shim_qp *qps[DPR_SHM_MAX_QPS];   /* by slot: the worker reads */
	struct shim_obj obj[SHIM_MAX_OBJS];
	uint32_t n_pd, n_mr, n_cq, n_qp, n_channel;
	uint64_t mr_bytes;
	int async_fd;                   /* the client's eventfd, or -1 */
	bool overflow_pending;          /* a CQ overflowed: its QPs to ERR */
	uint64_t requests, refused;
};

/* Counters, read by telemetry: those of the main lcore (the socket)... */
#define SHIM_STATS(_) \
	_(clients_connected) \
	_(clients_closed) \
	_(requests) \
	_(refused) \
	_(bad_messages) \
	_(quota_refused) \
	_(limit_refused)

/* ...and those each worker keeps for the clients it serves (summed when
 * read) */
#define SHIM_WORKER_STATS(_) \
	_(send_wqes) \
	_(recv_wqes) \
	_(bad_wqes) \
	_(ring_index_errors) \
	_(cqes) \
	_(cq_overflows) \
	_(channel_signals) \
	_(async_events)

static struct {
	int lfd;
	char path[108];
	unsigned int max_clients;
	struct shim_client **clients;   /* by slot; main lcore only */
	uint32_t next_id;
	/* clients each worker serves: written only by that worker */
	struct shim_client **wl[RTE_MAX_LCORE];
	unsigned int wn[RTE_MAX_LCORE];
	unsigned int load[RTE_MAX_LCORE];       /* main lcore's count */
	bool started;
	struct {
#define _(n) uint64_t n;
		SHIM_STATS(_)
#undef _
	} st;
	/* per worker, written by the worker only */
	struct {
#define _(n) uint64_t n;
		SHIM_WORKER_STATS(_)
#undef _
	} __rte_cache_aligned ws[RTE_MAX_LCORE];
} shim = { .lfd = -1 };

/* ------------------------------------------------------------- memory */

static void
mem_free_cb(void *addr __rte_unused, void *opaque)
{
	struct shim_mem *m = opaque;

	if (m->sysv)
		shmdt(m->addr);
	else
		munmap(m->addr, m->len);
	free(m);
}

/* A memfd of @p len bytes (zeroed), sealed against resizing, mapped here. */
static int
make_shared(const char *name, size_t len, void **addr)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	*addr = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*addr == MAP_FAILED) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static size_t
page_round(uint64_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (size_t)((n + pg - 1) & ~(uint64_t)(pg - 1));
}

/* ------------------------------------------------------ handles */

static uint32_t
obj_add(struct shim_client *c, enum obj_type t, void *p)
{
	uint32_t i;

	for (i = 0; i < SHIM_MAX_OBJS; i++)
		if (c->obj[i].type == OBJ_FREE) {
			c->obj[i].type = (uint8_t)t;
			c->obj[i].p = p;
			return i + 1;
		}
	return 0;
}

static void *
obj_get(struct shim_client *c, uint32_t h, enum obj_type t)
{
	if (h == 0 || h > SHIM_MAX_OBJS || c->obj[h - 1].type != t)
		return NULL;
	return c->obj[h - 1].p;
}

static void
obj_del(struct shim_client *c, uint32_t h)
{
	c->obj[h - 1].type = OBJ_FREE;
	c->obj[h - 1].p = NULL;
}

/* ------------------------------------------------ the worker side */

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

/* Per port: QP number -> the client's QP, for the transport's events. */
static struct shim_qp **qp_by_qpn[RTE_MAX_ETHPORTS];
static uint32_t qp_by_qpn_len[RTE_MAX_ETHPORTS];

static void
verbs_event(void *arg, enum dpr_event_type type, uint32_t obj)
{
	uint16_t pi = (uint16_t)(uintptr_t)arg;
	struct shim_qp *q;

	/* CQ errors of clients are raised where they overflow (cq_push) */
	if (type == DPR_EVENT_CQ_ERR || obj >= qp_by_qpn_len[pi])
		return;
	q = qp_by_qpn[pi][obj];
	if (q != NULL)
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
	for (i = 0; i < DPR_SHM_MAX_QPS; i++) {
		struct shim_qp *q = c->qps[i];

		if (q == NULL || q->errored ||
		    !(q->scq->overflowed || q->rcq->overflowed))
			continue;
		q->errored = true;
		dpr_qp_modify(q->qp, &a, DPR_QP_STATE);
		raise_event(c, DPR_EVENT_QP_FATAL, q->handle);
	}
}

static int
cq_push(struct dpr_cq *cq, const struct dpr_cqe *e)
{
	struct shim_cq *s = cq->push_arg;
	unsigned int wi = s->c->worker;
	uint32_t cons = __atomic_load_n(&s->ring->cons, __ATOMIC_ACQUIRE);
	struct dpr_shm_cqe *o;

	if (s->overflowed || s->prod - cons >= s->cqe) {
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
	o->wc_flags = e->wc_flags;
	s->prod++;
	__atomic_store_n(&s->ring->prod, s->prod, __ATOMIC_RELEASE);
	shim.ws[wi].cqes++;
	/* a sleeping client asked to be woken: one word down its channel
	 * (a pipe, not an eventfd: it says which CQ). Solicited-only arming
	 * wakes on any completion: a spurious wake-up, which verbs allow. */
	if (s->chan_fd >= 0 &&
	    __atomic_load_n(&s->ring->armed, __ATOMIC_RELAXED) != 0 &&
	    __atomic_exchange_n(&s->ring->armed, 0, __ATOMIC_ACQ_REL) != 0) {
		uint32_t h = s->handle;

		if (write(s->chan_fd, &h, sizeof(h)) == sizeof(h))
			shim.ws[wi].channel_signals++;
	}
	return 0;
}

static void
flush_error(struct shim_qp *q, const struct dpr_shm_swqe *w)
{
	struct dpr_cqe e = {
		.wr_id = w->wr_id,
		.status = DPR_WC_LOC_QP_OP_ERR,
		.opcode = DPR_WC_SEND,
		.qp_num = q->qpn,
	};

	dpr_cq_push(q->scq->cq, &e);
}

/*
 * A send WQE from the client's ring into a work request: the header is
 * copied, then only the SGEs or inline bytes it says are used (the count
 * is checked on the copy: nothing is read twice from shared memory).
 * Inline bytes land in @p w, which the transport copies from at post.
 * @return 0, or -EINVAL for a count over the limits.
 */
static int
swqe_to_wr(const struct dpr_shm_swqe *src, struct dpr_shm_swqe *w,
	   struct dpr_sge *sge, struct dpr_send_wr *wr)
{
	uint32_t i;

	memcpy(w, src, offsetof(struct dpr_shm_swqe, sge));
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = w->wr_id;
	wr->opcode = (enum dpr_wr_opcode)w->opcode;
	wr->send_flags = w->send_flags;
	wr->imm_data = w->imm_data;
	wr->sg_list = sge;
	if (w->send_flags & DPR_SEND_INLINE) {
		if (w->num_sge > DPR_SHM_MAX_INLINE)
			return -EINVAL;
		memcpy(w->inline_data, src->inline_data, w->num_sge);
		sge[0].addr = (uintptr_t)w->inline_data;
		sge[0].length = w->num_sge;
		sge[0].lkey = 0;
		wr->num_sge = w->num_sge != 0;
	} else {
		if (w->num_sge > DPR_SHM_MAX_SEND_SGE)
			return -EINVAL;
		for (i = 0; i < w->num_sge; i++) {
			sge[i].addr = src->sge[i].addr;
			sge[i].length = src->sge[i].length;
			sge[i].lkey = src->sge[i].lkey;
		}
		wr->num_sge = (int)w->num_sge;
	}
	if (w->opcode == DPR_WR_ATOMIC_CMP_AND_SWP ||
	    w->opcode == DPR_WR_ATOMIC_FETCH_AND_ADD) {
		wr->wr.atomic.remote_addr = w->remote_addr;
		wr->wr.atomic.compare_add = w->compare_add;
		wr->wr.atomic.swap = w->swap;
		wr->wr.atomic.rkey = w->rkey;
	} else {
		wr->wr.rdma.remote_addr = w->remote_addr;
		wr->wr.rdma.rkey = w->rkey;
	}
	return 0;
}

/* Take what the client posted to its SQ into the transport. @return true
 * while entries are left (the transport's queue was full). */
static bool
drain_sq(struct shim_qp *q, unsigned int wi)
{
	uint32_t prod = __atomic_load_n(&q->sq->prod, __ATOMIC_ACQUIRE);
	uint32_t cons = q->sq_cons;
	bool left = false;

	if (prod - cons > q->sq_size) {
		if (!q->broken)
			shim.ws[wi].ring_index_errors++;
		q->broken = true;
		return false;
	}
	while (cons != prod) {
		struct dpr_shm_swqe w;
		struct dpr_sge sge[DPR_SHM_MAX_SEND_SGE];
		struct dpr_send_wr wr, *bad;
		int rc;

		rc = swqe_to_wr(dpr_shm_ring_entry(q->sq, sizeof(w), q->sq_size - 1,
						   cons), &w, sge, &wr);
		if (rc == 0)
			rc = dpr_post_send(q->qp, &wr, &bad);
		if (rc == -ENOMEM) {
			left = true;    /* full: again on the next poll */
			break;
		}
		if (rc != 0) {
			/* the library checks what it can before it posts:
			 * what gets here was made by hand */
			shim.ws[wi].bad_wqes++;
			flush_error(q, &w);
		} else {
			shim.ws[wi].send_wqes++;
			q->send_wqes++;
		}
		cons++;
	}
	q->sq_cons = cons;
	__atomic_store_n(&q->sq->cons, cons, __ATOMIC_RELEASE);
	return left;
}

static bool
drain_rq(struct shim_qp *q, unsigned int wi)
{
	uint32_t prod = __atomic_load_n(&q->rq->prod, __ATOMIC_ACQUIRE);
	uint32_t cons = q->rq_cons;
	bool left = false;

	if (prod - cons > q->rq_size) {
		if (!q->broken)
			shim.ws[wi].ring_index_errors++;
		q->broken = true;
		return false;
	}
	while (cons != prod) {
		struct dpr_shm_rwqe w;
		struct dpr_sge sge[DPR_SHM_MAX_RECV_SGE];
		struct dpr_recv_wr wr, *bad;
		uint32_t i;
		int rc;

		memcpy(&w, dpr_shm_ring_entry(q->rq, sizeof(w), q->rq_size - 1, cons),
		       sizeof(w));
		if (w.num_sge > DPR_SHM_MAX_RECV_SGE) {
			shim.ws[wi].bad_wqes++;
			cons++;
			continue;
		}
		for (i = 0; i < w.num_sge; i++) {
			sge[i].addr = w.sge[i].addr;
			sge[i].length = w.sge[i].length;
			sge[i].lkey = w.sge[i].lkey;
		}
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = w.wr_id;
		wr.sg_list = sge;
		wr.num_sge = (int)w.num_sge;
		rc = dpr_post_recv(q->qp, &wr, &bad);
		if (rc == -ENOMEM) {
			left = true;
			break;
		}
		if (rc != 0) {
			shim.ws[wi].bad_wqes++;
		} else {
			shim.ws[wi].recv_wqes++;
			q->recv_wqes++;
		}
		cons++;
	}
	q->rq_cons = cons;
	__atomic_store_n(&q->rq->cons, cons, __ATOMIC_RELEASE);
	return left;
}

bool
dpr_shim_worker_poll(void *arg __rte_unused, unsigned int wi,
		     uint64_t now_ns __rte_unused)
{
	bool busy = false;
	unsigned int i, k;

	for (i = 0; i < shim.wn[wi]; i++) {
		struct shim_client *c = shim.wl[wi][i];
		uint64_t *db = c->ctrl->doorbell;

		if (unlikely(c->overflow_pending))
			overflow_to_err(c);

		for (k = 0; k < RTE_DIM(c->ctrl->doorbell); k++) {
			uint64_t bits;

			if (__atomic_load_n(&db[k], __ATOMIC_RELAXED) == 0)
				continue;
			bits = __atomic_exchange_n(&db[k], 0, __ATOMIC_ACQ_REL);
			while (bits != 0) {
				unsigned int b = (unsigned int)__builtin_ctzll(bits);
				struct shim_qp *q = c->qps[k * 64 + b];

				bits &= bits - 1;
				if (q == NULL || q->broken)
					continue;
				bool left = drain_sq(q, wi);

				left = drain_rq(q, wi) || left;
				if (left) {
					/* ring again for ourselves */
					__atomic_fetch_or(&db[k], 1ull << b,
							  __ATOMIC_RELAXED);
					busy = true;
				}
			}
		}
	}
	return busy;
}

/* ------------------------------------------- jobs run on the worker */

enum job_kind {
	JOB_ATTACH, JOB_DETACH, JOB_ALLOC_PD, JOB_DEALLOC_PD, JOB_REG_MR,
	JOB_DEREG_MR, JOB_CREATE_CQ, JOB_DESTROY_CQ, JOB_CREATE_QP,
	JOB_MODIFY_QP, JOB_QUERY_QP, JOB_DESTROY_QP,
};

struct job {
	enum job_kind kind;
	struct shim_client *c;
	void *p;                        /* the object */
	void *out;
	/* REG_MR */
	void *addr;
	uint64_t iova, length;
	uint32_t access;
	struct shim_mem *mem;
	/* CREATE_QP / MODIFY_QP */
	struct dpr_qp_init_attr ia;
	struct dpr_qp_attr attr;
	int mask;
};

static int
job_run(void *arg)
{
	struct job *j = arg;
	struct shim_client *c = j->c;
	unsigned int wi = c->worker;
	int rc = 0;

	switch (j->kind) {
	case JOB_ATTACH:
		shim.wl[wi][shim.wn[wi]++] = c;
		break;
	case JOB_DETACH:
		for (unsigned int i = 0; i < shim.wn[wi]; i++)
			if (shim.wl[wi][i] == c) {
				shim.wl[wi][i] = shim.wl[wi][--shim.wn[wi]];
				break;
			}
		break;
	case JOB_ALLOC_PD:
		dpr_engine_verbs_lock();
		j->out = dpr_pd_alloc(c->ctx, c->id);
		rc = j->out == NULL ? -errno : 0;
		dpr_engine_verbs_unlock();
		break;
	case JOB_DEALLOC_PD:
		dpr_engine_verbs_lock();
		rc = dpr_pd_dealloc(j->p);
		dpr_engine_verbs_unlock();
		break;
	case JOB_REG_MR: {
		struct dpr_mr *mr;

		dpr_engine_verbs_lock();
		mr = dpr_mr_reg(j->p, j->addr, j->iova, j->length, j->access);
		rc = mr == NULL ? -errno : 0;
		if (mr != NULL)
			mr->priv = &j->mem->si;  /* unmapped with its last frame */
		dpr_engine_verbs_unlock();
		j->out = mr;
		break;
	}
	case JOB_DEREG_MR:
		/* invalid at once: no request placed after this returns;
		 * the memory goes with the last frame attached to it */
		dpr_engine_verbs_lock();
		rc = dpr_mr_dereg(j->p);
		dpr_engine_verbs_unlock();
		break;
	case JOB_CREATE_CQ: {
		struct shim_cq *s = j->p;

		dpr_engine_verbs_lock();
		s->cq = dpr_cq_create(c->ctx, s->cqe, c->id);
		rc = s->cq == NULL ? -errno : 0;
		dpr_engine_verbs_unlock();
		if (s->cq != NULL) {
			s->cq->push_arg = s;
			s->cq->push = cq_push;
		}
		break;
	}
	case JOB_DESTROY_CQ: {
		struct shim_cq *s = j->p;

		dpr_engine_verbs_lock();
		rc = dpr_cq_destroy(s->cq);
		dpr_engine_verbs_unlock();
		break;
	}
	case JOB_CREATE_QP: {
		struct shim_qp *q = j->p;

		dpr_engine_verbs_lock();
		q->qp = dpr_qp_create(dpr_engine_transport(wi, c->port), &j->ia);
		rc = q->qp == NULL ? -errno : 0;
		dpr_engine_verbs_unlock();
		if (q->qp != NULL) {
			q->qpn = dpr_qp_num(q->qp);
			c->qps[q->slot] = q;
			if (q->qpn < qp_by_qpn_len[c->port])
				qp_by_qpn[c->port][q->qpn] = q;
		}
		break;
	}
	case JOB_MODIFY_QP: {
		struct shim_qp *q = j->p;

		rc = dpr_qp_modify(q->qp, &j->attr, j->mask);
		/* work posted before the QP could send waits in the ring:
		 * look again */
		if (rc == 0)
			__atomic_fetch_or(&c->ctrl->doorbell[q->slot / 64],
					  1ull << (q->slot % 64), __ATOMIC_RELAXED);
		break;
	}
	case JOB_QUERY_QP:
		rc = dpr_qp_query(((struct shim_qp *)j->p)->qp, &j->attr);
		break;
	case JOB_DESTROY_QP: {
		struct shim_qp *q = j->p;
		struct dpr_qp_attr a = { .qp_state = DPR_QPS_ERR };

		/* to ERR first: what is in flight is flushed, not sent */
		dpr_qp_modify(q->qp, &a, DPR_QP_STATE);
		c->qps[q->slot] = NULL;
		if (q->qpn < qp_by_qpn_len[c->port])
			qp_by_qpn[c->port][q->qpn] = NULL;
		dpr_engine_verbs_lock();
		rc = dpr_qp_destroy(q->qp);
		dpr_engine_verbs_unlock();
		break;
	}
	}
	return rc;
}

/* ENOMEM from the verbs layer: say so when it is the port's object table
 * that is full (all clients together), not a client's quota */
static void
note_device_limit(const struct job *j)
{
	const struct dpr_verbs_limits *l = dpr_verbs_limits(j->c->ctx);
	struct dpr_verbs_usage u;
	const char *what;
	uint32_t used, max;

	dpr_engine_verbs_lock();
	dpr_verbs_usage(j->c->ctx, &u);
	dpr_engine_verbs_unlock();
	switch (j->kind) {
	case JOB_ALLOC_PD:
		what = "PD", used = u.pd, max = l->max_pd;
		break;
	case JOB_REG_MR:
		what = "MR", used = u.mr, max = l->max_mr;
		break;
	case JOB_CREATE_CQ:
		what = "CQ", used = u.cq, max = l->max_cq;
		break;
	case JOB_CREATE_QP:
		what = "QP", used = u.qp, max = l->max_qp;
		break;
	default:
		return;
	}
	if (used < max)
		return;         /* out of memory, not out of slots */
	shim.st.limit_refused++;
	SHIM_LOG(NOTICE, "client %u: %s refused: all %u %ss of port %u are in "
		 "use (by every client together)", j->c->id, what, max, what,
		 j->c->port);
}

static int
job(struct job *j)
{
	int rc = dpr_engine_run_on(j->c->worker, job_run, j);

	if (rc == -ENOMEM)
		note_device_limit(j);
	return rc;
}

/* ------------------------------------------------- control requests */

/* The modified EUI-64 of a MAC (node GUID, link-local GID), as rxe. */
static void
mac_eui64(const uint8_t *a, uint8_t *g)
{
	g[0] = a[0] ^ 2;
	g[1] = a[1];
	g[2] = a[2];
	g[3] = 0xff;
	g[4] = 0xfe;
	g[5] = a[3];
	g[6] = a[4];
	g[7] = a[5];
}

static void
fill_port(struct shim_client *c, struct dpr_shm_port *p)
{
	struct dpr_port_info pi;
	unsigned int mtu;
	uint8_t *g;

	memset(p, 0, sizeof(*p));
	if (dpr_engine_port_info(c->port, &pi) != 0)
		return;
	p->state = pi.up ? 4 /* IBV_PORT_ACTIVE */ : 1 /* IBV_PORT_DOWN */;
	p->max_mtu = DPR_MTU_4096;
	mtu = dpr_active_mtu(pi.mtu);
	p->active_mtu = mtu >= 4096 ? DPR_MTU_4096 : mtu >= 2048 ? DPR_MTU_2048 :
		mtu >= 1024 ? DPR_MTU_1024 : mtu >= 512 ? DPR_MTU_512 : DPR_MTU_256;
	p->gid_tbl_len = 2;
	p->speed_mbps = pi.speed_mbps;
	memcpy(p->mac, pi.mac.addr_bytes, 6);
	/* rxe's table: 0 = fe80::/64 with the MAC's EUI-64, 1 = ::ffff:IPv4 */
	g = p->gid[0].raw;
	g[0] = 0xfe;
	g[1] = 0x80;
	mac_eui64(pi.mac.addr_bytes, &g[8]);
	g = p->gid[1].raw;
	g[10] = 0xff;
	g[11] = 0xff;
	memcpy(&g[12], &pi.ip, 4);
}

static int
req_open(struct shim_client *c, struct dpr_shm_msg *m, int *in_fd, int *out_fd)
{
	struct dpr_shm_device *d = &m->open_resp.dev;
	const struct dpr_verbs_limits *lim;
	struct dpr_port_info pi;
	unsigned int wi, best = 0;
	struct job j = { .kind = JOB_ATTACH, .c = c };
	void *ctrl;
	int fd, rc;

	if (c->opened)
		return -EBUSY;
	if (m->open.port >= dpr_engine_n_ports())
		return -ENODEV;
	c->port = (uint16_t)m->open.port;
	c->ctx = dpr_engine_verbs(c->port);
	for (wi = 1; wi < dpr_engine_n_workers(); wi++)
		if (shim.load[wi] < shim.load[best])
			best = wi;
	c->worker = best;
	fd = make_shared("dprdma-ctrl", page_round(sizeof(struct dpr_shm_ctrl)), &ctrl);
	if (fd < 0)
		return fd;
	c->ctrl = ctrl;
	rc = job(&j);
	if (rc != 0) {
		close(fd);
		return rc;
	}
	shim.load[best]++;
	c->opened = true;
	if (*in_fd >= 0) {
		/* only an eventfd: writing one never blocks the worker (a
		 * pipe could), and it must stay as the client made it (its
		 * flags are the client's too: no O_NONBLOCK from here) */
		char path[32], target[64];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", *in_fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = '\0';
			if (strcmp(target, "anon_inode:[eventfd]") == 0) {
				c->async_fd = *in_fd;
				*in_fd = -1;
			}
		}
		if (c->async_fd < 0)
			SHIM_LOG(NOTICE, "client %u: the descriptor sent with open "
				 "is not an eventfd: no async event wake-ups",
				 c->id);
	}
	lim = dpr_verbs_limits(c->ctx);
	dpr_engine_port_info(c->port, &pi);
	memset(&m->open_resp, 0, sizeof(m->open_resp));
	snprintf(d->name, sizeof(d->name), "dprdma%u", c->port);
	mac_eui64(pi.mac.addr_bytes, (uint8_t *)&d->node_guid);
	d->sys_image_guid = d->node_guid;
	d->vendor_id = 0xffffff;        /* rxe's: no vendor-specific paths */
	d->max_qp = RTE_MIN(lim->max_qp, (uint32_t)DPR_SHM_MAX_QPS);
	d->max_qp_wr = RTE_MIN(lim->max_qp_wr, (uint32_t)DPR_SHM_MAX_WR);
	d->max_sge = DPR_SHM_MAX_SEND_SGE;
	d->max_cq = SHIM_MAX_CQ;
	d->max_cqe = RTE_MIN(lim->max_cqe, (uint32_t)DPR_SHM_MAX_CQE);
	d->max_mr = SHIM_MAX_MR;
	d->max_pd = SHIM_MAX_PD;
	d->max_qp_rd_atom = lim->max_rd_atomic;
	d->max_inline = RTE_MIN(lim->max_inline, (uint32_t)DPR_SHM_MAX_INLINE);
	d->max_mr_size = lim->max_mr_size;
	d->client_id = c->id;
	d->worker = c->worker;
	snprintf(d->fw_ver, sizeof(d->fw_ver), "dprdma %s", DPR_VERSION);
	fill_port(c, &m->open_resp.port);
	m->open_resp.ctrl_bytes = (uint32_t)page_round(sizeof(struct dpr_shm_ctrl));
	*out_fd = fd;
	SHIM_LOG(INFO, "client %u (pid %d) opened dprdma%u, served by worker %u",
		 c->id, (int)c->pid, c->port, c->worker);
	return 0;
}

static int
req_alloc_pd(struct shim_client *c, struct dpr_shm_msg *m)
{
	struct job j = { .kind = JOB_ALLOC_PD, .c = c };
	uint32_t h;
	int rc;

	if (c->n_pd >= SHIM_MAX_PD) {
		shim.st.quota_refused++;
		return -ENOMEM;
	}
	rc = job(&j);
	if (rc != 0)
		return rc;
	h = obj_add(c, OBJ_PD, j.out);
	if (h == 0) {
		j.kind = JOB_DEALLOC_PD;
		j.p = j.out;
		job(&j);
		return -ENOMEM;
	}
	c->n_pd++;
	m->obj.handle = h;
	return 0;
}

static int
req_dealloc_pd(struct shim_client *c, uint32_t h)
{
	struct job j = { .kind = JOB_DEALLOC_PD, .c = c };
	int rc;

	j.p = obj_get(c, h, OBJ_PD);
	if (j.p == NULL)
		return -EINVAL;
	rc = job(&j);
	if (rc == 0) {
		obj_del(c, h);
		c->n_pd--;
	}
	return rc;
}

struct shim_mr {
	struct dpr_mr *mr;
	uint64_t length;
};

static int
req_reg_mr(struct shim_client *c, struct dpr_shm_msg *m, int fd)
{
	const uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	struct job j = { .kind = JOB_REG_MR, .c = c };
	struct shim_mr *smr;
	struct stat sb;
	uint64_t widen;
	int seals, rc;
	void *map;
	uint32_t h;

	j.p = obj_get(c, m->reg_mr.pd, OBJ_PD);
	if ((fd < 0 && m->reg_mr.sysv == 0) || j.p == NULL)
		return -EINVAL;
	if (c->n_mr >= SHIM_MAX_MR ||
	    c->mr_bytes + m->reg_mr.length > SHIM_MAX_MR_BYTES) {
		shim.st.quota_refused++;
		SHIM_LOG(NOTICE, "client %u: MR refused: over its quota "
			 "(%u MRs, %llu GiB registered)", c->id, SHIM_MAX_MR,
			 SHIM_MAX_MR_BYTES >> 30);
		return -ENOMEM;
	}
	if (fd < 0) {
		/* a System V segment: it cannot shrink; the client must be
		 * allowed to attach it itself (owner, group or other rw) */
		struct shmid_ds ds;
		unsigned int mode;

		if (m->reg_mr.sysv > INT32_MAX ||
		    shmctl((int)m->reg_mr.sysv - 1, IPC_STAT, &ds) != 0)
			return -EINVAL;
		mode = ds.shm_perm.mode;
		if (c->uid != 0 &&
		    !((c->uid == ds.shm_perm.uid || c->uid == ds.shm_perm.cuid) ?
		      (mode & 0600) == 0600 :
		      (c->gid == ds.shm_perm.gid || c->gid == ds.shm_perm.cgid) ?
		      (mode & 0060) == 0060 : (mode & 0006) == 0006))
			return -EACCES;
		sb.st_size = (off_t)ds.shm_segsz;
	} else {
		/* the memory must not shrink under us (SIGBUS) */
		seals = fcntl(fd, F_GET_SEALS);
		if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(fd, &sb) != 0)
			return -EBADF;
	}
	if (m->reg_mr.offset % pg != 0 || m->reg_mr.map_bytes == 0 ||
	    m->reg_mr.map_bytes % pg != 0 || m->reg_mr.length == 0 ||
	    m->reg_mr.offset + m->reg_mr.map_bytes < m->reg_mr.offset ||
	    m->reg_mr.offset + m->reg_mr.map_bytes > (uint64_t)sb.st_size ||
	    m->reg_mr.addr_off >= m->reg_mr.map_bytes ||
	    m->reg_mr.length > m->reg_mr.map_bytes - m->reg_mr.addr_off)
		return -EINVAL;
	if (fd < 0) {
		void *base = shmat((int)m->reg_mr.sysv - 1, NULL, 0);

		if (base == (void *)-1)
			return -errno;
		map = (uint8_t *)base + m->reg_mr.offset;
	} else {
		/* a hugetlb file maps only in whole huge pages (st_blksize
		 * is its page size): widen the mapping to them, so a client
		 * can register any page-aligned part of dprdma_alloc()
		 * memory; the file's size is a multiple of its page size */
		uint64_t hp = sb.st_blksize > (blksize_t)pg ? (uint64_t)sb.st_blksize : pg;

		widen = m->reg_mr.offset & (hp - 1);
		m->reg_mr.offset -= widen;
		m->reg_mr.addr_off += widen;
		m->reg_mr.map_bytes = RTE_ALIGN_CEIL(m->reg_mr.map_bytes + widen, hp);
		if (m->reg_mr.offset + m->reg_mr.map_bytes > (uint64_t)sb.st_size)
			return -EINVAL;
		map = mmap(NULL, m->reg_mr.map_bytes, PROT_READ | PROT_WRITE,
			   MAP_SHARED, fd, (off_t)m->reg_mr.offset);
		if (map == MAP_FAILED)
			return -errno;
	}
	smr = calloc(1, sizeof(*smr));
	j.mem = calloc(1, sizeof(*j.mem));
	if (smr == NULL || j.mem == NULL) {
		free(smr);
		free(j.mem);
		if (fd < 0)
			shmdt((uint8_t *)map - m->reg_mr.offset);
		else
			munmap(map, m->reg_mr.map_bytes);
		return -ENOMEM;
	}
	j.mem->sysv = fd < 0;
	j.mem->addr = fd < 0 ? (uint8_t *)map - m->reg_mr.offset : map;
	j.mem->len = m->reg_mr.map_bytes;
	j.mem->si.free_cb = mem_free_cb;
	j.mem->si.fcb_opaque = j.mem;
	rte_mbuf_ext_refcnt_set(&j.mem->si, 1);
	j.addr = (uint8_t *)map + m->reg_mr.addr_off;
	j.iova = m->reg_mr.iova;
	j.length = m->reg_mr.length;
	j.access = m->reg_mr.access;
	rc = job(&j);
	if (rc != 0) {
		free(smr);
		mem_free_cb(NULL, j.mem);
		return rc;
	}
	smr->mr = j.out;
	smr->length = j.length;
	h = obj_add(c, OBJ_MR, smr);
	if (h == 0) {
		j.kind = JOB_DEREG_MR;
		j.p = smr->mr;
		job(&j);
		free(smr);
		return -ENOMEM;
	}
	c->n_mr++;
	c->mr_bytes += j.length;
	m->reg_mr_resp.handle = h;
	m->reg_mr_resp.lkey = smr->mr->lkey;
	m->reg_mr_resp.rkey = smr->mr->rkey;
	return 0;
}

static int
req_dereg_mr(struct shim_client *c, uint32_t h)
{
	struct shim_mr *smr = obj_get(c, h, OBJ_MR);
	struct job j = { .kind = JOB_DEREG_MR, .c = c };
	int rc;

	if (smr == NULL)
		return -EINVAL;
	j.p = smr->mr;
	rc = job(&j);
	if (rc != 0)
		return rc;
	c->n_mr--;
	c->mr_bytes -= smr->length;
	obj_del(c, h);
	free(smr);
	return 0;
}

struct shim_channel {
	int fd;
	uint32_t users;
};

static int
req_create_channel(struct shim_client *c, struct dpr_shm_msg *m, int *fd)
{
	struct shim_channel *ch;
	struct stat sb;
	uint32_t h;

	if (*fd < 0 || fstat(*fd, &sb) != 0 || !S_ISFIFO(sb.st_mode))
		return -EBADF;
	if (c->n_channel >= SHIM_MAX_CHANNELS) {
		shim.st.quota_refused++;
		return -ENOMEM;
	}
	ch = calloc(1, sizeof(*ch));
	if (ch == NULL)
		return -ENOMEM;
	/* the worker must never block on a client that does not read */
	if (fcntl(*fd, F_SETFL, O_NONBLOCK) != 0) {
		free(ch);
		return -errno;
	}
	h = obj_add(c, OBJ_CHANNEL, ch);
	if (h == 0) {
		free(ch);
		return -ENOMEM;
	}
	ch->fd = *fd;
	*fd = -1;                       /* kept */
	c->n_channel++;
	m->obj.handle = h;
	return 0;
}

static int
req_destroy_channel(struct shim_client *c, uint32_t h)
{
	struct shim_channel *ch = obj_get(c, h, OBJ_CHANNEL);

	if (ch == NULL)
		return -EINVAL;
	if (ch->users != 0)
		return -EBUSY;
	close(ch->fd);
	free(ch);
	obj_del(c, h);
	c->n_channel--;
	return 0;
}

static int
req_create_cq(struct shim_client *c, struct dpr_shm_msg *m, int *out_fd)
{
	struct job j = { .kind = JOB_CREATE_CQ, .c = c };
	struct shim_channel *ch = NULL;
	uint32_t cqe = m->create_cq.cqe, size = 1, h;
	struct shim_cq *s;
	void *ring;
	int fd, rc;

	if (cqe == 0 || cqe > DPR_SHM_MAX_CQE)
		return -EINVAL;
	if (m->create_cq.channel >= 0) {
		ch = obj_get(c, (uint32_t)m->create_cq.channel, OBJ_CHANNEL);
		if (ch == NULL)
			return -EINVAL;
	}
	if (c->n_cq >= SHIM_MAX_CQ) {
		shim.st.quota_refused++;
		return -ENOMEM;
	}
	while (size < cqe)
		size <<= 1;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->c = c;
	s->cqe = cqe;
	s->size = size;
	s->chan_fd = ch != NULL ? ch->fd : -1;
	s->chan_handle = ch != NULL ? (uint32_t)m->create_cq.channel : 0;
	s->map_bytes = page_round(dpr_shm_ring_bytes(size, sizeof(struct dpr_shm_cqe)));
	fd = make_shared("dprdma-cq", s->map_bytes, &ring);
	if (fd < 0) {
		free(s);
		return fd;
	}
	s->ring = ring;
	h = obj_add(c, OBJ_CQ, s);
	if (h == 0) {
		rc = -ENOMEM;
		goto fail;
	}
	s->handle = h;
	j.p = s;
	rc = job(&j);
	if (rc != 0) {
		obj_del(c, h);
		goto fail;
	}
	if (ch != NULL)
		ch->users++;
	c->n_cq++;
	m->create_cq_resp.handle = h;
	m->create_cq_resp.cqe = cqe;
	m->create_cq_resp.size = size;
	m->create_cq_resp.map_bytes = s->map_bytes;
	*out_fd = fd;
	return 0;
fail:
	close(fd);
	munmap(ring, s->map_bytes);
	free(s);
	return rc;
}

static int
req_destroy_cq(struct shim_client *c, uint32_t h)
{
	struct shim_cq *s = obj_get(c, h, OBJ_CQ);
	struct job j = { .kind = JOB_DESTROY_CQ, .c = c, .p = s };
	int rc;

	if (s == NULL)
		return -EINVAL;
	if (s->users != 0)
		return -EBUSY;
	rc = job(&j);
	if (rc != 0)
		return rc;
	if (s->chan_fd >= 0) {
		struct shim_channel *ch = obj_get(c, s->chan_handle, OBJ_CHANNEL);

		if (ch != NULL)
			ch->users--;
	}
	munmap(s->ring, s->map_bytes);
	obj_del(c, h);
	free(s);
	c->n_cq--;
	return 0;
}

static uint32_t
pow2_at_least(uint32_t n)
{
	uint32_t s = 1;

	while (s < n)
		s <<= 1;
	return s;
}

static int
req_create_qp(struct shim_client *c, struct dpr_shm_msg *m, int *out_fd)
{
	struct job j = { .kind = JOB_CREATE_QP, .c = c };
	struct dpr_shm_qp_caps cap = m->create_qp.cap;
	struct shim_cq *scq, *rcq;
	struct dpr_pd *pd;
	struct shim_qp *q;
	uint32_t slot, h;
	size_t sq_bytes;
	void *ring;
	int fd, rc;

	if (m->create_qp.qp_type != 2 /* IBV_QPT_RC */)
		return -EOPNOTSUPP;     /* UC, UD, XRC: the transport-breadth work */
	pd = obj_get(c, m->create_qp.pd, OBJ_PD);
	scq = obj_get(c, m->create_qp.send_cq, OBJ_CQ);
	rcq = obj_get(c, m->create_qp.recv_cq, OBJ_CQ);
	if (pd == NULL || scq == NULL || rcq == NULL ||
	    cap.max_send_wr == 0 || cap.max_send_wr > DPR_SHM_MAX_WR ||
	    cap.max_recv_wr > DPR_SHM_MAX_WR ||
	    cap.max_send_sge > DPR_SHM_MAX_SEND_SGE ||
	    cap.max_recv_sge > DPR_SHM_MAX_RECV_SGE ||
	    cap.max_inline_data > DPR_SHM_MAX_INLINE)
		return -EINVAL;
	for (slot = 0; slot < DPR_SHM_MAX_QPS && c->qps[slot] != NULL; slot++)
		;
	if (slot == DPR_SHM_MAX_QPS) {
		shim.st.quota_refused++;
		SHIM_LOG(NOTICE, "client %u: QP refused: over its quota (%u QPs)",
			 c->id, DPR_SHM_MAX_QPS);
		return -ENOMEM;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return -ENOMEM;
	q->c = c;
	q->scq = scq;
	q->rcq = rcq;
	q->pd_handle = m->create_qp.pd;
	q->slot = slot;
	q->sq_size = pow2_at_least(cap.max_send_wr);
	q->rq_size = pow2_at_least(RTE_MAX(cap.max_recv_wr, 1u));
	cap.max_send_wr = q->sq_size;
	cap.max_recv_wr = cap.max_recv_wr ? q->rq_size : 0;
	cap.max_send_sge = RTE_MAX(cap.max_send_sge, 1u);
	cap.max_recv_sge = RTE_MAX(cap.max_recv_sge, 1u);
	q->cap = cap;
	sq_bytes = RTE_ALIGN_CEIL(dpr_shm_ring_bytes(q->sq_size,
			sizeof(struct dpr_shm_swqe)), DPR_SHM_CACHE_LINE);
	q->map_bytes = page_round(sq_bytes + dpr_shm_ring_bytes(q->rq_size,
			sizeof(struct dpr_shm_rwqe)));
	fd = make_shared("dprdma-qp", q->map_bytes, &ring);
	if (fd < 0) {
		free(q);
		return fd;
	}
	q->sq = ring;
	q->rq = (struct dpr_shm_ring *)((uint8_t *)ring + sq_bytes);
	h = obj_add(c, OBJ_QP, q);
	if (h == 0) {
		rc = -ENOMEM;
		goto fail;
	}
	q->handle = h;
	j.p = q;
	j.ia.pd = pd;
	j.ia.send_cq = scq->cq;
	j.ia.recv_cq = rcq->cq;
	/* the transport holds as many as the ring: a full ring always fits */
	j.ia.max_send_wr = q->sq_size;
	j.ia.max_recv_wr = q->rq_size;
	j.ia.max_send_sge = cap.max_send_sge;
	j.ia.max_recv_sge = cap.max_recv_sge;
	j.ia.max_inline_data = cap.max_inline_data;
	j.ia.sq_sig_all = m->create_qp.sq_sig_all != 0;
	rc = job(&j);
	if (rc != 0) {
		obj_del(c, h);
		goto fail;
	}
	scq->users++;
	rcq->users++;
	c->n_qp++;
	memset(&m->create_qp_resp, 0, sizeof(m->create_qp_resp));
	m->create_qp_resp.handle = h;
	m->create_qp_resp.qpn = q->qpn;
	m->create_qp_resp.slot = slot;
	m->create_qp_resp.sq_size = q->sq_size;
	m->create_qp_resp.rq_size = q->rq_size;
	m->create_qp_resp.cap = cap;
	m->create_qp_resp.map_bytes = q->map_bytes;
	m->create_qp_resp.rq_offset = sq_bytes;
	*out_fd = fd;
	return 0;
fail:
	close(fd);
	munmap(ring, q->map_bytes);
	free(q);
	return rc;
}

static void
attr_from_shm(const struct dpr_shm_qp_attr *s, struct dpr_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = (enum dpr_qp_state)s->qp_state;
	a->cur_qp_state = (enum dpr_qp_state)s->cur_qp_state;
	a->path_mtu = (enum dpr_mtu)s->path_mtu;
	a->rq_psn = s->rq_psn;
	a->sq_psn = s->sq_psn;
	a->dest_qp_num = s->dest_qp_num;
	a->qp_access_flags = s->qp_access_flags;
	memcpy(a->ah_attr.dgid.raw, s->dgid.raw, 16);
	a->ah_attr.flow_label = s->flow_label;
	a->ah_attr.sgid_index = s->sgid_index;
	a->ah_attr.hop_limit = s->hop_limit;
	a->ah_attr.traffic_class = s->traffic_class;
	a->ah_attr.port_num = s->port_num;
	a->pkey_index = s->pkey_index;
	a->max_rd_atomic = s->max_rd_atomic;
	a->max_dest_rd_atomic = s->max_dest_rd_atomic;
	a->min_rnr_timer = s->min_rnr_timer;
	a->port_num = s->port_num;
	a->timeout = s->timeout;
	a->retry_cnt = s->retry_cnt;
	a->rnr_retry = s->rnr_retry;
}

static void
attr_to_shm(const struct dpr_qp_attr *a, struct dpr_shm_qp_attr *s)
{
	memset(s, 0, sizeof(*s));
	s->qp_state = a->qp_state;
	s->cur_qp_state = a->cur_qp_state;
	s->path_mtu = a->path_mtu;
	s->rq_psn = a->rq_psn;
	s->sq_psn = a->sq_psn;
	s->dest_qp_num = a->dest_qp_num;
	s->qp_access_flags = a->qp_access_flags;
	memcpy(s->dgid.raw, a->ah_attr.dgid.raw, 16);
	s->flow_label = a->ah_attr.flow_label;
	s->sgid_index = a->ah_attr.sgid_index;
	s->hop_limit = a->ah_attr.hop_limit;
	s->traffic_class = a->ah_attr.traffic_class;
	s->is_global = 1;
	s->pkey_index = a->pkey_index;
	s->max_rd_atomic = a->max_rd_atomic;
	s->max_dest_rd_atomic = a->max_dest_rd_atomic;
	s->min_rnr_timer = a->min_rnr_timer;
	s->port_num = a->port_num ? a->port_num : 1;
	s->timeout = a->timeout;
	s->retry_cnt = a->retry_cnt;
	s->rnr_retry = a->rnr_retry;
}

static int
req_modify_qp(struct shim_client *c, struct dpr_shm_msg *m)
{
	struct job j = { .kind = JOB_MODIFY_QP, .c = c };
	const struct dpr_shm_qp_attr *s = &m->modify_qp.attr;

	j.p = obj_get(c, m->modify_qp.handle, OBJ_QP);
	if (j.p == NULL)
		return -EINVAL;
	if (m->modify_qp.mask & DPR_QP_AV) {
		/* RoCE needs the GRH: its GID is the address. The table has
		 * two entries; only the IPv4 one (1) carries traffic today */
		if (!s->is_global || s->sgid_index > 1)
			return -EINVAL;
		if (s->sgid_index == 0)
			return -EAFNOSUPPORT;   /* IPv6 comes with its own work */
	}
	attr_from_shm(s, &j.attr);
	j.mask = (int)m->modify_qp.mask;
	return job(&j);
}

static int
req_query_qp(struct shim_client *c, struct dpr_shm_msg *m)
{
	struct job j = { .kind = JOB_QUERY_QP, .c = c };
	struct shim_qp *q = obj_get(c, m->obj.handle, OBJ_QP);
	int rc;

	if (q == NULL)
		return -EINVAL;
	j.p = q;
	rc = job(&j);
	if (rc != 0)
		return rc;
	memset(&m->query_qp_resp, 0, sizeof(m->query_qp_resp));
	attr_to_shm(&j.attr, &m->query_qp_resp.attr);
	m->query_qp_resp.cap = q->cap;
	return 0;
}

static int
req_destroy_qp(struct shim_client *c, uint32_t h)
{
	struct shim_qp *q = obj_get(c, h, OBJ_QP);
	struct job j = { .kind = JOB_DESTROY_QP, .c = c, .p = q };
	int rc;

	if (q == NULL)
		return -EINVAL;
	rc = job(&j);
	if (rc != 0)
		return rc;
	/* its counters, for the record (as `rdma statistic` would show them) */
	SHIM_LOG(INFO, "client %u QP 0x%06x destroyed: %" PRIu64 " send WQEs, %"
		 PRIu64 " receive WQEs", c->id, q->qpn, q->send_wqes, q->recv_wqes);
	q->scq->users--;
	q->rcq->users--;
	munmap(q->sq, q->map_bytes);
	obj_del(c, h);
	free(q);
	c->n_qp--;
	return 0;
}

/* ------------------------------------------------------ the socket */

static int
send_msg(int fd, const struct dpr_shm_msg *m, int pass_fd)
{
	return dpr_shm_send(fd, m, sizeof(*m), pass_fd) == (ssize_t)sizeof(*m) ? 0 : -1;
}

static void client_close(unsigned int slot, const char *why);

/* One request. @return false when the client is to be dropped. */
static bool
serve(unsigned int slot)
{
	struct shim_client *c = shim.clients[slot];
	struct dpr_shm_msg m;
	int in_fd = -1, out_fd = -1, rc, mflags = 0;
	ssize_t n;

	n = dpr_shm_recv(c->fd, &m, sizeof(m), MSG_DONTWAIT, &in_fd, &mflags);
	if (n == 0) {
		client_close(slot, "closed its connection");
		return false;
	}
	if (n < 0) {
		if (errno == EAGAIN)
			return true;
		client_close(slot, strerror(errno));
		return false;
	}
	shim.st.requests++;
	c->requests++;
	if (n != (ssize_t)sizeof(m) || (mflags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    m.magic != DPR_SHM_MAGIC || m.version != DPR_SHM_VERSION ||
	    m.op == 0 || m.op >= DPR_SHM_OP_MAX ||
	    (!c->opened && m.op != DPR_SHM_OPEN && m.op != DPR_SHM_LIST_DEVICES)) {
		/* not speaking this protocol: answer once, and go on */
		shim.st.bad_messages++;
		if (in_fd >= 0)
			close(in_fd);
		if (n >= (ssize_t)offsetof(struct dpr_shm_msg, status) &&
		    m.magic == DPR_SHM_MAGIC && m.version != DPR_SHM_VERSION)
			SHIM_LOG(NOTICE, "client %u speaks version %u, this "
				 "dprdmad %u: use the matching library",
				 c->id, m.version, DPR_SHM_VERSION);
		memset(&m, 0, sizeof(m));
		m.magic = DPR_SHM_MAGIC;
		m.version = DPR_SHM_VERSION;
		m.status = -EPROTO;
		send_msg(c->fd, &m, -1);
		return true;
	}
	switch (m.op) {
	case DPR_SHM_OPEN:
		rc = req_open(c, &m, &in_fd, &out_fd);
		break;
	case DPR_SHM_LIST_DEVICES: {
		uint16_t pi;

		memset(&m.list_resp, 0, sizeof(m.list_resp));
		for (pi = 0; pi < dpr_engine_n_ports() &&
		     pi < DPR_SHM_MAX_DEVICES; pi++) {
			struct dpr_port_info info;

			dpr_engine_port_info(pi, &info);
			mac_eui64(info.mac.addr_bytes, (uint8_t *)&m.list_resp.guid[pi]);
			m.list_resp.n++;
		}
		rc = 0;
		break;
	}
	case DPR_SHM_QUERY_PORT:
		fill_port(c, &m.port_resp);
		rc = 0;
		break;
	case DPR_SHM_ALLOC_PD:
		rc = req_alloc_pd(c, &m);
		break;
	case DPR_SHM_DEALLOC_PD:
		rc = req_dealloc_pd(c, m.obj.handle);
		break;
	case DPR_SHM_REG_MR:
		rc = req_reg_mr(c, &m, in_fd);
		break;
	case DPR_SHM_DEREG_MR:
		rc = req_dereg_mr(c, m.obj.handle);
		break;
	case DPR_SHM_CREATE_CHANNEL:
		rc = req_create_channel(c, &m, &in_fd);
		break;
	case DPR_SHM_DESTROY_CHANNEL:
		rc = req_destroy_channel(c, m.obj.handle);
		break;
	case DPR_SHM_CREATE_CQ:
		rc = req_create_cq(c, &m, &out_fd);
		break;
	case DPR_SHM_DESTROY_CQ:
		rc = req_destroy_cq(c, m.obj.handle);
		break;
	case DPR_SHM_CREATE_QP:
		rc = req_create_qp(c, &m, &out_fd);
		break;
	case DPR_SHM_MODIFY_QP:
		rc = req_modify_qp(c, &m);
		break;
	case DPR_SHM_QUERY_QP:
		rc = req_query_qp(c, &m);
		break;
	case DPR_SHM_DESTROY_QP:
		rc = req_destroy_qp(c, m.obj.handle);
		break;
	default:
		rc = -EOPNOTSUPP;
		break;
	}
	if (in_fd >= 0)
		close(in_fd);
	if (rc != 0) {
		shim.st.refused++;
		c->refused++;
	}
	m.status = rc;
	if (send_msg(c->fd, &m, rc == 0 ? out_fd : -1) != 0) {
		if (out_fd >= 0)
			close(out_fd);
		client_close(slot, "does not take its answers");
		return false;
	}
	if (out_fd >= 0)
		close(out_fd);
	return true;
}

/* Everything a client made goes, in the order that frees it: QPs (to ERR
 * first, so that nothing more is placed), MRs (invalid before their
 * memory is unmapped), CQs, channels, PDs. */
static void
client_cleanup(struct shim_client *c)
{
	static const uint8_t order[] = { OBJ_QP, OBJ_MR, OBJ_CQ, OBJ_CHANNEL, OBJ_PD };
	unsigned int k;
	uint32_t h;

	for (k = 0; k < RTE_DIM(order); k++)
		for (h = 1; h <= SHIM_MAX_OBJS; h++) {
			if (c->obj[h - 1].type != order[k])
				continue;
			switch (order[k]) {
			case OBJ_QP:
				req_destroy_qp(c, h);
				break;
			case OBJ_MR:
				req_dereg_mr(c, h);
				break;
			case OBJ_CQ:
				req_destroy_cq(c, h);
				break;
			case OBJ_CHANNEL:
				req_destroy_channel(c, h);
				break;
			case OBJ_PD:
				req_dealloc_pd(c, h);
				break;
			}
		}
	if (c->opened) {
		struct job j = { .kind = JOB_DETACH, .c = c };

		job(&j);
		shim.load[c->worker]--;
	}
	if (c->ctrl != NULL)
		munmap(c->ctrl, page_round(sizeof(*c->ctrl)));
	if (c->async_fd >= 0)
		close(c->async_fd);
}

static void
client_close(unsigned int slot, const char *why)
{
	struct shim_client *c = shim.clients[slot];

	SHIM_LOG(INFO, "client %u (pid %d) %s: %u QPs, %u MRs, %u CQs, %u PDs "
		 "released", c->id, (int)c->pid, why, c->n_qp, c->n_mr, c->n_cq,
		 c->n_pd);
	client_cleanup(c);
	close(c->fd);
	free(c);
	shim.clients[slot] = NULL;
	shim.st.clients_closed++;
}

int
dpr_shim_adopt(int fd)
{
	struct shim_client *c;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	unsigned int slot;

	for (slot = 0; slot < shim.max_clients && shim.clients[slot] != NULL; slot++)
		;
	if (slot == shim.max_clients) {
		/* tell it why (its first call fails with EUSERS), then hang
		 * up; what it sent already is read first, so that closing
		 * does not reset the connection before it reads the answer */
		struct dpr_shm_msg m = { .magic = DPR_SHM_MAGIC,
					 .version = DPR_SHM_VERSION,
					 .status = -EUSERS };
		char junk[sizeof(m)];
		int rfd;

		SHIM_LOG(WARNING, "a client refused: %u connections already "
			 "([control] max_clients)", shim.max_clients);
		shim.st.quota_refused++;        /* counted before it is told */
		while (dpr_shm_recv(fd, junk, sizeof(junk), MSG_DONTWAIT, &rfd,
				    NULL) > 0)
			if (rfd >= 0)
				close(rfd);
		dpr_shm_send(fd, &m, sizeof(m), -1);
		return -EUSERS;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	if (fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
		free(c);
		return -errno;
	}
	c->fd = fd;
	c->async_fd = -1;
	c->id = ++shim.next_id;
	c->uid = (uid_t)-1;
	c->gid = (gid_t)-1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
		c->pid = cred.pid;
		c->uid = cred.uid;
		c->gid = cred.gid;
	}
	shim.clients[slot] = c;
	shim.st.clients_connected++;
	return 0;
}

unsigned int
dpr_shim_clients(void)
{
	unsigned int i, n = 0;

	for (i = 0; shim.started && i < shim.max_clients; i++)
		n += shim.clients[i] != NULL;
	return n;
}

static void
accept_one(void)
{
	int fd = accept4(shim.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd >= 0 && dpr_shim_adopt(fd) != 0)
		close(fd);
}

int
dpr_shim_start(const struct dpr_config *conf, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	unsigned int wi;
	char dir[108], *slash;
	int fd;

	shim.max_clients = conf->control.max_clients;
	shim.clients = calloc(shim.max_clients, sizeof(*shim.clients));
	if (shim.clients == NULL)
		return -ENOMEM;
	for (wi = 0; wi < dpr_engine_n_workers(); wi++) {
		shim.wl[wi] = calloc(shim.max_clients, sizeof(*shim.wl[wi]));
		if (shim.wl[wi] == NULL)
			return -ENOMEM;
	}
	snprintf(shim.path, sizeof(shim.path), "%s", conf->control.socket);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", shim.path);
	/* its folder (/run/dprdma by default) */
	snprintf(dir, sizeof(dir), "%s", shim.path);
	slash = strrchr(dir, '/');
	if (slash != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
			snprintf(err, errlen, "cannot make the folder %s of the client "
				 "socket: %s; set [control] socket or --socket",
				 dir, strerror(errno));
			return -errno;
		}
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* a socket file left by a daemon that died is taken over; one that
	 * answers belongs to a running daemon */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ||
	    errno == EAGAIN) {
		close(fd);
		snprintf(err, errlen, "another dprdmad serves clients on %s: give "
			 "this one its own ([control] socket or --socket)", shim.path);
		return -EADDRINUSE;
	}
	unlink(shim.path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(shim.path, conf->control.socket_mode) != 0 ||
	    listen(fd, 64) != 0) {
		int e = errno;

		snprintf(err, errlen, "cannot listen on %s: %s; set [control] "
			 "socket or --socket", shim.path, strerror(e));
		close(fd);
		return -e;
	}
	for (uint16_t pi = 0; pi < dpr_engine_n_ports(); pi++) {
		uint32_t n = dpr_verbs_limits(dpr_engine_verbs(pi))->max_qp + 0x100;

		qp_by_qpn[pi] = calloc(n, sizeof(*qp_by_qpn[pi]));
		if (qp_by_qpn[pi] == NULL) {
			close(fd);
			return -ENOMEM;
		}
		qp_by_qpn_len[pi] = n;
		dpr_verbs_set_event_cb(dpr_engine_verbs(pi), verbs_event,
				       (void *)(uintptr_t)pi);
	}
	shim.lfd = fd;
	shim.started = true;
	return 0;
}

void
dpr_shim_poll(int timeout_ms)
{
	struct pollfd *pf;
	unsigned int *slots, n = 1, i;

	if (!shim.started) {
		poll(NULL, 0, timeout_ms);
		return;
	}
	pf = alloca((shim.max_clients + 1) * sizeof(*pf));
	slots = alloca((shim.max_clients + 1) * sizeof(*slots));
	pf[0].fd = shim.lfd;
	pf[0].events = POLLIN;
	for (i = 0; i < shim.max_clients; i++)
		if (shim.clients[i] != NULL) {
			pf[n].fd = shim.clients[i]->fd;
			pf[n].events = POLLIN;
			slots[n++] = i;
		}
	if (poll(pf, n, timeout_ms) <= 0)
		return;
	for (i = 1; i < n; i++) {
		if (pf[i].revents & POLLIN) {
			/* a few requests each, so that no client starves others */
			for (int k = 0; k < 16 && shim.clients[slots[i]] != NULL; k++)
				if (!serve(slots[i]))
					break;
		} else if (pf[i].revents & (POLLHUP | POLLERR | POLLNVAL)) {
			client_close(slots[i], "went away");
		}
	}
	if (pf[0].revents & POLLIN)
		accept_one();
}

void
dpr_shim_stop(void)
{
	unsigned int i;

	if (!shim.started)
		return;
	for (i = 0; i < shim.max_clients; i++)
		if (shim.clients[i] != NULL)
			client_close(i, "dropped: dprdmad stops");
	close(shim.lfd);
	unlink(shim.path);
	shim.lfd = -1;
	shim.started = false;
}

/* ----------------------------------------------------------- telemetry */

static int
tel_stats(const char *cmd __rte_unused, const char *params __rte_unused,
	  struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "clients", dpr_shim_clients());
#define _(n) rte_tel_data_add_dict_u64(d, #n, shim.st.n);
	SHIM_STATS(_)
#undef _
#define _(n) { \
		uint64_t sum = 0; \
		for (unsigned int wi = 0; wi < dpr_engine_n_workers(); wi++) \
			sum += shim.ws[wi].n; \
		rte_tel_data_add_dict_u64(d, #n, sum); \
	}
	SHIM_WORKER_STATS(_)
#undef _
	/* live verbs objects of every device: back to their baseline once
	 * clients are gone */
	{
		struct dpr_verbs_usage u, sum = { 0 };

		for (uint16_t pi = 0; pi < dpr_engine_n_ports(); pi++) {
			dpr_verbs_usage(dpr_engine_verbs(pi), &u);
			sum.pd += u.pd;
			sum.mr += u.mr;
			sum.cq += u.cq;
			sum.qp += u.qp;
		}
		rte_tel_data_add_dict_u64(d, "verbs_pds", sum.pd);
		rte_tel_data_add_dict_u64(d, "verbs_mrs", sum.mr);
		rte_tel_data_add_dict_u64(d, "verbs_cqs", sum.cq);
		rte_tel_data_add_dict_u64(d, "verbs_qps", sum.qp);
	}
	return 0;
}

static int
tel_clients(const char *cmd __rte_unused, const char *params __rte_unused,
	    struct rte_tel_data *d)
{
	unsigned int i;

	rte_tel_data_start_dict(d);
	for (i = 0; shim.started && i < shim.max_clients; i++) {
		const struct shim_client *c = shim.clients[i];
		struct rte_tel_data *e;
		char name[32];

		if (c == NULL)
			continue;
		e = rte_tel_data_alloc();
		if (e == NULL)
			break;
		rte_tel_data_start_dict(e);
		rte_tel_data_add_dict_int(e, "pid", c->pid);
		rte_tel_data_add_dict_u64(e, "worker", c->worker);
		rte_tel_data_add_dict_u64(e, "pds", c->n_pd);
		rte_tel_data_add_dict_u64(e, "mrs", c->n_mr);
		rte_tel_data_add_dict_u64(e, "mr_bytes", c->mr_bytes);
		rte_tel_data_add_dict_u64(e, "cqs", c->n_cq);
		rte_tel_data_add_dict_u64(e, "qps", c->n_qp);
		rte_tel_data_add_dict_u64(e, "requests", c->requests);
		rte_tel_data_add_dict_u64(e, "refused", c->refused);
		snprintf(name, sizeof(name), "%u", c->id);
		rte_tel_data_add_dict_container(d, name, e, 0);
	}
	return 0;
}

/*
 * One client's rings, as both sides left them: for each QP the indices of
 * its send and receive rings (what the client posted, what the daemon
 * took), for each CQ what the daemon produced and the client consumed.
 * A completion the daemon wrote but the program never polled shows as
 * cq prod > cons. Indices are read without stopping anyone: a snapshot.
 */
static int
tel_client(const char *cmd __rte_unused, const char *params,
	   struct rte_tel_data *d)
{
	const struct shim_client *c = NULL;
	struct rte_tel_data *qps, *cqs;
	unsigned long id;
	unsigned int i;
	char *end;

	if (params == NULL || *params == '\0')
		return -EINVAL;
	id = strtoul(params, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	for (i = 0; shim.started && i < shim.max_clients; i++)
		if (shim.clients[i] != NULL && shim.clients[i]->id == id)
			c = shim.clients[i];
	if (c == NULL)
		return -ENOENT;
	qps = rte_tel_data_alloc();
	cqs = rte_tel_data_alloc();
	if (qps == NULL || cqs == NULL) {
		rte_tel_data_free(qps);
		rte_tel_data_free(cqs);
		return -ENOMEM;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "pid", c->pid);
	rte_tel_data_add_dict_u64(d, "worker", c->worker);
	rte_tel_data_start_array(qps, RTE_TEL_STRING_VAL);
	rte_tel_data_start_array(cqs, RTE_TEL_STRING_VAL);
	for (i = 0; i < SHIM_MAX_OBJS; i++) {
		char line[160];

		if (c->obj[i].type == OBJ_QP) {
			const struct shim_qp *q = c->obj[i].p;

			snprintf(line, sizeof(line), "qpn 0x%06x sq %u/%u taken %" PRIu64
				 " rq %u/%u taken %" PRIu64 "%s",
				 q->qpn, __atomic_load_n(&q->sq->prod, __ATOMIC_RELAXED),
				 __atomic_load_n(&q->sq->cons, __ATOMIC_RELAXED),
				 q->send_wqes,
				 __atomic_load_n(&q->rq->prod, __ATOMIC_RELAXED),
				 __atomic_load_n(&q->rq->cons, __ATOMIC_RELAXED),
				 q->recv_wqes, q->broken ? " broken" : "");
			rte_tel_data_add_array_string(qps, line);
		} else if (c->obj[i].type == OBJ_CQ) {
			const struct shim_cq *q = c->obj[i].p;

			snprintf(line, sizeof(line), "cq %u cqe %u prod %u cons %u "
				 "armed %u%s", q->handle, q->cqe,
				 __atomic_load_n(&q->ring->prod, __ATOMIC_RELAXED),
				 __atomic_load_n(&q->ring->cons, __ATOMIC_RELAXED),
				 __atomic_load_n(&q->ring->armed, __ATOMIC_RELAXED),
				 q->overflowed ? " overflowed" : "");
			rte_tel_data_add_array_string(cqs, line);
		}
	}
	rte_tel_data_add_dict_container(d, "qps", qps, 0);
	rte_tel_data_add_dict_container(d, "cqs", cqs, 0);
	return 0;
}

void
dpr_shim_register_telemetry(void)
{
	rte_telemetry_register_cmd("/dprdma/shim/client", tel_client,
		"One client's QP and CQ rings: posted/taken, produced/consumed. "
		"Parameter: client id");
	rte_telemetry_register_cmd("/dprdma/shim/stats", tel_stats,
		"Verbs shim counters: clients, requests, refusals, WQEs, CQEs");
	rte_telemetry_register_cmd("/dprdma/shim/clients", tel_clients,
		"Connected clients: pid, worker, objects, registered bytes");
}
