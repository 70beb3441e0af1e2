/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Frames out, and payload between SGE lists and frames. Every local key is
 * checked (PD, access, bounds) on each use: a key deregistered while a
 * message is under way stops at once.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>

#include "transport_private.h"

/* Frame @p m onto the transport's TX ring (the caller saw room). */
static inline void
txq_put(struct dpr_transport *tp, struct rte_mbuf *m)
{
	tp->txq[tp->txq_head & tp->txq_mask] = m;
	tp->txq_head++;
	tp->stats.tx_frames++;
}

int
dpr_xmit(struct dpr_transport *tp, struct dpr_tqp *qp,
	 const struct dpr_wire_hdrs *h, const struct dpr_wire_seg *segs,
	 unsigned int nseg)
{
	struct rte_mbuf *m;

	if (txq_room(tp) == 0)
		return -ENOBUFS;
	if (unlikely(tp->conf.slow_only))
		m = dpr_wire_build_chain(tp->pool, &qp->tmpl, &qp->encap, h, segs, nseg);
	else if (likely(qp->sec == NULL))
		m = dpr_wire_build_tmpl(tp->pool, &qp->tmpl, &qp->encap, h, segs, nseg);
	else    /* the ICRC made once, over the sealed frame */
		m = dpr_wire_build_unsealed(tp->pool, &qp->tmpl, &qp->encap, h,
					    segs, nseg);
	if (m == NULL) {
		tp->stats.tx_no_mbuf++;
		return -rte_errno;
	}
	qp->encap.ip_id++;            /* as Linux does, one per frame */
	if (unlikely(qp->sec != NULL)) {
		m = dpr_secqp_seal(qp, m);
		if (m == NULL)
			return -ENOBUFS;
	}
	if (unlikely(rte_is_zero_ether_addr(&qp->encap.dst_mac))) {
		/* the peer's MAC is not known yet (an answer to a request
		 * from a peer we have not resolved, a datagram): the resolver
		 * keeps the frame until it is; no frame leaves for
		 * 00:00:00:00:00:00 */
		tp->stats.tx_frames++;
		tp->stats.tx_unresolved++;
		if (tp->conf.hold != NULL)
			tp->conf.hold(tp->conf.resolve_arg, &qp->encap.dgid, m);
		else
			rte_pktmbuf_free(m);
		return 0;
	}
	txq_put(tp, m);
	return 0;
}

/*
 * DCQCN's notification point: a frame of @p qp arrived marked CE, so its
 * peer's QP is told with a CNP (RoCEv2: BTH opcode 0x81, P_Key 0xFFFF,
 * BECN set, the peer's QP, PSN 0, 16 zero bytes), at most one per
 * cnp_interval_ns per QP, at the CNP's own TOS and never ECN-capable, as
 * ConnectX sends them. A secure QP's is sealed as its other frames
 * (the peer drops a plain CNP for a secure QP: one forged would cut the
 * QP's rate).
 */
void
dpr_xmit_cnp(struct dpr_tqp *qp)
{
	struct dpr_transport *tp = qp->tp;
	struct dpr_wire_encap e = qp->encap;
	struct dpr_wire_hdrs h = {
		.opcode = DPR_OP_CNP,
		.pkey = 0xffff,
		.becn = true,
		.dqpn = qp->attr.dest_qp_num,
	};
	struct rte_mbuf *m;

	if (!tp->conf.cnp_send || !qp->mac_resolved || txq_room(tp) == 0 ||
	    (qp->cnp_last != 0 && tp->now - qp->cnp_last < tp->conf.cnp_interval_ns))
		return;
	if (unlikely(qp->sec_state != SECS_PLAIN) && qp->sec_state != SECS_ON)
		return;         /* no keys yet: nothing leaves */
	e.tos = tp->conf.cnp_tos & 0xfc;
	m = dpr_wire_build(tp->pool, &e, &h, NULL, 0);
	if (m == NULL) {
		tp->stats.tx_no_mbuf++;
		return;
	}
	qp->encap.ip_id++;
	if (unlikely(qp->sec != NULL)) {
		/* (its ICRC made here and again over the sealed frame: a
		 * CNP is rare) */
		m = dpr_secqp_seal(qp, m);
		if (m == NULL)
			return;
	}
	qp->cnp_last = tp->now ? tp->now : 1;
	QP_STAT(qp, cnp_tx);
	txq_put(tp, m);
}

/*
 * An ACK (or NAK) of an RC QP whose request headers are made (untagged
 * IPv4): qp->req_img patched for the ACK opcode, the AETH, the ICRC; the
 * same frame the general builder makes of it (the oracle test compares
 * them), for a fraction of its work.
 */
static int
xmit_ack_fast(struct dpr_transport *tp, struct dpr_tqp *qp, uint8_t syndrome,
	      uint32_t psn)
{
	const rte_be32_t aeth = rte_cpu_to_be_32((uint32_t)syndrome << 24 |
						 (qp->resp.msn & DPR_PSN_MASK));
	struct rte_mbuf *m;
	rte_le32_t icrc;
	uint32_t len;
	uint8_t *p;

	if (txq_room(tp) == 0)
		return -ENOBUFS;
	m = stash_get(tp);
	if (m == NULL) {
		tp->stats.tx_no_mbuf++;
		return -ENOMEM;
	}
	p = rte_pktmbuf_mtod(m, uint8_t *);
	/* (64 bytes written: the AETH and ICRC are within them) */
	len = dpr_wire_req_hdrs(p, &qp->req_img, qp->encap.ip_id, DPR_OP_RC_ACK,
				sizeof(struct dpr_bth) + sizeof(struct dpr_aeth), false, false,
				psn & DPR_PSN_MASK, 0);
	memcpy(p + DPR_F_BTH + sizeof(struct dpr_bth), &aeth, sizeof(aeth));
	icrc = rte_cpu_to_le_32(dpr_icrc_ipv4(p + DPR_F_L3, len - DPR_F_L3 - DPR_ICRC_LEN));
	memcpy(p + len - DPR_ICRC_LEN, &icrc, sizeof(icrc));
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	qp->encap.ip_id++;
	txq_put(tp, m);
	tp->stats.tx_fast++;
	return 0;
}

/* An ACK (or NAK) by the general builder; then the fast path's headers
 * from the template it made */
static __rte_noinline int
xmit_ack_general(struct dpr_transport *tp, struct dpr_tqp *qp, uint8_t syndrome,
		 uint32_t psn)
{
	struct dpr_wire_hdrs h = {
		.opcode = DPR_OP_RC_ACK,
		.pkey = DPR_DEFAULT_PKEY,
		.dqpn = qp->attr.dest_qp_num,
		.psn = psn & DPR_PSN_MASK,
		.aeth = { syndrome, qp->resp.msn },
	};
	int rc;

	rc = dpr_xmit(tp, qp, &h, NULL, 0);
	if (rc == 0)
		req_img_refresh(qp);
	return rc;
}

int
dpr_xmit_ack(struct dpr_tqp *qp, uint8_t syndrome, uint32_t psn)
{
	struct dpr_transport *tp = qp->tp;

	if (likely(qp->tmpl_fresh && !tp->conf.slow_only))
		return xmit_ack_fast(tp, qp, syndrome, psn);
	return xmit_ack_general(tp, qp, syndrome, psn);
}

/*
 * The shared info that frames attached to an MR's memory count on: one per
 * MR, made on first use, kept in mr->priv (this file alone touches it).
 * The MR holds one reference, each attached frame another; the last one to
 * go frees it and gives the memory to the MR's owner (a copy of it is kept
 * here: the MR itself is gone by then), so frames in flight outlive a
 * deregistration safely (they hold the memory's owner to its promise until
 * they are sent, as a NIC's DMA would).
 */
struct tx_mem {
	struct rte_mbuf_ext_shared_info si;
	struct dpr_mr_owner owner;
};

static void
tx_mem_free(void *addr __rte_unused, void *opaque)
{
	struct tx_mem *t = opaque;

	if (t->owner.release != NULL)
		t->owner.release(t->owner.arg);
	free(t);
}

static struct rte_mbuf_ext_shared_info *
mr_shinfo(struct dpr_mr *mr)
{
	struct tx_mem *t = mr->priv;

	if (t == NULL) {
		t = calloc(1, sizeof(*t));
		if (t == NULL)
			return NULL;
		t->si.free_cb = tx_mem_free;
		t->si.fcb_opaque = t;
		t->owner = mr->owner;
		rte_mbuf_ext_refcnt_set(&t->si, 1);
		mr->priv = t;
	}
	return &t->si;
}

void
dpr_mr_release_shinfo(struct dpr_mr *mr)
{
	struct tx_mem *t = mr->priv;

	mr->priv = NULL;
	/* the MR's reference; the last one gives the memory back */
	if (t != NULL && rte_mbuf_ext_refcnt_update(&t->si, -1) == 0)
		tx_mem_free(NULL, t);
}

void
dpr_payload_seg(struct dpr_tqp *qp, struct dpr_mr *mr, struct dpr_wire_seg *seg)
{
	struct dpr_transport *tp = qp->tp;

	/* large pieces go out where they lie; small ones are copied, which
	 * costs less than another segment */
	seg->shinfo = NULL;
	if (tp->conf.zero_copy_min != 0 && seg->len >= tp->conf.zero_copy_min)
		/* (a window's memory is its MR's: frames hold the MR's) */
		seg->shinfo = mr_shinfo(unlikely(mr->mw_type != 0) ? mr->parent : mr);
	if (seg->shinfo != NULL)
		tp->stats.tx_payload_attached += seg->len;
	else
		tp->stats.tx_payload_copied += seg->len;
}

int
dpr_sge_gather(struct dpr_tqp *qp, const struct dpr_sge *sge, uint32_t nsge,
	       uint32_t off, uint32_t len, struct dpr_wire_seg *segs,
	       unsigned int max_segs, unsigned int *nseg)
{
	uint32_t i;

	*nseg = 0;
	for (i = 0; i < nsge && len > 0; i++) {
		uint32_t piece;
		struct dpr_mr *mr;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		piece = RTE_MIN(len, sge[i].length - off);
		mr = dpr_mr_check(qp->tp->ctx, sge[i].lkey, qp->pd, 0,
				  sge[i].addr + off, piece, 0);
		if (mr == NULL || *nseg == max_segs)
			return -EACCES;
		segs[*nseg].addr = dpr_mr_ptr(mr, sge[i].addr + off);
		segs[*nseg].iova = (rte_iova_t)(uintptr_t)segs[*nseg].addr;
		segs[*nseg].len = piece;
		dpr_payload_seg(qp, mr, &segs[*nseg]);
		(*nseg)++;
		len -= piece;
		off = 0;
	}
	return len == 0 ? 0 : -ENOSPC;
}

int
dpr_sge_scatter(struct dpr_tqp *qp, const struct dpr_sge *sge, uint32_t nsge,
		uint32_t off, const struct rte_mbuf *m, uint32_t moff,
		uint32_t len)
{
	uint32_t i;

	for (i = 0; i < nsge && len > 0; i++) {
		uint32_t piece;
		struct dpr_mr *mr;
		const void *src;
		uint8_t *dst;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		piece = RTE_MIN(len, sge[i].length - off);
		mr = dpr_mr_check(qp->tp->ctx, sge[i].lkey, qp->pd, 0,
				  sge[i].addr + off, piece,
				  DPR_ACCESS_LOCAL_WRITE);
		if (mr == NULL)
			return -EACCES;
		dst = dpr_mr_ptr(mr, sge[i].addr + off);
		src = rte_pktmbuf_read(m, moff, piece, dst);
		if (src == NULL)
			return -EINVAL;
		if (src != dst)
			memcpy(dst, src, piece);
		moff += piece;
		len -= piece;
		off = 0;
	}
	return len == 0 ? 0 : -ENOSPC;
}
