/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The drop-in librdmacm.so.1: RDMA CM for unmodified programs (rping,
 * ucmatose, perftest -R, qperf -cm1) over dprdmad. Debian's librdmacm
 * needs the kernel's rdma_cm device; this one talks to dprdmad's CM
 * (drivers/cm) over the shim's socket, one connection per process, and
 * uses the drop-in libibverbs beside it for the QPs.
 *
 * The split is Linux's: the daemon holds the IDs and speaks the CM MADs;
 * this library moves the ID's QP through INIT, RTR and RTS with what the
 * events carry (rdma_init_qp_attr gives the same attributes), then lets
 * the daemon answer (REP, RTU). An event channel is one end of a
 * SOCK_SEQPACKET pair whose other end the daemon writes events to, so
 * its fd polls as the kernel's does.
 *
 * An ID made without a channel works synchronously (as librdmacm's): it
 * gets a channel of its own and each call waits for its event.
 *
 * UD IDs (RDMA_PS_UDP) resolve a service with SIDR: rdma_connect sends the
 * SIDR_REQ, ESTABLISHED carries the SIDR_REP's QPN, Q_Key and address.
 *
 * Refused, with errno: multicast (ENOSYS), ECE (EOPNOTSUPP), rsockets
 * (EOPNOTSUPP).
 */

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "dprdma.h"
#include "dpr_shm.h"

#define CMA_MAX_DEVICES DPR_SHM_MAX_DEVICES
/* private data a message holds (IBA 12.6): REQ (36 of them rdma_cm's IP
 * header), REP, REJ; the most of any */
#define DPR_CM_REQ_PDATA_BYTES 92
#define DPR_CM_REP_PDATA_BYTES 196
#define DPR_CM_REJ_PDATA_BYTES 148
#define DPR_CM_MAX_PDATA_BYTES 224
#define DPR_CM_SIDR_REQ_PDATA_BYTES 216
#define DPR_CM_SIDR_REP_PDATA_BYTES 136
#define CMA_MIN_RNR_TIMER 12            /* 0.64 ms */
#define CMA_ACK_TIMEOUT 14              /* 67 ms */

struct cma_channel {
	struct rdma_event_channel ch;
	uint32_t handle;
};

struct cma_id {
	struct rdma_cm_id id;
	uint32_t handle;
	bool sync;                      /* its own channel: calls wait */
	bool connecting;                /* active side: the REP is processed */
	struct ibv_sa_path_rec path;
	uint8_t sgid_index, mtu, tos, ack_timeout;
	/* the starting PSN we told (REQ or REP): as Linux's CM, the PSN
	 * our receive side expects; the peer's is where we send from */
	uint32_t psn;
	struct rdma_conn_param param;   /* ours (connect/accept) */
	struct dpr_shm_cm_conn peer;    /* the REQ's or REP's */
	struct ibv_qp_init_attr *ep_qp; /* rdma_create_ep of a listener */
	/* as librdmacm: events handed out for this ID and acknowledged
	 * (a CONNECT_REQUEST counts for its listener); rdma_destroy_id()
	 * waits until every one is, so neither an acknowledgement nor the
	 * thread still handling an event meets a freed ID (under cma.lock) */
	uint64_t events_reported, events_completed;
	struct cma_id *next;
};

struct cma_event {
	struct rdma_cm_event ev;
	struct cma_id *owner;           /* whose events_reported counts it
					 * (set for every event handed out) */
	uint8_t pdata[DPR_CM_MAX_PDATA_BYTES];
};

static struct {
	pthread_mutex_t lock;
	int fd;
	uint32_t seq;
	struct ibv_context *dev[CMA_MAX_DEVICES];
	struct ibv_pd *pd[CMA_MAX_DEVICES];
	struct cma_id *ids;
	pthread_cond_t acked;           /* an event acknowledged */
} cma = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1,
	  .acked = PTHREAD_COND_INITIALIZER };

/* One request on the process's CM connection. @return 0, or -1 with errno. */
static int
cm_call(struct dpr_shm_msg *m, int send_fd)
{
	int rc;

	pthread_mutex_lock(&cma.lock);
	if (cma.fd < 0)
		cma.fd = dprdma_connect();
	if (cma.fd < 0) {
		rc = -errno;
		pthread_mutex_unlock(&cma.lock);
		fprintf(stderr, "librdmacm (dprdma): cannot reach dprdmad at %s: %s; "
			"is it running? (" DPR_SHM_SOCKET_ENV " names its socket)\n",
			getenv(DPR_SHM_SOCKET_ENV) ? getenv(DPR_SHM_SOCKET_ENV) :
			DPR_SHM_SOCKET_DEFAULT, strerror(-rc));
		errno = -rc;
		return -1;
	}
	rc = dprdma_call(cma.fd, &cma.seq, m, send_fd);
	pthread_mutex_unlock(&cma.lock);
	if (rc != 0) {
		errno = -rc;
		return -1;
	}
	return 0;
}

static struct ibv_context *
device(uint32_t index)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	char name[32];
	int n;

	if (index >= CMA_MAX_DEVICES)
		return NULL;
	pthread_mutex_lock(&cma.lock);
	ctx = cma.dev[index];
	pthread_mutex_unlock(&cma.lock);
	if (ctx != NULL)
		return ctx;
	list = ibv_get_device_list(&n);
	if (list == NULL)
		return NULL;
	snprintf(name, sizeof(name), "dprdma%u", index);
	for (int i = 0; i < n; i++)
		if (strcmp(ibv_get_device_name(list[i]), name) == 0)
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (ctx == NULL)
		return NULL;
	pthread_mutex_lock(&cma.lock);
	if (cma.dev[index] == NULL) {
		cma.dev[index] = ctx;
	} else {
		ibv_close_device(ctx);
		ctx = cma.dev[index];
	}
	pthread_mutex_unlock(&cma.lock);
	return ctx;
}

static int
dev_index(const struct ibv_context *ctx)
{
	for (int i = 0; i < CMA_MAX_DEVICES; i++)
		if (ctx != NULL && cma.dev[i] == ctx)
			return i;
	return -1;
}

static struct ibv_pd *
device_pd(struct ibv_context *ctx)
{
	int i = dev_index(ctx);

	if (i < 0)
		return NULL;
	pthread_mutex_lock(&cma.lock);
	if (cma.pd[i] == NULL)
		cma.pd[i] = ibv_alloc_pd(ctx);
	pthread_mutex_unlock(&cma.lock);
	return cma.pd[i];
}

static uint32_t
random_psn(void)
{
	uint32_t v;

	if (getentropy(&v, sizeof(v)) != 0)
		v = (uint32_t)random();
	return v & 0xffffff;
}

/* ---------------------------------------------------- addresses */

static int
to_shm_addr(const struct sockaddr *sa, struct dpr_shm_cm_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (sa == NULL)
		return 0;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;

		a->family = AF_INET;
		a->port = s4->sin_port;
		a->addr[10] = a->addr[11] = 0xff;
		memcpy(a->addr + 12, &s4->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;

		a->family = AF_INET6;
		a->port = s6->sin6_port;
		a->scope_id = s6->sin6_scope_id;
		memcpy(a->addr, &s6->sin6_addr, 16);
		return 0;
	}
	errno = EAFNOSUPPORT;
	return -1;
}

static void
from_shm_addr(const struct dpr_shm_cm_addr *a, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *s4 = (void *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = a->port;
		memcpy(&s4->sin_addr, a->addr + 12, 4);
	} else if (a->family == AF_INET6) {
		struct sockaddr_in6 *s6 = (void *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = a->port;
		s6->sin6_scope_id = a->scope_id;
		memcpy(&s6->sin6_addr, a->addr, 16);
	}
}

/* What the daemon said of the ID's addresses and path. */
static void
take_route(struct cma_id *c, uint32_t port, uint32_t sgid_index, uint32_t mtu,
	   const struct dpr_shm_cm_addr *src, const struct dpr_shm_cm_addr *dst,
	   const struct dpr_shm_gid *sgid, const struct dpr_shm_gid *dgid)
{
	struct rdma_addr *ra = &c->id.route.addr;

	if (port != UINT32_MAX && c->id.verbs == NULL) {
		c->id.verbs = device(port);
		c->id.port_num = 1;
	}
	if (src->family != 0)
		from_shm_addr(src, &ra->src_storage);
	if (dst->family != 0)
		from_shm_addr(dst, &ra->dst_storage);
	memcpy(ra->addr.ibaddr.sgid.raw, sgid->raw, 16);
	memcpy(ra->addr.ibaddr.dgid.raw, dgid->raw, 16);
	ra->addr.ibaddr.pkey = htons(0xffff);
	c->sgid_index = (uint8_t)sgid_index;
	if (mtu != 0)
		c->mtu = (uint8_t)mtu;
	memcpy(c->path.sgid.raw, sgid->raw, 16);
	memcpy(c->path.dgid.raw, dgid->raw, 16);
	c->path.pkey = htons(0xffff);
	c->path.mtu = c->mtu;
	c->path.hop_limit = 64;
	c->path.traffic_class = c->tos;
	c->path.reversible = 1;
	c->path.numb_path = 1;
}

/* The same from a request's answer. */
static void
take_resp(struct cma_id *c, const struct dpr_shm_msg *m)
{
	take_route(c, m->cm_resp.port, m->cm_resp.sgid_index, m->cm_resp.mtu,
		   &m->cm_resp.src, &m->cm_resp.dst, &m->cm_resp.sgid,
		   &m->cm_resp.dgid);
}

/* ------------------------------------------------------ the IDs */

/* The ID an event from the daemon is for, counted as reported in the same
 * hold of the lock that finds it, so rdma_destroy_id() either unlinked the ID
 * first (the event is dropped) or waits for its acknowledgement. */
static struct cma_id *
id_find_report(uint32_t handle)
{
	struct cma_id *c;

	pthread_mutex_lock(&cma.lock);
	for (c = cma.ids; c != NULL && c->handle != handle; c = c->next)
		;
	if (c != NULL)
		c->events_reported++;
	pthread_mutex_unlock(&cma.lock);
	return c;
}

static void
event_done(struct cma_id *owner)
{
	pthread_mutex_lock(&cma.lock);
	owner->events_completed++;
	pthread_cond_broadcast(&cma.acked);
	pthread_mutex_unlock(&cma.lock);
}

static void
id_link(struct cma_id *c)
{
	pthread_mutex_lock(&cma.lock);
	c->next = cma.ids;
	cma.ids = c;
	pthread_mutex_unlock(&cma.lock);
}

static void
id_unlink(struct cma_id *c)
{
	pthread_mutex_lock(&cma.lock);
	for (struct cma_id **p = &cma.ids; *p != NULL; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	pthread_mutex_unlock(&cma.lock);
}

static struct cma_id *
id_of(struct rdma_cm_id *id)
{
	return (struct cma_id *)id;
}

static struct cma_id *
id_alloc(struct rdma_event_channel *ch, void *context, enum rdma_port_space ps,
	 enum ibv_qp_type qp_type)
{
	struct cma_id *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->id.channel = ch;
	c->id.context = context;
	c->id.ps = ps;
	c->id.qp_type = qp_type;
	c->id.route.path_rec = &c->path;
	c->mtu = IBV_MTU_1024;
	c->ack_timeout = CMA_ACK_TIMEOUT;
	return c;
}

struct rdma_event_channel *
rdma_create_event_channel(void)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_CREATE_CHANNEL };
	struct cma_channel *ch = calloc(1, sizeof(*ch));
	int sv[2];

	if (ch == NULL)
		return NULL;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
		free(ch);
		return NULL;
	}
	if (cm_call(&m, sv[1]) != 0) {
		int e = errno;

		close(sv[0]);
		close(sv[1]);
		free(ch);
		errno = e;
		return NULL;
	}
	close(sv[1]);
	ch->ch.fd = sv[0];
	ch->handle = m.cm.channel;
	return &ch->ch;
}

void
rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cma_channel *ch = (struct cma_channel *)channel;
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_DESTROY_CHANNEL };

	if (ch == NULL)
		return;
	m.cm.channel = ch->handle;
	cm_call(&m, -1);
	close(ch->ch.fd);
	free(ch);
}

static uint32_t
chan_handle(struct rdma_event_channel *ch)
{
	return ((struct cma_channel *)ch)->handle;
}

int
rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
	       void *context, enum rdma_port_space ps)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_CREATE_ID };
	struct rdma_event_channel *ch = channel;
	enum ibv_qp_type qpt = ps == RDMA_PS_UDP ? IBV_QPT_UD : IBV_QPT_RC;
	struct cma_id *c;

	if (ch == NULL && (ch = rdma_create_event_channel()) == NULL)
		return -1;
	c = id_alloc(ch, context, ps, qpt);
	if (c == NULL)
		goto fail;
	c->sync = channel == NULL;
	m.cm.channel = chan_handle(ch);
	m.cm.ps = ps;
	m.cm.qp_type = qpt;
	if (cm_call(&m, -1) != 0)
		goto fail;
	c->handle = m.cm_resp.id;
	id_link(c);
	*id = &c->id;
	return 0;
fail:
	{
		int e = errno;

		free(c);
		if (channel == NULL)
			rdma_destroy_event_channel(ch);
		errno = e;
	}
	return -1;
}

static int
id_call(struct cma_id *c, struct dpr_shm_msg *m)
{
	m->cm.id = c->handle;
	return cm_call(m, -1);
}

int
rdma_destroy_id(struct rdma_cm_id *id)
{
	struct cma_id *c = id_of(id);
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_DESTROY_ID };

	id_call(c, &m);
	id_unlink(c);
	/* the daemon sends no more of its events, and those still queued are
	 * dropped as of an unknown ID; those handed out are waited for */
	pthread_mutex_lock(&cma.lock);
	while (c->events_completed < c->events_reported)
		pthread_cond_wait(&cma.acked, &cma.lock);
	pthread_mutex_unlock(&cma.lock);
	if (c->sync)
		rdma_destroy_event_channel(id->channel);
	free(c->ep_qp);
	free(c);
	return 0;
}

int
rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct cma_id *c = id_of(id);
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_BIND };

	if (to_shm_addr(addr, &m.cm.src) != 0)
		return -1;
	if (id_call(c, &m) != 0)
		return -1;
	take_resp(c, &m);
	return 0;
}

/* A synchronous ID's call waits for its event: 0 when it is @p want. */
static int
sync_wait(struct cma_id *c, enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev;
	int st;

	if (!c->sync)
		return 0;
	if (rdma_get_cm_event(c->id.channel, &ev) != 0)
		return -1;
	st = ev->event == want ? 0 : (ev->status ? ev->status : ECONNREFUSED);
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST && want == ev->event)
		st = 0;
	rdma_ack_cm_event(ev);
	if (st != 0) {
		errno = st < 0 ? -st : st;
		return -1;
	}
	return 0;
}

int
rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr,
		  struct sockaddr *dst_addr, int timeout_ms)
{
	struct cma_id *c = id_of(id);
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_RESOLVE_ADDR };

	if (dst_addr == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (to_shm_addr(src_addr, &m.cm.src) != 0 ||
	    to_shm_addr(dst_addr, &m.cm.dst) != 0)
		return -1;
	m.cm.timeout_ms = timeout_ms > 0 ? (uint32_t)timeout_ms : 0;
	if (id_call(c, &m) != 0)
		return -1;
	take_resp(c, &m);
	return sync_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED);
}

int
rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct cma_id *c = id_of(id);
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_RESOLVE_ROUTE };

	m.cm.timeout_ms = timeout_ms > 0 ? (uint32_t)timeout_ms : 0;
	if (id_call(c, &m) != 0)
		return -1;
	take_resp(c, &m);
	id->route.num_paths = 1;
	return sync_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED);
}

int
rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct cma_id *c = id_of(id);
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_LISTEN };

	m.cm.backlog = backlog > 0 ? (uint32_t)backlog : 0;
	if (id_call(c, &m) != 0)
		return -1;
	take_resp(c, &m);
	return 0;
}

/* ------------------------------------------------- QP attributes */

/* What rdma_init_qp_attr gives for the ID's QP in @p attr->qp_state. */
static int
qp_attr(struct cma_id *c, struct ibv_qp_attr *a, int *mask)
{
	enum ibv_qp_state st = a->qp_state;
	bool active = c->connecting;

	memset(a, 0, sizeof(*a));
	a->qp_state = st;
	switch (st) {
	case IBV_QPS_INIT:
		a->pkey_index = 0;
		a->port_num = 1;
		*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (c->id.qp_type == IBV_QPT_UD) {
			a->qkey = RDMA_UDP_QKEY;
			*mask |= IBV_QP_QKEY;
		} else {
			a->qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				IBV_ACCESS_REMOTE_ATOMIC;
			*mask |= IBV_QP_ACCESS_FLAGS;
		}
		return 0;
	case IBV_QPS_RTR:
		if (c->id.qp_type == IBV_QPT_UD) {
			*mask = IBV_QP_STATE;
			return 0;
		}
		a->path_mtu = (enum ibv_mtu)c->mtu;
		a->dest_qp_num = c->peer.qpn;
		a->rq_psn = c->psn;
		a->ah_attr.is_global = 1;
		a->ah_attr.port_num = 1;
		a->ah_attr.grh.dgid = c->id.route.addr.addr.ibaddr.dgid;
		a->ah_attr.grh.sgid_index = c->sgid_index;
		a->ah_attr.grh.hop_limit = 64;
		a->ah_attr.grh.traffic_class = c->tos;
		/* what we take: at most what the peer will send us */
		a->max_dest_rd_atomic = c->param.responder_resources;
		if (c->peer.init_depth < a->max_dest_rd_atomic)
			a->max_dest_rd_atomic = c->peer.init_depth;
		if (a->max_dest_rd_atomic == 0)
			a->max_dest_rd_atomic = 1;
		a->min_rnr_timer = CMA_MIN_RNR_TIMER;
		*mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			IBV_QP_MIN_RNR_TIMER;
		return 0;
	case IBV_QPS_RTS:
		if (c->id.qp_type == IBV_QPT_UD) {
			a->sq_psn = random_psn();
			*mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
			return 0;
		}
		a->sq_psn = c->peer.psn;
		a->timeout = active ? c->ack_timeout :
			(c->peer.ack_timeout ? c->peer.ack_timeout : c->ack_timeout);
		a->retry_cnt = active ? c->param.retry_count : c->peer.retry_cnt;
		a->rnr_retry = active ? c->peer.rnr_retry : c->peer.rnr_retry;
		a->max_rd_atomic = c->param.initiator_depth;
		if (c->peer.resp_res < a->max_rd_atomic)
			a->max_rd_atomic = c->peer.resp_res;
		if (a->max_rd_atomic == 0)
			a->max_rd_atomic = 1;
		*mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		return 0;
	case IBV_QPS_ERR:
	case IBV_QPS_RESET:
		*mask = IBV_QP_STATE;
		return 0;
	default:
		errno = EINVAL;
		return -1;
	}
}

int
rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *attr, int *mask)
{
	return qp_attr(id_of(id), attr, mask);
}

static int
move_qp(struct cma_id *c, enum ibv_qp_state st)
{
	struct ibv_qp_attr a = { .qp_state = st };
	int mask, rc;

	if (c->id.qp == NULL)
		return 0;
	if (qp_attr(c, &a, &mask) != 0)
		return -1;
	rc = ibv_modify_qp(c->id.qp, &a, mask);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return 0;
}

int
rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *attr)
{
	struct cma_id *c = id_of(id);
	struct ibv_qp *qp;

	if (id->verbs == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (pd == NULL && (pd = device_pd(id->verbs)) == NULL)
		return -1;
	/* (a PD of another context of the same device works too: qperf
	 * opens its own) */
	if (attr->srq == NULL && id->srq != NULL)
		attr->srq = id->srq;
	qp = ibv_create_qp(pd, attr);
	if (qp == NULL)
		return -1;
	id->qp = qp;
	if (id->pd == NULL)
		id->pd = pd;
	if (move_qp(c, IBV_QPS_INIT) != 0)
		goto fail;
	if (id->qp_type == IBV_QPT_UD &&
	    (move_qp(c, IBV_QPS_RTR) != 0 || move_qp(c, IBV_QPS_RTS) != 0))
		goto fail;
	return 0;
fail:
	{
		int e = errno;

		ibv_destroy_qp(qp);
		id->qp = NULL;
		errno = e;
	}
	return -1;
}

int
rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *ax)
{
	struct ibv_qp_init_attr a = {
		.qp_context = ax->qp_context,
		.send_cq = ax->send_cq,
		.recv_cq = ax->recv_cq,
		.srq = ax->srq,
		.cap = ax->cap,
		.qp_type = ax->qp_type,
		.sq_sig_all = ax->sq_sig_all,
	};

	if (ax->comp_mask & ~(uint32_t)IBV_QP_INIT_ATTR_PD) {
		errno = ENOSYS;
		return -1;
	}
	if (rdma_create_qp(id, (ax->comp_mask & IBV_QP_INIT_ATTR_PD) ? ax->pd : NULL,
			   &a) != 0)
		return -1;
	ax->cap = a.cap;
	return 0;
}

void
rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (id->qp != NULL)
		ibv_destroy_qp(id->qp);
	id->qp = NULL;
}

int
rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *ax)
{
	struct ibv_srq_init_attr a = { .srq_context = ax->srq_context, .attr = ax->attr };
	struct ibv_pd *pd = (ax->comp_mask & IBV_SRQ_INIT_ATTR_PD) ? ax->pd : id->pd;

	if (ax->comp_mask & ~(uint32_t)(IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE) ||
	    ((ax->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && ax->srq_type != IBV_SRQT_BASIC)) {
		errno = ENOSYS;
		return -1;
	}
	if (pd == NULL && (pd = device_pd(id->verbs)) == NULL)
		return -1;
	id->srq = ibv_create_srq(pd, &a);
	return id->srq == NULL ? -1 : 0;
}

int
rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd,
		struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ax = {
		.srq_context = attr->srq_context, .attr = attr->attr,
		.comp_mask = pd != NULL ? IBV_SRQ_INIT_ATTR_PD : 0, .pd = pd,
	};

	if (rdma_create_srq_ex(id, &ax) != 0)
		return -1;
	attr->attr = ax.attr;
	return 0;
}

void
rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (id->srq != NULL)
		ibv_destroy_srq(id->srq);
	id->srq = NULL;
}

/* --------------------------------------------------- connections */

static void
put_conn(struct dpr_shm_cm_conn *k, const struct rdma_conn_param *p,
	 uint32_t max_pdata)
{
	memset(k, 0, sizeof(*k));
	if (p == NULL)
		return;
	k->resp_res = p->responder_resources;
	k->init_depth = p->initiator_depth;
	k->flow_ctrl = p->flow_control;
	k->retry_cnt = p->retry_count;
	k->rnr_retry = p->rnr_retry_count;
	k->srq = p->srq;
	k->qpn = p->qp_num;
	k->pdata_len = p->private_data_len < max_pdata ? p->private_data_len : max_pdata;
	if (p->private_data != NULL)
		memcpy(k->pdata, p->private_data, k->pdata_len);
}

int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct cma_id *c = id_of(id);
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_CONNECT };
	struct rdma_conn_param def = { .responder_resources = 1,
				       .initiator_depth = 1, .retry_count = 7,
				       .rnr_retry_count = 7, .flow_control = 1 };

	if (param == NULL)
		param = &def;
	if (param->private_data_len > (id->ps == RDMA_PS_UDP ?
				       DPR_CM_SIDR_REQ_PDATA_BYTES :
				       DPR_CM_REQ_PDATA_BYTES) - 36) {
		errno = EINVAL;
		return -1;
	}
	c->param = *param;
	c->param.private_data = NULL;
	c->psn = random_psn();
	c->connecting = true;
	put_conn(&m.cm_conn.conn, param, id->ps == RDMA_PS_UDP ?
		 DPR_CM_SIDR_REQ_PDATA_BYTES - 36 : DPR_CM_REQ_PDATA_BYTES - 36);
	m.cm_conn.conn.qpn = id->qp != NULL ? id->qp->qp_num : param->qp_num;
	m.cm_conn.conn.srq = id->qp != NULL ? id->srq != NULL || id->qp->srq != NULL :
		param->srq;
	m.cm_conn.conn.psn = c->psn;
	m.cm_conn.conn.qp_type = id->qp != NULL ? id->qp->qp_type : id->qp_type;
	m.cm_conn.id = c->handle;
	if (cm_call(&m, -1) != 0)
		return -1;
	return sync_wait(c, RDMA_CM_EVENT_ESTABLISHED);
}

int
rdma_establish(struct rdma_cm_id *id)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_ESTABLISH };

	m.cm_conn.id = id_of(id)->handle;
	return cm_call(&m, -1);
}

int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct cma_id *c = id_of(id);
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_ACCEPT };
	struct rdma_conn_param def = { .responder_resources = c->peer.init_depth,
				       .initiator_depth = c->peer.resp_res,
				       .rnr_retry_count = 7, .flow_control = 1 };

	if (param == NULL)
		param = &def;
	c->param = *param;
	c->param.private_data = NULL;
	c->psn = random_psn();
	if (id->qp_type != IBV_QPT_UD &&
	    (move_qp(c, IBV_QPS_RTR) != 0 || move_qp(c, IBV_QPS_RTS) != 0))
		return -1;
	put_conn(&m.cm_conn.conn, param, id->qp_type == IBV_QPT_UD ?
		 DPR_CM_SIDR_REP_PDATA_BYTES : DPR_CM_REP_PDATA_BYTES);
	m.cm_conn.conn.qkey = RDMA_UDP_QKEY;
	m.cm_conn.conn.qpn = id->qp != NULL ? id->qp->qp_num : param->qp_num;
	m.cm_conn.conn.srq = id->qp != NULL ? id->qp->srq != NULL : param->srq;
	m.cm_conn.conn.psn = c->psn;
	m.cm_conn.id = c->handle;
	if (cm_call(&m, -1) != 0)
		return -1;
	return sync_wait(c, RDMA_CM_EVENT_ESTABLISHED);
}

int
rdma_reject(struct rdma_cm_id *id, const void *private_data,
	    uint8_t private_data_len)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_REJECT };
	struct rdma_conn_param p = { .private_data = private_data,
				     .private_data_len = private_data_len };

	put_conn(&m.cm_conn.conn, &p, DPR_CM_REJ_PDATA_BYTES);
	m.cm_conn.id = id_of(id)->handle;
	return cm_call(&m, -1);
}

int
rdma_reject_ece(struct rdma_cm_id *id, const void *private_data,
		uint8_t private_data_len)
{
	return rdma_reject(id, private_data, private_data_len);
}

int
rdma_disconnect(struct rdma_cm_id *id)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_DISCONNECT };

	move_qp(id_of(id), IBV_QPS_ERR);
	m.cm_conn.id = id_of(id)->handle;
	return cm_call(&m, -1);
}

int
rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct cma_id *c = id_of(id);
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_MIGRATE_ID };
	struct rdma_event_channel *ch = channel;

	if (ch == NULL && (ch = rdma_create_event_channel()) == NULL)
		return -1;
	m.cm.channel = chan_handle(ch);
	if (id_call(c, &m) != 0) {
		if (channel == NULL)
			rdma_destroy_event_channel(ch);
		return -1;
	}
	if (c->sync)
		rdma_destroy_event_channel(id->channel);
	id->channel = ch;
	c->sync = channel == NULL;
	return 0;
}

int
rdma_notify(struct rdma_cm_id *id __attribute__((unused)),
	    enum ibv_event_type event __attribute__((unused)))
{
	return 0;
}

/* ------------------------------------------------------ events */

/* A UD event's address, QPN and Q_Key (the SIDR_REP's, or for a
 * request the requester's address to answer it at). */
static void
ud_param_of(struct rdma_ud_param *p, struct cma_id *c,
	    const struct dpr_shm_cm_conn *k, struct cma_event *e)
{
	memset(&p->ah_attr, 0, sizeof(p->ah_attr));
	p->ah_attr.is_global = 1;
	p->ah_attr.port_num = 1;
	p->ah_attr.grh.dgid = c->id.route.addr.addr.ibaddr.dgid;
	p->ah_attr.grh.sgid_index = c->sgid_index;
	p->ah_attr.grh.hop_limit = 64;
	p->ah_attr.grh.traffic_class = c->tos;
	p->qp_num = k->qpn;
	p->qkey = k->qkey;
	memcpy(e->pdata, k->pdata, k->pdata_len < sizeof(e->pdata) ?
	       k->pdata_len : sizeof(e->pdata));
	p->private_data = e->pdata;
	p->private_data_len = (uint8_t)(k->pdata_len > 255 ? 255 : k->pdata_len);
}

static void
conn_param_of(struct rdma_conn_param *p, const struct dpr_shm_cm_conn *k,
	      struct cma_event *e)
{
	/* from the receiver's point of view, as Linux reports it */
	p->responder_resources = k->init_depth;
	p->initiator_depth = k->resp_res;
	p->flow_control = k->flow_ctrl;
	p->retry_count = k->retry_cnt;
	p->rnr_retry_count = k->rnr_retry;
	p->srq = k->srq;
	p->qp_num = k->qpn;
	memcpy(e->pdata, k->pdata, k->pdata_len < sizeof(e->pdata) ?
	       k->pdata_len : sizeof(e->pdata));
	p->private_data = e->pdata;
	p->private_data_len = (uint8_t)(k->pdata_len > 255 ? 255 : k->pdata_len);
}

int
rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct dpr_shm_cm_event ev;
	struct cma_event *e;
	struct cma_id *c;
	ssize_t n;

again:
	n = recv(channel->fd, &ev, sizeof(ev), 0);
	if (n < 0)
		return -1;
	if (n != (ssize_t)sizeof(ev) || ev.magic != DPR_SHM_MAGIC) {
		errno = n == 0 ? ENODEV : EPROTO;
		return -1;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return -1;
	e->ev.event = (enum rdma_cm_event_type)ev.event;
	e->ev.status = ev.status;
	if (ev.event == DPR_SHM_CM_EV_CONNECT_REQUEST) {
		struct cma_id *l = id_find_report(ev.listen_id);

		c = l == NULL ? NULL : id_alloc(l->id.channel, l->id.context,
						l->id.ps, l->id.qp_type);
		if (c == NULL) {
			if (l != NULL)
				event_done(l);
			free(e);
			goto again;
		}
		e->owner = l;
		c->handle = ev.id;
		c->tos = l->tos;
		c->peer = ev.conn;
		c->mtu = ev.conn.mtu ? ev.conn.mtu : IBV_MTU_1024;
		take_route(c, ev.port, ev.sgid_index, 0, &ev.src, &ev.dst,
			   &ev.sgid, &ev.dgid);
		c->id.route.num_paths = 1;
		id_link(c);
		e->ev.listen_id = &l->id;
		if (c->id.qp_type == IBV_QPT_UD)
			ud_param_of(&e->ev.param.ud, c, &ev.conn, e);
		else
			conn_param_of(&e->ev.param.conn, &ev.conn, e);
		if (l->ep_qp != NULL && c->id.verbs != NULL) {
			struct ibv_qp_init_attr a = *l->ep_qp;

			rdma_create_qp(&c->id, l->id.pd, &a);
		}
	} else {
		c = id_find_report(ev.id);
		if (c == NULL) {        /* an ID destroyed meanwhile */
			free(e);
			goto again;
		}
		e->owner = c;
	}
	e->ev.id = &c->id;
	switch (ev.event) {
	case DPR_SHM_CM_EV_ADDR_RESOLVED:
	case DPR_SHM_CM_EV_ROUTE_RESOLVED:
		take_route(c, ev.port, ev.sgid_index, 0, &ev.src, &ev.dst,
			   &ev.sgid, &ev.dgid);
		break;
	case DPR_SHM_CM_EV_CONNECT_RESPONSE:
		c->peer = ev.conn;
		conn_param_of(&e->ev.param.conn, &ev.conn, e);
		if (c->id.qp == NULL)
			break;
		/* a QP on the ID: this library completes the connection */
		/* (in INIT since rdma_create_qp) */
		if (move_qp(c, IBV_QPS_RTR) != 0 || move_qp(c, IBV_QPS_RTS) != 0) {
			e->ev.event = RDMA_CM_EVENT_CONNECT_ERROR;
			e->ev.status = -errno;
			rdma_reject(&c->id, NULL, 0);
			break;
		}
		if (rdma_establish(&c->id) != 0) {
			e->ev.event = RDMA_CM_EVENT_CONNECT_ERROR;
			e->ev.status = -errno;
			break;
		}
		e->ev.event = RDMA_CM_EVENT_ESTABLISHED;
		break;
	case DPR_SHM_CM_EV_REJECTED:
	case DPR_SHM_CM_EV_UNREACHABLE:
		if (c->id.qp_type == IBV_QPT_UD)
			ud_param_of(&e->ev.param.ud, c, &ev.conn, e);
		else
			conn_param_of(&e->ev.param.conn, &ev.conn, e);
		break;
	case DPR_SHM_CM_EV_ESTABLISHED:
		if (c->id.qp_type == IBV_QPT_UD) {
			/* the SIDR_REP: where the service's QP is */
			ud_param_of(&e->ev.param.ud, c, &ev.conn, e);
			break;
		}
		conn_param_of(&e->ev.param.conn, &c->peer, e);
		e->ev.param.conn.private_data_len = 0;
		break;
	case DPR_SHM_CM_EV_DISCONNECTED:
		/* the QP is the program's: as librdmacm, it is left alone here
		 * (another thread may be destroying it); rdma_disconnect()
		 * moves it to ERR */
		break;
	default:
		break;
	}
	/* a CONNECT_REQUEST's new ID may be destroyed before the event is
	 * acknowledged (it counts for the listener): it does not point back */
	if (e->owner == c)
		c->id.event = &e->ev;
	*event = &e->ev;
	return 0;
}

int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cma_event *e = (struct cma_event *)event;

	if (event == NULL) {
		errno = EINVAL;
		return -1;
	}
	/* only the owner points at the event (a CONNECT_REQUEST's new ID,
	 * which may be gone, does not): no look at event->id */
	if (e->owner->id.event == event)
		e->owner->id.event = NULL;
	event_done(e->owner);
	free(event);
	return 0;
}

const char *
rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		"RDMA_CM_EVENT_ADDR_RESOLVED", "RDMA_CM_EVENT_ADDR_ERROR",
		"RDMA_CM_EVENT_ROUTE_RESOLVED", "RDMA_CM_EVENT_ROUTE_ERROR",
		"RDMA_CM_EVENT_CONNECT_REQUEST", "RDMA_CM_EVENT_CONNECT_RESPONSE",
		"RDMA_CM_EVENT_CONNECT_ERROR", "RDMA_CM_EVENT_UNREACHABLE",
		"RDMA_CM_EVENT_REJECTED", "RDMA_CM_EVENT_ESTABLISHED",
		"RDMA_CM_EVENT_DISCONNECTED", "RDMA_CM_EVENT_DEVICE_REMOVAL",
		"RDMA_CM_EVENT_MULTICAST_JOIN", "RDMA_CM_EVENT_MULTICAST_ERROR",
		"RDMA_CM_EVENT_ADDR_CHANGE", "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	return (unsigned int)event < sizeof(names) / sizeof(names[0]) ?
		names[event] : "UNKNOWN EVENT";
}

/* ---------------------------------------------------- endpoints */

int
rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res,
	       struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cid;
	struct cma_id *c;

	if (res == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (rdma_create_id(NULL, &cid, NULL, (enum rdma_port_space)res->ai_port_space) != 0)
		return -1;
	c = id_of(cid);
	if (res->ai_flags & RAI_PASSIVE) {
		if (rdma_bind_addr(cid, res->ai_src_addr) != 0)
			goto fail;
		if (qp_init_attr != NULL) {
			c->ep_qp = malloc(sizeof(*c->ep_qp));
			if (c->ep_qp == NULL)
				goto fail;
			*c->ep_qp = *qp_init_attr;
		}
		cid->pd = pd;
		*id = cid;
		return 0;
	}
	if (rdma_resolve_addr(cid, res->ai_src_addr, res->ai_dst_addr, 2000) != 0 ||
	    rdma_resolve_route(cid, 2000) != 0)
		goto fail;
	if (qp_init_attr != NULL && rdma_create_qp(cid, pd, qp_init_attr) != 0)
		goto fail;
	*id = cid;
	return 0;
fail:
	{
		int e = errno;

		rdma_destroy_id(cid);
		errno = e;
	}
	return -1;
}

void
rdma_destroy_ep(struct rdma_cm_id *id)
{
	rdma_destroy_qp(id);
	rdma_destroy_srq(id);
	rdma_destroy_id(id);
}

int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct rdma_cm_event *ev;
	int rc;

	rc = rdma_get_cm_event(listen->channel, &ev);
	if (rc != 0)
		return rc;
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST) {
		errno = ev->status ? -ev->status : EINVAL;
		rdma_ack_cm_event(ev);
		return -1;
	}
	*id = ev->id;
	/* its events are waited for, as its listener's */
	{
		struct cma_id *c = id_of(ev->id);

		if (rdma_migrate_id(ev->id, NULL) != 0) {
			rdma_ack_cm_event(ev);
			return -1;
		}
		c->sync = true;
	}
	rdma_ack_cm_event(ev);
	return 0;
}

/* ---------------------------------------------------- devices */

struct ibv_context **
rdma_get_devices(int *num_devices)
{
	struct ibv_context **list = calloc(CMA_MAX_DEVICES + 1, sizeof(*list));
	int n = 0;

	if (list == NULL)
		return NULL;
	for (uint32_t i = 0; i < CMA_MAX_DEVICES; i++) {
		struct ibv_context *ctx = device(i);

		if (ctx == NULL)
			break;
		list[n++] = ctx;
	}
	if (num_devices != NULL)
		*num_devices = n;
	return list;
}

void
rdma_free_devices(struct ibv_context **list)
{
	free(list);     /* the contexts stay open: IDs use them */
}

__be16
rdma_get_src_port(struct rdma_cm_id *id)
{
	const struct sockaddr *sa = &id->route.addr.src_addr;

	return sa->sa_family == AF_INET6 ? id->route.addr.src_sin6.sin6_port :
		id->route.addr.src_sin.sin_port;
}

__be16
rdma_get_dst_port(struct rdma_cm_id *id)
{
	const struct sockaddr *sa = &id->route.addr.dst_addr;

	return sa->sa_family == AF_INET6 ? id->route.addr.dst_sin6.sin6_port :
		id->route.addr.dst_sin.sin_port;
}

int
rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval,
		size_t optlen)
{
	struct cma_id *c = id_of(id);

	if (level != RDMA_OPTION_ID || optval == NULL) {
		errno = ENOSYS;
		return -1;
	}
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
		if (optlen != sizeof(uint8_t))
			break;
		c->tos = *(uint8_t *)optval;
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (optlen != sizeof(uint8_t))
			break;
		c->ack_timeout = *(uint8_t *)optval;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
	case RDMA_OPTION_ID_AFONLY:
		if (optlen != sizeof(int))
			break;
		return 0;       /* dprdma's port spaces behave as both allow */
	default:
		errno = ENOSYS;
		return -1;
	}
	errno = EINVAL;
	return -1;
}

/* ------------------------------------------------- rdma_getaddrinfo */

static struct sockaddr *
dup_addr(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr *p = malloc(len);

	if (p != NULL)
		memcpy(p, sa, len);
	return p;
}

int
rdma_getaddrinfo(const char *node, const char *service,
		 const struct rdma_addrinfo *hints, struct rdma_addrinfo **res)
{
	struct addrinfo h = { .ai_socktype = SOCK_STREAM }, *ai;
	struct rdma_addrinfo *r;
	int rc;

	if (hints != NULL) {
		h.ai_family = hints->ai_family;
		if (hints->ai_flags & RAI_PASSIVE)
			h.ai_flags |= AI_PASSIVE;
		if (hints->ai_flags & RAI_NUMERICHOST)
			h.ai_flags |= AI_NUMERICHOST;
	}
	if (node == NULL && service == NULL) {
		errno = EINVAL;
		return -1;
	}
	rc = getaddrinfo(node, service, &h, &ai);
	if (rc != 0) {
		errno = rc == EAI_SYSTEM ? errno : EADDRNOTAVAIL;
		return rc;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		freeaddrinfo(ai);
		return -1;
	}
	r->ai_flags = hints != NULL ? hints->ai_flags : 0;
	r->ai_family = ai->ai_family;
	r->ai_qp_type = hints != NULL && hints->ai_qp_type ? hints->ai_qp_type : IBV_QPT_RC;
	r->ai_port_space = hints != NULL && hints->ai_port_space ?
		hints->ai_port_space : RDMA_PS_TCP;
	if (r->ai_flags & RAI_PASSIVE) {
		r->ai_src_len = ai->ai_addrlen;
		r->ai_src_addr = dup_addr(ai->ai_addr, ai->ai_addrlen);
	} else {
		r->ai_dst_len = ai->ai_addrlen;
		r->ai_dst_addr = dup_addr(ai->ai_addr, ai->ai_addrlen);
		if (hints != NULL && hints->ai_src_addr != NULL) {
			r->ai_src_len = hints->ai_src_len;
			r->ai_src_addr = dup_addr(hints->ai_src_addr, hints->ai_src_len);
		}
	}
	freeaddrinfo(ai);
	*res = r;
	return 0;
}

void
rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res != NULL) {
		struct rdma_addrinfo *next = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = next;
	}
}

/* ------------------------------------------------------ refused */

int
rdma_join_multicast(struct rdma_cm_id *id __attribute__((unused)),
		    struct sockaddr *addr __attribute__((unused)),
		    void *context __attribute__((unused)))
{
	errno = ENOSYS;
	return -1;
}

int
rdma_join_multicast_ex(struct rdma_cm_id *id __attribute__((unused)),
		       struct rdma_cm_join_mc_attr_ex *attr __attribute__((unused)),
		       void *context __attribute__((unused)))
{
	errno = ENOSYS;
	return -1;
}

int
rdma_leave_multicast(struct rdma_cm_id *id __attribute__((unused)),
		     struct sockaddr *addr __attribute__((unused)))
{
	errno = ENOSYS;
	return -1;
}

int
rdma_set_local_ece(struct rdma_cm_id *id __attribute__((unused)),
		   struct ibv_ece *ece __attribute__((unused)))
{
	errno = EOPNOTSUPP;
	return -1;
}

int
rdma_get_remote_ece(struct rdma_cm_id *id __attribute__((unused)),
		    struct ibv_ece *ece __attribute__((unused)))
{
	errno = EOPNOTSUPP;
	return -1;
}
