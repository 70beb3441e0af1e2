/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The RDMA CM's indexes and its bound on half-open connections.
 *
 * IDs are found without a walk of them all (a box of 10,000 connections
 * walked 10,000 IDs for every REQ, bind and listen): by the port they are
 * bound to (listeners, IDs that bound an address), and by the peer's
 * communication ID (a REQ or SIDR_REQ sent again finds the ID it made).
 * Each index is a table of max_ids chains; a chain holds the IDs whose
 * key falls there, and callers check the key itself, as before.
 *
 * A REQ (or SIDR_REQ) makes a passive ID that is half-open until its
 * connection is established or ends. A listener holds at most [cm]
 * max_backlog of them, and one source address at most [cm]
 * half_open_per_source across the box. (rdma_listen()'s backlog is no
 * bound, as in Linux's RDMA CM over InfiniBand and RoCE, where only iWARP
 * takes it: programs pass 3 or 10 and expect bursts of thousands.) Past
 * either, the request is dropped, not rejected: a
 * REQ flood from forged sources gets no answer to reflect, and a real
 * peer sends its REQ again after its response timeout, as a TCP client
 * does its SYN when a listener's queue is full. Counted
 * (req_dropped_backlog, req_dropped_source) and logged at most
 * DPR_RL_BURST times a second.
 *
 * A source address also holds at most [cm] connections_per_source passive
 * IDs -- its connections to this box's listeners, each a QP of a program
 * here -- from its REQ until the program lets the ID go (time-wait does
 * not count). Past that a REQ is rejected (REJ, no resources): the source
 * made its connections, so it is no forged one, and its program hears at
 * once why rdma_connect() failed instead of timing out.
 */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <rte_common.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_log.h>

#include "cm_private.h"
#include "dpr_ratelimit.h"
#include "dpr_wire.h"

static struct {
	struct cm_id **bound, **remote;     /* chains, max_ids of each */
	/* source GID -> its half-open IDs (low 32 bits of the data) and
	 * its passive IDs (high 32) */
	struct rte_hash *src;
	uint32_t n_half_open, n_sources;     /* (read by telemetry) */
	struct dpr_ratelimit log_rl;
} ix;

static inline uint32_t
bound_slot(uint16_t ps, uint16_t port_n)
{
	return rte_jhash_1word((uint32_t)ps << 16 | port_n, 0) & (cm.max_ids - 1);
}

static inline uint32_t
remote_slot(uint32_t remote_id)
{
	return rte_jhash_1word(remote_id, 0) & (cm.max_ids - 1);
}

int
cm_index_start(void)
{
	struct rte_hash_parameters hp = {
		.name = "dpr_cm_half_open",
		.entries = RTE_MAX(cm.max_ids, 64u),
		.key_len = 16,
		.hash_func = rte_jhash,
		.socket_id = SOCKET_ID_ANY,
	};

	ix.bound = calloc(cm.max_ids, sizeof(*ix.bound));
	ix.remote = calloc(cm.max_ids, sizeof(*ix.remote));
	ix.src = rte_hash_create(&hp);
	ix.n_half_open = ix.n_sources = 0;
	if (ix.bound == NULL || ix.remote == NULL || ix.src == NULL) {
		cm_index_stop();
		return -ENOMEM;
	}
	return 0;
}

void
cm_index_stop(void)
{
	free(ix.bound);
	free(ix.remote);
	rte_hash_free(ix.src);
	ix.bound = ix.remote = NULL;
	ix.src = NULL;
}

struct cm_id *
cm_bound_chain(uint16_t ps, uint16_t port_n)
{
	return ix.bound == NULL ? NULL : ix.bound[bound_slot(ps, port_n)];
}

struct cm_id *
cm_remote_chain(uint32_t remote_id)
{
	return ix.remote == NULL ? NULL : ix.remote[remote_slot(remote_id)];
}

void
cm_index_bound(struct cm_id *id)
{
	struct cm_id **head;

	cm_index_unbound(id);
	head = &ix.bound[bound_slot(id->ps, id->src.port)];
	id->bound_key = (uint32_t)id->ps << 16 | id->src.port;
	id->bnext = *head;
	*head = id;
	id->in_bound = true;
}

void
cm_index_unbound(struct cm_id *id)
{
	struct cm_id **p;

	if (!id->in_bound)
		return;
	p = &ix.bound[bound_slot((uint16_t)(id->bound_key >> 16),
				 (uint16_t)id->bound_key)];
	while (*p != id)
		p = &(*p)->bnext;
	*p = id->bnext;
	id->in_bound = false;
}

void
cm_index_remote(struct cm_id *id)
{
	struct cm_id **head;

	if (id->in_remote)
		return;
	head = &ix.remote[remote_slot(id->remote_id)];
	id->remote_key = id->remote_id;
	id->rnext = *head;
	*head = id;
	id->in_remote = true;
}

static void
unremote(struct cm_id *id)
{
	struct cm_id **p;

	if (!id->in_remote)
		return;
	p = &ix.remote[remote_slot(id->remote_key)];
	while (*p != id)
		p = &(*p)->rnext;
	*p = id->rnext;
	id->in_remote = false;
}

/* A GID as the source table's key: rte_jhash reads it a word at a time,
 * so it is copied to a word-aligned place. */
struct src_key {
	uint32_t w[4];
};

static struct src_key
src_key(const uint8_t *gid)
{
	struct src_key k;

	memcpy(k.w, gid, sizeof(k.w));
	return k;
}

/* @p gid's half-open IDs (low 32 bits) and passive IDs (high 32). */
static uint64_t
src_counts(const uint8_t *gid)
{
	const struct src_key k = src_key(gid);
	void *v;

	return rte_hash_lookup_data(ix.src, &k, &v) >= 0 ? (uint64_t)(uintptr_t)v : 0;
}

static uint32_t
src_count(const uint8_t *gid)
{
	return (uint32_t)src_counts(gid);
}

/* @p gid's half-open IDs moved by @p half, its passive IDs by @p conns;
 * the half-open sources gauge kept. */
static void
src_add(const uint8_t *gid, int half, int conns)
{
	const struct src_key k = src_key(gid);
	const uint64_t was = src_counts(gid);
	const uint32_t h = (uint32_t)((int)(uint32_t)was + half);
	const uint32_t c = (uint32_t)((int)(uint32_t)(was >> 32) + conns);
	const uint64_t n = (uint64_t)c << 32 | h;

	if ((uint32_t)was != 0 && h == 0)
		__atomic_store_n(&ix.n_sources, ix.n_sources - 1, __ATOMIC_RELAXED);
	else if ((uint32_t)was == 0 && h != 0)
		__atomic_store_n(&ix.n_sources, ix.n_sources + 1, __ATOMIC_RELAXED);
	/* (a key fails only past max_ids: an entry per passive ID) */
	if (n == 0)
		rte_hash_del_key(ix.src, &k);
	else
		rte_hash_add_key_data(ix.src, &k, (void *)(uintptr_t)n);
}

bool
cm_conn_quota_full(const uint8_t *gid)
{
	uint32_t missed, n;

	if (cm.conf.connections_per_source == 0 ||
	    (n = (uint32_t)(src_counts(gid) >> 32)) < cm.conf.connections_per_source)
		return false;
	cm.st.req_rejected_source++;
	if (dpr_ratelimit(&ix.log_rl, &missed)) {
		char a[64];

		dpr_gid_ntop((const union dpr_gid *)gid, a, sizeof(a));
		CM_LOG(NOTICE, "request from %s rejected: it holds [cm] "
		       "connections_per_source (%u) connections%s", a, n,
		       missed != 0 ? " (and more: see req_rejected_source)" : "");
	}
	return true;
}

void
cm_conn_quota_end(struct cm_id *id)
{
	if (!id->counted)
		return;
	id->counted = false;
	src_add(id->half_open_src, 0, -1);
}

bool
cm_half_open_admit(const struct cm_id *lid, const uint8_t *gid)
{
	const char *why = NULL;
	uint32_t missed, n;

	if (lid->n_half_open >= cm.conf.max_backlog) {
		cm.st.req_dropped_backlog++;
		why = "the listener holds [cm] max_backlog";
		n = lid->n_half_open;
	} else if ((n = src_count(gid)) >= cm.conf.half_open_per_source) {
		cm.st.req_dropped_source++;
		why = "its source has [cm] half_open_per_source";
	}
	if (why == NULL)
		return true;
	if (dpr_ratelimit(&ix.log_rl, &missed)) {
		char a[64];

		dpr_gid_ntop((const union dpr_gid *)gid, a, sizeof(a));
		CM_LOG(NOTICE, "request from %s to port %u dropped: %s (%u) requests "
		       "not yet established%s", a, ntohs(lid->src.port), why, n,
		       missed != 0 ? " (and more: see req_dropped_*)" : "");
	}
	return false;
}

void
cm_half_open_begin(struct cm_id *id, struct cm_id *lid, const uint8_t *gid)
{
	memcpy(id->half_open_src, gid, 16);
	id->listener = lid->local_id;
	id->half_open = true;
	id->counted = true;
	lid->n_half_open++;
	__atomic_store_n(&ix.n_half_open, ix.n_half_open + 1, __ATOMIC_RELAXED);
	src_add(gid, 1, 1);
}

void
cm_half_open_end(struct cm_id *id)
{
	struct cm_id *lid;

	if (!id->half_open)
		return;
	id->half_open = false;
	lid = cm_id_by_local(id->listener);
	if (lid != NULL && lid->n_half_open > 0)
		lid->n_half_open--;
	__atomic_store_n(&ix.n_half_open, ix.n_half_open - 1, __ATOMIC_RELAXED);
	src_add(id->half_open_src, -1, 0);
}

uint32_t
cm_half_open_now(uint32_t *sources)
{
	*sources = __atomic_load_n(&ix.n_sources, __ATOMIC_RELAXED);
	return __atomic_load_n(&ix.n_half_open, __ATOMIC_RELAXED);
}

void
cm_index_forget(struct cm_id *id)
{
	cm_half_open_end(id);
	cm_conn_quota_end(id);
	cm_index_unbound(id);
	unremote(id);
}
