/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The shim's telemetry commands: /dprdma/shim/stats (counters of the main
 * lcore and of every worker, summed; live verbs objects of every device),
 * /dprdma/shim/clients, /dprdma/shim/client,ID (one client's rings).
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "shim_private.h"

static int
tel_stats(const char *cmd __rte_unused, const char *params __rte_unused,
	  struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "clients", dpr_shim_clients());
#define _(n) rte_tel_data_add_dict_u64(d, #n, shim.st.n);
	SHIM_STATS(_)
#undef _
#define _(n) { \
		uint64_t sum = 0; \
		for (unsigned int wi = 0; wi < dpr_engine_n_workers(); wi++) \
			sum += shim.ws[wi].n; \
		rte_tel_data_add_dict_u64(d, #n, sum); \
	}
	SHIM_WORKER_STATS(_)
#undef _
	/* live verbs objects of every device: back to their baseline once
	 * clients are gone */
	{
		struct dpr_verbs_usage u, sum = { 0 };

		for (uint16_t pi = 0; pi < dpr_engine_n_ports(); pi++) {
			dpr_verbs_usage(dpr_engine_verbs(pi), &u);
			sum.pd += u.pd;
			sum.mr += u.mr;
			sum.cq += u.cq;
			sum.qp += u.qp;
		}
		rte_tel_data_add_dict_u64(d, "verbs_pds", sum.pd);
		rte_tel_data_add_dict_u64(d, "verbs_mrs", sum.mr);
		rte_tel_data_add_dict_u64(d, "verbs_cqs", sum.cq);
		rte_tel_data_add_dict_u64(d, "verbs_qps", sum.qp);
	}
	return 0;
}

static int
tel_clients(const char *cmd __rte_unused, const char *params __rte_unused,
	    struct rte_tel_data *d)
{
	unsigned int i;

	rte_tel_data_start_dict(d);
	for (i = 0; shim.started && i < shim.max_clients; i++) {
		const struct shim_client *c = shim.clients[i];
		struct rte_tel_data *e;
		char name[32];

		if (c == NULL)
			continue;
		e = rte_tel_data_alloc();
		if (e == NULL)
			break;
		rte_tel_data_start_dict(e);
		rte_tel_data_add_dict_int(e, "pid", c->pid);
		rte_tel_data_add_dict_u64(e, "worker", c->worker);
		rte_tel_data_add_dict_u64(e, "pds", c->n_pd);
		rte_tel_data_add_dict_u64(e, "mrs", c->n_mr);
		rte_tel_data_add_dict_u64(e, "mr_bytes", c->mr_bytes);
		rte_tel_data_add_dict_u64(e, "cqs", c->n_cq);
		rte_tel_data_add_dict_u64(e, "qps", c->n_qp);
		rte_tel_data_add_dict_u64(e, "requests", c->requests);
		rte_tel_data_add_dict_u64(e, "refused", c->refused);
		snprintf(name, sizeof(name), "%u", c->id);
		rte_tel_data_add_dict_container(d, name, e, 0);
	}
	return 0;
}

/*
 * One client's rings, as both sides left them: for each QP the indices of
 * its send and receive rings (what the client posted, what the daemon
 * took), for each CQ what the daemon produced and the client consumed.
 * A completion the daemon wrote but the program never polled shows as
 * cq prod > cons. Indices are read without stopping anyone: a snapshot.
 */
static int
tel_client(const char *cmd __rte_unused, const char *params,
	   struct rte_tel_data *d)
{
	const struct shim_client *c = NULL;
	struct rte_tel_data *qps, *cqs;
	unsigned long id;
	unsigned int i;
	char *end;

	if (params == NULL || *params == '\0')
		return -EINVAL;
	id = strtoul(params, &end, 10);
	if (*end != '\0')
		return -EINVAL;
	for (i = 0; shim.started && i < shim.max_clients; i++)
		if (shim.clients[i] != NULL && shim.clients[i]->id == id)
			c = shim.clients[i];
	if (c == NULL)
		return -ENOENT;
	qps = rte_tel_data_alloc();
	cqs = rte_tel_data_alloc();
	if (qps == NULL || cqs == NULL) {
		rte_tel_data_free(qps);
		rte_tel_data_free(cqs);
		return -ENOMEM;
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "pid", c->pid);
	rte_tel_data_add_dict_u64(d, "worker", c->worker);
	rte_tel_data_start_array(qps, RTE_TEL_STRING_VAL);
	rte_tel_data_start_array(cqs, RTE_TEL_STRING_VAL);
	for (i = 0; i < SHIM_MAX_OBJS; i++) {
		char line[160];

		if (c->obj[i].type == OBJ_QP) {
			const struct shim_qp *q = c->obj[i].p;

			snprintf(line, sizeof(line), "qpn 0x%06x sq %u/%u taken %" PRIu64
				 " rq %u/%u taken %" PRIu64 "%s",
				 q->qpn, __atomic_load_n(&q->sq->prod, __ATOMIC_RELAXED),
				 __atomic_load_n(&q->sq->cons, __ATOMIC_RELAXED),
				 q->send_wqes,
				 __atomic_load_n(&q->rq->prod, __ATOMIC_RELAXED),
				 __atomic_load_n(&q->rq->cons, __ATOMIC_RELAXED),
				 q->recv_wqes, q->broken ? " broken" : "");
			rte_tel_data_add_array_string(qps, line);
		} else if (c->obj[i].type == OBJ_CQ) {
			const struct shim_cq *q = c->obj[i].p;

			snprintf(line, sizeof(line), "cq %u cqe %u prod %u cons %u "
				 "armed %u%s", q->handle, q->cqe,
				 __atomic_load_n(&q->ring->prod, __ATOMIC_RELAXED),
				 __atomic_load_n(&q->ring->cons, __ATOMIC_RELAXED),
				 __atomic_load_n(&q->ring->armed, __ATOMIC_RELAXED),
				 q->overflowed ? " overflowed" : "");
			rte_tel_data_add_array_string(cqs, line);
		}
	}
	rte_tel_data_add_dict_container(d, "qps", qps, 0);
	rte_tel_data_add_dict_container(d, "cqs", cqs, 0);
	return 0;
}

void
dpr_shim_register_telemetry(void)
{
	rte_telemetry_register_cmd("/dprdma/shim/client", tel_client,
		"One client's QP and CQ rings: posted/taken, produced/consumed. "
		"Parameter: client id");
	rte_telemetry_register_cmd("/dprdma/shim/stats", tel_stats,
		"Verbs shim counters: clients, requests, refusals, WQEs, CQEs");
	rte_telemetry_register_cmd("/dprdma/shim/clients", tel_clients,
		"Connected clients: pid, worker, objects, registered bytes");
}
