/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Unreliable Datagram (IBA 9.8, rxe's UD paths in rxe_req.c/rxe_resp.c):
 * one packet per message, no ACKs, no retries, every send names its own
 * destination (the address vector of its AH, a QPN and a Q_Key).
 *
 * Send: each WQE becomes one UD SEND_ONLY[_IMM] packet with a DETH (the
 * Q_Key, or the QP's own where the request's has its high bit set; our
 * QPN), its PSN the QP's next, AckReq clear, and completes as soon as the
 * frame is queued. A datagram to a destination whose MAC is not known
 * yet is given to the resolver, which sends it once ARP/ND answers (or
 * drops it after a few seconds: a datagram nobody receives); the queue
 * moves on meanwhile (counted ud_unresolved).
 *
 * Receive: from any source, to our GID, the Q_Key equal to the QP's; the
 * next receive WQE gets the 40-byte GRH and then the payload, as rxe
 * fills it (IPv4: 20 zero bytes, then the IPv4 header as received; IPv6:
 * the IPv6 header), and a completion with IBV_WC_GRH and the sender's QPN.
 * What does not fit (no WQE, a message longer than the WQE or the MTU) is
 * dropped and counted, the WQE left for the next (IBA class D, as rxe).
 */

#include <errno.h>
#include <string.h>

#include <rte_ip.h>

#include "transport_private.h"

#define GRH_LEN 40

static inline uint32_t
ud_mtu(const struct dpr_tqp *qp)
{
	return qp->tp->conf.port_mtu ? qp->tp->conf.port_mtu : 1024;
}

int
dpr_ud_check_send(const struct dpr_tqp *qp, const struct dpr_send_wr *wr,
		  uint64_t len)
{
	union dpr_gid g;

	memcpy(g.raw, wr->ud.dgid, sizeof(g.raw));
	if ((wr->opcode != DPR_WR_SEND && wr->opcode != DPR_WR_SEND_WITH_IMM) ||
	    len > ud_mtu(qp) || wr->ud.remote_qpn > DPR_PSN_MASK ||
	    /* the AV's source GID is one of ours, of the destination's
	     * family (multicast comes with ibv_attach_mcast) */
	    !dpr_conf_gid_reaches(&qp->tp->conf, wr->ud.sgid_index, &g))
		return -EINVAL;
	return 0;
}

/* The WQE's destination as the QP's encapsulation (its template follows:
 * dpr_wire_build_tmpl() remakes it when the destination changes). A
 * destination whose MAC is not known yet gets MAC zero: dpr_xmit() gives
 * the frame to the resolver, which sends it once it knows, and the send
 * queue moves on (as a datagram does through a kernel's neighbour
 * queue). */
static void
ud_encap(struct dpr_tqp *qp, const struct dpr_send_wqe *w)
{
	struct dpr_transport *tp = qp->tp;
	struct dpr_wire_encap *e = &qp->encap;
	uint16_t ip_id = e->ip_id;
	struct rte_ether_addr mac;
	union dpr_gid dgid;

	memcpy(dgid.raw, w->ud.dgid, sizeof(dgid.raw));
	if (tp->conf.resolve == NULL)
		memset(&mac, 0xff, sizeof(mac));
	else if (tp->conf.resolve(tp->conf.resolve_arg, &dgid, &mac) != 0) {
		memset(&mac, 0, sizeof(mac));
		QP_STAT(qp, ud_unresolved);
	}
	memset(e, 0, sizeof(*e));
	e->src_mac = tp->conf.mac;
	e->dst_mac = mac;
	/* checked when it was posted (dpr_ud_check_send) */
	e->sgid = tp->conf.gid[w->ud.sgid_index];
	e->dgid = dgid;
	e->ipv6 = !dpr_gid_is_ipv4(&dgid);
	e->tos = w->ud.traffic_class;
	/* as rxe over IPv4: the route's hop limit, not the AH's (the UD
	 * capture of ibv_ud_pingpong, whose AH says 1, carries TTL 64) */
	e->ttl = 64;
	e->df = true;
	e->ip_id = ip_id;
	e->sport = dpr_udp_sport_ud(qp->qpn);
	e->flow_label = w->ud.flow_label;
}

/* One WQE's packet. @return 0 (sent, or failed and completed),
 * -ENOBUFS/-ENOMEM (no room or mbuf: try later). */
static int
ud_send_one(struct dpr_tqp *qp, struct dpr_send_wqe *w)
{
	struct dpr_transport *tp = qp->tp;
	struct dpr_wire_seg segs[MAX_SEGS_PER_PKT];
	struct dpr_wire_hdrs h = {
		.opcode = w->opcode == DPR_WR_SEND_WITH_IMM ?
			DPR_OP_UD_SEND_ONLY_IMM : DPR_OP_UD_SEND_ONLY,
		.pkey = DPR_DEFAULT_PKEY,
		.dqpn = w->ud.remote_qpn,
		.psn = qp->req.psn,
		.se = (w->flags & DPR_SEND_SOLICITED) != 0,
		.imm = w->imm,
		.deth = {
			.qkey = (w->ud.remote_qkey & 0x80000000u) ?
				qp->attr.qkey : w->ud.remote_qkey,
			.sqpn = qp->qpn,
		},
	};
	unsigned int nseg = 0;
	int rc;

	ud_encap(qp, w);
	if (w->length != 0 && (w->flags & DPR_SEND_INLINE)) {
		segs[0].addr = w->inline_data;
		segs[0].iova = (rte_iova_t)(uintptr_t)segs[0].addr;
		segs[0].len = w->length;
		segs[0].shinfo = NULL;
		nseg = 1;
	} else if (w->length != 0 &&
		   dpr_sge_gather(qp, w->sge, w->num_sge, 0, w->length, segs,
				  RTE_DIM(segs), &nseg) != 0) {
		/* IBA 10.7.2.3: a bad local key, the QP to error */
		dpr_qp_complete_send(qp, w, DPR_WC_LOC_PROT_ERR);
		qp->comp.index++;
		qp->req.index++;
		dpr_qp_error(qp, "a UD send WQE's buffer is outside its lkey's MR "
			     "(LOC_PROT_ERR)");
		return 0;
	}
	rc = dpr_xmit(tp, qp, &h, segs, nseg);
	if (rc != 0)
		return rc;
	QP_STAT(qp, ud_sent);
	qp->req.psn = dpr_psn_add(qp->req.psn, 1);
	/* no response comes: the send is complete once it is queued */
	dpr_qp_complete_send(qp, w, DPR_WC_SUCCESS);
	qp->comp.index++;
	qp->req.index++;
	return 0;
}

bool
dpr_ud_req_run(struct dpr_tqp *qp, uint32_t budget)
{
	struct dpr_transport *tp = qp->tp;

	if (qp->state != DPR_QPS_RTS)
		return false;   /* SQD: nothing new starts; ERR flushed */
	/* the RC send fast path builds from the connection's template */
	qp->tmpl_fresh = false;
	while (qp->req.index != qp->sq.prod) {
		int rc;

		if (budget == 0 || txq_room(tp) == 0)
			return true;
		rc = ud_send_one(qp, sq_wqe(qp, qp->req.index));
		if (rc != 0)
			return qp->state == DPR_QPS_RTS;
		budget--;
	}
	return false;
}

void
dpr_ud_rx(struct dpr_tqp *qp, const struct rte_mbuf *m,
	  const struct dpr_pkt_info *pi, const struct dpr_wire_hdrs *h)
{
	uint8_t grh[GRH_LEN];
	struct rte_mbuf gm;
	struct dpr_recv_wqe *r;
	const uint8_t *l3;
	uint8_t l3copy[sizeof(struct rte_ipv6_hdr)];
	int rc;

	/* IBA 10.2.5 (rxe check_keys): the Q_Key must be the QP's */
	if (h->deth.qkey != qp->attr.qkey) {
		QP_STAT(qp, bad_qkey);
		return;
	}
	if (pi->paylen > ud_mtu(qp)) {
		QP_STAT(qp, ud_too_long);
		return;
	}
	if (!rq_has_wqe(qp)) {
		QP_STAT(qp, ud_no_wqe);
		return;
	}
	if ((uint64_t)GRH_LEN + pi->paylen > rq_head(qp)->length) {
		QP_STAT(qp, ud_too_long);
		return;
	}
	rq_take(qp);
	r = rq_cur(qp);
	/* the GRH as rxe's build_rdma_network_hdr() makes it */
	memset(grh, 0, sizeof(grh));
	if (pi->encap.ipv6) {
		l3 = rte_pktmbuf_read(m, pi->l3_off, sizeof(struct rte_ipv6_hdr), l3copy);
		if (l3 != NULL)
			memcpy(grh, l3, sizeof(struct rte_ipv6_hdr));
	} else {
		l3 = rte_pktmbuf_read(m, pi->l3_off, sizeof(struct rte_ipv4_hdr), l3copy);
		if (l3 != NULL)
			memcpy(grh + 20, l3, sizeof(struct rte_ipv4_hdr));
	}
	dpr_wire_mbuf_wrap(&gm, grh, sizeof(grh));
	rc = dpr_sge_scatter(qp, r->sge, r->num_sge, 0, &gm, 0, GRH_LEN);
	if (rc == 0 && pi->paylen != 0)
		rc = dpr_sge_scatter(qp, r->sge, r->num_sge, GRH_LEN, m,
				     pi->payload_off, pi->paylen);
	{
		struct dpr_cqe e = {
			.wr_id = r->wr_id,
			.status = rc == 0 ? DPR_WC_SUCCESS : DPR_WC_LOC_PROT_ERR,
			.opcode = DPR_WC_RECV,
			.byte_len = rc == 0 ? GRH_LEN + pi->paylen : 0,
			.qp_num = qp->qpn,
			.src_qp = h->deth.sqpn,
			.wc_flags = DPR_WC_GRH | (pi->encap.ipv6 ? DPR_WC_NET_IPV6 :
						  DPR_WC_NET_IPV4),
		};

		if (rc == 0 && (pi->mask & DPR_IMMDT_MASK)) {
			e.imm_data = h->imm;
			e.wc_flags |= DPR_WC_WITH_IMM;
		}
		rq_done(qp);
		dpr_cq_push(qp->rcq, &e);
	}
	if (rc != 0) {
		/* a receive WQE with a bad local key: the QP to error */
		dpr_verbs_event(qp->tp->ctx, DPR_EVENT_QP_FATAL, qp->qpn);
		dpr_qp_error(qp, "a UD receive WQE's buffer is outside its lkey's MR");
		return;
	}
	QP_STAT(qp, ud_received);
}
