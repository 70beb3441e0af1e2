/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Inside the drop-in librdmacm.so.1: its IDs and channels and what its
 * rooms share:
 *
 *   cma.c        the process's CM connection to dprdmad, devices and
 *                their PDs, addresses, IDs and channels, an ID's QP and
 *                SRQ (their attributes from the events), bind, listen,
 *                establish, reject, options, what is refused
 *   cma_event.c  events (rdma_get_cm_event), a synchronous ID's wait,
 *                rdma_getaddrinfo
 *   cma_conn.c   resolving, connect, accept, disconnect, migrate,
 *                endpoints (rdma_create_ep, rdma_get_request)
 *
 * cma_conn.c calls the two others, cma_event.c calls cma.c: no circle.
 */

#ifndef CMA_PRIVATE_H
#define CMA_PRIVATE_H

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "dprdma.h"
#include "dpr_shm.h"

#define CMA_MAX_DEVICES DPR_SHM_MAX_DEVICES
/* private data a message holds (IBA 12.6): REQ (36 of them rdma_cm's IP
 * header), REP, REJ; the most of any */
#define DPR_CM_REQ_PDATA_BYTES 92
#define DPR_CM_REP_PDATA_BYTES 196
#define DPR_CM_REJ_PDATA_BYTES 148
#define DPR_CM_MAX_PDATA_BYTES 224
#define DPR_CM_SIDR_REQ_PDATA_BYTES 216
#define DPR_CM_SIDR_REP_PDATA_BYTES 136
#define CMA_MIN_RNR_TIMER 12            /* 0.64 ms */
#define CMA_ACK_TIMEOUT 14              /* 67 ms */

struct cma_channel {
	struct rdma_event_channel ch;
	uint32_t handle;
};

struct cma_id {
	struct rdma_cm_id id;
	uint32_t handle;
	bool sync;                      /* its own channel: calls wait */
	bool connecting;                /* active side: the REP is processed */
	bool loopback;                  /* bound to a loopback address alone */
	struct ibv_sa_path_rec path;
	uint8_t sgid_index, mtu, tos, ack_timeout;
	/* the starting PSN we told (REQ or REP): as Linux's CM, the PSN
	 * our receive side expects; the peer's is where we send from */
	uint32_t psn;
	struct rdma_conn_param param;   /* ours (connect/accept) */
	struct dpr_shm_cm_conn peer;    /* the REQ's or REP's */
	struct ibv_qp_init_attr *ep_qp; /* rdma_create_ep of a listener */
	/* as librdmacm: events handed out for this ID and acknowledged
	 * (a CONNECT_REQUEST counts for its listener); rdma_destroy_id()
	 * waits until every one is, so neither an acknowledgement nor the
	 * thread still handling an event meets a freed ID (under cma.lock) */
	uint64_t events_reported, events_completed;
	struct cma_id *next;
};

struct cma_event {
	struct rdma_cm_event ev;
	struct cma_id *owner;           /* whose events_reported counts it
					 * (set for every event handed out) */
	uint8_t pdata[DPR_CM_MAX_PDATA_BYTES];
};

struct cma_global {
	pthread_mutex_t lock;
	int fd;
	uint32_t seq;
	struct ibv_context *dev[CMA_MAX_DEVICES];
	struct ibv_pd *pd[CMA_MAX_DEVICES];
	/* the IDs by handle (the daemon's: small integers); one the table
	 * could not grow for on a list (normally empty) */
	struct cma_id **by_handle;
	uint32_t n_handles;
	struct cma_id *ids;
	pthread_cond_t acked;           /* an event acknowledged */
};
extern struct cma_global cma;

/* cma.c */
/* One request on the process's CM connection. @return 0, or -1 (errno). */
int cma_cm_call(struct dpr_shm_msg *m, int send_fd);
/* The opened device dprdma<index> (kept for the process), and its PD. */
struct ibv_context *cma_device(uint32_t index);
struct ibv_pd *cma_device_pd(struct ibv_context *ctx);
uint32_t cma_random_psn(void);
uint32_t cma_chan_handle(struct rdma_event_channel *ch);
struct cma_id *cma_id_alloc(struct rdma_event_channel *ch, void *context,
			    enum rdma_port_space ps, enum ibv_qp_type qp_type);
struct cma_id *cma_id_of(struct rdma_cm_id *id);
void cma_id_link(struct cma_id *c);
/* The ID of @p handle, its events_reported counted (under cma.lock). */
struct cma_id *cma_id_find_report(uint32_t handle);
/* An event of @p owner acknowledged. */
void cma_event_done(struct cma_id *owner);
/* A request about @p c. @return 0, or -1 (errno). */
int cma_id_call(struct cma_id *c, struct dpr_shm_msg *m);
void cma_take_route(struct cma_id *c, uint32_t port, uint32_t sgid_index,
		    uint32_t mtu, const struct dpr_shm_cm_addr *src,
		    const struct dpr_shm_cm_addr *dst,
		    const struct dpr_shm_gid *sgid,
		    const struct dpr_shm_gid *dgid);
/* @p sa in the ABI's form (NULL: all zero). @return 0, or -1 (errno). */
int cma_to_shm_addr(const struct sockaddr *sa, struct dpr_shm_cm_addr *a);
/* The route a daemon's answer carries, into @p c. */
void cma_take_resp(struct cma_id *c, const struct dpr_shm_msg *m);

/* @p c's QP to state @p st with the attributes its events gave. */
int cma_move_qp(struct cma_id *c, enum ibv_qp_state st);
/* RTR then RTS in one request to dprdmad */
int cma_move_qp_rts(struct cma_id *c);
/* the drop-in libibverbs' two moves in one request (its DPRDMA_PRIVATE_1) */
int dprdma_ibv_modify_qp2(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
			  struct ibv_qp_attr *a2, int mask2);
/* @p p's parameters and at most @p max_pdata bytes of its private data
 * into @p k (NULL @p p: all zero). */
void cma_put_conn(struct dpr_shm_cm_conn *k, const struct rdma_conn_param *p,
		  uint32_t max_pdata);

/* cma_event.c */
/* A synchronous ID waits for its event @p want. */
int cma_sync_wait(struct cma_id *c, enum rdma_cm_event_type want);

#endif /* CMA_PRIVATE_H */
