/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * What the command-line tools (dprdma-perf, dprdma-gen) share: one way to
 * complain and exit, one way to read a number option. Header only: the
 * tools link different libraries (libibverbs, DPDK) and nothing else.
 * The including file defines DPR_CLI_NAME and a usage(FILE *) function.
 */

#ifndef DPR_CLI_H
#define DPR_CLI_H

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define EXIT_USAGE 2

/* (a tool of several files defines DPR_CLI_USAGE_EXTERN: its usage() is
 * one of them) */
#ifdef DPR_CLI_USAGE_EXTERN
void usage(FILE *f);
#else
static void usage(FILE *f);
#endif

/* A message on stderr, then exit with @rc (with the usage for EXIT_USAGE). */
static inline void
dpr_cli_complain(int rc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

static inline void
dpr_cli_complain(int rc, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, DPR_CLI_NAME ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (rc == EXIT_USAGE)
		usage(stderr);
	exit(rc);
}

#define die(...) dpr_cli_complain(1, __VA_ARGS__)
#define bad(...) dpr_cli_complain(EXIT_USAGE, __VA_ARGS__)

/* The value of option @opt, a number from @min to @max (any base strtoull
 * takes), or exit 2 naming the option and the range. */
static inline uint64_t
dpr_cli_num(const char *opt, const char *s, uint64_t min, uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v < min || v > max)
		bad("%s: \"%s\" is not a number from %" PRIu64 " to %" PRIu64,
		    opt, s, min, max);
	return v;
}

#endif /* DPR_CLI_H */
