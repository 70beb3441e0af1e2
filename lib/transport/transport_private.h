/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Inside the RC transport. Cross-file prototypes are grouped by file, as
 * rxe_loc.h groups them.
 *
 * Why its files call each other both ways (the one circle left in lib/
 * and drivers/, tools' call graph of the tree says): an RC QP is one
 * state machine, split by concern as rxe splits it -- the requester
 * (dpr_req.c) sends, the completer (dpr_comp.c) reads what comes back and
 * sends again, selective repeat (dpr_sr.c) decides what, the responder
 * (dpr_resp.c) answers, the QP (dpr_qp.c) changes state and completes,
 * timers (dpr_timer.c) wake them. An ACK makes the completer complete a
 * WQE (qp) and the requester send the next; a timeout makes the completer
 * ask the requester to resend. Around the module there is no circle:
 * lib/transport calls lib/verbs and lib/wire, and is called by the
 * engine, the shim and the built-in client.
 */

#ifndef TRANSPORT_PRIVATE_H
#define TRANSPORT_PRIVATE_H

#include <sys/queue.h>

#include <rte_log.h>
#include <rte_memcpy.h>

#include "dpr_transport.h"

extern int dpr_logtype_transport;
#define TP_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, dpr_logtype_transport, \
		"dprdma.transport: " fmt "\n", ## __VA_ARGS__)

/* ---------------------------------------------------------------- timers */

struct dpr_tqp;
/* The QP's in-flight cap becomes @p w PSNs (at least 1). */
void dpr_req_window_set(struct dpr_tqp *qp, uint32_t w);

/** A one-shot timer on the transport's wheel. */
struct dpr_timer {
	uint64_t deadline;             /**< ns */
	bool armed;
	uint8_t kind;                  /**< TIMER_QP (qp->timer) or TIMER_CC */
	TAILQ_ENTRY(dpr_timer) link;
};
TAILQ_HEAD(dpr_timer_list, dpr_timer);
enum { TIMER_QP, TIMER_CC };

#define WHEEL_SLOTS 1024
#define WHEEL_SHIFT 14                 /* 16.4 us per slot, 16.8 ms a turn */

struct dpr_wheel {
	struct dpr_timer_list slot[WHEEL_SLOTS];
	uint64_t tick;                 /**< last slot index processed */
	uint32_t armed;
};

/* ------------------------------------------------------------- queues */

enum wqe_state {
	WQE_POSTED,      /**< not started */
	WQE_PROCESSING,  /**< some packets sent */
	WQE_PENDING,     /**< all sent, waiting for the response */
	WQE_DONE,        /**< completed (or flushed) */
};

struct dpr_send_wqe {
	uint64_t wr_id;
	uint8_t opcode;           /**< enum dpr_wr_opcode */
	uint8_t flags;            /**< enum dpr_send_flags */
	uint8_t num_sge;          /**< 0 with inline data */
	uint8_t state;            /**< enum wqe_state */
	bool started;             /**< has had PSNs: first/last_psn are valid */
	bool answered;            /**< READ: a response to it arrived */
	rte_be32_t imm;
	uint32_t length;          /**< bytes of the message */
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t compare_add;
	uint64_t swap;
	union {
		struct dpr_ud_dest ud;    /**< UD QPs */
		struct dpr_mw_bind bind;  /**< DPR_WR_BIND_MW */
	};
	struct dpr_sge *sge;      /**< num_sge entries, or NULL */
	uint8_t *inline_data;     /**< with DPR_SEND_INLINE */
	/* one SGE: its MR, found when the WQE started, good while the MR
	 * generation is still mr_gen (else its key is looked up again) */
	struct dpr_mr *mr;
	uint64_t mr_gen;
	/* requester */
	uint32_t first_psn;
	uint32_t last_psn;
	uint32_t offset;          /**< bytes sent (READ: asked for) */
	/* completer */
	uint32_t read_done;       /**< READ: bytes received, in order */
};

struct dpr_recv_wqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t length;          /**< sum of the SGEs */
	struct dpr_sge *sge;
};

struct dpr_srq {
	struct dpr_transport *tp;
	struct dpr_pd *pd;
	struct dpr_recv_wqe *wqe;
	struct dpr_sge *sge;
	uint32_t size, mask, max_sge;
	uint32_t prod, cons;
	uint32_t limit;                /**< armed while non-zero */
	uint32_t users;                /**< QPs */
	void (*limit_cb)(void *arg);
	void *limit_arg;
	dpr_rq_pull_cb pull;
	void *pull_arg;
};

/* A responder resource: a READ or an atomic, kept to answer duplicates
 * (IBA 9.7.5.1.6, C9-122: max_dest_rd_atomic of them). */
enum res_type { RES_NONE, RES_READ, RES_ATOMIC };

/* A range of a READ asked for again inside it (byte offsets into the
 * original request): a hole a selective-repeat requester lacks. */
struct dpr_res_patch {
	uint32_t start;           /**< its FIRST response */
	uint32_t off;             /**< the next to send */
	uint32_t end;
};
#define DPR_RES_PATCHES 4

struct dpr_resp_res {
	uint8_t type;
	bool to_send;             /**< responses still to transmit */
	bool replay;              /**< ...for a duplicate of the request */
	bool streaming;           /**< READ: the run start..length still goes */
	bool answered;            /**< READ: every response went out once */
	uint8_t npatch;           /**< READ: holes asked for, sent first */
	uint32_t msn;             /**< what its responses carry: the MSN
	                               that counts this request (C9-148) */
	/* the request as it came (what its duplicates may ask for) */
	uint32_t first_psn;
	uint32_t last_psn;
	/* READ */
	uint64_t va;
	uint32_t rkey;
	uint32_t length;
	uint32_t start;           /**< bytes: where the run being sent began
	                               (0, or where a duplicate asked from) */
	uint32_t sent;            /**< bytes: the run's next response */
	struct dpr_res_patch patch[DPR_RES_PATCHES];
	/* atomic */
	uint64_t orig;
};

/* ---------------------------------------------------- selective repeat */

/* PSNs a responder holds requests for past a gap, and a requester keeps
 * track of what it sent again (a power of two): the most a requester has
 * in flight while selective repeat is on (dpr_transport_create() caps
 * max_unacked there; dprdmad's default window is this too) */
#define SR_WIN 1024
#define SR_WIN_MASK (SR_WIN - 1)
/* a hole is lost once this many PSNs past it have arrived (reordering
 * shorter than that is not taken for loss: RFC 6675's DupThresh) */
#define SR_DUPTHRESH 3
/* the least a READ requester waits for what it asked for again once every
 * response has come (dpr_comp.c: 4 least RTTs, at least this) */
#define DPR_SR_PTO_MIN_NS 20000
/* the least time without progress before a tail probe goes to a peer
 * with selective repeat (dpr_comp_rto()): below it, a stream's ACKs
 * stopping for a worker's hiccup on a shared core were taken for a lost
 * tail -- two busy boxes on this 2-core machine, 30 us floor, no loss:
 * some 300 probes a second, all duplicates; 100 us: under 10 */
#define DPR_SR_PROBE_MIN_NS 100000
/* the least time a delivery-rate sample spans (dpr_comp.c) */
#define DPR_RATE_SAMPLE_NS 20000

enum sr_peer { SR_UNKNOWN, SR_YES, SR_NO };

/* A WRITE message that began past a gap, its extent known: the receive
 * fast path writes its packets to memory as they come (dpr_sr_place()) */
struct sr_wmsg {
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
	uint32_t psn;                  /**< of its FIRST packet */
};
/* such messages a QP keeps track of past one gap (a ring) */
#define SR_WMSGS 8

/* dpr_sr_rx.placed[]: a slot whose packet was written on arrival */
#define SR_PL_ON 0x01
#define SR_PL_START 0x02               /**< a FIRST: the next of w[] begins */
#define SR_PL_ACKREQ 0x04

/* The responder's requests past a gap, by PSN (allocated at the QP's
 * first gap with a peer that reads SACKs): each a frame held, or a WRITE
 * packet already written to memory (placed) whose effects on the
 * responder's state wait for the gap to fill. */
struct dpr_sr_rx {
	struct rte_mbuf *m[SR_WIN];    /**< the frame held, or NULL */
	uint64_t map[SR_WIN / 64];     /**< a bit per slot arrived */
	uint32_t n;                    /**< arrived: held or placed */
	uint32_t w_head;               /**< the oldest of w[] */
	uint32_t w_n;
	struct sr_wmsg w[SR_WMSGS];    /**< WRITEs begun past the gap, in order */
	uint8_t placed[SR_WIN];        /**< SR_PL_* of a slot placed, or 0 */
};

/* The requester's record of the holes it sent again (allocated at the
 * QP's first SACK): slot PSN & SR_WIN_MASK. */
struct sr_rtx {
	uint32_t psn;                  /**< the hole's PSN | SR_RTX_VALID */
	uint32_t mark;                 /**< req.psn_hi when it was sent again */
};
struct dpr_sr_tx {
	struct sr_rtx rtx[SR_WIN];
	/* READ responses from a peer with selective repeat, by PSN, from
	 * the head READ's next on: placed out of order, and asked for again
	 * (until they arrive or a timeout says to ask again) */
	uint64_t rmap[SR_WIN / 64];
	uint64_t amap[SR_WIN / 64];
	uint32_t rd_high;              /**< the highest response placed */
	bool sacked;                   /**< the peer sent SACKs: it holds what
					    arrives past a gap */
};
#define SR_RTX_VALID 0x80000000u

/* ----------------------------------------------------------------- QP */

/* A QP's security (dpr_secqp.c): plain, waiting for its peer's
 * capabilities, waiting for its keys, secure, refused (to ERR at the next
 * poll). */
enum { SECS_PLAIN, SECS_CAPS, SECS_KEYS, SECS_ON, SECS_REFUSE };

struct dpr_tqp {
	struct dpr_transport *tp;
	uint32_t qpn;
	enum dpr_qp_type type;
	enum dpr_qp_state state;
	struct dpr_qp_attr attr;
	struct dpr_pd *pd;
	struct dpr_cq *scq;
	struct dpr_cq *rcq;
	bool sq_sig_all;
	uint32_t pmtu;                 /**< bytes: a power of two */
	uint8_t pmtu_shift;            /**< log2(pmtu): offsets to packets */
	/* what taking a request in one pass reads and writes, together
	 * (dpr_fast.c; with thousands of QPs every frame's QP is a cold one:
	 * its lines are loaded ahead, and the fewer the better) */
	struct dpr_wire_rx_tmpl rxt;   /**< what its peer's frames look like */
	bool comm_established;
	bool on_work;
	TAILQ_ENTRY(dpr_tqp) work_link;
	struct {                       /* responder (dpr_resp.c) */
		uint32_t psn;          /**< next expected PSN */
		uint32_t msn;
		bool sent_psn_nak;     /**< one NAK per gap (C9-97) */
		uint32_t in_msg;       /**< 0, DPR_SEND_MASK or DPR_WRITE_MASK */
		bool have_wqe;         /**< rq[cons] is the SEND in progress */
		uint32_t recv_off;
		uint64_t write_va;
		uint32_t write_rkey;
		uint32_t write_left;
		uint32_t write_len;
		/* the last remote key of a WRITE, the last local key of a
		 * receive WQE a SEND was placed in (dpr_fast.c) */
		struct dpr_mr_cache rkey;
		struct dpr_mr_cache lkey;
		struct dpr_resp_res *res;
		uint32_t res_num;
		uint32_t res_head;     /**< next slot to allocate: the oldest */
		uint32_t res_unsent;   /**< slots with responses to send */
		bool ack_pending;
		bool uc_drop;          /**< UC: the rest of a message is discarded */
		uint32_t ack_psn;
		bool nak_pending;
		uint8_t nak_syn;
		uint32_t nak_psn;
		/* selective repeat: a SACK to send (requests held past a
		 * gap, or one arrived there); the gap is an RNR NAK's (what
		 * comes past it is dropped: the requester goes back after
		 * its wait, as IBA has it) */
		bool sack_pending;
		bool rnr_gap;
	} resp;
	struct dpr_wire_encap encap;   /**< prebuilt at RTR */
	struct dpr_wire_tmpl tmpl;     /**< its Ethernet..UDP, made on use */
	bool tmpl_fresh;               /**< tmpl holds encap as it is now, and
					    req_img is made from it */
	bool sec_fast;                 /**< the same for a secure QP (SECS_ON):
					    req_fast() seals what it builds;
					    its ACKs go the general way */
	struct dpr_wire_req_img req_img; /**< its requests' headers (RC, IPv4) */
	/** rxt was made (RC over IPv4), whether or not it is on: a secure
	 * QP's frames, once opened, take the one-pass handlers by it */
	bool rxt_made;
	bool mac_resolved;             /**< encap.dst_mac is the peer's */
	bool path_wait;                /**< on tp->path_wait: no MAC yet */
	/* secure QPs (dpr_secqp.c) */
	uint8_t sec_state;             /**< SECS_* */
	uint8_t sec_mode;              /**< enum dpr_sec_mode, once decided */
	bool sec_waiting;              /**< on tp->sec_wait */
	bool sec_refused_peer;         /**< refused: the peer has another key */
	uint32_t bytes_counted;        /**< its part of stats.qp_bytes */
	bool sec_required;             /**< its peer's policy is required */
	uint32_t sec_gen;              /**< its handshake (struct dpr_sec_req) */
	struct dpr_sec_qp *sec;        /**< its keys: SECS_ON */
	TAILQ_ENTRY(dpr_tqp) sec_link;
	uint64_t cnp_last;             /**< when it last sent a CNP (ns) */
	/* DCQCN's reaction point (dpr_cc.c): rates in bit/s, times in ns */
	struct {
		bool limited;          /**< paced: a CNP came, not released */
		bool cnp_pending;      /**< a CNP since the last cut */
		bool alpha_cnp;        /**< a CNP in alpha's current period */
		bool waiting;          /**< the pacer holds it (timer set) */
		uint32_t t_stage;      /**< rate increases by the timer */
		uint32_t b_stage;      /**< ... by the byte counter */
		double rate, target;
		double alpha;          /**< 0..1 */
		double tokens;         /**< bytes it may send now (< 0: owed) */
		uint64_t token_time;
		uint64_t alpha_time;   /**< start of alpha's current period */
		uint64_t last_cut;
		uint64_t last_cnp;
		uint64_t next_increase;
		uint64_t resume;       /**< waiting: when its tokens are back */
		uint64_t bytes;        /**< sent since the byte stage moved */
		struct dpr_timer timer;
	} cc;

	struct {
		struct dpr_send_wqe *wqe;
		struct dpr_sge *sge;
		uint8_t *inline_buf;
		uint32_t size, mask, max_sge, max_inline;
		uint32_t prod;         /**< next slot to post into */
	} sq;
	struct {
		struct dpr_recv_wqe *wqe;
		struct dpr_sge *sge;
		uint32_t size, mask, max_sge;
		uint32_t prod, cons;
	} rq;

	struct {                       /* requester (dpr_req.c) */
		uint32_t index;        /**< next WQE to send from */
		uint32_t psn;          /**< next PSN to send */
		uint32_t noack_pkts;
		uint32_t rd_atomic;    /**< READ/atomic WQEs outstanding */
		uint32_t psn_hi;       /**< one past the highest PSN sent */
		/* the in-flight cap, PSNs (req_window_set()), and AckReq at
		 * least every ack_every packets within it: a window of W
		 * packets that asked for no ACK would wait for a timeout */
		uint32_t window;
		uint32_t ack_every;
		/* the last local key checked: most WQEs of a QP use one MR */
		struct dpr_mr_cache lkey;
	} req;
	struct {                       /* completer (dpr_comp.c) */
		uint32_t index;        /**< oldest WQE not completed */
		uint32_t psn;          /**< oldest PSN not acknowledged */
		uint8_t retry_cnt;
		uint8_t rnr_retry;
		bool rnr_wait;         /**< timer is an RNR wait, not an ACK timeout */
		uint32_t rnr_psn;
		bool retried;          /**< a retry from retry_psn is under way */
		bool retry_nak;        /**< ... that a NAK asked for: the peer
		                            waits at retry_psn, in silence */
		uint32_t retry_psn;
		/** What was outstanding when the last retry went back: until
		 * comp.psn reaches it (or the ACK timer fires), responses and
		 * NAKs beyond a new gap belong to the old pass, and another
		 * go-back would only queue more replay at the responder. */
		bool replaying;
		uint32_t retry_end;
		/** When the ACK timer's current attempt began (the last
		 * progress, or the first send after a timeout or while idle):
		 * responses that make no progress stretch it to at most
		 * DPR_ACK_TIMEOUT_STRETCH timeouts from here. */
		uint64_t attempt_start;
		/** When the local ACK timeout falls due (0: not running).
		 * The wheel's entry may be earlier: a later deadline only
		 * moves this mark (no re-arm per ACK), and the entry moves
		 * here when it fires early (dpr_qp_timer_fire()). */
		uint64_t ack_deadline;
		/** When the adaptive retransmission timeout falls due (0:
		 * not running): the RTT the QP measured, not the IBA local
		 * ACK timeout, says when what is outstanding is lost
		 * (dpr_comp_rto()); it sends again without spending
		 * retry_cnt, which the ACK timeout alone counts. */
		uint64_t rto_deadline;
		uint8_t rto_backoff;   /**< RTOs since the last progress */
		/** RTOs since the last RTT sample, at most 16: the RTO
		 * doubles with each and keeps its doubling past progress
		 * until an RTT is sampled again (Karn's algorithm: a
		 * request sent again gives no sample, so a peer slower
		 * than the RTO -- a worker that napped, a box whose CPU is
		 * shared -- would time out every exchange afresh and never
		 * be measured). */
		uint8_t rto_karn;
		/** psn_hi at the last RTO: an ACK past it acknowledges a
		 * request first sent after that RTO, and so that the path
		 * answers within the RTO as measured; the doubling ends
		 * (RFC 6298 5.7: cleared once new data is acknowledged) */
		uint32_t karn_psn;
		/** A head probe is out (dpr_comp_rto(), a go-back-N peer):
		 * the oldest request not acknowledged, sent again alone at
		 * probe_psn while PSNs up to probe_hi had gone out. An ACK
		 * of exactly probe_psn says the responder took the probe as
		 * the next in order -- it had stopped there (its NAK was
		 * lost) and dropped the rest: go back past it. */
		bool probing;
		uint32_t probe_psn;
		uint32_t probe_hi;
		/** A tail probe to a peer with selective repeat put off
		 * (dpr_comp_rto()) while comp.psn was tail_psn, until
		 * tail_at (ns; 0: none put off) */
		uint32_t tail_psn;
		uint64_t tail_at;
		/* the RTT: one request in flight timed at a time (rtt_sent
		 * 0: none; a retransmission spoils the sample, as Karn's
		 * algorithm has it) and RFC 6298's smoothing */
		uint32_t rtt_psn;
		uint64_t rtt_sent;
		uint32_t srtt;         /**< ns; 0: no sample yet */
		uint32_t rttvar;       /**< ns */
		uint32_t min_rtt;      /**< ns, the least seen */
		/* the delivery rate (dpr_comp.c, window_sample()): PSNs
		 * acknowledged since dr_time (0: from the next progress),
		 * and the highest rate of late, PSNs per 2^20 ns */
		uint64_t dr_time;
		uint32_t dr_psn;
		uint32_t dr_rate;
	} comp;

	/* selective repeat (dpr_sr.c): whether the peer reads SACKs
	 * (enum sr_peer), the requests held past a gap, the holes sent
	 * again */
	uint8_t sr;
	struct dpr_sr_rx *sr_rx;
	struct dpr_sr_tx *sr_tx;

	struct dpr_srq *srq;           /**< receives from it, not rq */
	/* the SRQ WQE the message in progress took (a copy) */
	struct dpr_recv_wqe srq_wqe;
	struct dpr_sge srq_sge[DPR_RECV_WR_MAX_SGE];
	dpr_rq_pull_cb rq_pull;        /**< dpr_qp_set_rq_pull() */
	void *rq_pull_arg;
	dpr_rq_pull_cb rq_done_cb;     /**< dpr_qp_set_rq_done() */
	void *rq_done_arg;

	struct dpr_qp_stats stats;
	struct dpr_timer timer;        /**< ACK timeout or RNR wait */
	TAILQ_ENTRY(dpr_tqp) all_link;
	TAILQ_ENTRY(dpr_tqp) path_link;
};
TAILQ_HEAD(dpr_tqp_list, dpr_tqp);

struct dpr_transport {
	struct dpr_transport_conf conf;
	struct dpr_verbs_ctx *ctx;
	const struct dpr_qp_table *qpt; /**< ctx's, for the receive fast path */
	uint16_t rx_qps;               /**< QPs in the last burst's fast run */
	struct rte_mempool *pool;
	uint64_t now;
	struct rte_mbuf **txq;
	uint32_t txq_mask, txq_head, txq_tail;
	/* the send fast path's payloads still to copy, by txq slot: a long
	 * frame's payload is copied by the pass that computes its ICRC
	 * (dpr_icrc_ipv4_copy(), at the end of req_fast(), which clears
	 * src again: NULL in every slot between runs) */
	struct dpr_tx_fill {
		const uint8_t *src;     /* NULL: the frame is whole */
		uint16_t poff, n;       /* the payload's offset from l3, bytes */
	} *txq_fill;
	struct dpr_tqp_list work;       /**< QPs with something to send */
	struct dpr_tqp_list all;
	/* connected QPs whose peer's MAC is not known yet: the ones
	 * dpr_transport_path_update() looks at first */
	struct dpr_tqp_list path_wait;
	/* QPs that wait for their peer's capabilities or their keys */
	struct dpr_tqp_list sec_wait;
	uint32_t sec_gen;               /**< handshakes begun */
	struct dpr_wheel wheel;
	const uint64_t *mr_gen;         /**< the device's (dpr_verbs_mr_gen) */
	/* mbufs for the send fast path, taken from the pool 32 at a time */
	uint32_t tx_room;               /**< bytes a fresh mbuf of the pool holds */
	uint64_t mbuf_rearm;            /**< rearm_data of a fresh mbuf */
	struct rte_mbuf *stash[32];
	uint32_t n_stash;
	uint32_t sr_held;               /**< requests its QPs hold past gaps */
	struct dpr_transport_stats stats;
	/* who sent what it dropped (dpr_sources.c; off the data path) */
	struct dpr_src_entry src[DPR_SRC_SLOTS];
	uint64_t src_evicted;
};

/* One event of a QP: its own counter and its transport's total. */
#define QP_STAT(qp, n) do { \
		(qp)->stats.n++; \
		(qp)->tp->stats.n++; \
	} while (0)

static inline struct dpr_send_wqe *
sq_wqe(struct dpr_tqp *qp, uint32_t i)
{
	return &qp->sq.wqe[i & qp->sq.mask];
}

static inline uint32_t
txq_room(const struct dpr_transport *tp)
{
	return tp->txq_mask + 1 - (tp->txq_head - tp->txq_tail);
}

/*
 * The stash refilled from the pool, 32 mbufs at once, the way PMDs rearm
 * their receive rings rather than by rte_pktmbuf_alloc_bulk(): an mbuf in
 * a pool already has a reference count of 1, one segment and no next
 * (rte_mbuf_raw_alloc()'s contract), so of rte_pktmbuf_reset() only what
 * a frame of the fast paths relies on is written -- the headroom, no
 * offload flags, zero lengths: 32 bytes in a row in the first cache
 * line, where the reset writes the second one too (tx_offload and the
 * outer VLAN, read only under offload flags, which stay clear). Half the
 * instructions per mbuf (callgrind: 22 -> 10 per frame). @return false:
 * the pool is empty.
 */
static __rte_noinline bool
stash_refill(struct dpr_transport *tp)
{
	typedef uint64_t v2u64 __attribute__((vector_size(16)));
	const v2u64 head = { tp->mbuf_rearm, 0 }, zero = { 0, 0 };
	uint32_t i;

	/* rearm_data, ol_flags (none), then packet_type, pkt_len, data_len,
	 * vlan_tci (and half the hash): zeros, 32 bytes in a row */
	RTE_BUILD_BUG_ON(offsetof(struct rte_mbuf, ol_flags) !=
			 offsetof(struct rte_mbuf, rearm_data) + 8);
	RTE_BUILD_BUG_ON(offsetof(struct rte_mbuf, packet_type) !=
			 offsetof(struct rte_mbuf, rearm_data) + 16);
	RTE_BUILD_BUG_ON(offsetof(struct rte_mbuf, vlan_tci) + 2 >
			 offsetof(struct rte_mbuf, rearm_data) + 32);
	if (rte_mempool_get_bulk(tp->pool, (void **)tp->stash, RTE_DIM(tp->stash)) != 0)
		return false;
	for (i = 0; i < RTE_DIM(tp->stash); i++) {
		/* (through an address, as PMDs do: a marker has no size) */
		const uintptr_t rearm = (uintptr_t)&tp->stash[i]->rearm_data;

		memcpy((void *)rearm, &head, sizeof(head));
		memcpy((void *)(rearm + 16), &zero, sizeof(zero));
	}
	tp->n_stash = RTE_DIM(tp->stash);
	return true;
}

/* An mbuf for a frame of the fast paths (requests, ACKs): from the
 * transport's stash, refilled from the pool in bulk. */
static inline struct rte_mbuf *
stash_get(struct dpr_transport *tp)
{
	if (unlikely(tp->n_stash == 0) && !stash_refill(tp))
		return rte_pktmbuf_alloc(tp->pool);
	return tp->stash[--tp->n_stash];
}

/* After a frame of the general builder (which made qp->tmpl for the
 * encapsulation as it is): the fast paths' headers (qp->req_img) from
 * it, for an untagged IPv4 connection, if they are not fresh. */
static inline void
req_img_refresh(struct dpr_tqp *qp)
{
	/* (never from a template without the peer's MAC: the fast paths
	 * send only to a resolved peer) */
	if (!qp->tmpl_fresh && !qp->sec_fast && !qp->encap.ipv6 && !qp->encap.vlan &&
	    qp->mac_resolved &&
	    (qp->sec_state == SECS_PLAIN || qp->sec_state == SECS_ON)) {
		dpr_wire_req_img_make(&qp->req_img, &qp->tmpl, DPR_DEFAULT_PKEY,
				      qp->attr.dest_qp_num);
		if (qp->sec_state == SECS_PLAIN)
			qp->tmpl_fresh = true;
		else
			qp->sec_fast = true;
	}
}

static __rte_always_inline void
qp_work(struct dpr_tqp *qp)
{
	if (!qp->on_work) {
		qp->on_work = true;
		TAILQ_INSERT_TAIL(&qp->tp->work, qp, work_link);
	}
}

/* A receive work request into a WQE slot (its SGE array is the slot's). */
static inline void
recv_wqe_fill(struct dpr_recv_wqe *r, const struct dpr_recv_wr *wr)
{
	uint64_t len = 0;
	uint32_t i;

	r->wr_id = wr->wr_id;
	r->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		r->sge[i] = wr->sge[i];
		len += wr->sge[i].length;
	}
	r->length = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
}

/* Is a receive WQE there for a message arriving now? (asks the owner
 * for the ones it holds when none is: dpr_qp_set_rq_pull()) */
static inline bool
rq_has_wqe(struct dpr_tqp *qp)
{
	struct dpr_srq *q = qp->srq;

	if (q != NULL) {
		if (q->cons == q->prod && q->pull != NULL)
			q->pull(q->pull_arg);
		return q->cons != q->prod;
	}
	if (qp->rq.cons == qp->rq.prod && qp->rq_pull != NULL)
		qp->rq_pull(qp->rq_pull_arg);
	return qp->rq.cons != qp->rq.prod;
}

/* The receive WQE next in line (rq_has_wqe() said there is one). */
static inline struct dpr_recv_wqe *
rq_head(struct dpr_tqp *qp)
{
	return qp->srq != NULL ? &qp->srq->wqe[qp->srq->cons & qp->srq->mask] :
		&qp->rq.wqe[qp->rq.cons & qp->rq.mask];
}

/* dpr_srq.c: a message starts: from an SRQ its WQE is taken now (copied
 * into the QP: the SRQ goes on to the next for the others); from the
 * QP's own queue it stays in place until rq_done(). */
void dpr_srq_take(struct dpr_tqp *qp);

static inline void
rq_take(struct dpr_tqp *qp)
{
	if (qp->srq != NULL)
		dpr_srq_take(qp);
}

/* The WQE of the message in progress (after rq_take()). */
static inline struct dpr_recv_wqe *
rq_cur(struct dpr_tqp *qp)
{
	return qp->srq != NULL ? &qp->srq_wqe : &qp->rq.wqe[qp->rq.cons & qp->rq.mask];
}

/* The WQE in use is done, its completion read from it and about to be
 * pushed: the QP's own queue moves on, and its owner hears of it first
 * (dpr_qp_set_rq_done(): the room a client sees in its ring follows the
 * completions, never runs ahead of them). */
static inline void
rq_done(struct dpr_tqp *qp)
{
	if (qp->srq == NULL) {
		qp->rq.cons++;
		if (qp->rq_done_cb != NULL)
			qp->rq_done_cb(qp->rq_done_arg);
	}
}

/* The receive WQE in use completes (@p imm: with @p imm_data, wire
 * order), and the queue moves on: dpr_resp.c's and dpr_fast.c's. */
static inline void
resp_complete_recv(struct dpr_tqp *qp, enum dpr_wc_status status, uint32_t opcode,
		   uint32_t len, uint32_t flags, uint32_t imm_data)
{
	struct dpr_recv_wqe *r = rq_cur(qp);
	struct dpr_cqe e = {
		.wr_id = r->wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = len,
		.qp_num = qp->qpn,
		.src_qp = qp->attr.dest_qp_num,
	};

	/* (flags: DPR_WC_WITH_IMM, DPR_WC_WITH_INV with the key, or 0) */
	if (flags != 0) {
		e.imm_data = imm_data;
		e.wc_flags = flags;
	}
	rq_done(qp);
	dpr_cq_push(qp->rcq, &e);
	qp->resp.have_wqe = false;
}

static inline bool
wr_is_rd_atomic(uint8_t op)
{
	return op == DPR_WR_RDMA_READ || op == DPR_WR_ATOMIC_CMP_AND_SWP ||
		op == DPR_WR_ATOMIC_FETCH_AND_ADD;
}

/* A bind or a local invalidation: done by the requester, no packet */
static inline bool
wr_is_local(uint8_t op)
{
	return op == DPR_WR_LOCAL_INV || op == DPR_WR_BIND_MW;
}

static inline bool
wr_is_atomic(uint8_t op)
{
	return op == DPR_WR_ATOMIC_CMP_AND_SWP || op == DPR_WR_ATOMIC_FETCH_AND_ADD;
}

/* Up to 64 bytes: two pieces of the largest of 16, 8, 4 that fit, one
 * from each end (overlapping where len is not twice that), four of 16
 * past 32; 1-3 bytes one at a time. No alignment test and no byte
 * counting: a 64 B payload in about 12 instructions, where rte_memcpy()'s
 * alignment test and its ladder of sizes took about 20 (callgrind). */
static __rte_always_inline void
copy_upto64(uint8_t *d, const uint8_t *s, uint32_t len)
{
	if (len >= 16) {
		if (len > 32) {
			memcpy(d + 16, s + 16, 16);
			memcpy(d + len - 32, s + len - 32, 16);
		}
		memcpy(d, s, 16);
		memcpy(d + len - 16, s + len - 16, 16);
	} else if (len >= 8) {
		memcpy(d, s, 8);
		memcpy(d + len - 8, s + len - 8, 8);
	} else if (len >= 4) {
		memcpy(d, s, 4);
		memcpy(d + len - 4, s + len - 4, 4);
	} else if (len != 0) {
		d[0] = s[0];
		d[len / 2] = s[len / 2];
		d[len - 1] = s[len - 1];
	}
}

/* Payload bytes between a frame and memory on the fast paths: inline
 * copies for small pieces (a 64 B one in about 12 instructions, where the
 * call to libc's costs about 20 with its set-up), libc's beyond. */
static __rte_always_inline void
payload_copy(void *dst, const void *src, uint32_t len)
{
	if (len <= 64)
		copy_upto64(dst, src, len);
	else if (len <= 128)
		rte_memcpy(dst, src, len);
	else
		memcpy(dst, src, len);
}

/* Payload pieces one packet may gather: an SGE list can split it. */
#define MAX_SEGS_PER_PKT 40

/* The MR behind a remote key a WRITE names, kept per QP while no MR of
 * the device has been deregistered (@p gen: the MR generation, read once
 * a burst: only this worker deregisters, and not within one): a stream of
 * WRITEs to one buffer looks its key up once, not per packet. Bounds are
 * checked on every use. (The receive fast path, and dpr_sr_place() past a
 * gap.) */
static __rte_always_inline struct dpr_mr *
resp_remote_mr(struct dpr_tqp *qp, uint64_t gen, uint32_t rkey, uint64_t va,
	       uint32_t len)
{
	return dpr_mr_check_cached(qp->tp->ctx, &qp->resp.rkey, gen,
				   rkey, qp->pd, qp->qpn, va, len,
				   DPR_ACCESS_REMOTE_WRITE);
}

/* Packets a message of @p len bytes takes at @p pmtu (at least one). */
static inline uint32_t
npkts(uint32_t len, uint32_t pmtu)
{
	return len == 0 ? 1 : (len + pmtu - 1) / pmtu;
}

/* IBA 9.7.6.1.3: local ACK timeout 4.096 us x 2^timeout; 0: infinite */
static inline uint64_t
ack_timeout_ns(uint8_t timeout)
{
	return timeout == 0 ? 0 : 4096ull << (timeout > 31 ? 31 : timeout);
}

/* dpr_timer.c */
void dpr_wheel_init(struct dpr_wheel *w, uint64_t now);
void dpr_timer_arm(struct dpr_transport *tp, struct dpr_timer *t, uint64_t deadline);
void dpr_timer_cancel(struct dpr_transport *tp, struct dpr_timer *t);
void dpr_wheel_run(struct dpr_transport *tp, uint64_t now);
uint64_t dpr_wheel_next(const struct dpr_wheel *w);
/* The earliest deadline at or before @p limit, else UINT64_MAX: only the
 * slots up to @p limit are looked at. */
uint64_t dpr_wheel_next_before(const struct dpr_wheel *w, uint64_t limit);
uint64_t dpr_rnr_timer_ns(uint8_t code);
/* (the first RTO, before the QP has timed a request) */
#define DPR_RTO_INITIAL_NS 10000000ull

/* dpr_xmit.c */
int dpr_xmit(struct dpr_transport *tp, struct dpr_tqp *qp,
	     const struct dpr_wire_hdrs *h, const struct dpr_wire_seg *segs,
	     unsigned int nseg);
int dpr_xmit_ack(struct dpr_tqp *qp, uint8_t syndrome, uint32_t psn);
void dpr_xmit_cnp(struct dpr_tqp *qp);

/* A dropped frame, by its source (dpr_sources.c) */
void dpr_src_drop(struct dpr_transport *tp, const struct rte_mbuf *m,
		unsigned int why);
/* Is @p m's source quarantined? (then counted: the caller drops it) */
bool dpr_src_quarantined(struct dpr_transport *tp, const struct rte_mbuf *m);

/* DCQCN's reaction point (dpr_cc.c) */
void dpr_cc_cnp(struct dpr_tqp *qp);
void dpr_cc_timer_fire(struct dpr_tqp *qp);
bool dpr_cc_req_run(struct dpr_tqp *qp, uint32_t budget);
void dpr_cc_stop(struct dpr_tqp *qp);
bool dpr_req_run_unpaced(struct dpr_tqp *qp, uint32_t budget);
int dpr_sge_gather(struct dpr_tqp *qp, const struct dpr_sge *sge,
		   uint32_t nsge, uint32_t off, uint32_t len,
		   struct dpr_wire_seg *segs, unsigned int max_segs,
		   unsigned int *nseg);
void dpr_mr_release_shinfo(struct dpr_mr *mr);
/* seg->addr/iova/len set: attach or copy, and count which */
void dpr_payload_seg(struct dpr_tqp *qp, struct dpr_mr *mr,
		     struct dpr_wire_seg *seg);
int dpr_sge_scatter(struct dpr_tqp *qp, const struct dpr_sge *sge,
		    uint32_t nsge, uint32_t off, const struct rte_mbuf *m,
		    uint32_t moff, uint32_t len);

/* dpr_qp.c */
/** To ERR, its work flushed. @p why (NULL: its owner asked) is logged,
 * rate-limited: a QP that fails on its own is worth an operator's line. */
void dpr_qp_error(struct dpr_tqp *qp, const char *why);
/* The receive fast path's template of @p qp's peer (RC over IPv4). */
void dpr_qp_rx_tmpl(struct dpr_tqp *qp);

/* dpr_recv.c: a sealed frame the receive fast path matched to secure QP
 * @p qp (in SECS_ON): opened, and taken as rx_one() takes an opened frame */
void dpr_rx_sealed(struct dpr_tqp *qp, struct rte_mbuf *m);

/* dpr_secqp.c */
void dpr_secqp_begin(struct dpr_tqp *qp);
void dpr_secqp_end(struct dpr_tqp *qp);
void dpr_secqp_poll(struct dpr_transport *tp);
struct rte_mbuf *dpr_secqp_seal(struct dpr_tqp *qp, struct rte_mbuf *m);
int dpr_secqp_open(struct dpr_transport *tp, struct rte_mbuf *m, uint32_t bth_off,
		   struct dpr_tqp **qpp);
/* The same for a frame of @p qp, known to be in SECS_ON: opened, or
 * dropped and counted (not 0) */
int dpr_secqp_open_qp(struct dpr_tqp *qp, struct rte_mbuf *m);
/* dpr_fast.c: a frame whose ICRC (or tag) was checked when it arrived --
 * a secure QP's, opened; one held past a gap, its turn come: the one-pass
 * handlers, or false (nothing changed) */
bool dpr_fast_take(struct dpr_tqp *qp, struct rte_mbuf *m);
const char *dpr_secqp_mode_name(const struct dpr_tqp *qp);
/* Nothing goes out or is taken while its security is being decided. */
static inline bool
secqp_blocked(const struct dpr_tqp *qp)
{
	return qp->sec_state == SECS_CAPS || qp->sec_state == SECS_KEYS ||
		qp->sec_state == SECS_REFUSE;
}
void dpr_qp_complete_send(struct dpr_tqp *qp, struct dpr_send_wqe *wqe,
			  enum dpr_wc_status status);
void dpr_qp_timer_fire(struct dpr_tqp *qp);
/** The receive / send WQEs of a QP in ERR completed with WR_FLUSH_ERR
 * (the posts of a QP in ERR flush at once, dpr_post.c). */
void dpr_qp_flush_recv(struct dpr_tqp *qp);
void dpr_qp_flush_send(struct dpr_tqp *qp);
/** Ask for the peer's MAC again (a QP whose path is not resolved):
 * @return true once it is known (the QP took it). */
bool dpr_qp_path_resolve(struct dpr_tqp *qp);

/* Where READ or atomic @p w resumes: a READ after what has arrived in
 * order. */
static inline uint32_t
wqe_resume_psn(const struct dpr_tqp *qp, const struct dpr_send_wqe *w)
{
	if (w->opcode == DPR_WR_RDMA_READ)
		return dpr_psn_add(w->first_psn, (int32_t)(w->read_done >> qp->pmtu_shift));
	return w->first_psn;
}

/* Where the requester's window starts: the oldest PSN not answered --
 * comp.psn, but for a READ at the head whose later responses were placed
 * past a hole (selective repeat: they moved comp.psn, not the READ). */
static inline uint32_t
req_window_base(struct dpr_tqp *qp)
{
	if (unlikely(qp->sr_tx != NULL) && qp->comp.index != qp->sq.prod) {
		const struct dpr_send_wqe *w = sq_wqe(qp, qp->comp.index);

		if (w->opcode == DPR_WR_RDMA_READ && w->started)
			return wqe_resume_psn(qp, w);
	}
	return qp->comp.psn;
}

/* dpr_req.c */
bool dpr_req_run(struct dpr_tqp *qp, uint32_t budget);
void dpr_req_retry(struct dpr_tqp *qp, uint32_t psn);
int dpr_req_resend(struct dpr_tqp *qp, uint32_t psn);
/* dpr_req_resend() of @p psn, which started WQE @p w holds (a READ: the
 * request for what has not arrived; an atomic: itself) */
int dpr_req_resend_wqe(struct dpr_tqp *qp, struct dpr_send_wqe *w, uint32_t psn);
/* A READ request for @p npkts responses of READ @p w from @p psn on (a
 * hole of its responses: selective repeat). @return 0, or what
 * dpr_xmit() says. */
int dpr_req_read_range(struct dpr_tqp *qp, struct dpr_send_wqe *w, uint32_t psn,
		       uint32_t npkts);

/* dpr_comp.c */
void dpr_comp_rx(struct dpr_tqp *qp, const struct rte_mbuf *m,
		 const struct dpr_pkt_info *pi, const struct dpr_wire_hdrs *h);
void dpr_comp_timeout(struct dpr_tqp *qp);
void dpr_comp_rto(struct dpr_tqp *qp);

/* dpr_sr.c */
/* Does @p qp's peer read SACKs? Asked of the transport's peer_caps once
 * known (at RTR, and at a gap while it is not). */
bool dpr_sr_decide(struct dpr_tqp *qp);
static inline bool
sr_on(struct dpr_tqp *qp)
{
	return qp->sr == SR_YES || (qp->sr == SR_UNKNOWN && dpr_sr_decide(qp));
}
/* Does the QP place READ responses that come past a missing one (and
 * ask for only the READs with holes again)? Every RC QP does, whatever
 * its peer: a requester keeping what arrived is invisible on the wire;
 * what it asks again differs (dpr_sr_read_holes()). Going back N READs of
 * 16 responses for each one lost kept 0.06 of the loss-free goodput at
 * 3% loss. */
static inline bool
read_placed(const struct dpr_tqp *qp)
{
	return qp->type == DPR_QPT_RC;
}
/* A request @p d PSNs past the expected one, of a QP with selective
 * repeat: held (or dropped: too far ahead, the hold full), a SACK owed. */
void dpr_sr_hold(struct dpr_tqp *qp, const struct rte_mbuf *m, uint32_t psn,
		 int32_t d);
/* An RDMA WRITE packet (no immediate) @p d PSNs past the expected one,
 * of a QP with selective repeat, sound (its lengths, checksums): written
 * to memory now if the packets before it, back to the gap, are known to
 * be packets of WRITEs (@p p the frame, @p paylen its payload, @p gen the
 * MR generation); its effects on the QP wait for the gap to fill. @return
 * false with nothing changed otherwise (then held). */
bool dpr_sr_place(struct dpr_tqp *qp, const uint8_t *p, uint32_t psn, int32_t d,
		  uint32_t paylen, uint64_t gen);
/* After the expected request @p done_psn: the ones held next in line,
 * in order. */
void dpr_sr_drain(struct dpr_tqp *qp, uint32_t done_psn);
/* The SACK owed. @return 0, or -ENOBUFS/-ENOMEM to try again. */
int dpr_sr_send_sack(struct dpr_tqp *qp);
/** Drop what is held from PSN @p psn on: a requester's PURGE. */
void dpr_sr_purge(struct dpr_tqp *qp, uint32_t psn);
/* A SACK arrived (comp.rx). */
void dpr_sr_rx_sack(struct dpr_tqp *qp, const struct rte_mbuf *m,
		    const struct dpr_pkt_info *pi, const struct dpr_wire_hdrs *h);
/* Everything held let go, the record of holes forgotten (ERR, RESET,
 * destroy). */
void dpr_sr_reset(struct dpr_tqp *qp);
/* The adaptive RTO of a QP whose peer reads SACKs: the oldest hole sent
 * again, and every hole may go again at the next SACK. */
void dpr_sr_rto(struct dpr_tqp *qp, uint32_t psn);
/* The requester's record, made at first need. @return NULL without
 * memory. */
struct dpr_sr_tx *dpr_sr_tx_get(struct dpr_tqp *qp);
/* READ response @p psn placed out of order: false if it was already. */
bool dpr_sr_read_place(struct dpr_tqp *qp, uint32_t psn);
/* Was READ response @p psn placed out of order? Forgotten if so (the
 * head READ has come to it). */
bool dpr_sr_read_take(struct dpr_tqp *qp, uint32_t psn);
/* READ response @p psn arrived in order: no longer asked for. */
void dpr_sr_read_arrived(struct dpr_tqp *qp, uint32_t psn);
/* The runs of READ responses missing below @p limit (not asked for
 * already) asked for again. */
void dpr_sr_read_holes(struct dpr_tqp *qp, uint32_t limit);
/* The adaptive RTO of a QP whose head is a READ answered by a peer with
 * selective repeat: everything missing asked for again. */
void dpr_sr_read_rto(struct dpr_tqp *qp);

/* dpr_ud.c */
bool dpr_ud_req_run(struct dpr_tqp *qp, uint32_t budget);
void dpr_ud_rx(struct dpr_tqp *qp, const struct rte_mbuf *m,
	       const struct dpr_pkt_info *pi, const struct dpr_wire_hdrs *h);
int dpr_ud_check_send(const struct dpr_tqp *qp, const struct dpr_send_wr *wr,
		      uint64_t len);

/* dpr_uc.c */
void dpr_uc_rx(struct dpr_tqp *qp, const struct rte_mbuf *m,
	       const struct dpr_pkt_info *pi, const struct dpr_wire_hdrs *h);

/* dpr_resp.c */
void dpr_resp_rx(struct dpr_tqp *qp, const struct rte_mbuf *m,
		 const struct dpr_pkt_info *pi, const struct dpr_wire_hdrs *h);
/* A request with the expected PSN (dpr_resp_rx() after its checks, and
 * a held one when its turn comes). */
void dpr_resp_rx_expected(struct dpr_tqp *qp, const struct rte_mbuf *m,
			  const struct dpr_pkt_info *pi,
			  const struct dpr_wire_hdrs *h);
bool dpr_resp_send(struct dpr_tqp *qp, uint32_t budget);
bool dpr_resp_has_output(const struct dpr_tqp *qp);
/* A WRITE packet's payload into the MR at resp.write_va (@p mr, or its
 * key looked up again when NULL). @return false: no such key (any more). */
bool dpr_resp_place_write(struct dpr_tqp *qp, struct dpr_mr *mr,
			  const struct rte_mbuf *m, const struct dpr_pkt_info *pi);
/* The receive WQE in use completes (and the queue moves on, rq_done). */
void dpr_resp_complete_recv(struct dpr_tqp *qp, enum dpr_wc_status status,
			    uint32_t opcode, uint32_t len,
			    const struct dpr_wire_hdrs *h, bool imm);

/* The local ACK timer of @p qp to @p deadline (see comp.ack_deadline):
 * the wheel is touched only when the timer is not armed or must fire
 * sooner than it would. */
static inline void
qp_timer_by(struct dpr_transport *tp, struct dpr_tqp *qp, uint64_t deadline)
{
	if (!qp->timer.armed || deadline < qp->timer.deadline)
		dpr_timer_arm(tp, &qp->timer, deadline);
}

static inline void
ack_timer_set(struct dpr_transport *tp, struct dpr_tqp *qp, uint64_t deadline)
{
	qp->comp.ack_deadline = deadline;
	qp_timer_by(tp, qp, deadline);
}

/* The adaptive retransmission timeout of @p qp (comp.rto_deadline): the
 * first one before an RTT is measured, then RFC 6298's SRTT + 4 RTTVAR,
 * at least the transport's floor, doubled per RTO since the last RTT
 * sample (comp.rto_karn); never past the local ACK timeout, which is the
 * QP's own. */
static inline uint64_t
rto_ns(const struct dpr_tqp *qp)
{
	const struct dpr_transport_conf *c = &qp->tp->conf;
	uint64_t rto = qp->comp.srtt == 0 ? DPR_RTO_INITIAL_NS :
		(uint64_t)qp->comp.srtt + RTE_MAX(4ull * qp->comp.rttvar, 1000ull);
	const uint64_t ack = ack_timeout_ns(qp->attr.timeout);
	rto = RTE_MAX(rto, (uint64_t)c->rto_min_ns) << qp->comp.rto_karn;
	return ack != 0 && rto > ack ? ack : rto;
}

static inline void
rto_timer_set(struct dpr_transport *tp, struct dpr_tqp *qp, uint64_t deadline)
{
	qp->comp.rto_deadline = deadline;
	qp_timer_by(tp, qp, deadline);
}

/* Requests went out: the ACK and retransmission timers run, if they do
 * not yet (an RNR wait has the timer to itself). Not on a UC QP: nothing
 * comes back to stop them, and a packet sent again in the middle of a
 * message makes the responder drop the rest of it (UC, IBA 9.7.5.2): the
 * RTO's probe did, a UC message lost in a loss-free ib_send_bw -c UC
 * whenever the sender waited on a full TX ring for 1 ms. */
static inline void
timers_start(struct dpr_transport *tp, struct dpr_tqp *qp)
{
	if (qp->comp.rnr_wait || qp->type == DPR_QPT_UC)
		return;
	if (qp->comp.ack_deadline == 0 && qp->attr.timeout != 0) {
		ack_timer_set(tp, qp, tp->now + ack_timeout_ns(qp->attr.timeout));
		qp->comp.attempt_start = tp->now;
	}
	if (qp->comp.rto_deadline == 0 && qp->tp->conf.rto_min_ns != UINT32_MAX)
		rto_timer_set(tp, qp, tp->now + rto_ns(qp));
}

/* A new request (@p psn) went out: time it unless one already is. */
static __rte_always_inline void
rtt_sample_start(struct dpr_tqp *qp, uint32_t psn)
{
	if (qp->comp.rtt_sent == 0) {
		qp->comp.rtt_psn = psn;
		qp->comp.rtt_sent = qp->tp->now | 1;
	}
}

#endif /* TRANSPORT_PRIVATE_H */
