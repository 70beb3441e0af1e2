#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""A hostile RoCEv2 peer against a running dprdmad (issue 9).

dprdmad runs in one namespace on net_af_packet over a veth pair; this
script moves itself into the other namespace and plays the remote end of
the built-in client's RC QPs with frames it builds with scapy (ICRC
computed by scapy.contrib.roce, so each frame is wrong only where meant).
The MR is filled with a known pattern and its CRC taken first; every
hostile request must leave it as it was.

Each request is answered as IBA and Linux rxe answer it, and counted:
- class C errors (IBA 9.9.3.1, rxe do_class_ac_error) NAK with the right
  syndrome and move the QP to ERR, after which its frames are dropped:
  rkey not the MR's, va+len past the MR's end, va+len wrapping 2^64, READ
  of 2^31 bytes -> remote access error (0x62); WRITE payload longer and
  shorter than its DMA length, MIDDLE without FIRST, payload longer than
  the path MTU, atomic at a misaligned address -> invalid request (0x61);
- a PSN ahead of the expected one -> one PSN sequence error NAK (0x60),
  the QP stays in RTS and goes on;
- bad ICRC, headers truncated at every offset, an unknown destination QP,
  a QP never connected (RESET/INIT), a QP in ERR, a source address not
  the QP's peer, a P_Key not the default -> dropped silently, counted in
  rx_invalid, rx_no_qp, rx_qp_state, rx_wrong_peer.
Afterwards the untouched QP takes a good WRITE, whose bytes land exactly
where asked, and the daemon answers telemetry and ping.

Then the keys, against a verbs client of the daemon (dprdma-shim-test
target: MRs of every kind in one allocation, a canary page before and
after each, the whole allocation compared with its pattern after every
step): the rkey of an MR of another PD, of a deregistered MR, of an MR
without remote access, with remote read only (WRITE, FETCH_ADD) and with
remote write only (READ) -> remote access error NAK (0x62), nothing
written anywhere; a WRITE whose MR is deregistered after its FIRST packet
landed -> the MIDDLE packet is NAKed (0x62) and places nothing; a frame
to a QP in RESET is dropped (rx_qp_state); a good WRITE lands exactly
where asked; 32 keys in a row are not predictable from each other.

Last, MADs to QP1 (dprdmad's CM): cut short, of another base version,
class or class version, method, an unknown attribute, a REP and a DREQ
for no connection -> dropped without an answer, each counted by reason
in /dprdma/cm/stats; a Q_Key not the GSI's -> dropped by QP1 (bad_qkey);
a REQ to a port nobody listens on -> a REJ on the wire, reason 8 (invalid
service ID), with the requester's comm ID and transaction ID. DprdmaCaps
Gets from made-up addresses, until 2,100 have arrived -> at most half the table of peers
remembers them, none is asked anything back."""

import ctypes
import json
import os
import struct
import subprocess
import time
import zlib

import dprtest as t

PID = os.getpid()
PREFIX = "dprt-hostile-%d" % PID
IFA, IFB = "dpha%d" % (PID % 100000), "dphb%d" % (PID % 100000)
IP_A, IP_B = "10.83.0.1", "10.83.0.2"
MR = 1 << 20
NQP = 16
RPSN = 1000          # the PSN this peer starts each QP at
RQPN0 = 0x100        # this peer's QPN for the daemon's QP i: RQPN0 + i
RQPN1 = 0x300        # the same for the verbs client's QPs
NT = 10              # the verbs client's connected QPs (4 READs each)
SHIM_TEST = os.environ.get("DPR_SHIM_TEST", "build/tests/dprdma-shim-test")
CLONE_NEWNET = 0x40000000

SYN_ACK, SYN_SEQ, SYN_INV, SYN_ACC = 0x00, 0x60, 0x61, 0x62
OP_WRITE_FIRST, OP_WRITE_MIDDLE, OP_WRITE_LAST = 0x06, 0x07, 0x08
OP_WRITE_ONLY = 0x0a
OP_READ_REQ, OP_FADD = 0x0c, 0x14
OP_CNP = 0x81


def cmd(c):
    r = t.telemetry(PREFIX, c)
    if r is None or r.get("rc", 0) != 0:
        t.fail("%s -> %r" % (c, r))
    return r


def stats():
    return cmd("/dprdma/transport/stats,0")


def enter_netns(name):
    fd = os.open("/var/run/netns/" + name, os.O_RDONLY)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        t.fail("setns %s: %s" % (name, os.strerror(ctypes.get_errno())))
    os.close(fd)


class Peer:
    def __init__(self, mac_a, mac_b, setup):
        from scapy.all import AsyncSniffer, Ether, IP, UDP, Raw, conf
        from scapy.contrib.roce import BTH
        self.Ether, self.IP, self.UDP, self.Raw, self.BTH = Ether, IP, UDP, Raw, BTH
        self.mac_a, self.mac_b = mac_a, mac_b
        self.qpns = setup["qpn_list"]
        self.va, self.rkey = setup["mr_va"], setup["rkey"]
        self.sock = conf.L2socket(iface=IFB)
        self.got = []
        self.sniffer = AsyncSniffer(iface=IFB, store=False,
                                    prn=self._rx, lfilter=self._ours)
        self.sniffer.start()
        time.sleep(0.5)

    def _ours(self, p):
        b = bytes(p)
        return (len(b) >= 54 and b[12:14] == b"\x08\x00" and b[23] == 17 and
                b[36:38] == b"\x12\xb7" and b[26:30] == bytes(
                    int(x) for x in IP_A.split(".")))

    def _rx(self, p):
        """(opcode, dest QPN, PSN, AETH syndrome, AETH MSN, payload) of a
        frame dprdmad sent (payload: after the AETH, before the ICRC)."""
        b = bytes(p)
        bth = b[42:54]
        op, dqpn = bth[0], int.from_bytes(bth[5:8], "big")
        psn = int.from_bytes(bth[9:12], "big")
        syn = b[54] if len(b) >= 58 else None
        msn = int.from_bytes(b[55:58], "big") if len(b) >= 58 else None
        self.got.append((op, dqpn, psn, syn, msn, b[58:-4]))

    def udp(self, sport, payload, src=IP_B):
        """Ether/IPv4/UDP to port 4791 around @payload (scapy layers or
        raw bytes), UDP checksum 0 as RoCEv2 sends it."""
        return (self.Ether(src=self.mac_b, dst=self.mac_a) /
                self.IP(src=src, dst=IP_A, flags="DF", ttl=64) /
                self.UDP(sport=sport, dport=4791, chksum=0) / payload)

    def frame(self, qp, op, psn, ext=b"", payload=b"", dqpn=None,
              pkey=0xffff, src=IP_B):
        return bytes(self.udp(49152 + qp,
                              self.BTH(opcode=op, pkey=pkey, ackreq=1,
                                       dqpn=self.qpns[qp] if dqpn is None else dqpn,
                                       psn=psn & 0xffffff) /
                              self.Raw(ext + payload), src=src))

    def reth(self, va, rkey, length):
        return struct.pack("!QII", va & (2 ** 64 - 1), rkey, length)

    def send(self, frames, wait=0.4):
        mark = len(self.got)
        for f in frames:
            self.sock.send(self.Raw(f))
        time.sleep(wait)
        return self.got[mark:]

    def close(self):
        self.sniffer.stop()
        self.sock.close()


def expect(peer, what, frames, qp, syn=None, psn=None, rqpn0=RQPN0):
    """Send; expect one response to rqpn0 + qp with syndrome syn (None:
    silence)."""
    before = stats()
    rsp = [r for r in peer.send(frames) if r[1] == rqpn0 + qp]
    after = stats()
    if syn is None:
        t.check(not rsp, "%s: no answer (%r)" % (what, rsp))
    else:
        t.check(len(rsp) == 1 and rsp[0][0] == 0x11 and
                (rsp[0][3] & 0xe0) == (syn & 0xe0) and
                (syn == SYN_ACK or rsp[0][3] == syn) and
                (psn is None or rsp[0][2] == psn),
                "%s: answered with syndrome 0x%02x (got %r)" % (what, syn, rsp))
    return {k: after[k] - before[k] for k in after if isinstance(after[k], int)}


def pattern(off, n):
    """dprdma-shim-test's fill() of its allocation (seed 77), inverted: the
    bytes differ from what is there at every position, so a diff shows
    exactly the bytes written"""
    return bytes(~(77 * 131 + j * 7 + (j >> 8)) & 0xff
                 for j in range(off, off + n))


def pattern_of(off, n):
    """dprdma-shim-test's fill() of its allocation (seed 77) as it is
    there: the bytes a READ brings back"""
    return bytes((77 * 131 + j * 7 + (j >> 8)) & 0xff
                 for j in range(off, off + n))


def keys_from_the_wire(peer, sock):
    """The verbs client's MRs and QPs against the hostile peer."""
    tgt = subprocess.Popen([SHIM_TEST, "target", sock, IP_B, str(NT),
                            str(RQPN1), str(RPSN)], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True)
    try:
        line = tgt.stdout.readline()
        if not line.startswith("{"):
            t.fail("dprdma-shim-test target did not start: %r (exit %s)" %
                   (line, tgt.wait(10)))
        info = json.loads(line)

        def ask(c):
            tgt.stdin.write(c + "\n")
            tgt.stdin.flush()
            return json.loads(tgt.stdout.readline())

        def unchanged(what):
            ch = ask("diff")["changed"]
            t.check(ch == [], "%s: every MR and canary page as it was "
                    "(changed: %r)" % (what, ch))

        mrs, qpns, buf = info["mrs"], info["qpns"], info["buf"]
        mtu = 1024           # the client's QPs ask for path MTU 1024

        def frame(k, op, psn, name, off, n, payload=b""):
            m = mrs[name]
            return peer.frame(0, op, psn, peer.reth(m["va"] + off, m["rkey"], n),
                              payload, dqpn=qpns[k])

        def write(k, name, off=0, n=8, psn=RPSN):
            va = mrs[name]["va"] + off
            return frame(k, OP_WRITE_ONLY, psn, name, off, n,
                         pattern(va - buf, n))

        def fadd(k, name):
            m = mrs[name]
            return peer.frame(0, OP_FADD, RPSN, peer.reth(
                m["va"], m["rkey"], 0)[:12] + struct.pack("!QQ", 1, 0),
                dqpn=qpns[k])

        cases = [
            ("WRITE with the rkey of an MR of another PD", write(0, "other_pd")),
            ("WRITE with the rkey of a deregistered MR", write(1, "freed")),
            ("WRITE to an MR without remote access", write(2, "local")),
            ("WRITE to an MR with remote read only", write(3, "ronly")),
            ("READ of an MR with remote write only",
             frame(4, OP_READ_REQ, RPSN, "wonly", 0, 64)),
            ("FETCH_ADD on an MR without remote atomic access", fadd(5, "ronly")),
        ]
        for k, (what, f) in enumerate(cases):
            dl = expect(peer, what, [f], k, SYN_ACC, RPSN, rqpn0=RQPN1)
            t.check(dl["nak_err_tx"] == 1, "%s: counted in nak_err_tx" % what)
            dl = expect(peer, what + ", then a good WRITE to the QP in ERR",
                        [write(k, "ok", psn=RPSN + 1)], k, rqpn0=RQPN1)
            t.check(dl["rx_qp_state"] == 1, "%s: the QP is in ERR, its frames "
                    "dropped and counted" % what)
            unchanged(what)
        dl = expect(peer, "WRITE to a QP in RESET", [peer.frame(
            0, OP_WRITE_ONLY, RPSN, peer.reth(mrs["ok"]["va"], mrs["ok"]["rkey"],
                                              8), b"z" * 8,
            dqpn=info["reset_qpn"])], NT, rqpn0=RQPN1)
        t.check(dl["rx_qp_state"] == 1, "a frame to a QP in RESET is counted "
                "in rx_qp_state")
        unchanged("WRITE to a QP in RESET")

        # an MR deregistered while a WRITE into it is half done: its
        # FIRST packet landed, the MIDDLE one finds the key gone
        k, va = 6, mrs["inflight"]["va"]
        first = frame(k, OP_WRITE_FIRST, RPSN, "inflight", 0, 3 * mtu,
                      pattern(va - buf, mtu))
        expect(peer, "WRITE FIRST of 3 packets", [first], k, SYN_ACK, RPSN,
               rqpn0=RQPN1)
        ch = ask("diff")["changed"]
        t.check(ch == [[va, va + mtu]], "the FIRST packet's %d bytes landed "
                "where asked, nothing else (%r)" % (mtu, ch))
        t.check(ask("dereg inflight") == {"dereg": "inflight"},
                "the client deregisters the MR")
        mid = peer.frame(0, OP_WRITE_MIDDLE, RPSN + 1, b"",
                         pattern(va + mtu - buf, mtu), dqpn=qpns[k])
        last = peer.frame(0, OP_WRITE_LAST, RPSN + 2, b"",
                          pattern(va + 2 * mtu - buf, mtu), dqpn=qpns[k])
        dl = expect(peer, "the MIDDLE packet after the deregistration",
                    [mid], k, SYN_ACC, RPSN + 1, rqpn0=RQPN1)
        t.check(dl["nak_err_tx"] == 1, "refused at once: counted in nak_err_tx")
        dl = expect(peer, "the LAST packet", [last], k, rqpn0=RQPN1)
        t.check(dl["rx_qp_state"] == 1, "the LAST packet dropped (QP in ERR)")
        unchanged("WRITE into a deregistered MR")

        # a good WRITE lands exactly where asked
        k, va = 7, mrs["ok"]["va"]
        dl = expect(peer, "good WRITE into the verbs client's MR",
                    [write(k, "ok", 4096, 8)], k, SYN_ACK, RPSN, rqpn0=RQPN1)
        t.check(dl["ack_tx"] == 1, "ACKed")
        ch = ask("diff")["changed"]
        t.check(ch == [[va + 4096, va + 4104]], "8 bytes landed at MR+4096 "
                "and nowhere else (%r)" % ch)

        # READs queued behind each other: each response carries its own
        # READ's MSN (C9-148); more waiting at once than the QP's 4
        # resources: NAK Invalid Request (IBA 9.9.3.1, "too many RDMA READ
        # or ATOMIC requests"), never a PSN sequence NAK
        def reads(k, n):
            return [frame(k, OP_READ_REQ, RPSN + i, "ok", 64 * i, 64)
                    for i in range(n)]

        def answers(k, rsp, n):
            """READ responses in order, each its READ's PSN, MSN, bytes;
            returns how many"""
            va = mrs["ok"]["va"]
            good = 0
            for r in rsp:
                if r[0] != 0x10:
                    break
                i = r[2] - RPSN
                t.check(i == good and r[4] == good + 1 and r[3] == 0x1f and
                        r[5] == pattern_of(va + 64 * i - buf, 64),
                        "QP %d, READ %d: READ_RESPONSE_ONLY at PSN %d, MSN %d, "
                        "the MR's 64 bytes (got PSN %d, MSN %d)" %
                        (k, i, RPSN + i, i + 1, r[2], r[4]))
                good += 1
            return good

        rsp = [r for r in peer.send(reads(8, 4)) if r[1] == RQPN1 + 8]
        t.check(answers(8, rsp, 4) == 4 and len(rsp) == 4,
                "4 READs back to back against 4 resources: 4 responses, MSN "
                "1 to 4")
        before = stats()
        rsp = [r for r in peer.send(reads(9, 8)) if r[1] == RQPN1 + 9]
        n = answers(9, rsp, 8)
        dl = {k: v - before[k] for k, v in stats().items()}
        if n == 8:
            t.check(len(rsp) == 8 and dl["rd_atomic_over"] == 0,
                    "8 READs back to back against 4 resources: the daemon "
                    "answered each before the next came: 8 responses, MSN 1 to 8")
        else:
            t.check(n >= 4 and len(rsp) == n + 1 and rsp[n][0] == 0x11 and
                    rsp[n][3] == SYN_INV and rsp[n][2] == RPSN + n and
                    dl["rd_atomic_over"] == 1 and dl["nak_seq_tx"] == 0,
                    "8 READs back to back against 4 resources: %d answered with "
                    "MSN 1 to %d, then NAK Invalid Request at the next PSN (%r)"
                    % (n, n, [r[:5] for r in rsp[n:]]))
        t.log("8 READs against 4 resources: %d answered%s" %
              (n, "" if n == 8 else ", then NAK Invalid Request"))
        unchanged("READ bursts")

        keys = info["keys"]
        steps = {(b - a) & 0xffffffff for a, b in zip(keys, keys[1:])}
        t.check(len(set(keys)) == len(keys) and len(steps) > 16,
                "32 rkeys in a row: distinct, %d different steps between "
                "neighbours (a counter would give 1)" % len(steps))
        tgt.stdin.write("quit\n")
        tgt.stdin.flush()
        t.check(tgt.wait(10) == 0, "the verbs client leaves cleanly")
    finally:
        if tgt.poll() is None:
            tgt.kill()
            tgt.wait()


def mad(attr, data=b"", base=1, cls=7, ver=2, method=3, tid=0x4242):
    """A CM MAD: its 24-byte header, then @data padded to 232 bytes."""
    hdr = struct.pack("!BBBBHHQHHI", base, cls, ver, method, 0, 0, tid,
                      attr, 0, 0)
    return hdr + data.ljust(232, b"\0")


def hostile_mads(peer):
    """MADs to QP1 that dprdmad's CM must drop and count (no answer, the
    drop counted by reason), and a REQ to a port nobody listens on, which
    it must reject on the wire (REJ, reason 8)."""
    def ud(payload, qkey=0x80010000):
        deth = struct.pack("!II", qkey, 1)
        return peer.frame(0, 0x64, 0, deth, payload, dqpn=1)

    def cm_stats():
        return t.telemetry(PREFIX, "/dprdma/cm/stats")

    def gid(ip):
        return b"\0" * 10 + b"\xff\xff" + bytes(int(x) for x in ip.split("."))

    cases = [
        ("a MAD cut to 100 bytes", ud(mad(0x10)[:100]), "mad_short"),
        ("base version 2", ud(mad(0x10, base=2)), "mad_base_version"),
        ("class 4 (performance), not CM", ud(mad(0x10, cls=4)), "mad_class"),
        ("CM class version 1", ud(mad(0x10, ver=1)), "mad_class_version"),
        ("method Get", ud(mad(0x10, method=1)), "mad_method"),
        ("an unknown attribute 0x99", ud(mad(0x99)), "mad_attr"),
        ("a REP for no REQ", ud(mad(0x13, struct.pack("!II", 0x1234, 0x9999))),
         "mad_unknown_id"),
        ("a DREQ for no connection", ud(mad(0x15, struct.pack("!II", 0x1234, 0x7777))),
         "mad_unknown_id"),
    ]
    for what, frame, counter in cases:
        before = cm_stats()
        got = [r for r in peer.send([frame]) if r[1] == 1]
        after = cm_stats()
        t.check(not got and after[counter] == before[counter] + 1 and
                after["mads_tx"] == before["mads_tx"],
                "hostile MAD, %s: dropped silently, counted in %s" % (what, counter))
    tr0 = t.telemetry(PREFIX, "/dprdma/transport/stats,0")
    before = cm_stats()
    got = [r for r in peer.send([ud(mad(0x10), qkey=0x1234)]) if r[1] == 1]
    tr1 = t.telemetry(PREFIX, "/dprdma/transport/stats,0")
    t.check(not got and tr1["bad_qkey"] == tr0["bad_qkey"] + 1 and
            cm_stats()["mads_rx"] == before["mads_rx"],
            "a MAD with a Q_Key not the GSI's: dropped by QP1 (bad_qkey)")
    # a REQ to port 7999, where nobody listens
    before = cm_stats()
    mark = len(peer.got)
    peer.send([ud(mad(0x10, cm_req(0xabcd0001, 7999, IP_B), tid=0x77))], wait=1.0)
    rej = [r for r in peer.got[mark:] if r[1] == 1]
    after = cm_stats()
    # payload of a UD frame from the peer's view: after BTH(12) the DETH
    # (8) sits where _rx takes the AETH, so the MAD starts 4 bytes in
    ok = False
    for r in rej:
        m = r[5][4:]
        if len(m) >= 36 and m[16:18] == b"\x00\x12":
            d = m[24:]
            ok = (d[4:8] == b"\xab\xcd\x00\x01" and d[10:12] == b"\x00\x08" and
                  int.from_bytes(m[8:16], "big") == 0x77)
    t.check(ok and after["req_no_listener"] == before["req_no_listener"] + 1,
            "a REQ to a port nobody listens on: REJ on the wire, reason 8, "
            "our comm ID and transaction ID echoed (%d frames)" % len(rej))


def cm_req(local_id, port, src):
    """A REQ (its MAD's data) from @src for RDMA_PS_TCP:@port on IP_A."""
    def gid(ip):
        return b"\0" * 10 + b"\xff\xff" + bytes(int(x) for x in ip.split("."))
    req = bytearray(140)
    struct.pack_into("!I", req, 0, local_id)            # local comm ID
    struct.pack_into("!Q", req, 8, 0x01060000 | port)   # RDMA_PS_TCP:port
    struct.pack_into("!I", req, 32, 0x000100 << 8 | 1)  # QPN 0x100, resp res 1
    struct.pack_into("!I", req, 44, 0x123456 << 8 | 0xa7)
    req[50] = 0x37
    req[56:72], req[72:88] = gid(src), gid(IP_A)
    cma = bytearray(36)
    cma[1] = 0x40
    struct.pack_into("!H", cma, 2, 40000)
    cma[16:20] = bytes(int(x) for x in src.split("."))
    cma[32:36] = bytes(int(x) for x in IP_A.split("."))
    return bytes(req) + bytes(cma)


def req_flood(peer, sock):
    """Connection requests to a listener that answers none (its program
    counts them): 40 from the peer's address, of which the box holds
    [cm] half_open_per_source (16 here) and drops the rest; then 40 from a
    forged one, of which it holds what is left of the listener's [cm]
    max_backlog (24 here). Dropped, not answered; counted by reason; the
    program handed exactly those held; all gone once it exits."""
    cm_test = os.environ.get("DPR_CM_TEST")
    if not cm_test or not os.path.exists(cm_test):
        t.log("REQ flood: dprdma-cm-test not built (librdmacm-dev): not run")
        return
    port = 7470

    def ud(payload):
        deth = struct.pack("!II", 0x80010000, 1)
        return peer.frame(0, 0x64, 0, deth, payload, dqpn=1, src=src)

    def stats():
        return t.telemetry(PREFIX, "/dprdma/cm/stats")

    env = dict(os.environ, LD_LIBRARY_PATH=os.environ.get("DPR_DROPIN", "build/drop-in"),
               DPRDMA_SOCKET=sock)
    prog = subprocess.Popen([cm_test, "count", str(port), "6"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        t.wait_for(lambda: t.cm_listening(PREFIX, port), 20,
                   "dprdma-cm-test listening")
        got = {}
        for src, first in ((IP_B, 0x5e000000), ("10.83.0.9", 0x5f000000)):
            before = stats()
            for b in range(0, 40, 8):
                peer.send([ud(mad(0x10, cm_req(first + i, port, src), tid=first + i))
                           for i in range(b, b + 8)], wait=0.2)
            after = stats()
            got[src] = {k: after[k] - before[k] for k in
                        ("req_rx", "req_dropped_source", "req_dropped_backlog",
                         "rej_tx", "mads_tx")}
            got[src]["half_open"] = after["half_open"]
            got[src]["half_open_sources"] = after["half_open_sources"]
        b, f = got[IP_B], got["10.83.0.9"]
        t.check(b["req_rx"] > 16 and b["req_dropped_source"] == b["req_rx"] - 16 and
                b["req_dropped_backlog"] == 0 and b["half_open"] == 16 and
                b["half_open_sources"] == 1,
                "REQs from %s: %d arrived, 16 held (half_open_per_source), the "
                "other %d dropped and counted (%r)"
                % (IP_B, b["req_rx"], b["req_rx"] - 16, b))
        t.check(f["req_rx"] > 8 and f["req_dropped_backlog"] == f["req_rx"] - 8 and
                f["req_dropped_source"] == 0 and f["half_open"] == 24 and
                f["half_open_sources"] == 2,
                "REQs from a forged source: %d arrived, 8 held (the listener's "
                "max_backlog of 24 full), the other %d dropped and counted (%r)"
                % (f["req_rx"], f["req_rx"] - 8, f))
        t.check(b["rej_tx"] == 0 and f["rej_tx"] == 0 and b["mads_tx"] == 0 and
                f["mads_tx"] == 0, "no REQ answered while the program holds them")
        out, _ = prog.communicate(timeout=30)
        t.check(prog.returncode == 0 and "requests 24" in out,
                "the program was handed the 24 held, no more: %r" % out.strip())
        t.wait_for(lambda: stats()["half_open"] == 0, 10,
                   "half-open requests gone with their program")
        t.check(stats()["half_open_sources"] == 0, "and their sources forgotten")
    finally:
        if prog.poll() is None:
            prog.kill()
            prog.wait()


def quarantine(peer):
    """[security] quarantine_drops 200, quarantine_s 2: 400 frames with a bad
    ICRC from one source within a second -- the first 200 refused as
    invalid, the rest unlooked-at as quarantined; one more after the
    quarantine ends is looked at again."""
    src = "10.83.0.77"
    good = peer.frame(0, OP_WRITE_ONLY, RPSN, peer.reth(peer.va, peer.rkey, 8),
                      bytes(8), src=src)
    bad = bytes(good[:-1]) + bytes([good[-1] ^ 0xff])

    def row():
        cols = cmd("/dprdma/transport/sources,0")
        for i, ip in enumerate(cols["ip"]):
            if ip == src:
                return {k: v[i] for k, v in cols.items() if isinstance(v, list)}
        return {}

    s0 = cmd("/dprdma/transport/stats,0")
    # (in batches: af_packet's ring drops what a yielding worker has not
    # taken yet; the whole within the quarantine's second)
    for _ in range(8):
        peer.send([bad] * 50, wait=0.02)
    time.sleep(0.3)
    r, s1 = row(), cmd("/dprdma/transport/stats,0")
    got = r.get("invalid", 0) + r.get("quarantined", 0)
    t.check(r.get("invalid") == 200 and r.get("quarantined") == got - 200 > 0 and
            s1["quarantines"] - s0["quarantines"] == 1 and
            s1["rx_quarantined"] - s0["rx_quarantined"] == got - 200,
            "%d bad frames from %s (of 400): 200 refused as invalid, then "
            "quarantined: %d dropped unlooked-at (%r)" % (got, src, got - 200, r))
    time.sleep(2.2)
    peer.send([bad], wait=0.3)
    r2 = row()
    t.check(r2.get("invalid") == 201 and r2.get("quarantined") == r.get("quarantined"),
            "after quarantine_s, its next frame is looked at again (%r)" % r2)


def caps_flood(peer):
    """DprdmaCaps Gets (dprdma's vendor MAD, doc/architecture.rst) from
    up to 4,000 made-up addresses, as anyone on the segment can send
    them: each is taken in, but at most half the table of peers remembers
    such peers (the rest is for the peers this box's QPs ask about), and
    none of them is asked anything."""
    def get(i):
        m = struct.pack("!BBBBHHQHHI", 1, 0x30, 1, 1, 0, 0, 0x5000 + i,
                        0xFF01, 0, 0)
        m += b"\0" * 13 + b"\x06\xd9\xd4" + b"\x01\0\0\0" + \
            struct.pack("!IQ", 1, 0x0200000000000000 + i)
        deth = struct.pack("!II", 0x80010000, 1)
        return peer.frame(0, 0x64, 0, deth, m.ljust(256, b"\0"), dqpn=1,
                          src="10.200.%d.%d" % (i >> 8, i & 255))

    # (in batches, until more than the table's half has arrived:
    # af_packet's kernel ring drops what a yielding worker has not taken
    # yet, the more the busier the machine -- runs of the suite lost 18 of
    # 2,100 sent at once, and 270 beside other tests)
    before = t.telemetry(PREFIX, "/dprdma/cm/stats")
    sent = got = 0
    while got < 2100 and sent < 4000:
        peer.send([get(i) for i in range(sent, sent + 100)], wait=0.05)
        sent += 100
        got = (t.telemetry(PREFIX, "/dprdma/cm/stats")["caps_get_rx"] -
               before["caps_get_rx"])
    time.sleep(0.5)
    after = t.telemetry(PREFIX, "/dprdma/cm/stats")
    got = after["caps_get_rx"] - before["caps_get_rx"]
    told = after["caps_peers_told"] - before["caps_peers_told"]
    full = after["caps_table_full"] - before["caps_table_full"]
    t.check(2048 < got <= sent and after["caps_peers_told"] == 2048 and
            full == got - told,
            "%d Gets from made-up addresses (%d arrived): %d remembered, "
            "half the table at most (%d), the other %d not"
            % (sent, got, told, after["caps_peers_told"], full))
    t.check(after["caps_get_tx"] == before["caps_get_tx"],
            "none of them asked anything back (%d Gets sent)"
            % (after["caps_get_tx"] - before["caps_get_tx"]))


def main():
    t.require_root_and_netns()
    try:
        import scapy.contrib.roce  # noqa: F401
    except ImportError:
        t.skip("python3-scapy not installed (tools/setup.sh installs it)")
    na, nb = t.Netns("dprt%d-ha" % PID), t.Netns("dprt%d-hb" % PID)
    d = None
    try:
        t.veth_pair(na, IFA, nb, IFB)
        nb.sh("ip addr add %s/24 dev %s" % (IP_B, IFB))
        # the kernel in B would answer our ACKs with port unreachable
        nb.sh("sysctl -qw net.ipv4.icmp_ratelimit=0 || true")
        mac_a = na.sh("cat /sys/class/net/%s/address" % IFA).stdout.strip()
        mac_b = nb.sh("cat /sys/class/net/%s/address" % IFB).stdout.strip()
        conf = "/tmp/%s.conf" % PREFIX
        with open(conf, "w") as f:
            # small bounds for req_flood(): a source, a listener; a
            # quarantine well above what the peer's own tests drop in a
            # second (about 50), for quarantine()
            f.write("[cm]\nhalf_open_per_source = 16\nmax_backlog = 24\n"
                    "[security]\nquarantine_drops = 200\nquarantine_s = 2\n")
        d = t.Daemon(["-l", "0-1", "--no-pci", "--no-huge", "-m", "256",
                      "--file-prefix", PREFIX, "--vdev",
                      "net_af_packet0,iface=" + IFA, "--", "--ip",
                      IP_A + "/24", "--idle", "yield", "-f", conf],
                     prefix=PREFIX, ns=na)
        setup = cmd("/dprdma/client/setup,%d,%d" % (NQP, MR))
        setup["qpn_list"], setup["psn_list"] = t.client_qpns(PREFIX, NQP)
        mtu = None
        for i in range(NQP - 1):    # the last QP stays unconnected
            r = cmd("/dprdma/client/connect,%d,%d,%d,%s" %
                    (i, RQPN0 + i, RPSN, IP_B))
            mtu = r["path_mtu"]
        crc = cmd("/dprdma/client/fill,0,%d,7" % MR)["crc32"]
        enter_netns(nb.name)
        peer = Peer(mac_a, mac_b, setup)
        va, rkey = peer.va, peer.rkey
        data = bytes(range(8))
        F = peer.frame

        # --- silent drops on QP 0, which must keep working afterwards
        good = F(0, OP_WRITE_ONLY, RPSN, peer.reth(va + 64, rkey, 8), data)
        bad = bytearray(good)
        bad[-1] ^= 0xff
        dl = expect(peer, "bad ICRC", [bytes(bad)], 0)
        t.check(dl["rx_invalid"] == 1, "bad ICRC counted in rx_invalid")
        cut = []
        udp_payload = good[42:]
        for k in range(len(udp_payload)):
            cut.append(bytes(peer.udp(49152, peer.Raw(udp_payload[:k]))))
        dl = expect(peer, "headers truncated at each of %d offsets" % len(cut),
                    cut, 0)
        t.check(dl["rx_invalid"] == len(cut), "%d truncated frames counted "
                "in rx_invalid (%d)" % (len(cut), dl["rx_invalid"]))
        dl = expect(peer, "unknown destination QP",
                    [F(0, OP_WRITE_ONLY, RPSN, peer.reth(va, rkey, 8), data,
                       dqpn=0xabcdef)], 0)
        t.check(dl["rx_no_qp"] == 1, "unknown QP counted in rx_no_qp")
        dl = expect(peer, "QP never connected (INIT)",
                    [F(NQP - 1, OP_WRITE_ONLY, RPSN, peer.reth(va, rkey, 8),
                       data)], NQP - 1)
        t.check(dl["rx_qp_state"] == 1, "frame to an unconnected QP counted "
                "in rx_qp_state")
        spoof = F(0, OP_WRITE_ONLY, RPSN, peer.reth(va, rkey, 8), data,
                  src="10.83.0.9")
        wrong_pkey = peer.frame(0, OP_WRITE_ONLY, RPSN,
                                peer.reth(va, rkey, 8), data, pkey=0x7fff)
        dl = expect(peer, "from an address not the QP's peer, and with a "
                    "P_Key not the default", [spoof, wrong_pkey], 0)
        t.check(dl["rx_wrong_peer"] == 2, "both counted in rx_wrong_peer")
        # per source: the spoofed address and the peer, each with what it
        # sent that was dropped (the peer: a bad ICRC, the truncated
        # frames, an unknown QP, an unconnected QP, the wrong P_Key)
        cols = cmd("/dprdma/transport/sources,0")
        src = {ip: {k: v[i] for k, v in cols.items() if isinstance(v, list)}
               for i, ip in enumerate(cols["ip"])}
        sp, pb = src.get("10.83.0.9", {}), src.get(IP_B, {})
        t.check(sp.get("wrong_peer") == 1 and sp.get("total") == 1 and
                cols["evicted"] == 0,
                "sources: 10.83.0.9 with its one spoofed frame (%r of %r)" % (sp, src))
        t.check(pb.get("invalid", 0) >= 1 + len(cut) and pb.get("no_qp", 0) >= 1 and
                pb.get("qp_state", 0) >= 1 and pb.get("wrong_peer", 0) >= 1,
                "sources: the peer %s with its dropped frames by reason (%r)"
                % (IP_B, pb))
        out = t.run([os.path.join(os.path.dirname(t.DPRDMAD), "dprdmactl"), "-p",
                     PREFIX, "sources"]).stdout
        t.check("10.83.0.9" in out and "wrong_peer 1" in out,
                "dprdmactl sources shows the spoofed source: %s" %
                [x for x in out.splitlines() if "10.83.0.9" in x])
        # CNPs (RoCEv2's congestion notification: 16 zero bytes): from the
        # QP's peer taken and counted, never answered; spoofed, or to a QP
        # that is not sending, refused under their reasons
        dl = expect(peer, "a CNP from the QP's peer",
                    [F(0, OP_CNP, 0, b"\0" * 16)], 0)
        t.check(dl["cnp_rx"] == 1 and dl["rx_invalid"] == 0,
                "the CNP counted in cnp_rx, not rx_invalid (%r)"
                % {k: dl[k] for k in ("cnp_rx", "rx_invalid")})
        dl = expect(peer, "a CNP from an address not the QP's peer, and one "
                    "to a QP never connected",
                    [F(0, OP_CNP, 0, b"\0" * 16, src="10.83.0.9"),
                     F(NQP - 1, OP_CNP, 0, b"\0" * 16)], 0)
        t.check(dl["rx_wrong_peer"] == 1 and dl["rx_qp_state"] == 1 and
                dl["cnp_rx"] == 0,
                "counted in rx_wrong_peer and rx_qp_state, neither taken "
                "(%r)" % {k: dl[k] for k in ("rx_wrong_peer", "rx_qp_state",
                                             "cnp_rx")})
        dl = expect(peer, "PSN 5000 ahead", [F(0, OP_WRITE_ONLY, RPSN + 5000,
                    peer.reth(va, rkey, 8), data)], 0, SYN_SEQ, RPSN)
        t.check(dl["nak_seq_tx"] == 1, "sequence NAK counted")
        dl = expect(peer, "PSN 2^23 - 1 ahead (the far edge of the window)",
                    [F(0, OP_WRITE_ONLY, RPSN + (1 << 23) - 1,
                       peer.reth(va, rkey, 8), data)], 0)
        t.check(dl["nak_seq_tx"] == 0, "only one sequence NAK per gap")
        t.check(cmd("/dprdma/client/checksum,0,%d" % MR)["crc32"] == crc,
                "MR untouched by every frame so far")

        # --- class C errors, each on a fresh QP
        cases = [
            ("WRITE with an rkey not the MR's", SYN_ACC,
             F(1, OP_WRITE_ONLY, RPSN, peer.reth(va, rkey ^ 0x100, 8), data)),
            ("WRITE va+len past the MR's end", SYN_ACC,
             F(2, OP_WRITE_ONLY, RPSN, peer.reth(va + MR - 4, rkey, 8), data)),
            ("WRITE va+len wrapping 2^64", SYN_ACC,
             F(3, OP_WRITE_ONLY, RPSN, peer.reth(2 ** 64 - 4, rkey, 8), data)),
            ("READ of 2^31 bytes", SYN_ACC,
             F(4, OP_READ_REQ, RPSN, peer.reth(va, rkey, 1 << 31))),
            ("WRITE payload longer than its DMA length", SYN_INV,
             F(5, OP_WRITE_ONLY, RPSN, peer.reth(va, rkey, 4), data)),
            ("WRITE payload shorter than its DMA length", SYN_INV,
             F(6, OP_WRITE_ONLY, RPSN, peer.reth(va, rkey, 16), data)),
            ("WRITE MIDDLE without FIRST", SYN_INV,
             F(7, OP_WRITE_MIDDLE, RPSN, b"", b"x" * mtu)),
            ("WRITE payload longer than the path MTU", SYN_INV,
             F(8, OP_WRITE_ONLY, RPSN, peer.reth(va, rkey, mtu + 64),
               b"y" * (mtu + 64))),
            ("FETCH_ADD at a misaligned address", SYN_INV,
             F(9, OP_FADD, RPSN, peer.reth(va + 4, rkey, 0)[:12] +
               struct.pack("!QQ", 1, 0))),
        ]
        for i, (what, syn, f) in enumerate(cases):
            qp = i + 1
            dl = expect(peer, what, [f], qp, syn, RPSN)
            t.check(dl["nak_err_tx"] == 1, "%s: counted in nak_err_tx" % what)
            dl = expect(peer, what + ", then a good WRITE to the QP in ERR",
                        [F(qp, OP_WRITE_ONLY, RPSN + 1,
                           peer.reth(va, rkey, 8), data)], qp)
            t.check(dl["rx_qp_state"] == 1, "%s: the QP is in ERR, its "
                    "frames dropped and counted" % what)
        t.check(cmd("/dprdma/client/checksum,0,%d" % MR)["crc32"] == crc,
                "MR untouched by every hostile request")

        # --- the QP that saw the silent drops and the sequence NAK still
        # serves: a good WRITE at the expected PSN lands where asked, and
        # nowhere else
        head = cmd("/dprdma/client/checksum,0,64")["crc32"]
        tail = cmd("/dprdma/client/checksum,72,%d" % (MR - 72))["crc32"]
        dl = expect(peer, "good WRITE on QP 0", [good], 0, SYN_ACK, RPSN)
        t.check(dl["nak_err_tx"] == 0 and dl["ack_tx"] == 1, "ACKed")
        t.check(cmd("/dprdma/client/checksum,64,8")["crc32"] ==
                zlib.crc32(data), "the 8 bytes landed at MR+64")
        t.check(cmd("/dprdma/client/checksum,0,64")["crc32"] == head and
                cmd("/dprdma/client/checksum,72,%d" % (MR - 72))["crc32"] ==
                tail, "and nowhere else")
        keys_from_the_wire(peer, d.socket)
        hostile_mads(peer)
        req_flood(peer, d.socket)
        quarantine(peer)
        caps_flood(peer)
        peer.close()
        p = nb.sh("ping -c 2 -i 0.2 -W 2 %s" % IP_A, check_rc=False)
        t.check(p.returncode == 0, "the daemon still answers ping")
    finally:
        if d is not None:
            d.stop()
        na.close()
        nb.close()
    t.log("PASS")


if __name__ == "__main__":
    main()
