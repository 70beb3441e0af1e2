#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""Congestion notification with the kernel in the path: two dprdmad on
af_packet ports in namespaces A and B, joined through a Linux bridge in a
third namespace whose nftables marks ECN CE on a share of A's RoCEv2
frames to B, as a switch with a long queue would (bridge family,
`ip ecn set ce`: the IPv4 checksum is made again; the ICRC masks the ECN
bits). A streams RDMA WRITEs to B, from cold. B must see the marks
(ce_rx), answer them with CNPs to A's QP, no more than one per mark and
per QP per cnp_interval_us, and A must take those CNPs from its peer
(cnp_rx) -- not count them invalid -- and cut its rate for them (DCQCN's
reaction point: a cut each, at most one per rate_reduce_monitor_period,
its pacer holding the QP), while every byte still lands. The bridge
marks at most 500 frames a second: marks at random, whatever the rate,
would drive any DCQCN sender to its least rate (a switch marks by its
queue's depth).

Then again with secure QPs ([security] mode = encrypt on both): B's CNPs
are sealed as the QP's other frames, and A takes them (a plain CNP for a
secure QP is dropped: test_attack.py forges one)."""

import os

import dprtest as t

PID = os.getpid()
PA, PB = "dprt-ena-%d" % PID, "dprt-enb-%d" % PID
IP_A, IP_B = "10.85.0.1", "10.85.0.2"
MR = 8 << 20
SIZE, COUNT = 4096, 4000
CTL = os.path.join(os.path.dirname(t.DPRDMAD), "dprdmactl")


cmd = t.telemetry_ok


def nft_count(br, what):
    out = br.sh("nft list chain bridge ecntest ecnmark").stdout
    for line in out.splitlines():
        if what in line and "packets" in line:
            return int(line.split("packets")[1].split()[0])
    t.fail("no counter in the rule with %r: %s" % (what, out))


def main():
    t.require_root_and_netns()
    run(False)
    run(True)
    t.log("PASS")


def run(secure):
    a = b = None
    mode = "[secure] " if secure else ""
    na, nb, br, ia, ib = t.bridged_namespaces("ec")
    extra = []
    if secure:
        conf = "/tmp/dprt-ecn-%d.conf" % PID
        with open(conf, "w") as f:
            f.write("[security]\nmode = encrypt\npolicy = required\npsk = %s\n"
                    % os.urandom(32).hex())
        extra = ["-f", conf]
    try:
        # a fifth of A's RoCEv2 frames to B marked CE on the way
        br.sh("nft add table bridge ecntest && nft add chain bridge ecntest ecnmark "
              "'{ type filter hook forward priority 0; }' && "
              "nft add rule bridge ecntest ecnmark ip saddr %s ip daddr %s udp dport 4791 "
              "numgen random mod 5 0 limit rate 500/second counter ip ecn set ce"
              % (IP_A, IP_B))
        # and what comes back as CNPs, by the kernel's reading: BTH opcode
        # 0x81 (the byte after UDP's 8), DSCP 48 (CS6), Not-ECT
        br.sh("nft add rule bridge ecntest ecnmark ip saddr %s ip daddr %s "
              "udp dport 4791 udp checksum 0 @th,64,8 0x81 ip dscp cs6 "
              "ip ecn not-ect counter" % (IP_B, IP_A))
        a = t.af_packet_daemon(PA, na, ia, IP_A + "/24", extra)
        b = t.af_packet_daemon(PB, nb, ib, IP_B + "/24", extra)
        ca = cmd(PA, "/dprdma/client/setup,1,%d" % MR)
        cb = cmd(PB, "/dprdma/client/setup,1,%d" % MR)
        cmd(PA, "/dprdma/client/connect,0,%s,%s,%s" % (cb["qpns"], cb["psns"], cb["gid_ipv4"]))
        cmd(PB, "/dprdma/client/connect,0,%s,%s,%s" % (ca["qpns"], ca["psns"], ca["gid_ipv4"]))
        crc = cmd(PA, "/dprdma/client/fill,0,%d,5" % SIZE)["crc32"]
        cmd(PA, "/dprdma/client/run,0,write,%d,%d,0,%d,%d,16" %
            (SIZE, COUNT, cb["mr_va"], cb["rkey"]))
        t.wait_for(lambda: not cmd(PA, "/dprdma/client/status")["active"], 120,
                   "A's WRITE stream done")
        s = cmd(PA, "/dprdma/client/status")
        t.check(s["errors"] == 0 and s["completed"] == COUNT,
                "A's %d WRITEs of %d B completed, no error" % (COUNT, SIZE))
        t.check(cmd(PB, "/dprdma/client/checksum,0,%d" % SIZE)["crc32"] == crc,
                "B holds what A wrote")
        marked = nft_count(br, "ecn set ce")
        cnps = nft_count(br, "not-ect")
        ta = t.telemetry(PA, "/dprdma/transport/stats,0")
        tb = t.telemetry(PB, "/dprdma/transport/stats,0")
        t.log("bridge marked %d; B: ce_rx %d cnp_tx %d; A: cnp_rx %d rx_invalid %d"
              % (marked, tb["ce_rx"], tb["cnp_tx"], ta["cnp_rx"], ta["rx_invalid"]))
        t.check(marked > 0 and 0 < tb["ce_rx"] <= marked,
                "B saw %d of the %d frames the bridge marked CE"
                % (tb["ce_rx"], marked))
        t.check(0 < tb["cnp_tx"] <= tb["ce_rx"],
                "B answered them with %d CNPs, no more than one a mark"
                % tb["cnp_tx"])
        # (veths and af_packet rings may drop a frame under load: what
        # each hop counts is at most what the one before it sent)
        t.check(0 < cnps <= tb["cnp_tx"],
                "the bridge saw them as RoCEv2 CNPs (opcode 0x81, UDP "
                "checksum 0, DSCP 48, Not-ECT): %d" % cnps)
        t.check(0 < ta["cnp_rx"] <= cnps and ta["rx_invalid"] == 0,
                "A took %d CNPs from its peer, none counted invalid"
                % ta["cnp_rx"])
        t.check(ta["ce_rx"] == 0 and ta["cnp_tx"] == 0,
                "nothing marked the other way, so A sent no CNP")
        t.log("A: cc_cuts %d cc_increases %d cc_paced %d cc_released %d"
              % (ta["cc_cuts"], ta["cc_increases"], ta["cc_paced"],
                 ta["cc_released"]))
        t.check(0 < ta["cc_cuts"] <= ta["cnp_rx"] and tb["cc_cuts"] == 0,
                "%sA cut its rate %d times for its %d CNPs (B, which had none, "
                "never)" % (mode, ta["cc_cuts"], ta["cnp_rx"]))
        if secure:
            qa = t.telemetry(PA, "/dprdma/qp,0,%d" % int(ca["qpns"])) or {}
            t.check(qa.get("sec") == "encrypt" and ta["sec_drop_plain"] == 0 and
                    ta["sec_opened"] >= ta["cnp_rx"],
                    "[secure] A's QP encrypted, every CNP it took opened "
                    "(%d frames opened, none plain)" % ta["sec_opened"])
            return
        # the reaction point off at run time (dprdmactl congestion react
        # off): A's next stream takes CNPs without a cut
        r = t.run([CTL, "-p", PA, "congestion", "react", "off"]).stdout
        line = [x for x in r.splitlines() if x.split()[:1] == ["react"]]
        t.check(line and t.telemetry(PA, "/dprdma/congestion")["react"] == 0,
                "dprdmactl congestion react off: %s" % (line or r))
        t.run([CTL, "-p", PA, "congestion", "rpg_ai_rate", "0"],
              check_rc=False)
        t.check(t.telemetry(PA, "/dprdma/congestion")["rpg_ai_rate"] == 5,
                "a value out of range (rpg_ai_rate 0) refused, the old kept")
        cuts, cnps = ta["cc_cuts"], ta["cnp_rx"]
        cmd(PA, "/dprdma/client/run,0,write,%d,%d,0,%d,%d,16" %
            (SIZE, COUNT, cb["mr_va"], cb["rkey"]))
        t.wait_for(lambda: not cmd(PA, "/dprdma/client/status")["active"], 120,
                   "A's second WRITE stream done")
        ta = t.telemetry(PA, "/dprdma/transport/stats,0")
        t.check(ta["cnp_rx"] > cnps and ta["cc_cuts"] == cuts,
                "react off: %d more CNPs taken, no cut" % (ta["cnp_rx"] - cnps))
    finally:
        rcs = t.stop_and_close((b, a), (na, nb, br))
    t.check(rcs == [0, 0], "%sboth daemons stop cleanly" % mode)


if __name__ == "__main__":
    main()
