/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * libFuzzer: any bytes as a MAD to dprdmad's CM (dpr_cm_decode) and to
 * its capability exchange (dpr_caps_decode). What decodes must encode and
 * decode again to the same message, and encode the second time to the
 * same bytes: no field read that is not written.
 */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dpr_cm_mad.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dpr_cm_msg a, b;
	uint8_t m1[DPR_MAD_LEN], m2[DPR_MAD_LEN];
	struct dpr_cma_hdr h;
	struct dpr_caps_msg c, d;

	if (dpr_caps_decode(data, size, &c) == 0 && c.status == 0) {
		dpr_caps_encode(&c, m1);
		if (dpr_caps_decode(m1, sizeof(m1), &d) != 0)
			abort();
		dpr_caps_encode(&d, m2);
		if (memcmp(m1, m2, sizeof(m1)) != 0 || c.caps != d.caps ||
		    c.tid != d.tid || c.method != d.method)
			abort();
	}
	if (dpr_cm_decode(data, size, &a) != DPR_CM_MAD_OK)
		return 0;
	(void)dpr_cma_hdr_get(a.pdata, &h);
	dpr_cm_encode(&a, m1);
	if (dpr_cm_decode(m1, sizeof(m1), &b) != DPR_CM_MAD_OK)
		abort();
	dpr_cm_encode(&b, m2);
	if (memcmp(m1, m2, sizeof(m1)) != 0 || a.attr != b.attr ||
	    a.local_id != b.local_id || a.tid != b.tid ||
	    a.pdata_len != b.pdata_len || memcmp(a.pdata, b.pdata, a.pdata_len) != 0)
		abort();
	return 0;
}
