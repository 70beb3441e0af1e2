/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The engine's part of the configuration: the [engine] section and the
 * engine's keys of [port0]..[port7] (address, MTU, rings), registered with
 * lib/config, defaults and checks included.
 */

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include <rte_common.h>

#include "dpr_engine.h"
#include "dpr_shm.h"
#include "dpr_transport.h"

static const char *const idle_names[] = { "busy", "yield", NULL };
static const char *const tx_payload_names[] = { "auto", "attach", "copy", NULL };

#define G_OFF(f) offsetof(struct dpr_engine_conf, f)
#define G_SZ(f) sizeof(((struct dpr_engine_conf *)0)->f)
#define P_OFF(f) offsetof(struct dpr_port_conf, f)
#define P_SZ(f) sizeof(((struct dpr_port_conf *)0)->f)

static const struct dpr_conf_key engine_keys[] = {
	{ "burst", DPR_CONF_UINT, G_OFF(burst), G_SZ(burst), 1, DPR_MAX_BURST,
	  .help = "packets per RX/TX burst" },
	{ "mbufs", DPR_CONF_UINT, G_OFF(mbufs), G_SZ(mbufs), 0, 4194304,
	  .help = "mbufs in the packet pool, 0 = sized from the ports' rings "
		  "and the worker count" },
	{ "idle", DPR_CONF_ENUM, G_OFF(idle), G_SZ(idle), .names = idle_names,
	  .help = "what a worker does with nothing to do: busy (spin, one "
		  "core per worker, lowest latency) or yield (sleep, shares cores)" },
	{ "idle_sleep_us", DPR_CONF_UINT, G_OFF(idle_sleep_us), G_SZ(idle_sleep_us),
	  1, 100000, .help = "microseconds a yielding worker sleeps when idle" },
	{ "idle_spin_us", DPR_CONF_UINT, G_OFF(idle_spin_us), G_SZ(idle_spin_us),
	  0, 100000, .help = "microseconds a yielding worker keeps polling "
			     "after its last work, giving up the CPU between "
			     "polls, before it sleeps; 0: sleep at once" },
	{ "zero_copy", DPR_CONF_UINT, G_OFF(zero_copy), G_SZ(zero_copy), 0, 65536,
	  .help = "payload pieces of at least this many bytes are sent from "
		  "the MR where they lie (external buffers), smaller ones are "
		  "copied; 0: always copy" },
	{ "tx_payload", DPR_CONF_ENUM, G_OFF(tx_payload), G_SZ(tx_payload),
	  .names = tx_payload_names,
	  .help = "auto: copy payload on ports whose driver copies frames "
		  "anyway (memif, af_packet, tap, af_xdp), attach it elsewhere; "
		  "attach or copy: on every port" },
	{ "stats_interval", DPR_CONF_UINT, G_OFF(stats_interval),
	  G_SZ(stats_interval), 0, 86400,
	  .help = "seconds between counter lines on stdout, 0 = none" },
};

static void
engine_defaults(void *area, int port __rte_unused)
{
	struct dpr_engine_conf *g = area;

	g->burst = 32;
	g->mbufs = 0;
	/* Yield by default: the default runs on virtual devices on machines
	 * shared with other work. A box with a core per worker sets busy. */
	g->idle = DPR_IDLE_YIELD;
	g->idle_sleep_us = 100;
	g->idle_spin_us = 20;
	g->stats_interval = 0;
	g->zero_copy = 256;
	g->tx_payload = DPR_TXP_AUTO;
}

#define T_OFF(f) offsetof(struct dpr_transport_knobs, f)
#define T_SZ(f) sizeof(((struct dpr_transport_knobs *)0)->f)

static const char *const sr_names[] = { "auto", "off", NULL };

static const struct dpr_conf_key transport_keys[] = {
	{ "max_inflight", DPR_CONF_UINT, T_OFF(max_inflight), T_SZ(max_inflight),
	  0, 1u << 22,
	  .help = "packets an RC QP has sent and not yet seen acknowledged, at "
		  "most; 0 = the default, 1024 (also the most with "
		  "selective_repeat = auto)" },
	{ "min_inflight", DPR_CONF_UINT, T_OFF(min_inflight), T_SZ(min_inflight),
	  0, 1u << 22,
	  .help = "what an RC QP keeps in flight on top of twice its "
		  "measured bandwidth-delay product (its delivery rate x its "
		  "least RTT), up to max_inflight in all, and its window "
		  "until it has measured; 0 = no measuring: every window "
		  "is max_inflight" },
	{ "rto_min_us", DPR_CONF_UINT, T_OFF(rto_min_us), T_SZ(rto_min_us),
	  0, 10000000,
	  .help = "the least adaptive retransmission timeout (RTT + 4 x its "
		  "deviation, measured per QP); 0 = none: only the IBA local "
		  "ACK timeout of the QP retransmits" },
	{ "selective_repeat", DPR_CONF_ENUM, T_OFF(selective_repeat),
	  T_SZ(selective_repeat), .names = sr_names,
	  .help = "auto: RC QPs to a peer box that says it speaks selective "
		  "repeat (asked on QP1, needs [cm] enabled) resend only what "
		  "was lost; off: go-back-N with every peer, as IBA" },
	{ "sr_hold", DPR_CONF_UINT, T_OFF(sr_hold), T_SZ(sr_hold), 64, 65536,
	  .help = "request frames a worker holds past gaps for selective "
		  "repeat, per port (mbufs added to the pool)" },
};

static void
transport_defaults(void *area, int port __rte_unused)
{
	struct dpr_transport_knobs *t = area;

	t->max_inflight = 0;
	t->min_inflight = 128;
	t->rto_min_us = 30;
	t->selective_repeat = DPR_SRK_AUTO;
	t->sr_hold = 2048;
}

static struct dpr_conf_room transport_room = {
	.section = "transport",
	.size = sizeof(struct dpr_transport_knobs),
	.keys = transport_keys,
	.n_keys = RTE_DIM(transport_keys),
	.defaults = transport_defaults,
};

#define S_OFF(f) offsetof(struct dpr_security_conf, f)
#define S_SZ(f) sizeof(((struct dpr_security_conf *)0)->f)

static const char *const sec_mode_names[] = { "none", "auth", "encrypt", NULL };
static const char *const sec_policy_names[] = { "opportunistic", "required", NULL };

static int
subnets_parse(void *area, const char *value, char *why, size_t len)
{
	struct dpr_security_conf *c = area;
	int n = dpr_sec_subnets_parse(value, c->subnets, DPR_SEC_MAX_SUBNETS, why, len);

	if (n < 0)
		return -1;
	c->n_subnets = (unsigned int)n;
	return 0;
}

static void
subnets_format(const void *area, char *buf, size_t len)
{
	const struct dpr_security_conf *c = area;

	dpr_sec_subnets_format(c->subnets, c->n_subnets, buf, len);
}

static const struct dpr_conf_key security_keys[] = {
	{ "mode", DPR_CONF_ENUM, S_OFF(mode), S_SZ(mode), .names = sec_mode_names,
	  .help = "secure RC/UC QPs with dprdma peers that hold the same "
		  "pre-shared key: none (plain RoCEv2 with everyone), auth "
		  "(every frame authenticated, AES-GMAC) or encrypt (AES-GCM); "
		  "the stronger of the two boxes' modes is used; needs [cm]" },
	{ "policy", DPR_CONF_ENUM, S_OFF(required), S_SZ(required),
	  .names = sec_policy_names,
	  .help = "opportunistic: plain with peers that cannot be secure (rxe, "
		  "NICs, another key); required: such a QP goes to ERR and the "
		  "log says why" },
	{ "subnets", DPR_CONF_CUSTOM, .parse = subnets_parse, .format = subnets_format,
	  .help = "policies per peer subnet over policy, e.g. 10.1.0.0/16=required "
		  "192.168.0.0/16=none (plain with them; the longest prefix "
		  "counts)" },
	{ "quarantine_drops", DPR_CONF_UINT, S_OFF(quarantine_drops),
	  S_SZ(quarantine_drops), 0, 10000000,
	  .help = "a source with this many frames dropped within a second is "
		  "quarantined: what it sends that the transport would look at "
		  "is dropped at once, for quarantine_s; 0: never" },
	{ "quarantine_s", DPR_CONF_UINT, S_OFF(quarantine_s), S_SZ(quarantine_s),
	  1, 86400, .help = "seconds a quarantine lasts" },
	{ "psk", DPR_CONF_STR, S_OFF(psk), S_SZ(psk), 0, 0, .secret = true,
	  .help = "the pre-shared key, 64 hex digits or more (32 bytes: "
		  "openssl rand -hex 32); prefer psk_file" },
	{ "psk_file", DPR_CONF_STR, S_OFF(psk_file), S_SZ(psk_file), 0, 0,
	  .help = "a file (mode 0600) that holds the pre-shared key in hex" },
};

static void
security_defaults(void *area, int port __rte_unused)
{
	struct dpr_security_conf *c = area;

	memset(c, 0, sizeof(*c));
	c->quarantine_s = 10;
}

static struct dpr_conf_room security_room = {
	.section = "security",
	.size = sizeof(struct dpr_security_conf),
	.keys = security_keys,
	.n_keys = RTE_DIM(security_keys),
	.defaults = security_defaults,
};

#define C_OFF(f) offsetof(struct dpr_congestion_conf, f)
#define C_SZ(f) sizeof(((struct dpr_congestion_conf *)0)->f)

static const char *const off_on_names[] = { "off", "on", NULL };

/* ConnectX's defaults (mlxconfig: min_time_between_cnps 4 us, CNPs at
 * DSCP 48; the reaction point's keys by their mlxconfig names) */
static const struct dpr_conf_key congestion_keys[] = {
	{ "notify", DPR_CONF_ENUM, C_OFF(notify), C_SZ(notify), .names = off_on_names,
	  .help = "on: an RC/UC frame that arrives marked CE (ECN congestion "
		  "experienced) makes its QP send the peer's QP a CNP, as a "
		  "RoCE NIC's DCQCN notification point does; off: CE is "
		  "counted only" },
	{ "cnp_interval_us", DPR_CONF_UINT, C_OFF(cnp_interval_us),
	  C_SZ(cnp_interval_us), 0, 1000000,
	  .help = "at most one CNP per QP in this many microseconds "
		  "(min_time_between_cnps); 0 = one for every CE-marked frame" },
	{ "cnp_dscp", DPR_CONF_UINT, C_OFF(cnp_dscp), C_SZ(cnp_dscp), 0, 63,
	  .help = "the DSCP of the CNPs sent (ECN bits Not-ECT)" },
	/* the reaction point: mlxconfig's names, units and defaults */
	{ "react", DPR_CONF_ENUM, C_OFF(react), C_SZ(react), .names = off_on_names,
	  .help = "on: a CNP from an RC/UC QP's peer cuts the QP's send rate "
		  "and a pacer holds it there while it climbs back (DCQCN's "
		  "reaction point); off: CNPs are counted only" },
	{ "ecn", DPR_CONF_ENUM, C_OFF(ecn), C_SZ(ecn), .names = off_on_names,
	  .help = "on: RC/UC frames go out ECN-capable (ECT(0)), so that a "
		  "switch marks them instead of dropping them; off: the "
		  "address vector's ECN bits" },
	{ "line_rate_gbps", DPR_CONF_UINT, C_OFF(line_rate_gbps),
	  C_SZ(line_rate_gbps), 1, 1000,
	  .help = "the most a QP is paced at; a QP whose rate climbs back to "
		  "it is unpaced (and the rate a QP starts from when it has "
		  "not measured its own)" },
	{ "rpg_min_rate", DPR_CONF_UINT, C_OFF(rpg_min_rate), C_SZ(rpg_min_rate),
	  1, 1000000, .help = "Mbit/s: no cut goes below it" },
	{ "rpg_ai_rate", DPR_CONF_UINT, C_OFF(rpg_ai_rate), C_SZ(rpg_ai_rate),
	  1, 1000000, .help = "Mbit/s the target grows by in additive increase" },
	{ "rpg_hai_rate", DPR_CONF_UINT, C_OFF(rpg_hai_rate), C_SZ(rpg_hai_rate),
	  1, 1000000, .help = "Mbit/s the target grows by in hyper increase" },
	{ "rate_reduce_monitor_period", DPR_CONF_UINT,
	  C_OFF(rate_reduce_monitor_period), C_SZ(rate_reduce_monitor_period),
	  1, 1000000, .help = "us: at most one cut a QP per this" },
	{ "rpg_time_reset", DPR_CONF_UINT, C_OFF(rpg_time_reset),
	  C_SZ(rpg_time_reset), 1, 10000000,
	  .help = "us without a CNP that make a timer stage of increase" },
	{ "rpg_byte_reset", DPR_CONF_UINT, C_OFF(rpg_byte_reset),
	  C_SZ(rpg_byte_reset), 0, 1u << 30,
	  .help = "bytes sent without a CNP that make a byte stage of "
		  "increase (0: no byte stages)" },
	{ "rpg_threshold", DPR_CONF_UINT, C_OFF(rpg_threshold),
	  C_SZ(rpg_threshold), 1, 31,
	  .help = "stages of fast recovery before additive increase" },
	{ "dce_tcp_g", DPR_CONF_UINT, C_OFF(dce_tcp_g), C_SZ(dce_tcp_g), 0, 1023,
	  .help = "alpha keeps dce_tcp_g/1024 of itself each dce_tcp_rtt (the "
		  "rest goes to 1 if a CNP came, to 0 if none did)" },
	{ "dce_tcp_rtt", DPR_CONF_UINT, C_OFF(dce_tcp_rtt), C_SZ(dce_tcp_rtt),
	  1, 1000000, .help = "us: alpha's update period" },
	{ "initial_alpha_value", DPR_CONF_UINT, C_OFF(initial_alpha_value),
	  C_SZ(initial_alpha_value), 0, 1023,
	  .help = "alpha (/1024) at a QP's first CNP" },
	{ "rpg_min_dec_fac", DPR_CONF_UINT, C_OFF(rpg_min_dec_fac),
	  C_SZ(rpg_min_dec_fac), 1, 100,
	  .help = "%: the most one cut takes off the rate" },
	{ "clamp_tgt_rate", DPR_CONF_ENUM, C_OFF(clamp_tgt_rate),
	  C_SZ(clamp_tgt_rate), .names = off_on_names,
	  .help = "on: every cut sets the target to the rate before it; off: "
		  "only a cut after an increase does" },
	{ "release_periods", DPR_CONF_UINT, C_OFF(release_periods),
	  C_SZ(release_periods), 0, 1000000,
	  .help = "a QP sends unpaced again after this many rpg_time_reset "
		  "periods without a CNP (0: only once its rate is back at "
		  "line_rate_gbps); not a ConnectX key: a software box has "
		  "no line rate of its own to climb back to" },
};

static void
congestion_defaults(void *area, int port __rte_unused)
{
	struct dpr_congestion_conf *c = area;

	c->notify = 1;
	c->cnp_interval_us = 4;
	c->cnp_dscp = 48;
	/* the transport's, in mlxconfig's units */
	{
		struct dpr_cc_params d;

		dpr_cc_defaults(&d);
		c->react = d.react;
		c->ecn = d.ect;
		c->line_rate_gbps = (unsigned int)(d.line_rate_bps / 1000000000u);
		c->rpg_min_rate = (unsigned int)(d.min_rate_bps / 1000000u);
		c->rpg_ai_rate = (unsigned int)(d.ai_rate_bps / 1000000u);
		c->rpg_hai_rate = (unsigned int)(d.hai_rate_bps / 1000000u);
		c->rate_reduce_monitor_period = d.decrease_period_ns / 1000u;
		c->rpg_time_reset = d.time_reset_ns / 1000u;
		c->rpg_byte_reset = d.byte_reset;
		c->rpg_threshold = d.threshold;
		c->dce_tcp_g = d.alpha_keep;
		c->dce_tcp_rtt = d.alpha_period_ns / 1000u;
		c->initial_alpha_value = d.initial_alpha;
		c->rpg_min_dec_fac = d.min_dec_fac;
		c->clamp_tgt_rate = d.clamp;
		c->release_periods = d.release_periods;
	}
}

static struct dpr_conf_room congestion_room = {
	.section = "congestion",
	.size = sizeof(struct dpr_congestion_conf),
	.keys = congestion_keys,
	.n_keys = RTE_DIM(congestion_keys),
	.defaults = congestion_defaults,
};

#define L_OFF(f) offsetof(struct dpr_limits_conf, f)
#define L_SZ(f) sizeof(((struct dpr_limits_conf *)0)->f)

/* What a port holds is bounded by the 24-bit QPN and key (their low bits
 * index the tables, lib/verbs) and by memory; what a client holds, by the
 * shared-memory ABI's 65,536 QP slots (lib/shm). Each QP's rings are a
 * mapping in dprdmad and one in its client: vm.max_map_count (65,530 by
 * default) bounds both (doc/deploying.rst). */
static const struct dpr_conf_key limits_keys[] = {
	{ "qps", DPR_CONF_UINT, L_OFF(qps), L_SZ(qps), 16, (1u << 23) - 1,
	  .help = "QPs a port holds for all its clients (its QPNs keep 24 - "
		  "log2(qps + 1) random bits above the table index)" },
	{ "cqs", DPR_CONF_UINT, L_OFF(cqs), L_SZ(cqs), 16, 1u << 22,
	  .help = "CQs a port holds" },
	{ "pds", DPR_CONF_UINT, L_OFF(pds), L_SZ(pds), 16, 1u << 22,
	  .help = "protection domains a port holds" },
	{ "mrs", DPR_CONF_UINT, L_OFF(mrs), L_SZ(mrs), 16, (1u << 23) - 1,
	  .help = "memory regions a port holds (their keys keep 32 - "
		  "log2(mrs + 1) random bits above the table index)" },
	{ "client_qps", DPR_CONF_UINT, L_OFF(client_qps), L_SZ(client_qps), 1,
	  DPR_SHM_MAX_QPS, .help = "QPs one client (device context) may hold" },
	{ "client_cqs", DPR_CONF_UINT, L_OFF(client_cqs), L_SZ(client_cqs), 1,
	  1u << 22, .help = "CQs one client may hold" },
	{ "client_pds", DPR_CONF_UINT, L_OFF(client_pds), L_SZ(client_pds), 1,
	  1u << 22, .help = "protection domains one client may hold" },
	{ "client_mrs", DPR_CONF_UINT, L_OFF(client_mrs), L_SZ(client_mrs), 1,
	  (1u << 23) - 1, .help = "memory regions one client may hold" },
};

static void
limits_defaults(void *area, int port __rte_unused)
{
	struct dpr_limits_conf *l = area;

	/* rxe's are 65,536 QPs (with 8 random QPN bits here: 65,535) and
	 * 32,764 PDs; a program holds a QP, a PD and two CQs per connection
	 * (ucmatose, librpma) */
	l->qps = 65535;
	l->cqs = 131072;
	l->pds = 65536;
	l->mrs = 65535;
	l->client_qps = 65535;
	l->client_cqs = 131072;
	l->client_pds = 65536;
	l->client_mrs = 65535;
}

static struct dpr_conf_room limits_room = {
	.section = "limits",
	.size = sizeof(struct dpr_limits_conf),
	.keys = limits_keys,
	.n_keys = RTE_DIM(limits_keys),
	.defaults = limits_defaults,
};

static struct dpr_conf_room engine_room = {
	.section = "engine",
	.size = sizeof(struct dpr_engine_conf),
	.keys = engine_keys,
	.n_keys = RTE_DIM(engine_keys),
	.defaults = engine_defaults,
};

/* ip: A.B.C.D/LEN, a usable unicast host address */
static int
parse_ip(void *area, const char *value, char *why, size_t len)
{
	struct dpr_port_conf *pc = area;
	uint32_t ip, h;
	uint8_t plen;

	if (dpr_parse_ipv4_prefix(value, &ip, &plen) != 0) {
		snprintf(why, len, ": expected an IPv4 address with prefix length, "
			 "e.g. 10.77.0.1/24");
		return -1;
	}
	h = ntohl(ip);
	if (h == 0 || (h >> 24) == 127 || (h >> 28) >= 0xe ||
	    (plen < 31 && (h | (0xffffffffu >> plen)) == h && plen > 0) ||
	    (plen < 31 && (h & (0xffffffffu >> plen)) == 0 && plen > 0)) {
		snprintf(why, len, ": not a usable unicast host address (not 0, "
			 "loopback, multicast, or the subnet's network or broadcast "
			 "address)");
		return -1;
	}
	pc->ip = ip;
	pc->prefix_len = plen;
	return 0;
}

static void
format_ip(const void *area, char *buf, size_t len)
{
	const struct dpr_port_conf *pc = area;
	char a[INET_ADDRSTRLEN];

	if (pc->ip == 0) {
		buf[0] = '\0';
		return;
	}
	inet_ntop(AF_INET, &pc->ip, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, pc->prefix_len);
}

/* ipv6: ADDR/LEN, a global or unique-local unicast address; empty: none */
static int
parse_ip6(void *area, const char *value, char *why, size_t len)
{
	static const uint8_t zero[16];
	struct dpr_port_conf *pc = area;
	uint8_t ip[16];
	uint8_t plen;

	if (value[0] == '\0') {
		/* empty: the link-local address alone */
		memset(pc->ip6, 0, sizeof(pc->ip6));
		pc->ip6_prefix_len = 0;
		return 0;
	}
	if (dpr_parse_ipv6_prefix(value, ip, &plen) != 0) {
		snprintf(why, len, ": expected an IPv6 address with prefix length, "
			 "e.g. fd77::1/64");
		return -1;
	}
	/* RFC 4291 2.4: not unspecified, loopback, multicast, link-local
	 * (the port has its own from its MAC) or IPv4-mapped (set ip) */
	if (memcmp(ip, zero, 15) == 0 || ip[0] == 0xff ||
	    (ip[0] == 0xfe && (ip[1] & 0xc0) == 0x80) ||
	    (memcmp(ip, zero, 10) == 0 && ip[10] == 0xff && ip[11] == 0xff)) {
		snprintf(why, len, ": not a usable global or unique-local unicast "
			 "address (not ::, ::1, multicast, link-local fe80::/10 "
			 "(every port has one from its MAC) or IPv4-mapped (set "
			 "ip instead))");
		return -1;
	}
	if (plen == 0 || plen > 127) {
		snprintf(why, len, ": prefix length must be 1 to 127 (64 on an "
			 "Ethernet link)");
		return -1;
	}
	memcpy(pc->ip6, ip, 16);
	pc->ip6_prefix_len = plen;
	return 0;
}

static void
format_ip6(const void *area, char *buf, size_t len)
{
	static const uint8_t zero[16];
	const struct dpr_port_conf *pc = area;
	char a[INET6_ADDRSTRLEN];

	if (memcmp(pc->ip6, zero, 16) == 0) {
		buf[0] = '\0';
		return;
	}
	inet_ntop(AF_INET6, pc->ip6, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, pc->ip6_prefix_len);
}

static const struct dpr_conf_key port_keys[] = {
	{ "ip", DPR_CONF_CUSTOM, .parse = parse_ip, .format = format_ip,
	  .help = "IPv4 address and prefix length, e.g. 10.77.0.1/24; the "
		  "port answers ARP and ping for it and speaks RoCEv2 from it" },
	{ "ipv6", DPR_CONF_CUSTOM, .parse = parse_ip6, .format = format_ip6,
	  .help = "IPv6 address and prefix length, e.g. fd77::1/64 (GID index "
		  "2); every port also has the link-local fe80:: address of its "
		  "MAC (GID index 0); the port answers neighbour discovery and "
		  "ping for both" },
	{ "mtu", DPR_CONF_UINT, P_OFF(mtu), P_SZ(mtu), 576, 9216,
	  .help = "Ethernet MTU; the RoCE path MTU follows as rxe computes it "
		  "(1500 -> 1024, 4200 -> 4096)" },
	{ "rx_desc", DPR_CONF_UINT, P_OFF(rx_desc), P_SZ(rx_desc), 64, 16384,
	  .pow2 = true, .help = "RX descriptors per queue (power of two)" },
	{ "tx_desc", DPR_CONF_UINT, P_OFF(tx_desc), P_SZ(tx_desc), 64, 16384,
	  .pow2 = true, .help = "TX descriptors per queue (power of two)" },
};

static void
port_defaults(void *area, int port)
{
	struct dpr_port_conf *pc = area;

	pc->mtu = 1500;
	pc->rx_desc = 1024;
	pc->tx_desc = 1024;
	if (port == 0) {
		pc->ip = htonl(0x0a4d0001); /* 10.77.0.1 */
		pc->prefix_len = 24;
	}
}

static struct dpr_conf_room port_room = {
	.section = "port",
	.per_port = true,
	.size = sizeof(struct dpr_port_conf),
	.keys = port_keys,
	.n_keys = RTE_DIM(port_keys),
	.defaults = port_defaults,
};

void
dpr_engine_config_register(void)
{
	/* two rooms of a few dozen bytes: they fit */
	dpr_config_register(&engine_room);
	dpr_config_register(&port_room);
	dpr_config_register(&transport_room);
	dpr_config_register(&limits_room);
	dpr_config_register(&security_room);
	dpr_config_register(&congestion_room);
}

const struct dpr_congestion_conf *
dpr_congestion_conf(const struct dpr_config *conf)
{
	return dpr_config_room(conf, &congestion_room, 0);
}

void
dpr_congestion_params(const struct dpr_congestion_conf *c, struct dpr_cc_params *p)
{
	*p = (struct dpr_cc_params){
		.react = c->react != 0,
		.ect = c->ecn != 0,
		.line_rate_bps = c->line_rate_gbps * 1000000000ull,
		.min_rate_bps = c->rpg_min_rate * 1000000ull,
		.ai_rate_bps = c->rpg_ai_rate * 1000000ull,
		.hai_rate_bps = c->rpg_hai_rate * 1000000ull,
		.decrease_period_ns = c->rate_reduce_monitor_period * 1000u,
		.time_reset_ns = c->rpg_time_reset * 1000u,
		.byte_reset = c->rpg_byte_reset,
		.threshold = c->rpg_threshold,
		.alpha_period_ns = c->dce_tcp_rtt * 1000u,
		.alpha_keep = c->dce_tcp_g,
		.initial_alpha = c->initial_alpha_value,
		.min_dec_fac = c->rpg_min_dec_fac,
		.clamp = c->clamp_tgt_rate != 0,
		.release_periods = c->release_periods,
	};
}

const struct dpr_security_conf *
dpr_security_conf(const struct dpr_config *conf)
{
	return dpr_config_room(conf, &security_room, 0);
}

const struct dpr_transport_knobs *
dpr_transport_knobs(const struct dpr_config *conf)
{
	return dpr_config_room(conf, &transport_room, 0);
}

const struct dpr_limits_conf *
dpr_limits_conf(const struct dpr_config *conf)
{
	return dpr_config_room(conf, &limits_room, 0);
}

const struct dpr_engine_conf *
dpr_engine_conf(const struct dpr_config *conf)
{
	return dpr_config_room(conf, &engine_room, 0);
}

const struct dpr_port_conf *
dpr_port_conf(const struct dpr_config *conf, unsigned int port)
{
	return dpr_config_room(conf, &port_room, port);
}
