/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <rte_ip.h>
#include <rte_mbuf.h>

#include "dpr_sec.h"
#include "rc_harness.h"

const char *const rc_kind_names[K_NUM] = {
	"request", "ack", "nak", "read_response", "atomic_ack", "sack",
};
const char *const rc_fault_names[F_NUM] = {
	"lost", "reordered", "duplicated", "corrupted",
};

static int
resolve(void *arg, const union dpr_gid *gid, struct rte_ether_addr *mac)
{
	struct rc_harness *h = arg;
	int i;

	for (i = 0; i < 2; i++)
		if (memcmp(gid, &h->side[i].gid, sizeof(*gid)) == 0) {
			*mac = h->side[i].mac;
			return 0;
		}
	return -EAGAIN;
}

/* Both sides hold the same key and run secure QPs in the harness's mode */
static int
sec_caps(void *arg, const union dpr_gid *gid, uint8_t sgid_index)
{
	struct rc_harness *h = arg;

	(void)gid;
	(void)sgid_index;
	return DPR_PEER_SEC_KEY | (h->f.sr == DPR_SR_ON ? DPR_PEER_SR : 0) |
		(h->f.sec_mode == DPR_SEC_ENCRYPT ? DPR_PEER_SEC_ENC : DPR_PEER_SEC_AUTH);
}

static void
sec_req(void *arg, const struct dpr_sec_req *r)
{
	struct rc_side *s = arg;
	struct rc_harness *h = s->h;
	int i = (int)(s - h->side);

	if (r->op == DPR_SEC_REQ_BEGIN && h->n_sec_req[i] < RTE_DIM(h->sec_req[i]))
		h->sec_req[i][h->n_sec_req[i]++] = *r;
}

/* The handshake of the QPs that asked on both sides: a fresh nonce each,
 * keys derived from a PSK of the harness's seed, installed. */
static int
sec_handshake(struct rc_harness *h)
{
	uint8_t psk[32], prk[32];
	uint32_t i, j;

	for (i = 0; i < sizeof(psk); i++)
		psk[i] = (uint8_t)rc_rand(&h->rng);
	if (dpr_sec_psk_prk(psk, sizeof(psk), prk) != 0)
		return -1;
	for (i = 0; i < h->n_sec_req[0]; i++) {
		const struct dpr_sec_req *a = &h->sec_req[0][i];

		for (j = 0; j < h->n_sec_req[1]; j++) {
			const struct dpr_sec_req *b = &h->sec_req[1][j];
			struct dpr_sec_end ea = { .gid = a->lgid, .qpn = a->lqpn };
			struct dpr_sec_end eb = { .gid = b->lgid, .qpn = b->lqpn };
			struct dpr_sec_key atx, arx, btx, brx;
			uint32_t k;

			if (a->rqpn != b->lqpn || b->rqpn != a->lqpn)
				continue;
			for (k = 0; k < 16; k++) {
				ea.nonce[k] = (uint8_t)rc_rand(&h->rng);
				eb.nonce[k] = (uint8_t)rc_rand(&h->rng);
			}
			if (dpr_sec_derive(prk, NULL, a->mode, &ea, &eb, &atx, &arx) != 0 ||
			    dpr_sec_derive(prk, NULL, b->mode, &eb, &ea, &btx, &brx) != 0 ||
			    dpr_transport_sec_install(h->side[0].tp, a->lqpn, a->gen,
						      a->mode, &atx, &arx) != 0 ||
			    dpr_transport_sec_install(h->side[1].tp, b->lqpn, b->gen,
						      b->mode, &btx, &brx) != 0)
				return -1;
		}
	}
	h->n_sec_req[0] = h->n_sec_req[1] = 0;
	return 0;
}

static void
on_event(void *arg, enum dpr_event_type type, uint32_t obj)
{
	struct rc_side *s = arg;

	(void)obj;
	if ((unsigned int)type < RTE_DIM(s->events))
		s->events[type]++;
}

int
rc_harness_init(struct rc_harness *h, struct rte_mempool *pool, uint64_t seed,
		const struct rc_faults *f)
{
	int i;

	memset(h, 0, sizeof(*h));
	h->pool = pool;
	h->rng = seed ? seed : 1;
	if (f != NULL)
		h->f = *f;
	if (h->f.delay_ns == 0)
		h->f.delay_ns = 2000;
	h->cap = 1 << 16;
	h->heap = calloc(h->cap, sizeof(*h->heap));
	if (h->heap == NULL)
		return -1;
	for (i = 0; i < 2; i++) {
		struct rc_side *s = &h->side[i];
		struct dpr_transport_conf c;

		s->mac = (struct rte_ether_addr){{ 0x02, 0, 0, 0, 0, (uint8_t)(i + 1) }};
		dpr_gid_from_ipv4(&s->gid, htonl(0x0a4d0001 + i));
		if (h->f.ipv6) {
			memset(&s->gid, 0, sizeof(s->gid));
			s->gid.raw[0] = 0xfd;
			s->gid.raw[1] = 0x77;
			s->gid.raw[15] = (uint8_t)(i + 1);
		}
		s->ctx = dpr_verbs_create(NULL);
		if (s->ctx == NULL)
			return -1;
		dpr_verbs_set_event_cb(s->ctx, on_event, s);
		/* a seed's runs draw the same keys (rc_oracle.sh compares them) */
		dpr_verbs_seed_keys(s->ctx, seed * 2 + (uint64_t)i + 1);
		memset(&c, 0, sizeof(c));
		c.ctx = s->ctx;
		c.pool = pool;
		c.mac = s->mac;
		dpr_ipv6_link_local(&s->mac, &c.gid[0]);
		if (h->f.ipv6) {
			dpr_gid_from_ipv4(&c.gid[1], htonl(0x0a4d0001 + i));
			c.gid[2] = s->gid;
			c.n_gids = 3;
		} else {
			c.gid[1] = s->gid;
			c.n_gids = 2;
		}
		c.resolve = h->f.resolve != NULL ? h->f.resolve : resolve;
		c.hold = h->f.hold;
		c.resolve_arg = h->f.resolve != NULL ? h->f.resolve_arg[i] : h;
		c.zero_copy_min = h->f.zero_copy_min;
		c.rto_min_ns = h->f.rto_min_ns;
		c.sr = h->f.sr;
		c.slow_only = h->f.slow_only;
		c.cnp_send = !h->f.no_cnp;
		c.cnp_interval_ns = 4000;
		c.cnp_tos = 48 << 2;
		if (h->f.cc != NULL)
			c.cc = *h->f.cc;
		s->h = h;
		if (h->f.sec_mode != 0) {
			if (dpr_sec_init() != 0)
				return -1;
			c.sec_mode = h->f.sec_mode;
			c.sec_required = true;
			c.peer_caps = sec_caps;
			c.peer_arg = h;
			c.sec_req = sec_req;
			c.sec_arg = s;
		}
		s->tp = dpr_transport_create(&c);
		s->pd = dpr_pd_alloc(s->ctx, 0);
		s->scq = dpr_cq_create(s->ctx, 1 << 16, 0);
		s->rcq = dpr_cq_create(s->ctx, 1 << 16, 0);
		if (s->tp == NULL || s->pd == NULL || s->scq == NULL || s->rcq == NULL)
			return -1;
	}
	return 0;
}

void
rc_harness_fini(struct rc_harness *h)
{
	uint32_t i;

	for (i = 0; i < h->n; i++)
		rte_pktmbuf_free(h->heap[i].m);
	free(h->heap);
	for (i = 0; i < 2; i++) {
		struct rte_mbuf *m;

		while ((m = rc_take(h, i)) != NULL)
			rte_pktmbuf_free(m);
	}
	/* the QPs and MRs belong to the tests, destroyed by now; the PD, the
	 * CQs and the verbs context are the harness's */
	for (i = 0; i < 2; i++) {
		struct rc_side *s = &h->side[i];

		dpr_transport_destroy(s->tp);
		if (s->scq != NULL)
			dpr_cq_destroy(s->scq);
		if (s->rcq != NULL)
			dpr_cq_destroy(s->rcq);
		if (s->pd != NULL)
			dpr_pd_dealloc(s->pd);
		dpr_verbs_destroy(s->ctx);
		memset(s, 0, sizeof(*s));
	}
}

void
rc_conn_defaults(struct rc_conn *c)
{
	memset(c, 0, sizeof(*c));
	c->mtu = DPR_MTU_1024;
	c->timeout = 10;          /* 4.2 ms */
	c->retry_cnt = 7;
	c->rnr_retry = 7;
	c->min_rnr_timer = 1;     /* 10 us */
	c->rd_atomic = 8;
	c->access = DPR_ACCESS_ALL;
	c->psn[0] = 0x100;
	c->psn[1] = 0x200;
	c->max_send_wr = 1024;
	c->max_recv_wr = 1024;
}

int
rc_connect(struct rc_harness *h, const struct rc_conn *c, struct dpr_tqp **qa,
	   struct dpr_tqp **qb)
{
	struct dpr_tqp *qp[2];
	int i, rc;

	for (i = 0; i < 2; i++) {
		struct dpr_qp_init_attr ia = {
			.qp_type = c->uc ? DPR_QPT_UC : DPR_QPT_RC,
			.pd = h->side[i].pd,
			.send_cq = h->side[i].scq,
			.recv_cq = h->side[i].rcq,
			.max_send_wr = c->max_send_wr,
			.max_recv_wr = c->max_recv_wr,
			.max_send_sge = 4,
			.max_recv_sge = 4,
			.max_inline_data = 64,
			.srq = c->srq[i],
		};

		qp[i] = dpr_qp_create(h->side[i].tp, &ia);
		if (qp[i] == NULL)
			return -1;
	}
	for (i = 0; i < 2; i++) {
		struct dpr_qp_attr a;

		memset(&a, 0, sizeof(a));
		a.qp_state = DPR_QPS_INIT;
		a.port_num = 1;
		a.qp_access_flags = c->access;
		rc = dpr_qp_modify(qp[i], &a, DPR_QP_STATE | DPR_QP_PKEY_INDEX |
				   DPR_QP_PORT | DPR_QP_ACCESS_FLAGS);
		if (rc != 0)
			return rc;
		a.qp_state = DPR_QPS_RTR;
		a.path_mtu = c->mtu;
		a.dest_qp_num = dpr_qp_num(qp[!i]);
		a.rq_psn = c->psn[!i];
		a.max_dest_rd_atomic = c->dest_rd_atomic[i] ? c->dest_rd_atomic[i] :
			c->rd_atomic;
		a.min_rnr_timer = c->min_rnr_timer;
		a.ah_attr.dgid = h->side[!i].gid;
		a.ah_attr.sgid_index = h->f.ipv6 ? 2 : 1;
		a.ah_attr.hop_limit = 1;
		rc = dpr_qp_modify(qp[i], &a, DPR_QP_STATE | DPR_QP_AV |
				   DPR_QP_PATH_MTU | DPR_QP_DEST_QPN |
				   DPR_QP_RQ_PSN | (c->uc ? 0 :
				   DPR_QP_MAX_DEST_RD_ATOMIC | DPR_QP_MIN_RNR_TIMER));
		if (rc != 0)
			return rc;
		a.qp_state = DPR_QPS_RTS;
		a.sq_psn = c->psn[i];
		a.timeout = c->timeout;
		a.retry_cnt = c->retry_cnt;
		a.rnr_retry = c->rnr_retry;
		a.max_rd_atomic = c->rd_atomic;
		rc = dpr_qp_modify(qp[i], &a, DPR_QP_STATE | DPR_QP_SQ_PSN |
				   (c->uc ? 0 : DPR_QP_TIMEOUT | DPR_QP_RETRY_CNT |
				    DPR_QP_RNR_RETRY | DPR_QP_MAX_QP_RD_ATOMIC));
		if (rc != 0)
			return rc;
	}
	if (h->f.sec_mode != 0 && sec_handshake(h) != 0)
		return -1;
	*qa = qp[0];
	*qb = qp[1];
	return 0;
}

struct dpr_mr *
rc_mr(struct rc_harness *h, int side, uint64_t len, uint32_t access)
{
	void *buf = aligned_alloc(64, (len + 63) & ~63ULL);
	uint64_t iova;

	if (buf == NULL)
		return NULL;
	memset(buf, 0, len);
	/* peers see the MR at an address of the harness's own, not where
	 * malloc put it: the same in every run of a seed, so that two runs'
	 * frames can be compared byte for byte (rc_oracle.sh) */
	iova = h->next_iova[side] ? h->next_iova[side] : (side + 1ull) << 40;
	h->next_iova[side] = iova + ((len + 4095) & ~4095ULL) + 4096;
	return dpr_mr_reg(h->side[side].pd, buf, iova, len, access);
}

/* ---------------------------------------------------------- the link */

static bool
earlier(const struct rc_flight *a, const struct rc_flight *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void
heap_push(struct rc_harness *h, struct rte_mbuf *m, int to, uint64_t t)
{
	uint32_t i;

	if (h->n == h->cap) {
		h->cap *= 2;
		h->heap = realloc(h->heap, h->cap * sizeof(*h->heap));
	}
	i = h->n++;
	h->heap[i] = (struct rc_flight){ t, h->seq++, m, to };
	while (i > 0 && earlier(&h->heap[i], &h->heap[(i - 1) / 2])) {
		struct rc_flight x = h->heap[i];

		h->heap[i] = h->heap[(i - 1) / 2];
		h->heap[(i - 1) / 2] = x;
		i = (i - 1) / 2;
	}
}

static struct rc_flight
heap_pop(struct rc_harness *h)
{
	struct rc_flight top = h->heap[0];
	uint32_t i = 0;

	h->heap[0] = h->heap[--h->n];
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && earlier(&h->heap[l], &h->heap[m]))
			m = l;
		if (r < h->n && earlier(&h->heap[r], &h->heap[m]))
			m = r;
		if (m == i)
			break;
		struct rc_flight x = h->heap[i];

		h->heap[i] = h->heap[m];
		h->heap[m] = x;
		i = m;
	}
	return top;
}

static enum rc_kind
kind_of(const struct rte_mbuf *m)
{
	uint8_t b[14 + 40 + 8 + 16];
	const uint8_t *p = rte_pktmbuf_read(m, 0, sizeof(b), b);
	uint32_t bth;
	uint8_t op;

	if (p == NULL)
		return K_REQUEST;
	bth = 14 + (p[12] == 0x86 ? 40 : 20) + 8;
	op = p[bth];
	if (op == DPR_OP_RC_ACK)
		return (p[bth + 12] & DPR_AETH_TYPE_MASK) == DPR_AETH_ACK ?
			K_ACK : K_NAK;
	if (op == DPR_OP_RC_ATOMIC_ACK)
		return K_ATOMIC_ACK;
	if (op == DPR_OP_DPR_SACK)
		return K_SACK;
	if (op >= DPR_OP_RC_READ_RESPONSE_FIRST && op <= DPR_OP_RC_READ_RESPONSE_ONLY)
		return K_READ_RESP;
	return K_REQUEST;
}

void
rc_peer_mode(struct rc_harness *h, int side, enum rc_peer mode)
{
	h->mode[side] = mode;
	h->dup_ack_next = h->now + h->dup_ack_period_ns;
}

int
rc_inject(struct rc_harness *h, int from, const struct dpr_wire_hdrs *hd,
	  const void *payload, uint32_t len)
{
	struct rc_side *me = &h->side[from], *peer = &h->side[!from];
	struct dpr_wire_encap e;
	struct dpr_wire_seg seg = {
		.addr = (void *)(uintptr_t)payload,
		.iova = (rte_iova_t)(uintptr_t)payload,
		.len = len,
	};
	struct rte_mbuf *m;

	memset(&e, 0, sizeof(e));
	e.dst_mac = peer->mac;
	e.src_mac = me->mac;
	e.sgid = me->gid;
	e.dgid = peer->gid;
	e.ipv6 = !dpr_gid_is_ipv4(&peer->gid);
	e.ttl = 64;
	e.sport = 0xc000;
	m = dpr_wire_build(h->pool, &e, hd, &seg, len != 0);
	if (m == NULL)
		return -1;
	h->frames[from][kind_of(m)]++;
	heap_push(h, m, !from, h->now + h->f.delay_ns);
	return 0;
}

void
rc_repeat(struct rc_harness *h, int from, const struct dpr_wire_hdrs *hd,
	  const void *payload, uint32_t len, uint64_t period_ns)
{
	h->repeat.period_ns = period_ns;
	if (period_ns == 0)
		return;
	h->repeat.from = from;
	h->repeat.hd = *hd;
	h->repeat.len = RTE_MIN(len, (uint32_t)sizeof(h->repeat.payload));
	memcpy(h->repeat.payload, payload, h->repeat.len);
	h->repeat.next = h->now;
}

struct rte_mbuf *
rc_take(struct rc_harness *h, int side)
{
	if (h->kept_tail[side] == h->kept_head[side])
		return NULL;
	return h->kept[side][h->kept_tail[side]++ % RTE_DIM(h->kept[0])];
}

/* An ACK of the stale PSN of entry @p i, from DUP_ACK side @p from. */
static void
stale_ack(struct rc_harness *h, int from, uint32_t i)
{
	struct dpr_wire_hdrs ack;

	memset(&ack, 0, sizeof(ack));
	ack.opcode = DPR_OP_RC_ACK;
	ack.pkey = DPR_DEFAULT_PKEY;
	ack.dqpn = h->stale[i].qpn;
	ack.psn = h->stale[i].psn;
	ack.aeth.syndrome = DPR_AETH_ACK | DPR_AETH_CREDIT_INVALID;
	if (rc_inject(h, from, &ack, NULL, 0) == 0)
		h->dup_acks[from]++;
}

/* Side @p to is a DUP_ACK peer: answer request @p m with an ACK of the
 * last PSN its QP had taken when the first request came in this mode
 * (what it truly had: a requester believes an ACK, so one of a PSN never
 * received would complete work that never arrived -- a lie, not a stale
 * answer). */
static void
dup_ack(struct rc_harness *h, int to, const struct rte_mbuf *m)
{
	struct dpr_wire_hdrs req;
	struct dpr_pkt_info pi;
	struct dpr_qp_info qi;
	struct dpr_tqp *qp;
	uint32_t i;

	if (dpr_wire_parse(m, &pi, 0) != DPR_WIRE_OK || !(pi.mask & DPR_REQ_MASK))
		return;
	dpr_wire_decode(m, &pi, &req);
	qp = dpr_qpn_lookup(h->side[to].ctx, req.dqpn);
	if (qp == NULL)
		return;
	dpr_qp_info(qp, &qi);
	/* the table holds the requester's QPN (where the ACKs go) */
	for (i = 0; i < h->n_stale && h->stale[i].qpn != qi.dest_qpn; i++)
		;
	if (i == h->n_stale) {
		if (i == RTE_DIM(h->stale))
			return;
		h->stale[i].qpn = qi.dest_qpn;
		h->stale[i].psn = dpr_psn_add(qi.resp_psn, -1);
		h->n_stale++;
	}
	stale_ack(h, to, i);
}

static void
send_frame(struct rc_harness *h, int from, struct rte_mbuf *m)
{
	enum rc_kind k = kind_of(m);
	uint64_t t = h->now + h->f.delay_ns;
	struct rte_mbuf *c;

	if (rte_pktmbuf_mtod(m, const struct rte_ether_hdr *)->ether_type ==
	    RTE_BE16(RTE_ETHER_TYPE_IPV6))
		h->ipv6_frames++;
	if (h->mode[from] != RC_PEER_NORMAL) {
		/* a dead or broken box: its own transport's frames go nowhere */
		h->muted[from]++;
		rte_pktmbuf_free(m);
		return;
	}
	h->frames[from][k]++;
	if ((from == 0 && h->f.drop_a_to_b) ||
	    (h->f.loss > 0 && rc_uniform(&h->rng) < h->f.loss)) {
		h->faults[from][k][F_LOSS]++;
		rte_pktmbuf_free(m);
		return;
	}
	if (h->f.dup > 0 && rc_uniform(&h->rng) < h->f.dup) {
		c = rte_pktmbuf_copy(m, h->pool, 0, UINT32_MAX);
		if (c != NULL) {
			h->faults[from][k][F_DUP]++;
			heap_push(h, c, !from, t + rc_rand(&h->rng) % (4 * h->f.delay_ns));
		}
	}
	if (h->f.corrupt > 0 && rc_uniform(&h->rng) < h->f.corrupt) {
		/* a private copy: the original may point into the sender's MR */
		c = rte_pktmbuf_copy(m, h->pool, 0, UINT32_MAX);
		if (c != NULL) {
			uint32_t len = rte_pktmbuf_pkt_len(c) - 14;
			uint32_t off = 14 + (uint32_t)(rc_rand(&h->rng) % len);
			struct rte_mbuf *s = c;

			while (off >= s->data_len) {
				off -= s->data_len;
				s = s->next;
			}
			rte_pktmbuf_mtod(s, uint8_t *)[off] ^=
				(uint8_t)(1u << (rc_rand(&h->rng) % 8));
			rte_pktmbuf_free(m);
			m = c;
			h->faults[from][k][F_CORRUPT]++;
		}
	}
	if (h->f.ce > 0 && rc_uniform(&h->rng) < h->f.ce) {
		/* CE in the IP header, as a switch marks it (the ICRC masks
		 * the ECN bits; IPv4's checksum made again); the headers are
		 * in the transport's own first segment */
		uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);

		if (!h->f.ipv6) {
			struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(p + 14);

			ip->type_of_service |= 0x03;
			ip->hdr_checksum = 0;
			ip->hdr_checksum = rte_ipv4_cksum(ip);
		} else {
			p[15] |= 0x30;  /* (traffic class bits 0-1) */
		}
		h->ce_marked[from]++;
	}
	if (h->f.reorder > 0 && rc_uniform(&h->rng) < h->f.reorder) {
		t += h->f.delay_ns + rc_rand(&h->rng) % (8 * h->f.delay_ns);
		h->faults[from][k][F_REORDER]++;
	}
	heap_push(h, m, !from, t);
}

void
rc_step(struct rc_harness *h)
{
	struct rte_mbuf *pkts[64];
	uint64_t next = UINT64_MAX, t;
	bool busy = false;
	int i;
	uint16_t n, j;

	for (i = 0; i < 2; i++) {
		dpr_transport_poll(h->side[i].tp, h->now);
		while ((n = dpr_transport_tx(h->side[i].tp, pkts, RTE_DIM(pkts))) > 0)
			for (j = 0; j < n; j++) {
				if (h->trace_tx != NULL)
					h->trace_tx(h->trace_arg, i, pkts[j]);
				send_frame(h, i, pkts[j]);
			}
		busy |= dpr_transport_busy(h->side[i].tp);
	}
	/* a DUP_ACK side repeats its stale ACKs unasked */
	for (i = 0; i < 2; i++)
		if (h->mode[i] == RC_PEER_DUP_ACK && h->dup_ack_period_ns != 0 &&
		    h->now >= h->dup_ack_next) {
			uint32_t k;

			for (k = 0; k < h->n_stale; k++)
				stale_ack(h, i, k);
			h->dup_ack_next = h->now + h->dup_ack_period_ns;
		}
	if (h->repeat.period_ns != 0 && h->now >= h->repeat.next) {
		rc_inject(h, h->repeat.from, &h->repeat.hd, h->repeat.payload,
			  h->repeat.len);
		h->repeat.next = h->now + h->repeat.period_ns;
	}
	/* the clock moves to the next event: a delivery, a timer, a frame
	 * sent on a schedule */
	if (h->n > 0)
		next = h->heap[0].t;
	if (h->repeat.period_ns != 0 && h->repeat.next < next)
		next = h->repeat.next;
	for (i = 0; i < 2; i++) {
		t = dpr_transport_next_timer(h->side[i].tp);
		if (t < next)
			next = t;
		if (h->mode[i] == RC_PEER_DUP_ACK && h->dup_ack_period_ns != 0 &&
		    h->n_stale != 0 && h->dup_ack_next < next)
			next = h->dup_ack_next;
	}
	if (busy)
		next = h->now + 100;   /* work to do: time still moves */
	if (h->until != 0 && next > h->until)
		next = h->until;
	if (next != UINT64_MAX && next > h->now)
		h->now = next;
	/* deliver everything due, in bursts per destination */
	while (h->n > 0 && h->heap[0].t <= h->now) {
		struct rc_flight fl = heap_pop(h);

		if (h->mode[fl.to] == RC_PEER_SCRIPT &&
		    h->kept_head[fl.to] - h->kept_tail[fl.to] < RTE_DIM(h->kept[0])) {
			h->kept[fl.to][h->kept_head[fl.to]++ % RTE_DIM(h->kept[0])] = fl.m;
			continue;
		}
		if (h->mode[fl.to] != RC_PEER_NORMAL) {
			if (h->mode[fl.to] == RC_PEER_DUP_ACK)
				dup_ack(h, fl.to, fl.m);
			h->muted[fl.to]++;
			rte_pktmbuf_free(fl.m);
			continue;
		}
		dpr_transport_rx(h->side[fl.to].tp, &fl.m, 1, h->now);
	}
}

bool
rc_run(struct rc_harness *h, bool (*done)(struct rc_harness *, void *),
       void *arg, uint64_t max_ns)
{
	uint64_t end = h->now + max_ns;

	while (h->now <= end) {
		if (done(h, arg))
			return true;
		rc_step(h);
	}
	return done(h, arg);
}

static bool
idle(struct rc_harness *h, void *arg)
{
	(void)arg;
	return h->n == 0 && !dpr_transport_busy(h->side[0].tp) &&
		!dpr_transport_busy(h->side[1].tp);
}

void
rc_settle(struct rc_harness *h, uint64_t max_ns)
{
	rc_step(h);
	rc_run(h, idle, NULL, max_ns);
}
