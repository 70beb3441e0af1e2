#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""dprdmad's IPv6 on a net_af_packet port, against the Linux kernel in
another namespace across a veth pair with IPv6 on: the kernel finds
dprdmad's MAC by neighbour discovery (RFC 4861) for its global and its
link-local address and pings both (ICMPv6 echo); dprdmad finds the
kernel's by soliciting it (UD datagrams from a verbs client to the
kernel's address: the solicitation goes out, the advertisement comes
back, the datagrams follow and reach the kernel, which drops them for
their zero UDP checksum and counts that). The kernel's own IPv6 chatter
(MLD reports, router solicitations, duplicate address detection) is
dropped under its reasons, nothing is malformed."""

import os
import re
import subprocess
import sys

import dprtest as t

PID = os.getpid()
NS_A, NS_B = "dprt%d-6a" % PID, "dprt%d-6b" % PID
IF_A, IF_B = "d6a%d" % (PID % 100000), "d6b%d" % (PID % 100000)
PREFIX = "dprt-ping6-%d" % PID
DPR_IP6, PEER_IP6 = "fd78::1", "fd78::2"
SHIM_TEST = os.environ.get("DPR_SHIM_TEST", "build/tests/dprdma-shim-test")


def udp6_csum_errors(ns):
    out = ns.sh("cat /proc/net/snmp6").stdout
    m = re.search(r"^Udp6InCsumErrors\s+(\d+)", out, re.M)
    return int(m.group(1)) if m else 0


def main():
    t.require_root_and_netns()
    a, b = t.Netns(NS_A), t.Netns(NS_B)
    d = None
    try:
        t.veth_pair(a, IF_A, b, IF_B)
        # IPv6 on the kernel's end only: dprdmad's end carries no kernel
        # address (the kernel there must not answer for dprdmad)
        b.sh("sysctl -qw net.ipv6.conf.%s.disable_ipv6=0; "
             "ip -6 addr add %s/64 dev %s nodad" % (IF_B, PEER_IP6, IF_B))
        d = t.Daemon(["-l", "0-1", "--no-pci", "--no-huge", "-m", "256",
                      "--file-prefix", PREFIX,
                      "--vdev", "net_af_packet0,iface=%s" % IF_A, "--",
                      "--ip", "10.78.6.1/24", "--ipv6", DPR_IP6 + "/64",
                      "--idle", "yield", "--socket", "/tmp/%s.sock" % PREFIX],
                     ns=a)
        info = t.telemetry(PREFIX, "/dprdma/port/info,0")
        ll = info["ipv6_link_local"]
        t.check(info["ipv6"] == DPR_IP6 + "/64" and ll.startswith("fe80::"),
                "/dprdma/port/info: %s and %s" % (info["ipv6"], ll))
        mac = b.sh("cat /sys/class/net/%s/address" % IF_B).stdout.strip()
        # the kernel's link-local address, once its DAD is through
        t.wait_for(lambda: "tentative" not in b.sh(
            "ip -6 addr show dev %s" % IF_B).stdout and "fe80" in b.sh(
            "ip -6 addr show dev %s" % IF_B).stdout, 10, "the kernel's fe80 address")
        before = t.telemetry(PREFIX, "/dprdma/port/stats,0")
        csum0 = udp6_csum_errors(b)

        # dprdmad solicits the kernel first: UD datagrams from a verbs
        # client to the kernel's address, before the kernel said anything
        r = subprocess.run(["ip", "netns", "exec", NS_A, SHIM_TEST, "ud-to",
                            "/tmp/%s.sock" % PREFIX, PEER_IP6, "2"],
                           capture_output=True, text=True, timeout=60)
        sys.stdout.write(r.stdout + r.stderr)
        t.check(r.returncode == 0, "a UD send to %s completed" % PEER_IP6)
        for addr in (DPR_IP6, "%s%%%s" % (ll, IF_B)):
            p = b.sh("ping -6 -c 10 -i 0.05 -W 2 %s" % addr, check_rc=False)
            sent, got = t.parse_ping(p.stdout)
            t.check(sent == 10 and got == 10,
                    "ping -6 %s: 10 sent, %d received" % (addr, got))
        neigh = b.sh("ip -6 neigh show dev %s" % IF_B).stdout
        dmac = info["mac"].lower()
        for addr in (DPR_IP6, ll):
            t.check(re.search(r"^%s lladdr %s" % (re.escape(addr), dmac), neigh,
                              re.M) is not None,
                    "the kernel learnt %s at %s by neighbour discovery" % (addr, dmac))

        s = t.telemetry(PREFIX, "/dprdma/port/stats,0")
        delta = {n: s[n] - before.get(n, 0) for n in s}
        t.log("dprdmad: %s" % {n: v for n, v in delta.items() if v})
        t.check(delta["icmp6_echo_rx"] == 20 and delta["icmp6_echo_reply_tx"] == 20,
                "20 ICMPv6 echo requests counted and answered")
        # (the kernel learnt the global address from dprdmad's own
        # solicitation, RFC 4861 7.2.3: it asks for the link-local one)
        t.check(delta["nd_solicit_rx"] >= 1 and
                delta["nd_advert_tx"] == delta["nd_solicit_rx"],
                "the kernel's solicitations answered (%d)" % delta["nd_advert_tx"])
        t.check(delta["nd_solicit_tx"] >= 1 and delta["nd_advert_rx"] >= 1,
                "dprdmad solicited the kernel for %s and heard its "
                "advertisement (%d, %d)" % (PEER_IP6, delta["nd_solicit_tx"],
                                            delta["nd_advert_rx"]))
        csum = udp6_csum_errors(b) - csum0
        t.check(csum == 2,
                "the kernel received both datagrams (and dropped them: RoCEv2 "
                "over IPv6 sends UDP checksum 0, which only a RoCE receiver "
                "takes; Udp6InCsumErrors +%d)" % csum)
        t.check(delta["rx_drop_ipv6_malformed"] == 0 and
                delta["rx_drop_icmp6_malformed"] == 0 and
                delta["rx_drop_ipv6_protocol"] == 0,
                "nothing the kernel sent was malformed")
        tr = t.telemetry(PREFIX, "/dprdma/transport/stats,0")
        ps = t.telemetry(PREFIX, "/dprdma/port/stats,0")
        t.check(tr["ud_sent"] >= 1 and ps["tx_drop_unresolved"] == 0 and
                ps["neigh_held"] == ps["neigh_released"],
                "the datagram to the kernel went out (ud_sent %d; held for "
                "its MAC %d, released %d, dropped %d)"
                % (tr["ud_sent"], ps["neigh_held"], ps["neigh_released"],
                   ps["tx_drop_unresolved"]))
        rc = d.stop()
        d = None
        t.check(rc == 0, "dprdmad stops cleanly")
    finally:
        if d is not None:
            d.kill()
        a.close()
        b.close()
    t.log("PASS")


if __name__ == "__main__":
    main()
