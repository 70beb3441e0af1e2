/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * pcapng capture with rte_pcapng (experimental in DPDK 22.11, hence
 * ALLOW_EXPERIMENTAL_API for this file only). The engine's tap hands each
 * RX burst and each TX burst to capture_tap(), which copies the frames into
 * pcapng blocks from a pool of its own and writes them in one call: one
 * system call per burst while a capture runs, none when it does not.
 * Transmitted frames are captured as the worker hands them to the port (or
 * to the fault adapter, which acts after the capture).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>
#include <rte_telemetry.h>

#include "dpr_build_config.h"
#include "dpr_capture.h"
#include "dpr_engine.h"
#include "dpr_wire.h"

struct capture {
	rte_pcapng_t *pc;
	struct rte_mempool *mp;
	char path[256];
	uint32_t snaplen;       /* bytes kept of each frame */
	uint32_t n_qpn;         /* with a QP filter: RoCEv2 frames to these */
	uint32_t qpn[2];
	uint64_t captured;      /* written by the worker(s) */
	uint64_t failed;
};

static struct capture *caps[DPR_MAX_PORTS];

/*
 * DPDK 22.11's rte_pcapng_write_packets() leaves the mbufs to the caller,
 * whatever its header says (measured: every copy stayed in use), so they
 * are freed here once written.
 */
static inline void
write_out(struct capture *c, struct rte_mbuf **out, uint16_t k)
{
	rte_pcapng_write_packets(c->pc, out, k);
	rte_pktmbuf_free_bulk(out, k);
}

/* The BTH destination QP of a RoCEv2 frame (IPv4 without options or
 * IPv6, no VLAN), or UINT32_MAX for any other frame. The tap sees frames
 * before the classifier has measured them (dpr_wire_dqpn needs that). */
static uint32_t
roce_dest_qp(const struct rte_mbuf *m)
{
	const size_t eth = sizeof(struct rte_ether_hdr);
	uint8_t buf[sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv6_hdr) +
		    sizeof(struct rte_udp_hdr) + sizeof(struct dpr_bth)];
	/* an ACK over IPv4 is shorter than the buffer: read what there is */
	const size_t have = RTE_MIN(sizeof(buf), (size_t)rte_pktmbuf_pkt_len(m));
	const struct rte_ether_hdr *e = rte_pktmbuf_read(m, 0, (uint32_t)have, buf);
	const struct rte_udp_hdr *u;
	size_t l4;

	if (e == NULL || have < eth + sizeof(struct rte_ipv4_hdr))
		return UINT32_MAX;
	if (e->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV4)) {
		const struct rte_ipv4_hdr *ip = (const void *)(e + 1);

		if (ip->next_proto_id != IPPROTO_UDP ||
		    ip->version_ihl != RTE_IPV4_VHL_DEF)
			return UINT32_MAX;      /* options: not RoCEv2's */
		l4 = eth + sizeof(*ip);
	} else if (e->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV6) &&
		   have >= eth + sizeof(struct rte_ipv6_hdr)) {
		if (((const struct rte_ipv6_hdr *)(e + 1))->proto != IPPROTO_UDP)
			return UINT32_MAX;
		l4 = eth + sizeof(struct rte_ipv6_hdr);
	} else {
		return UINT32_MAX;
	}
	u = (const void *)((const uint8_t *)e + l4);
	if (have < l4 + sizeof(*u) + sizeof(struct dpr_bth) ||
	    u->dst_port != RTE_BE16(DPR_ROCEV2_PORT))
		return UINT32_MAX;
	return dpr_bth_qpn((const void *)(u + 1));
}

static void
capture_tap(void *state, uint16_t port_id, uint16_t queue,
	    struct rte_mbuf **pkts, uint16_t n, bool tx)
{
	struct capture *c = state;
	struct rte_mbuf *out[128];
	uint16_t i, k = 0, kept = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m;

		if (c->n_qpn != 0) {
			uint32_t q = roce_dest_qp(pkts[i]);

			if (q != c->qpn[0] && (c->n_qpn < 2 || q != c->qpn[1]))
				continue;
		}
		kept++;
		m = rte_pcapng_copy(port_id, queue, pkts[i], c->mp,
			c->snaplen, rte_get_tsc_cycles(),
			tx ? RTE_PCAPNG_DIRECTION_OUT : RTE_PCAPNG_DIRECTION_IN);

		if (m == NULL) {
			__atomic_fetch_add(&c->failed, 1, __ATOMIC_RELAXED);
			continue;
		}
		out[k++] = m;
		if (k == RTE_DIM(out)) {
			write_out(c, out, k);
			k = 0;
		}
	}
	if (k != 0)
		write_out(c, out, k);
	__atomic_fetch_add(&c->captured, kept, __ATOMIC_RELAXED);
}

static void
capture_free(struct capture *c)
{
	if (c->pc != NULL)
		rte_pcapng_close(c->pc);  /* closes the file too */
	rte_mempool_free(c->mp);
	free(c);
}

static int
stop(long pi, struct rte_tel_data *d)
{
	struct capture *c = caps[pi];
	int rc;

	if (c == NULL)
		return -ENOENT;
	/* once every worker has dropped the tap, nobody writes any more */
	rc = dpr_engine_set_tap((uint16_t)pi, NULL, NULL);
	if (rc != 0)
		return rc;
	caps[pi] = NULL;
	if (d != NULL) {
		rte_tel_data_start_dict(d);
		rte_tel_data_add_dict_string(d, "file", c->path);
		rte_tel_data_add_dict_u64(d, "captured", c->captured);
		rte_tel_data_add_dict_u64(d, "failed", c->failed);
		rte_tel_data_add_dict_u64(d, "buffers_in_use",
					  rte_mempool_in_use_count(c->mp));
	}
	capture_free(c);
	return 0;
}

static int
tel_start(const char *cmd __rte_unused, const char *params,
	  struct rte_tel_data *d)
{
	const char *comma = params ? strchr(params, ',') : NULL;
	char name[RTE_MEMPOOL_NAMESIZE];
	unsigned long snaplen = UINT32_MAX;
	struct capture *c;
	char *end;
	long pi;
	int fd, rc;

	uint32_t qpn[2] = { 0 }, n_qpn = 0;

	/* PORT[,SNAPLEN][,qp=QPN[+QPN]],/absolute/path: SNAPLEN as tcpdump -s
	 * (the bytes kept of each frame; 0 or none: all of it); qp= keeps
	 * only the RoCEv2 frames whose BTH names one of those QPs (a QP's own
	 * number for what it receives, its peer's for what it sends) */
	if (comma == NULL)
		return -EINVAL;
	if (strncmp(comma + 1, "qp=", 3) != 0 && comma[1] != '/') {
		snaplen = strtoul(comma + 1, &end, 10);
		if (end == comma + 1 || *end != ',' || end[1] != '/')
			return -EINVAL;
		if (snaplen == 0 || snaplen > UINT32_MAX)
			snaplen = UINT32_MAX;
		comma = end;
	}
	if (strncmp(comma + 1, "qp=", 3) == 0) {
		const char *q = comma + 4;

		do {
			unsigned long v = strtoul(q, &end, 0);

			if (end == q || v > 0xffffff || n_qpn == 2)
				return -EINVAL;
			qpn[n_qpn++] = (uint32_t)v;
			q = end + 1;
		} while (*end == '+');
		if (*end != ',' || end[1] != '/')
			return -EINVAL;
		comma = end;
	}
	pi = strtol(params, NULL, 10);
	if (pi < 0 || pi >= DPR_MAX_PORTS || caps[pi] != NULL)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->snaplen = (uint32_t)snaplen;
	c->n_qpn = n_qpn;
	memcpy(c->qpn, qpn, sizeof(qpn));
	snprintf(c->path, sizeof(c->path), "%s", comma + 1);
	snprintf(name, sizeof(name), "dpr_cap_%ld", pi);
	c->mp = rte_pktmbuf_pool_create(name, 4095, 0, 0,
					rte_pcapng_mbuf_size(9216 + 64),
					SOCKET_ID_ANY);
	fd = open(c->path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (c->mp == NULL || fd < 0) {
		rc = fd < 0 ? -errno : -ENOMEM;
		if (fd >= 0)
			close(fd);
		capture_free(c);
		return rc;
	}
	c->pc = rte_pcapng_fdopen(fd, NULL, NULL, "dprdmad", "dprdma capture");
	if (c->pc == NULL) {
		close(fd);
		capture_free(c);
		return -EIO;
	}
	caps[pi] = c;
	rc = dpr_engine_set_tap((uint16_t)pi, capture_tap, c);
	if (rc != 0) {
		caps[pi] = NULL;
		dpr_engine_set_tap((uint16_t)pi, NULL, NULL);
		capture_free(c);
		return rc;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "file", c->path);
	rte_tel_data_add_dict_string(d, "capturing", "yes");
	return 0;
}

static int
tel_stop(const char *cmd __rte_unused, const char *params,
	 struct rte_tel_data *d)
{
	long pi = params ? strtol(params, NULL, 10) : -1;

	if (pi < 0 || pi >= DPR_MAX_PORTS)
		return -EINVAL;
	return stop(pi, d);
}

void
dpr_capture_stop_all(void)
{
	long pi;

	for (pi = 0; pi < DPR_MAX_PORTS; pi++)
		if (caps[pi] != NULL)
			stop(pi, NULL);
}

void
dpr_capture_register_telemetry(void)
{
	rte_telemetry_register_cmd("/dprdma/capture/start", tel_start,
		"Capture a port's RX and TX to pcapng. "
		"Parameters: PORT[,SNAPLEN][,qp=QPN[+QPN]],/PATH");
	rte_telemetry_register_cmd("/dprdma/capture/stop", tel_stop,
		"Stop a capture; counts what it wrote. Parameter: PORT");
}
