/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdmad: the appliance daemon.
 *
 *   dprdmad [EAL options] -- [-f|--config FILE] [--ip ADDR/LEN] [...]
 *
 * Everything before "--" goes to the EAL as given; with no EAL options the
 * EAL arguments come from the configuration ([eal] section, or the
 * compiled-in default). The configuration is read and checked before
 * rte_eal_init(), so a mistake exits with status 2 and leaves nothing
 * initialised.
 */

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>

#include <rte_common.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include "dpr_config.h"
#include "dpr_engine.h"
#include "dpr_capture.h"
#include "dpr_client.h"
#include "dpr_cm.h"
#include "dpr_faults.h"
#include "dpr_shim.h"

#define EXIT_CONFIG 2
#define MAX_EAL_ARGS 128

static volatile sig_atomic_t quit_signal, n_signals;

static void
on_signal(int sig)
{
	quit_signal = sig;
	n_signals++;
}

/* how long the main lcore stays awake after serving a request */
#define MAIN_SPIN_US 100

static uint64_t
mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static uint64_t
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The graceful stop: clients told (their QPs in ERR, work flushed,
 * DEVICE_FATAL), then served on until they have left, the configured
 * time has passed, or another signal comes; what is left is dropped by
 * dpr_shim_stop().
 */
static void
drain(const struct dpr_config *conf, bool by_signal)
{
	const unsigned int limit = dpr_shim_conf(conf)->shutdown_timeout;
	const sig_atomic_t seen = n_signals;
	uint64_t end = mono_ms() + (uint64_t)limit * 1000;
	unsigned int left;

	dpr_engine_set_state("draining");
	left = dpr_shim_drain();
	if (left == 0)
		return;
	printf("dprdmad: %u clients told to leave (DEVICE_FATAL); waiting up to "
	       "%u s ([control] shutdown_timeout)%s\n", left, limit,
	       by_signal ? "; signal again to exit at once" : "");
	fflush(stdout);
	while ((left = dpr_shim_clients()) != 0 && n_signals == seen &&
	       mono_ms() < end) {
		dpr_shim_poll(20);
		dpr_cm_poll();
	}
	if (left != 0)
		printf("dprdmad: %u clients still connected: dropped (%s)\n", left,
		       n_signals != seen ? "signalled again" : "time is up");
}

static void
usage(FILE *f, const char *prog)
{
	struct dpr_config def;

	fprintf(f,
"Usage: %s [EAL options] -- [options]\n"
"\n"
"dprdmad is a software RDMA (RoCEv2) appliance on DPDK. Ports come from the\n"
"EAL (--vdev, -a). With no argument at all it runs the compiled-in default\n"
"configuration below: one virtual net_tap port (interface dprdma0) at\n"
"10.77.0.1/24 that answers ARP and ping, main lcore 0, one worker on\n"
"lcore 1, hugepages if free (else --no-huge with a warning).\n"
"\n"
"Options (after --, or alone):\n"
"  -f, --config FILE      read an INI configuration (see config/dprdmad.conf)\n"
"      --ip ADDR/LEN      IPv4 address of port 0 ([port0] ip)\n"
"      --ipv6 ADDR/LEN    IPv6 address of port 0 ([port0] ipv6)\n"
"      --mtu N            Ethernet MTU of port 0 ([port0] mtu)\n"
"      --socket PATH      client socket ([control] socket, default %s)\n"
"      --idle busy|yield  worker idle mode ([engine] idle)\n"
"      --stats SEC        print counters every SEC seconds ([engine] stats_interval)\n"
"      --faults SPEC      inject faults into port 0's TX ([port0] faults), e.g.\n"
"                         loss=0.01,reorder=0.01,dup=0.001,corrupt=0.001,seed=1\n"
"      --duration SEC     stop after SEC seconds (default: run until SIGINT/SIGTERM)\n"
"      --check            check the configuration, print it as INI, exit\n"
"  -h, --help             this text\n"
"  -v, --version          print the version\n"
"\n"
"EAL options given before -- are used as they are; without them the EAL\n"
"arguments are built from the [eal] section. Exit status: 0 after a clean\n"
"stop, 1 on a run-time failure, 2 on a configuration mistake.\n"
"\n"
"Configuration keys:\n", prog, DPR_DEFAULT_SOCKET);
	dpr_config_help(f);
	fprintf(f, "\nCompiled-in default configuration:\n\n");
	dpr_config_defaults(&def);
	dpr_config_dump(&def, f);
}

static int
config_error(const char *msg)
{
	fprintf(stderr, "dprdmad: error: %s\n", msg);
	return EXIT_CONFIG;
}

enum {
	OPT_IP = 256,
	OPT_IP6,
	OPT_MTU,
	OPT_SOCKET,
	OPT_IDLE,
	OPT_STATS,
	OPT_DURATION,
	OPT_CHECK,
	OPT_FAULTS,
};

static const struct option long_opts[] = {
	{ "config", required_argument, NULL, 'f' },
	{ "ip", required_argument, NULL, OPT_IP },
	{ "ipv6", required_argument, NULL, OPT_IP6 },
	{ "mtu", required_argument, NULL, OPT_MTU },
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "idle", required_argument, NULL, OPT_IDLE },
	{ "stats", required_argument, NULL, OPT_STATS },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "faults", required_argument, NULL, OPT_FAULTS },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'v' },
	{ NULL, 0, NULL, 0 },
};

/* A command-line override is set like a file entry, named by its option. */
struct override {
	const char *section, *key, *value, *option;
};

/*
 * Any EAL argument list: make sure it does not ask for hugepages that are
 * not there, the one fix-up dprdmad makes to EAL options given by hand.
 */
static int
eal_huge_fallback(int argc, char **argv, int max)
{
	static char mem[] = "256";
	bool has_m = false;
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--no-huge") == 0)
			return argc;
		if (strcmp(argv[i], "-m") == 0 || strncmp(argv[i], "--socket-mem", 12) == 0)
			has_m = true;
	}
	if (dpr_config_free_huge_mb() > 0 || argc + 3 >= max)
		return argc;
	fprintf(stderr, "dprdmad: warning: no free hugepages: adding --no-huge "
		"to the EAL options (slower, no zero-copy DMA to a real NIC). "
		"Reserve them with 'echo 512 > /sys/kernel/mm/hugepages/"
		"hugepages-2048kB/nr_hugepages'\n");
	argv[argc++] = (char *)"--no-huge";
	if (!has_m) {
		argv[argc++] = (char *)"-m";
		argv[argc++] = mem;
	}
	argv[argc] = NULL;
	return argc;
}

int
main(int argc, char **argv)
{
	char err[1024], argbuf[8192], *eal_argv[MAX_EAL_ARGS + 1];
	struct override ovr[16];
	unsigned int n_ovr = 0, i;
	const char *config_file = NULL;
	struct dpr_config conf;
	int eal_argc = 0, app_argc, opt, ret, dashes = -1;
	bool check = false;
	char **app_argv;
	time_t start, last_stats;
	uint64_t spin_until = 0;       /* the main loop's spin ends (mono_us) */

	/* Split at "--": EAL options before, ours after. Without "--",
	 * every argument is ours. */
	for (i = 1; i < (unsigned int)argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dashes = (int)i;
			break;
		}
	if (dashes > 0) {
		app_argc = argc - dashes;
		app_argv = argv + dashes;
		app_argv[0] = argv[0];
	} else {
		app_argc = argc;
		app_argv = argv;
	}

	/* each room's section: the engine's, the fault adapter's, the shim's */
	dpr_engine_config_register();
	dpr_faults_config_register();
	dpr_shim_config_register();
	dpr_cm_config_register();
	dpr_config_defaults(&conf);
	opterr = 0;
	while ((opt = getopt_long(app_argc, app_argv, ":f:hv", long_opts,
				  NULL)) != -1) {
		const char *sec = NULL, *key = NULL, *name = NULL;

		switch (opt) {
		case 'f': config_file = optarg; continue;
		case 'h': usage(stdout, argv[0]); return 0;
		case 'v': printf("dprdmad %s\n", DPR_VERSION); return 0;
		case OPT_CHECK: check = true; continue;
		case OPT_IP:
			sec = "port0"; key = "ip"; name = "ip";
			break;
		case OPT_IP6:
			sec = "port0"; key = "ipv6"; name = "ipv6";
			break;
		case OPT_MTU:
			sec = "port0"; key = "mtu"; name = "mtu";
			break;
		case OPT_SOCKET:
			sec = "control"; key = "socket"; name = "socket";
			break;
		case OPT_IDLE:
			sec = "engine"; key = "idle"; name = "idle";
			break;
		case OPT_STATS:
			sec = "engine"; key = "stats_interval"; name = "stats";
			break;
		case OPT_FAULTS:
			sec = "port0"; key = "faults"; name = "faults";
			break;
		case OPT_DURATION: {
			char *end;
			unsigned long d;

			errno = 0;
			d = strtoul(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || errno != 0 ||
			    d > 31536000) {
				snprintf(err, sizeof(err), "command line "
					 "--duration = '%s': expected seconds "
					 "from 0 to 31536000", optarg);
				return config_error(err);
			}
			conf.duration = (unsigned int)d;
			continue;
		}
		case ':':
			snprintf(err, sizeof(err), "option %s needs a value; see "
				 "--help", app_argv[optind - 1]);
			return config_error(err);
		default:
			snprintf(err, sizeof(err), "unknown option '%s'%s; see "
				 "--help", app_argv[optind - 1], dashes > 0 ? "" :
				 " (EAL options go before '--')");
			return config_error(err);
		}
		if (n_ovr < RTE_DIM(ovr))
			ovr[n_ovr++] = (struct override){ sec, key, optarg,
							  name };
	}
	if (optind < app_argc) {
		snprintf(err, sizeof(err), "unexpected argument '%s'%s; see --help",
			 app_argv[optind], dashes > 0 ? "" :
			 " (EAL options go before '--')");
		return config_error(err);
	}

	if (config_file != NULL &&
	    dpr_config_load(&conf, config_file, err, sizeof(err)) != 0)
		return config_error(err);
	for (i = 0; i < n_ovr; i++) {
		char origin[64];

		snprintf(origin, sizeof(origin), "command line --%s",
			 ovr[i].option);
		if (dpr_config_set(&conf, ovr[i].section, ovr[i].key,
				   ovr[i].value, origin, err, sizeof(err)) != 0)
			return config_error(err);
	}

	if (dashes > 1) {
		/* EAL options given by hand win over the configuration */
		eal_argc = dashes;
		for (i = 0; i < (unsigned int)dashes && i < MAX_EAL_ARGS; i++)
			eal_argv[i] = argv[i];
		eal_argv[eal_argc] = NULL;
		eal_argc = eal_huge_fallback(eal_argc, eal_argv, MAX_EAL_ARGS);
	} else {
		eal_argc = dpr_config_eal_args(&conf, argv[0], eal_argv,
					       MAX_EAL_ARGS, argbuf,
					       sizeof(argbuf), err, sizeof(err));
		if (eal_argc < 0)
			return config_error(err);
	}

	if (check) {
		printf("; dprdmad %s: configuration is valid\n; EAL:", DPR_VERSION);
		for (i = 1; i < (unsigned int)eal_argc; i++)
			printf(" %s", eal_argv[i]);
		printf("\n\n");
		dpr_config_dump(&conf, stdout);
		return 0;
	}

	printf("dprdmad: EAL arguments:");
	for (i = 1; i < (unsigned int)eal_argc; i++)
		printf(" %s", eal_argv[i]);
	printf("\n");
	fflush(stdout);

	/* Sleeps as asked: the kernel's default timer slack (50 us) would
	 * stretch every idle worker's nap ([engine] idle_sleep_us) and every
	 * wait of the main lcore for a worker's answer by about that much --
	 * on each hop of a message through a yielding worker, and on each
	 * verbs call of a client (measured: a 100 us nap took 203 us, 138
	 * with this). The EAL's threads inherit it. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	ret = rte_eal_init(eal_argc, eal_argv);
	if (ret < 0) {
		const char *prefix = "rte";   /* the EAL's own default */

		/* the prefix in force: the last one given, as the EAL reads it */
		for (i = 1; i + 1 < (unsigned int)eal_argc; i++)
			if (strcmp(eal_argv[i], "--file-prefix") == 0)
				prefix = eal_argv[i + 1];
		fprintf(stderr, "dprdmad: error: EAL initialisation failed: %s "
			"(check the EAL arguments above; is another DPDK process "
			"running with --file-prefix %s?)\n",
			rte_errno ? rte_strerror(rte_errno) : "see the EAL lines above",
			prefix);
		return 1;
	}

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	/* a client that went away is seen on its socket (EPIPE), never as a
	 * signal that kills the daemon */
	signal(SIGPIPE, SIG_IGN);

	{
		/* the fault-injecting adapter wraps ports whose faults are on */
		/* on every worker: clients' doorbells, then the built-in
		 * client's streams */
		const struct dpr_engine_hooks hooks = {
			.port_adapter = dpr_faults_port_adapter,
			.arg = &conf,
			.pollers = {
				{ dpr_shim_worker_poll, NULL, dpr_shim_worker_nap },
				{ dpr_client_worker_poll, NULL },
				{ dpr_cm_worker_poll, NULL },
			},
		};

		dpr_engine_register_telemetry();
		dpr_faults_register_telemetry();
		dpr_shim_register_telemetry();
		dpr_capture_register_telemetry();
		dpr_client_register_telemetry();
		dpr_cm_register_telemetry();
		ret = dpr_engine_start(&conf, &hooks, err, sizeof(err));
	}
	if (ret != 0) {
		fprintf(stderr, "dprdmad: error: %s\n", err);
		rte_eal_cleanup();
		return ret == -EINVAL ? EXIT_CONFIG : 1;
	}
	ret = dpr_shim_start(&conf, err, sizeof(err));
	if (ret != 0) {
		fprintf(stderr, "dprdmad: error: %s\n", err);
		dpr_engine_stop();
		rte_eal_cleanup();
		return ret == -EADDRINUSE ? EXIT_CONFIG : 1;
	}
	ret = dpr_cm_start(&conf, err, sizeof(err));
	if (ret != 0) {
		fprintf(stderr, "dprdmad: error: %s\n", err);
		dpr_shim_stop();
		dpr_engine_stop();
		rte_eal_cleanup();
		return 1;
	}
	dpr_engine_print_setup(stdout);
	printf("dprdmad: verbs clients connect to %s (" DPR_SOCKET_ENV ")\n",
	       dpr_shim_conf(&conf)->socket);
	printf("dprdmad: running%s\n", conf.duration ? "" :
	       "; SIGINT (Ctrl-C) or SIGTERM stops it");
	fflush(stdout);

	start = last_stats = time(NULL);
	while (!quit_signal) {
		time_t now;
		bool spinning;

		/* the main lcore serves the client socket between ticks; for
		 * MAIN_SPIN_US after a request it looks again at once, giving
		 * the CPU away between looks, instead of sleeping in poll():
		 * a program's next call (RDMA CM and verbs set-up come as
		 * strings of calls, each waiting for its answer) then finds it
		 * awake, not a wake-up away (10,000 RDMA CM connections at
		 * once between two boxes on 2 shared CPUs: 2,190 -> 2,920 a
		 * second; libdprdma's await_answer() the other half) */
		spinning = spin_until > mono_us();
		if (dpr_shim_poll(spinning ? 0 : 50) != 0)
			spin_until = mono_us() + MAIN_SPIN_US;
		else if (spinning)
			sched_yield();
		dpr_cm_poll();
		now = time(NULL);
		if (dpr_engine_conf(&conf)->stats_interval != 0 &&
		    now - last_stats >=
		    (time_t)dpr_engine_conf(&conf)->stats_interval) {
			dpr_engine_print_stats(stdout);
			last_stats = now;
		}
		if (conf.duration != 0 && now - start >= (time_t)conf.duration)
			break;
	}
	printf("dprdmad: stopping (%s)\n", quit_signal == SIGINT ? "SIGINT" :
	       quit_signal == SIGTERM ? "SIGTERM" : "duration reached");
	fflush(stdout);
	drain(&conf, quit_signal != 0);
	dpr_capture_stop_all();
	dpr_shim_stop();
	dpr_cm_stop();
	dpr_client_stop();
	dpr_engine_stop();
	dpr_engine_print_summary(stdout);
	rte_eal_cleanup();
	printf("dprdmad: stopped cleanly\n");
	return 0;
}
