/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * libdprdma: RDMA verbs for processes on a dprdma box, through dprdmad's
 * shared-memory shim. The calls follow verbs (ibv_open_device,
 * ibv_reg_mr, ...); the prefix is dprdma_ so that they never meet the
 * daemon's own dpr_ objects. Posting and polling are plain memory
 * operations on rings shared with the daemon: no system call.
 *
 * The daemon: $DPRDMA_SOCKET, else /run/dprdma/dprdmad.sock.
 *
 * Memory. Payload goes straight between the wire and the client's memory
 * (zero copy) in every case that works at all:
 *  - memory from dprdma_alloc() (hugepages when the machine has free ones)
 *    is shared with the daemon from the start;
 *  - any other private anonymous memory (malloc, the stack, anonymous
 *    mmap) is made shared when it is registered: its whole pages are
 *    copied into a memory file and that file is mapped over them at the
 *    same addresses, so the program's pointers keep working. What another
 *    thread writes into those pages *during* the registration can be lost;
 *    after fork() a child shares those pages with its parent (instead of a
 *    copy-on-write copy);
 *  - System V shared memory (shmget/shmat, hugepage segments included:
 *    perftest's --use_hugepages) is attached by the daemon as well, when
 *    the client's uid/gid may attach it;
 *  - other file-backed or shared mappings cannot be remapped without
 *    changing what the program sees, and a file could shrink under the
 *    daemon: registering them fails with EOPNOTSUPP.
 *
 * Threads: every call may be made from any thread (a context serializes
 * its control calls; a QP its posts; a CQ its polls).
 *
 * Errors, as libibverbs gives them: a call that returns int returns 0 or
 * a positive errno (as ibv_modify_qp, ibv_dealloc_pd); one that returns a
 * count returns the count or a negative errno (as ibv_poll_cq); one that
 * returns a pointer returns NULL with errno set.
 */

#ifndef DPRDMA_H
#define DPRDMA_H

#include <stddef.h>
#include <stdint.h>

#include "dpr_shm.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dprdma_context;
struct dprdma_pd;
struct dprdma_mr;
struct dprdma_cq;
struct dprdma_qp;
struct dprdma_channel;
struct dprdma_srq;

/** A completion: the fields of ibv_wc (wc_flags may also hold
 * DPR_SHM_WC_NET_*, the network header of a UD receive: dpr_shm_wc_sl()). */
typedef struct dpr_shm_cqe dprdma_wc;

/** A connection of its own to the daemon (RDMA CM: the drop-in
 * librdmacm): a file descriptor, or -1 with errno. */
int dprdma_connect(void);
/** One request on such a connection, its answer in @p m (@p send_fd: a
 * descriptor sent along, -1 none). @return 0 or -errno. */
int dprdma_call(int fd, uint32_t *seq, struct dpr_shm_msg *m, int send_fd);

/** The devices (ports) a daemon serves: @return how many (<= @p max),
 * or a negative errno (ECONNREFUSED/ENOENT: no daemon at that socket). */
int dprdma_list_devices(uint64_t *guids, int max);

/** Open device (port) @p index. NULL with errno on failure: ENOENT or
 * ECONNREFUSED (no daemon at the socket), ENODEV (no such port), EUSERS
 * (the daemon serves [control] max_clients contexts already). */
struct dprdma_context *dprdma_open(unsigned int index);
/** The same with the daemon's socket named (NULL: as dprdma_open). */
struct dprdma_context *dprdma_open_at(const char *socket, unsigned int index);
int dprdma_close(struct dprdma_context *ctx);
const struct dpr_shm_device *dprdma_device(const struct dprdma_context *ctx);

/** Readable when an asynchronous event is waiting (ibv_context.async_fd). */
int dprdma_async_fd(const struct dprdma_context *ctx);
/**
 * Take the next asynchronous event, waiting for one unless the async fd
 * was made non-blocking. @p type: ibv_event_type (CQ_ERR on overflow,
 * QP_FATAL for the QPs that complete into it, COMM_EST, SQ_DRAINED, ...);
 * @p obj: the CQ, QP or SRQ (its user pointer when one is set); for the
 * events of a port (PORT_ACTIVE, PORT_ERR, DEVICE_FATAL, ...) the port
 * number, cast.
 * @return 0, or an errno (EAGAIN: none waiting on a non-blocking fd;
 * EINTR: a signal came first).
 */
int dprdma_get_async_event(struct dprdma_context *ctx, uint32_t *type, void **obj);
/** Refresh and return the port's attributes. @return 0 or an errno (the
 * last attributes known are returned all the same). */
int dprdma_query_port(struct dprdma_context *ctx, struct dpr_shm_port *out);

struct dprdma_pd *dprdma_alloc_pd(struct dprdma_context *ctx);
int dprdma_dealloc_pd(struct dprdma_pd *pd);

/** Memory shared with the daemon from the start (hugepages when free). */
void *dprdma_alloc(struct dprdma_context *ctx, size_t len);
void dprdma_free(struct dprdma_context *ctx, void *p);

/** Register [addr, addr + len), seen by peers at @p iova. NULL + errno. */
struct dprdma_mr *dprdma_reg_mr(struct dprdma_pd *pd, void *addr, size_t len,
		uint64_t iova, unsigned int access);
/** ibv_rereg_mr: @p mr now in @p pd, over [addr, addr + len) seen at
 * @p iova, with @p access; its keys stay. 0, or an errno with @p mr as it
 * was. */
int dprdma_rereg_mr(struct dprdma_mr *mr, struct dprdma_pd *pd, void *addr,
		size_t len, uint64_t iova, unsigned int access);
int dprdma_dereg_mr(struct dprdma_mr *mr);
uint32_t dprdma_mr_lkey(const struct dprdma_mr *mr);
uint32_t dprdma_mr_rkey(const struct dprdma_mr *mr);

/** ibv_alloc_mw: a memory window of @p type (IBV_MW_TYPE_1 or _2) in
 * @p pd, not bound; its handle and first key. 0 or an errno. Bound and
 * invalidated through the send queue (IBV_WR_BIND_MW, IBV_WR_LOCAL_INV;
 * the WQE's bind). */
int dprdma_alloc_mw(struct dprdma_pd *pd, unsigned int type, uint32_t *handle,
		uint32_t *rkey);
int dprdma_dealloc_mw(struct dprdma_context *ctx, uint32_t handle);

/** A completion channel: @p fd becomes readable when an armed CQ fires. */
struct dprdma_channel *dprdma_create_channel(struct dprdma_context *ctx);
int dprdma_destroy_channel(struct dprdma_channel *ch);
int dprdma_channel_fd(const struct dprdma_channel *ch);
/** Wait for (or, with O_NONBLOCK set on its fd, take) one event.
 * @return the CQ that fired, or NULL with errno (EINTR: a signal came
 * first, as with the kernel's uverbs; EAGAIN: none waiting, non-blocking). */
struct dprdma_cq *dprdma_get_cq_event(struct dprdma_channel *ch);

struct dprdma_cq *dprdma_create_cq(struct dprdma_context *ctx, int cqe,
		struct dprdma_channel *ch);
int dprdma_destroy_cq(struct dprdma_cq *cq);
int dprdma_cq_size(const struct dprdma_cq *cq);
/** A pointer of the caller's kept with the CQ (the verbs layer's CQ). */
void dprdma_cq_set_user(struct dprdma_cq *cq, void *user);
void *dprdma_cq_user(const struct dprdma_cq *cq);
/** @return completions taken (0..n), or -EIO once the CQ overflowed (a
 * count: a negative errno). */
int dprdma_poll_cq(struct dprdma_cq *cq, int n, dprdma_wc *wc);
/** Arm: the channel fires on the next completion (any, or solicited). */
int dprdma_req_notify_cq(struct dprdma_cq *cq, int solicited_only);

struct dprdma_qp_init {
	struct dprdma_cq *send_cq, *recv_cq;
	struct dpr_shm_qp_caps cap;
	uint32_t qp_type;               /**< ibv_qp_type: RC (2), UC (3), UD (4) */
	struct dprdma_srq *srq;         /**< receives from it (NULL: own RQ) */
	int sq_sig_all;
};

struct dprdma_qp *dprdma_create_qp(struct dprdma_pd *pd,
		struct dprdma_qp_init *init);
int dprdma_destroy_qp(struct dprdma_qp *qp);
uint32_t dprdma_qp_num(const struct dprdma_qp *qp);
/** A pointer of the caller's kept with the QP (events return it). */
void dprdma_qp_set_user(struct dprdma_qp *qp, void *user);
/** The caps the QP got (at least what was asked). */
const struct dpr_shm_qp_caps *dprdma_qp_caps(const struct dprdma_qp *qp);
int dprdma_modify_qp(struct dprdma_qp *qp, const struct dpr_shm_qp_attr *attr,
		unsigned int mask);
/** Two moves in one request (RTR then RTS): the second only once the
 * first is made; an error of the second leaves the QP where the first
 * put it. */
int dprdma_modify_qp2(struct dprdma_qp *qp, const struct dpr_shm_qp_attr *attr,
		unsigned int mask, const struct dpr_shm_qp_attr *attr2,
		unsigned int mask2);
int dprdma_query_qp(struct dprdma_qp *qp, struct dpr_shm_qp_attr *attr,
		struct dpr_shm_qp_caps *cap);
/** The state the QP was last moved to (ibv_qp_state). */
unsigned int dprdma_qp_state(const struct dprdma_qp *qp);
/**
 * Shared receive queues (ibv_create_srq): @p max_wr WQEs of @p max_sge
 * SGEs, armed with @p limit (0: not). IBV_EVENT_SRQ_LIMIT_REACHED comes
 * through dprdma_get_async_event() with the SRQ (or its user pointer).
 */
struct dprdma_srq *dprdma_create_srq(struct dprdma_pd *pd, uint32_t max_wr,
		uint32_t max_sge, uint32_t limit);
int dprdma_destroy_srq(struct dprdma_srq *srq);
/** ibv_modify_srq: @p mask IBV_SRQ_LIMIT (2) sets @p limit; IBV_SRQ_MAX_WR
 * (1) is refused (EOPNOTSUPP: the size is fixed). @return 0 or an errno. */
int dprdma_modify_srq(struct dprdma_srq *srq, unsigned int mask,
		uint32_t max_wr, uint32_t limit);
int dprdma_query_srq(struct dprdma_srq *srq, uint32_t *max_wr,
		uint32_t *max_sge, uint32_t *limit);
void dprdma_srq_set_user(struct dprdma_srq *srq, void *user);
uint32_t dprdma_srq_max_sge(const struct dprdma_srq *srq);
/** Posting to it, as to a QP: begin, next (NULL: full), end. */
void dprdma_srq_post_begin(struct dprdma_srq *srq);
struct dpr_shm_rwqe *dprdma_srq_next(struct dprdma_srq *srq);
void dprdma_srq_post_end(struct dprdma_srq *srq);

/** The QP's ibv_qp_type, as created. */
uint32_t dprdma_qp_type(const struct dprdma_qp *qp);

/* Posting: take slots, fill them, then publish them all at once (one
 * doorbell). Between begin and end the QP is held by this thread. */
void dprdma_post_begin(struct dprdma_qp *qp);
/** The next free send slot, or NULL with the ring full. */
struct dpr_shm_swqe *dprdma_sq_next(struct dprdma_qp *qp);
struct dpr_shm_rwqe *dprdma_rq_next(struct dprdma_qp *qp);
/** Publish what was filled and let the daemon know. */
void dprdma_post_end(struct dprdma_qp *qp);
/** Forget what was taken since dprdma_post_begin(), and let go. */
void dprdma_post_abort(struct dprdma_qp *qp);

/**
 * Check one send WQE as the daemon will (so that mistakes come back from
 * the post as verbs return them, not later as error completions).
 * @return 0 or EINVAL.
 */
int dprdma_check_swqe(const struct dprdma_qp *qp, const struct dpr_shm_swqe *w);

/** The same before a WQE is written: @p count is the number of SGEs, or
 * with IBV_SEND_INLINE the number of bytes. @return 0 or EINVAL. */
int dprdma_check_send(const struct dprdma_qp *qp, uint32_t opcode,
		uint32_t flags, uint64_t count);

#ifdef __cplusplus
}
#endif

#endif /* DPRDMA_H */
