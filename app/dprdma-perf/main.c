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
 *
 * Here: the options, the messages and the out-of-band exchange, main();
 * verbs.c the verbs, tests.c the tests, report.c what they print.
 */

#include "perf.h"

const char *const op_names[] = { "write", "read", "send", "atomic" };

/* -------------------------------------------------------------- time */

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

void
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

void
hear(struct perf *p, char *line, size_t len)
{
	if (fgets(line, (int)len, p->in) == NULL)
		die("out-of-band connection closed by the peer");
	line[strcspn(line, "\n")] = '\0';
}

void
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

void
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
