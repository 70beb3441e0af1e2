/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * Unit-test scaffolding in the shape of DPDK's app/test: each test file
 * defines one suite of cases and registers it with DPR_TEST_SUITE(), which
 * also says whether the suite needs the EAL. The runner (test_main.c)
 * brings the EAL up without hugepages only when a selected suite needs it.
 */

#ifndef DPR_TEST_H
#define DPR_TEST_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#define TEST_SUCCESS 0
#define TEST_FAILED -1
#define TEST_SKIPPED 77

struct dpr_test_case {
	const char *name;
	int (*fn)(void);
};

struct dpr_test_suite {
	const char *name;
	bool needs_eal;                 /**< runs after rte_eal_init(--no-huge) */
	int (*setup)(void);             /**< optional, before the first case */
	void (*teardown)(void);         /**< optional, after the last case */
	const struct dpr_test_case *cases; /**< ends with { NULL, NULL } */
	struct dpr_test_suite *next;
};

void dpr_test_register(struct dpr_test_suite *s);

#define DPR_TEST_CASE(fn) { #fn, fn }
#define DPR_TEST_CASES_END { NULL, NULL }

/** Register @p suite (a struct dpr_test_suite) when the runner loads. */
#define DPR_TEST_SUITE(suite) \
	RTE_INIT(dpr_test_register_ ## suite) { dpr_test_register(&suite); }

/** Fail the current case with a message if @p cond is false. */
#define CHECK(cond, ...) do { \
		if (!(cond)) { \
			printf("    %s:%d: check failed: %s: ", __FILE__, \
			       __LINE__, #cond); \
			printf(__VA_ARGS__); \
			printf("\n"); \
			return TEST_FAILED; \
		} \
	} while (0)

#define CHECK_EQ(a, b, ...) do { \
		long long _a = (long long)(a), _b = (long long)(b); \
		if (_a != _b) { \
			printf("    %s:%d: %s == %s failed: %lld != %lld: ", \
			       __FILE__, __LINE__, #a, #b, _a, _b); \
			printf(__VA_ARGS__); \
			printf("\n"); \
			return TEST_FAILED; \
		} \
	} while (0)

#endif /* DPR_TEST_H */
