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
	/* what a client's QP costs here beyond the transport's part
	 * (/dprdma/transport/stats qp_bytes): its record */
	{
		uint64_t n = 0;

		pthread_mutex_lock(&shim.lock);
		for (unsigned int i = 0; shim.started && i < shim.max_clients; i++)
			if (shim.clients[i] != NULL)
				n += shim.clients[i]->n_qp;
		pthread_mutex_unlock(&shim.lock);
		rte_tel_data_add_dict_u64(d, "qp_bytes", n * sizeof(struct shim_qp));
	}
	return 0;
}

static int
tel_clients(const char *cmd __rte_unused, const char *params __rte_unused,
	    struct rte_tel_data *d)
{
	unsigned int i;

	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&shim.lock);
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
		rte_tel_data_add_dict_string(e, "comm", c->comm);
		rte_tel_data_add_dict_u64(e, "port", c->port);
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
	pthread_mutex_unlock(&shim.lock);
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
client_locked(const char *cmd __rte_unused, const char *params,
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
	for (i = 0; i < c->obj_hi; i++) {
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

static int
tel_client(const char *cmd, const char *params, struct rte_tel_data *d)
{
	int rc;

	pthread_mutex_lock(&shim.lock);
	rc = client_locked(cmd, params, d);
	pthread_mutex_unlock(&shim.lock);
	return rc;
}

static const char *
access_str(uint32_t a, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s%s",
		 a & DPR_ACCESS_LOCAL_WRITE ? "LW " : "",
		 a & DPR_ACCESS_REMOTE_WRITE ? "RW " : "",
		 a & DPR_ACCESS_REMOTE_READ ? "RR " : "",
		 a & DPR_ACCESS_REMOTE_ATOMIC ? "RA " : "", a ? "" : "-");
	if (len > 0 && buf[0] != '\0' && buf[strlen(buf) - 1] == ' ')
		buf[strlen(buf) - 1] = '\0';
	return buf;
}

/* One line of a listing: object @p h of client @p c. */
typedef void (*obj_line_fn)(const struct shim_client *c, unsigned int h,
			    char *line, size_t len);

/* Every client's objects of type @p t, one line each (at most one reply's
 * worth: 512 lines), read under the main lcore's lock. */
static int
list_objs(struct rte_tel_data *d, enum obj_type t, obj_line_fn fn)
{
	unsigned int i, h;

	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	pthread_mutex_lock(&shim.lock);
	for (i = 0; shim.started && i < shim.max_clients; i++) {
		const struct shim_client *c = shim.clients[i];

		for (h = 0; c != NULL && h < c->obj_hi; h++) {
			char line[RTE_TEL_MAX_STRING_LEN];

			if (c->obj[h].type != t)
				continue;
			fn(c, h, line, sizeof(line));
			if (rte_tel_data_add_array_string(d, line) != 0)
				goto full;
		}
	}
full:
	pthread_mutex_unlock(&shim.lock);
	return 0;
}

static void
mr_line(const struct shim_client *c, unsigned int h, char *line, size_t len)
{
	const struct shim_mr *m = c->obj[h].p;
	char acc[24];

	snprintf(line, len, "client %u pid %d dprdma%u mr %u lkey 0x%x rkey 0x%x "
		 "iova 0x%" PRIx64 " length %" PRIu64 " access %s", c->id,
		 (int)c->pid, c->port, h + 1, m->mr->lkey, m->mr->rkey, m->mr->iova,
		 m->length, access_str(m->mr->access, acc, sizeof(acc)));
}

/* /dprdma/shim/mrs: every client's memory regions, as `rdma resource show
 * mr` lists them: client, handle, keys, address, length, access. */
static int
tel_mrs(const char *cmd __rte_unused, const char *params __rte_unused,
	struct rte_tel_data *d)
{
	return list_objs(d, OBJ_MR, mr_line);
}

static void
pd_line(const struct shim_client *c, unsigned int h, char *line, size_t len)
{
	unsigned int k, mrs = 0, qps = 0;

	for (k = 0; k < c->obj_hi; k++) {
		if (c->obj[k].type == OBJ_MR &&
		    ((const struct shim_mr *)c->obj[k].p)->mr->pd == c->obj[h].p)
			mrs++;
		else if (c->obj[k].type == OBJ_QP &&
			 ((const struct shim_qp *)c->obj[k].p)->pd_handle == h + 1)
			qps++;
	}
	snprintf(line, len, "client %u pid %d dprdma%u pd %u mrs %u qps %u", c->id,
		 (int)c->pid, c->port, h + 1, mrs, qps);
}

/* /dprdma/shim/pds: every client's protection domains and what uses them. */
static int
tel_pds(const char *cmd __rte_unused, const char *params __rte_unused,
	struct rte_tel_data *d)
{
	return list_objs(d, OBJ_PD, pd_line);
}

/* The engine's /dprdma/qp asks who owns a QP: the client that made it. */
static int
qp_owner(uint16_t pi, uint32_t qpn, char *buf, size_t len)
{
	int rc = -ENOENT;

	pthread_mutex_lock(&shim.lock);
	for (unsigned int i = 0; rc != 0 && shim.started && i < shim.max_clients; i++) {
		const struct shim_client *c = shim.clients[i];

		for (unsigned int h = 0; c != NULL && c->port == pi &&
		     h < c->obj_hi; h++)
			if (c->obj[h].type == OBJ_QP &&
			    ((const struct shim_qp *)c->obj[h].p)->qpn == qpn) {
				snprintf(buf, len, "client %u (pid %d %s) qp handle %u",
					 c->id, (int)c->pid, c->comm, h + 1);
				rc = 0;
				break;
			}
	}
	pthread_mutex_unlock(&shim.lock);
	return rc;
}

static const struct dpr_counter_help shim_help[] = {
	{ "clients", "clients connected now (device contexts)" },
	{ "clients_connected", "clients that connected since the start" },
	{ "clients_closed", "clients that left or were dropped" },
	{ "requests", "verbs requests over the client socket (create, modify, destroy)" },
	{ "refused", "requests refused with an errno (the client saw the error)" },
	{ "bad_messages", "messages that were not the shim's protocol or version (answered EPROTO)" },
	{ "quota_refused", "clients refused: [control] max_clients connected already" },
	{ "limit_refused", "objects refused: a client's or the device's limit reached" },
	{ "send_wqes", "send work requests taken from clients' send rings" },
	{ "recv_wqes", "receive work requests taken from clients' receive rings" },
	{ "bad_wqes", "work requests the transport refused (completed in error)" },
	{ "ring_index_errors", "rings whose index a client corrupted (the QP is broken off)" },
	{ "doorbells", "doorbells taken from clients (one per QP per worker round at most): a QP's rings are then looked at every round until quiet, its client not ringing" },
	{ "doorbells_missed", "QPs with work found by the millisecond sweep, not by a doorbell (a post that raced the worker letting the QP go)" },
	{ "cqes", "completions written to clients' CQ rings" },
	{ "cq_overflows", "CQs a client did not poll fast enough (CQ_ERR, QPs to ERR)" },
	{ "channel_signals", "completion channel wake-ups sent" },
	{ "async_events", "asynchronous events raised to clients" },
	{ "verbs_pds", "protection domains alive, every device" },
	{ "verbs_mrs", "memory regions alive, every device" },
	{ "verbs_cqs", "completion queues alive, every device" },
	{ "verbs_qps", "QPs alive, every device (the CM's QP1 included)" },
	{ "qp_bytes", "the shim's memory for its clients' QPs (their records; the transport's is apart) (a gauge)" },
};

void
dpr_shim_register_telemetry(void)
{
	dpr_engine_counter_help("shim", shim_help, RTE_DIM(shim_help));
	rte_telemetry_register_cmd("/dprdma/shim/client", tel_client,
		"One client's QP and CQ rings: posted/taken, produced/consumed. "
		"Parameter: client id");
	rte_telemetry_register_cmd("/dprdma/shim/stats", tel_stats,
		"Verbs shim counters: clients, requests, refusals, WQEs, CQEs");
	rte_telemetry_register_cmd("/dprdma/shim/clients", tel_clients,
		"Connected clients: pid, worker, objects, registered bytes");
	rte_telemetry_register_cmd("/dprdma/shim/mrs", tel_mrs,
		"Every client's memory regions: keys, address, length, access");
	rte_telemetry_register_cmd("/dprdma/shim/pds", tel_pds,
		"Every client's protection domains, the MRs and QPs in each");
	dpr_engine_set_qp_owner(qp_owner);
}
