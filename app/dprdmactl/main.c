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

#include <getopt.h>
#include <string.h>

#include "dprdmactl.h"

struct dprdmactl_opt opt = { .prefix = "dprdmad", .port = -1, .qp = -1 };

void
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
"  qps                          every QP: type, state, peer, PSNs, security,\n"
"                               owner\n"
"  qp QPN                       one QP in detail (every field and counter)\n"
"  peers                        the boxes asked on QP1: selective repeat,\n"
"                               secure QPs and whose key\n"
"  neigh                        the neighbours each port knows (IP -> MAC by\n"
"                               ARP/ND), as ip neigh shows them\n"
"  sources                      who sent the frames each port dropped, and why\n"
"  mrs | pds | clients          clients' memory regions, PDs, connections\n"
"  stats [--watch N]            counters (and, with --watch, per-second rates\n"
"                               refreshed every N s until interrupted)\n"
"  capture start FILE [--snaplen B] [--qp N] | capture stop\n"
"                               pcapng capture of a port (--port, default 0),\n"
"                               or of one QP's frames both ways\n"
"  log-level [PATTERN LEVEL]    list log types, or set e.g. 'dprdma.*' debug\n"
"  faults PORT [SPEC]           what a port's fault adapter injected, or new\n"
"                               faults: loss=P,reorder=P,dup=P,corrupt=P,delay_us=N\n"
"  congestion [KEY VALUE]       DCQCN's settings, or one of the reaction point's\n"
"                               set on every worker from now on\n"
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
	if (strcmp(c, "peers") == 0) {
		NOARGS();
		return cmd_lines("/dprdma/cm/peers", "no peer box asked yet");
	}
	if (strcmp(c, "neigh") == 0) { NOARGS(); check_port(opt.port); return cmd_neigh(); }
	if (strcmp(c, "sources") == 0) { NOARGS(); check_port(opt.port); return cmd_sources(); }
	if (strcmp(c, "stats") == 0) { NOARGS(); check_port(opt.port); return cmd_stats(); }
	if (strcmp(c, "metrics") == 0) { NOARGS(); return cmd_metrics(); }
	if (strcmp(c, "counters") == 0) { NOARGS(); return cmd_counters(rst); }
	if (strcmp(c, "capture") == 0)
		return cmd_capture(n_args, args);
	if (strcmp(c, "log-level") == 0)
		return cmd_log_level(n_args, args);
	if (strcmp(c, "faults") == 0)
		return cmd_faults(n_args, args);
	if (strcmp(c, "congestion") == 0)
		return cmd_congestion(n_args, args);
	dpr_cli_complain(EXIT_USAGE, "unknown command '%s'", c);
}
