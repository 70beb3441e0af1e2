/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdmactl: the telemetry socket -- where it is, one command and its
 * JSON reply, and the small readers of replies every command uses.
 */

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "dprdmactl.h"

static char sock_path[108];   /* sun_path's size */
static int tel_fd = -1;
static size_t max_out = 16384;



static void
tel_path(void)
{
	const char *run;

	if (opt.socket != NULL) {
		snprintf(sock_path, sizeof(sock_path), "%s", opt.socket);
		return;
	}
	/* where the EAL puts its runtime folder (eal_get_runtime_dir) */
	run = getuid() == 0 ? "/var/run" : getenv("XDG_RUNTIME_DIR");
	if (run == NULL)
		run = "/tmp";
	snprintf(sock_path, sizeof(sock_path), "%s/dpdk/%s/" TEL_SOCKET, run,
		 opt.prefix);
}

static void
tel_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[1024];
	json_t *hello;
	ssize_t n;

	if (tel_fd >= 0)
		return;
	tel_path();
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	tel_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (tel_fd < 0 || connect(tel_fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;

		if (e == ENOENT || e == ECONNREFUSED)
			dpr_cli_complain(EXIT_DAEMON, "no dprdmad answers on %s (%s): "
				"is it running, with --file-prefix %s? Give the "
				"daemon's prefix with -p (its [eal] file_prefix) or "
				"the socket with -s", sock_path, strerror(e),
				opt.prefix);
		if (e == EACCES)
			dpr_cli_complain(EXIT_DAEMON, "%s: permission denied: run "
				"as the daemon's user (root)", sock_path);
		dpr_cli_complain(EXIT_DAEMON, "cannot connect to %s: %s",
				 sock_path, strerror(e));
	}
	n = recv(tel_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		dpr_cli_complain(EXIT_DAEMON, "%s: the daemon closed the "
			"connection (too many telemetry clients?)", sock_path);
	buf[n] = '\0';
	hello = json_loads(buf, 0, NULL);
	if (hello != NULL && json_integer_value(json_object_get(hello,
						"max_output_len")) > 0)
		max_out = (size_t)json_integer_value(json_object_get(hello,
							"max_output_len"));
	json_decref(hello);
}

/*
 * One command; the value under its name (a new reference), or NULL when
 * the daemon answered null (the command refused its parameters, or failed).
 * A command the daemon does not know at all ends the program.
 */
json_t *
tel_try(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

json_t *
tel_try(const char *fmt, ...)
{
	char cmd[512], key[512], *buf;
	json_error_t jerr;
	json_t *reply, *v;
	va_list ap;
	ssize_t n;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	tel_connect();
	if (send(tel_fd, cmd, strlen(cmd), 0) < 0)
		dpr_cli_complain(EXIT_DAEMON, "%s: %s", sock_path, strerror(errno));
	buf = malloc(max_out + 1);
	if (buf == NULL)
		dpr_cli_complain(EXIT_DAEMON, "out of memory");
	n = recv(tel_fd, buf, max_out, 0);
	if (n <= 0)
		dpr_cli_complain(EXIT_DAEMON, "%s: the daemon went away", sock_path);
	buf[n] = '\0';
	reply = json_loads(buf, 0, &jerr);
	free(buf);
	if (reply == NULL)
		dpr_cli_complain(EXIT_DAEMON, "%s: the reply (%zd bytes) is not JSON "
				 "this program reads: %s at byte %d", cmd, n,
				 jerr.text, jerr.position);
	snprintf(key, sizeof(key), "%s", cmd);
	key[strcspn(key, ",")] = '\0';
	v = json_object_get(reply, key);
	if (v == NULL)
		dpr_cli_complain(EXIT_DAEMON, "the daemon does not know %s (not a "
				 "dprdmad, or an older one?)", key);
	v = json_is_null(v) ? NULL : json_incref(v);
	json_decref(reply);
	return v;
}

/* tel_try() that must succeed: @p what says what was asked. */

json_t *
tel_must(json_t *v, const char *what)
{
	if (v == NULL)
		dpr_cli_complain(EXIT_DAEMON, "the daemon refused %s", what);
	return v;
}

uint64_t
u64(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);

	if (json_is_integer(v))
		return (uint64_t)json_integer_value(v);
	if (json_is_real(v))
		return (uint64_t)json_real_value(v);
	return 0;
}

const char *
str(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s != NULL ? s : "-";
}

void
print_json(json_t *v)
{
	json_dumpf(v, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
}

/* The end of a table command: its JSON with --json (the table is
 * printed already otherwise); @p all is released. */
int
done(json_t *all)
{
	if (opt.json)
		print_json(all);
	json_decref(all);
	return 0;
}

unsigned int
n_ports(void)
{
	json_t *p = tel("/dprdma/ports");
	unsigned int n = (unsigned int)json_array_size(p);

	json_decref(p);
	return n;
}

void
check_port(int pi)
{
	if (pi >= 0 && (unsigned int)pi >= n_ports())
		dpr_cli_complain(EXIT_USAGE, "--port %d: the daemon has %u ports "
				 "(0 to %u)", pi, n_ports(), n_ports() - 1);
}

/* One object of a reply: as JSON with --json, else as a list of fields;
 * @p v is released. */
void
show_dict(json_t *v)
{
	if (opt.json)
		print_json(v);
	else
		print_dict(v, "");
	json_decref(v);
}
