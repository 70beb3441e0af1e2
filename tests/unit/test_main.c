/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdma-unit [--list] [SUITE...]: runs the named suites (all without a
 * name), prints one line per case and "N passed, N failed, N skipped".
 * Exits 0 if nothing failed, 77 if everything selected was skipped.
 */

#include <stdlib.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "dpr_test.h"

static struct dpr_test_suite *suites;

void
dpr_test_register(struct dpr_test_suite *s)
{
	struct dpr_test_suite **p = &suites;

	while (*p != NULL)
		p = &(*p)->next;
	s->next = NULL;
	*p = s;
}

static bool
selected(const struct dpr_test_suite *s, int argc, char **argv)
{
	int i;

	if (argc <= 1)
		return true;
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], s->name) == 0)
			return true;
	return false;
}

static int
eal_up(void)
{
	char prefix[64];
	char *args[] = { (char *)"dprdma-unit", (char *)"-l", (char *)"0",
		(char *)"--no-pci", (char *)"--no-huge", (char *)"-m",
		(char *)"128", (char *)"--no-shconf", (char *)"--file-prefix",
		prefix, (char *)"--log-level", (char *)"*:warning",
		(char *)"--no-telemetry", NULL };

	snprintf(prefix, sizeof(prefix), "dpr-unit-%d", (int)getpid());
	if (rte_eal_init(RTE_DIM(args) - 1, args) < 0) {
		printf("EAL initialisation failed: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned int passed = 0, failed = 0, skipped = 0;
	struct dpr_test_suite *s;
	bool eal = false;
	int i, pass;

	if (argc > 1 && strcmp(argv[1], "--list") == 0) {
		for (s = suites; s != NULL; s = s->next)
			printf("%s\n", s->name);
		return 0;
	}
	for (i = 1; i < argc; i++) {
		for (s = suites; s != NULL; s = s->next)
			if (strcmp(argv[i], s->name) == 0)
				break;
		if (s == NULL) {
			printf("no test suite '%s' (--list lists them)\n", argv[i]);
			return 1;
		}
	}
	/* Suites without the EAL first: rte_eal_init() pins this thread to
	 * the main lcore, which changes what they see of the machine. */
	for (pass = 0; pass < 2; pass++) {
		for (s = suites; s != NULL; s = s->next) {
			const struct dpr_test_case *c;

			if (!selected(s, argc, argv) || s->needs_eal != (pass == 1))
				continue;
			if (s->needs_eal && !eal) {
				if (eal_up() != 0)
					return 1;
				eal = true;
			}
			printf("suite %s\n", s->name);
			if (s->setup != NULL && s->setup() != 0) {
				printf("  setup failed: every case fails\n");
				for (c = s->cases; c->name != NULL; c++)
					failed++;
				continue;
			}
			for (c = s->cases; c->name != NULL; c++) {
				int r;

				fflush(stdout);
				r = c->fn();
				printf("  %-40s %s\n", c->name,
				       r == TEST_SUCCESS ? "ok" :
				       r == TEST_SKIPPED ? "skipped" : "FAILED");
				if (r == TEST_SUCCESS)
					passed++;
				else if (r == TEST_SKIPPED)
					skipped++;
				else
					failed++;
			}
			if (s->teardown != NULL)
				s->teardown();
		}
	}
	if (eal)
		rte_eal_cleanup();
	printf("%u passed, %u failed, %u skipped\n", passed, failed, skipped);
	if (failed != 0)
		return 1;
	return (passed == 0 && skipped != 0) ? 77 : 0;
}
