/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * pcapng capture of what a port receives and sends, switched on and off at
 * run time over telemetry:
 *   /dprdma/capture/start,PORT,PATH   /dprdma/capture/stop,PORT
 * Read the file with dprdma-pcap (which checks the ICRC) or Wireshark.
 */

#ifndef DPR_CAPTURE_H
#define DPR_CAPTURE_H

void dpr_capture_register_telemetry(void);

/** Stop every capture still running (at exit, before the engine stops). */
void dpr_capture_stop_all(void);

#endif /* DPR_CAPTURE_H */
