/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Requests of local clients (the drop-in librdmacm, through the shim's
 * socket): IDs and channels made and destroyed, bind and listen in a port
 * space, address and route resolution, connect, accept, reject, establish,
 * disconnect, and an owner gone (its IDs ended, its channels closed).
 */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_random.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_telemetry.h>

#include "cm_private.h"
#include "dpr_cm.h"
#include "dpr_ratelimit.h"
#include "dpr_cm_mad.h"
#include "dpr_engine.h"
#include "dpr_transport.h"
#include "dpr_verbs.h"

/* ------------------------------------------------ client requests */

static bool
port_in_use(uint16_t ps, uint16_t port, const struct dpr_shm_cm_addr *a)
{
	struct cm_id *id;

	CM_FOREACH_BOUND(id, ps, port) {
		if (id->ps != ps || id->src.port != port ||
		    (id->st != CS_BOUND && id->st != CS_LISTEN))
			continue;
		if (cm_addr_any(a) || cm_addr_any(&id->src) ||
		    memcmp(id->src.addr, a->addr, 16) == 0)
			return true;
	}
	return false;
}

/* Give @p id the address @p a (port 0: an ephemeral one). */
static int
bind_addr(struct cm_id *id, const struct dpr_shm_cm_addr *a, bool listening)
{
	struct dpr_shm_cm_addr b = *a;
	uint8_t gi = 0;
	int pi = -1;

	if (b.family != AF_INET && b.family != AF_INET6)
		return -EAFNOSUPPORT;
	if (!cm_addr_any(&b)) {
		pi = dpr_cm_route(b.addr, &gi);
		if (pi < 0 || cm_own_gid_index((uint16_t)pi, b.addr) < 0)
			return -EADDRNOTAVAIL;
	}
	if (b.port == 0) {
		for (unsigned int tries = 0; tries < 32768; tries++) {
			uint16_t pn = (uint16_t)(CM_PORT_EPHEMERAL + (cm.next_port++ % 28000));

			if (!port_in_use(id->ps, htons(pn), &b)) {
				b.port = htons(pn);
				break;
			}
		}
		if (b.port == 0)
			return -EADDRINUSE;
	} else if (listening && port_in_use(id->ps, b.port, &b)) {
		return -EADDRINUSE;
	}
	id->src = b;
	id->pi = pi;
	id->sgid_index = gi;
	if (pi >= 0)
		memcpy(id->sgid, b.addr, 16);
	cm_index_bound(id);
	return 0;
}

static void
answer_id(const struct cm_id *id, struct dpr_shm_msg *m)
{
	uint32_t h = cm_id_handle(id);

	memset(&m->cm_resp, 0, sizeof(m->cm_resp));
	m->cm_resp.id = h;
	m->cm_resp.port = id->pi < 0 ? UINT32_MAX : (uint32_t)id->pi;
	m->cm_resp.sgid_index = id->sgid_index;
	if (id->pi >= 0)
		m->cm_resp.mtu = cm_port_mtu(id->pi);
	m->cm_resp.src = id->src;
	m->cm_resp.dst = id->dst;
	memcpy(m->cm_resp.sgid.raw, id->sgid, 16);
	memcpy(m->cm_resp.dgid.raw, id->dgid, 16);
}

/* A request's private data: rdma_cm's IP header, then the program's. */
static void
put_pdata(const struct cm_id *id, struct dpr_cm_msg *m,
	  const struct dpr_shm_cm_conn *c, uint16_t size)
{
	struct dpr_cma_hdr h = {
		.ip_version = id->dst.family == AF_INET ? 4 : 6,
		.src_port = ntohs(id->src.port),
	};

	memcpy(h.src, id->src.addr, 16);
	memcpy(h.dst, id->dst.addr, 16);
	dpr_cma_hdr_put(m->pdata, &h);
	memcpy(m->pdata + DPR_CMA_HDR_LEN, c->pdata, c->pdata_len);
	m->pdata_len = size;
}

static int
req_connect(struct cm_id *id, const struct dpr_shm_cm_conn *c)
{
	struct dpr_port_info p;
	struct dpr_cm_msg m;

	if (id->st != CS_ROUTE)
		return -EINVAL;
	if (cm_id_is_ud(id)) {
		if (c->pdata_len > DPR_CM_SIDR_REQ_PDATA - DPR_CMA_HDR_LEN)
			return -EINVAL;
		memset(&m, 0, sizeof(m));
		m.attr = DPR_CM_SIDR_REQ;
		id->tid = (uint64_t)1 << 32 | id->local_id;
		m.tid = id->tid;
		m.local_id = id->local_id;
		m.pkey = 0xffff;
		m.service_id = dpr_cm_service_id(id->ps, ntohs(id->dst.port));
		put_pdata(id, &m, c, DPR_CM_SIDR_REQ_PDATA);
		id->local_qpn = c->qpn;
		id->st = CS_REQ_SENT;
		cm_send_waiting(id, &m);
		return 0;
	}
	if (c->pdata_len > DPR_CM_REQ_PDATA - DPR_CMA_HDR_LEN)
		return -EINVAL;
	if (dpr_engine_port_info((uint16_t)id->pi, &p) != 0)
		return -ENODEV;
	memset(&m, 0, sizeof(m));
	m.attr = DPR_CM_REQ;
	id->tid = (uint64_t)1 << 32 | id->local_id;
	m.tid = id->tid;
	m.local_id = id->local_id;
	m.service_id = dpr_cm_service_id(id->ps, ntohs(id->dst.port));
	m.ca_guid = cm.gsi[id->pi].node_guid;
	m.qpn = c->qpn;
	m.psn = c->psn & 0xffffff;
	m.resp_res = c->resp_res;
	m.init_depth = c->init_depth;
	m.remote_timeout = CM_RESPONSE_TIMEOUT;
	m.local_timeout = CM_RESPONSE_TIMEOUT;
	m.tst = c->qp_type == 3 ? DPR_CM_TST_UC : DPR_CM_TST_RC;
	m.flow_ctrl = c->flow_ctrl;
	m.retry_cnt = c->retry_cnt & 7;
	m.rnr_retry = c->rnr_retry & 7;
	m.pkey = 0xffff;
	m.mtu = cm_port_mtu(id->pi);
	m.max_cm_retries = CM_MAX_CM_RETRIES;
	m.srq = c->srq;
	memcpy(m.sgid, id->sgid, 16);
	memcpy(m.dgid, id->dgid, 16);
	m.hop_limit = 64;
	m.ack_timeout = CM_ACK_TIMEOUT;
	put_pdata(id, &m, c, DPR_CM_REQ_PDATA);
	id->local_qpn = c->qpn;
	id->qp_type = c->qp_type;
	id->st = CS_REQ_SENT;
	cm_send_waiting(id, &m);
	return 0;
}

static int
req_accept(struct cm_id *id, const struct dpr_shm_cm_conn *c)
{
	struct dpr_cm_msg m;

	if (id->st != CS_REQ_RCVD || c->pdata_len > DPR_CM_REP_PDATA)
		return -EINVAL;
	if (cm_id_is_ud(id)) {
		if (c->pdata_len > DPR_CM_SIDR_REP_PDATA)
			return -EINVAL;
		cm_send_sidr_rep(id, 0, c->qpn, c->qkey, c->pdata, c->pdata_len);
		id->local_qpn = c->qpn;
		id->st = CS_ESTABLISHED;
		cm_half_open_end(id);
		cm.st.connections++;
		return 0;
	}
	cm_msg_ids(id, &m, DPR_CM_REP);
	m.qpn = c->qpn;
	m.psn = c->psn & 0xffffff;
	m.resp_res = c->resp_res;
	m.init_depth = c->init_depth;
	m.target_ack_delay = 15;
	m.flow_ctrl = c->flow_ctrl;
	m.rnr_retry = c->rnr_retry & 7;
	m.srq = c->srq;
	m.ca_guid = cm.gsi[id->pi].node_guid;
	m.pdata_len = (uint16_t)c->pdata_len;
	memcpy(m.pdata, c->pdata, c->pdata_len);
	id->local_qpn = c->qpn;
	id->st = CS_REP_SENT;
	cm_send_waiting(id, &m);
	return 0;
}

/* Is @p h a live channel of @p owner? */
static bool
chan_ok(const void *owner, uint32_t h)
{
	return h != 0 && h <= CM_MAX_CHANNELS && cm.chans[h - 1] != NULL &&
	       cm.chans[h - 1]->owner == owner && !cm.chans[h - 1]->dead;
}

int
dpr_cm_request(void *owner, struct dpr_shm_msg *m, int *in_fd)
{
	struct cm_id *id = NULL;
	struct dpr_cm_msg msg;
	uint8_t gi;
	int pi, rc;

	if (!cm.started)
		return -ENOSYS;
	switch (m->op) {
	case DPR_SHM_CM_CREATE_CHANNEL:
		if (*in_fd < 0)
			return -EBADF;
		for (uint32_t i = 0; i < CM_MAX_CHANNELS; i++) {
			if (cm.chans[i] != NULL)
				continue;
			cm.chans[i] = calloc(1, sizeof(*cm.chans[i]));
			if (cm.chans[i] == NULL)
				return -ENOMEM;
			cm.chans[i]->owner = owner;
			cm.chans[i]->fd = *in_fd;
			*in_fd = -1;
			m->cm.channel = i + 1;
			return 0;
		}
		return -EMFILE;
	case DPR_SHM_CM_DESTROY_CHANNEL: {
		uint32_t h = m->cm.channel;
		struct cm_id *user, *nx;

		if (!chan_ok(owner, h))
			return -EINVAL;
		CM_FOREACH_ID(user, nx)
			if (user->chan == h)
				return -EBUSY;
		/* kept open until the client closes its end: a thread of it
		 * may still wait in rdma_get_cm_event, and must go on waiting
		 * (as on Linux's channel), not see the channel end */
		cm.chans[h - 1]->dead = true;
		return 0;
	}
	case DPR_SHM_CM_CREATE_ID: {
		uint32_t h = m->cm.channel;

		if (!chan_ok(owner, h))
			return -EINVAL;
		if (m->cm.ps != DPR_RDMA_PS_TCP && m->cm.ps != DPR_RDMA_PS_IB &&
		    m->cm.ps != DPR_RDMA_PS_UDP)
			return -EINVAL;
		id = cm_id_new(owner, h);
		if (id == NULL)
			return -ENOMEM;
		id->ps = (uint16_t)m->cm.ps;
		id->qp_type = (uint8_t)m->cm.qp_type;
		answer_id(id, m);
		return 0;
	}
	default:
		break;
	}
	id = cm_id_get(owner, m->cm.id);
	if (id == NULL)
		return -EINVAL;
	switch (m->op) {
	case DPR_SHM_CM_DESTROY_ID:
		cm_id_end(id);
		return 0;
	case DPR_SHM_CM_MIGRATE_ID: {
		uint32_t h = m->cm.channel;

		if (!chan_ok(owner, h))
			return -EINVAL;
		id->chan = h;
		return 0;
	}
	case DPR_SHM_CM_BIND:
		if (id->st != CS_IDLE)
			return -EINVAL;
		rc = bind_addr(id, &m->cm.src, true);
		if (rc != 0)
			return rc;
		id->st = CS_BOUND;
		answer_id(id, m);
		return 0;
	case DPR_SHM_CM_RESOLVE_ADDR: {
		struct dpr_shm_cm_addr dst = m->cm.dst;

		if (id->st != CS_IDLE && id->st != CS_BOUND && id->st != CS_ADDR)
			return -EINVAL;
		if (dst.family != AF_INET && dst.family != AF_INET6)
			return -EAFNOSUPPORT;
		pi = dpr_cm_route(dst.addr, &gi);
		if (pi < 0)
			return -ENETUNREACH;
		if (id->st == CS_IDLE) {
			struct dpr_shm_cm_addr src = m->cm.src;

			if (src.family == 0) {
				src = (struct dpr_shm_cm_addr){ .family = dst.family };
				cm_port_gid((uint16_t)pi, gi, src.addr);
			}
			rc = bind_addr(id, &src, false);
			if (rc != 0)
				return rc;
		}
		if (id->pi >= 0 && id->pi != pi)
			return -ENETUNREACH;
		if (id->pi < 0) {
			cm_port_gid((uint16_t)pi, gi, id->src.addr);
			memcpy(id->sgid, id->src.addr, 16);
		}
		id->pi = pi;
		id->sgid_index = gi;
		memcpy(id->sgid, id->src.addr, 16);
		id->dst = dst;
		memcpy(id->dgid, dst.addr, 16);
		id->st = CS_ADDR;
		answer_id(id, m);
		cm_emit(id, DPR_SHM_CM_EV_ADDR_RESOLVED, 0, NULL, 0);
		return 0;
	}
	case DPR_SHM_CM_RESOLVE_ROUTE:
		if (id->st != CS_ADDR)
			return -EINVAL;
		id->st = CS_ROUTE;
		answer_id(id, m);
		cm_emit(id, DPR_SHM_CM_EV_ROUTE_RESOLVED, 0, NULL, 0);
		return 0;
	case DPR_SHM_CM_LISTEN:
		if (id->st == CS_IDLE) {
			struct dpr_shm_cm_addr any = { .family = AF_INET6 };

			rc = bind_addr(id, &any, true);
			if (rc != 0)
				return rc;
		} else if (id->st != CS_BOUND) {
			return -EINVAL;
		}
		id->st = CS_LISTEN;
		id->backlog = m->cm.backlog;
		answer_id(id, m);
		return 0;
	case DPR_SHM_CM_CONNECT:
		return req_connect(id, &m->cm_conn.conn);
	case DPR_SHM_CM_ACCEPT:
		return req_accept(id, &m->cm_conn.conn);
	case DPR_SHM_CM_REJECT:
		if (cm_id_is_ud(id) && id->st == CS_REQ_RCVD) {
			cm_send_sidr_rep(id, 2 /* rejected */, 0, 0, m->cm_conn.conn.pdata,
					 RTE_MIN(m->cm_conn.conn.pdata_len,
						 (uint32_t)DPR_CM_SIDR_REP_PDATA));
			id->st = CS_CLOSED;
			cm_half_open_end(id);
			return 0;
		}
		if (id->st != CS_REQ_RCVD && id->st != CS_REP_RCVD)
			return -EINVAL;
		cm_send_rej(id, id->st == CS_REQ_RCVD ? DPR_CM_REF_REQ : DPR_CM_REF_REP,
			    DPR_CM_REJ_CONSUMER_DEFINED, m->cm_conn.conn.pdata,
			    RTE_MIN(m->cm_conn.conn.pdata_len, (uint32_t)DPR_CM_REJ_PDATA));
		id->st = CS_CLOSED;
		cm_half_open_end(id);
		return 0;
	case DPR_SHM_CM_ESTABLISH:
		if (id->st != CS_REP_RCVD)
			return -EINVAL;
		cm_msg_ids(id, &msg, DPR_CM_RTU);
		cm_send_answer(id, &msg);
		id->st = CS_ESTABLISHED;
		cm.st.connections++;
		return 0;
	case DPR_SHM_CM_DISCONNECT:
		if (cm_id_is_ud(id))
			return -EINVAL;    /* (librdmacm: a UD ID has no connection) */
		if (id->st == CS_DREQ_RCVD || id->st == CS_CLOSED ||
		    id->st == CS_DREQ_SENT)
			return 0;  /* the peer went first: its DREQ is answered */
		if (id->st != CS_ESTABLISHED && id->st != CS_REP_SENT &&
		    id->st != CS_REP_RCVD)
			return -EINVAL;
		cm_send_dreq(id);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

void
dpr_cm_owner_gone(void *owner)
{
	if (!cm.started)
		return;
	struct cm_id *id, *nx;

	CM_FOREACH_ID(id, nx)
		if (id->owner == owner)
			cm_id_end(id);
	for (uint32_t i = 0; i < CM_MAX_CHANNELS; i++)
		if (cm.chans[i] != NULL && cm.chans[i]->owner == owner) {
			cm_chan_free(cm.chans[i]);
			cm.chans[i] = NULL;
		}
}
