/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The engine: one run-to-completion poll loop per worker lcore, in the
 * shape of DPDK's examples/l2fwd. Each worker owns queue `queue` of every
 * port: receive a burst, classify and answer each frame to the end, hand
 * RoCEv2 frames to the receive stage, flush the TX buffers. The main lcore
 * does control work only.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "dpr_engine.h"
#include "engine_private.h"

RTE_LOG_REGISTER(dpr_logtype_engine, dprdma.engine, INFO);

struct dpr_engine dpr_engine;

/* Empty polls in a row before a yielding worker sleeps. */
#define IDLE_POLLS_BEFORE_SLEEP 8
/* Frames ahead of the one being classified that are prefetched. */
#define PREFETCH_OFFSET 3

unsigned int
dpr_active_mtu(unsigned int eth_mtu)
{
	/* rxe: eth_mtu_int_to_enum() takes RXE_MAX_HDR_LENGTH (80 bytes)
	 * off the netdev MTU, then the largest IB MTU that fits. */
	static const unsigned int ib_mtu[] = { 4096, 2048, 1024, 512, 256 };
	unsigned int i;

	if (eth_mtu < 80)
		return 0;
	for (i = 0; i < RTE_DIM(ib_mtu); i++)
		if (eth_mtu - 80 >= ib_mtu[i])
			return ib_mtu[i];
	return 0;
}

/*
 * Send what the TX buffer holds. What the port refuses (its ring is full)
 * stays in the buffer, in order, and goes first next time: a reliable
 * transport that dropped its own frames here would turn a short stall of
 * the link into timeouts and a go-back-N storm. The buffer's room is the
 * transports' credit: while it is full they are not asked for more, and
 * their frames wait in their own queues (tx_from_transport()).
 * @return true if the buffer has room again.
 */
static inline bool
tx_flush(struct dpr_worker *w, unsigned int pi)
{
	struct dpr_txbuf *tb = &w->tx[pi];
	struct dpr_port_counters *c = &w->ctr[pi];
	uint16_t sent, i;

	if (tb->n == 0 && w->txa[pi] == NULL)
		return true;
	if (unlikely(w->tap[pi] != NULL) && tb->n > tb->kept)
		w->tap[pi](w->tap_state[pi], dpr_engine.ports[pi].port_id, w->queue,
			   &tb->pkts[tb->kept], tb->n - tb->kept, true);
	/* (bytes before the burst: the port may free what it sent) */
	for (i = 0; i < tb->n; i++)
		c->tx_bytes += rte_pktmbuf_pkt_len(tb->pkts[i]);
	if (w->txa[pi] != NULL)
		sent = w->txa[pi](w->txa_state[pi], dpr_engine.ports[pi].port_id,
				  w->queue, tb->pkts, tb->n, w->now);
	else
		sent = rte_eth_tx_burst(dpr_engine.ports[pi].port_id, w->queue,
					tb->pkts, tb->n);
	c->tx_packets += sent;
	if (likely(sent == tb->n)) {
		tb->n = tb->kept = 0;
		return true;
	}
	for (i = sent; i < tb->n; i++)
		c->tx_bytes -= rte_pktmbuf_pkt_len(tb->pkts[i]);
	/* frames kept for the first time (not each refusal of one frame) */
	c->tx_deferred += tb->n - RTE_MAX(sent, tb->kept);
	memmove(tb->pkts, &tb->pkts[sent], (tb->n - sent) * sizeof(tb->pkts[0]));
	tb->n = tb->kept = (uint16_t)(tb->n - sent);
	return tb->n < RTE_DIM(tb->pkts);
}

/* Queue a frame the engine itself answers with (ARP, ICMP) or sends for
 * the neighbour table (requests, frames held for a MAC): dropped and
 * counted if the port keeps refusing frames, as a full link would. */
static inline void
tx_reply(struct dpr_worker *w, unsigned int pi, struct rte_mbuf *m)
{
	struct dpr_txbuf *tb = &w->tx[pi];

	if (unlikely(rte_is_zero_ether_addr(
			&rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->dst_addr))) {
		w->ctr[pi].drop[DPR_DROP_TX_ZERO_MAC]++;
		rte_pktmbuf_free(m);
		return;
	}
	if (tb->n == RTE_DIM(tb->pkts) && !tx_flush(w, pi)) {
		w->ctr[pi].drop[DPR_DROP_TX_FULL]++;
		rte_pktmbuf_free(m);
		return;
	}
	tb->pkts[tb->n++] = m;
}

/* Pass @p m to worker @p to (its SPSC ring from this worker). */
static inline void
handover(struct dpr_worker *w, unsigned int to, struct rte_mbuf *m)
{
	struct rte_ring *r = dpr_engine.workers[to].handover_in[w->index];

	if (rte_ring_sp_enqueue(r, m) != 0) {
		w->handover_drop++;
		rte_pktmbuf_free(m);
		return;
	}
	w->handover_tx++;
}

/* Frames the receive fast path took (one segment each: it takes no
 * other) back to the pool: the direct, unshared ones of the engine's pool
 * in one put, as rte_pktmbuf_free_bulk() would after the checks it makes
 * per frame; any other the ordinary way. @return their bytes (counted in
 * the same pass). */
static inline uint64_t
free_taken(struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mempool *pool = dpr_engine.pool;
	void *put[DPR_MAX_BURST];
	unsigned int k = 0;
	uint64_t bytes = 0;
	uint16_t i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];

		bytes += rte_pktmbuf_pkt_len(m);
		if (likely(m->pool == pool && RTE_MBUF_DIRECT(m) &&
			   rte_mbuf_refcnt_read(m) == 1))
			put[k++] = m;
		else
			rte_pktmbuf_free(m);
	}
	if (k != 0)
		rte_mempool_put_bulk(pool, put, k);
	return bytes;
}

/*
 * Classify and answer frames, and give RoCEv2 ones to the transport of the
 * worker that owns their QP: a QP belongs to one worker for its whole
 * life; a frame that arrives on another worker's queue is handed over.
 * ARP replies are shared, so every worker can reach every peer.
 */
static void
process_frames(struct dpr_worker *w, unsigned int pi, struct rte_mbuf **pkts,
	       uint16_t n, bool handed)
{
	const struct dpr_port *port = &dpr_engine.ports[pi];
	struct dpr_port_counters *c = &w->ctr[pi];
	struct rte_mbuf *roce[DPR_MAX_BURST];
	struct rte_mbuf *dropped[DPR_MAX_BURST];
	const bool several = dpr_engine.n_workers > 1;
	uint16_t i, n_roce = 0, n_drop = 0;
	unsigned int k;

	for (i = 0; i < n && i < PREFETCH_OFFSET; i++)
		rte_prefetch0(rte_pktmbuf_mtod(pkts[i], void *));
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m;
		uint16_t fast;

		/* the usual RC frames of this worker's QPs: matched against
		 * their QP's header template and handled at once, as many in
		 * a row as there are; each is exactly a frame the
		 * classification below would give the transport, and counted
		 * the same. The transport sees frames in their order: those
		 * of the general way before them. */
		if (n_roce != 0) {
			dpr_transport_rx(w->tp[pi], roce, n_roce, w->now);
			n_roce = 0;
		}
		fast = dpr_transport_rx_fast(w->tp[pi], &pkts[i], n - i, w->now);
		if (fast != 0) {
			/* done with: back to the pool, the run at once */
			c->roce_rx_packets += fast;
			c->roce_rx_bytes += free_taken(&pkts[i], fast);
			i += fast;
			if (i == n)
				break;
		}
		m = pkts[i];
		if (i + PREFETCH_OFFSET < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + PREFETCH_OFFSET],
						       void *));
		switch (dpr_rx_classify(port, m, c, &w->neigh[pi])) {
		case DPR_RX_REPLY:
			tx_reply(w, pi, m);
			break;
		case DPR_RX_ROCE:
			if (several && !handed) {
				const struct dpr_tqp *qp = dpr_qpn_lookup(
					dpr_engine.ctx[pi], dpr_wire_dqpn(m));

				if (qp != NULL && dpr_qp_owner(qp) != w->index) {
					handover(w, dpr_qp_owner(qp), m);
					break;
				}
			}
			roce[n_roce++] = m;
			break;
		case DPR_RX_CONSUMED:
			/* a neighbour learnt: the other workers learn it too */
			for (k = 0; several && !handed &&
			     k < dpr_engine.n_workers; k++) {
				struct rte_mbuf *copy;

				if (k == w->index)
					continue;
				copy = rte_pktmbuf_copy(m, dpr_engine.pool, 0,
							UINT32_MAX);
				if (copy != NULL)
					handover(w, k, copy);
			}
			/* fall through */
		case DPR_RX_DROP:
			dropped[n_drop++] = m;
			break;
		}
	}
	/* the RoCE receive stage: the port's transport on this worker */
	if (n_roce != 0)
		dpr_transport_rx(w->tp[pi], roce, n_roce, w->now);
	if (n_drop != 0)
		rte_pktmbuf_free_bulk(dropped, n_drop);
}

static inline uint16_t
rx_port(struct dpr_worker *w, unsigned int pi, uint16_t burst)
{
	const struct dpr_port *port = &dpr_engine.ports[pi];
	struct dpr_port_counters *c = &w->ctr[pi];
	struct rte_mbuf *pkts[DPR_MAX_BURST];
	uint16_t n, i;

	n = rte_eth_rx_burst(port->port_id, w->queue, pkts, burst);
	if (n == 0)
		return 0;
	w->rx_bursts++;
	if (unlikely(w->tap[pi] != NULL))
		w->tap[pi](w->tap_state[pi], port->port_id, w->queue, pkts, n, false);
	c->rx_packets += n;
	for (i = 0; i < n; i++)
		c->rx_bytes += rte_pktmbuf_pkt_len(pkts[i]);
	process_frames(w, pi, pkts, n, false);
	return n;
}

/* Frames other workers handed over: classified again, never passed on. */
static uint16_t
rx_handover(struct dpr_worker *w)
{
	uint16_t total = 0;
	unsigned int from;

	for (from = 0; from < dpr_engine.n_workers; from++) {
		struct rte_mbuf *pkts[DPR_MAX_BURST];
		unsigned int n, i;

		if (w->handover_in[from] == NULL)
			continue;
		n = rte_ring_sc_dequeue_burst(w->handover_in[from], (void **)pkts,
					      DPR_MAX_BURST, NULL);
		for (i = 0; i < n; i++)
			process_frames(w, dpr_engine.port_index[pkts[i]->port],
				       &pkts[i], 1, true);
		w->handover_rx += n;
		total += (uint16_t)n;
	}
	return total;
}

/* Nanoseconds since the engine started at TSC @p tsc: no system call. */
static inline uint64_t
tsc_ns(uint64_t tsc)
{
	return (uint64_t)(((unsigned __int128)(tsc - dpr_engine.start_tsc) *
			   dpr_engine.ns_mul) >> 32);
}

static inline uint64_t
engine_ns(void)
{
	return tsc_ns(rte_rdtsc());
}

/* Frames to our own MAC (loopback QPs) leave the TX buffer for the loop. */
static void
hairpin(struct dpr_worker *w, unsigned int pi, uint16_t from)
{
	struct dpr_txbuf *tb = &w->tx[pi];
	const struct rte_ether_addr *mac = &dpr_engine.ports[pi].mac;
	uint16_t i, kept = from;

	for (i = from; i < tb->n; i++) {
		struct rte_mbuf *m = tb->pkts[i];
		const struct rte_ether_hdr *eh =
			rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

		if (!rte_is_same_ether_addr(&eh->dst_addr, mac)) {
			tb->pkts[kept++] = m;
			continue;
		}
		/* (room was made: tx_from_transport()) */
		RTE_ASSERT(w->loop[pi].n < RTE_DIM(w->loop[pi].pkts));
		m->port = dpr_engine.ports[pi].port_id;
		w->loop[pi].pkts[w->loop[pi].n++] = m;
		w->ctr[pi].loopback_packets++;
	}
	tb->n = kept;
}

/* The looped frames, received as if from the port. */
static uint16_t
rx_loop(struct dpr_worker *w)
{
	uint16_t total = 0;
	unsigned int pi;

	for (pi = 0; pi < dpr_engine.n_ports; pi++) {
		struct rte_mbuf *pkts[RTE_DIM(w->loop[0].pkts)];
		uint16_t n = w->loop[pi].n, i;

		if (n == 0)
			continue;
		memcpy(pkts, w->loop[pi].pkts, n * sizeof(pkts[0]));
		w->loop[pi].n = 0;
		for (i = 0; i < n; i += DPR_MAX_BURST)
			process_frames(w, pi, &pkts[i],
				       (uint16_t)RTE_MIN(DPR_MAX_BURST, n - i), false);
		total += n;
	}
	return total;
}

/* Frames the transports built go out with the replies, as many as the TX
 * buffer (and, for frames to ourselves, the loop) has room for; the rest
 * wait in the transport's queue, which stops its requesters when full. */
static inline void
tx_from_transport(struct dpr_worker *w, unsigned int pi)
{
	struct dpr_txbuf *tb = &w->tx[pi];

	for (;;) {
		uint16_t from, room, n;

		if (tb->n == RTE_DIM(tb->pkts) && !tx_flush(w, pi))
			return;
		from = tb->n;
		room = (uint16_t)(RTE_DIM(tb->pkts) - tb->n);
		if (unlikely(w->hairpin))
			room = (uint16_t)RTE_MIN(room, RTE_DIM(w->loop[pi].pkts) -
						 w->loop[pi].n);
		n = room == 0 ? 0 : dpr_transport_tx(w->tp[pi], &tb->pkts[from], room);
		tb->n += n;
		if (unlikely(w->hairpin) && n != 0)
			hairpin(w, pi, from);
		if (n < room || tb->n < RTE_DIM(tb->pkts))
			return;
	}
}

static void
run_commands(struct dpr_worker *w)
{
	struct dpr_cmd *c = NULL;

	while (rte_ring_sc_dequeue(w->cmd, (void **)&c) == 0) {
		uint32_t queued = 0;

		c->rc = c->fn(w, c);
		/* hand the result back, unless the asker gave up waiting */
		if (!__atomic_compare_exchange_n(&c->state, &queued, 1, false,
						 __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
			free(c);
	}
}

/*
 * Address resolution for the transports (ARP, RFC 826; neighbour
 * discovery, RFC 4861): the MAC of a GID from this worker's neighbour
 * table, or -EAGAIN while it asks (dpr_neigh.c); the table tells the
 * transport when it knows (neigh_changed()).
 */
static int
resolve(void *arg, const union dpr_gid *gid, struct rte_ether_addr *mac)
{
	struct dpr_resolve_arg *ra = arg;
	struct dpr_worker *w = ra->w;
	const struct dpr_port *port = &dpr_engine.ports[ra->pi];

	if (dpr_port_owns(port, gid)) {
		/* a QP of this box: frames loop back inside the worker */
		*mac = port->mac;
		w->hairpin = true;
		return 0;
	}
	if (dpr_gid_is_ipv4(gid) ? port->ip == 0 : gid->raw[0] == 0xff)
		return -EAFNOSUPPORT;   /* no address to ask from; a group */
	return dpr_neigh_resolve(&w->neigh[ra->pi], gid, mac);
}

/* A frame built before its destination's MAC was known: the neighbour
 * table keeps it until it is. */
static void
hold(void *arg, const union dpr_gid *gid, struct rte_mbuf *m)
{
	struct dpr_resolve_arg *ra = arg;

	dpr_neigh_hold(&ra->w->neigh[ra->pi], gid, m);
}

static void
neigh_emit(void *arg, struct rte_mbuf *m)
{
	struct dpr_resolve_arg *ra = arg;

	tx_reply(ra->w, ra->pi, m);
}

/* A neighbour got its MAC or a new one: this worker's QPs to it take it
 * (the other workers learn it from their own copy of the ARP reply). */
static void
neigh_changed(void *arg, const union dpr_gid *ip, const struct rte_ether_addr *mac)
{
	struct dpr_resolve_arg *ra = arg;

	if (ra->w->tp[ra->pi] != NULL)
		dpr_transport_path_update(ra->w->tp[ra->pi], ip, mac);
}

static dpr_peer_caps_fn peer_caps_fn;

void
dpr_engine_set_peer_caps(dpr_peer_caps_fn fn)
{
	__atomic_store_n(&peer_caps_fn, fn, __ATOMIC_RELEASE);
}

/* Does the box at @p gid speak selective repeat, ...: whoever asks peers
 * says (dpr_engine_set_peer_caps()); nobody asking, IBA alone. */
static int
peer_caps(void *arg, const union dpr_gid *gid, uint8_t sgid_index)
{
	struct dpr_resolve_arg *ra = arg;
	dpr_peer_caps_fn fn = __atomic_load_n(&peer_caps_fn, __ATOMIC_ACQUIRE);

	if (fn == NULL)
		return -ENOTSUP;
	return fn(ra->pi, gid, sgid_index);
}

static const struct dpr_neigh_ops neigh_ops = {
	.emit = neigh_emit,
	.changed = neigh_changed,
};

static int
worker_main(void *arg)
{
	struct dpr_worker *w = arg;
	const unsigned int n_ports = dpr_engine.n_ports;
	const uint16_t burst = dpr_engine_conf(&dpr_engine.conf)->burst;
	const bool yield = dpr_engine_conf(&dpr_engine.conf)->idle == DPR_IDLE_YIELD;
	const struct timespec nap = {
		.tv_nsec = dpr_engine_conf(&dpr_engine.conf)->idle_sleep_us * 1000L,
	};
	struct rte_rcu_qsbr *const qv = dpr_quiesce_v;
	unsigned int idle_run = 0, pi;

	ENGINE_LOG(INFO, "worker on lcore %u polls queue %u of %u port(s)",
		   w->lcore_id, w->queue, n_ports);
	rte_rcu_qsbr_thread_register(qv, w->index);
	rte_rcu_qsbr_thread_online(qv, w->index);
	w->loop_tsc = rte_rdtsc();
	while (!dpr_engine.quit) {
		const uint64_t tsc = rte_rdtsc();
		uint32_t got = 0;
		bool busy = false;

		/* in no burst here: a port's memory may go (dpr_quiesce.c) */
		rte_rcu_qsbr_quiescent(qv, w->index);

		/* the last loop's cycles, busy or idle (its sleep included) */
		if (w->loop_busy)
			w->busy_tsc += tsc - w->loop_tsc;
		else
			w->idle_tsc += tsc - w->loop_tsc;
		w->loop_tsc = tsc;
		w->polls++;
		w->now = tsc_ns(tsc);
		for (pi = 0; pi < n_ports; pi++)
			got += rx_port(w, pi, burst);
		if (dpr_engine.n_workers > 1)
			got += rx_handover(w);
		if (unlikely(w->hairpin))
			got += rx_loop(w);
		/* work clients posted (drivers/shim, drivers/client) goes to
		 * the transports before they poll: it leaves in this round */
		for (unsigned int k = 0; k < dpr_engine.n_pollers; k++)
			busy |= dpr_engine.pollers[k].fn(dpr_engine.pollers[k].arg,
							 w->index, w->now);
		/* requesters, responses not yet sent, expired timers */
		for (pi = 0; pi < n_ports; pi++) {
			dpr_neigh_poll(&w->neigh[pi]);
			dpr_transport_poll(w->tp[pi], w->now);
			tx_from_transport(w, pi);
			busy |= dpr_transport_busy(w->tp[pi]);
		}
		if (unlikely(rte_ring_count(w->cmd) != 0))
			run_commands(w);
		/* what a port refused waits for the next loop, not a nap */
		for (pi = 0; pi < n_ports; pi++)
			busy |= !tx_flush(w, pi) || w->tx[pi].n != 0;
		w->loop_busy = got != 0 || busy;
		if (w->loop_busy) {
			idle_run = 0;
			continue;
		}
		w->idle_polls++;
		if (yield && ++idle_run >= IDLE_POLLS_BEFORE_SLEEP) {
			w->sleeps++;
			rte_rcu_qsbr_thread_offline(qv, w->index);
			nanosleep(&nap, NULL);
			rte_rcu_qsbr_thread_online(qv, w->index);
		}
	}
	rte_rcu_qsbr_thread_offline(qv, w->index);
	rte_rcu_qsbr_thread_unregister(qv, w->index);
	return 0;
}

unsigned int
dpr_engine_n_workers(void)
{
	return dpr_engine.n_workers;
}

uint16_t
dpr_engine_n_ports(void)
{
	return dpr_engine.n_ports;
}

/* Port @p p's GID table, as rxe's (DESIGN.md): 0 the link-local address
 * (the MAC's EUI-64), 1 the IPv4-mapped address, 2 the IPv6 address if
 * the port has one. @return how many. */
static unsigned int
port_gids(const struct dpr_port *p, union dpr_gid gid[3])
{
	unsigned int n = 2;

	gid[0] = p->ip6_ll;
	dpr_gid_from_ipv4(&gid[1], p->ip);
	if (p->has_ip6)
		gid[n++] = p->ip6;
	return n;
}

int
dpr_engine_port_info(uint16_t pi, struct dpr_port_info *out)
{
	const struct dpr_port *p;
	struct rte_eth_link link;
	union dpr_gid g[3];

	if (pi >= dpr_engine.n_ports)
		return -ENODEV;
	p = &dpr_engine.ports[pi];
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", p->name);
	out->port_id = p->port_id;
	out->mac = p->mac;
	out->ip = p->ip;
	memcpy(out->ip6_ll, p->ip6_ll.raw, 16);
	if (p->has_ip6)
		memcpy(out->ip6, p->ip6.raw, 16);
	out->n_gids = (uint8_t)port_gids(p, g);
	for (unsigned int i = 0; i < out->n_gids; i++)
		memcpy(out->gid[i], g[i].raw, 16);
	memcpy(&out->node_guid, p->ip6_ll.raw + 8, 8);
	out->mtu = p->mtu;
	out->up = p->started;
	if (rte_eth_link_get_nowait(p->port_id, &link) == 0) {
		out->speed_mbps = link.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ?
			0 : link.link_speed;
		/* virtual devices report no link state worth trusting for
		 * the port's state: a started port is up; the link itself
		 * is the shim's port events' (memif's follows its peer) */
		out->link_up = link.link_status == RTE_ETH_LINK_UP;
	}
	return 0;
}

struct dpr_verbs_ctx *
dpr_engine_verbs(uint16_t pi)
{
	return pi < dpr_engine.n_ports ? dpr_engine.ctx[pi] : NULL;
}

struct dpr_transport *
dpr_engine_transport(unsigned int wi, uint16_t pi)
{
	if (wi >= dpr_engine.n_workers || pi >= dpr_engine.n_ports)
		return NULL;
	return dpr_engine.workers[wi].tp[pi];
}

static rte_spinlock_t verbs_lock = RTE_SPINLOCK_INITIALIZER;

void
dpr_engine_verbs_lock(void)
{
	rte_spinlock_lock(&verbs_lock);
}

void
dpr_engine_verbs_unlock(void)
{
	rte_spinlock_unlock(&verbs_lock);
}

struct run_on_arg {
	int (*fn)(void *arg);
	void *arg;
};

static int
cmd_run_on(struct dpr_worker *w __rte_unused, struct dpr_cmd *c)
{
	const struct run_on_arg *a = c->ptr[0];

	return a->fn(a->arg);
}

int
dpr_engine_cmd_submit(unsigned int wi, struct dpr_cmd *c, unsigned int timeout_ms)
{
	const bool patient = timeout_ms == 0;
	struct rte_ring *ring;
	struct timespec now, until;
	uint32_t queued = 0;

	if (!dpr_engine.running || wi >= dpr_engine.n_workers ||
	    (ring = dpr_engine.workers[wi].cmd) == NULL) {
		free(c);
		return -ENODEV;
	}
	while (rte_ring_mp_enqueue(ring, c) != 0) {
		const struct timespec ms = { .tv_nsec = 1000000 };

		if (!patient || dpr_engine.quit) {
			free(c);
			return patient ? -ENODEV : -EBUSY;
		}
		nanosleep(&ms, NULL);
	}
	/* the worker runs commands every loop, until it stops */
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	do {
		const struct timespec us = { .tv_nsec = 20000 };

		if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == 1)
			return 0;
		nanosleep(&us, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (patient || now.tv_sec < until.tv_sec ||
		 (now.tv_sec == until.tv_sec && now.tv_nsec < until.tv_nsec));
	/* given up: the worker frees it when it gets to it */
	if (__atomic_compare_exchange_n(&c->state, &queued, 2, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return -ETIMEDOUT;
	return 0;
}

int
dpr_engine_run_on(unsigned int wi, int (*fn)(void *arg), void *arg)
{
	struct run_on_arg a = { .fn = fn, .arg = arg };
	struct dpr_cmd *c = calloc(1, sizeof(*c));
	int rc;

	if (c == NULL)
		return -ENOMEM;
	c->fn = cmd_run_on;
	c->ptr[0] = &a;
	/* @a lives on this stack: patient */
	rc = dpr_engine_cmd_submit(wi, c, 0);
	if (rc != 0)
		return rc;
	rc = c->rc;
	free(c);
	return rc;
}

/* dpr_engine_call(): the command and the copy of its argument, in one
 * allocation the worker frees whole if the caller gave up. */
struct call_cmd {
	struct dpr_cmd c;
	int (*fn)(void *arg);
	uint8_t data[];
};

static int
cmd_call(struct dpr_worker *w __rte_unused, struct dpr_cmd *c)
{
	struct call_cmd *cc = (struct call_cmd *)c;

	return cc->fn(cc->data);
}

int
dpr_engine_call(unsigned int wi, int (*fn)(void *arg), void *arg, size_t size,
		unsigned int timeout_ms)
{
	struct call_cmd *cc = calloc(1, sizeof(*cc) + size);
	int rc;

	if (cc == NULL)
		return -ENOMEM;
	cc->c.fn = cmd_call;
	cc->fn = fn;
	memcpy(cc->data, arg, size);
	rc = dpr_engine_cmd_submit(wi, &cc->c, timeout_ms);
	if (rc != 0)
		return rc;
	memcpy(arg, cc->data, size);
	rc = cc->c.rc;
	free(cc);
	return rc;
}

uint64_t
dpr_engine_now_ns(void)
{
	return engine_ns();
}

static int
cmd_set_tap(struct dpr_worker *w, struct dpr_cmd *c)
{
	uint16_t pi = (uint16_t)c->u;

	w->tap[pi] = (dpr_tap_fn)(uintptr_t)c->ptr[0];
	w->tap_state[pi] = c->ptr[1];
	return 0;
}

int
dpr_engine_set_tap(uint16_t pi, dpr_tap_fn fn, void *state)
{
	unsigned int wi;
	int rc;

	if (pi >= dpr_engine.n_ports)
		return -EINVAL;
	for (wi = 0; wi < dpr_engine.n_workers; wi++) {
		struct dpr_cmd *c = calloc(1, sizeof(*c));

		if (c == NULL)
			return -ENOMEM;
		c->fn = cmd_set_tap;
		c->ptr[0] = (void *)(uintptr_t)fn;
		c->ptr[1] = state;
		c->u = pi;
		rc = dpr_engine_cmd_submit(wi, c, 5000);
		if (rc != 0)
			return rc;
		free(c);
	}
	return 0;
}

int
dpr_engine_start(const struct dpr_config *conf,
		 const struct dpr_engine_hooks *hooks, char *err, size_t errlen)
{
	struct dpr_engine *e = &dpr_engine;
	unsigned int lcore, pool_size;
	uint32_t data_room;
	uint16_t port_id, max_mtu = 0;
	int ret;

	memset(e, 0, sizeof(*e));
	e->conf = *conf;
	e->start_tsc = rte_rdtsc();
	e->ns_mul = (uint64_t)(((unsigned __int128)1000000000ull << 32) /
			       rte_get_tsc_hz());

	RTE_LCORE_FOREACH_WORKER(lcore) {
		struct dpr_worker *w = &e->workers[e->n_workers];

		w->lcore_id = lcore;
		w->index = e->n_workers;
		w->queue = (uint16_t)e->n_workers;
		e->n_workers++;
	}
	if (e->n_workers == 0) {
		snprintf(err, errlen, "no worker lcore: give the EAL at least two "
			 "lcores ([eal] lcores = 0-1, or -l 0-1), the lowest "
			 "being the main (control) lcore");
		return -EINVAL;
	}

	RTE_ETH_FOREACH_DEV(port_id) {
		if (e->n_ports == DPR_MAX_PORTS) {
			snprintf(err, errlen, "more than %d ports: dprdmad drives "
				 "at most %d", DPR_MAX_PORTS, DPR_MAX_PORTS);
			return -EINVAL;
		}
		if (dpr_port_conf(conf, e->n_ports)->mtu > max_mtu)
			max_mtu = dpr_port_conf(conf, e->n_ports)->mtu;
		e->n_ports++;
	}
	if (e->n_ports == 0) {
		snprintf(err, errlen, "no ports: give the EAL a device ([eal] vdev "
			 "= net_af_packet0,iface=eth1 or --vdev ..., or a PCI "
			 "device with [eal] allow / -a)");
		return -EINVAL;
	}

	pool_size = dpr_port_pool_size(conf, e->n_ports, e->n_workers);
	data_room = RTE_PKTMBUF_HEADROOM +
		RTE_MAX((uint32_t)RTE_MBUF_DEFAULT_DATAROOM,
			dpr_frame_len(max_mtu));
	e->pool = rte_pktmbuf_pool_create("dpr_pkt", pool_size, 256, 0,
					  (uint16_t)data_room, rte_socket_id());
	if (e->pool == NULL) {
		snprintf(err, errlen, "cannot create a pool of %u packet buffers "
			 "(%u bytes each): %s; give the EAL more memory ([eal] "
			 "memory) or set [engine] mbufs lower", pool_size,
			 data_room, rte_strerror(rte_errno));
		return -ENOMEM;
	}

	e->n_ports = 0;
	RTE_ETH_FOREACH_DEV(port_id) {
		struct dpr_port *p = &e->ports[e->n_ports];

		ret = dpr_port_setup(p, port_id, dpr_port_conf(conf, e->n_ports),
				     (uint16_t)e->n_workers, e->pool, err, errlen);
		e->n_ports++;
		if (ret != 0) {
			dpr_engine_stop();
			return ret;
		}
		switch (dpr_engine_conf(conf)->tx_payload) {
		case DPR_TXP_AUTO:
			p->zero_copy_min = p->tx_copies ? 0 :
					   dpr_engine_conf(conf)->zero_copy;
			break;
		case DPR_TXP_ATTACH:
			p->zero_copy_min = dpr_engine_conf(conf)->zero_copy;
			break;
		case DPR_TXP_COPY:
			p->zero_copy_min = 0;
			break;
		}
		if (p->ip == 0)
			ENGINE_LOG(WARNING, "port %u (%s) has no IPv4 address: "
				   "set [port%u] ip; it will drop everything",
				   port_id, p->name, e->n_ports - 1);
	}

	/* a verbs device per port; on each worker a transport per port */
	for (unsigned int pi = 0; pi < e->n_ports; pi++) {
		e->ctx[pi] = dpr_verbs_create(NULL);
		if (e->ctx[pi] == NULL) {
			snprintf(err, errlen, "out of memory for port %u's objects", pi);
			dpr_engine_stop();
			return -ENOMEM;
		}
	}
	for (unsigned int i = 0; i < e->n_workers; i++) {
		struct dpr_worker *w = &e->workers[i];
		const struct dpr_transport_knobs *tk = dpr_transport_knobs(conf);
		char name[RTE_RING_NAMESIZE];

		snprintf(name, sizeof(name), "dpr_cmd_%u", i);
		w->cmd = rte_ring_create(name, 64, rte_socket_id(), RING_F_SC_DEQ);
		for (unsigned int pi = 0; pi < e->n_ports && w->cmd != NULL; pi++) {
			const struct dpr_port *p = &e->ports[pi];
			struct dpr_transport_conf tc = {
				.ctx = e->ctx[pi],
				.pool = e->pool,
				.mac = p->mac,
				.resolve = resolve,
				.hold = hold,
				.resolve_arg = &w->rarg[pi],
				.owner = i,
				.zero_copy_min = p->zero_copy_min,
				.port_mtu = dpr_active_mtu(p->mtu),
				.max_unacked = tk->max_inflight != 0 ? tk->max_inflight :
					DPR_MAX_INFLIGHT_DEFAULT,
				.min_unacked = tk->min_inflight,
				.rto_min_ns = tk->rto_min_us == 0 ? UINT32_MAX :
					tk->rto_min_us * 1000u,
				.sr = tk->selective_repeat == DPR_SRK_OFF ?
					DPR_SR_OFF : DPR_SR_PEER,
				.peer_caps = peer_caps,
				.peer_arg = &w->rarg[pi],
				.sr_hold_max = tk->sr_hold,
			};

			w->rarg[pi].w = w;
			w->rarg[pi].pi = (uint16_t)pi;
			if (dpr_neigh_init(&w->neigh[pi], p, e->pool, &w->ctr[pi],
					   &w->now, &neigh_ops, &w->rarg[pi]) != 0)
				break;
			tc.n_gids = port_gids(p, tc.gid);
			w->tp[pi] = dpr_transport_create(&tc);
			if (w->tp[pi] == NULL)
				break;
			if (hooks != NULL && hooks->port_adapter != NULL) {
				ret = hooks->port_adapter(hooks->arg, (uint16_t)pi, i,
							  e->pool, &w->txa[pi],
							  &w->txa_state[pi]);
				if (ret != 0) {
					snprintf(err, errlen, "port %u: its adapter "
						 "cannot start: %s", pi,
						 rte_strerror(-ret));
					dpr_engine_stop();
					return ret;
				}
			}
		}
		if (w->cmd == NULL || w->tp[e->n_ports - 1] == NULL) {
			snprintf(err, errlen, "cannot set up worker %u: %s", i,
				 rte_strerror(rte_errno));
			dpr_engine_stop();
			return -ENOMEM;
		}
	}

	for (unsigned int pi = 0; pi < e->n_ports; pi++)
		e->port_index[e->ports[pi].port_id] = (uint8_t)pi;
	/* a single-producer single-consumer ring for each pair of workers */
	for (unsigned int to = 0; e->n_workers > 1 && to < e->n_workers; to++)
		for (unsigned int from = 0; from < e->n_workers; from++) {
			char name[RTE_RING_NAMESIZE];

			if (from == to)
				continue;
			snprintf(name, sizeof(name), "dpr_ho_%u_%u", from, to);
			e->workers[to].handover_in[from] = rte_ring_create(name, 4096,
				rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (e->workers[to].handover_in[from] == NULL) {
				snprintf(err, errlen, "cannot create handover rings: %s",
					 rte_strerror(rte_errno));
				dpr_engine_stop();
				return -ENOMEM;
			}
		}

	for (unsigned int k = 0; hooks != NULL && k < DPR_ENGINE_MAX_POLLERS &&
	     hooks->pollers[k].fn != NULL; k++)
		e->pollers[e->n_pollers++] = hooks->pollers[k];
	ret = dpr_quiesce_init();
	if (ret != 0) {
		snprintf(err, errlen, "cannot make the workers' QSBR variable: %s",
			 strerror(-ret));
		dpr_engine_stop();
		return ret;
	}
	e->running = true;
	for (unsigned int i = 0; i < e->n_workers; i++) {
		ret = rte_eal_remote_launch(worker_main, &e->workers[i],
					    e->workers[i].lcore_id);
		if (ret != 0) {
			snprintf(err, errlen, "cannot launch the worker on lcore "
				 "%u: %s", e->workers[i].lcore_id,
				 rte_strerror(-ret));
			dpr_engine_stop();
			return ret;
		}
	}
	return 0;
}

void
dpr_engine_stop(void)
{
	struct dpr_engine *e = &dpr_engine;
	unsigned int i, pi;

	e->quit = true;
	if (e->running) {
		rte_eal_mp_wait_lcore();
		e->running = false;
	}
	/* Frames still buffered belong to no one once the workers are gone. */
	for (i = 0; i < e->n_workers; i++)
		for (pi = 0; pi < e->n_ports; pi++) {
			struct dpr_txbuf *tb = &e->workers[i].tx[pi];

			if (tb->n != 0)
				rte_pktmbuf_free_bulk(tb->pkts, tb->n);
			tb->n = 0;
		}
	/* frames an adapter still holds go out before the ports close */
	for (i = 0; i < e->n_workers; i++)
		for (pi = 0; pi < e->n_ports; pi++)
			if (e->workers[i].txa[pi] != NULL && e->ports[pi].started)
				e->workers[i].txa[pi](e->workers[i].txa_state[pi],
						      e->ports[pi].port_id,
						      e->workers[i].queue, NULL, 0,
						      UINT64_MAX);
	/* Objects go before the ports; counters stay for the summary. */
	for (i = 0; i < e->n_workers; i++) {
		struct dpr_worker *w = &e->workers[i];

		for (pi = 0; pi < e->n_ports; pi++) {
			dpr_transport_destroy(w->tp[pi]);
			w->tp[pi] = NULL;
			dpr_neigh_fini(&w->neigh[pi]);
		}
		for (unsigned int from = 0; from < DPR_MAX_WORKERS; from++) {
			struct rte_mbuf *m;

			if (w->handover_in[from] == NULL)
				continue;
			while (rte_ring_dequeue(w->handover_in[from], (void **)&m) == 0)
				rte_pktmbuf_free(m);
			rte_ring_free(w->handover_in[from]);
			w->handover_in[from] = NULL;
		}
		if (w->cmd != NULL) {
			struct dpr_cmd *c = NULL;

			/* nobody will run them now */
			while (rte_ring_dequeue(w->cmd, (void **)&c) == 0) {
				uint32_t queued = 0;

				c->rc = -ESHUTDOWN;
				if (!__atomic_compare_exchange_n(&c->state, &queued, 1,
								 false, __ATOMIC_RELEASE,
								 __ATOMIC_ACQUIRE))
					free(c);
			}
			rte_ring_free(w->cmd);
			w->cmd = NULL;
		}
	}
	for (pi = 0; pi < e->n_ports; pi++) {
		dpr_verbs_destroy(e->ctx[pi]);
		e->ctx[pi] = NULL;
		dpr_port_close(&e->ports[pi]);
	}
	if (e->pool != NULL) {
		rte_mempool_free(e->pool);
		e->pool = NULL;
	}
}

static const char *
ip_str(const struct dpr_port *p, char *buf, size_t len)
{
	char a[INET_ADDRSTRLEN];

	if (p->ip == 0) {
		snprintf(buf, len, "none");
		return buf;
	}
	inet_ntop(AF_INET, &p->ip, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, p->prefix_len);
	return buf;
}

/* "fe80::...[, fd77::1/64]": the port's IPv6 addresses */
static const char *
ip6_str(const struct dpr_port *p, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, p->ip6_ll.raw, a, sizeof(a));
	if (!p->has_ip6) {
		snprintf(buf, len, "%s", a);
		return buf;
	}
	inet_ntop(AF_INET6, p->ip6.raw, b, sizeof(b));
	snprintf(buf, len, "%s %s/%u", a, b, p->ip6_prefix_len);
	return buf;
}

void
dpr_engine_print_setup(FILE *f)
{
	const struct dpr_engine *e = &dpr_engine;
	char mac[RTE_ETHER_ADDR_FMT_SIZE], ip[32], ip6[2 * INET6_ADDRSTRLEN + 8];
	unsigned int i;

	fprintf(f, "dprdmad %s: %u port(s), %u worker(s) on lcore(s)",
		DPR_VERSION, e->n_ports, e->n_workers);
	for (i = 0; i < e->n_workers; i++)
		fprintf(f, "%s%u", i ? "," : " ", e->workers[i].lcore_id);
	fprintf(f, ", idle=%s, config %s\n",
		dpr_engine_conf(&e->conf)->idle == DPR_IDLE_BUSY ? "busy" : "yield",
		e->conf.path[0] ? e->conf.path : "built-in default");
	for (i = 0; i < e->n_ports; i++) {
		const struct dpr_port *p = &e->ports[i];
		struct rte_eth_link link;

		rte_ether_format_addr(mac, sizeof(mac), &p->mac);
		memset(&link, 0, sizeof(link));
		rte_eth_link_get_nowait(p->port_id, &link);
		fprintf(f, "  dprdma%u = port %u %s: MAC %s, IPv4 %s, IPv6 %s, "
			"MTU %u (RoCE active MTU %u), %u queue(s), link %s\n", i,
			p->port_id, p->name, mac, ip_str(p, ip, sizeof(ip)),
			ip6_str(p, ip6, sizeof(ip6)), p->mtu, dpr_active_mtu(p->mtu), p->nb_queues,
			link.link_status ? "up" : "down");
	}
	/* the prefix the EAL runs with (EAL options given by hand after
	 * '--' override the configuration's): its runtime folder's name */
	fprintf(f, "  telemetry: dpdk-telemetry.py -f %s, commands under "
		"/dprdma/\n", strrchr(rte_eal_get_runtime_dir(), '/') + 1);
	fflush(f);
}
