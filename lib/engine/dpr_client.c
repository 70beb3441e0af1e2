/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The built-in test client: RDMA between dprdmad boxes before the shim
 * exists, driven over telemetry. It creates a PD, a CQ, QPs and one MR
 * (hugepage memory when the EAL has hugepages) on worker 0 and port 0,
 * connects its QPs to a peer's, and runs streams of SEND/WRITE/READ/
 * atomics whose results are checked through checksums of MR regions.
 *
 *   /dprdma/client/setup,QPS,MR_BYTES      -> gid, mr_va, rkey, qpns, psns
 *   /dprdma/client/connect,QP,RQPN,RPSN,RIP
 *   /dprdma/client/fill,OFF,LEN,SEED       -> crc32 of the region
 *   /dprdma/client/checksum,OFF,LEN        -> crc32
 *   /dprdma/client/read64,OFF              -> value
 *   /dprdma/client/recv,QP,COUNT,OFF,LEN   receives kept posted until COUNT
 *   /dprdma/client/run,QP,OP,SIZE,COUNT,LOFF,RVA,RKEY[,DEPTH]
 *          OP: send send_imm write write_imm read fadd cas
 *   /dprdma/client/pingpong,QP,SIZE,COUNT,INITIATOR
 *          as ibv_rc_pingpong: SENDs of SIZE answered one for one, COUNT
 *          each way; the initiator (1) sends first, like its client
 *   /dprdma/client/stop                    ends the stream once in flight work is done
 *   /dprdma/client/status                  -> progress, errors, rates
 *
 * Commands run on the worker between two polls (dpr_engine_cmd), so the
 * data path and these objects never race.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include <bsd/stdlib.h>
#include <rte_malloc.h>

#include "dpr_engine.h"
#include "engine_private.h"

#define CLIENT_MAX_QPS 64
#define CLIENT_MAX_MR (1ull << 30)

enum client_op { C_SEND, C_SEND_IMM, C_WRITE, C_WRITE_IMM, C_READ, C_FADD,
		 C_CAS, C_PINGPONG, C_NUM };
static const char *const op_names[C_NUM] = {
	"send", "send_imm", "write", "write_imm", "read", "fadd", "cas",
	"pingpong",
};

struct dpr_client {
	struct dpr_pd *pd;
	struct dpr_cq *cq;
	struct dpr_mr *mr;
	uint8_t *buf;
	uint64_t size;
	struct dpr_tqp *qp[CLIENT_MAX_QPS];
	uint32_t psn[CLIENT_MAX_QPS];
	uint32_t n_qps;
	/* the stream */
	bool active;
	uint32_t qp_i;
	int op;
	uint32_t msg;
	uint64_t count, posted, completed, errors, bytes;
	uint32_t first_error;
	uint64_t loff, rva;
	uint32_t rkey, depth;
	uint64_t t_start, t_end;
	/* ping-pong: sends allowed so far (one per message received) */
	uint64_t pp_credit;
	/* receives */
	uint32_t recv_qp;
	uint64_t recv_target, recv_posted, recv_done, recv_bytes, recv_errors;
	uint64_t recv_off;
	uint32_t recv_len;
};

/* ------------------------------------------------------------ commands */

void
dpr_cmd_u64(struct dpr_cmd *c, const char *name, uint64_t v)
{
	if (c->n_kv == RTE_DIM(c->kv))
		return;
	snprintf(c->kv[c->n_kv].name, sizeof(c->kv[0].name), "%s", name);
	c->kv[c->n_kv].is_str = false;
	c->kv[c->n_kv].u = v;
	c->n_kv++;
}

void
dpr_cmd_str(struct dpr_cmd *c, const char *name, const char *fmt, ...)
{
	va_list ap;

	if (c->n_kv == RTE_DIM(c->kv))
		return;
	snprintf(c->kv[c->n_kv].name, sizeof(c->kv[0].name), "%s", name);
	c->kv[c->n_kv].is_str = true;
	va_start(ap, fmt);
	vsnprintf(c->kv[c->n_kv].s, sizeof(c->kv[0].s), fmt, ap);
	va_end(ap);
	c->n_kv++;
}

int
dpr_engine_cmd_on(unsigned int wi, struct dpr_cmd *c, struct rte_tel_data *d)
{
	unsigned int i;
	int rc = dpr_engine_cmd_submit(wi, c, false);

	if (rc != 0)
		return rc;
	rc = c->rc;
	if (d != NULL) {
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_int(d, "rc", rc);
		for (i = 0; i < c->n_kv; i++) {
			if (c->kv[i].is_str)
				rte_tel_data_add_dict_string(d, c->kv[i].name,
							     c->kv[i].s);
			else
				rte_tel_data_add_dict_u64(d, c->kv[i].name,
							  c->kv[i].u);
		}
	}
	free(c);
	return d != NULL ? 0 : rc;
}

int
dpr_engine_cmd(int (*fn)(struct dpr_worker *, struct dpr_cmd *),
	       const char *arg, struct rte_tel_data *d)
{
	struct dpr_cmd *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return -ENOMEM;
	c->fn = fn;
	snprintf(c->arg, sizeof(c->arg), "%s", arg ? arg : "");
	return dpr_engine_cmd_on(0, c, d);
}

static int
cmd_set_tap(struct dpr_worker *w, struct dpr_cmd *c)
{
	uint16_t pi = (uint16_t)c->kv[0].u;

	w->tap[pi] = (dpr_tap_fn)(uintptr_t)c->ptr[0];
	w->tap_state[pi] = c->ptr[1];
	return 0;
}

int
dpr_engine_set_tap(uint16_t pi, dpr_tap_fn fn, void *state)
{
	unsigned int wi;
	int rc;

	if (pi >= dpr_engine.n_ports)
		return -EINVAL;
	for (wi = 0; wi < dpr_engine.n_workers; wi++) {
		struct dpr_cmd *c = calloc(1, sizeof(*c));

		if (c == NULL)
			return -ENOMEM;
		c->fn = cmd_set_tap;
		c->ptr[0] = (void *)(uintptr_t)fn;
		c->ptr[1] = state;
		c->kv[0].u = pi;
		rc = dpr_engine_cmd_on(wi, c, NULL);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* ------------------------------------------------------------- client */

static uint64_t
args(const char *s, uint64_t *v, unsigned int max)
{
	unsigned int n = 0;
	char *end;

	while (*s != '\0' && n < max) {
		v[n++] = strtoull(s, &end, 0);
		if (end == s)
			return n - 1;
		s = *end == ',' ? end + 1 : end;
		if (*end != ',' )
			break;
	}
	return n;
}

void
dpr_client_destroy(struct dpr_worker *w)
{
	struct dpr_client *cl = w->client;
	uint32_t i;

	if (cl == NULL)
		return;
	for (i = 0; i < cl->n_qps; i++)
		dpr_qp_destroy(cl->qp[i]);
	if (cl->mr != NULL)
		dpr_mr_dereg(cl->mr);
	if (cl->cq != NULL)
		dpr_cq_destroy(cl->cq);
	if (cl->pd != NULL)
		dpr_pd_dealloc(cl->pd);
	rte_free(cl->buf);
	free(cl);
	w->client = NULL;
}

static int
cmd_setup(struct dpr_worker *w, struct dpr_cmd *c)
{
	struct dpr_verbs_ctx *ctx = dpr_engine.ctx[0];
	const struct dpr_port *port = &dpr_engine.ports[0];
	struct dpr_client *cl;
	char list[192], psns[192], ip[INET_ADDRSTRLEN];
	size_t u1 = 0, u2 = 0;
	uint64_t v[2];
	uint32_t i;

	if (args(c->arg, v, 2) != 2 || v[0] == 0 || v[0] > CLIENT_MAX_QPS ||
	    v[1] < 4096 || v[1] > CLIENT_MAX_MR) {
		dpr_cmd_str(c, "error", "expected QPS (1-%d),MR_BYTES (4096-%llu)",
			    CLIENT_MAX_QPS, CLIENT_MAX_MR);
		return -EINVAL;
	}
	dpr_client_destroy(w);
	cl = calloc(1, sizeof(*cl));
	if (cl == NULL)
		return -ENOMEM;
	w->client = cl;
	cl->size = v[1];
	cl->buf = rte_zmalloc("dpr_client_mr", cl->size, 4096);
	cl->pd = dpr_pd_alloc(ctx, 0);
	cl->cq = dpr_cq_create(ctx, 65536, 0);
	if (cl->buf == NULL || cl->pd == NULL || cl->cq == NULL)
		goto nomem;
	cl->mr = dpr_mr_reg(cl->pd, cl->buf, (uint64_t)(uintptr_t)cl->buf,
			    cl->size, DPR_ACCESS_ALL);
	if (cl->mr == NULL)
		goto nomem;
	for (i = 0; i < v[0]; i++) {
		struct dpr_qp_init_attr ia = {
			.pd = cl->pd, .send_cq = cl->cq, .recv_cq = cl->cq,
			.max_send_wr = 1024, .max_recv_wr = 1024,
			.max_send_sge = 1, .max_recv_sge = 1, .max_inline_data = 64,
		};
		struct dpr_qp_attr a = { .qp_state = DPR_QPS_INIT, .port_num = 1,
					 .qp_access_flags = DPR_ACCESS_ALL };

		cl->qp[i] = dpr_qp_create(w->tp[0], &ia);
		if (cl->qp[i] == NULL)
			goto nomem;
		cl->n_qps++;
		dpr_qp_modify(cl->qp[i], &a, DPR_QP_STATE | DPR_QP_PKEY_INDEX |
			      DPR_QP_PORT | DPR_QP_ACCESS_FLAGS);
		cl->psn[i] = arc4random() & DPR_PSN_MASK;
		u1 += snprintf(list + u1, sizeof(list) - u1, "%s%u", i ? "," : "",
			       dpr_qp_num(cl->qp[i]));
		u2 += snprintf(psns + u2, sizeof(psns) - u2, "%s%u", i ? "," : "",
			       cl->psn[i]);
	}
	inet_ntop(AF_INET, &port->ip, ip, sizeof(ip));
	dpr_cmd_str(c, "gid_ipv4", "%s", ip);
	dpr_cmd_u64(c, "mr_va", cl->mr->iova);
	dpr_cmd_u64(c, "rkey", cl->mr->rkey);
	dpr_cmd_u64(c, "mr_size", cl->size);
	dpr_cmd_str(c, "qpns", "%s", list);
	dpr_cmd_str(c, "psns", "%s", psns);
	return 0;
nomem:
	dpr_client_destroy(w);
	dpr_cmd_str(c, "error", "out of memory: fewer QPs or a smaller MR");
	return -ENOMEM;
}

static int
cmd_connect(struct dpr_worker *w, struct dpr_cmd *c)
{
	struct dpr_client *cl = w->client;
	const struct dpr_port *port = &dpr_engine.ports[0];
	char *comma;
	struct dpr_qp_attr a;
	struct in_addr ip;
	uint64_t v[3];
	int rc;

	comma = strrchr(c->arg, ',');
	if (cl == NULL || comma == NULL || args(c->arg, v, 3) != 3 ||
	    v[0] >= cl->n_qps || inet_pton(AF_INET, comma + 1, &ip) != 1) {
		dpr_cmd_str(c, "error", "expected QP,RQPN,RPSN,RIPV4 after setup");
		return -EINVAL;
	}
	memset(&a, 0, sizeof(a));
	a.qp_state = DPR_QPS_RTR;
	a.path_mtu = (enum dpr_mtu)(dpr_active_mtu(port->mtu) >= 4096 ? DPR_MTU_4096 :
		dpr_active_mtu(port->mtu) >= 2048 ? DPR_MTU_2048 :
		dpr_active_mtu(port->mtu) >= 1024 ? DPR_MTU_1024 :
		dpr_active_mtu(port->mtu) >= 512 ? DPR_MTU_512 : DPR_MTU_256);
	a.dest_qp_num = (uint32_t)v[1];
	a.rq_psn = (uint32_t)v[2];
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	dpr_gid_from_ipv4(&a.ah_attr.dgid, ip.s_addr);
	a.ah_attr.sgid_index = 1;
	rc = dpr_qp_modify(cl->qp[v[0]], &a, DPR_QP_STATE | DPR_QP_AV |
			   DPR_QP_PATH_MTU | DPR_QP_DEST_QPN | DPR_QP_RQ_PSN |
			   DPR_QP_MAX_DEST_RD_ATOMIC | DPR_QP_MIN_RNR_TIMER);
	if (rc != 0)
		return rc;
	a.qp_state = DPR_QPS_RTS;
	a.sq_psn = cl->psn[v[0]];
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	rc = dpr_qp_modify(cl->qp[v[0]], &a, DPR_QP_STATE | DPR_QP_TIMEOUT |
			   DPR_QP_RETRY_CNT | DPR_QP_RNR_RETRY | DPR_QP_SQ_PSN |
			   DPR_QP_MAX_QP_RD_ATOMIC);
	dpr_cmd_u64(c, "path_mtu", dpr_mtu_bytes(a.path_mtu));
	return rc;
}

static bool
region_ok(const struct dpr_client *cl, uint64_t off, uint64_t len)
{
	return cl != NULL && off <= cl->size && len <= cl->size - off;
}

static void
pattern(uint8_t *p, uint64_t len, uint64_t seed)
{
	uint64_t s = seed | 1;
	uint64_t i;

	for (i = 0; i < len; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		p[i] = (uint8_t)s;
	}
}

static int
cmd_fill(struct dpr_worker *w, struct dpr_cmd *c)
{
	struct dpr_client *cl = w->client;
	uint64_t v[3];

	if (args(c->arg, v, 3) != 3 || !region_ok(cl, v[0], v[1])) {
		dpr_cmd_str(c, "error", "expected OFF,LEN,SEED inside the MR");
		return -EINVAL;
	}
	pattern(cl->buf + v[0], v[1], v[2]);
	dpr_cmd_u64(c, "crc32", dpr_icrc_update(0, cl->buf + v[0], v[1]));
	return 0;
}

static int
cmd_checksum(struct dpr_worker *w, struct dpr_cmd *c)
{
	struct dpr_client *cl = w->client;
	uint64_t v[2];

	if (args(c->arg, v, 2) != 2 || !region_ok(cl, v[0], v[1])) {
		dpr_cmd_str(c, "error", "expected OFF,LEN inside the MR");
		return -EINVAL;
	}
	dpr_cmd_u64(c, "crc32", dpr_icrc_update(0, cl->buf + v[0], v[1]));
	return 0;
}

static int
cmd_read64(struct dpr_worker *w, struct dpr_cmd *c)
{
	struct dpr_client *cl = w->client;
	uint64_t v[1], x;

	if (args(c->arg, v, 1) != 1 || !region_ok(cl, v[0], 8)) {
		dpr_cmd_str(c, "error", "expected OFF inside the MR");
		return -EINVAL;
	}
	memcpy(&x, cl->buf + v[0], 8);
	dpr_cmd_u64(c, "value", x);
	return 0;
}

static int
cmd_recv(struct dpr_worker *w, struct dpr_cmd *c)
{
	struct dpr_client *cl = w->client;
	uint64_t v[4];

	if (args(c->arg, v, 4) != 4 || cl == NULL || v[0] >= cl->n_qps ||
	    !region_ok(cl, v[2], v[3]) || v[3] > UINT32_MAX) {
		dpr_cmd_str(c, "error", "expected QP,COUNT,OFF,LEN after setup");
		return -EINVAL;
	}
	cl->recv_qp = (uint32_t)v[0];
	cl->recv_target += v[1];
	cl->recv_off = v[2];
	cl->recv_len = (uint32_t)v[3];
	return 0;
}

static int
cmd_run(struct dpr_worker *w, struct dpr_cmd *c)
{
	struct dpr_client *cl = w->client;
	char opname[16];
	uint64_t v[8];
	const char *p = c->arg;
	int op, n;

	/* QP,OP,SIZE,COUNT,LOFF,RVA,RKEY[,DEPTH] */
	if (cl == NULL || cl->active) {
		dpr_cmd_str(c, "error", cl ? "a stream is running" : "setup first");
		return cl ? -EBUSY : -EINVAL;
	}
	v[0] = strtoull(p, (char **)&p, 0);
	if (*p++ != ',' || sscanf(p, "%15[a-z_]", opname) != 1)
		goto bad;
	p += strlen(opname);
	for (op = 0; op < C_NUM; op++)
		if (strcmp(op_names[op], opname) == 0)
			break;
	if (op == C_NUM || *p != ',')
		goto bad;
	n = (int)args(p + 1, v + 1, 7);
	if (n < 5 || v[0] >= cl->n_qps || v[1] > (1u << 30) ||
	    (op >= C_FADD && v[1] != 8) || !region_ok(cl, v[3], v[1]))
		goto bad;
	cl->qp_i = (uint32_t)v[0];
	cl->op = op;
	cl->msg = (uint32_t)v[1];
	cl->count = v[2];
	cl->loff = v[3];
	cl->rva = v[4];
	cl->rkey = (uint32_t)v[5];
	cl->depth = n >= 7 && v[6] ? (uint32_t)RTE_MIN(v[6], 512ull) : 64;
	if (op == C_CAS)
		cl->depth = 1;           /* each CAS expects the previous result */
	cl->posted = cl->completed = cl->errors = cl->bytes = 0;
	cl->first_error = 0;
	cl->t_start = w->now;
	cl->t_end = 0;
	cl->active = cl->count > 0;
	return 0;
bad:
	dpr_cmd_str(c, "error", "expected QP,OP,SIZE,COUNT,LOFF,RVA,RKEY[,DEPTH]; "
		    "OP one of send send_imm write write_imm read fadd cas; "
		    "atomics take SIZE 8");
	return -EINVAL;
}

static int
cmd_pingpong(struct dpr_worker *w, struct dpr_cmd *c)
{
	struct dpr_client *cl = w->client;
	uint64_t v[4];

	if (cl == NULL || cl->active || args(c->arg, v, 4) != 4 ||
	    v[0] >= cl->n_qps || v[1] > cl->size / 2 || v[2] == 0) {
		dpr_cmd_str(c, "error", "expected QP,SIZE,COUNT,INITIATOR after "
			    "setup, no stream running");
		return -EINVAL;
	}
	cl->qp_i = (uint32_t)v[0];
	cl->op = C_PINGPONG;
	cl->msg = (uint32_t)v[1];
	cl->count = v[2];
	cl->loff = 0;
	cl->depth = 1;
	cl->pp_credit = v[3] ? 1 : 0;   /* the initiator speaks first */
	cl->posted = cl->completed = cl->errors = cl->bytes = 0;
	cl->first_error = 0;
	/* receives into the upper half of the MR, kept posted */
	cl->recv_qp = cl->qp_i;
	cl->recv_off = cl->size / 2;
	cl->recv_len = (uint32_t)RTE_MAX((uint64_t)cl->msg, 1ull);
	cl->recv_done = cl->recv_posted = 0;
	cl->recv_target = v[2] + 16;
	cl->t_start = w->now;
	cl->t_end = 0;
	cl->active = true;
	return 0;
}

static int
cmd_stop(struct dpr_worker *w, struct dpr_cmd *c)
{
	struct dpr_client *cl = w->client;

	if (cl == NULL) {
		dpr_cmd_str(c, "error", "setup first");
		return -EINVAL;
	}
	/* no more posts: the stream ends when what is in flight completes */
	if (cl->active)
		cl->count = cl->posted;
	return 0;
}

static int
cmd_status(struct dpr_worker *w, struct dpr_cmd *c)
{
	struct dpr_client *cl = w->client;
	uint64_t end, ns;

	if (cl == NULL) {
		dpr_cmd_str(c, "error", "setup first");
		return -EINVAL;
	}
	end = cl->active ? w->now : cl->t_end;
	ns = end > cl->t_start ? end - cl->t_start : 1;
	dpr_cmd_u64(c, "active", cl->active);
	dpr_cmd_str(c, "op", "%s", op_names[cl->op]);
	dpr_cmd_u64(c, "posted", cl->posted);
	dpr_cmd_u64(c, "completed", cl->completed);
	dpr_cmd_u64(c, "errors", cl->errors);
	dpr_cmd_u64(c, "first_error_status", cl->first_error);
	dpr_cmd_u64(c, "bytes", cl->bytes);
	dpr_cmd_u64(c, "elapsed_us", ns / 1000);
	dpr_cmd_u64(c, "msgs_per_s", cl->completed * 1000000000ull / ns);
	dpr_cmd_u64(c, "mbit_per_s", cl->bytes * 8000ull / ns);
	dpr_cmd_u64(c, "recv_done", cl->recv_done);
	dpr_cmd_u64(c, "recv_bytes", cl->recv_bytes);
	dpr_cmd_u64(c, "recv_errors", cl->recv_errors);
	dpr_cmd_u64(c, "qp_state", dpr_qp_get_state(cl->qp[cl->qp_i]));
	return 0;
}

/* Keep the stream and the receives going; read completions. */
bool
dpr_client_progress(struct dpr_worker *w)
{
	struct dpr_client *cl = w->client;
	struct dpr_cqe cqe[32];
	int n, i;

	while (cl->active && cl->posted < cl->count &&
	       cl->posted - cl->completed < cl->depth &&
	       (cl->op != C_PINGPONG || cl->posted < cl->pp_credit)) {
		struct dpr_sge sge = { cl->mr->iova + cl->loff, cl->msg, cl->mr->lkey };
		struct dpr_send_wr wr = {
			.wr_id = cl->posted, .sg_list = &sge, .num_sge = 1,
			.send_flags = DPR_SEND_SIGNALED,
			.imm_data = rte_cpu_to_be_32((uint32_t)cl->posted),
		}, *bad;
		static const enum dpr_wr_opcode wr_op[C_NUM] = {
			DPR_WR_SEND, DPR_WR_SEND_WITH_IMM, DPR_WR_RDMA_WRITE,
			DPR_WR_RDMA_WRITE_WITH_IMM, DPR_WR_RDMA_READ,
			DPR_WR_ATOMIC_FETCH_AND_ADD, DPR_WR_ATOMIC_CMP_AND_SWP,
			DPR_WR_SEND,
		};

		wr.opcode = wr_op[cl->op];
		if (cl->op >= C_FADD) {
			wr.wr.atomic.remote_addr = cl->rva;
			wr.wr.atomic.rkey = cl->rkey;
			/* fadd adds 1; cas moves k to k + 1 */
			wr.wr.atomic.compare_add = cl->op == C_FADD ? 1 : cl->posted;
			wr.wr.atomic.swap = cl->posted + 1;
		} else {
			wr.wr.rdma.remote_addr = cl->rva;
			wr.wr.rdma.rkey = cl->rkey;
		}
		if (cl->msg == 0)
			wr.num_sge = 0;
		if (dpr_post_send(cl->qp[cl->qp_i], &wr, &bad) != 0)
			break;
		cl->posted++;
	}
	while (cl->recv_posted < cl->recv_target &&
	       cl->recv_posted - cl->recv_done < 512) {
		struct dpr_sge sge = { cl->mr->iova + cl->recv_off, cl->recv_len,
				       cl->mr->lkey };
		struct dpr_recv_wr wr = { .wr_id = cl->recv_posted, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		if (dpr_post_recv(cl->qp[cl->recv_qp], &wr, &bad) != 0)
			break;
		cl->recv_posted++;
	}
	while ((n = dpr_cq_poll(cl->cq, cqe, RTE_DIM(cqe))) > 0) {
		for (i = 0; i < n; i++) {
			if (cqe[i].opcode & DPR_WC_RECV) {
				cl->recv_done++;
				if (cqe[i].status != DPR_WC_SUCCESS)
					cl->recv_errors++;
				else
					cl->recv_bytes += cqe[i].byte_len;
				/* ping-pong: each message received earns one back */
				if (cl->op == C_PINGPONG && cl->active)
					cl->pp_credit++;
				continue;
			}
			cl->completed++;
			if (cqe[i].status != DPR_WC_SUCCESS) {
				if (cl->errors++ == 0)
					cl->first_error = cqe[i].status;
			} else {
				cl->bytes += cqe[i].byte_len;
			}
		}
	}
	if (cl->active && cl->op == C_PINGPONG) {
		if ((cl->completed >= cl->count && cl->recv_done >= cl->count) ||
		    (cl->errors != 0 && cl->completed == cl->posted)) {
			cl->active = false;
			cl->t_end = w->now;
		}
	} else if (cl->active && (cl->completed >= cl->count ||
			   (cl->errors != 0 && cl->completed == cl->posted))) {
		cl->active = false;
		cl->t_end = w->now;
	}
	/* posted receives need no spinning: idle sleeps are short */
	return cl->active;
}

#define TEL_CMD(name) \
	static int \
	tel_ ## name(const char *cmd __rte_unused, const char *params, \
		     struct rte_tel_data *d) \
	{ \
		return dpr_engine_cmd(cmd_ ## name, params, d); \
	}
TEL_CMD(setup)
TEL_CMD(connect)
TEL_CMD(fill)
TEL_CMD(checksum)
TEL_CMD(read64)
TEL_CMD(recv)
TEL_CMD(run)
TEL_CMD(status)
TEL_CMD(stop)
TEL_CMD(pingpong)

void
dpr_client_register_telemetry(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	rte_telemetry_register_cmd("/dprdma/client/setup", tel_setup,
		"Built-in client: PD, CQ, MR, QPs. Parameters: QPS,MR_BYTES");
	rte_telemetry_register_cmd("/dprdma/client/connect", tel_connect,
		"Connect a client QP. Parameters: QP,RQPN,RPSN,RIPV4");
	rte_telemetry_register_cmd("/dprdma/client/fill", tel_fill,
		"Fill an MR region with a pattern. Parameters: OFF,LEN,SEED");
	rte_telemetry_register_cmd("/dprdma/client/checksum", tel_checksum,
		"CRC-32 of an MR region. Parameters: OFF,LEN");
	rte_telemetry_register_cmd("/dprdma/client/read64", tel_read64,
		"8 bytes of the MR. Parameter: OFF");
	rte_telemetry_register_cmd("/dprdma/client/recv", tel_recv,
		"Keep receives posted. Parameters: QP,COUNT,OFF,LEN");
	rte_telemetry_register_cmd("/dprdma/client/run", tel_run,
		"Start a stream. Parameters: QP,OP,SIZE,COUNT,LOFF,RVA,RKEY[,DEPTH]");
	rte_telemetry_register_cmd("/dprdma/client/pingpong", tel_pingpong,
		"Ping-pong as ibv_rc_pingpong. Parameters: QP,SIZE,COUNT,INITIATOR");
	rte_telemetry_register_cmd("/dprdma/client/stop", tel_stop,
		"End the stream once its work in flight completes. No parameters");
	rte_telemetry_register_cmd("/dprdma/client/status", tel_status,
		"Progress of the stream and the receives. No parameters");
}
