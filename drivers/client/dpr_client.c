/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The built-in test client: RDMA between dprdmad boxes without a client
 * process, driven over telemetry (tests, the demo, benchmarks). It creates
 * a PD, a CQ, QPs and one MR (hugepage memory when the EAL has hugepages)
 * on worker 0 and port 0, connects its QPs to a peer's, and runs streams
 * of SEND/WRITE/READ/atomics whose results are checked through checksums
 * of MR regions.
 *
 *   /dprdma/client/setup,QPS,MR_BYTES      -> gid, mr_va, rkey, qpns, psns
 *          (the lists when they fit a telemetry string: QPNs are random,
 *          about 14 do)
 *   /dprdma/client/qpns,FROM,COUNT         -> qpns, psns of QPs FROM..,
 *          as many of COUNT as fit, and how many (count)
 *   /dprdma/client/connect,QP,RQPN,RPSN,RIP
 *   /dprdma/client/connect_range,QP,COUNT,RQPN,RPSN,RPSN_STEP,RIP
 *          QPs QP..QP+COUNT-1 to RQPN+i, PSN RPSN+i*RPSN_STEP (dprdma-gen's)
 *   /dprdma/client/fill,OFF,LEN,SEED       -> crc32 of the region
 *   /dprdma/client/checksum,OFF,LEN        -> crc32
 *   /dprdma/client/read64,OFF              -> value
 *   /dprdma/client/recv,QP,COUNT,OFF,LEN   receives kept posted until COUNT
 *   /dprdma/client/run,QP,OP,SIZE,COUNT,LOFF,RVA,RKEY[,DEPTH]
 *          OP: send send_imm write write_imm read fadd cas
 *   /dprdma/client/pingpong,QP,SIZE,COUNT,INITIATOR
 *          as ibv_rc_pingpong: SENDs of SIZE answered one for one, COUNT
 *          each way; the initiator (1) sends first, like its client
 *   /dprdma/client/write_lat,QP,SIZE,COUNT,INITIATOR,RVA,RKEY
 *          as perftest's write_lat: WRITEs of SIZE (8 or more) into the
 *          peer's RVA, answered one for one, COUNT round trips; each side
 *          watches the upper half of its own MR, where RVA points on the
 *          other; status gives the initiator's lat_avg_ns, lat_p50_ns,
 *          lat_p99_ns (half the round trip, as perftest reports)
 *   /dprdma/client/stop                    ends the stream once in flight work is done
 *   /dprdma/client/status                  -> progress, errors, rates
 *
 * It plugs into the engine as the shim does: its streams move in a worker
 * hook (dpr_client_worker_poll), and its commands run on worker 0 between
 * two polls (dpr_engine_call), so the data path and these objects never
 * race. The engine knows nothing of it.
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

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_telemetry.h>

#include "dpr_client.h"
#include "dpr_engine.h"
#include "dpr_transport.h"
#include "dpr_verbs.h"
#include "dpr_wire.h"

/* QPs of the client: enough for dprdma-gen's many-connection benchmark
 * (their queues shrink as they grow in number: 64K WQEs in all, at least
 * 4 each; past the port's [limits] qps, setup fails) */
#define CLIENT_MAX_QPS 65536
/* A stream signals one WR in this many (perftest's --cq-mod, smaller: it
 * must stay under half of the depth) */
#define CLIENT_SIGNAL_EVERY 32
/* WRs of a stream posted in one call, at most */
#define CLIENT_POST_BATCH 16
#define CLIENT_MAX_MR (1ull << 30)

enum client_op { C_SEND, C_SEND_IMM, C_WRITE, C_WRITE_IMM, C_READ, C_FADD,
		 C_CAS, C_PINGPONG, C_WRITE_LAT, C_NUM };
static const char *const op_names[C_NUM] = {
	"send", "send_imm", "write", "write_imm", "read", "fadd", "cas",
	"pingpong", "write_lat",
};

struct dpr_client {
	uint64_t now;                 /**< the worker's clock at its last poll */
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
	/* one completion per `signal` WRs (perftest's CQ moderation): a
	 * completion's wr_id says how many are done, as WRs complete in
	 * order; errors and flushes complete every WR. The WR, made once. */
	uint32_t signal;
	uint64_t next_signal;         /**< posted + 1 of the next signaled WR */
	/* WRs posted a batch at a time (one dpr_post_send() call) */
	struct dpr_send_wr wr[CLIENT_POST_BATCH];
	uint64_t loff, rva;
	uint32_t rkey, depth;
	uint64_t t_start, t_end;
	/* ping-pong: sends allowed so far (one per message received) */
	uint64_t pp_credit;
	/* write_lat (as perftest's): the peer's WRITE lands in the upper half
	 * of the MR, its last 8 bytes the round's number; seen there, the
	 * answer goes back. The initiator keeps each round trip (ns). */
	bool lat_initiator;
	uint64_t lat_round;           /**< the round whose WRITE is awaited */
	uint64_t lat_t0;              /**< when the initiator sent it */
	uint32_t *lat_ns;
	uint64_t lat_n;
	/* receives */
	uint32_t recv_qp;
	uint64_t recv_target, recv_posted, recv_done, recv_bytes, recv_errors;
	uint64_t recv_off;
	uint32_t recv_len;
};

static void make_wr(struct dpr_client *cl);

/* ------------------------------------------------------------ commands */

/* One telemetry command: its parameters in, name/value pairs out. It runs
 * on worker 0 on a copy (dpr_engine_call), copied back when done. */
struct client_cmd {
	int (*fn)(struct client_cmd *c);
	char arg[256];
	unsigned int n_kv;
	struct {
		char name[32];
		bool is_str;
		uint64_t u;
		char s[192];
	} kv[32];
};

static void
cmd_u64(struct client_cmd *c, const char *name, uint64_t v)
{
	if (c->n_kv == RTE_DIM(c->kv))
		return;
	snprintf(c->kv[c->n_kv].name, sizeof(c->kv[0].name), "%s", name);
	c->kv[c->n_kv].is_str = false;
	c->kv[c->n_kv].u = v;
	c->n_kv++;
}

static void __rte_format_printf(3, 4)
cmd_str(struct client_cmd *c, const char *name, const char *fmt, ...)
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

static int
run_cmd(void *arg)
{
	struct client_cmd *c = arg;

	return c->fn(c);
}

/* Run @p fn on worker 0 with @p params; its results as a dict with "rc". */
static int
tel_cmd(int (*fn)(struct client_cmd *), const char *params, struct rte_tel_data *d)
{
	struct client_cmd *c = calloc(1, sizeof(*c));
	unsigned int i;
	int rc;

	if (c == NULL)
		return -ENOMEM;
	c->fn = fn;
	snprintf(c->arg, sizeof(c->arg), "%s", params ? params : "");
	/* 30 s: setting up a 64 MiB MR on a box whose worker shares its CPU
	 * took more than the 5 s this was (tools/demo.sh's box B, while
	 * a CI run used the machine: the answer came back empty) */
	rc = dpr_engine_call(0, run_cmd, c, sizeof(*c), 30000);
	if (rc == -ETIMEDOUT || rc == -EBUSY || rc == -ENODEV || rc == -ENOMEM) {
		free(c);
		return rc;      /* not run (or not yet): no answer to give */
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "rc", rc);
	for (i = 0; i < c->n_kv; i++) {
		if (c->kv[i].is_str)
			rte_tel_data_add_dict_string(d, c->kv[i].name, c->kv[i].s);
		else
			rte_tel_data_add_dict_u64(d, c->kv[i].name, c->kv[i].u);
	}
	free(c);
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

/* The client, on worker 0 (NULL before setup). */
static struct dpr_client *client;
static uint64_t client_now;        /* worker 0's clock, for a new client */

static void
client_destroy(void)
{
	struct dpr_client *cl = client;
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
	free(cl->lat_ns);
	free(cl);
	client = NULL;
}

/* The port's RoCE path MTU as an IB MTU enum. */
static enum dpr_mtu
port_mtu(const struct dpr_port_info *pi)
{
	unsigned int m = dpr_active_mtu(pi->mtu);

	return m >= 4096 ? DPR_MTU_4096 : m >= 2048 ? DPR_MTU_2048 :
		m >= 1024 ? DPR_MTU_1024 : m >= 512 ? DPR_MTU_512 : DPR_MTU_256;
}

/* Add the QPNs and first PSNs of client QPs @p from.. (at most @p count)
 * as two telemetry strings: @return how many fit. */
static uint32_t
list_qps(struct client_cmd *c, const struct dpr_client *cl, uint32_t from,
	 uint32_t count)
{
	char q[RTE_TEL_MAX_STRING_LEN], p[RTE_TEL_MAX_STRING_LEN];
	size_t uq = 0, up = 0;
	uint32_t i, n = 0;

	for (i = from; i < cl->n_qps && n < count; i++, n++) {
		char a[16], b[16];
		int la = snprintf(a, sizeof(a), "%s%u", n ? "," : "", dpr_qp_num(cl->qp[i]));
		int lb = snprintf(b, sizeof(b), "%s%u", n ? "," : "", cl->psn[i]);

		if (uq + (size_t)la >= sizeof(q) || up + (size_t)lb >= sizeof(p))
			break;
		memcpy(q + uq, a, (size_t)la + 1);
		memcpy(p + up, b, (size_t)lb + 1);
		uq += (size_t)la;
		up += (size_t)lb;
	}
	q[uq] = p[up] = '\0';
	cmd_str(c, "qpns", "%s", q);
	cmd_str(c, "psns", "%s", p);
	return n;
}

static int
cmd_setup(struct client_cmd *c)
{
	struct dpr_verbs_ctx *ctx = dpr_engine_verbs(0);
	struct dpr_port_info port;
	struct dpr_client *cl;
	char ip[INET_ADDRSTRLEN];
	uint64_t v[2];
	uint32_t i, depth;

	if (args(c->arg, v, 2) != 2 || v[0] == 0 || v[0] > CLIENT_MAX_QPS ||
	    v[1] < 4096 || v[1] > CLIENT_MAX_MR) {
		cmd_str(c, "error", "expected QPS (1-%d),MR_BYTES (4096-%llu)",
			    CLIENT_MAX_QPS, CLIENT_MAX_MR);
		return -EINVAL;
	}
	client_destroy();
	cl = calloc(1, sizeof(*cl));
	if (cl == NULL)
		return -ENOMEM;
	client = cl;
	cl->now = client_now;
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
	depth = 65536 / (uint32_t)v[0];
	depth = depth > 1024 ? 1024 : depth < 4 ? 4 : depth;
	for (i = 0; i < v[0]; i++) {
		struct dpr_qp_init_attr ia = {
			.qp_type = DPR_QPT_RC,
			.pd = cl->pd, .send_cq = cl->cq, .recv_cq = cl->cq,
			.max_send_wr = depth, .max_recv_wr = depth,
			.max_send_sge = 1, .max_recv_sge = 1, .max_inline_data = 64,
		};
		struct dpr_qp_attr a = { .qp_state = DPR_QPS_INIT, .port_num = 1,
					 .qp_access_flags = DPR_ACCESS_ALL };

		cl->qp[i] = dpr_qp_create(dpr_engine_transport(0, 0), &ia);
		if (cl->qp[i] == NULL)
			goto nomem;
		cl->n_qps++;
		dpr_qp_modify(cl->qp[i], &a, DPR_QP_STATE | DPR_QP_PKEY_INDEX |
			      DPR_QP_PORT | DPR_QP_ACCESS_FLAGS);
		cl->psn[i] = arc4random() & DPR_PSN_MASK;
	}
	dpr_engine_port_info(0, &port);
	inet_ntop(AF_INET, &port.ip, ip, sizeof(ip));
	cmd_str(c, "gid_ipv4", "%s", ip);
	cmd_u64(c, "mr_va", cl->mr->iova);
	cmd_u64(c, "rkey", cl->mr->rkey);
	cmd_u64(c, "mr_size", cl->size);
	/* (lists cut short by a telemetry string are left out: qpns) */
	if (list_qps(c, cl, 0, cl->n_qps) < cl->n_qps)
		c->n_kv -= 2;
	return 0;
nomem:
	client_destroy();
	cmd_str(c, "error", "out of memory: fewer QPs or a smaller MR");
	return -ENOMEM;
}

static int
cmd_qpns(struct client_cmd *c)
{
	struct dpr_client *cl = client;
	uint64_t v[2];

	if (cl == NULL || args(c->arg, v, 2) != 2 || v[0] >= cl->n_qps ||
	    v[1] == 0) {
		cmd_str(c, "error", "expected FROM,COUNT after setup");
		return -EINVAL;
	}
	cmd_u64(c, "count", list_qps(c, cl, (uint32_t)v[0],
				     (uint32_t)RTE_MIN(v[1], (uint64_t)UINT32_MAX)));
	return 0;
}

/* Client QP @p qi to RTR and RTS against QP @p rqpn of @p ip, whose first
 * PSN is @p rpsn. */
static int
connect_qp(struct client_cmd *c, struct dpr_client *cl, uint32_t qi,
	   uint32_t rqpn, uint32_t rpsn, const struct in_addr *ip)
{
	struct dpr_port_info port;
	struct dpr_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = DPR_QPS_RTR;
	dpr_engine_port_info(0, &port);
	a.path_mtu = port_mtu(&port);
	a.dest_qp_num = rqpn;
	a.rq_psn = rpsn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	dpr_gid_from_ipv4(&a.ah_attr.dgid, ip->s_addr);
	a.ah_attr.sgid_index = 1;
	rc = dpr_qp_modify(cl->qp[qi], &a, DPR_QP_STATE | DPR_QP_AV |
			   DPR_QP_PATH_MTU | DPR_QP_DEST_QPN | DPR_QP_RQ_PSN |
			   DPR_QP_MAX_DEST_RD_ATOMIC | DPR_QP_MIN_RNR_TIMER);
	if (rc != 0)
		return rc;
	a.qp_state = DPR_QPS_RTS;
	a.sq_psn = cl->psn[qi];
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	rc = dpr_qp_modify(cl->qp[qi], &a, DPR_QP_STATE | DPR_QP_TIMEOUT |
			   DPR_QP_RETRY_CNT | DPR_QP_RNR_RETRY | DPR_QP_SQ_PSN |
			   DPR_QP_MAX_QP_RD_ATOMIC);
	if (rc == 0 && c != NULL)
		cmd_u64(c, "path_mtu", dpr_mtu_bytes(a.path_mtu));
	return rc;
}

static int
cmd_connect(struct client_cmd *c)
{
	struct dpr_client *cl = client;
	struct in_addr ip;
	char *comma;
	uint64_t v[3];

	comma = strrchr(c->arg, ',');
	if (cl == NULL || comma == NULL || args(c->arg, v, 3) != 3 ||
	    v[0] >= cl->n_qps || inet_pton(AF_INET, comma + 1, &ip) != 1) {
		cmd_str(c, "error", "expected QP,RQPN,RPSN,RIPV4 after setup");
		return -EINVAL;
	}
	return connect_qp(c, cl, (uint32_t)v[0], (uint32_t)v[1], (uint32_t)v[2], &ip);
}

static int
cmd_connect_range(struct client_cmd *c)
{
	struct dpr_client *cl = client;
	struct in_addr ip;
	char *comma;
	uint64_t v[5];
	uint32_t i;
	int rc;

	comma = strrchr(c->arg, ',');
	if (cl == NULL || comma == NULL || args(c->arg, v, 5) != 5 ||
	    v[1] == 0 || v[0] >= cl->n_qps || v[1] > cl->n_qps - v[0] ||
	    inet_pton(AF_INET, comma + 1, &ip) != 1) {
		cmd_str(c, "error", "expected QP,COUNT,RQPN,RPSN,RPSN_STEP,RIPV4 "
			    "after setup");
		return -EINVAL;
	}
	for (i = 0; i < v[1]; i++) {
		rc = connect_qp(i == 0 ? c : NULL, cl, (uint32_t)(v[0] + i),
				(uint32_t)(v[2] + i) & DPR_PSN_MASK,
				(uint32_t)(v[3] + i * v[4]) & DPR_PSN_MASK, &ip);
		if (rc != 0)
			return rc;
	}
	return 0;
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
cmd_fill(struct client_cmd *c)
{
	struct dpr_client *cl = client;
	uint64_t v[3];

	if (args(c->arg, v, 3) != 3 || !region_ok(cl, v[0], v[1])) {
		cmd_str(c, "error", "expected OFF,LEN,SEED inside the MR");
		return -EINVAL;
	}
	pattern(cl->buf + v[0], v[1], v[2]);
	cmd_u64(c, "crc32", dpr_icrc_update(0, cl->buf + v[0], v[1]));
	return 0;
}

static int
cmd_checksum(struct client_cmd *c)
{
	struct dpr_client *cl = client;
	uint64_t v[2];

	if (args(c->arg, v, 2) != 2 || !region_ok(cl, v[0], v[1])) {
		cmd_str(c, "error", "expected OFF,LEN inside the MR");
		return -EINVAL;
	}
	cmd_u64(c, "crc32", dpr_icrc_update(0, cl->buf + v[0], v[1]));
	return 0;
}

static int
cmd_read64(struct client_cmd *c)
{
	struct dpr_client *cl = client;
	uint64_t v[1], x;

	if (args(c->arg, v, 1) != 1 || !region_ok(cl, v[0], 8)) {
		cmd_str(c, "error", "expected OFF inside the MR");
		return -EINVAL;
	}
	memcpy(&x, cl->buf + v[0], 8);
	cmd_u64(c, "value", x);
	return 0;
}

static int
cmd_recv(struct client_cmd *c)
{
	struct dpr_client *cl = client;
	uint64_t v[4];

	if (args(c->arg, v, 4) != 4 || cl == NULL || v[0] >= cl->n_qps ||
	    !region_ok(cl, v[2], v[3]) || v[3] > UINT32_MAX) {
		cmd_str(c, "error", "expected QP,COUNT,OFF,LEN after setup");
		return -EINVAL;
	}
	cl->recv_qp = (uint32_t)v[0];
	cl->recv_target += v[1];
	cl->recv_off = v[2];
	cl->recv_len = (uint32_t)v[3];
	return 0;
}

/* A stream of @p op on client QP @p qp starts: @p count messages of
 * @p msg bytes, at most @p depth outstanding, one in @p signal signaled. */
static void
stream_start(struct dpr_client *cl, uint64_t qp, int op, uint64_t msg,
	     uint64_t count, uint32_t depth, uint32_t signal)
{
	cl->qp_i = (uint32_t)qp;
	cl->op = op;
	cl->msg = (uint32_t)msg;
	cl->count = count;
	cl->depth = depth;
	cl->signal = signal;
	make_wr(cl);
	cl->posted = cl->completed = cl->errors = cl->bytes = 0;
	cl->next_signal = cl->signal;
	cl->first_error = 0;
	cl->t_start = cl->now;
	cl->t_end = 0;
	cl->active = true;
}

static int
cmd_run(struct client_cmd *c)
{
	struct dpr_client *cl = client;
	char opname[16];
	uint64_t v[8];
	const char *p = c->arg;
	uint32_t depth, signal;
	int op, n;

	/* QP,OP,SIZE,COUNT,LOFF,RVA,RKEY[,DEPTH] */
	if (cl == NULL || cl->active) {
		cmd_str(c, "error", cl ? "a stream is running" : "setup first");
		return cl ? -EBUSY : -EINVAL;
	}
	v[0] = strtoull(p, (char **)&p, 0);
	if (*p++ != ',' || sscanf(p, "%15[a-z_]", opname) != 1)
		goto bad;
	p += strlen(opname);
	/* (streams only: pingpong and write_lat have their commands) */
	for (op = 0; op < C_PINGPONG; op++)
		if (strcmp(op_names[op], opname) == 0)
			break;
	if (op == C_PINGPONG || *p != ',')
		goto bad;
	n = (int)args(p + 1, v + 1, 7);
	if (n < 5 || v[0] >= cl->n_qps || v[1] > (1u << 30) ||
	    (op >= C_FADD && v[1] != 8) || !region_ok(cl, v[3], v[1]))
		goto bad;
	cl->loff = v[3];
	cl->rva = v[4];
	cl->rkey = (uint32_t)v[5];
	depth = n >= 6 && v[6] ? (uint32_t)RTE_MIN(v[6], 512ull) : 64;
	if (op == C_CAS)
		depth = 1;               /* each CAS expects the previous result */
	/* a completion at least every half of the depth keeps it full */
	signal = depth / 2 < CLIENT_SIGNAL_EVERY ? depth / 2 : CLIENT_SIGNAL_EVERY;
	if (signal == 0)
		signal = 1;
	stream_start(cl, v[0], op, v[1], v[2], depth, signal);
	cl->active = cl->count > 0;
	return 0;
bad:
	cmd_str(c, "error", "expected QP,OP,SIZE,COUNT,LOFF,RVA,RKEY[,DEPTH]; "
		    "OP one of send send_imm write write_imm read fadd cas; "
		    "atomics take SIZE 8");
	return -EINVAL;
}

static int
cmd_pingpong(struct client_cmd *c)
{
	struct dpr_client *cl = client;
	uint64_t v[4];

	if (cl == NULL || cl->active || args(c->arg, v, 4) != 4 ||
	    v[0] >= cl->n_qps || v[1] > cl->size / 2 || v[2] == 0) {
		cmd_str(c, "error", "expected QP,SIZE,COUNT,INITIATOR after "
			    "setup, no stream running");
		return -EINVAL;
	}
	cl->loff = 0;
	cl->pp_credit = v[3] ? 1 : 0;   /* the initiator speaks first */
	/* receives into the upper half of the MR, kept posted */
	cl->recv_qp = (uint32_t)v[0];
	cl->recv_off = cl->size / 2;
	cl->recv_len = (uint32_t)RTE_MAX(v[1], 1ull);
	cl->recv_done = cl->recv_posted = 0;
	cl->recv_target = v[2] + 16;
	stream_start(cl, v[0], C_PINGPONG, v[1], v[2], 1, 1);
	return 0;
}

static int
cmd_write_lat(struct client_cmd *c)
{
	struct dpr_client *cl = client;
	uint64_t v[6];

	if (cl == NULL || cl->active || args(c->arg, v, 6) != 6 ||
	    v[0] >= cl->n_qps || v[1] < 8 || v[1] > cl->size / 2 || v[2] == 0 ||
	    v[2] > 10000000) {
		cmd_str(c, "error", "expected QP,SIZE (8 or more),COUNT,INITIATOR,"
			    "RVA,RKEY after setup, no stream running");
		return -EINVAL;
	}
	free(cl->lat_ns);
	cl->lat_ns = v[3] ? malloc(v[2] * sizeof(*cl->lat_ns)) : NULL;
	if (v[3] && cl->lat_ns == NULL)
		return -ENOMEM;
	cl->loff = 0;
	cl->rva = v[4];
	cl->rkey = (uint32_t)v[5];
	cl->lat_initiator = v[3] != 0;
	cl->lat_round = 1;
	cl->lat_n = 0;
	/* nothing of an earlier run left where the peer's WRITEs land */
	memset(cl->buf + cl->size / 2, 0, v[1]);
	stream_start(cl, v[0], C_WRITE_LAT, v[1], v[2], 1, 1);
	return 0;
}

static int
cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int
cmd_stop(struct client_cmd *c)
{
	struct dpr_client *cl = client;

	if (cl == NULL) {
		cmd_str(c, "error", "setup first");
		return -EINVAL;
	}
	/* no more posts than up to the next signaled one: the stream ends
	 * when that completes */
	if (cl->active)
		cl->count = RTE_MIN(cl->count, RTE_ALIGN_CEIL(cl->posted,
							      (uint64_t)cl->signal));
	return 0;
}

static int
cmd_status(struct client_cmd *c)
{
	struct dpr_client *cl = client;
	uint64_t end, ns;

	if (cl == NULL) {
		cmd_str(c, "error", "setup first");
		return -EINVAL;
	}
	end = cl->active ? cl->now : cl->t_end;
	ns = end > cl->t_start ? end - cl->t_start : 1;
	cmd_u64(c, "active", cl->active);
	cmd_str(c, "op", "%s", op_names[cl->op]);
	cmd_u64(c, "posted", cl->posted);
	cmd_u64(c, "completed", cl->completed);
	cmd_u64(c, "errors", cl->errors);
	cmd_u64(c, "first_error_status", cl->first_error);
	cmd_u64(c, "bytes", cl->bytes);
	cmd_u64(c, "elapsed_us", ns / 1000);
	cmd_u64(c, "msgs_per_s", cl->completed * 1000000000ull / ns);
	cmd_u64(c, "mbit_per_s", cl->bytes * 8000ull / ns);
	cmd_u64(c, "recv_done", cl->recv_done);
	cmd_u64(c, "recv_bytes", cl->recv_bytes);
	cmd_u64(c, "recv_errors", cl->recv_errors);
	cmd_u64(c, "qp_state", dpr_qp_get_state(cl->qp[cl->qp_i]));
	if (cl->op == C_WRITE_LAT && cl->lat_initiator) {
		uint64_t sum = 0, i;

		cmd_u64(c, "lat_samples", cl->lat_n);
		if (!cl->active && cl->lat_n != 0) {
			qsort(cl->lat_ns, cl->lat_n, sizeof(cl->lat_ns[0]), cmp_u32);
			for (i = 0; i < cl->lat_n; i++)
				sum += cl->lat_ns[i];
			/* half the round trip, as perftest's write_lat */
			cmd_u64(c, "lat_avg_ns", sum / cl->lat_n / 2);
			cmd_u64(c, "lat_p50_ns", cl->lat_ns[cl->lat_n / 2] / 2);
			cmd_u64(c, "lat_p99_ns", cl->lat_ns[cl->lat_n * 99 / 100] / 2);
		}
	}
	return 0;
}

/* The stream's work request, the same for every message but for its id,
 * flags, immediate and atomic operands. */
static void
make_wr(struct dpr_client *cl)
{
	static const enum dpr_wr_opcode wr_op[C_NUM] = {
		DPR_WR_SEND, DPR_WR_SEND_WITH_IMM, DPR_WR_RDMA_WRITE,
		DPR_WR_RDMA_WRITE_WITH_IMM, DPR_WR_RDMA_READ,
		DPR_WR_ATOMIC_FETCH_AND_ADD, DPR_WR_ATOMIC_CMP_AND_SWP,
		DPR_WR_SEND, DPR_WR_RDMA_WRITE,
	};

	memset(&cl->wr[0], 0, sizeof(cl->wr[0]));
	cl->wr[0].opcode = wr_op[cl->op];
	cl->wr[0].num_sge = cl->msg != 0;
	cl->wr[0].remote_addr = cl->rva;
	cl->wr[0].rkey = cl->rkey;
	cl->wr[0].sge[0] = (struct dpr_sge){ cl->mr->iova + cl->loff, cl->msg,
					     cl->mr->lkey };
	for (unsigned int i = 1; i < RTE_DIM(cl->wr); i++)
		cl->wr[i] = cl->wr[0];
}

/* One WRITE of write_lat's round @p round into the peer (its last 8
 * bytes the round's number). */
static void
write_lat_send(struct dpr_client *cl, uint64_t round)
{
	struct dpr_send_wr *wr = &cl->wr[0];

	memcpy(cl->buf + cl->msg - 8, &round, 8);
	wr->wr_id = cl->posted;
	wr->send_flags = DPR_SEND_SIGNALED;
	if (dpr_post_send(cl->qp[cl->qp_i], wr, 1, NULL) != 0) {
		if (cl->errors++ == 0)
			cl->first_error = DPR_WC_GENERAL_ERR;
		return;
	}
	cl->posted++;
}

/* write_lat: the initiator starts round 1; whoever sees the round it
 * awaits land answers it (the initiator with the next one, timed). */
static void
write_lat_poll(struct dpr_client *cl)
{
	uint64_t seen;

	if (cl->lat_initiator && cl->posted == 0) {
		cl->lat_t0 = dpr_engine_now_ns();
		write_lat_send(cl, 1);
		return;
	}
	memcpy(&seen, cl->buf + cl->size / 2 + cl->msg - 8, 8);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (seen != cl->lat_round || cl->lat_round > cl->count)
		return;
	if (cl->lat_initiator) {
		uint64_t now = dpr_engine_now_ns();

		cl->lat_ns[cl->lat_n++] = (uint32_t)RTE_MIN(now - cl->lat_t0,
							    (uint64_t)UINT32_MAX);
		cl->lat_round++;
		cl->bytes += cl->msg;
		if (cl->lat_round <= cl->count) {
			cl->lat_t0 = now;
			write_lat_send(cl, cl->lat_round);
		}
		return;
	}
	write_lat_send(cl, cl->lat_round);
	cl->bytes += cl->msg;
	cl->lat_round++;
}

/* Keep the stream and the receives going; read completions (worker 0's
 * hook). */
bool
dpr_client_worker_poll(void *arg __rte_unused, unsigned int worker,
		       uint64_t now_ns)
{
	struct dpr_client *cl = client;
	struct dpr_cqe cqe[32];
	int n, i;

	if (worker != 0)
		return false;
	client_now = now_ns;
	if (cl == NULL)
		return false;
	cl->now = now_ns;

	if (cl->active && cl->op == C_WRITE_LAT)
		write_lat_poll(cl);
	while (cl->active && cl->op != C_WRITE_LAT && cl->posted < cl->count &&
	       cl->posted - cl->completed < cl->depth &&
	       (cl->op != C_PINGPONG || cl->posted < cl->pp_credit)) {
		uint64_t k, nb = RTE_MIN(cl->count - cl->posted,
					cl->depth - (cl->posted - cl->completed));
		unsigned int done = 0;
		/* (in locals: the stores into cl->wr[] would otherwise have
		 * the compiler read cl's fields again for every request) */
		const uint64_t base = cl->posted, count = cl->count, signal = cl->signal;
		const bool operands = cl->op >= C_FADD, fadd = cl->op == C_FADD;
		uint64_t next_signal = cl->next_signal;

		if (cl->op == C_PINGPONG)
			nb = RTE_MIN(nb, cl->pp_credit - cl->posted);
		nb = RTE_MIN(nb, (uint64_t)RTE_DIM(cl->wr));
		for (k = 0; k < nb; k++) {
			struct dpr_send_wr *wr = &cl->wr[k];

			wr->wr_id = base + k;
			wr->send_flags = 0;
			wr->imm_data = rte_cpu_to_be_32((uint32_t)(base + k));
		}
		/* signaled: one in `signal`, and the last */
		for (; next_signal - 1 - base < nb; next_signal += signal)
			cl->wr[next_signal - 1 - base].send_flags = DPR_SEND_SIGNALED;
		if (count - 1 - base < nb)
			cl->wr[count - 1 - base].send_flags = DPR_SEND_SIGNALED;
		cl->next_signal = next_signal;
		for (k = 0; operands && k < nb; k++) {
			/* fadd adds 1; cas moves k to k + 1 */
			cl->wr[k].compare_add = fadd ? 1 : base + k;
			cl->wr[k].swap = base + k + 1;
		}
		dpr_post_send(cl->qp[cl->qp_i], cl->wr, (unsigned int)nb, &done);
		cl->posted += done;
		if (done < nb) {
			/* (the signal marks past the refused ones go again) */
			cl->next_signal = (cl->posted / cl->signal + 1) * cl->signal;
			break;
		}
	}
	while (cl->recv_posted < cl->recv_target &&
	       cl->recv_posted - cl->recv_done < 512) {
		struct dpr_recv_wr wr = {
			.wr_id = cl->recv_posted, .num_sge = 1,
			.sge[0] = { cl->mr->iova + cl->recv_off, cl->recv_len,
				    cl->mr->lkey },
		};

		if (dpr_post_recv(cl->qp[cl->recv_qp], &wr, 1, NULL) != 0)
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
			/* every WR up to this one is done (in order) */
			cl->completed = cqe[i].wr_id + 1;
			if (cqe[i].status != DPR_WC_SUCCESS) {
				if (cl->errors++ == 0)
					cl->first_error = cqe[i].status;
			}
			cl->bytes = (cl->completed - cl->errors) * cl->msg;
		}
	}
	if (cl->active && cl->op == C_WRITE_LAT) {
		if ((cl->lat_round > cl->count && cl->completed == cl->posted) ||
		    cl->errors != 0) {
			cl->active = false;
			cl->t_end = cl->now;
		}
	} else if (cl->active && cl->op == C_PINGPONG) {
		if ((cl->completed >= cl->count && cl->recv_done >= cl->count) ||
		    (cl->errors != 0 && cl->completed == cl->posted)) {
			cl->active = false;
			cl->t_end = cl->now;
		}
	} else if (cl->active && (cl->completed >= cl->count ||
			   (cl->errors != 0 && cl->completed == cl->posted))) {
		cl->active = false;
		cl->t_end = cl->now;
	}
	/* posted receives need no spinning: idle sleeps are short */
	return cl->active;
}

#define TEL_CMD(name) \
	static int \
	tel_ ## name(const char *cmd __rte_unused, const char *params, \
		     struct rte_tel_data *d) \
	{ \
		return tel_cmd(cmd_ ## name, params, d); \
	}
TEL_CMD(setup)
TEL_CMD(qpns)
TEL_CMD(connect)
TEL_CMD(connect_range)
TEL_CMD(fill)
TEL_CMD(checksum)
TEL_CMD(read64)
TEL_CMD(recv)
TEL_CMD(run)
TEL_CMD(status)
TEL_CMD(stop)
TEL_CMD(pingpong)
TEL_CMD(write_lat)

void
dpr_client_register_telemetry(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	rte_telemetry_register_cmd("/dprdma/client/setup", tel_setup,
		"Built-in client: PD, CQ, MR, QPs. Parameters: QPS,MR_BYTES");
	rte_telemetry_register_cmd("/dprdma/client/qpns", tel_qpns,
		"QPNs and first PSNs of client QPs, as many as fit. "
		"Parameters: FROM,COUNT");
	rte_telemetry_register_cmd("/dprdma/client/connect", tel_connect,
		"Connect a client QP. Parameters: QP,RQPN,RPSN,RIPV4");
	rte_telemetry_register_cmd("/dprdma/client/connect_range", tel_connect_range,
		"Connect COUNT client QPs from QP to RQPN+i with PSN RPSN+i*STEP. "
		"Parameters: QP,COUNT,RQPN,RPSN,RPSN_STEP,RIPV4");
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
	rte_telemetry_register_cmd("/dprdma/client/write_lat", tel_write_lat,
		"WRITE ping-pong as perftest's write_lat. Parameters: "
		"QP,SIZE,COUNT,INITIATOR,RVA,RKEY");
	rte_telemetry_register_cmd("/dprdma/client/stop", tel_stop,
		"End the stream once its work in flight completes. No parameters");
	rte_telemetry_register_cmd("/dprdma/client/status", tel_status,
		"Progress of the stream and the receives. No parameters");
}

static int
job_destroy(void *arg __rte_unused)
{
	client_destroy();
	return 0;
}

void
dpr_client_stop(void)
{
	if (dpr_engine_n_workers() > 0)
		dpr_engine_run_on(0, job_destroy, NULL);
}
