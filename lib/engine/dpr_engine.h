/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * The dprdmad engine: ports, worker lcores and their poll loops, counters
 * and the /dprdma/ telemetry commands. One engine per process.
 */

#ifndef DPR_ENGINE_H
#define DPR_ENGINE_H

#include <stdbool.h>
#include <stdio.h>

#include <rte_ether.h>

#include <rte_mbuf.h>

#include "dpr_config.h"
#include "dpr_sec_policy.h"

/* ------------------------------------------------- its configuration */

/** How a worker waits when its queues are empty. */
enum dpr_idle_mode {
	DPR_IDLE_BUSY,  /**< spin: lowest latency, one core per worker */
	DPR_IDLE_YIELD, /**< sleep idle_sleep_us after empty polls: shares cores */
};

/** How payload goes into frames ([engine] tx_payload). */
enum dpr_tx_payload {
	DPR_TXP_AUTO,   /**< copied on ports whose driver copies every frame
			     anyway (memif, af_packet, tap, af_xdp, pcap),
			     attached from zero_copy bytes on the others */
	DPR_TXP_ATTACH, /**< attached from zero_copy bytes on every port */
	DPR_TXP_COPY,   /**< always copied */
};

/** The [engine] section. */
struct dpr_engine_conf {
	unsigned int burst;          /**< RX/TX burst size */
	unsigned int mbufs;          /**< mbufs per pool, 0 = sized from ports */
	enum dpr_idle_mode idle;
	unsigned int idle_sleep_us;  /**< sleep per idle round in yield mode */
	unsigned int idle_spin_us;   /**< yield mode: poll on (yielding the
	                                  CPU between polls) this long after
	                                  the last work before sleeping */
	unsigned int stats_interval; /**< s between stats lines, 0 = none */
	unsigned int zero_copy;      /**< attach payload pieces of this many
	                                  bytes or more; 0 = always copy */
	enum dpr_tx_payload tx_payload;
};

/** The [transport] section: how RC requesters recover from loss. */
struct dpr_transport_knobs {
	unsigned int max_inflight;   /**< packets a QP has unacknowledged at
	                                  most; 0 = DPR_MAX_INFLIGHT_DEFAULT */
	unsigned int min_inflight;   /**< 0: the window is max_inflight;
	                                  else twice the QP's measured BDP
	                                  plus this */
	unsigned int rto_min_us;     /**< the least adaptive retransmission
	                                  timeout; 0 = none (only the IBA
	                                  local ACK timeout retransmits) */
	unsigned int selective_repeat; /**< enum dpr_sr_knob */
	unsigned int sr_hold;        /**< request frames a worker's responders
	                                  hold past gaps, per port */
};

/* A window of 512 held the loss-free 64 KiB WRITE to 1.9 GB/s between two
 * boxes over memif, 1024 gives 3.3 GB/s (doc/benchmarking.rst); it is
 * also the most a selective-repeat peer keeps (SR_WIN). */
#define DPR_MAX_INFLIGHT_DEFAULT 1024

/** [transport] selective_repeat */
enum dpr_sr_knob {
	DPR_SRK_AUTO,   /**< with the peers that say they speak it */
	DPR_SRK_OFF,    /**< go-back-N with everyone, and say so */
};

/** The [security] section (doc/security.rst). */
struct dpr_security_conf {
	unsigned int mode;           /**< enum dpr_sec_mode: none, auth, encrypt */
	unsigned int required;       /**< 1: a QP that cannot be secure goes to ERR */
	char psk[96];                /**< the pre-shared key, hex */
	char psk_file[256];          /**< or a file that holds it */
	/** policies per peer subnet, over @p required (dpr_sec_policy.h) */
	struct dpr_sec_subnet subnets[DPR_SEC_MAX_SUBNETS];
	unsigned int n_subnets;
	unsigned int quarantine_drops; /**< per second, to quarantine; 0: off */
	unsigned int quarantine_s;
};

const struct dpr_security_conf *dpr_security_conf(const struct dpr_config *conf);

/** The [congestion] section (doc/architecture.rst, "Congestion
 * notification"): DCQCN's notification point. */
struct dpr_congestion_conf {
	unsigned int notify;         /**< 1: CE-marked frames make CNPs */
	unsigned int cnp_interval_us; /**< at most one CNP a QP per this */
	unsigned int cnp_dscp;       /**< the DSCP of the CNPs sent */
	/* the reaction point: struct dpr_cc_params, in mlxconfig's units */
	unsigned int react, ecn;
	unsigned int line_rate_gbps;
	unsigned int rpg_min_rate, rpg_ai_rate, rpg_hai_rate;   /* Mbit/s */
	unsigned int rate_reduce_monitor_period, rpg_time_reset; /* us */
	unsigned int rpg_byte_reset, rpg_threshold;
	unsigned int dce_tcp_g, dce_tcp_rtt, initial_alpha_value;
	unsigned int rpg_min_dec_fac, clamp_tgt_rate, release_periods;
};

const struct dpr_congestion_conf *dpr_congestion_conf(const struct dpr_config *conf);
struct dpr_cc_params;
/** The transport's reaction point parameters of @p c (mlxconfig's units
 * to the transport's) */
void dpr_congestion_params(const struct dpr_congestion_conf *c,
		struct dpr_cc_params *p);

/** Who runs secure QPs' handshakes (the CM driver): called on the
 * workers for the transports of port @p pi, must not block. */
struct dpr_sec_req;
typedef void (*dpr_sec_req_fn)(uint16_t pi, const struct dpr_sec_req *r);
void dpr_engine_set_sec_req(dpr_sec_req_fn fn);

/** One port, as the engine's keys of [portN] configure it. */
struct dpr_port_conf {
	uint32_t ip;         /**< IPv4 address, network order; 0 = none */
	uint8_t prefix_len;  /**< of ip */
	uint8_t ip6[16];     /**< IPv6 address (global or unique local), all
	                          zero = none; the link-local one comes from
	                          the MAC */
	uint8_t ip6_prefix_len; /**< of ip6 */
	uint16_t mtu;        /**< Ethernet MTU (IP packet size) */
	uint16_t rx_desc;    /**< RX ring size per queue */
	uint16_t tx_desc;    /**< TX ring size per queue */
};

/** The [limits] section: objects a port holds for all its clients, and
 * what one client (a device context) may hold of them. */
struct dpr_limits_conf {
	uint32_t qps, cqs, pds, mrs;                    /**< per port */
	uint32_t client_qps, client_cqs, client_pds, client_mrs;
};

/** Add [engine] and the engine's keys of [portN] to the configuration
 * (lib/config): call before the first dpr_config_defaults(). */
void dpr_engine_config_register(void);
const struct dpr_engine_conf *dpr_engine_conf(const struct dpr_config *conf);
const struct dpr_transport_knobs *dpr_transport_knobs(const struct dpr_config *conf);
const struct dpr_limits_conf *dpr_limits_conf(const struct dpr_config *conf);
const struct dpr_port_conf *dpr_port_conf(const struct dpr_config *conf,
		unsigned int port);

/**
 * A port adapter on the TX side (drivers/: fault injection, ...): it takes
 * the frames a worker sends on a port and passes what goes out to
 * rte_eth_tx_burst() itself. It is called once per loop with @p n = 0 too,
 * so that it can release frames it holds. @return frames it took (sent,
 * held or freed); the engine frees and counts the others as TX full.
 */
typedef uint16_t (*dpr_tx_adapter_fn)(void *state, uint16_t port_id,
		uint16_t queue, struct rte_mbuf **pkts, uint16_t n,
		uint64_t now_ns);

/**
 * A tap: sees every frame a port receives (before anything else) and
 * every frame it sends (as the worker hands it to the port or its
 * adapter). It must not keep or change them. (drivers/: pcapng capture.)
 */
typedef void (*dpr_tap_fn)(void *state, uint16_t port_id, uint16_t queue,
		struct rte_mbuf **pkts, uint16_t n, bool tx);

/**
 * Set (or, with @p fn NULL, clear) the tap of port index @p pi on every
 * worker, at run time. Returns once every worker has taken it: after a
 * clear, no worker calls the old tap any more.
 * @return 0, or a negative errno (-ETIMEDOUT: a worker did not answer).
 */
int dpr_engine_set_tap(uint16_t pi, dpr_tap_fn fn, void *state);

/**
 * A worker hook: called by every worker once per loop, after receiving and
 * before the transports' poll, so that work it posts leaves in the same
 * round (drivers/shim: client doorbells; drivers/client: the built-in
 * client's streams). @p now_ns: the worker's clock. Returns true while it
 * has work pending (the worker does not sleep).
 */
struct dpr_engine_poller {
	bool (*fn)(void *arg, unsigned int worker, uint64_t now_ns);
	void *arg;
	/** Optional: a yielding worker is about to nap (@p napping true;
	 * return false if work has come, and it stays awake) or has woken
	 * (false; the return is ignored). The hook tells whom it serves how
	 * to wake it (dpr_engine_wake_fd()). */
	bool (*nap)(void *arg, unsigned int worker, bool napping, uint64_t now_ns);
};

/**
 * The eventfd for the clients of worker @p wi: writing it (8 bytes, any
 * value) wakes the worker from a nap, counted as client_wakeups (commands
 * from the main lcore have an eventfd of their own). -1 if there is none
 * (a post then waits for the nap to end).
 */
int dpr_engine_wake_fd(unsigned int wi);

#define DPR_ENGINE_MAX_POLLERS 4

/** What the application plugs into the engine. */
struct dpr_engine_hooks {
	/** For every port index and worker before the workers start: set
	 * @p fn and @p state to wrap the port, or leave them NULL.
	 * @return 0 or a negative errno (start fails with it). */
	int (*port_adapter)(void *arg, uint16_t port_index, unsigned int worker,
			    struct rte_mempool *pool, dpr_tx_adapter_fn *fn,
			    void **state);
	void *arg;
	/** Worker hooks, in this order; the first with fn NULL ends them. */
	struct dpr_engine_poller pollers[DPR_ENGINE_MAX_POLLERS];
};

/**
 * Set up every port the EAL probed and start one poll loop on every worker
 * lcore. Call after rte_eal_init(). @p hooks may be NULL.
 *
 * @param err
 *   On failure, a message that says what to change.
 * @return
 *   0; -EINVAL for a configuration the ports cannot take (such as an MTU
 *   out of the device's range or too few queues), another negative errno
 *   for other failures. On failure nothing is left running.
 */
int dpr_engine_start(const struct dpr_config *conf,
		const struct dpr_engine_hooks *hooks, char *err, size_t errlen);

/** Ask the workers to stop, wait for them, stop and close the ports. */
void dpr_engine_stop(void);

/** Register the engine's /dprdma/ telemetry commands (ports, workers,
 * transports, QPs). Call once, before or after dpr_engine_start(). */
void dpr_engine_register_telemetry(void);

/** Print one line of counters per port (periodic stats). */
void dpr_engine_print_stats(FILE *f);

/** Print what the engine runs: ports, addresses, workers. */
void dpr_engine_print_setup(FILE *f);

/** Print the counters of every port, drop reasons included. */
void dpr_engine_print_summary(FILE *f);

/* ------------------------------------------------ for drivers/ (the shim) */

struct dpr_transport;
struct dpr_verbs_ctx;

/** What a client needs to know of a port. */
struct dpr_port_info {
	char name[64];
	uint16_t port_id;
	struct rte_ether_addr mac;
	uint32_t ip;                  /**< network order */
	uint8_t ip6_ll[16];           /**< link-local IPv6 (from the MAC) */
	uint8_t ip6[16];              /**< configured IPv6, zero = none */
	/** The port's GID table as rxe's (DESIGN.md), the one every QP,
	 * the shim's devices and the RDMA CM use: 0 the link-local
	 * address, 1 the IPv4-mapped address, 2 the IPv6 address when the
	 * port has one. */
	uint8_t gid[3][16];
	uint8_t n_gids;
	/** The node GUID, network order, as rxe makes it: the MAC's
	 * modified EUI-64 (the link-local address's lower half). */
	uint64_t node_guid;
	uint16_t mtu;                 /**< Ethernet MTU */
	bool link_up;                 /**< the device's link status */
	bool up;
	uint32_t speed_mbps;
};

unsigned int dpr_engine_n_workers(void);
uint16_t dpr_engine_n_ports(void);
/** @return 0, or -ENODEV for a port index out of range. */
int dpr_engine_port_info(uint16_t pi, struct dpr_port_info *out);
/** The verbs device of port index @p pi (its object tables). */
struct dpr_verbs_ctx *dpr_engine_verbs(uint16_t pi);
/** Worker @p wi's transport on port index @p pi: touch it only from a
 * function run on that worker (dpr_engine_run_on). */
struct dpr_transport *dpr_engine_transport(unsigned int wi, uint16_t pi);

/**
 * Run @p fn(@p arg) on worker @p wi between two of its polls, and wait for
 * it (no time limit: a worker runs its commands every loop).
 * @return what @p fn returned, or -ENODEV when the engine is not running.
 */
int dpr_engine_run_on(unsigned int wi, int (*fn)(void *arg), void *arg);

/**
 * dpr_engine_run_on() for callers that must not wait for ever (telemetry
 * commands): @p fn runs on a copy of the @p size bytes at @p arg, copied
 * back when it ran. A worker that has not run it within @p timeout_ms
 * keeps the copy and runs and frees it when it gets to it (0: no limit).
 * @return what @p fn returned, -ETIMEDOUT, -EBUSY (the worker's command
 *   ring is full), -ENOMEM, or -ENODEV when the engine is not running.
 */
int dpr_engine_call(unsigned int wi, int (*fn)(void *arg), void *arg,
		size_t size, unsigned int timeout_ms);

/** Nanoseconds on the workers' clock (since the engine started). */
uint64_t dpr_engine_now_ns(void);

/**
 * The verbs tables of a port are shared by its workers; creating and
 * destroying objects (PDs, MRs, CQs, QP numbers) from two workers at once
 * must hold this lock. The data path only looks up, without it.
 */
void dpr_engine_verbs_lock(void);
void dpr_engine_verbs_unlock(void);

/**
 * Who owns a QP, for /dprdma/qp (the shim names its client): writes a
 * short description of QP @p qpn of port @p pi into @p buf and returns 0,
 * or -ENOENT. Called on the telemetry thread: it must take its own lock.
 */
typedef int (*dpr_qp_owner_fn)(uint16_t pi, uint32_t qpn, char *buf, size_t len);
void dpr_engine_set_qp_owner(dpr_qp_owner_fn fn);

/**
 * What the box at @p gid can do (DPR_PEER_* bits of dpr_transport.h), as
 * the transports of port @p pi ask it (dpr_peer_caps_cb): set by the
 * driver that asks peers (drivers/cm, on QP1), NULL when none does (every
 * peer then speaks only IBA). Called on the workers: it must not block.
 */
union dpr_gid;
typedef int (*dpr_peer_caps_fn)(uint16_t pi, const union dpr_gid *gid,
		uint8_t sgid_index);
void dpr_engine_set_peer_caps(dpr_peer_caps_fn fn);

/** A counter and what raises it, for operators (/dprdma/counters/help). */
struct dpr_counter_help {
	const char *name;
	const char *help;       /**< at most 127 characters (a telemetry string) */
};

/** Add the meanings of a group of counters (a room's; static tables).
 * @return 0 or -ENOSPC. */
int dpr_engine_counter_help(const char *group, const struct dpr_counter_help *h,
		unsigned int n);
void dpr_engine_register_counter_help(void);

/** What /dprdma/info says the daemon is doing ("running", "draining"). */
void dpr_engine_set_state(const char *state);

/** RoCE path MTU that Linux rxe derives from an Ethernet MTU (0: none). */
unsigned int dpr_active_mtu(unsigned int eth_mtu);

#endif /* DPR_ENGINE_H */
