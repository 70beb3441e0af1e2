/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * IPv4 neighbours (RFC 826): the MACs of RoCE peers, learnt from ARP and
 * asked for when a QP needs one. Each worker keeps its own table per port,
 * so the data path shares nothing.
 */

#include <string.h>

#include <rte_arp.h>

#include "engine_private.h"

struct dpr_neigh *
dpr_neigh_get(struct dpr_neigh_table *nt, uint32_t ip, bool create)
{
	struct dpr_neigh *free_e = NULL;
	unsigned int i;

	for (i = 0; i < DPR_NEIGH_MAX; i++) {
		if (nt->e[i].ip == ip)
			return &nt->e[i];
		if (nt->e[i].ip == 0 && free_e == NULL)
			free_e = &nt->e[i];
	}
	if (!create)
		return NULL;
	if (free_e == NULL) {
		/* full: the next one round the table makes room */
		free_e = &nt->e[nt->next++ % DPR_NEIGH_MAX];
	}
	memset(free_e, 0, sizeof(*free_e));
	free_e->ip = ip;
	return free_e;
}

void
dpr_neigh_learn(struct dpr_neigh_table *nt, uint32_t ip,
		const struct rte_ether_addr *mac)
{
	struct dpr_neigh *n = dpr_neigh_get(nt, ip, true);

	n->mac = *mac;
	n->valid = true;
}

struct rte_mbuf *
dpr_arp_request(struct rte_mempool *pool, const struct dpr_port *port,
		uint32_t ip)
{
	return dpr_wire_build_arp(pool, &port->mac, port->ip, NULL, ip);
}
