/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The drop-in librdmacm.so.1: RDMA CM for unmodified programs (rping,
 * ucmatose, perftest -R, qperf -cm1) over dprdmad. Debian's librdmacm
 * needs the kernel's rdma_cm cma_device; this one talks to dprdmad's CM
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
#include <stdlib.h>
#include <string.h>

#include "cma_private.h"

struct cma_global cma = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1,
	  .acked = PTHREAD_COND_INITIALIZER };

/* One request on the process's CM connection. @return 0, or -1 with errno. */
int
cma_cm_call(struct dpr_shm_msg *m, int send_fd)
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

struct ibv_context *
cma_device(uint32_t index)
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

struct ibv_pd *
cma_device_pd(struct ibv_context *ctx)
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

uint32_t
cma_random_psn(void)
{
	uint32_t v;

	if (getentropy(&v, sizeof(v)) != 0)
		v = (uint32_t)random();
	return v & 0xffffff;
}

/* ---------------------------------------------------- addresses */

int
cma_to_shm_addr(const struct sockaddr *sa, struct dpr_shm_cm_addr *a)
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
void
cma_take_route(struct cma_id *c, uint32_t port, uint32_t sgid_index, uint32_t mtu,
	       const struct dpr_shm_cm_addr *src, const struct dpr_shm_cm_addr *dst,
	       const struct dpr_shm_gid *sgid, const struct dpr_shm_gid *dgid)
{
	struct rdma_addr *ra = &c->id.route.addr;

	if (port != UINT32_MAX && c->id.verbs == NULL) {
		c->id.verbs = cma_device(port);
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
void
cma_take_resp(struct cma_id *c, const struct dpr_shm_msg *m)
{
	cma_take_route(c, m->cm_resp.port, m->cm_resp.sgid_index, m->cm_resp.mtu,
		       &m->cm_resp.src, &m->cm_resp.dst, &m->cm_resp.sgid,
		       &m->cm_resp.dgid);
}

/* ------------------------------------------------------ the IDs */

/* The ID an event from the daemon is for, counted as reported in the same
 * hold of the lock that finds it, so rdma_destroy_id() either unlinked the ID
 * first (the event is dropped) or waits for its acknowledgement. */
struct cma_id *
cma_id_find_report(uint32_t handle)
{
	struct cma_id *c = NULL;

	pthread_mutex_lock(&cma.lock);
	if (handle < cma.n_handles)
		c = cma.by_handle[handle];
	if (c == NULL)
		for (c = cma.ids; c != NULL && c->handle != handle; c = c->next)
			;
	if (c != NULL)
		c->events_reported++;
	pthread_mutex_unlock(&cma.lock);
	return c;
}

void
cma_event_done(struct cma_id *owner)
{
	pthread_mutex_lock(&cma.lock);
	owner->events_completed++;
	pthread_cond_broadcast(&cma.acked);
	pthread_mutex_unlock(&cma.lock);
}

/* Room in the table for handle @p h (under cma.lock): false if none. The
 * table was a list walked for every event and every destroy: ucmatose
 * -c 3000 spent 4% of the machine walking it. */
static bool
handles_room(uint32_t h)
{
	uint32_t n = cma.n_handles ? cma.n_handles : 64;
	struct cma_id **t;

	if (h < cma.n_handles)
		return true;
	while (n <= h && n < (1u << 30))
		n *= 2;
	if (n <= h || (t = realloc(cma.by_handle, n * sizeof(*t))) == NULL)
		return false;
	memset(t + cma.n_handles, 0, (n - cma.n_handles) * sizeof(*t));
	cma.by_handle = t;
	cma.n_handles = n;
	return true;
}

void
cma_id_link(struct cma_id *c)
{
	pthread_mutex_lock(&cma.lock);
	if (handles_room(c->handle) && cma.by_handle[c->handle] == NULL) {
		cma.by_handle[c->handle] = c;
	} else {
		c->next = cma.ids;
		cma.ids = c;
	}
	pthread_mutex_unlock(&cma.lock);
}

static void
id_unlink(struct cma_id *c)
{
	pthread_mutex_lock(&cma.lock);
	if (c->handle < cma.n_handles && cma.by_handle[c->handle] == c) {
		cma.by_handle[c->handle] = NULL;
	} else {
		for (struct cma_id **p = &cma.ids; *p != NULL; p = &(*p)->next)
			if (*p == c) {
				*p = c->next;
				break;
			}
	}
	pthread_mutex_unlock(&cma.lock);
}

struct cma_id *
cma_id_of(struct rdma_cm_id *id)
{
	return (struct cma_id *)id;
}

struct cma_id *
cma_id_alloc(struct rdma_event_channel *ch, void *context, enum rdma_port_space ps,
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
	if (cma_cm_call(&m, sv[1]) != 0) {
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
	cma_cm_call(&m, -1);
	close(ch->ch.fd);
	free(ch);
}

uint32_t
cma_chan_handle(struct rdma_event_channel *ch)
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
	c = cma_id_alloc(ch, context, ps, qpt);
	if (c == NULL)
		goto fail;
	c->sync = channel == NULL;
	m.cm.channel = cma_chan_handle(ch);
	m.cm.ps = ps;
	m.cm.qp_type = qpt;
	if (cma_cm_call(&m, -1) != 0)
		goto fail;
	c->handle = m.cm_resp.id;
	cma_id_link(c);
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

int
cma_id_call(struct cma_id *c, struct dpr_shm_msg *m)
{
	m->cm.id = c->handle;
	return cma_cm_call(m, -1);
}

int
rdma_destroy_id(struct rdma_cm_id *id)
{
	struct cma_id *c = cma_id_of(id);
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_DESTROY_ID };

	cma_id_call(c, &m);
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

/* 127.0.0.0/8, ::1 or ::ffff:127.0.0.0/104 (@p a: the ABI's form) */
static bool
is_loopback(const struct dpr_shm_cm_addr *a)
{
	static const uint8_t one6[16] = { [15] = 1 };

	if (a->family == AF_INET)
		return a->addr[12] == 127;
	return memcmp(a->addr, one6, 16) == 0 ||
	       (a->addr[10] == 0xff && a->addr[11] == 0xff &&
		memcmp(a->addr, one6, 10) == 0 && a->addr[12] == 127);
}

int
rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct cma_id *c = cma_id_of(id);
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_BIND };

	if (cma_to_shm_addr(addr, &m.cm.src) != 0)
		return -1;
	if (is_loopback(&m.cm.src)) {
		/* as librdmacm over the kernel: the bind succeeds and the
		 * ID has no device (id->verbs NULL); libfabric's verbs
		 * provider binds localhost so, then takes the devices'
		 * addresses from the interfaces. No box answers there: a
		 * listen or connect on it fails (EADDRNOTAVAIL). */
		memset(&id->route.addr.src_addr, 0, sizeof(id->route.addr.src_addr));
		memcpy(&id->route.addr.src_addr, addr,
		       addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
		       sizeof(struct sockaddr_in));
		id->verbs = NULL;
		c->loopback = true;
		return 0;
	}
	if (cma_id_call(c, &m) != 0)
		return -1;
	cma_take_resp(c, &m);
	return 0;
}

int
rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct cma_id *c = cma_id_of(id);
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_LISTEN };

	m.cm.backlog = backlog > 0 ? (uint32_t)backlog : 0;
	if (c->loopback) {
		errno = EADDRNOTAVAIL;  /* (bound to loopback: no box there) */
		return -1;
	}
	if (cma_id_call(c, &m) != 0)
		return -1;
	cma_take_resp(c, &m);
	return 0;
}

void
cma_put_conn(struct dpr_shm_cm_conn *k, const struct rdma_conn_param *p,
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

/* --------------------------------------------- an ID's QP and SRQ */

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
			a->sq_psn = cma_random_psn();
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
	return qp_attr(cma_id_of(id), attr, mask);
}

int
cma_move_qp(struct cma_id *c, enum ibv_qp_state st)
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
cma_move_qp_rts(struct cma_id *c)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR }, b = { .qp_state = IBV_QPS_RTS };
	int mask, mask2, rc;

	if (c->id.qp == NULL)
		return 0;
	if (qp_attr(c, &a, &mask) != 0 || qp_attr(c, &b, &mask2) != 0)
		return -1;
	/* one request for both moves (the drop-in libibverbs') */
	rc = dprdma_ibv_modify_qp2(c->id.qp, &a, mask, &b, mask2);
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
	struct cma_id *c = cma_id_of(id);
	struct ibv_qp *qp;

	if (id->verbs == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (pd == NULL && (pd = cma_device_pd(id->verbs)) == NULL)
		return -1;
	/* (a PD of another context of the same cma_device works too: qperf
	 * opens its own) */
	if (attr->srq == NULL && id->srq != NULL)
		attr->srq = id->srq;
	qp = ibv_create_qp(pd, attr);
	if (qp == NULL)
		return -1;
	id->qp = qp;
	if (id->pd == NULL)
		id->pd = pd;
	if (cma_move_qp(c, IBV_QPS_INIT) != 0)
		goto fail;
	if (id->qp_type == IBV_QPT_UD && cma_move_qp_rts(c) != 0)
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
	if (pd == NULL && (pd = cma_device_pd(id->verbs)) == NULL)
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

int
rdma_establish(struct rdma_cm_id *id)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_ESTABLISH };

	m.cm_conn.id = cma_id_of(id)->handle;
	return cma_cm_call(&m, -1);
}

int
rdma_reject(struct rdma_cm_id *id, const void *private_data,
	    uint8_t private_data_len)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_REJECT };
	struct rdma_conn_param p = { .private_data = private_data,
				     .private_data_len = private_data_len };

	cma_put_conn(&m.cm_conn.conn, &p, DPR_CM_REJ_PDATA_BYTES);
	m.cm_conn.id = cma_id_of(id)->handle;
	return cma_cm_call(&m, -1);
}

int
rdma_reject_ece(struct rdma_cm_id *id, const void *private_data,
		uint8_t private_data_len)
{
	return rdma_reject(id, private_data, private_data_len);
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
		struct ibv_context *ctx = cma_device(i);

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
	struct cma_id *c = cma_id_of(id);

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
