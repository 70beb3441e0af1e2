/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The engine: one run-to-completion poll loop per worker lcore
 * (dpr_worker.c); here what the main lcore does with them: start them
 * (ports, mempools, each worker's transports and neighbour tables) and
 * stop them, run functions on a worker (dpr_engine_run_on(),
 * dpr_engine_call()), taps, and what drivers ask of the ports. The main
 * lcore does control work only.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/eventfd.h>

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
	/* a napping worker is woken for it (the worker stores napping,
	 * then looks at the ring; we stored into the ring, then look at
	 * napping: with a full fence each side, one sees the other) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&dpr_engine.workers[wi].napping, __ATOMIC_RELAXED) &&
	    dpr_engine.workers[wi].wake_fd >= 0) {
		const uint64_t one = 1;

		if (write(dpr_engine.workers[wi].wake_fd, &one, sizeof(one)) < 0) {
			/* a full eventfd still wakes it */
		}
	}
	/* the worker runs commands every loop, until it stops: for the
	 * first 50 us this thread yields the CPU between looks (a woken
	 * worker answers in a few), then naps 20 us at a time */
	{
		const uint64_t hz = rte_get_timer_hz(), start = rte_get_timer_cycles();
		const uint64_t spin = hz / 20000, end = start + hz / 1000 * timeout_ms;
		const struct timespec nap = { .tv_nsec = 20000 };
		uint64_t now = start;

		while (patient || now < end) {
			if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) == 1)
				return 0;
			if (now - start < spin)
				sched_yield();
			else
				nanosleep(&nap, NULL);
			now = rte_get_timer_cycles();
		}
	}
	/* given up: the worker frees it when it gets to it */
	if (__atomic_compare_exchange_n(&c->state, &queued, 2, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return -ETIMEDOUT;
	return 0;
}

int
dpr_engine_wake_fd(unsigned int wi)
{
	if (wi >= dpr_engine.n_workers)
		return -1;
	return dpr_engine.workers[wi].client_wake_fd;
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
	return dpr_engine_ns();
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
		const struct dpr_limits_conf *lc = dpr_limits_conf(conf);
		struct dpr_verbs_limits vl;

		dpr_verbs_default_limits(&vl);
		vl.max_qp = lc->qps;
		vl.max_cq = lc->cqs;
		vl.max_pd = lc->pds;
		vl.max_mr = lc->mrs;
		e->ctx[pi] = dpr_verbs_create(&vl);
		if (e->ctx[pi] == NULL) {
			snprintf(err, errlen, "out of memory for port %u's objects", pi);
			dpr_engine_stop();
			return -ENOMEM;
		}
	}
	for (unsigned int i = 0; i < e->n_workers; i++) {
		struct dpr_worker *w = &e->workers[i];
		const struct dpr_transport_knobs *tk = dpr_transport_knobs(conf);
		const struct dpr_security_conf *sc = dpr_security_conf(conf);
		const struct dpr_congestion_conf *cc = dpr_congestion_conf(conf);
		char name[RTE_RING_NAMESIZE];

		snprintf(name, sizeof(name), "dpr_cmd_%u", i);
		w->cmd = rte_ring_create(name, 64, rte_socket_id(), RING_F_SC_DEQ);
		w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		w->client_wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		for (unsigned int pi = 0; pi < e->n_ports && w->cmd != NULL; pi++) {
			const struct dpr_port *p = &e->ports[pi];
			struct dpr_transport_conf tc = {
				.ctx = e->ctx[pi],
				.pool = e->pool,
				.mac = p->mac,
				.resolve = dpr_worker_resolve,
				.hold = dpr_worker_hold,
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
				.peer_caps = dpr_worker_peer_caps,
				.peer_arg = &w->rarg[pi],
				.sr_hold_max = tk->sr_hold,
				.sec_mode = (uint8_t)sc->mode,
				.sec_required = sc->required != 0,
				.sec_subnets = sc->subnets,
				.n_sec_subnets = sc->n_subnets,
				.quarantine_drops = sc->quarantine_drops,
				.quarantine_ns = (uint64_t)sc->quarantine_s * 1000000000ull,
				.sec_req = dpr_worker_sec_req,
				.sec_arg = &w->rarg[pi],
				.cnp_send = cc->notify != 0,
				.cnp_interval_ns = cc->cnp_interval_us * 1000u,
				.cnp_tos = (uint8_t)(cc->cnp_dscp << 2),
			};

			w->rarg[pi].w = w;
			w->rarg[pi].pi = (uint16_t)pi;
			if (dpr_neigh_init(&w->neigh[pi], p, e->pool, &w->ctr[pi],
					   &w->now, &dpr_worker_neigh_ops, &w->rarg[pi]) != 0)
				break;
			tc.n_gids = port_gids(p, tc.gid);
			dpr_congestion_params(cc, &tc.cc);
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
		ret = rte_eal_remote_launch(dpr_worker_main, &e->workers[i],
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
			if (w->wake_fd >= 0)
				close(w->wake_fd);
			w->wake_fd = -1;
			if (w->client_wake_fd >= 0)
				close(w->client_wake_fd);
			w->client_wake_fd = -1;
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
