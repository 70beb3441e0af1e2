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

#include "dpr_transport.h"

static struct {
	struct dpr_verbs_ctx *ctx;
	struct dpr_transport *tp;
	struct dpr_pd *pd;
	struct dpr_cq *cq;
	struct dpr_tqp *qp;
	union dpr_gid gid;
	struct rte_ether_addr mac;
	uint64_t cycles;
} s[2];

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

static int
resolve(void *arg, const union dpr_gid *gid, struct rte_ether_addr *mac)
{
	(void)arg;
	*mac = memcmp(gid, &s[0].gid, sizeof(*gid)) == 0 ? s[0].mac : s[1].mac;
	return 0;
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

	dpr_transport_rx(s[0].tp, acks, n, 0);
	while (posted < n_msgs && posted - completed < 256) {
		struct dpr_sge sge = { lmr->iova, size, lmr->lkey };
		struct dpr_send_wr wr = {
			.wr_id = posted, .sg_list = &sge, .num_sge = 1,
			.opcode = DPR_WR_RDMA_WRITE,
			/* one completion per 32, as perftest's CQ moderation */
			.send_flags = (posted % 32 == 31 || posted + 1 == n_msgs) ?
				DPR_SEND_SIGNALED : 0,
		}, *bad;

		wr.wr.rdma.remote_addr = rmr->iova;
		wr.wr.rdma.rkey = rmr->rkey;
		if (dpr_post_send(s[0].qp, &wr, &bad) != 0)
			break;
		posted++;
	}
	dpr_transport_poll(s[0].tp, 0);
	*n_out = dpr_transport_tx(s[0].tp, out, 512);
	while ((k = dpr_cq_poll(s[0].cq, c, 64)) > 0)
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
	dpr_transport_rx(s[1].tp, req, n, 0);
	dpr_transport_poll(s[1].tp, 0);
	*n_out = dpr_transport_tx(s[1].tp, out, 512);
}

static void
connect_pair(struct rte_mempool *pool)
{
	int i;

	for (i = 0; i < 2; i++) {
		struct dpr_transport_conf c = { 0 };
		struct dpr_qp_init_attr ia = { 0 };

		s[i].mac = (struct rte_ether_addr){{ 2, 0, 0, 0, 0, (uint8_t)(i + 1) }};
		dpr_gid_from_ipv4(&s[i].gid, rte_cpu_to_be_32(0x0a4d0001 + i));
		s[i].ctx = dpr_verbs_create(NULL);
		c.ctx = s[i].ctx;
		c.pool = pool;
		c.mac = s[i].mac;
		c.gid = s[i].gid;
		c.resolve = resolve;
		s[i].tp = dpr_transport_create(&c);
		s[i].pd = dpr_pd_alloc(s[i].ctx, 0);
		s[i].cq = dpr_cq_create(s[i].ctx, 4096, 0);
		ia.pd = s[i].pd;
		ia.send_cq = ia.recv_cq = s[i].cq;
		ia.max_send_wr = 1024;
		ia.max_recv_wr = 16;
		ia.max_send_sge = 1;
		ia.max_recv_sge = 1;
		s[i].qp = dpr_qp_create(s[i].tp, &ia);
	}
	for (i = 0; i < 2; i++) {
		struct dpr_qp_attr a = { 0 };

		a.qp_state = DPR_QPS_INIT;
		a.port_num = 1;
		a.qp_access_flags = DPR_ACCESS_REMOTE_WRITE;
		dpr_qp_modify(s[i].qp, &a, DPR_QP_STATE | DPR_QP_PKEY_INDEX |
			      DPR_QP_PORT | DPR_QP_ACCESS_FLAGS);
		a.qp_state = DPR_QPS_RTR;
		a.path_mtu = DPR_MTU_1024;
		a.dest_qp_num = dpr_qp_num(s[!i].qp);
		a.max_dest_rd_atomic = 1;
		a.ah_attr.dgid = s[!i].gid;
		a.ah_attr.sgid_index = 1;
		dpr_qp_modify(s[i].qp, &a, DPR_QP_STATE | DPR_QP_AV | DPR_QP_PATH_MTU |
			      DPR_QP_DEST_QPN | DPR_QP_RQ_PSN |
			      DPR_QP_MAX_DEST_RD_ATOMIC | DPR_QP_MIN_RNR_TIMER);
		a.qp_state = DPR_QPS_RTS;
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = 1;
		dpr_qp_modify(s[i].qp, &a, DPR_QP_STATE | DPR_QP_TIMEOUT |
			      DPR_QP_RETRY_CNT | DPR_QP_RNR_RETRY | DPR_QP_SQ_PSN |
			      DPR_QP_MAX_QP_RD_ATOMIC);
	}
	lmr = dpr_mr_reg(s[0].pd, aligned_alloc(64, 1 << 16), 0x10000, 1 << 16,
			 DPR_ACCESS_LOCAL_WRITE);
	rmr = dpr_mr_reg(s[1].pd, aligned_alloc(64, 1 << 16), 0x20000, 1 << 16,
			 DPR_ACCESS_LOCAL_WRITE | DPR_ACCESS_REMOTE_WRITE);
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
	connect_pair(pool);
	hz = (double)rte_get_tsc_hz();
	t0 = now_ns();
	while (completed < n_msgs) {
		uint16_t kb = nb;

		c0 = rte_rdtsc();
		requester_side(b_out, kb, a_out, &na);
		s[0].cycles += rte_rdtsc() - c0;
		c0 = rte_rdtsc();
		responder_side(a_out, na, b_out, &nb);
		s[1].cycles += rte_rdtsc() - c0;
	}
	t1 = now_ns();
	secs = (t1 - t0) / 1e9;
	if (json) {
		printf("{\"messages\":%" PRIu64 ",\"size\":%u,\"msg_per_s\":%.0f,"
		       "\"requester_msg_per_s\":%.0f,\"responder_msg_per_s\":%.0f}\n",
		       n_msgs, size, n_msgs / secs, n_msgs / (s[0].cycles / hz),
		       n_msgs / (s[1].cycles / hz));
	} else {
		printf("RC transport alone, one core, %u B RDMA WRITE, no faults, "
		       "%" PRIu64 " messages\n", size, n_msgs);
		printf("  both sides:      %10.0f messages/s (%.1f s)\n",
		       n_msgs / secs, secs);
		printf("  requester alone: %10.0f messages/s\n",
		       n_msgs / (s[0].cycles / hz));
		printf("  responder alone: %10.0f messages/s\n",
		       n_msgs / (s[1].cycles / hz));
	}
	return 0;
}
