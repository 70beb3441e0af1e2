/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * A worker's loop, in the shape of DPDK's examples/l2fwd: each worker owns
 * queue `queue` of every port; receive a burst, classify and answer each
 * frame to the end, hand RoCEv2 frames to the transport, run the pollers
 * the drivers plugged in (the shim's doorbells, the built-in client, the
 * CM's QP1), the transports' timers and sends, the commands the main
 * lcore queued, flush the TX buffers; nap when idle (idle = yield). And
 * what the transports and neighbour tables call back into.
 */

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

#include "dpr_engine.h"
#include "engine_private.h"

/* Empty polls in a row before a yielding worker sleeps. */
#define IDLE_POLLS_BEFORE_SLEEP 8
/* Frames ahead of the one being classified that are prefetched. */
#define PREFETCH_OFFSET 3

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
int
dpr_worker_resolve(void *arg, const union dpr_gid *gid, struct rte_ether_addr *mac)
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
void
dpr_worker_hold(void *arg, const union dpr_gid *gid, struct rte_mbuf *m)
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

static dpr_sec_req_fn sec_req_fn;

void
dpr_engine_set_sec_req(dpr_sec_req_fn fn)
{
	__atomic_store_n(&sec_req_fn, fn, __ATOMIC_RELEASE);
}

/* A secure QP wants keys, or went: whoever runs the handshakes hears it
 * (dpr_engine_set_sec_req()); nobody, and the QP waits until its ACK
 * timeout ends it. */
void
dpr_worker_sec_req(void *arg, const struct dpr_sec_req *r)
{
	struct dpr_resolve_arg *ra = arg;
	dpr_sec_req_fn fn = __atomic_load_n(&sec_req_fn, __ATOMIC_ACQUIRE);

	if (fn != NULL)
		fn(ra->pi, r);
}

static dpr_peer_caps_fn peer_caps_fn;

void
dpr_engine_set_peer_caps(dpr_peer_caps_fn fn)
{
	__atomic_store_n(&peer_caps_fn, fn, __ATOMIC_RELEASE);
}

/* Does the box at @p gid speak selective repeat, ...: whoever asks peers
 * says (dpr_engine_set_peer_caps()); nobody asking, IBA alone. */
int
dpr_worker_peer_caps(void *arg, const union dpr_gid *gid, uint8_t sgid_index)
{
	struct dpr_resolve_arg *ra = arg;
	dpr_peer_caps_fn fn = __atomic_load_n(&peer_caps_fn, __ATOMIC_ACQUIRE);

	if (fn == NULL)
		return -ENOTSUP;
	return fn(ra->pi, gid, sgid_index);
}

const struct dpr_neigh_ops dpr_worker_neigh_ops = {
	.emit = neigh_emit,
	.changed = neigh_changed,
};

/* Work a moment ago (within [engine] idle_spin_us): the answer to it (a
 * reply, an ACK, the client's next post) comes soon more often than not,
 * and a napping worker pays a wake-up and a trip through the scheduler
 * for it. So poll on, handing the CPU between polls to whoever shares it
 * (a program polling its CQ yields too: libdprdma's poll_yield). A yield
 * that comes back after SPIN_LONG_YIELD_NS found a thread that does not
 * yield in turn (a program busy with its own work): spinning beside it
 * waits out its time slices (two CPU hogs beside ib_write_lat: 2,000 us
 * a round trip against 12 us napping), while a napping worker is woken
 * ahead of it. Then the spin stops and stays off for a while: 0.2 ms,
 * twice as long each time until SPIN_SHORT_RUN yields in a row come back
 * at once (a CPU hog beside the worker: about one yield in four is long;
 * two yielding boxes and their programs alone on 2 CPUs: one in 1,000),
 * up to a second. False when the spin stops. */
#define SPIN_LONG_YIELD_NS 50000ull
#define SPIN_BACKOFF_MIN_NS 200000ull
#define SPIN_BACKOFF_MAX_NS 1000000000ull
#define SPIN_SHORT_RUN 256

static bool
spin_yield(struct dpr_worker *w)
{
	const uint64_t t0 = dpr_engine_ns();

	w->spin_yields++;
	sched_yield();
	if (likely(dpr_engine_ns() - t0 < SPIN_LONG_YIELD_NS)) {
		if (++w->spin_short_run == SPIN_SHORT_RUN)
			w->spin_backoff_ns = 0;
		return true;
	}
	w->spin_cuts++;
	w->spin_short_run = 0;
	w->spin_backoff_ns = w->spin_backoff_ns == 0 ? SPIN_BACKOFF_MIN_NS :
			     RTE_MIN(w->spin_backoff_ns * 2, SPIN_BACKOFF_MAX_NS);
	w->spin_resume_ns = w->now + w->spin_backoff_ns;
	return false;
}

/* How long the next nap is (@p ts): @p nap_ns, or less where a timer of
 * the transports (a retransmission, a paced QP's tokens, a DCQCN stage)
 * is due sooner -- it would fire up to a nap late. False when one is due
 * already: no nap. */
static bool
nap_length(struct dpr_worker *w, uint64_t nap_ns, struct timespec *ts)
{
	uint64_t first = UINT64_MAX;
	unsigned int pi;

	for (pi = 0; pi < dpr_engine.n_ports; pi++)
		first = RTE_MIN(first, dpr_transport_next_timer_before(w->tp[pi],
								       w->now + nap_ns));
	if (first != UINT64_MAX) {
		if (first <= w->now)
			return false;
		nap_ns = first - w->now;
		w->timer_naps++;
	}
	ts->tv_sec = (time_t)(nap_ns / 1000000000ull);
	ts->tv_nsec = (long)(nap_ns % 1000000000ull);
	return true;
}

/* A yielding worker's nap: @p nap long, or until a command comes (the
 * main lcore's requests for clients -- making a QP, moving it to RTS --
 * would each wait out a nap otherwise), a client posts (the pollers'
 * nap hooks tell their clients that the worker naps, and look once more
 * for work after: then it does not nap) or a frame comes on a link that
 * says so (dpr_rxwake.c). */
static const struct timespec rx_settle = { .tv_nsec = 5000 };

static void
nap_until_woken(struct dpr_worker *w, const struct timespec *nap,
		struct rte_rcu_qsbr *qv)
{
	struct pollfd pf[2 + DPR_MAX_PORTS];
	int slot_of[DPR_MAX_PORTS];     /* a port's entry in pf, or -1 */
	unsigned int k, n = 0, npf = 0, pi;
	bool stay = false, frames = false;
	uint64_t v;

	if (w->wake_fd < 0) {
		rte_rcu_qsbr_thread_offline(qv, w->index);
		nanosleep(nap, NULL);
		rte_rcu_qsbr_thread_online(qv, w->index);
		return;
	}
	pf[npf++] = (struct pollfd){ .fd = w->wake_fd, .events = POLLIN };
	if (w->client_wake_fd >= 0)
		pf[npf++] = (struct pollfd){ .fd = w->client_wake_fd, .events = POLLIN };
	for (pi = 0; pi < dpr_engine.n_ports; pi++)
		slot_of[pi] = -1;
	__atomic_store_n(&w->napping, 1, __ATOMIC_SEQ_CST);
	for (k = 0; k < dpr_engine.n_pollers && !stay; k++) {
		const struct dpr_engine_poller *p = &dpr_engine.pollers[k];

		if (p->nap == NULL)
			continue;
		n = k + 1;
		stay = !p->nap(p->arg, w->index, true, w->now);
	}
	/* woken by a frame that the receive burst did not give yet (net_tap
	 * reads its fd once its SIGIO has come): a short nap on the other
	 * fds, not a wake-up at once again and again */
	if (w->rx_woke) {
		w->rx_woke = false;
		nap = &rx_settle;
	}
	for (pi = 0; pi < dpr_engine.n_ports && !stay && !frames &&
	     nap != &rx_settle; pi++) {
		const int fd = dpr_rxwake_arm(w, pi);

		if (fd >= 0) {
			slot_of[pi] = (int)npf;
			pf[npf++] = (struct pollfd){ .fd = fd, .events = POLLIN };
		}
		frames = fd == -EAGAIN;
	}
	/* (the hooks look at objects a port's quiescence may free: only
	 * the sleep itself is offline) */
	if (stay) {
		w->nap_aborts++;
	} else if (frames) {
		w->rx_nap_aborts++;
	} else if (rte_ring_count(w->cmd) == 0) {
		rte_rcu_qsbr_thread_offline(qv, w->index);
		if (ppoll(pf, npf, nap, NULL) > 0) {
			if ((pf[0].revents & POLLIN) &&
			    read(w->wake_fd, &v, sizeof(v)) == sizeof(v))
				w->wakeups++;
			if (w->client_wake_fd >= 0 && (pf[1].revents & POLLIN) &&
			    read(w->client_wake_fd, &v, sizeof(v)) == sizeof(v))
				w->client_wakeups++;
		}
		rte_rcu_qsbr_thread_online(qv, w->index);
	}
	/* (every port: one armed when frames had come was not polled) */
	for (pi = 0; pi < dpr_engine.n_ports; pi++)
		dpr_rxwake_disarm(w, pi, slot_of[pi] >= 0 &&
				  (pf[slot_of[pi]].revents & POLLIN) != 0);
	for (k = 0; k < n; k++)
		if (dpr_engine.pollers[k].nap != NULL)
			dpr_engine.pollers[k].nap(dpr_engine.pollers[k].arg, w->index,
						  false, w->now);
	__atomic_store_n(&w->napping, 0, __ATOMIC_RELAXED);
}

int
dpr_worker_main(void *arg)
{
	struct dpr_worker *w = arg;
	const unsigned int n_ports = dpr_engine.n_ports;
	const uint16_t burst = dpr_engine_conf(&dpr_engine.conf)->burst;
	const bool yield = dpr_engine_conf(&dpr_engine.conf)->idle == DPR_IDLE_YIELD;
	const uint64_t nap_ns = dpr_engine_conf(&dpr_engine.conf)->idle_sleep_us * 1000ull;
	struct timespec nap;
	const uint64_t spin_ns = dpr_engine_conf(&dpr_engine.conf)->idle_spin_us * 1000ull;
	struct rte_rcu_qsbr *const qv = dpr_quiesce_v;
	unsigned int idle_run = 0, pi;

	ENGINE_LOG(INFO, "worker on lcore %u polls queue %u of %u port(s)",
		   w->lcore_id, w->queue, n_ports);
	rte_rcu_qsbr_thread_register(qv, w->index);
	rte_rcu_qsbr_thread_online(qv, w->index);
	if (yield)
		dpr_rxwake_init(w);
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
		w->now = dpr_engine_tsc_ns(tsc);
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
		if (got != 0)
			w->rx_woke = false;
		if (w->loop_busy) {
			idle_run = 0;
			w->last_busy_ns = w->now;
			continue;
		}
		w->idle_polls++;
		if (yield && ++idle_run >= IDLE_POLLS_BEFORE_SLEEP) {
			if (w->now - w->last_busy_ns < spin_ns &&
			    w->now >= w->spin_resume_ns && spin_yield(w))
				continue;
			if (!nap_length(w, nap_ns, &nap))
				continue;       /* a timer is due */
			w->sleeps++;
			nap_until_woken(w, &nap, qv);
		}
	}
	rte_rcu_qsbr_thread_offline(qv, w->index);
	rte_rcu_qsbr_thread_unregister(qv, w->index);
	return 0;
}
