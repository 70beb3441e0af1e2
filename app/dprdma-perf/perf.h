/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/* What the files of dprdma-perf share: its options, its state, a result,
 * and the functions one file gives the others. */

#ifndef DPRDMA_PERF_H
#define DPRDMA_PERF_H

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
#define DPR_CLI_USAGE_EXTERN
#include "dpr_cli.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#define MAX_QPS 64
#define MAX_SIZE (1u << 23)
#define LINE 512

enum test_op { OP_WRITE, OP_READ, OP_SEND, OP_ATOMIC };

extern const char *const op_names[];

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



struct result {
	uint32_t size;
	uint64_t msgs;
	double secs;
	double peak;        /* messages per second */
	/* latency, microseconds */
	double t_min, t_max, t_typ, t_avg, t_sd, p99, p999;
};

/* The monotonic clock, ns; the TSC where there is one (the latency
 * tests' time stamps, calibrated against the clock in main.c) */
static inline uint64_t
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

/* main.c */
void say(struct perf *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hear(struct perf *p, char *line, size_t len);
void sync_peer(struct perf *p, unsigned int n);

/* verbs.c */
void setup(struct perf *p);
void connect_qps(struct perf *p);
int poll_wait(struct perf *p, struct ibv_cq *cq, struct ibv_wc *wc, int max);
uint8_t *send_half(struct perf *p, uint32_t qp);
uint8_t *recv_half(struct perf *p, uint32_t qp);
void post_recv(struct perf *p, uint32_t qp, uint32_t n);
void make_wr(struct perf *p, uint32_t qp, uint32_t size, uint64_t seq,
	struct ibv_send_wr *wr, struct ibv_sge *sge);
void fill(struct perf *p, bool server);
uint64_t sum(const uint8_t *b, size_t n);

/* report.c */
void header(struct perf *p);
void report(struct perf *p, const struct result *r);
void lat_stats(struct perf *p, uint64_t *d, uint64_t n, double div, struct result *r);

/* tests.c */
uint64_t bw_server(struct perf *p, uint32_t size);
bool run_size(struct perf *p, uint32_t size, bool server, unsigned int round);

#endif /* DPRDMA_PERF_H */
