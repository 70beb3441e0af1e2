/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Neighbours: the MACs of RoCE peers, learnt from ARP (RFC 826) and
 * neighbour discovery (RFC 4861) and asked for when a QP needs one. Each
 * worker keeps its own table per port, so the data path shares nothing.
 */

#include <string.h>

#include <rte_arp.h>

#include "engine_private.h"

struct dpr_neigh *
dpr_neigh_get(struct dpr_neigh_table *nt, const union dpr_gid *ip, bool create)
{
	static const union dpr_gid zero;
	struct dpr_neigh *free_e = NULL;
	unsigned int i;

	for (i = 0; i < DPR_NEIGH_MAX; i++) {
		if (dpr_gid_eq(&nt->e[i].ip, ip))
			return &nt->e[i];
		if (free_e == NULL && dpr_gid_eq(&nt->e[i].ip, &zero))
			free_e = &nt->e[i];
	}
	if (!create)
		return NULL;
	if (free_e == NULL) {
		/* full: the next one round the table makes room */
		free_e = &nt->e[nt->next++ % DPR_NEIGH_MAX];
	}
	memset(free_e, 0, sizeof(*free_e));
	free_e->ip = *ip;
	return free_e;
}

void
dpr_neigh_learn(struct dpr_neigh_table *nt, const union dpr_gid *ip,
		const struct rte_ether_addr *mac)
{
	struct dpr_neigh *n = dpr_neigh_get(nt, ip, true);

	n->mac = *mac;
	n->valid = true;
}

bool
dpr_port_owns(const struct dpr_port *port, const union dpr_gid *ip)
{
	if (dpr_gid_is_ipv4(ip))
		return port->ip != 0 && dpr_gid_to_ipv4(ip) == port->ip;
	return dpr_gid_eq(ip, &port->ip6_ll) ||
		(port->has_ip6 && dpr_gid_eq(ip, &port->ip6));
}

struct rte_mbuf *
dpr_neigh_request(struct rte_mempool *pool, const struct dpr_port *port,
		  const union dpr_gid *ip)
{
	if (dpr_gid_is_ipv4(ip))
		return port->ip == 0 ? NULL :
			dpr_wire_build_arp(pool, &port->mac, port->ip, NULL,
					   dpr_gid_to_ipv4(ip));
	/* RFC 4861 7.2.2: from an address of ours, the one of the target's
	 * scope where we have it */
	return dpr_wire_build_ns(pool, &port->mac,
				 port->has_ip6 && !dpr_gid_is_link_local(ip) ?
				 &port->ip6 : &port->ip6_ll, ip);
}
