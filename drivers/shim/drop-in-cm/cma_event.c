/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Events as librdmacm hands them out (rdma_get_cm_event: what the daemon
 * wrote into the channel, with the connection's parameters and private
 * data, a new ID for a CONNECT_REQUEST), endpoints (rdma_create_ep,
 * rdma_get_request) and rdma_getaddrinfo.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cma_private.h"

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
		struct cma_id *l = cma_id_find_report(ev.listen_id);

		c = l == NULL ? NULL : cma_id_alloc(l->id.channel, l->id.context,
						l->id.ps, l->id.qp_type);
		if (c == NULL) {
			if (l != NULL)
				cma_event_done(l);
			free(e);
			goto again;
		}
		e->owner = l;
		c->handle = ev.id;
		c->tos = l->tos;
		c->peer = ev.conn;
		c->mtu = ev.conn.mtu ? ev.conn.mtu : IBV_MTU_1024;
		cma_take_route(c, ev.port, ev.sgid_index, 0, &ev.src, &ev.dst,
			       &ev.sgid, &ev.dgid);
		c->id.route.num_paths = 1;
		cma_id_link(c);
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
		c = cma_id_find_report(ev.id);
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
		cma_take_route(c, ev.port, ev.sgid_index, 0, &ev.src, &ev.dst,
			       &ev.sgid, &ev.dgid);
		break;
	case DPR_SHM_CM_EV_CONNECT_RESPONSE:
		c->peer = ev.conn;
		conn_param_of(&e->ev.param.conn, &ev.conn, e);
		if (c->id.qp == NULL)
			break;
		/* a QP on the ID: this library completes the connection */
		/* (in INIT since rdma_create_qp) */
		if (cma_move_qp_rts(c) != 0) {
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
	cma_event_done(e->owner);
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
		/* as rdma-core: the hints' own addresses, resolved as they
		 * are (libfabric's verbs provider asks so) */
		if (hints == NULL || (hints->ai_src_addr == NULL &&
				      hints->ai_dst_addr == NULL)) {
			errno = EINVAL;
			return -1;
		}
		r = calloc(1, sizeof(*r));
		if (r == NULL)
			return -1;
		*r = (struct rdma_addrinfo){
			.ai_flags = hints->ai_flags,
			.ai_family = hints->ai_src_addr != NULL ?
				hints->ai_src_addr->sa_family :
				hints->ai_dst_addr->sa_family,
			.ai_qp_type = hints->ai_qp_type ? hints->ai_qp_type : IBV_QPT_RC,
			.ai_port_space = hints->ai_port_space ?
				hints->ai_port_space : RDMA_PS_TCP,
		};
		if (hints->ai_src_addr != NULL) {
			r->ai_src_len = hints->ai_src_len;
			r->ai_src_addr = dup_addr(hints->ai_src_addr, hints->ai_src_len);
		}
		if (hints->ai_dst_addr != NULL) {
			r->ai_dst_len = hints->ai_dst_len;
			r->ai_dst_addr = dup_addr(hints->ai_dst_addr, hints->ai_dst_len);
		}
		*res = r;
		return 0;
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

/* ------------------------------------------------------ waiting */

/* A synchronous ID's call waits for its event: 0 when it is @p want. */
int
cma_sync_wait(struct cma_id *c, enum rdma_cm_event_type want)
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
