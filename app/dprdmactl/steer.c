/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdmactl: the commands that change a running daemon -- packet
 * capture, log levels, the fault adapter.
 */

#include <string.h>

#include "dprdmactl.h"

int
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
	show_dict(r);
	return 0;
}

int
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

int
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
	show_dict(r);
	return 0;
}

int
cmd_congestion(int argc, char **argv)
{
	json_t *r;

	if (argc == 0) {
		r = tel_try("/dprdma/congestion");
		if (r == NULL)
			dpr_cli_complain(EXIT_DAEMON, "the daemon answers no "
					 "/dprdma/congestion (older dprdmad?)");
	} else if (argc == 2) {
		r = tel_try("/dprdma/congestion/set,%s,%s", argv[0], argv[1]);
		if (r == NULL)
			dpr_cli_complain(EXIT_USAGE, "congestion %s %s refused: KEY is "
				"a reaction point key of [congestion] (react, ecn, "
				"line_rate_gbps, rpg_*, rate_reduce_monitor_period, "
				"dce_tcp_g, dce_tcp_rtt, initial_alpha_value, "
				"clamp_tgt_rate, release_periods; man dprdmad.conf gives "
				"their ranges) and VALUE one it takes; "
				"notify and cnp_* are set when dprdmad starts",
				argv[0], argv[1]);
	} else {
		dpr_cli_complain(EXIT_USAGE, "congestion [KEY VALUE], e.g. "
				 "congestion rpg_ai_rate 10");
	}
	show_dict(r);
	return 0;
}
