/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * What the shim's request rooms share, below them all: a client's table of
 * handles (indexes into its own table: a client can only name what it
 * made), the jobs that make and change its verbs objects on its worker
 * (which owns them: shim_job), and the sealed memfds the daemon makes for
 * its rings and control page. It calls only the worker side
 * (dpr_shim_datapath.c); the client, object and memory rooms call it.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "dpr_ratelimit.h"
#include "shim_private.h"

/* ------------------------------------------------------------ handles */

uint32_t
shim_obj_cap(void)
{
	return shim.lim.qps + shim.lim.cqs + shim.lim.pds + shim.lim.mrs +
		SHIM_MAX_CHANNELS + SHIM_MAX_SRQ;
}

/* The lowest free handle. The table grows as the client's objects do
 * (doubling, from 64) to at most the quotas together: each request checks
 * its own quota before it adds. Only the main lcore reads it. */
uint32_t
shim_obj_add(struct shim_client *c, enum obj_type t, void *p)
{
	const uint32_t cap = shim_obj_cap();
	uint32_t i;

	for (i = c->obj_hint; i < cap; i++) {
		if (i == c->obj_cap) {
			uint32_t n = c->obj_cap < 32 ? 64 : 2 * c->obj_cap;
			struct shim_obj *o;

			n = RTE_MIN(n, cap);
			o = realloc(c->obj, n * sizeof(*o));
			if (o == NULL)
				return 0;
			memset(&o[c->obj_cap], 0, (n - c->obj_cap) * sizeof(*o));
			c->obj = o;
			c->obj_cap = n;
		}
		if (c->obj[i].type == OBJ_FREE) {
			c->obj[i].type = (uint8_t)t;
			c->obj[i].p = p;
			c->obj_hint = i + 1;
			if (i >= c->obj_hi)
				c->obj_hi = i + 1;
			return i + 1;
		}
	}
	return 0;
}

void *
shim_obj_get(struct shim_client *c, uint32_t h, enum obj_type t)
{
	if (h == 0 || h > c->obj_hi || c->obj[h - 1].type != t)
		return NULL;
	return c->obj[h - 1].p;
}

void
shim_obj_del(struct shim_client *c, uint32_t h)
{
	c->obj[h - 1].type = OBJ_FREE;
	c->obj[h - 1].p = NULL;
	if (h - 1 < c->obj_hint)
		c->obj_hint = h - 1;
}

/* --------------------------------------------- jobs on the worker */

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
		/* the mapping goes back to the shim with its last frame */
		mr = dpr_mr_reg_owned(j->p, j->addr, j->iova, j->length, j->access,
				      &j->owner);
		rc = mr == NULL ? -errno : 0;
		dpr_engine_verbs_unlock();
		j->out = mr;
		break;
	}
	case JOB_REREG_MR:
		dpr_engine_verbs_lock();
		j->out = dpr_mr_rereg(j->old, j->p, j->addr, j->iova, j->length,
				      j->access, &j->owner);
		rc = j->out == NULL ? -errno : 0;
		dpr_engine_verbs_unlock();
		break;
	case JOB_ALLOC_MW:
		dpr_engine_verbs_lock();
		j->out = dpr_mw_alloc(j->p, j->access);
		rc = j->out == NULL ? -errno : 0;
		dpr_engine_verbs_unlock();
		break;
	case JOB_DEALLOC_MW:
		dpr_engine_verbs_lock();
		rc = dpr_mw_dealloc(j->p);
		dpr_engine_verbs_unlock();
		break;
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
			s->cq->push = shim_cq_push;
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
			q->ud = j->ia.qp_type == DPR_QPT_UD;
			shim_qp_attach(q);
			c->qps[q->slot] = q;
			shim_qp_table_set(c->port, q->qpn, q);
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
	case JOB_CREATE_SRQ: {
		struct shim_srq *s = j->p;

		dpr_engine_verbs_lock();
		s->srq = dpr_srq_create(dpr_engine_transport(wi, c->port), j->addr,
					j->max_wr, j->max_sge);
		rc = s->srq == NULL ? -errno : 0;
		dpr_engine_verbs_unlock();
		if (s->srq != NULL) {
			dpr_srq_set_limit(s->srq, j->limit);
			shim_srq_attach(s);
			c->srqs[s->slot] = s;
		}
		break;
	}
	case JOB_MODIFY_SRQ:
		rc = dpr_srq_set_limit(((struct shim_srq *)j->p)->srq, j->limit);
		break;
	case JOB_QUERY_SRQ:
		dpr_srq_query(((struct shim_srq *)j->p)->srq, &j->max_wr, &j->max_sge,
			      &j->limit);
		break;
	case JOB_DESTROY_SRQ: {
		struct shim_srq *s = j->p;

		c->srqs[s->slot] = NULL;
		dpr_engine_verbs_lock();
		rc = dpr_srq_destroy(s->srq);
		dpr_engine_verbs_unlock();
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
		shim_qp_table_set(c->port, q->qpn, NULL);
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
	case JOB_ALLOC_MW:
		/* (windows take MR slots) */
		what = "MR", used = u.mr + u.mw, max = l->max_mr;
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

/* Jobs the main lcore runs itself: PDs and CQs are only counted and
 * made under the verbs lock, and no worker looks at one until a QP that
 * uses it is made there (a CQ goes only once no QP uses it): the hop to a
 * napping worker and back (about 35 us each on a shared 2-core VM, six per
 * RDMA CM connection) buys nothing for them. QPs, MRs and windows stay on
 * the worker, whose data path reads their tables without a lock. */
static bool
job_inline(enum job_kind kind)
{
	return kind == JOB_ALLOC_PD || kind == JOB_DEALLOC_PD ||
	       kind == JOB_CREATE_CQ || kind == JOB_DESTROY_CQ;
}

int
shim_job(struct job *j)
{
	int rc = job_inline(j->kind) ? job_run(j) :
		dpr_engine_run_on(j->c->worker, job_run, j);

	if (rc == -ENOMEM)
		note_device_limit(j);
	return rc;
}

/* ------------------------------------- objects made on the worker */

uint32_t
shim_obj_enter(struct shim_client *c, struct job *j, enum obj_type t,
	       enum job_kind undo)
{
	uint32_t h = shim_obj_add(c, t, j->out);

	if (h == 0) {
		j->kind = undo;
		j->p = j->out;
		shim_job(j);
	}
	return h;
}

int
shim_obj_unmake(struct shim_client *c, uint32_t h, enum obj_type t,
		enum job_kind kind)
{
	struct job j = { .kind = kind, .c = c };
	int rc;

	j.p = shim_obj_get(c, h, t);
	if (j.p == NULL)
		return -EINVAL;
	rc = shim_job(&j);
	if (rc == 0)
		shim_obj_del(c, h);
	return rc;
}

/* ----------------------------------------------- shared memory */

int
shim_make_shared(const char *name, size_t len, void **addr)
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
		static struct dpr_ratelimit rl;
		int e = errno;
		uint32_t missed;

		if (e == ENOMEM && dpr_ratelimit(&rl, &missed))
			SHIM_LOG(NOTICE, "cannot map the rings of a new %s (%s): "
				 "dprdmad is at vm.max_map_count or out of memory; "
				 "raise vm.max_map_count (sysctl) to hold more QPs "
				 "and CQs%s", name, strerror(e),
				 missed ? " (more such lines suppressed)" : "");

		close(fd);
		return -e;
	}
	return fd;
}

size_t
shim_page_round(uint64_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (size_t)((n + pg - 1) & ~(uint64_t)(pg - 1));
}
