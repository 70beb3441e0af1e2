/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * The built-in test client (see dpr_client.c): RDMA driven over telemetry
 * (/dprdma/client/...) on worker 0 and port 0, for tests, the demo and
 * benchmarks. It plugs into the engine through a worker hook.
 */

#ifndef DPR_CLIENT_H
#define DPR_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

/** Register /dprdma/client/... with telemetry. */
void dpr_client_register_telemetry(void);

/** The engine's worker hook (struct dpr_engine_poller): moves the
 * client's streams on worker 0. */
bool dpr_client_worker_poll(void *arg, unsigned int worker, uint64_t now_ns);

/** Destroy the client's objects (on worker 0). Call before
 * dpr_engine_stop(). */
void dpr_client_stop(void);

#endif /* DPR_CLIENT_H */
