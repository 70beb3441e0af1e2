/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Inside libdprdma (no DPDK: a client is an ordinary process): its
 * objects and what its rooms share.
 *
 *   dprdma.c         the socket to dprdmad, devices, contexts, async
 *                    events, PDs
 *   dprdma_mem.c     memory: dprdma_alloc(), registration (the shadow
 *                    memfd, System V segments)
 *   dprdma_queues.c  completion channels, CQs, QPs, SRQs: made, changed,
 *                    destroyed
 *   dprdma_post.c    the data path: posting into the rings, polling CQs
 */

#ifndef LIBDPRDMA_PRIVATE_H
#define LIBDPRDMA_PRIVATE_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "dprdma.h"

/* Shared between the library's files, never exported. */
#define DPR_HIDDEN __attribute__((visibility("hidden")))

struct chunk {                          /* dprdma_alloc() memory */
	struct chunk *next;
	uint8_t *addr;
	size_t len;
	int fd;
};

/* A CQ, QP or SRQ by its handle (dprdma_queues.c) */
enum dpr_obj_kind { DPR_OBJ_NONE, DPR_OBJ_CQ, DPR_OBJ_QP, DPR_OBJ_SRQ };

struct dpr_obj_ref {
	void *p;
	enum dpr_obj_kind kind;
};

struct dprdma_context {
	int fd;
	uint32_t seq;
	pthread_mutex_t lock;           /* control calls, chunks */
	struct dpr_shm_device dev;
	struct dpr_shm_port port;
	struct dpr_shm_ctrl *ctrl;
	size_t ctrl_bytes;
	struct chunk *chunks;
	int async_fd;                   /* eventfd the daemon counts events on */
	int wake_fd;                    /* eventfd that wakes our worker's nap, or -1 */
	uint32_t poll_yield;            /* empty CQ polls in a row before the
	                                   thread yields its CPU; 0: never */
	uint32_t ev_cons;
	/* CQs, QPs and SRQs by handle, for channels and async events (under
	 * obj_lock): the daemon's handles are dense per client, so a table
	 * (grown by doubling) finds one in O(1) among 64k */
	struct dpr_obj_ref *objs;
	uint32_t objs_cap;
};

struct dprdma_pd {
	struct dprdma_context *ctx;
	uint32_t handle;
};

struct dprdma_mr {
	struct dprdma_context *ctx;
	uint32_t handle, lkey, rkey;
};

struct dprdma_channel {
	struct dprdma_context *ctx;
	uint32_t handle;
	int rfd;
};

struct dprdma_cq {
	struct dprdma_context *ctx;
	struct dprdma_channel *ch;
	uint32_t handle, cqe, size;
	struct dpr_shm_ring *ring;
	size_t map_bytes;
	uint32_t cons;
	pthread_spinlock_t lock;
	void *user;
};

struct dprdma_qp {
	struct dprdma_context *ctx;
	uint32_t handle, qpn, slot;
	uint32_t sq_size, rq_size, sq_prod, rq_prod, sq_pub, rq_pub;
	/* the daemon's consumer indices as last read: read again only when
	 * the ring looks full (the line the daemon writes is not pulled over
	 * on every post) */
	uint32_t sq_cons, rq_cons;
	struct dpr_shm_ring *sq, *rq;
	size_t map_bytes;
	struct dpr_shm_qp_caps cap;
	unsigned int state;
	uint32_t qp_type;               /* ibv_qp_type */
	struct dprdma_cq *scq, *rcq;
	pthread_spinlock_t lock;
	void *user;
};

struct dprdma_srq {
	struct dprdma_context *ctx;
	uint32_t handle, size, max_sge, prod, pub;
	struct dpr_shm_ring *ring;
	size_t map_bytes;
	pthread_spinlock_t lock;
	void *user;
};

/* dprdma_queues.c: CQ, QP and SRQ handles -> objects, for completion
 * channels and events. dpr_obj_find() under obj_lock. */
extern DPR_HIDDEN pthread_mutex_t obj_lock;
DPR_HIDDEN int dpr_obj_put(struct dprdma_context *ctx, uint32_t handle,
			   enum dpr_obj_kind kind, void *p);
DPR_HIDDEN void dpr_obj_drop(struct dprdma_context *ctx, uint32_t handle);
DPR_HIDDEN void *dpr_obj_find(const struct dprdma_context *ctx, uint32_t handle,
			      enum dpr_obj_kind kind);

/* dprdma.c */
/* A request on socket @p sfd (sequence *@p seq). @return the answer's
 * status: 0 or a negative errno. */
DPR_HIDDEN int dpr_call_fd(int sfd, uint32_t *seq, struct dpr_shm_msg *m,
			       int send_fd, int *recv_fd);
/* A request of @p ctx to the daemon, with a descriptor each way (-1,
 * NULL: none). @return 0 or a negative errno. */
DPR_HIDDEN int dpr_call(struct dprdma_context *ctx, struct dpr_shm_msg *m,
			    int send_fd, int *recv_fd);
/* @p len bytes of @p fd mapped shared (closed), or NULL. */
DPR_HIDDEN void *dpr_map_fd(int fd, size_t len);
/* The daemon's object @p handle destroyed by request @p op. @return 0
 * or a positive errno (as the verbs return it). */
DPR_HIDDEN int dpr_destroy_obj(struct dprdma_context *ctx, uint16_t op,
				   uint32_t handle);

/* dprdma_post.c: @p qpn's completions taken out of @p cq (a QP reset:
 * as mlx5, none of its old completions is polled after it). */
DPR_HIDDEN void dpr_cq_clean(struct dprdma_cq *cq, uint32_t qpn);

#endif /* LIBDPRDMA_PRIVATE_H */
