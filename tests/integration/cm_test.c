/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdma-cm-test: an RDMA CM program for the cases rping and ucmatose do
 * not make: a listener that rejects (with private data), private data
 * both ways on REQ and REP, a disconnect from the passive side, the
 * events a connection to nowhere gets. An ordinary librdmacm program:
 * the tests run it through the drop-in librdmacm.
 *
 *   dprdma-cm-test listen PORT accept|reject|accept-disconnect|hold
 *   dprdma-cm-test connect ADDR PORT [wait-disconnect]
 *   dprdma-cm-test teardown ADDR
 *   dprdma-cm-test count PORT SECONDS
 *
 * count: a listener that answers nothing; after SECONDS it prints how
 * many connection requests it was handed ("requests N") and exits, its
 * IDs with it (a REQ flood's bounds, test_hostile_peer.py).
 *
 * teardown: what threads see when another tears down under them, as with
 * the kernel's rdma_cm: rdma_destroy_id() waits until the ID's events
 * handed out are acknowledged (an ADDR_RESOLVED for ADDR, held), and a
 * thread blocked in rdma_get_cm_event() on a channel another thread
 * destroys stays blocked (rping's CM thread does that while main exits).
 *
 * It prints one line per event ("event NAME status N [data TEXT]") and
 * exits 0 when the run went as its mode says.
 */

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netdb.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>

static struct rdma_event_channel *ch;

static struct rdma_cm_event *
next_event(void)
{
	struct rdma_cm_event *ev;

	if (rdma_get_cm_event(ch, &ev) != 0) {
		perror("rdma_get_cm_event");
		exit(1);
	}
	printf("event %s status %d", rdma_event_str(ev->event), ev->status);
	if ((ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ||
	     ev->event == RDMA_CM_EVENT_ESTABLISHED ||
	     ev->event == RDMA_CM_EVENT_REJECTED) &&
	    ev->param.conn.private_data_len != 0 &&
	    ((const char *)ev->param.conn.private_data)[0] != '\0')
		printf(" data %.*s", (int)strnlen(ev->param.conn.private_data,
						  ev->param.conn.private_data_len),
		       (const char *)ev->param.conn.private_data);
	printf("\n");
	fflush(stdout);
	return ev;
}

static int
make_qp(struct rdma_cm_id *id)
{
	struct ibv_cq *cq = ibv_create_cq(id->verbs, 16, NULL, NULL, 0);
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	if (cq == NULL || rdma_create_qp(id, NULL, &a) != 0) {
		perror("rdma_create_qp");
		return -1;
	}
	return 0;
}

/* A listener on any address at @p port. @return it, or NULL (said why). */
static struct rdma_cm_id *
listen_on(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct rdma_cm_id *lid;

	if (rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_bind_addr(lid, (struct sockaddr *)&sin) != 0 ||
	    rdma_listen(lid, 4) != 0) {
		perror("listen");
		return NULL;
	}
	printf("listening on %d\n", port);
	fflush(stdout);
	return lid;
}

static int
do_listen(int port, const char *mode)
{
	struct rdma_cm_id *lid, *id;
	struct rdma_cm_event *ev;
	const char *reply = "hello-from-server";
	struct rdma_conn_param p = { .private_data = reply,
				     .private_data_len = (uint8_t)strlen(reply) + 1,
				     .responder_resources = 1, .initiator_depth = 1,
				     .rnr_retry_count = 7 };

	lid = listen_on(port);
	if (lid == NULL)
		return 1;
	ev = next_event();
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return 1;
	id = ev->id;
	rdma_ack_cm_event(ev);
	if (strcmp(mode, "hold") == 0) {
		/* never answers: the test kills it */
		for (;;)
			pause();
	}
	if (strcmp(mode, "reject") == 0) {
		const char *no = "go-away";

		if (rdma_reject(id, no, (uint8_t)strlen(no) + 1) != 0) {
			perror("rdma_reject");
			return 1;
		}
		rdma_destroy_id(id);
		rdma_destroy_id(lid);
		return 0;
	}
	if (make_qp(id) != 0 || rdma_accept(id, &p) != 0) {
		perror("rdma_accept");
		return 1;
	}
	ev = next_event();
	if (ev->event != RDMA_CM_EVENT_ESTABLISHED)
		return 1;
	rdma_ack_cm_event(ev);
	if (strcmp(mode, "accept-disconnect") == 0 && rdma_disconnect(id) != 0) {
		perror("rdma_disconnect");
		return 1;
	}
	ev = next_event();
	if (ev->event != RDMA_CM_EVENT_DISCONNECTED)
		return 1;
	rdma_ack_cm_event(ev);
	if (strcmp(mode, "accept") == 0)
		rdma_disconnect(id);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_id(lid);
	return 0;
}

/* A new ID on ch with ADDR:PORT resolved. @return its ADDR_RESOLVED event,
 * not acknowledged, or NULL (said why). */
static struct rdma_cm_event *
resolve(const char *addr, int port, struct rdma_cm_id **id)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *res;
	struct rdma_cm_event *ev;
	char service[16];

	snprintf(service, sizeof(service), "%d", port);
	if (rdma_getaddrinfo(addr, service, &hints, &res) != 0) {
		perror("rdma_getaddrinfo");
		return NULL;
	}
	if (rdma_create_id(ch, id, NULL, RDMA_PS_TCP) != 0 ||
	    rdma_resolve_addr(*id, NULL, res->ai_dst_addr, 2000) != 0) {
		perror("rdma_resolve_addr");
		return NULL;
	}
	rdma_freeaddrinfo(res);
	ev = next_event();
	return ev->event == RDMA_CM_EVENT_ADDR_RESOLVED ? ev : NULL;
}

static int
do_connect(const char *addr, int port, int wait_disconnect)
{
	struct rdma_cm_id *id;
	struct rdma_cm_event *ev;
	const char *hello = "hello-from-client";
	struct rdma_conn_param p = { .private_data = hello,
				     .private_data_len = (uint8_t)strlen(hello) + 1,
				     .responder_resources = 1, .initiator_depth = 1,
				     .retry_count = 7, .rnr_retry_count = 7 };
	int rc = 1;

	ev = resolve(addr, port, &id);
	if (ev == NULL)
		return 1;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(id, 2000) != 0) {
		perror("rdma_resolve_route");
		return 1;
	}
	ev = next_event();
	if (ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED)
		return 1;
	rdma_ack_cm_event(ev);
	if (make_qp(id) != 0 || rdma_connect(id, &p) != 0) {
		perror("rdma_connect");
		return 1;
	}
	ev = next_event();
	if (ev->event == RDMA_CM_EVENT_ESTABLISHED) {
		rdma_ack_cm_event(ev);
		if (wait_disconnect) {
			ev = next_event();
			rc = ev->event == RDMA_CM_EVENT_DISCONNECTED ? 0 : 1;
			rdma_ack_cm_event(ev);
		} else {
			rdma_disconnect(id);
			ev = next_event();
			rc = ev->event == RDMA_CM_EVENT_DISCONNECTED ? 0 : 1;
			rdma_ack_cm_event(ev);
		}
	} else {
		rc = 2;         /* not connected: the event says why */
		rdma_ack_cm_event(ev);
	}
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	return rc;
}

static atomic_int destroyed, woke;

static void *
destroy_thread(void *arg)
{
	rdma_destroy_id(arg);
	atomic_store(&destroyed, 1);
	return NULL;
}

static void *
wait_thread(void *arg)
{
	struct rdma_cm_event *ev;
	int rc = rdma_get_cm_event(arg, &ev);

	printf("rdma_get_cm_event on the destroyed channel returned %d (%s)\n",
	       rc, rc != 0 ? strerror(errno) : rdma_event_str(ev->event));
	fflush(stdout);
	atomic_store(&woke, 1);
	return NULL;
}

static int
do_teardown(const char *addr)
{
	struct rdma_event_channel *ch2;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	pthread_t t;
	int i, fails = 0;

	ev = resolve(addr, 7000, &id);
	if (ev == NULL)
		return 1;
	/* the event held: another thread's rdma_destroy_id() waits for it */
	pthread_create(&t, NULL, destroy_thread, id);
	usleep(300000);
	if (atomic_load(&destroyed)) {
		printf("FAIL: rdma_destroy_id returned before its event was "
		       "acknowledged\n");
		fails++;
	}
	rdma_ack_cm_event(ev);
	for (i = 0; i < 500 && !atomic_load(&destroyed); i++)
		usleep(10000);
	if (!atomic_load(&destroyed)) {
		printf("FAIL: rdma_destroy_id still waiting 5 s after the ack\n");
		fails++;
	} else {
		pthread_join(t, NULL);
		printf("rdma_destroy_id returned once its event was acknowledged\n");
	}
	/* a reader blocked on a channel destroyed under it stays blocked */
	ch2 = rdma_create_event_channel();
	if (ch2 == NULL) {
		perror("rdma_create_event_channel");
		return 1;
	}
	pthread_create(&t, NULL, wait_thread, ch2);
	usleep(200000);
	rdma_destroy_event_channel(ch2);
	usleep(500000);
	if (atomic_load(&woke)) {
		printf("FAIL: a reader woke when its channel was destroyed\n");
		fails++;
	} else {
		printf("the reader of the destroyed channel is still blocked\n");
	}
	fflush(stdout);
	/* the process exits with that thread still blocked, as rping's */
	_exit(fails != 0);
}

static int
do_count(int port, int seconds)
{
	struct pollfd pf = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	struct timespec now, end;
	int n = 0;

	if (listen_on(port) == NULL)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += seconds;
	for (;;) {
		int left;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = (int)((end.tv_sec - now.tv_sec) * 1000 +
			     (end.tv_nsec - now.tv_nsec) / 1000000);
		if (left <= 0 || poll(&pf, 1, left) <= 0)
			break;
		if (rdma_get_cm_event(ch, &ev) != 0) {
			perror("rdma_get_cm_event");
			return 1;
		}
		n += ev->event == RDMA_CM_EVENT_CONNECT_REQUEST;
		rdma_ack_cm_event(ev);
	}
	printf("requests %d\n", n);
	fflush(stdout);
	return 0;
}

int
main(int argc, char **argv)
{
	ch = rdma_create_event_channel();
	if (ch == NULL) {
		perror("rdma_create_event_channel");
		return 1;
	}
	if (argc == 4 && strcmp(argv[1], "listen") == 0)
		return do_listen(atoi(argv[2]), argv[3]);
	if ((argc == 4 || argc == 5) && strcmp(argv[1], "connect") == 0)
		return do_connect(argv[2], atoi(argv[3]), argc == 5);
	if (argc == 3 && strcmp(argv[1], "teardown") == 0)
		return do_teardown(argv[2]);
	if (argc == 4 && strcmp(argv[1], "count") == 0)
		return do_count(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: %s listen PORT accept|reject|accept-disconnect|hold\n"
		"       %s connect ADDR PORT [wait-disconnect]\n"
		"       %s teardown ADDR\n"
		"       %s count PORT SECONDS\n", argv[0], argv[0], argv[0], argv[0]);
	return 64;
}
