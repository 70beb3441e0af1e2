/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The verbs objects of shim clients: PDs, completion channels, CQs, QPs
 * and SRQs. A request is checked here, on the main lcore (handles, the
 * client's quotas, sizes), then the change is made by a job on the
 * client's worker, which owns the objects (shim_job, dpr_shim_jobs.c).
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "shim_private.h"

bool
shim_over_quota(struct shim_client *c, uint32_t n, uint32_t max, const char *what,
		const char *key)
{
	if (n < max)
		return false;
	shim.st.quota_refused++;
	SHIM_LOG(NOTICE, "client %u: %s refused: over its quota (%u %ss%s%s)",
		 c->id, what, max, what, key != NULL ? "; dprdmad's [limits] " : "",
		 key != NULL ? key : "");
	return true;
}

/* A free slot of a client's per-worker table of @p n, or @p n (refused,
 * counted and logged: over its quota of @p what). */
static uint32_t
free_slot(struct shim_client *c, void *const *slots, uint32_t n, const char *what)
{
	uint32_t slot;

	for (slot = 0; slot < n && slots[slot] != NULL; slot++)
		;
	shim_over_quota(c, slot, n, what, NULL);
	return slot;
}

/* A free QP slot (the lowest: the worker's doorbell words stay few), or
 * shim.lim.qps (refused, counted and logged). */
static uint32_t
free_qp_slot(struct shim_client *c)
{
	uint32_t slot;

	if (shim_over_quota(c, c->n_qp, shim.lim.qps, "QP", "client_qps"))
		return shim.lim.qps;
	for (slot = c->slot_hint; slot < shim.lim.qps && c->qps[slot] != NULL; slot++)
		;
	return slot;
}

/* The end every request that makes an object shares: @p obj gets a
 * handle (into *@p handle, before the worker sees it), then @p j makes
 * it on the worker; the handle goes again if that fails. */
static int
add_and_make(struct shim_client *c, struct job *j, enum obj_type t, void *obj,
	     uint32_t *handle)
{
	int rc;

	*handle = shim_obj_add(c, t, obj);
	if (*handle == 0)
		return -ENOMEM;
	j->p = obj;
	rc = shim_job(j);
	if (rc != 0)
		shim_obj_del(c, *handle);
	return rc;
}

/* @p obj, named by @p used (0: nothing else uses it, else -EBUSY) and
 * found (NULL: -EINVAL), unmade on the worker by a job of @p kind. */
static int
unmake(struct shim_client *c, enum job_kind kind, void *obj, uint32_t used)
{
	struct job j = { .kind = kind, .c = c, .p = obj };

	if (obj == NULL)
		return -EINVAL;
	if (used != 0)
		return -EBUSY;
	return shim_job(&j);
}

/* An object with rings that was unmade: its handle, rings and memory
 * go. */
static void
forget(struct shim_client *c, uint32_t h, void *obj, void *ring, size_t bytes)
{
	munmap(ring, bytes);
	shim_obj_del(c, h);
	free(obj);
}

/* An object with rings that was not made: its memory goes. */
static int
ring_undo(int fd, void *ring, size_t bytes, void *obj, int rc)
{
	close(fd);
	munmap(ring, bytes);
	free(obj);
	return rc;
}

int
shim_req_alloc_pd(struct shim_client *c, struct dpr_shm_msg *m,
		  int *in_fd __rte_unused, int *out_fd __rte_unused)
{
	struct job j = { .kind = JOB_ALLOC_PD, .c = c };
	int rc;

	if (shim_over_quota(c, c->n_pd, shim.lim.pds, "PD", "client_pds"))
		return -ENOMEM;
	rc = shim_job(&j);
	if (rc != 0)
		return rc;
	m->obj.handle = shim_obj_enter(c, &j, OBJ_PD, JOB_DEALLOC_PD);
	if (m->obj.handle == 0)
		return -ENOMEM;
	c->n_pd++;
	return 0;
}

int
shim_dealloc_pd(struct shim_client *c, uint32_t h)
{
	int rc = shim_obj_unmake(c, h, OBJ_PD, JOB_DEALLOC_PD);

	if (rc == 0)
		c->n_pd--;
	return rc;
}

int
shim_req_create_channel(struct shim_client *c, struct dpr_shm_msg *m,
			int *fd, int *out_fd __rte_unused)
{
	struct shim_channel *ch;
	struct stat sb;
	uint32_t h;

	if (*fd < 0 || fstat(*fd, &sb) != 0 || !S_ISFIFO(sb.st_mode))
		return -EBADF;
	if (shim_over_quota(c, c->n_channel, SHIM_MAX_CHANNELS, "completion channel", NULL))
		return -ENOMEM;
	ch = calloc(1, sizeof(*ch));
	if (ch == NULL)
		return -ENOMEM;
	/* the worker must never block on a client that does not read */
	if (fcntl(*fd, F_SETFL, O_NONBLOCK) != 0) {
		free(ch);
		return -errno;
	}
	h = shim_obj_add(c, OBJ_CHANNEL, ch);
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

int
shim_destroy_channel(struct shim_client *c, uint32_t h)
{
	struct shim_channel *ch = shim_obj_get(c, h, OBJ_CHANNEL);

	if (ch == NULL)
		return -EINVAL;
	if (ch->users != 0)
		return -EBUSY;
	close(ch->fd);
	free(ch);
	shim_obj_del(c, h);
	c->n_channel--;
	return 0;
}

int
shim_req_create_cq(struct shim_client *c, struct dpr_shm_msg *m,
		   int *in_fd __rte_unused, int *out_fd)
{
	struct job j = { .kind = JOB_CREATE_CQ, .c = c };
	struct shim_channel *ch = NULL;
	uint32_t cqe = m->create_cq.cqe, size, h;
	struct shim_cq *s;
	void *ring;
	int fd, rc;

	if (cqe == 0 || cqe > DPR_SHM_MAX_CQE)
		return -EINVAL;
	if (m->create_cq.channel >= 0) {
		ch = shim_obj_get(c, (uint32_t)m->create_cq.channel, OBJ_CHANNEL);
		if (ch == NULL)
			return -EINVAL;
	}
	if (shim_over_quota(c, c->n_cq, shim.lim.cqs, "CQ", "client_cqs"))
		return -ENOMEM;
	size = rte_align32pow2(cqe);
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->c = c;
	s->cqe = cqe;
	s->size = size;
	s->chan_fd = ch != NULL ? ch->fd : -1;
	s->chan_handle = ch != NULL ? (uint32_t)m->create_cq.channel : 0;
	s->map_bytes = shim_page_round(dpr_shm_ring_bytes(size, sizeof(struct dpr_shm_cqe)));
	fd = shim_make_shared("dprdma-cq", s->map_bytes, &ring);
	if (fd < 0) {
		free(s);
		return fd;
	}
	s->ring = ring;
	rc = add_and_make(c, &j, OBJ_CQ, s, &s->handle);
	if (rc != 0)
		return ring_undo(fd, ring, s->map_bytes, s, rc);
	h = s->handle;
	if (ch != NULL)
		ch->users++;
	c->n_cq++;
	m->create_cq_resp.handle = h;
	m->create_cq_resp.cqe = cqe;
	m->create_cq_resp.size = size;
	m->create_cq_resp.map_bytes = s->map_bytes;
	*out_fd = fd;
	return 0;
}

int
shim_destroy_cq(struct shim_client *c, uint32_t h)
{
	struct shim_cq *s = shim_obj_get(c, h, OBJ_CQ);
	int rc = unmake(c, JOB_DESTROY_CQ, s, s != NULL ? s->users : 0);

	if (rc != 0)
		return rc;
	if (s->chan_fd >= 0) {
		struct shim_channel *ch = shim_obj_get(c, s->chan_handle, OBJ_CHANNEL);

		if (ch != NULL)
			ch->users--;
	}
	forget(c, h, s, s->ring, s->map_bytes);
	c->n_cq--;
	return 0;
}

int
shim_req_create_qp(struct shim_client *c, struct dpr_shm_msg *m,
		   int *in_fd __rte_unused, int *out_fd)
{
	struct job j = { .kind = JOB_CREATE_QP, .c = c };
	struct dpr_shm_qp_caps cap = m->create_qp.cap;
	struct shim_cq *scq, *rcq;
	struct shim_srq *srq = NULL;
	struct dpr_pd *pd;
	struct shim_qp *q;
	uint32_t slot, h;
	size_t sq_bytes;
	void *ring;
	int fd, rc;

	/* refused before its rings are made (XRC, raw packet: the transport
	 * refuses them too, for its other callers). UC and UD QPs' rings are
	 * an RC one's: a UD WQE carries its address vector. */
	if (m->create_qp.qp_type != DPR_QPT_RC && m->create_qp.qp_type != DPR_QPT_UD &&
	    m->create_qp.qp_type != DPR_QPT_UC)
		return -EOPNOTSUPP;
	if (m->create_qp.srq != 0 &&
	    (srq = shim_obj_get(c, m->create_qp.srq, OBJ_SRQ)) == NULL)
		return -EINVAL;
	pd = shim_obj_get(c, m->create_qp.pd, OBJ_PD);
	scq = shim_obj_get(c, m->create_qp.send_cq, OBJ_CQ);
	rcq = shim_obj_get(c, m->create_qp.recv_cq, OBJ_CQ);
	if (pd == NULL || scq == NULL || rcq == NULL ||
	    cap.max_send_wr > DPR_SHM_MAX_WR || cap.max_recv_wr > DPR_SHM_MAX_WR ||
	    cap.max_send_sge > DPR_SHM_MAX_SEND_SGE ||
	    cap.max_recv_sge > DPR_SHM_MAX_RECV_SGE ||
	    cap.max_inline_data > DPR_SHM_MAX_INLINE)
		return -EINVAL;
	slot = free_qp_slot(c);
	if (slot >= shim.lim.qps)
		return -ENOMEM;
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return -ENOMEM;
	q->c = c;
	q->scq = scq;
	q->rcq = rcq;
	q->pd_handle = m->create_qp.pd;
	q->slot = slot;
	/* a QP that only receives (qperf's server) asks for no send WQE;
	 * as rxe, it gets a send queue of one */
	q->sq_size = rte_align32pow2(RTE_MAX(cap.max_send_wr, 1u));
	q->rq_size = rte_align32pow2(RTE_MAX(cap.max_recv_wr, 1u));
	cap.max_send_wr = q->sq_size;
	cap.max_recv_wr = cap.max_recv_wr ? q->rq_size : 0;
	cap.max_send_sge = RTE_MAX(cap.max_send_sge, 1u);
	cap.max_recv_sge = RTE_MAX(cap.max_recv_sge, 1u);
	q->cap = cap;
	sq_bytes = RTE_ALIGN_CEIL(dpr_shm_ring_bytes(q->sq_size,
			sizeof(struct dpr_shm_swqe)), DPR_SHM_CACHE_LINE);
	q->map_bytes = shim_page_round(sq_bytes + dpr_shm_ring_bytes(q->rq_size,
			sizeof(struct dpr_shm_rwqe)));
	fd = shim_make_shared("dprdma-qp", q->map_bytes, &ring);
	if (fd < 0) {
		free(q);
		return fd;
	}
	q->sq = ring;
	q->rq = (struct dpr_shm_ring *)((uint8_t *)ring + sq_bytes);
	/* no worker looks at its rings until its doorbell rings */
	__atomic_store_n(&q->sq->idle, 1, __ATOMIC_RELAXED);
	j.ia.qp_type = (enum dpr_qp_type)m->create_qp.qp_type;
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
	j.ia.srq = srq != NULL ? srq->srq : NULL;
	q->srq = srq;
	rc = add_and_make(c, &j, OBJ_QP, q, &q->handle);
	if (rc != 0)
		return ring_undo(fd, ring, q->map_bytes, q, rc);
	h = q->handle;
	if (srq != NULL)
		srq->users++;
	scq->users++;
	rcq->users++;
	c->n_qp++;
	c->slot_hint = slot + 1;
	if (slot >= c->slot_hi)
		__atomic_store_n(&c->slot_hi, slot + 1, __ATOMIC_RELEASE);
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
	a->qkey = s->qkey;
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
	s->qkey = a->qkey;
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

/* One move of QP @p q (@p s under @p mask) on its worker. */
static int
modify_one(struct shim_client *c, void *q, const struct dpr_shm_qp_attr *s,
	   uint32_t mask)
{
	struct job j = { .kind = JOB_MODIFY_QP, .c = c, .p = q };

	/* dprdmad drains: a QP may go to ERR or RESET, nowhere else */
	if (shim.draining && (mask & DPR_QP_STATE) &&
	    s->qp_state != DPR_QPS_ERR && s->qp_state != DPR_QPS_RESET)
		return -EIO;
	if (mask & DPR_QP_AV) {
		/* RoCE needs the GRH: its GID is the address (the
		 * transport checks the index and the family) */
		if (!s->is_global)
			return -EINVAL;
	}
	attr_from_shm(s, &j.attr);
	j.mask = (int)mask;
	return shim_job(&j);
}

/* ibv_modify_qp(), and (mask2) a second move once the first is made: the
 * drop-in librdmacm's RTR then RTS, one round trip instead of two. A
 * second move that fails leaves the QP where the first put it, as two
 * calls would. */
int
shim_req_modify_qp(struct shim_client *c, struct dpr_shm_msg *m,
		   int *in_fd __rte_unused, int *out_fd __rte_unused)
{
	void *q = shim_obj_get(c, m->modify_qp.handle, OBJ_QP);
	int rc;

	if (q == NULL)
		return -EINVAL;
	rc = modify_one(c, q, &m->modify_qp.attr, m->modify_qp.mask);
	if (rc != 0 || m->modify_qp.mask2 == 0)
		return rc;
	return modify_one(c, q, &m->modify_qp.attr2, m->modify_qp.mask2);
}

int
shim_req_query_qp(struct shim_client *c, struct dpr_shm_msg *m,
		  int *in_fd __rte_unused, int *out_fd __rte_unused)
{
	struct job j = { .kind = JOB_QUERY_QP, .c = c };
	struct shim_qp *q = shim_obj_get(c, m->obj.handle, OBJ_QP);
	int rc;

	if (q == NULL)
		return -EINVAL;
	j.p = q;
	rc = shim_job(&j);
	if (rc != 0)
		return rc;
	memset(&m->query_qp_resp, 0, sizeof(m->query_qp_resp));
	attr_to_shm(&j.attr, &m->query_qp_resp.attr);
	m->query_qp_resp.cap = q->cap;
	return 0;
}

int
shim_destroy_qp(struct shim_client *c, uint32_t h)
{
	struct shim_qp *q = shim_obj_get(c, h, OBJ_QP);
	int rc = unmake(c, JOB_DESTROY_QP, q, 0);

	if (rc != 0)
		return rc;
	/* its counters, for the record (as `rdma statistic` would show them);
	 * past a client's first SHIM_QP_LOGS, summed for its last line */
	if (++c->qps_destroyed <= SHIM_QP_LOGS) {
		SHIM_LOG(INFO, "client %u QP 0x%06x destroyed: %" PRIu64 " send "
			 "WQEs, %" PRIu64 " receive WQEs%s", c->id, q->qpn,
			 q->send_wqes, q->recv_wqes, c->qps_destroyed == SHIM_QP_LOGS ?
			 " (its last QP logged so; the rest summed when it leaves)" : "");
	} else {
		c->quiet_send_wqes += q->send_wqes;
		c->quiet_recv_wqes += q->recv_wqes;
	}
	q->scq->users--;
	if (q->srq != NULL)
		q->srq->users--;
	q->rcq->users--;
	if (q->slot < c->slot_hint)
		c->slot_hint = q->slot;
	forget(c, h, q, q->sq, q->map_bytes);
	c->n_qp--;
	return 0;
}

/* ---------------------------------------------------------------- SRQ */

int
shim_req_create_srq(struct shim_client *c, struct dpr_shm_msg *m,
		    int *in_fd __rte_unused, int *out_fd)
{
	struct job j = { .kind = JOB_CREATE_SRQ, .c = c };
	uint32_t max_wr = m->create_srq.max_wr, max_sge = m->create_srq.max_sge;
	struct dpr_pd *pd = shim_obj_get(c, m->create_srq.pd, OBJ_PD);
	struct shim_srq *s;
	uint32_t slot, h;
	void *ring;
	int fd, rc;

	if (pd == NULL || max_wr == 0 || max_wr > DPR_SHM_MAX_WR ||
	    max_sge > DPR_SHM_MAX_RECV_SGE || m->create_srq.limit > max_wr)
		return -EINVAL;
	slot = free_slot(c, (void *const *)c->srqs, SHIM_MAX_SRQ, "SRQ");
	if (slot == SHIM_MAX_SRQ)
		return -ENOMEM;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->c = c;
	s->slot = slot;
	s->size = rte_align32pow2(max_wr);
	s->map_bytes = shim_page_round(dpr_shm_ring_bytes(s->size,
			sizeof(struct dpr_shm_rwqe)));
	fd = shim_make_shared("dprdma-srq", s->map_bytes, &ring);
	if (fd < 0) {
		free(s);
		return fd;
	}
	s->ring = ring;
	j.addr = pd;
	/* the transport holds as many as the ring: a full ring always fits */
	j.max_wr = s->size;
	j.max_sge = RTE_MAX(max_sge, 1u);
	j.limit = m->create_srq.limit;
	rc = add_and_make(c, &j, OBJ_SRQ, s, &s->handle);
	if (rc != 0)
		return ring_undo(fd, ring, s->map_bytes, s, rc);
	h = s->handle;
	c->n_srq++;
	memset(&m->create_srq_resp, 0, sizeof(m->create_srq_resp));
	m->create_srq_resp.handle = h;
	m->create_srq_resp.max_wr = s->size;
	m->create_srq_resp.max_sge = j.max_sge;
	m->create_srq_resp.size = s->size;
	m->create_srq_resp.map_bytes = s->map_bytes;
	*out_fd = fd;
	return 0;
}

/* ibv_modify_srq: the limit (IBV_SRQ_LIMIT); its size is the one it was
 * made with (IBV_SRQ_MAX_WR: EOPNOTSUPP, as a device that cannot resize) */
int
shim_req_modify_srq(struct shim_client *c, struct dpr_shm_msg *m,
		    int *in_fd __rte_unused, int *out_fd __rte_unused)
{
	struct job j = { .kind = JOB_MODIFY_SRQ, .c = c };

	j.p = shim_obj_get(c, m->modify_srq.handle, OBJ_SRQ);
	if (j.p == NULL || (m->modify_srq.mask & ~3u) != 0)
		return -EINVAL;
	if (m->modify_srq.mask & 1u)
		return -EOPNOTSUPP;
	if (!(m->modify_srq.mask & 2u))
		return 0;
	j.limit = m->modify_srq.limit;
	return shim_job(&j);
}

int
shim_req_query_srq(struct shim_client *c, struct dpr_shm_msg *m,
		   int *in_fd __rte_unused, int *out_fd __rte_unused)
{
	struct job j = { .kind = JOB_QUERY_SRQ, .c = c };
	int rc;

	j.p = shim_obj_get(c, m->obj.handle, OBJ_SRQ);
	if (j.p == NULL)
		return -EINVAL;
	rc = shim_job(&j);
	if (rc != 0)
		return rc;
	memset(&m->query_srq_resp, 0, sizeof(m->query_srq_resp));
	m->query_srq_resp.max_wr = j.max_wr;
	m->query_srq_resp.max_sge = j.max_sge;
	m->query_srq_resp.limit = j.limit;
	return 0;
}

int
shim_destroy_srq(struct shim_client *c, uint32_t h)
{
	struct shim_srq *s = shim_obj_get(c, h, OBJ_SRQ);
	int rc = unmake(c, JOB_DESTROY_SRQ, s, s != NULL ? s->users : 0);

	if (rc != 0)
		return rc;
	forget(c, h, s, s->ring, s->map_bytes);
	c->n_srq--;
	return 0;
}
