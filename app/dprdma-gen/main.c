/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdma-gen: a RoCEv2 traffic generator on one DPDK port, to test a box
 * the way hardware is tested.
 *
 *   dprdma-gen [EAL options] -- --mode rc  --ip A/LEN --dst B --rqpn N[,N..]
 *              --rpsn N[,N..] [--op write|send|read] [--size B] [--qps N]
 *              [--rkey K --va VA [--stride B]] [--rate PPS] [--seconds S]
 *              [--count N] [--window PKTS] [--rd-atomic N] [--mtu B] ...
 *   dprdma-gen [EAL options] -- --mode raw --ip A/LEN --dst B --size B ...
 *   dprdma-gen [EAL options] -- --mode sink [--seconds S]
 *   dprdma-gen [EAL options] -- --mode ping --ip A/LEN --dst B --size B
 *              [--count N]
 *   dprdma-gen [EAL options] -- --mode echo [--seconds S]
 *
 * rc: the requester side of --qps RC QPs (ours numbered --qpn, +1, ...;
 * PSNs from --psn) against a responder whose QPs the caller set up (the
 * remote QPNs and first PSNs given, connected to ours). It sends WRITE,
 * SEND or READ messages of --size bytes flat out or at --rate packets per
 * second, keeps --window packets (READs: --rd-atomic requests) in flight
 * per QP, and acts on what comes back as an RC requester must: ACKs move
 * the window, a PSN sequence NAK or a timeout goes back to the message
 * holding the PSN, an RNR NAK waits, any other NAK ends that QP (the
 * responder's QP is in the error state). Frames are built and checked by
 * lib/wire (ICRC included). ARP is answered and the responder's MAC
 * resolved unless --dst-mac gives it.
 * raw: plain UDP frames of --size bytes (the whole frame) to --dst port 9,
 * flat out or at --rate: the link's own limit, for comparison.
 * sink: counts every frame it receives; ends --seconds after the first
 * one, or after half a second without any.
 * ping and echo: the link's own round trip, for comparison with RDMA
 * latency. ping sends one raw frame of --size bytes at a time (its number
 * in the payload) and waits for it to come back before the next, --count
 * times (10000); echo sends back every frame it receives, as it came, and
 * ends as sink does. ping reports half the round trip (average, median,
 * 99th percentile), as perftest and sockperf report latency.
 *
 * Each prints a summary and, last, one JSON line (--json: only that line).
 * Exit status: 0, 1 for a run-time failure (no link, peer not resolved,
 * a QP ended by a NAK), 2 for bad options.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "dpr_wire.h"

#define DPR_CLI_NAME "dprdma-gen"
#include "dpr_cli.h"

#define BURST 32
#define MAX_QPS 65536
#define TIMEOUT_US 4000          /* no progress for this long: go back */
#define RNR_WAIT_US 100

enum gen_mode { M_RC, M_RAW, M_SINK, M_PING, M_ECHO };
enum gen_op { G_WRITE, G_SEND, G_READ };

struct gen_opts {
	enum gen_mode mode;
	enum gen_op op;
	uint32_t size;
	uint32_t qps;
	uint32_t qpn;
	uint32_t psn;
	uint32_t rqpn[MAX_QPS];
	uint32_t rpsn[MAX_QPS];
	unsigned int n_rqpn, n_rpsn;
	uint32_t rkey;
	uint64_t va;
	uint64_t stride;
	uint32_t mtu;
	uint32_t window;
	uint32_t rd_atomic;
	double rate;
	double secs;
	uint64_t count;
	rte_be32_t ip, dst;
	bool dst_mac_set;
	struct rte_ether_addr dst_mac;
	bool json;
	bool linger;
};

struct gen_qp {
	uint32_t qpn, rqpn, psn0;
	uint64_t next;       /* packet index to send next */
	uint64_t high;       /* one past the highest packet index sent */
	uint64_t una;        /* oldest packet index not acknowledged */
	uint64_t progress;   /* TSC of the last forward move */
	uint64_t pause;      /* TSC before which nothing is sent (RNR) */
	uint64_t nak_idx;    /* the last NAK acted on, and when */
	uint64_t nak_tsc;
	bool dead;
	uint16_t sport;
};

struct gen_stats {
	uint64_t tx_frames, tx_bytes, rx_frames, rx_bytes;
	uint64_t acks, naks_seq, naks_rnr, naks_other, read_resp, timeouts;
	uint64_t retransmitted, rx_bad, rx_other, arp_replies;
	uint8_t last_nak;
	/* ping: half round trips, microseconds */
	double lat_avg_us, lat_p50_us, lat_p99_us;
};

static struct gen_opts o;
static struct gen_qp *qps;
static struct gen_stats st;
static struct rte_mempool *pool;
static struct rte_ether_addr own_mac;
static uint64_t hz;
static uint32_t ppm;          /* packets per message */
static uint64_t last_progress; /* TSC of the last ACK or response that moved */
static uint8_t payload[9216];
static volatile sig_atomic_t quit;

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}


static void
usage(FILE *f)
{
	fprintf(f,
"usage: dprdma-gen [EAL options] -- --mode rc|raw|sink|ping|echo [options]\n"
"  --ip ADDR/LEN       this end's IPv4 address (rc, raw)\n"
"  --dst ADDR          the responder's (or sink's) IPv4 address\n"
"  --dst-mac MAC       its MAC (else resolved by ARP)\n"
"  --op write|send|read  (write)\n"
"  --size BYTES        message size (rc, 64); whole frame size (raw, ping:\n"
"                      60..9000)\n"
"  --qps N             QPs (1..%d, 1)\n"
"  --qpn N             our first QPN (0x100)\n"
"  --psn N             our first PSN (0)\n"
"  --rqpn N[,N...]     the responder's QPNs, one per QP (@FILE: read from FILE)\n"
"  --rpsn N[,N...]     the responder's first PSNs (its receive side ignores\n"
"                      them for a requester; kept for the log)\n"
"  --rkey K --va VA    the responder's MR (write, read)\n"
"  --stride B          QP i writes/reads at VA + i * B (0)\n"
"  --mtu B             path MTU: 256 512 1024 2048 4096 (1024)\n"
"  --window PKTS       packets in flight per QP (256)\n"
"  --rd-atomic N       READ requests in flight per QP (16)\n"
"  --rate PPS          packets per second, 0 = flat out (0)\n"
"  --seconds S         how long to send (3)\n"
"  --count N           messages per QP, then stop (0: --seconds rules);\n"
"                      ping: round trips (10000)\n"
"  --json              print only the JSON line\n"
"  --linger            after the report, stay connected without touching\n"
"                      the port until SIGINT/SIGTERM (stop the peer first)\n",
MAX_QPS);
}


static unsigned int
num_list(const char *opt, char *s, uint32_t *out, uint32_t max)
{
	unsigned int n = 0;
	char *file = NULL;

	/* @FILE: the list in a file (65,536 QPNs do not fit one argument) */
	if (s[0] == '@') {
		FILE *f = fopen(s + 1, "r");
		size_t len = 0;

		if (f == NULL || getdelim(&file, &len, '\0', f) < 0)
			bad("%s: cannot read %s", opt, s + 1);
		fclose(f);
		for (char *p = file; *p != '\0'; p++)
			if (*p == '\n' || *p == ' ')
				*p = ',';
		s = file;
	}
	for (char *tok = strtok(s, ","); tok != NULL; tok = strtok(NULL, ",")) {
		if (n == MAX_QPS)
			bad("%s: more than %d values", opt, MAX_QPS);
		out[n++] = (uint32_t)dpr_cli_num(opt, tok, 0, max);
	}
	free(file);
	return n;
}

static void
parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "mode", required_argument, NULL, 'M' },
		{ "ip", required_argument, NULL, 'i' },
		{ "dst", required_argument, NULL, 'd' },
		{ "dst-mac", required_argument, NULL, 'm' },
		{ "op", required_argument, NULL, 'o' },
		{ "size", required_argument, NULL, 's' },
		{ "qps", required_argument, NULL, 'q' },
		{ "qpn", required_argument, NULL, 'Q' },
		{ "psn", required_argument, NULL, 'P' },
		{ "rqpn", required_argument, NULL, 'R' },
		{ "rpsn", required_argument, NULL, 'S' },
		{ "rkey", required_argument, NULL, 'k' },
		{ "va", required_argument, NULL, 'v' },
		{ "stride", required_argument, NULL, 'x' },
		{ "mtu", required_argument, NULL, 'u' },
		{ "window", required_argument, NULL, 'w' },
		{ "rd-atomic", required_argument, NULL, 'a' },
		{ "rate", required_argument, NULL, 'r' },
		{ "seconds", required_argument, NULL, 't' },
		{ "count", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "linger", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool ip_set = false, dst_set = false, size_set = false;
	char addr[64], *slash;
	int c;

	o.qps = 1;
	o.qpn = 0x100;
	o.mtu = 1024;
	o.window = 256;
	o.rd_atomic = 16;
	o.secs = 3;
	o.size = 64;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'M':
			if (strcmp(optarg, "rc") == 0)
				o.mode = M_RC;
			else if (strcmp(optarg, "raw") == 0)
				o.mode = M_RAW;
			else if (strcmp(optarg, "sink") == 0)
				o.mode = M_SINK;
			else if (strcmp(optarg, "ping") == 0)
				o.mode = M_PING;
			else if (strcmp(optarg, "echo") == 0)
				o.mode = M_ECHO;
			else
				bad("--mode %s: rc, raw, sink, ping or echo", optarg);
			break;
		case 'i':
			snprintf(addr, sizeof(addr), "%s", optarg);
			slash = strchr(addr, '/');
			if (slash != NULL)
				*slash = '\0';
			if (inet_pton(AF_INET, addr, &o.ip) != 1)
				bad("--ip %s: not an IPv4 address", optarg);
			ip_set = true;
			break;
		case 'd':
			if (inet_pton(AF_INET, optarg, &o.dst) != 1)
				bad("--dst %s: not an IPv4 address", optarg);
			dst_set = true;
			break;
		case 'm':
			if (rte_ether_unformat_addr(optarg, &o.dst_mac) != 0)
				bad("--dst-mac %s: not a MAC address", optarg);
			o.dst_mac_set = true;
			break;
		case 'o':
			if (strcmp(optarg, "write") == 0)
				o.op = G_WRITE;
			else if (strcmp(optarg, "send") == 0)
				o.op = G_SEND;
			else if (strcmp(optarg, "read") == 0)
				o.op = G_READ;
			else
				bad("--op %s: write, send or read", optarg);
			break;
		case 's':
			o.size = (uint32_t)dpr_cli_num("--size", optarg, 0, 1u << 30);
			size_set = true;
			break;
		case 'q': o.qps = (uint32_t)dpr_cli_num("--qps", optarg, 1, MAX_QPS); break;
		case 'Q': o.qpn = (uint32_t)dpr_cli_num("--qpn", optarg, 2, 0xffffff - MAX_QPS); break;
		case 'P': o.psn = (uint32_t)dpr_cli_num("--psn", optarg, 0, 0xffffff); break;
		case 'R': o.n_rqpn = num_list("--rqpn", optarg, o.rqpn, 0xffffff); break;
		case 'S': o.n_rpsn = num_list("--rpsn", optarg, o.rpsn, 0xffffff); break;
		case 'k': o.rkey = (uint32_t)dpr_cli_num("--rkey", optarg, 0, UINT32_MAX); break;
		case 'v': o.va = dpr_cli_num("--va", optarg, 0, UINT64_MAX); break;
		case 'x': o.stride = dpr_cli_num("--stride", optarg, 0, 1ull << 40); break;
		case 'u':
			o.mtu = (uint32_t)dpr_cli_num("--mtu", optarg, 256, 4096);
			if ((o.mtu & (o.mtu - 1)) != 0)
				bad("--mtu %u: 256, 512, 1024, 2048 or 4096", o.mtu);
			break;
		case 'w': o.window = (uint32_t)dpr_cli_num("--window", optarg, 1, 1u << 22); break;
		case 'a': o.rd_atomic = (uint32_t)dpr_cli_num("--rd-atomic", optarg, 1, 256); break;
		case 'r': o.rate = (double)dpr_cli_num("--rate", optarg, 0, 1000000000); break;
		case 't': o.secs = (double)dpr_cli_num("--seconds", optarg, 1, 86400); break;
		case 'n': o.count = dpr_cli_num("--count", optarg, 1, 1ull << 40); break;
		case 'j': o.json = true; break;
		case 'L': o.linger = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(EXIT_USAGE);
		}
	}
	if (optind < argc)
		bad("unexpected argument \"%s\"", argv[optind]);
	if (o.mode == M_SINK || o.mode == M_ECHO)
		return;
	if (!ip_set || !dst_set)
		bad("--mode %s needs --ip and --dst", o.mode == M_RC ? "rc" :
		    o.mode == M_PING ? "ping" : "raw");
	if (o.mode == M_RAW || o.mode == M_PING) {
		if (o.mode == M_PING && o.count == 0)
			o.count = 10000;
		if (!size_set)
			o.size = 64;
		if (o.size < 60 || o.size > 9000)
			bad("--size %u: a raw frame is 60..9000 bytes", o.size);
		if (o.mode == M_PING && o.count > 10000000)
			bad("--count %" PRIu64 ": at most 10000000 round trips", o.count);
		return;
	}
	if (o.n_rqpn != o.qps)
		bad("--rqpn: %u QPN%s for %u QP%s", o.n_rqpn, o.n_rqpn == 1 ? "" : "s",
		    o.qps, o.qps == 1 ? "" : "s");
	if (o.n_rpsn != 0 && o.n_rpsn != o.qps)
		bad("--rpsn: %u PSNs for %u QPs", o.n_rpsn, o.qps);
	if (o.op == G_READ && o.size > (1u << 31))
		bad("--size %u: a READ is at most 2^31 bytes", o.size);
}

/* ------------------------------------------------------------- frames */

static void
send_burst(struct rte_mbuf **m, uint16_t n)
{
	uint16_t sent = 0;

	while (sent < n && !quit) {
		sent += rte_eth_tx_burst(0, 0, m + sent, n - sent);
	}
	if (sent < n)
		rte_pktmbuf_free_bulk(m + sent, n - sent);
}

static void
arp_send(const struct rte_ether_addr *tha, rte_be32_t tip)
{
	struct rte_mbuf *m = dpr_wire_build_arp(pool, &own_mac, o.ip, tha, tip);

	if (m != NULL)
		send_burst(&m, 1);
}

/* ARP: answer requests for our address, learn the responder's MAC. */
static bool
arp_input(struct rte_mbuf *m)
{
	struct rte_ether_hdr *e = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_arp_hdr *a = (void *)(e + 1);

	if (e->ether_type != RTE_BE16(RTE_ETHER_TYPE_ARP) ||
	    rte_pktmbuf_data_len(m) < sizeof(*e) + sizeof(*a))
		return false;
	if (a->arp_opcode == RTE_BE16(RTE_ARP_OP_REQUEST) &&
	    a->arp_data.arp_tip == o.ip && o.mode != M_SINK) {
		arp_send(&a->arp_data.arp_sha, a->arp_data.arp_sip);
		st.arp_replies++;
	}
	if (a->arp_data.arp_sip == o.dst && !o.dst_mac_set &&
	    a->arp_opcode == RTE_BE16(RTE_ARP_OP_REPLY)) {
		o.dst_mac = a->arp_data.arp_sha;
		o.dst_mac_set = true;
	}
	return true;
}

static inline uint32_t
psn_of(const struct gen_qp *q, uint64_t idx)
{
	return (uint32_t)((q->psn0 + idx) & 0xffffff);
}

/* The packet index a PSN of @q stands for, if it lies in [lo, hi). */
static inline bool
idx_of(const struct gen_qp *q, uint32_t psn, uint64_t lo, uint64_t hi,
       uint64_t *idx)
{
	int32_t d = dpr_psn_diff(psn, psn_of(q, lo));

	if (d < 0 || (uint64_t)d >= hi - lo)
		return false;
	*idx = lo + (uint64_t)d;
	return true;
}

/* The frame for packet @idx of @q (a READ: the request of its message). */
static struct rte_mbuf *
build(struct gen_qp *q, uint64_t idx)
{
	struct dpr_wire_encap e = {
		.dst_mac = o.dst_mac, .src_mac = own_mac, .ttl = 64, .df = true,
		.sport = q->sport,
	};
	struct dpr_wire_hdrs h = {
		.pkey = 0xffff, .dqpn = q->rqpn, .psn = psn_of(q, idx),
	};
	struct dpr_wire_seg seg = { .addr = payload };
	uint32_t k = (uint32_t)(idx % ppm), first, last;
	uint64_t va = o.va + (uint64_t)(q - qps) * o.stride;
	struct rte_mbuf *m;

	dpr_gid_from_ipv4(&e.sgid, o.ip);
	dpr_gid_from_ipv4(&e.dgid, o.dst);
	if (o.op == G_READ) {
		h.opcode = DPR_OP_RC_READ_REQUEST;
		h.reth.va = va;
		h.reth.rkey = o.rkey;
		h.reth.len = o.size;
		h.ackreq = true;
		return dpr_wire_build(pool, &e, &h, NULL, 0);
	}
	first = o.op == G_WRITE ? DPR_OP_RC_WRITE_FIRST : DPR_OP_RC_SEND_FIRST;
	last = k + 1 == ppm;
	seg.len = last ? o.size - k * o.mtu : o.mtu;
	if (ppm == 1)
		h.opcode = (uint8_t)(first + 4);        /* ..._ONLY */
	else if (k == 0)
		h.opcode = (uint8_t)first;
	else if (last)
		h.opcode = (uint8_t)(first + 2);
	else
		h.opcode = (uint8_t)(first + 1);
	if (o.op == G_WRITE && k == 0) {
		h.reth.va = va;
		h.reth.rkey = o.rkey;
		h.reth.len = o.size;
	}
	h.ackreq = last;
	m = dpr_wire_build(pool, &e, &h, &seg, seg.len ? 1 : 0);
	return m;
}

/* Go back to the start of the message holding packet @idx. */
static void
go_back(struct gen_qp *q, uint64_t idx)
{
	uint64_t start = idx - idx % ppm;

	if (q->next > start)
		st.retransmitted += q->next - start;
	if (start < q->next)
		q->next = start;
}

static void
acked(struct gen_qp *q, uint64_t upto, uint64_t now)
{
	if (upto > q->una) {
		q->una = upto;
		q->progress = now;
		last_progress = now;
		if (q->next < q->una)
			q->next = q->una - q->una % ppm;
	}
}

static void
roce_input(struct rte_mbuf *m, uint64_t now)
{
	struct dpr_pkt_info pi;
	struct dpr_wire_hdrs h;
	struct gen_qp *q;
	uint64_t idx;
	uint8_t syn;

	if (dpr_wire_parse(m, &pi, 0) != DPR_WIRE_OK) {
		st.rx_bad++;
		return;
	}
	dpr_wire_decode(m, &pi, &h);
	if (h.dqpn < o.qpn || h.dqpn >= o.qpn + o.qps) {
		st.rx_other++;
		return;
	}
	q = &qps[h.dqpn - o.qpn];
	if (h.opcode >= DPR_OP_RC_READ_RESPONSE_FIRST &&
	    h.opcode <= DPR_OP_RC_READ_RESPONSE_ONLY) {
		/* in order only: the next response PSN moves the window by one */
		if (h.psn == psn_of(q, q->una)) {
			st.read_resp++;
			acked(q, q->una + 1, now);
		}
		return;
	}
	if (h.opcode != DPR_OP_RC_ACK) {
		st.rx_other++;
		return;
	}
	syn = h.aeth.syndrome;
	switch (syn & DPR_AETH_TYPE_MASK) {
	case DPR_AETH_ACK:
		st.acks++;
		if (idx_of(q, h.psn, q->una, q->high, &idx))
			acked(q, idx + 1, now);
		break;
	case DPR_AETH_RNR_NAK:
		st.naks_rnr++;
		if (idx_of(q, h.psn, q->una, q->high, &idx)) {
			acked(q, idx, now);
			go_back(q, idx);
		}
		q->pause = now + hz * RNR_WAIT_US / 1000000;
		break;
	case DPR_AETH_NAK:
		if ((syn & 0x1f) != 0) {
			/* remote access / invalid request / operational error:
			 * the responder's QP is in the error state */
			st.naks_other++;
			st.last_nak = syn;
			q->dead = true;
			break;
		}
		st.naks_seq++;
		if (!idx_of(q, h.psn, q->una, q->high, &idx))
			break;
		acked(q, idx, now);
		/* one go-back per PSN and round trip: duplicates of a NAK
		 * already acted on would only resend the same packets */
		if (idx == q->nak_idx && now - q->nak_tsc < hz * TIMEOUT_US / 1000000 / 4)
			break;
		q->nak_idx = idx;
		q->nak_tsc = now;
		go_back(q, idx);
		break;
	default:
		st.rx_other++;
	}
}

static void
rx_poll(uint64_t now)
{
	struct rte_mbuf *m[BURST];
	uint16_t n = rte_eth_rx_burst(0, 0, m, BURST);

	for (uint16_t i = 0; i < n; i++) {
		st.rx_frames++;
		st.rx_bytes += rte_pktmbuf_pkt_len(m[i]);
		if (o.mode != M_SINK && o.mode != M_ECHO && !arp_input(m[i]) &&
		    o.mode == M_RC)
			roce_input(m[i], now);
	}
	if (n)
		rte_pktmbuf_free_bulk(m, n);
}

/* ----------------------------------------------------------- the runs */

/* Up to 30 s for the link (a memif peer's handshake runs on this
 * process's interrupt thread). Sleeping, not rte_delay_ms(), which spins:
 * a spinning main lcore starved that thread on a loaded two-core machine
 * ("no link within 10 s" with the peer up, in a CI run). */
static bool
link_up(void)
{
	const uint64_t end = rte_rdtsc() + 30 * rte_get_tsc_hz();
	struct rte_eth_link link;

	while (!quit && rte_rdtsc() < end) {
		if (rte_eth_link_get_nowait(0, &link) == 0 && link.link_status)
			return true;
		rte_delay_us_sleep(10000);
	}
	return false;
}

static void
resolve(void)
{
	uint64_t t0 = rte_rdtsc(), last = 0;
	char a[INET_ADDRSTRLEN];

	while (!o.dst_mac_set && !quit) {
		uint64_t now = rte_rdtsc();

		if (now - t0 > 5 * hz)
			die("%s did not answer ARP within 5 s (give --dst-mac?)",
			    inet_ntop(AF_INET, &o.dst, a, sizeof(a)));
		if (now - last > hz / 4) {
			arp_send(NULL, o.dst);
			last = now;
		}
		rx_poll(now);
	}
}

/* Token bucket for --rate: how many packets may leave now. */
static uint32_t
budget(uint64_t now, uint64_t t0, uint64_t sent)
{
	double allowed;

	if (o.rate <= 0)
		return BURST;
	allowed = (double)(now - t0) / (double)hz * o.rate;
	if (allowed <= (double)sent)
		return 0;
	return allowed - (double)sent > BURST ? BURST : (uint32_t)(allowed - (double)sent);
}

static bool
qp_done(const struct gen_qp *q)
{
	return q->dead || (o.count != 0 && q->una >= o.count * ppm);
}

static double
run_rc(void)
{
	uint64_t t0, t_end, drain_end = 0, now, sent = 0;
	uint64_t limit = o.count ? o.count * ppm : UINT64_MAX;
	/* packets a QP sends in its turn: with many QPs one, so that a burst
	 * carries many QPs' frames as the traffic of many peers does (the
	 * responder's hard case), with few a burst's share each */
	const uint32_t turn = o.qps >= BURST ? 1 : BURST / o.qps;
	uint32_t rr = 0, loops = 0, n = 0;
	bool draining = false;

	for (uint32_t i = 0; i < o.qps; i++) {
		qps[i].qpn = o.qpn + i;
		qps[i].rqpn = o.rqpn[i];
		qps[i].psn0 = (o.psn + i * 0x10000) & 0xffffff;
		qps[i].sport = dpr_udp_sport_rc(qps[i].qpn, qps[i].rqpn, 0);
		qps[i].nak_idx = UINT64_MAX;
	}
	t0 = rte_rdtsc();
	last_progress = t0;
	t_end = o.count ? UINT64_MAX : t0 + (uint64_t)(o.secs * (double)hz);
	for (;;) {
		struct rte_mbuf *m[BURST];
		uint32_t b, open = 0;

		now = rte_rdtsc();
		rx_poll(now);
		if (!draining && (quit || now >= t_end)) {
			/* no new messages; what is in flight is still resent */
			draining = true;
			drain_end = now + hz;
		}
		if (draining && now >= drain_end)
			break;
		/* anything left to send or to see acknowledged? (a walk of
		 * every QP: only when the last loop sent nothing, or now and
		 * then, not for every burst of 65,536 QPs) */
		if (n == 0 || (++loops & 1023) == 0) {
			for (uint32_t k = 0; k < o.qps; k++)
				if (!qp_done(&qps[k]) &&
				    (qps[k].una < qps[k].high ||
				     (!draining && qps[k].next < limit)))
					open++;
			if (open == 0)
				break;
		}
		n = 0;
		b = budget(now, t0, sent);
		for (uint32_t k = 0; k < o.qps && n < b; k++) {
			struct gen_qp *q = &qps[rr];
			uint64_t inflight, cap, stop = draining ? q->high : limit;
			uint32_t mine = 0;

			rr = rr + 1 == o.qps ? 0 : rr + 1;

			if (q->dead || now < q->pause)
				continue;
			if (q->next > q->una && now - q->progress > hz * TIMEOUT_US / 1000000) {
				st.timeouts++;
				go_back(q, q->una);
				q->progress = now;
			}
			cap = o.op == G_READ ? (uint64_t)o.rd_atomic * ppm : o.window;
			while (n < b && q->next < stop && mine++ < turn) {
				inflight = q->next > q->una ? q->next - q->una : 0;
				if (inflight + (o.op == G_READ ? ppm : 1) > cap)
					break;
				if (inflight == 0)
					q->progress = now;
				m[n] = build(q, q->next);
				if (m[n] == NULL)
					break;
				st.tx_bytes += rte_pktmbuf_pkt_len(m[n]);
				q->next += o.op == G_READ ? ppm : 1;
				if (q->next > q->high)
					q->high = q->next;
				n++;
			}
		}
		if (n) {
			send_burst(m, (uint16_t)n);
			st.tx_frames += n;
			sent += n;
		}
	}
	return (double)(last_progress - t0) / (double)hz;
}

/* The raw frame of --size bytes: UDP to port 9 of --dst. */
static void
raw_frame(uint8_t *tmpl)
{
	struct rte_ether_hdr *e = (void *)tmpl;
	struct rte_ipv4_hdr *ip = (void *)(e + 1);
	struct rte_udp_hdr *u = (void *)(ip + 1);

	memset(tmpl, 0, o.size);
	e->dst_addr = o.dst_mac;
	e->src_addr = own_mac;
	e->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(o.size - 14));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = o.ip;
	ip->dst_addr = o.dst;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	u->src_port = RTE_BE16(9);
	u->dst_port = RTE_BE16(9);
	u->dgram_len = rte_cpu_to_be_16((uint16_t)(o.size - 34));
}

static double
run_raw(void)
{
	uint8_t tmpl[9216];
	uint64_t t0, t_end, now;

	raw_frame(tmpl);
	t0 = rte_rdtsc();
	t_end = t0 + (uint64_t)(o.secs * (double)hz);
	while (!quit && (now = rte_rdtsc()) < t_end) {
		struct rte_mbuf *m[BURST];
		uint32_t n = budget(now, t0, st.tx_frames);
		uint16_t sent;

		rx_poll(now);
		if (n == 0 || rte_pktmbuf_alloc_bulk(pool, m, n) != 0)
			continue;
		for (uint32_t k = 0; k < n; k++)
			memcpy(rte_pktmbuf_append(m[k], (uint16_t)o.size), tmpl, o.size);
		sent = rte_eth_tx_burst(0, 0, m, (uint16_t)n);
		if (sent < n)
			rte_pktmbuf_free_bulk(&m[sent], n - sent);
		st.tx_frames += sent;
		st.tx_bytes += (uint64_t)sent * o.size;
	}
	return (double)(rte_rdtsc() - t0) / (double)hz;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One frame out, wait for it back (its number at the end of the UDP
 * payload), --count times. Frames that are not the one awaited (ARP, a
 * late copy) are counted and ignored; a frame lost for 1 s is sent again. */
static double
run_ping(void)
{
	uint8_t tmpl[9216];
	uint64_t *rtt = calloc(o.count, sizeof(*rtt));
	uint64_t t0 = rte_rdtsc(), sum = 0, i;
	const uint32_t at = o.size - 8;

	if (rtt == NULL)
		die("out of memory");
	raw_frame(tmpl);
	for (i = 0; i < o.count && !quit;) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool), *in[BURST];
		uint64_t sent, now;
		bool back = false;

		if (m == NULL)
			die("mbuf pool empty");
		memcpy(tmpl + at, &i, 8);
		memcpy(rte_pktmbuf_append(m, (uint16_t)o.size), tmpl, o.size);
		sent = rte_rdtsc();
		while (rte_eth_tx_burst(0, 0, &m, 1) == 0 && !quit)
			;
		st.tx_frames++;
		st.tx_bytes += o.size;
		while (!back && !quit) {
			uint16_t n = rte_eth_rx_burst(0, 0, in, BURST);

			now = rte_rdtsc();
			for (uint16_t k = 0; k < n; k++) {
				uint64_t num;
				const void *pn = rte_pktmbuf_read(in[k], at, 8, &num);

				st.rx_frames++;
				st.rx_bytes += rte_pktmbuf_pkt_len(in[k]);
				if (rte_pktmbuf_pkt_len(in[k]) == o.size && pn != NULL &&
				    memcmp(pn, &i, 8) == 0)
					back = true;
				else if (!arp_input(in[k]))
					st.rx_other++;
			}
			if (n)
				rte_pktmbuf_free_bulk(in, n);
			if (!back && now - sent > hz) {
				st.timeouts++;
				break;
			}
		}
		if (!back)
			continue;       /* lost: this round again */
		rtt[i] = now - sent;
		sum += rtt[i++];
	}
	if (i > 0) {
		qsort(rtt, i, sizeof(*rtt), cmp_u64);
		st.lat_avg_us = (double)sum / (double)i / (double)hz * 1e6 / 2;
		st.lat_p50_us = (double)rtt[i / 2] / (double)hz * 1e6 / 2;
		st.lat_p99_us = (double)rtt[i * 99 / 100] / (double)hz * 1e6 / 2;
	}
	free(rtt);
	return (double)(rte_rdtsc() - t0) / (double)hz;
}

/* sink and echo: count every frame (echo: send each back as it came);
 * end --seconds after the first, or half a second after the last. */
static double
run_receiver(bool echo)
{
	uint64_t first = 0, last = 0, now, start = rte_rdtsc();

	while (!quit) {
		uint64_t before = st.rx_frames;

		now = rte_rdtsc();
		if (echo) {
			struct rte_mbuf *m[BURST];
			uint16_t n = rte_eth_rx_burst(0, 0, m, BURST), sent = 0;

			st.rx_frames += n;
			while (sent < n && !quit)
				sent += rte_eth_tx_burst(0, 0, &m[sent], n - sent);
			st.tx_frames += sent;
			if (sent < n)
				rte_pktmbuf_free_bulk(&m[sent], n - sent);
		} else {
			rx_poll(now);
		}
		if (st.rx_frames != before) {
			if (first == 0)
				first = now;
			last = now;
		}
		if (first != 0 && (now - last > hz / 2 ||
				   now - first > (uint64_t)(o.secs * (double)hz)))
			break;
		if (first == 0 && now - start > 120 * hz)
			die("no frame within 120 s");
	}
	return last > first ? (double)(last - first) / (double)hz : 0;
}

static void
report(double secs)
{
	static const char *const ops[] = { "write", "send", "read" };
	static const char *const modes[] = { "rc", "raw", "sink", "ping", "echo" };
	uint64_t msgs = 0;
	uint32_t dead = 0;

	if (o.mode == M_RC)
		for (uint32_t i = 0; i < o.qps; i++) {
			msgs += qps[i].una / ppm;
			dead += qps[i].dead;
		}
	if (secs <= 0)
		secs = 1e-9;
	if (!o.json) {
		if (o.mode == M_RC)
			printf("dprdma-gen: %s %u B on %u QP%s: %" PRIu64 " messages in "
			       "%.3f s, %.0f msg/s, %.3f Gbit/s of payload; frames tx %"
			       PRIu64 " rx %" PRIu64 "; ACKs %" PRIu64 ", NAKs seq %"
			       PRIu64 " rnr %" PRIu64 " other %" PRIu64 ", READ "
			       "responses %" PRIu64 ", timeouts %" PRIu64 ", resent %"
			       PRIu64 ", bad frames %" PRIu64 "\n", ops[o.op], o.size,
			       o.qps, o.qps == 1 ? "" : "s", msgs, secs, msgs / secs,
			       msgs * 8.0 * o.size / secs / 1e9, st.tx_frames,
			       st.rx_frames, st.acks, st.naks_seq, st.naks_rnr,
			       st.naks_other, st.read_resp, st.timeouts,
			       st.retransmitted, st.rx_bad);
		else
			printf("dprdma-gen: %s: %" PRIu64 " frames out (%.0f/s), %"
			       PRIu64 " in (%.0f/s, %.3f Gbit/s) in %.3f s\n",
			       modes[o.mode], st.tx_frames, st.tx_frames / secs,
			       st.rx_frames, st.rx_frames / secs,
			       st.rx_bytes * 8.0 / secs / 1e9, secs);
		if (o.mode == M_PING)
			printf("dprdma-gen: ping %u B: half the round trip avg %.3f us, "
			       "p50 %.3f us, p99 %.3f us (%" PRIu64 " lost)\n", o.size,
			       st.lat_avg_us, st.lat_p50_us, st.lat_p99_us, st.timeouts);
		if (dead)
			printf("dprdma-gen: %u QP%s ended by a NAK (%s)\n", dead,
			       dead == 1 ? "" : "s", dpr_aeth_syndrome_name(st.last_nak));
	}
	printf("{\"mode\":\"%s\",\"op\":\"%s\",\"size\":%u,\"qps\":%u,\"seconds\":%.6f,"
	       "\"messages\":%" PRIu64 ",\"msg_per_s\":%.1f,\"gbit_per_s\":%.4f,"
	       "\"tx_frames\":%" PRIu64 ",\"tx_bytes\":%" PRIu64 ",\"tx_frames_per_s\":%.1f,"
	       "\"rx_frames\":%" PRIu64 ",\"rx_bytes\":%" PRIu64 ",\"rx_frames_per_s\":%.1f,"
	       "\"rx_bits_per_s\":%.1f,\"acks\":%" PRIu64 ",\"naks_seq\":%" PRIu64
	       ",\"naks_rnr\":%" PRIu64 ",\"naks_other\":%" PRIu64 ",\"last_nak\":\"%s\","
	       "\"read_responses\":%" PRIu64 ",\"timeouts\":%" PRIu64
	       ",\"retransmitted\":%" PRIu64 ",\"rx_bad\":%" PRIu64 ",\"rx_other\":%"
	       PRIu64 ",\"qps_dead\":%u,\"lat_avg_us\":%.3f,\"lat_p50_us\":%.3f,"
	       "\"lat_p99_us\":%.3f}\n", modes[o.mode], ops[o.op], o.size, o.qps,
	       secs, msgs, msgs / secs, msgs * 8.0 * o.size / secs / 1e9,
	       st.tx_frames, st.tx_bytes, st.tx_frames / secs, st.rx_frames,
	       st.rx_bytes, st.rx_frames / secs, st.rx_bytes * 8.0 / secs,
	       st.acks, st.naks_seq, st.naks_rnr, st.naks_other,
	       st.naks_other ? dpr_aeth_syndrome_name(st.last_nak) : "",
	       st.read_resp, st.timeouts, st.retransmitted, st.rx_bad, st.rx_other,
	       dead, st.lat_avg_us, st.lat_p50_us, st.lat_p99_us);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	struct rte_eth_conf conf;
	int n;
	double secs;
	uint32_t dataroom;

	/* options after "--" are ours: check them before the EAL starts */
	for (n = 1; n < argc && strcmp(argv[n], "--") != 0; n++)
		;
	if (n < argc) {
		argv[n] = argv[0];
		parse(argc - n, argv + n);
	} else {
		bad("no \"--\": give EAL options, then -- and dprdma-gen's own");
	}
	qps = calloc(o.qps, sizeof(*qps));
	if (qps == NULL)
		die("out of memory");
	if (rte_eal_init(n, argv) < 0)
		die("EAL: %s", rte_strerror(rte_errno));
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	hz = rte_get_tsc_hz();
	if (rte_eth_dev_count_avail() == 0)
		die("no port: give one with --vdev (net_memif0,..., net_af_packet0,...)");
	dataroom = RTE_PKTMBUF_HEADROOM + (o.mtu > 1024 || o.mode == M_RAW ||
					   o.mode == M_PING || o.mode == M_ECHO ? 9216 : 2048);
	pool = rte_pktmbuf_pool_create("gen", 16383, 256, 0, (uint16_t)dataroom,
				       rte_socket_id());
	memset(&conf, 0, sizeof(conf));
	if (pool == NULL)
		die("mbuf pool: %s", rte_strerror(rte_errno));
	if (rte_eth_dev_configure(0, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(0, 0, 1024, rte_socket_id(), NULL, pool) != 0 ||
	    rte_eth_tx_queue_setup(0, 0, 1024, rte_socket_id(), NULL) != 0 ||
	    rte_eth_dev_start(0) != 0)
		die("port 0 set-up failed");
	rte_eth_macaddr_get(0, &own_mac);
	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(i * 7 + 1);
	/* (a memif server refuses clients until its port has started, and a
	 * refused DPDK memif client does not try again: start the client
	 * after this line) */
	fprintf(stderr, "dprdma-gen: port 0 started, waiting for its link\n");
	if (!link_up())
		die("port 0: no link within 30 s (is the peer up? a memif "
		    "client that reached its server before the server's port "
		    "started was refused: start it again)");
	if (o.mode != M_SINK && o.mode != M_ECHO && !o.dst_mac_set)
		resolve();
	ppm = o.size == 0 ? 1 : (o.size + o.mtu - 1) / o.mtu;
	if (o.mode == M_RC)
		secs = run_rc();
	else if (o.mode == M_RAW)
		secs = run_raw();
	else if (o.mode == M_PING)
		secs = run_ping();
	else
		secs = run_receiver(o.mode == M_ECHO);
	report(secs);
	/*
	 * DPDK 22.11's memif can crash a process that is reading its rings
	 * while the peer disconnects. A raw sender therefore stays connected,
	 * without touching the port, until its sink has counted out (it ends
	 * half a second after the last frame) and gone; a sink stops its port
	 * before it exits.
	 */
	if ((o.mode == M_RAW || o.mode == M_PING) && !quit)
		usleep(1500000);
	/* --linger: the caller stops the peer (a dprdmad whose worker polls
	 * its port without pause) before this side lets go of the link */
	fflush(stdout);
	while (o.linger && !quit)
		usleep(10000);
	rte_eth_dev_stop(0);
	rte_eal_cleanup();
	if (o.mode == M_RC)
		for (uint32_t i = 0; i < o.qps; i++)
			if (qps[i].dead)
				return 1;
	return 0;
}
