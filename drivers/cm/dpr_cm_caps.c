/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * What peer boxes can do beyond IBA (DPR_PEER_* of dpr_transport.h), asked
 * over QP1 with dprdma's own MAD (DprdmaCaps, dpr_cm_mad.h), so that an RC
 * QP uses selective repeat with a peer that reads SACKs and IBA's
 * go-back-N with every other (a ConnectX card, rxe, a dprdma box with
 * [transport] selective_repeat = off).
 *
 * The transports ask dpr_cm_peer_caps() on the workers, when a QP gets its
 * destination and at a gap while the answer is not known: a peer's entry
 * in a lock-free hash (written by the main lcore only), or a question put
 * on a ring for the main lcore, which sends the Get (our own capabilities
 * in it too: the peer learns ours without asking). A Get unanswered is
 * sent again CAPS_TIMEOUT_MS later, CAPS_TRIES times, then the peer is
 * taken for IBA only, as it is when it answers with a MAD status (Linux's
 * ib_mad answers a class it does not know so). Until the answer the QP
 * goes back N. An answer holds CAPS_TTL_MS, then the peer is asked again
 * (the old answer stands until the new one): a box restarted with other
 * settings, or another stack at the address, is known within a minute.
 *
 * A QP keeps what it learnt for its life: the peer's answer changes only
 * QPs connected after it.
 *
 * A Get from a peer nobody here asked about makes an entry too (what it
 * said, as if it had answered), but at most CAPS_TOLD_MAX of them and
 * never asked again: anyone on the segment can send Gets from made-up
 * addresses, and must neither fill the table that the QPs' own questions
 * need nor make this box send Gets to every address it named, each
 * minute. (Entries are never taken out: the workers read the table
 * without locks.)
 */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <rte_common.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_random.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "cm_private.h"
#include "dpr_engine.h"
#include "dpr_transport.h"

#define CAPS_MAX 4096                   /* peers a daemon remembers */
#define CAPS_TOLD_MAX (CAPS_MAX / 2)    /* ... of them from their own Gets */
#define CAPS_TRIES 3
#define CAPS_TIMEOUT_MS 300
#define CAPS_TTL_MS 60000
#define CAPS_REQ_RING 1024
#define CAPS_AGAIN_MS 1000              /* a known peer asked again, at most */

/* What the workers read of an entry (the hash's data): its state, the
 * peer's bits, and where the main lcore keeps the rest. */
#define V_KNOWN 1u
#define V_CAPS_SHIFT 2
#define V_CAPS_MASK 0x3fffu
#define V_IDX_SHIFT 16

struct caps_key {
	uint8_t gid[16];
	uint16_t pi;
	uint16_t pad;
};

/* A worker's question. */
struct caps_req {
	struct caps_key key;
	uint8_t sgid_index;
	uint8_t pad[3];
};

/* The main lcore's record of a peer. */
struct caps_peer {
	struct caps_key key;
	uint8_t sgid_index;
	uint8_t tries;                  /* Gets sent for this question */
	bool asking;
	bool known;
	bool answered;                  /* known from an answer, not a timeout */
	bool told;                      /* known from its own Get: not asked */
	uint32_t caps;
	uint64_t tid;                   /* asking: our question's (random) */
	uint64_t node_guid;
	uint64_t deadline_ms;           /* asking: the next Get */
	uint64_t refresh_ms;            /* known: asked again then */
	uint64_t since_ms;              /* known since */
};

#define CAPS_STATS(_) \
	_(caps_get_tx) \
	_(caps_get_retried) \
	_(caps_get_rx) \
	_(caps_resp_rx) \
	_(caps_resp_unsolicited) \
	_(caps_peer_sr) \
	_(caps_peer_iba) \
	_(caps_timeouts) \
	_(caps_bad) \
	_(caps_table_full) \
	_(caps_req_dropped) \
	_(caps_unauthenticated)

static struct {
	bool ready;
	struct rte_hash *h;
	struct rte_ring *req;           /* workers -> main */
	int wake_fd;
	uint32_t ours;                  /* our DPR_PEER_* bits */
	uint8_t keyprint[8];            /* our key's (secure QPs) */
	const struct dpr_security_conf *sc;
	pthread_mutex_t lock;           /* the peers: main lcore vs telemetry */
	uint32_t n;
	uint32_t n_told;                /* entries made by a peer's own Get */
	struct caps_peer peer[CAPS_MAX];
	struct {
#define _(n) uint64_t n;
		CAPS_STATS(_)
#undef _
	} st;
} caps = { .wake_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

static void
key_make(struct caps_key *k, uint16_t pi, const uint8_t *gid)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->gid, gid, 16);
	k->pi = pi;
}

/* On the workers (dpr_peer_caps_fn): the peer's bits, or -EAGAIN while
 * it is being asked. */
static int
peer_caps(uint16_t pi, const union dpr_gid *gid, uint8_t sgid_index)
{
	struct caps_req q;
	void *v;

	if (!__atomic_load_n(&caps.ready, __ATOMIC_ACQUIRE))
		return -ENOTSUP;
	memset(&q, 0, sizeof(q));
	key_make(&q.key, pi, gid->raw);
	if (rte_hash_lookup_data(caps.h, &q.key, &v) >= 0) {
		uint32_t x = (uint32_t)(uintptr_t)v;

		if (x & V_KNOWN)
			return (int)(x >> V_CAPS_SHIFT & V_CAPS_MASK);
		return -EAGAIN;
	}
	q.sgid_index = sgid_index;
	if (rte_ring_mp_enqueue_elem(caps.req, &q, sizeof(q)) == 0) {
		uint64_t one = 1;

		if (write(caps.wake_fd, &one, sizeof(one)) < 0) {
			/* the counter is saturated: the main lcore is woken anyway */
		}
	} else {
		__atomic_fetch_add(&caps.st.caps_req_dropped, 1, __ATOMIC_RELAXED);
	}
	return -EAGAIN;
}

/* What the workers see of @p p. */
static void
publish(const struct caps_peer *p)
{
	uint32_t idx = (uint32_t)(p - caps.peer);
	uint32_t x = idx << V_IDX_SHIFT |
		(p->caps & V_CAPS_MASK) << V_CAPS_SHIFT |
		(p->known ? V_KNOWN : 0);

	/* an existing key: its data replaced atomically (RW_CONCURRENCY_LF) */
	if (rte_hash_add_key_data(caps.h, &p->key, (void *)(uintptr_t)x) != 0)
		caps.st.caps_table_full++;
}

static struct caps_peer *
find(const struct caps_key *k)
{
	void *v;

	if (rte_hash_lookup_data(caps.h, k, &v) < 0)
		return NULL;
	return &caps.peer[(uint32_t)(uintptr_t)v >> V_IDX_SHIFT];
}

/* The entry of the box at @p gid on port @p pi, or NULL. */
static struct caps_peer *
peer_at(uint16_t pi, const uint8_t *gid)
{
	struct caps_key k;

	key_make(&k, pi, gid);
	return find(&k);
}

static struct caps_peer *
add(const struct caps_key *k, uint8_t sgid_index)
{
	struct caps_peer *p;

	if (caps.n == CAPS_MAX) {
		caps.st.caps_table_full++;
		return NULL;
	}
	p = &caps.peer[caps.n];
	memset(p, 0, sizeof(*p));
	p->key = *k;
	p->sgid_index = sgid_index;
	publish(p);
	caps.n++;
	return p;
}

/* Is our policy for the box at @p gid none ([security] subnets)? */
static bool
policy_none(const uint8_t *gid)
{
	union dpr_gid g;

	memcpy(g.raw, gid, 16);
	return caps.sc != NULL &&
		dpr_sec_subnet_policy(caps.sc->subnets, caps.sc->n_subnets, &g) ==
		DPR_SEC_POLICY_NONE;
}

/* What we tell the box at @p gid we run: no secure QPs where our policy
 * for its subnet is none, so that it decides as we do (plain, or refused
 * if it requires security), and no MACed MADs either. */
static void
ours_for(const uint8_t *gid, struct dpr_caps_msg *m)
{
	m->caps = caps.ours;
	memcpy(m->keyprint, caps.keyprint, 8);
	if (policy_none(gid)) {
		m->caps &= ~(uint32_t)(DPR_PEER_SEC_AUTH | DPR_PEER_SEC_ENC |
				       DPR_PEER_SEC_KEY | DPR_PEER_CM_AUTH);
		memset(m->keyprint, 0, 8);
	}
}

/* Do MADs to and from @p p carry the trailer (dpr_cm_auth.c)? It holds
 * our key and takes them, we do, and our policy for it is not none. */
static bool
peer_auth(const struct caps_peer *p)
{
	const uint32_t both = DPR_PEER_CM_AUTH | DPR_PEER_SEC_KEY;

	return p->known && (p->caps & both) == both &&
		(caps.ours & DPR_PEER_CM_AUTH) && !policy_none(p->key.gid);
}

static void
send_get(struct caps_peer *p, uint64_t now)
{
	struct dpr_caps_msg m = {
		.method = DPR_MAD_METHOD_GET,
		.node_guid = dpr_cm_node_guid(p->key.pi),
	};

	/* a question's own TID, unguessable: only its answer (or one who
	 * saw the question) may say the peer no longer holds our key */
	if (p->tries == 0)
		p->tid = rte_rand();
	m.tid = p->tid;
	ours_for(p->key.gid, &m);
	uint8_t mad[DPR_MAD_LEN];

	dpr_caps_encode(&m, mad);
	dpr_cm_mad_send(p->key.pi, p->sgid_index, p->key.gid, mad);
	if (p->tries++ > 0)
		caps.st.caps_get_retried++;
	caps.st.caps_get_tx++;
	p->asking = true;
	p->deadline_ms = now + CAPS_TIMEOUT_MS;
}

/* What @p m says the peer can do, as the workers read it: DPR_PEER_SEC_KEY
 * ours to set (a peer's claim of it means nothing), where its key is ours. */
static uint32_t
told_bits(const struct dpr_caps_msg *m)
{
	uint32_t bits = m->caps & ~(uint32_t)DPR_PEER_SEC_KEY;

	if ((bits & (DPR_PEER_SEC_AUTH | DPR_PEER_SEC_ENC)) &&
	    dpr_cm_sec_keyprint_is_ours(m->keyprint))
		bits |= DPR_PEER_SEC_KEY;
	return bits;
}

/* @p p can do @p bits (0: IBA only). */
static void
learn(struct caps_peer *p, uint32_t bits, uint64_t guid, bool answered,
      uint64_t now)
{
	pthread_mutex_lock(&caps.lock);
	p->caps = bits;
	p->node_guid = guid;
	p->known = true;
	p->answered = answered;
	p->asking = false;
	p->tries = 0;
	p->since_ms = now;
	p->refresh_ms = now + CAPS_TTL_MS;
	pthread_mutex_unlock(&caps.lock);
	publish(p);
	if (bits & DPR_PEER_SR)
		caps.st.caps_peer_sr++;
	else
		caps.st.caps_peer_iba++;
}

/* @p p asked again what it runs (once it answered, at most once a
 * second: a forged MAD must not make this box a Get flood). */
static void
ask_again(struct caps_peer *p, uint64_t now)
{
	if (p->asking || now < p->since_ms + CAPS_AGAIN_MS)
		return;
	p->tries = 0;
	send_get(p, now);
}

bool
dpr_cm_caps_auth(uint16_t pi, const uint8_t *gid)
{
	const struct caps_peer *p = caps.ready ? peer_at(pi, gid) : NULL;

	return p != NULL && peer_auth(p);
}

void
dpr_cm_caps_ask_again(uint16_t pi, const uint8_t *gid)
{
	struct caps_peer *p = caps.ready ? peer_at(pi, gid) : NULL;

	if (p != NULL && p->known)
		ask_again(p, dpr_cm_now_ms());
}

bool
dpr_cm_caps_pending(uint16_t pi, const uint8_t *gid, uint8_t sgid_index)
{
	struct caps_key k;
	struct caps_peer *p;

	if (!caps.ready || !(caps.ours & DPR_PEER_CM_AUTH) || policy_none(gid))
		return false;
	key_make(&k, pi, gid);
	p = find(&k);
	if (p == NULL) {
		pthread_mutex_lock(&caps.lock);
		p = add(&k, sgid_index);
		pthread_mutex_unlock(&caps.lock);
		if (p == NULL)
			return false;
		send_get(p, dpr_cm_now_ms());
	}
	return !p->known;
}

bool
dpr_cm_caps_rx(const struct cm_mad *r)
{
	struct dpr_caps_msg m;
	struct caps_key k;
	struct caps_peer *p;
	uint64_t now = dpr_cm_now_ms();
	int rc;

	rc = dpr_caps_decode(r->mad, sizeof(r->mad), &m);
	if (rc > 0)
		return false;
	if (!caps.ready)
		return true;
	if (rc < 0) {
		caps.st.caps_bad++;
		return true;
	}
	key_make(&k, r->port, r->gid);
	p = find(&k);
	if (m.method == DPR_MAD_METHOD_GET) {
		struct dpr_caps_msg a = {
			.method = DPR_MAD_METHOD_GET_RESP,
			.tid = m.tid,
			.node_guid = dpr_cm_node_guid(r->port),
		};
		uint8_t mad[DPR_MAD_LEN], sgid_index = 0;

		ours_for(r->gid, &a);
		caps.st.caps_get_rx++;
		if (dpr_cm_route(r->gid, &sgid_index) != r->port)
			sgid_index = r->gid[10] == 0xff && r->gid[11] == 0xff ? 1 : 0;
		if (m.status != 0) {
			caps.st.caps_bad++;
			return true;
		}
		dpr_caps_encode(&a, mad);
		dpr_cm_mad_send(r->port, sgid_index, r->gid, mad);
		/* what a peer whose MADs are MACed tells without a MAC
		 * changes nothing (anyone can send it as the peer): it is
		 * asked again instead, its answer to our TID counts */
		if (p != NULL && peer_auth(p) && !r->authed) {
			caps.st.caps_unauthenticated++;
			ask_again(p, now);
			return true;
		}
		/* the asker told what it can do: no need to ask it */
		if (p == NULL && caps.n_told >= CAPS_TOLD_MAX) {
			caps.st.caps_table_full++;
		} else if (p == NULL) {
			pthread_mutex_lock(&caps.lock);
			p = add(&k, sgid_index);
			if (p != NULL) {
				p->told = true;
				caps.n_told++;
			}
			pthread_mutex_unlock(&caps.lock);
		}
		if (p != NULL)
			learn(p, told_bits(&m), m.node_guid, true, now);
		return true;
	}
	caps.st.caps_resp_rx++;
	if (p == NULL || !p->asking || m.tid != p->tid) {
		caps.st.caps_resp_unsolicited++;
		return true;
	}
	/* a status: a stack that does not know our class (IBA only) */
	learn(p, m.status != 0 ? 0 : told_bits(&m), m.node_guid, true, now);
	return true;
}

void
dpr_cm_caps_poll(uint64_t now)
{
	struct caps_req q;

	if (!caps.ready)
		return;
	for (int i = 0; i < 256 &&
	     rte_ring_sc_dequeue_elem(caps.req, &q, sizeof(q)) == 0; i++) {
		struct caps_peer *p;

		if (find(&q.key) != NULL)
			continue;       /* asked already (or known meanwhile) */
		pthread_mutex_lock(&caps.lock);
		p = add(&q.key, q.sgid_index);
		pthread_mutex_unlock(&caps.lock);
		if (p != NULL)
			send_get(p, now);
	}
	for (uint32_t i = 0; i < caps.n; i++) {
		struct caps_peer *p = &caps.peer[i];

		if (p->asking && now >= p->deadline_ms) {
			if (p->tries < CAPS_TRIES) {
				send_get(p, now);
				continue;
			}
			caps.st.caps_timeouts++;
			if (p->known) {         /* a refresh: the old answer stands */
				pthread_mutex_lock(&caps.lock);
				p->asking = false;
				p->tries = 0;
				p->refresh_ms = now + CAPS_TTL_MS;
				pthread_mutex_unlock(&caps.lock);
			} else {
				learn(p, 0, 0, false, now);
			}
		} else if (!p->asking && p->known && !p->told &&
			   now >= p->refresh_ms) {
			p->tries = 0;
			send_get(p, now);
		}
	}
}

uint64_t
dpr_cm_caps_next_ms(void)
{
	uint64_t next = UINT64_MAX;

	for (uint32_t i = 0; caps.ready && i < caps.n; i++) {
		const struct caps_peer *p = &caps.peer[i];

		if (p->asking)
			next = RTE_MIN(next, p->deadline_ms);
		else if (!p->told)
			next = RTE_MIN(next, p->refresh_ms);
	}
	if (caps.ready && rte_ring_count(caps.req) > 0)
		next = 0;
	return next;
}

int
dpr_cm_caps_start(const struct dpr_config *conf, int wake_fd, uint32_t sec_bits,
		  const uint8_t keyprint[8])
{
	struct rte_hash_parameters hp = {
		.name = "dpr_peer_caps",
		.entries = CAPS_MAX,
		.key_len = sizeof(struct caps_key),
		.hash_func = rte_jhash,
		.socket_id = SOCKET_ID_ANY,
		/* one writer (the main lcore), readers on every worker */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF,
	};

	caps.h = rte_hash_create(&hp);
	caps.req = rte_ring_create_elem("dpr_caps_req", sizeof(struct caps_req),
					CAPS_REQ_RING, SOCKET_ID_ANY, RING_F_SC_DEQ);
	if (caps.h == NULL || caps.req == NULL) {
		dpr_cm_caps_stop();
		return -ENOMEM;
	}
	caps.wake_fd = wake_fd;
	caps.ours = (dpr_transport_knobs(conf)->selective_repeat == DPR_SRK_OFF ?
		     0 : DPR_PEER_SR) | sec_bits;
	/* with a key, our MADs to a peer of the same key are MACed */
	if (sec_bits != 0)
		caps.ours |= DPR_PEER_CM_AUTH;
	memcpy(caps.keyprint, keyprint, 8);
	caps.sc = dpr_security_conf(conf);
	caps.n = 0;
	memset(&caps.st, 0, sizeof(caps.st));
	__atomic_store_n(&caps.ready, true, __ATOMIC_RELEASE);
	dpr_engine_set_peer_caps(peer_caps);
	return 0;
}

/* Nothing: the worker it runs on is between two polls. */
static int
barrier(void *arg __rte_unused)
{
	return 0;
}

void
dpr_cm_caps_stop(void)
{
	if (caps.ready) {
		/* no worker is inside peer_caps() after its next poll */
		dpr_engine_set_peer_caps(NULL);
		__atomic_store_n(&caps.ready, false, __ATOMIC_RELEASE);
		for (unsigned int wi = 0; wi < dpr_engine_n_workers(); wi++)
			dpr_engine_run_on(wi, barrier, NULL);
	}
	rte_hash_free(caps.h);
	rte_ring_free(caps.req);
	caps.h = NULL;
	caps.req = NULL;
	caps.n = 0;
	caps.n_told = 0;
}

void
dpr_cm_caps_stats(struct rte_tel_data *d)
{
#define _(n) rte_tel_data_add_dict_u64(d, #n, __atomic_load_n(&caps.st.n, __ATOMIC_RELAXED));
	CAPS_STATS(_)
#undef _
	/* (gauges: the peers known or asking, and those of them that told) */
	rte_tel_data_add_dict_u64(d, "caps_peers", __atomic_load_n(&caps.n, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_u64(d, "caps_peers_told",
				  __atomic_load_n(&caps.n_told, __ATOMIC_RELAXED));
}

static void
gid_str(const uint8_t *g, char *buf, size_t len)
{
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };

	if (memcmp(g, v4, 12) == 0)
		inet_ntop(AF_INET, g + 12, buf, (socklen_t)len);
	else
		inet_ntop(AF_INET6, g, buf, (socklen_t)len);
}

/* /dprdma/cm/peers: every peer asked or asking, one line each. */
static int
tel_peers(const char *cmd __rte_unused, const char *params __rte_unused,
	  struct rte_tel_data *d)
{
	uint64_t now = dpr_cm_now_ms();

	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	pthread_mutex_lock(&caps.lock);
	for (uint32_t i = 0; caps.ready && i < caps.n; i++) {
		const struct caps_peer *p = &caps.peer[i];
		char line[RTE_TEL_MAX_STRING_LEN + 32], a[INET6_ADDRSTRLEN];

		gid_str(p->key.gid, a, sizeof(a));
		if (!p->known)
			snprintf(line, sizeof(line), "port %u %s asking (%u sent)",
				 p->key.pi, a, p->tries);
		else
			snprintf(line, sizeof(line), "port %u %s %s (%s %" PRIu64
				 " s ago)%s", p->key.pi, a,
				 p->caps & DPR_PEER_SR ? "selective-repeat" : "iba",
				 p->answered ? "answered" : "no answer",
				 (now - p->since_ms) / 1000,
				 !(p->caps & (DPR_PEER_SEC_AUTH | DPR_PEER_SEC_ENC)) ? "" :
				 (p->caps & DPR_PEER_SEC_KEY) ?
				 ((p->caps & DPR_PEER_SEC_ENC) ? " secure encrypt, our key" :
				  " secure auth, our key") :
				 " secure, another key");
		line[RTE_TEL_MAX_STRING_LEN - 1] = '\0';
		if (rte_tel_data_add_array_string(d, line) != 0)
			break;
	}
	pthread_mutex_unlock(&caps.lock);
	return 0;
}

void
dpr_cm_caps_register_telemetry(void)
{
	rte_telemetry_register_cmd("/dprdma/cm/peers", tel_peers,
				   "peer boxes asked what they speak: selective repeat or IBA only, secure QPs and whose key");
}
