#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""The main job, as README's first command runs it (tools/demo.sh, one
second a stream): two cold dprdmad boxes on a memif link find each other
by ARP, stream RDMA WRITE, READ and SEND with every byte checked, run the
unmodified ibv_rc_pingpong through the drop-in libibverbs, stop cleanly,
and set their figures beside kernel TCP's on the same machine. Speed is
not judged here (tools/bench.py does that): the figures must only be
there."""

import os
import re
import subprocess
import sys

import dprtest as t

BUILD = os.path.dirname(os.path.dirname(os.path.abspath(t.DPRDMAD)))


def main():
    t.require_root_and_netns()
    env = dict(os.environ, DEMO_SECONDS="1", DPRDMA_BUILD=BUILD)
    env.pop("LD_LIBRARY_PATH", None)     # (the demo sets its own)
    p = subprocess.run(["bash", os.path.join(t.SOURCE_ROOT, "tools", "demo.sh")],
                       env=env, capture_output=True, text=True, timeout=600)
    out = p.stdout + p.stderr
    sys.stdout.write("".join("  demo| %s\n" % x for x in out.splitlines()))
    t.check(p.returncode == 0, "tools/demo.sh exits 0 (%d)" % p.returncode)
    t.check(len(re.findall(r"^   (WRITE|READ |SEND ) done: .* data verified$",
                           out, re.M)) == 3,
            "WRITE, READ and SEND streams, each with its data verified")
    t.check(re.search(r"^   box b: 2000 iters in [0-9.]+ seconds = [0-9.]+ usec/iter$",
                      out, re.M) is not None,
            "ibv_rc_pingpong through the drop-in: 2000 round trips")
    t.check("box a: stopped cleanly" in out and "box b: stopped cleanly" in out,
            "both boxes stopped cleanly")
    m = re.search(r"WRITEs at ([0-9.]+) Gbit/s against kernel TCP's ([0-9.]+) "
                  r"Gbit/s.*\n.*round trip ([0-9.]+) us against TCP's\n\s+([0-9.]+) us",
                  out)
    t.check(m is not None and all(float(x) > 0 for x in m.groups()),
            "the closing line sets dprdma beside kernel TCP (%s)"
            % ((m.groups(),) if m else "missing"))
    t.log("PASS")


if __name__ == "__main__":
    main()
