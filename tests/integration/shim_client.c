/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdma-shim-test: a libdprdma client for the shim tests. One process
 * opens a context on each of two daemons (A and B, joined by a link) and
 * connects a QP of each to the other, so that both ends of every
 * operation are checked here.
 *
 *   ops SOCK_A SOCK_B [events]      every RC operation, data checked
 *   isolation SOCK_A SOCK_B         keys of another client, missing access
 *   overflow SOCK_A SOCK_B          a CQ not consumed: CQ_ERR, QP to ERR
 *   stream SOCK_A SOCK_B SECONDS    WRITE/READ/SEND loop, checked, until
 *                                   SECONDS pass (the healthy client)
 *   victim SOCK_A SOCK_B            posts and streams WRITEs into its
 *                                   memory on A until killed
 *   bench SOCK SECONDS SIZE DEPTH   two QPs on one daemon (looped back),
 *                                   WRITEs DEPTH deep: messages/s (JSON)
 *   exhaust SOCK                    contexts and QPs until the daemon's
 *                                   limits refuse them (see do_exhaust)
 *   many SOCK N                     two clients of one daemon, N QPs each,
 *                                   QP i of one connected to QP i of the
 *                                   other (looped back): a WRITE each way
 *                                   on every pair, data checked; JSON
 *                                   timings on stdout (see do_many)
 *   target SOCK PEER_IP NQP RQPN0 RPSN
 *                                   MRs of every kind between canary pages
 *                                   and NQP QPs connected to a peer on the
 *                                   wire (QP i to RQPN0 + i, expecting
 *                                   RPSN); JSON on stdout, then commands on
 *                                   stdin (see do_target)
 *
 * Exit status 0 when every check passed; each failure prints a line.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "dprdma.h"

/* ibv values (the ABI carries them as they are) */
enum { WR_WRITE = 0, WR_WRITE_IMM = 1, WR_SEND = 2, WR_SEND_IMM = 3,
       WR_READ = 4, WR_CAS = 5, WR_FADD = 6 };
enum { F_SIGNALED = 2, F_INLINE = 8 };
enum { WC_SEND = 0, WC_WRITE = 1, WC_READ = 2, WC_CAS = 3, WC_FADD = 4,
       WC_RECV = 128, WC_RECV_IMM = 129 };
enum { ACC_ALL = 15, ACC_LOCAL = 1 };

#define BUF (4u << 20)

static int failures;
static bool use_events;
static int cq_entries = 256;
static volatile sig_atomic_t stop;

static void
on_sigint(int sig)
{
	(void)sig;
	stop = 1;
}

#define CHECK(c, ...) do { if (!(c)) { failures++; \
	printf("FAIL %s:%d: ", __func__, __LINE__); printf(__VA_ARGS__); \
	printf("\n"); fflush(stdout); } } while (0)

struct side {
	struct dprdma_context *ctx;
	struct dprdma_srq *srq;         /* with_srq: the QP receives from it */
	struct dprdma_pd *pd;
	struct dprdma_channel *ch;
	struct dprdma_cq *cq;
	struct dprdma_qp *qp;
	uint8_t *buf;
	struct dprdma_mr *mr;
	struct dpr_shm_port port;
};

static void
die(const char *what)
{
	printf("FAIL: %s: %s\n", what, strerror(errno));
	exit(1);
}

static bool with_srq;            /* side A's QP on an SRQ */

static void
side_open(struct side *s, const char *sock, bool alloc)
{
	struct dprdma_qp_init init = { 0 };

	s->ctx = dprdma_open_at(sock, 0);
	if (s->ctx == NULL)
		die(sock);
	dprdma_query_port(s->ctx, &s->port);
	s->pd = dprdma_alloc_pd(s->ctx);
	if (s->pd == NULL)
		die("alloc_pd");
	if (use_events) {
		s->ch = dprdma_create_channel(s->ctx);
		if (s->ch == NULL)
			die("create_channel");
	}
	s->cq = dprdma_create_cq(s->ctx, cq_entries, s->ch);
	if (s->cq == NULL)
		die("create_cq");
	/* A's buffer from malloc (made shared at registration), B's from
	 * the allocator (shared from the start) */
	s->buf = alloc ? dprdma_alloc(s->ctx, BUF) : malloc(BUF);
	if (s->buf == NULL)
		die("buffer");
	memset(s->buf, 0, BUF);
	s->mr = dprdma_reg_mr(s->pd, s->buf, BUF, (uintptr_t)s->buf, ACC_ALL);
	if (s->mr == NULL)
		die("reg_mr");
	init.send_cq = s->cq;
	init.recv_cq = s->cq;
	init.qp_type = 2;
	init.cap.max_send_wr = 128;
	init.cap.max_recv_wr = 128;
	init.cap.max_send_sge = 4;
	init.cap.max_recv_sge = 4;
	init.cap.max_inline_data = 64;
	if (with_srq && !alloc) {
		s->srq = dprdma_create_srq(s->pd, 16, 1, 0);
		if (s->srq == NULL)
			die("create_srq");
		init.srq = s->srq;
	}
	s->qp = dprdma_create_qp(s->pd, &init);
	if (s->qp == NULL)
		die("create_qp");
}

/* INIT -> RTR -> RTS towards dqpn at dgid; remote write, read, atomic;
 * @p resources READs and atomics outstanding each way */
static void
connect_to(struct dprdma_qp *qp, const struct dpr_shm_gid *dgid, uint32_t dqpn,
	   uint32_t psn, uint32_t rpsn, uint8_t resources)
{
	struct dpr_shm_qp_attr a, b;

	memset(&a, 0, sizeof(a));
	a.qp_state = 1;         /* INIT */
	a.port_num = 1;
	a.qp_access_flags = 14; /* remote write, read, atomic */
	if (dprdma_modify_qp(qp, &a, 1 | 16 | 32 | 8) != 0)
		die("modify INIT");
	a.qp_state = 2;         /* RTR */
	a.path_mtu = 3;         /* 1024 */
	a.dest_qp_num = dqpn;
	a.rq_psn = rpsn;
	a.max_dest_rd_atomic = resources;
	a.min_rnr_timer = 12;
	a.dgid = *dgid;
	a.sgid_index = 1;
	a.hop_limit = 64;
	a.is_global = 1;
	b = a;
	b.qp_state = 3;         /* RTS */
	b.sq_psn = psn;
	b.timeout = 14;
	b.retry_cnt = 7;
	b.rnr_retry = 7;
	b.max_rd_atomic = resources;
	/* both moves in one request, as the drop-in librdmacm makes them */
	if (dprdma_modify_qp2(qp, &a, 1 | 128 | 256 | 4096 | 1048576 | 131072 | 32768,
			      &b, 1 | 512 | 1024 | 2048 | 65536 | 8192) != 0)
		die("modify RTR, RTS");
}

/* Two moves in one request whose second is refused (RTR -> RTR): an
 * error, and the QP where the first move put it, as two calls leave it. */
static void
check_two_moves(struct side *s, const struct side *peer)
{
	struct dprdma_qp_init init = { .send_cq = s->cq, .recv_cq = s->cq, .qp_type = 2,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct dprdma_qp *qp = dprdma_create_qp(s->pd, &init);
	struct dpr_shm_qp_attr a, b, now;
	int rc;

	if (qp == NULL)
		die("create_qp");
	memset(&a, 0, sizeof(a));
	a.qp_state = 1;         /* INIT */
	a.port_num = 1;
	a.qp_access_flags = 14;
	if (dprdma_modify_qp(qp, &a, 1 | 16 | 32 | 8) != 0)
		die("modify INIT");
	a.qp_state = 2;         /* RTR */
	a.path_mtu = 3;
	a.dest_qp_num = dprdma_qp_num(peer->qp);
	a.rq_psn = 7;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.dgid = peer->port.gid[1];
	a.sgid_index = 1;
	a.hop_limit = 64;
	a.is_global = 1;
	b = a;                  /* RTR again: no such move */
	rc = dprdma_modify_qp2(qp, &a, 1 | 128 | 256 | 4096 | 1048576 | 131072 | 32768,
			       &b, 1 | 128 | 256 | 4096 | 1048576 | 131072 | 32768);
	CHECK(rc != 0, "two moves whose second is RTR -> RTR: refused (%d)", rc);
	CHECK(dprdma_query_qp(qp, &now, NULL) == 0 && now.qp_state == 2 &&
	      dprdma_qp_state(qp) == 2,
	      "the QP where the first move put it: RTR (daemon %u, library %u)",
	      now.qp_state, dprdma_qp_state(qp));
	if (dprdma_destroy_qp(qp) != 0)
		die("destroy_qp");
}

static void
connect_qp(struct side *s, const struct side *peer, uint32_t psn, uint32_t rpsn)
{
	connect_to(s->qp, &peer->port.gid[1], dprdma_qp_num(peer->qp), psn, rpsn,
		   16);
}

static void
pair_open(struct side *a, struct side *b, const char *sa, const char *sb)
{
	side_open(a, sa, false);
	side_open(b, sb, true);
	connect_qp(a, b, 100, 2000);
	connect_qp(b, a, 2000, 100);
}

static void
pair_close(struct side *a, struct side *b)
{
	struct side *s[2] = { a, b };

	for (int i = 0; i < 2; i++) {
		CHECK(dprdma_destroy_qp(s[i]->qp) == 0, "destroy_qp");
		if (s[i]->srq != NULL)
			CHECK(dprdma_destroy_srq(s[i]->srq) == 0, "destroy_srq");
		CHECK(dprdma_dereg_mr(s[i]->mr) == 0, "dereg_mr");
		CHECK(dprdma_destroy_cq(s[i]->cq) == 0, "destroy_cq");
		if (s[i]->ch != NULL)
			CHECK(dprdma_destroy_channel(s[i]->ch) == 0, "destroy_channel");
		CHECK(dprdma_dealloc_pd(s[i]->pd) == 0, "dealloc_pd");
		if (i == 1)
			dprdma_free(s[i]->ctx, s[i]->buf);
		else
			free(s[i]->buf);
		dprdma_close(s[i]->ctx);
	}
}

/* One completion, waiting up to 10 s (by the channel in event mode). */
static bool
wait_wc(struct side *s, dprdma_wc *wc)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = dprdma_poll_cq(s->cq, 1, wc);

		if (n == 1)
			return true;
		if (n < 0) {
			printf("FAIL: CQ overflowed\n");
			failures++;
			return false;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 10) {
			printf("FAIL: no completion in 10 s\n");
			failures++;
			return false;
		}
		if (use_events) {
			struct pollfd pf = { .fd = dprdma_channel_fd(s->ch),
					     .events = POLLIN };

			/* arm, look again (a completion may have come in
			 * between), then sleep on the channel */
			dprdma_req_notify_cq(s->cq, 0);
			n = dprdma_poll_cq(s->cq, 1, wc);
			if (n == 1)
				return true;
			if (poll(&pf, 1, 1000) == 1) {
				struct dprdma_cq *cq = dprdma_get_cq_event(s->ch);

				CHECK(cq == s->cq, "the channel names the CQ");
			}
		}
	}
}

static void
post_send(struct side *s, uint32_t opcode, uint32_t flags, const void *local,
	  uint32_t len, uint64_t remote, uint32_t rkey, uint64_t cmp, uint64_t swp,
	  uint32_t imm, uint64_t wr_id)
{
	struct dpr_shm_swqe *w;

	dprdma_post_begin(s->qp);
	w = dprdma_sq_next(s->qp);
	if (w == NULL) {
		dprdma_post_abort(s->qp);
		printf("FAIL: send queue full\n");
		failures++;
		return;
	}
	memset(w, 0, 64);
	w->wr_id = wr_id;
	w->opcode = opcode;
	w->send_flags = flags;
	w->imm_data = imm;
	w->remote_addr = remote;
	w->rkey = rkey;
	w->compare_add = cmp;
	w->swap = swp;
	if (flags & F_INLINE) {
		memcpy(w->inline_data, local, len);
		w->num_sge = len;
	} else {
		w->num_sge = 1;
		w->sge[0].addr = (uintptr_t)local;
		w->sge[0].length = len;
		w->sge[0].lkey = dprdma_mr_lkey(s->mr);
	}
	CHECK(dprdma_check_swqe(s->qp, w) == 0, "WQE valid");
	dprdma_post_end(s->qp);
}

static void
one_sge_rwqe(struct dpr_shm_rwqe *w, const struct side *s, void *addr,
	     uint32_t len, uint64_t wr_id)
{
	w->wr_id = wr_id;
	w->num_sge = 1;
	w->sge[0].addr = (uintptr_t)addr;
	w->sge[0].length = len;
	w->sge[0].lkey = dprdma_mr_lkey(s->mr);
}

static void
post_recv(struct side *s, void *addr, uint32_t len, uint64_t wr_id)
{
	struct dpr_shm_rwqe *w;

	dprdma_post_begin(s->qp);
	w = dprdma_rq_next(s->qp);
	if (w != NULL)
		one_sge_rwqe(w, s, addr, len, wr_id);
	dprdma_post_end(s->qp);
	CHECK(w != NULL, "receive queue has room");
}

static void
fill(uint8_t *p, uint32_t len, uint32_t seed)
{
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

static void
expect_wc(struct side *s, uint64_t wr_id, uint32_t opcode, uint32_t status,
	  uint32_t byte_len, const char *what)
{
	dprdma_wc wc;

	if (!wait_wc(s, &wc))
		return;
	CHECK(wc.wr_id == wr_id && wc.status == status && wc.opcode == opcode &&
	      (byte_len == UINT32_MAX || wc.byte_len == byte_len),
	      "%s: wr_id %" PRIu64 " status %u opcode %u byte_len %u "
	      "(expected %" PRIu64 " %u %u %u)", what, wc.wr_id, wc.status,
	      wc.opcode, wc.byte_len, wr_id, status, opcode, byte_len);
}

/* Whether the async event @p type on @p obj comes to @p s within 5 s
 * (other events before it are passed over). */
static bool
wait_async(struct side *s, uint32_t type, void *obj)
{
	struct pollfd pf = { .fd = dprdma_async_fd(s->ctx), .events = POLLIN };
	int fl = fcntl(pf.fd, F_GETFL);
	bool found = false;
	uint32_t t;
	void *o;

	fcntl(pf.fd, F_SETFL, fl | O_NONBLOCK);
	for (int tries = 0; !found && tries < 50; tries++) {
		while (!found && dprdma_get_async_event(s->ctx, &t, &o) == 0)
			found = t == type && o == obj;
		if (!found)
			poll(&pf, 1, 100);
	}
	fcntl(pf.fd, F_SETFL, fl);
	return found;
}

static int
do_ops(const char *sa, const char *sb)
{
	static const uint32_t sizes[] = { 0, 1, 1024, 1025, 4096, 65536, 1u << 20 };
	struct side a = { 0 }, b = { 0 };
	uint64_t id = 1;

	pair_open(&a, &b, sa, sb);
	check_two_moves(&a, &b);
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t n = sizes[i];
		uint8_t *src = a.buf, *dst = b.buf + (1u << 20);

		/* WRITE A -> B */
		fill(src, n, i + 1);
		post_send(&a, WR_WRITE, F_SIGNALED, src, n, (uintptr_t)dst,
			  dprdma_mr_rkey(b.mr), 0, 0, 0, id);
		expect_wc(&a, id++, WC_WRITE, 0, UINT32_MAX, "WRITE");
		CHECK(memcmp(src, dst, n) == 0, "WRITE %u B: B holds A's bytes", n);

		/* WRITE with immediate: a receive completes on B */
		fill(src, n, i + 50);
		post_recv(&b, b.buf, 16, id + 1000);
		post_send(&a, WR_WRITE_IMM, F_SIGNALED, src, n, (uintptr_t)dst,
			  dprdma_mr_rkey(b.mr), 0, 0, 0x12345678, id);
		expect_wc(&a, id, WC_WRITE, 0, UINT32_MAX, "WRITE_IMM");
		expect_wc(&b, id + 1000, WC_RECV_IMM, 0, n, "WRITE_IMM receive");
		CHECK(memcmp(src, dst, n) == 0, "WRITE_IMM %u B", n);
		id++;

		/* READ: B reads A */
		fill(a.buf + (2u << 20), n, i + 100);
		post_send(&b, WR_READ, F_SIGNALED, b.buf + (2u << 20), n,
			  (uintptr_t)a.buf + (2u << 20), dprdma_mr_rkey(a.mr), 0, 0,
			  0, id);
		expect_wc(&b, id++, WC_READ, 0, n, "READ");
		CHECK(memcmp(a.buf + (2u << 20), b.buf + (2u << 20), n) == 0,
		      "READ %u B: B holds A's bytes", n);

		/* SEND (and SEND with immediate) B -> A */
		fill(b.buf + (3u << 20), n, i + 200);
		post_recv(&a, a.buf + (3u << 20), 1u << 20, id + 1000);
		post_send(&b, i % 2 ? WR_SEND_IMM : WR_SEND, F_SIGNALED,
			  b.buf + (3u << 20), n, 0, 0, 0, 0, 0xabcdef01, id);
		expect_wc(&b, id, WC_SEND, 0, UINT32_MAX, "SEND");
		expect_wc(&a, id + 1000, WC_RECV, 0, n, "SEND receive");
		CHECK(memcmp(a.buf + (3u << 20), b.buf + (3u << 20), n) == 0,
		      "SEND %u B: A received B's bytes", n);
		id++;
	}
	{
		/* inline SEND from a stack buffer that is not registered */
		char msg[48];
		uint64_t *v = (uint64_t *)(void *)(a.buf + 4096);
		uint64_t *old = (uint64_t *)(void *)(b.buf + 8192);

		snprintf(msg, sizeof(msg), "inline from the stack %d", 42);
		post_recv(&a, a.buf + 8192, 64, id + 1000);
		post_send(&b, WR_SEND, F_SIGNALED | F_INLINE, msg, sizeof(msg), 0,
			  0, 0, 0, 0, id);
		expect_wc(&b, id, WC_SEND, 0, UINT32_MAX, "inline SEND");
		expect_wc(&a, id + 1000, WC_RECV, 0, sizeof(msg), "inline receive");
		CHECK(memcmp(a.buf + 8192, msg, sizeof(msg)) == 0, "inline bytes");
		id++;

		/* atomics on A's memory, from B */
		*v = 1000;
		post_send(&b, WR_FADD, F_SIGNALED, old, 8, (uintptr_t)v,
			  dprdma_mr_rkey(a.mr), 24, 0, 0, id);
		expect_wc(&b, id++, WC_FADD, 0, 8, "FETCH_ADD");
		CHECK(*old == 1000 && *v == 1024, "FETCH_ADD: old %" PRIu64
		      " new %" PRIu64, *old, *v);
		post_send(&b, WR_CAS, F_SIGNALED, old, 8, (uintptr_t)v,
			  dprdma_mr_rkey(a.mr), 1024, 7, 0, id);
		expect_wc(&b, id++, WC_CAS, 0, 8, "CMP_SWAP");
		CHECK(*old == 1024 && *v == 7, "CMP_SWAP taken: %" PRIu64 " %" PRIu64,
		      *old, *v);
		post_send(&b, WR_CAS, F_SIGNALED, old, 8, (uintptr_t)v,
			  dprdma_mr_rkey(a.mr), 1024, 9, 0, id);
		expect_wc(&b, id++, WC_CAS, 0, 8, "CMP_SWAP missed");
		CHECK(*old == 7 && *v == 7, "CMP_SWAP not taken: %" PRIu64 " %"
		      PRIu64, *old, *v);
	}
	/* a bad rkey: remote access error, the QP goes to ERR and what is
	 * posted after it is flushed */
	post_send(&a, WR_WRITE, F_SIGNALED, a.buf, 64, (uintptr_t)b.buf,
		  dprdma_mr_rkey(b.mr) ^ 0x80, 0, 0, 0, id);
	expect_wc(&a, id++, WC_WRITE, 10 /* REM_ACCESS_ERR */, UINT32_MAX, "bad rkey");
	post_send(&a, WR_WRITE, F_SIGNALED, a.buf, 64, (uintptr_t)b.buf,
		  dprdma_mr_rkey(b.mr), 0, 0, 0, id);
	expect_wc(&a, id++, WC_WRITE, 5 /* WR_FLUSH_ERR */, UINT32_MAX, "flushed");
	/* and the responder's client is told, whatever its QP's number
	 * (QPNs carry random bits above the table's index) */
	CHECK(wait_async(&b, 3 /* IBV_EVENT_QP_ACCESS_ERR */, b.qp),
	      "QP_ACCESS_ERR on B's QP %#x", dprdma_qp_num(b.qp));
	pair_close(&a, &b);
	printf("ops: %s, %d failures\n", use_events ? "events" : "polling", failures);
	return failures != 0;
}

/* Any memory an RNIC registers, each written by B's WRITE and read back
 * by B's READ through its MR. */
static int
do_memory_kinds(const char *sa, const char *sb)
{
	/* MAP_SHARED | MAP_ANONYMOUS
	 * (librpma's), a memfd sealed against shrinking (both the same pages
	 * in dprdmad, no copy), an initialised global (.data: a private file
	 * mapping, shadowed as private anonymous memory is); an unsealed
	 * memfd is refused (it could shrink under dprdmad); a read-only
	 * private mapping registers for remote reads only */
	struct side a = { 0 }, b = { 0 };

	pair_open(&a, &b, sa, sb);
	{
		static uint8_t data_seg[3 * 4096] = { 1 };
		uint8_t *anon = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		int sealed = memfd_create("dprt-sealed", MFD_ALLOW_SEALING);
		int loose = memfd_create("dprt-loose", 0);
		uint8_t *mem_s = MAP_FAILED, *mem_l = MAP_FAILED, *rop;
		const struct { const char *what; uint8_t *p; } kinds[3] = {
			{ "MAP_SHARED | MAP_ANONYMOUS", anon },
			{ "a sealed memfd", NULL },
			{ "an initialised global (.data)", data_seg + 4096 },
		};

		if (sealed >= 0 && ftruncate(sealed, 8192) == 0 &&
		    fcntl(sealed, F_ADD_SEALS, F_SEAL_SHRINK) == 0)
			mem_s = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				     MAP_SHARED, sealed, 0);
		if (loose >= 0 && ftruncate(loose, 8192) == 0)
			mem_l = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
				     MAP_SHARED, loose, 0);
		CHECK(anon != MAP_FAILED && mem_s != MAP_FAILED && mem_l != MAP_FAILED,
		      "shared mappings made");
		for (int k = 0; k < 3 && anon != MAP_FAILED && mem_s != MAP_FAILED; k++) {
			uint8_t *p = k == 1 ? mem_s : kinds[k].p;
			struct dprdma_mr *mr = dprdma_reg_mr(a.pd, p + 100, 3000,
							     (uintptr_t)p + 100, ACC_ALL);

			CHECK(mr != NULL, "%s registers (%d)", kinds[k].what, errno);
			if (mr == NULL)
				continue;
			fill(b.buf, 3000, 40 + k);
			post_send(&b, WR_WRITE, F_SIGNALED, b.buf, 3000,
				  (uintptr_t)p + 100, dprdma_mr_rkey(mr), 0, 0, 0, 90 + k);
			expect_wc(&b, 90 + k, WC_WRITE, 0, UINT32_MAX, kinds[k].what);
			CHECK(memcmp(p + 100, b.buf, 3000) == 0,
			      "%s: B's WRITE landed where the program looks", kinds[k].what);
			fill(p + 100, 3000, 50 + k);
			post_send(&b, WR_READ, F_SIGNALED, b.buf + 8192, 3000,
				  (uintptr_t)p + 100, dprdma_mr_rkey(mr), 0, 0, 0, 95 + k);
			expect_wc(&b, 95 + k, WC_READ, 0, 3000, kinds[k].what);
			CHECK(memcmp(p + 100, b.buf + 8192, 3000) == 0,
			      "%s: B's READ returned what the program wrote", kinds[k].what);
			dprdma_dereg_mr(mr);
		}
		CHECK(data_seg[0] == 1, ".data outside the MR keeps its value");
		if (mem_l != MAP_FAILED) {
			errno = 0;
			CHECK(dprdma_reg_mr(a.pd, mem_l, 8192, (uintptr_t)mem_l, ACC_ALL) == NULL &&
			      errno == EOPNOTSUPP, "an unsealed memfd refused (%d)", errno);
			munmap(mem_l, 8192);
		}
		rop = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (rop != MAP_FAILED) {
			struct dprdma_mr *mr;

			fill(rop, 4096, 61);
			mprotect(rop, 4096, PROT_READ);
			errno = 0;
			CHECK(dprdma_reg_mr(a.pd, rop, 4096, (uintptr_t)rop, ACC_ALL) == NULL &&
			      errno == EFAULT, "read-only memory refused for writing (%d)", errno);
			mr = dprdma_reg_mr(a.pd, rop, 4096, (uintptr_t)rop, 4 /* remote read */);
			CHECK(mr != NULL, "read-only memory registers for remote reads (%d)", errno);
			if (mr != NULL) {
				post_send(&b, WR_READ, F_SIGNALED, b.buf + 8192, 4096,
					  (uintptr_t)rop, dprdma_mr_rkey(mr), 0, 0, 0, 98);
				expect_wc(&b, 98, WC_READ, 0, 4096, "READ of read-only memory");
				CHECK(memcmp(rop, b.buf + 8192, 4096) == 0,
				      "B read the read-only page's bytes");
				dprdma_dereg_mr(mr);
			}
			munmap(rop, 4096);
		}
		if (anon != MAP_FAILED)
			munmap(anon, 8192);
		if (mem_s != MAP_FAILED)
			munmap(mem_s, 8192);
		if (sealed >= 0)
			close(sealed);
		if (loose >= 0)
			close(loose);
	}
	pair_close(&a, &b);
	printf("memory kinds: %d failures\n", failures);
	return failures != 0;
}

static int
do_isolation(const char *sa, const char *sb)
{
	struct side a = { 0 }, b = { 0 }, x = { 0 };
	uint8_t canary[256];
	struct dprdma_mr *ro;

	pair_open(&a, &b, sa, sb);
	/* another client on A with its own objects */
	side_open(&x, sa, false);
	/* x's QP posting with A's lkey: refused as a local protection error
	 * (another PD), nothing read from A's memory */
	{
		struct side xx = x;

		connect_qp(&x, &b, 1, 1);
		xx.mr = a.mr;   /* the other client's key */
		post_send(&xx, WR_WRITE, F_SIGNALED, a.buf, 64, (uintptr_t)b.buf,
			  dprdma_mr_rkey(b.mr), 0, 0, 0, 77);
		expect_wc(&x, 77, WC_WRITE, 4 /* LOC_PROT_ERR */, UINT32_MAX,
			  "another client's lkey");
	}
	/* an MR without remote write: B's WRITE is refused, bytes untouched */
	memset(a.buf + 65536, 0x5a, sizeof(canary));
	memcpy(canary, a.buf + 65536, sizeof(canary));
	ro = dprdma_reg_mr(a.pd, a.buf + 65536, 4096, (uintptr_t)a.buf + 65536,
			   ACC_LOCAL | 4 /* remote read */);
	CHECK(ro != NULL, "read-only MR");
	if (ro != NULL) {
		fill(b.buf, 256, 9);
		post_send(&b, WR_WRITE, F_SIGNALED, b.buf, 256,
			  (uintptr_t)a.buf + 65536, dprdma_mr_rkey(ro), 0, 0, 0, 88);
		expect_wc(&b, 88, WC_WRITE, 10 /* REM_ACCESS_ERR */, UINT32_MAX,
			  "WRITE to a read-only MR");
		CHECK(memcmp(a.buf + 65536, canary, sizeof(canary)) == 0,
		      "read-only MR untouched");
		dprdma_dereg_mr(ro);
	}
	/* remote write or atomic access without local write: EINVAL */
	errno = 0;
	CHECK(dprdma_reg_mr(a.pd, a.buf, 4096, (uintptr_t)a.buf, 2) == NULL &&
	      errno == EINVAL, "remote write without local write refused (%d)", errno);
	/* a file mapping cannot be shared: EOPNOTSUPP, not silently wrong */
	{
		FILE *f = tmpfile();
		void *m;

		if (f != NULL && ftruncate(fileno(f), 8192) == 0 &&
		    (m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED,
			      fileno(f), 0)) != MAP_FAILED) {
			errno = 0;
			CHECK(dprdma_reg_mr(a.pd, m, 8192, (uintptr_t)m, ACC_ALL) == NULL &&
			      errno == EOPNOTSUPP, "file mapping refused (%d)", errno);
			munmap(m, 8192);
		}
		if (f != NULL)
			fclose(f);
	}
	/* memory that is not all mapped: EFAULT, as ibv_reg_mr */
	{
		uint8_t *m = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct dprdma_mr *ok;

		if (m != MAP_FAILED) {
			munmap(m + 4096, 4096);         /* a hole */
			errno = 0;
			CHECK(dprdma_reg_mr(a.pd, m, 3 * 4096, (uintptr_t)m, ACC_ALL) == NULL &&
			      errno == EFAULT, "a range with a hole refused (%d)", errno);
			errno = 0;
			CHECK(dprdma_reg_mr(a.pd, m + 4096, 4096, (uintptr_t)m, ACC_ALL) == NULL &&
			      errno == EFAULT, "an unmapped page refused (%d)", errno);
			ok = dprdma_reg_mr(a.pd, m + 8192, 100, (uintptr_t)m, ACC_ALL);
			CHECK(ok != NULL, "the mapped page after the hole registers");
			if (ok != NULL)
				dprdma_dereg_mr(ok);
			munmap(m, 4096);
			munmap(m + 8192, 4096);
		}
	}
	/* the client library refuses what the daemon would refuse */
	{
		struct dprdma_qp_init init = { .send_cq = x.cq, .recv_cq = x.cq,
					       .qp_type = 9 /* XRC_SEND */ };

		init.cap.max_send_wr = 1;
		errno = 0;
		CHECK(dprdma_create_qp(x.pd, &init) == NULL && errno == EOPNOTSUPP,
		      "XRC QP refused with EOPNOTSUPP (%d)", errno);
		init.qp_type = 2;
		init.cap.max_send_wr = 1u << 20;
		errno = 0;
		CHECK(dprdma_create_qp(x.pd, &init) == NULL && errno == EINVAL,
		      "oversized QP refused with EINVAL (%d)", errno);
	}
	/* inline bytes counted in 64 bits: a sum past 2^32 is refused, not
	 * wrapped to a small length (the drop-in sums SGE lengths into it) */
	CHECK(dprdma_check_send(a.qp, WR_SEND, F_INLINE, (1ull << 32) + 16) == EINVAL &&
	      dprdma_check_send(a.qp, WR_SEND, F_INLINE, 16) == 0 &&
	      dprdma_check_send(a.qp, WR_READ, F_INLINE, 16) == EINVAL &&
	      dprdma_check_send(a.qp, 10 /* IBV_WR_TSO */, 0, 1) == EINVAL &&
	      dprdma_check_send(a.qp, WR_WRITE, 0, 5) == EINVAL,
	      "send WRs checked before posting");
	CHECK(dprdma_dealloc_pd(a.pd) == EBUSY, "PD in use: EBUSY");
	/* quotas: QPs until the client's limit, then a clear ENOMEM; the
	 * same for MRs; everything given back */
	{
		static struct dprdma_qp *qps[300];
		static struct dprdma_mr *mrs[1100];
		struct dprdma_qp_init init = { .send_cq = x.cq, .recv_cq = x.cq,
					       .qp_type = 2 };
		int nq = 0, nm = 0, e;

		init.cap.max_send_wr = 1;
		init.cap.max_recv_wr = 1;
		while (nq < 300 && (qps[nq] = dprdma_create_qp(x.pd, &init)) != NULL)
			nq++;
		e = errno;
		/* x already has one QP; the daemon's [limits] client_qps
		 * (test_shim.py: 256) is the device's max_qp */
		const uint32_t max_qp = dprdma_device(x.ctx)->max_qp,
			       max_mr = dprdma_device(x.ctx)->max_mr;

		CHECK(max_qp == 256 && max_mr == 1024,
		      "the device says the client's quotas: 256 QPs, 1024 MRs (%u, %u)",
		      max_qp, max_mr);
		CHECK(nq == (int)max_qp - 1 && e == ENOMEM,
		      "QPs until the quota of %u, then ENOMEM (%d, errno %d)",
		      max_qp, nq + 1, e);
		while (nm < 1100 && (mrs[nm] = dprdma_reg_mr(x.pd, x.buf + (nm % 64) * 4096,
							     4096, 0, ACC_LOCAL)) != NULL)
			nm++;
		e = errno;
		CHECK(nm == (int)max_mr - 1 && e == ENOMEM,
		      "MRs until the quota of %u, then ENOMEM (%d, errno %d)",
		      max_mr, nm + 1, e);
		while (nq > 0)
			CHECK(dprdma_destroy_qp(qps[--nq]) == 0, "destroy_qp");
		while (nm > 0)
			CHECK(dprdma_dereg_mr(mrs[--nm]) == 0, "dereg_mr");
	}
	dprdma_destroy_qp(x.qp);
	dprdma_dereg_mr(x.mr);
	dprdma_destroy_cq(x.cq);
	dprdma_dealloc_pd(x.pd);
	free(x.buf);
	dprdma_close(x.ctx);
	pair_close(&a, &b);
	printf("isolation: %d failures\n", failures);
	return failures != 0;
}

/* A client that stops consuming its CQ: the CQ overflows (CQ_ERR), its QP
 * goes to ERR (QP_FATAL), both told through the async events. */
static int
do_overflow(const char *sa, const char *sb)
{
	struct side a = { 0 }, b = { 0 };
	struct pollfd pf;
	dprdma_wc wc[32];
	struct dpr_shm_qp_attr attr;
	uint32_t type;
	void *obj;
	int n = 0, k;

	cq_entries = 16;
	pair_open(&a, &b, sa, sb);
	for (int i = 0; i < 40; i++)
		post_send(&a, WR_WRITE, F_SIGNALED, a.buf, 64, (uintptr_t)b.buf,
			  dprdma_mr_rkey(b.mr), 0, 0, 0, (uint64_t)i);
	pf.fd = dprdma_async_fd(a.ctx);
	pf.events = POLLIN;
	CHECK(poll(&pf, 1, 10000) == 1, "an async event within 10 s");
	CHECK(dprdma_get_async_event(a.ctx, &type, &obj) == 0 && type == 0 &&
	      obj == a.cq, "CQ_ERR on the CQ that overflowed (type %u)", type);
	CHECK(dprdma_get_async_event(a.ctx, &type, &obj) == 0 && type == 1 &&
	      obj == a.qp, "QP_FATAL on its QP (type %u)", type);
	while ((k = dprdma_poll_cq(a.cq, 32, wc)) > 0)
		n += k;
	CHECK(n == 16 && k == -EIO, "16 completions kept, then the CQ in error "
	      "(%d, %d)", n, k);
	CHECK(dprdma_query_qp(a.qp, &attr, NULL) == 0 && attr.qp_state == 6,
	      "the QP is in ERR (%u)", attr.qp_state);
	pair_close(&a, &b);
	printf("overflow: %d failures\n", failures);
	return failures != 0;
}

/* A client that scribbles on its send ring's producer index (a lap and
 * more past what the worker took): the daemon breaks that QP off its
 * rings (ring_index_errors: test_shim.py waits for it after the line
 * SCRIBBLED, then sends a line) and goes on serving; WRITEs into the
 * broken QP's memory still come (its transport is untouched). */
static int
do_scribble(const char *sa, const char *sb)
{
	struct side a = { 0 }, b = { 0 };
	struct dpr_shm_swqe *w;
	struct dpr_shm_ring *ring;
	const uint32_t posted = 4;
	char line[16];

	pair_open(&a, &b, sa, sb);
	for (uint32_t i = 0; i < posted; i++) {
		post_send(&a, WR_WRITE, F_SIGNALED, a.buf, 64, (uintptr_t)b.buf,
			  dprdma_mr_rkey(b.mr), 0, 0, 0, i);
		expect_wc(&a, i, WC_WRITE, 0, UINT32_MAX, "WRITE before the scribble");
	}
	/* the ring's head, from the next entry's place (index 4) */
	dprdma_post_begin(a.qp);
	w = dprdma_sq_next(a.qp);
	dprdma_post_abort(a.qp);
	CHECK(w != NULL, "the send ring's next entry");
	if (w == NULL)
		return 1;
	ring = (struct dpr_shm_ring *)((uint8_t *)w - DPR_SHM_RING_HDR -
				       posted * sizeof(*w));
	CHECK(__atomic_load_n(&ring->prod, __ATOMIC_ACQUIRE) == posted &&
	      __atomic_load_n(&ring->cons, __ATOMIC_ACQUIRE) == posted,
	      "the ring's indices where the posts left them");
	__atomic_store_n(&ring->prod, posted + 100000, __ATOMIC_RELEASE);
	printf("SCRIBBLED\n");
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL)
		return 1;
	memset(a.buf + 8192, 0x5a, 64);
	memset(b.buf, 0xa5, 64);
	post_send(&b, WR_WRITE, F_SIGNALED, b.buf, 64, (uintptr_t)a.buf + 8192,
		  dprdma_mr_rkey(a.mr), 0, 0, 0, 77);
	expect_wc(&b, 77, WC_WRITE, 0, UINT32_MAX, "a WRITE into the broken QP's memory");
	CHECK(memcmp(a.buf + 8192, b.buf, 64) == 0, "its bytes arrived");
	pair_close(&a, &b);
	printf("scribble: %d failures\n", failures);
	return failures != 0;
}

/* The healthy client: WRITE, READ, SEND round after round, each checked. */
static int
do_stream(const char *sa, const char *sb, double seconds)
{
	struct side a = { 0 }, b = { 0 };
	struct timespec t0, t;
	uint64_t id = 1, rounds = 0;

	pair_open(&a, &b, sa, sb);
	signal(SIGINT, on_sigint);      /* ends the stream after its round */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		uint32_t n = 1024 + (uint32_t)(rounds % 61) * 1000;

		fill(a.buf, n, (uint32_t)rounds);
		post_send(&a, WR_WRITE, F_SIGNALED, a.buf, n, (uintptr_t)b.buf,
			  dprdma_mr_rkey(b.mr), 0, 0, 0, id);
		expect_wc(&a, id++, WC_WRITE, 0, UINT32_MAX, "stream WRITE");
		CHECK(memcmp(a.buf, b.buf, n) == 0, "stream WRITE round %" PRIu64, rounds);
		post_send(&a, WR_READ, F_SIGNALED, a.buf + (1u << 20), n,
			  (uintptr_t)b.buf, dprdma_mr_rkey(b.mr), 0, 0, 0, id);
		expect_wc(&a, id++, WC_READ, 0, n, "stream READ");
		CHECK(memcmp(a.buf, a.buf + (1u << 20), n) == 0, "stream READ round %"
		      PRIu64, rounds);
		post_recv(&b, b.buf + (2u << 20), n, id + 1000000);
		post_send(&a, WR_SEND, F_SIGNALED, a.buf, n, 0, 0, 0, 0, 0, id);
		expect_wc(&a, id, WC_SEND, 0, UINT32_MAX, "stream SEND");
		expect_wc(&b, id + 1000000, WC_RECV, 0, n, "stream receive");
		CHECK(memcmp(a.buf, b.buf + (2u << 20), n) == 0, "stream SEND round %"
		      PRIu64, rounds);
		id++;
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (failures == 0 && !stop &&
		 (double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 < seconds);
	pair_close(&a, &b);
	printf("stream: %" PRIu64 " rounds, %d failures\n", rounds, failures);
	return failures != 0;
}

/* A client to be killed: WQEs outstanding on both sides, B's QP writing
 * into A's memory without pause. */
static int
do_victim(const char *sa, const char *sb)
{
	struct side a = { 0 }, b = { 0 };
	uint64_t id = 1;

	pair_open(&a, &b, sa, sb);
	for (int i = 0; i < 64; i++)
		post_recv(&a, a.buf + (uint32_t)i * 4096, 4096, id++);
	printf("READY\n");
	fflush(stdout);
	for (;;) {
		dprdma_wc wc[16];

		for (int i = 0; i < 8; i++)
			post_send(&b, WR_WRITE, i == 7 ? F_SIGNALED : 0, b.buf, 65536,
				  (uintptr_t)a.buf + (uint32_t)i * 65536,
				  dprdma_mr_rkey(a.mr), 0, 0, 0, id++);
		while (dprdma_poll_cq(b.cq, 16, wc) == 0)
			;
		failures = 0;   /* send queue accounting only: keep going */
	}
	return 0;
}

/* Two QPs of one context connected to each other (the daemon loops the
 * frames back): SIZE B WRITEs kept DEPTH deep for SECONDS, every one
 * signalled; the count and the errors (test_shim.py's loopback check). */
static int
do_bench(const char *sock, double seconds, uint32_t size, uint32_t depth)
{
	struct side a = { 0 }, b = { 0 };
	struct timespec t0, t;
	uint64_t posted = 0, done = 0, errors = 0;
	double el;

	cq_entries = (int)depth * 2;
	pair_open(&a, &b, sock, sock);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		dprdma_wc wc[64];
		int n;

		dprdma_post_begin(a.qp);
		while (posted - done < depth) {
			struct dpr_shm_swqe *w = dprdma_sq_next(a.qp);

			if (w == NULL)
				break;
			w->wr_id = posted;
			w->opcode = WR_WRITE;
			w->send_flags = F_SIGNALED;
			w->num_sge = 1;
			w->remote_addr = (uintptr_t)b.buf;
			w->rkey = dprdma_mr_rkey(b.mr);
			w->sge[0].addr = (uintptr_t)a.buf;
			w->sge[0].length = size;
			w->sge[0].lkey = dprdma_mr_lkey(a.mr);
			posted++;
		}
		dprdma_post_end(a.qp);
		n = dprdma_poll_cq(a.cq, 64, wc);
		for (int i = 0; i < n; i++)
			errors += wc[i].status != 0;
		if (n > 0)
			done += (uint64_t)n;
		clock_gettime(CLOCK_MONOTONIC, &t);
		el = (double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9;
	} while (el < seconds && errors == 0);
	while (done < posted && errors == 0) {
		dprdma_wc wc[64];
		int n = dprdma_poll_cq(a.cq, 64, wc);

		for (int i = 0; i < n; i++)
			errors += wc[i].status != 0;
		if (n > 0)
			done += (uint64_t)n;
	}
	printf("{\"messages\": %" PRIu64 ", \"seconds\": %.3f, \"msgs_per_s\": %.0f, "
	       "\"errors\": %" PRIu64 "}\n", done, el, done / el, errors);
	pair_close(&a, &b);
	return errors != 0;
}

/*
 * A client taking all it can from one daemon: contexts, each with a PD,
 * a CQ and QPs until refused; past its own quota of QPs it opens another
 * context, until a refusal below the quota says the port's QP table is
 * full; then contexts without objects until the daemon refuses a
 * connection. Prints {"qps", "qp_errno", "qp_contexts", "contexts",
 * "open_errno"}, waits for a line on stdin, gives everything back and
 * proves the limits recovered (a new context and QP): {"after": errno}.
 */
static int
do_exhaust(const char *sock)
{
	enum { MAX_CTX = 1024 };
	static struct dprdma_context *ctx[MAX_CTX];
	struct rlimit rl;
	int nctx = 0, qp_ctx = 0, qps = 0, qp_errno = 0, open_errno = 0;
	bool table_full = false;
	char line[16];

	/* a socket per context, a ring mapping per QP (no descriptor) */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	while (nctx < MAX_CTX) {
		struct dprdma_qp_init init = { .qp_type = 2 };
		struct dprdma_pd *pd;
		int n = 0;

		ctx[nctx] = dprdma_open_at(sock, 0);
		if (ctx[nctx] == NULL) {
			open_errno = errno;
			break;
		}
		nctx++;
		if (table_full)
			continue;
		pd = dprdma_alloc_pd(ctx[nctx - 1]);
		init.send_cq = init.recv_cq = dprdma_create_cq(ctx[nctx - 1], 4, NULL);
		if (pd == NULL || init.send_cq == NULL)
			die("PD and CQ");
		init.cap.max_send_wr = 1;
		init.cap.max_recv_wr = 1;
		while (dprdma_create_qp(pd, &init) != NULL)
			n++;
		qp_errno = errno;
		qps += n;
		qp_ctx++;
		table_full = n < (int)dprdma_device(ctx[nctx - 1])->max_qp;
		if (qp_errno != ENOMEM)
			break;
	}
	printf("{\"qps\": %d, \"qp_errno\": %d, \"qp_contexts\": %d, "
	       "\"contexts\": %d, \"open_errno\": %d}\n", qps, qp_errno, qp_ctx,
	       nctx, open_errno);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL)
		return 1;
	/* closing a context frees everything it holds */
	while (nctx > 0)
		dprdma_close(ctx[--nctx]);
	{
		struct dprdma_qp_init init = { .qp_type = 2 };
		struct dprdma_context *c = dprdma_open_at(sock, 0);
		struct dprdma_pd *pd = c ? dprdma_alloc_pd(c) : NULL;
		int e = 0;

		init.send_cq = init.recv_cq = c ? dprdma_create_cq(c, 4, NULL) : NULL;
		init.cap.max_send_wr = 1;
		if (pd == NULL || init.send_cq == NULL ||
		    dprdma_create_qp(pd, &init) == NULL)
			e = errno ? errno : EIO;
		printf("{\"after\": %d}\n", e);
		if (c != NULL)
			dprdma_close(c);
	}
	return 0;
}

/*
 * The victim of a hostile peer on the wire (test_hostile_peer.py). One
 * allocation holds every MR with a canary page before and after each:
 *   ok        PD 1, every access, 1 MiB
 *   other_pd  PD 2, every access
 *   local     PD 1, local write only
 *   ronly     PD 1, remote read only
 *   wonly     PD 1, remote write only
 *   freed     PD 1, every access, deregistered at once
 *   inflight  PD 1, every access, deregistered on command
 * The whole allocation is filled with a pattern and a copy kept; one more
 * QP stays in RESET. Printed: {"qpns": [...], "reset_qpn": N,
 * "mrs": {name: {"va", "rkey", "len"}}, "buf": VA, "keys": [...]}
 * ("keys": 32 rkeys registered one after another, for the peer to judge
 * their predictability). Commands, one per line, each answered by a line:
 *   dereg NAME   deregister that MR: {"dereg": NAME}
 *   diff         the byte ranges [va, end) that changed since the last
 *                diff (then taken as the new pattern): {"changed": [...]}
 *   quit         free everything and leave (exit 0)
 */
enum { T_OK, T_OTHER_PD, T_LOCAL, T_RONLY, T_WONLY, T_FREED, T_INFLIGHT, T_N };

static int
do_target(const char *sock, const char *peer_ip, int nqp, uint32_t rqpn0,
	  uint32_t rpsn)
{
	static const struct {
		const char *name;
		uint32_t len, access;
		int pd;
	} kinds[T_N] = {
		[T_OK] = { "ok", 1u << 20, ACC_ALL, 0 },
		[T_OTHER_PD] = { "other_pd", 65536, ACC_ALL, 1 },
		[T_LOCAL] = { "local", 65536, ACC_LOCAL, 0 },
		[T_RONLY] = { "ronly", 65536, ACC_LOCAL | 4, 0 },
		[T_WONLY] = { "wonly", 65536, ACC_LOCAL | 2, 0 },
		[T_FREED] = { "freed", 65536, ACC_ALL, 0 },
		[T_INFLIGHT] = { "inflight", 65536, ACC_ALL, 0 },
	};
	const uint32_t page = 4096;
	struct dprdma_context *ctx;
	struct dprdma_pd *pd[2];
	struct dprdma_cq *cq;
	struct dprdma_qp *qp[65];
	struct dprdma_mr *mr[T_N], *k;
	struct dpr_shm_gid dgid = { .raw = { [10] = 0xff, [11] = 0xff } };
	uint32_t off[T_N], rkey[T_N], at = page, keys[32];
	uint8_t *buf, *copy;
	char line[128];
	int i;

	if (nqp < 1 || nqp > 64 || inet_pton(AF_INET, peer_ip, &dgid.raw[12]) != 1) {
		fprintf(stderr, "target: NQP 1..64 and an IPv4 PEER_IP\n");
		return 2;
	}
	ctx = dprdma_open_at(sock, 0);
	if (ctx == NULL)
		die(sock);
	pd[0] = dprdma_alloc_pd(ctx);
	pd[1] = dprdma_alloc_pd(ctx);
	cq = dprdma_create_cq(ctx, 256, NULL);
	buf = dprdma_alloc(ctx, BUF);
	copy = malloc(BUF);
	if (pd[0] == NULL || pd[1] == NULL || cq == NULL || buf == NULL ||
	    copy == NULL)
		die("objects");
	fill(buf, BUF, 77);
	memcpy(copy, buf, BUF);
	for (i = 0; i < T_N; i++) {
		off[i] = at;
		at += kinds[i].len + page;      /* a canary page after each */
		if (at > BUF)
			die("layout");
		mr[i] = dprdma_reg_mr(pd[kinds[i].pd], buf + off[i], kinds[i].len,
				      (uintptr_t)buf + off[i], kinds[i].access);
		if (mr[i] == NULL)
			die(kinds[i].name);
		rkey[i] = dprdma_mr_rkey(mr[i]);
	}
	dprdma_dereg_mr(mr[T_FREED]);
	mr[T_FREED] = NULL;
	for (i = 0; i < 32; i++) {
		k = dprdma_reg_mr(pd[0], buf, page, (uintptr_t)buf, ACC_LOCAL);
		if (k == NULL)
			die("reg_mr");
		keys[i] = dprdma_mr_rkey(k);
		dprdma_dereg_mr(k);
	}
	for (i = 0; i <= nqp; i++) {        /* the last one stays in RESET */
		struct dprdma_qp_init init = { .send_cq = cq, .recv_cq = cq,
					       .qp_type = 2 };

		init.cap.max_send_wr = 16;
		init.cap.max_recv_wr = 16;
		init.cap.max_send_sge = 1;
		init.cap.max_recv_sge = 1;
		qp[i] = dprdma_create_qp(pd[0], &init);
		if (qp[i] == NULL)
			die("create_qp");
		if (i < nqp)
			/* 4 READs and atomics at once, as the hostile peer's
			 * READ bursts expect */
			connect_to(qp[i], &dgid, rqpn0 + (uint32_t)i, 1, rpsn, 4);
	}
	printf("{\"qpns\": [");
	for (i = 0; i < nqp; i++)
		printf("%s%u", i ? ", " : "", dprdma_qp_num(qp[i]));
	printf("], \"reset_qpn\": %u, \"mrs\": {", dprdma_qp_num(qp[nqp]));
	for (i = 0; i < T_N; i++)
		printf("%s\"%s\": {\"va\": %" PRIu64 ", \"rkey\": %u, \"len\": %u}",
		       i ? ", " : "", kinds[i].name, (uint64_t)(uintptr_t)buf + off[i],
		       rkey[i], kinds[i].len);
	printf("}, \"buf\": %" PRIu64 ", \"buf_len\": %u, \"keys\": [",
	       (uint64_t)(uintptr_t)buf, BUF);
	for (i = 0; i < 32; i++)
		printf("%s%u", i ? ", " : "", keys[i]);
	printf("]}\n");
	fflush(stdout);

	while (fgets(line, sizeof(line), stdin) != NULL) {
		char name[32];

		if (sscanf(line, "dereg %31s", name) == 1) {
			for (i = 0; i < T_N; i++)
				if (strcmp(name, kinds[i].name) == 0 && mr[i] != NULL)
					break;
			if (i == T_N || dprdma_dereg_mr(mr[i]) != 0) {
				printf("{\"error\": \"dereg %s\"}\n", name);
			} else {
				mr[i] = NULL;
				printf("{\"dereg\": \"%s\"}\n", name);
			}
		} else if (strncmp(line, "diff", 4) == 0) {
			uint32_t j = 0, n = 0;

			printf("{\"changed\": [");
			while (j < BUF) {
				uint32_t e;

				if (buf[j] == copy[j]) {
					j++;
					continue;
				}
				for (e = j; e < BUF && buf[e] != copy[e]; e++)
					;
				printf("%s[%" PRIu64 ", %" PRIu64 "]", n++ ? ", " : "",
				       (uint64_t)(uintptr_t)buf + j,
				       (uint64_t)(uintptr_t)buf + e);
				j = e;
			}
			printf("]}\n");
			memcpy(copy, buf, BUF);
		} else if (strncmp(line, "quit", 4) == 0) {
			break;
		} else {
			printf("{\"error\": \"unknown command\"}\n");
		}
		fflush(stdout);
	}
	for (i = 0; i <= nqp; i++)
		dprdma_destroy_qp(qp[i]);
	for (i = 0; i < T_N; i++)
		if (mr[i] != NULL)
			dprdma_dereg_mr(mr[i]);
	dprdma_destroy_cq(cq);
	dprdma_dealloc_pd(pd[0]);
	dprdma_dealloc_pd(pd[1]);
	dprdma_free(ctx, buf);
	free(copy);
	dprdma_close(ctx);
	return 0;
}

/*
 * mrloop SOCK N: register and deregister 256 KiB of dprdma_alloc() memory
 * N times, print {"mrs": N}, then wait for a line on stdin (while it
 * waits, the daemon must hold no mapping of that memory) and leave.
 */
static int
do_mrloop(const char *sock, int n)
{
	struct dprdma_context *ctx = dprdma_open_at(sock, 0);
	struct dprdma_pd *pd;
	char line[16];
	uint8_t *buf;
	int i;

	if (ctx == NULL)
		die(sock);
	pd = dprdma_alloc_pd(ctx);
	buf = dprdma_alloc(ctx, 1 << 20);
	if (pd == NULL || buf == NULL)
		die("PD and memory");
	for (i = 0; i < n; i++) {
		struct dprdma_mr *mr = dprdma_reg_mr(pd, buf, 256 << 10,
						     (uintptr_t)buf, ACC_ALL);

		if (mr == NULL || dprdma_dereg_mr(mr) != 0)
			die("reg/dereg");
	}
	printf("{\"mrs\": %d}\n", n);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL)
		line[0] = '\0';
	dprdma_dealloc_pd(pd);
	dprdma_free(ctx, buf);
	dprdma_close(ctx);
	return 0;
}

static void
post_srq(struct side *s, void *addr, uint32_t len, uint64_t wr_id)
{
	struct dpr_shm_rwqe *w;

	dprdma_srq_post_begin(s->srq);
	w = dprdma_srq_next(s->srq);
	if (w != NULL)
		one_sge_rwqe(w, s, addr, len, wr_id);
	dprdma_srq_post_end(s->srq);
	CHECK(w != NULL, "SRQ has room");
}

/* A's QP receives from an SRQ: SENDs land in its WQEs in order, the
 * limit event comes once when fewer WQEs than the limit are left, with
 * the SRQ as its object; the SRQ's size is fixed and it outlives no QP. */
static int
do_srq(const char *sa, const char *sb)
{
	struct side a = { 0 }, b = { 0 };
	uint32_t max_wr, max_sge, limit, type;
	struct pollfd pf;
	void *obj = NULL;
	uint64_t id = 1;
	int i;

	with_srq = true;
	pair_open(&a, &b, sa, sb);
	CHECK(dprdma_query_srq(a.srq, &max_wr, &max_sge, &limit) == 0 &&
	      max_wr == 16 && max_sge == 1 && limit == 0, "query: 16 WQEs, 1 SGE (%u %u %u)",
	      max_wr, max_sge, limit);
	CHECK(dprdma_modify_srq(a.srq, 1 /* IBV_SRQ_MAX_WR */, 32, 0) == EOPNOTSUPP,
	      "resizing refused: EOPNOTSUPP");
	CHECK(dprdma_modify_srq(a.srq, 2 /* IBV_SRQ_LIMIT */, 0, 17) == EINVAL,
	      "a limit over the size: EINVAL");
	CHECK(dprdma_destroy_srq(a.srq) == EBUSY, "an SRQ in use: EBUSY");
	for (i = 0; i < 4; i++)
		post_srq(&a, a.buf + (uint32_t)i * 4096, 4096, 500 + (uint64_t)i);
	CHECK(dprdma_modify_srq(a.srq, 2, 0, 3) == 0, "limit 3");
	for (i = 0; i < 2; i++) {
		fill(b.buf, 3000, (uint32_t)i);
		post_send(&b, WR_SEND, F_SIGNALED, b.buf, 3000, 0, 0, 0, 0, 0, id);
		expect_wc(&b, id, WC_SEND, 0, UINT32_MAX, "SEND");
		expect_wc(&a, 500 + (uint64_t)i, WC_RECV, 0, 3000, "SEND into the SRQ");
		CHECK(memcmp(a.buf + (uint32_t)i * 4096, b.buf, 3000) == 0,
		      "SEND %d: its bytes in its WQE", i);
		id++;
	}
	pf.fd = dprdma_async_fd(a.ctx);
	pf.events = POLLIN;
	CHECK(poll(&pf, 1, 5000) == 1 && dprdma_get_async_event(a.ctx, &type, &obj) == 0 &&
	      type == 15 && obj == a.srq, "IBV_EVENT_SRQ_LIMIT_REACHED for the SRQ (%u)",
	      type);
	CHECK(dprdma_query_srq(a.srq, &max_wr, &max_sge, &limit) == 0 && limit == 0,
	      "the limit disarmed (%u)", limit);
	pair_close(&a, &b);
	printf("srq: %d failures\n", failures);
	return failures != 0;
}

/* N datagrams from a UD QP to QP 0x11 at @p addr (IPv6 or IPv4 text),
 * each completing before the next is posted: the destination's MAC is
 * found on the way (ARP or neighbour discovery). Nobody needs to receive
 * them. */
static int
do_ud_to(const char *sock, const char *addr, int n)
{
	struct dprdma_qp_init init = { 0 };
	struct dpr_shm_qp_attr a;
	struct dprdma_context *ctx;
	struct dprdma_pd *pd;
	struct dprdma_cq *cq;
	struct dprdma_qp *qp;
	struct dprdma_mr *mr;
	uint8_t dgid[16] = { 0 }, sgid_index;
	char *buf;
	int i;

	if (inet_pton(AF_INET6, addr, dgid) == 1) {
		sgid_index = dgid[0] == 0xfe && (dgid[1] & 0xc0) == 0x80 ? 0 : 2;
	} else if (inet_pton(AF_INET, addr, dgid + 12) == 1) {
		dgid[10] = dgid[11] = 0xff;
		sgid_index = 1;
	} else {
		fprintf(stderr, "ud-to: %s is no address\n", addr);
		return 2;
	}
	ctx = dprdma_open_at(sock, 0);
	if (ctx == NULL)
		die(sock);
	pd = dprdma_alloc_pd(ctx);
	cq = dprdma_create_cq(ctx, 64, NULL);
	buf = dprdma_alloc(ctx, 4096);
	if (pd == NULL || cq == NULL || buf == NULL)
		die("pd, cq, buffer");
	memset(buf, 0x5a, 4096);
	mr = dprdma_reg_mr(pd, buf, 4096, (uintptr_t)buf, 1);
	init.send_cq = cq;
	init.recv_cq = cq;
	init.qp_type = 4;       /* UD */
	init.cap.max_send_wr = 16;
	init.cap.max_recv_wr = 16;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	qp = mr != NULL ? dprdma_create_qp(pd, &init) : NULL;
	if (qp == NULL)
		die("mr, UD qp");
	memset(&a, 0, sizeof(a));
	a.qp_state = 1;         /* INIT: state, P_Key index, port, Q_Key */
	a.port_num = 1;
	a.qkey = 0x11111111;
	if (dprdma_modify_qp(qp, &a, 1 | 16 | 32 | 64) != 0)
		die("modify INIT");
	a.qp_state = 2;
	if (dprdma_modify_qp(qp, &a, 1) != 0)
		die("modify RTR");
	a.qp_state = 3;
	if (dprdma_modify_qp(qp, &a, 1 | 65536) != 0)
		die("modify RTS");
	for (i = 0; i < n; i++) {
		struct dpr_shm_swqe *w;
		dprdma_wc wc;
		int k, tries = 0;

		dprdma_post_begin(qp);
		w = dprdma_sq_next(qp);
		if (w == NULL)
			die("send slot");
		memset(w, 0, sizeof(*w));
		w->wr_id = (uint64_t)i;
		w->opcode = 2;          /* IBV_WR_SEND */
		w->send_flags = 2;      /* IBV_SEND_SIGNALED */
		w->num_sge = 1;
		w->sge[0].addr = (uintptr_t)buf;
		w->sge[0].length = 256;
		w->sge[0].lkey = dprdma_mr_lkey(mr);
		memcpy(w->ud.dgid, dgid, 16);
		w->ud.sgid_index = sgid_index;
		w->ud.hop_limit = 64;
		w->ud.remote_qpn = 0x11;
		w->ud.remote_qkey = 0x11111111;
		dprdma_post_end(qp);
		while ((k = dprdma_poll_cq(cq, 1, &wc)) == 0 && tries++ < 5000)
			usleep(1000);
		if (k != 1 || wc.status != 0) {
			fprintf(stderr, "ud-to: datagram %d: %s (status %u)\n", i,
				k == 1 ? "failed" : "no completion in 5 s",
				k == 1 ? wc.status : 0);
			return 1;
		}
	}
	printf("ud-to: %d datagrams to %s sent\n", n, addr);
	dprdma_destroy_qp(qp);
	dprdma_dereg_mr(mr);
	dprdma_destroy_cq(cq);
	dprdma_free(ctx, buf);
	dprdma_dealloc_pd(pd);
	dprdma_close(ctx);
	return 0;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A WRITE of 8 bytes (the pair's number, tagged by @p tag) from @p s's QP
 * @p qp into @p peer's buffer at @p off + 8 i for every pair i, 512 in
 * flight at most; @return the completions that were not successful. */
static int
write_each(struct side *s, struct dprdma_qp **qp, const struct side *peer,
	   uint32_t off, uint64_t tag, int n)
{
	int bad = 0, done = 0, posted = 0;
	const double deadline = now_s() + 60;
	dprdma_wc wc[64];

	while (done < n) {
		while (posted < n && posted - done < 512) {
			struct side one = *s;
			uint64_t *v = (uint64_t *)(s->buf + off) + posted;

			*v = tag | (uint64_t)posted;
			one.qp = qp[posted];
			post_send(&one, WR_WRITE, F_SIGNALED, v, 8,
				  (uintptr_t)((uint64_t *)(peer->buf + off) + posted),
				  dprdma_mr_rkey(peer->mr), 0, 0, 0, (uint64_t)posted);
			posted++;
		}
		int k = dprdma_poll_cq(s->cq, 64, wc);

		if (k < 0) {
			printf("FAIL: CQ overflowed\n");
			return n - done;
		}
		for (int i = 0; i < k; i++)
			bad += wc[i].status != 0;
		done += k;
		if (k == 0) {
			if (now_s() > deadline) {
				printf("FAIL: %d of %d WRITEs not complete in 60 s\n",
				       n - done, n);
				return bad + n - done;
			}
			usleep(100);
		}
	}
	return bad;
}

/* Two clients of one daemon, @p n QPs each: more than a client's first
 * doorbell summary word covers (4,096 slots) when n is, and every QP
 * carries a WRITE each way. */
static int
do_many(const char *sock, int n)
{
	struct side a = { 0 }, b = { 0 };
	struct dprdma_qp **qa = calloc((size_t)n, sizeof(*qa));
	struct dprdma_qp **qb = calloc((size_t)n, sizeof(*qb));
	struct dprdma_qp_init init = { .qp_type = 2 };
	double t0, t1, t2, t3;
	int i, made = 0, bad, wrong = 0;

	if (qa == NULL || qb == NULL || (size_t)n * 8 > BUF / 2)
		die("many: N too large");
	cq_entries = 1024;
	side_open(&a, sock, false);
	side_open(&b, sock, true);
	init.send_cq = init.recv_cq = a.cq;
	init.cap.max_send_wr = 2;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	t0 = now_s();
	for (i = 0; i < n; i++) {
		init.send_cq = init.recv_cq = a.cq;
		qa[i] = dprdma_create_qp(a.pd, &init);
		init.send_cq = init.recv_cq = b.cq;
		qb[i] = dprdma_create_qp(b.pd, &init);
		if (qa[i] == NULL || qb[i] == NULL) {
			CHECK(false, "QP pair %d of %d made (%s)", i, n, strerror(errno));
			break;
		}
		made++;
	}
	t1 = now_s();
	for (i = 0; i < made; i++) {
		connect_to(qa[i], &b.port.gid[1], dprdma_qp_num(qb[i]), 1000 + (uint32_t)i,
			   7000 + (uint32_t)i, 1);
		connect_to(qb[i], &a.port.gid[1], dprdma_qp_num(qa[i]), 7000 + (uint32_t)i,
			   1000 + (uint32_t)i, 1);
	}
	t2 = now_s();
	bad = write_each(&a, qa, &b, 0, 0xa5a5ull << 48, made);
	bad += write_each(&b, qb, &a, BUF / 2, 0x5a5aull << 48, made);
	t3 = now_s();
	for (i = 0; i < made; i++)
		wrong += ((uint64_t *)b.buf)[i] != ((0xa5a5ull << 48) | (uint64_t)i) ||
			 ((uint64_t *)(a.buf + BUF / 2))[i] != ((0x5a5aull << 48) | (uint64_t)i);
	CHECK(made == n && bad == 0 && wrong == 0,
	      "%d QP pairs of %d made; a WRITE each way on each: %d failed, %d "
	      "landed wrong", made, n, bad, wrong);
	printf("{\"qps\": %d, \"create_s\": %.3f, \"connect_s\": %.3f, "
	       "\"writes_s\": %.3f}\n", 2 * made, t1 - t0, t2 - t1, t3 - t2);
	fflush(stdout);
	if (getenv("DPR_MANY_HOLD") != NULL)
		(void)getchar();        /* the test looks at the daemon meanwhile */
	for (i = 0; i < made; i++)
		CHECK(dprdma_destroy_qp(qa[i]) == 0 && dprdma_destroy_qp(qb[i]) == 0,
		      "destroy QP pair %d", i);
	free(qa);
	free(qb);
	pair_close(&a, &b);
	printf("many: %d failures\n", failures);
	return failures != 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 5 && strcmp(argv[1], "ud-to") == 0)
		return do_ud_to(argv[2], argv[3], atoi(argv[4]));
	if (argc >= 4 && strcmp(argv[1], "ops") == 0) {
		use_events = argc >= 5 && strcmp(argv[4], "events") == 0;
		return do_ops(argv[2], argv[3]);
	}
	if (argc >= 4 && strcmp(argv[1], "srq") == 0)
		return do_srq(argv[2], argv[3]);
	if (argc >= 4 && strcmp(argv[1], "overflow") == 0)
		return do_overflow(argv[2], argv[3]);
	if (argc >= 4 && strcmp(argv[1], "scribble") == 0)
		return do_scribble(argv[2], argv[3]);
	if (argc >= 4 && strcmp(argv[1], "isolation") == 0)
		return do_isolation(argv[2], argv[3]);
	if (argc >= 4 && strcmp(argv[1], "memory") == 0)
		return do_memory_kinds(argv[2], argv[3]);
	if (argc >= 5 && strcmp(argv[1], "stream") == 0)
		return do_stream(argv[2], argv[3], atof(argv[4]));
	if (argc >= 6 && strcmp(argv[1], "bench") == 0)
		return do_bench(argv[2], atof(argv[3]), (uint32_t)atoi(argv[4]),
				(uint32_t)atoi(argv[5]));
	if (argc >= 4 && strcmp(argv[1], "victim") == 0)
		return do_victim(argv[2], argv[3]);
	if (argc >= 4 && strcmp(argv[1], "many") == 0)
		return do_many(argv[2], atoi(argv[3]));
	if (argc >= 3 && strcmp(argv[1], "exhaust") == 0)
		return do_exhaust(argv[2]);
	if (argc >= 4 && strcmp(argv[1], "mrloop") == 0)
		return do_mrloop(argv[2], atoi(argv[3]));
	if (argc >= 7 && strcmp(argv[1], "target") == 0)
		return do_target(argv[2], argv[3], atoi(argv[4]),
				 (uint32_t)strtoul(argv[5], NULL, 0),
				 (uint32_t)strtoul(argv[6], NULL, 0));
	fprintf(stderr, "usage: %s ops|isolation|memory|overflow|scribble|victim SOCK_A SOCK_B [events]\n"
		"       %s stream SOCK_A SOCK_B SECONDS\n"
		"       %s target SOCK PEER_IP NQP RQPN0 RPSN\n"
		"       %s ud-to SOCK ADDRESS N\n",
		argv[0], argv[0], argv[0], argv[0]);
	return 2;
}
