/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * libFuzzer target: the RC transport's receive path -- responder and
 * completer -- fed frames that pass lib/wire's validation, so the fuzzer
 * reaches the transport logic instead of stopping at the ICRC.
 *
 * The input is a sequence of records: [flags:1][len:2 LE][len bytes]. The
 * bytes are a frame's BTH, extension headers and payload; the target wraps
 * them in Ethernet/IPv4/UDP from the connected peer and appends a valid
 * ICRC. flags bit 0 points the frame at our QP (else the BTH's own dqpn),
 * bit 1 rewrites the PSN to the one the responder expects next (deep
 * request sequences), bit 2 runs the transport's poll (answers, timers)
 * after the frame, bit 3 writes the MR's rkey into a RETH or AtomicETH
 * (keys are random: not guessable), bit 4 rewrites the PSN to the next
 * response PSN of the requester's work (deep ACK/NAK/response streams),
 * bit 5 points the frame (with bit 0) at a UD QP instead and writes its
 * Q_Key into a DETH (the UD receive path: GRH, Q_Key, WQE fit).
 *
 * The requester has work in flight for the completer to meet: a READ of
 * 8 KiB (PSNs 200-207), a WRITE of 3000 B (208-210), a SEND of 1500 B
 * (211-212), a FETCH_ADD (213), a CMP_SWAP (214) and a SEND with
 * immediate of 0 B (215); tools/fuzz-seeds-rx.py makes ACK/NAK streams
 * against it. The QP's MR sits between canary pages: any write outside
 * it aborts. The QP is made anew for every input, so an input replays the
 * same way.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <rte_eal.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "dpr_transport.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MR_SIZE 65536
#define CANARY 4096

static struct rte_mempool *pool;
static struct dpr_verbs_ctx *ctx;
static struct dpr_transport *tp;
static struct dpr_pd *pd;
static struct dpr_cq *cq;
static uint8_t *region;              /* canary | MR | canary */
static struct dpr_mr *mr;
static union dpr_gid our_gid, peer_gid;
static const struct rte_ether_addr our_mac = {{ 2, 0, 0, 0, 0, 1 }};
static const struct rte_ether_addr peer_mac = {{ 2, 0, 0, 0, 0, 2 }};

static int
resolve(void *arg, const union dpr_gid *gid, struct rte_ether_addr *mac)
{
	(void)arg;
	(void)gid;
	*mac = peer_mac;
	return 0;
}

/* an exact-size frame and its shared info, freed together */
struct frame {
	struct rte_mbuf_ext_shared_info si;
	uint8_t *buf;
};

static void
ext_free(void *addr, void *opaque)
{
	struct frame *f = opaque;

	(void)addr;
	free(f->buf);
	free(f);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char *eal[] = { (*argv)[0], (char *)"-l", (char *)"0", (char *)"--no-pci",
		(char *)"--no-huge", (char *)"-m", (char *)"128",
		(char *)"--no-shconf", (char *)"--no-telemetry",
		(char *)"--log-level", (char *)"*:error", NULL };
	struct dpr_transport_conf c;

	(void)argc;
	if (rte_eal_init(RTE_DIM(eal) - 1, eal) < 0)
		abort();
	pool = rte_pktmbuf_pool_create("fz", 8191, 0, 0,
				       RTE_PKTMBUF_HEADROOM + 4096 + 256,
				       SOCKET_ID_ANY);
	ctx = dpr_verbs_create(NULL);
	dpr_gid_from_ipv4(&our_gid, htonl(0x0a4d0001));
	dpr_gid_from_ipv4(&peer_gid, htonl(0x0a4d0002));
	memset(&c, 0, sizeof(c));
	c.ctx = ctx;
	c.pool = pool;
	c.mac = our_mac;
	dpr_ipv6_link_local(&our_mac, &c.gid[0]);
	c.gid[1] = our_gid;
	c.n_gids = 2;
	c.resolve = resolve;
	tp = dpr_transport_create(&c);
	pd = dpr_pd_alloc(ctx, 0);
	cq = dpr_cq_create(ctx, 1 << 16, 0);
	region = aligned_alloc(4096, MR_SIZE + 2 * CANARY);
	if (pool == NULL || tp == NULL || pd == NULL || cq == NULL || region == NULL)
		abort();
	memset(region, 0xa5, MR_SIZE + 2 * CANARY);
	mr = dpr_mr_reg(pd, region + CANARY, 0x100000, MR_SIZE, DPR_ACCESS_ALL);
	if (mr == NULL)
		abort();
	return 0;
}

static struct dpr_tqp *
make_qp(void)
{
	struct dpr_qp_init_attr ia = {
		.qp_type = DPR_QPT_RC,
		.pd = pd, .send_cq = cq, .recv_cq = cq, .max_send_wr = 16,
		.max_recv_wr = 16, .max_send_sge = 2, .max_recv_sge = 2,
	};
	struct dpr_qp_attr a;
	struct dpr_tqp *qp = dpr_qp_create(tp, &ia);
	struct dpr_recv_wr rwr = { .wr_id = 1, .num_sge = 1,
				   .sge[0] = { 0x100000 + 4096, 8192, mr->lkey } };
	struct dpr_send_wr swr = { .wr_id = 2, .num_sge = 1,
				   .send_flags = DPR_SEND_SIGNALED,
				   .remote_addr = 0x700000, .rkey = 0x1234 };
	static const struct {
		enum dpr_wr_opcode op;
		uint32_t off, len;
	} work[] = {
		{ DPR_WR_RDMA_READ, 16384, 8192 },
		{ DPR_WR_RDMA_WRITE, 0, 3000 },
		{ DPR_WR_SEND, 4096, 1500 },
		{ DPR_WR_ATOMIC_FETCH_AND_ADD, 32768, 8 },
		{ DPR_WR_ATOMIC_CMP_AND_SWP, 32776, 8 },
		{ DPR_WR_SEND_WITH_IMM, 0, 0 },
	};
	unsigned int i;

	memset(&a, 0, sizeof(a));
	a.qp_state = DPR_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = DPR_ACCESS_ALL;
	dpr_qp_modify(qp, &a, DPR_QP_STATE | DPR_QP_PKEY_INDEX | DPR_QP_PORT |
		      DPR_QP_ACCESS_FLAGS);
	a.qp_state = DPR_QPS_RTR;
	a.path_mtu = DPR_MTU_1024;
	a.dest_qp_num = 0x42;
	a.rq_psn = 100;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.dgid = peer_gid;
	a.ah_attr.sgid_index = 1;
	dpr_qp_modify(qp, &a, DPR_QP_STATE | DPR_QP_AV | DPR_QP_PATH_MTU |
		      DPR_QP_DEST_QPN | DPR_QP_RQ_PSN | DPR_QP_MAX_DEST_RD_ATOMIC |
		      DPR_QP_MIN_RNR_TIMER);
	a.qp_state = DPR_QPS_RTS;
	a.sq_psn = 200;
	a.timeout = 10;
	a.retry_cnt = 3;
	a.rnr_retry = 3;
	a.max_rd_atomic = 4;
	dpr_qp_modify(qp, &a, DPR_QP_STATE | DPR_QP_TIMEOUT | DPR_QP_RETRY_CNT |
		      DPR_QP_RNR_RETRY | DPR_QP_SQ_PSN | DPR_QP_MAX_QP_RD_ATOMIC);
	dpr_post_recv(qp, &rwr, 1, NULL);
	/* work in flight, for responses and ACKs to land on */
	for (i = 0; i < RTE_DIM(work); i++) {
		bool atomic = work[i].op == DPR_WR_ATOMIC_FETCH_AND_ADD ||
			work[i].op == DPR_WR_ATOMIC_CMP_AND_SWP;

		swr.sge[0] = (struct dpr_sge){ 0x100000 + work[i].off, work[i].len,
					       mr->lkey };
		swr.wr_id = 2 + i;
		swr.opcode = work[i].op;
		swr.num_sge = work[i].len ? 1 : 0;
		swr.compare_add = atomic ? 1 : 0;
		swr.swap = atomic ? 2 : 0;
		dpr_post_send(qp, &swr, 1, NULL);
	}
	dpr_transport_poll(tp, 0);
	return qp;
}

#define UD_QKEY 0x11110000u

/* A UD QP in RTS with two receives (one too short for most datagrams)
 * and two datagrams sent to the peer. */
static struct dpr_tqp *
make_ud_qp(void)
{
	struct dpr_qp_init_attr ia = {
		.qp_type = DPR_QPT_UD,
		.pd = pd, .send_cq = cq, .recv_cq = cq, .max_send_wr = 4,
		.max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 2,
	};
	struct dpr_qp_attr a = { .qp_state = DPR_QPS_INIT, .port_num = 1,
				 .qkey = UD_QKEY, .sq_psn = 7 };
	struct dpr_tqp *qp = dpr_qp_create(tp, &ia);
	struct dpr_recv_wr rwr = { .wr_id = 20, .num_sge = 2,
				   .sge[0] = { 0x100000 + 49152, 40, mr->lkey },
				   .sge[1] = { 0x100000 + 49192, 24, mr->lkey } };
	struct dpr_send_wr swr = { .wr_id = 30, .opcode = DPR_WR_SEND,
				   .send_flags = DPR_SEND_SIGNALED, .num_sge = 1,
				   .ud = { .remote_qpn = 0x42, .remote_qkey = UD_QKEY,
					   .sgid_index = 1 },
				   .sge[0] = { 0x100000, 100, mr->lkey } };

	if (qp == NULL)
		abort();
	dpr_qp_modify(qp, &a, DPR_QP_STATE | DPR_QP_PKEY_INDEX | DPR_QP_PORT |
		      DPR_QP_QKEY);
	a.qp_state = DPR_QPS_RTR;
	dpr_qp_modify(qp, &a, DPR_QP_STATE);
	a.qp_state = DPR_QPS_RTS;
	dpr_qp_modify(qp, &a, DPR_QP_STATE | DPR_QP_SQ_PSN);
	dpr_post_recv(qp, &rwr, 1, NULL);
	rwr.wr_id = 21;
	rwr.num_sge = 1;
	rwr.sge[0] = (struct dpr_sge){ 0x100000 + 50176, 2048, mr->lkey };
	dpr_post_recv(qp, &rwr, 1, NULL);
	memcpy(swr.ud.dgid, peer_gid.raw, 16);
	dpr_post_send(qp, &swr, 1, NULL);
	swr.wr_id = 31;
	swr.opcode = DPR_WR_SEND_WITH_IMM;
	dpr_post_send(qp, &swr, 1, NULL);
	return qp;
}

static struct dpr_tqp *ud_qp;

static void
drain(void)
{
	struct rte_mbuf *out[64];
	struct dpr_cqe e[64];
	uint16_t n;

	while ((n = dpr_transport_tx(tp, out, RTE_DIM(out))) > 0)
		rte_pktmbuf_free_bulk(out, n);
	while (dpr_cq_poll(cq, e, RTE_DIM(e)) > 0)
		;
}

/* One frame from the peer carrying @p len bytes from BTH on. */
static void
deliver(struct dpr_tqp *qp, const uint8_t *body, uint16_t len, uint8_t flags,
	uint32_t *psn, uint32_t *rsp_psn)
{
	const uint32_t hl = 14 + 20 + 8;
	uint32_t total = hl + len + 4, crc;
	struct frame *fr;
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	struct rte_mbuf *m;
	uint8_t *buf;

	if (len < 12 || total > 4096 + 200)
		return;
	buf = malloc(total);   /* exact size: ASan sees any overrun */
	fr = calloc(1, sizeof(*fr));
	fr->buf = buf;
	eth = (void *)buf;
	ip = (void *)(eth + 1);
	udp = (void *)(ip + 1);
	eth->dst_addr = our_mac;
	eth->src_addr = peer_mac;
	eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(total - 14));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = dpr_gid_to_ipv4(&peer_gid);
	ip->dst_addr = dpr_gid_to_ipv4(&our_gid);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = RTE_BE16(0xc001);
	udp->dst_port = RTE_BE16(DPR_ROCEV2_PORT);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(total - 34));
	udp->dgram_cksum = 0;
	memcpy(buf + hl, body, len);
	buf[hl + 1] &= 0xf0;                 /* BTH version 0 */
	if (flags & 1) {
		uint32_t q = dpr_qp_num(flags & 0x20 ? ud_qp : qp);

		buf[hl + 5] = (uint8_t)(q >> 16);
		buf[hl + 6] = (uint8_t)(q >> 8);
		buf[hl + 7] = (uint8_t)q;
	}
	if (flags & 0x12) {
		uint32_t *p = flags & 2 ? psn : rsp_psn;

		buf[hl + 9] = (uint8_t)(*p >> 16);
		buf[hl + 10] = (uint8_t)(*p >> 8);
		buf[hl + 11] = (uint8_t)*p;
		*p = (*p + 1) & DPR_PSN_MASK;
	}
	if (flags & 0x20) {
		const struct dpr_opcode_info *oi = &dpr_opcode[buf[hl]];
		uint32_t qk = htonl(UD_QKEY);

		if ((oi->mask & DPR_DETH_MASK) && len >= oi->offset[DPR_HDR_DETH] + 8)
			memcpy(buf + hl + oi->offset[DPR_HDR_DETH], &qk, 4);
	}
	if (flags & 8) {
		const struct dpr_opcode_info *oi = &dpr_opcode[buf[hl]];
		uint32_t rk = htonl(mr->rkey);

		if ((oi->mask & DPR_RETH_MASK) && len >= oi->offset[DPR_HDR_RETH] + 12)
			memcpy(buf + hl + oi->offset[DPR_HDR_RETH] + 8, &rk, 4);
		if ((oi->mask & DPR_ATMETH_MASK) &&
		    len >= oi->offset[DPR_HDR_ATMETH] + 12)
			memcpy(buf + hl + oi->offset[DPR_HDR_ATMETH] + 8, &rk, 4);
	}
	crc = dpr_icrc_hdrs(buf + 14, false, 12);
	crc = dpr_icrc_update(crc, buf + hl + 12, len - 12);
	memcpy(buf + total - 4, &crc, 4);

	m = rte_pktmbuf_alloc(pool);
	if (m == NULL) {
		free(buf);
		free(fr);
		return;
	}
	fr->si.free_cb = ext_free;
	fr->si.fcb_opaque = fr;
	rte_mbuf_ext_refcnt_set(&fr->si, 1);
	rte_pktmbuf_attach_extbuf(m, buf, (rte_iova_t)(uintptr_t)buf,
				  (uint16_t)total, &fr->si);
	m->data_len = (uint16_t)total;
	m->pkt_len = total;
	dpr_transport_rx(tp, &m, 1, 1000);
	if (flags & 4)
		dpr_transport_poll(tp, 1000 + (uint64_t)len * 1000000);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dpr_tqp *qp = make_qp();
	uint32_t psn = 100, rsp_psn = 200, i;

	ud_qp = make_ud_qp();
	dpr_transport_poll(tp, 0);

	while (size >= 3) {
		uint8_t flags = data[0];
		uint16_t len = (uint16_t)(data[1] | data[2] << 8);

		data += 3;
		size -= 3;
		if (len > size)
			len = (uint16_t)size;
		deliver(qp, data, len, flags, &psn, &rsp_psn);
		data += len;
		size -= len;
	}
	dpr_transport_poll(tp, 1ull << 40);   /* every timer falls due */
	drain();
	dpr_qp_destroy(qp);
	dpr_qp_destroy(ud_qp);
	/* nothing outside the MR was touched */
	for (i = 0; i < CANARY; i++)
		if (region[i] != 0xa5 || region[CANARY + MR_SIZE + i] != 0xa5)
			abort();
	return 0;
}
