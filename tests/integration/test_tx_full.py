#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""No frame is lost for lack of TX room (issue 18): two dprdmad boxes over
net_memif whose rings hold 4 frames (rsize=2), so that a requester's
burst of 32 or 64 frames always finds the ring full. What the port
refuses must wait in the TX buffer and go out on the next loop, and the
transports must stop building frames while it is full: every message
completes with its data, no frame is counted dropped, and neither side
ever times out, NAKs, or sees a request out of sequence (memif itself
loses nothing, so any of those would be a frame the box threw away
itself: a lost frame leaves a gap the next one, or the retransmission
timeout's tail probe, shows). Requests sent again are not counted: frames
waiting out a full ring can make the adaptive retransmission timeout
fire early, and what it sends again the responder answers as duplicates.

With --faults the same through the fault adapter (no faults injected but
the port's refusals): the adapter holds what the port refuses and takes
no new frames meanwhile, so the engine's buffer still does the waiting."""

import os
import sys

import dprtest as t
import test_rdma as r

r.MEMIF_ARGS = ",rsize=2"
FAULTS = "--faults" in sys.argv[1:]
WRAP = os.environ.get("DPR_WRAP", "").split()


def main():
    t.require_root_and_netns()
    extra = ["--faults", "delay_us=5,seed=3"] if FAULTS else []
    a = b = None
    try:
        a = t.Daemon(["--lcores", "0@0,1@1", "--no-pci", "--no-huge", "-m", "512",
                      "--file-prefix", r.PA, "--vdev",
                      "net_memif0,role=server,socket=%s,socket-abstract=no%s"
                      % (r.SOCK, r.MEMIF_ARGS), "--", "--ip", "10.80.0.1/24",
                      "--idle", "yield"] + extra, prefix=r.PA, wrapper=WRAP)
        b = t.Daemon(["--lcores", "0@0,1@1", "--no-pci", "--no-huge", "-m", "512",
                      "--file-prefix", r.PB, "--vdev",
                      "net_memif0,role=client,socket=%s,socket-abstract=no%s"
                      % (r.SOCK, r.MEMIF_ARGS), "--", "--ip", "10.80.0.2/24",
                      "--idle", "yield"] + extra, prefix=r.PB)
        ca, cb = r.setup_pair(4)
        for qp, (size, count) in enumerate([(64, 20000), (4096, 2000),
                                            (65536, 200), (1 << 20, 4)]):
            crc, got, s = r.write_checked(cb, qp, size, 100 + qp, count=count)
            t.check(s["completed"] == count and got == crc,
                    "WRITE %d B x %d on QP %d through 4-frame rings: all "
                    "completed, B holds what A sent" % (size, count, qp))
        crc, got = r.read_checked(cb, 1, 1 << 20, 7, count=4)
        t.check(got == crc, "READ 1 MiB x 4: the responses (B's bursts of "
                "1024-byte frames) arrive whole")
        crc, got = r.send_checked(2, 4000, 9, count=500)
        t.check(got == crc, "SEND 4000 B x 500 received")

        deferred = 0
        for p in (r.PA, r.PB):
            st = t.telemetry(p, "/dprdma/port/stats,0")
            tr = t.telemetry(p, "/dprdma/transport/stats,0")
            t.log("%s: port %r" % (p, st))
            t.log("%s: transport %r" % (p, tr))
            t.check(st["tx_drop_full"] == 0,
                    "%s: no frame dropped for a full TX queue" % p)
            t.check(tr["local_ack_timeouts"] == 0 and tr["nak_seq_rx"] == 0 and
                    tr["nak_seq_tx"] == 0 and tr["out_of_seq_rx"] == 0,
                    "%s: no timeout, sequence NAK or request out of sequence "
                    "(%d frames out; %d RTOs sent %d again, answered as "
                    "duplicates)" % (p, tr["tx_frames"], tr["rto_timeouts"],
                                     tr["retransmits"]))
            deferred += st["tx_deferred"]
            if FAULTS:
                fa = t.telemetry(p, "/dprdma/port/faults,0")
                t.log("%s: faults %r" % (p, fa))
                t.check(fa["lost"] == 0 and fa["delayed"] > 0,
                        "%s: the adapter delayed frames and lost none (%d refused by the "
                        "port, held)" % (p, fa["port_refused"]))
                deferred += fa["port_refused"]
        t.check(deferred > 1000, "the rings were full, often: %d frames the "
                "port refused were kept and sent later" % deferred)
        rc = r.stop_pair(a, b)
        a = b = None
        t.check(rc == [0, 0], "both daemons stop cleanly")
    finally:
        for d in (b, a):
            if d is not None:
                d.kill()
    t.log("PASS")


if __name__ == "__main__":
    main()
