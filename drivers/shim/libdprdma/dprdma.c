/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * libdprdma: the client side of the shim (see dprdma.h for what it
 * promises, lib/shm/dpr_shm.h for the ABI). No DPDK here: a client is an
 * ordinary process.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "libdprdma_private.h"

/* ------------------------------------------------------- the socket */

static const char *
socket_path(void)
{
	const char *p = getenv(DPR_SHM_SOCKET_ENV);

	return p != NULL && *p != '\0' ? p : DPR_SHM_SOCKET_DEFAULT;
}

static int
connect_daemon(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (path == NULL)
		path = socket_path();
	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* A daemon that cannot take another client ([control] max_clients) sends
 * one message with the errno and hangs up: the send or the receive of the
 * first call fails, and the refusal waits behind the error. */
static int
refusal(int sfd, struct dpr_shm_msg *m, int rc)
{
	int fd, i;

	for (i = 0; i < 2; i++) {
		ssize_t n = dpr_shm_recv(sfd, m, sizeof(*m), MSG_DONTWAIT, &fd, NULL);

		if (fd >= 0)
			close(fd);
		if (n == (ssize_t)sizeof(*m) && m->magic == DPR_SHM_MAGIC &&
		    m->status < 0)
			return m->status;
		if (n >= 0 || errno != ECONNRESET)
			break;
	}
	return rc;
}

/*
 * The answer to a request just sent: looked for at once a few times,
 * yielding the CPU between looks, before sleeping in recvmsg(). Most
 * answers come within tens of microseconds (the daemon's main lcore stays
 * awake for a while after each request); a thread asleep needs a wake-up
 * to take one, which on a shared box costs as much again. RDMA CM and
 * verbs set-up come as strings of such calls: 10,000 connections at once
 * between two boxes on 2 shared CPUs, 2,920 -> 4,220 a second (8 looks:
 * 3,680; 1 ms: no better than 200 us).
 */
#define ANSWER_SPIN_NS 200000

static ssize_t
await_answer(int sfd, struct dpr_shm_msg *m, int *fd)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		ssize_t n = dpr_shm_recv(sfd, m, sizeof(*m), MSG_DONTWAIT, fd, NULL);

		if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			return n;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) >
		    ANSWER_SPIN_NS)
			break;
		sched_yield();
	}
	return dpr_shm_recv(sfd, m, sizeof(*m), 0, fd, NULL);
}

/* One request, one answer. @return the answer's status (0 or -errno). */
int
dpr_call_fd(int sfd, uint32_t *seq, struct dpr_shm_msg *m, int send_fd,
	    int *recv_fd)
{
	uint16_t op = m->op;
	uint32_t s = ++*seq;
	int fd = -1;
	ssize_t n;

	m->magic = DPR_SHM_MAGIC;
	m->version = DPR_SHM_VERSION;
	m->seq = s;
	m->status = 0;
	if (dpr_shm_send(sfd, m, sizeof(*m), send_fd) != (ssize_t)sizeof(*m))
		return refusal(sfd, m, -EPIPE);
	n = await_answer(sfd, m, &fd);
	if (n < 0 && errno == ECONNRESET)
		return refusal(sfd, m, -ECONNRESET);
	if (recv_fd != NULL)
		*recv_fd = fd;
	else if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof(*m) || m->magic != DPR_SHM_MAGIC ||
	    m->op != op || m->seq != s)
		return m->status < 0 && n == (ssize_t)sizeof(*m) ? m->status : -EPROTO;
	return m->status;
}

int
dpr_call(struct dprdma_context *ctx, struct dpr_shm_msg *m, int send_fd,
	 int *recv_fd)
{
	int rc;

	pthread_mutex_lock(&ctx->lock);
	rc = dpr_call_fd(ctx->fd, &ctx->seq, m, send_fd, recv_fd);
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

void *
dpr_map_fd(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* ---------------------------------------------------------- devices */

int
dprdma_list_devices(uint64_t *guids, int max)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_LIST_DEVICES };
	uint32_t seq = 0, i;
	int fd = connect_daemon(NULL), rc;

	if (fd < 0)
		return -errno;
	rc = dpr_call_fd(fd, &seq, &m, -1, NULL);
	close(fd);
	if (rc != 0)
		return rc;
	for (i = 0; i < m.list_resp.n && (int)i < max && i < DPR_SHM_MAX_DEVICES; i++)
		guids[i] = m.list_resp.guid[i];
	return (int)i;
}

int
dprdma_connect(void)
{
	return connect_daemon(NULL);
}

int
dprdma_call(int fd, uint32_t *seq, struct dpr_shm_msg *m, int send_fd)
{
	return dpr_call_fd(fd, seq, m, send_fd, NULL);
}

struct dprdma_context *
dprdma_open(unsigned int index)
{
	return dprdma_open_at(NULL, index);
}

/* Empty CQ polls in a row after which a polling thread yields its CPU
 * (doc/deploying.rst, "Shared cores"). A daemon whose workers nap (it
 * gave a wake fd: --idle yield) shares its cores with its clients: a
 * client spinning on an empty CQ holds the CPU its worker -- or the
 * peer's, or another rank -- needs to make that CQ's completion. Two
 * yielding boxes over memif with Open MPI's NetPIPE: 1 B 46 -> 22 us,
 * 64 KiB 1.8 -> 4.0 Gbit/s; ibv_rc_pingpong 98-130 -> 44-54 us. Busy
 * workers own their cores: their clients never yield.
 * DPRDMA_POLL_YIELD=N overrides (0: never). */
#define POLL_YIELD_ENV "DPRDMA_POLL_YIELD"
#define POLL_YIELD_DEFAULT 4u

static uint32_t
poll_yield(bool shared)
{
	const uint32_t dflt = shared ? POLL_YIELD_DEFAULT : 0;
	const char *e = getenv(POLL_YIELD_ENV);
	char *end;
	unsigned long v;

	if (e == NULL || *e == '\0')
		return dflt;
	errno = 0;
	v = strtoul(e, &end, 10);
	if (errno != 0 || *end != '\0' || v > UINT32_MAX) {
		fprintf(stderr, "libdprdma: %s=%s is not a count of polls "
			"(0 to %u); using %u\n", POLL_YIELD_ENV, e, UINT32_MAX, dflt);
		return dflt;
	}
	return (uint32_t)v;
}

struct dprdma_context *
dprdma_open_at(const char *socket, unsigned int index)
{
	struct dprdma_context *ctx = calloc(1, sizeof(*ctx));
	struct dpr_shm_msg m = { .op = DPR_SHM_OPEN };
	int cfd = -1, rc;

	if (ctx == NULL)
		return NULL;
	pthread_mutex_init(&ctx->lock, NULL);
	ctx->async_fd = eventfd(0, EFD_CLOEXEC);
	ctx->fd = connect_daemon(socket);
	if (ctx->fd < 0 || ctx->async_fd < 0) {
		rc = -errno;
		goto fail;
	}
	m.open.port = index;
	rc = dpr_call(ctx, &m, ctx->async_fd, &cfd);
	if (rc == 0 && cfd < 0)
		rc = -EPROTO;
	if (rc != 0)
		goto fail;
	ctx->dev = m.open_resp.dev;
	ctx->port = m.open_resp.port;
	ctx->ctrl_bytes = m.open_resp.ctrl_bytes;
	if (ctx->ctrl_bytes < sizeof(struct dpr_shm_ctrl)) {
		close(cfd);
		rc = -EPROTO;
		goto fail;
	}
	ctx->ctrl = dpr_map_fd(cfd, ctx->ctrl_bytes);
	if (ctx->ctrl == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	/* what wakes the worker when it naps (a daemon whose workers never
	 * nap has none: posts are seen the next round anyway) */
	memset(&m, 0, sizeof(m));
	m.op = DPR_SHM_GET_WAKE;
	if (dpr_call(ctx, &m, -1, &ctx->wake_fd) != 0)
		ctx->wake_fd = -1;
	ctx->poll_yield = poll_yield(ctx->wake_fd >= 0);
	return ctx;
fail:
	if (ctx->fd >= 0)
		close(ctx->fd);
	if (ctx->async_fd >= 0)
		close(ctx->async_fd);
	free(ctx);
	errno = -rc;
	return NULL;
}

int
dprdma_async_fd(const struct dprdma_context *ctx)
{
	return ctx->async_fd;
}

int
dprdma_get_async_event(struct dprdma_context *ctx, uint32_t *type, void **obj)
{
	for (;;) {
		uint32_t prod = __atomic_load_n(&ctx->ctrl->ev_prod, __ATOMIC_ACQUIRE);
		uint64_t v;

		if (ctx->ev_cons != prod) {
			struct dpr_shm_event e;

			if (prod - ctx->ev_cons > DPR_SHM_EVENTS)
				ctx->ev_cons = prod - DPR_SHM_EVENTS;   /* lost */
			e = ctx->ctrl->ev[ctx->ev_cons % DPR_SHM_EVENTS];
			ctx->ev_cons++;
			*type = e.type;
			*obj = NULL;
			if ((e.type >= 8 && e.type <= 13) || e.type == 17 ||
			    e.type == 18) {
				/* DEVICE_FATAL, PORT_*, LID/PKEY/SM change,
				 * CLIENT_REREGISTER, GID_CHANGE: of the port */
				*obj = (void *)(uintptr_t)e.handle;
				return 0;
			}
			pthread_mutex_lock(&obj_lock);
			if (e.type == 0 /* CQ_ERR */) {
				struct dprdma_cq *c = dpr_obj_find(ctx, e.handle, DPR_OBJ_CQ);

				if (c != NULL)
					*obj = c->user != NULL ? c->user : c;
			} else if (e.type == 14 || e.type == 15 /* SRQ_ERR, _LIMIT */) {
				struct dprdma_srq *s = dpr_obj_find(ctx, e.handle, DPR_OBJ_SRQ);

				if (s != NULL)
					*obj = s->user != NULL ? s->user : s;
			} else {
				struct dprdma_qp *q = dpr_obj_find(ctx, e.handle, DPR_OBJ_QP);

				if (q != NULL)
					*obj = q->user != NULL ? q->user : q;
			}
			pthread_mutex_unlock(&obj_lock);
			if (*obj != NULL)
				return 0;
			continue;       /* an object already destroyed */
		}
		/* wait (or EAGAIN on a non-blocking fd); a signal ends it with
		 * EINTR, as the kernel's ibv_get_async_event does */
		if (read(ctx->async_fd, &v, sizeof(v)) < 0)
			return errno;
	}
}

int
dprdma_close(struct dprdma_context *ctx)
{
	struct chunk *ch, *next;

	/* the daemon releases whatever is left when the connection goes */
	close(ctx->fd);
	munmap(ctx->ctrl, ctx->ctrl_bytes);
	close(ctx->async_fd);
	if (ctx->wake_fd >= 0)
		close(ctx->wake_fd);
	free(ctx->objs);
	for (ch = ctx->chunks; ch != NULL; ch = next) {
		next = ch->next;
		munmap(ch->addr, ch->len);
		close(ch->fd);
		free(ch);
	}
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
	return 0;
}

const struct dpr_shm_device *
dprdma_device(const struct dprdma_context *ctx)
{
	return &ctx->dev;
}

int
dprdma_query_port(struct dprdma_context *ctx, struct dpr_shm_port *out)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_QUERY_PORT };
	int rc = -dpr_call(ctx, &m, -1, NULL);

	if (rc == 0)
		ctx->port = m.port_resp;
	*out = ctx->port;
	return rc;
}

/* --------------------------------------------------------------- PD */

struct dprdma_pd *
dprdma_alloc_pd(struct dprdma_context *ctx)
{
	struct dprdma_pd *pd = calloc(1, sizeof(*pd));
	struct dpr_shm_msg m = { .op = DPR_SHM_ALLOC_PD };
	int rc;

	if (pd == NULL)
		return NULL;
	rc = dpr_call(ctx, &m, -1, NULL);
	if (rc != 0) {
		free(pd);
		errno = -rc;
		return NULL;
	}
	pd->ctx = ctx;
	pd->handle = m.obj.handle;
	return pd;
}

int
dprdma_alloc_mw(struct dprdma_pd *pd, unsigned int type, uint32_t *handle,
		uint32_t *rkey)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_ALLOC_MW };
	int rc;

	m.alloc_mw.pd = pd->handle;
	m.alloc_mw.type = type;
	rc = dpr_call(pd->ctx, &m, -1, NULL);
	if (rc != 0)
		return -rc;
	*handle = m.alloc_mw_resp.handle;
	*rkey = m.alloc_mw_resp.rkey;
	return 0;
}

int
dprdma_dealloc_mw(struct dprdma_context *ctx, uint32_t handle)
{
	return dpr_destroy_obj(ctx, DPR_SHM_DEALLOC_MW, handle);
}

int
dpr_destroy_obj(struct dprdma_context *ctx, uint16_t op, uint32_t handle)
{
	struct dpr_shm_msg m = { .op = op };

	m.obj.handle = handle;
	return -dpr_call(ctx, &m, -1, NULL);
}

int
dprdma_dealloc_pd(struct dprdma_pd *pd)
{
	int rc = dpr_destroy_obj(pd->ctx, DPR_SHM_DEALLOC_PD, pd->handle);

	if (rc == 0)
		free(pd);
	return rc;
}
