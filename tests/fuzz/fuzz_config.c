/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * libFuzzer target: dprdmad's INI configuration reader.
 *
 * The input is written to a memfd and loaded with dpr_config_load() on
 * top of the compiled-in default, as dprdmad -c FILE does. A file that
 * loads must also turn into EAL arguments, and dpr_config_dump() of it
 * must load back to the same dump (the dump is what dprdmad --check
 * prints for a user to start from). A file that does not load must say why in
 * a message that names the file.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dpr_config.h"
#include "dpr_engine.h"
#include "dpr_faults.h"
#include "dpr_shim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
load_bytes(struct dpr_config *c, const void *data, size_t len, char *path,
	   size_t pathlen, char *err, size_t errlen)
{
	int fd = memfd_create("dprdma-fuzz-config", 0), rc;

	if (fd < 0)
		abort();
	if (len != 0 && write(fd, data, len) != (ssize_t)len)
		abort();
	snprintf(path, pathlen, "/proc/self/fd/%d", fd);
	rc = dpr_config_load(c, path, err, errlen);
	close(fd);
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct dpr_config a, b;
	char path[64], err[512], buf[4096], *argv[128];
	char *d1 = NULL, *d2 = NULL;
	size_t l1 = 0, l2 = 0;
	FILE *f;

	/* every section dprdmad reads, in its order */
	dpr_engine_config_register();
	dpr_faults_config_register();
	dpr_shim_config_register();
	dpr_config_defaults(&a);
	err[0] = '\0';
	if (load_bytes(&a, data, size, path, sizeof(path), err, sizeof(err)) != 0) {
		/* refused: the message names the file */
		if (strstr(err, path) == NULL) {
			fprintf(stderr, "error without the file name: %s\n", err);
			abort();
		}
		return 0;
	}
	(void)dpr_config_eal_args(&a, "dprdmad", argv, 128, buf, sizeof(buf),
				  err, sizeof(err));
	f = open_memstream(&d1, &l1);
	dpr_config_dump(&a, f);
	fclose(f);

	dpr_config_defaults(&b);
	if (load_bytes(&b, d1, l1, path, sizeof(path), err, sizeof(err)) != 0) {
		fprintf(stderr, "the dump of a loaded file does not load: %s\n"
			"--- dump\n%s", err, d1);
		abort();
	}
	f = open_memstream(&d2, &l2);
	dpr_config_dump(&b, f);
	fclose(f);
	if (l1 != l2 || memcmp(d1, d2, l1) != 0) {
		fprintf(stderr, "dump, load, dump differs:\n--- first\n%s"
			"--- second\n%s", d1, d2);
		abort();
	}
	free(d1);
	free(d2);
	return 0;
}
