/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Who sends what the transport drops: per source address, the frames
 * refused and why, for an operator looking for a scanner or a broken peer
 * (issue 46: per-source drop counters). A table of DPR_SRC_SLOTS entries,
 * direct-mapped by a hash of the source: a source that finds its slot
 * taken by another evicts it (counted), so a flood from many spoofed
 * sources costs one slot's update per frame, never a search. Only
 * dropped frames come here, from the slow path: nothing on the data path.
 *
 * The optional quarantine ([security] quarantine_drops): a source with
 * that many frames dropped within a second has every frame that reaches
 * the slow path dropped unlooked-at for quarantine_s (a scanner, a broken
 * peer that floods: it costs a hash then, not a parse and an ICRC). Its
 * frames that match a QP's template in the fast path still pass: the
 * quarantine is for what the transport refuses, and a QP's peer that
 * sends garbage beside its traffic loses its ACKs and READ responses.
 */

#include <string.h>

#include <rte_ether.h>

#include "transport_private.h"

/* The frame's IP source as a GID (IPv4-mapped, or IPv6), from its raw
 * headers: a frame refused before or after parsing alike. @return false
 * without one. */
static bool
frame_src(const struct rte_mbuf *m, union dpr_gid *g)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint16_t type;
	const uint32_t l3 = dpr_frame_l3(p, m->data_len, &type);

	if (l3 == 0)
		return false;
	if (type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) && m->data_len >= l3 + 20) {
		uint32_t ip;

		memcpy(&ip, p + l3 + 12, 4);
		dpr_gid_from_ipv4(g, ip);
		return true;
	}
	if (type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6) && m->data_len >= l3 + 40) {
		memcpy(g->raw, p + l3 + 8, 16);
		return true;
	}
	return false;
}

static struct dpr_src_entry *
slot_of(struct dpr_transport *tp, const union dpr_gid *g)
{
	uint64_t w[2];

	memcpy(w, g->raw, sizeof(w));
	return &tp->src[((w[0] ^ (w[1] * 0x9E3779B97F4A7C15ULL)) *
			 0xBF58476D1CE4E5B9ULL) >> (64 - DPR_SRC_BITS)];
}

bool
dpr_src_quarantined(struct dpr_transport *tp, const struct rte_mbuf *m)
{
	struct dpr_src_entry *e;
	union dpr_gid g;

	if (!frame_src(m, &g))
		return false;
	e = slot_of(tp, &g);
	if (e->quarantine_until_ns <= tp->now || memcmp(&e->src, &g, sizeof(g)) != 0)
		return false;
	e->n[DPR_SRC_quarantined]++;
	e->last_ns = tp->now;
	tp->stats.rx_quarantined++;
	return true;
}

void
dpr_src_drop(struct dpr_transport *tp, const struct rte_mbuf *m, unsigned int why)
{
	struct dpr_src_entry *e;
	union dpr_gid g;
	unsigned int k;

	if (!frame_src(m, &g) || why >= DPR_SRC_N)
		return;
	e = slot_of(tp, &g);
	if (memcmp(&e->src, &g, sizeof(g)) != 0) {
		for (k = 0; k < DPR_SRC_N && e->n[k] == 0; k++)
			;
		if (k != DPR_SRC_N)
			tp->src_evicted++;
		memset(e, 0, sizeof(*e));
		e->src = g;
	}
	e->n[why]++;
	e->last_ns = tp->now;
	if (tp->conf.quarantine_drops == 0)
		return;
	if (tp->now - e->window_ns >= 1000000000ull) {
		e->window_ns = tp->now;
		e->window_drops = 0;
	}
	if (++e->window_drops >= tp->conf.quarantine_drops &&
	    e->quarantine_until_ns <= tp->now) {
		e->quarantine_until_ns = tp->now + tp->conf.quarantine_ns;
		tp->stats.quarantines++;
	}
}

unsigned int
dpr_transport_sources(const struct dpr_transport *tp, struct dpr_src_entry *out,
		      unsigned int max, uint64_t *evicted)
{
	unsigned int i, k, n = 0;

	for (i = 0; i < DPR_SRC_SLOTS && n < max; i++) {
		for (k = 0; k < DPR_SRC_N && tp->src[i].n[k] == 0; k++)
			;
		if (k != DPR_SRC_N)
			out[n++] = tp->src[i];
	}
	if (evicted != NULL)
		*evicted = tp->src_evicted;
	return n;
}
