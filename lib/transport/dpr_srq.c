/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Shared receive queues (IBA 10.2.9, rxe_srq.c and get_srq_wqe() in
 * rxe_resp.c): one ring of receive WQEs for several QPs of a transport.
 * A message takes its WQE when its first packet comes, copied into the
 * QP (rxe copies it too), so that the QPs interleave freely; the limit
 * event fires once when the WQEs left fall below the armed limit.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport_private.h"

struct dpr_srq *
dpr_srq_create(struct dpr_transport *tp, struct dpr_pd *pd, uint32_t max_wr,
	       uint32_t max_sge)
{
	const struct dpr_verbs_limits *lim = dpr_verbs_limits(tp->ctx);
	struct dpr_srq *q;
	uint32_t size, i;

	if (pd == NULL || max_wr == 0 || max_wr > lim->max_qp_wr ||
	    max_sge > RTE_MIN(lim->max_sge, (uint32_t)DPR_RECV_WR_MAX_SGE)) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return NULL;
	size = rte_align32pow2(max_wr);
	q->max_sge = max_sge ? max_sge : 1;
	q->wqe = calloc(size, sizeof(*q->wqe));
	q->sge = calloc((size_t)size * q->max_sge, sizeof(*q->sge));
	if (q->wqe == NULL || q->sge == NULL) {
		free(q->wqe);
		free(q->sge);
		free(q);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < size; i++)
		q->wqe[i].sge = &q->sge[(size_t)i * q->max_sge];
	q->tp = tp;
	q->pd = pd;
	q->size = max_wr;
	q->mask = size - 1;
	pd->refs++;
	return q;
}

int
dpr_srq_destroy(struct dpr_srq *q)
{
	if (q->users != 0)
		return -EBUSY;
	q->pd->refs--;
	free(q->wqe);
	free(q->sge);
	free(q);
	return 0;
}

int
dpr_srq_set_limit(struct dpr_srq *q, uint32_t limit)
{
	if (limit > q->size)
		return -EINVAL;
	q->limit = limit;
	return 0;
}

void
dpr_srq_query(const struct dpr_srq *q, uint32_t *max_wr, uint32_t *max_sge,
	      uint32_t *limit)
{
	*max_wr = q->size;
	*max_sge = q->max_sge;
	*limit = q->limit;
}

uint32_t
dpr_srq_count(const struct dpr_srq *q)
{
	return q->prod - q->cons;
}

void
dpr_srq_set_limit_cb(struct dpr_srq *q, void (*fn)(void *arg), void *arg)
{
	q->limit_cb = fn;
	q->limit_arg = arg;
}

void
dpr_srq_set_pull(struct dpr_srq *q, dpr_rq_pull_cb fn, void *arg)
{
	q->pull = fn;
	q->pull_arg = arg;
}

int
dpr_post_srq_recv(struct dpr_srq *q, const struct dpr_recv_wr *wrs,
		  unsigned int n, unsigned int *n_posted)
{
	unsigned int k;
	int rc = 0;

	for (k = 0; k < n; k++) {
		const struct dpr_recv_wr *wr = &wrs[k];

		if (wr->num_sge > q->max_sge) {
			rc = -EINVAL;
			break;
		}
		if (q->prod - q->cons >= q->size) {
			rc = -ENOMEM;
			break;
		}
		recv_wqe_fill(&q->wqe[q->prod & q->mask], wr);
		q->prod++;
	}
	if (n_posted != NULL)
		*n_posted = k;
	return rc;
}

void
dpr_srq_take(struct dpr_tqp *qp)
{
	struct dpr_srq *q = qp->srq;
	const struct dpr_recv_wqe *r = &q->wqe[q->cons & q->mask];
	uint32_t i;

	qp->srq_wqe.wr_id = r->wr_id;
	qp->srq_wqe.num_sge = r->num_sge;
	qp->srq_wqe.length = r->length;
	for (i = 0; i < r->num_sge; i++)
		qp->srq_sge[i] = r->sge[i];
	q->cons++;
	/* IBA 10.2.9.3: below the limit, once; the owner arms it again */
	if (q->limit != 0 && q->prod - q->cons < q->limit) {
		q->limit = 0;
		if (q->limit_cb != NULL)
			q->limit_cb(q->limit_arg);
	}
}
