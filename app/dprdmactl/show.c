/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdmactl: the commands that show -- status, ports, workers, QPs,
 * neighbours, clients, and every counter once or --watch.
 */

#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dprdmactl.h"

int
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
		json_t *t = tel_try("/dprdma/transport/stats,%u", pi);
		const uint64_t nq = t != NULL ? u64(t, "qps") : 0;

		if (!opt.json) {
			printf("dprdma%u %-24s link %-4s %s mtu %" PRIu64 " %s\n", pi,
			       str(p, "name"), str(p, "link"), str(p, "mac"),
			       u64(p, "mtu"), str(p, "ipv4"));
			/* what a QP costs the daemon (the shim's records of
			 * every port's together, on the last line) */
			if (t != NULL && nq != 0)
				printf("  %" PRIu64 " QPs: %.1f KiB each beyond their queues, "
				       "%.1f KiB of queues each\n", nq,
				       (double)u64(t, "qp_bytes") / (double)nq / 1024,
				       (double)u64(t, "qp_queue_bytes") / (double)nq / 1024);
		}
		json_decref(t);
		json_decref(p);
	}
	if (!opt.json && shim != NULL && u64(shim, "qp_bytes") != 0)
		printf("clients' QP records: %.1f KiB\n",
		       (double)u64(shim, "qp_bytes") / 1024);
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

int
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
int
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

int
cmd_qps(void)
{
	unsigned int pi, np = n_ports();
	json_t *all = json_array();

	if (!opt.json)
		printf("%-8s %-8s %-4s %-5s %-16s %-8s %9s %9s %9s %7s %-7s %s\n",
		       "PORT", "QPN", "TYPE", "STATE", "PEER", "DEST_QPN", "SQ_PSN",
		       "RQ_PSN", "OUTSTAND", "RETRANS", "SEC", "OWNER");
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
				       " %7" PRIu64 " %-7s %s\n", pi, u64(q, "qpn"),
				       str(q, "type"), str(q, "state"), str(q, "peer"),
				       u64(q, "dest_qpn"), u64(q, "req_psn"),
				       u64(q, "resp_psn"),
				       u64(q, "sq_posted") - u64(q, "sq_completed"),
				       u64(q, "retransmits"), str(q, "sec"),
				       str(q, "owner"));
			json_decref(q);
		}
		json_decref(qps);
	}
	return done(all);
}

void
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

int
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
		show_dict(q);
		return 0;
	}
	fprintf(stderr, "dprdmactl: no QP 0x%lx on %s (dprdmactl qps lists them)\n",
		qpn, opt.port >= 0 ? "that port" : "any port");
	return EXIT_DAEMON;
}

int
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
int
cmd_neigh(void)
{
	unsigned int pi, np = n_ports();
	json_t *all = json_object();

	for (pi = 0; pi < np; pi++) {
		json_t *v;
		size_t i;
		char key[24];

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

/* Who sent the frames each port dropped, the most first */
int
cmd_sources(void)
{
	unsigned int pi, np = n_ports();
	json_t *all = json_object();

	for (pi = 0; pi < np; pi++) {
		json_t *v, *ips;
		char key[24];
		size_t i;

		if (opt.port >= 0 && (unsigned int)opt.port != pi)
			continue;
		v = tel("/dprdma/transport/sources,%u", pi);
		snprintf(key, sizeof(key), "dprdma%u", pi);
		ips = json_object_get(v, "ip");
		if (!opt.json && json_array_size(ips) == 0)
			printf("%s: no frame dropped\n", key);
		for (i = 0; !opt.json && i < json_array_size(ips); i++) {
			const char *k;
			json_t *col;

			printf("%s %-40s %8" JSON_INTEGER_FORMAT " frames:", key,
			       json_string_value(json_array_get(ips, i)),
			       json_integer_value(json_array_get(
				       json_object_get(v, "total"), i)));
			json_object_foreach(v, k, col) {
				json_int_t n = json_integer_value(json_array_get(col, i));

				if (json_is_array(col) && strcmp(k, "ip") != 0 &&
				    strcmp(k, "total") != 0 && strcmp(k, "last_ms_ago") != 0 &&
				    n != 0)
					printf(" %s %" JSON_INTEGER_FORMAT, k, n);
			}
			printf("; last %" JSON_INTEGER_FORMAT " ms ago\n",
			       json_integer_value(json_array_get(
				       json_object_get(v, "last_ms_ago"), i)));
		}
		json_object_set_new(all, key, v);
	}
	return done(all);
}

int
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
json_t *
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

double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *
label_name(const char *group)
{
	return strcmp(group, "lcore") == 0 ? "lcore" :
	       (strcmp(group, "shim") == 0 || strcmp(group, "cm") == 0) ? NULL : "port";
}

volatile sig_atomic_t stop_watch;

static void
on_int(int sig)
{
	(void)sig;
	stop_watch = 1;
}

/* SIGINT/SIGTERM end the loop: without SA_RESTART, so that a blocked
 * accept() or sleep() returns at once */
void
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

int
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
