/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdma-perf: reporting -- perftest's columns, or JSON, and latency
 * statistics.
 */

#include "perf.h"

void
header(struct perf *p)
{
	if (p->o.json)
		return;
	printf("---------------------------------------------------------------"
	       "------------------------\n");
	printf(" dprdma-perf %s_%s, RC, %u QP%s, tx depth %u, post list %u, "
	       "inline %d, MTU %d\n", op_names[p->o.op], p->o.lat ? "lat" : "bw",
	       p->o.qps, p->o.qps > 1 ? "s" : "", p->o.tx_depth, p->o.post_list,
	       p->o.inline_size, 128 << p->mtu);
	printf("---------------------------------------------------------------"
	       "------------------------\n");
	if (p->o.lat)
		printf(" #bytes #iterations    t_min[usec]    t_max[usec]  "
		       "t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
		       "99%% percentile[usec]   99.9%% percentile[usec]\n");
	else
		printf(" #bytes     #iterations    BW peak[%s]    BW average[%s]   "
		       "MsgRate[Mpps]\n", p->o.gbits ? "Gb/sec" : "MB/sec",
		       p->o.gbits ? "Gb/sec" : "MB/sec");
}

void
report(struct perf *p, const struct result *r)
{
	double f = p->o.gbits ? 1e9 / 8 : 1048576.0;
	double avg = (double)r->msgs / r->secs;

	if (p->o.json) {
		if (p->o.lat)
			printf("{\"test\":\"%s_lat\",\"bytes\":%u,\"iterations\":%" PRIu64
			       ",\"t_min_us\":%.3f,\"t_max_us\":%.3f,\"t_typical_us\":%.3f"
			       ",\"t_avg_us\":%.3f,\"t_stdev_us\":%.3f,\"p99_us\":%.3f,"
			       "\"p99_9_us\":%.3f}\n", op_names[p->o.op], r->size,
			       r->msgs, r->t_min, r->t_max, r->t_typ, r->t_avg,
			       r->t_sd, r->p99, r->p999);
		else
			printf("{\"test\":\"%s_bw\",\"bytes\":%u,\"iterations\":%" PRIu64
			       ",\"qps\":%u,\"seconds\":%.6f,\"msg_per_s\":%.1f,"
			       "\"peak_msg_per_s\":%.1f,\"gbit_per_s\":%.4f,"
			       "\"mbyte_per_s\":%.2f}\n", op_names[p->o.op], r->size,
			       r->msgs, p->o.qps, r->secs, avg, r->peak,
			       avg * r->size * 8 / 1e9, avg * r->size / 1048576.0);
	} else if (p->o.lat) {
		printf(" %-7u %-10" PRIu64 "  %-13.2f  %-13.2f  %-15.2f  %-13.2f  "
		       "%-14.2f  %-21.2f  %.2f\n", r->size, r->msgs, r->t_min,
		       r->t_max, r->t_typ, r->t_avg, r->t_sd, r->p99, r->p999);
	} else {
		printf(" %-10u %-14" PRIu64 " %-18.2f %-20.2f %.6f\n", r->size,
		       r->msgs, r->peak * r->size / f, avg * r->size / f, avg / 1e6);
	}
	fflush(stdout);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Index of the @q quantile in @n sorted samples. */
static uint64_t
pct_index(uint64_t n, double q)
{
	uint64_t i = (uint64_t)((double)n * q);

	return i < n ? i : n - 1;
}

void
lat_stats(struct perf *p, uint64_t *d, uint64_t n, double div, struct result *r)
{
	double s = 0, s2 = 0, us = p->tsc_per_us * div;

	qsort(d, n, sizeof(*d), cmp_u64);
	for (uint64_t i = 0; i < n; i++) {
		s += (double)d[i];
		s2 += (double)d[i] * (double)d[i];
	}
	r->msgs = n;
	r->t_min = (double)d[0] / us;
	r->t_max = (double)d[n - 1] / us;
	r->t_typ = (double)d[n / 2] / us;
	r->t_avg = s / (double)n / us;
	r->t_sd = sqrt(fmax(0, s2 / (double)n - (s / (double)n) * (s / (double)n))) / us;
	r->p99 = (double)d[pct_index(n, 0.99)] / us;
	r->p999 = (double)d[pct_index(n, 0.999)] / us;
	if (p->o.cdf != NULL && p->o.host != NULL) {
		FILE *f = fopen(p->o.cdf, "w");

		if (f == NULL)
			die("--cdf %s: %s", p->o.cdf, strerror(errno));
		for (uint64_t i = 0; i < n; i++)
			fprintf(f, "%.3f\n", (double)d[i] / us);
		if (fclose(f) != 0)
			die("--cdf %s: %s", p->o.cdf, strerror(errno));
	}
}
