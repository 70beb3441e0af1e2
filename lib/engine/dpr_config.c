/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <rte_cfgfile.h>
#include <rte_common.h>

#include "dpr_config.h"

/*
 * Every key dprdmad knows, with its type, range and meaning. The parser,
 * the command-line overrides, --help and dpr_config_dump() all read this
 * table; tests check that config/dprdmad.conf documents each entry.
 */

enum key_type {
	KT_UINT,        /**< unsigned number in [min, max] */
	KT_STR,         /**< string shorter than the field, at least min long */
	KT_MULTI,       /**< repeatable string: appended to an array */
	KT_ENUM,        /**< one of names[] */
	KT_IPV4_PREFIX, /**< A.B.C.D/LEN into dpr_port_conf.ip/prefix_len */
	KT_LCORES,      /**< lcore list, each CPU available to this process */
	KT_SOCKET,      /**< absolute Unix socket path */
	KT_FAULTS,      /**< fault spec into dpr_port_conf.faults */
};

struct key_def {
	const char *section;  /**< "port" matches port0..port7 */
	const char *key;
	enum key_type type;
	size_t off;           /**< in struct dpr_config, or dpr_port_conf for "port" */
	size_t size;          /**< field size (uint: 1, 2 or 4; string: bytes) */
	unsigned long min, max;
	bool pow2;            /**< value must be a power of two */
	const char *const *names;
	size_t count_off;     /**< KT_MULTI: offset of the element count */
	const char *help;
};

static const char *const idle_names[] = { "busy", "yield", NULL };
static const char *const huge_names[] = { "auto", "yes", "no", NULL };

#define C_OFF(f) offsetof(struct dpr_config, f)
#define C_SZ(f) sizeof(((struct dpr_config *)0)->f)
#define P_OFF(f) offsetof(struct dpr_port_conf, f)
#define P_SZ(f) sizeof(((struct dpr_port_conf *)0)->f)

static const struct key_def key_defs[] = {
	{ "eal", "lcores", KT_LCORES, C_OFF(eal.lcores), C_SZ(eal.lcores),
	  .help = "lcores to run on, e.g. 0-1 or 0,2-3; the lowest is the main "
		  "(control) lcore, every other one runs a worker poll loop" },
	{ "eal", "vdev", KT_MULTI, C_OFF(eal.vdev), C_SZ(eal.vdev[0]),
	  .count_off = C_OFF(eal.n_vdev),
	  .help = "virtual device, as EAL --vdev (repeatable), e.g. "
		  "net_af_packet0,iface=eth1 or net_memif0,role=server" },
	{ "eal", "allow", KT_MULTI, C_OFF(eal.allow), C_SZ(eal.allow[0]),
	  .count_off = C_OFF(eal.n_allow),
	  .help = "PCI device to use, as EAL -a (repeatable), e.g. 0000:3b:00.0; "
		  "with none, dprdmad passes --no-pci" },
	{ "eal", "huge", KT_ENUM, C_OFF(eal.huge), C_SZ(eal.huge),
	  .names = huge_names,
	  .help = "hugepages: auto (use them if free, else --no-huge with a "
		  "warning), yes (required), no (--no-huge)" },
	{ "eal", "memory", KT_UINT, C_OFF(eal.memory_mb), C_SZ(eal.memory_mb),
	  64, 65536, .help = "MiB of memory: needed free hugepages, or -m with --no-huge" },
	{ "eal", "file_prefix", KT_STR, C_OFF(eal.file_prefix),
	  C_SZ(eal.file_prefix), 1, .help = "EAL --file-prefix: names the runtime "
		  "folder and telemetry socket (dpdk-telemetry.py -f PREFIX); "
		  "unique per daemon" },
	{ "eal", "log_level", KT_STR, C_OFF(eal.log_level), C_SZ(eal.log_level),
	  .help = "EAL --log-level, e.g. info, or dprdma.*:debug" },
	{ "eal", "extra", KT_STR, C_OFF(eal.extra), C_SZ(eal.extra),
	  .help = "further EAL arguments, separated by blanks" },

	{ "engine", "burst", KT_UINT, C_OFF(engine.burst), C_SZ(engine.burst),
	  1, DPR_MAX_BURST, .help = "packets per RX/TX burst" },
	{ "engine", "mbufs", KT_UINT, C_OFF(engine.mbufs), C_SZ(engine.mbufs),
	  0, 4194304, .help = "mbufs in the packet pool, 0 = sized from the "
		  "ports' rings and the worker count" },
	{ "engine", "idle", KT_ENUM, C_OFF(engine.idle), C_SZ(engine.idle),
	  .names = idle_names,
	  .help = "what a worker does with nothing to do: busy (spin, one "
		  "core per worker, lowest latency) or yield (sleep, shares cores)" },
	{ "engine", "idle_sleep_us", KT_UINT, C_OFF(engine.idle_sleep_us),
	  C_SZ(engine.idle_sleep_us), 1, 100000,
	  .help = "microseconds a yielding worker sleeps when idle" },
	{ "engine", "zero_copy", KT_UINT, C_OFF(engine.zero_copy),
	  C_SZ(engine.zero_copy), 0, 65536,
	  .help = "payload pieces of at least this many bytes are sent from "
		  "the MR where they lie (external buffers), smaller ones are "
		  "copied; 0: always copy" },
	{ "engine", "stats_interval", KT_UINT, C_OFF(engine.stats_interval),
	  C_SZ(engine.stats_interval), 0, 86400,
	  .help = "seconds between counter lines on stdout, 0 = none" },

	{ "port", "ip", KT_IPV4_PREFIX, 0, 0,
	  .help = "IPv4 address and prefix length, e.g. 10.77.0.1/24; the "
		  "port answers ARP and ping for it and speaks RoCEv2 from it" },
	{ "port", "mtu", KT_UINT, P_OFF(mtu), P_SZ(mtu), 576, 9216,
	  .help = "Ethernet MTU; the RoCE path MTU follows as rxe computes it "
		  "(1500 -> 1024, 4200 -> 4096)" },
	{ "port", "rx_desc", KT_UINT, P_OFF(rx_desc), P_SZ(rx_desc), 64, 16384,
	  .pow2 = true, .help = "RX descriptors per queue (power of two)" },
	{ "port", "tx_desc", KT_UINT, P_OFF(tx_desc), P_SZ(tx_desc), 64, 16384,
	  .pow2 = true, .help = "TX descriptors per queue (power of two)" },
	{ "port", "faults", KT_FAULTS, 0, 0,
	  .help = "inject faults into what the port sends: loss=P,reorder=P,"
		  "dup=P,corrupt=P,delay_us=N,seed=N (P a probability 0-1); "
		  "empty: none" },

	{ "control", "socket", KT_SOCKET, C_OFF(control.socket),
	  C_SZ(control.socket),
	  .help = "Unix socket local clients connect to (they read "
		  DPR_SOCKET_ENV ")" },
	{ "control", "socket_mode", KT_UINT, C_OFF(control.socket_mode),
	  C_SZ(control.socket_mode), 0, 0777,
	  .help = "permissions of the client socket (octal with a leading 0, "
		  "e.g. 0660: owner and group may connect)" },
	{ "control", "max_clients", KT_UINT, C_OFF(control.max_clients),
	  C_SZ(control.max_clients), 1, 1024,
	  .help = "client connections (device contexts) served at once" },
};

static const char *const section_names[] = { "eal", "engine", "port", "control" };

#define ERR(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

void
dpr_config_defaults(struct dpr_config *conf)
{
	unsigned int i;

	memset(conf, 0, sizeof(*conf));
	snprintf(conf->eal.lcores, sizeof(conf->eal.lcores), "0-1");
	snprintf(conf->eal.vdev[0], sizeof(conf->eal.vdev[0]),
		 "net_tap0,iface=dprdma0,mac=fixed");
	conf->eal.n_vdev = 1;
	conf->eal.huge = DPR_HUGE_AUTO;
	conf->eal.memory_mb = 256;
	snprintf(conf->eal.file_prefix, sizeof(conf->eal.file_prefix), "dprdmad");

	conf->engine.burst = 32;
	conf->engine.mbufs = 0;
	/* Yield by default: the default runs on virtual devices on machines
	 * shared with other work. A box with a core per worker sets busy. */
	conf->engine.idle = DPR_IDLE_YIELD;
	conf->engine.idle_sleep_us = 100;
	conf->engine.stats_interval = 0;
	conf->engine.zero_copy = 256;

	for (i = 0; i < DPR_MAX_PORTS; i++) {
		conf->port[i].mtu = 1500;
		conf->port[i].rx_desc = 1024;
		conf->port[i].tx_desc = 1024;
	}
	conf->port[0].ip = htonl(0x0a4d0001); /* 10.77.0.1 */
	conf->port[0].prefix_len = 24;

	snprintf(conf->control.socket, sizeof(conf->control.socket), "%s",
		 DPR_DEFAULT_SOCKET);
	conf->control.socket_mode = 0660;
	conf->control.max_clients = 256;
}

/* "port3" -> 3; anything else -> -1 */
static int
port_section_index(const char *section)
{
	char *end;
	unsigned long n;

	if (strncmp(section, "port", 4) != 0 || !isdigit((unsigned char)section[4]))
		return -1;
	n = strtoul(section + 4, &end, 10);
	if (*end != '\0' || n >= DPR_MAX_PORTS)
		return -1;
	return (int)n;
}

static bool
section_known(const char *section)
{
	unsigned int i;

	if (port_section_index(section) >= 0)
		return true;
	for (i = 0; i < RTE_DIM(section_names); i++)
		if (strcmp(section, section_names[i]) == 0 &&
		    strcmp(section, "port") != 0)
			return true;
	return false;
}

static const struct key_def *
key_find(const char *section, const char *key)
{
	const char *sec = port_section_index(section) >= 0 ? "port" : section;
	unsigned int i;

	for (i = 0; i < RTE_DIM(key_defs); i++)
		if (strcmp(key_defs[i].section, sec) == 0 &&
		    strcmp(key_defs[i].key, key) == 0)
			return &key_defs[i];
	return NULL;
}

/* The keys of a section, comma separated, for "unknown key" messages. */
static void
section_keys(const char *section, char *buf, size_t len)
{
	const char *sec = port_section_index(section) >= 0 ? "port" : section;
	size_t used = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < RTE_DIM(key_defs) && used < len; i++)
		if (strcmp(key_defs[i].section, sec) == 0)
			used += snprintf(buf + used, len - used, "%s%s",
					 used ? ", " : "", key_defs[i].key);
}

int
dpr_parse_faults(const char *s, struct dpr_fault_conf *f, char *why, size_t len)
{
	char buf[DPR_CONF_VALUE_LEN], *item, *save;

	memset(f, 0, sizeof(*f));
	f->seed = 1;
	snprintf(buf, sizeof(buf), "%s", s);
	for (item = strtok_r(buf, ",", &save); item != NULL;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '='), *end;
		double *p = NULL;

		if (eq == NULL) {
			snprintf(why, len, "'%s' is not name=value", item);
			return -1;
		}
		*eq++ = '\0';
		if (strcmp(item, "loss") == 0)
			p = &f->loss;
		else if (strcmp(item, "reorder") == 0)
			p = &f->reorder;
		else if (strcmp(item, "dup") == 0)
			p = &f->dup;
		else if (strcmp(item, "corrupt") == 0)
			p = &f->corrupt;
		if (p != NULL) {
			*p = strtod(eq, &end);
			if (*eq == '\0' || *end != '\0' || !(*p >= 0 && *p <= 1)) {
				snprintf(why, len, "%s must be a probability from 0 to 1",
					 item);
				return -1;
			}
		} else if (strcmp(item, "delay_us") == 0 || strcmp(item, "seed") == 0) {
			unsigned long long v = strtoull(eq, &end, 0);

			if (*eq == '\0' || *eq == '-' || *end != '\0' ||
			    (item[0] == 'd' && v > 1000000)) {
				snprintf(why, len, "%s must be a whole number%s", item,
					 item[0] == 'd' ? " up to 1000000" : "");
				return -1;
			}
			if (item[0] == 'd')
				f->delay_us = (uint32_t)v;
			else
				f->seed = v;
		} else {
			snprintf(why, len, "unknown fault '%s' (known: loss, reorder, "
				 "dup, corrupt, delay_us, seed)", item);
			return -1;
		}
	}
	f->on = f->loss > 0 || f->reorder > 0 || f->dup > 0 || f->corrupt > 0 ||
		f->delay_us > 0;
	return 0;
}

int
dpr_parse_ipv4_prefix(const char *s, uint32_t *ip, uint8_t *len)
{
	char addr[INET_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	struct in_addr a;
	char *end;
	unsigned long l;

	if (slash == NULL || (size_t)(slash - s) >= sizeof(addr))
		return -1;
	memcpy(addr, s, slash - s);
	addr[slash - s] = '\0';
	if (inet_pton(AF_INET, addr, &a) != 1)
		return -1;
	if (!isdigit((unsigned char)slash[1]))
		return -1;
	l = strtoul(slash + 1, &end, 10);
	if (*end != '\0' || l > 32)
		return -1;
	*ip = a.s_addr;
	*len = (uint8_t)l;
	return 0;
}

int
dpr_parse_lcore_list(const char *s, uint64_t *bits, unsigned int max)
{
	const char *p = s;
	int count = 0;

	memset(bits, 0, ((max + 63) / 64) * sizeof(uint64_t));
	while (*p != '\0') {
		unsigned long lo, hi, i;
		char *end;

		while (isspace((unsigned char)*p))
			p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		lo = strtoul(p, &end, 10);
		hi = lo;
		p = end;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				return -1;
			hi = strtoul(p, &end, 10);
			p = end;
		}
		if (hi < lo || hi >= max)
			return -1;
		for (i = lo; i <= hi; i++) {
			if (!(bits[i / 64] & (1ULL << (i % 64))))
				count++;
			bits[i / 64] |= 1ULL << (i % 64);
		}
		while (isspace((unsigned char)*p))
			p++;
		if (*p == ',')
			p++;
		else if (*p != '\0')
			return -1;
	}
	return count;
}

static int
check_lcores(const char *value, char *why, size_t whylen)
{
	uint64_t bits[(RTE_MAX_LCORE + 63) / 64];
	cpu_set_t avail;
	char list[128];
	size_t used = 0;
	int n, i;

	n = dpr_parse_lcore_list(value, bits, RTE_MAX_LCORE);
	if (n < 0) {
		snprintf(why, whylen, "is not an lcore list (expected e.g. 0-1 "
			 "or 0,2-3, lcores below %d)", RTE_MAX_LCORE);
		return -1;
	}
	if (n < 2) {
		snprintf(why, whylen, "names %d lcore; dprdmad needs a main "
			 "lcore and at least one worker lcore, e.g. 0-1", n);
		return -1;
	}
	if (n - 1 > DPR_MAX_WORKERS) {
		snprintf(why, whylen, "gives %d workers; at most %d are supported",
			 n - 1, DPR_MAX_WORKERS);
		return -1;
	}
	if (sched_getaffinity(0, sizeof(avail), &avail) != 0)
		return 0; /* cannot tell: let the EAL decide */
	list[0] = '\0';
	for (i = 0; i < CPU_SETSIZE && used < sizeof(list); i++)
		if (CPU_ISSET(i, &avail))
			used += snprintf(list + used, sizeof(list) - used, "%s%d",
					 used ? "," : "", i);
	for (i = 0; i < RTE_MAX_LCORE; i++) {
		if (!(bits[i / 64] & (1ULL << (i % 64))))
			continue;
		if (i >= CPU_SETSIZE || !CPU_ISSET(i, &avail)) {
			snprintf(why, whylen, "names lcore %d, which is not "
				 "available to this process (available CPUs: %s)",
				 i, list);
			return -1;
		}
	}
	return 0;
}

static void
store_uint(void *field, size_t size, unsigned long v)
{
	switch (size) {
	case 1: *(uint8_t *)field = (uint8_t)v; break;
	case 2: *(uint16_t *)field = (uint16_t)v; break;
	default: *(uint32_t *)field = (uint32_t)v; break;
	}
}

static unsigned long
load_uint(const void *field, size_t size)
{
	switch (size) {
	case 1: return *(const uint8_t *)field;
	case 2: return *(const uint16_t *)field;
	default: return *(const uint32_t *)field;
	}
}

static void
enum_list(const char *const *names, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (; *names != NULL && used < len; names++)
		used += snprintf(buf + used, len - used, "%s%s",
				 used ? ", " : "", *names);
}

int
dpr_config_set(struct dpr_config *conf, const char *section, const char *key,
	       const char *value, const char *origin, char *err, size_t errlen)
{
	const struct key_def *k;
	int port = port_section_index(section);
	char *base, *field, why[256], list[256];
	unsigned long v;
	char *end;

	if (!section_known(section))
		ERR("%s: unknown section [%s] (known: [eal], [engine], [port0] to "
		    "[port%d], [control])", origin, section, DPR_MAX_PORTS - 1);
	k = key_find(section, key);
	if (k == NULL) {
		section_keys(section, list, sizeof(list));
		ERR("%s: [%s] has no key '%s' (known: %s)", origin, section, key,
		    list);
	}
	base = port >= 0 ? (char *)&conf->port[port] : (char *)conf;
	field = base + k->off;

	switch (k->type) {
	case KT_UINT:
		errno = 0;
		v = strtoul(value, &end, 0);
		if (value[0] == '\0' || value[0] == '-' || *end != '\0' ||
		    errno != 0 || v < k->min || v > k->max)
			ERR("%s: [%s] %s = '%s': expected a whole number from %lu "
			    "to %lu", origin, section, key, value, k->min, k->max);
		if (k->pow2 && !rte_is_power_of_2((uint32_t)v))
			ERR("%s: [%s] %s = '%s': expected a power of two from %lu "
			    "to %lu", origin, section, key, value, k->min, k->max);
		store_uint(field, k->size, v);
		break;
	case KT_STR:
		/* min: the shortest value allowed (file_prefix names a folder:
		 * an empty one would reach the EAL as --file-prefix '') */
		if (strlen(value) < k->min)
			ERR("%s: [%s] %s: empty value; expected %s", origin,
			    section, key, k->help);
		if (strlen(value) >= k->size)
			ERR("%s: [%s] %s: value is %zu characters; at most %zu",
			    origin, section, key, strlen(value), k->size - 1);
		snprintf(field, k->size, "%s", value);
		break;
	case KT_MULTI: {
		unsigned int *count = (unsigned int *)(base + k->count_off);

		if (*count >= DPR_MAX_EAL_DEVS)
			ERR("%s: [%s] %s: more than %d entries", origin, section,
			    key, DPR_MAX_EAL_DEVS);
		if (value[0] == '\0')
			ERR("%s: [%s] %s: empty value; expected a device name "
			    "and its arguments", origin, section, key);
		snprintf(field + *count * k->size, k->size, "%s", value);
		(*count)++;
		break;
	}
	case KT_ENUM: {
		unsigned int i;

		for (i = 0; k->names[i] != NULL; i++)
			if (strcmp(value, k->names[i]) == 0)
				break;
		if (k->names[i] == NULL) {
			enum_list(k->names, list, sizeof(list));
			ERR("%s: [%s] %s = '%s': expected one of: %s", origin,
			    section, key, value, list);
		}
		store_uint(field, k->size, i);
		break;
	}
	case KT_IPV4_PREFIX: {
		struct dpr_port_conf *pc = &conf->port[port];
		uint32_t ip;
		uint8_t len;
		uint32_t h;

		if (dpr_parse_ipv4_prefix(value, &ip, &len) != 0)
			ERR("%s: [%s] %s = '%s': expected an IPv4 address with "
			    "prefix length, e.g. 10.77.0.1/24", origin, section,
			    key, value);
		h = ntohl(ip);
		if (h == 0 || (h >> 24) == 127 || (h >> 28) >= 0xe ||
		    (len < 31 && (h | (0xffffffffu >> len)) == h && len > 0) ||
		    (len < 31 && (h & (0xffffffffu >> len)) == 0 && len > 0))
			ERR("%s: [%s] %s = '%s': not a usable unicast host "
			    "address (not 0, loopback, multicast, or the subnet's "
			    "network or broadcast address)", origin, section, key,
			    value);
		pc->ip = ip;
		pc->prefix_len = len;
		break;
	}
	case KT_LCORES:
		if (check_lcores(value, why, sizeof(why)) != 0)
			ERR("%s: [%s] %s = '%s' %s", origin, section, key, value,
			    why);
		if (strlen(value) >= k->size)
			ERR("%s: [%s] %s: value too long", origin, section, key);
		snprintf(field, k->size, "%s", value);
		break;
	case KT_FAULTS: {
		struct dpr_fault_conf fc;

		if (dpr_parse_faults(value, &fc, why, sizeof(why)) != 0)
			ERR("%s: [%s] %s = '%s': %s (expected e.g. loss=0.01,"
			    "reorder=0.01,dup=0.001,corrupt=0.001,delay_us=0,seed=1)",
			    origin, section, key, value, why);
		conf->port[port].faults = fc;
		break;
	}
	case KT_SOCKET:
		if (value[0] != '/' || strlen(value) >= k->size)
			ERR("%s: [%s] %s = '%s': expected an absolute path shorter "
			    "than %zu characters", origin, section, key, value,
			    k->size);
		snprintf(field, k->size, "%s", value);
		break;
	}
	return 0;
}

/*
 * rte_cfgfile reports neither line numbers nor which line it could not
 * parse. This pass reads the file as plain lines first, so that every
 * message can name the line; rte_cfgfile then does the actual parse.
 */
struct line_ref {
	char section[CFG_NAME_LEN];
	char key[CFG_NAME_LEN];
	unsigned int line;
	bool used;
};

static char *
trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int
prescan(const char *path, struct line_ref **refs_out, unsigned int *n_out,
	char *err, size_t errlen)
{
	struct line_ref *refs = NULL, *r;
	unsigned int n = 0, cap = 0, lineno = 0, i;
	char section[CFG_NAME_LEN] = "";
	char buf[1024];
	FILE *f;

	f = fopen(path, "r");
	if (f == NULL)
		ERR("%s: cannot open config file: %s", path, strerror(errno));

	while (fgets(buf, sizeof(buf), f) != NULL) {
		char *line, *eq, *key, *val, *c;

		lineno++;
		if (strchr(buf, '\n') == NULL && !feof(f)) {
			snprintf(err, errlen, "%s:%u: line longer than %zu "
				 "characters", path, lineno, sizeof(buf) - 2);
			goto fail;
		}
		c = strchr(buf, ';');
		if (c != NULL)
			*c = '\0';
		line = trim(buf);
		if (*line == '\0')
			continue;
		if (*line == '#') {
			snprintf(err, errlen, "%s:%u: comments start with ';', "
				 "not '#'", path, lineno);
			goto fail;
		}
		if (*line == '[') {
			char *close = strchr(line, ']');

			if (close == NULL || close[1] != '\0') {
				snprintf(err, errlen, "%s:%u: bad section header "
					 "'%s' (expected [name])", path, lineno, line);
				goto fail;
			}
			*close = '\0';
			snprintf(section, sizeof(section), "%s", trim(line + 1));
			if (!section_known(section)) {
				snprintf(err, errlen, "%s:%u: unknown section [%s] "
					 "(known: [eal], [engine], [port0] to "
					 "[port%d], [control])", path, lineno,
					 section, DPR_MAX_PORTS - 1);
				goto fail;
			}
			continue;
		}
		eq = strchr(line, '=');
		if (eq == NULL) {
			snprintf(err, errlen, "%s:%u: '%s' is neither [section] "
				 "nor key = value", path, lineno, line);
			goto fail;
		}
		if (section[0] == '\0') {
			snprintf(err, errlen, "%s:%u: key before any [section]",
				 path, lineno);
			goto fail;
		}
		*eq = '\0';
		key = trim(line);
		val = trim(eq + 1);
		if (strlen(key) >= CFG_NAME_LEN || strlen(val) >= CFG_VALUE_LEN) {
			snprintf(err, errlen, "%s:%u: [%s] %s: key longer than %d "
				 "or value longer than %d characters", path,
				 lineno, section, key, CFG_NAME_LEN - 1,
				 CFG_VALUE_LEN - 1);
			goto fail;
		}
		if (key_find(section, key) == NULL) {
			char list[256];

			section_keys(section, list, sizeof(list));
			snprintf(err, errlen, "%s:%u: [%s] has no key '%s' "
				 "(known: %s)", path, lineno, section, key, list);
			goto fail;
		}
		for (i = 0; i < n; i++)
			if (strcmp(refs[i].section, section) == 0 &&
			    strcmp(refs[i].key, key) == 0 &&
			    key_find(section, key)->type != KT_MULTI) {
				snprintf(err, errlen, "%s:%u: [%s] %s is set twice "
					 "(first at line %u)", path, lineno,
					 section, key, refs[i].line);
				goto fail;
			}
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			r = realloc(refs, cap * sizeof(*refs));
			if (r == NULL) {
				snprintf(err, errlen, "%s: out of memory", path);
				goto fail;
			}
			refs = r;
		}
		snprintf(refs[n].section, sizeof(refs[n].section), "%s", section);
		snprintf(refs[n].key, sizeof(refs[n].key), "%s", key);
		refs[n].line = lineno;
		refs[n].used = false;
		n++;
	}
	fclose(f);
	*refs_out = refs;
	*n_out = n;
	return 0;
fail:
	fclose(f);
	free(refs);
	return -1;
}

/* Line of the next unused occurrence of section/key. */
static unsigned int
ref_line(struct line_ref *refs, unsigned int n, const char *section,
	 const char *key)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!refs[i].used && strcmp(refs[i].section, section) == 0 &&
		    strcmp(refs[i].key, key) == 0) {
			refs[i].used = true;
			return refs[i].line;
		}
	return 0;
}

int
dpr_config_load(struct dpr_config *conf, const char *path, char *err,
		size_t errlen)
{
	struct line_ref *refs = NULL;
	struct rte_cfgfile *cfg;
	unsigned int n_refs = 0;
	int n_sec, s, rc = -1;
	char (*names)[CFG_NAME_LEN] = NULL;

	if (prescan(path, &refs, &n_refs, err, errlen) != 0)
		return -1;

	cfg = rte_cfgfile_load(path, CFG_FLAG_EMPTY_VALUES);
	if (cfg == NULL) {
		snprintf(err, errlen, "%s: rte_cfgfile could not parse the file",
			 path);
		goto out;
	}
	snprintf(conf->path, sizeof(conf->path), "%s", path);

	/* A file's [eal] section stands for the whole EAL set-up: the
	 * default device must not stay behind a file that names its own. */
	if (rte_cfgfile_has_section(cfg, "eal")) {
		conf->eal.n_vdev = 0;
		conf->eal.n_allow = 0;
	}

	n_sec = rte_cfgfile_num_sections(cfg, NULL, 0);
	names = calloc(n_sec > 0 ? n_sec : 1, sizeof(*names));
	if (names == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	/* rte_cfgfile_sections() copies each name into a caller buffer */
	{
		char *ptrs[n_sec > 0 ? n_sec : 1];

		for (s = 0; s < n_sec; s++)
			ptrs[s] = names[s];
		rte_cfgfile_sections(cfg, ptrs, n_sec);
	}
	for (s = 0; s < n_sec; s++) {
		int n_ent = rte_cfgfile_section_num_entries(cfg, names[s]);
		struct rte_cfgfile_entry *ent;
		int e;

		if (n_ent <= 0)
			continue;
		ent = calloc(n_ent, sizeof(*ent));
		if (ent == NULL) {
			snprintf(err, errlen, "%s: out of memory", path);
			goto out;
		}
		rte_cfgfile_section_entries(cfg, names[s], ent, n_ent);
		for (e = 0; e < n_ent; e++) {
			char origin[PATH_MAX + 16];

			snprintf(origin, sizeof(origin), "%s:%u", path,
				 ref_line(refs, n_refs, names[s], ent[e].name));
			if (dpr_config_set(conf, names[s], ent[e].name,
					   ent[e].value, origin, err,
					   errlen) != 0) {
				free(ent);
				goto out;
			}
		}
		free(ent);
	}
	rc = 0;
out:
	if (cfg != NULL)
		rte_cfgfile_close(cfg);
	free(names);
	free(refs);
	return rc;
}

unsigned long
dpr_config_free_huge_mb(void)
{
	unsigned long total = 0;
	glob_t g;
	size_t i;

	if (glob("/sys/kernel/mm/hugepages/hugepages-*kB/free_hugepages", 0,
		 NULL, &g) != 0)
		return 0;
	for (i = 0; i < g.gl_pathc; i++) {
		unsigned long kb = 0, n = 0;
		FILE *f;

		if (sscanf(g.gl_pathv[i],
			   "/sys/kernel/mm/hugepages/hugepages-%lukB", &kb) != 1)
			continue;
		f = fopen(g.gl_pathv[i], "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%lu", &n) == 1)
			total += n * kb / 1024;
		fclose(f);
	}
	globfree(&g);
	return total;
}

/* Append one argument, copying it into buf. */
static int
push_arg(char **argv, int *argc, int max, char *buf, size_t buflen,
	 size_t *used, const char *arg)
{
	size_t l = strlen(arg) + 1;

	if (*argc >= max - 1 || *used + l > buflen)
		return -1;
	memcpy(buf + *used, arg, l);
	argv[(*argc)++] = buf + *used;
	argv[*argc] = NULL;
	*used += l;
	return 0;
}

int
dpr_config_eal_args(const struct dpr_config *conf, const char *prog,
		    char **argv, int max, char *buf, size_t buflen,
		    char *err, size_t errlen)
{
	const struct dpr_eal_conf *e = &conf->eal;
	const char *where = conf->path[0] ? conf->path : "built-in default";
	char extra[DPR_CONF_VALUE_LEN], mem[32], *tok, *save;
	unsigned long free_mb;
	size_t used = 0;
	int argc = 0;
	unsigned int i;
	bool no_huge = e->huge == DPR_HUGE_NO;

#define PUSH(a) do { \
		if (push_arg(argv, &argc, max, buf, buflen, &used, (a)) != 0) \
			ERR("%s: [eal]: too many EAL arguments", where); \
	} while (0)

	PUSH(prog);
	PUSH("-l");
	PUSH(e->lcores);
	PUSH("--file-prefix");
	PUSH(e->file_prefix);
	for (i = 0; i < e->n_vdev; i++) {
		PUSH("--vdev");
		PUSH(e->vdev[i]);
	}
	for (i = 0; i < e->n_allow; i++) {
		PUSH("-a");
		PUSH(e->allow[i]);
	}
	if (e->n_allow == 0)
		PUSH("--no-pci");

	if (!no_huge) {
		free_mb = dpr_config_free_huge_mb();
		if (free_mb < e->memory_mb) {
			if (e->huge == DPR_HUGE_YES)
				ERR("%s: [eal] huge = yes, but only %lu MiB of "
				    "hugepages are free and memory = %u MiB: "
				    "reserve them with 'echo %u > /sys/kernel/mm/"
				    "hugepages/hugepages-2048kB/nr_hugepages' "
				    "(or tools/setup.sh), or set huge = auto",
				    where, free_mb, e->memory_mb,
				    (e->memory_mb + 1) / 2);
			fprintf(stderr, "dprdmad: warning: %lu MiB of hugepages "
				"free, %u MiB wanted: running with --no-huge "
				"(slower, no zero-copy DMA to a real NIC). "
				"Reserve them with 'echo %u > /sys/kernel/mm/"
				"hugepages/hugepages-2048kB/nr_hugepages'\n",
				free_mb, e->memory_mb, (e->memory_mb + 1) / 2);
			no_huge = true;
		}
	}
	if (no_huge) {
		snprintf(mem, sizeof(mem), "%u", e->memory_mb);
		PUSH("--no-huge");
		PUSH("-m");
		PUSH(mem);
	} else {
		/* Hugepages without a hugetlbfs mount: the EAL backs them
		 * with memfd. dprdmad has no secondary processes. */
		PUSH("--in-memory");
	}
	if (e->log_level[0] != '\0') {
		PUSH("--log-level");
		PUSH(e->log_level);
	}
	snprintf(extra, sizeof(extra), "%s", e->extra);
	for (tok = strtok_r(extra, " \t", &save); tok != NULL;
	     tok = strtok_r(NULL, " \t", &save))
		PUSH(tok);
#undef PUSH
	return argc;
}

static void
format_value(const struct dpr_config *conf, int port, const struct key_def *k,
	     unsigned int idx, char *buf, size_t len)
{
	const char *base = port >= 0 ? (const char *)&conf->port[port] :
		(const char *)conf;
	const char *field = base + k->off;

	switch (k->type) {
	case KT_UINT:
		snprintf(buf, len, "%lu", load_uint(field, k->size));
		break;
	case KT_ENUM:
		snprintf(buf, len, "%s", k->names[load_uint(field, k->size)]);
		break;
	case KT_MULTI:
		snprintf(buf, len, "%s", field + idx * k->size);
		break;
	case KT_IPV4_PREFIX: {
		char a[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &conf->port[port].ip, a, sizeof(a));
		snprintf(buf, len, "%s/%u", a, conf->port[port].prefix_len);
		break;
	}
	case KT_FAULTS: {
		const struct dpr_fault_conf *f = &conf->port[port].faults;

		if (!f->on)
			buf[0] = '\0';
		else
			snprintf(buf, len, "loss=%g,reorder=%g,dup=%g,corrupt=%g,"
				 "delay_us=%u,seed=%llu", f->loss, f->reorder, f->dup,
				 f->corrupt, f->delay_us, (unsigned long long)f->seed);
		break;
	}
	default:
		snprintf(buf, len, "%s", field);
		break;
	}
}

static void
dump_section(const struct dpr_config *conf, const char *section, int port,
	     FILE *f)
{
	const char *sec = port >= 0 ? "port" : section;
	char val[DPR_CONF_VALUE_LEN + 32];
	unsigned int i, j;

	fprintf(f, "[%s]\n", section);
	for (i = 0; i < RTE_DIM(key_defs); i++) {
		const struct key_def *k = &key_defs[i];

		if (strcmp(k->section, sec) != 0)
			continue;
		if (k->type == KT_MULTI) {
			unsigned int n = *(const unsigned int *)
				((const char *)conf + k->count_off);

			for (j = 0; j < n; j++) {
				format_value(conf, port, k, j, val, sizeof(val));
				fprintf(f, "%s = %s\n", k->key, val);
			}
			continue;
		}
		if (k->type == KT_IPV4_PREFIX && conf->port[port].ip == 0)
			continue;
		format_value(conf, port, k, 0, val, sizeof(val));
		if ((k->type == KT_STR || k->type == KT_FAULTS) && val[0] == '\0')
			continue;
		fprintf(f, "%s = %s\n", k->key, val);
	}
	fprintf(f, "\n");
}

void
dpr_config_dump(const struct dpr_config *conf, FILE *f)
{
	char name[16];
	int p;

	dump_section(conf, "eal", -1, f);
	dump_section(conf, "engine", -1, f);
	for (p = 0; p < DPR_MAX_PORTS; p++) {
		if (p > 0 && conf->port[p].ip == 0)
			continue;
		snprintf(name, sizeof(name), "port%d", p);
		dump_section(conf, name, p, f);
	}
	dump_section(conf, "control", -1, f);
}

void
dpr_config_help(FILE *f)
{
	const char *last = "";
	unsigned int i;
	char list[128];

	for (i = 0; i < RTE_DIM(key_defs); i++) {
		const struct key_def *k = &key_defs[i];

		if (strcmp(k->section, last) != 0) {
			fprintf(f, "  [%s]\n", strcmp(k->section, "port") == 0 ?
				"port0] .. [port7" : k->section);
			last = k->section;
		}
		fprintf(f, "    %-15s %s", k->key, k->help);
		if (k->type == KT_UINT)
			fprintf(f, " (%lu-%lu)", k->min, k->max);
		if (k->type == KT_ENUM) {
			enum_list(k->names, list, sizeof(list));
			fprintf(f, " (%s)", list);
		}
		fprintf(f, "\n");
	}
}
