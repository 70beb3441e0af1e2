#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""dprdmad on a net_af_packet port in one namespace answers the kernel's
ping and arping from another namespace across a veth pair; its telemetry
counters match what the kernel sent and received, and frames it must not
answer are dropped under the right reason."""

import os
import signal

import dprtest as t

PID = os.getpid()
NS_A, NS_B = "dprt%d-a" % PID, "dprt%d-b" % PID
IF_A, IF_B = "dpa%d" % (PID % 100000), "dpb%d" % (PID % 100000)
PREFIX = "dprt-ping-%d" % PID
DPR_IP, PEER_IP = "10.78.0.1", "10.78.0.2"


def udp_send(ns, port, count):
    ns.sh("/usr/bin/python3 -c \"import socket; s=socket.socket("
          "socket.AF_INET, socket.SOCK_DGRAM); [s.sendto(b'x'*40, ('%s', %d)) "
          "for _ in range(%d)]\"" % (DPR_IP, port, count))


def main():
    t.require_root_and_netns()
    a, b = t.Netns(NS_A), t.Netns(NS_B)
    d = None
    try:
        t.veth_pair(a, IF_A, b, IF_B)
        b.sh("ip addr add %s/24 dev %s" % (PEER_IP, IF_B))
        d = t.Daemon(["-l", "0-1", "--no-pci", "--no-huge", "-m", "256",
                      "--file-prefix", PREFIX,
                      "--vdev", "net_af_packet0,iface=%s" % IF_A, "--",
                      "--ip", "%s/24" % DPR_IP, "--idle", "yield"], ns=a)
        before_k = t.link_stats(b, IF_B)
        before_d = t.telemetry(PREFIX, "/dprdma/port/stats,0")

        p = b.sh("ping -c 20 -i 0.05 -W 2 %s" % DPR_IP, check_rc=False)
        sent, got = t.parse_ping(p.stdout)
        t.check(sent == 20 and got == 20,
                "ping: 20 sent, %d received (100%% expected)" % got)
        p = b.sh("arping -c 10 -w 10 -I %s %s" % (IF_B, DPR_IP),
                 check_rc=False)
        sent, got = t.parse_arping(p.stdout)
        t.check(sent == 10 and got == 10,
                "arping: 10 sent, %d answered (100%% expected)" % got)

        udp_send(b, 9, 3)      # not RoCE: dropped as udp_port
        udp_send(b, 4791, 2)   # RoCEv2 port: reaches the RoCE stage
        b.sh("ping -c 2 -i 0.05 -W 1 10.78.0.99", check_rc=False)  # not us

        def settled():
            s = t.telemetry(PREFIX, "/dprdma/port/stats,0")
            k = t.link_stats(b, IF_B)
            return (s["rx_packets"] - before_d["rx_packets"] ==
                    k["tx_packets"] - before_k["tx_packets"])
        t.wait_for(settled, 10, "dprdmad to count every frame the kernel sent")
        s = t.telemetry(PREFIX, "/dprdma/port/stats,0")
        k = t.link_stats(b, IF_B)
        delta = {n: s[n] - before_d.get(n, 0) for n in s}
        kt = k["tx_packets"] - before_k["tx_packets"]
        kr = k["rx_packets"] - before_k["rx_packets"]
        t.log("kernel sent %d, received %d; dprdmad: %s" % (kt, kr, delta))
        t.check(delta["rx_packets"] == kt,
                "rx_packets %d == frames the kernel sent %d"
                % (delta["rx_packets"], kt))
        t.check(delta["tx_packets"] == kr,
                "tx_packets %d == frames the kernel received %d"
                % (delta["tx_packets"], kr))
        t.check(delta["icmp_echo_rx"] == 20 and
                delta["icmp_echo_reply_tx"] == 20,
                "20 echo requests counted and answered")
        t.check(delta["arp_reply_tx"] >= 10 and
                delta["arp_reply_tx"] == delta["arp_request_rx"],
                "every ARP request for us answered (%d, arping's 10 and the "
                "kernel's own)" % delta["arp_reply_tx"])
        t.check(delta["tx_packets"] == delta["arp_reply_tx"] +
                delta["icmp_echo_reply_tx"], "only replies were sent")
        t.check(delta["rx_drop_udp_port"] == 3, "3 UDP to port 9 dropped")
        tr = t.telemetry(PREFIX, "/dprdma/transport/stats,0")
        t.check(delta["roce_rx_packets"] == 2 and tr["rx_invalid"] == 2,
                "2 UDP 4791 frames handed to the RoCE stage, refused there "
                "as not RoCEv2 (no BTH, no ICRC)")
        t.check(delta["rx_drop_arp_not_for_us"] >= 1,
                "ARP for 10.78.0.99 not answered (%d)"
                % delta["rx_drop_arp_not_for_us"])
        drops = {n: v for n, v in delta.items()
                 if "drop" in n and v and n not in (
                     "rx_drop_udp_port", "rx_drop_arp_not_for_us")}
        t.check(not drops, "no other drops (%s)" % drops)
        t.check(delta["rx_bytes"] > 0 and delta["tx_bytes"] > 0, "byte counts")

        # the same counters through Debian's dpdk-telemetry.py
        replies = t.telemetry_py(PREFIX, ["/dprdma/info", "/dprdma/ports",
                                          "/dprdma/port/info,0",
                                          "/dprdma/port/stats,0",
                                          "/dprdma/lcores",
                                          "/dprdma/lcore/stats,1",
                                          "/dprdma/port/stats,7"])
        t.check(len(replies) == 7, "dpdk-telemetry.py answers every command")
        info, ports, pinfo, pstats, lcores, lstats, bad = replies
        t.check(info["/dprdma/info"]["workers"] == 1 and
                info["/dprdma/info"]["ports"] == 1, "/dprdma/info")
        t.check(ports["/dprdma/ports"] == [0], "/dprdma/ports")
        t.check(pinfo["/dprdma/port/info"]["ipv4"] == DPR_IP + "/24" and
                pinfo["/dprdma/port/info"]["active_mtu"] == 1024 and
                pinfo["/dprdma/port/info"]["device"] == "dprdma0",
                "/dprdma/port/info: address, active MTU 1024, dprdma0")
        t.check(pstats["/dprdma/port/stats"]["icmp_echo_reply_tx"] ==
                s["icmp_echo_reply_tx"], "/dprdma/port/stats via the script")
        t.check(lcores["/dprdma/lcores"] == [1], "worker on lcore 1")
        ls = lstats["/dprdma/lcore/stats"]
        t.check(ls["rx_packets"] == s["rx_packets"], "/dprdma/lcore/stats")
        # a yielding worker that answered some pings is mostly idle, and
        # its bursts were small
        t.check(ls["busy_cycles"] > 0 and ls["idle_cycles"] > ls["busy_cycles"] and
                ls["busy_percent"] < 50,
                "the worker's cycles: %d busy, %d idle (%d%% busy)"
                % (ls["busy_cycles"], ls["idle_cycles"], ls["busy_percent"]))
        t.check(0 < ls["rx_bursts"] <= ls["rx_packets"] and
                1.0 <= float(ls["rx_packets_per_burst"]) <= 32.0,
                "%d non-empty bursts, %s frames per burst"
                % (ls["rx_bursts"], ls["rx_packets_per_burst"]))
        t.check(t.telemetry(PREFIX, "/dprdma/lcore/callgrind,1,on") is None,
                "the callgrind window is refused outside callgrind")
        t.check(bad["/dprdma/port/stats"] is None,
                "a port that does not exist gets null")

        rc = d.stop(signal.SIGTERM)
        out = d.output()
        t.check(rc == 0, "SIGTERM: exit status 0 (got %d)" % rc)
        t.check("dprdmad: stopping (SIGTERM)" in out and
                "dprdmad: stopped cleanly" in out, "clean shutdown reported")
        t.check("icmp_echo_reply_tx" in out, "summary printed at exit")
        d = None
    finally:
        if d is not None:
            d.kill()
        a.close()
        b.close()
    t.log("PASS")


if __name__ == "__main__":
    main()
