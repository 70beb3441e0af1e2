#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""Neighbours as the field sees them: two dprdmad on af_packet ports in
namespaces A and B, joined through a Linux bridge in a third namespace.

1. A peer that moves: A streams RDMA WRITEs and READs to B; in the middle
   a gratuitous ARP says B's address is now at another MAC (as after a
   failover). The bridge rewrites frames to the new MAC to B's port
   (nftables, bridge family), so B keeps receiving whatever A aims at;
   the stream must go on with every byte intact, A's QPs must have taken
   the new MAC (the bridge counts frames to it), and dprdmactl neigh
   must show it.
2. A peer that never answers: A's QP connected to an address nobody has;
   its WRITE ends in RETRY_EXC_ERR after the QP's retries (as a lost path
   does), the ARP requests repeat with a backoff meanwhile, and nothing
   leaves for a zero MAC."""

import os
import subprocess
import time

import dprtest as t

PID = os.getpid()
PA, PB = "dprt-nba-%d" % PID, "dprt-nbb-%d" % PID
IP_A, IP_B, NOBODY = "10.84.0.1", "10.84.0.2", "10.84.0.99"
MAC_B2 = "02:84:00:00:00:b2"
MR = 8 << 20
DPRDMACTL = os.path.join(os.path.dirname(t.DPRDMAD), "..", "app", "dprdmactl")
if not os.path.exists(DPRDMACTL):
    DPRDMACTL = os.path.join(os.path.dirname(t.DPRDMAD), "dprdmactl")
RETRY_EXC_ERR = 12


cmd = t.telemetry_ok


def status(prefix):
    return cmd(prefix, "/dprdma/client/status")


def wait_idle(prefix, what, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        s = status(prefix)
        if not s["active"]:
            return s
        time.sleep(0.05)
    t.fail("%s: not done in %d s: %r" % (what, timeout, s))


def port(prefix):
    return t.telemetry(prefix, "/dprdma/port/stats,0")


class Garp:
    """A scapy process in B's namespace, started ahead (scapy takes a
    second to load): each send() is a gratuitous ARP (a request for its
    own address) from MAC for IP, out of B's interface at once -- into the
    bridge from B's side, as B itself would send it (so the bridge learns
    the MAC where B is)."""

    def __init__(self, ns, ifname):
        prog = ("import sys\n"
                "from scapy.all import Ether, ARP, sendp\n"
                "print('ready', flush=True)\n"
                "for line in sys.stdin:\n"
                "    mac, ip = line.split()\n"
                "    sendp(Ether(src=mac, dst='ff:ff:ff:ff:ff:ff') / ARP(op=1, hwsrc=mac,"
                " psrc=ip, hwdst='00:00:00:00:00:00', pdst=ip), iface='%s',"
                " verbose=False)\n"
                "    print('sent', flush=True)\n") % ifname
        self.p = subprocess.Popen(ns.cmd(["/usr/bin/python3", "-c", prog]),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True)
        if self.p.stdout.readline().strip() != "ready":
            t.fail("scapy did not start in the bridge's namespace")

    def send(self, mac, ip):
        self.p.stdin.write("%s %s\n" % (mac, ip))
        self.p.stdin.flush()
        if self.p.stdout.readline().strip() != "sent":
            t.fail("scapy did not send the gratuitous ARP")

    def close(self):
        self.p.stdin.close()
        self.p.wait(10)


def nft_count(br):
    out = br.sh("nft list chain bridge mv pre").stdout
    for line in out.splitlines():
        if MAC_B2 in line and "counter packets" in line:
            return int(line.split("counter packets")[1].split()[0])
    t.fail("no counter in the bridge's rule:\n" + out)


def main():
    t.require_root_and_netns()
    a = b = None
    na, nb, br, ia, ib = t.bridged_namespaces("nb")
    try:
        a = t.af_packet_daemon(PA, na, ia, IP_A + "/24")
        b = t.af_packet_daemon(PB, nb, ib, IP_B + "/24")
        mac_b = t.telemetry(PB, "/dprdma/port/info,0")["mac"]
        # frames to the new MAC reach B's port
        br.sh("nft add table bridge mv && nft add chain bridge mv pre "
              "'{ type filter hook prerouting priority -300; }' && "
              "nft add rule bridge mv pre ether daddr %s counter ether daddr "
              "set %s" % (MAC_B2, mac_b))

        # --- 1: B moves in the middle of A's streams
        ca = cmd(PA, "/dprdma/client/setup,3,%d" % MR)
        cb = cmd(PB, "/dprdma/client/setup,3,%d" % MR)
        aq, bq = ca["qpns"].split(","), cb["qpns"].split(",")
        ap, bp = ca["psns"].split(","), cb["psns"].split(",")
        for i in range(2):
            cmd(PA, "/dprdma/client/connect,%d,%s,%s,%s" % (i, bq[i], bp[i], cb["gid_ipv4"]))
            cmd(PB, "/dprdma/client/connect,%d,%s,%s,%s" % (i, aq[i], ap[i], ca["gid_ipv4"]))
        garp = Garp(nb, ib)
        size, count = 4096, 60000
        crc_w = cmd(PA, "/dprdma/client/fill,0,%d,7" % size)["crc32"]
        # (a neighbour's MAC changes at most once a second, as Linux's
        # locktime has it: B's is older than that when it moves)
        time.sleep(1.1)
        cmd(PA, "/dprdma/client/run,0,write,%d,%d,0,%d,%d,16" %
            (size, count, cb["mr_va"], cb["rkey"]))
        t.wait_for(lambda: status(PA)["completed"] >= count // 4, 60,
                   "a quarter of the WRITE stream done")
        before = status(PA)["completed"]
        garp.send(MAC_B2, IP_B)
        s = wait_idle(PA, "the WRITE stream")
        t.log("A: %r" % s)
        t.check(s["errors"] == 0 and s["completed"] == count,
                "A's WRITE stream to B went on through B's move: %d of %d, "
                "no error (%d before it)" % (s["completed"], count, before))
        t.check(cmd(PB, "/dprdma/client/checksum,0,%d" % size)["crc32"] == crc_w,
                "B holds what A wrote")
        pa = port(PA)
        moved = nft_count(br)
        t.check(pa["neigh_changed"] == 1 and moved > 0,
                "A took B's new MAC (neigh_changed %d) and sent to it (%d "
                "frames to %s on the bridge)" % (pa["neigh_changed"], moved, MAC_B2))
        out = t.run([DPRDMACTL, "-p", PA, "neigh"]).stdout
        t.log(out)
        t.check(any(IP_B in x and MAC_B2 in x.lower() and "REACHABLE" in x
                    for x in out.splitlines()),
                "dprdmactl neigh: %s at %s" % (IP_B, MAC_B2))
        # B READs from A while B moves back (more than the 1 s locktime
        # after the first move): A's READ responses follow it
        time.sleep(1.1)
        crc_r = cmd(PA, "/dprdma/client/fill,%d,%d,9" % (2 << 20, size))["crc32"]
        cmd(PB, "/dprdma/client/run,1,read,%d,%d,%d,%d,%d,16" %
            (size, count, 4 << 20, ca["mr_va"] + (2 << 20), ca["rkey"]))
        t.wait_for(lambda: status(PB)["completed"] >= count // 4, 60,
                   "a quarter of the READ stream done")
        garp.send(mac_b, IP_B)
        s = wait_idle(PB, "the READ stream")
        t.check(s["errors"] == 0 and s["completed"] == count and
                cmd(PB, "/dprdma/client/checksum,%d,%d" % (4 << 20, size))["crc32"] == crc_r,
                "B's READ stream from A went on through B's move back, data "
                "intact (%d of %d)" % (s["completed"], count))
        # nothing goes to the old MAC any more
        moved = nft_count(br)
        cmd(PB, "/dprdma/client/run,1,read,%d,%d,%d,%d,%d,16" %
            (size, 1000, 4 << 20, ca["mr_va"] + (2 << 20), ca["rkey"]))
        s = wait_idle(PB, "another READ stream")
        pa = port(PA)
        t.check(s["errors"] == 0 and pa["neigh_changed"] == 2 and
                nft_count(br) == moved,
                "A's responses followed B back to %s (neigh_changed %d; no "
                "frame to %s since)" % (mac_b, pa["neigh_changed"], MAC_B2))
        tr = t.telemetry(PA, "/dprdma/transport/stats,0")
        t.check(tr["path_updates"] >= 3 and tr["local_ack_timeouts"] == 0,
                "A's QPs followed at once (path_updates %d, no ACK timeout)"
                % tr["path_updates"])

        garp.close()

        # --- 2: a peer nobody answers for
        pa0 = port(PA)
        cmd(PA, "/dprdma/client/connect,2,%s,%s,%s" % (bq[2], bp[2], NOBODY))
        t0 = time.time()
        cmd(PA, "/dprdma/client/run,2,write,64,1,0,%d,%d,1" % (cb["mr_va"], cb["rkey"]))
        s = wait_idle(PA, "the WRITE to nobody", 30)
        took = time.time() - t0
        pa1 = port(PA)
        t.check(s["errors"] == 1 and s["first_error_status"] == RETRY_EXC_ERR,
                "the WRITE to %s ends in RETRY_EXC_ERR (status %d) after %.2f s "
                "(8 local ACK timeouts of 67 ms)" % (NOBODY, s["first_error_status"], took))
        asked = pa1["arp_request_tx"] - pa0["arp_request_tx"]
        t.check(0.4 < took < 5 and asked >= 3,
                "ARP asked %d times meanwhile (at once, then 100, 200, 400 ms "
                "apart)" % asked)
        out = t.run([DPRDMACTL, "-p", PA, "neigh"]).stdout
        t.check(any(NOBODY in x and "INCOMPLETE" in x for x in out.splitlines()),
                "dprdmactl neigh: %s INCOMPLETE" % NOBODY)
        for who, p in (("A", pa1), ("B", port(PB))):
            t.check(p["tx_drop_zero_mac"] == 0 and p["rx_drop_l2_not_for_us"] == 0,
                    "dprdmad %s: no frame to a zero MAC, none misdirected" % who)
    finally:
        rcs = t.stop_and_close((b, a), (na, nb, br))
    t.check(rcs == [0, 0], "both daemons stop cleanly")
    t.log("PASS")


if __name__ == "__main__":
    main()
