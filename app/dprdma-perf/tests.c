/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdma-perf: the tests -- bandwidth (client and server) and latency at
 * one size, and a whole size with its data check.
 */

#include "perf.h"

struct sample {
	uint64_t t, done;
};

/* Client side of a bandwidth test at @size; @per_qp gets each QP's count. */
static void
bw_client(struct perf *p, uint32_t size, struct result *r, uint64_t per_qp[])
{
	uint32_t nq = p->o.qps, depth = p->o.tx_depth, pl = p->o.post_list;
	uint32_t mod = p->o.cq_mod;
	uint64_t posted[MAX_QPS] = { 0 }, done[MAX_QPS] = { 0 }, limit[MAX_QPS];
	uint64_t total = 0, t0, t_stop, end;
	size_t cap = 1 << 20, ns = 0;
	struct sample *smp = malloc(cap * sizeof(*smp));
	struct ibv_send_wr wr[1024], *badwr;
	struct ibv_sge sge[1024];
	struct ibv_wc wc[64];
	bool timed = p->o.secs > 0;

	if (smp == NULL)
		die("out of memory");
	for (uint32_t q = 0; q < nq; q++)
		limit[q] = timed ? UINT64_MAX : p->o.iters;
	t0 = ticks();
	t_stop = timed ? t0 + (uint64_t)(p->o.secs * 1e6 * p->tsc_per_us) : 0;
	for (;;) {
		bool busy = false;

		if (timed && limit[0] == UINT64_MAX && ticks() >= t_stop)
			/* stop on a multiple of cq_mod: the last WR is signaled */
			for (uint32_t q = 0; q < nq; q++)
				limit[q] = (posted[q] + mod - 1) / mod * mod;
		for (uint32_t q = 0; q < nq; q++) {
			while (posted[q] < limit[q] && posted[q] - done[q] + pl <= depth) {
				uint32_t k = 0;

				for (; k < pl && posted[q] + k < limit[q]; k++) {
					uint64_t seq = posted[q] + k;

					make_wr(p, q, size, seq, &wr[k], &sge[k]);
					wr[k].next = &wr[k + 1];
					if ((seq + 1) % mod == 0 || seq + 1 == limit[q])
						wr[k].send_flags |= IBV_SEND_SIGNALED;
				}
				wr[k - 1].next = NULL;
				if (ibv_post_send(p->qp[q], wr, &badwr) != 0)
					die("ibv_post_send: %s", strerror(errno));
				posted[q] += k;
			}
			if (done[q] < limit[q])
				busy = true;
		}
		if (!busy)
			break;
		{
			int n = poll_wait(p, p->scq, wc, 64);

			for (int i = 0; i < n; i++) {
				uint32_t q = (uint32_t)wc[i].wr_id;
				uint64_t next = (done[q] / mod + 1) * mod;

				/* a signaled WR covers the unsignaled ones before it */
				if (next > limit[q])
					next = limit[q];
				total += next - done[q];
				done[q] = next;
			}
			if (ns < cap) {
				smp[ns].t = ticks();
				smp[ns].done = total;
				ns++;
			}
		}
	}
	end = ticks();
	r->size = size;
	r->msgs = total;
	r->secs = (double)(end - t0) / p->tsc_per_us / 1e6;
	r->peak = (double)total / r->secs;
	for (uint32_t q = 0; q < nq; q++)
		per_qp[q] = done[q];
	/* peak: the best rate over any stretch of 5% of the messages */
	{
		uint64_t win = total / 20 > 0 ? total / 20 : 1;
		size_t j = 0;

		for (size_t i = 0; i < ns; i++) {
			while (j < ns && smp[j].done - smp[i].done < win)
				j++;
			if (j >= ns)
				break;
			if (smp[j].t > smp[i].t) {
				double rate = (double)(smp[j].done - smp[i].done) /
					((double)(smp[j].t - smp[i].t) / p->tsc_per_us / 1e6);

				if (rate > r->peak)
					r->peak = rate;
			}
		}
	}
	free(smp);
}

/* Server side of send_bw: take receives (and post them again) until the
 * client's DONE line says how many came, then until that many came. */
uint64_t
bw_server(struct perf *p, uint32_t size)
{
	uint64_t got = 0, want = UINT64_MAX;
	struct ibv_wc wc[64];
	char line[LINE];

	for (;;) {
		int n = p->o.op == OP_SEND ? ibv_poll_cq(p->rcq, 64, wc) : 0;

		if (n < 0)
			die("ibv_poll_cq failed");
		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				die("receive completion error: %s",
				    ibv_wc_status_str(wc[i].status));
			if (wc[i].byte_len != size)
				die("received %u bytes, expected %u", wc[i].byte_len, size);
			post_recv(p, (uint32_t)wc[i].wr_id, 1);
		}
		got += (uint64_t)n;
		if (want == UINT64_MAX) {
			struct pollfd pf = { .fd = p->sock, .events = POLLIN };

			if (poll(&pf, 1, p->o.op == OP_SEND ? 0 : -1) > 0) {
				hear(p, line, sizeof(line));
				if (sscanf(line, "DONE %" SCNu64, &want) != 1)
					die("out-of-band: expected DONE, got \"%s\"", line);
			}
		}
		if (want != UINT64_MAX && (p->o.op != OP_SEND || got >= want))
			return want;
		if (n == 0 && p->o.yield)
			sched_yield();
	}
}

/* A latency test at @size; both sides run it. */
static void
lat_run(struct perf *p, uint32_t size, bool server, struct result *r)
{
	uint64_t n = p->o.iters, *d = malloc(n * sizeof(*d));
	volatile uint8_t *in = recv_half(p, 0);
	uint8_t *out = send_half(p, 0);
	struct ibv_send_wr wr, *badwr;
	struct ibv_sge sge;
	struct ibv_wc wc[4];

	if (d == NULL)
		die("out of memory");
	for (uint64_t i = 0; i < n; i++) {
		uint8_t mark = (uint8_t)(i % 255 + 1);
		uint64_t t0 = ticks();

		make_wr(p, 0, size, i, &wr, &sge);
		wr.send_flags |= IBV_SEND_SIGNALED;
		if (p->o.op == OP_WRITE) {
			/* ping-pong on the last byte of the peer's buffer */
			if (server)
				while (in[size - 1] != mark)
					if (p->o.yield)
						sched_yield();
			out[size - 1] = mark;
			if (ibv_post_send(p->qp[0], &wr, &badwr) != 0)
				die("ibv_post_send: %s", strerror(errno));
			poll_wait(p, p->scq, wc, 4);
			if (!server)
				while (in[size - 1] != mark)
					if (p->o.yield)
						sched_yield();
		} else if (p->o.op == OP_SEND) {
			/* one receive posted ahead on each side (run_size) */
			if (server) {
				poll_wait(p, p->rcq, wc, 1);
				post_recv(p, 0, 1);
			}
			if (ibv_post_send(p->qp[0], &wr, &badwr) != 0)
				die("ibv_post_send: %s", strerror(errno));
			poll_wait(p, p->scq, wc, 1);
			if (!server) {
				poll_wait(p, p->rcq, wc, 1);
				post_recv(p, 0, 1);
			}
		} else {
			/* READ and atomics: the client alone, one at a time */
			if (ibv_post_send(p->qp[0], &wr, &badwr) != 0)
				die("ibv_post_send: %s", strerror(errno));
			poll_wait(p, p->scq, wc, 1);
		}
		d[i] = ticks() - t0;
	}
	lat_stats(p, d, n, p->o.op == OP_WRITE || p->o.op == OP_SEND ? 2.0 : 1.0, r);
	r->size = size;
	free(d);
}

/* A digest of what arrived in each QP's receive half (atomics: the sum of
 * the counters), or of each QP's send half (@send). */
static uint64_t
digest(struct perf *p, uint32_t size, bool send)
{
	uint64_t h = 0;

	for (uint32_t q = 0; q < p->o.qps; q++) {
		uint8_t *b = send ? send_half(p, q) : recv_half(p, q);

		if (p->o.op == OP_ATOMIC && !send) {
			uint64_t v;

			memcpy(&v, b, 8);
			h += v;
		} else {
			h ^= sum(b, size) + q;
		}
	}
	return h;
}

/* One message size; returns false when the data check failed. */
bool
run_size(struct perf *p, uint32_t size, bool server, unsigned int round)
{
	struct result r = { 0 };
	char line[LINE];
	uint64_t count = 0, seen, pattern, per_qp[MAX_QPS] = { 0 }, want;
	bool passive = server && (!p->o.lat || p->o.op == OP_READ ||
				  p->o.op == OP_ATOMIC);

	/* receive halves (and the atomics' counters) start at 0 */
	for (uint32_t q = 0; q < p->o.qps; q++)
		memset(recv_half(p, q), 0, p->stride / 2);
	sync_peer(p, round);
	if (passive) {
		count = bw_server(p, size);
		say(p, "SEEN %" PRIu64 " %" PRIu64 " %" PRIu64, count,
		    digest(p, size, false), digest(p, size, true));
		return true;
	}
	if (p->o.lat) {
		lat_run(p, size, server, &r);
		per_qp[0] = p->o.iters;
	} else {
		bw_client(p, size, &r, per_qp);
	}
	if (server) {
		/* ping-pong server: the client checks both directions' data */
		say(p, "SEEN %" PRIu64 " %" PRIu64 " %" PRIu64, p->o.iters,
		    digest(p, size, false), digest(p, size, true));
		return true;
	}
	if (!p->o.lat || p->o.op == OP_READ || p->o.op == OP_ATOMIC)
		say(p, "DONE %" PRIu64, r.msgs);
	hear(p, line, sizeof(line));
	if (sscanf(line, "SEEN %" SCNu64 " %" SCNu64 " %" SCNu64, &count, &seen,
		   &pattern) != 3)
		die("out-of-band: expected SEEN, got \"%s\"", line);
	report(p, &r);
	/* the check: what the server holds against what this side sent */
	if (p->o.op == OP_ATOMIC) {
		want = 0;
		for (uint32_t q = 0; q < p->o.qps; q++)
			want += per_qp[q];
		if (seen != want) {
			fprintf(stderr, "dprdma-perf: data check failed at %u B: the "
				"server's counters sum to %" PRIu64 " after %" PRIu64
				" atomics\n", size, seen, want);
			return false;
		}
	} else if (p->o.op == OP_READ) {
		if (digest(p, size, false) != pattern) {
			fprintf(stderr, "dprdma-perf: data check failed at %u B: READ "
				"brought back other bytes than the server holds\n", size);
			return false;
		}
	} else if (seen != digest(p, size, true)) {
		fprintf(stderr, "dprdma-perf: data check failed at %u B: the server "
			"holds other bytes than were sent\n", size);
		return false;
	}
	return true;
}
