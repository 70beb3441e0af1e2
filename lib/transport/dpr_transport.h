/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * The RC transport (IBTA vol. 1 ch. 9) as pure logic over frames in and
 * out and a clock it is given: requester, responder, completer, QP state
 * machine and timers, split into files as Linux rxe splits them. The same
 * code runs in a dprdmad worker (frames from a port, TSC time) and in a
 * deterministic test (frames through a simulated link, virtual time).
 *
 * One transport instance belongs to one lcore; nothing here locks.
 */

#ifndef DPR_TRANSPORT_H
#define DPR_TRANSPORT_H

#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "dpr_verbs.h"
#include "dpr_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dpr_transport;
struct dpr_tqp;

/** How to reach a peer: the destination MAC for a GID. @return 0, or
 * -EAGAIN while it is being resolved (the resolver asks, and calls
 * dpr_transport_path_update() when it knows), or another -errno where it
 * cannot be (no address of ours of its family, a group address). */
typedef int (*dpr_resolve_cb)(void *arg, const union dpr_gid *gid,
		struct rte_ether_addr *mac);
/** A frame to @p gid built before its MAC was known (its destination MAC
 * all zero): the resolver takes it, and sends it with the MAC once it
 * knows it, or frees it. Called with resolve_arg. */
typedef void (*dpr_hold_cb)(void *arg, const union dpr_gid *gid,
		struct rte_mbuf *m);

/** What the box at @p gid can do, as it told us (DPR_PEER_* bits; asked
 * from our GID @p sgid_index): @return them (0: nothing of ours),
 * -EAGAIN while it is not known yet (the asker is probing it: ask again
 * later), or -ENOTSUP where it never will be (nobody to ask). Called with
 * peer_arg. */
typedef int (*dpr_peer_caps_cb)(void *arg, const union dpr_gid *gid,
		uint8_t sgid_index);
/** It reads DPR_OP_DPR_SACK: its requester sends again what a SACK says
 * is missing, so our responder may hold what arrives past a gap. */
#define DPR_PEER_SR 0x1
/** Its secure QPs authenticate (its [security] mode = auth). */
#define DPR_PEER_SEC_AUTH 0x2
/** Its secure QPs encrypt (mode = encrypt). */
#define DPR_PEER_SEC_ENC 0x4
/** It holds our pre-shared key (its fingerprint is ours): set by the
 * asker, never sent. */
#define DPR_PEER_SEC_KEY 0x8
/** Its QP1 takes a MAD with dprdma's authentication trailer (the CM's
 * MADs between boxes of one key are MACed: doc/security.rst). */
#define DPR_PEER_CM_AUTH 0x10

/** What a transport asks of whoever runs secure QPs' handshakes. */
enum dpr_sec_req_op {
	DPR_SEC_REQ_BEGIN,      /**< keys wanted for this QP and peer */
	DPR_SEC_REQ_END,        /**< the QP went (destroyed, reset, error) */
};

struct dpr_sec_req {
	uint8_t op;             /**< enum dpr_sec_req_op */
	uint8_t mode;           /**< enum dpr_sec_mode agreed from caps */
	uint8_t sgid_index;
	uint32_t owner;         /**< the transport's conf.owner */
	uint32_t lqpn, rqpn;
	uint32_t gen;           /**< the QP's handshake: dpr_transport_sec_install()
				     gives it back */
	union dpr_gid lgid, rgid;
};

/** Called with sec_arg on the worker, must not block. */
typedef void (*dpr_sec_req_cb)(void *arg, const struct dpr_sec_req *r);

/** Selective repeat of RC QPs (doc/architecture.rst). */
enum dpr_sr_mode {
	DPR_SR_OFF,     /**< strict go-back-N with every peer */
	DPR_SR_PEER,    /**< with the peers that say they read SACKs
	                     (peer_caps); go-back-N with the others */
	DPR_SR_ON,      /**< with every peer (a test's two transports) */
};

/* The transport's TX queue by default: a staging area between the frames
 * built in a loop and the engine's TX buffer, no deeper than a few bursts
 * (a deep one holds mbufs the RX rings need, and queues ACKs behind
 * requests); frames it has no room for are not built yet. */
#define DPR_TX_RING 256

#define DPR_GID_MAX 4

/**
 * DCQCN's reaction point (lib/transport/dpr_cc.c; doc/architecture.rst,
 * "Congestion control"), with the names and the defaults of ConnectX's
 * mlxconfig keys: a CNP from the peer cuts an RC/UC QP's rate, which its
 * pacer holds it to, and the rate climbs back in stages.
 */
struct dpr_cc_params {
	bool react;                   /**< CNPs cut the rate (else counted) */
	bool ect;                     /**< RC/UC frames sent ECT(0) */
	uint64_t line_rate_bps;       /**< the most a QP is paced at */
	uint64_t min_rate_bps;        /**< rpg_min_rate */
	uint64_t ai_rate_bps;         /**< rpg_ai_rate: additive increase */
	uint64_t hai_rate_bps;        /**< rpg_hai_rate: hyper increase */
	uint32_t decrease_period_ns;  /**< rate_reduce_monitor_period */
	uint32_t time_reset_ns;       /**< rpg_time_reset: timer stage */
	uint32_t byte_reset;          /**< rpg_byte_reset (bytes; 0: no byte stage) */
	uint32_t threshold;           /**< rpg_threshold: fast recovery stages */
	uint32_t alpha_period_ns;     /**< dce_tcp_rtt: alpha's update period */
	uint32_t alpha_keep;          /**< dce_tcp_g: alpha keeps keep/1024 a period */
	uint32_t initial_alpha;       /**< initial_alpha_value, /1024 */
	uint32_t min_dec_fac;         /**< rpg_min_dec_fac: most a cut takes, % */
	bool clamp;                   /**< clamp_tgt_rate: every cut sets target */
	uint32_t release_periods;     /**< unpaced after this many time_resets
				       *   without a CNP (0: only at line rate) */
};

/** Why a frame from a source was dropped (dpr_sources.c): the
 * transport counters of the same names */
#define DPR_SRC_REASONS(_) \
	_(invalid) _(no_qp) _(qp_state) _(wrong_peer) _(wrong_type) _(secure) \
	_(quarantined)
enum dpr_src_reason {
#define _(n) DPR_SRC_##n,
	DPR_SRC_REASONS(_)
#undef _
	DPR_SRC_N
};
#define DPR_SRC_BITS 8
#define DPR_SRC_SLOTS (1u << DPR_SRC_BITS)

/** A source's dropped frames by reason, and when it last sent one; its
 * drops in the current second, and until when it is quarantined (the
 * transport's conf.quarantine_drops). */
struct dpr_src_entry {
	union dpr_gid src;
	uint64_t last_ns;
	uint64_t n[DPR_SRC_N];
	uint64_t window_ns;
	uint32_t window_drops;
	uint64_t quarantine_until_ns;
};

struct dpr_transport;
/** The sources of @p tp's dropped frames (at most @p max), and how many
 * entries were evicted by other sources so far (on the transport's own
 * worker). */
unsigned int dpr_transport_sources(const struct dpr_transport *tp,
		struct dpr_src_entry *out, unsigned int max, uint64_t *evicted);

/** ConnectX's defaults (a line rate of 100 Gbit/s; released after 10
 * timer periods without a CNP) */
void dpr_cc_defaults(struct dpr_cc_params *p);

struct dpr_transport;
/** New reaction point parameters for @p tp, from now on (on its worker):
 * paced QPs go on under them; with react off they are unpaced at once;
 * ect counts for QPs connected from now on. */
void dpr_transport_set_cc(struct dpr_transport *tp, const struct dpr_cc_params *p);

struct dpr_transport_conf {
	struct dpr_verbs_ctx *ctx;   /**< objects (PDs, MRs, CQs, QP numbers) */
	struct rte_mempool *pool;    /**< frames built here come from it */
	struct rte_ether_addr mac;   /**< our port's MAC */
	/** our addresses, the port's GID table (DESIGN.md: 0 = link-local
	 * IPv6, 1 = IPv4-mapped, 2 = the configured IPv6): an AV's
	 * sgid_index picks one; an all-zero entry (an IPv4-mapped 0.0.0.0
	 * too) is none */
	union dpr_gid gid[DPR_GID_MAX];
	unsigned int n_gids;
	/* NULL: every destination is reachable at ff:ff:ff:ff:ff:ff */
	dpr_resolve_cb resolve;
	/* NULL: a frame for an address not resolved yet is dropped (and
	 * counted: tx_unresolved) */
	dpr_hold_cb hold;
	void *resolve_arg;
	uint32_t max_unacked;        /**< PSN window of a requester (0: 512) */
	/** 0: every RC requester's window is max_unacked; else twice the
	 * QP's measured bandwidth-delay product plus this */
	uint32_t min_unacked;
	uint32_t ack_every;          /**< AckReq every N packets of a long message (0: 64, as rxe) */
	uint32_t tx_ring;            /**< frames queued for TX (0: DPR_TX_RING) */
	uint32_t qp_burst;           /**< frames one QP emits per poll (0: 32) */
	uint32_t owner;              /**< the caller's id for this instance
	                                  (dprdmad: the worker index) */
	/** Payload pieces of at least this many bytes are attached to the
	 * frame from the MR where they lie (external buffers, no copy);
	 * smaller ones, and all with 0, are copied. Needs IOVA-as-VA (the
	 * MR's addresses are what a device reads): otherwise always copied. */
	uint32_t zero_copy_min;
	/** Every frame through the full parse and the general builder (the
	 * fast path off): the oracle the differential test compares the
	 * fast path with. */
	bool slow_only;
	/** The port's active RoCE MTU, bytes (0: 1024): the longest UD
	 * message (a UD QP has no path MTU of its own) */
	uint32_t port_mtu;
	/** The least adaptive retransmission timeout, ns (0: 1 ms;
	 * UINT32_MAX: none, only the IBA local ACK timeout retransmits) */
	uint32_t rto_min_ns;
	/** Selective repeat (enum dpr_sr_mode; 0: off) and who says which
	 * peers speak it (DPR_SR_PEER) */
	uint8_t sr;
	dpr_peer_caps_cb peer_caps;
	void *peer_arg;
	/** Request frames the responders of this transport hold past a gap
	 * at most, all QPs together (0: 2048): mbufs taken from the pool
	 * until the gap fills */
	uint32_t sr_hold_max;
	/** Secure QPs (doc/security.rst): DPR_SEC_NONE (0) for plain RC/UC
	 * with every peer; else the mode this box asks for; a QP is secure
	 * with a peer whose peer_caps say it holds our key and runs secure
	 * QPs too, in the stronger of the two modes, its keys from sec_req's
	 * handshake */
	uint8_t sec_mode;
	/** A QP that cannot be secure goes to ERR (else it runs plain) */
	bool sec_required;
	/** A source that has this many frames dropped within a second is
	 * quarantined for quarantine_ns: its frames dropped before any
	 * other look, off the data path (0: never) */
	uint32_t quarantine_drops;
	uint64_t quarantine_ns;
	/** policies per peer subnet over sec_required (dpr_sec_policy.h;
	 * the engine's configuration, for the process's life) */
	const struct dpr_sec_subnet *sec_subnets;
	unsigned int n_sec_subnets;
	dpr_sec_req_cb sec_req;
	void *sec_arg;
	/** DCQCN's notification point: an RC/UC frame marked CE makes its
	 * QP send its peer's QP a CNP, at most one per cnp_interval_ns,
	 * with IP TOS cnp_tos (Not-ECT) */
	bool cnp_send;
	uint32_t cnp_interval_ns;
	uint8_t cnp_tos;
	/** DCQCN's reaction point (dpr_cc.c) */
	struct dpr_cc_params cc;
};

/** GID @p index of @p c, or NULL where there is none (out of the table,
 * unset, or an IPv4-mapped address of a port without IPv4). */
static inline const union dpr_gid *
dpr_conf_gid(const struct dpr_transport_conf *c, unsigned int index)
{
	const union dpr_gid *g;

	if (index >= c->n_gids)
		return NULL;
	g = &c->gid[index];
	if ((g->w[0] | g->w[1] | g->w[2] | g->w[3]) == 0 ||
	    (dpr_gid_is_ipv4(g) && g->w[3] == 0))
		return NULL;
	return g;
}

/** The GID of @p index can send to @p dgid: it exists and is of the same
 * family (IPv4-mapped to IPv4-mapped, IPv6 to IPv6). */
static inline bool
dpr_conf_gid_reaches(const struct dpr_transport_conf *c, unsigned int index,
		     const union dpr_gid *dgid)
{
	const union dpr_gid *g = dpr_conf_gid(c, index);

	return g != NULL && dpr_gid_is_ipv4(g) == dpr_gid_is_ipv4(dgid) &&
		dgid->raw[0] != 0xff;
}

/**
 * The local ACK timeout (IBA 9.7.6.1.3) measures the responder's silence:
 * a response to a PSN not yet acknowledged that makes no progress (the
 * rest of a READ pipeline still arriving after a lost packet, answers to
 * an earlier pass of a go-back-N) starts the timer again, but one attempt
 * without progress lasts at most this many timeouts. So a QP that stops
 * making progress ends in RETRY_EXC_ERR within (retry_cnt + 1) x this x
 * the timeout, whatever its peer sends (duplicate ACKs, stale responses).
 */
#define DPR_ACK_TIMEOUT_STRETCH 16

/** Address vector (ibv_ah_attr with its GRH). */
struct dpr_ah_attr {
	union dpr_gid dgid;
	uint32_t flow_label;
	uint8_t sgid_index;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint8_t port_num;
};

/** QP attributes (ibv_qp_attr, the fields RC uses). */
struct dpr_qp_attr {
	enum dpr_qp_state qp_state;
	enum dpr_qp_state cur_qp_state;
	enum dpr_mtu path_mtu;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t dest_qp_num;
	uint32_t qp_access_flags;
	uint32_t qkey;                  /**< UD */
	struct dpr_ah_attr ah_attr;
	uint16_t pkey_index;
	uint8_t en_sqd_async_notify;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint8_t min_rnr_timer;
	uint8_t port_num;
	uint8_t timeout;
	uint8_t retry_cnt;
	uint8_t rnr_retry;
};

struct dpr_srq;

struct dpr_qp_init_attr {
	enum dpr_qp_type qp_type;       /**< RC, UC or UD */
	/** Receive WQEs from this SRQ (of the same transport and PD's
	 * device) instead of a receive queue of its own: max_recv_wr and
	 * max_recv_sge are then ignored. NULL: its own. */
	struct dpr_srq *srq;
	struct dpr_pd *pd;
	struct dpr_cq *send_cq;
	struct dpr_cq *recv_cq;
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline_data;
	bool sq_sig_all;
	/** UD only: be QP1 of the transport's device (the CM's GSI QP) */
	bool gsi;
};

/* Counters of one QP (what `rdma statistic show` gives per QP); each is
 * also counted in its transport's total of the same name. */
#define DPR_QP_STATS(_) \
	_(req_packets) \
	_(retransmits) \
	_(local_ack_timeouts) \
	_(rto_timeouts) \
	_(rto_probes) \
	_(rto_gobacks) \
	_(probe_gobacks) \
	_(rnr_waits) \
	_(ack_rx) \
	_(nak_seq_rx) \
	_(rnr_nak_rx) \
	_(nak_err_rx) \
	_(dup_response_rx) \
	_(resp_packets) \
	_(ack_tx) \
	_(nak_seq_tx) \
	_(rnr_nak_tx) \
	_(nak_err_tx) \
	_(dup_request_rx) \
	_(out_of_seq_rx) \
	_(read_resp_tx) \
	_(read_replays) \
	_(atomic_executed) \
	_(atomic_replays) \
	_(rd_atomic_over) \
	_(ud_sent) \
	_(ud_received) \
	_(ud_unresolved) \
	_(ud_no_wqe) \
	_(ud_too_long) \
	_(bad_qkey) \
	_(uc_dropped) \
	_(sack_tx) \
	_(sack_rx) \
	_(sack_ignored) \
	_(sr_held) \
	_(sr_placed) \
	_(sr_hold_full) \
	_(sack_unsent) \
	_(sr_purged) \
	_(sr_resends) \
	_(sr_read_placed) \
	_(sr_read_asks) \
	_(read_patches) \
	_(read_replays_gone) \
	_(ce_rx) \
	_(cnp_tx) \
	_(cnp_rx) \
	_(mw_ops) \
	_(mw_remote_inv) \
	_(cc_cuts) \
	_(cc_increases) \
	_(cc_paced) \
	_(cc_released)

/* Counters of a transport: what an `rdma statistic` shows; those of its
 * QPs in the middle. */
#define DPR_TRANSPORT_STATS(_) \
	_(rx_frames) \
	_(rx_fast) \
	_(rx_invalid) \
	_(rx_no_qp) \
	_(rx_qp_state) \
	_(rx_wrong_peer) \
	_(rx_wrong_type) \
	_(tx_frames) \
	_(tx_fast) \
	_(tx_no_mbuf) \
	_(tx_unresolved) \
	_(path_updates) \
	_(sec_sealed) \
	_(sec_opened) \
	_(sec_seal_failed) \
	_(sec_drop_auth) \
	_(sec_drop_replay) \
	_(sec_drop_key) \
	_(sec_drop_malformed) \
	_(sec_drop_plain) \
	_(sec_drop_unexpected) \
	_(sec_refused) \
	DPR_QP_STATS(_) \
	_(tx_payload_copied) \
	_(tx_payload_attached) \
	_(rx_quarantined) \
	_(quarantines) \
	_(qp_bytes) \
	_(qp_queue_bytes)

struct dpr_transport_stats {
#define _(n) uint64_t n;
	DPR_TRANSPORT_STATS(_)
#undef _
};

struct dpr_qp_stats {
#define _(n) uint64_t n;
	DPR_QP_STATS(_)
#undef _
};

/**
 * A QP's transport state at one moment, for telemetry and for tests that
 * must say why a QP stopped: queue positions, PSNs of the three stages,
 * the retry machinery and its timer, the oldest send WQE not completed.
 */
struct dpr_qp_info {
	uint32_t qpn;
	enum dpr_qp_type type;
	uint32_t qkey;                /**< UD */
	uint32_t dest_qpn;
	enum dpr_qp_state state;
	uint32_t pmtu;
	union dpr_gid dgid;           /**< the peer's address (RC: from RTR) */
	uint8_t sgid_index;
	/* send queue: posted >= started >= completed (WQE counts) */
	uint32_t sq_size;
	uint32_t sq_posted;
	uint32_t sq_started;          /**< the requester's next WQE */
	uint32_t sq_completed;        /**< the completer's oldest WQE */
	/* requester and completer */
	uint32_t req_psn;             /**< next PSN to send */
	uint32_t psn_hi;              /**< one past the highest PSN sent */
	uint32_t comp_psn;            /**< oldest PSN not acknowledged */
	uint32_t rd_atomic;           /**< READs/atomics outstanding */
	uint8_t max_rd_atomic;
	uint8_t retry_cnt;            /**< configured */
	uint8_t retry_left;
	uint8_t rnr_retry;            /**< configured (7: for ever) */
	uint8_t rnr_left;
	uint8_t timeout;              /**< configured (4.096 us << timeout) */
	bool rnr_wait;
	bool retried;                 /**< a go-back to retry_psn is under way */
	bool replaying;               /**< until comp_psn reaches retry_end */
	bool mac_resolved;
	bool on_work;                 /**< queued to send */
	bool timer_armed;
	uint32_t retry_psn;
	uint32_t retry_end;
	uint64_t timer_left_ns;       /**< with timer_armed */
	/* what the requester measured, and the window it keeps */
	uint32_t window;              /**< PSNs in flight at most */
	uint32_t srtt_ns;
	uint32_t min_rtt_ns;
	uint64_t rate_pps;            /**< the delivery rate the window follows */
	/* DCQCN's reaction point: paced since a CNP, at cc_rate */
	bool cc_limited;
	uint64_t cc_rate_bps;
	uint64_t cc_target_bps;
	uint32_t cc_alpha;            /**< /1024 */
	/* the daemon's memory for it: its queues (the daemon's side), and the
	 * rest: the QP, its responder's READ/atomic resources, selective
	 * repeat's state while it has some */
	uint32_t mem_queue_bytes;
	uint32_t mem_bytes;
	/* the oldest send WQE not completed (sq_completed < sq_posted) */
	struct {
		uint64_t wr_id;
		uint8_t opcode;           /**< enum dpr_wr_opcode */
		uint8_t state;            /**< 0 posted, 1 sending, 2 sent, 3 done */
		uint32_t first_psn;
		uint32_t last_psn;
		uint32_t length;
		uint32_t offset;          /**< bytes sent (READ: asked for) */
		uint32_t read_done;
	} head;
	/* receive queue and responder */
	uint32_t rq_posted;
	uint32_t rq_consumed;
	uint32_t resp_psn;            /**< next PSN expected */
	uint32_t resp_msn;
	uint8_t max_dest_rd_atomic;
	uint32_t res_unsent;          /**< READ/atomic answers still to send */
	bool ack_pending;
	bool nak_pending;
	uint8_t nak_syndrome;
	uint32_t nak_psn;
	/* selective repeat */
	bool sr;                      /**< on with this peer */
	uint32_t sr_held;             /**< requests held past a gap */
	const char *sec;              /**< "none", "asking", "keying", "auth",
					   "encrypt" */
	struct dpr_qp_stats stats;
};

/** @return a transport, or NULL with rte_errno (EINVAL, ENOMEM). */
struct dpr_transport *dpr_transport_create(const struct dpr_transport_conf *c);
/** Destroy; its QPs must be destroyed first. Frees queued frames. */
void dpr_transport_destroy(struct dpr_transport *tp);

/**
 * Receive frames (RoCEv2 ones; others are counted and freed). Every frame
 * is consumed. @p now: the transport's clock, in nanoseconds.
 */
void dpr_transport_rx(struct dpr_transport *tp, struct rte_mbuf **pkts,
		uint16_t n, uint64_t now);

/**
 * The receive fast path alone, for frames nobody has looked at yet: the
 * usual RC frame of one of this transport's QPs from its peer, to our MAC
 * and address (matched against the QP's template, checksum and ICRC
 * checked in one pass). It takes frames from the start of @p pkts while
 * they are of that kind and stops at the first that is not.
 * @return how many it took and handled (the caller still frees them);
 * the frame after them is untouched, to be classified and, if RoCEv2,
 * given to dpr_transport_rx(), which decides (it takes nothing this one
 * would have handled differently). In order: a frame declined here must
 * reach dpr_transport_rx() before the frames after it are offered here.
 */
uint16_t dpr_transport_rx_fast(struct dpr_transport *tp, struct rte_mbuf **pkts,
		uint16_t n, uint64_t now);

/**
 * The resolver's news: @p gid is at @p mac (first known, or changed).
 * Every QP of @p tp connected to @p gid takes it for its next frame (its
 * prebuilt headers remade), and one that waited for it to send resumes.
 */
void dpr_transport_path_update(struct dpr_transport *tp,
		const union dpr_gid *gid, const struct rte_ether_addr *mac);

/**
 * Keys for QP @p lqpn's handshake @p gen (struct dpr_sec_req): its frames
 * are sealed and opened with them from now on, and it starts to send.
 * @return 0, or -ENOENT where the QP is gone or began another handshake
 *   since (the keys are dropped).
 */
struct dpr_sec_key;
int dpr_transport_sec_install(struct dpr_transport *tp, uint32_t lqpn,
		uint32_t gen, uint8_t mode, const struct dpr_sec_key *tx,
		const struct dpr_sec_key *rx);
/** QP @p lqpn's handshake @p gen failed (@p why logged): the QP to ERR.
 * @return 0 or -ENOENT. */
int dpr_transport_sec_fail(struct dpr_transport *tp, uint32_t lqpn,
		uint32_t gen, const char *why);

/** Run the requesters with work, pending responses and expired timers. */
void dpr_transport_poll(struct dpr_transport *tp, uint64_t now);

/** Take up to @p max frames to transmit. @return how many. */
uint16_t dpr_transport_tx(struct dpr_transport *tp, struct rte_mbuf **pkts,
		uint16_t max);

/** Earliest timer deadline, or UINT64_MAX with none armed. */
uint64_t dpr_transport_next_timer(const struct dpr_transport *tp);

/** Earliest timer deadline at or before @p limit, or UINT64_MAX: looks
 * only at the wheel's slots up to @p limit (a worker about to nap). */
uint64_t dpr_transport_next_timer_before(const struct dpr_transport *tp,
					 uint64_t limit);

/** True while some QP has something to send (a poll would make frames). */
bool dpr_transport_busy(const struct dpr_transport *tp);

const struct dpr_transport_stats *dpr_transport_stats(const struct dpr_transport *tp);

/* ------------------------------------------------------------------ QPs */

/** @return a QP in RESET, or NULL with errno (EOPNOTSUPP: a type other
 * than RC, UC and UD; EINVAL: caps over the limits or missing objects,
 * an SRQ for a UC QP; ENOMEM). */
struct dpr_tqp *dpr_qp_create(struct dpr_transport *tp,
		const struct dpr_qp_init_attr *ia);
/** Destroy (any state); outstanding work is dropped without completions. */
int dpr_qp_destroy(struct dpr_tqp *qp);

/**
 * ibv_modify_qp: the attributes in @p mask, checked against the masks IBA
 * 11.2.4.2 (and the kernel's qp_state_table) require and allow for the
 * transition. @return 0, or -EINVAL with nothing changed.
 */
int dpr_qp_modify(struct dpr_tqp *qp, const struct dpr_qp_attr *attr,
		int mask);
int dpr_qp_query(const struct dpr_tqp *qp, struct dpr_qp_attr *attr);
uint32_t dpr_qp_num(const struct dpr_tqp *qp);
/** conf.owner of the transport the QP belongs to (immutable: safe to read
 * from another lcore while the QP exists). */
uint32_t dpr_qp_owner(const struct dpr_tqp *qp);
enum dpr_qp_state dpr_qp_get_state(const struct dpr_tqp *qp);
/** Fill @p info with the QP's state now (on the QP's own lcore). */
void dpr_qp_info(const struct dpr_tqp *qp, struct dpr_qp_info *info);
/** Name of a QP state ("RTS"), as rdma-core prints them. */
const char *dpr_qp_state_name(enum dpr_qp_state s);
/** Call @p fn for every QP of @p tp, in creation order, until it
 * returns non-zero. @return what the last call returned, or 0. */
int dpr_transport_foreach_qp(struct dpr_transport *tp,
		int (*fn)(struct dpr_tqp *qp, void *arg), void *arg);

/**
 * ibv_post_send of @p n work requests in order (struct dpr_send_wr: every
 * field is checked here, whoever made it). @return 0 with all posted, or
 * a negative errno for wr[*n_posted], the first not posted: EINVAL (QP in
 * RESET, INIT or RTR; a bad opcode; more SGEs than the QP takes; a message
 * over 2^31 bytes; an atomic not of one 8-byte SGE; inline data too long,
 * or with a READ or an atomic; a READ or atomic on a UC QP; on a UD QP,
 * anything but SEND, a message
 * over the port's MTU, a destination that is not an IPv4-mapped GID or a
 * QPN over 24 bits), ENOMEM (queue full). In ERR, requests are accepted
 * and complete with WR_FLUSH_ERR.
 */
int dpr_post_send(struct dpr_tqp *qp, const struct dpr_send_wr *wr,
		unsigned int n, unsigned int *n_posted);

/**
 * One work request read from memory another process may be writing (a
 * shim client's ring entry, laid out as struct dpr_send_wr): each field
 * read once, checked and stored in the WQE, so the WQE is what was
 * checked whatever the writer does meanwhile, and the request is copied
 * once. Only the usual request: on an RC QP in RTS, a SEND or WRITE (with
 * or without immediate) of one SGE, not inline. @return 0 posted, ENOMEM
 * (queue full), EAGAIN: not of that kind (nothing read is kept: copy the
 * request and give it to dpr_post_send()).
 */
int dpr_post_send_shared(struct dpr_tqp *qp, const struct dpr_send_wr *wr);
/**
 * Called when a message arrives to find @p qp's receive queue empty,
 * before it is refused (RNR NAK) or, on UD, dropped: the owner's chance
 * to post the receive WQEs it holds but has not given yet (the shim's
 * ring of a client), as a NIC reads its receive queue when the packet
 * comes. @p fn may call dpr_post_recv() on the QP. NULL: none.
 */
typedef void (*dpr_rq_pull_cb)(void *arg);
void dpr_qp_set_rq_pull(struct dpr_tqp *qp, dpr_rq_pull_cb fn, void *arg);
/** @p fn(@p arg) as each receive WQE of @p qp's own queue (not an SRQ's)
 * completes -- success or flush -- just before its completion is pushed:
 * the shim frees the slot of its client's ring then, as an RNIC's queue
 * has room again once a completion is there to poll. NULL: none. */
void dpr_qp_set_rq_done(struct dpr_tqp *qp, dpr_rq_pull_cb fn, void *arg);

/* ----------------------------------------------------------------- SRQs */

/**
 * A shared receive queue (IBA 10.2.9, ibv_create_srq): receive WQEs that
 * the RC and UD QPs made with it take in arrival order. A message takes
 * its WQE when its first packet comes (a copy: the other QPs go on from
 * the next), and an empty SRQ is an RNR NAK (RC) or a drop (UD). Armed
 * with a limit, it calls its limit callback once when fewer WQEs than
 * that are left (IBV_EVENT_SRQ_LIMIT_REACHED), and disarms.
 * @return the SRQ, or NULL with errno (EINVAL: sizes over the limits).
 */
struct dpr_srq *dpr_srq_create(struct dpr_transport *tp, struct dpr_pd *pd,
		uint32_t max_wr, uint32_t max_sge);
/** @return 0, or -EBUSY while a QP uses it. Its WQEs go without
 * completions. */
int dpr_srq_destroy(struct dpr_srq *srq);
/** ibv_modify_srq's limit (IBV_SRQ_LIMIT; 0 disarms). @return 0, or
 * -EINVAL for a limit over its size. */
int dpr_srq_set_limit(struct dpr_srq *srq, uint32_t limit);
/** ibv_query_srq: its size, SGEs per WQE and armed limit. */
void dpr_srq_query(const struct dpr_srq *srq, uint32_t *max_wr,
		uint32_t *max_sge, uint32_t *limit);
/** WQEs posted and not yet taken. */
uint32_t dpr_srq_count(const struct dpr_srq *srq);
/** ibv_post_srq_recv: as dpr_post_recv(). */
int dpr_post_srq_recv(struct dpr_srq *srq, const struct dpr_recv_wr *wr,
		unsigned int n, unsigned int *n_posted);
/** The limit callback (its owner raises the event). */
void dpr_srq_set_limit_cb(struct dpr_srq *srq, void (*fn)(void *arg), void *arg);
/** As dpr_qp_set_rq_pull(), for the SRQ. */
void dpr_srq_set_pull(struct dpr_srq *srq, dpr_rq_pull_cb fn, void *arg);

/** ibv_post_recv of @p n work requests: as dpr_post_send(); EINVAL in
 * RESET or for more SGEs than the QP takes, or on a QP with an SRQ. */
int dpr_post_recv(struct dpr_tqp *qp, const struct dpr_recv_wr *wr,
		unsigned int n, unsigned int *n_posted);

#ifdef __cplusplus
}
#endif

#endif /* DPR_TRANSPORT_H */
