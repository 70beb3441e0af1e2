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
 * The registry of rooms (their sections and keys). The parser, the
 * command-line overrides, --help and dpr_config_dump() all read it; tests
 * check that config/dprdmad.conf documents each key. [eal] is the first
 * room, kept here; the others register themselves (dpr_config_register).
 */

#define MAX_ROOMS 16

static struct dpr_conf_room *rooms[MAX_ROOMS];
static unsigned int n_rooms;
static size_t rooms_used;

static const char *const huge_names[] = { "auto", "yes", "no", NULL };

static int parse_lcores(void *area, const char *value, char *why, size_t len);
static void format_lcores(const void *area, char *buf, size_t len);

#define E_OFF(f) offsetof(struct dpr_eal_conf, f)
#define E_SZ(f) sizeof(((struct dpr_eal_conf *)0)->f)

static const struct dpr_conf_key eal_keys[] = {
	{ "lcores", DPR_CONF_CUSTOM, .parse = parse_lcores, .format = format_lcores,
	  .help = "lcores to run on, e.g. 0-1 or 0,2-3; the lowest is the main "
		  "(control) lcore, every other one runs a worker poll loop" },
	{ "vdev", DPR_CONF_MULTI, E_OFF(vdev), E_SZ(vdev[0]),
	  .count_off = E_OFF(n_vdev),
	  .help = "virtual device, as EAL --vdev (repeatable), e.g. "
		  "net_af_packet0,iface=eth1 or net_memif0,role=server" },
	{ "allow", DPR_CONF_MULTI, E_OFF(allow), E_SZ(allow[0]),
	  .count_off = E_OFF(n_allow),
	  .help = "PCI device to use, as EAL -a (repeatable), e.g. 0000:3b:00.0; "
		  "with none, dprdmad passes --no-pci" },
	{ "huge", DPR_CONF_ENUM, E_OFF(huge), E_SZ(huge), .names = huge_names,
	  .help = "hugepages: auto (use them if free, else --no-huge with a "
		  "warning), yes (required), no (--no-huge)" },
	{ "memory", DPR_CONF_UINT, E_OFF(memory_mb), E_SZ(memory_mb), 64, 65536,
	  .help = "MiB of memory: needed free hugepages, or -m with --no-huge" },
	{ "file_prefix", DPR_CONF_STR, E_OFF(file_prefix), E_SZ(file_prefix), 1,
	  .help = "EAL --file-prefix: names the runtime folder and telemetry "
		  "socket (dpdk-telemetry.py -f PREFIX); unique per daemon" },
	{ "log_level", DPR_CONF_STR, E_OFF(log_level), E_SZ(log_level),
	  .help = "EAL --log-level, e.g. info, or dprdma.*:debug" },
	{ "extra", DPR_CONF_STR, E_OFF(extra), E_SZ(extra),
	  .help = "further EAL arguments, separated by blanks" },
};

static void
eal_defaults(void *area, int port __rte_unused)
{
	struct dpr_eal_conf *e = area;

	memset(e, 0, sizeof(*e));
	snprintf(e->lcores, sizeof(e->lcores), "0-1");
	snprintf(e->vdev[0], sizeof(e->vdev[0]), "net_tap0,iface=dprdma0,mac=fixed");
	e->n_vdev = 1;
	e->huge = DPR_HUGE_AUTO;
	e->memory_mb = 256;
	snprintf(e->file_prefix, sizeof(e->file_prefix), "dprdmad");
}

static struct dpr_conf_room eal_room = {
	.section = "eal",
	.size = sizeof(struct dpr_eal_conf),
	.keys = eal_keys,
	.n_keys = RTE_DIM(eal_keys),
	.defaults = eal_defaults,
	.registered = true,
};

#define ERR(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

int
dpr_config_register(struct dpr_conf_room *r)
{
	size_t need;

	if (r->registered)
		return 0;
	if (n_rooms == 0)
		rooms[n_rooms++] = &eal_room;
	need = RTE_ALIGN_CEIL(r->size, 8) * (r->per_port ? DPR_MAX_PORTS : 1);
	if (n_rooms == MAX_ROOMS || rooms_used + need > DPR_CONF_ROOMS_BYTES)
		return -ENOSPC;
	r->off = rooms_used;
	rooms_used += need;
	r->registered = true;
	rooms[n_rooms++] = r;
	return 0;
}

void *
dpr_config_room(const struct dpr_config *conf, const struct dpr_conf_room *r,
		unsigned int port)
{
	if (r == &eal_room)
		return (void *)(uintptr_t)&conf->eal;
	return (uint8_t *)(uintptr_t)conf->rooms + r->off +
		(r->per_port ? RTE_ALIGN_CEIL(r->size, 8) * port : 0);
}

static unsigned int
room_count(void)
{
	return n_rooms ? n_rooms : 1;   /* [eal] alone before any registration */
}

static struct dpr_conf_room *
room_at(unsigned int i)
{
	return n_rooms ? rooms[i] : &eal_room;
}

void
dpr_config_defaults(struct dpr_config *conf)
{
	unsigned int i, p;

	memset(conf, 0, sizeof(*conf));
	for (i = 0; i < room_count(); i++) {
		struct dpr_conf_room *r = room_at(i);

		for (p = 0; p < (r->per_port ? DPR_MAX_PORTS : 1); p++)
			if (r->defaults != NULL)
				r->defaults(dpr_config_room(conf, r, p),
					    r->per_port ? (int)p : -1);
	}
}

/* "port3" -> 3 with *base "port"; a name without a number -> -1 with
 * *base the name; a number out of range or with a leading zero -> -2 */
static int
section_port(const char *section, char *base, size_t len)
{
	size_t n = strcspn(section, "0123456789");
	unsigned long v;
	char *end;

	snprintf(base, len, "%s", section);
	if (section[n] == '\0')
		return -1;
	if (n == 0)
		return -2;
	v = strtoul(section + n, &end, 10);
	if (*end != '\0' || v >= DPR_MAX_PORTS ||
	    (section[n] == '0' && section[n + 1] != '\0'))
		return -2;
	if (n < len)
		base[n] = '\0';
	return (int)v;
}

/* The rooms of a section name, per-port or not, or none: @return true if
 * the section (as written, e.g. "port3") is one. */
static bool
section_known(const char *section)
{
	char base[CFG_NAME_LEN];
	int port = section_port(section, base, sizeof(base));
	unsigned int i;

	if (port == -2)
		return false;
	for (i = 0; i < room_count(); i++) {
		const struct dpr_conf_room *r = room_at(i);

		if (r->per_port == (port >= 0) &&
		    strcmp(r->section, port >= 0 ? base : section) == 0)
			return true;
	}
	return false;
}

/* The sections there are, for "unknown section" messages. */
static void
known_sections(char *buf, size_t len)
{
	size_t used = 0;
	unsigned int i, j;

	buf[0] = '\0';
	for (i = 0; i < room_count() && used < len; i++) {
		const struct dpr_conf_room *r = room_at(i);
		bool seen = false;

		for (j = 0; j < i; j++)
			seen |= strcmp(room_at(j)->section, r->section) == 0 &&
				room_at(j)->per_port == r->per_port;
		if (seen)
			continue;
		if (r->per_port)
			used += snprintf(buf + used, len - used, "%s[%s0] to [%s%d]",
					 used ? ", " : "", r->section, r->section,
					 DPR_MAX_PORTS - 1);
		else
			used += snprintf(buf + used, len - used, "%s[%s]",
					 used ? ", " : "", r->section);
	}
}

static const struct dpr_conf_key *
key_find(const char *section, const char *key, struct dpr_conf_room **room,
	 int *port_out)
{
	char base[CFG_NAME_LEN];
	int port = section_port(section, base, sizeof(base));
	unsigned int i, k;

	for (i = 0; i < room_count() && port != -2; i++) {
		struct dpr_conf_room *r = room_at(i);

		if (r->per_port != (port >= 0) ||
		    strcmp(r->section, port >= 0 ? base : section) != 0)
			continue;
		for (k = 0; k < r->n_keys; k++)
			if (strcmp(r->keys[k].key, key) == 0) {
				if (room != NULL)
					*room = r;
				if (port_out != NULL)
					*port_out = port;
				return &r->keys[k];
			}
	}
	return NULL;
}

/* The keys of a section, comma separated, for "unknown key" messages. */
static void
section_keys(const char *section, char *buf, size_t len)
{
	char base[CFG_NAME_LEN];
	int port = section_port(section, base, sizeof(base));
	size_t used = 0;
	unsigned int i, k;

	buf[0] = '\0';
	for (i = 0; i < room_count(); i++) {
		const struct dpr_conf_room *r = room_at(i);

		if (r->per_port != (port >= 0) ||
		    strcmp(r->section, port >= 0 ? base : section) != 0)
			continue;
		for (k = 0; k < r->n_keys && used < len; k++)
			used += snprintf(buf + used, len - used, "%s%s",
					 used ? ", " : "", r->keys[k].key);
	}
}

/* "ADDR/LEN": ADDR of family @p af into @p ip, LEN (at most @p max). */
static int
parse_prefix(const char *s, int af, void *ip, unsigned long max, uint8_t *len)
{
	char addr[INET6_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	char *end;
	unsigned long l;

	if (slash == NULL || (size_t)(slash - s) >= sizeof(addr))
		return -1;
	memcpy(addr, s, slash - s);
	addr[slash - s] = '\0';
	if (inet_pton(af, addr, ip) != 1)
		return -1;
	if (!isdigit((unsigned char)slash[1]))
		return -1;
	l = strtoul(slash + 1, &end, 10);
	if (*end != '\0' || l > max)
		return -1;
	*len = (uint8_t)l;
	return 0;
}

int
dpr_parse_ipv4_prefix(const char *s, uint32_t *ip, uint8_t *len)
{
	struct in_addr a;

	if (parse_prefix(s, AF_INET, &a, 32, len) != 0)
		return -1;
	*ip = a.s_addr;
	return 0;
}

int
dpr_parse_ipv6_prefix(const char *s, uint8_t ip[16], uint8_t *len)
{
	return parse_prefix(s, AF_INET6, ip, 128, len);
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

static int
parse_lcores(void *area, const char *value, char *why, size_t len)
{
	struct dpr_eal_conf *e = area;

	if (check_lcores(value, why, len) != 0)
		return -1;
	if (strlen(value) >= sizeof(e->lcores)) {
		snprintf(why, len, "too long");
		return -1;
	}
	snprintf(e->lcores, sizeof(e->lcores), "%s", value);
	return 0;
}

static void
format_lcores(const void *area, char *buf, size_t len)
{
	snprintf(buf, len, "%s", ((const struct dpr_eal_conf *)area)->lcores);
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
	const struct dpr_conf_key *k;
	struct dpr_conf_room *r = NULL;
	char *area, *field, why[256], list[256];
	unsigned long v;
	int port = -1;
	char *end;

	if (!section_known(section)) {
		known_sections(list, sizeof(list));
		ERR("%s: unknown section [%s] (known: %s)", origin, section, list);
	}
	k = key_find(section, key, &r, &port);
	if (k == NULL) {
		section_keys(section, list, sizeof(list));
		ERR("%s: [%s] has no key '%s' (known: %s)", origin, section, key,
		    list);
	}
	area = dpr_config_room(conf, r, port >= 0 ? (unsigned int)port : 0);
	field = area + k->off;

	switch (k->type) {
	case DPR_CONF_UINT:
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
	case DPR_CONF_STR:
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
	case DPR_CONF_MULTI: {
		unsigned int *count = (unsigned int *)(area + k->count_off);

		if (*count >= DPR_MAX_EAL_DEVS)
			ERR("%s: [%s] %s: more than %d entries", origin, section,
			    key, DPR_MAX_EAL_DEVS);
		if (value[0] == '\0')
			ERR("%s: [%s] %s: empty value; expected a device name "
			    "and its arguments", origin, section, key);
		if (strlen(value) >= k->size)
			ERR("%s: [%s] %s: value is %zu characters; at most %zu",
			    origin, section, key, strlen(value), k->size - 1);
		snprintf(field + *count * k->size, k->size, "%s", value);
		(*count)++;
		break;
	}
	case DPR_CONF_ENUM: {
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
	case DPR_CONF_CUSTOM:
		if (k->parse(area, value, why, sizeof(why)) != 0)
			ERR("%s: [%s] %s = '%s' %s", origin, section, key, value,
			    why);
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
	/* the sections seen, and where: each may appear once */
	struct { char name[CFG_NAME_LEN]; unsigned int line; } seen[64];
	unsigned int n_seen = 0;
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
		/* rte_cfgfile keeps a ';' after a backslash in the value, so
		 * the two readers would disagree on such a line: refused */
		if (c != NULL && c > buf && c[-1] == '\\') {
			snprintf(err, errlen, "%s:%u: '\\;': ';' always starts a "
				 "comment here and cannot be escaped", path, lineno);
			goto fail;
		}
		if (c != NULL)
			*c = '\0';
		for (c = buf; *c != '\0'; c++)
			if (((unsigned char)*c < 0x20 && *c != '\t' && *c != '\n' &&
			     *c != '\r') || *c == 0x7f) {
				snprintf(err, errlen, "%s:%u: a control character "
					 "(0x%02x) in the line", path, lineno,
					 (unsigned char)*c);
				goto fail;
			}
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
			for (i = 0; i < n_seen; i++)
				if (strcmp(seen[i].name, section) == 0) {
					snprintf(err, errlen, "%s:%u: [%s] again (first "
						 "at line %u): each section once",
						 path, lineno, section, seen[i].line);
					goto fail;
				}
			if (n_seen < RTE_DIM(seen)) {
				snprintf(seen[n_seen].name, sizeof(seen[0].name), "%s",
					 section);
				seen[n_seen++].line = lineno;
			}
			if (!section_known(section)) {
				char list[256];

				known_sections(list, sizeof(list));
				snprintf(err, errlen, "%s:%u: unknown section [%s] "
					 "(known: %s)", path, lineno, section, list);
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
		if (key_find(section, key, NULL, NULL) == NULL) {
			char list[256];

			section_keys(section, list, sizeof(list));
			snprintf(err, errlen, "%s:%u: [%s] has no key '%s' "
				 "(known: %s)", path, lineno, section, key, list);
			goto fail;
		}
		for (i = 0; i < n; i++)
			if (strcmp(refs[i].section, section) == 0 &&
			    strcmp(refs[i].key, key) == 0 &&
			    key_find(section, key, NULL, NULL)->type != DPR_CONF_MULTI) {
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
format_value(const char *area, const struct dpr_conf_key *k, unsigned int idx,
	     char *buf, size_t len)
{
	const char *field = area + k->off;

	switch (k->type) {
	case DPR_CONF_UINT:
		snprintf(buf, len, k->octal ? "%#lo" : "%lu",
			 load_uint(field, k->size));
		break;
	case DPR_CONF_ENUM:
		snprintf(buf, len, "%s", k->names[load_uint(field, k->size)]);
		break;
	case DPR_CONF_MULTI:
		snprintf(buf, len, "%s", field + idx * k->size);
		break;
	case DPR_CONF_CUSTOM:
		k->format(area, buf, len);
		break;
	default:
		snprintf(buf, len, "%s", field);
		break;
	}
}

/* The keys @p r keeps in @p area, as "key = value" lines; empty strings
 * and custom values that format as "" are left out. */
static void
dump_keys(const struct dpr_conf_room *r, const char *area, FILE *f)
{
	char val[DPR_CONF_VALUE_LEN + 32];
	unsigned int i, j;

	for (i = 0; i < r->n_keys; i++) {
		const struct dpr_conf_key *k = &r->keys[i];

		if (k->type == DPR_CONF_MULTI) {
			unsigned int n = *(const unsigned int *)(area + k->count_off);

			for (j = 0; j < n; j++) {
				format_value(area, k, j, val, sizeof(val));
				fprintf(f, "%s = %s\n", k->key, val);
			}
			continue;
		}
		format_value(area, k, 0, val, sizeof(val));
		if ((k->type == DPR_CONF_STR || k->type == DPR_CONF_CUSTOM) &&
		    val[0] == '\0')
			continue;
		fprintf(f, "%s = %s\n", k->key, val);
	}
}

/* Rooms of one section come together: the first of each name leads. */
static bool
leads(unsigned int i)
{
	unsigned int j;

	for (j = 0; j < i; j++)
		if (strcmp(room_at(j)->section, room_at(i)->section) == 0 &&
		    room_at(j)->per_port == room_at(i)->per_port)
			return false;
	return true;
}

/* Does port @p p differ, in any room of the per-port section of room
 * @p lead, from the compiled-in default? */
static bool
port_set(const struct dpr_config *conf, unsigned int lead, unsigned int p)
{
	static struct dpr_config def;
	unsigned int i;

	dpr_config_defaults(&def);
	for (i = lead; i < room_count(); i++) {
		const struct dpr_conf_room *r = room_at(i);

		if (r->per_port && strcmp(r->section, room_at(lead)->section) == 0 &&
		    memcmp(dpr_config_room(conf, r, p), dpr_config_room(&def, r, p),
			   r->size) != 0)
			return true;
	}
	return false;
}

void
dpr_config_dump(const struct dpr_config *conf, FILE *f)
{
	unsigned int i, j, p;

	for (i = 0; i < room_count(); i++) {
		const struct dpr_conf_room *r = room_at(i);

		if (!leads(i))
			continue;
		for (p = 0; p < (r->per_port ? DPR_MAX_PORTS : 1); p++) {
			/* a port is written when it is the first or set */
			if (r->per_port && p > 0 && !port_set(conf, i, p))
				continue;
			if (r->per_port)
				fprintf(f, "[%s%u]\n", r->section, p);
			else
				fprintf(f, "[%s]\n", r->section);
			for (j = i; j < room_count(); j++)
				if (strcmp(room_at(j)->section, r->section) == 0 &&
				    room_at(j)->per_port == r->per_port)
					dump_keys(room_at(j),
						  dpr_config_room(conf, room_at(j), p), f);
			fprintf(f, "\n");
		}
	}
}

void
dpr_config_help(FILE *f)
{
	unsigned int i, j, k;
	char list[128];

	for (i = 0; i < room_count(); i++) {
		const struct dpr_conf_room *r = room_at(i);

		if (!leads(i))
			continue;
		if (r->per_port)
			fprintf(f, "  [%s0] .. [%s%d]\n", r->section, r->section,
				DPR_MAX_PORTS - 1);
		else
			fprintf(f, "  [%s]\n", r->section);
		for (j = i; j < room_count(); j++) {
			const struct dpr_conf_room *q = room_at(j);

			if (strcmp(q->section, r->section) != 0 ||
			    q->per_port != r->per_port)
				continue;
			for (k = 0; k < q->n_keys; k++) {
				const struct dpr_conf_key *key = &q->keys[k];

				fprintf(f, "    %-15s %s", key->key, key->help);
				if (key->type == DPR_CONF_UINT)
					fprintf(f, key->octal ? " (%#lo-%#lo)" :
						" (%lu-%lu)", key->min, key->max);
				if (key->type == DPR_CONF_ENUM) {
					enum_list(key->names, list, sizeof(list));
					fprintf(f, " (%s)", list);
				}
				fprintf(f, "\n");
			}
		}
	}
}
