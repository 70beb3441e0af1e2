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
#include <rte_mbuf.h>
#include <rte_pcapng.h>
#include <rte_telemetry.h>

#include "dpr_build_config.h"
#include "dpr_capture.h"
#include "dpr_engine.h"

struct capture {
	rte_pcapng_t *pc;
	struct rte_mempool *mp;
	char path[256];
	uint32_t snaplen;       /* bytes kept of each frame */
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

static void
capture_tap(void *state, uint16_t port_id, uint16_t queue,
	    struct rte_mbuf **pkts, uint16_t n, bool tx)
{
	struct capture *c = state;
	struct rte_mbuf *out[128];
	uint16_t i, k = 0;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = rte_pcapng_copy(port_id, queue, pkts[i], c->mp,
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
	__atomic_fetch_add(&c->captured, n, __ATOMIC_RELAXED);
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

	/* PORT,/absolute/path or PORT,SNAPLEN,/absolute/path (as tcpdump -s:
	 * the bytes kept of each frame; 0 or none: all of it) */
	if (comma == NULL)
		return -EINVAL;
	if (comma[1] != '/') {
		snaplen = strtoul(comma + 1, &end, 10);
		if (end == comma + 1 || *end != ',' || end[1] != '/')
			return -EINVAL;
		if (snaplen == 0 || snaplen > UINT32_MAX)
			snaplen = UINT32_MAX;
		comma = end;
	}
	pi = strtol(params, NULL, 10);
	if (pi < 0 || pi >= DPR_MAX_PORTS || caps[pi] != NULL)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->snaplen = (uint32_t)snaplen;
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
		"Capture a port's RX and TX to pcapng. Parameters: PORT,/PATH or "
		"PORT,SNAPLEN,/PATH (bytes kept of each frame)");
	rte_telemetry_register_cmd("/dprdma/capture/stop", tel_stop,
		"Stop a capture; counts what it wrote. Parameter: PORT");
}
