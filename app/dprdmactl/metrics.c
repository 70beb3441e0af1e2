/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdmactl metrics: every counter in Prometheus' text format, once or
 * served over HTTP (--listen); dprdmactl counters: what each one means.
 */

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <netdb.h>
#include <sys/socket.h>

#include "dprdmactl.h"

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
		"busy_percent", "enabled", "qps", "qp_bytes", "qp_queue_bytes", "half_open",
		"half_open_sources",
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

int
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

int
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
