/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * Build-time limits. Run-time knobs live in dprdmad.conf; these only size
 * static tables.
 */

#ifndef DPR_BUILD_CONFIG_H
#define DPR_BUILD_CONFIG_H

/** Most DPDK ports one dprdmad drives (verbs devices dprdma0..). */
#define DPR_MAX_PORTS 8

/** Most worker lcores (each owns one RX/TX queue pair on every port). */
#define DPR_MAX_WORKERS 32

/** Most `vdev` or `allow` entries in the [eal] section. */
#define DPR_MAX_EAL_DEVS 16

/** Largest RX/TX burst a worker processes at once. */
#define DPR_MAX_BURST 64

/** Default client socket (DESIGN.md "Client socket"). */
#define DPR_DEFAULT_SOCKET "/run/dprdma/dprdmad.sock"

/** Environment variable clients read to find the daemon. */
#define DPR_SOCKET_ENV "DPRDMA_SOCKET"

#endif /* DPR_BUILD_CONFIG_H */
