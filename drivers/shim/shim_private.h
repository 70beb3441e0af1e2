/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Inside the shim (the daemon side of the shared-memory verbs shim): its
 * objects, its state, and the prototypes its files share, grouped by file
 * as rxe_loc.h groups them. The rooms:
 *
 *   dpr_shim_socket.c     the client socket (main lcore): accept, receive a
 *                         request, dispatch it through the ops table, answer
 *   dpr_shim_client.c     a client's life: connection, opening a device
 *                         (its worker, its control page), quotas,
 *                         everything it made undone when it goes
 *   dpr_shim_objects.c    PDs, completion channels, CQs, QPs, SRQs: the
 *                         requests, checked
 *   dpr_shim_mem.c        memory registration (a client's memfd or System
 *                         V segment, mapped here)
 *   dpr_shim_jobs.c       below those three: a client's handles, the jobs
 *                         that change its objects on its worker, the
 *                         memfds of the rings and control page
 *   dpr_shim_datapath.c   the worker side: doorbells, send/receive rings into
 *                         the transport, completions into CQ rings, events
 *   dpr_shim_telemetry.c  /dprdma/shim/{stats,clients,client}
 *
 * Threads: the main lcore serves the socket and owns the client table. A
 * client's verbs objects live on one worker, chosen when it opens the
 * device (the least loaded); every change to them runs on that worker
 * (shim_job, through dpr_engine_run_on()), so the data path never races
 * with the control path and needs no lock. Object tables shared by a
 * port's workers are changed under dpr_engine_verbs_lock().
 *
 * Trust: nothing read from shared memory is trusted. Work requests are
 * copied before they are checked; ring indices that make no sense stop
 * that ring; handles are indexes into the client's own table, so a client
 * can only name its objects; keys are checked against the QP's PD, which
 * only that client's QPs and MRs have.
 */

#ifndef SHIM_PRIVATE_H
#define SHIM_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <rte_common.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>

#include "dpr_engine.h"
#include "dpr_shim.h"
#include "dpr_shm.h"
#include "dpr_transport.h"
#include "dpr_verbs.h"

extern int shim_logtype;
#define SHIM_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, shim_logtype, "dprdma.drv.shim: " fmt "\n", \
		## __VA_ARGS__)

/* Per-client quotas: QPs, CQs, PDs and MRs from [limits] (shim.lim),
 * these fixed. */
#define SHIM_MAX_CHANNELS 256
#define SHIM_MAX_SRQ 16
#define SHIM_MAX_MR_BYTES (64ull << 30)

enum obj_type { OBJ_FREE, OBJ_PD, OBJ_MR, OBJ_CQ, OBJ_QP, OBJ_CHANNEL, OBJ_SRQ, OBJ_MW };

struct shim_client;

struct shim_mem {                   /* a daemon-side mapping */
	void *addr;
	size_t len;
	bool sysv;                      /* shmat()ed, not mmap()ed */
};

struct shim_cq {
	struct dpr_cq *cq;
	struct shim_client *c;
	struct dpr_shm_ring *ring;
	size_t map_bytes;
	uint32_t handle, cqe, size, prod;
	/* the client's consumer as last read (worker): read again only
	 * when the ring looks full by it, its line being the client's */
	uint32_t cons_seen;
	int chan_fd;                    /* -1: no completion channel */
	uint32_t chan_handle;
	bool overflowed;
	uint32_t users;                 /* QPs */
};

struct shim_qp {
	struct dpr_tqp *qp;
	struct shim_client *c;
	struct shim_cq *scq, *rcq;
	struct shim_srq *srq;           /* NULL: a receive ring of its own */
	uint32_t pd_handle;
	struct dpr_shm_ring *sq, *rq;
	size_t map_bytes;
	uint32_t handle, slot, qpn;
	uint32_t sq_size, rq_size, sq_cons, rq_cons;
	/* receive ring entries done with (completed, or refused as bad): the
	 * ring's consumer index the client sees, so that its room is what
	 * an RNIC's receive queue has -- max_recv_wr not yet completed, not
	 * what the worker happens to have taken into the transport */
	uint32_t rq_freed;
	/* (worker) the SQ's producer as last read: the entries up to it
	 * have been asked for (prefetched); and whether that round found
	 * new ones (the client is streaming: the next round's wait) */
	uint32_t sq_seen;
	bool sq_streak;
	bool broken;                    /* the client scribbled on an index */
	bool errored;                   /* moved to ERR for its CQ's overflow */
	bool ud;                        /* a UD QP: its WQEs carry a destination */
	/* (worker) its rings looked at every round, no doorbell needed
	 * (its bit in c->polled; sq->idle = 0), and for how many rounds
	 * in a row they have had nothing */
	bool polled;
	uint32_t empty_rounds;
	uint64_t empty_since_ns;        /* its rings found empty first */
	uint64_t send_wqes, recv_wqes;  /* taken from its rings (worker) */
	struct dpr_shm_qp_caps cap;
};

struct shim_srq {
	struct dpr_srq *srq;
	struct shim_client *c;
	struct dpr_shm_ring *ring;      /* receive WQEs, as a QP's RQ */
	size_t map_bytes;
	uint32_t handle, slot, size, cons;
	uint32_t users;                 /* QPs */
	bool broken;                    /* the client scribbled on an index */
	uint64_t recv_wqes;
};

struct shim_obj {
	uint8_t type;
	void *p;
};

/* A client's QPs whose destruction is logged one by one: a server of
 * 10,000 connections would otherwise write 10,000 lines (and 20,000 with
 * its peer's) while it tears them down */
#define SHIM_QP_LOGS 64

struct shim_client {
	int fd;
	uint32_t id;
	pid_t pid;
	char comm[16];                  /* its program's name (/proc/PID/comm) */
	uid_t uid;
	gid_t gid;
	unsigned int worker;
	uint16_t port;
	bool opened;
	struct dpr_shm_ctrl *ctrl;
	struct dpr_verbs_ctx *ctx;
	struct shim_qp **qps;           /* shim.lim.qps, by slot: the worker reads */
	/* slots below this have been used: the worker looks no higher
	 * (grows only; the main lcore stores it after the slot's QP) */
	uint32_t slot_hi;
	uint32_t slot_hint;             /* (main) no free slot below it */
	uint64_t polled[DPR_SHM_MAX_QPS / 64];  /* (worker) slots of polled QPs */
	uint64_t polled_sum[DPR_SHM_MAX_QPS / 4096]; /* (worker) words of polled */
	uint64_t next_sweep_ns;                 /* (worker) sweep() */
	uint32_t sweep_from;                    /* (worker) sweep()'s next slot */
	struct shim_srq *srqs[SHIM_MAX_SRQ];    /* by slot: the worker drains */
	struct shim_obj *obj;           /* by handle - 1, obj_cap of them */
	uint32_t obj_cap;               /* grows to shim_obj_cap() (main lcore) */
	uint32_t obj_hi;                /* handles below this + 1 have been used */
	uint32_t obj_hint;              /* no free entry below it */
	uint32_t n_pd, n_mr, n_cq, n_qp, n_channel, n_srq;
	/* QPs it destroyed; each of the first SHIM_QP_LOGS is logged with its
	 * WQE counts, the rest summed into the line of its departure */
	uint32_t qps_destroyed;
	uint64_t quiet_send_wqes, quiet_recv_wqes;
	uint64_t mr_bytes;
	int async_fd;                   /* the client's eventfd, or -1 */
	bool overflow_pending;          /* a CQ overflowed: its QPs to ERR */
	uint64_t requests, refused;
};

/* Counters, read by telemetry: those of the main lcore (the socket)... */
#define SHIM_STATS(_) \
	_(clients_connected) \
	_(clients_closed) \
	_(requests) \
	_(refused) \
	_(bad_messages) \
	_(quota_refused) \
	_(limit_refused)

/* ...and those each worker keeps for the clients it serves (summed when
 * read) */
#define SHIM_WORKER_STATS(_) \
	_(send_wqes) \
	_(recv_wqes) \
	_(bad_wqes) \
	_(ring_index_errors) \
	_(doorbells) \
	_(doorbells_missed) \
	_(cqes) \
	_(cq_overflows) \
	_(channel_signals) \
	_(async_events)

/* The shim's state: one per daemon. */
struct shim_state {
	int lfd;
	char path[108];
	unsigned int max_clients;
	struct shim_client **clients;   /* by slot; main lcore only */
	uint32_t next_id;
	/* held by the main lcore while it changes the client table or a
	 * client's objects, and by telemetry while it reads them (never by
	 * a worker) */
	pthread_mutex_t lock;
	bool draining;                  /* dprdmad stops: nothing new */
	struct {
		uint32_t qps, cqs, pds, mrs;    /* per client ([limits] client_*) */
	} lim;
	/* clients each worker serves: written only by that worker */
	struct shim_client **wl[RTE_MAX_LCORE];
	unsigned int wn[RTE_MAX_LCORE];
	unsigned int load[RTE_MAX_LCORE];       /* main lcore's count */
	bool started;
	struct {
#define _(n) uint64_t n;
		SHIM_STATS(_)
#undef _
	} st;
	/* per worker, written by the worker only */
	struct {
#define _(n) uint64_t n;
		SHIM_WORKER_STATS(_)
#undef _
	} __rte_cache_aligned ws[RTE_MAX_LCORE];
};

extern struct shim_state shim;

enum job_kind {
	JOB_ATTACH, JOB_DETACH, JOB_ALLOC_PD, JOB_DEALLOC_PD, JOB_REG_MR,
	JOB_DEREG_MR, JOB_CREATE_CQ, JOB_DESTROY_CQ, JOB_CREATE_QP,
	JOB_MODIFY_QP, JOB_QUERY_QP, JOB_DESTROY_QP, JOB_CREATE_SRQ,
	JOB_MODIFY_SRQ, JOB_QUERY_SRQ, JOB_DESTROY_SRQ, JOB_REREG_MR,
	JOB_ALLOC_MW, JOB_DEALLOC_MW,
};

struct job {
	enum job_kind kind;
	struct shim_client *c;
	void *p;                        /* the object */
	void *out;
	/* REG_MR (REREG_MR: old is the MR replaced) */
	struct dpr_mr *old;
	void *addr;
	uint64_t iova, length;
	uint32_t access;
	struct shim_mem *mem;
	struct dpr_mr_owner owner;
	/* CREATE_QP / MODIFY_QP */
	struct dpr_qp_init_attr ia;
	struct dpr_qp_attr attr;
	int mask;
	/* SRQ */
	uint32_t max_wr, max_sge, limit;
};

struct shim_mr {
	struct dpr_mr *mr;
	uint64_t length;
};

struct shim_channel {
	int fd;
	uint32_t users;
};

/* dpr_shim_jobs.c */
/** Entries of a client's object table (every quota together). */
uint32_t shim_obj_cap(void);
/** A handle for @p p in @p c's table (0: the table is full). */
uint32_t shim_obj_add(struct shim_client *c, enum obj_type t, void *p);
/** What handle @p h names, if it is a @p t (else NULL). */
void *shim_obj_get(struct shim_client *c, uint32_t h, enum obj_type t);
void shim_obj_del(struct shim_client *c, uint32_t h);
/** Run @p j on its client's worker. @return its result (negative errno). */
int shim_job(struct job *j);
/** A memfd of @p len bytes (zeroed), sealed against resizing, mapped at
 * *@p addr. @return the descriptor, or a negative errno. */
int shim_make_shared(const char *name, size_t len, void **addr);
size_t shim_page_round(uint64_t n);

/* dpr_shim_client.c */
int shim_req_open(struct shim_client *c, struct dpr_shm_msg *m, int *in_fd,
		  int *out_fd);
int shim_req_list_devices(struct shim_client *c, struct dpr_shm_msg *m,
			  int *in_fd, int *out_fd);
int shim_req_get_wake(struct shim_client *c, struct dpr_shm_msg *m,
		      int *in_fd, int *out_fd);
int shim_req_query_port(struct shim_client *c, struct dpr_shm_msg *m,
			int *in_fd, int *out_fd);
/** Undo everything the client in @p slot made, close it, log @p why. */
void shim_client_close(unsigned int slot, const char *why);

/* dpr_shim_objects.c */
/** Over a client's quota of @p what (@p max; @p key: the [limits] key
 * that sets it, or NULL)? Then refused: counted and logged. */
bool shim_over_quota(struct shim_client *c, uint32_t n, uint32_t max,
		     const char *what, const char *key);
int shim_req_alloc_pd(struct shim_client *c, struct dpr_shm_msg *m,
		      int *in_fd, int *out_fd);
int shim_dealloc_pd(struct shim_client *c, uint32_t h);
int shim_req_create_channel(struct shim_client *c, struct dpr_shm_msg *m,
			    int *in_fd, int *out_fd);
int shim_destroy_channel(struct shim_client *c, uint32_t h);
int shim_req_create_cq(struct shim_client *c, struct dpr_shm_msg *m,
		       int *in_fd, int *out_fd);
int shim_destroy_cq(struct shim_client *c, uint32_t h);
int shim_req_create_qp(struct shim_client *c, struct dpr_shm_msg *m,
		       int *in_fd, int *out_fd);
int shim_req_modify_qp(struct shim_client *c, struct dpr_shm_msg *m,
		       int *in_fd, int *out_fd);
int shim_req_query_qp(struct shim_client *c, struct dpr_shm_msg *m,
		      int *in_fd, int *out_fd);
int shim_destroy_qp(struct shim_client *c, uint32_t h);
int shim_req_create_srq(struct shim_client *c, struct dpr_shm_msg *m,
			int *in_fd, int *out_fd);
int shim_req_modify_srq(struct shim_client *c, struct dpr_shm_msg *m,
			int *in_fd, int *out_fd);
int shim_req_query_srq(struct shim_client *c, struct dpr_shm_msg *m,
		       int *in_fd, int *out_fd);
int shim_destroy_srq(struct shim_client *c, uint32_t h);

/* dpr_shim_mem.c */
/* An object job @p j made (j->out) given a handle of type @p t; without
 * one (ENOMEM: 0) it is unmade again by a job of @p undo. */
uint32_t shim_obj_enter(struct shim_client *c, struct job *j, enum obj_type t,
		enum job_kind undo);
/* The object of handle @p h (of type @p t: -EINVAL otherwise) unmade on
 * the worker by a job of @p kind, and its handle gone. 0 or -errno. */
int shim_obj_unmake(struct shim_client *c, uint32_t h, enum obj_type t,
		enum job_kind kind);
int shim_req_alloc_mw(struct shim_client *c, struct dpr_shm_msg *m, int *in_fd,
		int *out_fd);
int shim_dealloc_mw(struct shim_client *c, uint32_t h);
int shim_req_reg_mr(struct shim_client *c, struct dpr_shm_msg *m, int *in_fd,
		    int *out_fd);
int shim_dereg_mr(struct shim_client *c, uint32_t h);

/* dpr_shim_datapath.c */
/** A CQ's completions into its client's ring (struct dpr_cq's push). */
int shim_cq_push(struct dpr_cq *cq, const struct dpr_cqe *e);
/* The transport may take receives from the client's ring when a message
 * finds none (the worker's: after dpr_qp_create). */
void shim_qp_attach(struct shim_qp *q);
/* The same for an SRQ, and its limit event to the client. */
void shim_srq_attach(struct shim_srq *s);
/** The verbs devices' event callback: to the client owning the QP. */
void shim_verbs_event(void *arg, enum dpr_event_type type, uint32_t obj);
/** dprdmad stops: every client's QPs to ERR, then DEVICE_FATAL to it,
 * on each worker. */
void shim_drain_clients(void);
/** Look at the ports' links (main lcore, every poll): a change raises
 * PORT_ACTIVE / PORT_ERR to the port's clients. */
void shim_link_watch(void);
/** The QPN -> client QP table of port @p pi, @p n entries. */
int shim_qp_table_init(uint16_t pi, uint32_t n);
void shim_qp_table_set(uint16_t pi, uint32_t qpn, struct shim_qp *q);

#endif /* SHIM_PRIVATE_H */
