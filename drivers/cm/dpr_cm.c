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

/* ---------------------------------------------------- configuration */

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
	{ "max_backlog", DPR_CONF_UINT, offsetof(struct cm_conf, max_backlog),
	  sizeof(uint32_t), 1, 1u << 22,
	  .help = "connection requests a listener holds not yet established, "
		  "at most (rdma_listen's backlog is no bound, as in Linux "
		  "over RoCE); more are dropped, and their senders send them "
		  "again" },
	{ "half_open_per_source", DPR_CONF_UINT,
	  offsetof(struct cm_conf, half_open_per_source), sizeof(uint32_t), 1,
	  1u << 22,
	  .help = "connection requests from one address the box holds not "
		  "yet established, at most (a REQ flood); more are dropped" },
	{ "connections_per_source", DPR_CONF_UINT,
	  offsetof(struct cm_conf, connections_per_source), sizeof(uint32_t), 0,
	  1u << 22,
	  .help = "connections one address holds to this box's listeners, at "
		  "most (0: no bound); more are rejected (REJ, no resources)" },
	{ "max_ids", DPR_CONF_UINT, offsetof(struct cm_conf, max_ids),
	  sizeof(uint32_t), 64, 1u << 22,
	  .help = "RDMA CM IDs (connections, listeners, IDs in time-wait) "
		  "the box holds for all its clients and peers; rounded up to "
		  "a power of two" },
};

static void
cm_defaults(void *area, int port __rte_unused)
{
	struct cm_conf *c = area;

	c->enabled = 1;
	c->response_timeout_ms = 1000;
	c->max_retries = 5;
	c->max_ids = 65536;
	/* a quarter of the IDs for one listener's requests, and for one
	 * address's: 10,000 connections asked of one box at once by another
	 * are all held (a request dropped costs its sender a response
	 * timeout, and one with [cm] max_retries spent fails), and no
	 * address nor listener takes the table */
	c->max_backlog = 16384;
	c->half_open_per_source = 16384;
	/* half the IDs: one address cannot take the box's table (nor, one
	 * QP a connection, its programs' QPs) */
	c->connections_per_source = 32768;
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

struct cm_global cm = { .wake_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

const char *const cm_state_names[] = {
	"idle", "bound", "listen", "addr_resolved", "route_resolved",
	"req_sent", "rep_rcvd", "req_rcvd", "rep_sent", "established",
	"dreq_sent", "dreq_rcvd", "closed", "timewait",
};

/* --------------------------------------------------------- the IDs */

struct cm_id *
cm_id_get(void *owner, uint32_t handle)
{
	if (handle == 0 || handle > cm.max_ids || cm.ids[handle - 1] == NULL ||
	    cm.ids[handle - 1]->owner != owner)
		return NULL;
	return cm.ids[handle - 1];
}

uint32_t
cm_id_handle(const struct cm_id *id)
{
	return (id->local_id & (cm.max_ids - 1)) + 1;
}

/* A new ID: its local comm ID carries its index in the low bits. */
struct cm_id *
cm_id_new(void *owner, uint32_t chan)
{
	struct cm_id *id;
	uint32_t i;

	if (cm.n_free == 0)
		return NULL;
	id = calloc(1, sizeof(*id));
	if (id == NULL)
		return NULL;
	i = cm.free_q[cm.free_head];
	cm.free_head = (cm.free_head + 1) & (cm.max_ids - 1);
	cm.n_free--;
	id->owner = owner;
	id->chan = chan;
	id->pi = -1;
	cm.id_seq = cm.id_seq * 1103515245u + 12345u + (uint32_t)rte_rand();
	id->local_id = (cm.id_seq & ~(cm.max_ids - 1)) | i;
	if (id->local_id == 0)
		id->local_id = cm.max_ids | i;
	id->next = cm.live;
	if (cm.live != NULL)
		cm.live->prev = id;
	pthread_mutex_lock(&cm.lock);
	cm.live = id;
	cm.n_live++;
	cm.ids[i] = id;
	pthread_mutex_unlock(&cm.lock);
	return id;
}

struct cm_id *
cm_id_by_local(uint32_t local_id)
{
	struct cm_id *id = cm.ids[local_id & (cm.max_ids - 1)];

	return id != NULL && id->local_id == local_id ? id : NULL;
}

void
cm_id_free(struct cm_id *id)
{
	const uint32_t i = cm_id_handle(id) - 1;

	cm_index_forget(id);

	pthread_mutex_lock(&cm.lock);
	cm.ids[i] = NULL;
	if (id->prev != NULL)
		id->prev->next = id->next;
	else
		cm.live = id->next;
	if (id->next != NULL)
		id->next->prev = id->prev;
	cm.n_live--;
	pthread_mutex_unlock(&cm.lock);
	cm.free_q[(cm.free_head + cm.n_free) & (cm.max_ids - 1)] = i;
	cm.n_free++;
	free(id);
}

/* ------------------------------------------------------- deadlines */

/* A binary min-heap of due times, entries never taken out before they
 * come due: an ID that goes, answers, or moves its deadline leaves its
 * old entry, which run_timers() finds stale and passes over. So nothing
 * costs per idle ID, and arming is O(log n). (rte_timer would need each
 * place that ends a wait to stop its timer, and its callbacks to run
 * from rte_timer_manage() on this lcore: more to get wrong for the
 * same thing.) */
static void
heap_swap(uint32_t a, uint32_t b)
{
	struct cm_timer t = cm.heap[a];

	cm.heap[a] = cm.heap[b];
	cm.heap[b] = t;
}

void
cm_timer_arm(const struct cm_id *id, uint64_t due_ms)
{
	uint32_t i;

	if (cm.heap_n == cm.heap_cap) {
		uint32_t cap = cm.heap_cap ? 2 * cm.heap_cap : 1024;
		struct cm_timer *h = realloc(cm.heap, cap * sizeof(*h));

		if (h == NULL) {
			/* (no memory: the deadline is missed, and the ID
			 * waits for its peer or its owner instead) */
			cm.st.timers_dropped++;
			return;
		}
		cm.heap = h;
		cm.heap_cap = cap;
	}
	i = cm.heap_n++;
	cm.heap[i] = (struct cm_timer){ .due_ms = due_ms, .local_id = id->local_id };
	while (i > 0 && cm.heap[(i - 1) / 2].due_ms > cm.heap[i].due_ms) {
		heap_swap(i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

uint64_t
cm_timer_next(void)
{
	return cm.heap_n ? cm.heap[0].due_ms : UINT64_MAX;
}

bool
cm_timer_pop(uint64_t now_ms, struct cm_id **id)
{
	uint32_t i = 0, local_id;

	if (cm.heap_n == 0 || cm.heap[0].due_ms > now_ms)
		return false;
	local_id = cm.heap[0].local_id;
	cm.heap[0] = cm.heap[--cm.heap_n];
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < cm.heap_n && cm.heap[l].due_ms < cm.heap[m].due_ms)
			m = l;
		if (r < cm.heap_n && cm.heap[r].due_ms < cm.heap[m].due_ms)
			m = r;
		if (m == i)
			break;
		heap_swap(i, m);
		i = m;
	}
	*id = cm_id_by_local(local_id);
	return true;
}

static void chan_hold(struct cm_chan *ch, const struct dpr_shm_cm_event *ev,
		      const struct cm_id *id);

void
cm_emit(struct cm_id *id, uint32_t event, int32_t status,
	const struct dpr_shm_cm_conn *conn, uint32_t listen_id)
{
	struct dpr_shm_cm_event ev = {
		.magic = DPR_SHM_MAGIC,
		.event = event,
		.status = status,
		.id = cm_id_handle(id),
		.listen_id = listen_id,
		.port = id->pi < 0 ? UINT32_MAX : (uint32_t)id->pi,
		.sgid_index = id->sgid_index,
		.src = id->src,
		.dst = id->dst,
	};
	struct cm_chan *ch = id->chan && id->chan <= CM_MAX_CHANNELS ?
		cm.chans[id->chan - 1] : NULL;

	/* any event but the request itself ends a passive ID's half-open
	 * time: established, rejected, unreachable, disconnected */
	if (event != DPR_SHM_CM_EV_CONNECT_REQUEST)
		cm_half_open_end(id);
	if (id->owner == NULL)
		return;         /* in time-wait: nobody to tell */

	memcpy(ev.sgid.raw, id->sgid, 16);
	memcpy(ev.dgid.raw, id->dgid, 16);
	if (conn != NULL)
		ev.conn = *conn;
	if (ch == NULL || ch->dead)
		return;         /* the program destroyed its channel: nobody to tell */
	/* behind what the channel holds back already, in order */
	if ((ch->qlen != 0 && cm_chan_flush(ch)) ||
	    send(ch->fd, &ev, sizeof(ev), MSG_DONTWAIT | MSG_NOSIGNAL) !=
	    (ssize_t)sizeof(ev)) {
		if (ch->qlen == 0 && errno != EAGAIN)
			return; /* the program is gone (its end closed) */
		chan_hold(ch, &ev, id);
		return;
	}
	cm.st.events++;
}

/* Event @p ev for @p id kept in @p ch's backlog (the channel is full). */
static void
chan_hold(struct cm_chan *ch, const struct dpr_shm_cm_event *ev,
	  const struct cm_id *id)
{
	if (ch->qlen == ch->qcap && ch->qcap < CM_CHAN_BACKLOG_MAX) {
		uint32_t cap = ch->qcap ? ch->qcap * 2 : 64;
		struct dpr_shm_cm_event *q = malloc(cap * sizeof(*q));

		if (q != NULL) {
			for (uint32_t i = 0; i < ch->qlen; i++)
				q[i] = ch->q[(ch->qhead + i) % ch->qcap];
			free(ch->q);
			ch->q = q;
			ch->qhead = 0;
			ch->qcap = cap;
		}
	}
	if (ch->qlen == ch->qcap) {
		static struct dpr_ratelimit rl;
		uint32_t missed;

		cm.st.events_lost++;
		if (dpr_ratelimit(&rl, &missed))
			CM_LOG(WARNING, "an RDMA CM event (%u) for ID %u was lost: "
			       "its channel holds %u unread already (the program "
			       "does not read it)%s", ev->event, cm_id_handle(id),
			       ch->qlen, missed ? "; more lost, lines suppressed "
			       "(cm/stats events_lost counts them)" : "");
		return;
	}
	ch->q[(ch->qhead + ch->qlen++) % ch->qcap] = *ev;
	cm.st.events_held++;
	cm.backlog = true;
}

bool
cm_chan_flush(struct cm_chan *ch)
{
	while (ch->qlen != 0) {
		const struct dpr_shm_cm_event *ev = &ch->q[ch->qhead];

		if (send(ch->fd, ev, sizeof(*ev), MSG_DONTWAIT | MSG_NOSIGNAL) !=
		    (ssize_t)sizeof(*ev)) {
			if (errno == EAGAIN)
				return true;
			ch->qlen = 0;   /* the program is gone */
			break;
		}
		ch->qhead = (ch->qhead + 1) % ch->qcap;
		ch->qlen--;
		cm.st.events++;
	}
	return false;
}

void
cm_chan_free(struct cm_chan *ch)
{
	close(ch->fd);
	free(ch->q);
	free(ch);
}

/* Send @p m and wait for its answer (timer). A first MAD to a peer
 * (REQ, SIDR_REQ) from a box with a key waits for the peer's
 * capabilities first: whether it is MACed depends on them (run_timers()
 * looks every millisecond). */
void
cm_send_waiting(struct cm_id *id, const struct dpr_cm_msg *m)
{
	uint64_t now = dpr_cm_now_ms();

	dpr_cm_encode(m, id->mad);
	id->waiting = true;
	id->retries_left = cm.conf.max_retries;
	id->caps_wait = (m->attr == DPR_CM_REQ || m->attr == DPR_CM_SIDR_REQ) &&
		dpr_cm_caps_pending((uint16_t)id->pi, id->dgid, id->sgid_index);
	if (id->caps_wait) {
		id->caps_until = now + CM_CAPS_WAIT_MS;
		id->deadline_ms = now + 1;
		cm_timer_arm(id, id->deadline_ms);
		return;
	}
	id->deadline_ms = now + cm.conf.response_timeout_ms;
	cm_timer_arm(id, id->deadline_ms);
	dpr_cm_mad_send(id->pi, id->sgid_index, id->dgid, id->mad);
}

/* Send @p m, an answer kept for duplicates. */
void
cm_send_answer(struct cm_id *id, const struct dpr_cm_msg *m)
{
	dpr_cm_encode(m, id->answer);
	id->has_answer = true;
	dpr_cm_mad_send(id->pi, id->sgid_index, id->dgid, id->answer);
}

void
cm_msg_ids(const struct cm_id *id, struct dpr_cm_msg *m, uint16_t attr)
{
	memset(m, 0, sizeof(*m));
	m->attr = attr;
	m->tid = id->tid;
	m->local_id = id->local_id;
	m->remote_id = id->remote_id;
}

void
cm_send_rej(struct cm_id *id, uint8_t msg_ref, uint16_t reason,
	    const uint8_t *pdata, uint32_t len)
{
	struct dpr_cm_msg m;

	cm_msg_ids(id, &m, DPR_CM_REJ);
	m.msg_ref = msg_ref;
	m.reason = reason;
	m.pdata_len = (uint16_t)RTE_MIN(len, (uint32_t)DPR_CM_REJ_PDATA);
	if (pdata != NULL)
		memcpy(m.pdata, pdata, m.pdata_len);
	cm_send_answer(id, &m);
	cm.st.rej_tx++;
}

void
cm_send_dreq(struct cm_id *id)
{
	struct dpr_cm_msg m;

	cm_msg_ids(id, &m, DPR_CM_DREQ);
	m.qpn = id->remote_qpn;
	cm_send_waiting(id, &m);
	id->st = CS_DREQ_SENT;
}

bool
cm_id_is_ud(const struct cm_id *id)
{
	return id->ps == DPR_RDMA_PS_UDP;
}

/* The SIDR_REP of a UD service request (IBA 12.11.2). */
void
cm_send_sidr_rep(struct cm_id *id, uint8_t status, uint32_t qpn, uint32_t qkey,
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
	cm_send_answer(id, &m);
}

/* An ID ends for its owner's sake: the peer is told what it must know.
 * One that had a connection lingers in time-wait (IBA 12.9.7) without an
 * owner for a while, so that the peer's late MADs (its DREP, a DREQ sent
 * again) are answered and not taken for strangers. */
void
cm_id_end(struct cm_id *id)
{
	bool connected = id->remote_id != 0 &&
		(id->st == CS_REP_SENT || id->st == CS_ESTABLISHED ||
		 id->st == CS_DREQ_SENT || id->st == CS_DREQ_RCVD ||
		 id->st == CS_CLOSED || id->st == CS_REP_RCVD);

	cm_half_open_end(id);
	cm_conn_quota_end(id);

	if (cm_id_is_ud(id)) {
		/* a service request nobody answered is refused */
		if (id->st == CS_REQ_RCVD)
			cm_send_sidr_rep(id, 2 /* rejected */, 0, 0, NULL, 0);
		cm_id_free(id);
		return;
	}
	switch (id->st) {
	case CS_REQ_RCVD:
		cm_send_rej(id, DPR_CM_REF_REQ, DPR_CM_REJ_CONSUMER_DEFINED, NULL, 0);
		break;
	case CS_REQ_SENT:
		cm_send_rej(id, DPR_CM_REF_OTHER, DPR_CM_REJ_TIMEOUT, NULL, 0);
		break;
	case CS_REP_RCVD:
		cm_send_rej(id, DPR_CM_REF_REP, DPR_CM_REJ_CONSUMER_DEFINED, NULL, 0);
		break;
	case CS_REP_SENT:
	case CS_ESTABLISHED:
		cm_send_dreq(id);  /* sent again from time-wait until answered */
		break;
	default:
		break;
	}
	if (!connected) {
		cm_id_free(id);
		return;
	}
	if (id->st != CS_DREQ_SENT)
		id->waiting = false;
	id->owner = NULL;
	id->chan = 0;
	id->st = id->st == CS_DREQ_SENT ? CS_DREQ_SENT : CS_TIMEWAIT;
	id->linger_ms = dpr_cm_now_ms() + 2ull * cm.conf.response_timeout_ms *
		(cm.conf.max_retries + 1);
	cm_timer_arm(id, id->linger_ms);
}

/* ------------------------------------------------- start and stop */

int
dpr_cm_start(const struct dpr_config *conf, char *err, size_t errlen)
{
	const struct cm_conf *c = dpr_config_room(conf, &cm_room, 0);
	uint8_t keyprint[8];
	uint32_t sec_bits;
	int rc;

	cm.conf = *c;
	cm.cfg = conf;
	if (!c->enabled) {
		if (dpr_security_conf(conf)->mode != 0) {
			snprintf(err, errlen, "[security] mode needs [cm] enabled = yes "
				 "(secure QPs trade their nonces on QP1)");
			return -EINVAL;
		}
		return 0;
	}
	cm.max_ids = rte_align32pow2(c->max_ids);
	cm.ids = calloc(cm.max_ids, sizeof(*cm.ids));
	cm.free_q = calloc(cm.max_ids, sizeof(*cm.free_q));
	if (cm.ids == NULL || cm.free_q == NULL) {
		snprintf(err, errlen, "RDMA CM: no memory for %u IDs; lower [cm] "
			 "max_ids", cm.max_ids);
		dpr_cm_stop();
		return -ENOMEM;
	}
	if (cm_index_start() != 0) {
		snprintf(err, errlen, "RDMA CM: no memory for the indexes of %u "
			 "IDs; lower [cm] max_ids", cm.max_ids);
		dpr_cm_stop();
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < cm.max_ids; i++)
		cm.free_q[i] = i;
	cm.free_head = 0;
	cm.n_free = cm.max_ids;
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

		rc = dpr_engine_run_on(0, cm_gsi_create, (void *)(uintptr_t)pi);
		if (rc != 0) {
			snprintf(err, errlen, "RDMA CM: cannot make QP1 on port %u: "
				 "%s", pi, strerror(-rc));
			dpr_cm_stop();
			return rc;
		}
		/* the node GUID the shim's devices have (rxe's) */
		dpr_engine_port_info(pi, &p);
		cm.gsi[pi].node_guid = p.node_guid;
	}
	rc = dpr_cm_sec_start(conf, cm.wake_fd, &sec_bits, keyprint, err, errlen);
	if (rc != 0) {
		dpr_cm_stop();
		return rc;
	}
	rc = dpr_cm_caps_start(conf, cm.wake_fd, sec_bits, keyprint);
	if (rc == 0)
		rc = cm_auth_start(dpr_cm_sec_prk());
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
	cm_auth_stop();
	dpr_cm_sec_stop();
	if (cm.rx != NULL || cm.tx != NULL)
		dpr_engine_run_on(0, poll_barrier, NULL);
	while (cm.live != NULL)
		cm_id_free(cm.live);
	cm_index_stop();
	free(cm.ids);
	free(cm.free_q);
	free(cm.heap);
	free(cm.txq);
	cm.txq = NULL;
	cm.txq_n = cm.txq_cap = cm.txq_head = 0;
	cm.ids = NULL;
	cm.free_q = NULL;
	cm.heap = NULL;
	cm.heap_n = cm.heap_cap = 0;
	cm.n_free = 0;
	for (uint32_t i = 0; i < CM_MAX_CHANNELS; i++)
		if (cm.chans[i] != NULL) {
			cm_chan_free(cm.chans[i]);
			cm.chans[i] = NULL;
		}
	for (uint16_t pi = 0; pi < cm.n_ports; pi++)
		if (cm.gsi[pi].qp != NULL)
			dpr_engine_run_on(0, cm_gsi_destroy, (void *)(uintptr_t)pi);
	rte_ring_free(cm.rx);
	rte_ring_free(cm.tx);
	cm.rx = cm.tx = NULL;
	if (cm.wake_fd >= 0)
		close(cm.wake_fd);
	cm.wake_fd = -1;
}
