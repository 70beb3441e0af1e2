#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""Soak (issue 9): two dprdmad boxes over memif, both ports through the
fault adapter (1% loss, 1% reordering, 0.1% duplication, 0.1%
corruption), run mixed RC traffic for a bounded time -- WRITE and READ of
random sizes from 0 B to 256 KiB on 4 QPs, each checked by CRC at the far
end, SEND into posted receives, FETCH_ADD -- while each daemon's resident
memory and open file descriptors are sampled every second.

Passes when every operation completed with the right bytes and, after the
first quarter of the run (pools and rings warm up), memory grew by less
than 8 MiB and the descriptor count at the end, settled, is no higher than
the lowest seen after warm-up (a sample can catch the daemon's end of a
telemetry connection this script just closed). Under ASan only the
descriptors are judged: its quarantine holds freed memory back.

  soak.py [SECONDS]     (default 600; tools/soak.sh runs it, the test
                         suite runs it for 20 s as 'soak_short')"""

import random
import sys
import time

import dprtest as t
import test_rdma as r

r.FAULTS = True
SECONDS = int(sys.argv[1]) if len(sys.argv) > 1 else 600
SIZES = [0, 1, 64, 1000, 4096, 9000, 65536, 262144]


def main():
    t.require_root_and_netns()
    rnd = random.Random(20261129)
    a = b = None
    try:
        a = r.daemon(r.PA, "server", "10.80.0.1/24", 1)
        b = r.daemon(r.PB, "client", "10.80.0.2/24", 2)
        ca, cb = r.setup_pair(4)
        start = time.time()
        samples = []
        next_sample = start
        ops = {"write": 0, "read": 0, "send": 0, "fadd": 0}
        nbytes = 0
        while time.time() - start < SECONDS:
            if time.time() >= next_sample:
                samples.append((time.time() - start, a.usage(), b.usage()))
                next_sample += 1
            qp, size = rnd.randrange(4), rnd.choice(SIZES)
            op = rnd.choice(list(ops))
            seed = rnd.randrange(1 << 30)
            if op == "write":
                crc, got, _ = r.write_checked(cb, qp, size, seed, count=2)
            elif op == "read":
                crc, got = r.read_checked(cb, qp, size, seed, count=2)
            elif op == "send":
                crc, got = r.send_checked(qp, size, seed)
            else:
                size = 8
                r.cmd(r.PA, "/dprdma/client/run,%d,fadd,8,16,0,%d,%d" %
                      (qp, cb["mr_va"] + (10 << 20), cb["rkey"]))
                r.wait_done(r.PA, "FETCH_ADD")
                crc = got = 0
            if got != crc:
                t.fail("%s %d B on QP %d: far end holds crc %08x, sent %08x"
                       % (op.upper(), size, qp, got, crc))
            ops[op] += 1
            nbytes += size
        # the last sample once settled: a telemetry connection just closed
        # by this script may hold a descriptor in the daemon for a moment
        time.sleep(0.5)
        samples.append((time.time() - start, a.usage(), b.usage()))
        ts = t.telemetry(r.PA, "/dprdma/transport/stats,0")
        fs = t.telemetry(r.PA, "/dprdma/port/faults,0")
        t.log("%d s: %s operations, %.1f MiB moved, all checked; A: %d "
              "retransmits, faults %r" % (SECONDS, ops, nbytes / 2 ** 20,
                                          ts["retransmits"], fs))
        warm = [s for s in samples if s[0] >= SECONDS / 4] or samples[-1:]
        for i, name in ((1, "A"), (2, "B")):
            rss0 = warm[0][i][0]
            rss1, fd1 = samples[-1][i]
            # descriptors: the fewest seen after warm-up (a sample can catch
            # a telemetry connection open); a leak only ever adds
            fd0 = min(s[i][1] for s in warm)
            peak = max(s[i][0] for s in samples)
            t.log("%s: RSS %d KiB after warm-up, %d KiB at the end (peak %d); "
                  "fds %d -> %d" % (name, rss0, rss1, peak, fd0, fd1))
            if t.ASAN:
                t.check(fd1 <= fd0, "%s: descriptors flat after warm-up "
                        "(memory not judged under ASan, whose quarantine "
                        "keeps up to 256 MiB of freed memory)" % name)
            else:
                t.check(rss1 - rss0 < 8192 and fd1 <= fd0,
                        "%s: memory and descriptors flat after warm-up" % name)
        t.check(sum(ops.values()) > 0 and ts["retransmits"] > 0,
                "faults injected and repaired")
    finally:
        r.stop_pair(a, b)
    t.log("PASS")


if __name__ == "__main__":
    main()
