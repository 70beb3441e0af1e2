/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * MADs from peers, as Linux's ib_cm takes them: a REQ finds its listener
 * and makes a passive ID (CONNECT_REQUEST to the listener's owner); a REP
 * answers an active ID (CONNECT_RESPONSE); RTU establishes; REJ, MRA,
 * DREQ, DREP and SIDR as IBA chapter 12 has them. Duplicates are answered
 * from what the ID sent last; a MAD for no ID, or for an ID in a state
 * that takes none of its kind, is counted and dropped.
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

/* ------------------------------------------------- MADs from peers */

static struct cm_id *
find_listener(int pi, uint16_t ps, uint16_t port, const uint8_t *dst_ip)
{
	struct cm_id *wild = NULL, *id;

	CM_FOREACH_BOUND(id, ps, htons(port)) {
		if (id->st != CS_LISTEN || id->ps != ps ||
		    ntohs(id->src.port) != port || (id->pi >= 0 && id->pi != pi))
			continue;
		if (!cm_addr_any(&id->src)) {
			if (memcmp(id->src.addr, dst_ip, 16) == 0)
				return id;
			continue;
		}
		/* the wildcard of one family takes that family's requests
		 * (AF_INET6's takes both, as Linux without IPV6_V6ONLY) */
		if (id->src.family == AF_INET6 || cm_is_v4mapped(dst_ip))
			wild = id;
	}
	return wild;
}

/* The ID a request (REQ or SIDR_REQ) makes for listener @p lid: our end
 * the request's destination, the peer its source (rdma_cm's IP header
 * @p h), at GID @p dgid. NULL when the table is full. */
static struct cm_id *
passive_id(struct cm_id *lid, int pi, int gi, uint16_t ps, uint16_t port,
	   const struct dpr_cma_hdr *h, const uint8_t *dgid,
	   const struct dpr_cm_msg *m, const uint8_t *from)
{
	struct cm_id *id;

	if (!cm_half_open_admit(lid, from))
		return NULL;
	id = cm_id_new(lid->owner, lid->chan);
	if (id == NULL) {
		cm.st.mads_rx_dropped++;
		return NULL;
	}
	cm_half_open_begin(id, lid, from);
	id->st = CS_REQ_RCVD;
	id->passive = true;
	id->ps = ps;
	id->pi = pi;
	id->sgid_index = (uint8_t)gi;
	memcpy(id->sgid, h->dst, 16);
	memcpy(id->dgid, dgid, 16);
	id->remote_id = m->local_id;
	cm_index_remote(id);
	id->tid = m->tid;
	id->src = (struct dpr_shm_cm_addr){
		.family = h->ip_version == 4 ? AF_INET : AF_INET6,
		.port = htons(port),
	};
	memcpy(id->src.addr, h->dst, 16);
	id->dst = (struct dpr_shm_cm_addr){
		.family = id->src.family, .port = htons(h->src_port),
	};
	memcpy(id->dst.addr, h->src, 16);
	return id;
}

/* REQ @p m from @p r refused with @p reason before any ID is made for
 * it (gid index @p gi of ours, < 0: none). */
static void
rej_req(int pi, const struct cm_mad *r, const struct dpr_cm_msg *m, int gi,
	uint16_t reason)
{
	struct cm_id tmp = {
		.pi = pi, .remote_id = m->local_id, .tid = m->tid,
		.sgid_index = (uint8_t)(gi < 0 ? (cm_is_v4mapped(r->gid) ? 1 : 0) : gi),
	};
	struct dpr_cm_msg rej;

	memcpy(tmp.dgid, r->gid, 16);
	cm_msg_ids(&tmp, &rej, DPR_CM_REJ);
	rej.msg_ref = DPR_CM_REF_REQ;
	rej.reason = reason;
	dpr_cm_encode(&rej, tmp.answer);
	dpr_cm_mad_send(pi, tmp.sgid_index, tmp.dgid, tmp.answer);
	cm.st.rej_tx++;
}

static void
rx_req(int pi, const struct cm_mad *r, const struct dpr_cm_msg *m)
{
	struct dpr_shm_cm_conn c;
	struct dpr_cma_hdr h;
	struct cm_id *lid, *id;
	uint16_t ps = (uint16_t)(m->service_id >> 16);
	uint16_t port = (uint16_t)m->service_id;
	int gi;

	cm.st.req_rx++;
	/* a duplicate: the peer has not heard our answer */
	CM_FOREACH_REMOTE(id, m->local_id) {
		if (id->remote_id != m->local_id ||
		    id->remote_guid != m->ca_guid || id->st < CS_REQ_RCVD)
			continue;
		cm.st.mad_duplicate++;
		if (id->st == CS_REQ_RCVD) {
			struct dpr_cm_msg mra;

			cm_msg_ids(id, &mra, DPR_CM_MRA);
			mra.msg_ref = DPR_CM_REF_REQ;
			mra.service_timeout = CM_MRA_TIMEOUT;
			cm_send_answer(id, &mra);
		} else if (id->waiting) {
			dpr_cm_mad_send(id->pi, id->sgid_index, id->dgid, id->mad);
		}
		return;
	}
	if ((m->service_id >> 32) != 0 ||
	    (ps != DPR_RDMA_PS_TCP && ps != DPR_RDMA_PS_UDP && ps != DPR_RDMA_PS_IB) ||
	    !dpr_cma_hdr_get(m->pdata, &h) || (m->tst != DPR_CM_TST_RC &&
					       m->tst != DPR_CM_TST_UC)) {
		cm.st.mad_bad_pdata++;
		lid = NULL;
	} else {
		lid = find_listener(pi, ps, port, h.dst);
	}
	gi = cm_own_gid_index((uint16_t)pi, m->dgid);
	if (lid == NULL || gi < 0) {
		/* nobody listens there (IBA 12.6.7: invalid service ID) */
		if (lid != NULL)
			cm.st.mad_bad_pdata++;
		else
			cm.st.req_no_listener++;
		rej_req(pi, r, m, gi, gi < 0 ? DPR_CM_REJ_INVALID_GID :
			DPR_CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	if (cm_conn_quota_full(r->gid)) {
		rej_req(pi, r, m, gi, DPR_CM_REJ_NO_RESOURCES);
		return;
	}
	id = passive_id(lid, pi, gi, ps, port, &h, m->sgid, m, r->gid);
	if (id == NULL)
		return;
	id->qp_type = m->tst == DPR_CM_TST_UC ? 3 /* IBV_QPT_UC */ : 2 /* IBV_QPT_RC */;
	memcpy(id->sgid, m->dgid, 16);
	id->remote_guid = m->ca_guid;
	id->remote_qpn = m->qpn;
	memset(&c, 0, sizeof(c));
	c.qpn = m->qpn;
	c.psn = m->psn;
	c.qp_type = id->qp_type;
	c.resp_res = m->resp_res;
	c.init_depth = m->init_depth;
	c.flow_ctrl = m->flow_ctrl;
	c.retry_cnt = m->retry_cnt;
	c.rnr_retry = m->rnr_retry;
	c.srq = m->srq;
	c.mtu = (uint8_t)RTE_MIN(m->mtu, cm_port_mtu(pi));
	if (c.mtu == 0)
		c.mtu = 1;
	c.ack_timeout = m->ack_timeout;
	/* the consumer's part: after the IP header */
	c.pdata_len = DPR_CM_REQ_PDATA - DPR_CMA_HDR_LEN;
	memcpy(c.pdata, m->pdata + DPR_CMA_HDR_LEN, c.pdata_len);
	cm_emit(id, DPR_SHM_CM_EV_CONNECT_REQUEST, 0, &c, cm_id_handle(lid));
}

/* A UD service request (SIDR_REQ): a new ID of the listener of its
 * service and address, or a SIDR_REP saying there is none. */
static void
rx_sidr_req(int pi, const struct cm_mad *r, const struct dpr_cm_msg *m)
{
	struct dpr_shm_cm_conn c;
	struct dpr_cma_hdr h;
	struct cm_id *lid = NULL, *id;
	uint16_t port = (uint16_t)m->service_id;
	int gi = -1;

	cm.st.sidr_req_rx++;
	CM_FOREACH_REMOTE(id, m->local_id) {
		if (!cm_id_is_ud(id) || id->st < CS_REQ_RCVD ||
		    id->remote_id != m->local_id || memcmp(id->dgid, r->gid, 16) != 0)
			continue;
		cm.st.mad_duplicate++;
		if (id->has_answer)
			dpr_cm_mad_send(id->pi, id->sgid_index, id->dgid, id->answer);
		return;
	}
	if ((m->service_id >> 16) == DPR_RDMA_PS_UDP && (m->service_id >> 32) == 0 &&
	    dpr_cma_hdr_get(m->pdata, &h)) {
		lid = find_listener(pi, DPR_RDMA_PS_UDP, port, h.dst);
		gi = cm_own_gid_index((uint16_t)pi, h.dst);
	} else {
		cm.st.mad_bad_pdata++;
	}
	if (lid == NULL || gi < 0) {
		struct cm_id tmp = {
			.pi = pi, .remote_id = m->local_id, .tid = m->tid,
			.ps = DPR_RDMA_PS_UDP, .src = { .port = htons(port) },
			.sgid_index = (uint8_t)(cm_is_v4mapped(r->gid) ? 1 : 0),
		};

		cm.st.sidr_no_listener++;
		memcpy(tmp.dgid, r->gid, 16);
		cm_send_sidr_rep(&tmp, 1 /* service ID not supported */, 0, 0, NULL, 0);
		return;
	}
	id = passive_id(lid, pi, gi, DPR_RDMA_PS_UDP, port, &h, r->gid, m, r->gid);
	if (id == NULL)
		return;
	id->qp_type = IBV_QPT_UD_;
	memset(&c, 0, sizeof(c));
	c.qp_type = IBV_QPT_UD_;
	c.pdata_len = DPR_CM_SIDR_REQ_PDATA - DPR_CMA_HDR_LEN;
	memcpy(c.pdata, m->pdata + DPR_CMA_HDR_LEN, c.pdata_len);
	cm_emit(id, DPR_SHM_CM_EV_CONNECT_REQUEST, 0, &c, cm_id_handle(lid));
}

static void
rx_sidr_rep(const struct dpr_cm_msg *m)
{
	struct cm_id *id = cm_id_by_local(m->local_id);
	struct dpr_shm_cm_conn c;

	if (id == NULL || !cm_id_is_ud(id)) {
		cm.st.mad_unknown_id++;
		return;
	}
	if (id->st != CS_REQ_SENT) {
		cm.st.mad_duplicate++;
		return;
	}
	id->waiting = false;
	memset(&c, 0, sizeof(c));
	c.qp_type = IBV_QPT_UD_;
	c.qpn = m->qpn;
	c.qkey = m->qkey;
	c.pdata_len = DPR_CM_SIDR_REP_PDATA;
	memcpy(c.pdata, m->pdata, DPR_CM_SIDR_REP_PDATA);
	if (m->status != 0) {
		id->st = CS_CLOSED;
		cm_emit(id, DPR_SHM_CM_EV_UNREACHABLE, m->status, &c, 0);
		return;
	}
	id->st = CS_ESTABLISHED;
	id->remote_qpn = m->qpn;
	cm.st.connections++;
	cm_emit(id, DPR_SHM_CM_EV_ESTABLISHED, 0, &c, 0);
}

void
cm_rx_mad(struct cm_mad *r)
{
	struct dpr_cm_msg m;
	enum dpr_cm_mad_err e;
	struct cm_id *id;
	struct dpr_shm_cm_conn c;

	if (!cm_auth_rx(r) || dpr_cm_sec_rx(r) || dpr_cm_caps_rx(r))
		return;
	cm.st.mads_rx++;
	e = dpr_cm_decode(r->mad, sizeof(r->mad), &m);
	switch (e) {
	case DPR_CM_MAD_OK:
		break;
#define _(n) case DPR_CM_ERR_ ## n: cm.st.n++; return;
	DPR_CM_MAD_ERRORS(_)
#undef _
	}
	if (m.attr == DPR_CM_REQ) {
		rx_req(r->port, r, &m);
		return;
	}
	if (m.attr == DPR_CM_SIDR_REQ) {
		rx_sidr_req(r->port, r, &m);
		return;
	}
	if (m.attr == DPR_CM_SIDR_REP) {
		rx_sidr_rep(&m);
		return;
	}
	id = cm_id_by_local(m.remote_id);
	if (id == NULL || id->pi != r->port ||
	    (id->st > CS_REQ_SENT && id->remote_id != m.local_id)) {
		cm.st.mad_unknown_id++;
		return;
	}
	memset(&c, 0, sizeof(c));
	switch (m.attr) {
	case DPR_CM_REP:
		if (id->st == CS_REP_RCVD || id->st == CS_ESTABLISHED) {
			cm.st.mad_duplicate++;
			if (id->has_answer) {   /* our RTU was lost */
				dpr_cm_mad_send(id->pi, id->sgid_index, id->dgid, id->answer);
			} else if (id->st == CS_REP_RCVD) {
				/* our program has not taken the REP yet (busy
				 * with others): the peer is to wait, as
				 * Linux's CM tells it (IBA 12.6.6) */
				struct dpr_cm_msg mra;

				cm_msg_ids(id, &mra, DPR_CM_MRA);
				mra.msg_ref = DPR_CM_REF_REP;
				mra.service_timeout = CM_MRA_TIMEOUT;
				dpr_cm_encode(&mra, id->answer);
				dpr_cm_mad_send(id->pi, id->sgid_index, id->dgid, id->answer);
			}
			return;
		}
		if (id->st != CS_REQ_SENT)
			break;
		id->waiting = false;
		id->st = CS_REP_RCVD;
		id->remote_id = m.local_id;
		cm_index_remote(id);
		id->remote_qpn = m.qpn;
		id->remote_guid = m.ca_guid;
		c.qpn = m.qpn;
		c.psn = m.psn;
		c.qp_type = id->qp_type;
		c.resp_res = m.resp_res;
		c.init_depth = m.init_depth;
		c.flow_ctrl = m.flow_ctrl;
		c.rnr_retry = m.rnr_retry;
		c.srq = m.srq;
		c.pdata_len = DPR_CM_REP_PDATA;
		memcpy(c.pdata, m.pdata, DPR_CM_REP_PDATA);
		cm_emit(id, DPR_SHM_CM_EV_CONNECT_RESPONSE, 0, &c, 0);
		return;
	case DPR_CM_RTU:
		if (id->passive && id->st > CS_REP_SENT) {
			/* our REP went twice (the RTU was slow), and the
			 * peer answered both */
			cm.st.mad_late++;
			return;
		}
		if (id->st != CS_REP_SENT)
			break;
		id->waiting = false;
		id->st = CS_ESTABLISHED;
		cm.st.connections++;
		cm_emit(id, DPR_SHM_CM_EV_ESTABLISHED, 0, NULL, 0);
		return;
	case DPR_CM_REJ:
		if (id->st != CS_REQ_SENT && id->st != CS_REP_SENT &&
		    id->st != CS_REP_RCVD)
			break;
		cm.st.rej_rx++;
		id->waiting = false;
		id->st = CS_CLOSED;
		c.pdata_len = DPR_CM_REJ_PDATA;
		memcpy(c.pdata, m.pdata, DPR_CM_REJ_PDATA);
		cm_emit(id, m.reason == DPR_CM_REJ_TIMEOUT ? DPR_SHM_CM_EV_UNREACHABLE :
			DPR_SHM_CM_EV_REJECTED, m.reason, &c, 0);
		return;
	case DPR_CM_MRA:
		if (!id->passive ? id->st > CS_REQ_SENT && id->st != CS_REP_SENT :
		    id->st > CS_REP_SENT) {
			/* the peer's MRA answered a copy of our REQ (REP)
			 * sent again; its REP (RTU) has come since */
			cm.st.mad_late++;
			return;
		}
		if (!id->waiting || (id->st != CS_REQ_SENT && id->st != CS_REP_SENT))
			break;
		/* the peer needs longer: 4.096 us x 2^timeout, at most 60 s */
	{
		uint64_t extra = (4096ull << (m.service_timeout & 31)) / 1000000ull;

		id->deadline_ms = dpr_cm_now_ms() +
			RTE_MIN(extra + cm.conf.response_timeout_ms, 60000ull);
		cm_timer_arm(id, id->deadline_ms);
	}
		return;
	case DPR_CM_DREQ: {
		struct dpr_cm_msg rep;

		if (id->st == CS_CLOSED || id->st == CS_DREQ_RCVD ||
		    id->st == CS_TIMEWAIT) {
			cm.st.mad_duplicate++;
			cm_msg_ids(id, &rep, DPR_CM_DREP);
			rep.tid = m.tid;
			cm_send_answer(id, &rep);
			return;
		}
		if (id->st != CS_ESTABLISHED && id->st != CS_REP_SENT &&
		    id->st != CS_DREQ_SENT)
			break;
		cm_msg_ids(id, &rep, DPR_CM_DREP);
		rep.tid = m.tid;
		cm_send_answer(id, &rep);
		id->waiting = false;
		id->st = CS_DREQ_RCVD;
		cm_emit(id, DPR_SHM_CM_EV_DISCONNECTED, 0, NULL, 0);
		return;
	}
	case DPR_CM_DREP:
		if (id->st == CS_DREQ_RCVD) {
			/* both sides sent a DREQ: this answers ours */
			id->waiting = false;
			return;
		}
		if (id->st == CS_TIMEWAIT || id->st == CS_CLOSED) {
			cm.st.mad_duplicate++;
			return;
		}
		if (id->st != CS_DREQ_SENT)
			break;
		id->waiting = false;
		id->st = id->owner == NULL ? CS_TIMEWAIT : CS_CLOSED;
		cm_emit(id, DPR_SHM_CM_EV_DISCONNECTED, 0, NULL, 0);
		return;
	default:
		break;
	}
	cm.st.mad_wrong_state++;
	CM_LOG(DEBUG, "%s for ID %u in state %s: dropped", dpr_cm_attr_name(m.attr),
	       cm_id_handle(id), cm_state_names[id->st]);
}
