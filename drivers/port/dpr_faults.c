/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Fault injection on a port's TX, per worker queue, from a seeded
 * generator (xorshift64*: the same seed gives the same faults for the same
 * frames). A corrupted frame is a copy with one bit flipped after the
 * Ethernet header (the original may point into memory others own); a
 * duplicate is a copy; reordered and delayed frames wait in a small hold
 * queue that each call releases, in their order, as they fall due. What
 * the port refuses (its ring full) waits in a retry list that goes first
 * next call, and while it is not empty the adapter takes no new frames:
 * the engine keeps them, so a full ring holds the transports back instead
 * of losing their frames.
 *
 * A bottleneck (rate_mbps, queue_kb, mark_kb), after the faults: the port
 * as a switch's egress of that rate. The backlog is what the link has yet
 * to send (its busy time left, at the rate); a frame that would take it
 * past queue_kb is dropped (tail drop), one that finds more than mark_kb
 * waiting is marked CE if it was sent ECN-capable (DCTCP's step marking,
 * as a RED/WRED profile with one threshold does), and each leaves at its
 * departure time, in order, from a FIFO of its own. The backlog each
 * frame found is kept in a histogram (its 99th percentile in telemetry).
 * The traffic of all of a port's QPs on the worker shares the bottleneck,
 * so several QPs are several senders into it.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "dpr_faults.h"
#include "dpr_wire.h"

#define HOLD_MAX 1024
/* frames one call may give the port: a burst, its duplicates, the held */
#define OUT_MAX (2 * 64 + HOLD_MAX)
#define REORDER_MIN_NS 10000
#define REORDER_SPAN_NS 90000

#define FAULT_COUNTERS(_) \
	_(frames) _(lost) _(reordered) _(duplicated) _(corrupted) _(delayed) \
	_(hold_full) _(port_refused) _(bn_sent_bytes) _(bn_marked) _(bn_dropped) \
	_(bn_backlog_max)
#define BN_MAX 8192                    /* frames the bottleneck holds */
#define BN_BUCKETS 64                  /* of the backlog histogram */

struct held {
	uint64_t t;
	struct rte_mbuf *m;
};

struct dpr_faults {
	struct dpr_fault_conf c;
	struct rte_mempool *pool;
	uint64_t rng;
	uint32_t n_held;
	struct held held[HOLD_MAX];
	uint16_t n_retry;             /**< frames the port refused last call */
	struct rte_mbuf *retry[OUT_MAX];
	/* the bottleneck: its FIFO (departure times rising), when the link
	 * is free, the backlog histogram (queue_kb / BN_BUCKETS a bucket) */
	uint32_t bn_head, bn_tail;
	uint64_t link_free;
	struct held bn[BN_MAX];
	uint64_t bn_hist[BN_BUCKETS];
#define _(n) uint64_t n;
	FAULT_COUNTERS(_)
#undef _
};

static struct dpr_faults *all[DPR_MAX_PORTS][DPR_MAX_WORKERS];

static inline uint64_t
rnd(struct dpr_faults *f)
{
	f->rng ^= f->rng >> 12;
	f->rng ^= f->rng << 25;
	f->rng ^= f->rng >> 27;
	return f->rng * 2685821657736338717ULL;
}

static inline bool
chance(struct dpr_faults *f, double p)
{
	return p > 0 && (double)(rnd(f) >> 11) / (double)(1ULL << 53) < p;
}

static struct rte_mbuf *
corrupt(struct dpr_faults *f, struct rte_mbuf *m)
{
	struct rte_mbuf *c = rte_pktmbuf_copy(m, f->pool, 0, UINT32_MAX);
	struct rte_mbuf *s;
	uint32_t off;

	if (c == NULL || rte_pktmbuf_pkt_len(c) <= RTE_ETHER_HDR_LEN) {
		rte_pktmbuf_free(c);
		return m;
	}
	off = RTE_ETHER_HDR_LEN + (uint32_t)(rnd(f) %
		(rte_pktmbuf_pkt_len(c) - RTE_ETHER_HDR_LEN));
	for (s = c; off >= s->data_len; s = s->next)
		off -= s->data_len;
	rte_pktmbuf_mtod(s, uint8_t *)[off] ^= (uint8_t)(1u << (rnd(f) % 8));
	rte_pktmbuf_free(m);
	f->corrupted++;
	return c;
}

/* CE on @p m if it went ECN-capable (IPv4, with its checksum made again;
 * IPv6); @return whether it was marked */
static bool
mark_ce(struct rte_mbuf *m)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint16_t type;
	const uint32_t l3 = dpr_frame_l3(p, m->data_len, &type);

	if (l3 == 0 || m->data_len < l3 + 40)
		return false;
	if (type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(p + l3);

		if ((ip->type_of_service & 3) == 0)
			return false;
		ip->type_of_service |= 3;
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		return true;
	}
	if (type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6)) {
		/* the traffic class's ECN bits: bits 4-5 of its second byte */
		if ((p[l3 + 1] & 0x30) == 0)
			return false;
		p[l3 + 1] |= 0x30;
		return true;
	}
	return false;
}

/* @p m into the bottleneck at @p now: dropped, or queued (and marked) to
 * leave when the link has sent what is before it */
static void
bottleneck_in(struct dpr_faults *f, struct rte_mbuf *m, uint64_t now)
{
	const double ns_per_byte = 8000.0 / f->c.rate_mbps;
	const uint64_t cap = (uint64_t)f->c.queue_kb * 1024;
	const uint32_t len = rte_pktmbuf_pkt_len(m) + 24;  /* preamble, FCS, gap */
	const uint64_t backlog = f->link_free > now ?
		(uint64_t)((double)(f->link_free - now) / ns_per_byte) : 0;
	uint64_t b;

	b = cap ? backlog * BN_BUCKETS / cap : 0;
	f->bn_hist[RTE_MIN(b, (uint64_t)BN_BUCKETS - 1)]++;
	if (backlog > f->bn_backlog_max)
		f->bn_backlog_max = backlog;
	if ((cap != 0 && backlog + len > cap) || f->bn_tail - f->bn_head >= BN_MAX) {
		f->bn_dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	if (f->c.mark_kb != 0 && backlog > (uint64_t)f->c.mark_kb * 1024 && mark_ce(m))
		f->bn_marked++;
	f->link_free = RTE_MAX(f->link_free, now) + (uint64_t)(len * ns_per_byte);
	f->bn_sent_bytes += len;
	f->bn[f->bn_tail++ % BN_MAX] = (struct held){ f->link_free, m };
}

/* Give the port @p k frames; keep what it refuses for the next call
 * (counted once: not @p again, the ones it refused before). */
static void
to_port(struct dpr_faults *f, uint16_t port_id, uint16_t queue,
	struct rte_mbuf **out, uint16_t k, bool again)
{
	uint16_t sent = k ? rte_eth_tx_burst(port_id, queue, out, k) : 0;

	if (sent < k) {
		if (!again)
			f->port_refused += k - sent;
		memcpy(f->retry, &out[sent], (k - sent) * sizeof(out[0]));
		f->n_retry = k - sent;
	}
}

static uint16_t
faults_tx(void *state, uint16_t port_id, uint16_t queue, struct rte_mbuf **pkts,
	  uint16_t n, uint64_t now)
{
	struct dpr_faults *f = state;
	struct rte_mbuf *out[OUT_MAX];
	uint16_t k = 0, i;
	uint32_t j, kept = 0;

	/* what the port refused goes first; while it still does, the engine
	 * keeps the new frames (it offers them again). At the end (now ==
	 * UINT64_MAX, no frames) what it still refuses is let go. */
	if (f->n_retry != 0 && now == UINT64_MAX) {
		k = f->n_retry;
		memcpy(out, f->retry, k * sizeof(out[0]));
		f->n_retry = 0;
		to_port(f, port_id, queue, out, k, true);
		rte_pktmbuf_free_bulk(f->retry, f->n_retry);
		f->n_retry = 0;
		k = 0;
	} else if (f->n_retry != 0) {
		k = f->n_retry;
		memcpy(out, f->retry, k * sizeof(out[0]));
		f->n_retry = 0;
		to_port(f, port_id, queue, out, k, true);
		if (f->n_retry != 0)
			return 0;
		k = 0;
	}
	/* then what falls due, in its order (now == UINT64_MAX: everything) */
	for (j = 0; j < f->n_held; j++) {
		if (f->held[j].t <= now && k < RTE_DIM(out))
			out[k++] = f->held[j].m;
		else
			f->held[kept++] = f->held[j];
	}
	f->n_held = kept;
	/* what the bottleneck lets go by now, in order */
	while (f->bn_head != f->bn_tail && k < RTE_DIM(out) &&
	       f->bn[f->bn_head % BN_MAX].t <= now)
		out[k++] = f->bn[f->bn_head++ % BN_MAX].m;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i], *d = NULL;
		uint64_t t = now + (uint64_t)f->c.delay_us * 1000;

		f->frames++;
		if (chance(f, f->c.loss)) {
			f->lost++;
			rte_pktmbuf_free(m);
			continue;
		}
		if (chance(f, f->c.dup)) {
			d = rte_pktmbuf_copy(m, f->pool, 0, UINT32_MAX);
			if (d != NULL)
				f->duplicated++;
		}
		if (chance(f, f->c.corrupt))
			m = corrupt(f, m);
		if (f->c.rate_mbps != 0) {
			/* (then not reordered nor delayed: the link's own time) */
			bottleneck_in(f, m, now);
			if (d != NULL)
				bottleneck_in(f, d, now);
			continue;
		}
		if (chance(f, f->c.reorder)) {
			t += REORDER_MIN_NS + rnd(f) % REORDER_SPAN_NS;
			f->reordered++;
		} else if (f->c.delay_us != 0) {
			f->delayed++;
		}
		if (t > now && f->n_held < HOLD_MAX) {
			f->held[f->n_held++] = (struct held){ t, m };
		} else {
			if (t > now)
				f->hold_full++;
			out[k++] = m;
		}
		if (d != NULL)
			out[k++] = d;
	}
	to_port(f, port_id, queue, out, k, false);
	return n;   /* every frame was taken: sent, held, lost on purpose, or
		     * kept to send again */
}

/* ------------------------------------------------- its configuration */

/* No faults, as an empty value gives (so that a port whose faults are set
 * to nothing is a port left at its default, and dumps as one). */
static void
fault_defaults(void *area, int port __rte_unused)
{
	struct dpr_fault_conf *f = area;

	memset(f, 0, sizeof(*f));
	f->seed = 1;
}

int
dpr_parse_faults(const char *s, struct dpr_fault_conf *f, char *why, size_t len)
{
	char buf[DPR_CONF_VALUE_LEN], *item, *save;

	fault_defaults(f, -1);
	snprintf(buf, sizeof(buf), "%s", s);
	for (item = strtok_r(buf, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '='), *end;
		double *p = NULL;

		if (eq == NULL) {
			snprintf(why, len, "'%s' is not name=value", item);
			return -1;
		}
		*eq++ = '\0';
		if (strcmp(item, "loss") == 0)
			p = &f->loss;
		else if (strcmp(item, "reorder") == 0)
			p = &f->reorder;
		else if (strcmp(item, "dup") == 0)
			p = &f->dup;
		else if (strcmp(item, "corrupt") == 0)
			p = &f->corrupt;
		if (p != NULL) {
			*p = strtod(eq, &end);
			if (*eq == '\0' || *end != '\0' || !(*p >= 0 && *p <= 1)) {
				snprintf(why, len, "%s must be a probability from 0 to 1",
					 item);
				return -1;
			}
		} else if (strcmp(item, "seed") == 0) {
			unsigned long long v = strtoull(eq, &end, 0);

			if (*eq == '\0' || *eq == '-' || *end != '\0') {
				snprintf(why, len, "seed must be a whole number");
				return -1;
			}
			f->seed = v;
		} else if (strcmp(item, "delay_us") == 0 || strcmp(item, "rate_mbps") == 0 ||
			   strcmp(item, "queue_kb") == 0 || strcmp(item, "mark_kb") == 0) {
			unsigned long long v = strtoull(eq, &end, 0);

			if (*eq == '\0' || *eq == '-' || *end != '\0' || v > 1000000) {
				snprintf(why, len, "%s must be a whole number up to 1000000",
					 item);
				return -1;
			}
			if (item[0] == 'd')
				f->delay_us = (uint32_t)v;
			else if (item[0] == 'r')
				f->rate_mbps = (uint32_t)v;
			else if (item[0] == 'q')
				f->queue_kb = (uint32_t)v;
			else
				f->mark_kb = (uint32_t)v;
		} else {
			snprintf(why, len, "unknown fault '%s' (known: loss, reorder, "
				 "dup, corrupt, delay_us, seed, rate_mbps, queue_kb, "
				 "mark_kb)", item);
			return -1;
		}
	}
	/* any spec installs the adapter, "loss=0" included: its faults can
	 * then be changed at run time (/dprdma/port/faults/set) */
	f->on = s[strspn(s, " \t")] != '\0';
	return 0;
}

static int
parse_faults_key(void *area, const char *value, char *why, size_t len)
{
	char what[192];

	if (dpr_parse_faults(value, area, what, sizeof(what)) != 0) {
		snprintf(why, len, ": %s (expected e.g. loss=0.01,reorder=0.01,"
			 "dup=0.001,corrupt=0.001,delay_us=0,seed=1)", what);
		return -1;
	}
	return 0;
}

static void
format_faults(const void *area, char *buf, size_t len)
{
	const struct dpr_fault_conf *f = area;

	if (!f->on)
		buf[0] = '\0';
	else
		snprintf(buf, len, "loss=%g,reorder=%g,dup=%g,corrupt=%g,"
			 "delay_us=%u,seed=%llu", f->loss, f->reorder, f->dup,
			 f->corrupt, f->delay_us, (unsigned long long)f->seed);
	if (f->on && f->rate_mbps != 0) {
		size_t n = strlen(buf);

		snprintf(buf + n, len - n, ",rate_mbps=%u,queue_kb=%u,mark_kb=%u",
			 f->rate_mbps, f->queue_kb, f->mark_kb);
	}
}

static const struct dpr_conf_key fault_keys[] = {
	{ "faults", DPR_CONF_CUSTOM, .parse = parse_faults_key,
	  .format = format_faults,
	  .help = "inject faults into what the port sends: loss=P,reorder=P,"
		  "dup=P,corrupt=P,delay_us=N,seed=N (P a probability 0-1), "
		  "and a bottleneck: rate_mbps=N (its link), queue_kb=N (tail "
		  "drop past it), mark_kb=N (CE on ECN-capable frames past "
		  "it); empty: none" },
};

static struct dpr_conf_room fault_room = {
	.section = "port",
	.per_port = true,
	.size = sizeof(struct dpr_fault_conf),
	.keys = fault_keys,
	.n_keys = RTE_DIM(fault_keys),
	.defaults = fault_defaults,
};

void
dpr_faults_config_register(void)
{
	dpr_config_register(&fault_room);
}

const struct dpr_fault_conf *
dpr_faults_conf(const struct dpr_config *conf, unsigned int pi)
{
	return dpr_config_room(conf, &fault_room, pi);
}

/* ------------------------------------------------------ the adapter */

int
dpr_faults_port_adapter(void *arg, uint16_t pi, unsigned int worker,
			struct rte_mempool *pool, dpr_tx_adapter_fn *fn,
			void **state)
{
	const struct dpr_config *conf = arg;
	struct dpr_faults *f;

	if (pi >= DPR_MAX_PORTS || worker >= DPR_MAX_WORKERS ||
	    !dpr_faults_conf(conf, pi)->on)
		return 0;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	f->c = *dpr_faults_conf(conf, pi);
	f->pool = pool;
	/* one stream per worker, reproducible from the seed */
	f->rng = (f->c.seed ? f->c.seed : 1) * 0x9E3779B97F4A7C15ULL + worker + 1;
	free(all[pi][worker]);
	all[pi][worker] = f;
	*fn = faults_tx;
	*state = f;
	return 0;
}

struct set_arg {
	uint16_t pi;
	unsigned int wi;
	struct dpr_fault_conf c;
};

/* On the worker that owns the adapter: the new faults, same stream. */
static int
set_on_worker(void *arg)
{
	const struct set_arg *a = arg;
	struct dpr_faults *f = all[a->pi][a->wi];

	if (f == NULL)
		return -ENOENT;
	f->c = a->c;
	return 0;
}

/*
 * /dprdma/port/faults/set,P,SPEC: new faults for port P's adapter (the
 * [portN] faults syntax; its seed is kept), on every worker. Only a port
 * started with the adapter ([portN] faults set, "loss=0" will do) has one:
 * others answer -ENOTSUP (no cost on their TX path).
 */
static int
tel_faults_set(const char *cmd __rte_unused, const char *params,
	       struct rte_tel_data *d)
{
	struct set_arg a = { 0 };
	char why[192], *end;
	unsigned int n = 0;
	long pi;
	int rc;

	if (params == NULL)
		return -EINVAL;
	pi = strtol(params, &end, 10);
	if (end == params || *end != ',' || pi < 0 || pi >= DPR_MAX_PORTS ||
	    pi >= dpr_engine_n_ports())
		return -EINVAL;
	if (dpr_parse_faults(end + 1, &a.c, why, sizeof(why)) != 0)
		return -EINVAL;
	a.pi = (uint16_t)pi;
	for (a.wi = 0; a.wi < dpr_engine_n_workers() && a.wi < DPR_MAX_WORKERS; a.wi++) {
		if (all[pi][a.wi] == NULL)
			continue;
		a.c.seed = all[pi][a.wi]->c.seed;
		rc = dpr_engine_call(a.wi, set_on_worker, &a, sizeof(a), 2000);
		if (rc != 0)
			return rc;
		n++;
	}
	if (n == 0)
		return -ENOTSUP;
	rte_tel_data_start_dict(d);
	format_faults(&a.c, why, sizeof(why));
	rte_tel_data_add_dict_string(d, "faults", why);
	rte_tel_data_add_dict_int(d, "workers", (int)n);
	return 0;
}

static int
tel_faults(const char *cmd __rte_unused, const char *params,
	   struct rte_tel_data *d)
{
	uint64_t sum[32] = { 0 };
	unsigned int w, k;
	long pi;
	char *end;

	if (params == NULL || *params == '\0')
		return -EINVAL;
	pi = strtol(params, &end, 10);
	if (*end != '\0' || pi < 0 || pi >= DPR_MAX_PORTS)
		return -EINVAL;
	for (w = 0; w < DPR_MAX_WORKERS; w++) {
		const volatile struct dpr_faults *f = all[pi][w];

		if (f == NULL)
			continue;
		k = 0;
#define _(n) sum[k++] += f->n;
		FAULT_COUNTERS(_)
#undef _
	}
	rte_tel_data_start_dict(d);
	k = 0;
#define _(n) rte_tel_data_add_dict_u64(d, #n, sum[k++]);
	FAULT_COUNTERS(_)
#undef _
	{
		/* the backlog frames found: its 99th percentile, the upper
		 * edge of the bucket that holds it (bytes) */
		uint64_t hist[BN_BUCKETS] = { 0 }, n = 0, acc = 0, qkb = 0;

		for (w = 0; w < DPR_MAX_WORKERS; w++) {
			const volatile struct dpr_faults *f = all[pi][w];

			if (f == NULL)
				continue;
			qkb = f->c.queue_kb;
			for (k = 0; k < BN_BUCKETS; k++) {
				hist[k] += f->bn_hist[k];
				n += f->bn_hist[k];
			}
		}
		for (k = 0; k < BN_BUCKETS && n != 0; k++) {
			acc += hist[k];
			if (acc * 100 >= n * 99)
				break;
		}
		rte_tel_data_add_dict_u64(d, "bn_backlog_p99",
			n == 0 ? 0 : (k + 1) * qkb * 1024 / BN_BUCKETS);
	}
	return 0;
}

static const struct dpr_counter_help faults_help[] = {
	{ "frames", "frames that went through the fault adapter" },
	{ "lost", "frames it dropped (loss)" },
	{ "reordered", "frames it held back 10-100 us (reorder)" },
	{ "duplicated", "frames it sent twice (dup)" },
	{ "corrupted", "frames it sent with one bit flipped (corrupt)" },
	{ "delayed", "frames it held for delay_us" },
	{ "hold_full", "frames sent at once: its hold queue was full" },
	{ "port_refused", "frames the port refused (kept, sent again)" },
	{ "bn_sent_bytes", "bytes through the bottleneck (rate_mbps), framing included" },
	{ "bn_marked", "frames the bottleneck marked CE (more than mark_kb waiting)" },
	{ "bn_dropped", "frames the bottleneck dropped (its queue_kb full)" },
	{ "bn_backlog_max", "the most bytes the bottleneck's queue held" },
	{ "bn_backlog_p99", "the backlog (bytes) 99% of frames found at the bottleneck, or less" },
};

void
dpr_faults_register_telemetry(void)
{
	dpr_engine_counter_help("faults", faults_help, RTE_DIM(faults_help));
	rte_telemetry_register_cmd("/dprdma/port/faults", tel_faults,
		"Faults injected into a port's TX, all workers. Parameter: port index");
	rte_telemetry_register_cmd("/dprdma/port/faults/set", tel_faults_set,
		"New faults for a port started with [portN] faults. "
		"Parameters: PORT,SPEC (as [portN] faults)");
}
