#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""dprdmad with no argument at all runs its compiled-in default: a net_tap
port 'dprdma0' at 10.77.0.1/24 in its own network namespace, answering
the kernel's ping from the tap's other end. SIGINT stops it cleanly."""

import glob
import os
import re
import signal

import dprtest as t

NS = "dprt%d-def" % os.getpid()


def main():
    t.require_root_and_netns()
    if not os.path.exists("/dev/net/tun"):
        t.skip("no /dev/net/tun for net_tap")
    ns = t.Netns(NS)
    d = None
    try:
        d = t.Daemon([], ns=ns)
        out = d.output()
        t.check("config built-in default" in out, "runs the built-in default")
        t.check("IPv4 10.77.0.1/24" in out and "MTU 1500" in out and
                "RoCE active MTU 1024" in out, "reports its port")
        ns.sh("sysctl -qw net.ipv6.conf.dprdma0.disable_ipv6=1; "
              "ip addr add 10.77.0.2/24 dev dprdma0; ip link set dprdma0 up")
        p = ns.sh("ping -c 10 -i 0.05 -W 2 10.77.0.1", check_rc=False)
        sent, got = t.parse_ping(p.stdout)
        t.check(got == 10, "ping over the default tap: %d/10 answered" % got)
        # the worker naps between pings (idle = yield) and each ping
        # wakes it through the tap queue's Rx interrupt (its fd), not at
        # its nap's end (lib/engine/dpr_rxwake.c)
        woke = t.telemetry("dprdmad", "/dprdma/lcore/stats,1")["rx_wakeups"]
        t.check(woke >= 5, "pings 50 ms apart woke the napping worker "
                "%d times (of 10)" % woke)
        s = t.telemetry("dprdmad", "/dprdma/port/stats,0")
        t.check(s["icmp_echo_reply_tx"] == 10, "telemetry under the default "
                "file prefix 'dprdmad' counts 10 replies")
        # every command the code registers is served (DPDK refuses, and
        # the code does not see, a help text of 128 characters or more),
        # and every one README.rst names
        served = set(t.telemetry("dprdmad", "/"))
        src = ""
        for f in glob.glob(os.path.join(t.SOURCE_ROOT, "lib", "**", "*.c"), recursive=True) + \
                glob.glob(os.path.join(t.SOURCE_ROOT, "drivers", "**", "*.c"), recursive=True):
            with open(f) as fh:
                src += fh.read()
        registered = set(re.findall(r'rte_telemetry_register_cmd\(\s*"([^"]+)"', src))
        t.check(len(registered) >= 20, "found the registrations (%d)" % len(registered))
        t.check(registered <= served, "every registered command is served: "
                "missing %s" % sorted(registered - served))
        with open(os.path.join(t.SOURCE_ROOT, "README.rst")) as fh:
            named = set(m.rstrip(",")
                        for m in re.findall(r"``(/dprdma/[a-z/_]+)", fh.read()))
        named = {n for n in named if not n.endswith("/")}
        t.check(named <= served, "every command README.rst names is served: "
                "missing %s" % sorted(named - served))
        rc = d.stop(signal.SIGINT)
        t.check(rc == 0, "SIGINT: exit status 0 (got %d)" % rc)
        t.check("dprdmad: stopped cleanly" in d.output(), "clean stop")
        d = None
    finally:
        if d is not None:
            d.kill()
        ns.close()
    t.log("PASS")


if __name__ == "__main__":
    main()
