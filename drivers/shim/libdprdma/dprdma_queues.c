/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * libdprdma's completion channels, CQs, QPs and SRQs: made, changed and
 * destroyed through requests to dprdmad, their rings mapped from the
 * memfds it sends; the lists that find them by handle for events.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
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

/* CQ, QP and SRQ handles -> objects, for completion channels and events:
 * each context's table (the daemon numbers a client's objects densely
 * from 1). Lists searched from the front made each destroy and each
 * channel event O(objects): 10,000 connections' teardown spent most of
 * its CPU walking them. */
pthread_mutex_t obj_lock = PTHREAD_MUTEX_INITIALIZER;

int
dpr_obj_put(struct dprdma_context *ctx, uint32_t handle, enum dpr_obj_kind kind,
	    void *p)
{
	pthread_mutex_lock(&obj_lock);
	if (handle >= ctx->objs_cap) {
		uint32_t n = ctx->objs_cap < 64 ? 64 : ctx->objs_cap;
		struct dpr_obj_ref *o;

		while (n <= handle)
			n *= 2;
		o = realloc(ctx->objs, (size_t)n * sizeof(*o));
		if (o == NULL) {
			pthread_mutex_unlock(&obj_lock);
			return -ENOMEM;
		}
		memset(&o[ctx->objs_cap], 0, (size_t)(n - ctx->objs_cap) * sizeof(*o));
		ctx->objs = o;
		ctx->objs_cap = n;
	}
	ctx->objs[handle] = (struct dpr_obj_ref){ .p = p, .kind = kind };
	pthread_mutex_unlock(&obj_lock);
	return 0;
}

void
dpr_obj_drop(struct dprdma_context *ctx, uint32_t handle)
{
	pthread_mutex_lock(&obj_lock);
	if (handle < ctx->objs_cap)
		ctx->objs[handle] = (struct dpr_obj_ref){ 0 };
	pthread_mutex_unlock(&obj_lock);
}

void *
dpr_obj_find(const struct dprdma_context *ctx, uint32_t handle,
	     enum dpr_obj_kind kind)
{
	if (handle >= ctx->objs_cap || ctx->objs[handle].kind != kind)
		return NULL;
	return ctx->objs[handle].p;
}

/* ---------------------------------------------------------- channels */

struct dprdma_channel *
dprdma_create_channel(struct dprdma_context *ctx)
{
	struct dprdma_channel *ch = calloc(1, sizeof(*ch));
	struct dpr_shm_msg m = { .op = DPR_SHM_CREATE_CHANNEL };
	int p[2], rc;

	if (ch == NULL)
		return NULL;
	if (pipe2(p, O_CLOEXEC) != 0) {
		free(ch);
		return NULL;
	}
	rc = dpr_call(ctx, &m, p[1], NULL);
	close(p[1]);
	if (rc != 0) {
		close(p[0]);
		free(ch);
		errno = -rc;
		return NULL;
	}
	ch->ctx = ctx;
	ch->handle = m.obj.handle;
	ch->rfd = p[0];
	return ch;
}

int
dprdma_destroy_channel(struct dprdma_channel *ch)
{
	int rc = dpr_destroy_obj(ch->ctx, DPR_SHM_DESTROY_CHANNEL, ch->handle);

	if (rc == 0) {
		close(ch->rfd);
		free(ch);
	}
	return rc;
}

int
dprdma_channel_fd(const struct dprdma_channel *ch)
{
	return ch->rfd;
}

struct dprdma_cq *
dprdma_get_cq_event(struct dprdma_channel *ch)
{
	struct dprdma_cq *cq;
	uint32_t h;
	ssize_t n;

	/* No retry on EINTR: as with the kernel's uverbs, a signal ends the
	 * wait (-1, EINTR). Programs such as qperf stop their latency loops
	 * from a SIGALRM handler and rely on it; resuming the read hung the
	 * side whose peer had stopped sending first. */
	n = read(ch->rfd, &h, sizeof(h));
	if (n != sizeof(h)) {
		if (n >= 0)
			errno = EIO;
		return NULL;
	}
	pthread_mutex_lock(&obj_lock);
	cq = dpr_obj_find(ch->ctx, h, DPR_OBJ_CQ);
	if (cq != NULL && cq->ch != ch)
		cq = NULL;
	pthread_mutex_unlock(&obj_lock);
	if (cq == NULL)
		errno = ENOENT;
	return cq;
}

/* An object the daemon made that this library cannot keep (its rings
 * not mapped, or no room in the context's table): its mapping (NULL:
 * none), the daemon's object and ours go. @return NULL, errno ENOMEM. */
static void *
unkept(struct dprdma_context *ctx, uint16_t destroy_op, uint32_t handle,
       void *obj, void *map, size_t map_bytes)
{
	if (map != NULL)
		munmap(map, map_bytes);
	dpr_destroy_obj(ctx, destroy_op, handle);
	free(obj);
	errno = ENOMEM;
	return NULL;
}

/* --------------------------------------------------------------- CQ */

struct dprdma_cq *
dprdma_create_cq(struct dprdma_context *ctx, int cqe, struct dprdma_channel *ch)
{
	struct dprdma_cq *cq = calloc(1, sizeof(*cq));
	struct dpr_shm_msg m = { .op = DPR_SHM_CREATE_CQ };
	int fd = -1, rc;

	if (cq == NULL)
		return NULL;
	if (cqe <= 0) {
		free(cq);
		errno = EINVAL;
		return NULL;
	}
	m.create_cq.cqe = (uint32_t)cqe;
	m.create_cq.channel = ch != NULL ? (int32_t)ch->handle : -1;
	rc = dpr_call(ctx, &m, -1, &fd);
	if (rc == 0 && fd < 0)
		rc = -EPROTO;
	if (rc != 0) {
		free(cq);
		errno = -rc;
		return NULL;
	}
	cq->ctx = ctx;
	cq->ch = ch;
	cq->handle = m.create_cq_resp.handle;
	cq->cqe = m.create_cq_resp.cqe;
	cq->size = m.create_cq_resp.size;
	cq->map_bytes = m.create_cq_resp.map_bytes;
	cq->ring = dpr_map_fd(fd, cq->map_bytes);
	if (cq->ring == NULL || dpr_obj_put(ctx, cq->handle, DPR_OBJ_CQ, cq) != 0)
		return unkept(ctx, DPR_SHM_DESTROY_CQ, cq->handle, cq, cq->ring,
			      cq->map_bytes);
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return cq;
}

int
dprdma_destroy_cq(struct dprdma_cq *cq)
{
	int rc = dpr_destroy_obj(cq->ctx, DPR_SHM_DESTROY_CQ, cq->handle);

	if (rc != 0)
		return rc;
	dpr_obj_drop(cq->ctx, cq->handle);
	munmap(cq->ring, cq->map_bytes);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

void
dprdma_cq_set_user(struct dprdma_cq *cq, void *user)
{
	cq->user = user;
}

void *
dprdma_cq_user(const struct dprdma_cq *cq)
{
	return cq->user;
}

int
dprdma_cq_size(const struct dprdma_cq *cq)
{
	return (int)cq->cqe;
}

/* --------------------------------------------------------------- QP */

struct dprdma_qp *
dprdma_create_qp(struct dprdma_pd *pd, struct dprdma_qp_init *init)
{
	struct dprdma_context *ctx = pd->ctx;
	struct dprdma_qp *qp = calloc(1, sizeof(*qp));
	struct dpr_shm_msg m = { .op = DPR_SHM_CREATE_QP };
	uint8_t *base;
	int fd = -1, rc;

	if (qp == NULL)
		return NULL;
	if (init->send_cq == NULL || init->recv_cq == NULL) {
		free(qp);
		errno = EINVAL;
		return NULL;
	}
	m.create_qp.pd = pd->handle;
	m.create_qp.send_cq = init->send_cq->handle;
	m.create_qp.recv_cq = init->recv_cq->handle;
	m.create_qp.qp_type = init->qp_type;
	m.create_qp.srq = init->srq != NULL ? init->srq->handle : 0;
	m.create_qp.sq_sig_all = init->sq_sig_all != 0;
	m.create_qp.cap = init->cap;
	rc = dpr_call(ctx, &m, -1, &fd);
	if (rc == 0 && fd < 0)
		rc = -EPROTO;
	if (rc != 0) {
		free(qp);
		errno = -rc;
		return NULL;
	}
	qp->ctx = ctx;
	qp->handle = m.create_qp_resp.handle;
	qp->qpn = m.create_qp_resp.qpn;
	qp->slot = m.create_qp_resp.slot;
	qp->sq_size = m.create_qp_resp.sq_size;
	qp->rq_size = m.create_qp_resp.rq_size;
	qp->cap = m.create_qp_resp.cap;
	qp->qp_type = init->qp_type;
	qp->scq = init->send_cq;
	qp->rcq = init->recv_cq;
	qp->map_bytes = m.create_qp_resp.map_bytes;
	base = dpr_map_fd(fd, qp->map_bytes);
	if (base == NULL || qp->slot >= DPR_SHM_MAX_QPS ||
	    m.create_qp_resp.rq_offset >= qp->map_bytes)
		return unkept(ctx, DPR_SHM_DESTROY_QP, qp->handle, qp, base,
			      qp->map_bytes);
	qp->sq = (struct dpr_shm_ring *)base;
	qp->rq = (struct dpr_shm_ring *)(base + m.create_qp_resp.rq_offset);
	qp->state = 0;  /* RESET */
	if (dpr_obj_put(ctx, qp->handle, DPR_OBJ_QP, qp) != 0)
		return unkept(ctx, DPR_SHM_DESTROY_QP, qp->handle, qp, base,
			      qp->map_bytes);
	pthread_spin_init(&qp->lock, PTHREAD_PROCESS_PRIVATE);
	return qp;
}

int
dprdma_destroy_qp(struct dprdma_qp *qp)
{
	int rc = dpr_destroy_obj(qp->ctx, DPR_SHM_DESTROY_QP, qp->handle);

	if (rc != 0)
		return rc;
	dpr_obj_drop(qp->ctx, qp->handle);
	munmap(qp->sq, qp->map_bytes);
	pthread_spin_destroy(&qp->lock);
	free(qp);
	return 0;
}

void
dprdma_qp_set_user(struct dprdma_qp *qp, void *user)
{
	qp->user = user;
}

uint32_t
dprdma_qp_num(const struct dprdma_qp *qp)
{
	return qp->qpn;
}

const struct dpr_shm_qp_caps *
dprdma_qp_caps(const struct dprdma_qp *qp)
{
	return &qp->cap;
}

unsigned int
dprdma_qp_state(const struct dprdma_qp *qp)
{
	return __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);
}

/* The state @p qp is now in (@p attr, moved to under @p mask). */
static void
moved(struct dprdma_qp *qp, const struct dpr_shm_qp_attr *attr, unsigned int mask)
{
	if (!(mask & 1 /* IBV_QP_STATE */))
		return;
	__atomic_store_n(&qp->state, attr->qp_state, __ATOMIC_RELEASE);
	/* RESET: the completions the QP left (flushed work, when it went to
	 * ERR) go with it, as mlx5 cleans its CQs; the daemon makes no more
	 * for it once the modify has returned */
	if (attr->qp_state == 0 /* IBV_QPS_RESET */) {
		dpr_cq_clean(qp->scq, qp->qpn);
		if (qp->rcq != qp->scq)
			dpr_cq_clean(qp->rcq, qp->qpn);
	}
}

int
dprdma_modify_qp(struct dprdma_qp *qp, const struct dpr_shm_qp_attr *attr,
		 unsigned int mask)
{
	return dprdma_modify_qp2(qp, attr, mask, NULL, 0);
}

int
dprdma_modify_qp2(struct dprdma_qp *qp, const struct dpr_shm_qp_attr *attr,
		  unsigned int mask, const struct dpr_shm_qp_attr *attr2,
		  unsigned int mask2)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_MODIFY_QP };
	int rc;

	m.modify_qp.handle = qp->handle;
	m.modify_qp.mask = mask;
	m.modify_qp.attr = *attr;
	if (attr2 != NULL && mask2 != 0) {
		m.modify_qp.mask2 = mask2;
		m.modify_qp.attr2 = *attr2;
	}
	rc = dpr_call(qp->ctx, &m, -1, NULL);
	if (rc == 0) {
		moved(qp, attr, mask);
		if (attr2 != NULL && mask2 != 0)
			moved(qp, attr2, mask2);
	} else if (attr2 != NULL && mask2 != 0) {
		/* the first move may have been made: the state as it is */
		struct dpr_shm_qp_attr now;

		if (dprdma_query_qp(qp, &now, NULL) == 0)
			moved(qp, &now, 1);
	}
	return -rc;
}

int
dprdma_query_qp(struct dprdma_qp *qp, struct dpr_shm_qp_attr *attr,
		struct dpr_shm_qp_caps *cap)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_QUERY_QP };
	int rc;

	m.obj.handle = qp->handle;
	rc = dpr_call(qp->ctx, &m, -1, NULL);
	if (rc != 0)
		return -rc;
	*attr = m.query_qp_resp.attr;
	if (cap != NULL)
		*cap = m.query_qp_resp.cap;
	/* the transport may have moved it (to ERR) */
	__atomic_store_n(&qp->state, attr->qp_state, __ATOMIC_RELEASE);
	return 0;
}

uint32_t
dprdma_qp_type(const struct dprdma_qp *qp)
{
	return qp->qp_type;
}

/* --------------------------------------------------------------- SRQ */

struct dprdma_srq *
dprdma_create_srq(struct dprdma_pd *pd, uint32_t max_wr, uint32_t max_sge,
		  uint32_t limit)
{
	struct dprdma_context *ctx = pd->ctx;
	struct dprdma_srq *srq = calloc(1, sizeof(*srq));
	struct dpr_shm_msg m = { .op = DPR_SHM_CREATE_SRQ };
	int fd = -1, rc;

	if (srq == NULL)
		return NULL;
	m.create_srq.pd = pd->handle;
	m.create_srq.max_wr = max_wr;
	m.create_srq.max_sge = max_sge;
	m.create_srq.limit = limit;
	rc = dpr_call(ctx, &m, -1, &fd);
	if (rc == 0 && fd < 0)
		rc = -EPROTO;
	if (rc != 0) {
		free(srq);
		errno = -rc;
		return NULL;
	}
	srq->ctx = ctx;
	srq->handle = m.create_srq_resp.handle;
	srq->size = m.create_srq_resp.size;
	srq->max_sge = m.create_srq_resp.max_sge;
	srq->map_bytes = m.create_srq_resp.map_bytes;
	srq->ring = dpr_map_fd(fd, srq->map_bytes);
	if (srq->ring == NULL || srq->size == 0 || (srq->size & (srq->size - 1)) ||
	    dpr_obj_put(ctx, srq->handle, DPR_OBJ_SRQ, srq) != 0)
		return unkept(ctx, DPR_SHM_DESTROY_SRQ, srq->handle, srq, srq->ring,
			      srq->map_bytes);
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	return srq;
}

int
dprdma_destroy_srq(struct dprdma_srq *srq)
{
	int rc = dpr_destroy_obj(srq->ctx, DPR_SHM_DESTROY_SRQ, srq->handle);

	if (rc != 0)
		return rc;
	dpr_obj_drop(srq->ctx, srq->handle);
	munmap(srq->ring, srq->map_bytes);
	pthread_spin_destroy(&srq->lock);
	free(srq);
	return 0;
}

int
dprdma_modify_srq(struct dprdma_srq *srq, unsigned int mask, uint32_t max_wr,
		  uint32_t limit)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_MODIFY_SRQ };

	m.modify_srq.handle = srq->handle;
	m.modify_srq.mask = mask;
	m.modify_srq.max_wr = max_wr;
	m.modify_srq.limit = limit;
	return -dpr_call(srq->ctx, &m, -1, NULL);
}

int
dprdma_query_srq(struct dprdma_srq *srq, uint32_t *max_wr, uint32_t *max_sge,
		 uint32_t *limit)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_QUERY_SRQ };
	int rc;

	m.obj.handle = srq->handle;
	rc = dpr_call(srq->ctx, &m, -1, NULL);
	if (rc != 0)
		return -rc;
	*max_wr = m.query_srq_resp.max_wr;
	*max_sge = m.query_srq_resp.max_sge;
	*limit = m.query_srq_resp.limit;
	return 0;
}

void
dprdma_srq_set_user(struct dprdma_srq *srq, void *user)
{
	srq->user = user;
}

uint32_t
dprdma_srq_max_sge(const struct dprdma_srq *srq)
{
	return srq->max_sge;
}
