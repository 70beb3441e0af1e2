/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * dprdmad configuration: the compiled-in default, the INI file (read with
 * rte_cfgfile) and command-line overrides all go through tables of keys
 * and one setter, so every value is checked the same way and every error
 * names where the value came from (file:line, [section] key, or the
 * command-line option).
 *
 * Each room of the daemon owns its section and its keys: it registers a
 * struct dpr_conf_room (the engine [engine] and the base of [portN], the
 * fault adapter [portN] faults, the shim [control]) before the first
 * dpr_config_defaults(), and finds its values in a struct dpr_config with
 * dpr_config_room(). A room's values live inside struct dpr_config (at an
 * offset given at registration, as DPDK's mbuf dynamic fields do), so a
 * configuration is a plain value: copied, compared, dumped and loaded
 * back. The [eal] section is the process's and lives here, with the code
 * that turns it into EAL arguments.
 *
 * Nothing here needs the EAL: the configuration is read and checked before
 * rte_eal_init(), so a mistake never leaves a half-initialised EAL.
 */

#ifndef DPR_CONFIG_H
#define DPR_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <limits.h>

#include <dpr_build_config.h>

/** Longest value a key may hold (rte_cfgfile's CFG_VALUE_LEN). */
#define DPR_CONF_VALUE_LEN 256

/** Whether the EAL uses hugepages. */
enum dpr_huge_mode {
	DPR_HUGE_AUTO, /**< hugepages if any are free, else --no-huge + warning */
	DPR_HUGE_YES,  /**< hugepages required: fail with how to reserve them */
	DPR_HUGE_NO,   /**< always --no-huge */
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

/** Bytes the registered rooms' values may take in a configuration. */
#define DPR_CONF_ROOMS_BYTES 4096

/** The whole configuration of one dprdmad: a plain value. */
struct dpr_config {
	char path[PATH_MAX];          /**< config file, "" for the compiled-in default */
	struct dpr_eal_conf eal;
	unsigned int duration;        /**< run for this many s, 0 = until a signal */
	/** The rooms' values (dpr_config_room()). */
	uint64_t rooms[DPR_CONF_ROOMS_BYTES / sizeof(uint64_t)];
};

/** How a key's value is read and kept. */
enum dpr_conf_type {
	DPR_CONF_UINT,   /**< unsigned number in [min, max] (field of 1, 2 or 4 bytes) */
	DPR_CONF_STR,    /**< string shorter than the field, at least min long */
	DPR_CONF_ENUM,   /**< one of names[], kept as its index */
	DPR_CONF_MULTI,  /**< repeatable string: appended to an array */
	DPR_CONF_CUSTOM, /**< the room's parse() and format() */
};

/** One key of a room. Offsets are in the room's area (per port: in each
 * port's). */
struct dpr_conf_key {
	const char *key;
	enum dpr_conf_type type;
	size_t off;
	size_t size;          /**< field size (string: bytes; MULTI: one entry) */
	unsigned long min, max;
	bool pow2;            /**< UINT: a power of two */
	bool octal;           /**< UINT: written in octal (permissions) */
	bool secret;          /**< never printed (a key): a dump says it is set */
	const char *const *names;   /**< ENUM: NULL-terminated */
	size_t count_off;     /**< MULTI: offset of its unsigned int count */
	/** CUSTOM: set the room's @p area from @p value; 0, or -1 with what
	 * is wrong in @p why (the message adds the origin and the key). */
	int (*parse)(void *area, const char *value, char *why, size_t len);
	/** CUSTOM: the value as the file spells it; "" leaves it out of a
	 * dump. */
	void (*format)(const void *area, char *buf, size_t len);
	const char *help;
};

/** A room's section and keys. */
struct dpr_conf_room {
	const char *section;  /**< e.g. "control"; with per_port "port": [port0]..[portN] */
	bool per_port;
	size_t size;          /**< bytes of its area (per port: of each port's) */
	const struct dpr_conf_key *keys;
	unsigned int n_keys;
	/** The compiled-in default of @p area (@p port, or -1). */
	void (*defaults)(void *area, int port);
	/* set by dpr_config_register() */
	size_t off;
	bool registered;
};

/**
 * Add a room's section to every configuration made from now on (call
 * before dpr_config_defaults(); registering twice is harmless). Sections
 * are listed, dumped and checked in the order of registration, a
 * section's keys in the order of its rooms.
 * @return 0, or -ENOSPC when the rooms' values would not fit.
 */
int dpr_config_register(struct dpr_conf_room *room);

/** The values of @p room in @p conf (of port @p port for a per-port room;
 * ignored otherwise). @p conf may be const: the caller decides. */
void *dpr_config_room(const struct dpr_config *conf,
		const struct dpr_conf_room *room, unsigned int port);

/**
 * Fill @p conf with the compiled-in default: [eal] main lcore 0 and one
 * worker on lcore 1, a net_tap port, hugepages if free else --no-huge;
 * every registered room's own defaults.
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

/** Parse "A.B.C.D/LEN"; @return 0 or -1. */
int dpr_parse_ipv4_prefix(const char *s, uint32_t *ip, uint8_t *len);

/** Parse "IPV6ADDR/LEN" (RFC 4291 text form) into 16 bytes, network
 * order; @return 0 or -1. */
int dpr_parse_ipv6_prefix(const char *s, uint8_t ip[16], uint8_t *len);

/** Parse an lcore list such as "0-1" or "0,2-3" into a bitmap of @p max bits.
 * @return number of lcores, or -1 on a syntax error. */
int dpr_parse_lcore_list(const char *s, uint64_t *bits, unsigned int max);

#endif /* DPR_CONFIG_H */
