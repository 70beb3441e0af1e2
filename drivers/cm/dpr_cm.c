/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * RDMA CM: the IDs of local clients and the connection protocol of IBA
 * chapter 12 between them and their peers, as Linux's ib_cm/rdma_cm run
 * it over RoCEv2 (the reference capture: rping between two rxe guests).
 *
 * The split with the client library (the drop-in librdmacm) is Linux's
 * split between the kernel and librdmacm: the daemon owns QP1, the IDs,
 * the MADs, their retries and the port spaces; the library moves its own
 * QPs through INIT, RTR and RTS with what the events carry (as
 * rdma_init_qp_attr gives it), then tells the daemon to answer (RTU, REP).
 *
 * The active side:  CONNECT -> REQ ... REP -> event CONNECT_RESPONSE;
 *                   ESTABLISH -> RTU.
 * The passive side: REQ -> a new ID, event CONNECT_REQUEST; ACCEPT -> REP
 *                   ... RTU -> event ESTABLISHED (REJECT -> REJ).
 * Either side:      DISCONNECT -> DREQ ... DREP -> event DISCONNECTED;
 *                   DREQ -> DREP at once, event DISCONNECTED.
 * A MAD that expects an answer (REQ, REP, DREQ) is sent again every
 * [cm] response_timeout_ms, [cm] max_retries times, then the ID fails
 * (UNREACHABLE, or DISCONNECTED for a DREQ). A duplicate REQ is answered
 * with an MRA while the listener's user decides, with the REP once sent;
 * a duplicate REP with the RTU; a duplicate DREQ with the DREP.
 *
 * Addresses: an IP address names a port (its IPv4 address or subnet, its
 * IPv6 addresses); no routing. The neighbour's MAC is resolved when the
 * QP or QP1 first sends to it (ARP or ND, as for every QP).
 */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_random.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_telemetry.h>

#include "cm_private.h"
#include "dpr_cm.h"
#include "dpr_ratelimit.h"
#include "dpr_cm_mad.h"
#include "dpr_engine.h"
#include "dpr_transport.h"
#include "dpr_verbs.h"

RTE_LOG_REGISTER(cm_logtype, dprdma.drv.cm, INFO);
#define CM_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, cm_logtype, "dprdma.drv.cm: " fmt "\n", \
		## __VA_ARGS__)

#define CM_MAX_IDS 4096                 /* per daemon */
#define CM_MAX_CHANNELS 1024
#define CM_MAX_PORTS 8
#define GSI_RECVS 64                    /* QP1 receive WQEs per port */
#define GSI_RING 256                    /* MADs queued each way */
#define GRH_LEN 40
#define CM_PORT_EPHEMERAL 32768         /* ports given to bind(0) from here */
#define CM_RTR_MIN_RNR 12               /* 0.64 ms, as ibv_rc_pingpong */
#define CM_ACK_TIMEOUT 14               /* 67 ms: the QP's local ACK timeout */
#define CM_RESPONSE_TIMEOUT 20          /* told in REQs, as Linux */
#define CM_MAX_CM_RETRIES 15

/* ---------------------------------------------------- configuration */

struct cm_conf {
	uint32_t enabled;
	uint32_t response_timeout_ms;
	uint32_t max_retries;
};

static const char *const no_yes[] = { "no", "yes", NULL };

static const struct dpr_conf_key cm_keys[] = {
	{ "enabled", DPR_CONF_ENUM, offsetof(struct cm_conf, enabled),
	  sizeof(uint32_t), .names = no_yes,
	  .help = "yes: QP1 on every port, RDMA CM for local clients (the "
		  "drop-in librdmacm) and for peers" },
	{ "response_timeout_ms", DPR_CONF_UINT,
	  offsetof(struct cm_conf, response_timeout_ms), sizeof(uint32_t), 10,
	  60000, .help = "how long a REQ, REP or DREQ waits for its answer "
		  "before it is sent again" },
	{ "max_retries", DPR_CONF_UINT, offsetof(struct cm_conf, max_retries),
	  sizeof(uint32_t), 0, 15,
	  .help = "times a REQ, REP or DREQ is sent again before the "
		  "connection fails (UNREACHABLE)" },
};

static void
cm_defaults(void *area, int port __rte_unused)
{
	struct cm_conf *c = area;

	c->enabled = 1;
	c->response_timeout_ms = 1000;
	c->max_retries = 5;
}

static struct dpr_conf_room cm_room = {
	.section = "cm",
	.size = sizeof(struct cm_conf),
	.keys = cm_keys,
	.n_keys = RTE_DIM(cm_keys),
	.defaults = cm_defaults,
};

void
dpr_cm_config_register(void)
{
	dpr_config_register(&cm_room);
}

/* ---------------------------------------------------------- state */

#define CM_STATS(_) \
	_(mads_rx) \
	_(mads_tx) \
	_(mads_retried) \
	_(mads_tx_dropped) \
	_(mads_rx_dropped) \
	DPR_CM_MAD_ERRORS(_) \
	_(mad_unknown_id) \
	_(mad_wrong_state) \
	_(mad_duplicate) \
	_(mad_bad_pdata) \
	_(sidr_req_rx) \
	_(sidr_no_listener) \
	_(req_rx) \
	_(req_no_listener) \
	_(rej_rx) \
	_(rej_tx) \
	_(connections) \
	_(timeouts) \
	_(events) \
	_(events_lost)

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
	uint8_t *buf;                   /* GSI_RECVS x (GRH + MAD) */
	uint64_t node_guid;             /* network order */
};

enum cm_state {
	CS_IDLE, CS_BOUND, CS_LISTEN, CS_ADDR, CS_ROUTE,
	CS_REQ_SENT, CS_REP_RCVD, CS_REQ_RCVD, CS_REP_SENT, CS_ESTABLISHED,
	CS_DREQ_SENT, CS_DREQ_RCVD, CS_CLOSED, CS_TIMEWAIT,
};

static const char *const state_names[] = {
	"idle", "bound", "listen", "addr_resolved", "route_resolved",
	"req_sent", "rep_rcvd", "req_rcvd", "rep_sent", "established",
	"dreq_sent", "dreq_rcvd", "closed", "timewait",
};

struct cm_id {
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
	uint64_t linger_ms;             /* owner gone: freed then */
	/* the MAD waiting for its answer, sent again until then */
	uint8_t mad[DPR_MAD_LEN];
	bool waiting;
	uint64_t deadline_ms;
	uint32_t retries_left;
	/* the last answer sent, for duplicates (REP, RTU, DREP, MRA) */
	uint8_t answer[DPR_MAD_LEN];
	bool has_answer;
};

struct cm_chan {
	void *owner;
	int fd;
	bool dead;                      /* destroyed: closed once the client's
	                                   end is (reap_channels) */
};

static struct {
	bool started;
	struct cm_conf conf;
	const struct dpr_config *cfg;
	pthread_mutex_t lock;           /* the ID table: main lcore vs telemetry */
	uint16_t n_ports;
	struct gsi gsi[CM_MAX_PORTS];
	struct rte_ring *rx, *tx;       /* worker 0 -> main, main -> worker 0 */
	int wake_fd;
	struct cm_id *ids[CM_MAX_IDS];  /* handle = index + 1 */
	struct cm_chan *chans[CM_MAX_CHANNELS];
	uint32_t id_seq;
	uint16_t next_port;
	uint64_t last_reap;
	struct cm_stats st;
} cm = { .wake_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------ QP1 */

static void
gsi_post_recv(struct gsi *g, uint32_t slot)
{
	struct dpr_recv_wr wr = {
		.wr_id = slot,
		.num_sge = 1,
		.sge[0] = {
			.addr = (uint64_t)(uintptr_t)(g->buf + (size_t)slot *
						      (GRH_LEN + DPR_MAD_LEN)),
			.length = GRH_LEN + DPR_MAD_LEN,
			.lkey = g->mr->lkey,
		},
	};

	dpr_post_recv(g->qp, &wr, 1, NULL);
}

static void
gsi_free(struct gsi *g)
{
	if (g->qp != NULL)
		dpr_qp_destroy(g->qp);
	if (g->mr != NULL)
		dpr_mr_dereg(g->mr);
	if (g->scq != NULL)
		dpr_cq_destroy(g->scq);
	if (g->rcq != NULL)
		dpr_cq_destroy(g->rcq);
	if (g->pd != NULL)
		dpr_pd_dealloc(g->pd);
	rte_free(g->buf);
	memset(g, 0, sizeof(*g));
}

/* On worker 0: QP1 of port @p arg, in RTS, its receives posted. */
static int
gsi_create(void *arg)
{
	uint16_t pi = (uint16_t)(uintptr_t)arg;
	struct dpr_verbs_ctx *ctx = dpr_engine_verbs(pi);
	struct gsi *g = &cm.gsi[pi];
	struct dpr_qp_attr a = {
		.qp_state = DPR_QPS_INIT, .port_num = 1, .qkey = DPR_GSI_QKEY,
	};
	int rc = 0;

	dpr_engine_verbs_lock();
	g->buf = rte_zmalloc("dpr_cm_gsi", GSI_RECVS * (GRH_LEN + DPR_MAD_LEN), 64);
	g->pd = dpr_pd_alloc(ctx, 0);
	g->scq = dpr_cq_create(ctx, GSI_RING, 0);
	g->rcq = dpr_cq_create(ctx, GSI_RECVS, 0);
	if (g->buf != NULL && g->pd != NULL)
		g->mr = dpr_mr_reg(g->pd, g->buf, (uint64_t)(uintptr_t)g->buf,
				   GSI_RECVS * (GRH_LEN + DPR_MAD_LEN),
				   DPR_ACCESS_LOCAL_WRITE);
	if (g->mr != NULL && g->scq != NULL && g->rcq != NULL) {
		struct dpr_qp_init_attr ia = {
			.qp_type = DPR_QPT_UD, .gsi = true,
			.pd = g->pd, .send_cq = g->scq, .recv_cq = g->rcq,
			.max_send_wr = GSI_RING, .max_recv_wr = GSI_RECVS,
			.max_send_sge = 1, .max_recv_sge = 1,
			.max_inline_data = DPR_MAD_LEN,
		};

		g->qp = dpr_qp_create(dpr_engine_transport(0, pi), &ia);
		if (g->qp == NULL)
			rc = errno == ENOMEM ? -EBUSY : -errno;
	} else {
		rc = -ENOMEM;
	}
	dpr_engine_verbs_unlock();
	if (rc == 0 && g->qp == NULL)
		rc = -ENOMEM;
	if (rc == 0)
		rc = dpr_qp_modify(g->qp, &a, DPR_QP_STATE | DPR_QP_PKEY_INDEX |
				   DPR_QP_PORT | DPR_QP_QKEY);
	if (rc == 0) {
		a.qp_state = DPR_QPS_RTR;
		rc = dpr_qp_modify(g->qp, &a, DPR_QP_STATE);
	}
	if (rc == 0) {
		a.qp_state = DPR_QPS_RTS;
		a.sq_psn = 0;
		rc = dpr_qp_modify(g->qp, &a, DPR_QP_STATE | DPR_QP_SQ_PSN);
	}
	if (rc != 0) {
		dpr_engine_verbs_lock();
		gsi_free(g);
		dpr_engine_verbs_unlock();
		return rc;
	}
	for (uint32_t i = 0; i < GSI_RECVS; i++)
		gsi_post_recv(g, i);
	__atomic_store_n(&g->ready, true, __ATOMIC_RELEASE);
	return 0;
}

static int
gsi_destroy(void *arg)
{
	struct gsi *g = &cm.gsi[(uintptr_t)arg];

	__atomic_store_n(&g->ready, false, __ATOMIC_RELEASE);
	dpr_engine_verbs_lock();
	gsi_free(g);
	dpr_engine_verbs_unlock();
	return 0;
}

/* The source GID of a datagram, from the GRH rxe's way fills in. */
static void
grh_sgid(const uint8_t *grh, bool ipv6, uint8_t gid[16])
{
	if (ipv6) {
		memcpy(gid, grh + 8, 16);
		return;
	}
	memset(gid, 0, 10);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, grh + 20 + 12, 4);
}

bool
dpr_cm_worker_poll(void *arg __rte_unused, unsigned int worker,
		   uint64_t now_ns __rte_unused)
{
	bool woke = false, more = false;
	struct cm_mad t;
	int k;

	if (worker != 0 || !__atomic_load_n(&cm.started, __ATOMIC_ACQUIRE))
		return false;
	for (uint16_t pi = 0; pi < cm.n_ports; pi++) {
		struct gsi *g = &cm.gsi[pi];
		struct dpr_cqe e[16];
		int n, i;

		if (!__atomic_load_n(&g->ready, __ATOMIC_ACQUIRE))
			continue;
		n = dpr_cq_poll(g->rcq, e, RTE_DIM(e));
		for (i = 0; i < n; i++) {
			uint32_t slot = (uint32_t)e[i].wr_id;
			const uint8_t *p = g->buf + (size_t)slot * (GRH_LEN + DPR_MAD_LEN);
			struct cm_mad r;

			if (e[i].status == DPR_WC_SUCCESS &&
			    e[i].byte_len >= GRH_LEN + DPR_MAD_LEN) {
				memset(&r, 0, sizeof(r));
				r.port = pi;
				r.qpn = e[i].src_qp;
				grh_sgid(p, (e[i].wc_flags & DPR_WC_NET_IPV6) != 0, r.gid);
				memcpy(r.mad, p + GRH_LEN, DPR_MAD_LEN);
				if (rte_ring_sp_enqueue_elem(cm.rx, &r, sizeof(r)) == 0)
					woke = true;
				else
					__atomic_fetch_add(&cm.st.mads_rx_dropped, 1,
							   __ATOMIC_RELAXED);
			} else if (e[i].status == DPR_WC_SUCCESS) {
				/* shorter than a MAD: counted where MADs are read */
				__atomic_fetch_add(&cm.st.mad_short, 1, __ATOMIC_RELAXED);
			}
			gsi_post_recv(g, slot);
		}
		more |= n == (int)RTE_DIM(e);
		/* sends complete as they are queued: only their count matters */
		while (dpr_cq_poll(g->scq, e, RTE_DIM(e)) > 0)
			;
	}
	for (k = 0; k < 32 && rte_ring_sc_dequeue_elem(cm.tx, &t, sizeof(t)) == 0; k++) {
		struct gsi *g = &cm.gsi[t.port < cm.n_ports ? t.port : 0];
		struct dpr_send_wr wr = {
			.opcode = DPR_WR_SEND,
			.send_flags = DPR_SEND_INLINE | DPR_SEND_SIGNALED,
			.num_sge = DPR_MAD_LEN,
			.ud = {
				.hop_limit = 64,
				.sgid_index = t.sgid_index,
				.remote_qpn = t.qpn,
				.remote_qkey = t.qkey,
			},
		};

		memcpy(wr.ud.dgid, t.gid, 16);
		memcpy(wr.inline_data, t.mad, DPR_MAD_LEN);
		if (t.port >= cm.n_ports ||
		    !__atomic_load_n(&g->ready, __ATOMIC_ACQUIRE) ||
		    dpr_post_send(g->qp, &wr, 1, NULL) != 0)
			__atomic_fetch_add(&cm.st.mads_tx_dropped, 1, __ATOMIC_RELAXED);
	}
	more |= k == 32;
	if (woke) {
		uint64_t one = 1;

		if (write(cm.wake_fd, &one, sizeof(one)) < 0) {
			/* the counter is saturated: the main lcore is woken anyway */
		}
	}
	return more;
}

/* Queue @p mad to QP1 of @p gid on port @p pi. */
static void
mad_send(int pi, uint8_t sgid_index, const uint8_t gid[16], const uint8_t *mad)
{
	struct cm_mad out = {
		.port = (uint16_t)pi,
		.sgid_index = sgid_index,
		.qpn = DPR_QPN_GSI,
		.qkey = DPR_GSI_QKEY,
	};

	memcpy(out.gid, gid, 16);
	memcpy(out.mad, mad, DPR_MAD_LEN);
	/* single producer: the main lcore (the worker only puts back its
	 * own, which it took the moment before) */
	if (rte_ring_mp_enqueue_elem(cm.tx, &out, sizeof(out)) != 0) {
		cm.st.mads_tx_dropped++;
		return;
	}
	cm.st.mads_tx++;
}

/* The path MTU (ibv_mtu: 1 = 256 .. 5 = 4096) of port @p pi. */
static uint8_t
port_mtu(int pi)
{
	struct dpr_port_info p;
	unsigned int b, e = 1;

	if (pi < 0 || dpr_engine_port_info((uint16_t)pi, &p) != 0)
		return 3;
	b = dpr_active_mtu(p.mtu);
	while (e < 5 && (256u << e) <= b)
		e++;
	return b == 0 ? 1 : (uint8_t)e;
}

/* ------------------------------------------------------ addresses */

static bool
is_v4mapped(const uint8_t *a)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(a, pfx, 12) == 0;
}

static bool
addr_any(const struct dpr_shm_cm_addr *a)
{
	static const uint8_t zero[16];

	return memcmp(a->addr, zero, 16) == 0 ||
	       (is_v4mapped(a->addr) && memcmp(a->addr + 12, zero, 4) == 0);
}

/* The GID table of port @p pi (the shim's, rxe's): 0 link-local, 1 the
 * IPv4-mapped address, 2 the configured IPv6 address. */
static int
port_gids(uint16_t pi, uint8_t gid[3][16])
{
	struct dpr_port_info p;
	static const uint8_t zero[16];
	int n = 2;

	if (dpr_engine_port_info(pi, &p) != 0)
		return 0;
	memcpy(gid[0], p.ip6_ll, 16);
	memset(gid[1], 0, 16);
	gid[1][10] = gid[1][11] = 0xff;
	memcpy(gid[1] + 12, &p.ip, 4);
	if (memcmp(p.ip6, zero, 16) != 0)
		memcpy(gid[n++], p.ip6, 16);
	return n;
}

/* The GID index of port @p pi holding @p a, or -1. */
static int
own_gid_index(uint16_t pi, const uint8_t *a)
{
	uint8_t gid[3][16];
	int n = port_gids(pi, gid);

	for (int i = 0; i < n; i++)
		if (memcmp(gid[i], a, 16) == 0 && !(i == 1 && memcmp(a + 12, "\0\0\0", 4) == 0))
			return i;
	return -1;
}

/* The port whose subnet holds @p a (its own address first), and the GID
 * index to send from; -1 when none does. */
static int
route(const uint8_t *a, uint8_t *sgid_index)
{
	const struct dpr_config *conf = cm.cfg;
	static const uint8_t ll[2] = { 0xfe, 0x80 };

	for (uint16_t pi = 0; pi < cm.n_ports; pi++) {
		int gi = own_gid_index(pi, a);

		if (gi >= 0) {
			*sgid_index = (uint8_t)gi;
			return pi;
		}
	}
	for (uint16_t pi = 0; pi < cm.n_ports; pi++) {
		const struct dpr_port_conf *pc = dpr_port_conf(conf, pi);
		struct dpr_port_info p;

		if (dpr_engine_port_info(pi, &p) != 0)
			continue;
		if (is_v4mapped(a)) {
			uint32_t mask = pc->prefix_len == 0 ? 0 :
				htonl(~0u << (32 - pc->prefix_len));
			uint32_t v;

			memcpy(&v, a + 12, 4);
			if (p.ip != 0 && ((v ^ p.ip) & mask) == 0) {
				*sgid_index = 1;
				return pi;
			}
			continue;
		}
		if (memcmp(a, ll, 2) == 0) {
			*sgid_index = 0;
			return pi;
		}
		if (pc->ip6_prefix_len != 0) {
			unsigned int bits = pc->ip6_prefix_len, k;
			bool same = true;

			for (k = 0; k < bits / 8; k++)
				same &= a[k] == p.ip6[k];
			if (bits % 8)
				same &= ((a[k] ^ p.ip6[k]) & (0xff << (8 - bits % 8))) == 0;
			if (same) {
				*sgid_index = 2;
				return pi;
			}
		}
	}
	return -1;
}

/* --------------------------------------------------------- the IDs */

static struct cm_id *
id_get(void *owner, uint32_t handle)
{
	if (handle == 0 || handle > CM_MAX_IDS || cm.ids[handle - 1] == NULL ||
	    cm.ids[handle - 1]->owner != owner)
		return NULL;
	return cm.ids[handle - 1];
}

static uint32_t
id_handle(const struct cm_id *id)
{
	return (id->local_id & (CM_MAX_IDS - 1)) + 1;
}

/* A new ID: its local comm ID carries its index in the low bits. */
static struct cm_id *
id_new(void *owner, uint32_t chan)
{
	for (uint32_t i = 0; i < CM_MAX_IDS; i++) {
		struct cm_id *id;

		if (cm.ids[i] != NULL)
			continue;
		id = calloc(1, sizeof(*id));
		if (id == NULL)
			return NULL;
		id->owner = owner;
		id->chan = chan;
		id->pi = -1;
		cm.id_seq = cm.id_seq * 1103515245u + 12345u + (uint32_t)rte_rand();
		id->local_id = (cm.id_seq & ~(uint32_t)(CM_MAX_IDS - 1)) | i;
		if (id->local_id == 0)
			id->local_id = CM_MAX_IDS | i;
		pthread_mutex_lock(&cm.lock);
		cm.ids[i] = id;
		pthread_mutex_unlock(&cm.lock);
		return id;
	}
	return NULL;
}

static struct cm_id *
id_by_local(uint32_t local_id)
{
	struct cm_id *id = cm.ids[local_id & (CM_MAX_IDS - 1)];

	return id != NULL && id->local_id == local_id ? id : NULL;
}

static void
id_free(struct cm_id *id)
{
	pthread_mutex_lock(&cm.lock);
	cm.ids[id_handle(id) - 1] = NULL;
	pthread_mutex_unlock(&cm.lock);
	free(id);
}

static void
emit(struct cm_id *id, uint32_t event, int32_t status,
     const struct dpr_shm_cm_conn *conn, uint32_t listen_id)
{
	struct dpr_shm_cm_event ev = {
		.magic = DPR_SHM_MAGIC,
		.event = event,
		.status = status,
		.id = id_handle(id),
		.listen_id = listen_id,
		.port = id->pi < 0 ? UINT32_MAX : (uint32_t)id->pi,
		.sgid_index = id->sgid_index,
		.src = id->src,
		.dst = id->dst,
	};
	struct cm_chan *ch = id->chan && id->chan <= CM_MAX_CHANNELS ?
		cm.chans[id->chan - 1] : NULL;

	if (id->owner == NULL)
		return;         /* in time-wait: nobody to tell */

	memcpy(ev.sgid.raw, id->sgid, 16);
	memcpy(ev.dgid.raw, id->dgid, 16);
	if (conn != NULL)
		ev.conn = *conn;
	if (ch == NULL || ch->dead)
		return;         /* the program destroyed its channel: nobody to tell */
	if (send(ch->fd, &ev, sizeof(ev), MSG_DONTWAIT | MSG_NOSIGNAL) !=
	    (ssize_t)sizeof(ev)) {
		if (errno != EAGAIN)
			return; /* the program is gone (its end closed) */
		static struct dpr_ratelimit rl;
		uint32_t missed;

		cm.st.events_lost++;
		if (dpr_ratelimit(&rl, &missed))
			CM_LOG(WARNING, "an RDMA CM event (%u) for ID %u was lost: "
			       "its channel is full (the program does not read "
			       "it)%s", event, id_handle(id), missed ?
			       "; more lost, lines suppressed (cm/stats "
			       "events_lost counts them)" : "");
		return;
	}
	cm.st.events++;
}

/* Send @p m and wait for its answer (timer). */
static void
send_waiting(struct cm_id *id, const struct dpr_cm_msg *m)
{
	dpr_cm_encode(m, id->mad);
	id->waiting = true;
	id->retries_left = cm.conf.max_retries;
	id->deadline_ms = now_ms() + cm.conf.response_timeout_ms;
	mad_send(id->pi, id->sgid_index, id->dgid, id->mad);
}

/* Send @p m, an answer kept for duplicates. */
static void
send_answer(struct cm_id *id, const struct dpr_cm_msg *m)
{
	dpr_cm_encode(m, id->answer);
	id->has_answer = true;
	mad_send(id->pi, id->sgid_index, id->dgid, id->answer);
}

static void
msg_ids(const struct cm_id *id, struct dpr_cm_msg *m, uint16_t attr)
{
	memset(m, 0, sizeof(*m));
	m->attr = attr;
	m->tid = id->tid;
	m->local_id = id->local_id;
	m->remote_id = id->remote_id;
}

static void
send_rej(struct cm_id *id, uint8_t msg_ref, uint16_t reason,
	 const uint8_t *pdata, uint32_t len)
{
	struct dpr_cm_msg m;

	msg_ids(id, &m, DPR_CM_REJ);
	m.msg_ref = msg_ref;
	m.reason = reason;
	m.pdata_len = (uint16_t)RTE_MIN(len, (uint32_t)DPR_CM_REJ_PDATA);
	if (pdata != NULL)
		memcpy(m.pdata, pdata, m.pdata_len);
	send_answer(id, &m);
	cm.st.rej_tx++;
}

static void
send_dreq(struct cm_id *id)
{
	struct dpr_cm_msg m;

	msg_ids(id, &m, DPR_CM_DREQ);
	m.qpn = id->remote_qpn;
	send_waiting(id, &m);
	id->st = CS_DREQ_SENT;
}

#define IBV_QPT_UD_ 4                   /* ibv_qp_type */

static bool
id_is_ud(const struct cm_id *id)
{
	return id->ps == DPR_RDMA_PS_UDP;
}

/* The SIDR_REP of a UD service request (IBA 12.11.2). */
static void
send_sidr_rep(struct cm_id *id, uint8_t status, uint32_t qpn, uint32_t qkey,
	      const uint8_t *pdata, uint32_t len)
{
	struct dpr_cm_msg m;

	memset(&m, 0, sizeof(m));
	m.attr = DPR_CM_SIDR_REP;
	m.tid = id->tid;
	m.local_id = id->remote_id;     /* the request ID, echoed */
	m.status = status;
	m.qpn = qpn;
	m.qkey = qkey;
	m.service_id = dpr_cm_service_id(id->ps, ntohs(id->src.port));
	m.pdata_len = (uint16_t)RTE_MIN(len, (uint32_t)DPR_CM_SIDR_REP_PDATA);
	if (pdata != NULL)
		memcpy(m.pdata, pdata, m.pdata_len);
	send_answer(id, &m);
}

/* An ID ends for its owner's sake: the peer is told what it must know.
 * One that had a connection lingers in time-wait (IBA 12.9.7) without an
 * owner for a while, so that the peer's late MADs (its DREP, a DREQ sent
 * again) are answered and not taken for strangers. */
static void
id_end(struct cm_id *id)
{
	bool connected = id->remote_id != 0 &&
		(id->st == CS_REP_SENT || id->st == CS_ESTABLISHED ||
		 id->st == CS_DREQ_SENT || id->st == CS_DREQ_RCVD ||
		 id->st == CS_CLOSED || id->st == CS_REP_RCVD);

	if (id_is_ud(id)) {
		/* a service request nobody answered is refused */
		if (id->st == CS_REQ_RCVD)
			send_sidr_rep(id, 2 /* rejected */, 0, 0, NULL, 0);
		id_free(id);
		return;
	}
	switch (id->st) {
	case CS_REQ_RCVD:
		send_rej(id, DPR_CM_REF_REQ, DPR_CM_REJ_CONSUMER_DEFINED, NULL, 0);
		break;
	case CS_REQ_SENT:
		send_rej(id, DPR_CM_REF_OTHER, DPR_CM_REJ_TIMEOUT, NULL, 0);
		break;
	case CS_REP_RCVD:
		send_rej(id, DPR_CM_REF_REP, DPR_CM_REJ_CONSUMER_DEFINED, NULL, 0);
		break;
	case CS_REP_SENT:
	case CS_ESTABLISHED:
		send_dreq(id);  /* sent again from time-wait until answered */
		break;
	default:
		break;
	}
	if (!connected) {
		id_free(id);
		return;
	}
	if (id->st != CS_DREQ_SENT)
		id->waiting = false;
	id->owner = NULL;
	id->chan = 0;
	id->st = id->st == CS_DREQ_SENT ? CS_DREQ_SENT : CS_TIMEWAIT;
	id->linger_ms = now_ms() + 2ull * cm.conf.response_timeout_ms *
		(cm.conf.max_retries + 1);
}

/* ------------------------------------------------- MADs from peers */

static struct cm_id *
find_listener(int pi, uint16_t ps, uint16_t port, const uint8_t *dst_ip)
{
	struct cm_id *wild = NULL;

	for (uint32_t i = 0; i < CM_MAX_IDS; i++) {
		struct cm_id *id = cm.ids[i];

		if (id == NULL || id->st != CS_LISTEN || id->ps != ps ||
		    ntohs(id->src.port) != port || (id->pi >= 0 && id->pi != pi))
			continue;
		if (!addr_any(&id->src)) {
			if (memcmp(id->src.addr, dst_ip, 16) == 0)
				return id;
			continue;
		}
		/* the wildcard of one family takes that family's requests
		 * (AF_INET6's takes both, as Linux without IPV6_V6ONLY) */
		if (id->src.family == AF_INET6 || is_v4mapped(dst_ip))
			wild = id;
	}
	return wild;
}

/* The ID a request (REQ or SIDR_REQ) makes for listener @p lid: our end
 * the request's destination, the peer its source (rdma_cm's IP header
 * @p h), at GID @p dgid. NULL when the table is full. */
static struct cm_id *
passive_id(const struct cm_id *lid, int pi, int gi, uint16_t ps, uint16_t port,
	   const struct dpr_cma_hdr *h, const uint8_t *dgid,
	   const struct dpr_cm_msg *m)
{
	struct cm_id *id = id_new(lid->owner, lid->chan);

	if (id == NULL) {
		cm.st.mads_rx_dropped++;
		return NULL;
	}
	id->st = CS_REQ_RCVD;
	id->ps = ps;
	id->pi = pi;
	id->sgid_index = (uint8_t)gi;
	memcpy(id->sgid, h->dst, 16);
	memcpy(id->dgid, dgid, 16);
	id->remote_id = m->local_id;
	id->tid = m->tid;
	id->src = (struct dpr_shm_cm_addr){
		.family = h->ip_version == 4 ? AF_INET : AF_INET6,
		.port = htons(port),
	};
	memcpy(id->src.addr, h->dst, 16);
	id->dst = (struct dpr_shm_cm_addr){
		.family = id->src.family, .port = htons(h->src_port),
	};
	memcpy(id->dst.addr, h->src, 16);
	return id;
}

static void
rx_req(int pi, const struct cm_mad *r, const struct dpr_cm_msg *m)
{
	struct dpr_shm_cm_conn c;
	struct dpr_cma_hdr h;
	struct cm_id *lid, *id;
	uint16_t ps = (uint16_t)(m->service_id >> 16);
	uint16_t port = (uint16_t)m->service_id;
	int gi;

	cm.st.req_rx++;
	/* a duplicate: the peer has not heard our answer */
	for (uint32_t i = 0; i < CM_MAX_IDS; i++) {
		id = cm.ids[i];
		if (id == NULL || id->remote_id != m->local_id ||
		    id->remote_guid != m->ca_guid || id->st < CS_REQ_RCVD)
			continue;
		cm.st.mad_duplicate++;
		if (id->st == CS_REQ_RCVD) {
			struct dpr_cm_msg mra;

			msg_ids(id, &mra, DPR_CM_MRA);
			mra.msg_ref = DPR_CM_REF_REQ;
			mra.service_timeout = CM_RESPONSE_TIMEOUT;
			send_answer(id, &mra);
		} else if (id->waiting) {
			mad_send(id->pi, id->sgid_index, id->dgid, id->mad);
		}
		return;
	}
	if ((m->service_id >> 32) != 0 ||
	    (ps != DPR_RDMA_PS_TCP && ps != DPR_RDMA_PS_UDP && ps != DPR_RDMA_PS_IB) ||
	    !dpr_cma_hdr_get(m->pdata, &h) || (m->tst != DPR_CM_TST_RC &&
					       m->tst != DPR_CM_TST_UC)) {
		cm.st.mad_bad_pdata++;
		lid = NULL;
	} else {
		lid = find_listener(pi, ps, port, h.dst);
	}
	gi = own_gid_index((uint16_t)pi, m->dgid);
	if (lid == NULL || gi < 0) {
		/* nobody listens there (IBA 12.6.7: invalid service ID) */
		struct cm_id tmp = {
			.pi = pi, .remote_id = m->local_id, .tid = m->tid,
			.sgid_index = (uint8_t)(gi < 0 ? (is_v4mapped(r->gid) ? 1 : 0) : gi),
		};
		struct dpr_cm_msg rej;

		if (lid != NULL)
			cm.st.mad_bad_pdata++;
		else
			cm.st.req_no_listener++;
		memcpy(tmp.dgid, r->gid, 16);
		msg_ids(&tmp, &rej, DPR_CM_REJ);
		rej.msg_ref = DPR_CM_REF_REQ;
		rej.reason = gi < 0 ? DPR_CM_REJ_INVALID_GID : DPR_CM_REJ_INVALID_SERVICE_ID;
		dpr_cm_encode(&rej, tmp.answer);
		mad_send(pi, tmp.sgid_index, tmp.dgid, tmp.answer);
		cm.st.rej_tx++;
		return;
	}
	id = passive_id(lid, pi, gi, ps, port, &h, m->sgid, m);
	if (id == NULL)
		return;
	id->qp_type = m->tst == DPR_CM_TST_UC ? 3 /* IBV_QPT_UC */ : 2 /* IBV_QPT_RC */;
	memcpy(id->sgid, m->dgid, 16);
	id->remote_guid = m->ca_guid;
	id->remote_qpn = m->qpn;
	memset(&c, 0, sizeof(c));
	c.qpn = m->qpn;
	c.psn = m->psn;
	c.qp_type = id->qp_type;
	c.resp_res = m->resp_res;
	c.init_depth = m->init_depth;
	c.flow_ctrl = m->flow_ctrl;
	c.retry_cnt = m->retry_cnt;
	c.rnr_retry = m->rnr_retry;
	c.srq = m->srq;
	c.mtu = (uint8_t)RTE_MIN(m->mtu, port_mtu(pi));
	if (c.mtu == 0)
		c.mtu = 1;
	c.ack_timeout = m->ack_timeout;
	/* the consumer's part: after the IP header */
	c.pdata_len = DPR_CM_REQ_PDATA - DPR_CMA_HDR_LEN;
	memcpy(c.pdata, m->pdata + DPR_CMA_HDR_LEN, c.pdata_len);
	emit(id, DPR_SHM_CM_EV_CONNECT_REQUEST, 0, &c, id_handle(lid));
}

/* A UD service request (SIDR_REQ): a new ID of the listener of its
 * service and address, or a SIDR_REP saying there is none. */
static void
rx_sidr_req(int pi, const struct cm_mad *r, const struct dpr_cm_msg *m)
{
	struct dpr_shm_cm_conn c;
	struct dpr_cma_hdr h;
	struct cm_id *lid = NULL, *id;
	uint16_t port = (uint16_t)m->service_id;
	int gi = -1;

	cm.st.sidr_req_rx++;
	for (uint32_t i = 0; i < CM_MAX_IDS; i++) {
		id = cm.ids[i];
		if (id == NULL || !id_is_ud(id) || id->st < CS_REQ_RCVD ||
		    id->remote_id != m->local_id || memcmp(id->dgid, r->gid, 16) != 0)
			continue;
		cm.st.mad_duplicate++;
		if (id->has_answer)
			mad_send(id->pi, id->sgid_index, id->dgid, id->answer);
		return;
	}
	if ((m->service_id >> 16) == DPR_RDMA_PS_UDP && (m->service_id >> 32) == 0 &&
	    dpr_cma_hdr_get(m->pdata, &h)) {
		lid = find_listener(pi, DPR_RDMA_PS_UDP, port, h.dst);
		gi = own_gid_index((uint16_t)pi, h.dst);
	} else {
		cm.st.mad_bad_pdata++;
	}
	if (lid == NULL || gi < 0) {
		struct cm_id tmp = {
			.pi = pi, .remote_id = m->local_id, .tid = m->tid,
			.ps = DPR_RDMA_PS_UDP, .src = { .port = htons(port) },
			.sgid_index = (uint8_t)(is_v4mapped(r->gid) ? 1 : 0),
		};

		cm.st.sidr_no_listener++;
		memcpy(tmp.dgid, r->gid, 16);
		send_sidr_rep(&tmp, 1 /* service ID not supported */, 0, 0, NULL, 0);
		return;
	}
	id = passive_id(lid, pi, gi, DPR_RDMA_PS_UDP, port, &h, r->gid, m);
	if (id == NULL)
		return;
	id->qp_type = IBV_QPT_UD_;
	memset(&c, 0, sizeof(c));
	c.qp_type = IBV_QPT_UD_;
	c.pdata_len = DPR_CM_SIDR_REQ_PDATA - DPR_CMA_HDR_LEN;
	memcpy(c.pdata, m->pdata + DPR_CMA_HDR_LEN, c.pdata_len);
	emit(id, DPR_SHM_CM_EV_CONNECT_REQUEST, 0, &c, id_handle(lid));
}

static void
rx_sidr_rep(const struct dpr_cm_msg *m)
{
	struct cm_id *id = id_by_local(m->local_id);
	struct dpr_shm_cm_conn c;

	if (id == NULL || !id_is_ud(id)) {
		cm.st.mad_unknown_id++;
		return;
	}
	if (id->st != CS_REQ_SENT) {
		cm.st.mad_duplicate++;
		return;
	}
	id->waiting = false;
	memset(&c, 0, sizeof(c));
	c.qp_type = IBV_QPT_UD_;
	c.qpn = m->qpn;
	c.qkey = m->qkey;
	c.pdata_len = DPR_CM_SIDR_REP_PDATA;
	memcpy(c.pdata, m->pdata, DPR_CM_SIDR_REP_PDATA);
	if (m->status != 0) {
		id->st = CS_CLOSED;
		emit(id, DPR_SHM_CM_EV_UNREACHABLE, m->status, &c, 0);
		return;
	}
	id->st = CS_ESTABLISHED;
	id->remote_qpn = m->qpn;
	cm.st.connections++;
	emit(id, DPR_SHM_CM_EV_ESTABLISHED, 0, &c, 0);
}

static void
rx_mad(const struct cm_mad *r)
{
	struct dpr_cm_msg m;
	enum dpr_cm_mad_err e;
	struct cm_id *id;
	struct dpr_shm_cm_conn c;

	if (dpr_cm_caps_rx(r))
		return;
	cm.st.mads_rx++;
	e = dpr_cm_decode(r->mad, sizeof(r->mad), &m);
	switch (e) {
	case DPR_CM_MAD_OK:
		break;
#define _(n) case DPR_CM_ERR_ ## n: cm.st.n++; return;
	DPR_CM_MAD_ERRORS(_)
#undef _
	}
	if (m.attr == DPR_CM_REQ) {
		rx_req(r->port, r, &m);
		return;
	}
	if (m.attr == DPR_CM_SIDR_REQ) {
		rx_sidr_req(r->port, r, &m);
		return;
	}
	if (m.attr == DPR_CM_SIDR_REP) {
		rx_sidr_rep(&m);
		return;
	}
	id = id_by_local(m.remote_id);
	if (id == NULL || id->pi != r->port ||
	    (id->st > CS_REQ_SENT && id->remote_id != m.local_id)) {
		cm.st.mad_unknown_id++;
		return;
	}
	memset(&c, 0, sizeof(c));
	switch (m.attr) {
	case DPR_CM_REP:
		if (id->st == CS_REP_RCVD || id->st == CS_ESTABLISHED) {
			cm.st.mad_duplicate++;
			if (id->has_answer)     /* our RTU was lost */
				mad_send(id->pi, id->sgid_index, id->dgid, id->answer);
			return;
		}
		if (id->st != CS_REQ_SENT)
			break;
		id->waiting = false;
		id->st = CS_REP_RCVD;
		id->remote_id = m.local_id;
		id->remote_qpn = m.qpn;
		id->remote_guid = m.ca_guid;
		c.qpn = m.qpn;
		c.psn = m.psn;
		c.qp_type = id->qp_type;
		c.resp_res = m.resp_res;
		c.init_depth = m.init_depth;
		c.flow_ctrl = m.flow_ctrl;
		c.rnr_retry = m.rnr_retry;
		c.srq = m.srq;
		c.pdata_len = DPR_CM_REP_PDATA;
		memcpy(c.pdata, m.pdata, DPR_CM_REP_PDATA);
		emit(id, DPR_SHM_CM_EV_CONNECT_RESPONSE, 0, &c, 0);
		return;
	case DPR_CM_RTU:
		if (id->st != CS_REP_SENT)
			break;
		id->waiting = false;
		id->st = CS_ESTABLISHED;
		cm.st.connections++;
		emit(id, DPR_SHM_CM_EV_ESTABLISHED, 0, NULL, 0);
		return;
	case DPR_CM_REJ:
		if (id->st != CS_REQ_SENT && id->st != CS_REP_SENT &&
		    id->st != CS_REP_RCVD)
			break;
		cm.st.rej_rx++;
		id->waiting = false;
		id->st = CS_CLOSED;
		c.pdata_len = DPR_CM_REJ_PDATA;
		memcpy(c.pdata, m.pdata, DPR_CM_REJ_PDATA);
		emit(id, m.reason == DPR_CM_REJ_TIMEOUT ? DPR_SHM_CM_EV_UNREACHABLE :
		     DPR_SHM_CM_EV_REJECTED, m.reason, &c, 0);
		return;
	case DPR_CM_MRA:
		if (!id->waiting || (id->st != CS_REQ_SENT && id->st != CS_REP_SENT))
			break;
		/* the peer needs longer: 4.096 us x 2^timeout, at most 60 s */
	{
		uint64_t extra = (4096ull << (m.service_timeout & 31)) / 1000000ull;

		id->deadline_ms = now_ms() + RTE_MIN(extra + cm.conf.response_timeout_ms,
						      60000ull);
	}
		return;
	case DPR_CM_DREQ: {
		struct dpr_cm_msg rep;

		if (id->st == CS_CLOSED || id->st == CS_DREQ_RCVD ||
		    id->st == CS_TIMEWAIT) {
			cm.st.mad_duplicate++;
			msg_ids(id, &rep, DPR_CM_DREP);
			rep.tid = m.tid;
			send_answer(id, &rep);
			return;
		}
		if (id->st != CS_ESTABLISHED && id->st != CS_REP_SENT &&
		    id->st != CS_DREQ_SENT)
			break;
		msg_ids(id, &rep, DPR_CM_DREP);
		rep.tid = m.tid;
		send_answer(id, &rep);
		id->waiting = false;
		id->st = CS_DREQ_RCVD;
		emit(id, DPR_SHM_CM_EV_DISCONNECTED, 0, NULL, 0);
		return;
	}
	case DPR_CM_DREP:
		if (id->st == CS_DREQ_RCVD) {
			/* both sides sent a DREQ: this answers ours */
			id->waiting = false;
			return;
		}
		if (id->st == CS_TIMEWAIT || id->st == CS_CLOSED) {
			cm.st.mad_duplicate++;
			return;
		}
		if (id->st != CS_DREQ_SENT)
			break;
		id->waiting = false;
		id->st = id->owner == NULL ? CS_TIMEWAIT : CS_CLOSED;
		emit(id, DPR_SHM_CM_EV_DISCONNECTED, 0, NULL, 0);
		return;
	default:
		break;
	}
	cm.st.mad_wrong_state++;
	CM_LOG(DEBUG, "%s for ID %u in state %s: dropped", dpr_cm_attr_name(m.attr),
	       id_handle(id), state_names[id->st]);
}

/* Destroyed channels whose client end is closed. */
static void
reap_channels(void)
{
	for (uint32_t i = 0; i < CM_MAX_CHANNELS; i++) {
		struct pollfd pf;

		if (cm.chans[i] == NULL || !cm.chans[i]->dead)
			continue;
		pf.fd = cm.chans[i]->fd;
		pf.events = POLLIN;
		if (poll(&pf, 1, 0) == 1 && (pf.revents & (POLLHUP | POLLERR))) {
			close(cm.chans[i]->fd);
			free(cm.chans[i]);
			cm.chans[i] = NULL;
		}
	}
}

static void
run_timers(void)
{
	uint64_t now = now_ms();

	for (uint32_t i = 0; i < CM_MAX_IDS; i++) {
		struct cm_id *id = cm.ids[i];

		if (id != NULL && id->owner == NULL && now >= id->linger_ms) {
			id_free(id);
			continue;
		}
		if (id == NULL || !id->waiting || now < id->deadline_ms)
			continue;
		if (id->retries_left > 0) {
			id->retries_left--;
			id->deadline_ms = now + cm.conf.response_timeout_ms;
			cm.st.mads_retried++;
			mad_send(id->pi, id->sgid_index, id->dgid, id->mad);
			continue;
		}
		id->waiting = false;
		cm.st.timeouts++;
		if (id->st == CS_DREQ_SENT) {
			id->st = id->owner == NULL ? CS_TIMEWAIT : CS_CLOSED;
			emit(id, DPR_SHM_CM_EV_DISCONNECTED, 0, NULL, 0);
			continue;
		}
		if (id->st == CS_REQ_SENT && !id_is_ud(id))
			send_rej(id, DPR_CM_REF_OTHER, DPR_CM_REJ_TIMEOUT, NULL, 0);
		id->st = CS_CLOSED;
		emit(id, DPR_SHM_CM_EV_UNREACHABLE, -ETIMEDOUT, NULL, 0);
	}
}

void
dpr_cm_poll(void)
{
	struct cm_mad r;
	uint64_t v;

	if (!cm.started)
		return;
	if (read(cm.wake_fd, &v, sizeof(v)) < 0) {
		/* nothing new (EAGAIN): the timers may still be due */
	}
	for (int k = 0; k < 256 && rte_ring_sc_dequeue_elem(cm.rx, &r, sizeof(r)) == 0; k++)
		rx_mad(&r);
	run_timers();
	dpr_cm_caps_poll(now_ms());
	if (now_ms() - cm.last_reap > 1000) {
		cm.last_reap = now_ms();
		reap_channels();
	}
}

int
dpr_cm_wake_fd(void)
{
	return cm.started ? cm.wake_fd : -1;
}

int
dpr_cm_next_timeout_ms(void)
{
	uint64_t now = now_ms(), next = UINT64_MAX;

	for (uint32_t i = 0; cm.started && i < CM_MAX_IDS; i++)
		if (cm.ids[i] != NULL && cm.ids[i]->waiting)
			next = RTE_MIN(next, cm.ids[i]->deadline_ms);
		else if (cm.ids[i] != NULL && cm.ids[i]->owner == NULL)
			next = RTE_MIN(next, cm.ids[i]->linger_ms);
	if (cm.started)
		next = RTE_MIN(next, dpr_cm_caps_next_ms());
	if (next == UINT64_MAX)
		return -1;
	return next <= now ? 0 : (int)RTE_MIN(next - now, 60000ull);
}

/* ------------------------------------------------ client requests */

static bool
port_in_use(uint16_t ps, uint16_t port, const struct dpr_shm_cm_addr *a)
{
	for (uint32_t i = 0; i < CM_MAX_IDS; i++) {
		const struct cm_id *id = cm.ids[i];

		if (id == NULL || id->ps != ps || id->src.port != port ||
		    (id->st != CS_BOUND && id->st != CS_LISTEN))
			continue;
		if (addr_any(a) || addr_any(&id->src) ||
		    memcmp(id->src.addr, a->addr, 16) == 0)
			return true;
	}
	return false;
}

/* Give @p id the address @p a (port 0: an ephemeral one). */
static int
bind_addr(struct cm_id *id, const struct dpr_shm_cm_addr *a, bool listening)
{
	struct dpr_shm_cm_addr b = *a;
	uint8_t gi = 0;
	int pi = -1;

	if (b.family != AF_INET && b.family != AF_INET6)
		return -EAFNOSUPPORT;
	if (!addr_any(&b)) {
		pi = route(b.addr, &gi);
		if (pi < 0 || own_gid_index((uint16_t)pi, b.addr) < 0)
			return -EADDRNOTAVAIL;
	}
	if (b.port == 0) {
		for (unsigned int tries = 0; tries < 32768; tries++) {
			uint16_t pn = (uint16_t)(CM_PORT_EPHEMERAL + (cm.next_port++ % 28000));

			if (!port_in_use(id->ps, htons(pn), &b)) {
				b.port = htons(pn);
				break;
			}
		}
		if (b.port == 0)
			return -EADDRINUSE;
	} else if (listening && port_in_use(id->ps, b.port, &b)) {
		return -EADDRINUSE;
	}
	id->src = b;
	id->pi = pi;
	id->sgid_index = gi;
	if (pi >= 0)
		memcpy(id->sgid, b.addr, 16);
	return 0;
}

static void
answer_id(const struct cm_id *id, struct dpr_shm_msg *m)
{
	uint32_t h = id_handle(id);

	memset(&m->cm_resp, 0, sizeof(m->cm_resp));
	m->cm_resp.id = h;
	m->cm_resp.port = id->pi < 0 ? UINT32_MAX : (uint32_t)id->pi;
	m->cm_resp.sgid_index = id->sgid_index;
	if (id->pi >= 0)
		m->cm_resp.mtu = port_mtu(id->pi);
	m->cm_resp.src = id->src;
	m->cm_resp.dst = id->dst;
	memcpy(m->cm_resp.sgid.raw, id->sgid, 16);
	memcpy(m->cm_resp.dgid.raw, id->dgid, 16);
}

/* A request's private data: rdma_cm's IP header, then the program's. */
static void
put_pdata(const struct cm_id *id, struct dpr_cm_msg *m,
	  const struct dpr_shm_cm_conn *c, uint16_t size)
{
	struct dpr_cma_hdr h = {
		.ip_version = id->dst.family == AF_INET ? 4 : 6,
		.src_port = ntohs(id->src.port),
	};

	memcpy(h.src, id->src.addr, 16);
	memcpy(h.dst, id->dst.addr, 16);
	dpr_cma_hdr_put(m->pdata, &h);
	memcpy(m->pdata + DPR_CMA_HDR_LEN, c->pdata, c->pdata_len);
	m->pdata_len = size;
}

static int
req_connect(struct cm_id *id, const struct dpr_shm_cm_conn *c)
{
	struct dpr_port_info p;
	struct dpr_cm_msg m;

	if (id->st != CS_ROUTE)
		return -EINVAL;
	if (id_is_ud(id)) {
		if (c->pdata_len > DPR_CM_SIDR_REQ_PDATA - DPR_CMA_HDR_LEN)
			return -EINVAL;
		memset(&m, 0, sizeof(m));
		m.attr = DPR_CM_SIDR_REQ;
		id->tid = (uint64_t)1 << 32 | id->local_id;
		m.tid = id->tid;
		m.local_id = id->local_id;
		m.pkey = 0xffff;
		m.service_id = dpr_cm_service_id(id->ps, ntohs(id->dst.port));
		put_pdata(id, &m, c, DPR_CM_SIDR_REQ_PDATA);
		id->local_qpn = c->qpn;
		id->st = CS_REQ_SENT;
		send_waiting(id, &m);
		return 0;
	}
	if (c->pdata_len > DPR_CM_REQ_PDATA - DPR_CMA_HDR_LEN)
		return -EINVAL;
	if (dpr_engine_port_info((uint16_t)id->pi, &p) != 0)
		return -ENODEV;
	memset(&m, 0, sizeof(m));
	m.attr = DPR_CM_REQ;
	id->tid = (uint64_t)1 << 32 | id->local_id;
	m.tid = id->tid;
	m.local_id = id->local_id;
	m.service_id = dpr_cm_service_id(id->ps, ntohs(id->dst.port));
	m.ca_guid = cm.gsi[id->pi].node_guid;
	m.qpn = c->qpn;
	m.psn = c->psn & 0xffffff;
	m.resp_res = c->resp_res;
	m.init_depth = c->init_depth;
	m.remote_timeout = CM_RESPONSE_TIMEOUT;
	m.local_timeout = CM_RESPONSE_TIMEOUT;
	m.tst = c->qp_type == 3 ? DPR_CM_TST_UC : DPR_CM_TST_RC;
	m.flow_ctrl = c->flow_ctrl;
	m.retry_cnt = c->retry_cnt & 7;
	m.rnr_retry = c->rnr_retry & 7;
	m.pkey = 0xffff;
	m.mtu = port_mtu(id->pi);
	m.max_cm_retries = CM_MAX_CM_RETRIES;
	m.srq = c->srq;
	memcpy(m.sgid, id->sgid, 16);
	memcpy(m.dgid, id->dgid, 16);
	m.hop_limit = 64;
	m.ack_timeout = CM_ACK_TIMEOUT;
	put_pdata(id, &m, c, DPR_CM_REQ_PDATA);
	id->local_qpn = c->qpn;
	id->qp_type = c->qp_type;
	id->st = CS_REQ_SENT;
	send_waiting(id, &m);
	return 0;
}

static int
req_accept(struct cm_id *id, const struct dpr_shm_cm_conn *c)
{
	struct dpr_cm_msg m;

	if (id->st != CS_REQ_RCVD || c->pdata_len > DPR_CM_REP_PDATA)
		return -EINVAL;
	if (id_is_ud(id)) {
		if (c->pdata_len > DPR_CM_SIDR_REP_PDATA)
			return -EINVAL;
		send_sidr_rep(id, 0, c->qpn, c->qkey, c->pdata, c->pdata_len);
		id->local_qpn = c->qpn;
		id->st = CS_ESTABLISHED;
		cm.st.connections++;
		return 0;
	}
	msg_ids(id, &m, DPR_CM_REP);
	m.qpn = c->qpn;
	m.psn = c->psn & 0xffffff;
	m.resp_res = c->resp_res;
	m.init_depth = c->init_depth;
	m.target_ack_delay = 15;
	m.flow_ctrl = c->flow_ctrl;
	m.rnr_retry = c->rnr_retry & 7;
	m.srq = c->srq;
	m.ca_guid = cm.gsi[id->pi].node_guid;
	m.pdata_len = (uint16_t)c->pdata_len;
	memcpy(m.pdata, c->pdata, c->pdata_len);
	id->local_qpn = c->qpn;
	id->st = CS_REP_SENT;
	send_waiting(id, &m);
	return 0;
}

/* Is @p h a live channel of @p owner? */
static bool
chan_ok(const void *owner, uint32_t h)
{
	return h != 0 && h <= CM_MAX_CHANNELS && cm.chans[h - 1] != NULL &&
	       cm.chans[h - 1]->owner == owner && !cm.chans[h - 1]->dead;
}

int
dpr_cm_request(void *owner, struct dpr_shm_msg *m, int *in_fd)
{
	struct cm_id *id = NULL;
	struct dpr_cm_msg msg;
	uint8_t gi;
	int pi, rc;

	if (!cm.started)
		return -ENOSYS;
	switch (m->op) {
	case DPR_SHM_CM_CREATE_CHANNEL:
		if (*in_fd < 0)
			return -EBADF;
		for (uint32_t i = 0; i < CM_MAX_CHANNELS; i++) {
			if (cm.chans[i] != NULL)
				continue;
			cm.chans[i] = calloc(1, sizeof(*cm.chans[i]));
			if (cm.chans[i] == NULL)
				return -ENOMEM;
			cm.chans[i]->owner = owner;
			cm.chans[i]->fd = *in_fd;
			*in_fd = -1;
			m->cm.channel = i + 1;
			return 0;
		}
		return -EMFILE;
	case DPR_SHM_CM_DESTROY_CHANNEL: {
		uint32_t h = m->cm.channel;

		if (!chan_ok(owner, h))
			return -EINVAL;
		for (uint32_t i = 0; i < CM_MAX_IDS; i++)
			if (cm.ids[i] != NULL && cm.ids[i]->chan == h)
				return -EBUSY;
		/* kept open until the client closes its end: a thread of it
		 * may still wait in rdma_get_cm_event, and must go on waiting
		 * (as on Linux's channel), not see the channel end */
		cm.chans[h - 1]->dead = true;
		return 0;
	}
	case DPR_SHM_CM_CREATE_ID: {
		uint32_t h = m->cm.channel;

		if (!chan_ok(owner, h))
			return -EINVAL;
		if (m->cm.ps != DPR_RDMA_PS_TCP && m->cm.ps != DPR_RDMA_PS_IB &&
		    m->cm.ps != DPR_RDMA_PS_UDP)
			return -EINVAL;
		id = id_new(owner, h);
		if (id == NULL)
			return -ENOMEM;
		id->ps = (uint16_t)m->cm.ps;
		id->qp_type = (uint8_t)m->cm.qp_type;
		answer_id(id, m);
		return 0;
	}
	default:
		break;
	}
	id = id_get(owner, m->cm.id);
	if (id == NULL)
		return -EINVAL;
	switch (m->op) {
	case DPR_SHM_CM_DESTROY_ID:
		id_end(id);
		return 0;
	case DPR_SHM_CM_MIGRATE_ID: {
		uint32_t h = m->cm.channel;

		if (!chan_ok(owner, h))
			return -EINVAL;
		id->chan = h;
		return 0;
	}
	case DPR_SHM_CM_BIND:
		if (id->st != CS_IDLE)
			return -EINVAL;
		rc = bind_addr(id, &m->cm.src, true);
		if (rc != 0)
			return rc;
		id->st = CS_BOUND;
		answer_id(id, m);
		return 0;
	case DPR_SHM_CM_RESOLVE_ADDR: {
		struct dpr_shm_cm_addr dst = m->cm.dst;

		if (id->st != CS_IDLE && id->st != CS_BOUND && id->st != CS_ADDR)
			return -EINVAL;
		if (dst.family != AF_INET && dst.family != AF_INET6)
			return -EAFNOSUPPORT;
		pi = route(dst.addr, &gi);
		if (pi < 0)
			return -ENETUNREACH;
		if (id->st == CS_IDLE) {
			struct dpr_shm_cm_addr src = m->cm.src;

			if (src.family == 0) {
				uint8_t gid[3][16];

				port_gids((uint16_t)pi, gid);
				src = (struct dpr_shm_cm_addr){ .family = dst.family };
				memcpy(src.addr, gid[gi], 16);
			}
			rc = bind_addr(id, &src, false);
			if (rc != 0)
				return rc;
		}
		if (id->pi >= 0 && id->pi != pi)
			return -ENETUNREACH;
		if (id->pi < 0) {
			uint8_t gid[3][16];

			port_gids((uint16_t)pi, gid);
			memcpy(id->src.addr, gid[gi], 16);
			memcpy(id->sgid, gid[gi], 16);
		}
		id->pi = pi;
		id->sgid_index = gi;
		memcpy(id->sgid, id->src.addr, 16);
		id->dst = dst;
		memcpy(id->dgid, dst.addr, 16);
		id->st = CS_ADDR;
		answer_id(id, m);
		emit(id, DPR_SHM_CM_EV_ADDR_RESOLVED, 0, NULL, 0);
		return 0;
	}
	case DPR_SHM_CM_RESOLVE_ROUTE:
		if (id->st != CS_ADDR)
			return -EINVAL;
		id->st = CS_ROUTE;
		answer_id(id, m);
		emit(id, DPR_SHM_CM_EV_ROUTE_RESOLVED, 0, NULL, 0);
		return 0;
	case DPR_SHM_CM_LISTEN:
		if (id->st == CS_IDLE) {
			struct dpr_shm_cm_addr any = { .family = AF_INET6 };

			rc = bind_addr(id, &any, true);
			if (rc != 0)
				return rc;
		} else if (id->st != CS_BOUND) {
			return -EINVAL;
		}
		id->st = CS_LISTEN;
		id->backlog = m->cm.backlog;
		answer_id(id, m);
		return 0;
	case DPR_SHM_CM_CONNECT:
		return req_connect(id, &m->cm_conn.conn);
	case DPR_SHM_CM_ACCEPT:
		return req_accept(id, &m->cm_conn.conn);
	case DPR_SHM_CM_REJECT:
		if (id_is_ud(id) && id->st == CS_REQ_RCVD) {
			send_sidr_rep(id, 2 /* rejected */, 0, 0, m->cm_conn.conn.pdata,
				      RTE_MIN(m->cm_conn.conn.pdata_len,
					      (uint32_t)DPR_CM_SIDR_REP_PDATA));
			id->st = CS_CLOSED;
			return 0;
		}
		if (id->st != CS_REQ_RCVD && id->st != CS_REP_RCVD)
			return -EINVAL;
		send_rej(id, id->st == CS_REQ_RCVD ? DPR_CM_REF_REQ : DPR_CM_REF_REP,
			 DPR_CM_REJ_CONSUMER_DEFINED, m->cm_conn.conn.pdata,
			 RTE_MIN(m->cm_conn.conn.pdata_len, (uint32_t)DPR_CM_REJ_PDATA));
		id->st = CS_CLOSED;
		return 0;
	case DPR_SHM_CM_ESTABLISH:
		if (id->st != CS_REP_RCVD)
			return -EINVAL;
		msg_ids(id, &msg, DPR_CM_RTU);
		send_answer(id, &msg);
		id->st = CS_ESTABLISHED;
		cm.st.connections++;
		return 0;
	case DPR_SHM_CM_DISCONNECT:
		if (id_is_ud(id))
			return -EINVAL;    /* (librdmacm: a UD ID has no connection) */
		if (id->st == CS_DREQ_RCVD || id->st == CS_CLOSED ||
		    id->st == CS_DREQ_SENT)
			return 0;  /* the peer went first: its DREQ is answered */
		if (id->st != CS_ESTABLISHED && id->st != CS_REP_SENT &&
		    id->st != CS_REP_RCVD)
			return -EINVAL;
		send_dreq(id);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

void
dpr_cm_owner_gone(void *owner)
{
	if (!cm.started)
		return;
	for (uint32_t i = 0; i < CM_MAX_IDS; i++)
		if (cm.ids[i] != NULL && cm.ids[i]->owner == owner)
			id_end(cm.ids[i]);
	for (uint32_t i = 0; i < CM_MAX_CHANNELS; i++)
		if (cm.chans[i] != NULL && cm.chans[i]->owner == owner) {
			close(cm.chans[i]->fd);
			free(cm.chans[i]);
			cm.chans[i] = NULL;
		}
}

/* ------------------------------------- for the other files (cm_private.h) */

uint64_t
dpr_cm_now_ms(void)
{
	return now_ms();
}

void
dpr_cm_mad_send(int pi, uint8_t sgid_index, const uint8_t gid[16],
		const uint8_t *mad)
{
	mad_send(pi, sgid_index, gid, mad);
}

int
dpr_cm_route(const uint8_t *gid, uint8_t *sgid_index)
{
	return route(gid, sgid_index);
}

uint64_t
dpr_cm_node_guid(uint16_t pi)
{
	return pi < cm.n_ports ? cm.gsi[pi].node_guid : 0;
}

/* ------------------------------------------------- start and stop */

int
dpr_cm_start(const struct dpr_config *conf, char *err, size_t errlen)
{
	const struct cm_conf *c = dpr_config_room(conf, &cm_room, 0);
	int rc;

	cm.conf = *c;
	cm.cfg = conf;
	if (!c->enabled)
		return 0;
	cm.n_ports = RTE_MIN(dpr_engine_n_ports(), (uint16_t)CM_MAX_PORTS);
	cm.rx = rte_ring_create_elem("dpr_cm_rx", sizeof(struct cm_mad), GSI_RING,
				     SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	cm.tx = rte_ring_create_elem("dpr_cm_tx", sizeof(struct cm_mad), GSI_RING,
				     SOCKET_ID_ANY, RING_F_SC_DEQ);
	cm.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (cm.rx == NULL || cm.tx == NULL || cm.wake_fd < 0) {
		snprintf(err, errlen, "RDMA CM: no memory for its rings; set "
			 "[cm] enabled = no to run without it");
		dpr_cm_stop();
		return -ENOMEM;
	}
	cm.next_port = (uint16_t)rte_rand();
	cm.id_seq = (uint32_t)rte_rand();
	for (uint16_t pi = 0; pi < cm.n_ports; pi++) {
		struct dpr_port_info p;
		uint8_t *g = (uint8_t *)&cm.gsi[pi].node_guid;

		rc = dpr_engine_run_on(0, gsi_create, (void *)(uintptr_t)pi);
		if (rc != 0) {
			snprintf(err, errlen, "RDMA CM: cannot make QP1 on port %u: "
				 "%s", pi, strerror(-rc));
			dpr_cm_stop();
			return rc;
		}
		dpr_engine_port_info(pi, &p);
		/* the node GUID as rxe (and the shim's devices) make it */
		g[0] = p.mac.addr_bytes[0] ^ 2;
		g[1] = p.mac.addr_bytes[1];
		g[2] = p.mac.addr_bytes[2];
		g[3] = 0xff;
		g[4] = 0xfe;
		g[5] = p.mac.addr_bytes[3];
		g[6] = p.mac.addr_bytes[4];
		g[7] = p.mac.addr_bytes[5];
	}
	rc = dpr_cm_caps_start(conf, cm.wake_fd);
	if (rc != 0) {
		snprintf(err, errlen, "RDMA CM: no memory for the peers' "
			 "capabilities; set [cm] enabled = no to run without it");
		dpr_cm_stop();
		return rc;
	}
	cm.started = true;
	return 0;
}

/* Nothing: run on worker 0, it returns when the worker is between two
 * polls (dpr_cm_stop()). */
static int
poll_barrier(void *arg __rte_unused)
{
	return 0;
}

void
dpr_cm_stop(void)
{
	/* Worker 0's poll first stops looking at the rings, the GSI QPs and
	 * the wake-up descriptor: every poll after the barrier sees started
	 * false (it dequeued from a ring freed under it when dprdmad stopped:
	 * a SEGV in 4 of 20 stops of a busy worker under ASan). */
	__atomic_store_n(&cm.started, false, __ATOMIC_RELEASE);
	dpr_cm_caps_stop();
	if (cm.rx != NULL || cm.tx != NULL)
		dpr_engine_run_on(0, poll_barrier, NULL);
	for (uint32_t i = 0; i < CM_MAX_IDS; i++)
		if (cm.ids[i] != NULL)
			id_free(cm.ids[i]);
	for (uint32_t i = 0; i < CM_MAX_CHANNELS; i++)
		if (cm.chans[i] != NULL) {
			close(cm.chans[i]->fd);
			free(cm.chans[i]);
			cm.chans[i] = NULL;
		}
	for (uint16_t pi = 0; pi < cm.n_ports; pi++)
		if (cm.gsi[pi].qp != NULL)
			dpr_engine_run_on(0, gsi_destroy, (void *)(uintptr_t)pi);
	rte_ring_free(cm.rx);
	rte_ring_free(cm.tx);
	cm.rx = cm.tx = NULL;
	if (cm.wake_fd >= 0)
		close(cm.wake_fd);
	cm.wake_fd = -1;
}

/* ------------------------------------------------------ telemetry */

static int
tel_stats(const char *cmd __rte_unused, const char *params __rte_unused,
	  struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "enabled", cm.started);
#define _(n) rte_tel_data_add_dict_u64(d, #n, __atomic_load_n(&cm.st.n, __ATOMIC_RELAXED));
	CM_STATS(_)
#undef _
	dpr_cm_caps_stats(d);
	return 0;
}

static void
addr_str(const struct dpr_shm_cm_addr *a, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN];

	if (a->family == AF_INET)
		inet_ntop(AF_INET, a->addr + 12, ip, sizeof(ip));
	else if (a->family == AF_INET6)
		inet_ntop(AF_INET6, a->addr, ip, sizeof(ip));
	else
		snprintf(ip, sizeof(ip), "-");
	snprintf(buf, len, a->family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip,
		 ntohs(a->port));
}

/* /dprdma/cm/conns: every ID, one line each (state, addresses, QPs). */
static int
tel_conns(const char *cmd __rte_unused, const char *params __rte_unused,
	  struct rte_tel_data *d)
{
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	pthread_mutex_lock(&cm.lock);
	for (uint32_t i = 0; i < CM_MAX_IDS; i++) {
		const struct cm_id *id = cm.ids[i];
		char line[RTE_TEL_MAX_STRING_LEN], s[64], t[64];

		if (id == NULL)
			continue;
		addr_str(&id->src, s, sizeof(s));
		addr_str(&id->dst, t, sizeof(t));
		/* at most 127 characters: two IPv6 addresses just fit */
		snprintf(line, sizeof(line), "%u %s port %d %.48s -> %.48s qp %u -> %u",
			 id_handle(id), state_names[id->st], id->pi, s, t,
			 id->local_qpn, id->remote_qpn);
		if (rte_tel_data_add_array_string(d, line) != 0)
			break;
	}
	pthread_mutex_unlock(&cm.lock);
	return 0;
}

void
dpr_cm_register_telemetry(void)
{
	static const struct dpr_counter_help cm_help[] = {
		{ "enabled", "1: the CM runs ([cm] enabled = yes)" },
		{ "mads_rx", "CM MADs QP1 received" },
		{ "mads_tx", "CM MADs sent" },
		{ "mads_retried", "MADs sent again: no answer within [cm] response_timeout_ms" },
		{ "mads_tx_dropped", "MADs not sent: QP1's ring to the worker was full" },
		{ "mads_rx_dropped", "MADs dropped: the ring to the main lcore was full" },
		{ "mad_short", "MADs dropped: shorter than a CM MAD" },
		{ "mad_base_version", "MADs dropped: base version not 1" },
		{ "mad_class", "MADs dropped: management class not CM (7)" },
		{ "mad_class_version", "MADs dropped: CM class version not 2" },
		{ "mad_method", "MADs dropped: method not Send" },
		{ "mad_attr", "MADs dropped: attribute the CM does not know" },
		{ "mad_unknown_id", "MADs dropped: for a connection this box does not have" },
		{ "mad_wrong_state", "MADs dropped: not expected in the connection's state" },
		{ "mad_duplicate", "duplicate MADs answered from the last answer" },
		{ "mad_bad_pdata", "REQs refused: private data not rdma_cm's IP header" },
		{ "sidr_req_rx", "SIDR requests (UD service lookups) received" },
		{ "sidr_no_listener", "SIDR requests for a port nobody listens on" },
		{ "req_rx", "connection requests (REQ) received" },
		{ "req_no_listener", "REQs for a port nobody listens on (REJ 8 sent)" },
		{ "rej_rx", "rejects (REJ) received" },
		{ "rej_tx", "rejects sent" },
		{ "connections", "connections established (RTU sent or received)" },
		{ "timeouts", "handshakes or disconnects given up after [cm] max_retries" },
		{ "events", "events delivered to clients' event channels" },
		{ "events_lost", "events a client's channel had no room for" },
		{ "caps_get_tx", "DprdmaCaps Gets sent: a peer asked what it speaks" },
		{ "caps_get_retried", "DprdmaCaps Gets sent again: no answer yet" },
		{ "caps_get_rx", "DprdmaCaps Gets received (and answered) from peer boxes" },
		{ "caps_resp_rx", "answers to our DprdmaCaps Gets" },
		{ "caps_resp_unsolicited", "DprdmaCaps answers to nothing we asked" },
		{ "caps_peer_sr", "peers found to speak selective repeat" },
		{ "caps_peer_iba", "peers found to speak IBA only (go-back-N)" },
		{ "caps_timeouts", "peers that never answered a DprdmaCaps Get" },
		{ "caps_bad", "malformed DprdmaCaps MADs dropped" },
		{ "caps_table_full", "peers not remembered: the table of peers was full, or its share for peers that sent their own Get" },
		{ "caps_peers", "peers known or being asked (a gauge)" },
		{ "caps_peers_told", "peers known from their own Gets, never asked (a gauge; at most half the table)" },
		{ "caps_req_dropped", "questions of the workers lost: their ring was full" },
	};

	dpr_engine_counter_help("cm", cm_help, RTE_DIM(cm_help));
	rte_telemetry_register_cmd("/dprdma/cm/stats", tel_stats,
				   "RDMA CM counters: MADs in and out, retries, drops by reason");
	rte_telemetry_register_cmd("/dprdma/cm/conns", tel_conns,
				   "RDMA CM IDs: state, addresses, QPs");
	dpr_cm_caps_register_telemetry();
}
