/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Counters and the /dprdma/ telemetry commands (Debian's
 * dpdk-telemetry.py -f PREFIX reads them). Workers write their own
 * counters without atomics; readers here sum over workers, as ethdev
 * drivers do for their per-queue statistics.
 */

#include <inttypes.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_telemetry.h>

#ifdef DPR_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#endif

#include "dpr_engine.h"
#include "engine_private.h"

void
dpr_port_counters_sum(uint16_t pi, struct dpr_port_counters *sum)
{
	const struct dpr_engine *e = &dpr_engine;
	unsigned int w, d;

	memset(sum, 0, sizeof(*sum));
	for (w = 0; w < e->n_workers; w++) {
		const volatile struct dpr_port_counters *c = &e->workers[w].ctr[pi];

#define _(n) sum->n += c->n;
		DPR_PORT_COUNTERS(_)
#undef _
		for (d = 0; d < DPR_DROP_MAX; d++)
			sum->drop[d] += c->drop[d];
	}
}

/* "N" -> N if it names an existing port index, else -1. */
static int
port_param(const char *params)
{
	char *end;
	long v;

	if (params == NULL || *params == '\0')
		return -1;
	v = strtol(params, &end, 10);
	if (*end != '\0' || v < 0 || v >= dpr_engine.n_ports)
		return -1;
	return (int)v;
}

static dpr_qp_owner_fn qp_owner;
static const char *volatile engine_state = "running";

void
dpr_engine_set_qp_owner(dpr_qp_owner_fn fn)
{
	qp_owner = fn;
}

void
dpr_engine_set_state(const char *state)
{
	engine_state = state;
}

static int
tel_info(const char *cmd __rte_unused, const char *params __rte_unused,
	 struct rte_tel_data *d)
{
	const struct dpr_engine *e = &dpr_engine;
	uint64_t waits, timeouts;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "version", DPR_VERSION);
	rte_tel_data_add_dict_string(d, "state", engine_state);
	rte_tel_data_add_dict_int(d, "pid", (int)getpid());
	rte_tel_data_add_dict_string(d, "config",
		e->conf.path[0] ? e->conf.path : "built-in default");
	rte_tel_data_add_dict_u64(d, "uptime_s",
		(rte_rdtsc() - e->start_tsc) / rte_get_tsc_hz());
	rte_tel_data_add_dict_int(d, "ports", e->n_ports);
	rte_tel_data_add_dict_int(d, "workers", (int)e->n_workers);
	rte_tel_data_add_dict_string(d, "idle",
		dpr_engine_conf(&e->conf)->idle == DPR_IDLE_BUSY ? "busy" : "yield");
	/* a port's memory unmapped on the interrupt thread (a memif peer
	 * that went): after a grace period of the workers, or after 1 s
	 * without one (dpr_quiesce.c) */
	dpr_quiesce_stats(&waits, &timeouts);
	rte_tel_data_add_dict_u64(d, "unmap_grace_waits", waits);
	rte_tel_data_add_dict_u64(d, "unmap_grace_timeouts", timeouts);
	return 0;
}

static int
tel_ports(const char *cmd __rte_unused, const char *params __rte_unused,
	  struct rte_tel_data *d)
{
	unsigned int i;

	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (i = 0; i < dpr_engine.n_ports; i++)
		rte_tel_data_add_array_int(d, (int)i);
	return 0;
}

static int
tel_port_info(const char *cmd __rte_unused, const char *params,
	      struct rte_tel_data *d)
{
	int pi = port_param(params);
	const struct dpr_port *p;
	char buf[64], a[INET_ADDRSTRLEN], a6[INET6_ADDRSTRLEN];
	struct rte_eth_link link;

	if (pi < 0)
		return -EINVAL;
	p = &dpr_engine.ports[pi];
	rte_tel_data_start_dict(d);
	snprintf(buf, sizeof(buf), "dprdma%d", pi);
	rte_tel_data_add_dict_string(d, "device", buf);
	rte_tel_data_add_dict_string(d, "name", p->name);
	rte_tel_data_add_dict_int(d, "port_id", p->port_id);
	rte_ether_format_addr(buf, sizeof(buf), &p->mac);
	rte_tel_data_add_dict_string(d, "mac", buf);
	if (p->ip != 0) {
		inet_ntop(AF_INET, &p->ip, a, sizeof(a));
		snprintf(buf, sizeof(buf), "%s/%u", a, p->prefix_len);
	} else {
		snprintf(buf, sizeof(buf), "none");
	}
	rte_tel_data_add_dict_string(d, "ipv4", buf);
	inet_ntop(AF_INET6, p->ip6_ll.raw, a6, sizeof(a6));
	rte_tel_data_add_dict_string(d, "ipv6_link_local", a6);
	if (p->has_ip6) {
		inet_ntop(AF_INET6, p->ip6.raw, a6, sizeof(a6));
		snprintf(buf, sizeof(buf), "%s/%u", a6, p->ip6_prefix_len);
	} else {
		snprintf(buf, sizeof(buf), "none");
	}
	rte_tel_data_add_dict_string(d, "ipv6", buf);
	rte_tel_data_add_dict_int(d, "mtu", p->mtu);
	rte_tel_data_add_dict_int(d, "active_mtu", (int)dpr_active_mtu(p->mtu));
	rte_tel_data_add_dict_int(d, "queues", p->nb_queues);
	/* how payload goes into frames ([engine] tx_payload) */
	if (p->zero_copy_min == 0)
		snprintf(buf, sizeof(buf), "copied%s", p->tx_copies ?
			 " (the driver copies every frame)" : "");
	else
		snprintf(buf, sizeof(buf), "attached from %u B", p->zero_copy_min);
	rte_tel_data_add_dict_string(d, "tx_payload", buf);
	memset(&link, 0, sizeof(link));
	rte_eth_link_get_nowait(p->port_id, &link);
	rte_tel_data_add_dict_string(d, "link", link.link_status ? "up" : "down");
	return 0;
}

static int
tel_port_stats(const char *cmd __rte_unused, const char *params,
	       struct rte_tel_data *d)
{
	int pi = port_param(params);
	struct dpr_port_counters c;
	struct rte_eth_stats es;
	unsigned int r;

	if (pi < 0)
		return -EINVAL;
	dpr_port_counters_sum((uint16_t)pi, &c);
	rte_tel_data_start_dict(d);
#define _(n) rte_tel_data_add_dict_u64(d, #n, c.n);
	DPR_PORT_COUNTERS(_)
#undef _
	for (r = 0; r < DPR_DROP_MAX; r++)
		rte_tel_data_add_dict_u64(d, dpr_drop_names[r], c.drop[r]);
	/* what the device itself dropped before a worker saw it */
	if (rte_eth_stats_get(dpr_engine.ports[pi].port_id, &es) == 0) {
		rte_tel_data_add_dict_u64(d, "rx_missed", es.imissed);
		rte_tel_data_add_dict_u64(d, "rx_errors", es.ierrors);
		rte_tel_data_add_dict_u64(d, "rx_nombuf", es.rx_nombuf);
		rte_tel_data_add_dict_u64(d, "tx_errors", es.oerrors);
	}
	return 0;
}

/* A port's transport totals summed over its workers. */
static void
transport_sum(uint16_t pi, struct dpr_transport_stats *sum)
{
	unsigned int w;

	memset(sum, 0, sizeof(*sum));
	for (w = 0; w < dpr_engine.n_workers; w++) {
		const struct dpr_transport *tp = dpr_engine.workers[w].tp[pi];
		const volatile struct dpr_transport_stats *st;

		if (tp == NULL)
			continue;
		st = dpr_transport_stats(tp);
#define _(n) sum->n += st->n;
		DPR_TRANSPORT_STATS(_)
#undef _
	}
}

static int
tel_transport_stats(const char *cmd __rte_unused, const char *params,
		    struct rte_tel_data *d)
{
	struct dpr_transport_stats sum;
	struct dpr_verbs_usage u;
	int pi = port_param(params);

	if (pi < 0)
		return -EINVAL;
	transport_sum((uint16_t)pi, &sum);
	rte_tel_data_start_dict(d);
#define _(n) rte_tel_data_add_dict_u64(d, #n, sum.n);
	DPR_TRANSPORT_STATS(_)
#undef _
	/* the port's QPs, beside what they cost (qp_bytes): the verbs
	 * tables count them */
	dpr_verbs_usage(dpr_engine_verbs((uint16_t)pi), &u);
	rte_tel_data_add_dict_u64(d, "qps", u.qp);
	return 0;
}

/*
 * QP snapshots: taken by the worker that owns the QPs, between two of its
 * polls (the data path takes no lock), copied out here. The command comes
 * first in the allocation: a worker that finds it abandoned frees it all.
 */
struct qp_snap {
	struct dpr_cmd c;
	uint16_t pi;
	uint32_t qpn;                  /**< UINT32_MAX: every QP */
	uint32_t n, max;
	struct dpr_qp_info info[];
};

static int
snap_one(struct dpr_tqp *qp, void *arg)
{
	struct qp_snap *s = arg;

	if (s->qpn != UINT32_MAX && dpr_qp_num(qp) != s->qpn)
		return 0;
	if (s->n == s->max)
		return 1;
	dpr_qp_info(qp, &s->info[s->n++]);
	return 0;
}

static int
cmd_snap(struct dpr_worker *w, struct dpr_cmd *c)
{
	struct qp_snap *s = (struct qp_snap *)c;

	if (w->tp[s->pi] != NULL)
		dpr_transport_foreach_qp(w->tp[s->pi], snap_one, s);
	return 0;
}

/* Snapshots of port @p pi's QPs (@p qpn, or all with UINT32_MAX) from
 * every worker, up to @p max. @return how many, or a negative errno. */
static int
qp_snapshots(uint16_t pi, uint32_t qpn, struct dpr_qp_info *out, uint32_t max)
{
	uint32_t got = 0;
	unsigned int w;

	for (w = 0; w < dpr_engine.n_workers && got < max; w++) {
		struct qp_snap *s = calloc(1, sizeof(*s) +
					   (size_t)(max - got) * sizeof(s->info[0]));
		int rc;

		if (s == NULL)
			return -ENOMEM;
		s->c.fn = cmd_snap;
		s->pi = pi;
		s->qpn = qpn;
		s->max = max - got;
		rc = dpr_engine_cmd_submit(w, &s->c, 5000);
		if (rc != 0)
			return rc;     /* the command is no longer ours */
		memcpy(&out[got], s->info, s->n * sizeof(s->info[0]));
		got += s->n;
		free(s);
	}
	return (int)got;
}

/* A worker's neighbours of one port, as lines `ip neigh` would print. */
#define NEIGH_LINE 112

struct neigh_snap {
	struct dpr_cmd c;
	uint16_t pi;
	uint32_t n, max;
	char (*line)[NEIGH_LINE];
};

static int
cmd_neigh(struct dpr_worker *w, struct dpr_cmd *c)
{
	struct neigh_snap *s = (struct neigh_snap *)c;
	const struct dpr_neigh_table *nt = &w->neigh[s->pi];
	uint32_t i;

	for (i = 0; i < nt->n && s->n < s->max; i++) {
		const struct dpr_neigh *e = &nt->e[i];
		char a[INET6_ADDRSTRLEN], mac[RTE_ETHER_ADDR_FMT_SIZE];

		dpr_gid_ntop(&e->ip, a, sizeof(a));
		if (e->state == DPR_NEIGH_VALID) {
			rte_ether_format_addr(mac, sizeof(mac), &e->mac);
			snprintf(s->line[s->n++], NEIGH_LINE, "%s lladdr %s "
				 "REACHABLE worker %u", a, mac, w->index);
		} else {
			snprintf(s->line[s->n++], NEIGH_LINE, "%s INCOMPLETE "
				 "(%u requests, %u frames held) worker %u", a,
				 e->tries, e->held, w->index);
		}
	}
	return 0;
}

static int
tel_neigh(const char *cmd __rte_unused, const char *params,
	  struct rte_tel_data *d)
{
	const uint32_t max = RTE_TEL_MAX_ARRAY_ENTRIES;
	int pi = port_param(params), rc = 0;
	char (*line)[NEIGH_LINE];
	struct neigh_snap *s;
	unsigned int w;

	if (pi < 0)
		return -EINVAL;
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	for (w = 0; w < dpr_engine.n_workers; w++) {
		s = calloc(1, sizeof(*s));
		if (s == NULL)
			return -ENOMEM;
		s->line = calloc(max, sizeof(*s->line));
		if (s->line == NULL) {
			free(s);
			return -ENOMEM;
		}
		s->c.fn = cmd_neigh;
		s->pi = (uint16_t)pi;
		s->max = max;
		line = s->line;
		/* patient: the worker writes into the lines until it returns;
		 * on an error the command is no longer ours, the lines are */
		rc = dpr_engine_cmd_submit(w, &s->c, 0);
		if (rc != 0) {
			free(line);
			return rc;
		}
		for (uint32_t i = 0; i < s->n; i++)
			rte_tel_data_add_array_string(d, s->line[i]);
		free(s->line);
		free(s);
	}
	return 0;
}

/* "P" or "P,QPN" -> port index and QPN (UINT32_MAX without). */
static int
qp_params(const char *params, uint32_t *qpn)
{
	char buf[64], *comma, *end;
	unsigned long v;
	int pi;

	*qpn = UINT32_MAX;
	if (params == NULL || strlen(params) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", params);
	comma = strchr(buf, ',');
	if (comma != NULL) {
		*comma = '\0';
		v = strtoul(comma + 1, &end, 0);
		if (*end != '\0' || comma[1] == '\0' || v > 0xffffff)
			return -1;
		*qpn = (uint32_t)v;
	}
	pi = port_param(buf);
	return pi;
}

static int
tel_qps(const char *cmd __rte_unused, const char *params,
	struct rte_tel_data *d)
{
	const uint32_t max = RTE_TEL_MAX_ARRAY_ENTRIES;
	struct dpr_qp_info *info;
	uint32_t qpn;
	int pi = qp_params(params, &qpn), n, i;

	if (pi < 0 || qpn != UINT32_MAX)
		return -EINVAL;
	info = calloc(max, sizeof(*info));
	if (info == NULL)
		return -ENOMEM;
	n = qp_snapshots((uint16_t)pi, UINT32_MAX, info, max);
	if (n < 0) {
		free(info);
		return n;
	}
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (i = 0; i < n; i++)
		rte_tel_data_add_array_int(d, (int)info[i].qpn);
	free(info);
	return 0;
}

static int
tel_qp(const char *cmd __rte_unused, const char *params,
       struct rte_tel_data *d)
{
	static const char *const wqe_state[] = { "posted", "sending", "sent", "done" };
	struct dpr_qp_info q;
	uint32_t qpn;
	int pi = qp_params(params, &qpn), n;

	if (pi < 0 || qpn == UINT32_MAX)
		return -EINVAL;
	n = qp_snapshots((uint16_t)pi, qpn, &q, 1);
	if (n <= 0)
		return n < 0 ? n : -ENOENT;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "qpn", q.qpn);
	rte_tel_data_add_dict_string(d, "type", q.type == DPR_QPT_UD ? "UD" : "RC");
	if (q.type == DPR_QPT_UD)
		rte_tel_data_add_dict_u64(d, "qkey", q.qkey);
	rte_tel_data_add_dict_u64(d, "dest_qpn", q.dest_qpn);
	rte_tel_data_add_dict_string(d, "state", dpr_qp_state_name(q.state));
	rte_tel_data_add_dict_u64(d, "pmtu", q.pmtu);
	{
		char a[INET6_ADDRSTRLEN], owner[96];

		rte_tel_data_add_dict_string(d, "peer",
					     dpr_gid_ntop(&q.dgid, a, sizeof(a)));
		rte_tel_data_add_dict_u64(d, "sgid_index", q.sgid_index);
		if (qp_owner == NULL || qp_owner((uint16_t)pi, qpn, owner,
						 sizeof(owner)) != 0)
			snprintf(owner, sizeof(owner), "%s", q.qpn == 1 ?
				 "dprdmad (RDMA CM)" : "dprdmad");
		rte_tel_data_add_dict_string(d, "owner", owner);
	}
#define U(f) rte_tel_data_add_dict_u64(d, #f, q.f)
	U(sq_size); U(sq_posted); U(sq_started); U(sq_completed);
	U(req_psn); U(psn_hi); U(comp_psn); U(rd_atomic); U(max_rd_atomic);
	U(retry_cnt); U(retry_left); U(rnr_retry); U(rnr_left); U(timeout);
	U(rnr_wait); U(retried); U(replaying); U(retry_psn); U(retry_end);
	U(mac_resolved); U(on_work); U(timer_armed); U(timer_left_ns);
	U(window); U(srtt_ns); U(min_rtt_ns); U(rate_pps);
	U(cc_limited); U(cc_rate_bps); U(cc_target_bps); U(cc_alpha);
	U(mem_bytes); U(mem_queue_bytes);
	U(rq_posted); U(rq_consumed); U(resp_psn); U(resp_msn);
	U(max_dest_rd_atomic); U(res_unsent); U(ack_pending); U(nak_pending);
	U(nak_syndrome); U(nak_psn); U(sr); U(sr_held);
#undef U
	rte_tel_data_add_dict_string(d, "sec", q.sec);
	if (q.sq_completed != q.sq_posted) {
		char wr_id[24];

		/*
		 * A wr_id is the client's opaque 64-bit cookie, often a pointer
		 * or ~0: as a hex string, since JSON readers such as jansson
		 * refuse integers past INT64_MAX.
		 */
		snprintf(wr_id, sizeof(wr_id), "0x%" PRIx64, q.head.wr_id);
		rte_tel_data_add_dict_string(d, "head_wr_id", wr_id);
		rte_tel_data_add_dict_u64(d, "head_opcode", q.head.opcode);
		rte_tel_data_add_dict_string(d, "head_state",
			q.head.state < RTE_DIM(wqe_state) ? wqe_state[q.head.state] : "?");
		rte_tel_data_add_dict_u64(d, "head_first_psn", q.head.first_psn);
		rte_tel_data_add_dict_u64(d, "head_last_psn", q.head.last_psn);
		rte_tel_data_add_dict_u64(d, "head_length", q.head.length);
		rte_tel_data_add_dict_u64(d, "head_offset", q.head.offset);
		rte_tel_data_add_dict_u64(d, "head_read_done", q.head.read_done);
	}
#define _(n) rte_tel_data_add_dict_u64(d, #n, q.stats.n);
	DPR_QP_STATS(_)
#undef _
	return 0;
}

static int
tel_lcores(const char *cmd __rte_unused, const char *params __rte_unused,
	   struct rte_tel_data *d)
{
	unsigned int i;

	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	for (i = 0; i < dpr_engine.n_workers; i++)
		rte_tel_data_add_array_int(d, (int)dpr_engine.workers[i].lcore_id);
	return 0;
}

static int
tel_lcore_stats(const char *cmd __rte_unused, const char *params,
		struct rte_tel_data *d)
{
	const volatile struct dpr_worker *w = NULL;
	uint64_t rx = 0, tx = 0, drops = 0;
	unsigned int i, pi, r;
	char *end;
	long lcore;

	if (params == NULL || *params == '\0')
		return -EINVAL;
	lcore = strtol(params, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	for (i = 0; i < dpr_engine.n_workers; i++)
		if ((long)dpr_engine.workers[i].lcore_id == lcore)
			w = &dpr_engine.workers[i];
	if (w == NULL)
		return -EINVAL;
	for (pi = 0; pi < dpr_engine.n_ports; pi++) {
		rx += w->ctr[pi].rx_packets;
		tx += w->ctr[pi].tx_packets;
		for (r = 0; r < DPR_DROP_MAX; r++)
			drops += w->ctr[pi].drop[r];
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "lcore", (int)lcore);
	rte_tel_data_add_dict_int(d, "queue", w->queue);
	rte_tel_data_add_dict_u64(d, "polls", w->polls);
	rte_tel_data_add_dict_u64(d, "idle_polls", w->idle_polls);
	rte_tel_data_add_dict_u64(d, "sleeps", w->sleeps);
	rte_tel_data_add_dict_u64(d, "wakeups", w->wakeups);
	rte_tel_data_add_dict_u64(d, "client_wakeups", w->client_wakeups);
	rte_tel_data_add_dict_u64(d, "nap_aborts", w->nap_aborts);
	rte_tel_data_add_dict_u64(d, "rx_wakeups", w->rx_wakeups);
	rte_tel_data_add_dict_u64(d, "rx_nap_aborts", w->rx_nap_aborts);
	rte_tel_data_add_dict_u64(d, "spin_yields", w->spin_yields);
	rte_tel_data_add_dict_u64(d, "spin_cuts", w->spin_cuts);
	rte_tel_data_add_dict_u64(d, "timer_naps", w->timer_naps);
	rte_tel_data_add_dict_u64(d, "rx_packets", rx);
	rte_tel_data_add_dict_u64(d, "tx_packets", tx);
	rte_tel_data_add_dict_u64(d, "drops", drops);
	rte_tel_data_add_dict_u64(d, "handover_tx", w->handover_tx);
	rte_tel_data_add_dict_u64(d, "handover_rx", w->handover_rx);
	rte_tel_data_add_dict_u64(d, "handover_drop", w->handover_drop);
	/* how loaded it is: TSC cycles of loops that had work, of loops that
	 * had none (their sleeps included), frames per non-empty burst */
	rte_tel_data_add_dict_u64(d, "busy_cycles", w->busy_tsc);
	rte_tel_data_add_dict_u64(d, "idle_cycles", w->idle_tsc);
	rte_tel_data_add_dict_u64(d, "busy_percent", w->busy_tsc + w->idle_tsc == 0 ? 0 :
				  100 * w->busy_tsc / (w->busy_tsc + w->idle_tsc));
	rte_tel_data_add_dict_u64(d, "rx_bursts", w->rx_bursts);
	{
		char ppb[32];

		snprintf(ppb, sizeof(ppb), "%.2f",
			 w->rx_bursts ? (double)rx / (double)w->rx_bursts : 0.0);
		rte_tel_data_add_dict_string(d, "rx_packets_per_burst", ppb);
	}
	return 0;
}

/*
 * /dprdma/lcore/callgrind,L,on|off: the window in which callgrind counts
 * the instructions of worker L (dprdmad run under valgrind --tool=callgrind
 * --collect-atstart=no; tools/count-instructions.py). The toggle runs on
 * the worker between two loops, and so does the snapshot of its counters
 * returned with it: the instructions and the frames of a window are those
 * of the same loops, whole.
 */
#define CG_COUNTERS(_) \
	_(polls) _(idle_polls) _(busy_cycles) _(idle_cycles) _(rx_packets) _(tx_packets)

struct cg_cmd {
	struct dpr_cmd c;
	bool on;
	int rc;
#define _(n) uint64_t n;
	CG_COUNTERS(_)
#undef _
	struct dpr_transport_stats tp;
};

static int
cmd_callgrind(struct dpr_worker *w, struct dpr_cmd *c)
{
	struct cg_cmd *g = (struct cg_cmd *)c;
	unsigned int pi;

	g->rc = 0;
	if (g->on == w->counting) {
		g->rc = -EALREADY;
		return 0;
	}
#ifdef DPR_HAVE_CALLGRIND
	if (!RUNNING_ON_VALGRIND) {
		g->rc = -ENOTSUP;
		return 0;
	}
	CALLGRIND_TOGGLE_COLLECT;
#else
	g->rc = -ENOTSUP;
	return 0;
#endif
	w->counting = g->on;
	g->polls = w->polls;
	g->idle_polls = w->idle_polls;
	g->busy_cycles = w->busy_tsc;
	g->idle_cycles = w->idle_tsc;
	memset(&g->tp, 0, sizeof(g->tp));
	g->rx_packets = g->tx_packets = 0;
	for (pi = 0; pi < dpr_engine.n_ports; pi++) {
		const struct dpr_transport_stats *st = dpr_transport_stats(w->tp[pi]);

		g->rx_packets += w->ctr[pi].rx_packets;
		g->tx_packets += w->ctr[pi].tx_packets;
#define _(n) g->tp.n += st->n;
		DPR_TRANSPORT_STATS(_)
#undef _
	}
	return 0;
}

/* ---------------------------------------- the sources of dropped frames */

struct src_call {
	unsigned int wi;
	uint16_t pi;
	unsigned int n;
	uint64_t evicted;
	struct dpr_src_entry e[DPR_SRC_SLOTS];
};

static int
call_sources(void *arg)
{
	struct src_call *a = arg;
	struct dpr_transport *tp = dpr_engine_transport(a->wi, a->pi);

	a->n = tp == NULL ? 0 :
		dpr_transport_sources(tp, a->e, DPR_SRC_SLOTS, &a->evicted);
	return 0;
}

static uint64_t
src_total(const struct dpr_src_entry *e)
{
	uint64_t t = 0;

	for (unsigned int k = 0; k < DPR_SRC_N; k++)
		t += e->n[k];
	return t;
}

static int
by_total(const void *x, const void *y)
{
	const uint64_t a = src_total(x), b = src_total(y);

	return a < b ? 1 : a > b ? -1 : 0;
}

/* PORT: the sources of the port's dropped frames, every worker's, the
 * most frames first (at most 64), each with its frames by reason and how
 * long ago it sent the last: in columns, a row per source */
static int
tel_sources(const char *cmd __rte_unused, const char *params,
	    struct rte_tel_data *d)
{
	static const char *const why[] = {
#define _(n) #n,
		DPR_SRC_REASONS(_)
#undef _
	};
	struct dpr_src_entry *all;
	struct src_call *a;
	unsigned int n = 0, i, j, k;
	uint64_t evicted = 0, now = dpr_engine_now_ns();
	int pi = port_param(params);

	if (pi < 0)
		return -EINVAL;
	a = malloc(sizeof(*a));
	all = calloc((size_t)dpr_engine.n_workers * DPR_SRC_SLOTS, sizeof(*all));
	if (a == NULL || all == NULL) {
		free(a);
		free(all);
		return -ENOMEM;
	}
	for (i = 0; i < dpr_engine.n_workers; i++) {
		*a = (struct src_call){ .wi = i, .pi = (uint16_t)pi };
		if (dpr_engine_call(i, call_sources, a, sizeof(*a), 2000) != 0)
			continue;
		evicted += a->evicted;
		for (j = 0; j < a->n; j++) {
			for (k = 0; k < n && memcmp(&all[k].src, &a->e[j].src,
						    sizeof(all[k].src)) != 0; k++)
				;
			if (k == n)
				all[n++] = a->e[j];
			else {
				for (unsigned int r = 0; r < DPR_SRC_N; r++)
					all[k].n[r] += a->e[j].n[r];
				all[k].last_ns = RTE_MAX(all[k].last_ns, a->e[j].last_ns);
			}
		}
	}
	free(a);
	qsort(all, n, sizeof(*all), by_total);
	n = RTE_MIN(n, 64u);
	/* columns (a dict's containers are arrays): ip, total, each reason,
	 * last_ms_ago; row i is one source */
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "evicted", evicted);
	for (k = 0; k < DPR_SRC_N + 3; k++) {
		struct rte_tel_data *col = rte_tel_data_alloc();

		if (col == NULL)
			break;
		rte_tel_data_start_array(col, k == 0 ? RTE_TEL_STRING_VAL : RTE_TEL_U64_VAL);
		for (i = 0; i < n; i++) {
			char ip[INET6_ADDRSTRLEN];

			if (k == 0)
				rte_tel_data_add_array_string(col,
					dpr_gid_ntop(&all[i].src, ip, sizeof(ip)));
			else if (k == 1)
				rte_tel_data_add_array_u64(col, src_total(&all[i]));
			else if (k < DPR_SRC_N + 2)
				rte_tel_data_add_array_u64(col, all[i].n[k - 2]);
			else
				rte_tel_data_add_array_u64(col, now > all[i].last_ns ?
					(now - all[i].last_ns) / 1000000 : 0);
		}
		rte_tel_data_add_dict_container(d, k == 0 ? "ip" : k == 1 ? "total" :
			k < DPR_SRC_N + 2 ? why[k - 2] : "last_ms_ago", col, 0);
	}
	free(all);
	return 0;
}

/* ------------------------------------------- congestion, at run time */

/* The [congestion] keys a worker's transports take (dpr_cc_params), by
 * dpr_engine_call() on that worker */
struct cc_call {
	unsigned int wi;
	struct dpr_cc_params p;
};

static int
call_congestion(void *arg)
{
	const struct cc_call *a = arg;
	uint16_t pi;

	for (pi = 0; pi < dpr_engine.n_ports; pi++) {
		struct dpr_transport *tp = dpr_engine_transport(a->wi, pi);

		if (tp != NULL)
			dpr_transport_set_cc(tp, &a->p);
	}
	return 0;
}

static void
congestion_dict(struct rte_tel_data *d)
{
	const struct dpr_congestion_conf *c = dpr_congestion_conf(&dpr_engine.conf);

	rte_tel_data_start_dict(d);
#define U(f) rte_tel_data_add_dict_u64(d, #f, c->f)
	U(notify); U(cnp_interval_us); U(cnp_dscp); U(react); U(ecn);
	U(line_rate_gbps); U(rpg_min_rate); U(rpg_ai_rate); U(rpg_hai_rate);
	U(rate_reduce_monitor_period); U(rpg_time_reset); U(rpg_byte_reset);
	U(rpg_threshold); U(dce_tcp_g); U(dce_tcp_rtt); U(initial_alpha_value);
	U(rpg_min_dec_fac); U(clamp_tgt_rate); U(release_periods);
#undef U
}

static int
tel_congestion(const char *cmd __rte_unused, const char *params __rte_unused,
	       struct rte_tel_data *d)
{
	congestion_dict(d);
	return 0;
}

/* KEY,VALUE: a key of the reaction point ([congestion], checked as the
 * file's are) into every worker's transports. The notification point's
 * keys are read when dprdmad starts: refused here. */
static int
tel_congestion_set(const char *cmd __rte_unused, const char *params,
		   struct rte_tel_data *d)
{
	static const char *const fixed[] = { "notify", "cnp_interval_us", "cnp_dscp" };
	struct dpr_congestion_conf *c =
		(struct dpr_congestion_conf *)dpr_congestion_conf(&dpr_engine.conf);
	struct dpr_cc_params p;
	char buf[128], err[256], *val;
	unsigned int i;
	int rc = 0;

	if (params == NULL || strlen(params) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, params);
	val = strchr(buf, ',');
	if (val == NULL)
		return -EINVAL;
	*val++ = '\0';
	for (i = 0; i < RTE_DIM(fixed); i++)
		if (strcmp(buf, fixed[i]) == 0)
			return -EINVAL;
	if (dpr_config_set(&dpr_engine.conf, "congestion", buf, val, "telemetry",
			   err, sizeof(err)) != 0)
		return -EINVAL;
	dpr_congestion_params(c, &p);
	for (i = 0; i < dpr_engine.n_workers && rc == 0; i++) {
		struct cc_call a = { .wi = i, .p = p };

		rc = dpr_engine_call(i, call_congestion, &a, sizeof(a), 5000);
	}
	if (rc != 0)
		return rc;      /* (a worker that timed out takes it later) */
	ENGINE_LOG(NOTICE, "[congestion] %s = %s (telemetry)", buf, val);
	congestion_dict(d);
	return 0;
}

static int
tel_callgrind(const char *cmd __rte_unused, const char *params,
	      struct rte_tel_data *d)
{
	struct cg_cmd *g;
	char buf[32], *end;
	unsigned int i;
	long lcore;
	int rc, wi = -1;

	if (params == NULL || strlen(params) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, params);
	lcore = strtol(buf, &end, 10);
	if (*end != ',' || (strcmp(end + 1, "on") != 0 && strcmp(end + 1, "off") != 0))
		return -EINVAL;
	for (i = 0; i < dpr_engine.n_workers; i++)
		if ((long)dpr_engine.workers[i].lcore_id == lcore)
			wi = (int)i;
	if (wi < 0)
		return -EINVAL;
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return -ENOMEM;
	g->c.fn = cmd_callgrind;
	g->on = strcmp(end + 1, "on") == 0;
	/* a worker under valgrind is slow: a patient time limit */
	rc = dpr_engine_cmd_submit((unsigned int)wi, &g->c, 30000);
	if (rc != 0)
		return rc;      /* the command is no longer ours */
	rc = g->rc;
	if (rc == 0) {
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_string(d, "collect", g->on ? "on" : "off");
#define _(n) rte_tel_data_add_dict_u64(d, #n, g->n);
		CG_COUNTERS(_)
#undef _
#define _(n) rte_tel_data_add_dict_u64(d, "tp_" #n, g->tp.n);
		DPR_TRANSPORT_STATS(_)
#undef _
	}
	free(g);
	return rc;
}

/*
 * /dprdma/statistic,P: the totals `rdma statistic show link rxe0/1` gives
 * for Linux rxe, under rxe's names, where dprdma counts the same event
 * (rxe_hw_counters.c). rxe's retry_exceeded_err, completer_retry_err,
 * ack_deferred, send_err and link_downed have no exact twin here and are
 * left out rather than approximated; /dprdma/transport/stats has the rest.
 */
static int
tel_statistic(const char *cmd __rte_unused, const char *params,
	      struct rte_tel_data *d)
{
	struct dpr_transport_stats s;
	int pi = port_param(params);

	if (pi < 0)
		return -EINVAL;
	transport_sum((uint16_t)pi, &s);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "sent_pkts", s.tx_frames);
	rte_tel_data_add_dict_u64(d, "rcvd_pkts", s.rx_frames);
	rte_tel_data_add_dict_u64(d, "duplicate_request", s.dup_request_rx);
	rte_tel_data_add_dict_u64(d, "out_of_seq_request", s.out_of_seq_rx);
	rte_tel_data_add_dict_u64(d, "rcvd_rnr_err", s.rnr_nak_rx);
	rte_tel_data_add_dict_u64(d, "send_rnr_err", s.rnr_nak_tx);
	rte_tel_data_add_dict_u64(d, "rcvd_seq_err", s.nak_seq_rx);
	return 0;
}

/* /dprdma/log/types: every rte_log type and its level, as the EAL lists
 * them ("id N: dprdma.engine, level is INFO"). */
static int
tel_log_types(const char *cmd __rte_unused, const char *params __rte_unused,
	      struct rte_tel_data *d)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return -ENOMEM;
	rte_log_dump(f);
	fclose(f);
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		while (*line == ' ' || *line == '\t')
			line++;
		if (strncmp(line, "id ", 3) != 0 || strchr(line, ':') == NULL)
			continue;       /* the global level line */
		line = strchr(line, ':') + 2;
		if (rte_tel_data_add_array_string(d, line) != 0)
			break;          /* more types than one reply holds */
	}
	free(buf);
	return 0;
}

static const char *const log_levels[] = {
	[RTE_LOG_EMERG] = "emerg", [RTE_LOG_ALERT] = "alert",
	[RTE_LOG_CRIT] = "crit", [RTE_LOG_ERR] = "err",
	[RTE_LOG_WARNING] = "warning", [RTE_LOG_NOTICE] = "notice",
	[RTE_LOG_INFO] = "info", [RTE_LOG_DEBUG] = "debug",
};

/* /dprdma/log/level,PATTERN,LEVEL: rte_log_set_level_pattern() at run
 * time (the EAL's --log-level PATTERN:LEVEL, e.g. dprdma.*,debug). */
static int
tel_log_level(const char *cmd __rte_unused, const char *params,
	      struct rte_tel_data *d)
{
	char buf[128], *comma;
	unsigned int lvl;

	if (params == NULL || strlen(params) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", params);
	comma = strrchr(buf, ',');
	if (comma == NULL || comma == buf)
		return -EINVAL;
	*comma++ = '\0';
	for (lvl = RTE_LOG_EMERG; lvl <= RTE_LOG_DEBUG; lvl++)
		if (strcasecmp(comma, log_levels[lvl]) == 0 ||
		    (comma[0] == (char)('0' + lvl) && comma[1] == '\0'))
			break;
	if (lvl > RTE_LOG_DEBUG || rte_log_set_level_pattern(buf, lvl) != 0)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "pattern", buf);
	rte_tel_data_add_dict_string(d, "level", log_levels[lvl]);
	return 0;
}

void
dpr_engine_register_telemetry(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	dpr_engine_register_counter_help();
	rte_telemetry_register_cmd("/dprdma/info", tel_info,
		"dprdmad version, uptime, configuration. No parameters");
	rte_telemetry_register_cmd("/dprdma/ports", tel_ports,
		"Port indexes (dprdmaN). No parameters");
	rte_telemetry_register_cmd("/dprdma/port/info", tel_port_info,
		"Addresses, MTU and link of a port. Parameter: port index");
	rte_telemetry_register_cmd("/dprdma/port/stats", tel_port_stats,
		"Counters of a port, drops by reason. Parameter: port index");
	rte_telemetry_register_cmd("/dprdma/transport/stats", tel_transport_stats,
		"RC transport counters of a port, all workers. Parameter: port index");
	rte_telemetry_register_cmd("/dprdma/neigh", tel_neigh,
		"The port's neighbours (IP -> MAC from ARP/ND) as each worker "
		"knows them, as ip neigh shows them. Parameter: port index");
	rte_telemetry_register_cmd("/dprdma/qps", tel_qps,
		"QP numbers of a port, every worker's. Parameter: port index");
	rte_telemetry_register_cmd("/dprdma/qp", tel_qp,
		"One QP's transport state and counters. Parameters: port index,QPN");
	rte_telemetry_register_cmd("/dprdma/lcores", tel_lcores,
		"Worker lcore ids. No parameters");
	rte_telemetry_register_cmd("/dprdma/lcore/stats", tel_lcore_stats,
		"Poll and packet counters of a worker. Parameter: lcore id");
	rte_telemetry_register_cmd("/dprdma/lcore/callgrind", tel_callgrind,
		"Callgrind counts a worker from on to off (its counters at "
		"each). Parameters: LCORE,on|off");
	rte_telemetry_register_cmd("/dprdma/transport/sources", tel_sources,
		"Who sent the frames a port dropped, by reason, the most first "
		"(every worker's). Parameter: port index");
	rte_telemetry_register_cmd("/dprdma/congestion", tel_congestion,
		"DCQCN's settings ([congestion]) as the workers run them. No "
		"parameters");
	rte_telemetry_register_cmd("/dprdma/congestion/set", tel_congestion_set,
		"Set a reaction point key of [congestion] on every worker, from "
		"now on. Parameters: KEY,VALUE (as in the file)");
	rte_telemetry_register_cmd("/dprdma/statistic", tel_statistic,
		"A port's totals under Linux rxe's rdma statistic names. "
		"Parameter: port index");
	rte_telemetry_register_cmd("/dprdma/log/types", tel_log_types,
		"Every log type and its level. No parameters");
	rte_telemetry_register_cmd("/dprdma/log/level", tel_log_level,
		"Set the level of the log types matching a pattern. "
		"Parameters: PATTERN,LEVEL (emerg..debug or 1..8)");
}

void
dpr_engine_print_stats(FILE *f)
{
	const struct dpr_engine *e = &dpr_engine;
	unsigned int i, d;

	for (i = 0; i < e->n_ports; i++) {
		struct dpr_port_counters c;
		uint64_t drops = 0;

		dpr_port_counters_sum(i, &c);
		for (d = 0; d < DPR_DROP_MAX; d++)
			drops += c.drop[d];
		fprintf(f, "dprdma%u: rx %" PRIu64 " tx %" PRIu64 " | arp %" PRIu64
			"/%" PRIu64 " ping %" PRIu64 "/%" PRIu64 " roce %" PRIu64
			" | dropped %" PRIu64 "\n", i, c.rx_packets, c.tx_packets,
			c.arp_request_rx, c.arp_reply_tx, c.icmp_echo_rx,
			c.icmp_echo_reply_tx, c.roce_rx_packets, drops);
	}
	fflush(f);
}

void
dpr_engine_print_summary(FILE *f)
{
	const struct dpr_engine *e = &dpr_engine;
	unsigned int i, d;

	for (i = 0; i < e->n_ports; i++) {
		struct dpr_port_counters c;

		dpr_port_counters_sum(i, &c);
		fprintf(f, "dprdma%u (%s):\n", i, e->ports[i].name);
#define _(n) fprintf(f, "  %-28s %" PRIu64 "\n", #n, c.n);
		DPR_PORT_COUNTERS(_)
#undef _
		for (d = 0; d < DPR_DROP_MAX; d++)
			if (c.drop[d] != 0)
				fprintf(f, "  %-28s %" PRIu64 "  (%s)\n",
					dpr_drop_names[d], c.drop[d],
					dpr_drop_help[d]);
	}
	fflush(f);
}
