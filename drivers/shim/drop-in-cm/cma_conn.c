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
	if (id->qp_type == IBV_QPT_UD &&
	    (cma_move_qp(c, IBV_QPS_RTR) != 0 || cma_move_qp(c, IBV_QPS_RTS) != 0))
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
	put_conn(&m.cm_conn.conn, param, id->ps == RDMA_PS_UDP ?
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
rdma_establish(struct rdma_cm_id *id)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_ESTABLISH };

	m.cm_conn.id = cma_id_of(id)->handle;
	return cma_cm_call(&m, -1);
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
	    (cma_move_qp(c, IBV_QPS_RTR) != 0 || cma_move_qp(c, IBV_QPS_RTS) != 0))
		return -1;
	put_conn(&m.cm_conn.conn, param, id->qp_type == IBV_QPT_UD ?
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
rdma_reject(struct rdma_cm_id *id, const void *private_data,
	    uint8_t private_data_len)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_CM_REJECT };
	struct rdma_conn_param p = { .private_data = private_data,
				     .private_data_len = private_data_len };

	put_conn(&m.cm_conn.conn, &p, DPR_CM_REJ_PDATA_BYTES);
	m.cm_conn.id = cma_id_of(id)->handle;
	return cma_cm_call(&m, -1);
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
