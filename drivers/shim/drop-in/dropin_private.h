/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Inside the drop-in libibverbs.so.1: its objects (each an rdma-core
 * struct with libdprdma's object beside it) and what its rooms share:
 *
 *   context.c   ibv_open_device/ibv_close_device: the context, wired to
 *               the other rooms (it alone knows them all)
 *   device.c    devices, queries (device, port, GID, P_Key), async
 *               events, strings, rates, fork
 *   objects.c   PDs, MRs, completion channels, CQs, AHs, SRQs, QPs
 *   datapath.c  post and poll (the context's ops), the extended CQ poll
 *               and the ibv_wr_* builder
 *   stubs.c     the rest of the ABI, refused or a no-op
 */

#ifndef DROPIN_PRIVATE_H
#define DROPIN_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>

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
	struct dv_device *next;         /* device.c's list of every device */
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
	uint64_t iova;                  /* what peers use (ibv_rereg_mr) */
	unsigned int access;
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

/* The wc_flags ibv_create_cq_ex takes: the standard ones, as rxe. No
 * completion timestamps (rxe has none either: ibv_rc_pingpong -t is
 * refused with EOPNOTSUPP on both), no VLAN, flow tag or tag matching. */
#define CQX_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | \
		   IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP | \
		   IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | \
		   IBV_WC_EX_WITH_DLID_PATH_BITS)

/* device.c */
int dv_query_port(struct ibv_context *ctx, uint8_t port,
		  struct ibv_port_attr *attr, size_t len);
int dv_query_device_ex(struct ibv_context *ctx,
		       const struct ibv_query_device_ex_input *in,
		       struct ibv_device_attr_ex *attr, size_t len);
/* GID @p index of port @p port of @p ctx. @return 0, or -1 (errno). */
int dv_gid_of(struct ibv_context *ctx, uint8_t port, int index,
	      union ibv_gid *gid);

/* datapath.c */
struct ibv_mw *dv_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type);
int dv_dealloc_mw(struct ibv_mw *mw);
int dv_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw, struct ibv_mw_bind *b);
int dv_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		 struct ibv_send_wr **bad);
int dv_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		 struct ibv_recv_wr **bad);
int dv_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad);
int dv_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc);
int dv_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
/* The ibv_cq_ex poll API of a CQ. */
void dv_cq_ex_ops(struct ibv_cq_ex *x);
void dv_qp_ex_ops(struct ibv_qp_ex *x);

/* objects.c: the verbs_context's */
struct ibv_qp *dv_create_qp_ex(struct ibv_context *ctx,
			       struct ibv_qp_init_attr_ex *ia);
struct ibv_srq *dv_create_srq_ex(struct ibv_context *ctx,
				 struct ibv_srq_init_attr_ex *ia);
struct ibv_cq_ex *dv_create_cq_ex(struct ibv_context *ctx,
				  struct ibv_cq_init_attr_ex *a);

#endif /* DROPIN_PRIVATE_H */
