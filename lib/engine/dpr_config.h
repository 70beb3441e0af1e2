/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * dprdmad configuration: the compiled-in default, the INI file (read with
 * rte_cfgfile) and command-line overrides all go through one table of keys
 * and one setter, so every value is checked the same way and every error
 * names where the value came from (file:line, [section] key, or the
 * command-line option).
 *
 * Nothing here needs the EAL: the configuration is read and checked before
 * rte_eal_init(), so a mistake never leaves a half-initialised EAL.
 */

#ifndef DPR_CONFIG_H
#define DPR_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <limits.h>

#include <dpr_build_config.h>

/** Longest value a key may hold (rte_cfgfile's CFG_VALUE_LEN). */
#define DPR_CONF_VALUE_LEN 256

/** How a worker waits when its queues are empty. */
enum dpr_idle_mode {
	DPR_IDLE_BUSY,  /**< spin: lowest latency, one core per worker */
	DPR_IDLE_YIELD, /**< sleep idle_sleep_us after empty polls: shares cores */
};

/** Whether the EAL uses hugepages. */
enum dpr_huge_mode {
	DPR_HUGE_AUTO, /**< hugepages if any are free, else --no-huge + warning */
	DPR_HUGE_YES,  /**< hugepages required: fail with how to reserve them */
	DPR_HUGE_NO,   /**< always --no-huge */
};

/** Faults a port's TX injects (drivers/port/dpr_faults.c), for tests and
 * for seeing the box survive a bad fabric. */
struct dpr_fault_conf {
	bool on;
	double loss;        /**< probability a frame is dropped */
	double reorder;     /**< probability it is held back 10-100 us */
	double dup;         /**< probability it is sent twice */
	double corrupt;     /**< probability one bit is flipped */
	uint32_t delay_us;  /**< every frame held this long */
	uint64_t seed;
};

/** One port, as configured in [portN]. */
struct dpr_port_conf {
	struct dpr_fault_conf faults;
	uint32_t ip;         /**< IPv4 address, network order; 0 = none */
	uint8_t prefix_len;  /**< of ip */
	uint16_t mtu;        /**< Ethernet MTU (IP packet size) */
	uint16_t rx_desc;    /**< RX ring size per queue */
	uint16_t tx_desc;    /**< TX ring size per queue */
};

/** The [eal] section: how dprdmad builds its EAL argument list. */
struct dpr_eal_conf {
	char lcores[DPR_CONF_VALUE_LEN];   /**< -l list; first = main lcore */
	char vdev[DPR_MAX_EAL_DEVS][DPR_CONF_VALUE_LEN]; /**< --vdev each */
	unsigned int n_vdev;
	char allow[DPR_MAX_EAL_DEVS][DPR_CONF_VALUE_LEN]; /**< -a each */
	unsigned int n_allow;
	enum dpr_huge_mode huge;
	unsigned int memory_mb;            /**< -m with --no-huge */
	char file_prefix[DPR_CONF_VALUE_LEN];
	char log_level[DPR_CONF_VALUE_LEN];
	char extra[DPR_CONF_VALUE_LEN];    /**< further EAL arguments, split on blanks */
};

/** The whole configuration of one dprdmad. */
struct dpr_config {
	char path[PATH_MAX];          /**< config file, "" for the compiled-in default */
	struct dpr_eal_conf eal;
	struct {
		unsigned int burst;          /**< RX/TX burst size */
		unsigned int mbufs;          /**< mbufs per pool, 0 = sized from ports */
		enum dpr_idle_mode idle;
		unsigned int idle_sleep_us;  /**< sleep per idle round in yield mode */
		unsigned int stats_interval; /**< s between stats lines, 0 = none */
		unsigned int zero_copy;      /**< attach payload pieces of this many
		                                  bytes or more; 0 = always copy */
	} engine;
	struct dpr_port_conf port[DPR_MAX_PORTS];
	struct {
		char socket[108];            /**< client Unix socket (sun_path size) */
		unsigned int socket_mode;    /**< its permissions */
		unsigned int max_clients;    /**< connections at once */
	} control;
	unsigned int duration;           /**< run for this many s, 0 = until a signal */
};

/**
 * Fill @p conf with the compiled-in default: one net_tap port (iface
 * dprdma0) at 10.77.0.1/24, main lcore 0 and one worker on lcore 1,
 * hugepages if free else --no-huge, workers yield when idle.
 */
void dpr_config_defaults(struct dpr_config *conf);

/**
 * Read an INI file into @p conf on top of what it holds.
 *
 * The [eal] section, when present, replaces the default EAL settings as a
 * whole (a file that names its own devices does not also get the default
 * net_tap port).
 *
 * @return
 *   0, or -1 with a one-line message in @p err that names the file, the
 *   line, the section and key, and what is expected.
 */
int dpr_config_load(struct dpr_config *conf, const char *path,
		char *err, size_t errlen);

/**
 * Set one key, checking its value. Used for file entries and command-line
 * overrides alike.
 *
 * @param origin
 *   Where the value comes from, put first in an error: "FILE:LINE" or
 *   "command line --ip".
 * @return
 *   0, or -1 with a message in @p err.
 */
int dpr_config_set(struct dpr_config *conf, const char *section,
		const char *key, const char *value, const char *origin,
		char *err, size_t errlen);

/**
 * Build the EAL argument vector: argv[0] = @p prog, then the arguments
 * that the [eal] settings stand for. Hugepage availability is checked
 * here for huge = auto|yes.
 *
 * @param argv
 *   Array of at least @p max entries; strings point into @p buf.
 * @return
 *   argc, or -1 with a message in @p err (hugepages required but none free,
 *   too many arguments).
 */
int dpr_config_eal_args(const struct dpr_config *conf, const char *prog,
		char **argv, int max, char *buf, size_t buflen,
		char *err, size_t errlen);

/** Write @p conf as an INI file that dpr_config_load() reads back. */
void dpr_config_dump(const struct dpr_config *conf, FILE *f);

/** Print every section and key with its meaning and range (for --help). */
void dpr_config_help(FILE *f);

/** Number of free hugepages of any size, in MiB. */
unsigned long dpr_config_free_huge_mb(void);

/** Parse "loss=P,reorder=P,dup=P,corrupt=P,delay_us=N,seed=N" (any
 * subset); @return 0, or -1 with what is wrong in @p why. */
int dpr_parse_faults(const char *s, struct dpr_fault_conf *f, char *why,
		size_t len);

/** Parse "A.B.C.D/LEN"; @return 0 or -1. */
int dpr_parse_ipv4_prefix(const char *s, uint32_t *ip, uint8_t *len);

/** Parse an lcore list such as "0-1" or "0,2-3" into a bitmap of @p max bits.
 * @return number of lcores, or -1 on a syntax error. */
int dpr_parse_lcore_list(const char *s, uint64_t *bits, unsigned int max);

#endif /* DPR_CONFIG_H */
