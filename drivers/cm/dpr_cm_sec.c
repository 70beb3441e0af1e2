/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Secure QPs' handshake (doc/security.rst, "Secure QPs"): two QPs that
 * the transports decided to secure (both boxes run [security] with the
 * same pre-shared key, as their DprdmaCaps say) trade a fresh nonce and
 * a fresh X25519 public key each over QP1 in dprdma's vendor class
 * (attribute DprdmaSec), MACed with the host-pair key, and each derives
 * the two keys from both and their X25519 secret (lib/sec) and gives them
 * to its QP's worker, forgetting its private key. Nothing in an offer is
 * secret: the nonces make the keys of this connection other than every
 * earlier one's, the key exchange keeps them from whoever learns the
 * pre-shared key later.
 *
 * Each side sends its offer when its QP asks (at RTR), then again every
 * SEC_RESEND_MS until the peer's offer echoes its nonce, SEC_TRIES times,
 * then the QP goes to ERR (no answer: the peer is gone or holds another
 * key). An offer that does not echo ours is answered at once with ours.
 * An offer for a QP that has not asked yet (its side is slower to reach
 * RTR) is kept, at most SEC_EARLY_MAX of them for SEC_EARLY_MS: anyone
 * can send offers from made-up addresses (an offer needs the key to be
 * MACed right, so it is checked first). An entry lives until its QP goes
 * (DPR_SEC_REQ_END), to answer a peer whose last echo was lost.
 *
 * Runs on the main lcore (the CM's loop); workers ask through a ring.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_log.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "cm_private.h"
#include "dpr_engine.h"
#include "dpr_sec.h"
#include "dpr_transport.h"

#define SEC_MAX 65536                /* handshakes (QPs) at once */
#define SEC_EARLY_MAX 1024           /* of them, offers before their QP asked */
#define SEC_EARLY_MS 5000
#define SEC_RESEND_MS 100
#define SEC_TRIES 30                 /* 3 s without an answer: ERR */
#define SEC_REQ_RING 4096

struct sec_req_elem {
	uint16_t pi;
	uint16_t pad;
	struct dpr_sec_req r;
};

struct hs {
	uint16_t pi;
	bool asked;                  /* our QP asked (else an early offer) */
	bool have_peer;              /* the peer's nonce is known */
	bool confirmed;              /* the peer echoed ours */
	bool installed;
	bool echo_sent;              /* an offer of ours echoed peer_nonce */
	uint8_t mode;
	uint8_t sgid_index;
	uint8_t tries;
	uint32_t wi, lqpn, rqpn, gen;
	union dpr_gid lgid, rgid;
	uint8_t nonce[16], peer_nonce[16];
	struct dpr_sec_eph eph;      /* ours (its private key until install) */
	uint8_t peer_pub[32];
	uint64_t deadline_ms;        /* asked: the next offer; early: expiry */
	TAILQ_ENTRY(hs) link;
};
TAILQ_HEAD(hs_list, hs);

#define SEC_STATS(_) \
	_(sec_offers_tx) \
	_(sec_offers_rx) \
	_(sec_offers_bad_mac) \
	_(sec_offers_mismatch) \
	_(sec_offers_early) \
	_(sec_early_dropped) \
	_(sec_handshakes) \
	_(sec_failed) \
	_(sec_req_dropped)

static struct {
	bool ready;
	uint8_t prk[32];
	uint8_t mac_key[32];            /* the offers' (dpr_sec_mac_key()) */
	uint8_t keyprint[8];
	struct rte_ring *req;
	struct rte_hash *h;
	int wake_fd;
	struct hs *pool;
	/* handshakes under way and early offers (their deadlines run), and
	 * those confirmed, kept only to answer until their QP goes: the
	 * loop's timers look at the first list alone */
	struct hs_list free, pending, done;
	uint32_t n_early;
	struct {
#define _(n) uint64_t n;
		SEC_STATS(_)
#undef _
	} st;
} sec = { .wake_fd = -1 };

static uint32_t
hkey(uint16_t pi, uint32_t lqpn)
{
	return (uint32_t)pi << 24 | (lqpn & 0xffffff);
}

static struct hs *
hs_find(uint16_t pi, uint32_t lqpn)
{
	uint32_t k = hkey(pi, lqpn);
	void *v;

	return rte_hash_lookup_data(sec.h, &k, &v) < 0 ? NULL : v;
}

static struct hs *
hs_new(uint16_t pi, uint32_t lqpn)
{
	struct hs *e = TAILQ_FIRST(&sec.free);
	uint32_t k = hkey(pi, lqpn);

	if (e == NULL)
		return NULL;
	TAILQ_REMOVE(&sec.free, e, link);
	memset(e, 0, sizeof(*e));
	e->pi = pi;
	e->lqpn = lqpn;
	if (rte_hash_add_key_data(sec.h, &k, e) != 0) {
		TAILQ_INSERT_HEAD(&sec.free, e, link);
		return NULL;
	}
	TAILQ_INSERT_TAIL(&sec.pending, e, link);
	return e;
}

/* The peer echoed our nonce (or gave up answering): no more offers. */
static void
hs_confirm(struct hs *e)
{
	if (e->confirmed)
		return;
	TAILQ_REMOVE(&sec.pending, e, link);
	TAILQ_INSERT_TAIL(&sec.done, e, link);
	e->confirmed = true;
}

static void
hs_free(struct hs *e)
{
	uint32_t k = hkey(e->pi, e->lqpn);

	if (!e->asked)
		sec.n_early--;
	rte_hash_del_key(sec.h, &k);
	TAILQ_REMOVE(e->confirmed ? &sec.done : &sec.pending, e, link);
	memset(e->nonce, 0, sizeof(e->nonce));
	dpr_sec_eph_free(&e->eph);
	TAILQ_INSERT_HEAD(&sec.free, e, link);
}

/* ------------------------------------------------------------ the MAD */

/* Our offer (dpr_sec_offer_encode(), dpr_cm_mad.c), MACed, to the peer's
 * QP1. */
static void
send_offer(struct hs *e)
{
	struct dpr_sec_offer o = {
		.tid = rte_rand(),
		.mode = e->mode,
		.echo = e->have_peer,
		.dqpn = e->rqpn,
		.sqpn = e->lqpn,
	};
	uint8_t mad[DPR_MAD_LEN];

	memcpy(o.sgid, e->lgid.raw, 16);
	memcpy(o.dgid, e->rgid.raw, 16);
	memcpy(o.nonce, e->nonce, 16);
	memcpy(o.echo_nonce, e->peer_nonce, 16);
	memcpy(o.pub, e->eph.pub, 32);
	dpr_sec_offer_encode(&o, mad);
	e->echo_sent = e->have_peer;
	dpr_sec_mac(sec.mac_key, mad, DPR_SEC_OFFER_MAC_AT, mad + DPR_SEC_OFFER_MAC_AT);
	dpr_cm_mad_send(e->pi, e->sgid_index, e->rgid.raw, mad);
	sec.st.sec_offers_tx++;
}

/* ------------------------------------------------ keys to the worker */

struct install_arg {
	unsigned int wi;
	uint16_t pi;
	uint32_t lqpn, gen;
	uint8_t mode;
	bool fail;
	struct dpr_sec_key tx, rx;
};

static int
install_on(void *arg)
{
	struct install_arg *a = arg;
	struct dpr_transport *tp = dpr_engine_transport(a->wi, a->pi);

	if (tp == NULL)
		return -ENODEV;
	if (a->fail)
		return dpr_transport_sec_fail(tp, a->lqpn, a->gen,
					      "secure QP handshake: no answer from the "
					      "peer in 3 s (gone, or another pre-shared key)");
	return dpr_transport_sec_install(tp, a->lqpn, a->gen, a->mode, &a->tx, &a->rx);
}

static void fail(struct hs *e);

static void
install(struct hs *e)
{
	struct dpr_sec_end l = { .gid = e->lgid, .qpn = e->lqpn };
	struct dpr_sec_end r = { .gid = e->rgid, .qpn = e->rqpn };
	struct install_arg a = { .wi = e->wi, .pi = e->pi, .lqpn = e->lqpn,
				 .gen = e->gen, .mode = e->mode };
	uint8_t shared[32];
	int rc;

	memcpy(l.nonce, e->nonce, 16);
	memcpy(r.nonce, e->peer_nonce, 16);
	rc = dpr_sec_eph_shared(&e->eph, e->peer_pub, shared);
	if (rc == 0)
		rc = dpr_sec_derive(sec.prk, shared, e->mode, &l, &r, &a.tx, &a.rx);
	memset(shared, 0, sizeof(shared));
	/* forward secrecy: what made the keys goes once they are made */
	dpr_sec_eph_free(&e->eph);
	e->installed = true;
	if (rc != 0) {
		/* (a public key of low order, MACed: only from a holder of
		 * the pre-shared key) */
		fail(e);
		return;
	}
	sec.st.sec_handshakes++;
	dpr_engine_run_on(e->wi, install_on, &a);
	memset(&a, 0, sizeof(a));
}

static void
fail(struct hs *e)
{
	struct install_arg a = { .wi = e->wi, .pi = e->pi, .lqpn = e->lqpn,
				 .gen = e->gen, .fail = true };

	sec.st.sec_failed++;
	dpr_engine_run_on(e->wi, install_on, &a);
}

/* ------------------------------------------------------- the workers */

static void
req_fn(uint16_t pi, const struct dpr_sec_req *r)
{
	struct sec_req_elem q = { .pi = pi, .r = *r };
	uint64_t one = 1;

	if (rte_ring_mp_enqueue_elem(sec.req, &q, sizeof(q)) != 0) {
		__atomic_fetch_add(&sec.st.sec_req_dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	if (write(sec.wake_fd, &one, sizeof(one)) < 0) {
		/* saturated: the main lcore is woken anyway */
	}
}

static void
take_req(const struct sec_req_elem *q, uint64_t now)
{
	const struct dpr_sec_req *r = &q->r;
	struct hs *e = hs_find(q->pi, r->lqpn);

	if (r->op == DPR_SEC_REQ_END) {
		if (e != NULL && e->asked && e->gen == r->gen)
			hs_free(e);
		return;
	}
	if (e != NULL && (e->asked || !dpr_gid_eq(&e->rgid, &r->rgid) ||
			  e->rqpn != r->rqpn || e->mode != r->mode)) {
		/* an earlier handshake of the QPN, or an early offer from
		 * another peer: this one is the QP's now */
		hs_free(e);
		e = NULL;
	}
	if (e == NULL) {
		e = hs_new(q->pi, r->lqpn);
		if (e == NULL) {
			struct hs tmp = { .pi = q->pi, .lqpn = r->lqpn, .gen = r->gen,
					  .wi = r->owner };

			fail(&tmp);
			return;
		}
	} else {
		sec.n_early--;          /* an early offer: now the QP's */
	}
	e->asked = true;
	e->wi = r->owner;
	e->gen = r->gen;
	e->rqpn = r->rqpn;
	e->lgid = r->lgid;
	e->rgid = r->rgid;
	e->mode = r->mode;
	e->sgid_index = r->sgid_index;
	if (RAND_bytes(e->nonce, sizeof(e->nonce)) != 1) {
		for (unsigned int i = 0; i < 16; i += 8) {
			uint64_t x = rte_rand();

			memcpy(e->nonce + i, &x, 8);
		}
	}
	if (dpr_sec_eph_new(&e->eph) != 0) {
		fail(e);
		e->installed = true;
		hs_confirm(e);          /* (kept until END, answering nothing) */
		return;
	}
	e->tries = 1;
	e->deadline_ms = now + SEC_RESEND_MS;
	send_offer(e);
	if (e->have_peer)
		install(e);
}

/* ----------------------------------------------------- offers coming */

bool
dpr_cm_sec_rx(const struct cm_mad *r)
{
	struct dpr_sec_offer o;
	union dpr_gid from, to;
	uint8_t mac[16];
	bool new_nonce;
	struct hs *e;
	int rc;

	rc = dpr_sec_offer_decode(r->mad, sizeof(r->mad), &o);
	if (rc > 0)
		return false;
	if (!sec.ready)
		return true;
	sec.st.sec_offers_rx++;
	dpr_sec_mac(sec.mac_key, r->mad, DPR_SEC_OFFER_MAC_AT, mac);
	if (rc < 0 || CRYPTO_memcmp(mac, r->mad + DPR_SEC_OFFER_MAC_AT, 16) != 0) {
		sec.st.sec_offers_bad_mac++;
		return true;
	}
	memcpy(from.raw, o.sgid, 16);
	memcpy(to.raw, o.dgid, 16);
	if (memcmp(from.raw, r->gid, 16) != 0) {
		sec.st.sec_offers_mismatch++;   /* not from where it says */
		return true;
	}
	e = hs_find(r->port, o.dqpn);
	if (e == NULL) {
		/* our QP has not asked yet: kept for when it does */
		if (sec.n_early >= SEC_EARLY_MAX || (e = hs_new(r->port, o.dqpn)) == NULL) {
			sec.st.sec_early_dropped++;
			return true;
		}
		sec.n_early++;
		sec.st.sec_offers_early++;
		e->rgid = from;
		e->lgid = to;
		e->rqpn = o.sqpn;
		e->mode = o.mode;
		e->deadline_ms = dpr_cm_now_ms() + SEC_EARLY_MS;
	} else if (!dpr_gid_eq(&e->rgid, &from) || e->rqpn != o.sqpn ||
		   e->mode != o.mode || (e->asked && !dpr_gid_eq(&e->lgid, &to))) {
		sec.st.sec_offers_mismatch++;
		return true;
	}
	new_nonce = !e->have_peer || memcmp(e->peer_nonce, o.nonce, 16) != 0 ||
		memcmp(e->peer_pub, o.pub, 32) != 0;
	if (new_nonce && e->installed) {
		/* the peer began again with keys we already use */
		sec.st.sec_offers_mismatch++;
		return true;
	}
	if (new_nonce)
		e->echo_sent = false;
	memcpy(e->peer_nonce, o.nonce, 16);
	memcpy(e->peer_pub, o.pub, 32);
	e->have_peer = true;
	if (!e->asked)
		return true;
	if (o.echo && memcmp(o.echo_nonce, e->nonce, 16) == 0)
		hs_confirm(e);
	/* it lacks ours, or has not heard that we have its: ours (once per
	 * nonce of its, unless it asks again) */
	if (!e->confirmed || !e->echo_sent)
		send_offer(e);
	if (!e->installed)
		install(e);
	return true;
}

/* ------------------------------------------------------ the main loop */

void
dpr_cm_sec_poll(uint64_t now)
{
	struct sec_req_elem q;
	struct hs *e, *next;

	if (!sec.ready)
		return;
	for (int i = 0; i < 256 && rte_ring_sc_dequeue_elem(sec.req, &q, sizeof(q)) == 0; i++)
		take_req(&q, now);
	for (e = TAILQ_FIRST(&sec.pending); e != NULL; e = next) {
		next = TAILQ_NEXT(e, link);
		if (now < e->deadline_ms)
			continue;
		if (!e->asked) {
			hs_free(e);     /* an early offer nobody asked for */
			continue;
		}
		if (e->tries >= SEC_TRIES) {
			if (!e->installed)
				fail(e);
			hs_confirm(e);          /* (kept to answer until END) */
			continue;
		}
		e->tries++;
		e->deadline_ms = now + SEC_RESEND_MS;
		send_offer(e);
	}
}

uint64_t
dpr_cm_sec_next_ms(void)
{
	uint64_t next = UINT64_MAX;
	struct hs *e;

	if (!sec.ready)
		return next;
	if (rte_ring_count(sec.req) > 0)
		return 0;
	TAILQ_FOREACH(e, &sec.pending, link)
		next = RTE_MIN(next, e->deadline_ms);
	return next;
}

/* ------------------------------------------------------ start and stop */

static int
read_psk(const struct dpr_security_conf *c, uint8_t *psk, size_t cap, char *err,
	 size_t errlen)
{
	char buf[512];
	int n;

	if (c->psk_file[0] != '\0') {
		int fd = open(c->psk_file, O_RDONLY | O_CLOEXEC);
		ssize_t got;

		if (fd < 0) {
			snprintf(err, errlen, "[security] psk_file = %s: %s", c->psk_file,
				 strerror(errno));
			return -errno;
		}
		got = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (got < 0)
			got = 0;
		buf[got] = '\0';
		buf[strcspn(buf, "\r\n")] = '\0';
	} else {
		snprintf(buf, sizeof(buf), "%s", c->psk);
	}
	n = dpr_sec_parse_hex(buf, psk, cap);
	memset(buf, 0, sizeof(buf));
	if (n < 0) {
		snprintf(err, errlen, "[security] mode = %s needs psk or psk_file: "
			 "64 hex digits or more, the same on every box (openssl rand "
			 "-hex 32)", c->mode == DPR_SEC_ENCRYPT ? "encrypt" : "auth");
		return -EINVAL;
	}
	return n;
}

int
dpr_cm_sec_start(const struct dpr_config *conf, int wake_fd, uint32_t *caps_bits,
		 uint8_t keyprint[8], char *err, size_t errlen)
{
	const struct dpr_security_conf *c = dpr_security_conf(conf);
	struct rte_hash_parameters hp = {
		.name = "dpr_sec_hs",
		.entries = SEC_MAX,
		.key_len = sizeof(uint32_t),
		.hash_func = rte_jhash,
		.socket_id = SOCKET_ID_ANY,
	};
	uint8_t psk[256], fp[16];
	int n, rc;

	*caps_bits = 0;
	memset(keyprint, 0, 8);
	if (c->mode == DPR_SEC_NONE)
		return 0;
	rc = dpr_sec_init();
	if (rc != 0) {
		snprintf(err, errlen, "[security] mode = %s: no AES-GCM on this CPU "
			 "(ipsec-mb)", c->mode == DPR_SEC_ENCRYPT ? "encrypt" : "auth");
		return rc;
	}
	n = read_psk(c, psk, sizeof(psk), err, errlen);
	if (n < 0)
		return n;
	rc = dpr_sec_psk_prk(psk, (size_t)n, sec.prk);
	memset(psk, 0, sizeof(psk));
	if (rc != 0) {
		snprintf(err, errlen, "[security]: cannot derive keys (OpenSSL's HKDF)");
		return rc;
	}
	rc = dpr_sec_mac_key(sec.prk, sec.mac_key);
	if (rc != 0) {
		snprintf(err, errlen, "[security]: cannot derive keys (OpenSSL's HKDF)");
		return rc;
	}
	/* who holds the same key: a MAC of a fixed message, not the key */
	dpr_sec_mac(sec.mac_key, "dprdma keyprint v1", 18, fp);
	memcpy(sec.keyprint, fp, 8);
	memcpy(keyprint, fp, 8);
	*caps_bits = c->mode == DPR_SEC_ENCRYPT ? DPR_PEER_SEC_ENC : DPR_PEER_SEC_AUTH;
	sec.h = rte_hash_create(&hp);
	sec.req = rte_ring_create_elem("dpr_sec_req", sizeof(struct sec_req_elem),
				       SEC_REQ_RING, SOCKET_ID_ANY, RING_F_SC_DEQ);
	sec.pool = calloc(SEC_MAX, sizeof(*sec.pool));
	if (sec.h == NULL || sec.req == NULL || sec.pool == NULL) {
		dpr_cm_sec_stop();
		snprintf(err, errlen, "[security]: no memory for %u handshakes", SEC_MAX);
		return -ENOMEM;
	}
	TAILQ_INIT(&sec.free);
	TAILQ_INIT(&sec.pending);
	TAILQ_INIT(&sec.done);
	for (uint32_t i = 0; i < SEC_MAX; i++)
		TAILQ_INSERT_TAIL(&sec.free, &sec.pool[i], link);
	sec.n_early = 0;
	sec.wake_fd = wake_fd;
	memset(&sec.st, 0, sizeof(sec.st));
	sec.ready = true;
	dpr_engine_set_sec_req(req_fn);
	return 0;
}

static int
barrier(void *arg __rte_unused)
{
	return 0;
}

void
dpr_cm_sec_stop(void)
{
	if (sec.ready) {
		dpr_engine_set_sec_req(NULL);
		sec.ready = false;
		for (unsigned int wi = 0; wi < dpr_engine_n_workers(); wi++)
			dpr_engine_run_on(wi, barrier, NULL);
	}
	rte_hash_free(sec.h);
	rte_ring_free(sec.req);
	free(sec.pool);
	sec.h = NULL;
	sec.req = NULL;
	sec.pool = NULL;
	memset(sec.prk, 0, sizeof(sec.prk));
	memset(sec.mac_key, 0, sizeof(sec.mac_key));
}

const uint8_t *
dpr_cm_sec_prk(void)
{
	return sec.ready ? sec.prk : NULL;
}

bool
dpr_cm_sec_keyprint_is_ours(const uint8_t kp[8])
{
	return sec.ready && CRYPTO_memcmp(kp, sec.keyprint, 8) == 0;
}

void
dpr_cm_sec_stats(struct rte_tel_data *d)
{
#define _(n) rte_tel_data_add_dict_u64(d, #n, sec.st.n);
	SEC_STATS(_)
#undef _
}
