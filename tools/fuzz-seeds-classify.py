#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""fuzz-seeds-classify.py OUTDIR: write the libFuzzer seed corpus of
fuzz_classify: frames to a port with MAC 02:00:00:00:00:01, 10.77.0.1,
fd77::1 and its link-local address (ARP, ICMP echo, neighbour
solicitations and advertisements, ICMPv6 echo, MLD, a router
advertisement, RoCEv2 over IPv4 and IPv6), each as one file whose first
byte is the target's control byte (bit 0: the port has its IPv4 address,
bit 1: its IPv6 address, bit 2: a neighbour table). Needs scapy
(/usr/bin/python3)."""

import hashlib
import os
import sys

from scapy.all import ARP, ICMP, IP, IPv6, UDP, Ether, Raw  # noqa: E402
from scapy.layers.inet6 import (ICMPv6EchoRequest, ICMPv6MLReport,  # noqa: E402
                                ICMPv6ND_NA, ICMPv6ND_NS, ICMPv6ND_RA,
                                ICMPv6NDOptDstLLAddr, ICMPv6NDOptSrcLLAddr)

OURS, PEER = "02:00:00:00:00:01", "02:00:00:00:00:02"
LL, PEER_LL = "fe80::ff:fe00:1", "fe80::ff:fe00:2"
SN_LL, SN_G = "ff02::1:ff00:1", "ff02::1:ff00:1"
MC_SN = "33:33:ff:00:00:01"
BTH = bytes([0x04, 0, 0xff, 0xff, 0, 0, 0, 0x11, 0, 0, 0, 1]) + bytes(16) + bytes(4)


def frames():
    e = Ether(src=PEER, dst=OURS)
    yield e / ARP(op=1, hwsrc=PEER, psrc="10.77.0.2", pdst="10.77.0.1")
    yield Ether(src=PEER, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=PEER,
                                                         psrc="10.77.0.2",
                                                         pdst="10.77.0.1")
    yield e / ARP(op=2, hwsrc=PEER, psrc="10.77.0.2", pdst="10.77.0.1")
    yield e / IP(src="10.77.0.2", dst="10.77.0.1") / ICMP() / Raw(b"x" * 56)
    yield e / IP(src="10.77.0.2", dst="10.77.0.1") / UDP(sport=49152, dport=4791) / BTH
    for tgt in (LL, "fd77::1"):
        yield (Ether(src=PEER, dst=MC_SN) / IPv6(src=PEER_LL, dst=SN_LL, hlim=255) /
               ICMPv6ND_NS(tgt=tgt) / ICMPv6NDOptSrcLLAddr(lladdr=PEER))
        yield (Ether(src=PEER, dst=MC_SN) / IPv6(src="::", dst=SN_G, hlim=255) /
               ICMPv6ND_NS(tgt=tgt))
        yield (e / IPv6(src=PEER_LL, dst=tgt, hlim=255) /
               ICMPv6ND_NS(tgt=tgt) / ICMPv6NDOptSrcLLAddr(lladdr=PEER))
    yield (e / IPv6(src=PEER_LL, dst=LL, hlim=255) /
           ICMPv6ND_NA(tgt=PEER_LL, R=0, S=1, O=1) / ICMPv6NDOptDstLLAddr(lladdr=PEER))
    yield (Ether(src=PEER, dst="33:33:00:00:00:01") / IPv6(src=PEER_LL, dst="ff02::1",
                                                          hlim=255) /
           ICMPv6ND_NA(tgt="fd77::2", R=0, S=0, O=1))
    yield e / IPv6(src=PEER_LL, dst=LL) / ICMPv6EchoRequest(data=b"y" * 56)
    yield e / IPv6(src="fd77::2", dst="fd77::1") / ICMPv6EchoRequest(data=b"z" * 8)
    yield (Ether(src=PEER, dst="33:33:00:00:00:16") / IPv6(src=PEER_LL, dst="ff02::16",
                                                          hlim=1) / ICMPv6MLReport())
    yield (Ether(src=PEER, dst="33:33:00:00:00:01") / IPv6(src=PEER_LL, dst="ff02::1",
                                                          hlim=255) / ICMPv6ND_RA())
    for dst in (LL, "fd77::1"):
        yield e / IPv6(src=PEER_LL, dst=dst) / UDP(sport=49152, dport=4791, chksum=0) / BTH


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    n = 0
    for f in frames():
        raw = bytes(f)
        for ctl in (7, 3):
            data = bytes([ctl]) + raw
            with open(os.path.join(out, hashlib.sha1(data).hexdigest()), "wb") as fh:
                fh.write(data)
            n += 1
    print("%d seeds in %s" % (n, out))


if __name__ == "__main__":
    main()
