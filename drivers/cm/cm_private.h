/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Between the rooms of drivers/cm (main lcore, unless said):
 *
 *   dpr_cm.c            the IDs: their table, events to their owners, the
 *                       MADs they send and wait for, time-wait, start and
 *                       stop, [cm]
 *   dpr_cm_qp1.c        QP1 of every port (made and polled on worker 0,
 *                       MADs through two rings) and addresses: which port
 *                       and GID reach a peer
 *   dpr_cm_loop.c       the main lcore's turn: MADs in, the IDs' timers,
 *                       channels reaped
 *   dpr_cm_peer.c       MADs from peers: the protocol's passive and active
 *                       halves as they arrive (REQ, REP, RTU, REJ, MRA,
 *                       DREQ, DREP, SIDR)
 *   dpr_cm_client.c     requests of local clients (the drop-in librdmacm
 *                       through the shim): bind, listen, resolve, connect,
 *                       accept, reject, disconnect, destroy
 *   dpr_cm_telemetry.c  /dprdma/cm/{stats,conns}
 *   dpr_cm_mad.c        the MADs' bytes (encode, decode), pure
 *   dpr_cm_caps.c       the peers' capabilities asked over QP1
 *   dpr_cm_sec.c        secure QPs' handshakes
 *   dpr_cm_auth.c       the MACs of MADs between boxes of one key
 *
 * Every room calls dpr_cm.c's IDs and dpr_cm_qp1.c's sends; only the loop
 * calls the peer room (a MAD that came); no room calls back up.
 */

#ifndef CM_PRIVATE_H
#define CM_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <rte_log.h>
#include <rte_telemetry.h>

#include "dpr_cm_mad.h"
#include "dpr_config.h"
#include "dpr_shm.h"

extern int cm_logtype;
#define CM_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, cm_logtype, "dprdma.drv.cm: " fmt "\n", \
		## __VA_ARGS__)

#define CM_MAX_CHANNELS 1024
#define CM_MAX_PORTS 8
#define GSI_RECVS 256                   /* QP1 receive WQEs per port */
#define GSI_RING 1024                   /* MADs queued each way */
#define GRH_LEN 40
/* a MAD received (a trailer room after it), a MAD to send */
#define GSI_RX_SLOT (GRH_LEN + DPR_MAD_LEN + DPR_MAD_AUTH_LEN)
#define GSI_TX_SLOT (DPR_MAD_LEN + DPR_MAD_AUTH_LEN)
#define GSI_BUF_LEN (GSI_RECVS * GSI_RX_SLOT + GSI_RING * GSI_TX_SLOT)
#define CM_PORT_EPHEMERAL 32768         /* ports given to bind(0) from here */
#define CM_RTR_MIN_RNR 12               /* 0.64 ms, as ibv_rc_pingpong */
#define CM_ACK_TIMEOUT 14               /* 67 ms: the QP's local ACK timeout */
#define CM_RESPONSE_TIMEOUT 20          /* told in REQs, as Linux */
/* An MRA's service timeout: 4.096 us x 2^24, about 69 s, as Linux's
 * CMA_CM_MRA_SETTING -- the answer waits for a program, which may be busy
 * with thousands of connections */
#define CM_MRA_TIMEOUT 24
#define CM_MAX_CM_RETRIES 15
/* A REQ to a peer whose capabilities are not known, from a box with a
 * key, waits for them (whether its MADs are MACed: dpr_cm_auth.c), at
 * most the time the caps take to give up (3 Gets 300 ms apart) */
#define CM_CAPS_WAIT_MS 1000
#define IBV_QPT_UD_ 4                   /* ibv_qp_type */

struct cm_conf {
	uint32_t enabled;
	uint32_t response_timeout_ms;
	uint32_t max_retries;
	uint32_t max_ids;
	uint32_t max_backlog;
	uint32_t half_open_per_source;
	uint32_t connections_per_source;
};

#define CM_STATS(_) \
	_(mads_rx) \
	_(mads_tx) \
	_(mads_retried) \
	_(mads_tx_held) \
	_(mads_tx_dropped) \
	_(mads_rx_dropped) \
	DPR_CM_MAD_ERRORS(_) \
	_(mad_unknown_id) \
	_(mad_wrong_state) \
	_(mad_duplicate) \
	_(mad_late) \
	_(mad_bad_pdata) \
	_(sidr_req_rx) \
	_(sidr_no_listener) \
	_(req_rx) \
	_(req_no_listener) \
	_(req_dropped_backlog) \
	_(req_dropped_source) \
	_(req_rejected_source) \
	_(rej_rx) \
	_(rej_tx) \
	_(connections) \
	_(timeouts) \
	_(events) \
	_(events_held) \
	_(events_lost) \
	_(timers_dropped)

struct cm_stats {
#define _(n) uint64_t n;
	CM_STATS(_)
#undef _
};

/* QP1 of one port: made and driven on worker 0. */
struct gsi {
	bool ready;
	struct dpr_pd *pd;
	struct dpr_cq *scq, *rcq;
	struct dpr_tqp *qp;
	struct dpr_mr *mr;
	uint8_t *buf;                   /* GSI_RECVS x GSI_RX_SLOT, then
	                                   GSI_RING x GSI_TX_SLOT */
	uint32_t tx_next;               /* the next send's slot (worker 0) */
	uint64_t node_guid;             /* network order */
};

enum cm_state {
	CS_IDLE, CS_BOUND, CS_LISTEN, CS_ADDR, CS_ROUTE,
	CS_REQ_SENT, CS_REP_RCVD, CS_REQ_RCVD, CS_REP_SENT, CS_ESTABLISHED,
	CS_DREQ_SENT, CS_DREQ_RCVD, CS_CLOSED, CS_TIMEWAIT,
};

extern const char *const cm_state_names[];

struct cm_id {
	struct cm_id *next, *prev;      /* cm.live */
	void *owner;
	uint32_t chan;                  /* channel handle */
	enum cm_state st;
	uint16_t ps;
	uint8_t qp_type;
	int pi;                         /* port index, -1: none yet */
	uint8_t sgid_index;
	struct dpr_shm_cm_addr src, dst;
	uint8_t sgid[16], dgid[16];
	uint32_t local_id, remote_id;
	uint64_t remote_guid;
	uint64_t tid;
	uint32_t local_qpn, remote_qpn;
	uint32_t backlog;
	bool passive;                   /* made by a peer's REQ or SIDR_REQ */
	uint64_t linger_ms;             /* owner gone: freed then */
	/* the MAD waiting for its answer, sent again until then */
	uint8_t mad[DPR_MAD_LEN];
	bool waiting;
	bool caps_wait;                 /* not sent yet: the peer's caps first */
	uint64_t deadline_ms;
	uint64_t caps_until;            /* sent then whatever they are */
	uint32_t retries_left;
	/* the last answer sent, for duplicates (REP, RTU, DREP, MRA) */
	uint8_t answer[DPR_MAD_LEN];
	bool has_answer;
	/* dpr_cm_index.c: on the chain of its bound port, of the peer's
	 * comm ID; a passive ID half-open (of listener @listener, from
	 * @half_open_src); a listener's half-open IDs */
	struct cm_id *bnext, *rnext;
	uint32_t bound_key, remote_key;
	bool in_bound, in_remote, half_open;
	bool counted;           /* in its source's connections (quota) */
	uint8_t half_open_src[16];
	uint32_t listener;
	uint32_t n_half_open;
};

/* Events a full channel could not take yet, sent in order when it can
 * (cm_chan_flush()): a program that makes many IDs before it reads one
 * event (ucmatose -c 200) must lose none. */
#define CM_CHAN_BACKLOG_MAX 65536

struct cm_chan {
	void *owner;
	int fd;
	bool dead;                      /* destroyed: closed once the client's
	                                   end is (reap_channels) */
	struct dpr_shm_cm_event *q;     /* the backlog, a ring */
	uint32_t qhead, qlen, qcap;
};

struct cm_timer {
	uint64_t due_ms;
	uint32_t local_id;
};

/* The RDMA CM's state, one per daemon (dpr_cm.c). */
struct cm_global {
	bool started;
	struct cm_conf conf;
	const struct dpr_config *cfg;
	pthread_mutex_t lock;           /* the ID table: main lcore vs telemetry */
	uint16_t n_ports;
	struct gsi gsi[CM_MAX_PORTS];
	struct rte_ring *rx, *tx;       /* worker 0 -> main, main -> worker 0 */
	int wake_fd;
	/* IDs by index (handle = index + 1, the low bits of the local comm
	 * ID), max_ids of them (a power of two); those in use on a list, the
	 * free indices in a FIFO (an index is reused last: a late MAD for an
	 * ID gone meets no new ID of its index, whose random high bits
	 * differ anyway) */
	struct cm_id **ids;
	uint32_t max_ids;
	struct cm_id *live;
	uint32_t n_live;
	uint32_t *free_q;
	uint32_t free_head, n_free;
	/* deadlines (an ID waiting for an answer, or lingering), a min-heap
	 * of due times; an entry whose ID has gone or moved its deadline is
	 * passed over when it comes up (cm_timer_arm()) */
	struct cm_timer *heap;
	uint32_t heap_n, heap_cap;
	struct cm_chan *chans[CM_MAX_CHANNELS];
	uint32_t id_seq;
	uint16_t next_port;
	uint64_t last_reap;
	bool backlog;                   /* some channel holds events back */
	/* MADs the ring to worker 0 could not take yet (main lcore) */
	struct cm_mad *txq;
	uint32_t txq_head, txq_n, txq_cap;
	struct cm_stats st;
};
extern struct cm_global cm;

/* Milliseconds of CLOCK_MONOTONIC. */
static inline uint64_t
dpr_cm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A MAD between the main lcore and worker 0 (the rings' element). */
struct cm_mad {
	uint16_t port;
	uint8_t sgid_index;
	bool has_auth;                  /* auth[] holds a trailer */
	uint32_t qpn;                   /* the peer's QP (1) */
	uint32_t qkey;
	uint8_t gid[16];                /* rx: the source; tx: the destination */
	uint8_t dgid[16];               /* rx: ours it was sent to */
	bool authed;                    /* rx: its trailer is good (cm_auth_rx) */
	uint8_t mad[DPR_MAD_LEN];
	uint8_t auth[DPR_MAD_AUTH_LEN];
};

/* dpr_cm.c: channels */
/* Send what @p ch holds back, in order, while it takes it. @return
 * whether some is still held. */
bool cm_chan_flush(struct cm_chan *ch);
/* @p ch closed and freed, its backlog with it. */
void cm_chan_free(struct cm_chan *ch);

/* dpr_cm.c: the IDs */
/* The ID @p owner knows as @p handle, or NULL. */
struct cm_id *cm_id_get(void *owner, uint32_t handle);
uint32_t cm_id_handle(const struct cm_id *id);
/* A new ID of @p owner, its events to channel @p chan; NULL: table full. */
struct cm_id *cm_id_new(void *owner, uint32_t chan);
/* The ID whose local communication ID is @p local_id, or NULL. */
struct cm_id *cm_id_by_local(uint32_t local_id);
void cm_id_free(struct cm_id *id);
/* Every ID in use (@p id may be freed in the body). */
#define CM_FOREACH_ID(id, nx) \
	for ((id) = cm.live; (id) != NULL && ((nx) = (id)->next, 1); (id) = (nx))

/* dpr_cm_index.c: IDs by bound port and by the peer's comm ID (the
 * chains hold other keys too: check), and half-open IDs bounded per
 * listener and per source */
int cm_index_start(void);
void cm_index_stop(void);
struct cm_id *cm_bound_chain(uint16_t ps, uint16_t port_n);
struct cm_id *cm_remote_chain(uint32_t remote_id);
#define CM_FOREACH_BOUND(id, ps, port_n) \
	for ((id) = cm_bound_chain(ps, port_n); (id) != NULL; (id) = (id)->bnext)
#define CM_FOREACH_REMOTE(id, remote_id) \
	for ((id) = cm_remote_chain(remote_id); (id) != NULL; (id) = (id)->rnext)
/* @p id's ps and src.port set: findable by them (again) */
void cm_index_bound(struct cm_id *id);
void cm_index_unbound(struct cm_id *id);
/* @p id's remote_id set: findable by it */
void cm_index_remote(struct cm_id *id);
/* @p id goes: off every index, no longer half-open */
void cm_index_forget(struct cm_id *id);
/* May a request from @p gid to listener @p lid make an ID? (false:
 * dropped, counted, logged) */
bool cm_half_open_admit(const struct cm_id *lid, const uint8_t *gid);
/* Does @p gid hold [cm] connections_per_source passive connections
 * already? (true: its REQ is rejected, counted, logged) */
bool cm_conn_quota_full(const uint8_t *gid);
/* @p id's owner let it go (or it is freed): no longer in its source's
 * connections */
void cm_conn_quota_end(struct cm_id *id);
void cm_half_open_begin(struct cm_id *id, struct cm_id *lid, const uint8_t *gid);
/* @p id established or ended: no longer half-open (once) */
void cm_half_open_end(struct cm_id *id);
/* Half-open IDs now, and the sources they came from (*@p sources). */
uint32_t cm_half_open_now(uint32_t *sources);
/* @p id's deadline, or its linger, comes due at @p due_ms: run_timers()
 * looks at it then. */
void cm_timer_arm(const struct cm_id *id, uint64_t due_ms);
/* The earliest deadline armed (UINT64_MAX: none), and those come due by
 * @p now_ms taken off, one by one (their IDs, or NULL for one gone). */
uint64_t cm_timer_next(void);
bool cm_timer_pop(uint64_t now_ms, struct cm_id **id);
/* An event to @p id's owner through its channel (lost, counted, when the
 * channel is full). */
void cm_emit(struct cm_id *id, uint32_t event, int32_t status,
	     const struct dpr_shm_cm_conn *conn, uint32_t listen_id);
/* @p m to @p id's peer: sent again until answered (REQ, REP, DREQ), or
 * an answer kept for the peer's duplicates. */
void cm_send_waiting(struct cm_id *id, const struct dpr_cm_msg *m);
void cm_send_answer(struct cm_id *id, const struct dpr_cm_msg *m);
/* @p m zeroed, with @p attr and @p id's transaction and comm IDs. */
void cm_msg_ids(const struct cm_id *id, struct dpr_cm_msg *m, uint16_t attr);
void cm_send_rej(struct cm_id *id, uint8_t msg_ref, uint16_t reason,
		 const uint8_t *pdata, uint32_t len);
void cm_send_dreq(struct cm_id *id);
bool cm_id_is_ud(const struct cm_id *id);
void cm_send_sidr_rep(struct cm_id *id, uint8_t status, uint32_t qpn,
		      uint32_t qkey, const uint8_t *pdata, uint32_t len);
/* @p id ends for its owner's sake (into time-wait if it had a peer). */
void cm_id_end(struct cm_id *id);

/* dpr_cm_qp1.c: QP1 and addresses */
/* Made and destroyed on worker 0 (dpr_engine_run_on(); arg: the port). */
int cm_gsi_create(void *arg);
int cm_gsi_destroy(void *arg);
/* Queue @p mad to QP1 of @p gid on port @p pi, from our GID @p sgid_index. */
/* MADs held back into the ring to worker 0, as it takes them: @return
 * whether some still wait (dpr_cm_qp1.c). */
bool cm_mad_flush(void);
void dpr_cm_mad_send(int pi, uint8_t sgid_index, const uint8_t gid[16],
		const uint8_t *mad);
/* The port and our GID index that reach @p gid, or -1. */
int dpr_cm_route(const uint8_t *gid, uint8_t *sgid_index);
/* Port @p pi's node GUID, network order. */
uint64_t dpr_cm_node_guid(uint16_t pi);
/* The IBA MTU enum of port @p pi's path MTU. */
uint8_t cm_port_mtu(int pi);
bool cm_is_v4mapped(const uint8_t *a);
bool cm_addr_any(const struct dpr_shm_cm_addr *a);
/* GID @p gi of port @p pi into @p gid; the index of @p a there, or -1. */
void cm_port_gid(uint16_t pi, uint8_t gi, uint8_t gid[16]);
int cm_own_gid_index(uint16_t pi, const uint8_t *a);

/* dpr_cm_peer.c: a MAD from a peer (dequeued from worker 0's ring). */
void cm_rx_mad(struct cm_mad *r);

/* dpr_cm_caps.c: made by dpr_cm_start() (@p wake_fd wakes the main
 * lcore), gone with dpr_cm_stop() (with the workers still running). */
int dpr_cm_caps_start(const struct dpr_config *conf, int wake_fd, uint32_t sec_bits,
		const uint8_t keyprint[8]);
void dpr_cm_caps_stop(void);
/* A DprdmaCaps MAD: taken (true), or someone else's (false). */
bool dpr_cm_caps_rx(const struct cm_mad *r);
/* dpr_cm_sec.c: secure QPs' handshakes */
int dpr_cm_sec_start(const struct dpr_config *conf, int wake_fd, uint32_t *caps_bits,
		uint8_t keyprint[8], char *err, size_t errlen);
void dpr_cm_sec_stop(void);
bool dpr_cm_sec_rx(const struct cm_mad *r);
void dpr_cm_sec_poll(uint64_t now);
uint64_t dpr_cm_sec_next_ms(void);
bool dpr_cm_sec_keyprint_is_ours(const uint8_t kp[8]);
/* The host-pair secret of the pre-shared key, or NULL (no [security]). */
const uint8_t *dpr_cm_sec_prk(void);
void dpr_cm_sec_stats(struct rte_tel_data *d);
/* Questions the workers asked, answers not come: sent (again). */
void dpr_cm_caps_poll(uint64_t now_ms);
/* When dpr_cm_caps_poll() has a timer to run (UINT64_MAX: none). */
uint64_t dpr_cm_caps_next_ms(void);
/* Its counters into /dprdma/cm/stats (a dict begun); /dprdma/cm/peers. */
void dpr_cm_caps_stats(struct rte_tel_data *d);
void dpr_cm_caps_register_telemetry(void);
/* Do MADs to and from the peer at @p gid carry the trailer (it holds our
 * key and takes them, and our policy for it is not none)? */
bool dpr_cm_caps_auth(uint16_t pi, const uint8_t *gid);
/* The peer at @p gid asked again what it runs (at most once a second). */
void dpr_cm_caps_ask_again(uint16_t pi, const uint8_t *gid);
/* Must a first MAD to @p gid wait for its capabilities (we hold a key,
 * our policy for it is not none, and they are not known yet: asked now)? */
bool dpr_cm_caps_pending(uint16_t pi, const uint8_t *gid, uint8_t sgid_index);

/* dpr_cm_auth.c: with @p prk (NULL: no key, nothing MACed) */
int cm_auth_start(const uint8_t *prk);
void cm_auth_stop(void);
/* @p out (its port, sgid_index, gid and mad set) gets a trailer when its
 * peer's MADs carry one. */
void cm_auth_seal(struct cm_mad *out);
/* May @p r be read? Its trailer good (r->authed), or none needed; false:
 * dropped, counted. */
bool cm_auth_rx(struct cm_mad *r);
void cm_auth_stats(struct rte_tel_data *d);

#endif /* CM_PRIVATE_H */
