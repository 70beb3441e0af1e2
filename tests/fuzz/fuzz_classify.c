/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * libFuzzer target: the engine's RX classification (lib/engine/
 * dpr_classify.c): Ethernet, ARP, IPv4 and ICMP, IPv6, ICMPv6 and
 * neighbour discovery with its options, UDP to 4791. Any byte string in;
 * no crash, no read out of bounds, no undefined behaviour; a frame it
 * rewrites into a reply stays within its buffer and is well formed
 * enough to be classified again (a reply to ourselves is not for us).
 *
 * The frame lies in an exact-size malloc'd buffer with 128 bytes of
 * tailroom (an advertisement may be longer than the solicitation it
 * answers), so ASan sees any access past it. The first input byte picks
 * the port: bit 0 an IPv4 address, bit 1 a configured IPv6 address, bit
 * 2 a neighbour table.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpr_wire.h"
#include "engine_private.h"

#define TAIL 128

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* one table across inputs (entries accumulate, and are evicted when it
 * is full), counting into its own counters, on a clock that moves */
static struct dpr_neigh_table nt;
static struct dpr_port_counters nt_ctr;
static struct dpr_port nt_port;
static uint64_t nt_clock;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t ip6[16] = { 0xfd, 0x77, [15] = 1 };
	struct dpr_port_counters c;
	struct dpr_port port;
	struct rte_mbuf m;
	enum dpr_rx_action a;
	uint8_t *buf;
	size_t len;

	if (size < 1 || size > 9000)
		return 0;
	len = size - 1;
	memset(&port, 0, sizeof(port));
	memset(&c, 0, sizeof(c));
	/* the MAC of the seeds' destination (tools/fuzz-seeds-classify.py) */
	port.mac = (struct rte_ether_addr){{ 0x02, 0, 0, 0, 0, 0x01 }};
	if (data[0] & 1) {
		port.ip = RTE_BE32(0x0a4d0001);       /* 10.77.0.1 */
		port.prefix_len = 24;
	}
	dpr_ipv6_link_local(&port.mac, &port.ip6_ll);
	if (data[0] & 2) {
		memcpy(port.ip6.raw, ip6, 16);
		port.has_ip6 = true;
		port.ip6_prefix_len = 64;
	}
	port.mtu = 1500;

	buf = malloc(len + TAIL);
	memcpy(buf, data + 1, len);
	dpr_wire_mbuf_wrap(&m, buf, (uint16_t)len);
	m.buf_len = (uint16_t)(len + TAIL);
	if (nt.e == NULL && dpr_neigh_init(&nt, &nt_port, NULL, &nt_ctr, &nt_clock,
					   NULL, NULL) != 0)
		abort();
	nt_clock += 100000000;     /* 100 ms an input: past locktimes too */
	a = dpr_rx_classify(&port, &m, &c, (data[0] & 4) ? &nt : NULL);
	if (m.data_len > m.buf_len || m.pkt_len != m.data_len)
		abort();
	if (a == DPR_RX_REPLY) {
		struct dpr_port_counters c2;

		/* our own reply, back to us: never answered again */
		memset(&c2, 0, sizeof(c2));
		if (dpr_rx_classify(&port, &m, &c2, NULL) == DPR_RX_REPLY &&
		    c2.nd_advert_tx + c2.arp_reply_tx + c2.icmp_echo_reply_tx +
		    c2.icmp6_echo_reply_tx != 0)
			abort();
	}
	free(buf);
	return 0;
}
