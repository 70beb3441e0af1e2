/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/* Secure QPs' policy per peer subnet (dpr_sec_policy.h). */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "dpr_sec_policy.h"

static const char *const policy_names[] = { "none", "opportunistic", "required" };

/* One "PREFIX/LEN=POLICY" of @p n characters at @p s into @p e. */
static int
parse_one(const char *s, size_t n, struct dpr_sec_subnet *e, char *why, size_t len)
{
	char tok[128], *slash, *eq, *end;
	unsigned long bits;
	struct in_addr a4;
	unsigned int p;

	if (n >= sizeof(tok)) {
		snprintf(why, len, "'%.40s...' is too long", s);
		return -1;
	}
	memcpy(tok, s, n);
	tok[n] = '\0';
	slash = strchr(tok, '/');
	eq = strchr(tok, '=');
	if (slash == NULL || eq == NULL || eq < slash) {
		snprintf(why, len, "'%s' is not PREFIX/LEN=POLICY (e.g. "
			 "10.1.0.0/16=required)", tok);
		return -1;
	}
	*slash = *eq = '\0';
	for (p = 0; p < 3 && strcmp(eq + 1, policy_names[p]) != 0; p++)
		;
	if (p == 3) {
		snprintf(why, len, "'%s': the policy is none, opportunistic or "
			 "required", eq + 1);
		return -1;
	}
	bits = strtoul(slash + 1, &end, 10);
	memset(e, 0, sizeof(*e));
	if (inet_pton(AF_INET, tok, &a4) == 1) {
		if (*end != '\0' || end == slash + 1 || bits > 32)
			goto bad_len;
		dpr_gid_from_ipv4(&e->prefix, a4.s_addr);
		bits += 96;
	} else if (inet_pton(AF_INET6, tok, e->prefix.raw) == 1) {
		if (*end != '\0' || end == slash + 1 || bits > 128)
			goto bad_len;
	} else {
		snprintf(why, len, "'%s' is not an IPv4 or IPv6 address", tok);
		return -1;
	}
	/* the host bits cleared, so that matching is a compare */
	for (unsigned int i = (unsigned int)bits; i < 128; i++)
		e->prefix.raw[i / 8] &= (uint8_t)~(0x80u >> (i % 8));
	e->len = (uint8_t)bits;
	e->policy = (uint8_t)p;
	return 0;
bad_len:
	snprintf(why, len, "'%s/%s': the prefix length is 0-%u", tok, slash + 1,
		 strchr(tok, ':') != NULL ? 128 : 32);
	return -1;
}

int
dpr_sec_subnets_parse(const char *s, struct dpr_sec_subnet *v, unsigned int max,
		      char *why, size_t len)
{
	unsigned int n = 0;

	for (;;) {
		size_t k;

		s += strspn(s, " \t,");
		if (*s == '\0')
			return (int)n;
		k = strcspn(s, " \t,");
		if (n == max) {
			snprintf(why, len, "more than %u subnets", max);
			return -1;
		}
		if (parse_one(s, k, &v[n], why, len) != 0)
			return -1;
		n++;
		s += k;
	}
}

void
dpr_sec_subnets_format(const struct dpr_sec_subnet *v, unsigned int n, char *buf,
		       size_t len)
{
	size_t at = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < n && at < len; i++) {
		char a[INET6_ADDRSTRLEN];
		const bool v4 = dpr_gid_is_ipv4(&v[i].prefix) && v[i].len >= 96;

		if (v4)
			inet_ntop(AF_INET, v[i].prefix.raw + 12, a, sizeof(a));
		else
			inet_ntop(AF_INET6, v[i].prefix.raw, a, sizeof(a));
		at += (size_t)snprintf(buf + at, len - at, "%s%s/%u=%s", i ? " " : "", a,
				       v4 ? v[i].len - 96u : v[i].len,
				       policy_names[v[i].policy]);
	}
}

int
dpr_sec_subnet_policy(const struct dpr_sec_subnet *v, unsigned int n,
		      const union dpr_gid *g)
{
	int best = -1, best_len = -1;

	for (unsigned int i = 0; i < n; i++) {
		unsigned int b = v[i].len, full = b / 8;

		if ((int)b <= best_len || memcmp(g->raw, v[i].prefix.raw, full) != 0)
			continue;
		if (b % 8 != 0 &&
		    ((g->raw[full] ^ v[i].prefix.raw[full]) & (uint8_t)(0xff00u >> (b % 8))))
			continue;
		best = v[i].policy;
		best_len = (int)b;
	}
	return best;
}
