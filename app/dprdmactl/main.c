/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdmactl: the operator's view of a running dprdmad, over DPDK's
 * telemetry socket (/var/run/dpdk/PREFIX/dpdk_telemetry.v2, the one
 * dpdk-telemetry.py reads), with the /dprdma/ commands the daemon
 * registers. Replies are JSON (parsed with jansson); tables by default,
 * --json for scripts. `metrics` writes every counter in Prometheus' text
 * format, and with --listen serves it over HTTP (one request at a time,
 * GET /metrics only: a scrape target, not a web server).
 *
 * Exit status: 0 done, 1 the daemon could not be reached or refused the
 * command, 2 a usage mistake.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <netdb.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <jansson.h>

#define DPR_CLI_NAME "dprdmactl"
#include "../dpr_cli.h"

#define EXIT_DAEMON 1
#define TEL_SOCKET "dpdk_telemetry.v2"
#define RTE_DIM_(a) (sizeof(a) / sizeof((a)[0]))

static struct {
	const char *prefix;
	const char *socket;
	bool json;
	int port;               /* -1: every port */
	long qp;                /* -1: none */
	unsigned int watch;
	unsigned int snaplen;
	const char *listen;
} opt = { .prefix = "dprdmad", .port = -1, .qp = -1 };

static char sock_path[108];   /* sun_path's size */
static int tel_fd = -1;
static size_t max_out = 16384;

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: dprdmactl [options] COMMAND [ARGS]\n"
"\n"
"Looks at and steers a running dprdmad through its telemetry socket.\n"
"\n"
"Commands:\n"
"  status                       version, uptime, state, ports, workers, clients\n"
"  ports                        each port: link, addresses, MTU, packets, drops\n"
"  workers                      each worker: busy %%, loops/s, packets per burst\n"
"  qps                          every QP: type, state, peer, PSNs, owner\n"
"  qp QPN                       one QP in detail (every field and counter)\n"
"  neigh                        the neighbours each port knows (IP -> MAC by\n"
"                               ARP/ND), as ip neigh shows them\n"
"  mrs | pds | clients          clients' memory regions, PDs, connections\n"
"  stats [--watch N]            counters (and, with --watch, per-second rates\n"
"                               refreshed every N s until interrupted)\n"
"  capture start FILE [--snaplen B] [--qp N] | capture stop\n"
"                               pcapng capture of a port (--port, default 0),\n"
"                               or of one QP's frames both ways\n"
"  log-level [PATTERN LEVEL]    list log types, or set e.g. 'dprdma.*' debug\n"
"  faults PORT [SPEC]           what a port's fault adapter injected, or new\n"
"                               faults: loss=P,reorder=P,dup=P,corrupt=P,delay_us=N\n"
"  metrics [--listen ADDR:PORT] every counter in Prometheus text format, or\n"
"                               serve GET /metrics on ADDR:PORT\n"
"  counters [--rst]             what each counter means (doc/counters.rst)\n"
"\n"
"Options:\n"
"  -p, --file-prefix PREFIX     the daemon's EAL --file-prefix (default dprdmad)\n"
"  -s, --socket PATH            its telemetry socket, instead of the prefix\n"
"  -P, --port N                 only port N (qps, qp, stats, capture)\n"
"  -j, --json                   JSON instead of tables\n"
"  -h, --help                   this text\n"
"\n"
"Exit status: 0 done, 1 the daemon is not reachable or refused, 2 usage.\n");
}

/* ------------------------------------------------------- the socket */

static void
tel_path(void)
{
	const char *run;

	if (opt.socket != NULL) {
		snprintf(sock_path, sizeof(sock_path), "%s", opt.socket);
		return;
	}
	/* where the EAL puts its runtime folder (eal_get_runtime_dir) */
	run = getuid() == 0 ? "/var/run" : getenv("XDG_RUNTIME_DIR");
	if (run == NULL)
		run = "/tmp";
	snprintf(sock_path, sizeof(sock_path), "%s/dpdk/%s/" TEL_SOCKET, run,
		 opt.prefix);
}

static void
tel_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[1024];
	json_t *hello;
	ssize_t n;

	if (tel_fd >= 0)
		return;
	tel_path();
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	tel_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (tel_fd < 0 || connect(tel_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;

		if (e == ENOENT || e == ECONNREFUSED)
			dpr_cli_complain(EXIT_DAEMON, "no dprdmad answers on %s (%s): "
				"is it running, with --file-prefix %s? Give the "
				"daemon's prefix with -p (its [eal] file_prefix) or "
				"the socket with -s", sock_path, strerror(e),
				opt.prefix);
		if (e == EACCES)
			dpr_cli_complain(EXIT_DAEMON, "%s: permission denied: run "
				"as the daemon's user (root)", sock_path);
		dpr_cli_complain(EXIT_DAEMON, "cannot connect to %s: %s",
				 sock_path, strerror(e));
	}
	n = recv(tel_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		dpr_cli_complain(EXIT_DAEMON, "%s: the daemon closed the "
			"connection (too many telemetry clients?)", sock_path);
	buf[n] = '\0';
	hello = json_loads(buf, 0, NULL);
	if (hello != NULL && json_integer_value(json_object_get(hello,
						"max_output_len")) > 0)
		max_out = (size_t)json_integer_value(json_object_get(hello,
							"max_output_len"));
	json_decref(hello);
}

/*
 * One command; the value under its name (a new reference), or NULL when
 * the daemon answered null (the command refused its parameters, or failed).
 * A command the daemon does not know at all ends the program.
 */
static json_t *
tel_try(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static json_t *
tel_try(const char *fmt, ...)
{
	char cmd[512], key[512], *buf;
	json_error_t jerr;
	json_t *reply, *v;
	va_list ap;
	ssize_t n;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	tel_connect();
	if (send(tel_fd, cmd, strlen(cmd), 0) < 0)
		dpr_cli_complain(EXIT_DAEMON, "%s: %s", sock_path, strerror(errno));
	buf = malloc(max_out + 1);
	if (buf == NULL)
		dpr_cli_complain(EXIT_DAEMON, "out of memory");
	n = recv(tel_fd, buf, max_out, 0);
	if (n <= 0)
		dpr_cli_complain(EXIT_DAEMON, "%s: the daemon went away", sock_path);
	buf[n] = '\0';
	reply = json_loads(buf, 0, &jerr);
	free(buf);
	if (reply == NULL)
		dpr_cli_complain(EXIT_DAEMON, "%s: the reply (%zd bytes) is not JSON "
				 "this program reads: %s at byte %d", cmd, n,
				 jerr.text, jerr.position);
	snprintf(key, sizeof(key), "%s", cmd);
	key[strcspn(key, ",")] = '\0';
	v = json_object_get(reply, key);
	if (v == NULL)
		dpr_cli_complain(EXIT_DAEMON, "the daemon does not know %s (not a "
				 "dprdmad, or an older one?)", key);
	v = json_is_null(v) ? NULL : json_incref(v);
	json_decref(reply);
	return v;
}

/* tel_try() that must succeed: @p what says what was asked. */
#define tel(...) tel_must(tel_try(__VA_ARGS__), #__VA_ARGS__)

static json_t *
tel_must(json_t *v, const char *what)
{
	if (v == NULL)
		dpr_cli_complain(EXIT_DAEMON, "the daemon refused %s", what);
	return v;
}

static uint64_t
u64(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	if (json_is_integer(v))
		return (uint64_t)json_integer_value(v);
	if (json_is_real(v))
		return (uint64_t)json_real_value(v);
	return 0;
}

static const char *
str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : "-";
}

static void
print_json(json_t *v)
{
	json_dumpf(v, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
}

/* The end of a table command: its JSON with --json (the table is
 * printed already otherwise); @p all is released. */
static int
done(json_t *all)
{
	if (opt.json)
		print_json(all);
	json_decref(all);
	return 0;
}

static unsigned int
n_ports(void)
{
	json_t *p = tel("/dprdma/ports");
	unsigned int n = (unsigned int)json_array_size(p);

	json_decref(p);
	return n;
}

static void
check_port(int pi)
{
	if (pi >= 0 && (unsigned int)pi >= n_ports())
		dpr_cli_complain(EXIT_USAGE, "--port %d: the daemon has %u ports "
				 "(0 to %u)", pi, n_ports(), n_ports() - 1);
}

/* --------------------------------------------------------- commands */

static int
cmd_status(void)
{
	json_t *info = tel("/dprdma/info"), *shim = tel_try("/dprdma/shim/stats");
	json_t *all = json_object();
	unsigned int pi, np = (unsigned int)u64(info, "ports");

	json_object_set(all, "daemon", info);
	if (shim != NULL)
		json_object_set_new(all, "clients", json_integer((json_int_t)u64(shim, "clients")));
	if (!opt.json) {
		printf("dprdmad %s (pid %" PRIu64 "), %s, up %" PRIu64 " s\n",
		       str(info, "version"), u64(info, "pid"), str(info, "state"),
		       u64(info, "uptime_s"));
		printf("config: %s; %" PRIu64 " ports, %" PRIu64 " workers (%s), "
		       "%" PRIu64 " clients\n", str(info, "config"), u64(info, "ports"),
		       u64(info, "workers"), str(info, "idle"),
		       shim != NULL ? u64(shim, "clients") : 0);
	}
	for (pi = 0; pi < np; pi++) {
		json_t *p = tel("/dprdma/port/info,%u", pi);

		if (!opt.json)
			printf("dprdma%u %-24s link %-4s %s mtu %" PRIu64 " %s\n", pi,
			       str(p, "name"), str(p, "link"), str(p, "mac"),
			       u64(p, "mtu"), str(p, "ipv4"));
		json_decref(p);
	}
	if (opt.json)
		print_json(all);
	json_decref(all);
	json_decref(info);
	json_decref(shim);
	return 0;
}

static uint64_t
drops_of(const json_t *st)
{
	const char *k;
	json_t *v;
	uint64_t d = 0;

	json_object_foreach((json_t *)st, k, v)
		if (strncmp(k, "rx_drop_", 8) == 0 || strncmp(k, "tx_drop_", 8) == 0)
			d += (uint64_t)json_integer_value(v);
	return d;
}

static int
cmd_ports(void)
{
	unsigned int pi, np = n_ports();
	json_t *all = json_array();

	if (!opt.json)
		printf("%-8s %-5s %-17s %-18s %-5s %12s %12s %10s %10s\n", "PORT",
		       "LINK", "MAC", "IPV4", "MTU", "RX_PACKETS", "TX_PACKETS",
		       "DROPPED", "MISSED");
	for (pi = 0; pi < np; pi++) {
		json_t *p = tel("/dprdma/port/info,%u", pi);
		json_t *s = tel("/dprdma/port/stats,%u", pi);

		if (opt.json) {
			json_object_set(p, "stats", s);
			json_array_append(all, p);
		} else {
			printf("dprdma%-2u %-5s %-17s %-18s %-5" PRIu64 " %12" PRIu64
			       " %12" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n", pi,
			       str(p, "link"), str(p, "mac"), str(p, "ipv4"),
			       u64(p, "mtu"), u64(s, "rx_packets"), u64(s, "tx_packets"),
			       drops_of(s), u64(s, "rx_missed"));
			if (strcmp(str(p, "ipv6"), "none") != 0)
				printf("%-8s ipv6 %s, link-local %s, %s\n", "",
				       str(p, "ipv6"), str(p, "ipv6_link_local"),
				       str(p, "tx_payload"));
		}
		json_decref(p);
		json_decref(s);
	}
	return done(all);
}

/* Two readings of the workers 1 s apart give loops per second. */
static int
cmd_workers(void)
{
	json_t *lc = tel("/dprdma/lcores"), *all = json_array(), *first;
	size_t i;

	first = json_array();
	for (i = 0; i < json_array_size(lc); i++)
		json_array_append_new(first, tel("/dprdma/lcore/stats,%" JSON_INTEGER_FORMAT,
						 json_integer_value(json_array_get(lc, i))));
	sleep(1);
	if (!opt.json)
		printf("%-6s %-5s %6s %12s %12s %12s %12s %8s\n", "LCORE", "QUEUE",
		       "BUSY%", "LOOPS/S", "RX_PACKETS", "TX_PACKETS", "HANDOVER",
		       "PKT/BURST");
	for (i = 0; i < json_array_size(lc); i++) {
		json_t *w = tel("/dprdma/lcore/stats,%" JSON_INTEGER_FORMAT,
				json_integer_value(json_array_get(lc, i)));
		const json_t *w0 = json_array_get(first, i);
		uint64_t db = u64(w, "busy_cycles") - u64(w0, "busy_cycles");
		uint64_t di = u64(w, "idle_cycles") - u64(w0, "idle_cycles");
		uint64_t loops = u64(w, "polls") - u64(w0, "polls");
		double busy = db + di ? 100.0 * (double)db / (double)(db + di) : 0;

		json_object_set_new(w, "busy_percent_now", json_real(busy));
		json_object_set_new(w, "loops_per_s", json_integer((json_int_t)loops));
		if (opt.json)
			json_array_append(all, w);
		else
			printf("%-6" PRIu64 " %-5" PRIu64 " %6.1f %12" PRIu64 " %12" PRIu64
			       " %12" PRIu64 " %12" PRIu64 " %8s\n", u64(w, "lcore"),
			       u64(w, "queue"), busy, loops, u64(w, "rx_packets"),
			       u64(w, "tx_packets"), u64(w, "handover_tx"),
			       str(w, "rx_packets_per_burst"));
		json_decref(w);
	}
	if (opt.json)
		print_json(all);
	json_decref(all);
	json_decref(first);
	json_decref(lc);
	return 0;
}

static int
cmd_qps(void)
{
	unsigned int pi, np = n_ports();
	json_t *all = json_array();

	if (!opt.json)
		printf("%-8s %-8s %-4s %-5s %-16s %-8s %9s %9s %9s %7s %s\n", "PORT",
		       "QPN", "TYPE", "STATE", "PEER", "DEST_QPN", "SQ_PSN", "RQ_PSN",
		       "OUTSTAND", "RETRANS", "OWNER");
	for (pi = 0; pi < np; pi++) {
		json_t *qps;
		size_t i;

		if (opt.port >= 0 && (unsigned int)opt.port != pi)
			continue;
		qps = tel("/dprdma/qps,%u", pi);
		for (i = 0; i < json_array_size(qps); i++) {
			json_int_t qpn = json_integer_value(json_array_get(qps, i));
			json_t *q = tel_try("/dprdma/qp,%u,%" JSON_INTEGER_FORMAT, pi, qpn);

			if (q == NULL)
				continue;       /* destroyed in between */
			json_object_set_new(q, "port", json_integer(pi));
			if (opt.json)
				json_array_append(all, q);
			else
				printf("dprdma%-2u 0x%06" PRIx64 " %-4s %-5s %-16s 0x%06"
				       PRIx64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64
				       " %7" PRIu64 " %s\n", pi, u64(q, "qpn"),
				       str(q, "type"), str(q, "state"), str(q, "peer"),
				       u64(q, "dest_qpn"), u64(q, "req_psn"),
				       u64(q, "resp_psn"),
				       u64(q, "sq_posted") - u64(q, "sq_completed"),
				       u64(q, "retransmits"), str(q, "owner"));
			json_decref(q);
		}
		json_decref(qps);
	}
	return done(all);
}

static void
print_dict(json_t *o, const char *indent)
{
	const char *k;
	json_t *v;

	json_object_foreach(o, k, v) {
		if (json_is_string(v))
			printf("%s%-24s %s\n", indent, k, json_string_value(v));
		else if (json_is_integer(v))
			printf("%s%-24s %" JSON_INTEGER_FORMAT "\n", indent, k,
			       json_integer_value(v));
		else if (json_is_array(v)) {
			size_t i;

			printf("%s%s:\n", indent, k);
			for (i = 0; i < json_array_size(v); i++)
				printf("%s  %s\n", indent,
				       json_string_value(json_array_get(v, i)) ?
				       json_string_value(json_array_get(v, i)) : "?");
		} else if (json_is_object(v)) {
			printf("%s%s:\n", indent, k);
			print_dict(v, "    ");
		}
	}
}

static int
cmd_qp(const char *arg)
{
	unsigned int pi, np = n_ports();
	char *end;
	unsigned long qpn = strtoul(arg, &end, 0);

	if (*arg == '\0' || *end != '\0' || qpn > 0xffffff)
		dpr_cli_complain(EXIT_USAGE, "qp %s: expected a QP number (0x1c or 28)",
				 arg);
	for (pi = 0; pi < np; pi++) {
		json_t *q;

		if (opt.port >= 0 && (unsigned int)opt.port != pi)
			continue;
		q = tel_try("/dprdma/qp,%u,%lu", pi, qpn);
		if (q == NULL)
			continue;
		json_object_set_new(q, "port", json_integer(pi));
		if (opt.json)
			print_json(q);
		else
			print_dict(q, "");
		json_decref(q);
		return 0;
	}
	fprintf(stderr, "dprdmactl: no QP 0x%lx on %s (dprdmactl qps lists them)\n",
		qpn, opt.port >= 0 ? "that port" : "any port");
	return EXIT_DAEMON;
}

static int
cmd_lines(const char *command, const char *none)
{
	json_t *v = tel("%s", command);
	size_t i;

	if (opt.json)
		print_json(v);
	else if (json_array_size(v) == 0)
		printf("%s\n", none);
	for (i = 0; !opt.json && i < json_array_size(v); i++)
		printf("%s\n", json_string_value(json_array_get(v, i)));
	json_decref(v);
	return 0;
}

/* Each port's neighbours (dprdmaN: one line per entry and worker). */
static int
cmd_neigh(void)
{
	unsigned int pi, np = n_ports();
	json_t *all = json_object();

	for (pi = 0; pi < np; pi++) {
		json_t *v;
		size_t i;
		char key[16];

		if (opt.port >= 0 && (unsigned int)opt.port != pi)
			continue;
		v = tel("/dprdma/neigh,%u", pi);
		snprintf(key, sizeof(key), "dprdma%u", pi);
		for (i = 0; !opt.json && i < json_array_size(v); i++)
			printf("%s %s\n", key, json_string_value(json_array_get(v, i)));
		if (!opt.json && json_array_size(v) == 0)
			printf("%s: no neighbours\n", key);
		json_object_set_new(all, key, v);
	}
	return done(all);
}

static int
cmd_clients(void)
{
	json_t *c = tel("/dprdma/shim/clients");
	const char *id;
	json_t *v;

	if (opt.json) {
		print_json(c);
		json_decref(c);
		return 0;
	}
	printf("%-6s %-8s %-16s %-5s %-6s %4s %5s %4s %4s %14s %9s %7s\n", "ID",
	       "PID", "PROGRAM", "PORT", "WORKER", "PDS", "MRS", "CQS", "QPS",
	       "MR_BYTES", "REQUESTS", "REFUSED");
	json_object_foreach(c, id, v)
		printf("%-6s %-8" PRIu64 " %-16s %-5" PRIu64 " %-6" PRIu64 " %4" PRIu64
		       " %5" PRIu64 " %4" PRIu64 " %4" PRIu64 " %14" PRIu64 " %9"
		       PRIu64 " %7" PRIu64 "\n", id, u64(v, "pid"), str(v, "comm"),
		       u64(v, "port"), u64(v, "worker"), u64(v, "pds"), u64(v, "mrs"),
		       u64(v, "cqs"), u64(v, "qps"), u64(v, "mr_bytes"),
		       u64(v, "requests"), u64(v, "refused"));
	json_decref(c);
	return 0;
}

/* Every counter of the daemon, as {group: {label: {name: value}}}. */
static json_t *
all_counters(void)
{
	json_t *all = json_object(), *g;
	unsigned int pi, np = n_ports();
	json_t *lc = tel("/dprdma/lcores");
	size_t i;
	const char *port_groups[][2] = {
		{ "port", "/dprdma/port/stats" },
		{ "transport", "/dprdma/transport/stats" },
		{ "statistic", "/dprdma/statistic" },
		{ "faults", "/dprdma/port/faults" },
	};

	for (i = 0; i < RTE_DIM_(port_groups); i++) {
		g = json_object();
		for (pi = 0; pi < np; pi++) {
			char l[16];
			json_t *v;

			if (opt.port >= 0 && (unsigned int)opt.port != pi)
				continue;
			v = tel_try("%s,%u", port_groups[i][1], pi);
			snprintf(l, sizeof(l), "%u", pi);
			if (v != NULL)
				json_object_set_new(g, l, v);
		}
		json_object_set_new(all, port_groups[i][0], g);
	}
	g = json_object();
	for (i = 0; i < json_array_size(lc); i++) {
		char l[16];
		json_int_t id = json_integer_value(json_array_get(lc, i));
		json_t *v = tel("/dprdma/lcore/stats,%" JSON_INTEGER_FORMAT, id);

		json_object_del(v, "lcore");
		json_object_del(v, "queue");
		json_object_del(v, "rx_packets_per_burst");   /* a string */
		snprintf(l, sizeof(l), "%" JSON_INTEGER_FORMAT, id);
		json_object_set_new(g, l, v);
	}
	json_object_set_new(all, "lcore", g);
	json_decref(lc);
	g = tel_try("/dprdma/shim/stats");
	if (g != NULL) {
		json_t *w = json_object();

		json_object_set_new(w, "", g);
		json_object_set_new(all, "shim", w);
	}
	g = tel_try("/dprdma/cm/stats");
	if (g != NULL) {
		json_t *w = json_object();

		json_object_set_new(w, "", g);
		json_object_set_new(all, "cm", w);
	}
	return all;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *
label_name(const char *group)
{
	return strcmp(group, "lcore") == 0 ? "lcore" :
	       (strcmp(group, "shim") == 0 || strcmp(group, "cm") == 0) ? NULL : "port";
}

static volatile sig_atomic_t stop_watch;

static void
on_int(int sig)
{
	(void)sig;
	stop_watch = 1;
}

/* SIGINT/SIGTERM end the loop: without SA_RESTART, so that a blocked
 * accept() or sleep() returns at once */
static void
catch_stop(void)
{
	struct sigaction sa = { .sa_handler = on_int };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* The non-zero counters of @p cur as a table; with @p prev, taken @p dt s
 * earlier, their rates too. */
static void
print_counters(json_t *cur, json_t *prev, double dt)
{
	const char *gk, *lk, *k;
	json_t *g, *per, *v;

	printf("%-10s %-6s %-28s %16s %14s\n", "GROUP", "WHERE", "COUNTER",
	       "VALUE", prev != NULL ? "PER_SECOND" : "");
	json_object_foreach(cur, gk, g) {
		const bool port = strcmp(label_name(gk) ? label_name(gk) : "", "port") == 0;

		json_object_foreach(g, lk, per) {
			const json_t *pper = json_object_get(json_object_get(prev, gk), lk);
			char where[24];

			snprintf(where, sizeof(where), "%s%s", port ? "dprdma" : "", lk);
			json_object_foreach(per, k, v) {
				const json_t *pv = json_object_get(pper, k);
				uint64_t x = (uint64_t)json_integer_value(v);

				if (!json_is_integer(v) || (x == 0 && pv == NULL))
					continue;       /* zeros: noise */
				if (pv != NULL)
					printf("%-10s %-6s %-28s %16" PRIu64 " %14.0f\n", gk,
					       where, k, x, (double)(x - (uint64_t)
					       json_integer_value(pv)) / dt);
				else
					printf("%-10s %-6s %-28s %16" PRIu64 "\n", gk, where,
					       k, x);
			}
		}
	}
}

static int
cmd_stats(void)
{
	json_t *prev = NULL;
	double tprev = 0;

	catch_stop();
	do {
		json_t *cur = all_counters();
		double t = now_s();

		if (opt.json) {
			print_json(cur);
		} else {
			if (opt.watch != 0 && isatty(STDOUT_FILENO))
				printf("\033[H\033[2J");
			print_counters(cur, prev, t - tprev);
		}
		fflush(stdout);
		json_decref(prev);
		prev = cur;
		tprev = t;
		if (opt.watch != 0)
			sleep(opt.watch);
	} while (opt.watch != 0 && !stop_watch);
	json_decref(prev);
	return 0;
}

/* ---------------------------------------------------------- metrics */

/* group -> {counter: help}, fetched once */
static json_t *
help_tables(void)
{
	json_t *groups = tel_try("/dprdma/counters"), *h = json_object();
	size_t i;

	for (i = 0; groups != NULL && i < json_array_size(groups); i++) {
		const char *g = json_string_value(json_array_get(groups, i));
		json_t *t = tel_try("/dprdma/counters/help,%s", g);

		if (t != NULL)
			json_object_set_new(h, g, t);
	}
	json_decref(groups);
	return h;
}

/* Counters that only go up are "counter" (name_total); the rest gauges. */
static bool
is_gauge(const char *group, const char *name)
{
	static const char *const gauges[] = {
		"clients", "verbs_pds", "verbs_mrs", "verbs_cqs", "verbs_qps",
		"busy_percent", "enabled",
	};

	(void)group;
	for (size_t i = 0; i < RTE_DIM_(gauges); i++)
		if (strcmp(name, gauges[i]) == 0)
			return true;
	return false;
}

static void
escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

/* The Prometheus text exposition (version 0.0.4) of every counter. */
static void
write_metrics(FILE *f, json_t *help)
{
	json_t *cur = all_counters(), *g;
	json_t *info = tel("/dprdma/info");
	const char *gk;
	unsigned int pi, np = n_ports();

	fprintf(f, "# HELP dprdma_info dprdmad's version and state (value 1)\n"
		"# TYPE dprdma_info gauge\ndprdma_info{version=\"%s\",state=\"%s\"} 1\n",
		str(info, "version"), str(info, "state"));
	fprintf(f, "# HELP dprdma_uptime_seconds seconds since dprdmad started\n"
		"# TYPE dprdma_uptime_seconds gauge\ndprdma_uptime_seconds %" PRIu64 "\n",
		u64(info, "uptime_s"));
	fprintf(f, "# HELP dprdma_port_link_up 1 when the port's link is up\n"
		"# TYPE dprdma_port_link_up gauge\n");
	for (pi = 0; pi < np; pi++) {
		json_t *p = tel("/dprdma/port/info,%u", pi);

		fprintf(f, "dprdma_port_link_up{port=\"%u\",device=\"%s\"} %d\n", pi,
			str(p, "name"), strcmp(str(p, "link"), "up") == 0);
		json_decref(p);
	}
	json_decref(info);
	json_object_foreach(cur, gk, g) {
		/* every name of the group, in the order of its first label */
		json_t *names = json_object(), *per, *v;
		const char *lk, *k;

		json_object_foreach(g, lk, per)
			json_object_foreach(per, k, v)
				if (json_is_integer(v))
					json_object_set_new(names, k, json_true());
		json_object_foreach(names, k, v) {
			const char *h = json_string_value(json_object_get(
					json_object_get(help, gk), k));
			bool gauge = is_gauge(gk, k);
			const char *lab = label_name(gk);

			fprintf(f, "# HELP dprdma_%s_%s%s ", gk, k, gauge ? "" : "_total");
			escape(f, h != NULL ? h : "(no description)");
			fprintf(f, "\n# TYPE dprdma_%s_%s%s %s\n", gk, k,
				gauge ? "" : "_total", gauge ? "gauge" : "counter");
			json_object_foreach(g, lk, per) {
				json_t *x = json_object_get(per, k);

				if (!json_is_integer(x))
					continue;
				if (lab != NULL)
					fprintf(f, "dprdma_%s_%s%s{%s=\"%s\"} %" JSON_INTEGER_FORMAT
						"\n", gk, k, gauge ? "" : "_total", lab, lk,
						json_integer_value(x));
				else
					fprintf(f, "dprdma_%s_%s%s %" JSON_INTEGER_FORMAT "\n",
						gk, k, gauge ? "" : "_total",
						json_integer_value(x));
			}
		}
		json_decref(names);
	}
	json_decref(cur);
	/* per QP: state and the counters an operator watches, labelled */
	{
		static const char *const qp_ctr[] = {
			"req_packets", "retransmits", "local_ack_timeouts", "rnr_waits",
			"nak_seq_rx", "rnr_nak_rx", "nak_err_rx", "resp_packets",
			"nak_seq_tx", "rnr_nak_tx", "nak_err_tx", "dup_request_rx",
		};
		json_t *qs = json_array();

		for (pi = 0; pi < np; pi++) {
			json_t *ids = tel_try("/dprdma/qps,%u", pi);

			for (size_t i = 0; ids != NULL && i < json_array_size(ids); i++) {
				json_t *q = tel_try("/dprdma/qp,%u,%" JSON_INTEGER_FORMAT, pi,
						    json_integer_value(json_array_get(ids, i)));

				if (q != NULL) {
					json_object_set_new(q, "port", json_integer(pi));
					json_array_append_new(qs, q);
				}
			}
			json_decref(ids);
		}
		fprintf(f, "# HELP dprdma_qp_outstanding_wqes send WQEs posted and not "
			"completed\n# TYPE dprdma_qp_outstanding_wqes gauge\n");
		for (size_t i = 0; i < json_array_size(qs); i++) {
			json_t *q = json_array_get(qs, i);

			fprintf(f, "dprdma_qp_outstanding_wqes{port=\"%" PRIu64 "\",qp=\"%"
				PRIu64 "\",type=\"%s\",state=\"%s\"} %" PRIu64 "\n",
				u64(q, "port"), u64(q, "qpn"), str(q, "type"),
				str(q, "state"), u64(q, "sq_posted") - u64(q, "sq_completed"));
		}
		for (size_t c = 0; c < RTE_DIM_(qp_ctr); c++) {
			const char *h = json_string_value(json_object_get(
					json_object_get(help, "transport"), qp_ctr[c]));

			fprintf(f, "# HELP dprdma_qp_%s_total ", qp_ctr[c]);
			escape(f, h != NULL ? h : "(no description)");
			fprintf(f, " (this QP)\n# TYPE dprdma_qp_%s_total counter\n",
				qp_ctr[c]);
			for (size_t i = 0; i < json_array_size(qs); i++) {
				json_t *q = json_array_get(qs, i);

				fprintf(f, "dprdma_qp_%s_total{port=\"%" PRIu64 "\",qp=\"%"
					PRIu64 "\"} %" PRIu64 "\n", qp_ctr[c],
					u64(q, "port"), u64(q, "qpn"), u64(q, qp_ctr[c]));
			}
		}
		json_decref(qs);
	}
}

/* GET /metrics, one connection at a time, until SIGINT/SIGTERM. */
static int
serve_metrics(const char *addr)
{
	char host[256], *colon;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE }, *ai;
	json_t *help;
	int lfd, one = 1, rc;

	snprintf(host, sizeof(host), "%s", addr);
	colon = strrchr(host, ':');
	if (colon == NULL || colon[1] == '\0')
		dpr_cli_complain(EXIT_USAGE, "--listen %s: expected ADDR:PORT, e.g. "
				 "127.0.0.1:9465 or [::]:9465", addr);
	*colon = '\0';
	if (host[0] == '[' && colon[-1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	rc = getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &ai);
	if (rc != 0)
		dpr_cli_complain(EXIT_USAGE, "--listen %s: %s", addr, gai_strerror(rc));
	lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, ai->ai_addr, ai->ai_addrlen) != 0 ||
	    listen(lfd, 16) != 0)
		dpr_cli_complain(EXIT_DAEMON, "--listen %s: %s", addr, strerror(errno));
	freeaddrinfo(ai);
	help = help_tables();
	catch_stop();
	signal(SIGPIPE, SIG_IGN);
	fprintf(stderr, "dprdmactl: serving http://%s/metrics\n", addr);
	while (!stop_watch) {
		char req[2048], *body = NULL;
		size_t blen = 0;
		ssize_t n;
		FILE *m;
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		struct timeval tv = { .tv_sec = 5 };

		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		n = recv(fd, req, sizeof(req) - 1, 0);
		req[n > 0 ? n : 0] = '\0';
		if (strncmp(req, "GET /metrics ", 13) != 0 &&
		    strncmp(req, "GET /metrics?", 13) != 0) {
			const char *why = strncmp(req, "GET ", 4) == 0 ?
				"404 Not Found" : "405 Method Not Allowed";

			dprintf(fd, "HTTP/1.0 %s\r\nContent-Type: text/plain\r\n"
				"Connection: close\r\n\r\nonly GET /metrics is served\n",
				why);
			close(fd);
			continue;
		}
		m = open_memstream(&body, &blen);
		if (m == NULL) {
			close(fd);
			continue;
		}
		write_metrics(m, help);
		fclose(m);
		dprintf(fd, "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4; "
			"charset=utf-8\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
			blen);
		for (size_t off = 0; off < blen; ) {
			ssize_t w = write(fd, body + off, blen - off);

			if (w <= 0)
				break;
			off += (size_t)w;
		}
		free(body);
		close(fd);
	}
	json_decref(help);
	close(lfd);
	return 0;
}

static int
cmd_metrics(void)
{
	json_t *help;

	if (opt.listen != NULL)
		return serve_metrics(opt.listen);
	help = help_tables();
	write_metrics(stdout, help);
	json_decref(help);
	return 0;
}

static int
cmd_counters(bool rst)
{
	json_t *groups = tel("/dprdma/counters"), *out = json_object();
	size_t i;

	if (rst)
		printf(".. This file is written by `dprdmactl counters --rst` (the\n"
		       "   dprdmactl test checks it is current). Do not edit.\n\n"
		       "Counters reference\n==================\n\n"
		       "Every counter dprdmad keeps, by group: the telemetry command that\n"
		       "returns it, and what raises it. ``dprdmactl metrics`` exports each\n"
		       "as ``dprdma_GROUP_NAME_total`` (gauges without ``_total``).\n");
	for (i = 0; i < json_array_size(groups); i++) {
		const char *g = json_string_value(json_array_get(groups, i));
		json_t *h = tel("/dprdma/counters/help,%s", g), *v;
		const char *k;

		if (opt.json) {
			json_object_set(out, g, h);
		} else if (rst) {
			static const char *const where[][2] = {
				{ "port", "``/dprdma/port/stats,PORT`` (``dprdmactl ports``, ``stats``)" },
				{ "transport", "``/dprdma/transport/stats,PORT``; per QP in ``/dprdma/qp,PORT,QPN`` (``dprdmactl qp N``)" },
				{ "lcore", "``/dprdma/lcore/stats,LCORE`` (``dprdmactl workers``)" },
				{ "statistic", "``/dprdma/statistic,PORT``: Linux rxe's ``rdma statistic`` names" },
				{ "shim", "``/dprdma/shim/stats`` (``dprdmactl clients``)" },
				{ "cm", "``/dprdma/cm/stats``" },
				{ "faults", "``/dprdma/port/faults,PORT`` (``dprdmactl faults PORT``)" },
			};
			const char *w = NULL;

			for (size_t x = 0; x < RTE_DIM_(where); x++)
				if (strcmp(where[x][0], g) == 0)
					w = where[x][1];
			printf("\n%s\n%.*s\n\n", g, (int)strlen(g),
			       "----------------------------------------");
			if (w != NULL)
				printf("From %s.\n\n", w);
			json_object_foreach(h, k, v)
				printf("``%s``\n   %s\n", k, json_string_value(v));
		} else {
			printf("%s:\n", g);
			json_object_foreach(h, k, v)
				printf("  %-28s %s\n", k, json_string_value(v));
		}
		json_decref(h);
	}
	if (opt.json)
		print_json(out);
	json_decref(out);
	json_decref(groups);
	return 0;
}

/* ------------------------------------------------------------- steer */

static int
cmd_capture(int argc, char **argv)
{
	int pi = opt.port < 0 ? 0 : opt.port;
	json_t *r;

	check_port(pi);
	if (argc >= 1 && strcmp(argv[0], "start") == 0) {
		char path[4096];

		if (argc != 2)
			dpr_cli_complain(EXIT_USAGE, "capture start FILE: one file name");
		if (argv[1][0] != '/') {
			char cwd[2048];

			/* the daemon writes it: a path from its point of view */
			if (getcwd(cwd, sizeof(cwd)) == NULL)
				dpr_cli_complain(EXIT_USAGE, "capture start: give an "
						 "absolute path");
			snprintf(path, sizeof(path), "%s/%s", cwd, argv[1]);
		} else {
			snprintf(path, sizeof(path), "%s", argv[1]);
		}
		char filter[64] = "", snap[24] = "";

		if (opt.qp >= 0) {
			/* the QP's frames both ways: those to it carry its
			 * number, those it sends its peer's */
			json_t *q = tel_try("/dprdma/qp,%d,%ld", pi, opt.qp);

			if (q == NULL)
				dpr_cli_complain(EXIT_DAEMON, "capture --qp %ld: no such "
					"QP on dprdma%d (dprdmactl qps lists them)",
					opt.qp, pi);
			snprintf(filter, sizeof(filter), ",qp=%ld+%" PRIu64, opt.qp,
				 u64(q, "dest_qpn"));
			json_decref(q);
		}
		if (opt.snaplen)
			snprintf(snap, sizeof(snap), ",%u", opt.snaplen);
		r = tel_try("/dprdma/capture/start,%d%s%s,%s", pi, snap, filter, path);
		if (r == NULL)
			dpr_cli_complain(EXIT_DAEMON, "the daemon could not start a "
				"capture of dprdma%d into %s (one runs already, or it "
				"cannot write there: see its log)", pi, path);
	} else if (argc == 1 && strcmp(argv[0], "stop") == 0) {
		r = tel_try("/dprdma/capture/stop,%d", pi);
		if (r == NULL)
			dpr_cli_complain(EXIT_DAEMON, "no capture runs on dprdma%d", pi);
	} else {
		dpr_cli_complain(EXIT_USAGE, "capture start FILE | capture stop");
	}
	if (opt.json)
		print_json(r);
	else
		print_dict(r, "");
	json_decref(r);
	return 0;
}

static int
cmd_log_level(int argc, char **argv)
{
	json_t *r;

	if (argc == 0)
		return cmd_lines("/dprdma/log/types", "no log types");
	if (argc != 2)
		dpr_cli_complain(EXIT_USAGE, "log-level PATTERN LEVEL, e.g. log-level "
				 "'dprdma.*' debug");
	r = tel_try("/dprdma/log/level,%s,%s", argv[0], argv[1]);
	if (r == NULL)
		dpr_cli_complain(EXIT_USAGE, "log-level %s %s: LEVEL is one of emerg, "
				 "alert, crit, err, warning, notice, info, debug (or 1-8); "
				 "PATTERN a glob such as dprdma.*", argv[0], argv[1]);
	if (opt.json)
		print_json(r);
	else
		printf("%s: %s\n", str(r, "pattern"), str(r, "level"));
	json_decref(r);
	return 0;
}

static int
cmd_faults(int argc, char **argv)
{
	char *end;
	long pi;
	json_t *r;

	if (argc < 1 || argc > 2)
		dpr_cli_complain(EXIT_USAGE, "faults PORT [loss=P,reorder=P,dup=P,"
				 "corrupt=P,delay_us=N]");
	pi = strtol(argv[0], &end, 10);
	if (*argv[0] == '\0' || *end != '\0' || pi < 0)
		dpr_cli_complain(EXIT_USAGE, "faults %s: PORT is a port index", argv[0]);
	check_port((int)pi);
	if (argc == 2) {
		r = tel_try("/dprdma/port/faults/set,%ld,%s", pi, argv[1]);
		if (r == NULL)
			dpr_cli_complain(EXIT_DAEMON, "faults %ld %s refused: either the "
				"spec is wrong (loss=P,reorder=P,dup=P,corrupt=P with P "
				"from 0 to 1, delay_us=N) or dprdma%ld has no fault "
				"adapter (start dprdmad with [port%ld] faults = loss=0)",
				pi, argv[1], pi, pi);
		if (!opt.json)
			printf("dprdma%ld faults: %s\n", pi, str(r, "faults"));
		else
			print_json(r);
		json_decref(r);
		return 0;
	}
	r = tel("/dprdma/port/faults,%ld", pi);
	if (opt.json)
		print_json(r);
	else
		print_dict(r, "");
	json_decref(r);
	return 0;
}

/* -------------------------------------------------------------- main */

static const struct option long_opts[] = {
	{ "file-prefix", required_argument, NULL, 'p' },
	{ "socket", required_argument, NULL, 's' },
	{ "port", required_argument, NULL, 'P' },
	{ "qp", required_argument, NULL, 'q' },
	{ "json", no_argument, NULL, 'j' },
	{ "watch", required_argument, NULL, 'w' },
	{ "snaplen", required_argument, NULL, 'n' },
	{ "listen", required_argument, NULL, 'l' },
	{ "rst", no_argument, NULL, 'r' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static bool rst;

/*
 * Options before the command and after it (dprdmactl -p X qps --port 1):
 * one getopt pass over @p argv from optind, which stops at the first word
 * that is not an option when @p stop_at_word ('+'), else moves the words
 * to the end, as getopt does.
 */
static void
parse_opts(int argc, char **argv, bool stop_at_word)
{
	int o;

	while ((o = getopt_long(argc, argv, stop_at_word ? "+:p:s:P:jh" :
				":p:s:P:jh", long_opts, NULL)) != -1) {
		switch (o) {
		case 'p': opt.prefix = optarg; break;
		case 's': opt.socket = optarg; break;
		case 'P': opt.port = (int)dpr_cli_num("--port", optarg, 0, 1023); break;
		case 'q': opt.qp = (long)dpr_cli_num("--qp", optarg, 0, 0xffffff); break;
		case 'j': opt.json = true; break;
		case 'w': opt.watch = (unsigned int)dpr_cli_num("--watch", optarg, 1, 3600);
			  break;
		case 'n': opt.snaplen = (unsigned int)dpr_cli_num("--snaplen", optarg,
								  64, 65535);
			  break;
		case 'l': opt.listen = optarg; break;
		case 'r': rst = true; break;
		case 'h': usage(stdout); exit(0);
		case ':':
			dpr_cli_complain(EXIT_USAGE, "%s needs a value", argv[optind - 1]);
		default:
			dpr_cli_complain(EXIT_USAGE, "unknown option %s", argv[optind - 1]);
		}
	}
}

int
main(int argc, char **argv)
{
	char **rv, *args[16];
	int rest, n_args = 0;
	const char *c;

	opterr = 0;
	parse_opts(argc, argv, true);
	if (optind >= argc)
		dpr_cli_complain(EXIT_USAGE, "no command given");
	c = argv[optind++];
	/* the options after the command, the command's own words kept */
	rest = argc - optind + 1;
	rv = argv + optind - 1;
	optind = 0;     /* 0, not 1: glibc starts afresh (ordering included) */
	parse_opts(rest, rv, false);
	while (optind < rest && n_args < 16)
		args[n_args++] = rv[optind++];
	if (optind < rest)
		dpr_cli_complain(EXIT_USAGE, "too many arguments");
#define NOARGS() do { if (n_args) dpr_cli_complain(EXIT_USAGE, \
		"%s takes no argument ('%s'?)", c, args[0]); } while (0)
	if (strcmp(c, "status") == 0) { NOARGS(); return cmd_status(); }
	if (strcmp(c, "ports") == 0) { NOARGS(); return cmd_ports(); }
	if (strcmp(c, "workers") == 0) { NOARGS(); return cmd_workers(); }
	if (strcmp(c, "qps") == 0) { NOARGS(); check_port(opt.port); return cmd_qps(); }
	if (strcmp(c, "qp") == 0) {
		if (n_args != 1)
			dpr_cli_complain(EXIT_USAGE, "qp QPN: one QP number");
		check_port(opt.port);
		return cmd_qp(args[0]);
	}
	if (strcmp(c, "mrs") == 0) {
		NOARGS();
		return cmd_lines("/dprdma/shim/mrs", "no memory regions");
	}
	if (strcmp(c, "pds") == 0) {
		NOARGS();
		return cmd_lines("/dprdma/shim/pds", "no protection domains");
	}
	if (strcmp(c, "clients") == 0) { NOARGS(); return cmd_clients(); }
	if (strcmp(c, "neigh") == 0) { NOARGS(); check_port(opt.port); return cmd_neigh(); }
	if (strcmp(c, "stats") == 0) { NOARGS(); check_port(opt.port); return cmd_stats(); }
	if (strcmp(c, "metrics") == 0) { NOARGS(); return cmd_metrics(); }
	if (strcmp(c, "counters") == 0) { NOARGS(); return cmd_counters(rst); }
	if (strcmp(c, "capture") == 0)
		return cmd_capture(n_args, args);
	if (strcmp(c, "log-level") == 0)
		return cmd_log_level(n_args, args);
	if (strcmp(c, "faults") == 0)
		return cmd_faults(n_args, args);
	dpr_cli_complain(EXIT_USAGE, "unknown command '%s'", c);
}
