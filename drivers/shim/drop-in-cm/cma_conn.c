/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * An ID's QP and SRQ, and its connection: the QP is moved through INIT,
 * RTR and RTS with the attributes its events carry (rdma_init_qp_attr
 * gives the same), then the daemon answers the peer (REP, RTU); connect,
 * accept, reject, establish, disconnect, migrate.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cma_private.h"

/* ------------------------------------------------- QP attributes */

/* --------------------------------------------------- connections */

/*
 * @p p's READ/atomic depths as librdmacm settles them: RDMA_MAX_INIT_DEPTH
 * and RDMA_MAX_RESP_RES (librpma asks for both) mean the most the device
 * takes -- and on the passive side no more than the peer offered (@p
 * peer_init, @p peer_resp: its REQ's initiator depth and responder
 * resources); any other value past the device's is EINVAL, as
 * ucma_valid_param() has it. The retry counts are 3 bits on the wire: at
 * most 7, as the kernel's CM makes them (libfabric asks for 15).
 * @return 0, or -1 with errno.
 */
static int
settle_depths(struct rdma_cm_id *id, struct rdma_conn_param *p, bool passive,
	      unsigned int peer_init, unsigned int peer_resp)
{
	struct ibv_device_attr a;
	unsigned int max_init, max_resp;

	if (id->verbs == NULL || ibv_query_device(id->verbs, &a) != 0) {
		errno = ENODEV;
		return -1;
	}
	max_init = (unsigned int)a.max_qp_init_rd_atom;
	max_resp = (unsigned int)a.max_qp_rd_atom;
	if ((p->initiator_depth != RDMA_MAX_INIT_DEPTH &&
	     p->initiator_depth > max_init) ||
	    (p->responder_resources != RDMA_MAX_RESP_RES &&
	     p->responder_resources > max_resp)) {
		errno = EINVAL;
		return -1;
	}
	if (p->initiator_depth == RDMA_MAX_INIT_DEPTH)
		p->initiator_depth = (uint8_t)(passive && peer_resp < max_init ?
					       peer_resp : max_init);
	if (p->responder_resources == RDMA_MAX_RESP_RES)
		p->responder_resources = (uint8_t)(passive && peer_init < max_resp ?
						   peer_init : max_resp);
	if (p->retry_count > 7)
		p->retry_count = 7;
	if (p->rnr_retry_count > 7)
		p->rnr_retry_count = 7;
	return 0;
}

int
rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct cma_id *c = cma_id_of(id);
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
	if (id->ps != RDMA_PS_UDP &&
	    settle_depths(id, &c->param, false, 0, 0) != 0)
		return -1;
	c->psn = cma_random_psn();
	c->connecting = true;
	cma_put_conn(&m.cm_conn.conn, param, id->ps == RDMA_PS_UDP ?
		 DPR_CM_SIDR_REQ_PDATA_BYTES - 36 : DPR_CM_REQ_PDATA_BYTES - 36);
	m.cm_conn.conn.resp_res = c->param.responder_resources;
	m.cm_conn.conn.init_depth = c->param.initiator_depth;
	m.cm_conn.conn.retry_cnt = c->param.retry_count;
	m.cm_conn.conn.rnr_retry = c->param.rnr_retry_count;
	m.cm_conn.conn.qpn = id->qp != NULL ? id->qp->qp_num : param->qp_num;
	m.cm_conn.conn.srq = id->qp != NULL ? id->srq != NULL || id->qp->srq != NULL :
		param->srq;
	m.cm_conn.conn.psn = c->psn;
	m.cm_conn.conn.qp_type = id->qp != NULL ? id->qp->qp_type : id->qp_type;
	m.cm_conn.id = c->handle;
	if (cma_cm_call(&m, -1) != 0)
		return -1;
	return cma_sync_wait(c, RDMA_CM_EVENT_ESTABLISHED);
}

int
rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct cma_id *c = cma_id_of(id);
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_ACCEPT };
	struct rdma_conn_param def = { .responder_resources = c->peer.init_depth,
				       .initiator_depth = c->peer.resp_res,
				       .rnr_retry_count = 7, .flow_control = 1 };

	if (param == NULL)
		param = &def;
	c->param = *param;
	c->param.private_data = NULL;
	if (id->qp_type != IBV_QPT_UD &&
	    settle_depths(id, &c->param, true, c->peer.init_depth,
			  c->peer.resp_res) != 0)
		return -1;
	c->psn = cma_random_psn();
	if (id->qp_type != IBV_QPT_UD &&
	    cma_move_qp_rts(c) != 0)
		return -1;
	cma_put_conn(&m.cm_conn.conn, param, id->qp_type == IBV_QPT_UD ?
		 DPR_CM_SIDR_REP_PDATA_BYTES : DPR_CM_REP_PDATA_BYTES);
	m.cm_conn.conn.resp_res = c->param.responder_resources;
	m.cm_conn.conn.init_depth = c->param.initiator_depth;
	m.cm_conn.conn.retry_cnt = c->param.retry_count;
	m.cm_conn.conn.rnr_retry = c->param.rnr_retry_count;
	m.cm_conn.conn.qkey = RDMA_UDP_QKEY;
	m.cm_conn.conn.qpn = id->qp != NULL ? id->qp->qp_num : param->qp_num;
	m.cm_conn.conn.srq = id->qp != NULL ? id->qp->srq != NULL : param->srq;
	m.cm_conn.conn.psn = c->psn;
	m.cm_conn.id = c->handle;
	if (cma_cm_call(&m, -1) != 0)
		return -1;
	return cma_sync_wait(c, RDMA_CM_EVENT_ESTABLISHED);
}

int
rdma_disconnect(struct rdma_cm_id *id)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_DISCONNECT };

	cma_move_qp(cma_id_of(id), IBV_QPS_ERR);
	m.cm_conn.id = cma_id_of(id)->handle;
	return cma_cm_call(&m, -1);
}

int
rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct cma_id *c = cma_id_of(id);
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_MIGRATE_ID };
	struct rdma_event_channel *ch = channel;

	if (ch == NULL && (ch = rdma_create_event_channel()) == NULL)
		return -1;
	m.cm.channel = cma_chan_handle(ch);
	if (cma_id_call(c, &m) != 0) {
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

/* ---------------------------------------------------- addresses */

int
rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr,
		  struct sockaddr *dst_addr, int timeout_ms)
{
	struct cma_id *c = cma_id_of(id);
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_RESOLVE_ADDR };

	if (dst_addr == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (c->loopback) {
		errno = EADDRNOTAVAIL;  /* (bound to loopback: no box there) */
		return -1;
	}
	if (cma_to_shm_addr(src_addr, &m.cm.src) != 0 ||
	    cma_to_shm_addr(dst_addr, &m.cm.dst) != 0)
		return -1;
	m.cm.timeout_ms = timeout_ms > 0 ? (uint32_t)timeout_ms : 0;
	if (cma_id_call(c, &m) != 0)
		return -1;
	cma_take_resp(c, &m);
	return cma_sync_wait(c, RDMA_CM_EVENT_ADDR_RESOLVED);
}

int
rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct cma_id *c = cma_id_of(id);
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_RESOLVE_ROUTE };

	m.cm.timeout_ms = timeout_ms > 0 ? (uint32_t)timeout_ms : 0;
	if (cma_id_call(c, &m) != 0)
		return -1;
	cma_take_resp(c, &m);
	id->route.num_paths = 1;
	return cma_sync_wait(c, RDMA_CM_EVENT_ROUTE_RESOLVED);
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
	c = cma_id_of(cid);
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
		struct cma_id *c = cma_id_of(ev->id);

		if (rdma_migrate_id(ev->id, NULL) != 0) {
			rdma_ack_cm_event(ev);
			return -1;
		}
		c->sync = true;
	}
	rdma_ack_cm_event(ev);
	return 0;
}
