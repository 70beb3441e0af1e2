/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Verbs objects. Keys and QP numbers index fixed tables (O(1) lookup);
 * freed slots go to the back of a FIFO so that a slot is reused as late as
 * possible.
 *
 * An MR key is the slot index + 1 in its low bits (as few as max_mr
 * needs: 15 for the default 16384) and random bits above it, drawn anew
 * on every registration and never the slot's previous key. rxe and mlx5
 * put the index high and draw only a key byte (index << 8 | byte), so a
 * peer that saw one key guesses a neighbour's with 1 chance in 256; here
 * it takes 2^17 guesses with the default limits (each wrong one costs the
 * guessing QP: a remote access error moves it to ERR). Peers treat keys
 * as opaque 32-bit values, so the layout is ours to choose.
 *
 * A QPN is laid out the same way in its 24 bits: the slot index in the
 * low bits (12 for the default 4096 QPs), random bits above it (never all
 * zero: QPNs 0 and 1 are the SMI's and the GSI's), drawn anew on every
 * creation and never the slot's previous QPN; and the slot itself is
 * drawn at random among the free ones. rxe and ConnectX hand out QPNs in
 * sequence, so a peer (or an off-path attacker, ReDMArk) that saw one
 * knows the next; here, with few QPs in use, the next QPN is any of
 * about 2^24. Lookup stays one array index and one compare.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bsd/stdlib.h>

#include "dpr_verbs.h"

/* the most QPs: at least one random bit above the index */
#define QP_MAX ((1u << 23) - 1)

/* A FIFO of free slot indexes. */
struct slot_fifo {
	uint32_t *slots;
	uint32_t cap, head, count;
};

struct dpr_verbs_ctx {
	struct dpr_verbs_limits lim;
	struct dpr_verbs_usage use;
	uint32_t next_handle;
	dpr_event_cb event_cb;
	void *event_arg;
	void (*mr_release)(struct dpr_mr *mr);
	struct dpr_mr **mrs;        /**< by key index */
	uint32_t *mr_keys;          /**< the last key each slot had */
	uint32_t mr_idx_bits;       /**< key bits holding the index (above
				     *   the key byte) */
	struct slot_fifo mr_free;
	struct dpr_qp_table qpt;    /**< QPs by QPN slot (its low bits) */
	uint32_t qp_idx_bits;       /**< low QPN bits holding the slot */
	void *gsi;                  /**< QP1, when the CM made it */
	struct slot_fifo qp_free;
	uint64_t mr_gen;            /**< MRs deregistered so far */
	uint64_t key_seed;          /**< 0: keys from arc4random() */
};

static int
fifo_init(struct slot_fifo *f, uint32_t n)
{
	uint32_t i;

	f->slots = calloc(n, sizeof(*f->slots));
	if (f->slots == NULL)
		return -1;
	f->cap = n;
	f->head = 0;
	f->count = n;
	for (i = 0; i < n; i++)
		f->slots[i] = i;
	return 0;
}

static bool
fifo_get(struct slot_fifo *f, uint32_t *slot)
{
	if (f->count == 0)
		return false;
	*slot = f->slots[f->head];
	f->head = (f->head + 1) % f->cap;
	f->count--;
	return true;
}

/* A free slot drawn at random (@p r): it changes places with the oldest. */
static bool
fifo_get_any(struct slot_fifo *f, uint32_t r, uint32_t *slot)
{
	uint32_t p;

	if (f->count == 0)
		return false;
	p = (f->head + r % f->count) % f->cap;
	*slot = f->slots[p];
	f->slots[p] = f->slots[f->head];
	f->head = (f->head + 1) % f->cap;
	f->count--;
	return true;
}

static void
fifo_put(struct slot_fifo *f, uint32_t slot)
{
	f->slots[(f->head + f->count) % f->cap] = slot;
	f->count++;
}

/* 32 random bits: arc4random(), or a seeded sequence (xorshift64*) where
 * a test's runs must draw the same keys and QPNs
 * (dpr_verbs_seed_keys()). */
static uint32_t
draw(struct dpr_verbs_ctx *ctx)
{
	if (ctx->key_seed == 0)
		return arc4random();
	ctx->key_seed ^= ctx->key_seed >> 12;
	ctx->key_seed ^= ctx->key_seed << 25;
	ctx->key_seed ^= ctx->key_seed >> 27;
	return (uint32_t)((ctx->key_seed * 2685821657736338717ULL) >> 32);
}

void
dpr_verbs_default_limits(struct dpr_verbs_limits *l)
{
	l->max_pd = 1024;
	l->max_mr = 16384;
	l->max_cq = 4096;
	l->max_qp = 4096;
	/* (libfabric's ofi_rxm asks for (384 + 384) x 256 = 196,608 by
	 * default; mlx5 takes 4M, rxe 32,767; both arrays are calloc'd
	 * and filled as completions come) */
	l->max_cqe = 1 << 20;
	l->max_qp_wr = 1 << 14;
	l->max_sge = DPR_WR_MAX_SGE;
	l->max_inline = DPR_WR_MAX_INLINE;
	/* as rxe (RXE_MAX_QP_RD_ATOM): perftest sets a QP's max_rd_atomic
	 * to what the *peer* can take, so a smaller limit here fails its
	 * READ and atomic tests against rxe at RTS */
	l->max_rd_atomic = 128;
	l->max_mr_size = 1ULL << 40;
}

struct dpr_verbs_ctx *
dpr_verbs_create(const struct dpr_verbs_limits *l)
{
	struct dpr_verbs_ctx *ctx = calloc(1, sizeof(*ctx));

	if (ctx == NULL)
		return NULL;
	if (l != NULL)
		ctx->lim = *l;
	else
		dpr_verbs_default_limits(&ctx->lim);
	/* key index: 24 bits above the key byte; QPN: 24 bits */
	if (ctx->lim.max_mr > (1u << 24) - 1)
		ctx->lim.max_mr = (1u << 24) - 1;
	if (ctx->lim.max_qp > QP_MAX)
		ctx->lim.max_qp = QP_MAX;
	while ((1u << ctx->mr_idx_bits) <= ctx->lim.max_mr)
		ctx->mr_idx_bits++;
	while ((1u << ctx->qp_idx_bits) <= ctx->lim.max_qp)
		ctx->qp_idx_bits++;
	ctx->mrs = calloc(ctx->lim.max_mr, sizeof(*ctx->mrs));
	ctx->mr_keys = calloc(ctx->lim.max_mr, sizeof(*ctx->mr_keys));
	ctx->qpt.slot = calloc(ctx->lim.max_qp, sizeof(*ctx->qpt.slot));
	ctx->qpt.idx_mask = (1u << ctx->qp_idx_bits) - 1;
	ctx->qpt.max = ctx->lim.max_qp;
	if (ctx->mrs == NULL || ctx->mr_keys == NULL || ctx->qpt.slot == NULL ||
	    fifo_init(&ctx->mr_free, ctx->lim.max_mr) != 0 ||
	    fifo_init(&ctx->qp_free, ctx->lim.max_qp) != 0) {
		dpr_verbs_destroy(ctx);
		return NULL;
	}
	ctx->next_handle = 1;
	return ctx;
}

void
dpr_verbs_destroy(struct dpr_verbs_ctx *ctx)
{
	if (ctx == NULL)
		return;
	free(ctx->mrs);
	free(ctx->mr_keys);
	free(ctx->qpt.slot);
	free(ctx->mr_free.slots);
	free(ctx->qp_free.slots);
	free(ctx);
}

const struct dpr_verbs_limits *
dpr_verbs_limits(const struct dpr_verbs_ctx *ctx)
{
	return &ctx->lim;
}

void
dpr_verbs_set_mr_release(struct dpr_verbs_ctx *ctx, void (*fn)(struct dpr_mr *))
{
	ctx->mr_release = fn;
}

void
dpr_verbs_set_event_cb(struct dpr_verbs_ctx *ctx, dpr_event_cb cb, void *arg)
{
	ctx->event_cb = cb;
	ctx->event_arg = arg;
}

void
dpr_verbs_event(struct dpr_verbs_ctx *ctx, enum dpr_event_type type,
		uint32_t obj_handle)
{
	if (ctx->event_cb != NULL)
		ctx->event_cb(ctx->event_arg, type, obj_handle);
}

void
dpr_verbs_usage(const struct dpr_verbs_ctx *ctx, struct dpr_verbs_usage *u)
{
	*u = ctx->use;
}

struct dpr_pd *
dpr_pd_alloc(struct dpr_verbs_ctx *ctx, uint32_t owner)
{
	struct dpr_pd *pd;

	if (ctx->use.pd >= ctx->lim.max_pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL)
		return NULL;
	pd->ctx = ctx;
	pd->handle = ctx->next_handle++;
	pd->owner = owner;
	ctx->use.pd++;
	return pd;
}

int
dpr_pd_dealloc(struct dpr_pd *pd)
{
	if (pd->refs != 0)
		return -EBUSY;
	pd->ctx->use.pd--;
	free(pd);
	return 0;
}

/*
 * A key for table slot @p slot: random bits, the slot + 1 above the low
 * 8, the key byte (IBA 10.6.7.2: a window's binder picks it; random for
 * the rest), never the slot's last key -- a key seen once in a slot is
 * not good again at once.
 */
static uint32_t
new_key(struct dpr_verbs_ctx *ctx, uint32_t slot)
{
	uint32_t key;

	do {
		uint32_t r = draw(ctx);

		key = (r & 0xff) | (slot + 1) << 8 |
			(ctx->mr_idx_bits + 8 < 32 ? (r >> 8) << (ctx->mr_idx_bits + 8) : 0);
	} while (key == ctx->mr_keys[slot]);
	ctx->mr_keys[slot] = key;
	return key;
}

static uint32_t
key_slot(const struct dpr_verbs_ctx *ctx, uint32_t key)
{
	return (key >> 8) & ((1u << ctx->mr_idx_bits) - 1);
}

/* A new MR or window of @p pd in a free slot of the key table, with its
 * key (rkey); NULL + errno ENOMEM when the table is full */
static struct dpr_mr *
key_slot_take(struct dpr_pd *pd)
{
	struct dpr_verbs_ctx *ctx = pd->ctx;
	struct dpr_mr *mr;
	uint32_t slot;

	if (!fifo_get(&ctx->mr_free, &slot)) {
		errno = ENOMEM;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL) {
		fifo_put(&ctx->mr_free, slot);
		return NULL;
	}
	mr->pd = pd;
	mr->index = slot;
	mr->rkey = new_key(ctx, slot);
	ctx->mrs[slot] = mr;
	pd->refs++;
	return mr;
}

struct dpr_mr *
dpr_mr_reg(struct dpr_pd *pd, void *addr, uint64_t iova, uint64_t length,
	   uint32_t access)
{
	return dpr_mr_reg_owned(pd, addr, iova, length, access, NULL);
}

/* IBA 10.6.3.1 (C10-53): remote write or atomic access requires local
 * write (rxe and mlx5 refuse the combination); a length and iova range
 * that fit. */
static bool
mr_args_ok(const struct dpr_verbs_ctx *ctx, const void *addr, uint64_t iova,
	   uint64_t length, uint32_t access)
{
	return (access & ~DPR_ACCESS_ALL) == 0 &&
	       (!(access & (DPR_ACCESS_REMOTE_WRITE | DPR_ACCESS_REMOTE_ATOMIC)) ||
		(access & DPR_ACCESS_LOCAL_WRITE)) &&
	       length != 0 && length <= ctx->lim.max_mr_size &&
	       iova + length >= iova && addr != NULL;
}

struct dpr_mr *
dpr_mr_reg_owned(struct dpr_pd *pd, void *addr, uint64_t iova, uint64_t length,
		 uint32_t access, const struct dpr_mr_owner *owner)
{
	struct dpr_verbs_ctx *ctx = pd->ctx;
	struct dpr_mr *mr;

	if (!mr_args_ok(ctx, addr, iova, length, access)) {
		errno = EINVAL;
		return NULL;
	}
	mr = key_slot_take(pd);
	if (mr == NULL)
		return NULL;
	mr->addr = addr;
	mr->iova = iova;
	mr->length = length;
	mr->access = access;
	if (owner != NULL)
		mr->owner = *owner;
	mr->lkey = mr->rkey;
	mr->valid = true;
	ctx->use.mr++;
	return mr;
}

/* @p mr invalid at once; its memory goes back to its owner once no frame
 * points into it. */
static void
mr_retire(struct dpr_verbs_ctx *ctx, struct dpr_mr *mr)
{
	mr->valid = false;
	/* every MR a cache holds is suspect from now on */
	__atomic_store_n(&ctx->mr_gen, ctx->mr_gen + 1, __ATOMIC_RELEASE);
	if (mr->priv != NULL && ctx->mr_release != NULL)
		ctx->mr_release(mr);       /* it calls the owner in the end */
	else if (mr->owner.release != NULL)
		mr->owner.release(mr->owner.arg);
}

struct dpr_mr *
dpr_mr_rereg(struct dpr_mr *old, struct dpr_pd *pd, void *addr, uint64_t iova,
	     uint64_t length, uint32_t access, const struct dpr_mr_owner *owner)
{
	struct dpr_verbs_ctx *ctx = old->pd->ctx;
	struct dpr_mr *mr;

	if (pd->ctx != ctx || !mr_args_ok(ctx, addr, iova, length, access)) {
		errno = EINVAL;
		return NULL;
	}
	/* windows bound to it hold it (as rxe, and IBA 10.6.7.2.5) */
	if (old->mw_bound != 0) {
		errno = EBUSY;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return NULL;
	*mr = (struct dpr_mr){
		.pd = pd, .addr = addr, .iova = iova, .length = length,
		.access = access, .index = old->index, .lkey = old->lkey,
		.rkey = old->rkey, .valid = true,
	};
	if (owner != NULL)
		mr->owner = *owner;
	mr_retire(ctx, old);
	ctx->mrs[mr->index] = mr;
	old->pd->refs--;
	pd->refs++;
	free(old);
	return mr;
}

int
dpr_mr_dereg(struct dpr_mr *mr)
{
	struct dpr_verbs_ctx *ctx = mr->pd->ctx;

	if (mr->mw_bound != 0)
		return -EBUSY;
	mr_retire(ctx, mr);
	ctx->mrs[mr->index] = NULL;
	fifo_put(&ctx->mr_free, mr->index);
	ctx->use.mr--;
	mr->pd->refs--;
	free(mr);
	return 0;
}

void
dpr_verbs_seed_keys(struct dpr_verbs_ctx *ctx, uint64_t seed)
{
	ctx->key_seed = seed;
}

const uint64_t *
dpr_verbs_mr_gen(const struct dpr_verbs_ctx *ctx)
{
	return &ctx->mr_gen;
}

/* What holds table slot of @p key (valid or not), or NULL */
static struct dpr_mr *
slot_of(struct dpr_verbs_ctx *ctx, uint32_t key)
{
	uint32_t idx = key_slot(ctx, key);

	if (idx == 0 || idx > ctx->lim.max_mr)
		return NULL;
	return ctx->mrs[idx - 1];
}

struct dpr_mr *
dpr_mr_lookup(struct dpr_verbs_ctx *ctx, uint32_t key)
{
	struct dpr_mr *mr = slot_of(ctx, key);

	/* (an MR's lkey is its rkey; a window has only the latter) */
	if (mr == NULL || mr->rkey != key || !mr->valid)
		return NULL;
	return mr;
}

struct dpr_mr *
dpr_mr_check(struct dpr_verbs_ctx *ctx, uint32_t key, const struct dpr_pd *pd,
	     uint32_t qpn, uint64_t iova, uint64_t len, uint32_t access)
{
	struct dpr_mr *mr = dpr_mr_lookup(ctx, key);

	if (mr == NULL || mr->pd != pd || (mr->access & access) != access)
		return NULL;
	/* a window is a remote key (IBA 10.6.7: never an lkey); a type 2
	 * window is its QP's alone */
	if (__builtin_expect(mr->mw_type != 0, 0) &&
	    (qpn == 0 || (mr->mw_type == 2 && mr->mw_qpn != qpn)))
		return NULL;
	return dpr_mr_covers(mr, iova, len) ? mr : NULL;
}

/* ------------------------------------------------------------ windows */

struct dpr_mr *
dpr_mw_alloc(struct dpr_pd *pd, uint32_t type)
{
	struct dpr_mr *mw;

	if (type != 1 && type != 2) {
		errno = EINVAL;
		return NULL;
	}
	mw = key_slot_take(pd);
	if (mw == NULL)
		return NULL;
	mw->mw_type = (uint8_t)type;
	pd->ctx->use.mw++;
	return mw;
}

/* @p mw bound no more: its key refused from now on, every cached check
 * of it suspect */
static void
mw_unbind(struct dpr_verbs_ctx *ctx, struct dpr_mr *mw)
{
	if (mw->parent != NULL)
		mw->parent->mw_bound--;
	mw->parent = NULL;
	mw->valid = false;
	mw->addr = NULL;
	mw->length = 0;
	mw->access = 0;
	mw->mw_qpn = 0;
	__atomic_store_n(&ctx->mr_gen, ctx->mr_gen + 1, __ATOMIC_RELEASE);
}

int
dpr_mw_dealloc(struct dpr_mr *mw)
{
	struct dpr_verbs_ctx *ctx = mw->pd->ctx;

	if (mw->mw_type == 0)
		return -EINVAL;
	mw_unbind(ctx, mw);
	ctx->mrs[mw->index] = NULL;
	fifo_put(&ctx->mr_free, mw->index);
	ctx->use.mw--;
	mw->pd->refs--;
	free(mw);
	return 0;
}

/* The window of key @p key: its slot holds a window whose key differs
 * at most in the key byte */
static struct dpr_mr *
mw_of(struct dpr_verbs_ctx *ctx, uint32_t key)
{
	struct dpr_mr *mw = slot_of(ctx, key);

	if (mw == NULL || mw->mw_type == 0 || ((mw->rkey ^ key) & ~0xffu) != 0)
		return NULL;
	return mw;
}

int
dpr_mw_bind(struct dpr_verbs_ctx *ctx, const struct dpr_pd *pd, uint32_t qpn,
	    const struct dpr_mw_bind *b)
{
	struct dpr_mr *mw = mw_of(ctx, b->mw_key), *mr;

	if (mw == NULL || mw->pd != pd || ((b->new_key ^ b->mw_key) & ~0xffu) != 0)
		return -EINVAL;
	/* a type 2 window is bound once, until invalidated (IBA
	 * 10.6.7.2.2); access bits a window can give */
	if ((mw->mw_type == 2 && mw->valid) ||
	    (b->access & ~(DPR_ACCESS_REMOTE | DPR_ACCESS_LOCAL_WRITE)) != 0)
		return -EINVAL;
	if (b->length == 0 && mw->mw_type == 1) {
		/* a type 1 window bound to nothing: unbound */
		mw_unbind(ctx, mw);
		mw->rkey = b->new_key;
		return 0;
	}
	mr = dpr_mr_lookup(ctx, b->mr_lkey);
	if (mr == NULL || mr->mw_type != 0 || mr->pd != pd ||
	    !(mr->access & DPR_ACCESS_MW_BIND) ||
	    ((b->access & (DPR_ACCESS_REMOTE_WRITE | DPR_ACCESS_REMOTE_ATOMIC)) &&
	     !(mr->access & DPR_ACCESS_LOCAL_WRITE)) ||
	    !dpr_mr_covers(mr, b->addr, b->length))
		return -EINVAL;
	mw_unbind(ctx, mw);             /* (a type 1 window bound again) */
	mw->parent = mr;
	mr->mw_bound++;
	mw->addr = dpr_mr_ptr(mr, b->addr);
	mw->iova = b->addr;
	mw->length = b->length;
	mw->access = b->access;
	mw->mw_qpn = mw->mw_type == 2 ? qpn : 0;
	mw->rkey = b->new_key;
	mw->valid = true;
	return 0;
}

int
dpr_mw_invalidate(struct dpr_verbs_ctx *ctx, uint32_t key,
		  const struct dpr_pd *pd, uint32_t qpn, bool remote)
{
	struct dpr_mr *mw = slot_of(ctx, key);

	/* only a bound type 2 window, by its whole key (type 1 windows are
	 * unbound by a bind of length 0; MRs are not invalidated: no fast
	 * registration here) */
	if (mw == NULL || mw->mw_type != 2 || mw->rkey != key || !mw->valid ||
	    mw->pd != pd || (remote && mw->mw_qpn != qpn))
		return -EINVAL;
	mw_unbind(ctx, mw);
	return 0;
}

struct dpr_cq *
dpr_cq_create(struct dpr_verbs_ctx *ctx, uint32_t cqe, uint32_t owner)
{
	struct dpr_cq *cq;
	uint32_t size = 1;

	if (cqe == 0 || cqe > ctx->lim.max_cqe) {
		errno = EINVAL;
		return NULL;
	}
	if (ctx->use.cq >= ctx->lim.max_cq) {
		errno = ENOMEM;
		return NULL;
	}
	while (size < cqe)
		size <<= 1;
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return NULL;
	cq->ring = calloc(size, sizeof(*cq->ring));
	if (cq->ring == NULL) {
		free(cq);
		return NULL;
	}
	cq->ctx = ctx;
	cq->handle = ctx->next_handle++;
	cq->owner = owner;
	cq->cqe = cqe;
	cq->mask = size - 1;
	ctx->use.cq++;
	return cq;
}

int
dpr_cq_destroy(struct dpr_cq *cq)
{
	if (cq->refs != 0)
		return -EBUSY;
	cq->ctx->use.cq--;
	free(cq->ring);
	free(cq);
	return 0;
}

int
dpr_cq_push(struct dpr_cq *cq, const struct dpr_cqe *e)
{
	if (cq->push != NULL)
		return cq->push(cq, e);
	/* the capacity asked for is what counts, as on a real device */
	if (cq->overflowed || cq->head - cq->tail >= cq->cqe) {
		if (!cq->overflowed) {
			cq->overflowed = true;
			dpr_verbs_event(cq->ctx, DPR_EVENT_CQ_ERR, cq->handle);
		}
		return -ENOSPC;
	}
	cq->ring[cq->head & cq->mask] = *e;
	cq->head++;
	return 0;
}

int
dpr_cq_poll(struct dpr_cq *cq, struct dpr_cqe *out, int n)
{
	int i;

	for (i = 0; i < n && cq->tail != cq->head; i++) {
		out[i] = cq->ring[cq->tail & cq->mask];
		cq->tail++;
	}
	return i;
}

int
dpr_qpn_alloc(struct dpr_verbs_ctx *ctx, void *obj, uint32_t *qpn)
{
	const uint32_t hi_max = (1u << (24 - ctx->qp_idx_bits)) - 1;
	uint32_t slot, q;

	if (*qpn == DPR_QPN_GSI) {
		if (ctx->gsi != NULL)
			return -EBUSY;
		ctx->gsi = obj;
		return 0;
	}
	if (!fifo_get_any(&ctx->qp_free, draw(ctx), &slot))
		return -ENOMEM;
	do {
		q = (1 + draw(ctx) % hi_max) << ctx->qp_idx_bits | slot;
	} while (q == ctx->qpt.slot[slot].qpn && hi_max > 1);
	ctx->qpt.slot[slot].qpn = q;
	ctx->qpt.slot[slot].qp = obj;
	ctx->use.qp++;
	*qpn = q;
	return 0;
}

void
dpr_qpn_free(struct dpr_verbs_ctx *ctx, uint32_t qpn)
{
	const uint32_t slot = qpn & ((1u << ctx->qp_idx_bits) - 1);

	if (qpn == DPR_QPN_GSI) {
		ctx->gsi = NULL;
		return;
	}
	if (slot >= ctx->lim.max_qp || ctx->qpt.slot[slot].qpn != qpn ||
	    ctx->qpt.slot[slot].qp == NULL)
		return;
	ctx->qpt.slot[slot].qp = NULL;
	fifo_put(&ctx->qp_free, slot);
	ctx->use.qp--;
}

uint32_t
dpr_qpn_slot(const struct dpr_verbs_ctx *ctx, uint32_t qpn)
{
	return qpn & ((1u << ctx->qp_idx_bits) - 1);
}

void *
dpr_qpn_lookup(struct dpr_verbs_ctx *ctx, uint32_t qpn)
{
	void *qp = dpr_qp_table_get(&ctx->qpt, qpn);

	if (__builtin_expect(qp == NULL && qpn == DPR_QPN_GSI, 0))
		return ctx->gsi;
	return qp;
}

const struct dpr_qp_table *
dpr_verbs_qp_table(const struct dpr_verbs_ctx *ctx)
{
	return &ctx->qpt;
}
