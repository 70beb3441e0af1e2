/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The drop-in's verbs objects: PDs, MRs, completion channels, CQs, AHs,
 * SRQs and QPs, each an rdma-core struct with libdprdma's object beside
 * it (dropin_private.h); made and destroyed through libdprdma's requests
 * to dprdmad, except AHs, which live here alone.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dropin_private.h"

/* ------------------------------------------------------------ PD, MR */

EXPORT struct ibv_pd *
ibv_alloc_pd(struct ibv_context *ctx)
{
	struct dv_pd *pd = calloc(1, sizeof(*pd));

	if (pd == NULL)
		return NULL;
	pd->p = dprdma_alloc_pd(dv_ctx(ctx)->c);
	if (pd->p == NULL) {
		int e = errno;

		free(pd);
		errno = e;
		return NULL;
	}
	pd->pd.context = ctx;
	return &pd->pd;
}

EXPORT int
ibv_dealloc_pd(struct ibv_pd *ibpd)
{
	struct dv_pd *pd = DV(dv_pd, ibpd);
	int rc = dprdma_dealloc_pd(pd->p);

	if (rc == 0)
		free(pd);
	return rc;
}

/* ibv_alloc_mw (ibv_context_ops.alloc_mw): the window's handle is the
 * daemon's, its first key the daemon's; bound through the send queue */
struct ibv_mw *
dv_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type)
{
	struct ibv_mw *mw = calloc(1, sizeof(*mw));
	int rc;

	if (mw == NULL)
		return NULL;
	rc = type == IBV_MW_TYPE_1 || type == IBV_MW_TYPE_2 ?
		dprdma_alloc_mw(DV(dv_pd, ibpd)->p, type, &mw->handle, &mw->rkey) :
		EINVAL;
	if (rc != 0) {
		free(mw);
		errno = rc;
		return NULL;
	}
	mw->context = ibpd->context;
	mw->pd = ibpd;
	mw->type = type;
	return mw;
}

int
dv_dealloc_mw(struct ibv_mw *mw)
{
	int rc = dprdma_dealloc_mw(dv_ctx(mw->context)->c, mw->handle);

	if (rc == 0)
		free(mw);
	return rc;
}

EXPORT struct ibv_mr *
ibv_reg_mr_iova2(struct ibv_pd *ibpd, void *addr, size_t length, uint64_t iova,
		 unsigned int access)
{
	struct dv_mr *mr = calloc(1, sizeof(*mr));

	if (mr == NULL)
		return NULL;
	/* optional flags (relaxed ordering, ...) are hints: dropped, as
	 * libibverbs drops those a device does not know */
	access &= ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE;
	mr->m = dprdma_reg_mr(DV(dv_pd, ibpd)->p, addr, length, iova, access);
	if (mr->m == NULL) {
		int e = errno;

		free(mr);
		errno = e;
		return NULL;
	}
	mr->mr.context = ibpd->context;
	mr->mr.pd = ibpd;
	mr->mr.addr = addr;
	mr->mr.length = length;
	mr->mr.lkey = dprdma_mr_lkey(mr->m);
	mr->mr.rkey = dprdma_mr_rkey(mr->m);
	mr->iova = iova;
	mr->access = access;
	return &mr->mr;
}

#undef ibv_reg_mr
EXPORT struct ibv_mr *
ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr,
				(unsigned int)access);
}

#undef ibv_reg_mr_iova
EXPORT struct ibv_mr *
ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
		int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

EXPORT int
ibv_dereg_mr(struct ibv_mr *ibmr)
{
	struct dv_mr *mr = DV(dv_mr, ibmr);
	int rc = dprdma_dereg_mr(mr->m);

	if (rc == 0)
		free(mr);
	return rc;
}

/*
 * ibv_rereg_mr: a new translation (addr, length; the iova follows addr),
 * PD or access for @p ibmr, its keys kept (as rxe and mlx5 keep them:
 * rdma-core's tests use the keys they took before). If the new one cannot
 * be made the old one stays whole (IBV_REREG_MR_ERR_CMD).
 */
EXPORT int
ibv_rereg_mr(struct ibv_mr *ibmr, int flags, struct ibv_pd *pd, void *addr,
	     size_t length, int access)
{
	struct dv_mr *mr = DV(dv_mr, ibmr);
	struct ibv_pd *npd = flags & IBV_REREG_MR_CHANGE_PD ? pd : ibmr->pd;
	const bool moved = flags & IBV_REREG_MR_CHANGE_TRANSLATION;
	void *naddr = moved ? addr : ibmr->addr;
	size_t nlen = moved ? length : ibmr->length;
	uint64_t niova = moved ? (uint64_t)(uintptr_t)addr : mr->iova;
	unsigned int nacc = flags & IBV_REREG_MR_CHANGE_ACCESS ?
		(unsigned int)access & ~(unsigned int)IBV_ACCESS_OPTIONAL_RANGE :
		mr->access;
	int rc;

	if (flags == 0 || (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ||
	    ((flags & IBV_REREG_MR_CHANGE_PD) && pd == NULL) ||
	    (moved && (addr == NULL || length == 0))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	rc = dprdma_rereg_mr(mr->m, DV(dv_pd, npd)->p, naddr, nlen, niova, nacc);
	if (rc != 0) {
		errno = rc;
		return IBV_REREG_MR_ERR_CMD;
	}
	mr->iova = niova;
	mr->access = nacc;
	ibmr->pd = npd;
	ibmr->addr = naddr;
	ibmr->length = nlen;
	ibmr->lkey = dprdma_mr_lkey(mr->m);
	ibmr->rkey = dprdma_mr_rkey(mr->m);
	return 0;
}

/* ------------------------------------------------------- CQ, channel */

EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *ctx)
{
	struct dv_channel *ch = calloc(1, sizeof(*ch));

	if (ch == NULL)
		return NULL;
	ch->p = dprdma_create_channel(dv_ctx(ctx)->c);
	if (ch->p == NULL) {
		int e = errno;

		free(ch);
		errno = e;
		return NULL;
	}
	ch->ch.context = ctx;
	ch->ch.fd = dprdma_channel_fd(ch->p);
	return &ch->ch;
}

EXPORT int
ibv_destroy_comp_channel(struct ibv_comp_channel *ibch)
{
	struct dv_channel *ch = DV(dv_channel, ibch);
	int rc;

	if (ibch->refcnt != 0)
		return EBUSY;
	rc = dprdma_destroy_channel(ch->p);
	if (rc == 0)
		free(ch);
	return rc;
}

EXPORT struct ibv_cq *
ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
	      struct ibv_comp_channel *channel, int comp_vector)
{
	struct dv_cq *cq;

	if (comp_vector < 0 || comp_vector >= ctx->num_comp_vectors) {
		errno = EINVAL;         /* as a device with that many vectors */
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return NULL;
	cq->p = dprdma_create_cq(dv_ctx(ctx)->c, cqe,
				 channel != NULL ? DV(dv_channel, channel)->p : NULL);
	if (cq->p == NULL) {
		int e = errno;

		free(cq);
		errno = e;
		return NULL;
	}
	dprdma_cq_set_user(cq->p, cq);
	dv_cq_ex_ops(&cq->cqx);
	cq->cq.context = ctx;
	cq->cq.channel = channel;
	cq->cq.cq_context = cq_context;
	cq->cq.cqe = dprdma_cq_size(cq->p);
	pthread_mutex_init(&cq->cq.mutex, NULL);
	pthread_cond_init(&cq->cq.cond, NULL);
	if (channel != NULL) {
		pthread_mutex_lock(&ctx->mutex);
		channel->refcnt++;
		pthread_mutex_unlock(&ctx->mutex);
	}
	return &cq->cq;
}

/* ibv_create_cq_ex (verbs_context_ops.create_cq_ex) */
struct ibv_cq_ex *
dv_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *a)
{
	struct ibv_cq *cq;

	if ((a->wc_flags & ~(uint64_t)CQX_FLAGS) ||
	    (a->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					IBV_CQ_INIT_ATTR_MASK_PD)) ||
	    ((a->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (a->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (a->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	cq = ibv_create_cq(ctx, (int)a->cqe, a->cq_context, a->channel,
			   (int)a->comp_vector);
	return cq != NULL ? &DV(dv_cq, cq)->cqx : NULL;
}

EXPORT int
ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct dv_cq *cq = DV(dv_cq, ibcq);
	struct ibv_comp_channel *ch = ibcq->channel;
	int rc = dprdma_destroy_cq(cq->p);

	if (rc != 0)
		return rc;
	if (ch != NULL) {
		pthread_mutex_lock(&ibcq->context->mutex);
		ch->refcnt--;
		pthread_mutex_unlock(&ibcq->context->mutex);
	}
	pthread_mutex_destroy(&ibcq->mutex);
	pthread_cond_destroy(&ibcq->cond);
	free(cq);
	return 0;
}

EXPORT int
ibv_resize_cq(struct ibv_cq *cq __attribute__((unused)), int cqe __attribute__((unused)))
{
	return EOPNOTSUPP;
}

EXPORT int
ibv_get_cq_event(struct ibv_comp_channel *ibch, struct ibv_cq **cq, void **cq_context)
{
	struct dprdma_cq *p = dprdma_get_cq_event(DV(dv_channel, ibch)->p);
	struct dv_cq *c;

	if (p == NULL)
		return -1;
	c = dprdma_cq_user(p);
	*cq = &c->cq;
	*cq_context = c->cq.cq_context;
	return 0;
}

EXPORT void
ibv_ack_cq_events(struct ibv_cq *cq, unsigned int n)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += n;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* ---------------------------------------------------------------- AH */

static bool
gid_is_v4mapped(const union ibv_gid *g)
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(g->raw, prefix, sizeof(prefix)) == 0;
}

EXPORT struct ibv_ah *
ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	union ibv_gid own;
	struct dv_ah *a;

	/* RoCE addresses by GID: the GRH is not optional */
	if (attr == NULL || !attr->is_global || attr->port_num != 1) {
		errno = EINVAL;
		return NULL;
	}
	if (dv_gid_of(pd->context, 1, attr->grh.sgid_index, &own) != 0)
		return NULL;    /* errno EINVAL: no such GID index */
	/* no multicast groups (ibv_attach_mcast is refused) */
	if (attr->grh.dgid.raw[0] == 0xff) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* IPv4 from the IPv4 GID (index 1), IPv6 from an IPv6 one (0: the
	 * link-local, 2: the port's configured address) */
	if (gid_is_v4mapped(&attr->grh.dgid) != gid_is_v4mapped(&own) ||
	    (gid_is_v4mapped(&own) && memcmp(&own.raw[12], "\0\0\0\0", 4) == 0)) {
		errno = EAFNOSUPPORT;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		return NULL;
	a->ah.context = pd->context;
	a->ah.pd = pd;
	a->attr = *attr;
	return &a->ah;
}

EXPORT int
ibv_destroy_ah(struct ibv_ah *ah)
{
	free(DV(dv_ah, ah));
	return 0;
}

/* The address of a datagram's sender, from its completion and the GRH the
 * receive buffer starts with (rdma-core's ibv_init_ah_from_wc for RoCE):
 * IPv4, the header in the GRH's last 20 bytes; IPv6, the GRH itself. */
EXPORT int
ibv_init_ah_from_wc(struct ibv_context *ctx, uint8_t port_num,
		    struct ibv_wc *wc, struct ibv_grh *grh,
		    struct ibv_ah_attr *ah_attr)
{
	const uint8_t *raw = (const uint8_t *)grh;
	union ibv_gid dst, own;

	if (!(wc->wc_flags & IBV_WC_GRH) || grh == NULL) {
		errno = EINVAL;
		return EINVAL;
	}
	memset(ah_attr, 0, sizeof(*ah_attr));
	memset(&dst, 0, sizeof(dst));
	if ((raw[20] >> 4) == 4) {
		/* ::ffff:a.b.c.d from the IPv4 source and destination */
		ah_attr->grh.dgid.raw[10] = 0xff;
		ah_attr->grh.dgid.raw[11] = 0xff;
		memcpy(&ah_attr->grh.dgid.raw[12], raw + 20 + 12, 4);
		dst.raw[10] = 0xff;
		dst.raw[11] = 0xff;
		memcpy(&dst.raw[12], raw + 20 + 16, 4);
		ah_attr->grh.traffic_class = raw[20 + 1];
	} else {
		uint32_t vtf = be32toh(grh->version_tclass_flow);

		ah_attr->grh.dgid = grh->sgid;
		dst = grh->dgid;
		ah_attr->grh.traffic_class = (uint8_t)(vtf >> 20);
		ah_attr->grh.flow_label = vtf & 0xfffff;
	}
	ah_attr->grh.hop_limit = 0xff;
	ah_attr->is_global = 1;
	ah_attr->port_num = port_num;
	ah_attr->sl = wc->sl;
	ah_attr->dlid = wc->slid;
	/* the GID index it came to */
	for (int i = 0; i < DV_GID_MAX; i++)
		if (dv_gid_of(ctx, port_num, i, &own) == 0 &&
		    memcmp(own.raw, dst.raw, 16) == 0) {
			ah_attr->grh.sgid_index = (uint8_t)i;
			return 0;
		}
	errno = ENOENT;
	return ENOENT;
}

EXPORT struct ibv_ah *
ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
		      struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr a;
	int rc = ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &a);

	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	return ibv_create_ah(pd, &a);
}

/* --------------------------------------------------------------- SRQ */

static struct ibv_srq *
make_srq(struct ibv_pd *pd, struct ibv_srq_attr *attr, void *srq_context)
{
	struct dv_srq *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->p = dprdma_create_srq(DV(dv_pd, pd)->p, attr->max_wr, attr->max_sge,
				 attr->srq_limit);
	if (s->p == NULL) {
		int e = errno;

		free(s);
		errno = e;
		return NULL;
	}
	dprdma_srq_set_user(s->p, &s->srq);
	/* what it was made with: the ring's size, at least what was asked */
	dprdma_query_srq(s->p, &attr->max_wr, &attr->max_sge, &attr->srq_limit);
	s->srq.context = pd->context;
	s->srq.srq_context = srq_context;
	s->srq.pd = pd;
	pthread_mutex_init(&s->srq.mutex, NULL);
	pthread_cond_init(&s->srq.cond, NULL);
	return &s->srq;
}

EXPORT struct ibv_srq *
ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *ia)
{
	return make_srq(pd, &ia->attr, ia->srq_context);
}

/* ibv_create_srq_ex: basic SRQs; XRC and tag matching are not offered
 * (XRC domains are refused too: docs) */
struct ibv_srq *
dv_create_srq_ex(struct ibv_context *ctx __attribute__((unused)),
		 struct ibv_srq_init_attr_ex *ia)
{
	if (!(ia->comp_mask & IBV_SRQ_INIT_ATTR_PD) ||
	    ((ia->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && ia->srq_type != IBV_SRQT_BASIC) ||
	    (ia->comp_mask & ~(uint32_t)(IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE |
					  IBV_SRQ_INIT_ATTR_CQ))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return make_srq(ia->pd, &ia->attr, ia->srq_context);
}

EXPORT int
ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	return dprdma_modify_srq(DV(dv_srq, srq)->p, (unsigned int)mask,
				 attr->max_wr, attr->srq_limit);
}

EXPORT int
ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	return dprdma_query_srq(DV(dv_srq, srq)->p, &attr->max_wr,
				&attr->max_sge, &attr->srq_limit);
}

EXPORT int
ibv_destroy_srq(struct ibv_srq *srq)
{
	struct dv_srq *s = DV(dv_srq, srq);
	int rc = dprdma_destroy_srq(s->p);

	if (rc != 0)
		return rc;
	pthread_mutex_destroy(&srq->mutex);
	pthread_cond_destroy(&srq->cond);
	free(s);
	return 0;
}

/* ---------------------------------------------------------------- QP */

static struct ibv_qp *
create_qp(struct ibv_pd *ibpd, struct ibv_qp_init_attr_ex *ia, bool ex)
{
	struct dprdma_qp_init init = { 0 };
	struct dv_qp *q;

	if (ia->qp_type != IBV_QPT_RC && ia->qp_type != IBV_QPT_UD &&
	    ia->qp_type != IBV_QPT_UC) {
		/* XRC, raw packet: not offered */
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (ia->send_cq == NULL || ia->recv_cq == NULL) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return NULL;
	init.send_cq = DV(dv_cq, ia->send_cq)->p;
	init.recv_cq = DV(dv_cq, ia->recv_cq)->p;
	init.cap.max_send_wr = ia->cap.max_send_wr;
	init.cap.max_recv_wr = ia->cap.max_recv_wr;
	init.cap.max_send_sge = ia->cap.max_send_sge;
	init.cap.max_recv_sge = ia->cap.max_recv_sge;
	init.cap.max_inline_data = ia->cap.max_inline_data;
	init.qp_type = ia->qp_type;
	init.sq_sig_all = ia->sq_sig_all;
	init.srq = ia->srq != NULL ? DV(dv_srq, ia->srq)->p : NULL;
	q->p = dprdma_create_qp(DV(dv_pd, ibpd)->p, &init);
	if (q->p == NULL) {
		int e = errno;

		free(q);
		errno = e;
		return NULL;
	}
	{
		const struct dpr_shm_qp_caps *c = dprdma_qp_caps(q->p);

		ia->cap.max_send_wr = c->max_send_wr;
		ia->cap.max_recv_wr = c->max_recv_wr;
		ia->cap.max_send_sge = c->max_send_sge;
		ia->cap.max_recv_sge = c->max_recv_sge;
		ia->cap.max_inline_data = c->max_inline_data;
	}
	dprdma_qp_set_user(q->p, &q->qpx.qp_base);
	q->qpx.qp_base.context = ibpd->context;
	q->qpx.qp_base.qp_context = ia->qp_context;
	q->qpx.qp_base.pd = ibpd;
	q->qpx.qp_base.send_cq = ia->send_cq;
	q->qpx.qp_base.recv_cq = ia->recv_cq;
	q->qpx.qp_base.srq = ia->srq;
	q->qpx.qp_base.qp_num = dprdma_qp_num(q->p);
	q->qpx.qp_base.state = IBV_QPS_RESET;
	q->qpx.qp_base.qp_type = ia->qp_type;
	pthread_mutex_init(&q->qpx.qp_base.mutex, NULL);
	pthread_cond_init(&q->qpx.qp_base.cond, NULL);
	if (ex) {
		struct ibv_qp_ex *x = &q->qpx;

		q->ex = true;
		dv_qp_ex_ops(x);
	}
	return &q->qpx.qp_base;
}

EXPORT struct ibv_qp *
ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *ia)
{
	struct ibv_qp_init_attr_ex x = { 0 };
	struct ibv_qp *qp;

	x.qp_context = ia->qp_context;
	x.send_cq = ia->send_cq;
	x.recv_cq = ia->recv_cq;
	x.srq = ia->srq;
	x.cap = ia->cap;
	x.qp_type = ia->qp_type;
	x.sq_sig_all = ia->sq_sig_all;
	qp = create_qp(pd, &x, false);
	if (qp != NULL)
		ia->cap = x.cap;
	return qp;
}

struct ibv_qp *
dv_create_qp_ex(struct ibv_context *ctx __attribute__((unused)),
		struct ibv_qp_init_attr_ex *ia)
{
	const uint64_t ops = IBV_QP_EX_WITH_RDMA_WRITE |
		IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |
		IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
		IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
		IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW |
		IBV_QP_EX_WITH_SEND_WITH_INV;

	if (!(ia->comp_mask & IBV_QP_INIT_ATTR_PD) ||
	    (ia->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((ia->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (ia->send_ops_flags & ~ops)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return create_qp(ia->pd, ia, (ia->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) != 0);
}

EXPORT struct ibv_qp_ex *
ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct dv_qp *q = DV(dv_qp, qp);

	return q->ex ? &q->qpx : NULL;
}

static void
qp_attr_to_shm(const struct ibv_qp_attr *a, struct dpr_shm_qp_attr *s)
{
	memset(s, 0, sizeof(*s));
	s->qp_state = a->qp_state;
	s->cur_qp_state = a->cur_qp_state;
	s->path_mtu = a->path_mtu;
	s->rq_psn = a->rq_psn;
	s->sq_psn = a->sq_psn;
	s->dest_qp_num = a->dest_qp_num;
	s->qp_access_flags = (uint32_t)a->qp_access_flags;
	s->qkey = a->qkey;
	memcpy(s->dgid.raw, a->ah_attr.grh.dgid.raw, 16);
	s->flow_label = a->ah_attr.grh.flow_label;
	s->sgid_index = a->ah_attr.grh.sgid_index;
	s->hop_limit = a->ah_attr.grh.hop_limit;
	s->traffic_class = a->ah_attr.grh.traffic_class;
	s->is_global = a->ah_attr.is_global;
	s->dlid = a->ah_attr.dlid;
	s->sl = a->ah_attr.sl;
	s->pkey_index = a->pkey_index;
	s->max_rd_atomic = a->max_rd_atomic;
	s->max_dest_rd_atomic = a->max_dest_rd_atomic;
	s->min_rnr_timer = a->min_rnr_timer;
	s->port_num = a->port_num;
	s->timeout = a->timeout;
	s->retry_cnt = a->retry_cnt;
	s->rnr_retry = a->rnr_retry;
}

EXPORT int
ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	struct dv_qp *q = DV(dv_qp, qp);
	struct dpr_shm_qp_attr s;
	int rc;

	qp_attr_to_shm(a, &s);
	rc = dprdma_modify_qp(q->p, &s, (unsigned int)mask);
	if (rc == 0 && (mask & IBV_QP_STATE))
		qp->state = a->qp_state;
	return rc;
}

/*
 * Not rdma-core's: ibv_modify_qp() twice in one request to dprdmad (the
 * second move only once the first is made), for the drop-in librdmacm's
 * RTR then RTS. Version node DPRDMA_PRIVATE_1 (libibverbs.map).
 */
EXPORT int dprdma_ibv_modify_qp2(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
				 struct ibv_qp_attr *a2, int mask2);

int
dprdma_ibv_modify_qp2(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		      struct ibv_qp_attr *a2, int mask2)
{
	struct dv_qp *q = DV(dv_qp, qp);
	struct dpr_shm_qp_attr s, s2;
	int rc;

	qp_attr_to_shm(a, &s);
	qp_attr_to_shm(a2, &s2);
	rc = dprdma_modify_qp2(q->p, &s, (unsigned int)mask, &s2, (unsigned int)mask2);
	if (rc == 0 && (mask2 & IBV_QP_STATE))
		qp->state = a2->qp_state;
	else if (rc == 0 && (mask & IBV_QP_STATE))
		qp->state = a->qp_state;
	return rc;
}

EXPORT int
ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask __attribute__((unused)),
	     struct ibv_qp_init_attr *ia)
{
	struct dv_qp *q = DV(dv_qp, qp);
	struct dpr_shm_qp_attr s;
	struct dpr_shm_qp_caps cap;
	int rc = dprdma_query_qp(q->p, &s, &cap);

	if (rc != 0)
		return rc;
	memset(a, 0, sizeof(*a));
	a->qp_state = (enum ibv_qp_state)s.qp_state;
	a->cur_qp_state = (enum ibv_qp_state)s.qp_state;
	a->path_mtu = (enum ibv_mtu)s.path_mtu;
	a->rq_psn = s.rq_psn;
	a->sq_psn = s.sq_psn;
	a->dest_qp_num = s.dest_qp_num;
	a->qp_access_flags = (int)s.qp_access_flags;
	a->qkey = s.qkey;
	a->cap.max_send_wr = cap.max_send_wr;
	a->cap.max_recv_wr = cap.max_recv_wr;
	a->cap.max_send_sge = cap.max_send_sge;
	a->cap.max_recv_sge = cap.max_recv_sge;
	a->cap.max_inline_data = cap.max_inline_data;
	memcpy(a->ah_attr.grh.dgid.raw, s.dgid.raw, 16);
	a->ah_attr.grh.flow_label = s.flow_label;
	a->ah_attr.grh.sgid_index = s.sgid_index;
	a->ah_attr.grh.hop_limit = s.hop_limit;
	a->ah_attr.grh.traffic_class = s.traffic_class;
	a->ah_attr.is_global = 1;
	a->ah_attr.port_num = s.port_num;
	a->pkey_index = s.pkey_index;
	a->max_rd_atomic = s.max_rd_atomic;
	a->max_dest_rd_atomic = s.max_dest_rd_atomic;
	a->min_rnr_timer = s.min_rnr_timer;
	a->port_num = s.port_num;
	a->timeout = s.timeout;
	a->retry_cnt = s.retry_cnt;
	a->rnr_retry = s.rnr_retry;
	qp->state = a->qp_state;
	if (ia != NULL) {
		memset(ia, 0, sizeof(*ia));
		ia->qp_context = qp->qp_context;
		ia->send_cq = qp->send_cq;
		ia->recv_cq = qp->recv_cq;
		ia->cap = a->cap;
		ia->qp_type = qp->qp_type;
	}
	return 0;
}

EXPORT int
ibv_destroy_qp(struct ibv_qp *qp)
{
	struct dv_qp *q = DV(dv_qp, qp);
	int rc = dprdma_destroy_qp(q->p);

	if (rc != 0)
		return rc;
	pthread_mutex_destroy(&qp->mutex);
	pthread_cond_destroy(&qp->cond);
	free(q);
	return 0;
}
