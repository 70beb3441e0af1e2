/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Two RC transports joined by a simulated link: seeded faults (loss,
 * reordering, duplication, corruption the ICRC must catch, delay) and a
 * virtual clock. No sleeps: time jumps to the next event.
 */

#ifndef RC_HARNESS_H
#define RC_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "dpr_transport.h"

struct rc_faults {
	double loss;
	double reorder;      /**< probability of an extra delay of up to 8x */
	double dup;
	double corrupt;      /**< one bit flipped somewhere after Ethernet */
	uint64_t delay_ns;   /**< one-way */
	bool drop_a_to_b;    /**< every frame from A lost (timeouts) */
	uint32_t zero_copy_min; /**< the transports' zero-copy threshold */
	bool slow_only;      /**< the transports without their fast path */
	bool ipv6;           /**< RoCEv2 over IPv6 (GID index 2, fd77::1 and
	                          ::2) instead of IPv4 (index 1) */
	/** A side's address resolution (NULL: the harness knows both MACs
	 * from the start), with its hold and its argument */
	dpr_resolve_cb resolve;
	dpr_hold_cb hold;
	void *resolve_arg[2];
	/** the transports' least RTO, ns (0: theirs; UINT32_MAX: none) */
	uint32_t rto_min_ns;
	/** selective repeat (enum dpr_sr_mode): DPR_SR_ON, both speak it */
	uint8_t sr;
	/** secure QPs (enum dpr_sec_mode; 0: plain): both transports ask
	 * for it, each says the other holds its key, and rc_connect()
	 * plays the handshake (fresh nonces, dpr_sec_derive()) */
	uint8_t sec_mode;
	/** the share of frames marked CE on the way (ECN, as a switch with
	 * a queue past its threshold marks): the transports are
	 * notification points, CNPs at most one per QP per 4 us */
	double ce;
	bool no_cnp;         /**< CE counted only ([congestion] notify = off) */
	/** DCQCN's reaction point (NULL: off, CNPs counted only) */
	const struct dpr_cc_params *cc;
};

/** How a side behaves on the link (rc_peer_mode). */
enum rc_peer {
	RC_PEER_NORMAL,
	/** A box that died: it sends nothing and hears nothing. */
	RC_PEER_SILENT,
	/** A broken responder: its transport hears nothing and sends
	 * nothing; every request to it is answered with an ACK of the same
	 * old PSN (one before the first request it saw), and that ACK is
	 * sent again unasked every dup_ack_period_ns, for ever. */
	RC_PEER_DUP_ACK,
	/** A peer the test plays by hand: frames to it are kept for
	 * rc_take(), its transport's own frames are dropped; rc_inject()
	 * speaks for it. */
	RC_PEER_SCRIPT,
};

enum rc_kind { K_REQUEST, K_ACK, K_NAK, K_READ_RESP, K_ATOMIC_ACK, K_SACK, K_NUM };
enum rc_fault { F_LOSS, F_REORDER, F_DUP, F_CORRUPT, F_NUM };

extern const char *const rc_kind_names[K_NUM];
extern const char *const rc_fault_names[F_NUM];

struct rc_harness;

struct rc_side {
	struct rc_harness *h;
	struct dpr_verbs_ctx *ctx;
	struct dpr_transport *tp;
	struct dpr_pd *pd;
	struct dpr_cq *scq;
	struct dpr_cq *rcq;
	union dpr_gid gid;
	struct rte_ether_addr mac;
	uint32_t events[32];         /**< async events by type */
};

struct rc_flight {
	uint64_t t;
	uint64_t seq;
	struct rte_mbuf *m;
	int to;
};

struct rc_harness {
	struct rc_side side[2];
	struct rte_mempool *pool;
	struct rc_faults f;
	uint64_t now;
	uint64_t until;      /**< rc_step() moves the clock no further (0: no bound) */
	uint64_t rng;
	uint64_t seq;
	struct rc_flight *heap;
	uint32_t n, cap;
	uint64_t faults[2][K_NUM][F_NUM];   /**< [from side][kind][fault] */
	uint64_t frames[2][K_NUM];
	uint64_t ipv6_frames;               /**< of them, over IPv6 */
	uint64_t ce_marked[2];              /**< of each side's, marked CE */
	enum rc_peer mode[2];
	uint64_t muted[2];                  /**< frames a side's mode swallowed */
	uint64_t dup_acks[2];               /**< ACKs a DUP_ACK side sent */
	struct {
		uint32_t qpn;                   /**< of the DUP_ACK side's QP */
		uint32_t psn;                   /**< the PSN it acknowledges */
	} stale[64];
	uint32_t n_stale;
	uint64_t dup_ack_period_ns;         /**< 0: only in answer */
	uint64_t dup_ack_next;
	uint64_t next_iova[2];              /**< where rc_mr() puts the next MR */
	/** Sees every frame a side's transport emits, before the link. */
	void (*trace_tx)(void *arg, int side, const struct rte_mbuf *m);
	void *trace_arg;
	struct dpr_sec_req sec_req[2][64];  /**< handshakes asked, by side */
	uint32_t n_sec_req[2];
	struct rte_mbuf *kept[2][1024];     /**< frames to a SCRIPT side */
	uint32_t kept_head[2], kept_tail[2];
	struct {                            /**< rc_repeat() */
		uint64_t period_ns, next;   /**< period 0: none */
		int from;
		struct dpr_wire_hdrs hd;
		uint8_t payload[4096];
		uint32_t len;
	} repeat;
};

/** xorshift64*: the harness's only source of randomness. */
static inline uint64_t
rc_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static inline double
rc_uniform(uint64_t *s)
{
	return (double)(rc_rand(s) >> 11) / (double)(1ULL << 53);
}

int rc_harness_init(struct rc_harness *h, struct rte_mempool *pool,
		uint64_t seed, const struct rc_faults *f);
void rc_harness_fini(struct rc_harness *h);

struct rc_conn {
	enum dpr_mtu mtu;
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer, rd_atomic;
	uint8_t dest_rd_atomic[2];   /**< a side's max_dest_rd_atomic; 0: rd_atomic */
	uint32_t access;
	uint32_t psn[2];
	uint32_t max_send_wr, max_recv_wr;
	struct dpr_srq *srq[2];      /**< a side's QP receives from it */
	bool uc;                     /**< UC QPs (no ACKs, no retries) */
};
void rc_conn_defaults(struct rc_conn *c);

/** Create a QP on each side and bring both to RTS, connected. */
int rc_connect(struct rc_harness *h, const struct rc_conn *c,
		struct dpr_tqp **a, struct dpr_tqp **b);

/** One step: poll, move frames, advance the clock. */
void rc_step(struct rc_harness *h);

/** Step until @p done says so or @p max_ns of virtual time pass.
 * @return true if done. */
bool rc_run(struct rc_harness *h, bool (*done)(struct rc_harness *, void *),
	    void *arg, uint64_t max_ns);

/** Step until both sides are idle with nothing in flight. */
void rc_settle(struct rc_harness *h, uint64_t max_ns);

/** From now on, side @p side behaves as @p mode (frames already on the
 * link still arrive). */
void rc_peer_mode(struct rc_harness *h, int side, enum rc_peer mode);

/** Put a frame from side @p from, with @p hd and @p len bytes of
 * @p payload, on the link to the other side (no faults applied).
 * @return 0, or -1 if it could not be built. */
int rc_inject(struct rc_harness *h, int from, const struct dpr_wire_hdrs *hd,
	      const void *payload, uint32_t len);

/** rc_inject() the same frame every @p period_ns from now on (0: stop). */
void rc_repeat(struct rc_harness *h, int from, const struct dpr_wire_hdrs *hd,
	       const void *payload, uint32_t len, uint64_t period_ns);

/** The oldest frame delivered to SCRIPT side @p side and not yet taken
 * (the caller frees it), or NULL. */
struct rte_mbuf *rc_take(struct rc_harness *h, int side);

/** Register @p len bytes of a fresh buffer on a side. */
struct dpr_mr *rc_mr(struct rc_harness *h, int side, uint64_t len,
		uint32_t access);

#endif /* RC_HARNESS_H */
