/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdma-perf: the verbs -- the device, PD, CQs, QPs and their buffer,
 * connecting the QPs, posting and polling.
 */

#include "perf.h"

static struct ibv_context *
open_dev(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n;

	list = ibv_get_device_list(&n);
	if (list == NULL || n == 0)
		die("no verbs device (is dprdmad running? DPRDMA_SOCKET names its "
		    "socket)");
	for (int i = 0; i < n; i++)
		if (name == NULL || strcmp(ibv_get_device_name(list[i]), name) == 0) {
			ctx = ibv_open_device(list[i]);
			if (ctx == NULL)
				die("ibv_open_device %s: %s",
				    ibv_get_device_name(list[i]), strerror(errno));
			break;
		}
	ibv_free_device_list(list);
	if (ctx == NULL)
		die("-d %s: no such device (ibv_devices lists them)", name);
	return ctx;
}

static uint32_t
inline_for(const struct perf *p, uint32_t size)
{
	if (p->o.op == OP_READ || p->o.op == OP_ATOMIC)
		return 0;
	return size <= (uint32_t)p->o.inline_size ? (uint32_t)p->o.inline_size : 0;
}

void
setup(struct perf *p)
{
	struct ibv_port_attr pa;
	struct ibv_device_attr da;
	uint32_t maxsz = p->o.all ? MAX_SIZE : p->o.size;
	uint32_t depth = p->o.tx_depth, rdepth = p->o.rx_depth;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	size_t total;

	p->ctx = open_dev(p->o.dev);
	if (ibv_query_device(p->ctx, &da) != 0)
		die("ibv_query_device: %s", strerror(errno));
	if (ibv_query_port(p->ctx, p->o.ib_port, &pa) != 0)
		die("-i %u: ibv_query_port: %s", p->o.ib_port, strerror(errno));
	p->mtu = pa.active_mtu;
	if (depth > (uint32_t)da.max_qp_wr || rdepth > (uint32_t)da.max_qp_wr)
		die("-t %u / -r %u: the device takes at most %d WRs per queue",
		    depth, rdepth, da.max_qp_wr);
	p->pd = ibv_alloc_pd(p->ctx);
	if (p->pd == NULL)
		die("ibv_alloc_pd: %s", strerror(errno));
	/* per QP: a send half and a receive half, each a whole number of
	 * cache lines, so WRITEs and READs land where the check expects */
	p->stride = 2 * (((size_t)maxsz + 63) & ~(size_t)63);
	total = p->stride * p->o.qps;
	p->buf = aligned_alloc(4096, (total + 4095) & ~(size_t)4095);
	if (p->buf == NULL)
		die("out of memory for %zu bytes of buffers", total);
	memset(p->buf, 0, total);
	p->mr = ibv_reg_mr(p->pd, p->buf, total, access);
	if (p->mr == NULL)
		die("ibv_reg_mr of %zu bytes: %s", total, strerror(errno));
	if (p->o.events) {
		p->ch = ibv_create_comp_channel(p->ctx);
		if (p->ch == NULL)
			die("ibv_create_comp_channel: %s", strerror(errno));
	}
	p->scq = ibv_create_cq(p->ctx, (int)(depth * p->o.qps + 1), NULL, p->ch, 0);
	p->rcq = ibv_create_cq(p->ctx, (int)(rdepth * p->o.qps + 1), NULL, p->ch, 0);
	if (p->scq == NULL || p->rcq == NULL)
		die("ibv_create_cq: %s", strerror(errno));
	if (p->o.events && (ibv_req_notify_cq(p->scq, 0) != 0 ||
			    ibv_req_notify_cq(p->rcq, 0) != 0))
		die("ibv_req_notify_cq: %s", strerror(errno));
	for (uint32_t i = 0; i < p->o.qps; i++) {
		struct ibv_qp_init_attr ia = {
			.send_cq = p->scq, .recv_cq = p->rcq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = depth, .max_recv_wr = rdepth,
				 .max_send_sge = 1, .max_recv_sge = 1,
				 .max_inline_data = (uint32_t)p->o.inline_size },
		};
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_INIT, .pkey_index = 0,
			.port_num = p->o.ib_port, .qp_access_flags = access,
		};

		p->qp[i] = ibv_create_qp(p->pd, &ia);
		if (p->qp[i] == NULL)
			die("ibv_create_qp (depth %u, inline %d): %s", depth,
			    p->o.inline_size, strerror(errno));
		if (ibv_modify_qp(p->qp[i], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
			die("ibv_modify_qp to INIT: %s", strerror(errno));
		/* an unpredictable starting PSN (doc/security.rst): one an
		 * off-path sender cannot guess, unlike random() seeded from
		 * the clock and the pid */
		if (getentropy(&p->psn[i], sizeof(p->psn[i])) != 0)
			die("getentropy: %s", strerror(errno));
		p->psn[i] &= 0xffffff;
	}
}

void
connect_qps(struct perf *p)
{
	union ibv_gid gid;
	char line[LINE], hex[33];
	int rd = 16;
	struct ibv_device_attr da;

	if (ibv_query_gid(p->ctx, p->o.ib_port, p->o.gid_index, &gid) != 0)
		die("-x %d: ibv_query_gid: %s", p->o.gid_index, strerror(errno));
	if (ibv_query_device(p->ctx, &da) == 0 && da.max_qp_rd_atom < rd)
		rd = da.max_qp_rd_atom;
	for (uint32_t i = 0; i < p->o.qps; i++) {
		for (int b = 0; b < 16; b++)
			sprintf(hex + 2 * b, "%02x", gid.raw[b]);
		say(p, "QP %u %u %u %" PRIu64 " %s", p->qp[i]->qp_num, p->psn[i],
		    p->mr->rkey, (uint64_t)(uintptr_t)(p->buf + i * p->stride), hex);
	}
	for (uint32_t i = 0; i < p->o.qps; i++) {
		struct peer_qp *r = &p->remote[i];
		unsigned int b;

		hear(p, line, sizeof(line));
		if (sscanf(line, "QP %u %u %u %" SCNu64 " %32s", &r->qpn, &r->psn,
			   &r->rkey, &r->va, hex) != 5 || strlen(hex) != 32)
			die("out-of-band: bad QP line \"%s\"", line);
		for (int k = 0; k < 16; k++) {
			if (sscanf(hex + 2 * k, "%2x", &b) != 1)
				die("out-of-band: bad GID \"%s\"", hex);
			r->gid.raw[k] = (uint8_t)b;
		}
	}
	for (uint32_t i = 0; i < p->o.qps; i++) {
		struct ibv_qp_attr a = {
			.qp_state = IBV_QPS_RTR, .path_mtu = p->mtu,
			.dest_qp_num = p->remote[i].qpn, .rq_psn = p->remote[i].psn,
			.max_dest_rd_atomic = (uint8_t)rd, .min_rnr_timer = 12,
			.ah_attr = {
				.is_global = 1, .port_num = p->o.ib_port,
				.grh = { .dgid = p->remote[i].gid, .hop_limit = 64,
					 .sgid_index = (uint8_t)p->o.gid_index },
			},
		};

		if (ibv_modify_qp(p->qp[i], &a, IBV_QP_STATE | IBV_QP_AV |
				  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
			die("ibv_modify_qp to RTR: %s", strerror(errno));
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.sq_psn = p->psn[i];
		a.max_rd_atomic = (uint8_t)rd;
		if (ibv_modify_qp(p->qp[i], &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				  IBV_QP_MAX_QP_RD_ATOMIC) != 0)
			die("ibv_modify_qp to RTS: %s", strerror(errno));
	}
}

/* Wait for completions on @cq; at most @max; never returns 0. */
int
poll_wait(struct perf *p, struct ibv_cq *cq, struct ibv_wc *wc, int max)
{
	for (;;) {
		int n = ibv_poll_cq(cq, max, wc);

		if (n < 0)
			die("ibv_poll_cq failed");
		if (n > 0) {
			for (int i = 0; i < n; i++)
				if (wc[i].status != IBV_WC_SUCCESS)
					die("completion error: %s (status %d, vendor "
					    "error 0x%x, QP 0x%06x, opcode %d)",
					    ibv_wc_status_str(wc[i].status),
					    wc[i].status, wc[i].vendor_err,
					    wc[i].qp_num, wc[i].opcode);
			return n;
		}
		if (p->o.events) {
			struct ibv_cq *ecq;
			void *ectx;

			if (ibv_get_cq_event(p->ch, &ecq, &ectx) != 0)
				die("ibv_get_cq_event: %s", strerror(errno));
			ibv_ack_cq_events(ecq, 1);
			if (ibv_req_notify_cq(ecq, 0) != 0)
				die("ibv_req_notify_cq: %s", strerror(errno));
		} else if (p->o.yield) {
			sched_yield();
		}
	}
}

uint8_t *
send_half(struct perf *p, uint32_t qp)
{
	return p->buf + qp * p->stride;
}

uint8_t *
recv_half(struct perf *p, uint32_t qp)
{
	return p->buf + qp * p->stride + p->stride / 2;
}

/* Receives always take a whole receive half, so ones left over from one
 * message size serve the next. */
void
post_recv(struct perf *p, uint32_t qp, uint32_t n)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)recv_half(p, qp), .length = (uint32_t)(p->stride / 2),
		.lkey = p->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = qp, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *badwr;

	for (uint32_t i = 0; i < n; i++)
		if (ibv_post_recv(p->qp[qp], &wr, &badwr) != 0)
			die("ibv_post_recv: %s", strerror(errno));
}

/* One send WR of the test for @qp; @seq numbers the QP's atomics. */
void
make_wr(struct perf *p, uint32_t qp, uint32_t size, uint64_t seq,
	struct ibv_send_wr *wr, struct ibv_sge *sge)
{
	struct peer_qp *r = &p->remote[qp];

	memset(wr, 0, sizeof(*wr));
	sge->addr = (uintptr_t)send_half(p, qp);
	sge->length = size;
	sge->lkey = p->mr->lkey;
	wr->wr_id = qp;
	wr->sg_list = sge;
	wr->num_sge = 1;
	switch (p->o.op) {
	case OP_WRITE:
		wr->opcode = IBV_WR_RDMA_WRITE;
		break;
	case OP_READ:
		/* a READ lands in the receive half: the server's pattern */
		wr->opcode = IBV_WR_RDMA_READ;
		sge->addr = (uintptr_t)recv_half(p, qp);
		break;
	case OP_SEND:
		wr->opcode = IBV_WR_SEND;
		break;
	case OP_ATOMIC:
		wr->opcode = p->o.cas ? IBV_WR_ATOMIC_CMP_AND_SWP :
			IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr->wr.atomic.remote_addr = r->va + p->stride / 2;
		wr->wr.atomic.rkey = r->rkey;
		wr->wr.atomic.compare_add = p->o.cas ? seq : 1;
		wr->wr.atomic.swap = seq + 1;
		sge->addr = (uintptr_t)recv_half(p, qp);
		return;
	}
	/* WRITEs land in the peer's receive half; READs read its send half */
	wr->wr.rdma.remote_addr = r->va + (p->o.op == OP_READ ? 0 : p->stride / 2);
	wr->wr.rdma.rkey = r->rkey;
	if (inline_for(p, size) > 0)
		wr->send_flags |= IBV_SEND_INLINE;
}

/* The pattern each side's send half holds: different per side and QP. */
void
fill(struct perf *p, bool server)
{
	for (uint32_t q = 0; q < p->o.qps; q++) {
		uint8_t *b = send_half(p, q);

		for (size_t i = 0; i < p->stride / 2; i++)
			b[i] = (uint8_t)(i * 7 + q * 13 + (server ? 101 : 3) + (i >> 8));
	}
}

uint64_t
sum(const uint8_t *b, size_t n)
{
	uint64_t h = 1469598103934665603ull;   /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}
