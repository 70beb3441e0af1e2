/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The drop-in's data path: ibv_post_send, ibv_post_recv,
 * ibv_post_srq_recv and ibv_poll_cq (the context's ops, which the inline
 * functions of <infiniband/verbs.h> call), the extended CQ's poll API and
 * the ibv_wr_* builder of QPs made with send_ops; each writes into or
 * reads from libdprdma's rings, never the socket.
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

/* ----------------------------------------------------- data path ops */

static void
set_ud_dest(struct dpr_shm_swqe *w, struct ibv_ah *ibah, uint32_t qpn,
	    uint32_t qkey)
{
	const struct ibv_ah_attr *a = &DV(dv_ah, ibah)->attr;

	memcpy(w->ud.dgid, a->grh.dgid.raw, 16);
	w->ud.flow_label = a->grh.flow_label;
	w->ud.traffic_class = a->grh.traffic_class;
	w->ud.hop_limit = a->grh.hop_limit;
	w->ud.sgid_index = a->grh.sgid_index;
	w->ud.pad = 0;
	w->ud.remote_qpn = qpn;
	w->ud.remote_qkey = qkey;
}

/* A bind of window @p mw (its key now: the daemon finds it by it) to
 * what @p bi names, the window's key @p rkey from then on. The window's
 * key is the new one at once, as mlx5's provider has it. */
static void
set_bind(struct dpr_shm_swqe *w, struct ibv_mw *mw, uint32_t rkey,
	 const struct ibv_mw_bind_info *bi)
{
	w->num_sge = 0;
	w->imm_data = 0;
	w->rkey = rkey;
	w->bind.mw_key = mw != NULL ? mw->rkey : 0;
	w->bind.new_key = rkey;
	w->bind.mr_lkey = bi->mr != NULL ? bi->mr->lkey : 0;
	w->bind.access = (uint32_t)bi->mw_access_flags;
	w->bind.addr = bi->addr;
	w->bind.length = bi->length;
	if (mw != NULL)
		mw->rkey = rkey;
}

/* ibv_bind_mw (type 1; libibverbs checked the window's type and PD): a
 * bind posted on @p ibqp with the window's next key, its completion
 * IBV_WC_BIND_MW as any other (as rxe's provider does it) */
int
dv_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw, struct ibv_mw_bind *b)
{
	struct ibv_send_wr wr = {
		.wr_id = b->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = b->send_flags,
		.bind_mw = { .mw = mw, .rkey = ibv_inc_rkey(mw->rkey),
			     .bind_info = b->bind_info },
	}, *bad;

	return dv_post_send(ibqp, &wr, &bad);
}

int
dv_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
	     struct ibv_send_wr **bad)
{
	struct dv_qp *q = DV(dv_qp, ibqp);
	unsigned int st = dprdma_qp_state(q->p);
	int rc = 0;

	/* as rxe: nothing to send before RTS (ERR takes it and flushes) */
	if (st == IBV_QPS_RESET || st == IBV_QPS_INIT || st == IBV_QPS_RTR) {
		*bad = wr;
		return EINVAL;
	}
	dprdma_post_begin(q->p);
	for (; wr != NULL; wr = wr->next) {
		struct dpr_shm_swqe *w;
		uint64_t len = 0;       /* 64 bits: SGE lengths cannot wrap it */
		int i;

		if (wr->num_sge < 0) {
			rc = EINVAL;
			break;
		}
		if (wr->send_flags & IBV_SEND_INLINE)
			for (i = 0; i < wr->num_sge; i++)
				len += wr->sg_list[i].length;
		rc = dprdma_check_send(q->p, wr->opcode, wr->send_flags,
				       (wr->send_flags & IBV_SEND_INLINE) ?
				       len : (uint64_t)wr->num_sge);
		/* a UD send names its destination: its AH */
		if (rc == 0 && ibqp->qp_type == IBV_QPT_UD && wr->wr.ud.ah == NULL)
			rc = EINVAL;
		if (rc != 0)
			break;
		w = dprdma_sq_next(q->p);
		if (w == NULL) {
			rc = ENOMEM;
			break;
		}
		w->wr_id = wr->wr_id;
		w->opcode = wr->opcode;
		w->send_flags = wr->send_flags;
		w->imm_data = wr->imm_data;
		if (ibqp->qp_type == IBV_QPT_UD) {
			set_ud_dest(w, wr->wr.ud.ah, wr->wr.ud.remote_qpn,
				    wr->wr.ud.remote_qkey);
		} else if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			w->remote_addr = wr->wr.atomic.remote_addr;
			w->rkey = wr->wr.atomic.rkey;
			w->compare_add = wr->wr.atomic.compare_add;
			w->swap = wr->wr.atomic.swap;
		} else if (wr->opcode == IBV_WR_BIND_MW) {
			set_bind(w, wr->bind_mw.mw, wr->bind_mw.rkey,
				 &wr->bind_mw.bind_info);
			continue;
		} else if (wr->opcode == IBV_WR_LOCAL_INV ||
			   wr->opcode == IBV_WR_SEND_WITH_INV) {
			/* (ibv_send_wr's invalidate_rkey shares imm_data's place) */
			w->imm_data = 0;
			w->rkey = wr->invalidate_rkey;
			if (wr->opcode == IBV_WR_LOCAL_INV) {
				w->num_sge = 0;
				continue;
			}
		} else {
			w->remote_addr = wr->wr.rdma.remote_addr;
			w->rkey = wr->wr.rdma.rkey;
		}
		if (wr->send_flags & IBV_SEND_INLINE) {
			uint32_t off = 0;

			for (i = 0; i < wr->num_sge; i++) {
				memcpy(w->inline_data + off,
				       (const void *)(uintptr_t)wr->sg_list[i].addr,
				       wr->sg_list[i].length);
				off += wr->sg_list[i].length;
			}
			w->num_sge = (uint32_t)len;
		} else {
			for (i = 0; i < wr->num_sge; i++) {
				w->sge[i].addr = wr->sg_list[i].addr;
				w->sge[i].length = wr->sg_list[i].length;
				w->sge[i].lkey = wr->sg_list[i].lkey;
			}
			w->num_sge = (uint32_t)wr->num_sge;
		}
	}
	dprdma_post_end(q->p);
	if (rc != 0)
		*bad = wr;
	return rc;
}

static void
fill_rwqe(struct dpr_shm_rwqe *w, const struct ibv_recv_wr *wr)
{
	w->wr_id = wr->wr_id;
	w->num_sge = (uint32_t)wr->num_sge;
	for (int i = 0; i < wr->num_sge; i++) {
		w->sge[i].addr = wr->sg_list[i].addr;
		w->sge[i].length = wr->sg_list[i].length;
		w->sge[i].lkey = wr->sg_list[i].lkey;
	}
}

int
dv_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
	     struct ibv_recv_wr **bad)
{
	struct dv_qp *q = DV(dv_qp, ibqp);
	const struct dpr_shm_qp_caps *cap = dprdma_qp_caps(q->p);
	int rc = 0;

	/* RESET takes nothing; a QP of an SRQ takes its receives there */
	if (dprdma_qp_state(q->p) == IBV_QPS_RESET || ibqp->srq != NULL) {
		*bad = wr;
		return EINVAL;
	}
	dprdma_post_begin(q->p);
	for (; wr != NULL; wr = wr->next) {
		struct dpr_shm_rwqe *w;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > cap->max_recv_sge) {
			rc = EINVAL;
			break;
		}
		w = dprdma_rq_next(q->p);
		if (w == NULL) {
			rc = ENOMEM;
			break;
		}
		fill_rwqe(w, wr);
	}
	dprdma_post_end(q->p);
	if (rc != 0)
		*bad = wr;
	return rc;
}

int
dv_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		 struct ibv_recv_wr **bad)
{
	struct dprdma_srq *s = DV(dv_srq, ibsrq)->p;
	uint32_t max_sge = dprdma_srq_max_sge(s);
	int rc = 0;

	dprdma_srq_post_begin(s);
	for (; wr != NULL; wr = wr->next) {
		struct dpr_shm_rwqe *w;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge) {
			rc = EINVAL;
			break;
		}
		w = dprdma_srq_next(s);
		if (w == NULL) {
			rc = ENOMEM;
			break;
		}
		fill_rwqe(w, wr);
	}
	dprdma_srq_post_end(s);
	if (rc != 0)
		*bad = wr;
	return rc;
}

int
dv_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct dv_cq *cq = DV(dv_cq, ibcq);
	dprdma_wc tmp[16];
	int got = 0;

	while (got < n) {
		int k = dprdma_poll_cq(cq->p, n - got < 16 ? n - got : 16, tmp);

		if (k < 0)
			return got != 0 ? got : -1;   /* overflowed */
		for (int i = 0; i < k; i++) {
			struct ibv_wc *o = &wc[got + i];

			o->wr_id = tmp[i].wr_id;
			o->status = (enum ibv_wc_status)tmp[i].status;
			o->opcode = (enum ibv_wc_opcode)tmp[i].opcode;
			o->vendor_err = tmp[i].vendor_err;
			o->byte_len = tmp[i].byte_len;
			o->imm_data = tmp[i].imm_data;
			o->qp_num = tmp[i].qp_num;
			o->src_qp = tmp[i].src_qp;
			o->wc_flags = tmp[i].wc_flags & ~DPR_SHM_WC_NET_MASK;
			o->pkey_index = 0;
			o->slid = 0;
			o->sl = dpr_shm_wc_sl(tmp[i].wc_flags);
			o->dlid_path_bits = 0;
		}
		got += k;
		if (k < 16)
			break;
	}
	return got;
}

/* ------------------------------------------------ the extended CQ poll */

static inline struct dv_cq *
dv_cqx(struct ibv_cq_ex *x)
{
	return (struct dv_cq *)(void *)x;
}

static int
cqx_next(struct ibv_cq_ex *x)
{
	struct dv_cq *cq = dv_cqx(x);
	int n = dprdma_poll_cq(cq->p, 1, &cq->cur);

	if (n < 0)
		return EIO;     /* overflowed: the CQ is in error */
	if (n == 0)
		return ENOENT;
	x->wr_id = cq->cur.wr_id;
	x->status = (enum ibv_wc_status)cq->cur.status;
	return 0;
}

static int
cqx_start(struct ibv_cq_ex *x, struct ibv_poll_cq_attr *attr)
{
	if (attr != NULL && attr->comp_mask != 0)
		return EINVAL;
	return cqx_next(x);
}

static void
cqx_end(struct ibv_cq_ex *x __attribute__((unused)))
{
}

static enum ibv_wc_opcode
cqx_opcode(struct ibv_cq_ex *x)
{
	return (enum ibv_wc_opcode)dv_cqx(x)->cur.opcode;
}

static uint32_t
cqx_vendor_err(struct ibv_cq_ex *x)
{
	return dv_cqx(x)->cur.vendor_err;
}

static uint32_t
cqx_byte_len(struct ibv_cq_ex *x)
{
	return dv_cqx(x)->cur.byte_len;
}

static __be32
cqx_imm_data(struct ibv_cq_ex *x)
{
	return dv_cqx(x)->cur.imm_data;
}

static uint32_t
cqx_qp_num(struct ibv_cq_ex *x)
{
	return dv_cqx(x)->cur.qp_num;
}

static uint32_t
cqx_src_qp(struct ibv_cq_ex *x)
{
	return dv_cqx(x)->cur.src_qp;
}

static unsigned int
cqx_wc_flags(struct ibv_cq_ex *x)
{
	return dv_cqx(x)->cur.wc_flags & ~DPR_SHM_WC_NET_MASK;
}

/* a UD receive's network header type, as ConnectX reports it */
static uint8_t
cqx_sl(struct ibv_cq_ex *x)
{
	return dpr_shm_wc_sl(dv_cqx(x)->cur.wc_flags);
}

/* RoCE: no LIDs (as rxe reports them) */
static uint32_t
cqx_slid(struct ibv_cq_ex *x __attribute__((unused)))
{
	return 0;
}

static uint8_t
cqx_zero8(struct ibv_cq_ex *x __attribute__((unused)))
{
	return 0;
}

void
dv_cq_ex_ops(struct ibv_cq_ex *x)
{
	x->start_poll = cqx_start;
	x->next_poll = cqx_next;
	x->end_poll = cqx_end;
	x->read_opcode = cqx_opcode;
	x->read_vendor_err = cqx_vendor_err;
	x->read_byte_len = cqx_byte_len;
	x->read_imm_data = cqx_imm_data;
	x->read_qp_num = cqx_qp_num;
	x->read_src_qp = cqx_src_qp;
	x->read_wc_flags = cqx_wc_flags;
	x->read_slid = cqx_slid;
	x->read_sl = cqx_sl;
	x->read_dlid_path_bits = cqx_zero8;
}

int
dv_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	return dprdma_req_notify_cq(DV(dv_cq, ibcq)->p, solicited_only);
}

/* --------------------------------------------------------- the builder */

static void
wrx_start(struct ibv_qp_ex *qpx)
{
	struct dv_qp *q = (struct dv_qp *)qpx;

	unsigned int st = dprdma_qp_state(q->p);

	dprdma_post_begin(q->p);
	/* as ibv_post_send: nothing to send before RTS; ibv_wr_complete()
	 * says so (EINVAL) */
	q->wr_err = st == IBV_QPS_RESET || st == IBV_QPS_INIT ||
		st == IBV_QPS_RTR ? EINVAL : 0;
	q->cur = NULL;
}

static struct dpr_shm_swqe *
wrx_new(struct ibv_qp_ex *qpx, uint32_t opcode)
{
	struct dv_qp *q = (struct dv_qp *)qpx;
	struct dpr_shm_swqe *w;

	q->cur = NULL;
	if (q->wr_err != 0)
		return NULL;
	w = dprdma_sq_next(q->p);
	if (w == NULL) {
		q->wr_err = ENOMEM;
		return NULL;
	}
	memset(w, 0, offsetof(struct dpr_shm_swqe, sge));
	w->wr_id = qpx->wr_id;
	w->send_flags = qpx->wr_flags;
	w->opcode = opcode;
	q->cur = w;
	return w;
}

static void
wrx_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t va)
{
	struct dpr_shm_swqe *w = wrx_new(qpx, IBV_WR_RDMA_WRITE);

	if (w != NULL) {
		w->rkey = rkey;
		w->remote_addr = va;
	}
}

static void
wrx_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t va, __be32 imm)
{
	struct dpr_shm_swqe *w = wrx_new(qpx, IBV_WR_RDMA_WRITE_WITH_IMM);

	if (w != NULL) {
		w->rkey = rkey;
		w->remote_addr = va;
		w->imm_data = imm;
	}
}

static void
wrx_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t va)
{
	struct dpr_shm_swqe *w = wrx_new(qpx, IBV_WR_RDMA_READ);

	if (w != NULL) {
		w->rkey = rkey;
		w->remote_addr = va;
	}
}

static void
wrx_send(struct ibv_qp_ex *qpx)
{
	wrx_new(qpx, IBV_WR_SEND);
}

static void
wrx_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
	struct dpr_shm_swqe *w = wrx_new(qpx, IBV_WR_SEND_WITH_IMM);

	if (w != NULL)
		w->imm_data = imm;
}

static void
wrx_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t va, uint64_t cmp,
	    uint64_t swap)
{
	struct dpr_shm_swqe *w = wrx_new(qpx, IBV_WR_ATOMIC_CMP_AND_SWP);

	if (w != NULL) {
		w->rkey = rkey;
		w->remote_addr = va;
		w->compare_add = cmp;
		w->swap = swap;
	}
}

static void
wrx_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t va, uint64_t add)
{
	struct dpr_shm_swqe *w = wrx_new(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD);

	if (w != NULL) {
		w->rkey = rkey;
		w->remote_addr = va;
		w->compare_add = add;
	}
}

static void
wrx_unsupported(struct ibv_qp_ex *qpx)
{
	struct dv_qp *q = (struct dv_qp *)qpx;

	q->cur = NULL;
	if (q->wr_err == 0)
		q->wr_err = EOPNOTSUPP;
}

static void
wrx_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw, uint32_t rkey,
	    const struct ibv_mw_bind_info *bi)
{
	struct dpr_shm_swqe *w = wrx_new(qpx, IBV_WR_BIND_MW);

	if (w != NULL)
		set_bind(w, mw, rkey, bi);
}

static void
wrx_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct dpr_shm_swqe *w = wrx_new(qpx, IBV_WR_LOCAL_INV);

	if (w != NULL)
		w->rkey = rkey;
}

static void
wrx_send_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
	struct dpr_shm_swqe *w = wrx_new(qpx, IBV_WR_SEND_WITH_INV);

	if (w != NULL)
		w->rkey = rkey;
}

static void
wrx_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t srqn __attribute__((unused)))
{
	wrx_unsupported(qpx);
}

static void
wrx_send_tso(struct ibv_qp_ex *qpx, void *hdr __attribute__((unused)),
	     uint16_t hdr_sz __attribute__((unused)),
	     uint16_t mss __attribute__((unused)))
{
	wrx_unsupported(qpx);
}

static void
wrx_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
	struct dv_qp *q = (struct dv_qp *)qpx;

	if (q->cur == NULL)
		return;
	if (qpx->qp_base.qp_type != IBV_QPT_UD || ah == NULL) {
		q->wr_err = EINVAL;
		return;
	}
	set_ud_dest(q->cur, ah, qpn, qkey);
}

static void
wrx_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey __attribute__((unused)),
		 uint64_t va __attribute__((unused)),
		 const void *v __attribute__((unused)))
{
	wrx_unsupported(qpx);
}

static void
wrx_set_sge_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_sge *sg)
{
	struct dv_qp *q = (struct dv_qp *)qpx;
	struct dpr_shm_swqe *w = q->cur;

	if (w == NULL)
		return;
	if (n > dprdma_qp_caps(q->p)->max_send_sge) {
		q->wr_err = EINVAL;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		w->sge[i].addr = sg[i].addr;
		w->sge[i].length = sg[i].length;
		w->sge[i].lkey = sg[i].lkey;
	}
	w->num_sge = (uint32_t)n;
	w->send_flags &= ~(uint32_t)IBV_SEND_INLINE;
}

static void
wrx_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t len)
{
	const struct ibv_sge sg = { .addr = addr, .length = len, .lkey = lkey };

	wrx_set_sge_list(qpx, 1, &sg);
}

static void
wrx_set_inline_list(struct ibv_qp_ex *qpx, size_t n, const struct ibv_data_buf *b)
{
	struct dv_qp *q = (struct dv_qp *)qpx;
	struct dpr_shm_swqe *w = q->cur;
	size_t len = 0;

	if (w == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		len += b[i].length;
	if (len > dprdma_qp_caps(q->p)->max_inline_data) {
		q->wr_err = EINVAL;
		return;
	}
	len = 0;
	for (size_t i = 0; i < n; i++) {
		memcpy(w->inline_data + len, b[i].addr, b[i].length);
		len += b[i].length;
	}
	w->num_sge = (uint32_t)len;
	w->send_flags |= IBV_SEND_INLINE;
}

static void
wrx_set_inline(struct ibv_qp_ex *qpx, void *addr, size_t len)
{
	const struct ibv_data_buf b = { .addr = addr, .length = len };

	wrx_set_inline_list(qpx, 1, &b);
}

static int
wrx_complete(struct ibv_qp_ex *qpx)
{
	struct dv_qp *q = (struct dv_qp *)qpx;
	int rc = q->wr_err;

	q->cur = NULL;
	if (rc != 0) {
		/* nothing of a failed batch is posted, as mlx5 does */
		dprdma_post_abort(q->p);
		return rc;
	}
	dprdma_post_end(q->p);
	return 0;
}

static void
wrx_abort(struct ibv_qp_ex *qpx)
{
	struct dv_qp *q = (struct dv_qp *)qpx;

	q->cur = NULL;
	dprdma_post_abort(q->p);
}

/* The ibv_wr_* builder of a QP made with send_ops. */
void
dv_qp_ex_ops(struct ibv_qp_ex *x)
{
	x->wr_atomic_cmp_swp = wrx_cmp_swp;
	x->wr_atomic_fetch_add = wrx_fetch_add;
	x->wr_bind_mw = wrx_bind_mw;
	x->wr_local_inv = wrx_local_inv;
	x->wr_rdma_read = wrx_rdma_read;
	x->wr_rdma_write = wrx_rdma_write;
	x->wr_rdma_write_imm = wrx_rdma_write_imm;
	x->wr_send = wrx_send;
	x->wr_send_imm = wrx_send_imm;
	x->wr_send_inv = wrx_send_inv;
	x->wr_send_tso = wrx_send_tso;
	x->wr_set_ud_addr = wrx_ud_addr;
	x->wr_set_xrc_srqn = wrx_xrc_srqn;
	x->wr_set_inline_data = wrx_set_inline;
	x->wr_set_inline_data_list = wrx_set_inline_list;
	x->wr_set_sge = wrx_set_sge;
	x->wr_set_sge_list = wrx_set_sge_list;
	x->wr_start = wrx_start;
	x->wr_complete = wrx_complete;
	x->wr_abort = wrx_abort;
	x->wr_atomic_write = wrx_atomic_write;
}
