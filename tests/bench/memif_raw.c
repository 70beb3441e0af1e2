/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdma-memif-raw: the raw limit of a memif link between two DPDK
 * processes, the baseline dprdma's data path is measured against (testpmd's
 * txonly/rxonly stall over memif on these machines).
 *
 *   dprdma-memif-raw --role tx|rx --socket PATH [--size B] [--seconds S]
 *                    [--lcore N] [--prefix P]
 *
 * tx sends UDP frames of B bytes flat out for S seconds; rx counts them and
 * prints one JSON line: frames, frames per second, bits per second (frame
 * bytes on the wire, as dprdma's figures count them).
 */

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#define BURST 32

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "role", required_argument, NULL, 'r' },
		{ "socket", required_argument, NULL, 's' },
		{ "size", required_argument, NULL, 'b' },
		{ "seconds", required_argument, NULL, 't' },
		{ "lcore", required_argument, NULL, 'l' },
		{ "prefix", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	char vdev[512], lcore[16] = "0", prefix[64];
	const char *role = "rx", *sock = "/tmp/dprdma-memif-raw.sock";
	uint32_t size = 64;
	double secs = 3;
	struct rte_eth_conf conf;
	struct rte_mempool *mp;
	uint8_t tmpl[9216];
	uint64_t frames = 0, bytes = 0, t0 = 0, t_end, hz;
	int opt;

	snprintf(prefix, sizeof(prefix), "dpr-raw-%d", (int)getpid());
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'r': role = optarg; break;
		case 's': sock = optarg; break;
		case 'b': size = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 't': secs = atof(optarg); break;
		case 'l': snprintf(lcore, sizeof(lcore), "%s", optarg); break;
		case 'p': snprintf(prefix, sizeof(prefix), "%s", optarg); break;
		default: return 2;
		}
	}
	if (size < 60 || size > 9000)
		return 2;
	snprintf(vdev, sizeof(vdev), "net_memif0,role=%s,socket=%s,"
		 "socket-abstract=no", strcmp(role, "tx") == 0 ? "client" : "server",
		 sock);
	{
		char *eal[] = { argv[0], (char *)"-l", lcore, (char *)"--no-pci",
			(char *)"--no-huge", (char *)"-m", (char *)"512",
			(char *)"--file-prefix", prefix, (char *)"--vdev", vdev,
			(char *)"--log-level", (char *)"*:error", NULL };

		if (rte_eal_init(RTE_DIM(eal) - 1, eal) < 0) {
			fprintf(stderr, "EAL: %s\n", rte_strerror(rte_errno));
			return 1;
		}
	}
	mp = rte_pktmbuf_pool_create("raw", 16383, 256, 0,
				     RTE_PKTMBUF_HEADROOM + 9216, rte_socket_id());
	memset(&conf, 0, sizeof(conf));
	if (mp == NULL || rte_eth_dev_configure(0, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(0, 0, 1024, rte_socket_id(), NULL, mp) != 0 ||
	    rte_eth_tx_queue_setup(0, 0, 1024, rte_socket_id(), NULL) != 0 ||
	    rte_eth_dev_start(0) != 0) {
		fprintf(stderr, "port set-up failed\n");
		return 1;
	}
	hz = rte_get_tsc_hz();
	/* a UDP frame of the size asked for, to a port nothing listens on */
	memset(tmpl, 0, sizeof(tmpl));
	{
		struct rte_ether_hdr *e = (void *)tmpl;
		struct rte_ipv4_hdr *ip = (void *)(e + 1);
		struct rte_udp_hdr *u = (void *)(ip + 1);

		memset(&e->dst_addr, 0xff, 6);
		e->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
		ip->version_ihl = RTE_IPV4_VHL_DEF;
		ip->total_length = rte_cpu_to_be_16((uint16_t)(size - 14));
		ip->time_to_live = 64;
		ip->next_proto_id = IPPROTO_UDP;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		u->dst_port = RTE_BE16(9);
		u->dgram_len = rte_cpu_to_be_16((uint16_t)(size - 34));
	}
	if (strcmp(role, "tx") == 0) {
		struct rte_eth_link link;
		unsigned int i;

		for (i = 0; i < 500; i++) {   /* wait for the peer */
			rte_eth_link_get_nowait(0, &link);
			if (link.link_status)
				break;
			rte_delay_ms(10);
		}
		t0 = rte_rdtsc();
		t_end = t0 + (uint64_t)(secs * hz);
		while (rte_rdtsc() < t_end) {
			struct rte_mbuf *m[BURST];
			uint16_t k, sent;

			if (rte_pktmbuf_alloc_bulk(mp, m, BURST) != 0)
				continue;
			for (k = 0; k < BURST; k++)
				memcpy(rte_pktmbuf_append(m[k], (uint16_t)size), tmpl, size);
			sent = rte_eth_tx_burst(0, 0, m, BURST);
			if (sent < BURST)
				rte_pktmbuf_free_bulk(&m[sent], BURST - sent);
			frames += sent;
		}
		printf("{\"role\":\"tx\",\"size\":%u,\"frames\":%" PRIu64 "}\n", size,
		       frames);
	} else {
		uint64_t last = 0, now;

		/* counts until the sender has been quiet for half a second */
		for (;;) {
			struct rte_mbuf *m[BURST];
			uint16_t n = rte_eth_rx_burst(0, 0, m, BURST), k;

			now = rte_rdtsc();
			if (n != 0) {
				if (t0 == 0)
					t0 = now;
				last = now;
				frames += n;
				for (k = 0; k < n; k++)
					bytes += rte_pktmbuf_pkt_len(m[k]);
				rte_pktmbuf_free_bulk(m, n);
			} else if (t0 != 0 && now - last > hz / 2) {
				break;
			} else if (t0 == 0 && now > hz * 60 + last && last != 0) {
				break;
			}
		}
		{
			double s = (double)(last - t0) / (double)hz;

			printf("{\"role\":\"rx\",\"size\":%u,\"frames\":%" PRIu64
			       ",\"seconds\":%.3f,\"frames_per_s\":%.0f,"
			       "\"bits_per_s\":%.0f}\n", size, frames, s, frames / s,
			       bytes * 8.0 / s);
		}
	}
	fflush(stdout);
	/* stop our side before the peer goes (memif in 22.11) */
	rte_eth_dev_stop(0);
	rte_eal_cleanup();
	return 0;
}
