/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The drop-in libibverbs.so.1: rdma-core 44's libibverbs ABI on top of
 * libdprdma, so that unmodified verbs programs (ibv_devinfo,
 * ibv_rc_pingpong, perftest, ...) run against dprdmad with
 * LD_LIBRARY_PATH=<builddir>/drop-in.
 *
 * The context is a full struct verbs_context (abi_compat set to
 * __VERBS_ABI_IS_EXTENDED), so the inline parts of <infiniband/verbs.h>
 * (ibv_post_send, ibv_poll_cq, ibv_query_port, ibv_create_qp_ex,
 * ibv_query_device_ex, ...) reach these functions; QPs made with send_ops
 * are struct ibv_qp_ex with the ibv_wr_* builder.
 *
 * Every symbol and version node of the real library exists (programs and
 * providers are linked with BIND_NOW); those that need a kernel device
 * (ibv_cmd_*, ibv_import_*, ...) refuse with EOPNOTSUPP; the provider
 * registration entry points are no-ops, so that libmlx5 and libefa, which
 * perftest links, load harmlessly. No constructor: loading this library by
 * accident changes nothing.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "dprdma.h"

#define EXPORT __attribute__((visibility("default")))

/* libibverbs' private enum (driver.h) */
enum dv_gid_type_sysfs { DV_GID_SYSFS_ROCE_V1, DV_GID_SYSFS_ROCE_V2 };

/* entries of a port's GID table (struct dpr_shm_port) */
#define DV_GID_MAX 4

struct dv_device {
	struct ibv_device dev;
	unsigned int index;
	__be64 guid;
};

struct dv_context {
	struct verbs_context vctx;      /* ends with the ibv_context */
	struct dprdma_context *c;
};

struct dv_pd {
	struct ibv_pd pd;
	struct dprdma_pd *p;
};

struct dv_mr {
	struct ibv_mr mr;
	struct dprdma_mr *m;
};

struct dv_channel {
	struct ibv_comp_channel ch;
	struct dprdma_channel *p;
};

/* Every CQ is an ibv_cq_ex (whose first members are an ibv_cq's), so
 * that ibv_create_cq_ex's poll API and ibv_poll_cq both work on it. */
struct dv_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cqx;
	};
	struct dprdma_cq *p;
	dprdma_wc cur;                  /* the ex API's current completion */
};

/* An address handle lives here alone: each UD send carries its vector
 * to the daemon in the WQE (struct dpr_shm_swqe.ud), which resolves the
 * MAC per destination; nothing to create or destroy over the socket. */
struct dv_ah {
	struct ibv_ah ah;
	struct ibv_ah_attr attr;
};

struct dv_srq {
	struct ibv_srq srq;
	struct dprdma_srq *p;
};

struct dv_qp {
	struct ibv_qp_ex qpx;           /* starts with the ibv_qp */
	struct dprdma_qp *p;
	bool ex;                        /* made with send_ops: ibv_wr_* */
	int wr_err;                     /* the builder's first error */
	struct dpr_shm_swqe *cur;       /* the builder's WQE */
};

static inline struct dv_context *
dv_ctx(struct ibv_context *ctx)
{
	return (struct dv_context *)((char *)ctx -
				      offsetof(struct verbs_context, context));
}

#define DV(type, p) ((struct type *)(p))

/* ---------------------------------------------------------- devices */

EXPORT struct ibv_device **
ibv_get_device_list(int *num)
{
	uint64_t guids[DPR_SHM_MAX_DEVICES];
	struct ibv_device **list;
	int n = dprdma_list_devices(guids, DPR_SHM_MAX_DEVICES), i;

	if (n < 0) {
		/* no daemon: no devices, as with no RDMA hardware */
		n = 0;
	}
	list = calloc((size_t)n + 1, sizeof(*list));
	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		struct dv_device *d = calloc(1, sizeof(*d));

		if (d == NULL)
			break;
		d->index = (unsigned int)i;
		d->guid = guids[i];
		d->dev.node_type = IBV_NODE_CA;
		d->dev.transport_type = IBV_TRANSPORT_IB;
		snprintf(d->dev.name, sizeof(d->dev.name), "dprdma%d", i);
		/* no kernel uverbs device: UCX stats /dev/infiniband/<dev_name>
		 * (dprdmad makes it, [control] dev_nodes) */
		snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "dprdma%d", i);
		snprintf(d->dev.dev_path, sizeof(d->dev.dev_path),
			 "/sys/class/infiniband_verbs/dprdma%d", i);
		snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path),
			 "/sys/class/infiniband/dprdma%d", i);
		list[i] = &d->dev;
	}
	if (num != NULL)
		*num = i;
	return list;
}

EXPORT void
ibv_free_device_list(struct ibv_device **list)
{
	for (struct ibv_device **d = list; d != NULL && *d != NULL; d++)
		free(*d);
	free(list);
}

EXPORT const char *
ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

EXPORT __be64
ibv_get_device_guid(struct ibv_device *device)
{
	return DV(dv_device, device)->guid;
}

EXPORT int
ibv_get_device_index(struct ibv_device *device)
{
	return (int)DV(dv_device, device)->index;
}

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

static int
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

static int
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

static int
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

static int
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

/* The wc_flags ibv_create_cq_ex takes: the standard ones, as rxe. No
 * completion timestamps (rxe has none either: ibv_rc_pingpong -t is
 * refused with EOPNOTSUPP on both), no VLAN, flow tag or tag matching. */
#define CQX_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | \
		   IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP | \
		   IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | \
		   IBV_WC_EX_WITH_DLID_PATH_BITS)

static void
cqx_ops(struct ibv_cq_ex *x)
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

static int
dv_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	return dprdma_req_notify_cq(DV(dv_cq, ibcq)->p, solicited_only);
}

/* --------------------------------------------------------- the builder */

static void
wrx_start(struct ibv_qp_ex *qpx)
{
	struct dv_qp *q = (struct dv_qp *)qpx;

	dprdma_post_begin(q->p);
	q->wr_err = 0;
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
wrx_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw __attribute__((unused)),
	    uint32_t rkey __attribute__((unused)),
	    const struct ibv_mw_bind_info *bi __attribute__((unused)))
{
	wrx_unsupported(qpx);
}

static void
wrx_inv(struct ibv_qp_ex *qpx, uint32_t rkey __attribute__((unused)))
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

/* ------------------------------------------------------ context */

static int dv_query_port(struct ibv_context *ctx, uint8_t port,
			 struct ibv_port_attr *attr, size_t len);
static int dv_query_device_ex(struct ibv_context *ctx,
			      const struct ibv_query_device_ex_input *in,
			      struct ibv_device_attr_ex *attr, size_t len);
static struct ibv_qp *dv_create_qp_ex(struct ibv_context *ctx,
				      struct ibv_qp_init_attr_ex *ia);
static struct ibv_srq *dv_create_srq_ex(struct ibv_context *ctx,
					struct ibv_srq_init_attr_ex *ia);
static struct ibv_cq_ex *dv_create_cq_ex(struct ibv_context *ctx,
					 struct ibv_cq_init_attr_ex *a);

EXPORT struct ibv_context *
ibv_open_device(struct ibv_device *device)
{
	struct dv_context *d = calloc(1, sizeof(*d));
	struct ibv_context *ctx;

	if (d == NULL)
		return NULL;
	d->c = dprdma_open(DV(dv_device, device)->index);
	if (d->c == NULL) {
		int e = errno;

		free(d);
		errno = e;
		return NULL;
	}
	ctx = &d->vctx.context;
	ctx->device = device;
	ctx->cmd_fd = -1;
	/* async events: the eventfd the daemon counts them on */
	ctx->async_fd = dprdma_async_fd(d->c);
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->ops.poll_cq = dv_poll_cq;
	ctx->ops.req_notify_cq = dv_req_notify_cq;
	ctx->ops.post_send = dv_post_send;
	ctx->ops.post_recv = dv_post_recv;
	ctx->ops.post_srq_recv = dv_post_srq_recv;
	d->vctx.sz = sizeof(d->vctx);
	d->vctx.query_port = dv_query_port;
	d->vctx.query_device_ex = dv_query_device_ex;
	d->vctx.create_qp_ex = dv_create_qp_ex;
	d->vctx.create_srq_ex = dv_create_srq_ex;
	d->vctx.create_cq_ex = dv_create_cq_ex;
	return ctx;
}

EXPORT int
ibv_close_device(struct ibv_context *ctx)
{
	struct dv_context *d = dv_ctx(ctx);

	dprdma_close(d->c);
	pthread_mutex_destroy(&ctx->mutex);
	free(d);
	return 0;
}

EXPORT int
ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	const struct dpr_shm_device *dev = dprdma_device(dv_ctx(ctx)->c);

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s", dev->fw_ver);
	a->node_guid = dev->node_guid;
	a->sys_image_guid = dev->sys_image_guid;
	a->max_mr_size = dev->max_mr_size;
	a->page_size_cap = 0xfffff000;
	a->vendor_id = dev->vendor_id;
	a->vendor_part_id = dev->vendor_part_id;
	a->hw_ver = dev->hw_ver;
	a->max_qp = (int)dev->max_qp;
	a->max_qp_wr = (int)dev->max_qp_wr;
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT |
		IBV_DEVICE_SYS_IMAGE_GUID;
	a->max_sge = (int)dev->max_sge;
	a->max_sge_rd = (int)dev->max_sge;
	a->max_cq = (int)dev->max_cq;
	a->max_cqe = (int)dev->max_cqe;
	a->max_mr = (int)dev->max_mr;
	a->max_pd = (int)dev->max_pd;
	a->max_qp_rd_atom = (int)dev->max_qp_rd_atom;
	a->max_res_rd_atom = (int)(dev->max_qp_rd_atom * dev->max_qp);
	a->max_qp_init_rd_atom = (int)dev->max_qp_rd_atom;
	/* SRQs: the shim's quota per client, its ring and SGE limits */
	a->max_srq = 16;
	a->max_srq_wr = DPR_SHM_MAX_WR;
	a->max_srq_sge = DPR_SHM_MAX_RECV_SGE;
	/* address handles live in the client alone: no table to fill */
	a->max_ah = 1 << 16;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
	return 0;
}

static int
dv_query_device_ex(struct ibv_context *ctx,
		   const struct ibv_query_device_ex_input *in __attribute__((unused)),
		   struct ibv_device_attr_ex *attr, size_t len)
{
	struct ibv_device_attr_ex a;

	memset(&a, 0, sizeof(a));
	ibv_query_device(ctx, &a.orig_attr);
	memcpy(attr, &a, len < sizeof(a) ? len : sizeof(a));
	return 0;
}

static int
dv_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr,
	      size_t len)
{
	struct dpr_shm_port p;
	struct ibv_port_attr a;

	if (port != 1)
		return EINVAL;
	if (dprdma_query_port(dv_ctx(ctx)->c, &p) != 0)
		return EIO;
	memset(&a, 0, sizeof(a));
	a.state = (enum ibv_port_state)p.state;
	a.max_mtu = (enum ibv_mtu)p.max_mtu;
	a.active_mtu = (enum ibv_mtu)p.active_mtu;
	a.gid_tbl_len = (int)p.gid_tbl_len;
	a.port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	a.max_msg_sz = 1u << 31;
	a.pkey_tbl_len = 1;
	a.active_width = 2;             /* 4X */
	a.active_speed = 32;            /* EDR (25 Gb/s lanes): a rate for tools */
	a.phys_state = p.state == IBV_PORT_ACTIVE ? 5 /* LinkUp */ : 3 /* Disabled */;
	a.link_layer = IBV_LINK_LAYER_ETHERNET;
	memcpy(attr, &a, len < sizeof(a) ? len : sizeof(a));
	return 0;
}

#undef ibv_query_port
EXPORT int
ibv_query_port(struct ibv_context *ctx, uint8_t port,
	       struct _compat_ibv_port_attr *attr)
{
	/* the old entry point: callers of it pass the 1.1 layout, which
	 * is the start of today's */
	return dv_query_port(ctx, port, (struct ibv_port_attr *)attr,
			     offsetof(struct ibv_port_attr, link_layer) + 1);
}

static int
gid_of(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	struct dpr_shm_port p;

	if (port != 1 || index < 0 || dprdma_query_port(dv_ctx(ctx)->c, &p) != 0 ||
	    (uint32_t)index >= p.gid_tbl_len || (uint32_t)index >= DV_GID_MAX) {
		errno = EINVAL;
		return -1;
	}
	memcpy(gid->raw, p.gid[index].raw, 16);
	return 0;
}

EXPORT int
ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	return gid_of(ctx, port, index, gid);
}

EXPORT int
_ibv_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index,
		  struct ibv_gid_entry *e, uint32_t flags __attribute__((unused)),
		  size_t len __attribute__((unused)))
{
	if (port > 255 || gid_of(ctx, (uint8_t)port, (int)index, &e->gid) != 0)
		return EINVAL;
	e->gid_index = index;
	e->port_num = port;
	e->gid_type = IBV_GID_TYPE_ROCE_V2;
	e->ndev_ifindex = 0;
	return 0;
}

EXPORT ssize_t
_ibv_query_gid_table(struct ibv_context *ctx, struct ibv_gid_entry *e,
		     size_t max, uint32_t flags, size_t len)
{
	size_t n = 0;

	for (uint32_t i = 0; i < DV_GID_MAX && n < max; i++)
		if (_ibv_query_gid_ex(ctx, 1, i, &e[n], flags, len) == 0)
			n++;
	return (ssize_t)n;
}

EXPORT int ibv_query_gid_type(struct ibv_context *ctx, uint8_t port,
		unsigned int index, enum dv_gid_type_sysfs *type);
int
ibv_query_gid_type(struct ibv_context *ctx, uint8_t port, unsigned int index,
		   enum dv_gid_type_sysfs *type)
{
	union ibv_gid g;

	if (gid_of(ctx, port, (int)index, &g) != 0)
		return -1;
	*type = DV_GID_SYSFS_ROCE_V2;
	return 0;
}

EXPORT int
ibv_query_pkey(struct ibv_context *ctx __attribute__((unused)), uint8_t port,
	       int index, __be16 *pkey)
{
	if (port != 1 || index != 0)
		return -1;
	*pkey = htobe16(0xffff);
	return 0;
}

EXPORT int
ibv_get_pkey_index(struct ibv_context *ctx __attribute__((unused)),
		   uint8_t port, __be16 pkey)
{
	return port == 1 && (be16toh(pkey) & 0x7fff) == 0x7fff ? 0 : -1;
}

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

EXPORT int
ibv_rereg_mr(struct ibv_mr *mr __attribute__((unused)), int flags __attribute__((unused)),
	     struct ibv_pd *pd __attribute__((unused)), void *addr __attribute__((unused)),
	     size_t length __attribute__((unused)), int access __attribute__((unused)))
{
	errno = EOPNOTSUPP;
	return IBV_REREG_MR_ERR_INPUT;
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
	      struct ibv_comp_channel *channel, int comp_vector __attribute__((unused)))
{
	struct dv_cq *cq = calloc(1, sizeof(*cq));

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
	cqx_ops(&cq->cqx);
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
static struct ibv_cq_ex *
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
	if (gid_of(pd->context, 1, attr->grh.sgid_index, &own) != 0)
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
		if (gid_of(ctx, port_num, i, &own) == 0 &&
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
static struct ibv_srq *
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
		x->wr_atomic_cmp_swp = wrx_cmp_swp;
		x->wr_atomic_fetch_add = wrx_fetch_add;
		x->wr_bind_mw = wrx_bind_mw;
		x->wr_local_inv = wrx_inv;
		x->wr_rdma_read = wrx_rdma_read;
		x->wr_rdma_write = wrx_rdma_write;
		x->wr_rdma_write_imm = wrx_rdma_write_imm;
		x->wr_send = wrx_send;
		x->wr_send_imm = wrx_send_imm;
		x->wr_send_inv = wrx_inv;
		x->wr_send_tso = wrx_send_tso;
		x->wr_set_ud_addr = wrx_ud_addr;
		x->wr_set_xrc_srqn = wrx_inv;
		x->wr_set_inline_data = wrx_set_inline;
		x->wr_set_inline_data_list = wrx_set_inline_list;
		x->wr_set_sge = wrx_set_sge;
		x->wr_set_sge_list = wrx_set_sge_list;
		x->wr_start = wrx_start;
		x->wr_complete = wrx_complete;
		x->wr_abort = wrx_abort;
		x->wr_atomic_write = wrx_atomic_write;
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

static struct ibv_qp *
dv_create_qp_ex(struct ibv_context *ctx __attribute__((unused)),
		struct ibv_qp_init_attr_ex *ia)
{
	const uint64_t ops = IBV_QP_EX_WITH_RDMA_WRITE |
		IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |
		IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ |
		IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;

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

EXPORT int
ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	struct dv_qp *q = DV(dv_qp, qp);
	struct dpr_shm_qp_attr s;
	int rc;

	memset(&s, 0, sizeof(s));
	s.qp_state = a->qp_state;
	s.cur_qp_state = a->cur_qp_state;
	s.path_mtu = a->path_mtu;
	s.rq_psn = a->rq_psn;
	s.sq_psn = a->sq_psn;
	s.dest_qp_num = a->dest_qp_num;
	s.qp_access_flags = (uint32_t)a->qp_access_flags;
	s.qkey = a->qkey;
	memcpy(s.dgid.raw, a->ah_attr.grh.dgid.raw, 16);
	s.flow_label = a->ah_attr.grh.flow_label;
	s.sgid_index = a->ah_attr.grh.sgid_index;
	s.hop_limit = a->ah_attr.grh.hop_limit;
	s.traffic_class = a->ah_attr.grh.traffic_class;
	s.is_global = a->ah_attr.is_global;
	s.dlid = a->ah_attr.dlid;
	s.sl = a->ah_attr.sl;
	s.pkey_index = a->pkey_index;
	s.max_rd_atomic = a->max_rd_atomic;
	s.max_dest_rd_atomic = a->max_dest_rd_atomic;
	s.min_rnr_timer = a->min_rnr_timer;
	s.port_num = a->port_num;
	s.timeout = a->timeout;
	s.retry_cnt = a->retry_cnt;
	s.rnr_retry = a->rnr_retry;
	rc = dprdma_modify_qp(q->p, &s, (unsigned int)mask);
	if (rc == 0 && (mask & IBV_QP_STATE))
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

/* ------------------------------------------------------ async events */

EXPORT int
ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *event)
{
	uint32_t type;
	void *obj;
	int rc;

	memset(event, 0, sizeof(*event));
	rc = dprdma_get_async_event(dv_ctx(ctx)->c, &type, &obj);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	event->event_type = (enum ibv_event_type)type;
	if ((type >= IBV_EVENT_DEVICE_FATAL && type <= IBV_EVENT_SM_CHANGE) ||
	    type == IBV_EVENT_CLIENT_REREGISTER || type == IBV_EVENT_GID_CHANGE)
		event->element.port_num = (int)(uintptr_t)obj;
	else if (type == IBV_EVENT_CQ_ERR)
		event->element.cq = obj;
	else if (type == IBV_EVENT_SRQ_ERR || type == IBV_EVENT_SRQ_LIMIT_REACHED)
		event->element.srq = obj;
	else
		event->element.qp = obj;
	return 0;
}

EXPORT void
ibv_ack_async_event(struct ibv_async_event *event __attribute__((unused)))
{
}

/* ------------------------------------------------------------ strings */

EXPORT const char *
ibv_wc_status_str(enum ibv_wc_status status)
{
	static const char *const s[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_MW_BIND_ERR] = "memory management operation error",
		[IBV_WC_BAD_RESP_ERR] = "bad response error",
		[IBV_WC_LOC_ACCESS_ERR] = "local access error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
		[IBV_WC_REM_ABORT_ERR] = "aborted error",
		[IBV_WC_INV_EECN_ERR] = "invalid EE context number",
		[IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
		[IBV_WC_FATAL_ERR] = "fatal error",
		[IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
		[IBV_WC_GENERAL_ERR] = "general error",
		[IBV_WC_TM_ERR] = "TM error",
		[IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
	};

	return (unsigned int)status < sizeof(s) / sizeof(s[0]) && s[status] ?
		s[status] : "unknown";
}

EXPORT const char *
ibv_node_type_str(enum ibv_node_type t)
{
	static const char *const s[] = {
		[IBV_NODE_CA] = "InfiniBand channel adapter",
		[IBV_NODE_SWITCH] = "InfiniBand switch",
		[IBV_NODE_ROUTER] = "InfiniBand router",
		[IBV_NODE_RNIC] = "iWARP NIC",
		[IBV_NODE_USNIC] = "usNIC",
		[IBV_NODE_USNIC_UDP] = "usNIC UDP",
		[IBV_NODE_UNSPECIFIED] = "unspecified",
	};

	return (int)t >= 0 && (size_t)t < sizeof(s) / sizeof(s[0]) && s[t] ?
		s[t] : "unknown";
}

EXPORT const char *
ibv_port_state_str(enum ibv_port_state st)
{
	static const char *const s[] = {
		[IBV_PORT_NOP] = "no state change (NOP)",
		[IBV_PORT_DOWN] = "down",
		[IBV_PORT_INIT] = "init",
		[IBV_PORT_ARMED] = "armed",
		[IBV_PORT_ACTIVE] = "active",
		[IBV_PORT_ACTIVE_DEFER] = "active defer",
	};

	return (unsigned int)st < sizeof(s) / sizeof(s[0]) ? s[st] : "unknown";
}

EXPORT const char *
ibv_event_type_str(enum ibv_event_type ev)
{
	static const char *const s[] = {
		[IBV_EVENT_CQ_ERR] = "CQ error",
		[IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
		[IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
		[IBV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
		[IBV_EVENT_COMM_EST] = "communication established",
		[IBV_EVENT_SQ_DRAINED] = "send queue drained",
		[IBV_EVENT_PATH_MIG] = "path migrated",
		[IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
		[IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
		[IBV_EVENT_PORT_ACTIVE] = "port active",
		[IBV_EVENT_PORT_ERR] = "port error",
		[IBV_EVENT_LID_CHANGE] = "LID change",
		[IBV_EVENT_PKEY_CHANGE] = "P_Key change",
		[IBV_EVENT_SM_CHANGE] = "SM change",
		[IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
		[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
		[IBV_EVENT_CLIENT_REREGISTER] = "client reregistration",
		[IBV_EVENT_GID_CHANGE] = "GID table change",
		[IBV_EVENT_WQ_FATAL] = "WQ fatal",
	};

	return (unsigned int)ev < sizeof(s) / sizeof(s[0]) && s[ev] ? s[ev] : "unknown";
}

/* ------------------------------------------------------------- rates */

static const struct {
	enum ibv_rate rate;
	int mult, mbps;
} rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 }, { IBV_RATE_5_GBPS, 2, 5000 },
	{ IBV_RATE_10_GBPS, 4, 10000 }, { IBV_RATE_20_GBPS, 8, 20000 },
	{ IBV_RATE_30_GBPS, 12, 30000 }, { IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 }, { IBV_RATE_80_GBPS, 32, 80000 },
	{ IBV_RATE_120_GBPS, 48, 120000 }, { IBV_RATE_14_GBPS, 5, 14062 },
	{ IBV_RATE_56_GBPS, 22, 56250 }, { IBV_RATE_112_GBPS, 45, 112500 },
	{ IBV_RATE_168_GBPS, 67, 168750 }, { IBV_RATE_25_GBPS, 10, 25781 },
	{ IBV_RATE_100_GBPS, 40, 103125 }, { IBV_RATE_200_GBPS, 80, 206250 },
	{ IBV_RATE_300_GBPS, 120, 309375 }, { IBV_RATE_28_GBPS, 11, 28125 },
	{ IBV_RATE_50_GBPS, 20, 53125 }, { IBV_RATE_400_GBPS, 160, 425000 },
	{ IBV_RATE_600_GBPS, 240, 637500 },
};

EXPORT int
ibv_rate_to_mult(enum ibv_rate rate)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].rate == rate)
			return rates[i].mult;
	return -1;
}

EXPORT enum ibv_rate
mult_to_ibv_rate(int mult)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].mult == mult)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

EXPORT int
ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}

EXPORT enum ibv_rate
mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

/* --------------------------------------------------------------- fork */

EXPORT int
ibv_fork_init(void)
{
	/* nothing is pinned: there is nothing for fork() to break */
	return 0;
}

EXPORT enum ibv_fork_status
ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

/* libibverbs exports these without declaring them in verbs.h */
EXPORT int ibv_dontfork_range(void *base, size_t size);
EXPORT int ibv_dofork_range(void *base, size_t size);

int
ibv_dontfork_range(void *base __attribute__((unused)), size_t size __attribute__((unused)))
{
	return 0;
}

int
ibv_dofork_range(void *base __attribute__((unused)), size_t size __attribute__((unused)))
{
	return 0;
}
