/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * A drop-in context: the verbs_context rdma-core's inline functions call
 * through, wired to the other rooms (queries in device.c, objects in
 * objects.c, the data path in datapath.c) -- the one room that knows them
 * all, so that none of them needs another.
 */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "dropin_private.h"

EXPORT struct ibv_context *
ibv_open_device(struct ibv_device *device)
{
	struct dv_context *d = calloc(1, sizeof(*d));
	struct ibv_context *ctx;

	if (d == NULL)
		return NULL;
	d->c = dprdma_open(DV(dv_device, device)->index);
	if (d->c == NULL) {
		int e = errno;

		free(d);
		errno = e;
		return NULL;
	}
	ctx = &d->vctx.context;
	ctx->device = device;
	ctx->cmd_fd = -1;
	/* async events: the eventfd the daemon counts them on */
	ctx->async_fd = dprdma_async_fd(d->c);
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->ops.poll_cq = dv_poll_cq;
	ctx->ops.req_notify_cq = dv_req_notify_cq;
	ctx->ops.post_send = dv_post_send;
	ctx->ops.post_recv = dv_post_recv;
	ctx->ops.post_srq_recv = dv_post_srq_recv;
	ctx->ops.alloc_mw = dv_alloc_mw;
	ctx->ops.dealloc_mw = dv_dealloc_mw;
	ctx->ops.bind_mw = dv_bind_mw;
	d->vctx.sz = sizeof(d->vctx);
	d->vctx.query_port = dv_query_port;
	d->vctx.query_device_ex = dv_query_device_ex;
	d->vctx.create_qp_ex = dv_create_qp_ex;
	d->vctx.create_srq_ex = dv_create_srq_ex;
	d->vctx.create_cq_ex = dv_create_cq_ex;
	return ctx;
}

EXPORT int
ibv_close_device(struct ibv_context *ctx)
{
	struct dv_context *d = dv_ctx(ctx);

	dprdma_close(d->c);
	pthread_mutex_destroy(&ctx->mutex);
	free(d);
	return 0;
}
