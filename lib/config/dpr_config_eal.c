/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The [eal] room: the section every configuration has, read before DPDK
 * starts (lcores, devices, hugepages, memory, file prefix, log level), and
 * the EAL arguments dprdmad starts DPDK with (dpr_config_eal_args()).
 */

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "dpr_config.h"

#define ERR(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

static const char *const huge_names[] = { "auto", "yes", "no", NULL };

static int parse_lcores(void *area, const char *value, char *why, size_t len);
static void format_lcores(const void *area, char *buf, size_t len);

#define E_OFF(f) offsetof(struct dpr_eal_conf, f)
#define E_SZ(f) sizeof(((struct dpr_eal_conf *)0)->f)

static const struct dpr_conf_key eal_keys[] = {
	{ "lcores", DPR_CONF_CUSTOM, .parse = parse_lcores, .format = format_lcores,
	  .help = "lcores to run on, e.g. 0-1 or 0,2-3; the lowest is the main "
		  "(control) lcore, every other one runs a worker poll loop" },
	{ "vdev", DPR_CONF_MULTI, E_OFF(vdev), E_SZ(vdev[0]),
	  .count_off = E_OFF(n_vdev),
	  .help = "virtual device, as EAL --vdev (repeatable), e.g. "
		  "net_af_packet0,iface=eth1 or net_memif0,role=server" },
	{ "allow", DPR_CONF_MULTI, E_OFF(allow), E_SZ(allow[0]),
	  .count_off = E_OFF(n_allow),
	  .help = "PCI device to use, as EAL -a (repeatable), e.g. 0000:3b:00.0; "
		  "with none, dprdmad passes --no-pci" },
	{ "huge", DPR_CONF_ENUM, E_OFF(huge), E_SZ(huge), .names = huge_names,
	  .help = "hugepages: auto (use them if free, else --no-huge with a "
		  "warning), yes (required), no (--no-huge)" },
	{ "memory", DPR_CONF_UINT, E_OFF(memory_mb), E_SZ(memory_mb), 64, 65536,
	  .help = "MiB of memory: needed free hugepages, or -m with --no-huge" },
	{ "file_prefix", DPR_CONF_STR, E_OFF(file_prefix), E_SZ(file_prefix), 1,
	  .help = "EAL --file-prefix: names the runtime folder and telemetry "
		  "socket (dpdk-telemetry.py -f PREFIX); unique per daemon" },
	{ "log_level", DPR_CONF_STR, E_OFF(log_level), E_SZ(log_level),
	  .help = "EAL --log-level, e.g. info, or dprdma.*:debug" },
	{ "extra", DPR_CONF_STR, E_OFF(extra), E_SZ(extra),
	  .help = "further EAL arguments, separated by blanks" },
};

static void
eal_defaults(void *area, int port __rte_unused)
{
	struct dpr_eal_conf *e = area;

	memset(e, 0, sizeof(*e));
	snprintf(e->lcores, sizeof(e->lcores), "0-1");
	snprintf(e->vdev[0], sizeof(e->vdev[0]), "net_tap0,iface=dprdma0,mac=fixed");
	e->n_vdev = 1;
	e->huge = DPR_HUGE_AUTO;
	e->memory_mb = 256;
	snprintf(e->file_prefix, sizeof(e->file_prefix), "dprdmad");
}

struct dpr_conf_room dpr_eal_room = {
	.section = "eal",
	.size = sizeof(struct dpr_eal_conf),
	.keys = eal_keys,
	.n_keys = RTE_DIM(eal_keys),
	.defaults = eal_defaults,
	.registered = true,
};

int
dpr_parse_lcore_list(const char *s, uint64_t *bits, unsigned int max)
{
	const char *p = s;
	int count = 0;

	memset(bits, 0, ((max + 63) / 64) * sizeof(uint64_t));
	while (*p != '\0') {
		unsigned long lo, hi, i;
		char *end;

		while (isspace((unsigned char)*p))
			p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		lo = strtoul(p, &end, 10);
		hi = lo;
		p = end;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				return -1;
			hi = strtoul(p, &end, 10);
			p = end;
		}
		if (hi < lo || hi >= max)
			return -1;
		for (i = lo; i <= hi; i++) {
			if (!(bits[i / 64] & (1ULL << (i % 64))))
				count++;
			bits[i / 64] |= 1ULL << (i % 64);
		}
		while (isspace((unsigned char)*p))
			p++;
		if (*p == ',')
			p++;
		else if (*p != '\0')
			return -1;
	}
	return count;
}

static int
check_lcores(const char *value, char *why, size_t whylen)
{
	uint64_t bits[(RTE_MAX_LCORE + 63) / 64];
	cpu_set_t avail;
	char list[128];
	size_t used = 0;
	int n, i;

	n = dpr_parse_lcore_list(value, bits, RTE_MAX_LCORE);
	if (n < 0) {
		snprintf(why, whylen, "is not an lcore list (expected e.g. 0-1 "
			 "or 0,2-3, lcores below %d)", RTE_MAX_LCORE);
		return -1;
	}
	if (n < 2) {
		snprintf(why, whylen, "names %d lcore; dprdmad needs a main "
			 "lcore and at least one worker lcore, e.g. 0-1", n);
		return -1;
	}
	if (n - 1 > DPR_MAX_WORKERS) {
		snprintf(why, whylen, "gives %d workers; at most %d are supported",
			 n - 1, DPR_MAX_WORKERS);
		return -1;
	}
	if (sched_getaffinity(0, sizeof(avail), &avail) != 0)
		return 0; /* cannot tell: let the EAL decide */
	list[0] = '\0';
	for (i = 0; i < CPU_SETSIZE && used < sizeof(list); i++)
		if (CPU_ISSET(i, &avail))
			used += snprintf(list + used, sizeof(list) - used, "%s%d",
					 used ? "," : "", i);
	for (i = 0; i < RTE_MAX_LCORE; i++) {
		if (!(bits[i / 64] & (1ULL << (i % 64))))
			continue;
		if (i >= CPU_SETSIZE || !CPU_ISSET(i, &avail)) {
			snprintf(why, whylen, "names lcore %d, which is not "
				 "available to this process (available CPUs: %s)",
				 i, list);
			return -1;
		}
	}
	return 0;
}

static int
parse_lcores(void *area, const char *value, char *why, size_t len)
{
	struct dpr_eal_conf *e = area;

	if (check_lcores(value, why, len) != 0)
		return -1;
	if (strlen(value) >= sizeof(e->lcores)) {
		snprintf(why, len, "too long");
		return -1;
	}
	snprintf(e->lcores, sizeof(e->lcores), "%s", value);
	return 0;
}

static void
format_lcores(const void *area, char *buf, size_t len)
{
	snprintf(buf, len, "%s", ((const struct dpr_eal_conf *)area)->lcores);
}

unsigned long
dpr_config_free_huge_mb(void)
{
	unsigned long total = 0;
	glob_t g;
	size_t i;

	if (glob("/sys/kernel/mm/hugepages/hugepages-*kB/free_hugepages", 0,
		 NULL, &g) != 0)
		return 0;
	for (i = 0; i < g.gl_pathc; i++) {
		unsigned long kb = 0, n = 0;
		FILE *f;

		if (sscanf(g.gl_pathv[i],
			   "/sys/kernel/mm/hugepages/hugepages-%lukB", &kb) != 1)
			continue;
		f = fopen(g.gl_pathv[i], "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%lu", &n) == 1)
			total += n * kb / 1024;
		fclose(f);
	}
	globfree(&g);
	return total;
}

/* Append one argument, copying it into buf. */
static int
push_arg(char **argv, int *argc, int max, char *buf, size_t buflen,
	 size_t *used, const char *arg)
{
	size_t l = strlen(arg) + 1;

	if (*argc >= max - 1 || *used + l > buflen)
		return -1;
	memcpy(buf + *used, arg, l);
	argv[(*argc)++] = buf + *used;
	argv[*argc] = NULL;
	*used += l;
	return 0;
}

int
dpr_config_eal_args(const struct dpr_config *conf, const char *prog,
		    char **argv, int max, char *buf, size_t buflen,
		    char *err, size_t errlen)
{
	const struct dpr_eal_conf *e = &conf->eal;
	const char *where = conf->path[0] ? conf->path : "built-in default";
	char extra[DPR_CONF_VALUE_LEN], mem[32], *tok, *save;
	unsigned long free_mb;
	size_t used = 0;
	int argc = 0;
	unsigned int i;
	bool no_huge = e->huge == DPR_HUGE_NO;

#define PUSH(a) do { \
		if (push_arg(argv, &argc, max, buf, buflen, &used, (a)) != 0) \
			ERR("%s: [eal]: too many EAL arguments", where); \
	} while (0)

	PUSH(prog);
	PUSH("-l");
	PUSH(e->lcores);
	PUSH("--file-prefix");
	PUSH(e->file_prefix);
	for (i = 0; i < e->n_vdev; i++) {
		PUSH("--vdev");
		PUSH(e->vdev[i]);
	}
	for (i = 0; i < e->n_allow; i++) {
		PUSH("-a");
		PUSH(e->allow[i]);
	}
	if (e->n_allow == 0)
		PUSH("--no-pci");

	if (!no_huge) {
		free_mb = dpr_config_free_huge_mb();
		if (free_mb < e->memory_mb) {
			if (e->huge == DPR_HUGE_YES)
				ERR("%s: [eal] huge = yes, but only %lu MiB of "
				    "hugepages are free and memory = %u MiB: "
				    "reserve them with 'echo %u > /sys/kernel/mm/"
				    "hugepages/hugepages-2048kB/nr_hugepages' "
				    "(or tools/setup.sh), or set huge = auto",
				    where, free_mb, e->memory_mb,
				    (e->memory_mb + 1) / 2);
			fprintf(stderr, "dprdmad: warning: %lu MiB of hugepages "
				"free, %u MiB wanted: running with --no-huge "
				"(slower, no zero-copy DMA to a real NIC). "
				"Reserve them with 'echo %u > /sys/kernel/mm/"
				"hugepages/hugepages-2048kB/nr_hugepages'\n",
				free_mb, e->memory_mb, (e->memory_mb + 1) / 2);
			no_huge = true;
		}
	}
	if (no_huge) {
		snprintf(mem, sizeof(mem), "%u", e->memory_mb);
		PUSH("--no-huge");
		PUSH("-m");
		PUSH(mem);
	} else {
		/* Hugepages without a hugetlbfs mount: the EAL backs them
		 * with memfd. dprdmad has no secondary processes. */
		PUSH("--in-memory");
	}
	if (e->log_level[0] != '\0') {
		PUSH("--log-level");
		PUSH(e->log_level);
	}
	snprintf(extra, sizeof(extra), "%s", e->extra);
	for (tok = strtok_r(extra, " \t", &save); tok != NULL;
	     tok = strtok_r(NULL, " \t", &save))
		PUSH(tok);
#undef PUSH
	return argc;
}
