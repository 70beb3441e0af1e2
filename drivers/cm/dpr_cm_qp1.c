/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * QP1 of every port, the GSI QP the CM's MADs travel on: made and polled
 * on worker 0 (whose poller copies MADs into the main lcore's ring and
 * sends what the main lcore queued), and the addresses of the RDMA CM: an
 * IP address names a port (its IPv4 address or subnet, its IPv6
 * addresses), no routing; the GID to send from is the port's (the
 * engine's table, rxe's).
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

/* ------------------------------------------------------------ QP1 */

static void
gsi_post_recv(struct gsi *g, uint32_t slot)
{
	struct dpr_recv_wr wr = {
		.wr_id = slot,
		.num_sge = 1,
		.sge[0] = {
			.addr = (uint64_t)(uintptr_t)(g->buf + (size_t)slot * GSI_RX_SLOT),
			.length = GSI_RX_SLOT,
			.lkey = g->mr->lkey,
		},
	};

	dpr_post_recv(g->qp, &wr, 1, NULL);
}

static void
gsi_free(struct gsi *g)
{
	if (g->qp != NULL)
		dpr_qp_destroy(g->qp);
	if (g->mr != NULL)
		dpr_mr_dereg(g->mr);
	if (g->scq != NULL)
		dpr_cq_destroy(g->scq);
	if (g->rcq != NULL)
		dpr_cq_destroy(g->rcq);
	if (g->pd != NULL)
		dpr_pd_dealloc(g->pd);
	rte_free(g->buf);
	memset(g, 0, sizeof(*g));
}

/* On worker 0: QP1 of port @p arg, in RTS, its receives posted. */
int
cm_gsi_create(void *arg)
{
	uint16_t pi = (uint16_t)(uintptr_t)arg;
	struct dpr_verbs_ctx *ctx = dpr_engine_verbs(pi);
	struct gsi *g = &cm.gsi[pi];
	struct dpr_qp_attr a = {
		.qp_state = DPR_QPS_INIT, .port_num = 1, .qkey = DPR_GSI_QKEY,
	};
	int rc = 0;

	dpr_engine_verbs_lock();
	g->buf = rte_zmalloc("dpr_cm_gsi", GSI_BUF_LEN, 64);
	g->pd = dpr_pd_alloc(ctx, 0);
	g->scq = dpr_cq_create(ctx, GSI_RING, 0);
	g->rcq = dpr_cq_create(ctx, GSI_RECVS, 0);
	if (g->buf != NULL && g->pd != NULL)
		g->mr = dpr_mr_reg(g->pd, g->buf, (uint64_t)(uintptr_t)g->buf,
				   GSI_BUF_LEN, DPR_ACCESS_LOCAL_WRITE);
	if (g->mr != NULL && g->scq != NULL && g->rcq != NULL) {
		struct dpr_qp_init_attr ia = {
			.qp_type = DPR_QPT_UD, .gsi = true,
			.pd = g->pd, .send_cq = g->scq, .recv_cq = g->rcq,
			.max_send_wr = GSI_RING, .max_recv_wr = GSI_RECVS,
			.max_send_sge = 1, .max_recv_sge = 1,
		};

		g->qp = dpr_qp_create(dpr_engine_transport(0, pi), &ia);
		if (g->qp == NULL)
			rc = errno == ENOMEM ? -EBUSY : -errno;
	} else {
		rc = -ENOMEM;
	}
	dpr_engine_verbs_unlock();
	if (rc == 0 && g->qp == NULL)
		rc = -ENOMEM;
	if (rc == 0)
		rc = dpr_qp_modify(g->qp, &a, DPR_QP_STATE | DPR_QP_PKEY_INDEX |
				   DPR_QP_PORT | DPR_QP_QKEY);
	if (rc == 0) {
		a.qp_state = DPR_QPS_RTR;
		rc = dpr_qp_modify(g->qp, &a, DPR_QP_STATE);
	}
	if (rc == 0) {
		a.qp_state = DPR_QPS_RTS;
		a.sq_psn = 0;
		rc = dpr_qp_modify(g->qp, &a, DPR_QP_STATE | DPR_QP_SQ_PSN);
	}
	if (rc != 0) {
		dpr_engine_verbs_lock();
		gsi_free(g);
		dpr_engine_verbs_unlock();
		return rc;
	}
	for (uint32_t i = 0; i < GSI_RECVS; i++)
		gsi_post_recv(g, i);
	__atomic_store_n(&g->ready, true, __ATOMIC_RELEASE);
	return 0;
}

int
cm_gsi_destroy(void *arg)
{
	struct gsi *g = &cm.gsi[(uintptr_t)arg];

	__atomic_store_n(&g->ready, false, __ATOMIC_RELEASE);
	dpr_engine_verbs_lock();
	gsi_free(g);
	dpr_engine_verbs_unlock();
	return 0;
}

/* The source (@p dst false) or destination GID of a datagram, from the
 * GRH rxe's way fills in (IPv4: the IP header in its last 20 bytes). */
static void
grh_gid(const uint8_t *grh, bool ipv6, bool dst, uint8_t gid[16])
{
	if (ipv6) {
		memcpy(gid, grh + (dst ? 24 : 8), 16);
		return;
	}
	memset(gid, 0, 10);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, grh + 20 + (dst ? 16 : 12), 4);
}

/* (worker 0) a MAD dequeued that QP1 did not take yet */
static struct cm_mad tx_hold;
static bool tx_held;

bool
dpr_cm_worker_poll(void *arg __rte_unused, unsigned int worker,
		   uint64_t now_ns __rte_unused)
{
	bool woke = false, more = false;
	struct cm_mad t;
	int k;

	if (worker != 0 || !__atomic_load_n(&cm.started, __ATOMIC_ACQUIRE))
		return false;
	for (uint16_t pi = 0; pi < cm.n_ports; pi++) {
		struct gsi *g = &cm.gsi[pi];
		struct dpr_cqe e[16];
		int n, i;

		if (!__atomic_load_n(&g->ready, __ATOMIC_ACQUIRE))
			continue;
		/* no more than the ring to the main lcore takes: the rest
		 * waits in the CQ (a burst of REQs outruns the main lcore) */
		n = dpr_cq_poll(g->rcq, e, RTE_MIN((unsigned int)RTE_DIM(e),
						   rte_ring_free_count(cm.rx)));
		for (i = 0; i < n; i++) {
			uint32_t slot = (uint32_t)e[i].wr_id;
			const uint8_t *p = g->buf + (size_t)slot * GSI_RX_SLOT;
			const bool v6 = (e[i].wc_flags & DPR_WC_NET_IPV6) != 0;
			struct cm_mad r;

			if (e[i].status == DPR_WC_SUCCESS &&
			    e[i].byte_len >= GRH_LEN + DPR_MAD_LEN) {
				memset(&r, 0, sizeof(r));
				r.port = pi;
				r.qpn = e[i].src_qp;
				grh_gid(p, v6, false, r.gid);
				grh_gid(p, v6, true, r.dgid);
				memcpy(r.mad, p + GRH_LEN, DPR_MAD_LEN);
				/* a trailer (dpr_cm_auth.c reads it); other
				 * bytes past the MAD are nobody's */
				r.has_auth = e[i].byte_len == GSI_RX_SLOT;
				if (r.has_auth)
					memcpy(r.auth, p + GRH_LEN + DPR_MAD_LEN,
					       DPR_MAD_AUTH_LEN);
				if (rte_ring_sp_enqueue_elem(cm.rx, &r, sizeof(r)) == 0)
					woke = true;
				else
					__atomic_fetch_add(&cm.st.mads_rx_dropped, 1,
							   __ATOMIC_RELAXED);
			} else if (e[i].status == DPR_WC_SUCCESS) {
				/* shorter than a MAD: counted where MADs are read */
				__atomic_fetch_add(&cm.st.mad_short, 1, __ATOMIC_RELAXED);
			}
			gsi_post_recv(g, slot);
		}
		more |= n == (int)RTE_DIM(e);
		/* sends complete as they are queued: only their count matters */
		while (dpr_cq_poll(g->scq, e, RTE_DIM(e)) > 0)
			;
	}
	/* a MAD QP1 could not take last time (its send queue full behind a
	 * busy link) goes first: never dropped for that */
	for (k = 0; k < 32; k++) {
		struct gsi *g;

		if (tx_held) {
			t = tx_hold;
		} else if (rte_ring_sc_dequeue_elem(cm.tx, &t, sizeof(t)) != 0) {
			break;
		}
		tx_held = false;
		g = &cm.gsi[t.port < cm.n_ports ? t.port : 0];
		/* from a slot of its own: the send queue holds GSI_RING
		 * sends, so the slot of the GSI_RING-th before is free */
		uint8_t *slot = g->buf + (size_t)GSI_RECVS * GSI_RX_SLOT +
			(size_t)(g->tx_next % GSI_RING) * GSI_TX_SLOT;
		struct dpr_send_wr wr = {
			.opcode = DPR_WR_SEND,
			.send_flags = DPR_SEND_SIGNALED,
			.num_sge = 1,
			.sge[0] = {
				.addr = (uint64_t)(uintptr_t)slot,
				.length = DPR_MAD_LEN + (t.has_auth ? DPR_MAD_AUTH_LEN : 0),
			},
			.ud = {
				.hop_limit = 64,
				.sgid_index = t.sgid_index,
				.remote_qpn = t.qpn,
				.remote_qkey = t.qkey,
			},
		};

		memcpy(wr.ud.dgid, t.gid, 16);
		if (t.port >= cm.n_ports ||
		    !__atomic_load_n(&g->ready, __ATOMIC_ACQUIRE)) {
			__atomic_fetch_add(&cm.st.mads_tx_dropped, 1, __ATOMIC_RELAXED);
			continue;
		}
		wr.sge[0].lkey = g->mr->lkey;
		memcpy(slot, t.mad, DPR_MAD_LEN);
		if (t.has_auth)
			memcpy(slot + DPR_MAD_LEN, t.auth, DPR_MAD_AUTH_LEN);
		if (dpr_post_send(g->qp, &wr, 1, NULL) != 0) {
			tx_hold = t;
			tx_held = true;
			more = true;
			break;
		}
		g->tx_next++;
	}
	more |= k == 32;
	if (woke) {
		uint64_t one = 1;

		if (write(cm.wake_fd, &one, sizeof(one)) < 0) {
			/* the counter is saturated: the main lcore is woken anyway */
		}
	}
	return more;
}

static void txq_put(const struct cm_mad *m);

/* Queue @p mad to QP1 of @p gid on port @p pi. */
void
dpr_cm_mad_send(int pi, uint8_t sgid_index, const uint8_t gid[16],
		const uint8_t *mad)
{
	struct cm_mad out = {
		.port = (uint16_t)pi,
		.sgid_index = sgid_index,
		.qpn = DPR_QPN_GSI,
		.qkey = DPR_GSI_QKEY,
	};

	memcpy(out.gid, gid, 16);
	memcpy(out.mad, mad, DPR_MAD_LEN);
	cm_auth_seal(&out);
	cm.st.mads_tx++;
	/* in order: behind what waits already, or straight to worker 0 */
	if (cm.txq_n != 0 || rte_ring_mp_enqueue_elem(cm.tx, &out, sizeof(out)) != 0)
		txq_put(&out);
}

/* A burst of MADs (1,000 REQs from one program, their retries at one
 * deadline) can outrun the ring to worker 0: the rest waits here, on the
 * main lcore, and goes as worker 0 takes what is in the ring
 * (cm_mad_flush() each poll) -- never dropped. */
static void
txq_put(const struct cm_mad *m)
{
	if (cm.txq_n == cm.txq_cap) {
		uint32_t cap = cm.txq_cap ? 2 * cm.txq_cap : 256;
		struct cm_mad *q = malloc(cap * sizeof(*q));

		if (q == NULL) {
			cm.st.mads_tx_dropped++;
			return;
		}
		for (uint32_t i = 0; i < cm.txq_n; i++)
			q[i] = cm.txq[(cm.txq_head + i) % cm.txq_cap];
		free(cm.txq);
		cm.txq = q;
		cm.txq_cap = cap;
		cm.txq_head = 0;
	}
	cm.txq[(cm.txq_head + cm.txq_n) % cm.txq_cap] = *m;
	cm.txq_n++;
	cm.st.mads_tx_held++;
}

bool
cm_mad_flush(void)
{
	while (cm.txq_n != 0 &&
	       rte_ring_mp_enqueue_elem(cm.tx, &cm.txq[cm.txq_head],
					sizeof(cm.txq[0])) == 0) {
		cm.txq_head = (cm.txq_head + 1) % cm.txq_cap;
		cm.txq_n--;
	}
	return cm.txq_n != 0;
}

/* The path MTU (ibv_mtu: 1 = 256 .. 5 = 4096) of port @p pi. */
uint8_t
cm_port_mtu(int pi)
{
	struct dpr_port_info p;
	unsigned int b, e = 1;

	if (pi < 0 || dpr_engine_port_info((uint16_t)pi, &p) != 0)
		return 3;
	b = dpr_active_mtu(p.mtu);
	while (e < 5 && (256u << e) <= b)
		e++;
	return b == 0 ? 1 : (uint8_t)e;
}

/* ------------------------------------------------------ addresses */

bool
cm_is_v4mapped(const uint8_t *a)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(a, pfx, 12) == 0;
}

bool
cm_addr_any(const struct dpr_shm_cm_addr *a)
{
	static const uint8_t zero[16];

	return memcmp(a->addr, zero, 16) == 0 ||
	       (cm_is_v4mapped(a->addr) && memcmp(a->addr + 12, zero, 4) == 0);
}

/* GID @p gi of port @p pi (the engine's table, rxe's) into @p gid. */
void
cm_port_gid(uint16_t pi, uint8_t gi, uint8_t gid[16])
{
	struct dpr_port_info p;

	if (dpr_engine_port_info(pi, &p) != 0 || gi >= p.n_gids)
		memset(gid, 0, 16);
	else
		memcpy(gid, p.gid[gi], 16);
}

/* The GID index of port @p pi holding @p a, or -1. */
int
cm_own_gid_index(uint16_t pi, const uint8_t *a)
{
	struct dpr_port_info p;

	if (dpr_engine_port_info(pi, &p) != 0)
		return -1;
	for (int i = 0; i < p.n_gids; i++)
		if (memcmp(p.gid[i], a, 16) == 0 &&
		    !(i == 1 && memcmp(a + 12, "\0\0\0", 4) == 0))
			return i;
	return -1;
}

/* The port whose subnet holds @p a (its own address first), and the GID
 * index to send from; -1 when none does. */
int
dpr_cm_route(const uint8_t *a, uint8_t *sgid_index)
{
	const struct dpr_config *conf = cm.cfg;
	static const uint8_t ll[2] = { 0xfe, 0x80 };

	for (uint16_t pi = 0; pi < cm.n_ports; pi++) {
		int gi = cm_own_gid_index(pi, a);

		if (gi >= 0) {
			*sgid_index = (uint8_t)gi;
			return pi;
		}
	}
	for (uint16_t pi = 0; pi < cm.n_ports; pi++) {
		const struct dpr_port_conf *pc = dpr_port_conf(conf, pi);
		struct dpr_port_info p;

		if (dpr_engine_port_info(pi, &p) != 0)
			continue;
		if (cm_is_v4mapped(a)) {
			uint32_t mask = pc->prefix_len == 0 ? 0 :
				htonl(~0u << (32 - pc->prefix_len));
			uint32_t v;

			memcpy(&v, a + 12, 4);
			if (p.ip != 0 && ((v ^ p.ip) & mask) == 0) {
				*sgid_index = 1;
				return pi;
			}
			continue;
		}
		if (memcmp(a, ll, 2) == 0) {
			*sgid_index = 0;
			return pi;
		}
		if (pc->ip6_prefix_len != 0) {
			unsigned int bits = pc->ip6_prefix_len, k;
			bool same = true;

			for (k = 0; k < bits / 8; k++)
				same &= a[k] == p.ip6[k];
			if (bits % 8)
				same &= ((a[k] ^ p.ip6[k]) & (0xff << (8 - bits % 8))) == 0;
			if (same) {
				*sgid_index = 2;
				return pi;
			}
		}
	}
	return -1;
}

uint64_t
dpr_cm_node_guid(uint16_t pi)
{
	return pi < cm.n_ports ? cm.gsi[pi].node_guid : 0;
}
