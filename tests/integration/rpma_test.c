/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdma-rpma-test: a server and a client on Debian's librpma 1.2, run
 * through the drop-in libibverbs and librdmacm (test_rdmacm.py):
 *
 *   server ADDR PORT  listens; its 16 KiB MR (read source, write
 *                     destination, flush to visibility) goes to the client
 *                     in the connection's private data with a pattern;
 *                     a receive waits for the client's message; then the
 *                     bytes the client wrote must be there
 *   client ADDR PORT  connects, READs the server's first 4 KiB into
 *                     volatile memory (checked), WRITEs 4 KiB at 4 KiB
 *                     and flushes it to visibility, then SENDs "written"
 *
 * as librpma's own examples (read to volatile memory, write + flush,
 * messages, private data) do. librpma registers a MAP_SHARED |
 * MAP_ANONYMOUS page for its flushes on every connection. Prints "ok" or
 * what went wrong; exit status 0 only when every check held.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <librpma.h>

#define MR_BYTES 16384
#define PART 4096
#define MSG 16

static int failures;

#define CHECK(c, ...) do { \
		if (!(c)) { \
			failures++; \
			printf("FAIL %s:%d: ", __func__, __LINE__); \
			printf(__VA_ARGS__); \
			printf("\n"); \
		} \
	} while (0)

#define TRY(call) do { \
		int rc_ = (call); \
		if (rc_ != 0) { \
			printf("FAIL %s:%d: %s: %s\n", __func__, __LINE__, #call, \
			       rpma_err_2str(rc_)); \
			exit(1); \
		} \
	} while (0)

static void
pattern(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 9));
}

/* The next completion of @p conn's CQ: its opcode and status checked. */
static void
completion(struct rpma_conn *conn, enum ibv_wc_opcode op, const char *what)
{
	struct rpma_cq *cq;
	struct ibv_wc wc;
	int rc;

	TRY(rpma_conn_get_cq(conn, &cq));
	while ((rc = rpma_cq_get_wc(cq, 1, &wc, NULL)) == RPMA_E_NO_COMPLETION)
		TRY(rpma_cq_wait(cq));
	TRY(rc);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == op,
	      "%s: completion status %d (%s) opcode %d, expected success, %d",
	      what, wc.status, ibv_wc_status_str(wc.status), wc.opcode, op);
}

static void
expect_event(struct rpma_conn *conn, enum rpma_conn_event want)
{
	enum rpma_conn_event ev;

	TRY(rpma_conn_next_event(conn, &ev));
	CHECK(ev == want, "connection event %s, expected %s",
	      rpma_utils_conn_event_2str(ev), rpma_utils_conn_event_2str(want));
}

static int
server(const char *addr, const char *port)
{
	struct rpma_conn_private_data pd;
	struct rpma_mr_local *mr, *rmr;
	struct ibv_context *ctx;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_peer *peer;
	struct rpma_ep *ep;
	uint8_t *mem, *msg, want[PART], desc[64];
	size_t dsize;

	mem = aligned_alloc(4096, MR_BYTES);
	msg = aligned_alloc(4096, 4096);
	if (mem == NULL || msg == NULL)
		return 1;
	memset(mem, 0, MR_BYTES);
	pattern(mem, PART, 1);
	TRY(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_LOCAL, &ctx));
	TRY(rpma_peer_new(ctx, &peer));
	TRY(rpma_mr_reg(peer, mem, MR_BYTES, RPMA_MR_USAGE_READ_SRC |
			RPMA_MR_USAGE_WRITE_DST | RPMA_MR_USAGE_FLUSH_TYPE_VISIBILITY,
			&mr));
	TRY(rpma_mr_reg(peer, msg, 4096, RPMA_MR_USAGE_RECV, &rmr));
	TRY(rpma_mr_get_descriptor_size(mr, &dsize));
	if (dsize > sizeof(desc))
		return 1;
	TRY(rpma_mr_get_descriptor(mr, desc));
	TRY(rpma_ep_listen(peer, addr, port, &ep));
	printf("listening\n");
	fflush(stdout);
	TRY(rpma_ep_next_conn_req(ep, NULL, &req));
	TRY(rpma_conn_req_recv(req, rmr, 0, MSG, NULL));
	pd.ptr = desc;
	pd.len = (uint8_t)dsize;
	TRY(rpma_conn_req_connect(&req, &pd, &conn));
	expect_event(conn, RPMA_CONN_ESTABLISHED);
	completion(conn, IBV_WC_RECV, "the client's message");
	CHECK(strcmp((char *)msg, "written") == 0, "message '%.16s'", (char *)msg);
	pattern(want, PART, 2);
	CHECK(memcmp(mem + PART, want, PART) == 0,
	      "the client's WRITE (flushed) is in the server's memory");
	expect_event(conn, RPMA_CONN_CLOSED);
	TRY(rpma_conn_disconnect(conn));
	TRY(rpma_conn_delete(&conn));
	TRY(rpma_ep_shutdown(&ep));
	TRY(rpma_mr_dereg(&rmr));
	TRY(rpma_mr_dereg(&mr));
	TRY(rpma_peer_delete(&peer));
	free(mem);
	free(msg);
	return 0;
}

static int
client(const char *addr, const char *port)
{
	struct rpma_conn_private_data pd;
	struct rpma_mr_remote *remote;
	struct rpma_mr_local *mr;
	struct ibv_context *ctx;
	struct rpma_conn_req *req;
	struct rpma_conn *conn;
	struct rpma_peer *peer;
	uint8_t *mem, want[PART];
	size_t rsize;

	mem = aligned_alloc(4096, 3 * PART);
	if (mem == NULL)
		return 1;
	memset(mem, 0, 3 * PART);
	TRY(rpma_utils_get_ibv_context(addr, RPMA_UTIL_IBV_CONTEXT_REMOTE, &ctx));
	TRY(rpma_peer_new(ctx, &peer));
	TRY(rpma_mr_reg(peer, mem, 3 * PART, RPMA_MR_USAGE_READ_DST |
			RPMA_MR_USAGE_WRITE_SRC | RPMA_MR_USAGE_SEND, &mr));
	TRY(rpma_conn_req_new(peer, addr, port, NULL, &req));
	TRY(rpma_conn_req_connect(&req, NULL, &conn));
	expect_event(conn, RPMA_CONN_ESTABLISHED);
	TRY(rpma_conn_get_private_data(conn, &pd));
	CHECK(pd.ptr != NULL && pd.len > 0, "the server's MR in the private data");
	if (pd.ptr == NULL)
		return 1;
	TRY(rpma_mr_remote_from_descriptor(pd.ptr, pd.len, &remote));
	TRY(rpma_mr_remote_get_size(remote, &rsize));
	CHECK(rsize == MR_BYTES, "remote MR of %zu bytes", rsize);

	/* read to volatile memory */
	TRY(rpma_read(conn, mr, 0, remote, 0, PART, RPMA_F_COMPLETION_ALWAYS, NULL));
	completion(conn, IBV_WC_RDMA_READ, "READ");
	pattern(want, PART, 1);
	CHECK(memcmp(mem, want, PART) == 0, "READ brought the server's bytes");

	/* write, then flush it to visibility (a READ behind the WRITE) */
	pattern(mem + PART, PART, 2);
	TRY(rpma_write(conn, remote, PART, mr, PART, PART,
		       RPMA_F_COMPLETION_ON_ERROR, NULL));
	TRY(rpma_flush(conn, remote, PART, PART, RPMA_FLUSH_TYPE_VISIBILITY,
		       RPMA_F_COMPLETION_ALWAYS, NULL));
	completion(conn, IBV_WC_RDMA_READ, "flush");

	/* a message: the server checks what it holds */
	snprintf((char *)mem + 2 * PART, MSG, "written");
	TRY(rpma_send(conn, mr, 2 * PART, MSG, RPMA_F_COMPLETION_ALWAYS, NULL));
	completion(conn, IBV_WC_SEND, "SEND");

	TRY(rpma_conn_disconnect(conn));
	expect_event(conn, RPMA_CONN_CLOSED);
	TRY(rpma_conn_delete(&conn));
	TRY(rpma_mr_remote_delete(&remote));
	TRY(rpma_mr_dereg(&mr));
	TRY(rpma_peer_delete(&peer));
	free(mem);
	return 0;
}

int
main(int argc, char **argv)
{
	int rc;

	if (argc != 4 || (strcmp(argv[1], "server") != 0 &&
			  strcmp(argv[1], "client") != 0)) {
		fprintf(stderr, "usage: %s server|client ADDR PORT\n", argv[0]);
		return 2;
	}
	/* librpma's own errors on stderr (DPR_RPMA_DEBUG: everything) */
	rpma_log_set_threshold(RPMA_LOG_THRESHOLD_AUX, getenv("DPR_RPMA_DEBUG") ?
			       RPMA_LOG_LEVEL_DEBUG : RPMA_LOG_LEVEL_ERROR);
	rc = strcmp(argv[1], "server") == 0 ? server(argv[2], argv[3]) :
		client(argv[2], argv[3]);
	printf("%s: %s (%d failures)\n", argv[1],
	       rc == 0 && failures == 0 ? "ok" : "FAILED", failures);
	return rc != 0 || failures != 0;
}
