/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * The sample encapsulation the wire and sec suites build their frames
 * with: one RC QP's addresses over IPv4 or IPv6, with a VLAN tag or not.
 */

#ifndef DPR_TEST_WIRE_H
#define DPR_TEST_WIRE_H

#include <string.h>
#include <arpa/inet.h>

#include "dpr_wire.h"

static inline void
sample_encap(struct dpr_wire_encap *e, bool ipv6, bool vlan)
{
	memset(e, 0, sizeof(*e));
	e->dst_mac = (struct rte_ether_addr){{ 0x52, 0x54, 0, 0x99, 0, 2 }};
	e->src_mac = (struct rte_ether_addr){{ 0x02, 0x64, 0x74, 0x61, 0x70, 0 }};
	e->ipv6 = ipv6;
	e->vlan = vlan;
	e->vlan_tci = vlan ? 0x2064 : 0;
	e->ttl = 64;
	e->sport = dpr_udp_sport_rc(0x11, 0x123, 0);
	if (ipv6) {
		inet_pton(AF_INET6, "fd00:99::a", e->sgid.raw);
		inet_pton(AF_INET6, "fd00:99::2", e->dgid.raw);
		e->flow_label = 0xabcde;
		e->tos = 0x28;
	} else {
		e->df = true;
		e->ip_id = 0x4242;
		dpr_gid_from_ipv4(&e->sgid, htonl(0x0a63000a));
		dpr_gid_from_ipv4(&e->dgid, htonl(0x0a630002));
	}
}

#endif /* DPR_TEST_WIRE_H */
