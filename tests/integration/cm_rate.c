/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdma-cm-rate: how fast RDMA CM connects, uses and tears down many
 * connections at once (issue 45). An ordinary librdmacm program: the
 * tests and tools/bench.py run it through the drop-in librdmacm.
 *
 *   dprdma-cm-rate serve PORT N
 *   dprdma-cm-rate connect ADDR PORT N [WINDOW]
 *
 * connect opens N RC connections to ADDR:PORT in parallel, at most WINDOW
 * (default N) not yet established at a time, all on one event channel:
 * each ID resolves its address and route, gets a QP (1 send and 1 receive
 * WR, one CQ for all) and connects. Each connection is then used: the
 * client sends 64 B naming the connection, the server answers on the same
 * QP with its own 64 B naming it back, the client checks the answer. Then
 * the client disconnects every one and destroys what it made.
 *
 * serve accepts N connections (listen backlog 1,024), answers each one's
 * message and leaves when all N have disconnected.
 *
 * Each prints one JSON line: connections established, used and torn down,
 * failures by kind, and (client) the seconds until the last was
 * established, the last was used and the last was torn down, with the
 * rates they make. Exit status 0 when all N went through every step.
 */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include <rdma/rdma_cma.h>

#define MSG 64

enum step { FREE, RESOLVING, CONNECTING, ESTABLISHED, USED, CLOSING, GONE };

struct conn {
	struct rdma_cm_id *id;
	enum step step;
};

static struct rdma_event_channel *ch;
static struct conn *conns;
static uint8_t *bufs;                   /* 2 * MSG a connection: send, receive */
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_comp_channel *cc;
static struct ibv_mr *mr;
static int n_conns, cq_size;
static struct {
	int established, used, gone, started;
	int rejected, unreachable, addr_error, route_error, connect_error,
	    bad_data, wc_error, other;
} st;

static double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void
die(const char *what)
{
	fprintf(stderr, "dprdma-cm-rate: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* The PD, CQ and MR of the first ID's device, shared by every QP. */
static void
resources(struct ibv_context *verbs)
{
	struct ibv_device_attr a;

	if (pd != NULL)
		return;
	if (ibv_query_device(verbs, &a) != 0)
		die("ibv_query_device");
	cq_size = 2 * n_conns + 16;
	if (cq_size > a.max_cqe)
		cq_size = a.max_cqe;
	pd = ibv_alloc_pd(verbs);
	cc = ibv_create_comp_channel(verbs);
	if (pd == NULL || cc == NULL)
		die("ibv_alloc_pd");
	cq = ibv_create_cq(verbs, cq_size, NULL, cc, 0);
	if (cq == NULL)
		die("ibv_create_cq");
	if (ibv_req_notify_cq(cq, 0) != 0)
		die("ibv_req_notify_cq");
	fcntl(cc->fd, F_SETFL, fcntl(cc->fd, F_GETFL) | O_NONBLOCK);
	bufs = calloc((size_t)n_conns, 2 * MSG);
	if (bufs == NULL)
		die("calloc");
	mr = ibv_reg_mr(pd, bufs, (size_t)n_conns * 2 * MSG, IBV_ACCESS_LOCAL_WRITE);
	if (mr == NULL)
		die("ibv_reg_mr");
}

static uint8_t *
sbuf(int i)
{
	return bufs + (size_t)i * 2 * MSG;
}

static uint8_t *
rbuf(int i)
{
	return bufs + (size_t)i * 2 * MSG + MSG;
}

/* A QP on @c's ID with one receive posted into its buffer. */
static int
make_qp(int i)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_sge sge = { .addr = (uintptr_t)rbuf(i), .length = MSG,
			       .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (rdma_create_qp(conns[i].id, pd, &a) != 0) {
		perror("rdma_create_qp");
		return -1;
	}
	if (ibv_post_recv(conns[i].id->qp, &wr, &bad) != 0) {
		perror("ibv_post_recv");
		return -1;
	}
	return 0;
}

static void
send_msg(int i, const char *who, int peer_index)
{
	struct ibv_sge sge = { .addr = (uintptr_t)sbuf(i), .length = MSG,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = (uint64_t)i | 1ull << 32,
				  .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	memset(sbuf(i), 0, MSG);
	snprintf((char *)sbuf(i), MSG, "%s %d", who, peer_index);
	if (ibv_post_send(conns[i].id->qp, &wr, &bad) != 0) {
		perror("ibv_post_send");
		st.wc_error++;
	}
}

static void
release(int i)
{
	if (conns[i].id == NULL)
		return;
	if (conns[i].id->qp != NULL)
		rdma_destroy_qp(conns[i].id);
	rdma_destroy_id(conns[i].id);
	conns[i].id = NULL;
	conns[i].step = GONE;
	st.gone++;
}

/* Completions: the client checks answers, the server answers. */
static void
poll_cq(bool server)
{
	struct ibv_wc wc[32];
	int n;

	while ((n = ibv_poll_cq(cq, 32, wc)) > 0) {
		for (int k = 0; k < n; k++) {
			int i = (int)(wc[k].wr_id & 0xffffffff);
			char want[MSG];

			if (wc[k].status != IBV_WC_SUCCESS) {
				if (st.wc_error++ < 5)
					fprintf(stderr, "connection %d: %s\n", i,
						ibv_wc_status_str(wc[k].status));
				continue;
			}
			if (wc[k].wr_id >> 32 != 0)
				continue;       /* a send done */
			if (server) {
				int peer;

				if (sscanf((char *)rbuf(i), "hello %d", &peer) != 1) {
					st.bad_data++;
					continue;
				}
				send_msg(i, "reply", peer);
				st.used++;
				continue;
			}
			snprintf(want, sizeof(want), "reply %d", i);
			if (strncmp((char *)rbuf(i), want, MSG) != 0) {
				if (st.bad_data++ < 5)
					fprintf(stderr, "connection %d: answered \"%.20s\"\n",
						i, (char *)rbuf(i));
				continue;
			}
			conns[i].step = USED;
			st.used++;
		}
	}
	if (n < 0)
		die("ibv_poll_cq");
}

/* Sleep until a CM event or a completion (or 100 ms). */
static void
wait_any(void)
{
	struct pollfd pf[2] = { { .fd = ch->fd, .events = POLLIN },
				{ .fd = cc != NULL ? cc->fd : -1, .events = POLLIN } };

	if (poll(pf, 2, 100) < 0 && errno != EINTR)
		die("poll");
	if (cc != NULL && (pf[1].revents & POLLIN)) {
		struct ibv_cq *c;
		void *ctx;

		if (ibv_get_cq_event(cc, &c, &ctx) == 0) {
			ibv_ack_cq_events(c, 1);
			if (ibv_req_notify_cq(c, 0) != 0)
				die("ibv_req_notify_cq");
		}
	}
}

/* Connections that ended in an event other than ESTABLISHED. */
static int
conn_failures(void)
{
	return st.rejected + st.unreachable + st.addr_error + st.route_error +
	       st.connect_error + st.other;
}

static void
failed(int i, enum rdma_cm_event_type e, int status)
{
	switch (e) {
	case RDMA_CM_EVENT_REJECTED: st.rejected++; break;
	case RDMA_CM_EVENT_UNREACHABLE: st.unreachable++; break;
	case RDMA_CM_EVENT_ADDR_ERROR: st.addr_error++; break;
	case RDMA_CM_EVENT_ROUTE_ERROR: st.route_error++; break;
	case RDMA_CM_EVENT_CONNECT_ERROR: st.connect_error++; break;
	default: st.other++; break;
	}
	if (conn_failures() <= 5)
		fprintf(stderr, "connection %d: %s (status %d)\n", i,
			rdma_event_str(e), status);
}

static int
start(int i, struct sockaddr *dst)
{
	if (rdma_create_id(ch, &conns[i].id, (void *)(intptr_t)i, RDMA_PS_TCP) != 0)
		die("rdma_create_id");
	if (rdma_resolve_addr(conns[i].id, NULL, dst, 2000) != 0)
		die("rdma_resolve_addr");
	conns[i].step = RESOLVING;
	st.started++;
	return 0;
}

static int
do_connect(const char *addr, const char *port, int window)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1,
				     .retry_count = 7, .rnr_retry_count = 7 };
	double t0, t_est = 0, t_used = 0, t_down = 0;
	int in_flight = 0, failures;

	if (rdma_getaddrinfo(addr, port, &hints, &res) != 0)
		die("rdma_getaddrinfo");
	t0 = now_s();
	while (st.started < n_conns && in_flight < window) {
		start(st.started, res->ai_dst_addr);
		in_flight++;
	}
	for (;;) {
		struct rdma_cm_event *ev;

		while (rdma_get_cm_event(ch, &ev) == 0) {
			int i = (int)(intptr_t)ev->id->context;
			enum rdma_cm_event_type e = ev->event;
			int status = ev->status;

			rdma_ack_cm_event(ev);
			switch (e) {
			case RDMA_CM_EVENT_ADDR_RESOLVED:
				if (rdma_resolve_route(conns[i].id, 2000) != 0)
					die("rdma_resolve_route");
				break;
			case RDMA_CM_EVENT_ROUTE_RESOLVED:
				resources(conns[i].id->verbs);
				if (make_qp(i) != 0)
					exit(2);
				if (rdma_connect(conns[i].id, &p) != 0)
					die("rdma_connect");
				conns[i].step = CONNECTING;
				break;
			case RDMA_CM_EVENT_ESTABLISHED:
				conns[i].step = ESTABLISHED;
				st.established++;
				in_flight--;
				send_msg(i, "hello", i);
				break;
			case RDMA_CM_EVENT_DISCONNECTED:
				release(i);
				break;
			default:
				failed(i, e, status);
				in_flight--;
				release(i);
				break;
			}
			if (st.started < n_conns && in_flight < window) {
				start(st.started, res->ai_dst_addr);
				in_flight++;
			}
		}
		if (errno != EAGAIN)
			die("rdma_get_cm_event");
		if (cq != NULL)
			poll_cq(false);
		failures = conn_failures();
		if (t_est == 0 && st.established + failures == n_conns)
			t_est = now_s();
		if (t_used == 0 && t_est != 0 &&
		    st.used + failures + st.wc_error + st.bad_data >= n_conns) {
			t_used = now_s();
			for (int i = 0; i < n_conns; i++)
				if (conns[i].id != NULL) {
					conns[i].step = CLOSING;
					rdma_disconnect(conns[i].id);
				}
		}
		if (t_used != 0 && st.gone == n_conns) {
			t_down = now_s();
			break;
		}
		wait_any();
	}
	rdma_freeaddrinfo(res);
	printf("{\"connections\": %d, \"window\": %d, \"established\": %d, "
	       "\"used\": %d, \"torn_down\": %d, \"rejected\": %d, "
	       "\"unreachable\": %d, \"addr_error\": %d, \"route_error\": %d, "
	       "\"connect_error\": %d, \"other\": %d, \"wc_error\": %d, "
	       "\"bad_data\": %d, \"established_s\": %.4f, \"used_s\": %.4f, "
	       "\"teardown_s\": %.4f, \"connect_per_s\": %.1f, "
	       "\"teardown_per_s\": %.1f}\n",
	       n_conns, window, st.established, st.used, st.gone, st.rejected,
	       st.unreachable, st.addr_error, st.route_error, st.connect_error,
	       st.other, st.wc_error, st.bad_data, t_est - t0, t_used - t0,
	       t_down - t_used, st.established / (t_est - t0),
	       st.gone / (t_down - t_used));
	fflush(stdout);
	return !(st.established == n_conns && st.used == n_conns &&
		 st.gone == n_conns && st.wc_error == 0 && st.bad_data == 0);
}

static int
do_serve(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct rdma_conn_param p = { .responder_resources = 1, .initiator_depth = 1,
				     .rnr_retry_count = 7 };
	struct rdma_cm_id *lid;
	int accepted = 0;

	if (rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_bind_addr(lid, (struct sockaddr *)&sin) != 0 ||
	    rdma_listen(lid, 1024) != 0)
		die("listen");
	printf("listening on %d\n", port);
	fflush(stdout);
	while (st.gone < n_conns) {
		struct rdma_cm_event *ev;

		while (rdma_get_cm_event(ch, &ev) == 0) {
			struct rdma_cm_id *id = ev->id;
			enum rdma_cm_event_type e = ev->event;
			int i;

			if (e == RDMA_CM_EVENT_CONNECT_REQUEST) {
				rdma_ack_cm_event(ev);
				if (accepted == n_conns) {
					rdma_reject(id, NULL, 0);
					rdma_destroy_id(id);
					st.other++;
					continue;
				}
				i = accepted++;
				conns[i].id = id;
				id->context = (void *)(intptr_t)i;
				resources(id->verbs);
				if (make_qp(i) != 0 || rdma_accept(id, &p) != 0)
					die("rdma_accept");
				continue;
			}
			i = (int)(intptr_t)id->context;
			rdma_ack_cm_event(ev);
			if (e == RDMA_CM_EVENT_ESTABLISHED) {
				st.established++;
			} else if (e == RDMA_CM_EVENT_DISCONNECTED) {
				release(i);
			} else {
				failed(i, e, 0);
				release(i);
			}
		}
		if (errno != EAGAIN)
			die("rdma_get_cm_event");
		if (cq != NULL)
			poll_cq(true);
		if (st.gone < n_conns)
			wait_any();
	}
	rdma_destroy_id(lid);
	printf("{\"connections\": %d, \"established\": %d, \"used\": %d, "
	       "\"torn_down\": %d, \"failed\": %d, \"wc_error\": %d, "
	       "\"bad_data\": %d}\n", n_conns, st.established, st.used, st.gone,
	       conn_failures(),
	       st.wc_error, st.bad_data);
	fflush(stdout);
	return !(st.established == n_conns && st.used == n_conns &&
		 st.wc_error == 0 && st.bad_data == 0);
}

static void
cleanup(void)
{
	if (mr != NULL)
		ibv_dereg_mr(mr);
	if (cq != NULL)
		ibv_destroy_cq(cq);
	if (cc != NULL)
		ibv_destroy_comp_channel(cc);
	if (pd != NULL)
		ibv_dealloc_pd(pd);
	free(bufs);
	free(conns);
	rdma_destroy_event_channel(ch);
}

int
main(int argc, char **argv)
{
	int rc;

	if (argc >= 4 && strcmp(argv[1], "serve") == 0)
		n_conns = atoi(argv[3]);
	else if ((argc == 5 || argc == 6) && strcmp(argv[1], "connect") == 0)
		n_conns = atoi(argv[4]);
	if (n_conns <= 0) {
		fprintf(stderr, "usage: %s serve PORT N\n"
			"       %s connect ADDR PORT N [WINDOW]\n", argv[0], argv[0]);
		return 64;
	}
	ch = rdma_create_event_channel();
	conns = calloc((size_t)n_conns, sizeof(*conns));
	if (ch == NULL || conns == NULL)
		die("rdma_create_event_channel");
	fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
	if (strcmp(argv[1], "serve") == 0)
		rc = do_serve(atoi(argv[2]));
	else
		rc = do_connect(argv[2], argv[3],
				argc == 6 ? atoi(argv[5]) : n_conns);
	cleanup();
	return rc;
}
