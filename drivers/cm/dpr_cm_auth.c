/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The CM's MADs between boxes of one key (doc/security.rst, "The CM's
 * MADs"). A MAD this box sends a peer that holds its pre-shared key and
 * takes the trailer (its DprdmaCaps: DPR_PEER_SEC_KEY and
 * DPR_PEER_CM_AUTH) carries 32 bytes after it (dpr_cm_mad.h): a sequence
 * number and an HMAC-SHA-256 under the key of this sender's and
 * receiver's GIDs (dpr_sec_cm_key(): one per direction and address pair).
 * Received:
 *
 * - a trailer that checks: taken (cm_mad.authed), its number marked;
 * - a trailer that does not (forged, another key, bytes changed), or a
 *   number seen or too old (a replay): dropped, counted;
 * - none, from a peer whose MADs carry one: dropped, counted -- a DREQ or
 *   REJ forged on the path would end a secure QP's connection, a REQ,
 *   REP or MRA mislead one -- except dprdma's own class (DprdmaCaps,
 *   DprdmaSec: the capabilities say what the peer is now, and may say it
 *   no longer holds the key, dpr_cm_caps.c decides; the handshake's
 *   offers carry their own MAC). The peer is asked again what it runs: a
 *   box restarted without the key is known as such in a round trip;
 * - none, from anyone else: taken as before (rxe, NICs, boxes without
 *   [security] or with another key).
 *
 * Replays: the receiver keeps each peer's highest number and a 64-bit
 * window behind it. A sender's numbers start from its start time in
 * nanoseconds (CLOCK_REALTIME) and count up, so that a restarted sender
 * goes on above what it sent before; a restarted receiver takes what it
 * is sent next (a replay of a MAD from before its restart names IDs that
 * are gone).
 *
 * The keys of a peer are derived once and kept (AUTH_PEERS of them, the
 * table filled only by MADs we send to peers with our key and MADs with a
 * good trailer); main lcore only.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>
#include <rte_common.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_telemetry.h>

#include "cm_private.h"
#include "dpr_sec.h"

#define AUTH_PEERS 4096

struct auth_key {
	uint8_t peer[16], ours[16];
	uint16_t pi;
	uint16_t pad;
};

struct auth_peer {
	uint8_t tx_key[32];             /* ours -> peer */
	uint8_t rx_key[32];             /* peer -> ours */
	uint64_t rx_top;                /* the highest number taken */
	uint64_t rx_win;                /* bit i: rx_top - i taken */
};

#define AUTH_STATS(_) \
	_(auth_sealed) \
	_(auth_checked) \
	_(auth_bad) \
	_(auth_replay) \
	_(auth_missing) \
	_(auth_table_full)

static struct {
	bool ready;
	uint8_t prk[32];
	uint64_t tx_seq;
	struct rte_hash *h;
	struct auth_peer *peer;
	struct {
#define _(n) uint64_t n;
		AUTH_STATS(_)
#undef _
	} st;
} auth;

static void
key_of(struct auth_key *k, uint16_t pi, const uint8_t *peer, const uint8_t *ours)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->peer, peer, 16);
	memcpy(k->ours, ours, 16);
	k->pi = pi;
}

/* The keys between our GID @p ours and @p peer's on port @p pi, made
 * when @p make; NULL when not (or the table is full). */
static struct auth_peer *
peer_get(uint16_t pi, const uint8_t *peer, const uint8_t *ours, bool make)
{
	struct auth_key k;
	struct auth_peer *p;
	int32_t i;

	key_of(&k, pi, peer, ours);
	i = rte_hash_lookup(auth.h, &k);
	if (i >= 0)
		return &auth.peer[i];
	if (!make)
		return NULL;
	i = rte_hash_add_key(auth.h, &k);
	if (i < 0) {
		auth.st.auth_table_full++;
		return NULL;
	}
	p = &auth.peer[i];
	memset(p, 0, sizeof(*p));
	if (dpr_sec_cm_key(auth.prk, ours, peer, p->tx_key) != 0 ||
	    dpr_sec_cm_key(auth.prk, peer, ours, p->rx_key) != 0) {
		rte_hash_del_key(auth.h, &k);
		return NULL;
	}
	return p;
}

static void
mac_of(const uint8_t key[32], const uint8_t *mad, const uint8_t *trailer,
       uint8_t mac[16])
{
	uint8_t msg[DPR_MAD_LEN + DPR_MAD_AUTH_MAC_AT];

	memcpy(msg, mad, DPR_MAD_LEN);
	memcpy(msg + DPR_MAD_LEN, trailer, DPR_MAD_AUTH_MAC_AT);
	dpr_sec_mac(key, msg, sizeof(msg), mac);
}

void
cm_auth_seal(struct cm_mad *out)
{
	struct auth_peer *p;
	uint8_t ours[16];
	uint64_t seq;

	out->has_auth = false;
	if (!auth.ready || !dpr_cm_caps_auth(out->port, out->gid))
		return;
	cm_port_gid(out->port, out->sgid_index, ours);
	p = peer_get(out->port, out->gid, ours, true);
	if (p == NULL)
		return;         /* (counted) the peer drops it: as a loss */
	seq = ++auth.tx_seq;
	memset(out->auth, 0, DPR_MAD_AUTH_LEN);
	out->auth[0] = DPR_MAD_AUTH_VERSION;
	for (int i = 0; i < 8; i++)
		out->auth[8 + i] = (uint8_t)(seq >> (56 - 8 * i));
	mac_of(p->tx_key, out->mad, out->auth, out->auth + DPR_MAD_AUTH_MAC_AT);
	out->has_auth = true;
	auth.st.auth_sealed++;
}

/* Whether @p seq is new to @p p (and now taken). */
static bool
replay_take(struct auth_peer *p, uint64_t seq)
{
	uint64_t d;

	if (seq > p->rx_top) {
		d = seq - p->rx_top;
		p->rx_win = d >= 64 ? 1 : (p->rx_win << d) | 1;
		p->rx_top = seq;
		return true;
	}
	d = p->rx_top - seq;
	if (d >= 64 || (p->rx_win & (1ull << d)))
		return false;
	p->rx_win |= 1ull << d;
	return true;
}

bool
cm_auth_rx(struct cm_mad *r)
{
	struct auth_peer *p;
	uint8_t mac[16];
	uint64_t seq = 0;

	r->authed = false;
	if (!auth.ready)
		return true;
	if (!r->has_auth) {
		if (!dpr_cm_caps_auth(r->port, r->gid))
			return true;
		/* dprdma's own class decides for itself (see above) */
		if (r->mad[1] == DPR_CAPS_CLASS)
			return true;
		auth.st.auth_missing++;
		dpr_cm_caps_ask_again(r->port, r->gid);
		return false;
	}
	auth.st.auth_checked++;
	p = peer_get(r->port, r->gid, r->dgid, false);
	if (r->auth[0] != DPR_MAD_AUTH_VERSION) {
		auth.st.auth_bad++;
		return false;
	}
	/* the MAC first: a peer's entry is made only for a good one */
	if (p == NULL) {
		uint8_t key[32];

		if (dpr_sec_cm_key(auth.prk, r->gid, r->dgid, key) != 0)
			return false;
		mac_of(key, r->mad, r->auth, mac);
		memset(key, 0, sizeof(key));
	} else {
		mac_of(p->rx_key, r->mad, r->auth, mac);
	}
	if (CRYPTO_memcmp(mac, r->auth + DPR_MAD_AUTH_MAC_AT, 16) != 0) {
		auth.st.auth_bad++;
		return false;
	}
	if (p == NULL && (p = peer_get(r->port, r->gid, r->dgid, true)) == NULL)
		return false;   /* (counted) no room to keep its numbers */
	for (int i = 0; i < 8; i++)
		seq = seq << 8 | r->auth[8 + i];
	if (!replay_take(p, seq)) {
		auth.st.auth_replay++;
		return false;
	}
	r->authed = true;
	return true;
}

int
cm_auth_start(const uint8_t *prk)
{
	struct rte_hash_parameters hp = {
		.name = "dpr_cm_auth",
		.entries = AUTH_PEERS,
		.key_len = sizeof(struct auth_key),
		.hash_func = rte_jhash,
		.socket_id = SOCKET_ID_ANY,
	};
	struct timespec ts;

	memset(&auth.st, 0, sizeof(auth.st));
	if (prk == NULL)
		return 0;
	auth.h = rte_hash_create(&hp);
	auth.peer = calloc(AUTH_PEERS, sizeof(*auth.peer));
	if (auth.h == NULL || auth.peer == NULL) {
		cm_auth_stop();
		return -ENOMEM;
	}
	memcpy(auth.prk, prk, 32);
	clock_gettime(CLOCK_REALTIME, &ts);
	auth.tx_seq = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	auth.ready = true;
	return 0;
}

void
cm_auth_stop(void)
{
	auth.ready = false;
	rte_hash_free(auth.h);
	auth.h = NULL;
	if (auth.peer != NULL)
		memset(auth.peer, 0, AUTH_PEERS * sizeof(*auth.peer));
	free(auth.peer);
	auth.peer = NULL;
	memset(auth.prk, 0, sizeof(auth.prk));
}

void
cm_auth_stats(struct rte_tel_data *d)
{
#define _(n) rte_tel_data_add_dict_u64(d, #n, auth.st.n);
	AUTH_STATS(_)
#undef _
}
