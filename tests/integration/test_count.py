#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""tools/count-instructions.py runs through for one case (64 B WRITE, the
responder under callgrind): the window opens and closes on the worker, the
instructions counted and the messages of the window are both there, and
the count per message is in a plausible range (a whole worker's loop, from
rx_burst to tx_burst, is more than a hundred instructions and less than
twenty thousand). No count is asserted beyond that: it is a measurement."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import dprtest as t

TOOL = os.path.join(t.SOURCE_ROOT, "tools", "count-instructions.py")


def main():
    t.require_root_and_netns()
    if shutil.which("valgrind") is None:
        (t.fail if os.environ.get("CI") == "true" else t.skip)(
            "valgrind missing (tools/setup.sh installs it)")
    out = os.path.join(tempfile.mkdtemp(prefix="dprt-count-"), "count.json")
    env = dict(os.environ, DPRDMA_BUILD=os.path.dirname(os.path.dirname(t.DPRDMAD)))
    r = subprocess.run(["/usr/bin/python3", TOOL, "--cases", "write64", "--sides",
                        "responder", "--seconds", "2", "--top", "5", "--json", out],
                       capture_output=True, text=True, timeout=600, env=env)
    sys.stdout.write("".join("  count| %s\n" % x for x in r.stdout.splitlines()
                             if not x.startswith("  |")))
    t.check(r.returncode == 0, "tools/count-instructions.py exits 0 (%s)" % r.stderr[-800:])
    with open(out) as f:
        res = json.load(f)
    t.check(len(res) == 1 and res[0]["case"] == "write64" and
            res[0]["side"] == "responder", "one result, for the case asked")
    x = res[0]
    t.check(x["messages"] > 1000 and x["frames"] == x["messages"],
            "%d messages of one frame each in the window" % x["messages"])
    t.check(100 < x["per_message"] < 20000,
            "%.0f instructions per message: a whole worker's loop" % x["per_message"])
    t.check(0 < x["driver_per_message"] < x["per_message"],
            "the port driver's share, %.0f of them (memif's rx_burst at least)"
            % x["driver_per_message"])
    t.check(x["retransmits"] == 0, "no retransmission in a clean stream")
    t.check(len(x["top"]) == 5 and all(n > 0 for n, _ in x["top"]),
            "the functions of most instructions: %r" % x["top"][:2])
    shutil.rmtree(os.path.dirname(out))
    t.log("PASS")


if __name__ == "__main__":
    main()
