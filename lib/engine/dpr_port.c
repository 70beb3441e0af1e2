/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Port set-up: one RX/TX queue pair per worker on any ethdev (PCI device
 * or vdev: net_af_packet, net_memif, net_tap), RSS over IP/UDP where the
 * device has it so that RoCEv2 flows spread by UDP source port.
 */

#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "engine_private.h"

#define MBUF_CACHE 256

unsigned int
dpr_port_pool_size(const struct dpr_config *conf, uint16_t n_ports,
		   unsigned int n_workers)
{
	const struct dpr_transport_knobs *tk = dpr_transport_knobs(conf);
	unsigned int n = 0, p;

	if (dpr_engine_conf(conf)->mbufs != 0)
		return dpr_engine_conf(conf)->mbufs;
	/* every ring full, every TX buffer full, every transport's TX queue
	 * full of two-segment frames, every worker's selective-repeat hold
	 * full, every worker's cache full */
	for (p = 0; p < n_ports && p < DPR_MAX_PORTS; p++)
		n += n_workers * (dpr_port_conf(conf, p)->rx_desc +
				  dpr_port_conf(conf, p)->tx_desc +
				  2 * DPR_MAX_BURST + 2 * DPR_TX_RING +
				  (tk->selective_repeat == DPR_SRK_OFF ? 0 :
				   tk->sr_hold));
	n += n_workers * MBUF_CACHE * 2 + 1024;
	/* rte_mempool is most memory-efficient at 2^k - 1 */
	return rte_align32pow2(n) - 1;
}

/*
 * Neighbour solicitations come to the solicited-node groups of our IPv6
 * addresses (RFC 4861 7.2.1): a NIC that filters multicast must let their
 * MACs through. The list where the driver has one, else all multicast;
 * virtual devices (memif, af_packet, tap) filter nothing and refuse both,
 * which is fine.
 */
static void
join_groups(const struct dpr_port *p)
{
	struct rte_ether_addr mc[3];
	union dpr_gid g;
	uint32_t n = 0;

	dpr_ipv6_solicited_node(&p->ip6_ll, &g);
	dpr_ipv6_mcast_mac(&g, &mc[n++]);
	if (p->has_ip6) {
		dpr_ipv6_solicited_node(&p->ip6, &g);
		dpr_ipv6_mcast_mac(&g, &mc[n]);
		if (!rte_is_same_ether_addr(&mc[n], &mc[0]))
			n++;
	}
	dpr_ipv6_all_nodes(&g);
	dpr_ipv6_mcast_mac(&g, &mc[n++]);
	if (rte_eth_dev_set_mc_addr_list(p->port_id, mc, n) != 0)
		rte_eth_allmulticast_enable(p->port_id);
}

int
dpr_port_setup(struct dpr_port *p, uint16_t port_id,
	       const struct dpr_port_conf *pc, uint16_t nb_queues,
	       struct rte_mempool *pool, char *err, size_t errlen)
{
	struct rte_eth_conf eth_conf;
	struct rte_eth_dev_info info;
	struct rte_eth_txconf txconf;
	uint16_t nb_rxd = pc->rx_desc, nb_txd = pc->tx_desc, q;
	unsigned int idx = p - dpr_engine.ports;
	uint32_t max_mtu;
	int ret, socket;

	memset(p, 0, sizeof(*p));
	p->port_id = port_id;
	p->ip = pc->ip;
	p->prefix_len = pc->prefix_len;
	memcpy(p->ip6.raw, pc->ip6, 16);
	p->ip6_prefix_len = pc->ip6_prefix_len;
	p->has_ip6 = pc->ip6_prefix_len != 0;
	p->mtu = pc->mtu;
	p->nb_queues = nb_queues;
	rte_eth_dev_get_name_by_port(port_id, p->name);

	ret = rte_eth_dev_info_get(port_id, &info);
	if (ret != 0) {
		snprintf(err, errlen, "port %u (%s): cannot read device info: %s",
			 port_id, p->name, rte_strerror(-ret));
		return ret;
	}
	{
		static const char *const copying[] = { "net_memif",
			"net_af_packet", "net_tap", "net_af_xdp", "net_pcap" };

		p->tx_copies = false;
		for (q = 0; q < RTE_DIM(copying); q++)
			if (info.driver_name != NULL &&
			    strcmp(info.driver_name, copying[q]) == 0)
				p->tx_copies = true;
	}
	if (info.max_rx_queues < nb_queues || info.max_tx_queues < nb_queues) {
		snprintf(err, errlen, "port %u (%s): the device has %u RX and %u "
			 "TX queues, and dprdmad runs %u workers that need one "
			 "each: give the device more queues (net_af_packet: "
			 "qpairs=%u, net_tap: queues=%u) or run fewer workers "
			 "([eal] lcores)", port_id, p->name, info.max_rx_queues,
			 info.max_tx_queues, nb_queues, nb_queues, nb_queues);
		return -EINVAL;
	}
	/* Some PMDs (af_packet) report a wide max_mtu but a small
	 * max_rx_pktlen; ethdev refuses a frame larger than the latter. */
	max_mtu = info.max_mtu;
	if (info.max_rx_pktlen > RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN &&
	    info.max_rx_pktlen - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN < max_mtu)
		max_mtu = info.max_rx_pktlen - RTE_ETHER_HDR_LEN -
			RTE_ETHER_CRC_LEN;
	if (pc->mtu < info.min_mtu || pc->mtu > max_mtu) {
		snprintf(err, errlen, "[port%u] mtu = %u: port %u (%s) takes an "
			 "MTU from %u to %u", idx, pc->mtu, port_id, p->name,
			 info.min_mtu, max_mtu);
		return -EINVAL;
	}
	if (dpr_frame_len(pc->mtu) > (uint32_t)rte_pktmbuf_data_room_size(pool) -
	    RTE_PKTMBUF_HEADROOM) {
		snprintf(err, errlen, "[port%u] mtu = %u: larger than the packet "
			 "buffers hold", idx, pc->mtu);
		return -EINVAL;
	}

	memset(&eth_conf, 0, sizeof(eth_conf));
	eth_conf.rxmode.mtu = pc->mtu;
	if (nb_queues > 1 && (info.flow_type_rss_offloads &
			      (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP)) != 0) {
		eth_conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		eth_conf.rx_adv_conf.rss_conf.rss_hf = info.flow_type_rss_offloads &
			(RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP);
	}
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE)
		eth_conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	/* a yielding worker sleeps on its receive queue's interrupt where
	 * it has one (dpr_rxwake.c): net_tap's is the queue's own fd, ready
	 * while a frame waits (the default port; other drivers' are not
	 * tried: a PMD may refuse to start with them) */
	if (dpr_engine_conf(&dpr_engine.conf)->idle == DPR_IDLE_YIELD &&
	    info.driver_name != NULL && strcmp(info.driver_name, "net_tap") == 0) {
		eth_conf.intr_conf.rxq = 1;
		p->rx_intr = true;
	}

	ret = rte_eth_dev_configure(port_id, nb_queues, nb_queues, &eth_conf);
	if (ret != 0) {
		snprintf(err, errlen, "port %u (%s): configure with %u queues "
			 "and MTU %u failed: %s", port_id, p->name, nb_queues,
			 pc->mtu, rte_strerror(-ret));
		return ret;
	}
	ret = rte_eth_dev_adjust_nb_rx_tx_desc(port_id, &nb_rxd, &nb_txd);
	if (ret != 0) {
		snprintf(err, errlen, "port %u (%s): descriptor counts rejected: "
			 "%s", port_id, p->name, rte_strerror(-ret));
		return ret;
	}
	socket = rte_eth_dev_socket_id(port_id);
	if (socket < 0)
		socket = SOCKET_ID_ANY;
	txconf = info.default_txconf;
	txconf.offloads = eth_conf.txmode.offloads;
	for (q = 0; q < nb_queues; q++) {
		ret = rte_eth_rx_queue_setup(port_id, q, nb_rxd, socket, NULL,
					     pool);
		if (ret == 0)
			ret = rte_eth_tx_queue_setup(port_id, q, nb_txd, socket,
						     &txconf);
		if (ret != 0) {
			snprintf(err, errlen, "port %u (%s): queue %u set-up "
				 "failed: %s", port_id, p->name, q,
				 rte_strerror(-ret));
			return ret;
		}
	}
	ret = rte_eth_dev_start(port_id);
	if (ret != 0) {
		snprintf(err, errlen, "port %u (%s): start failed: %s", port_id,
			 p->name, rte_strerror(-ret));
		return ret;
	}
	p->started = true;
	rte_eth_macaddr_get(port_id, &p->mac);
	dpr_ipv6_link_local(&p->mac, &p->ip6_ll);
	join_groups(p);
	return 0;
}

void
dpr_port_close(struct dpr_port *p)
{
	if (p->closed)
		return;
	if (p->started) {
		rte_eth_dev_stop(p->port_id);
		p->started = false;
	}
	rte_eth_dev_close(p->port_id);
	p->closed = true;
}
