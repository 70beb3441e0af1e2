/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdma-perf: RC benchmarks in perftest's terms, on any verbs device.
 *
 *   dprdma-perf TEST [options]            server (waits for the client)
 *   dprdma-perf TEST [options] HOST       client
 *
 * TEST is write_bw, write_lat, read_bw, read_lat, send_bw, send_lat,
 * atomic_bw or atomic_lat (perftest's ib_<TEST> programs). Options carry
 * perftest's names where perftest has them; `dprdma-perf --help` lists them.
 *
 * It is an ordinary libibverbs program. Built, it finds the drop-in
 * libibverbs through its run path, so it talks to dprdmad (DPRDMA_SOCKET
 * names the daemon's socket); with LD_LIBRARY_PATH at the system's
 * libibverbs it runs on rxe or an RNIC, and one end may be either.
 *
 * Out-of-band exchange (its own, not perftest's: the two do not mix): one
 * TCP connection, lines of text. The client sends
 *   "DPRDMA-PERF 1 <test> <size> <all> <iters> <secs> <qps> <tx_depth>
 *    <post_list> <inline> <atomic>"
 * and the server adopts those parameters (so only the client needs them),
 * answering "OK" or "ERR <reason>". Then each side sends one line per QP,
 *   "QP <qpn> <psn> <rkey> <vaddr> <gid as 32 hex digits>",
 * and before and after each message size both exchange "SYNC <n>"; after a
 * size the server reports what it saw ("SEEN <count> <checksum>") so the
 * client can check the data: WRITE and SEND must leave the client's
 * pattern in the server's buffer, READ must bring the server's pattern
 * back, FETCH_ADD and CMP_SWAP must leave each QP's counter at the number
 * of atomics that QP did. A wrong result fails the run (exit 1).
 *
 * Bandwidth: the client keeps tx_depth WRs outstanding per QP, signals one
 * in cq_mod, and reports perftest's columns: BW average over the whole run,
 * BW peak as the best rate over any stretch of 5% of the messages (perftest
 * takes the best gap between two completions, which on a software device
 * mostly measures a burst in the completion ring), MsgRate. MB is 2^20
 * bytes as in perftest; --report_gbits gives 10^9 bits.
 * Latency: time stamps from the TSC (calibrated against CLOCK_MONOTONIC);
 * write_lat and send_lat are ping-pongs reported as half the round trip,
 * read_lat and atomic_lat the whole operation, as perftest reports them.
 */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define DPR_CLI_NAME "dprdma-perf"
#include "dpr_cli.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#define MAX_QPS 64
#define MAX_SIZE (1u << 23)
#define LINE 512

enum test_op { OP_WRITE, OP_READ, OP_SEND, OP_ATOMIC };

static const char *const op_names[] = { "write", "read", "send", "atomic" };

struct opts {
	enum test_op op;
	bool lat;
	uint32_t size;
	bool all;
	uint64_t iters;
	double secs;
	uint32_t qps;
	uint32_t tx_depth;
	uint32_t rx_depth;
	uint32_t post_list;
	int inline_size;        /* -1: the test's default */
	uint32_t cq_mod;
	bool cas;               /* atomic: CMP_AND_SWAP, else FETCH_AND_ADD */
	bool gbits;
	bool json;
	bool events;
	bool yield;
	int port;
	uint8_t ib_port;
	int gid_index;
	const char *dev;
	const char *host;
	const char *cdf;        /* latency samples, one per line, sorted */
};

struct peer_qp {
	uint32_t qpn, psn, rkey;
	uint64_t va;
	union ibv_gid gid;
};

struct perf {
	struct opts o;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp[MAX_QPS];
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t stride;          /* bytes per QP: a send half and a receive half */
	struct peer_qp remote[MAX_QPS];
	uint32_t psn[MAX_QPS];
	enum ibv_mtu mtu;
	int sock;
	FILE *in;
	double tsc_per_us;
	bool first_json;
};

/* -------------------------------------------------------------- time */

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t
ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	return now_ns();
#endif
}

static double
calibrate(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint64_t n0 = now_ns(), t0 = ticks(), n1, t1;

	do {
		n1 = now_ns();
	} while (n1 - n0 < 50000000u);
	t1 = ticks();
	return (double)(t1 - t0) / ((double)(n1 - n0) / 1000.0);
#else
	return 1000.0;
#endif
}

/* --------------------------------------------------------- messages */


static void
say(struct perf *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
say(struct perf *p, const char *fmt, ...)
{
	char line[LINE];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	line[n++] = '\n';
	if (send(p->sock, line, (size_t)n, MSG_NOSIGNAL) != n)
		die("out-of-band connection: send: %s", strerror(errno));
}

static void
hear(struct perf *p, char *line, size_t len)
{
	if (fgets(line, (int)len, p->in) == NULL)
		die("out-of-band connection closed by the peer");
	line[strcspn(line, "\n")] = '\0';
}

static void
sync_peer(struct perf *p, unsigned int n)
{
	char line[LINE];
	unsigned int m;

	say(p, "SYNC %u", n);
	hear(p, line, sizeof(line));
	if (sscanf(line, "SYNC %u", &m) != 1 || m != n)
		die("out-of-band: expected SYNC %u, got \"%s\"", n, line);
}

/* ----------------------------------------------------------- options */

static void
usage(FILE *f)
{
	fprintf(f,
"usage: dprdma-perf TEST [options] [HOST]\n"
"  TEST: write_bw write_lat read_bw read_lat send_bw send_lat atomic_bw atomic_lat\n"
"  without HOST: the server; with HOST: the client (its options rule both)\n"
"  -d, --ib-dev=NAME        verbs device (first one)\n"
"  -i, --ib-port=N          device port (1)\n"
"  -x, --gid-index=N        GID index (1: the IPv4-mapped RoCEv2 GID)\n"
"  -p, --port=N             TCP port of the out-of-band exchange (18515)\n"
"  -s, --size=BYTES         message size (65536 bw, 2 lat; atomics 8)\n"
"  -a, --all                every size 2, 4, ... 2^23\n"
"  -n, --iters=N            messages per QP per size (5000 bw, 1000 lat)\n"
"  -D, --duration=SECONDS   run for a time instead of -n (bw)\n"
"  -q, --qp=N               QPs (1, at most %d; bw)\n"
"  -t, --tx-depth=N         WRs outstanding per QP (128 bw, 1 lat)\n"
"  -r, --rx-depth=N         receives posted per QP for send (512)\n"
"  -l, --post_list=N        WRs per ibv_post_send call (1)\n"
"  -I, --inline_size=BYTES  largest inline message (0 bw, 220 lat)\n"
"  -Q, --cq-mod=N           signal one WR in N (100, at most tx depth)\n"
"  -A, --atomic_type=T      CMP_AND_SWAP or FETCH_AND_ADD (default)\n"
"  -e, --events             sleep on completion events instead of polling\n"
"      --yield              poll, but give the core away when idle\n"
"      --report_gbits       bandwidth in Gb/s (10^9 bits), not MB/s (2^20 B)\n"
"      --json               results as JSON lines, one per size\n"
"      --cdf=FILE           latency: every sample (usec, sorted) to FILE\n"
"  -h, --help\n", MAX_QPS);
}



static void
parse_test(struct opts *o, const char *name)
{
	static const char *const tests[] = { "write", "read", "send", "atomic" };
	size_t n;

	for (unsigned int i = 0; i < 4; i++) {
		n = strlen(tests[i]);
		if (strncmp(name, tests[i], n) == 0 &&
		    (strcmp(name + n, "_bw") == 0 || strcmp(name + n, "_lat") == 0)) {
			o->op = (enum test_op)i;
			o->lat = strcmp(name + n, "_lat") == 0;
			return;
		}
	}
	bad("unknown test \"%s\"", name);
}

static void
parse_opts(struct opts *o, int argc, char **argv)
{
	enum { O_YIELD = 256, O_GBITS, O_JSON, O_CDF };
	static const struct option lopts[] = {
		{ "ib-dev", required_argument, NULL, 'd' },
		{ "ib-port", required_argument, NULL, 'i' },
		{ "gid-index", required_argument, NULL, 'x' },
		{ "port", required_argument, NULL, 'p' },
		{ "size", required_argument, NULL, 's' },
		{ "all", no_argument, NULL, 'a' },
		{ "iters", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'D' },
		{ "qp", required_argument, NULL, 'q' },
		{ "tx-depth", required_argument, NULL, 't' },
		{ "rx-depth", required_argument, NULL, 'r' },
		{ "post_list", required_argument, NULL, 'l' },
		{ "inline_size", required_argument, NULL, 'I' },
		{ "cq-mod", required_argument, NULL, 'Q' },
		{ "atomic_type", required_argument, NULL, 'A' },
		{ "events", no_argument, NULL, 'e' },
		{ "yield", no_argument, NULL, O_YIELD },
		{ "report_gbits", no_argument, NULL, O_GBITS },
		{ "json", no_argument, NULL, O_JSON },
		{ "cdf", required_argument, NULL, O_CDF },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool size_set = false, iters_set = false, depth_set = false;
	bool inline_set = false;
	int c;

	memset(o, 0, sizeof(*o));
	o->qps = 1;
	o->rx_depth = 512;
	o->post_list = 1;
	o->inline_size = -1;
	o->cq_mod = 100;
	o->port = 18515;
	o->ib_port = 1;
	o->gid_index = 1;
	if (argc < 2)
		bad("no test named");
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		exit(0);
	}
	parse_test(o, argv[1]);
	optind = 2;
	while ((c = getopt_long(argc, argv, "d:i:x:p:s:an:D:q:t:r:l:I:Q:A:eh",
				lopts, NULL)) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 'i': o->ib_port = (uint8_t)dpr_cli_num("-i", optarg, 1, 255); break;
		case 'x': o->gid_index = (int)dpr_cli_num("-x", optarg, 0, 255); break;
		case 'p': o->port = (int)dpr_cli_num("-p", optarg, 1, 65535); break;
		case 's':
			o->size = (uint32_t)dpr_cli_num("-s", optarg, 1, MAX_SIZE);
			size_set = true;
			break;
		case 'a': o->all = true; break;
		case 'n':
			o->iters = dpr_cli_num("-n", optarg, 1, 1000000000);
			iters_set = true;
			break;
		case 'D': o->secs = (double)dpr_cli_num("-D", optarg, 1, 86400); break;
		case 'q': o->qps = (uint32_t)dpr_cli_num("-q", optarg, 1, MAX_QPS); break;
		case 't':
			o->tx_depth = (uint32_t)dpr_cli_num("-t", optarg, 1, 8192);
			depth_set = true;
			break;
		case 'r': o->rx_depth = (uint32_t)dpr_cli_num("-r", optarg, 1, 8192); break;
		case 'l': o->post_list = (uint32_t)dpr_cli_num("-l", optarg, 1, 1024); break;
		case 'I':
			o->inline_size = (int)dpr_cli_num("-I", optarg, 0, 1024);
			inline_set = true;
			break;
		case 'Q': o->cq_mod = (uint32_t)dpr_cli_num("-Q", optarg, 1, 8192); break;
		case 'A':
			if (strcmp(optarg, "CMP_AND_SWAP") == 0)
				o->cas = true;
			else if (strcmp(optarg, "FETCH_AND_ADD") == 0)
				o->cas = false;
			else
				bad("-A: \"%s\" is neither CMP_AND_SWAP nor FETCH_AND_ADD",
				    optarg);
			break;
		case 'e': o->events = true; break;
		case O_YIELD: o->yield = true; break;
		case O_GBITS: o->gbits = true; break;
		case O_JSON: o->json = true; break;
		case O_CDF: o->cdf = optarg; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(EXIT_USAGE);
		}
	}
	if (optind < argc)
		o->host = argv[optind++];
	if (optind < argc)
		bad("unexpected argument \"%s\"", argv[optind]);
	if (o->op == OP_ATOMIC) {
		if (size_set && o->size != 8)
			bad("-s %u: atomics are 8 bytes", o->size);
		if (o->all)
			bad("-a: atomics have one size (8 bytes)");
		o->size = 8;
	} else if (!size_set) {
		o->size = o->lat ? 2 : 65536;
	}
	if (!iters_set)
		o->iters = o->lat ? 1000 : 5000;
	if (o->lat) {
		if (o->secs > 0)
			bad("-D: latency tests run -n iterations");
		if (o->qps != 1)
			bad("-q %u: latency tests use one QP", o->qps);
		if (depth_set && o->tx_depth != 1)
			bad("-t %u: latency tests keep one message in flight",
			    o->tx_depth);
		if (o->post_list != 1)
			bad("-l %u: latency tests post one WR at a time", o->post_list);
		o->tx_depth = 1;
	} else if (!depth_set) {
		o->tx_depth = 128;
	}
	if (o->post_list > o->tx_depth)
		bad("-l %u: more than the tx depth (%u)", o->post_list, o->tx_depth);
	if (o->inline_size < 0)
		o->inline_size = o->lat ? 220 : 0;
	if ((o->op == OP_READ || o->op == OP_ATOMIC) && inline_set && o->inline_size > 0)
		bad("-I: READ and atomics carry no inline data");
	if (o->events && o->yield)
		bad("-e and --yield: choose one way to wait");
	/* a signaled WR must fit in the queue beside a whole post list */
	if (o->cq_mod + o->post_list - 1 > o->tx_depth)
		o->cq_mod = o->tx_depth - o->post_list + 1;
}

/* ------------------------------------------------------------- verbs */

static struct ibv_context *
open_dev(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n;

	list = ibv_get_device_list(&n);
	if (list == NULL || n == 0)
		die("no verbs device (is dprdmad running? DPRDMA_SOCKET names its "
		    "socket)");
	for (int i = 0; i < n; i++)
		if (name == NULL || strcmp(ibv_get_device_name(list[i]), name) == 0) {
			ctx = ibv_open_device(list[i]);
			if (ctx == NULL)
				die("ibv_open_device %s: %s",
				    ibv_get_device_name(list[i]), strerror(errno));
			break;
		}
	ibv_free_device_list(list);
	if (ctx == NULL)
		die("-d %s: no such device (ibv_devices lists them)", name);
	return ctx;
}

static uint32_t
inline_for(const struct perf *p, uint32_t size)
{
	if (p->o.op == OP_READ || p->o.op == OP_ATOMIC)
		return 0;
	return size <= (uint32_t)p->o.inline_size ? (uint32_t)p->o.inline_size : 0;
}

static void
setup(struct perf *p)
{
	struct ibv_port_attr pa;
	struct ibv_device_attr da;
	uint32_t maxsz = p->o.all ? MAX_SIZE : p->o.size;
	uint32_t depth = p->o.tx_depth, rdepth = p->o.rx_depth;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	size_t total;

	p->ctx = open_dev(p->o.dev);
	if (ibv_query_device(p->ctx, &da) != 0)
		die("ibv_query_device: %s", strerror(errno));
	if (ibv_query_port(p->ctx, p->o.ib_port, &pa) != 0)
		die("-i %u: ibv_query_port: %s", p->o.ib_port, strerror(errno));
	p->mtu = pa.active_mtu;
	if (depth > (uint32_t)da.max_qp_wr || rdepth > (uint32_t)da.max_qp_wr)
		die("-t %u / -r %u: the device takes at most %d WRs per queue",
		    depth, rdepth, da.max_qp_wr);
	p->pd = ibv_alloc_pd(p->ctx);
	if (p->pd == NULL)
		die("ibv_alloc_pd: %s", strerror(errno));
	/* per QP: a send half and a receive half, each a whole number of
	 * cache lines, so WRITEs and READs land where the check expects */
	p->stride = 2 * (((size_t)maxsz + 63) & ~(size_t)63);
	total = p->stride * p->o.qps;
	p->buf = aligned_alloc(4096, (total + 4095) & ~(size_t)4095);
	if (p->buf == NULL)
		die("out of memory for %zu bytes of buffers", total);
	memset(p->buf, 0, total);
	p->mr = ibv_reg_mr(p->pd, p->buf, total, access);
	if (p->mr == NULL)
		die("ibv_reg_mr of %zu bytes: %s", total, strerror(errno));
	if (p->o.events) {
		p->ch = ibv_create_comp_channel(p->ctx);
		if (p->ch == NULL)
			die("ibv_create_comp_channel: %s", strerror(errno));
	}
	p->scq = ibv_create_cq(p->ctx, (int)(depth * p->o.qps + 1), NULL, p->ch, 0);
	p->rcq = ibv_create_cq(p->ctx, (int)(rdepth * p->o.qps + 1), NULL, p->ch, 0);
	if (p->scq == NULL || p->rcq == NULL)
		die("ibv_create_cq: %s", strerror(errno));
	if (p->o.events && (ibv_req_notify_cq(p->scq, 0) != 0 ||
			    ibv_req_notify_cq(p->rcq, 0) != 0))
		die("ibv_req_notify_cq: %s", strerror(errno));
	for (uint32_t i = 0; i < p->o.qps; i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = p->scq, .recv_cq = p->rcq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = depth, .max_recv_wr = rdepth,
				 .max_send_sge = 1, .max_recv_sge = 1,
				 .max_inline_data = (uint32_t)p->o.inline_size },
		};
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT, .pkey_index = 0,
			.port_num = p->o.ib_port, .qp_access_flags = access,
		};

		p->qp[i] = ibv_create_qp(p->pd, &ia);
		if (p->qp[i] == NULL)
			die("ibv_create_qp (depth %u, inline %d): %s", depth,
			    p->o.inline_size, strerror(errno));
		if (ibv_modify_qp(p->qp[i], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
			die("ibv_modify_qp to INIT: %s", strerror(errno));
		/* an unpredictable starting PSN (doc/security.rst): one an
		 * off-path sender cannot guess, unlike random() seeded from
		 * the clock and the pid */
		if (getentropy(&p->psn[i], sizeof(p->psn[i])) != 0)
			die("getentropy: %s", strerror(errno));
		p->psn[i] &= 0xffffff;
	}
}

static void
connect_qps(struct perf *p)
{
	union ibv_gid gid;
	char line[LINE], hex[33];
	int rd = 16;
	struct ibv_device_attr da;

	if (ibv_query_gid(p->ctx, p->o.ib_port, p->o.gid_index, &gid) != 0)
		die("-x %d: ibv_query_gid: %s", p->o.gid_index, strerror(errno));
	if (ibv_query_device(p->ctx, &da) == 0 && da.max_qp_rd_atom < rd)
		rd = da.max_qp_rd_atom;
	for (uint32_t i = 0; i < p->o.qps; i++) {
		for (int b = 0; b < 16; b++)
			sprintf(hex + 2 * b, "%02x", gid.raw[b]);
		say(p, "QP %u %u %u %" PRIu64 " %s", p->qp[i]->qp_num, p->psn[i],
		    p->mr->rkey, (uint64_t)(uintptr_t)(p->buf + i * p->stride), hex);
	}
	for (uint32_t i = 0; i < p->o.qps; i++) {
		struct peer_qp *r = &p->remote[i];
		unsigned int b;

		hear(p, line, sizeof(line));
		if (sscanf(line, "QP %u %u %u %" SCNu64 " %32s", &r->qpn, &r->psn,
			   &r->rkey, &r->va, hex) != 5 || strlen(hex) != 32)
			die("out-of-band: bad QP line \"%s\"", line);
		for (int k = 0; k < 16; k++) {
			if (sscanf(hex + 2 * k, "%2x", &b) != 1)
				die("out-of-band: bad GID \"%s\"", hex);
			r->gid.raw[k] = (uint8_t)b;
		}
	}
	for (uint32_t i = 0; i < p->o.qps; i++) {
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_RTR, .path_mtu = p->mtu,
			.dest_qp_num = p->remote[i].qpn, .rq_psn = p->remote[i].psn,
			.max_dest_rd_atomic = (uint8_t)rd, .min_rnr_timer = 12,
			.ah_attr = {
				.is_global = 1, .port_num = p->o.ib_port,
				.grh = { .dgid = p->remote[i].gid, .hop_limit = 64,
					 .sgid_index = (uint8_t)p->o.gid_index },
			},
		};

		if (ibv_modify_qp(p->qp[i], &a, IBV_QP_STATE | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
			die("ibv_modify_qp to RTR: %s", strerror(errno));
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.sq_psn = p->psn[i];
		a.max_rd_atomic = (uint8_t)rd;
		if (ibv_modify_qp(p->qp[i], &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				  IBV_QP_MAX_QP_RD_ATOMIC) != 0)
			die("ibv_modify_qp to RTS: %s", strerror(errno));
	}
}

/* Wait for completions on @cq; at most @max; never returns 0. */
static int
poll_wait(struct perf *p, struct ibv_cq *cq, struct ibv_wc *wc, int max)
{
	for (;;) {
		int n = ibv_poll_cq(cq, max, wc);

		if (n < 0)
			die("ibv_poll_cq failed");
		if (n > 0) {
			for (int i = 0; i < n; i++)
				if (wc[i].status != IBV_WC_SUCCESS)
					die("completion error: %s (status %d, vendor "
					    "error 0x%x, QP 0x%06x, opcode %d)",
					    ibv_wc_status_str(wc[i].status),
					    wc[i].status, wc[i].vendor_err,
					    wc[i].qp_num, wc[i].opcode);
			return n;
		}
		if (p->o.events) {
			struct ibv_cq *ecq;
			void *ectx;

			if (ibv_get_cq_event(p->ch, &ecq, &ectx) != 0)
				die("ibv_get_cq_event: %s", strerror(errno));
			ibv_ack_cq_events(ecq, 1);
			if (ibv_req_notify_cq(ecq, 0) != 0)
				die("ibv_req_notify_cq: %s", strerror(errno));
		} else if (p->o.yield) {
			sched_yield();
		}
	}
}

static uint8_t *
send_half(struct perf *p, uint32_t qp)
{
	return p->buf + qp * p->stride;
}

static uint8_t *
recv_half(struct perf *p, uint32_t qp)
{
	return p->buf + qp * p->stride + p->stride / 2;
}

/* Receives always take a whole receive half, so ones left over from one
 * message size serve the next. */
static void
post_recv(struct perf *p, uint32_t qp, uint32_t n)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)recv_half(p, qp), .length = (uint32_t)(p->stride / 2),
		.lkey = p->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = qp, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *badwr;

	for (uint32_t i = 0; i < n; i++)
		if (ibv_post_recv(p->qp[qp], &wr, &badwr) != 0)
			die("ibv_post_recv: %s", strerror(errno));
}

/* One send WR of the test for @qp; @seq numbers the QP's atomics. */
static void
make_wr(struct perf *p, uint32_t qp, uint32_t size, uint64_t seq,
	struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	struct peer_qp *r = &p->remote[qp];

	memset(wr, 0, sizeof(*wr));
	sge->addr = (uintptr_t)send_half(p, qp);
	sge->length = size;
	sge->lkey = p->mr->lkey;
	wr->wr_id = qp;
	wr->sg_list = sge;
	wr->num_sge = 1;
	switch (p->o.op) {
	case OP_WRITE:
		wr->opcode = IBV_WR_RDMA_WRITE;
		break;
	case OP_READ:
		/* a READ lands in the receive half: the server's pattern */
		wr->opcode = IBV_WR_RDMA_READ;
		sge->addr = (uintptr_t)recv_half(p, qp);
		break;
	case OP_SEND:
		wr->opcode = IBV_WR_SEND;
		break;
	case OP_ATOMIC:
		wr->opcode = p->o.cas ? IBV_WR_ATOMIC_CMP_AND_SWP :
			IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr->wr.atomic.remote_addr = r->va + p->stride / 2;
		wr->wr.atomic.rkey = r->rkey;
		wr->wr.atomic.compare_add = p->o.cas ? seq : 1;
		wr->wr.atomic.swap = seq + 1;
		sge->addr = (uintptr_t)recv_half(p, qp);
		return;
	}
	/* WRITEs land in the peer's receive half; READs read its send half */
	wr->wr.rdma.remote_addr = r->va + (p->o.op == OP_READ ? 0 : p->stride / 2);
	wr->wr.rdma.rkey = r->rkey;
	if (inline_for(p, size) > 0)
		wr->send_flags |= IBV_SEND_INLINE;
}

/* The pattern each side's send half holds: different per side and QP. */
static void
fill(struct perf *p, bool server)
{
	for (uint32_t q = 0; q < p->o.qps; q++) {
		uint8_t *b = send_half(p, q);

		for (size_t i = 0; i < p->stride / 2; i++)
			b[i] = (uint8_t)(i * 7 + q * 13 + (server ? 101 : 3) + (i >> 8));
	}
}

static uint64_t
sum(const uint8_t *b, size_t n)
{
	uint64_t h = 1469598103934665603ull;   /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

/* ---------------------------------------------------------- reporting */

struct result {
	uint32_t size;
	uint64_t msgs;
	double secs;
	double peak;        /* messages per second */
	/* latency, microseconds */
	double t_min, t_max, t_typ, t_avg, t_sd, p99, p999;
};

static void
header(struct perf *p)
{
	if (p->o.json)
		return;
	printf("---------------------------------------------------------------"
	       "------------------------\n");
	printf(" dprdma-perf %s_%s, RC, %u QP%s, tx depth %u, post list %u, "
	       "inline %d, MTU %d\n", op_names[p->o.op], p->o.lat ? "lat" : "bw",
	       p->o.qps, p->o.qps > 1 ? "s" : "", p->o.tx_depth, p->o.post_list,
	       p->o.inline_size, 128 << p->mtu);
	printf("---------------------------------------------------------------"
	       "------------------------\n");
	if (p->o.lat)
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  "
		       "t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
		       "99%% percentile[usec]   99.9%% percentile[usec]\n");
	else
		printf(" #bytes     #iterations    BW peak[%s]    BW average[%s]   "
		       "MsgRate[Mpps]\n", p->o.gbits ? "Gb/sec" : "MB/sec",
		       p->o.gbits ? "Gb/sec" : "MB/sec");
}

static void
report(struct perf *p, const struct result *r)
{
	double f = p->o.gbits ? 1e9 / 8 : 1048576.0;
	double avg = (double)r->msgs / r->secs;

	if (p->o.json) {
		if (p->o.lat)
			printf("{\"test\":\"%s_lat\",\"bytes\":%u,\"iterations\":%" PRIu64
			       ",\"t_min_us\":%.3f,\"t_max_us\":%.3f,\"t_typical_us\":%.3f"
			       ",\"t_avg_us\":%.3f,\"t_stdev_us\":%.3f,\"p99_us\":%.3f,"
			       "\"p99_9_us\":%.3f}\n", op_names[p->o.op], r->size,
			       r->msgs, r->t_min, r->t_max, r->t_typ, r->t_avg,
			       r->t_sd, r->p99, r->p999);
		else
			printf("{\"test\":\"%s_bw\",\"bytes\":%u,\"iterations\":%" PRIu64
			       ",\"qps\":%u,\"seconds\":%.6f,\"msg_per_s\":%.1f,"
			       "\"peak_msg_per_s\":%.1f,\"gbit_per_s\":%.4f,"
			       "\"mbyte_per_s\":%.2f}\n", op_names[p->o.op], r->size,
			       r->msgs, p->o.qps, r->secs, avg, r->peak,
			       avg * r->size * 8 / 1e9, avg * r->size / 1048576.0);
	} else if (p->o.lat) {
		printf(" %-7u %-10" PRIu64 "  %-13.2f  %-13.2f  %-15.2f  %-13.2f  "
		       "%-14.2f  %-21.2f  %.2f\n", r->size, r->msgs, r->t_min,
		       r->t_max, r->t_typ, r->t_avg, r->t_sd, r->p99, r->p999);
	} else {
		printf(" %-10u %-14" PRIu64 " %-18.2f %-20.2f %.6f\n", r->size,
		       r->msgs, r->peak * r->size / f, avg * r->size / f, avg / 1e6);
	}
	fflush(stdout);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Index of the @q quantile in @n sorted samples. */
static uint64_t
pct_index(uint64_t n, double q)
{
	uint64_t i = (uint64_t)((double)n * q);

	return i < n ? i : n - 1;
}

static void
lat_stats(struct perf *p, uint64_t *d, uint64_t n, double div, struct result *r)
{
	double s = 0, s2 = 0, us = p->tsc_per_us * div;

	qsort(d, n, sizeof(*d), cmp_u64);
	for (uint64_t i = 0; i < n; i++) {
		s += (double)d[i];
		s2 += (double)d[i] * (double)d[i];
	}
	r->msgs = n;
	r->t_min = (double)d[0] / us;
	r->t_max = (double)d[n - 1] / us;
	r->t_typ = (double)d[n / 2] / us;
	r->t_avg = s / (double)n / us;
	r->t_sd = sqrt(fmax(0, s2 / (double)n - (s / (double)n) * (s / (double)n))) / us;
	r->p99 = (double)d[pct_index(n, 0.99)] / us;
	r->p999 = (double)d[pct_index(n, 0.999)] / us;
	if (p->o.cdf != NULL && p->o.host != NULL) {
		FILE *f = fopen(p->o.cdf, "w");

		if (f == NULL)
			die("--cdf %s: %s", p->o.cdf, strerror(errno));
		for (uint64_t i = 0; i < n; i++)
			fprintf(f, "%.3f\n", (double)d[i] / us);
		if (fclose(f) != 0)
			die("--cdf %s: %s", p->o.cdf, strerror(errno));
	}
}

/* ------------------------------------------------------------ the tests */


struct sample {
	uint64_t t, done;
};

/* Client side of a bandwidth test at @size; @per_qp gets each QP's count. */
static void
bw_client(struct perf *p, uint32_t size, struct result *r, uint64_t per_qp[])
{
	uint32_t nq = p->o.qps, depth = p->o.tx_depth, pl = p->o.post_list;
	uint32_t mod = p->o.cq_mod;
	uint64_t posted[MAX_QPS] = { 0 }, done[MAX_QPS] = { 0 }, limit[MAX_QPS];
	uint64_t total = 0, t0, t_stop, end;
	size_t cap = 1 << 20, ns = 0;
	struct sample *smp = malloc(cap * sizeof(*smp));
	struct ibv_send_wr wr[1024], *badwr;
	struct ibv_sge sge[1024];
	struct ibv_wc wc[64];
	bool timed = p->o.secs > 0;

	if (smp == NULL)
		die("out of memory");
	for (uint32_t q = 0; q < nq; q++)
		limit[q] = timed ? UINT64_MAX : p->o.iters;
	t0 = ticks();
	t_stop = timed ? t0 + (uint64_t)(p->o.secs * 1e6 * p->tsc_per_us) : 0;
	for (;;) {
		bool busy = false;

		if (timed && limit[0] == UINT64_MAX && ticks() >= t_stop)
			/* stop on a multiple of cq_mod: the last WR is signaled */
			for (uint32_t q = 0; q < nq; q++)
				limit[q] = (posted[q] + mod - 1) / mod * mod;
		for (uint32_t q = 0; q < nq; q++) {
			while (posted[q] < limit[q] && posted[q] - done[q] + pl <= depth) {
				uint32_t k = 0;

				for (; k < pl && posted[q] + k < limit[q]; k++) {
					uint64_t seq = posted[q] + k;

					make_wr(p, q, size, seq, &wr[k], &sge[k]);
					wr[k].next = &wr[k + 1];
					if ((seq + 1) % mod == 0 || seq + 1 == limit[q])
						wr[k].send_flags |= IBV_SEND_SIGNALED;
				}
				wr[k - 1].next = NULL;
				if (ibv_post_send(p->qp[q], wr, &badwr) != 0)
					die("ibv_post_send: %s", strerror(errno));
				posted[q] += k;
			}
			if (done[q] < limit[q])
				busy = true;
		}
		if (!busy)
			break;
		{
			int n = poll_wait(p, p->scq, wc, 64);

			for (int i = 0; i < n; i++) {
				uint32_t q = (uint32_t)wc[i].wr_id;
				uint64_t next = (done[q] / mod + 1) * mod;

				/* a signaled WR covers the unsignaled ones before it */
				if (next > limit[q])
					next = limit[q];
				total += next - done[q];
				done[q] = next;
			}
			if (ns < cap) {
				smp[ns].t = ticks();
				smp[ns].done = total;
				ns++;
			}
		}
	}
	end = ticks();
	r->size = size;
	r->msgs = total;
	r->secs = (double)(end - t0) / p->tsc_per_us / 1e6;
	r->peak = (double)total / r->secs;
	for (uint32_t q = 0; q < nq; q++)
		per_qp[q] = done[q];
	/* peak: the best rate over any stretch of 5% of the messages */
	{
		uint64_t win = total / 20 > 0 ? total / 20 : 1;
		size_t j = 0;

		for (size_t i = 0; i < ns; i++) {
			while (j < ns && smp[j].done - smp[i].done < win)
				j++;
			if (j >= ns)
				break;
			if (smp[j].t > smp[i].t) {
				double rate = (double)(smp[j].done - smp[i].done) /
					((double)(smp[j].t - smp[i].t) / p->tsc_per_us / 1e6);

				if (rate > r->peak)
					r->peak = rate;
			}
		}
	}
	free(smp);
}

/* Server side of send_bw: take receives (and post them again) until the
 * client's DONE line says how many came, then until that many came. */
static uint64_t
bw_server(struct perf *p, uint32_t size)
{
	uint64_t got = 0, want = UINT64_MAX;
	struct ibv_wc wc[64];
	char line[LINE];

	for (;;) {
		int n = p->o.op == OP_SEND ? ibv_poll_cq(p->rcq, 64, wc) : 0;

		if (n < 0)
			die("ibv_poll_cq failed");
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				die("receive completion error: %s",
				    ibv_wc_status_str(wc[i].status));
			if (wc[i].byte_len != size)
				die("received %u bytes, expected %u", wc[i].byte_len, size);
			post_recv(p, (uint32_t)wc[i].wr_id, 1);
		}
		got += (uint64_t)n;
		if (want == UINT64_MAX) {
			struct pollfd pf = { .fd = p->sock, .events = POLLIN };

			if (poll(&pf, 1, p->o.op == OP_SEND ? 0 : -1) > 0) {
				hear(p, line, sizeof(line));
				if (sscanf(line, "DONE %" SCNu64, &want) != 1)
					die("out-of-band: expected DONE, got \"%s\"", line);
			}
		}
		if (want != UINT64_MAX && (p->o.op != OP_SEND || got >= want))
			return want;
		if (n == 0 && p->o.yield)
			sched_yield();
	}
}

/* A latency test at @size; both sides run it. */
static void
lat_run(struct perf *p, uint32_t size, bool server, struct result *r)
{
	uint64_t n = p->o.iters, *d = malloc(n * sizeof(*d));
	volatile uint8_t *in = recv_half(p, 0);
	uint8_t *out = send_half(p, 0);
	struct ibv_send_wr wr, *badwr;
	struct ibv_sge sge;
	struct ibv_wc wc[4];

	if (d == NULL)
		die("out of memory");
	for (uint64_t i = 0; i < n; i++) {
		uint8_t mark = (uint8_t)(i % 255 + 1);
		uint64_t t0 = ticks();

		make_wr(p, 0, size, i, &wr, &sge);
		wr.send_flags |= IBV_SEND_SIGNALED;
		if (p->o.op == OP_WRITE) {
			/* ping-pong on the last byte of the peer's buffer */
			if (server)
				while (in[size - 1] != mark)
					if (p->o.yield)
						sched_yield();
			out[size - 1] = mark;
			if (ibv_post_send(p->qp[0], &wr, &badwr) != 0)
				die("ibv_post_send: %s", strerror(errno));
			poll_wait(p, p->scq, wc, 4);
			if (!server)
				while (in[size - 1] != mark)
					if (p->o.yield)
						sched_yield();
		} else if (p->o.op == OP_SEND) {
			/* one receive posted ahead on each side (run_size) */
			if (server) {
				poll_wait(p, p->rcq, wc, 1);
				post_recv(p, 0, 1);
			}
			if (ibv_post_send(p->qp[0], &wr, &badwr) != 0)
				die("ibv_post_send: %s", strerror(errno));
			poll_wait(p, p->scq, wc, 1);
			if (!server) {
				poll_wait(p, p->rcq, wc, 1);
				post_recv(p, 0, 1);
			}
		} else {
			/* READ and atomics: the client alone, one at a time */
			if (ibv_post_send(p->qp[0], &wr, &badwr) != 0)
				die("ibv_post_send: %s", strerror(errno));
			poll_wait(p, p->scq, wc, 1);
		}
		d[i] = ticks() - t0;
	}
	lat_stats(p, d, n, p->o.op == OP_WRITE || p->o.op == OP_SEND ? 2.0 : 1.0, r);
	r->size = size;
	free(d);
}

/* A digest of what arrived in each QP's receive half (atomics: the sum of
 * the counters), or of each QP's send half (@send). */
static uint64_t
digest(struct perf *p, uint32_t size, bool send)
{
	uint64_t h = 0;

	for (uint32_t q = 0; q < p->o.qps; q++) {
		uint8_t *b = send ? send_half(p, q) : recv_half(p, q);

		if (p->o.op == OP_ATOMIC && !send) {
			uint64_t v;

			memcpy(&v, b, 8);
			h += v;
		} else {
			h ^= sum(b, size) + q;
		}
	}
	return h;
}

/* One message size; returns false when the data check failed. */
static bool
run_size(struct perf *p, uint32_t size, bool server, unsigned int round)
{
	struct result r = { 0 };
	char line[LINE];
	uint64_t count = 0, seen, pattern, per_qp[MAX_QPS] = { 0 }, want;
	bool passive = server && (!p->o.lat || p->o.op == OP_READ ||
				  p->o.op == OP_ATOMIC);

	/* receive halves (and the atomics' counters) start at 0 */
	for (uint32_t q = 0; q < p->o.qps; q++)
		memset(recv_half(p, q), 0, p->stride / 2);
	sync_peer(p, round);
	if (passive) {
		count = bw_server(p, size);
		say(p, "SEEN %" PRIu64 " %" PRIu64 " %" PRIu64, count,
		    digest(p, size, false), digest(p, size, true));
		return true;
	}
	if (p->o.lat) {
		lat_run(p, size, server, &r);
		per_qp[0] = p->o.iters;
	} else {
		bw_client(p, size, &r, per_qp);
	}
	if (server) {
		/* ping-pong server: the client checks both directions' data */
		say(p, "SEEN %" PRIu64 " %" PRIu64 " %" PRIu64, p->o.iters,
		    digest(p, size, false), digest(p, size, true));
		return true;
	}
	if (!p->o.lat || p->o.op == OP_READ || p->o.op == OP_ATOMIC)
		say(p, "DONE %" PRIu64, r.msgs);
	hear(p, line, sizeof(line));
	if (sscanf(line, "SEEN %" SCNu64 " %" SCNu64 " %" SCNu64, &count, &seen,
		   &pattern) != 3)
		die("out-of-band: expected SEEN, got \"%s\"", line);
	report(p, &r);
	/* the check: what the server holds against what this side sent */
	if (p->o.op == OP_ATOMIC) {
		want = 0;
		for (uint32_t q = 0; q < p->o.qps; q++)
			want += per_qp[q];
		if (seen != want) {
			fprintf(stderr, "dprdma-perf: data check failed at %u B: the "
				"server's counters sum to %" PRIu64 " after %" PRIu64
				" atomics\n", size, seen, want);
			return false;
		}
	} else if (p->o.op == OP_READ) {
		if (digest(p, size, false) != pattern) {
			fprintf(stderr, "dprdma-perf: data check failed at %u B: READ "
				"brought back other bytes than the server holds\n", size);
			return false;
		}
	} else if (seen != digest(p, size, true)) {
		fprintf(stderr, "dprdma-perf: data check failed at %u B: the server "
			"holds other bytes than were sent\n", size);
		return false;
	}
	return true;
}

static void
oob_connect(struct perf *p)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = p->o.host ? 0 : AI_PASSIVE };
	struct addrinfo *res, *ai;
	char port[16];
	int fd = -1, one = 1, rc;

	snprintf(port, sizeof(port), "%d", p->o.port);
	rc = getaddrinfo(p->o.host, port, &hints, &res);
	if (rc != 0)
		die("%s: %s", p->o.host ? p->o.host : "listen", gai_strerror(rc));
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (fd < 0)
			continue;
		if (p->o.host) {
			/* the server may still be starting: retry for 10 s */
			for (int i = 0; i < 100; i++) {
				if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
					goto done;
				if (errno != ECONNREFUSED)
					break;
				usleep(100000);
			}
		} else {
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
			    listen(fd, 1) == 0) {
				int c = accept(fd, NULL, NULL);

				close(fd);
				fd = c;
				if (fd >= 0)
					goto done;
			}
		}
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	die("%s port %d: %s", p->o.host ? p->o.host : "listen on", p->o.port,
	    strerror(errno));
done:
	freeaddrinfo(res);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	p->sock = fd;
	p->in = fdopen(dup(fd), "r");
	if (p->in == NULL)
		die("fdopen: %s", strerror(errno));
	/* Unbuffered: bw_server() poll()s the socket for the client's DONE
	 * line, so no line may wait in a stdio buffer where poll() cannot
	 * see it. With a buffer, the read of "SYNC n" could take the "DONE"
	 * behind it too, and a WRITE server then waited forever (seen under
	 * load in test_perf's write_bw -a). The exchange is a few lines per
	 * size; a read per byte costs nothing that matters. */
	setvbuf(p->in, NULL, _IONBF, 0);
}

/* The client's parameters rule both ends. */
static void
exchange_params(struct perf *p)
{
	struct opts *o = &p->o;
	char line[LINE], test[32];
	unsigned int all, cas, lat, qps, depth, pl;
	int inl;

	if (o->host) {
		say(p, "DPRDMA-PERF 1 %s_%s %u %u %" PRIu64 " %.0f %u %u %u %d %u",
		    op_names[o->op], o->lat ? "lat" : "bw", o->size, o->all,
		    o->iters, o->secs, o->qps, o->tx_depth, o->post_list,
		    o->inline_size, o->cas);
		hear(p, line, sizeof(line));
		if (strcmp(line, "OK") != 0)
			die("the server refused: %s", line);
		return;
	}
	hear(p, line, sizeof(line));
	if (sscanf(line, "DPRDMA-PERF 1 %31s %u %u %" SCNu64 " %lf %u %u %u %d %u",
		   test, &o->size, &all, &o->iters, &o->secs, &qps, &depth, &pl,
		   &inl, &cas) != 10) {
		say(p, "ERR this is dprdma-perf 1; the line was not understood");
		die("out-of-band: not a dprdma-perf 1 client: \"%s\"", line);
	}
	lat = o->lat;
	parse_test(o, test);
	if (o->lat != lat || qps < 1 || qps > MAX_QPS || o->size < 1 ||
	    o->size > MAX_SIZE || depth < 1 || depth > 8192 || pl < 1 || pl > depth ||
	    inl < 0 || inl > 1024 || o->iters < 1) {
		say(p, "ERR the server runs %s_%s", op_names[o->op],
		    lat ? "lat" : "bw");
		die("the client asked for %s with other parameters than this "
		    "server can take: \"%s\"", test, line);
	}
	o->all = all != 0;
	o->cas = cas != 0;
	o->qps = qps;
	o->tx_depth = depth;
	o->post_list = pl;
	o->inline_size = inl;
	if (o->cq_mod + o->post_list - 1 > o->tx_depth)
		o->cq_mod = o->tx_depth - o->post_list + 1;
	say(p, "OK");
}

int
main(int argc, char **argv)
{
	struct perf *p = calloc(1, sizeof(*p));
	bool server, ok = true;
	unsigned int round = 0;

	if (p == NULL)
		return 1;
	parse_opts(&p->o, argc, argv);
	server = p->o.host == NULL;
	srandom((unsigned int)(now_ns() ^ (uint64_t)getpid()));
	p->tsc_per_us = calibrate();
	oob_connect(p);
	exchange_params(p);
	setup(p);
	fill(p, server);
	if (p->o.op == OP_SEND)
		for (uint32_t q = 0; q < p->o.qps; q++)
			post_recv(p, q, server && !p->o.lat ? p->o.rx_depth : 1);
	connect_qps(p);
	if (!server)
		header(p);
	if (p->o.all) {
		for (uint32_t s = 2; s <= MAX_SIZE && ok; s *= 2)
			ok = run_size(p, s, server, ++round);
	} else {
		ok = run_size(p, p->o.size, server, ++round);
	}
	sync_peer(p, 0);
	if (!server && !p->o.json)
		printf("---------------------------------------------------------------"
		       "------------------------\n");
	for (uint32_t q = 0; q < p->o.qps; q++)
		ibv_destroy_qp(p->qp[q]);
	ibv_destroy_cq(p->scq);
	ibv_destroy_cq(p->rcq);
	if (p->ch)
		ibv_destroy_comp_channel(p->ch);
	ibv_dereg_mr(p->mr);
	ibv_dealloc_pd(p->pd);
	ibv_close_device(p->ctx);
	free(p->buf);
	return ok ? 0 : 1;
}
