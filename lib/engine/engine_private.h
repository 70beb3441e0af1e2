/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

#ifndef ENGINE_PRIVATE_H
#define ENGINE_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>
#include <rte_telemetry.h>

#include "dpr_config.h"
#include "dpr_engine.h"
#include "dpr_transport.h"

extern int dpr_logtype_engine;
#define ENGINE_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_ ## level, dpr_logtype_engine, \
		"dprdma.engine: " fmt "\n", ## __VA_ARGS__)

/*
 * Per-port counters, named as `ethtool -S` names them. Each worker has its
 * own copy (one writer, no atomics); readers sum over workers.
 */
#define DPR_PORT_COUNTERS(_) \
	_(rx_packets) \
	_(rx_bytes) \
	_(tx_packets) \
	_(tx_bytes) \
	_(arp_request_rx) \
	_(arp_reply_tx) \
	_(arp_reply_rx) \
	_(arp_request_tx) \
	_(icmp_echo_rx) \
	_(icmp_echo_reply_tx) \
	_(nd_solicit_rx) \
	_(nd_advert_tx) \
	_(nd_advert_rx) \
	_(nd_solicit_tx) \
	_(icmp6_echo_rx) \
	_(icmp6_echo_reply_tx) \
	_(roce_rx_packets) \
	_(roce_rx_bytes) \
	_(loopback_packets) \
	_(tx_deferred) \
	_(neigh_held) \
	_(neigh_released) \
	_(neigh_changed) \
	_(neigh_change_locked) \
	_(neigh_evicted)

/* Why a frame was dropped: enum suffix, counter name, meaning. */
#define DPR_DROP_REASONS(_) \
	_(RUNT, rx_drop_runt, "frame shorter than the headers it announces") \
	_(L2_NOT_FOR_US, rx_drop_l2_not_for_us, "destination MAC neither the port's nor broadcast") \
	_(L2_BAD_SRC, rx_drop_l2_bad_source, "source MAC zero or a group address: nobody to answer") \
	_(VLAN, rx_drop_vlan, "VLAN-tagged frame (VLANs are not configured)") \
	_(ETHERTYPE, rx_drop_ethertype, "EtherType neither ARP, IPv4 nor IPv6") \
	_(ARP_MALFORMED, rx_drop_arp_malformed, "ARP not Ethernet/IPv4 or too short") \
	_(ARP_NOT_FOR_US, rx_drop_arp_not_for_us, "ARP request for another address") \
	_(ARP_NOT_REQUEST, rx_drop_arp_not_request, "ARP operation neither request nor reply for us") \
	_(IP_MALFORMED, rx_drop_ipv4_malformed, "bad IPv4 version, header or total length") \
	_(IP_CSUM, rx_drop_ipv4_bad_checksum, "IPv4 header checksum wrong") \
	_(IP_NOT_FOR_US, rx_drop_ipv4_not_for_us, "IPv4 destination not the port's address") \
	_(IP_FRAGMENT, rx_drop_ipv4_fragment, "IPv4 fragment (not reassembled)") \
	_(IP_PROTO, rx_drop_ipv4_protocol, "IPv4 protocol neither ICMP nor UDP") \
	_(ICMP_MALFORMED, rx_drop_icmp_malformed, "ICMP too short or checksum wrong") \
	_(ICMP_NOT_ECHO, rx_drop_icmp_not_echo, "ICMP other than echo request") \
	_(IP6_MALFORMED, rx_drop_ipv6_malformed, "bad IPv6 version or payload length") \
	_(IP6_NOT_FOR_US, rx_drop_ipv6_not_for_us, "IPv6 destination neither one of the port's addresses nor their solicited-node groups") \
	_(IP6_PROTO, rx_drop_ipv6_protocol, "IPv6 next header neither ICMPv6 nor UDP (extension headers included)") \
	_(ICMP6_MALFORMED, rx_drop_icmp6_malformed, "ICMPv6 too short, checksum wrong, or neighbour discovery failing RFC 4861's checks") \
	_(ICMP6_OTHER, rx_drop_icmp6_other, "ICMPv6 other than echo request and neighbour discovery for us (router advertisements, MLD, ...)") \
	_(UDP_MALFORMED, rx_drop_udp_malformed, "UDP length inconsistent with IPv4 or IPv6") \
	_(UDP_PORT, rx_drop_udp_port, "UDP to a port other than 4791") \
	_(TX_FULL, tx_drop_full, "ARP or ICMP reply not sent: the TX queue stayed full (RoCE frames wait instead)") \
	_(TX_UNRESOLVED, tx_drop_unresolved, "frame for a peer whose MAC stayed unknown: no ARP/ND answer in 3 s, or its hold queue full (the transport sends again)") \
	_(TX_ZERO_MAC, tx_drop_zero_mac, "frame to MAC 00:00:00:00:00:00 stopped before the port (a bug: please report it)")

enum dpr_drop_reason {
#define _(e, n, h) DPR_DROP_ ## e,
	DPR_DROP_REASONS(_)
#undef _
	DPR_DROP_MAX
};

extern const char *const dpr_drop_names[DPR_DROP_MAX];
extern const char *const dpr_drop_help[DPR_DROP_MAX];

struct dpr_port_counters {
#define _(n) uint64_t n;
	DPR_PORT_COUNTERS(_)
#undef _
	uint64_t drop[DPR_DROP_MAX];
};

/** A port as the data path sees it: read-only once started. */
struct dpr_port {
	uint16_t port_id;
	uint16_t nb_queues;
	struct rte_ether_addr mac;
	uint32_t ip;          /**< network order, 0 = unnumbered */
	uint8_t prefix_len;
	union dpr_gid ip6_ll; /**< link-local, from the MAC: always there */
	union dpr_gid ip6;    /**< configured IPv6 ([portN] ipv6), if has_ip6 */
	bool has_ip6;
	uint8_t ip6_prefix_len;
	uint16_t mtu;
	bool started;
	bool closed;
	/* its driver copies each frame into its own memory (memif, af_packet,
	 * ...): payload attached from an MR would be copied anyway, and a
	 * second segment costs more than copying it once into the first */
	bool tx_copies;
	bool rx_intr;         /**< configured with Rx interrupts (dpr_rxwake.c) */
	unsigned int zero_copy_min;   /**< the transports': 0 = always copy */
	char name[64];
};

/** What the RX classifier decided for one frame. */
enum dpr_rx_action {
	DPR_RX_REPLY, /**< rewritten in place as a reply: transmit it */
	DPR_RX_ROCE,  /**< UDP 4791 for us: hand to the RoCE receive stage */
	DPR_RX_DROP,  /**< counted in a drop reason: free it */
	DPR_RX_CONSUMED, /**< used up (an ARP reply learnt): free it */
};

/* Neighbours of one port, as one worker knows them (IP -> MAC): IPv4
 * ones as IPv4-mapped addresses, beside IPv6 ones (dpr_neigh.c). */
#define DPR_NEIGH_MAX 4096             /* entries a table holds */
#define DPR_NEIGH_BUCKETS 4096         /* its hash chains (a power of two) */
#define DPR_NEIGH_HOLD_MAX 1024        /* frames held for MACs, a table */
#define DPR_NEIGH_HOLD_PER 256         /* ... for one neighbour */
/* asked for again after 100 ms, doubling to 1 s, while something waits */
#define DPR_NEIGH_RETRY_NS 100000000ull
#define DPR_NEIGH_RETRY_MAX_NS 1000000000ull
/* a transport's ask counts as waiting this long */
#define DPR_NEIGH_WANT_NS 3000000000ull
/* held frames wait this long for the answer (Linux: 3 requests 1 s apart) */
#define DPR_NEIGH_HOLD_NS 3000000000ull
/* a known MAC changes at most this often (Linux's locktime) */
#define DPR_NEIGH_LOCKTIME_NS 1000000000ull

enum dpr_neigh_state {
	DPR_NEIGH_FREE,
	DPR_NEIGH_INCOMPLETE,         /**< asked for, no answer yet */
	DPR_NEIGH_VALID,              /**< MAC known */
};

struct dpr_neigh {
	union dpr_gid ip;
	struct rte_ether_addr mac;    /**< VALID */
	uint8_t state;                /**< enum dpr_neigh_state */
	uint8_t tries;                /**< requests since the last answer */
	bool on_wait;                 /**< in the table's waiting list */
	uint16_t held;                /**< frames held for its MAC */
	uint32_t chain;               /**< next in its hash chain, index + 1 */
	uint64_t asked;               /**< ns: the last request */
	uint64_t ask_at;              /**< ns: the next, while something waits */
	uint64_t wanted_until;        /**< ns: a transport asked for it */
	uint64_t held_since;          /**< ns: the oldest held frame */
	uint64_t changed;             /**< ns: MAC learnt or last changed */
	TAILQ_ENTRY(dpr_neigh) wait_link;
};

/** What a table does with frames and news: set by its owner. */
struct dpr_neigh_ops {
	/** send a frame: a request, or a held frame with its MAC now */
	void (*emit)(void *arg, struct rte_mbuf *m);
	/** @p ip has a MAC, or a new one: whatever sends to it takes it */
	void (*changed)(void *arg, const union dpr_gid *ip,
			const struct rte_ether_addr *mac);
};

struct dpr_neigh_table {
	struct dpr_neigh *e;          /**< DPR_NEIGH_MAX */
	uint32_t *bucket;             /**< chain heads, index + 1 */
	uint32_t n;                   /**< entries in use: e[0 .. n-1] */
	uint32_t victim;              /**< next to evict when full */
	/* INCOMPLETE entries something waits for: the requests to repeat */
	TAILQ_HEAD(, dpr_neigh) waiting;
	uint64_t next_due;            /**< ns: when dpr_neigh_run() has work */
	struct {
		struct rte_mbuf *m;
		uint32_t ni;          /**< its neighbour's index */
	} *hold;                      /**< DPR_NEIGH_HOLD_MAX, oldest first */
	uint32_t n_hold;
	const struct dpr_port *port;
	struct rte_mempool *pool;     /**< requests come from it */
	struct dpr_port_counters *ctr;
	const uint64_t *clock;        /**< ns, the owner's */
	struct dpr_neigh_ops ops;
	void *arg;
};

/* dpr_neigh.c */
/** An empty table for @p port, its counters in @p ctr, its time read from
 * @p clock. @return 0 or -ENOMEM. */
int dpr_neigh_init(struct dpr_neigh_table *nt, const struct dpr_port *port,
		struct rte_mempool *pool, struct dpr_port_counters *ctr,
		const uint64_t *clock, const struct dpr_neigh_ops *ops, void *arg);
/** Free its memory and the frames it holds. */
void dpr_neigh_fini(struct dpr_neigh_table *nt);
/** The entry of @p ip, or NULL. */
struct dpr_neigh *dpr_neigh_find(const struct dpr_neigh_table *nt,
		const union dpr_gid *ip);
/**
 * @p ip's MAC into @p mac: 0. Unknown: asks (an ARP request or a
 * neighbour solicitation, again with a backoff while it is wanted) and
 * returns -EAGAIN; ops.changed tells when it is known. -ENOBUFS: the
 * table is full of neighbours with frames held.
 */
int dpr_neigh_resolve(struct dpr_neigh_table *nt, const union dpr_gid *ip,
		struct rte_ether_addr *mac);
/** A frame to @p ip built before its MAC was known (destination MAC
 * zero): held until it is, then sent with it; dropped and counted
 * (tx_drop_unresolved) past the limits or when nobody answers. */
void dpr_neigh_hold(struct dpr_neigh_table *nt, const union dpr_gid *ip,
		struct rte_mbuf *m);
/**
 * @p ip is at @p mac (an ARP or ND message said so). An entry that
 * exists takes it (a changed MAC at most once per locktime); with
 * @p create a new one is made. Held frames leave; ops.changed is told.
 * @return true if the table learnt something (a new MAC).
 */
bool dpr_neigh_learn(struct dpr_neigh_table *nt, const union dpr_gid *ip,
		const struct rte_ether_addr *mac, bool create);
/** Requests to repeat and held frames to give up on, when due. */
void dpr_neigh_run(struct dpr_neigh_table *nt);

/** dpr_neigh_run() when something waits: one test per loop otherwise. */
static inline void
dpr_neigh_poll(struct dpr_neigh_table *nt)
{
	if (unlikely(!TAILQ_EMPTY(&nt->waiting)) && *nt->clock >= nt->next_due)
		dpr_neigh_run(nt);
}

/** Whom to ask for @p ip's MAC: an ARP request (IPv4-mapped) or a
 * neighbour solicitation (IPv6); NULL without an mbuf or without a
 * source address of ours for it. */
struct rte_mbuf *dpr_neigh_request(struct rte_mempool *pool,
		const struct dpr_port *port, const union dpr_gid *ip);
/** @p ip is one of @p port's own addresses. */
bool dpr_port_owns(const struct dpr_port *port, const union dpr_gid *ip);

/**
 * Classify one received frame and, for ARP requests and ICMP echo requests
 * addressed to @p port, rewrite it in place into the reply. Counts the
 * frame's protocol counter or its drop reason in @p c. ARP requests and
 * replies for us teach @p nt (may be NULL) the sender's MAC.
 */
enum dpr_rx_action dpr_rx_classify(const struct dpr_port *port,
		struct rte_mbuf *m, struct dpr_port_counters *c,
		struct dpr_neigh_table *nt);

/** Largest frame (Ethernet header + one VLAN tag + MTU) for a port MTU. */
static inline uint32_t
dpr_frame_len(uint16_t mtu)
{
	return mtu + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN;
}


/** TX frames a worker gathers per port before one tx_burst. */
struct dpr_txbuf {
	uint16_t n;
	/* the first `kept` frames are ones the port refused last time
	 * (already seen by the capture tap): they go first */
	uint16_t kept;
	struct rte_mbuf *pkts[2 * DPR_MAX_BURST];
};

struct dpr_worker;

/* What a transport's address resolution needs to find its table. */
struct dpr_resolve_arg {
	struct dpr_worker *w;
	uint16_t pi;
};

/** A receive queue whose link can wake its napping worker (dpr_rxwake.c). */
struct dpr_rxwake {
	void *mq;                     /**< the driver's queue; NULL: it cannot */
	void *pp;                     /**< the driver's process data */
	void *ring;                   /**< armed: its ring, unmasked */
	int fd;                       /**< armed: the eventfd the link rings */
	int qfd;                      /**< the queue's Rx interrupt fd, or -1 */
	int dupfd;                    /**< ours of memif's eventfd, or -1 */
	int srcfd;                    /**< ... memif's number it was made of */
	void *srcring;                /**< ... the ring it was made for */
	uint16_t port_id;
};

/** One worker lcore: its queues, transports, TX buffers and counters. */
struct dpr_worker {
	unsigned int lcore_id;
	unsigned int index;           /**< in dpr_engine.workers */
	uint16_t queue;               /**< its RX/TX queue on every port */
	uint64_t handover_tx;         /**< frames passed to the QP's owner */
	uint64_t handover_rx;         /**< frames other workers passed here */
	uint64_t handover_drop;       /**< a handover ring was full */
	/* SPSC rings, [from] this worker's point of view: frames for it */
	struct rte_ring *handover_in[DPR_MAX_WORKERS];
	uint64_t polls;               /**< loop iterations */
	uint64_t idle_polls;          /**< iterations that received nothing */
	uint64_t sleeps;              /**< yield-mode sleeps */
	uint64_t wakeups;             /**< ... ended early by a command */
	uint64_t client_wakeups;      /**< ... ended early by a client's post */
	uint64_t nap_aborts;          /**< naps not taken: a client had posted */
	uint64_t rx_wakeups;          /**< ... ended early by a frame */
	uint64_t rx_nap_aborts;       /**< naps not taken: a frame had come */
	uint64_t spin_yields;         /**< idle loops within idle_spin_us of
				           work: the CPU yielded, no nap */
	uint64_t spin_cuts;           /**< spins stopped by a long yield */
	uint64_t timer_naps;          /**< naps cut to a transport timer */
	uint64_t spin_backoff_ns;     /**< how long the last cut stopped
				           spinning; 0 after a run of short
				           yields */
	uint64_t spin_resume_ns;      /**< no spin before this now */
	uint32_t spin_short_run;      /**< short yields since the last cut */
	bool rx_woke;                 /**< a frame woke the last nap, and no
				           receive burst has given one since */
	struct dpr_rxwake rxw[DPR_MAX_PORTS];
	/* a yielding worker naps in ppoll() on these eventfds, napping set:
	 * a command submitted meanwhile writes the first
	 * (dpr_engine_cmd_submit), a client that posted the second (given
	 * to it by dpr_engine_wake_fd()) */
	int wake_fd;
	int client_wake_fd;
	uint32_t napping;
	uint64_t rx_bursts;           /**< rx_burst calls that returned frames */
	uint64_t busy_tsc;            /**< TSC cycles of loops with work */
	uint64_t idle_tsc;            /**< ... without (sleeps included) */
	uint64_t loop_tsc;            /**< when the current loop started */
	bool loop_busy;               /**< the last loop had work */
	bool counting;                /**< callgrind collects this worker */
	uint64_t now;                 /**< ns since the engine started */
	uint64_t last_busy_ns;        /**< now of the last loop with work */
	struct rte_ring *cmd;         /**< commands for this worker */
	struct dpr_transport *tp[DPR_MAX_PORTS];
	struct dpr_resolve_arg rarg[DPR_MAX_PORTS];
	struct dpr_txbuf tx[DPR_MAX_PORTS];
	/* frames our transports sent to our own address (QPs of this box
	 * connected to each other): received again, never put on the wire */
	bool hairpin;                 /**< some QP resolved our own address */
	struct {
		uint16_t n;
		struct rte_mbuf *pkts[512];
	} loop[DPR_MAX_PORTS];
	dpr_tx_adapter_fn txa[DPR_MAX_PORTS];   /**< NULL: plain ethdev */
	void *txa_state[DPR_MAX_PORTS];
	dpr_tap_fn tap[DPR_MAX_PORTS];          /**< capture, at run time */
	void *tap_state[DPR_MAX_PORTS];
	struct dpr_neigh_table neigh[DPR_MAX_PORTS];
	struct dpr_port_counters ctr[DPR_MAX_PORTS];
} __rte_cache_aligned;

/** A command run on a worker, between two polls: verbs objects are only
 * touched by the worker that owns them. Commands that carry more embed
 * this first (the worker frees an abandoned one with free()). */
struct dpr_cmd {
	int (*fn)(struct dpr_worker *w, struct dpr_cmd *c);
	void *ptr[2];
	uint64_t u;                   /**< a small argument */
	uint32_t state;               /**< 0 queued, 1 done, 2 abandoned */
	int rc;
};

/** Queue @p c on worker @p wi and wait until it ran (0; the caller reads
 * c->rc and frees @p c). With @p timeout_ms: a full command ring is
 * -EBUSY, and after that long the command is left to the worker, which
 * frees it (-ETIMEDOUT). With 0 (a command pointing into the caller's
 * stack): waits for room and for the worker however long it takes. On any
 * error @p c is no longer the caller's. */
int dpr_engine_cmd_submit(unsigned int wi, struct dpr_cmd *c,
		unsigned int timeout_ms);

/** The engine: one per process. */
struct dpr_engine {
	struct dpr_config conf;
	struct dpr_port ports[DPR_MAX_PORTS];
	uint16_t n_ports;
	struct dpr_worker workers[DPR_MAX_WORKERS];
	unsigned int n_workers;
	struct rte_mempool *pool;
	struct dpr_verbs_ctx *ctx[DPR_MAX_PORTS];   /**< one device per port */
	uint8_t port_index[RTE_MAX_ETHPORTS];       /**< ethdev port id -> index */
	uint64_t start_tsc;
	uint64_t ns_mul;              /**< TSC cycles -> ns, 32.32 fixed point */
	volatile bool quit;
	bool running;
	struct dpr_engine_poller pollers[DPR_ENGINE_MAX_POLLERS];
	unsigned int n_pollers;
};

extern struct dpr_engine dpr_engine;

/* dpr_port.c */
int dpr_port_setup(struct dpr_port *p, uint16_t port_id,
		const struct dpr_port_conf *pc, uint16_t nb_queues,
		struct rte_mempool *pool, char *err, size_t errlen);
void dpr_port_close(struct dpr_port *p);
unsigned int dpr_port_pool_size(const struct dpr_config *conf,
		uint16_t n_ports, unsigned int n_workers);

/* dpr_stats.c */
void dpr_port_counters_sum(uint16_t port_index, struct dpr_port_counters *sum);

/* dpr_quiesce.c: the grace period before a port's memory is unmapped on
 * the interrupt thread (a memif peer that went). Workers are online
 * while they loop, report at the top of each loop, offline in a nap. */
extern struct rte_rcu_qsbr *dpr_quiesce_v;
int dpr_quiesce_init(void);
void dpr_quiesce_stats(uint64_t *waits, uint64_t *timeouts);

/* dpr_worker.c: a worker's loop (rte_eal_remote_launch()), and what each
 * worker's transports and neighbour tables call back into */
int dpr_worker_main(void *arg);
int dpr_worker_resolve(void *arg, const union dpr_gid *gid,
		       struct rte_ether_addr *mac);
void dpr_worker_hold(void *arg, const union dpr_gid *gid, struct rte_mbuf *m);
void dpr_worker_sec_req(void *arg, const struct dpr_sec_req *r);
int dpr_worker_peer_caps(void *arg, const union dpr_gid *gid,
			 uint8_t sgid_index);
extern const struct dpr_neigh_ops dpr_worker_neigh_ops;

/* Nanoseconds since the engine started at TSC @p tsc: no system call. */
static inline uint64_t
dpr_engine_tsc_ns(uint64_t tsc)
{
	return (uint64_t)(((unsigned __int128)(tsc - dpr_engine.start_tsc) *
			   dpr_engine.ns_mul) >> 32);
}

static inline uint64_t
dpr_engine_ns(void)
{
	return dpr_engine_tsc_ns(rte_rdtsc());
}

/* dpr_rxwake.c: the receive queues that wake a napping worker */
void dpr_rxwake_init(struct dpr_worker *w);
/** Unmask port @p pi's ring: @return the fd to sleep on, -EAGAIN (frames
 * came meanwhile: no nap), or -ENOTSUP (this link cannot). */
int dpr_rxwake_arm(struct dpr_worker *w, unsigned int pi);
/** Mask it again (@p rang: it woke the nap). */
void dpr_rxwake_disarm(struct dpr_worker *w, unsigned int pi, bool rang);

#endif /* ENGINE_PRIVATE_H */
