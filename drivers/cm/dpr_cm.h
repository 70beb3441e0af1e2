/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * RDMA CM in dprdmad (drivers/cm): QP1 (the GSI QP) on every port, the
 * IBA chapter 12 connection protocol as Linux's rdma_cm speaks it over
 * RoCEv2, and the RDMA CM IDs of local clients (the drop-in librdmacm),
 * reached through the shim's socket (DPR_SHM_CM_* in lib/shm/dpr_shm.h).
 *
 * Threads: QP1 of each port lives on worker 0 (its poller copies MADs in
 * and out through two rings); everything else, the IDs, their state
 * machine and timers, runs on the main lcore, as the shim's control path.
 */

#ifndef DPR_CM_H
#define DPR_CM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dpr_config.h"
#include "dpr_shm.h"

/** The [cm] section; call before the first dpr_config_defaults(). */
void dpr_cm_config_register(void);

/** Make QP1 on every port (after dpr_engine_start()). @return 0 or a
 * negative errno, with a message in @p err. */
int dpr_cm_start(const struct dpr_config *conf, char *err, size_t errlen);
void dpr_cm_stop(void);

/** The engine poller (worker 0 moves QP1's MADs). */
bool dpr_cm_worker_poll(void *arg, unsigned int worker, uint64_t now_ns);

/** Main lcore: take received MADs, run timers. Cheap when idle. */
void dpr_cm_poll(void);
/** Readable when MADs wait for dpr_cm_poll() (-1: none). */
int dpr_cm_wake_fd(void);
/** The wake fd was found readable: clear it (dpr_cm_poll() does not
 * read it: a system call each turn of the main loop for nothing). */
void dpr_cm_wake_clear(void);
/** Milliseconds until dpr_cm_poll() has a timer to run (-1: none). */
int dpr_cm_next_timeout_ms(void);

/**
 * A client's CM request (op DPR_SHM_CM_*), for @p owner (the shim's
 * client): @p m is the request, and the answer on return. A descriptor
 * it keeps is taken from *@p in_fd (set to -1). @return 0 or -errno.
 */
int dpr_cm_request(void *owner, struct dpr_shm_msg *m, int *in_fd);
/** @p owner is gone: its IDs end (REJ/DREQ sent as needed), its channels
 * close. */
void dpr_cm_owner_gone(void *owner);

/** /dprdma/cm/stats and /dprdma/cm/conns. */
void dpr_cm_register_telemetry(void);

#endif /* DPR_CM_H */
