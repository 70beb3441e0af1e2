/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/mman.h>

#include <rte_cfgfile.h>
#include <rte_common.h>

#include "dpr_config.h"

/*
 * The registry of rooms (their sections and keys). The parser, the
 * command-line overrides, --help and dpr_config_dump() all read it; tests
 * check that config/dprdmad.conf documents each key. [eal] is the first
 * room (dpr_config_eal.c); the others register themselves
 * (dpr_config_register).
 */

#define MAX_ROOMS 16

extern struct dpr_conf_room dpr_eal_room;     /* dpr_config_eal.c */

static struct dpr_conf_room *rooms[MAX_ROOMS];
static unsigned int n_rooms;
static size_t rooms_used;

#define ERR(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

int
dpr_config_register(struct dpr_conf_room *r)
{
	size_t need;

	if (r->registered)
		return 0;
	if (n_rooms == 0)
		rooms[n_rooms++] = &dpr_eal_room;
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
	if (r == &dpr_eal_room)
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
	return n_rooms ? rooms[i] : &dpr_eal_room;
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

/* The configuration is read from @p f, named @p path in what it says. */
static int
prescan(FILE *f, const char *path, struct line_ref **refs_out, unsigned int *n_out,
	char *err, size_t errlen)
{
	struct line_ref *refs = NULL, *r;
	unsigned int n = 0, cap = 0, lineno = 0, i;
	char section[CFG_NAME_LEN] = "";
	/* the sections seen, and where: each may appear once */
	struct { char name[CFG_NAME_LEN]; unsigned int line; } seen[64];
	unsigned int n_seen = 0;
	char buf[1024];

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
	*refs_out = refs;
	*n_out = n;
	return 0;
fail:
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

/* the most a configuration file may hold */
#define CONF_MAX_BYTES (1u << 20)

/*
 * The file at @p path read once, into a memfd: the prescan and
 * rte_cfgfile_load() (which takes a path) both read that. Each opened
 * @p path itself before, and a pipe or FIFO reads once: `dprdmad -f
 * <(...)` ran on the defaults without a word. @return the memfd, or -1
 * with the error in @p err.
 */
static int
config_read_once(const char *path, char *err, size_t errlen)
{
	char buf[4096];
	size_t total = 0, n;
	FILE *f = fopen(path, "r");
	int fd;

	if (f == NULL)
		ERR("%s: cannot open config file: %s", path, strerror(errno));
	fd = memfd_create("dprdmad.conf", MFD_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot keep a copy of the config file "
			 "(memfd_create: %s)", path, strerror(errno));
		fclose(f);
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		total += n;
		if (total > CONF_MAX_BYTES) {
			snprintf(err, errlen, "%s: longer than %u bytes: not a "
				 "dprdmad config file", path, CONF_MAX_BYTES);
			goto fail;
		}
		if (write(fd, buf, n) != (ssize_t)n) {
			snprintf(err, errlen, "%s: cannot keep a copy of the config "
				 "file: %s", path, strerror(errno));
			goto fail;
		}
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: cannot read config file: %s", path,
			 strerror(errno));
		goto fail;
	}
	fclose(f);
	if (lseek(fd, 0, SEEK_SET) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
fail:
	fclose(f);
	close(fd);
	return -1;
}

int
dpr_config_load(struct dpr_config *conf, const char *path, char *err,
		size_t errlen)
{
	struct line_ref *refs = NULL;
	struct rte_cfgfile *cfg = NULL;
	unsigned int n_refs = 0;
	int n_sec, s, rc = -1, fd;
	char (*names)[CFG_NAME_LEN] = NULL;
	char copy[64];
	FILE *f;

	fd = config_read_once(path, err, errlen);
	if (fd < 0)
		return -1;
	snprintf(copy, sizeof(copy), "/proc/self/fd/%d", fd);
	f = fopen(copy, "r");
	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (prescan(f, path, &refs, &n_refs, err, errlen) != 0) {
		fclose(f);
		close(fd);
		return -1;
	}
	fclose(f);

	cfg = rte_cfgfile_load(copy, CFG_FLAG_EMPTY_VALUES);
	close(fd);
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
		if (k->secret) {
			/* (a dump read back leaves it unset) */
			fprintf(f, "%s = ; set, not shown\n", k->key);
			continue;
		}
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
