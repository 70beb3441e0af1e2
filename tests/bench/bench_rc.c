/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdma-bench-rc: the RC transport alone (no port, no I/O), one core,
 * no faults: a requester posts 64 B RDMA WRITEs, frames go straight to the
 * responder and its ACKs straight back. Not pass/fail.
 *
 *   dprdma-bench-rc [--messages N] [--size B] [--json]
 *
 * Messages per second for the pair, and for each side alone (the time
 * spent in its own calls). For instructions per message, run it under
 *   valgrind --tool=callgrind --toggle-collect='requester_side' ...
 * (and 'responder_side'): those two functions hold all of each side's
 * work, so their inclusive cost divided by N is the answer
 * (tools/bench-rc-callgrind.sh does exactly that).
 */

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

#include "rc_harness.h"

static struct rc_harness H;
static struct dpr_tqp *qp[2];
static uint64_t cycles[2];
static uint64_t posted, completed, n_msgs = 2000000;
static uint32_t size = 64;
static struct dpr_mr *lmr, *rmr;

static inline uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* All of the requester's work for one turn: post, poll, take ACKs. */
__attribute__((noinline)) void requester_side(struct rte_mbuf **acks, uint16_t n,
					      struct rte_mbuf **out, uint16_t *n_out);
__attribute__((noinline)) void
requester_side(struct rte_mbuf **acks, uint16_t n, struct rte_mbuf **out,
	       uint16_t *n_out)
{
	struct dpr_cqe c[64];
	int k;

	dpr_transport_rx(H.side[0].tp, acks, n, 0);
	while (posted < n_msgs && posted - completed < 256) {
		/* one work request, changed per post, as perftest does */
		static struct dpr_send_wr wr = { .num_sge = 1,
						 .opcode = DPR_WR_RDMA_WRITE };

		wr.wr_id = posted;
		/* one completion per 32, as perftest's CQ moderation */
		wr.send_flags = (posted % 32 == 31 || posted + 1 == n_msgs) ?
			DPR_SEND_SIGNALED : 0;
		wr.remote_addr = rmr->iova;
		wr.rkey = rmr->rkey;
		wr.sge[0] = (struct dpr_sge){ lmr->iova, size, lmr->lkey };
		if (dpr_post_send(qp[0], &wr, 1, NULL) != 0)
			break;
		posted++;
	}
	dpr_transport_poll(H.side[0].tp, 0);
	*n_out = dpr_transport_tx(H.side[0].tp, out, 512);
	while ((k = dpr_cq_poll(H.side[0].scq, c, 64)) > 0)
		for (int i = 0; i < k; i++) {
			if (c[i].status != DPR_WC_SUCCESS) {
				fprintf(stderr, "completion status %u\n", c[i].status);
				exit(1);
			}
			completed = c[i].wr_id + 1;
		}
}

/* All of the responder's work for one turn: take requests, answer. */
__attribute__((noinline)) void responder_side(struct rte_mbuf **req, uint16_t n,
					      struct rte_mbuf **out, uint16_t *n_out);
__attribute__((noinline)) void
responder_side(struct rte_mbuf **req, uint16_t n, struct rte_mbuf **out,
	       uint16_t *n_out)
{
	dpr_transport_rx(H.side[1].tp, req, n, 0);
	dpr_transport_poll(H.side[1].tp, 0);
	*n_out = dpr_transport_tx(H.side[1].tp, out, 512);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "messages", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	char prefix[64];
	char *eal[] = { argv[0], (char *)"-l", (char *)"0", (char *)"--no-pci",
		(char *)"--no-huge", (char *)"-m", (char *)"256", (char *)"--no-shconf",
		(char *)"--file-prefix", prefix, (char *)"--log-level",
		(char *)"*:warning", (char *)"--no-telemetry", NULL };
	static struct rte_mbuf *a_out[512], *b_out[512];
	uint16_t na = 0, nb = 0;
	struct rte_mempool *pool;
	struct rc_conn conn;
	uint64_t t0, t1, c0;
	bool json = false;
	double secs, hz;
	int opt;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'n': n_msgs = strtoull(optarg, NULL, 0); break;
		case 's': size = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'j': json = true; break;
		default: return 2;
		}
	}
	snprintf(prefix, sizeof(prefix), "dpr-bench-rc-%d", (int)getpid());
	if (rte_eal_init(RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	pool = rte_pktmbuf_pool_create("bench", 8191, 256, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	/* the harness's two transports and one connection, without its link:
	 * frames go straight across */
	rc_conn_defaults(&conn);
	conn.timeout = 14;
	if (pool == NULL || rc_harness_init(&H, pool, 1, NULL) != 0 ||
	    rc_connect(&H, &conn, &qp[0], &qp[1]) != 0) {
		fprintf(stderr, "set-up failed\n");
		return 1;
	}
	lmr = rc_mr(&H, 0, 1 << 16, DPR_ACCESS_LOCAL_WRITE);
	rmr = rc_mr(&H, 1, 1 << 16, DPR_ACCESS_LOCAL_WRITE | DPR_ACCESS_REMOTE_WRITE);
	hz = (double)rte_get_tsc_hz();
	t0 = now_ns();
	while (completed < n_msgs) {
		uint16_t kb = nb;

		c0 = rte_rdtsc();
		requester_side(b_out, kb, a_out, &na);
		cycles[0] += rte_rdtsc() - c0;
		c0 = rte_rdtsc();
		responder_side(a_out, na, b_out, &nb);
		cycles[1] += rte_rdtsc() - c0;
	}
	t1 = now_ns();
	secs = (t1 - t0) / 1e9;
	if (json) {
		printf("{\"messages\":%" PRIu64 ",\"size\":%u,\"msg_per_s\":%.0f,"
		       "\"requester_msg_per_s\":%.0f,\"responder_msg_per_s\":%.0f}\n",
		       n_msgs, size, n_msgs / secs, n_msgs / (cycles[0] / hz),
		       n_msgs / (cycles[1] / hz));
	} else {
		printf("RC transport alone, one core, %u B RDMA WRITE, no faults, "
		       "%" PRIu64 " messages\n", size, n_msgs);
		printf("  both sides:      %10.0f messages/s (%.1f s)\n",
		       n_msgs / secs, secs);
		printf("  requester alone: %10.0f messages/s\n",
		       n_msgs / (cycles[0] / hz));
		printf("  responder alone: %10.0f messages/s\n",
		       n_msgs / (cycles[1] / hz));
	}
	return 0;
}
