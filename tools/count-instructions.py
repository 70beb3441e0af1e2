#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""tools/count-instructions.py [--seconds S] [--cases C,...] [--sides S,...]
[--top N] [--json FILE] [--keep DIR]: instructions per message of a whole dprdmad worker
(rx_burst to tx_burst, the transport, the client hooks: everything the
worker runs), per side, counted by callgrind.

Two dprdmad over net_memif, B the requester (the built-in client's stream),
A the responder. The side measured runs under valgrind --tool=callgrind
--collect-atstart=no, about 50 times slower than the other, which therefore
keeps it saturated: its worker seldom idles, and the idle loops it has are
counted and reported. /dprdma/lcore/callgrind,L,on|off opens and closes the
window on the worker itself, between two of its loops, with a snapshot of
its counters at each end: the instructions and the frames of the window
belong to the same loops. Messages are the transport's frames of the window
divided by the frames per message (the requester's req_packets, the
responder's rx_frames).

Cases: write64 (RDMA WRITE 64 B), send64 (SEND 64 B), write4k (RDMA WRITE
4 KiB: 4 frames at the default 1024 B path MTU). Prints a table; --top N
adds the N functions of most instructions (self) per run. Needs root (the
EAL) and valgrind (tools/setup.sh installs it). DPRDMA_CALLGRIND_ARGS adds
options to valgrind (e.g. --dump-instr=yes, for counts per instruction in
the files --keep keeps). Not pass/fail: the counts are the same run after
run within about 1%, where wall-clock rates on a shared VM are not.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("DPRDMA_BUILD", os.path.join(TOP, "build"))
os.environ.setdefault("DPRDMAD", os.path.join(BUILD, "app", "dprdmad"))
os.environ.setdefault("DPR_SOURCE_ROOT", TOP)
sys.path.insert(0, os.path.join(TOP, "tests", "integration"))
import dprtest as t  # noqa: E402

PID = os.getpid()
MEMIF = "/tmp/dprdma-count-%d.sock" % PID
PMTU = 1024
KEEP = None
CASES = {
    "write64": ("write", 64),
    "send64": ("send", 64),
    "write4k": ("write", 4096),
}


EXTRA = []          # more dprdmad options for both daemons (--daemon-args)


def unlink(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def daemon(name, role, ip, cpu, wrapper=()):
    args = ["--lcores", "0@%d,1@%d" % (cpu, cpu), "--no-pci", "--no-huge", "-m", "512",
            "--file-prefix", name, "--log-level", "*:error",
            "--vdev", "net_memif0,role=%s,socket=%s,socket-abstract=no" % (role, MEMIF),
            "--", "--ip", ip, "--idle", "busy"] + EXTRA
    return t.Daemon(args, prefix=name, wrapper=wrapper, timeout=300)


def collected(path):
    """Instructions in a callgrind output file (its totals line)."""
    with open(path) as f:
        for line in f:
            m = re.match(r"(?:summary|totals):\s+(\d+)", line)
            if m:
                return int(m.group(1))
    sys.exit("count: no totals in %s" % path)


def driver_share(path):
    """Instructions the port's driver (a PMD, DPDK's pmds-* objects) ran for
    the worker: the inclusive cost of every call from dprdmad into it, the
    mbuf pool and thread-local lookups it makes included. What moves the
    frame, apart from what dprdma itself does with it."""
    names = {}              # "(id)" -> object path, callgrind's compression
    ob = cob = None
    call_into_pmd = False
    total = 0

    def obj(v):
        m = re.match(r"\((\d+)\)\s*(.*)", v)
        if not m:
            return v
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), "")

    with open(path) as f:
        for line in f:
            if line.startswith("ob="):
                ob = obj(line[3:].strip())
            elif line.startswith("cob="):
                cob = obj(line[4:].strip())
            elif line.startswith("calls="):
                callee = cob if cob is not None else ob
                call_into_pmd = ("/pmds-" in (callee or "") and
                                 ob is not None and ob.endswith("/dprdmad"))
                cob = None
            elif call_into_pmd and line[:1] in "0123456789+-*":
                total += int(line.split()[-1])
                call_into_pmd = False
            elif line.startswith("fn="):
                cob = None
    return total


def top_functions(path, n):
    p = subprocess.run(["callgrind_annotate", "--inclusive=no", path],
                       capture_output=True, text=True)
    rows = []
    for line in p.stdout.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*([\d.]+)%\)\s+(.*)", line)
        if m:
            rows.append((int(m.group(1).replace(",", "")), m.group(3)))
    return rows[1:n + 1] if rows and "PROGRAM TOTALS" in p.stdout else rows[:n]


def run_case(case, side, seconds, top):
    op, size = CASES[case]
    out = "/tmp/dprdma-count-%d-%s-%s.callgrind" % (PID, case, side)
    unlink(MEMIF)
    unlink(out)
    # fair scheduling: a busy worker would starve the telemetry thread
    vg = ["valgrind", "--tool=callgrind", "--fair-sched=yes", "--collect-atstart=no",
          "--callgrind-out-file=" + out] + os.environ.get("DPRDMA_CALLGRIND_ARGS", "").split()
    # A (responder, memif server) on CPU 1, B (requester) on CPU 0
    a = daemon("count-a", "server", "10.97.0.1/24", 1,
               vg if side == "responder" else ())
    b = None
    try:
        b = daemon("count-b", "client", "10.97.0.2/24", 0,
                   vg if side == "requester" else ())
        measured, lcore = (a, 1) if side == "responder" else (b, 1)
        t.wait_for(lambda: all(t.telemetry(p, "/dprdma/port/info,0", 30)["link"] == "up"
                               for p in ("count-a", "count-b")),
                   120, "the memif link")
        ca = t.telemetry("count-a", "/dprdma/client/setup,1,%d" % (16 << 20), 60)
        cb = t.telemetry("count-b", "/dprdma/client/setup,1,%d" % (16 << 20), 60)
        t.telemetry("count-a", "/dprdma/client/connect,0,%s,%s,%s"
                    % (cb["qpns"], cb["psns"], cb["gid_ipv4"]), 60)
        t.telemetry("count-b", "/dprdma/client/connect,0,%s,%s,%s"
                    % (ca["qpns"], ca["psns"], ca["gid_ipv4"]), 60)
        if op == "send":
            t.telemetry("count-a", "/dprdma/client/recv,0,1000000000,0,%d" % size, 60)
        t.telemetry("count-b", "/dprdma/client/run,0,%s,%d,1000000000,0,%d,%d,%d"
                    % (op, size, ca["mr_va"], ca["rkey"], 256), 60)
        time.sleep(3)       # past the start: the stream's steady state
        pre = measured.prefix
        on = t.telemetry(pre, "/dprdma/lcore/callgrind,%d,on" % lcore, 60)
        time.sleep(seconds)
        off = t.telemetry(pre, "/dprdma/lcore/callgrind,%d,off" % lcore, 60)
        t.telemetry("count-b", "/dprdma/client/stop", 60)
        t.wait_for(lambda: not t.telemetry("count-b", "/dprdma/client/status", 60)["active"],
                   120, "the stream to end")
        st = t.telemetry("count-b", "/dprdma/client/status", 60)
        if st["errors"]:
            sys.exit("count: %s: %d errors in the stream" % (case, st["errors"]))
    finally:
        if b is not None:
            b.stop(timeout=120)
        a.stop(timeout=120)
        unlink(MEMIF)
    ir = collected(out)
    d = {k: off[k] - on[k] for k in on if isinstance(on[k], int)}
    per_msg_frames = -(-size // PMTU) if op != "read" else 1
    frames = d["tp_req_packets"] if side == "requester" else d["tp_rx_frames"]
    msgs = frames / per_msg_frames
    drv = driver_share(out)
    res = {
        "case": case, "side": side, "instructions": ir, "frames": frames,
        "messages": msgs, "per_message": ir / msgs if msgs else 0,
        "per_frame": ir / frames if frames else 0,
        "driver_per_message": drv / msgs if msgs else 0,
        "polls": d["polls"], "idle_polls": d["idle_polls"],
        "retransmits": d["tp_retransmits"],
        "rx_packets": d["rx_packets"], "tx_packets": d["tx_packets"],
    }
    if top:
        res["top"] = top_functions(out, top)
    if KEEP:
        os.makedirs(KEEP, exist_ok=True)
        kept = os.path.join(KEEP, "%s-%s.callgrind" % (case, side))
        shutil.move(out, kept)
        res["callgrind"] = kept
    else:
        os.unlink(out)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=10,
                    help="length of the counted window (default 10)")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--sides", default="requester,responder")
    ap.add_argument("--top", type=int, default=0)
    ap.add_argument("--daemon-args", default="",
                    help="more dprdmad options for both daemons, e.g. "
                    "'-f my.conf' (compare a setting)")
    ap.add_argument("--json", help="write the results here too")
    ap.add_argument("--keep", metavar="DIR",
                    help="keep the callgrind files there (callgrind_annotate "
                         "--auto=yes FILE shows the cost of each line)")
    args = ap.parse_args()
    EXTRA.extend(args.daemon_args.split())
    global KEEP
    KEEP = args.keep
    if os.geteuid() != 0:
        sys.exit("count: needs root (DPDK's EAL)")
    if subprocess.run(["which", "valgrind"], capture_output=True).returncode != 0:
        sys.exit("count: valgrind is not installed (tools/setup.sh installs it)")
    results = []
    for case in args.cases.split(","):
        if case not in CASES:
            sys.exit("count: no case %r (cases: %s)" % (case, ", ".join(CASES)))
        for side in args.sides.split(","):
            print("count: %s, %s side under callgrind" % (case, side), flush=True)
            results.append(run_case(case, side, args.seconds, args.top))
    print()
    print("%-8s %-9s %10s %12s %8s %8s %10s %7s %5s" %
          ("case", "side", "instr/msg", "instr/frame", "driver", "dprdma", "messages",
           "idle %", "retx"))
    for r in results:
        print("%-8s %-9s %10.0f %12.0f %8.0f %8.0f %10.0f %7.1f %5d" %
              (r["case"], r["side"], r["per_message"], r["per_frame"],
               r["driver_per_message"], r["per_message"] - r["driver_per_message"],
               r["messages"], 100.0 * r["idle_polls"] / r["polls"] if r["polls"] else 0,
               r["retransmits"]))
    print("(driver: what the port's PMD runs per message, rx_burst and tx_burst "
          "inclusive; dprdma: the rest)")
    for r in results:
        if "top" in r:
            print("\n%s %s: functions of most instructions (self, per message)" %
                  (r["case"], r["side"]))
            for ir, fn in r["top"]:
                print("  %8.1f  %s" % (ir / r["messages"], fn))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
