/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Neighbours: the MACs of RoCE peers, learnt from ARP (RFC 826) and
 * neighbour discovery (RFC 4861), asked for when something needs one.
 * Each worker keeps its own table per port, so the data path shares
 * nothing; ARP replies and advertisements reach every worker.
 *
 * An entry is INCOMPLETE from the first time a transport asks for it
 * until an answer comes, VALID after. While something waits for an
 * INCOMPLETE entry (a transport asked within DPR_NEIGH_WANT_NS, or frames
 * are held for it) the request goes again with a backoff: at once, then
 * after 100 ms, doubling up to 1 s. Frames built before the MAC was known
 * (ACKs, READ responses, datagrams) are held, a bounded number per
 * neighbour and per table, and leave with the MAC written in when the
 * answer comes; held frames the neighbour did not answer for within
 * DPR_NEIGH_HOLD_NS are dropped and counted, as Linux drops its
 * unresolved queue. A VALID entry whose MAC changes (gratuitous ARP, an
 * unsolicited advertisement, a reply with another MAC) takes the new one,
 * at most once per DPR_NEIGH_LOCKTIME_NS (Linux's locktime: a flapping
 * or hostile sender cannot make every QP rebuild its headers per frame).
 * Whenever an entry gets a MAC or a new one, the table's owner is told
 * (the engine tells its transport, whose QPs to that address take it).
 *
 * The table is a chained hash over a fixed array (DPR_NEIGH_MAX entries);
 * when it is full the next entry round the array without held frames
 * makes room (a QP keeps the MAC it has; it only misses later changes).
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_malloc.h>

#include "engine_private.h"

static inline uint32_t
gid_hash(const union dpr_gid *g, uint32_t mask)
{
	uint64_t h = ((uint64_t)g->w[0] << 32 | g->w[1]) * 0x9e3779b97f4a7c15ull ^
		     ((uint64_t)g->w[2] << 32 | g->w[3]) * 0xc2b2ae3d27d4eb4full;

	return (uint32_t)(h >> 40) & mask;
}

int
dpr_neigh_init(struct dpr_neigh_table *nt, const struct dpr_port *port,
	       struct rte_mempool *pool, struct dpr_port_counters *ctr,
	       const uint64_t *clock, const struct dpr_neigh_ops *ops, void *arg)
{
	memset(nt, 0, sizeof(*nt));
	nt->e = calloc(DPR_NEIGH_MAX, sizeof(*nt->e));
	nt->bucket = calloc(DPR_NEIGH_BUCKETS, sizeof(*nt->bucket));
	nt->hold = calloc(DPR_NEIGH_HOLD_MAX, sizeof(*nt->hold));
	if (nt->e == NULL || nt->bucket == NULL || nt->hold == NULL) {
		dpr_neigh_fini(nt);
		return -ENOMEM;
	}
	TAILQ_INIT(&nt->waiting);
	nt->port = port;
	nt->pool = pool;
	nt->ctr = ctr;
	nt->clock = clock;
	if (ops != NULL)
		nt->ops = *ops;
	nt->arg = arg;
	return 0;
}

void
dpr_neigh_fini(struct dpr_neigh_table *nt)
{
	uint32_t i;

	for (i = 0; nt->hold != NULL && i < nt->n_hold; i++)
		rte_pktmbuf_free(nt->hold[i].m);
	free(nt->e);
	free(nt->bucket);
	free(nt->hold);
	memset(nt, 0, sizeof(*nt));
}

static inline uint32_t
idx_of(const struct dpr_neigh_table *nt, const struct dpr_neigh *n)
{
	return (uint32_t)(n - nt->e);
}

struct dpr_neigh *
dpr_neigh_find(const struct dpr_neigh_table *nt, const union dpr_gid *ip)
{
	uint32_t i;

	if (nt == NULL || nt->e == NULL)
		return NULL;
	for (i = nt->bucket[gid_hash(ip, DPR_NEIGH_BUCKETS - 1)]; i != 0;
	     i = nt->e[i - 1].chain)
		if (dpr_gid_eq(&nt->e[i - 1].ip, ip))
			return &nt->e[i - 1];
	return NULL;
}

static void
unchain(struct dpr_neigh_table *nt, struct dpr_neigh *n)
{
	uint32_t *pp = &nt->bucket[gid_hash(&n->ip, DPR_NEIGH_BUCKETS - 1)];

	while (*pp != 0 && *pp != idx_of(nt, n) + 1)
		pp = &nt->e[*pp - 1].chain;
	if (*pp != 0)
		*pp = n->chain;
	if (n->on_wait)
		TAILQ_REMOVE(&nt->waiting, n, wait_link);
	memset(n, 0, sizeof(*n));
	nt->n--;
}

/* A free entry for @p ip (new, INCOMPLETE). Entries are taken in order
 * and only ever freed to be taken again at once, so below capacity the
 * next one is free; at capacity the next one round the array that holds
 * no frames makes room. */
static struct dpr_neigh *
entry_new(struct dpr_neigh_table *nt, const union dpr_gid *ip)
{
	struct dpr_neigh *n = NULL;
	uint32_t b, k;

	if (nt->n == DPR_NEIGH_MAX) {
		for (k = 0; k < DPR_NEIGH_MAX && n == NULL; k++) {
			struct dpr_neigh *v = &nt->e[nt->victim++ % DPR_NEIGH_MAX];

			if (v->held == 0)
				n = v;
		}
		if (n == NULL)
			return NULL;
		unchain(nt, n);
		nt->ctr->neigh_evicted++;
	} else {
		n = &nt->e[nt->n];
	}
	n->ip = *ip;
	n->state = DPR_NEIGH_INCOMPLETE;
	b = gid_hash(ip, DPR_NEIGH_BUCKETS - 1);
	n->chain = nt->bucket[b];
	nt->bucket[b] = idx_of(nt, n) + 1;
	nt->n++;
	return n;
}

/* Ask for @p n's MAC now: an ARP request or a neighbour solicitation. */
static void
ask(struct dpr_neigh_table *nt, struct dpr_neigh *n, uint64_t now)
{
	struct rte_mbuf *m = dpr_neigh_request(nt->pool, nt->port, &n->ip);
	uint64_t wait = DPR_NEIGH_RETRY_NS << RTE_MIN(n->tries, 4u);

	n->asked = now;
	n->ask_at = now + RTE_MIN(wait, DPR_NEIGH_RETRY_MAX_NS);
	if (n->tries < UINT8_MAX)
		n->tries++;
	if (m == NULL || nt->ops.emit == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	if (dpr_gid_is_ipv4(&n->ip))
		nt->ctr->arp_request_tx++;
	else
		nt->ctr->nd_solicit_tx++;
	nt->ops.emit(nt->arg, m);
}

static void
wait_on(struct dpr_neigh_table *nt, struct dpr_neigh *n)
{
	if (!n->on_wait) {
		n->on_wait = true;
		TAILQ_INSERT_TAIL(&nt->waiting, n, wait_link);
	}
	if (n->ask_at < nt->next_due)
		nt->next_due = n->ask_at;
}

int
dpr_neigh_resolve(struct dpr_neigh_table *nt, const union dpr_gid *ip,
		  struct rte_ether_addr *mac)
{
	const uint64_t now = *nt->clock;
	struct dpr_neigh *n = dpr_neigh_find(nt, ip);

	if (n != NULL && n->state == DPR_NEIGH_VALID) {
		*mac = n->mac;
		return 0;
	}
	if (n == NULL) {
		n = entry_new(nt, ip);
		if (n == NULL)
			return -ENOBUFS;
	}
	/* someone wants it: ask at once unless a request is under way
	 * (a new want after a quiet spell starts the backoff again) */
	if (now >= n->wanted_until && n->held == 0)
		n->tries = 0;
	n->wanted_until = now + DPR_NEIGH_WANT_NS;
	if (n->tries == 0 || now >= n->ask_at)
		ask(nt, n, now);
	wait_on(nt, n);
	return -EAGAIN;
}

/* @p m leaves for @p n's MAC (known now). */
static void
release(struct dpr_neigh_table *nt, const struct dpr_neigh *n, struct rte_mbuf *m)
{
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);

	eh->dst_addr = n->mac;
	nt->ctr->neigh_released++;
	nt->ops.emit(nt->arg, m);
}

void
dpr_neigh_hold(struct dpr_neigh_table *nt, const union dpr_gid *ip,
	       struct rte_mbuf *m)
{
	struct dpr_neigh *n = dpr_neigh_find(nt, ip);

	if (n == NULL) {
		struct rte_ether_addr mac;

		/* nobody asked yet: ask (the frame waits for the answer) */
		if (dpr_neigh_resolve(nt, ip, &mac) != -EAGAIN ||
		    (n = dpr_neigh_find(nt, ip)) == NULL) {
			nt->ctr->drop[DPR_DROP_TX_UNRESOLVED]++;
			rte_pktmbuf_free(m);
			return;
		}
	}
	if (n->state == DPR_NEIGH_VALID && nt->ops.emit != NULL) {
		release(nt, n, m);
		return;
	}
	if (nt->n_hold == DPR_NEIGH_HOLD_MAX || n->held == DPR_NEIGH_HOLD_PER) {
		/* the newest goes: what is held is the start of a sequence
		 * the peer can take in order once it is known */
		nt->ctr->drop[DPR_DROP_TX_UNRESOLVED]++;
		rte_pktmbuf_free(m);
		return;
	}
	if (n->held == 0)
		n->held_since = *nt->clock;
	n->held++;
	nt->hold[nt->n_hold].m = m;
	nt->hold[nt->n_hold].ni = idx_of(nt, n);
	nt->n_hold++;
	nt->ctr->neigh_held++;
	wait_on(nt, n);
}

/* The frames held for @p n: sent (@p send) or dropped, the rest kept in
 * their order. */
static void
unhold(struct dpr_neigh_table *nt, struct dpr_neigh *n, bool send)
{
	const uint32_t ni = idx_of(nt, n);
	uint32_t i, kept = 0;

	for (i = 0; i < nt->n_hold; i++) {
		if (nt->hold[i].ni != ni) {
			nt->hold[kept++] = nt->hold[i];
			continue;
		}
		if (send) {
			release(nt, n, nt->hold[i].m);
		} else {
			nt->ctr->drop[DPR_DROP_TX_UNRESOLVED]++;
			rte_pktmbuf_free(nt->hold[i].m);
		}
	}
	nt->n_hold = kept;
	n->held = 0;
}

bool
dpr_neigh_learn(struct dpr_neigh_table *nt, const union dpr_gid *ip,
		const struct rte_ether_addr *mac, bool create)
{
	struct dpr_neigh *n;
	uint64_t now;

	if (nt == NULL || nt->e == NULL || rte_is_zero_ether_addr(mac) ||
	    rte_is_multicast_ether_addr(mac))
		return false;
	now = *nt->clock;
	n = dpr_neigh_find(nt, ip);
	if (n == NULL) {
		if (!create || (n = entry_new(nt, ip)) == NULL)
			return false;
	} else if (n->state == DPR_NEIGH_VALID) {
		if (rte_is_same_ether_addr(&n->mac, mac))
			return false;
		/* a new MAC for a known neighbour: not more often than once
		 * per locktime */
		if (now - n->changed < DPR_NEIGH_LOCKTIME_NS) {
			nt->ctr->neigh_change_locked++;
			return false;
		}
		nt->ctr->neigh_changed++;
	}
	n->mac = *mac;
	n->state = DPR_NEIGH_VALID;
	n->changed = now;
	n->tries = 0;
	if (n->on_wait) {
		n->on_wait = false;
		TAILQ_REMOVE(&nt->waiting, n, wait_link);
	}
	if (n->held != 0)
		unhold(nt, n, nt->ops.emit != NULL);
	if (nt->ops.changed != NULL)
		nt->ops.changed(nt->arg, &n->ip, &n->mac);
	return true;
}

void
dpr_neigh_run(struct dpr_neigh_table *nt)
{
	const uint64_t now = *nt->clock;
	struct dpr_neigh *n, *next;
	uint64_t due = UINT64_MAX;

	if (now < nt->next_due)
		return;
	for (n = TAILQ_FIRST(&nt->waiting); n != NULL; n = next) {
		next = TAILQ_NEXT(n, wait_link);
		/* frames nobody answered for in time go (the transports'
		 * timers send them again) */
		if (n->held != 0 && now - n->held_since >= DPR_NEIGH_HOLD_NS)
			unhold(nt, n, false);
		if (n->held == 0 && now >= n->wanted_until) {
			/* nothing waits any more: stop asking */
			n->on_wait = false;
			TAILQ_REMOVE(&nt->waiting, n, wait_link);
			continue;
		}
		if (now >= n->ask_at)
			ask(nt, n, now);
		due = RTE_MIN(due, n->ask_at);
		if (n->held != 0)
			due = RTE_MIN(due, n->held_since + DPR_NEIGH_HOLD_NS);
	}
	nt->next_due = due;
}

bool
dpr_port_owns(const struct dpr_port *port, const union dpr_gid *ip)
{
	if (dpr_gid_is_ipv4(ip))
		return port->ip != 0 && dpr_gid_to_ipv4(ip) == port->ip;
	return dpr_gid_eq(ip, &port->ip6_ll) ||
		(port->has_ip6 && dpr_gid_eq(ip, &port->ip6));
}

struct rte_mbuf *
dpr_neigh_request(struct rte_mempool *pool, const struct dpr_port *port,
		  const union dpr_gid *ip)
{
	if (dpr_gid_is_ipv4(ip))
		return port->ip == 0 ? NULL :
			dpr_wire_build_arp(pool, &port->mac, port->ip, NULL,
					   dpr_gid_to_ipv4(ip));
	/* RFC 4861 7.2.2: from an address of ours, the one of the target's
	 * scope where we have it */
	return dpr_wire_build_ns(pool, &port->mac,
				 port->has_ip6 && !dpr_gid_is_link_local(ip) ?
				 &port->ip6 : &port->ip6_ll, ip);
}
