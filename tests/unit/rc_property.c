/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdma-rc-property: random RC traffic through a faulty link, every byte
 * and every completion checked.
 *
 *   dprdma-rc-property [--messages N] [--seed S] [--qps Q] [--max-size B]
 *                      [--loss P] [--reorder P] [--dup P] [--corrupt P]
 *                      [--zero-copy MIN] [--slow-only] [--trace FILE]
 *                      [--silent-after N | --dup-acks-after N] [--sr]
 *                      [--secure auth|encrypt] [--ce P [--no-cnp] [--react]]
 *
 * Messages mix every operation (SEND, SEND with immediate, WRITE, WRITE
 * with immediate, READ, CMP_SWAP, FETCH_ADD) with sizes log-uniform from
 * 0 B to --max-size, both ways over Q QPs, through loss, reordering,
 * duplication and corruption (which the ICRC must catch) on a virtual
 * clock. Checked: target bytes, completion order per QP, status, opcode,
 * byte count, immediate data, atomic results. A failure prints the seed to
 * replay. Defaults: 1% loss, 1% reorder, 0.1% dup, 0.1% corruption.
 *
 * Liveness, checked all along: a QP with send work outstanding makes
 * progress (a PSN acknowledged, a WQE completed) at least every
 * B = (retry_cnt + 1) x DPR_ACK_TIMEOUT_STRETCH x timeout (+ one timeout
 * of slack), or ends in error; so every send WQE completes, with success
 * or an error, within (PSNs and WQEs ahead of it + 1) x B of its posting.
 * (rnr_retry 7 retries for ever, IBA 9.7.5.2.8: no bound is owed there;
 * the traffic here posts every receive before its message, and a QP that
 * was RNR NAKed fails the run.) With --silent-after N side B dies once N
 * messages are done (sends and hears nothing); with --dup-acks-after N it
 * answers every request with an ACK of the same old PSN instead: nothing
 * new is posted then, and every message in flight must still complete,
 * with success, RETRY_EXC_ERR (the first failure of a QP) or WR_FLUSH_ERR
 * (the rest of it), within the same bounds.
 *
 * With --sr both transports speak selective repeat (dpr_sr.c): requests
 * past a gap are held and SACKed, only the holes sent again; everything
 * above holds as it does for go-back-N.
 *
 * With --ce P a share P of the frames is marked CE on the way: the
 * notification points see them and send CNPs, which the peers take
 * (counted), and nothing else changes; with --no-cnp too they only count
 * them ([congestion] notify = off) and no CNP is sent. With --react the
 * CNPs cut the senders' rates and their pacers hold them there (DCQCN's
 * reaction point, ConnectX's defaults but a line rate of 10 Gbit/s):
 * everything above holds, at least one cut is made and none without a
 * CNP taken.
 *
 * With --secure auth|encrypt every QP is a secure QP (dpr_secqp.c): each
 * frame sealed by its sender and opened by its receiver, retransmissions
 * sealed anew, corrupted frames caught by the ICRC first; everything
 * above holds, and the run fails unless every frame went sealed.
 *
 * The oracle of the fast path: --trace FILE writes every frame each side's
 * transport emits (its bytes' CRC and length) and every completion, in
 * order; the same run with --slow-only (every frame through the full parse
 * and the general builder) must write the same file, byte for byte
 * (tests/unit/rc_oracle.sh compares them).
 */

#include <getopt.h>
#include <sched.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

#include "dpr_sec.h"
#include "rc_harness.h"

#define SLOTS 4            /* messages in flight per QP and direction */

enum op { OP_SEND, OP_SEND_IMM, OP_WRITE, OP_WRITE_IMM, OP_READ, OP_CAS,
	  OP_FADD, OP_NUM };
static const char *const op_names[OP_NUM] = {
	"SEND", "SEND_IMM", "WRITE", "WRITE_IMM", "READ", "CMP_SWAP", "FETCH_ADD",
};

struct msg {
	uint64_t id;
	int op;
	uint32_t size;
	uint32_t slot;
	uint32_t pattern;
	uint64_t expect_orig;     /* atomics */
	uint64_t posted_at;       /* virtual ns */
	uint64_t deadline;        /* completed by then, or liveness is broken */
	bool send_done, recv_done, need_recv, send_failed;
};

struct dir {                   /* one QP, one direction */
	struct dpr_tqp *qp;        /* the requester's QP */
	struct dpr_tqp *peer;
	int from;
	struct msg slot[SLOTS];
	bool busy[SLOTS];
	uint64_t sq_order[SLOTS * 4], sq_head, sq_tail;   /* ids in post order */
	uint64_t rq_order[SLOTS * 4], rq_head, rq_tail;
	uint64_t atomic_val[SLOTS];
	uint32_t pmtu;
	/* liveness: what the requester looked like, and since when */
	uint32_t seen_comp_psn, seen_completed, seen_read_done;
	uint64_t progress_at;
	bool failed;               /* a send completed in error */
};

struct side_mrs {
	struct dpr_mr *src;        /* what this side sends / is read from */
	struct dpr_mr *dst;        /* where this side is written / reads into */
	struct dpr_mr *atom;       /* 8 bytes per direction and slot */
};

static struct rc_harness H;
static struct dir *dirs;
static struct side_mrs mrs[2];
static uint32_t n_qps = 4, max_size = 1 << 20;
static uint64_t seed = 1, n_msgs = 20000, posted, completed;
static uint64_t bytes_moved, per_op[OP_NUM];
/* liveness */
static uint64_t bound_ns;          /* B: longest a QP may go without progress */
static uint64_t worst_gap, worst_latency, worst_latency_bound;
static enum rc_peer break_mode;     /* what side B turns into, and when */
static uint64_t break_after = UINT64_MAX, broken_at;
static uint64_t failed_sends, flushed_sends, flushed_recvs, last_send_done;

static void dump(void);

#define FAIL(...) do { \
		dump(); \
		printf("FAIL (seed %" PRIu64 ", replay: dprdma-rc-property " \
		       "--seed %" PRIu64 " --messages %" PRIu64 " --qps %u " \
		       "--max-size %u): ", seed, seed, n_msgs, n_qps, max_size); \
		printf(__VA_ARGS__); \
		printf("\n"); \
		exit(1); \
	} while (0)

static uint64_t
region(const struct dir *d, uint32_t slot)
{
	return ((uint64_t)(d - dirs) * SLOTS + slot) * (uint64_t)max_size;
}

static void
pattern(uint8_t *p, uint32_t len, uint32_t seed32)
{
	uint64_t s = seed32 | 1;
	uint32_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t v = rc_rand(&s);

		memcpy(p + i, &v, 8);
	}
	for (; i < len; i++)
		p[i] = (uint8_t)rc_rand(&s);
}

static bool
check_pattern(const uint8_t *p, uint32_t len, uint32_t seed32)
{
	static uint8_t *tmp;

	if (tmp == NULL)
		tmp = malloc(max_size + 8);
	pattern(tmp, len, seed32);
	return memcmp(tmp, p, len) == 0;
}

static uint32_t
pick_size(int op)
{
	double bits;

	if (op == OP_CAS || op == OP_FADD)
		return 8;
	/* log-uniform over [0, max_size] */
	bits = rc_uniform(&H.rng) * log2((double)max_size + 1);
	return (uint32_t)(exp2(bits) - 1);
}

/* @p whole as two SGEs over the same bytes into @p sg, cut at a random
 * point inside the message's first @p size (at least 2) bytes: both
 * take bytes of it */
static void
split_sge(struct dpr_sge sg[2], struct dpr_sge whole, uint32_t size)
{
	uint32_t cut = 1 + (uint32_t)(rc_rand(&H.rng) % (size - 1));

	sg[0] = whole;
	sg[0].length = cut;
	sg[1] = whole;
	sg[1].addr += cut;
	sg[1].length = whole.length - cut;
}

static void
post_one(struct dir *d, uint32_t slot)
{
	struct side_mrs *me = &mrs[d->from], *peer = &mrs[!d->from];
	struct msg *m = &d->slot[slot];
	uint64_t off = region(d, slot);
	struct dpr_sge sge, rsge;
	struct dpr_send_wr wr;
	struct dpr_recv_wr rwr;
	uint32_t s;
	int rc;

	memset(m, 0, sizeof(*m));
	m->id = posted++;
	m->op = (int)(rc_rand(&H.rng) % OP_NUM);
	m->size = pick_size(m->op);
	m->slot = slot;
	m->pattern = (uint32_t)rc_rand(&H.rng);
	per_op[m->op]++;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = m->id;
	wr.send_flags = DPR_SEND_SIGNALED;
	wr.num_sge = 1;
	wr.imm_data = rte_cpu_to_be_32((uint32_t)m->id);
	sge.length = m->size;
	sge.lkey = me->src->lkey;
	sge.addr = me->src->iova + off;

	switch (m->op) {
	case OP_SEND:
	case OP_SEND_IMM:
	case OP_WRITE_IMM:
		/* the receive is posted before the message: no RNR here */
		rsge.addr = peer->dst->iova + off;
		rsge.length = max_size;
		rsge.lkey = peer->dst->lkey;
		memset(&rwr, 0, sizeof(rwr));
		rwr.wr_id = m->id;
		rwr.num_sge = m->op == OP_WRITE_IMM ? 0 : 1;
		rwr.sge[0] = rsge;
		/* a quarter of the SENDs into two SGEs over the same bytes
		 * (the receive fast path takes one SGE: these go the
		 * general way, and the oracle sees both) */
		if (m->op != OP_WRITE_IMM && m->size >= 2 && rc_rand(&H.rng) % 4 == 0) {
			rwr.num_sge = 2;
			split_sge(rwr.sge, rsge, m->size);
		}
		if (dpr_post_recv(d->peer, &rwr, 1, NULL) != 0)
			FAIL("post_recv");
		d->rq_order[d->rq_head++ % RTE_DIM(d->rq_order)] = m->id;
		m->need_recv = true;
		pattern(me->src->addr + off, m->size, m->pattern);
		if (m->op == OP_WRITE_IMM) {
			wr.opcode = DPR_WR_RDMA_WRITE_WITH_IMM;
			wr.remote_addr = peer->dst->iova + off;
			wr.rkey = peer->dst->rkey;
		} else {
			wr.opcode = m->op == OP_SEND ? DPR_WR_SEND : DPR_WR_SEND_WITH_IMM;
		}
		break;
	case OP_WRITE:
		pattern(me->src->addr + off, m->size, m->pattern);
		wr.opcode = DPR_WR_RDMA_WRITE;
		wr.remote_addr = peer->dst->iova + off;
		wr.rkey = peer->dst->rkey;
		break;
	case OP_READ:
		pattern(peer->src->addr + off, m->size, m->pattern);
		sge.addr = me->dst->iova + off;
		sge.lkey = me->dst->lkey;
		wr.opcode = DPR_WR_RDMA_READ;
		wr.remote_addr = peer->src->iova + off;
		wr.rkey = peer->src->rkey;
		break;
	default: {
		/* 8 bytes per slot at the start of the peer's region */
		uint64_t cur = d->atomic_val[slot];
		uint64_t arg = rc_rand(&H.rng);

		sge.addr = me->dst->iova + off;
		sge.lkey = me->dst->lkey;
		wr.remote_addr = peer->atom->iova +
			((uint64_t)(d - dirs) * SLOTS + slot) * 8;
		wr.rkey = peer->atom->rkey;
		m->expect_orig = cur;
		if (m->op == OP_CAS) {
			bool hit = rc_rand(&H.rng) % 2;

			wr.opcode = DPR_WR_ATOMIC_CMP_AND_SWP;
			wr.compare_add = hit ? cur : cur + 1;
			wr.swap = arg;
			d->atomic_val[slot] = hit ? arg : cur;
		} else {
			wr.opcode = DPR_WR_ATOMIC_FETCH_AND_ADD;
			wr.compare_add = arg;
			d->atomic_val[slot] = cur + arg;
		}
		break;
	}
	}
	wr.sge[0] = sge;
	if (m->op == OP_SEND || m->op == OP_SEND_IMM || m->op == OP_WRITE ||
	    m->op == OP_WRITE_IMM) {
		/* the payload's other forms, drawn for every such message
		 * (the fast path takes some, the general way the rest):
		 * inline bytes (up to the QP's 64), or two SGEs over the same
		 * bytes */
		uint32_t form = (uint32_t)(rc_rand(&H.rng) % 8);

		if (form == 0 && m->size <= 64) {
			wr.send_flags |= DPR_SEND_INLINE;
			wr.num_sge = m->size;
			memcpy(wr.inline_data, me->src->addr + off, m->size);
		} else if (form == 1 && m->size >= 2) {
			wr.num_sge = 2;
			split_sge(wr.sge, sge, m->size);
		}
	}
	rc = dpr_post_send(d->qp, &wr, 1, NULL);
	if (rc != 0)
		FAIL("post_send: %d", rc);
	d->sq_order[d->sq_head++ % RTE_DIM(d->sq_order)] = m->id;
	d->busy[slot] = true;
	/* every progress event moves one PSN or one WQE: those of the
	 * messages ahead of it on this QP and its own, and one more B */
	{
		uint64_t steps = 2;

		for (s = 0; s < SLOTS; s++)
			if (d->busy[s])
				steps += 1 + (d->slot[s].op == OP_CAS ||
					      d->slot[s].op == OP_FADD ? 1 :
					      (d->slot[s].size + d->pmtu - 1) / d->pmtu + 1);
		m->posted_at = H.now;
		m->deadline = H.now + steps * bound_ns;
	}
}

static struct dir *
dir_of(struct dpr_tqp *const *qps, uint32_t qpn, int side, bool requester)
{
	uint32_t i;

	for (i = 0; i < 2 * n_qps; i++) {
		struct dpr_tqp *q = requester ? dirs[i].qp : dirs[i].peer;

		if (dirs[i].from == (requester ? side : !side) &&
		    dpr_qp_num(q) == qpn)
			return &dirs[i];
	}
	(void)qps;
	return NULL;
}

static struct msg *
find(struct dir *d, uint64_t id)
{
	uint32_t s;

	for (s = 0; s < SLOTS; s++)
		if (d->busy[s] && d->slot[s].id == id)
			return &d->slot[s];
	return NULL;
}

static void
finish(struct dir *d, struct msg *m)
{
	uint64_t took = H.now - m->posted_at;

	/* a message whose send failed is done: its receive (if any) waits
	 * on the peer's QP, which flushes it when that QP fails, or never
	 * if it has no send work of its own to find the silence with */
	if (!m->send_done || (m->need_recv && !m->recv_done && !m->send_failed))
		return;
	if (took > worst_latency) {
		worst_latency = took;
		worst_latency_bound = m->deadline - m->posted_at;
	}
	d->busy[m->slot] = false;
	completed++;
	if (!m->send_failed)
		bytes_moved += m->size;
}

static void
dump_qp(const char *what, struct dpr_tqp *qp)
{
	struct dpr_qp_info q;

	dpr_qp_info(qp, &q);
	printf("  %s QP %u -> %u %s: sq %u posted %u started %u completed, "
	       "psn req %u hi %u comp %u, retry %u/%u%s%s%s, timer %s %" PRIu64
	       " ns, head op %u state %u psn %u..%u len %u off %u read %u; "
	       "resp psn %u msn %u; retransmits %" PRIu64 " timeouts %" PRIu64
	       " dup responses %" PRIu64 "\n", what, q.qpn, q.dest_qpn,
	       dpr_qp_state_name(q.state), q.sq_posted, q.sq_started,
	       q.sq_completed, q.req_psn, q.psn_hi, q.comp_psn, q.retry_left,
	       q.retry_cnt, q.rnr_wait ? " rnr-wait" : "",
	       q.retried ? " retried" : "", q.replaying ? " replaying" : "",
	       q.timer_armed ? "armed" : "off", q.timer_left_ns, q.head.opcode,
	       q.head.state, q.head.first_psn, q.head.last_psn, q.head.length,
	       q.head.offset, q.head.read_done, q.resp_psn, q.resp_msn,
	       q.stats.retransmits, q.stats.local_ack_timeouts,
	       q.stats.dup_response_rx);
}

/*
 * The liveness invariant: each requester with send work outstanding has
 * made progress within bound_ns, and no message is past its deadline.
 */
static void
check_liveness(void)
{
	uint32_t i, s;

	for (i = 0; i < 2 * n_qps; i++) {
		struct dir *d = &dirs[i];
		struct dpr_qp_info q;
		uint64_t gap;

		dpr_qp_info(d->qp, &q);
		if (q.stats.rnr_nak_rx != 0 && q.rnr_retry == 7)
			FAIL("QP %u was RNR NAKed: with rnr_retry 7 no bound holds, and "
			     "this traffic posts every receive first", q.qpn);
		if (q.sq_completed == q.sq_posted || q.comp_psn != d->seen_comp_psn ||
		    q.sq_completed != d->seen_completed ||
		    q.head.read_done != d->seen_read_done) {
			d->seen_comp_psn = q.comp_psn;
			d->seen_completed = q.sq_completed;
			d->seen_read_done = q.head.read_done;
			d->progress_at = H.now;
			continue;
		}
		gap = H.now - d->progress_at;
		if (gap > worst_gap)
			worst_gap = gap;
		if (gap > bound_ns) {
			dump_qp("stalled", d->qp);
			dump_qp("its peer", d->peer);
			FAIL("liveness: side %c QP %u has had send work outstanding "
			     "without progress for %.3f ms, over the bound of %.3f ms",
			     'A' + d->from, q.qpn, gap / 1e6, bound_ns / 1e6);
		}
		for (s = 0; s < SLOTS; s++)
			if (d->busy[s] && !d->slot[s].send_done &&
			    H.now > d->slot[s].deadline) {
				dump_qp("late", d->qp);
				FAIL("liveness: message %" PRIu64 " (%s, %u B) posted at "
				     "%.3f ms not completed by its bound %.3f ms later",
				     d->slot[s].id, op_names[d->slot[s].op],
				     d->slot[s].size, d->slot[s].posted_at / 1e6,
				     (d->slot[s].deadline - d->slot[s].posted_at) / 1e6);
			}
	}
}

static void
on_send_cqe(int side, const struct dpr_cqe *c)
{
	struct dir *d = dir_of(NULL, c->qp_num, side, true);
	uint64_t want;
	struct msg *m;
	uint64_t off;

	if (d == NULL)
		FAIL("send completion for unknown QP %u", c->qp_num);
	want = d->sq_order[d->sq_tail++ % RTE_DIM(d->sq_order)];
	if (c->wr_id != want)
		FAIL("side %d QP %u: completion %" PRIu64 " out of order (expected %"
		     PRIu64 ")", side, c->qp_num, c->wr_id, want);
	m = find(d, c->wr_id);
	if (m == NULL)
		FAIL("completion for message %" PRIu64 " not in flight", c->wr_id);
	if (c->status != DPR_WC_SUCCESS) {
		/* only once side B is broken: the first failure of a QP is
		 * its retries running out, every later WQE is flushed */
		if (broken_at == 0 ||
		    c->status != (d->failed ? DPR_WC_WR_FLUSH_ERR : DPR_WC_RETRY_EXC_ERR))
			FAIL("message %" PRIu64 " (%s, %u B) completed with status %u",
			     m->id, op_names[m->op], m->size, c->status);
		if (d->failed)
			flushed_sends++;
		else
			failed_sends++;
		d->failed = true;
		last_send_done = H.now;
		m->send_done = m->send_failed = true;
		finish(d, m);
		return;
	}
	off = region(d, m->slot);
	switch (m->op) {
	case OP_WRITE:
	case OP_WRITE_IMM:
		if (c->opcode != DPR_WC_RDMA_WRITE || c->byte_len != m->size)
			FAIL("WRITE %" PRIu64 ": opcode %u len %u", m->id, c->opcode,
			     c->byte_len);
		/* acknowledged: the bytes are at the target */
		if (!check_pattern(mrs[!side].dst->addr + off, m->size, m->pattern))
			FAIL("WRITE %" PRIu64 " of %u B: target bytes differ", m->id,
			     m->size);
		break;
	case OP_READ:
		if (c->opcode != DPR_WC_RDMA_READ || c->byte_len != m->size)
			FAIL("READ %" PRIu64 ": opcode %u len %u", m->id, c->opcode,
			     c->byte_len);
		if (!check_pattern(mrs[side].dst->addr + off, m->size, m->pattern))
			FAIL("READ %" PRIu64 " of %u B: bytes differ", m->id, m->size);
		break;
	case OP_CAS:
	case OP_FADD: {
		uint64_t got;

		memcpy(&got, mrs[side].dst->addr + off, 8);
		if (c->opcode != (m->op == OP_CAS ? DPR_WC_COMP_SWAP : DPR_WC_FETCH_ADD))
			FAIL("atomic %" PRIu64 ": opcode %u", m->id, c->opcode);
		if (got != m->expect_orig)
			FAIL("atomic %" PRIu64 ": original %" PRIx64 ", expected %" PRIx64
			     " (executed twice?)", m->id, got, m->expect_orig);
		break;
	}
	default:
		if (c->opcode != DPR_WC_SEND || c->byte_len != m->size)
			FAIL("SEND %" PRIu64 ": opcode %u len %u", m->id, c->opcode,
			     c->byte_len);
	}
	m->send_done = true;
	finish(d, m);
}

static void
on_recv_cqe(int side, const struct dpr_cqe *c)
{
	struct dir *d = dir_of(NULL, c->qp_num, side, false);
	uint64_t want;
	struct msg *m;

	if (d == NULL)
		FAIL("receive completion for unknown QP %u", c->qp_num);
	want = d->rq_order[d->rq_tail++ % RTE_DIM(d->rq_order)];
	if (c->wr_id != want)
		FAIL("receive %" PRIu64 " out of order (expected %" PRIu64 ")",
		     c->wr_id, want);
	if (c->status == DPR_WC_WR_FLUSH_ERR && broken_at != 0) {
		/* the receiving QP failed (its own sends ran out of retries)
		 * after side B broke: the message never arrived, and its send
		 * fails too, if it has not already */
		flushed_recvs++;
		m = find(d, c->wr_id);
		if (m != NULL) {
			m->recv_done = true;
			finish(d, m);
		}
		return;
	}
	m = find(d, c->wr_id);
	if (m == NULL || c->status != DPR_WC_SUCCESS)
		FAIL("receive %" PRIu64 ": status %u", c->wr_id, c->status);
	if (c->byte_len != m->size)
		FAIL("receive %" PRIu64 " (%s): %u bytes, sent %u", m->id,
		     op_names[m->op], c->byte_len, m->size);
	if (m->op == OP_WRITE_IMM) {
		if (c->opcode != DPR_WC_RECV_RDMA_WITH_IMM)
			FAIL("WRITE_IMM %" PRIu64 ": opcode %u", m->id, c->opcode);
	} else {
		if (c->opcode != DPR_WC_RECV)
			FAIL("SEND %" PRIu64 ": receive opcode %u", m->id, c->opcode);
		if (!check_pattern(mrs[side].dst->addr + region(d, m->slot), m->size,
				   m->pattern))
			FAIL("SEND %" PRIu64 " of %u B: received bytes differ", m->id,
			     m->size);
	}
	if ((m->op != OP_SEND) != !!(c->wc_flags & DPR_WC_WITH_IMM) ||
	    (m->op != OP_SEND && rte_be_to_cpu_32(c->imm_data) != (uint32_t)m->id))
		FAIL("message %" PRIu64 ": immediate data", m->id);
	m->recv_done = true;
	finish(d, m);
}

static FILE *trace;

static void
trace_cqe(int side, const char *cq, const struct dpr_cqe *c)
{
	if (trace != NULL)
		fprintf(trace, "%" PRIu64 " cqe %c %s qp %u wr %" PRIu64
			" status %u op %u len %u imm %08x flags %x\n", H.now,
			'A' + side, cq, c->qp_num, c->wr_id, c->status, c->opcode,
			c->byte_len, c->imm_data, c->wc_flags);
}

/* Every frame a transport emits: its bytes, segment by segment. */
static void
trace_frame(void *arg __rte_unused, int side, const struct rte_mbuf *m)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const struct rte_mbuf *s;
	uint32_t i;

	/* A hash of the bytes however they are split (the general way's
	 * chains against the fast path's one segment): FNV-1a. Not a
	 * CRC-32: a frame ends in the CRC-32 of the bytes before it (the
	 * ICRC), so a CRC-32 of the whole frame is the same whatever those
	 * bytes are, and would see only the ones the ICRC leaves out. */
	for (s = m; s != NULL; s = s->next) {
		const uint8_t *p = rte_pktmbuf_mtod(s, const uint8_t *);

		for (i = 0; i < rte_pktmbuf_data_len(s); i++)
			h = (h ^ p[i]) * 0x100000001b3ull;
	}
	fprintf(trace, "%" PRIu64 " tx %c len %u hash %016" PRIx64 "\n", H.now,
		'A' + side, rte_pktmbuf_pkt_len(m), h);
}

static void
drain_cqs(void)
{
	struct dpr_cqe c[64];
	int side, n, i;

	for (side = 0; side < 2; side++) {
		while ((n = dpr_cq_poll(H.side[side].scq, c, 64)) > 0)
			for (i = 0; i < n; i++) {
				trace_cqe(side, "send", &c[i]);
				on_send_cqe(side, &c[i]);
			}
		while ((n = dpr_cq_poll(H.side[side].rcq, c, 64)) > 0)
			for (i = 0; i < n; i++) {
				trace_cqe(side, "recv", &c[i]);
				on_recv_cqe(side, &c[i]);
			}
	}
}

static void
dump(void)
{
	int side, k;

	for (side = 0; side < 2; side++) {
		const struct dpr_transport_stats *st = dpr_transport_stats(H.side[side].tp);

		printf("  side %c:", 'A' + side);
#define _(n) if (st->n) printf(" %s %" PRIu64, #n, st->n);
		DPR_TRANSPORT_STATS(_)
#undef _
		printf("\n  events:");
		for (k = 0; k < 8; k++)
			if (H.side[side].events[k])
				printf(" %d:%u", k, H.side[side].events[k]);
		printf("\n");
	}
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "messages", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "qps", required_argument, NULL, 'q' },
		{ "max-size", required_argument, NULL, 'm' },
		{ "loss", required_argument, NULL, 'l' },
		{ "reorder", required_argument, NULL, 'r' },
		{ "dup", required_argument, NULL, 'd' },
		{ "corrupt", required_argument, NULL, 'c' },
		{ "zero-copy", required_argument, NULL, 'z' },
		{ "slow-only", no_argument, NULL, 'w' },
		{ "ipv6", no_argument, NULL, '6' },
		{ "trace", required_argument, NULL, 't' },
		{ "silent-after", required_argument, NULL, 'S' },
		{ "dup-acks-after", required_argument, NULL, 'D' },
		{ "rto-min-us", required_argument, NULL, 'R' },
		{ "sr", no_argument, NULL, 'P' },
		{ "secure", required_argument, NULL, 'E' },
		{ "ce", required_argument, NULL, 'C' },
		{ "no-cnp", no_argument, NULL, 'N' },
		{ "react", no_argument, NULL, 'K' },
		{ NULL, 0, NULL, 0 },
	};
	struct dpr_cc_params cc;
	struct rc_faults f = { .loss = 0.01, .reorder = 0.01, .dup = 0.001,
			       .corrupt = 0.001, .delay_ns = 2000 };
	char prefix[64];
	cpu_set_t cpus;
	char *eal[] = { argv[0], (char *)"-l", (char *)"0", (char *)"--no-pci",
		(char *)"--no-huge", (char *)"-m", (char *)"512",
		(char *)"--no-shconf", (char *)"--file-prefix", prefix,
		(char *)"--log-level", (char *)"*:warning",
		(char *)"--no-telemetry", NULL };
	struct rte_mempool *pool;
	struct timespec t0, t1;
	uint64_t last_progress = 0, stall_at = 0;
	uint32_t i, s;
	int opt, k, side;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'n': n_msgs = strtoull(optarg, NULL, 0); break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'q': n_qps = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'm': max_size = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'l': f.loss = atof(optarg); break;
		case 'r': f.reorder = atof(optarg); break;
		case 'd': f.dup = atof(optarg); break;
		case 'c': f.corrupt = atof(optarg); break;
		case 'z': f.zero_copy_min = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'w': f.slow_only = true; break;
		case 'P': f.sr = DPR_SR_ON; break;
		case 'E':
			f.sec_mode = strcmp(optarg, "encrypt") == 0 ? DPR_SEC_ENCRYPT :
				strcmp(optarg, "auth") == 0 ? DPR_SEC_AUTH : 0;
			if (f.sec_mode == 0) {
				fprintf(stderr, "--secure auth or --secure encrypt\n");
				return 2;
			}
			break;
		case '6': f.ipv6 = true; break;
		case 'C': f.ce = atof(optarg); break;
		case 'N': f.no_cnp = true; break;
		case 'K':
			dpr_cc_defaults(&cc);
			cc.line_rate_bps = 10000000000ull;
			f.cc = &cc;
			break;
		case 't':
			trace = fopen(optarg, "w");
			if (trace == NULL) {
				perror(optarg);
				return 2;
			}
			break;
		case 'S':
			break_mode = RC_PEER_SILENT;
			break_after = strtoull(optarg, NULL, 0);
			break;
		case 'D':
			break_mode = RC_PEER_DUP_ACK;
			break_after = strtoull(optarg, NULL, 0);
			break;
		case 'R': {
			unsigned long us = strtoul(optarg, NULL, 0);

			f.rto_min_ns = us == 0 ? UINT32_MAX : (uint32_t)(us * 1000);
			break;
		}
		default:
			fprintf(stderr, "usage: see the top of tests/unit/rc_property.c\n");
			return 2;
		}
	}
	if (n_qps == 0 || n_qps > 64 || max_size < 8 || max_size > (64u << 20)) {
		fprintf(stderr, "--qps 1..64, --max-size 8..64 MiB\n");
		return 2;
	}
	snprintf(prefix, sizeof(prefix), "dpr-prop-%d", (int)getpid());
	if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0)
		CPU_ZERO(&cpus);
	if (rte_eal_init(RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	/* -l 0 pinned this thread to CPU 0; the run is one thread on virtual
	 * time, so give it back every CPU it had: runs side by side (the unit
	 * suite runs them in parallel) then do not share one core */
	if (CPU_COUNT(&cpus) > 0)
		rte_thread_set_affinity(&cpus);
	pool = rte_pktmbuf_pool_create("prop", 65535, 256, 0,
				       RTE_PKTMBUF_HEADROOM + 4096 + 256,
				       SOCKET_ID_ANY);
	if (pool == NULL || rc_harness_init(&H, pool, seed, &f) != 0) {
		fprintf(stderr, "set-up failed\n");
		return 1;
	}
	if (trace != NULL)
		H.trace_tx = trace_frame;
	dirs = calloc(2 * n_qps, sizeof(*dirs));
	for (i = 0; i < n_qps; i++) {
		struct rc_conn c;
		struct dpr_tqp *a, *b;

		rc_conn_defaults(&c);
		/* path MTUs vary by QP; PSNs start near the wrap on some */
		c.mtu = (enum dpr_mtu)(DPR_MTU_1024 + i % 3);
		c.psn[0] = (uint32_t)rc_rand(&H.rng) & DPR_PSN_MASK;
		c.psn[1] = i % 2 ? 0xffffff - (uint32_t)(rc_rand(&H.rng) % 4096) :
			(uint32_t)rc_rand(&H.rng) & DPR_PSN_MASK;
		c.timeout = 8;             /* 1 ms */
		c.rd_atomic = SLOTS;
		if (rc_connect(&H, &c, &a, &b) != 0) {
			fprintf(stderr, "connect failed\n");
			return 1;
		}
		dirs[2 * i] = (struct dir){ .qp = a, .peer = b, .from = 0,
					    .pmtu = 256u << c.mtu };
		dirs[2 * i + 1] = (struct dir){ .qp = b, .peer = a, .from = 1,
						.pmtu = 256u << c.mtu };
		/* B, from the QPs' own attributes: one timeout of slack for
		 * the last frame of an attempt to go out */
		bound_ns = ((uint64_t)c.retry_cnt + 1) * DPR_ACK_TIMEOUT_STRETCH *
			(4096ull << c.timeout) + (4096ull << c.timeout);
		if (c.rnr_retry != 7)    /* 655.36 ms: the longest RNR timer */
			bound_ns += ((uint64_t)c.rnr_retry + 1) *
				(655360000ull + DPR_ACK_TIMEOUT_STRETCH *
				 (4096ull << c.timeout));
	}
	for (side = 0; side < 2; side++) {
		uint64_t len = (uint64_t)2 * n_qps * SLOTS * max_size;

		mrs[side].src = rc_mr(&H, side, len, DPR_ACCESS_ALL);
		mrs[side].dst = rc_mr(&H, side, len, DPR_ACCESS_ALL);
		mrs[side].atom = rc_mr(&H, side, (uint64_t)2 * n_qps * SLOTS * 8,
				       DPR_ACCESS_ALL);
		if (mrs[side].src == NULL || mrs[side].dst == NULL ||
		    mrs[side].atom == NULL) {
			fprintf(stderr, "no memory for %" PRIu64 " MiB of MRs\n",
				len >> 19);
			return 1;
		}
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (broken_at != 0 ? completed < posted : completed < n_msgs) {
		uint64_t before = H.now;

		if (broken_at == 0 && completed >= break_after) {
			/* side B dies, or turns into a duplicate-ACK machine that
			 * repeats itself four times a timeout: each of them would
			 * restart an ACK timer that any response restarts */
			broken_at = H.now;
			H.dup_ack_period_ns = bound_ns / ((uint64_t)4 * 8 *
				DPR_ACK_TIMEOUT_STRETCH);
			rc_peer_mode(&H, 1, break_mode);
		}
		for (i = 0; broken_at == 0 && i < 2 * n_qps && posted < n_msgs; i++)
			for (s = 0; s < SLOTS && posted < n_msgs; s++)
				if (!dirs[i].busy[s] && rc_rand(&H.rng) % 4 == 0)
					post_one(&dirs[i], s);
		rc_step(&H);
		drain_cqs();
		if (H.now != before)
			check_liveness();
		if (completed != last_progress) {
			last_progress = completed;
			stall_at = H.now;
		} else if (H.now - stall_at > 10ull * 1000000000ull) {
			FAIL("no completion for 10 s of virtual time at %" PRIu64
			     " of %" PRIu64 " messages", completed, n_msgs);
		}
	}
	rc_settle(&H, 1000000000ull);
	drain_cqs();
	for (side = 0; side < 2; side++)
		if (dpr_cq_count(H.side[side].scq) || dpr_cq_count(H.side[side].rcq))
			FAIL("completions left over");
	for (i = 0; i < 2 * n_qps; i++) {
		enum dpr_qp_state st = dpr_qp_get_state(dirs[i].qp);

		if (broken_at == 0 ? st != DPR_QPS_RTS :
		    dirs[i].failed != (st == DPR_QPS_ERR))
			FAIL("side %c QP %u in %s after %s", 'A' + dirs[i].from,
			     dpr_qp_num(dirs[i].qp), dpr_qp_state_name(st),
			     dirs[i].failed ? "a failed send" : "no failure");
	}
	if (broken_at != 0 && failed_sends == 0)
		FAIL("side B broke, yet no send ran out of retries");
	{
		uint64_t all = 0;

		for (k = 0; k < K_NUM; k++)
			all += H.frames[0][k] + H.frames[1][k];
		if (f.ipv6 && H.ipv6_frames != all)
			FAIL("--ipv6: %" PRIu64 " of %" PRIu64 " frames over IPv6",
			     H.ipv6_frames, all);
		if (!f.ipv6 && H.ipv6_frames != 0)
			FAIL("%" PRIu64 " frames over IPv6 without --ipv6", H.ipv6_frames);
		{
			/* --ce: every frame marked CE was seen (ce_rx, but
			 * for those lost), the notification points answered
			 * with CNPs, no more than one per CE frame, and the
			 * peers took the CNPs that were not lost */
			const struct dpr_transport_stats *a =
				dpr_transport_stats(H.side[0].tp);
			const struct dpr_transport_stats *b =
				dpr_transport_stats(H.side[1].tp);
			const uint64_t marked = H.ce_marked[0] + H.ce_marked[1];
			const uint64_t ce = a->ce_rx + b->ce_rx;
			const uint64_t tx = a->cnp_tx + b->cnp_tx;
			const uint64_t rx = a->cnp_rx + b->cnp_rx;

			if (f.ce == 0 ? (ce | tx | rx) != 0 :
			    f.no_cnp ? ce == 0 || ce > marked || (tx | rx) != 0 :
			    ce == 0 || ce > marked || tx == 0 || tx > ce ||
			    rx == 0 || rx > tx)
				FAIL("--ce %g: %" PRIu64 " frames marked CE, %" PRIu64
				     " seen, %" PRIu64 " CNPs sent, %" PRIu64 " taken",
				     f.ce, marked, ce, tx, rx);
			if (f.ce != 0)
				printf("  CE: %" PRIu64 " frames marked, %" PRIu64
				       " seen, %" PRIu64 " CNPs sent, %" PRIu64 " taken\n",
				       marked, ce, tx, rx);
			/* --react: cuts, each one for a CNP taken at most */
			if (f.cc != NULL ? a->cc_cuts + b->cc_cuts == 0 ||
			    a->cc_cuts + b->cc_cuts > rx :
			    a->cc_cuts + b->cc_cuts != 0)
				FAIL("--react: %" PRIu64 " cuts for %" PRIu64 " CNPs taken",
				     a->cc_cuts + b->cc_cuts, rx);
			if (f.cc != NULL)
				printf("  react: %" PRIu64 " cuts, %" PRIu64 " increases, "
				       "%" PRIu64 " pacer holds, %" PRIu64 " released\n",
				       a->cc_cuts + b->cc_cuts,
				       a->cc_increases + b->cc_increases,
				       a->cc_paced + b->cc_paced,
				       a->cc_released + b->cc_released);
		}
		if (f.sec_mode != 0) {
			const struct dpr_transport_stats *a =
				dpr_transport_stats(H.side[0].tp);
			const struct dpr_transport_stats *b =
				dpr_transport_stats(H.side[1].tp);

			/* (CNPs too: a secure QP seals them) */
			if (a->sec_sealed + b->sec_sealed != all ||
			    a->sec_opened + b->sec_opened == 0 ||
			    a->sec_drop_auth + b->sec_drop_auth != 0)
				FAIL("--secure: %" PRIu64 " of %" PRIu64 " frames sealed, "
				     "%" PRIu64 " opened, %" PRIu64 " forged", a->sec_sealed +
				     b->sec_sealed, all, a->sec_opened + b->sec_opened,
				     a->sec_drop_auth + b->sec_drop_auth);
			printf("  secure (%s): %" PRIu64 " frames sealed, %" PRIu64
			       " opened, %" PRIu64 " replays dropped\n",
			       f.sec_mode == DPR_SEC_ENCRYPT ? "encrypt" : "auth",
			       a->sec_sealed + b->sec_sealed, a->sec_opened + b->sec_opened,
			       a->sec_drop_replay + b->sec_drop_replay);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);

	printf("%" PRIu64 " messages, %.1f MiB, all verified, in %.1f s "
	       "(virtual %.3f s); seed %" PRIu64 ", %u QPs, sizes 0..%u B, "
	       "over %s\n",
	       completed, (double)bytes_moved / (1 << 20),
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       H.now / 1e9, seed, n_qps, max_size, f.ipv6 ? "IPv6" : "IPv4");
	printf("  by operation:");
	for (k = 0; k < OP_NUM; k++)
		printf(" %s %" PRIu64, op_names[k], per_op[k]);
	printf("\n  faults injected (frames of each kind, A->B | B->A):\n");
	for (k = 0; k < K_NUM; k++) {
		int fk;

		printf("    %-14s sent %8" PRIu64 " | %8" PRIu64, rc_kind_names[k],
		       H.frames[0][k], H.frames[1][k]);
		for (fk = 0; fk < F_NUM; fk++)
			printf("  %s %" PRIu64 "|%" PRIu64, rc_fault_names[fk],
			       H.faults[0][k][fk], H.faults[1][k][fk]);
		printf("\n");
	}
	printf("  liveness: bound B %.3f ms without progress ((retry_cnt + 1) x "
	       "%u x timeout + slack); longest seen %.3f ms; slowest message "
	       "%.3f ms of its %.3f ms bound\n", bound_ns / 1e6,
	       DPR_ACK_TIMEOUT_STRETCH, worst_gap / 1e6, worst_latency / 1e6,
	       worst_latency_bound / 1e6);
	if (broken_at != 0)
		printf("  side B %s after %" PRIu64 " messages, at %.3f ms: %" PRIu64
		       " sends ran out of retries, %" PRIu64 " flushed, %" PRIu64
		       " receives flushed; the last send completion %.3f ms later; "
		       "B swallowed %" PRIu64 " frames and sent %" PRIu64
		       " duplicate ACKs\n", break_mode == RC_PEER_SILENT ?
		       "went silent" : "answered with duplicate ACKs only",
		       break_after, broken_at / 1e6, failed_sends, flushed_sends,
		       flushed_recvs, (last_send_done - broken_at) / 1e6,
		       H.muted[1], H.dup_acks[1]);
	dump();
	if (trace != NULL) {
		/* the counters too: the fast path counts what the slow one does */
		for (side = 0; side < 2; side++) {
			const struct dpr_transport_stats *st =
				dpr_transport_stats(H.side[side].tp);

			fprintf(trace, "stats %c", 'A' + side);
			/* (rx_fast, tx_fast, sr_placed aside: how many took
			 * the fast path; of what came past a gap, what it
			 * wrote at once and the slow path held) */
#define _(n) if (strcmp(#n, "rx_fast") != 0 && strcmp(#n, "tx_fast") != 0 && \
		 strcmp(#n, "sr_placed") != 0) \
		fprintf(trace, " %s %" PRIu64, #n, st->n);
			DPR_TRANSPORT_STATS(_)
#undef _
			fprintf(trace, "\n");
			printf("  side %c: the fast way %" PRIu64 " of %" PRIu64
			       " frames received, %" PRIu64 " of %" PRIu64 " sent; %"
			       PRIu64 " of %" PRIu64 " past a gap written at once\n",
			       'A' + side, st->rx_fast, st->rx_frames, st->tx_fast,
			       st->tx_frames, st->sr_placed, st->sr_held);
		}
		fclose(trace);
	}
	printf("1 passed, 0 failed\n");
	return 0;
}
