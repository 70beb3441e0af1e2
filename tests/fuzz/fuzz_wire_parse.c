/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * libFuzzer target: receive validation of lib/wire (dpr_wire_parse, then
 * dpr_wire_decode and a rebuild of whatever it accepted). Any byte string
 * in; no crash, no read out of bounds, no undefined behaviour.
 *
 * Debian's DPDK is not instrumented, so the input never sits in an mbuf
 * data room: it is copied into exact-size malloc'd buffers that the mbufs
 * point at, where ASan sees any read past the end. The first input byte
 * chooses where the frame is split into two segments, so multi-segment
 * payloads and ICRCs are fuzzed too.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpr_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rte_mbuf m0, m1;
	struct dpr_pkt_info pi;
	struct dpr_wire_hdrs h;
	uint8_t *a, *b, out[70000];
	enum dpr_wire_err err;
	size_t cut, len;
	uint32_t max;

	if (size < 2 || size > UINT16_MAX)
		return 0;
	max = data[0] & 1 ? 1024 : 0;
	len = size - 1;
	cut = len;
	if (data[0] & 2)
		cut = ((size_t)data[0] * 7919) % (len + 1);
	data++;

	a = malloc(cut ? cut : 1);
	b = malloc(len - cut ? len - cut : 1);
	memcpy(a, data, cut);
	memcpy(b, data + cut, len - cut);
	dpr_wire_mbuf_wrap(&m0, a, (uint16_t)cut);
	if (cut < len) {
		dpr_wire_mbuf_wrap(&m1, b, (uint16_t)(len - cut));
		m0.next = &m1;
		m0.nb_segs = 2;
		m0.pkt_len = (uint32_t)len;
	}

	err = dpr_wire_parse(&m0, &pi, max);
	/* parsing reads only */
	if (memcmp(a, data, cut) != 0 || memcmp(b, data + cut, len - cut) != 0)
		abort();
	if (err == DPR_WIRE_OK) {
		uint8_t *payload = malloc(pi.paylen ? pi.paylen : 1);

		dpr_wire_decode(&m0, &pi, &h);
		/* the payload as it lies, through the segment walk */
		if (pi.paylen == 0 ||
		    rte_pktmbuf_read(&m0, pi.payload_off, pi.paylen, payload) != NULL)
			dpr_wire_build_linear(out, sizeof(out), &pi.encap, &h,
					      payload, pi.paylen);
		free(payload);
	}
	free(a);
	free(b);
	return 0;
}
