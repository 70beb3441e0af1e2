/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/* lib/engine/dpr_config.c: the INI file, overrides, EAL arguments. */

#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "dpr_config.h"
#include "dpr_engine.h"
#include "dpr_faults.h"
#include "dpr_shim.h"
#include "dpr_cm.h"
#include "dpr_test.h"

static char tmp_path[64];

/* Write @p text to a fresh file; return its path. */
static const char *
write_conf(const char *text)
{
	int fd;
	FILE *f;

	snprintf(tmp_path, sizeof(tmp_path), "/tmp/dpr-unit-conf-XXXXXX");
	fd = mkstemp(tmp_path);
	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	return tmp_path;
}

/* Load @p text; expect failure whose message contains every needle. */
static int
expect_error(const char *text, const char *n1, const char *n2)
{
	struct dpr_config conf;
	char err[1024] = "";
	const char *path = write_conf(text);
	int rc;

	CHECK(path != NULL, "mkstemp");
	dpr_config_defaults(&conf);
	rc = dpr_config_load(&conf, path, err, sizeof(err));
	unlink(path);
	CHECK(rc == -1, "loading '%s' succeeded", text);
	CHECK(strstr(err, path) != NULL, "message '%s' does not name the file", err);
	CHECK(strstr(err, n1) != NULL, "message '%s' lacks '%s'", err, n1);
	CHECK(n2 == NULL || strstr(err, n2) != NULL, "message '%s' lacks '%s'",
	      err, n2);
	return TEST_SUCCESS;
}

static int
test_defaults_round_trip(void)
{
	struct dpr_config a, b;
	char err[1024];
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	const char *path;

	dpr_config_defaults(&a);
	dpr_config_dump(&a, f);
	fclose(f);
	path = write_conf(text);
	free(text);
	dpr_config_defaults(&b);
	memset(&b.eal.vdev, 0, sizeof(b.eal.vdev));
	CHECK(dpr_config_load(&b, path, err, sizeof(err)) == 0, "%s", err);
	unlink(path);
	memset(b.path, 0, sizeof(b.path));
	CHECK(memcmp(&a, &b, sizeof(a)) == 0, "dump/load changed the config");
	CHECK_EQ(dpr_port_conf(&a, 0)->ip, htonl(0x0a4d0001), "default address 10.77.0.1");
	CHECK_EQ(a.eal.n_vdev, 1, "default has one vdev");
	CHECK(strstr(a.eal.vdev[0], "net_tap") != NULL, "default port is a tap");
	return TEST_SUCCESS;
}

/* [security] psk is read but never printed: --check says it is set. */
static int
test_secret_not_dumped(void)
{
	static const char key[] = "00112233445566778899aabbccddeeff"
				  "00112233445566778899aabbccddeeff";
	struct dpr_config c;
	char err[1024], buf[256], *text = NULL;
	size_t len = 0;
	FILE *f;
	const char *path;

	snprintf(buf, sizeof(buf), "[security]\nmode = encrypt\npsk = %s\n", key);
	path = write_conf(buf);
	dpr_config_defaults(&c);
	CHECK(dpr_config_load(&c, path, err, sizeof(err)) == 0, "%s", err);
	unlink(path);
	CHECK(strcmp(dpr_security_conf(&c)->psk, key) == 0, "the key is read");
	CHECK_EQ(dpr_security_conf(&c)->mode, 2, "mode = encrypt");
	f = open_memstream(&text, &len);
	dpr_config_dump(&c, f);
	fclose(f);
	CHECK(strstr(text, "psk = ; set, not shown\n") != NULL &&
	      strstr(text, "00112233") == NULL, "the dump hides the key");
	free(text);
	return TEST_SUCCESS;
}

static int
test_load_values(void)
{
	struct dpr_config c;
	char err[1024];
	const char *path = write_conf(
		"; comment\n"
		"[eal]\n"
		"lcores = 0-1\n"
		"vdev = net_af_packet0,iface=veth0\n"
		"vdev = net_af_packet1,iface=veth1 ; trailing comment\n"
		"huge = no\n"
		"memory = 512\n"
		"file_prefix = t1\n"
		"[engine]\n"
		"burst = 16\n"
		"idle = busy\n"
		"[port1]\n"
		"ip = 192.168.7.9/16\n"
		"mtu = 4200\n"
		"rx_desc = 512\n");

	dpr_config_defaults(&c);
	CHECK(dpr_config_load(&c, path, err, sizeof(err)) == 0, "%s", err);
	unlink(path);
	CHECK_EQ(c.eal.n_vdev, 2, "the default vdev is replaced by the file's");
	CHECK(strcmp(c.eal.vdev[1], "net_af_packet1,iface=veth1") == 0, "%s",
	      c.eal.vdev[1]);
	CHECK_EQ(c.eal.huge, DPR_HUGE_NO, "huge");
	CHECK_EQ(c.eal.memory_mb, 512, "memory");
	CHECK_EQ(dpr_engine_conf(&c)->burst, 16, "burst");
	CHECK_EQ(dpr_engine_conf(&c)->idle, DPR_IDLE_BUSY, "idle");
	CHECK_EQ(dpr_port_conf(&c, 1)->ip, htonl(0xc0a80709), "ip");
	CHECK_EQ(dpr_port_conf(&c, 1)->prefix_len, 16, "prefix");
	CHECK_EQ(dpr_port_conf(&c, 1)->mtu, 4200, "mtu");
	CHECK_EQ(dpr_port_conf(&c, 1)->rx_desc, 512, "rx_desc");
	CHECK_EQ(dpr_port_conf(&c, 0)->ip, htonl(0x0a4d0001), "port0 keeps its default");
	return TEST_SUCCESS;
}

static int
test_errors_name_file_line_key(void)
{
	int r = 0;

	r |= expect_error("[engine]\nburst = 16\n[bogus]\n", ":3:", "[bogus]");
	r |= expect_error("[engine]\nwrkers = 2\n", ":2:", "'wrkers'");
	r |= expect_error("[engine]\nwrkers = 2\n", "known: burst", NULL);
	r |= expect_error("[port0]\nip = 10.0.0.300/24\n", ":2:", "[port0] ip");
	r |= expect_error("[port0]\nip = 10.0.0.1\n", "prefix length", NULL);
	r |= expect_error("[port0]\nip = 224.0.0.1/24\n", "unicast", NULL);
	r |= expect_error("[port0]\nip = 10.0.0.0/24\n", "network or broadcast",
			  NULL);
	r |= expect_error("\n\n[port2]\nmtu = 100\n", ":4:", "576 to 9216");
	r |= expect_error("[port0]\nmtu = 15x0\n", "[port0] mtu", "whole number");
	r |= expect_error("[port0]\nrx_desc = 1000\n", "power of two", NULL);
	r |= expect_error("[engine]\nidle = lazy\n", "busy, yield", "[engine] idle");
	r |= expect_error("[eal]\nlcores = 0,63\n", "lcore 63", "not available");
	r |= expect_error("[eal]\nlcores = 0\n", "at least one worker", NULL);
	r |= expect_error("[eal]\nlcores = 1-0\n", "not an lcore list", NULL);
	r |= expect_error("# hash\n", ":1:", "';'");
	r |= expect_error("burst = 3\n", ":1:", "before any [section]");
	r |= expect_error("[engine]\nburst\n", ":2:", "neither");
	r |= expect_error("[engine]\nburst = 8\nburst = 9\n", ":3:",
			  "first at line 2");
	r |= expect_error("[port9]\n", "unknown section", "[port7]");
	/* what would not read back the same (fuzz_config's findings) */
	r |= expect_error("[eal]\nvdev = net_null0\n[engine]\n[eal]\n", ":4:",
			  "first at line 1");
	r |= expect_error("[eal]\nvdev = net_null0,a=b\\; c\n", ":2:", "escaped");
	r |= expect_error("[eal]\nvdev = net\x05null0\n", ":2:", "control character");
	r |= expect_error("[control]\nsocket = relative.sock\n", "absolute", NULL);
	return r ? TEST_FAILED : TEST_SUCCESS;
}

static int
test_missing_file(void)
{
	struct dpr_config c;
	char err[512];

	dpr_config_defaults(&c);
	CHECK(dpr_config_load(&c, "/nonexistent/dprdmad.conf", err,
			      sizeof(err)) == -1, "loaded a missing file");
	CHECK(strstr(err, "/nonexistent/dprdmad.conf") != NULL &&
	      strstr(err, "No such file") != NULL, "%s", err);
	return TEST_SUCCESS;
}

static int
test_override_origin(void)
{
	struct dpr_config c;
	char err[512];

	dpr_config_defaults(&c);
	CHECK(dpr_config_set(&c, "port0", "ip", "10.1.2.3/8", "command line --ip",
			     err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ(dpr_port_conf(&c, 0)->ip, htonl(0x0a010203), "override applied");
	CHECK(dpr_config_set(&c, "port0", "ip", "nonsense", "command line --ip",
			     err, sizeof(err)) == -1, "accepted nonsense");
	CHECK(strncmp(err, "command line --ip: ", 19) == 0, "%s", err);
	CHECK_EQ(dpr_port_conf(&c, 0)->ip, htonl(0x0a010203), "a refused value changes nothing");
	return TEST_SUCCESS;
}

static int
test_parsers(void)
{
	uint64_t bits[2];
	uint32_t ip;
	uint8_t len;

	CHECK_EQ(dpr_parse_lcore_list("0-1", bits, 128), 2, "0-1");
	CHECK_EQ(bits[0], 3, "bits");
	CHECK_EQ(dpr_parse_lcore_list("0, 2-3,70", bits, 128), 4, "list");
	CHECK_EQ(bits[1], 1ULL << 6, "bit 70");
	CHECK_EQ(dpr_parse_lcore_list("1,1", bits, 128), 1, "duplicates once");
	CHECK_EQ(dpr_parse_lcore_list("", bits, 128), 0, "empty");
	CHECK_EQ(dpr_parse_lcore_list("a", bits, 128), -1, "letters");
	CHECK_EQ(dpr_parse_lcore_list("0-", bits, 128), -1, "open range");
	CHECK_EQ(dpr_parse_lcore_list("128", bits, 128), -1, "too large");
	CHECK_EQ(dpr_parse_ipv4_prefix("1.2.3.4/32", &ip, &len), 0, "/32");
	CHECK_EQ(len, 32, "len");
	CHECK_EQ(dpr_parse_ipv4_prefix("1.2.3.4/33", &ip, &len), -1, "/33");
	CHECK_EQ(dpr_parse_ipv4_prefix("1.2.3.4/", &ip, &len), -1, "no len");
	CHECK_EQ(dpr_parse_ipv4_prefix("1.2.3/8", &ip, &len), -1, "3 octets");
	CHECK_EQ(dpr_parse_ipv4_prefix("1.2.3.4/-1", &ip, &len), -1, "negative");
	return TEST_SUCCESS;
}

static bool
has_arg(char **argv, int argc, const char *a)
{
	int i;

	for (i = 0; i < argc; i++)
		if (strcmp(argv[i], a) == 0)
			return true;
	return false;
}

static int
test_eal_args(void)
{
	char *argv[64], buf[4096], err[512];
	struct dpr_config c;
	int argc;

	dpr_config_defaults(&c);
	c.eal.huge = DPR_HUGE_NO;
	argc = dpr_config_eal_args(&c, "x", argv, 64, buf, sizeof(buf), err,
				   sizeof(err));
	CHECK(argc > 0, "%s", err);
	CHECK(has_arg(argv, argc, "--no-huge") && has_arg(argv, argc, "--no-pci"),
	      "huge = no and no PCI device");
	CHECK(has_arg(argv, argc, "net_tap0,iface=dprdma0,mac=fixed"), "default vdev");
	CHECK(has_arg(argv, argc, "dprdmad"), "default file prefix");

	snprintf(c.eal.allow[0], sizeof(c.eal.allow[0]), "0000:3b:00.0");
	c.eal.n_allow = 1;
	snprintf(c.eal.extra, sizeof(c.eal.extra), "--log-color  -n 4");
	argc = dpr_config_eal_args(&c, "x", argv, 64, buf, sizeof(buf), err,
				   sizeof(err));
	CHECK(!has_arg(argv, argc, "--no-pci"), "PCI device given");
	CHECK(has_arg(argv, argc, "0000:3b:00.0"), "allow list");
	CHECK(has_arg(argv, argc, "-n") && has_arg(argv, argc, "4") &&
	      has_arg(argv, argc, "--log-color"), "extra split on blanks");
	CHECK(argv[argc] == NULL, "argv is NULL-terminated");

	/* more memory than any machine has free: yes fails, auto falls back */
	c.eal.memory_mb = 65536;
	c.eal.huge = DPR_HUGE_YES;
	CHECK(dpr_config_eal_args(&c, "x", argv, 64, buf, sizeof(buf), err,
				  sizeof(err)) == -1, "huge = yes with none free");
	CHECK(strstr(err, "nr_hugepages") != NULL, "says how to reserve: %s", err);
	c.eal.huge = DPR_HUGE_AUTO;
	argc = dpr_config_eal_args(&c, "x", argv, 64, buf, sizeof(buf), err,
				   sizeof(err));
	CHECK(has_arg(argv, argc, "--no-huge"), "auto falls back to --no-huge");
	return TEST_SUCCESS;
}

/* Every key of --help is documented in the shipped example file. */
static int
test_example_documents_every_key(void)
{
	char *help = NULL, line[512], *p;
	size_t len = 0;
	FILE *f = open_memstream(&help, &len);
	FILE *ex;
	char *example;
	long n;
	int missing = 0;

	dpr_config_help(f);
	fclose(f);
	ex = fopen(DPR_SOURCE_ROOT "/config/dprdmad.conf", "r");
	CHECK(ex != NULL, "config/dprdmad.conf");
	fseek(ex, 0, SEEK_END);
	n = ftell(ex);
	rewind(ex);
	example = calloc(1, n + 1);
	CHECK(fread(example, 1, n, ex) == (size_t)n, "read");
	fclose(ex);
	for (p = strtok(help, "\n"); p != NULL; p = strtok(NULL, "\n")) {
		char key[64];

		if (sscanf(p, " %63s", key) != 1 || key[0] == '[')
			continue;
		snprintf(line, sizeof(line), "%s =", key);
		if (strstr(example, line) == NULL) {
			printf("    config/dprdmad.conf does not document '%s'\n", key);
			missing++;
		}
	}
	free(example);
	free(help);
	return missing ? TEST_FAILED : TEST_SUCCESS;
}

static const struct dpr_test_case config_cases[] = {
	DPR_TEST_CASE(test_defaults_round_trip),
	DPR_TEST_CASE(test_load_values),
	DPR_TEST_CASE(test_secret_not_dumped),
	DPR_TEST_CASE(test_errors_name_file_line_key),
	DPR_TEST_CASE(test_missing_file),
	DPR_TEST_CASE(test_override_origin),
	DPR_TEST_CASE(test_parsers),
	DPR_TEST_CASE(test_eal_args),
	DPR_TEST_CASE(test_example_documents_every_key),
	DPR_TEST_CASES_END,
};

/* the rooms dprdmad registers, in its order */
static int
config_setup(void)
{
	dpr_engine_config_register();
	dpr_faults_config_register();
	dpr_shim_config_register();
	dpr_cm_config_register();
	return 0;
}

static struct dpr_test_suite config_suite = {
	.name = "engine_config",
	.needs_eal = false,
	.setup = config_setup,
	.cases = config_cases,
};
DPR_TEST_SUITE(config_suite);
