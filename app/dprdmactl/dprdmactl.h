/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/* What the files of dprdmactl share: the options, the telemetry socket
 * and its readers, the commands. */

#ifndef DPRDMACTL_H
#define DPRDMACTL_H

#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#define DPR_CLI_NAME "dprdmactl"
#define DPR_CLI_USAGE_EXTERN
#include "../dpr_cli.h"

#define EXIT_DAEMON 1
#define TEL_SOCKET "dpdk_telemetry.v2"
#define RTE_DIM_(a) (sizeof(a) / sizeof((a)[0]))

struct dprdmactl_opt {
	const char *prefix;
	const char *socket;
	bool json;
	int port;               /* -1: every port */
	long qp;                /* -1: none */
	unsigned int watch;
	unsigned int snaplen;
	const char *listen;
};
extern struct dprdmactl_opt opt;
extern volatile sig_atomic_t stop_watch;

/* tel.c */
json_t *tel_try(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
json_t *tel_must(json_t *v, const char *what);
#define tel(...) tel_must(tel_try(__VA_ARGS__), #__VA_ARGS__)
uint64_t u64(const json_t *o, const char *k);
const char *str(const json_t *o, const char *k);
void print_json(json_t *v);
void show_dict(json_t *v);
int done(json_t *all);
unsigned int n_ports(void);
void check_port(int pi);

/* show.c */
int cmd_status(void);
int cmd_ports(void);
int cmd_workers(void);
int cmd_qps(void);
int cmd_qp(const char *arg);
int cmd_lines(const char *command, const char *none);
int cmd_neigh(void);
int cmd_clients(void);
int cmd_stats(void);
void print_dict(json_t *o, const char *indent);
json_t *all_counters(void);
double now_s(void);
const char *label_name(const char *group);
void catch_stop(void);

/* metrics.c */
int cmd_metrics(void);
int cmd_counters(bool rst);

/* steer.c */
int cmd_capture(int argc, char **argv);
int cmd_log_level(int argc, char **argv);
int cmd_faults(int argc, char **argv);
int cmd_sources(void);
int cmd_congestion(int argc, char **argv);

#endif /* DPRDMACTL_H */
