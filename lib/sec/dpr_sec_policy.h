/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Secure QPs' policy per peer subnet ([security] subnets,
 * doc/security.rst): a peer whose address falls in a listed prefix gets
 * that prefix's policy (the longest prefix that holds it), others the
 * section's policy. none: plain with it, as if this box ran no secure QPs
 * (its DprdmaCaps say so to that peer, so that both ends agree);
 * opportunistic: secure when the peer can be, else plain; required: else
 * the QP goes to ERR.
 */

#ifndef DPR_SEC_POLICY_H
#define DPR_SEC_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "dpr_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

enum dpr_sec_policy {
	DPR_SEC_POLICY_NONE,
	DPR_SEC_POLICY_OPPORTUNISTIC,
	DPR_SEC_POLICY_REQUIRED,
};

#define DPR_SEC_MAX_SUBNETS 16

/** One prefix and its policy; IPv4 prefixes as IPv4-mapped GIDs (length
 * + 96). */
struct dpr_sec_subnet {
	union dpr_gid prefix;
	uint8_t len;               /**< bits, 0-128 */
	uint8_t policy;            /**< enum dpr_sec_policy */
};

/**
 * Parse "PREFIX/LEN=POLICY ..." (blanks or commas between; IPv4 or IPv6;
 * POLICY none, opportunistic or required) into @p v.
 * @return how many (at most @p max), or -1 with what is wrong in @p why.
 */
int dpr_sec_subnets_parse(const char *s, struct dpr_sec_subnet *v,
			  unsigned int max, char *why, size_t len);

/** @p v as dpr_sec_subnets_parse() reads it. */
void dpr_sec_subnets_format(const struct dpr_sec_subnet *v, unsigned int n,
			    char *buf, size_t len);

/** The policy for peer @p g: its longest prefix's, or -1 (none holds it:
 * the section's policy). */
int dpr_sec_subnet_policy(const struct dpr_sec_subnet *v, unsigned int n,
			  const union dpr_gid *g);

#ifdef __cplusplus
}
#endif

#endif /* DPR_SEC_POLICY_H */
