#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""The attack suite (issue 46, doc/security.rst "The attack suite"): two
dprdmad, A and B, on af_packet ports in namespaces joined by a Linux
bridge in a third, R, where the attacker sits: raw packet sockets on the
bridge's two ports show it every frame either box sends (a mirror port),
let it send to either box as the other (any source address, the ICRC
computed by RoCEv2's public rules), and nftables in R lets it hold back
chosen frames (on the path). The built-in clients connect four RC QPs,
A's QP i to B's QP i, from cold; A is the requester, B the responder.

Each attack runs twice, on fresh daemons: plain (no [security]; between
two dprdma boxes, selective repeat on) and secure ([security] mode =
encrypt, policy = required: every QP sealed with AES-GCM). What each must
show:

==================================  ==========================  ===========
attack                              plain                       secure
==================================  ==========================  ===========
blind QPN scan (4,096 QPNs)         rx_no_qp, nothing else      the same
PSN sweep at a known QPN, right     out of the window: one NAK  dropped, no
rkey, spoofed source                per gap, duplicates ACKed   answer
                                    again, nothing written
replays: WRITE, SEND, READ, FADD    duplicates: not executed    dropped
                                    (atomic answered from its   (replay)
                                    saved result)
ACK, NAK, READ response for PSNs    dropped (dup_response_rx)   dropped
never sent
bad-rkey WRITE at the sniffed PSN   QP to ERR (limit: IBA       dropped, QP
                                    9.7.5.2.3 asks it)          in RTS
WRITE rewritten on the path         taken (limit)               refused;
                                                                the real one
                                                                lands
READ response rewritten on the      taken (limit)               refused;
path                                                            real data
WRITE held back, ACK forged         false completion (limit)    refused;
                                                                completes
                                                                once landed
CNP forged as the peer              taken, rate cut (limit)     dropped
DREQ forged on the path for a live  A's side ends (limit)       dropped (no
RDMA CM connection (rping); with                                MAC, bad
the RTU's trailer; the RTU again                                MAC, replay)
==================================  ==========================  ===========

"Limit": what doc/security.rst lists as impossible without
authentication. The victim's data is checked after every attack with the
CRC of what was written, and its QPs' states. The CM's REQ flood, half-open
bounds, hostile MADs and the quarantine are test_hostile_peer.py's."""

import os
import random
import select
import socket
import struct
import subprocess
import time
import zlib

import dprtest as t

PID = os.getpid()
PA, PB = "dprt-ata-%d" % PID, "dprt-atb-%d" % PID
IP_A, IP_B = "10.86.0.1", "10.86.0.2"
MR = 4 << 20
NQP = 4
PSK = os.urandom(32).hex()
CLONE_NEWNET = 0x40000000
ETH_P_ALL = 3
PACKET_OUTGOING = 4

OP_SEND_ONLY, OP_WRITE_ONLY, OP_READ_REQ = 0x04, 0x0a, 0x0c
OP_READ_RESP_ONLY, OP_ACK, OP_FADD = 0x10, 0x11, 0x14
OP_CNP = 0x81

OP_UD_SEND_ONLY = 0x64
CM_RTU, CM_DREQ = 0x14, 0x15
MAD_AT, MAD_LEN, TRAILER = 62, 256, 32      # Eth, IP, UDP, BTH, DETH
DROPIN = os.environ.get("DPR_DROPIN", "build/drop-in")

cmd = t.telemetry_ok


def enter_netns(path):
    import ctypes
    fd = os.open(path, os.O_RDONLY)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        t.fail("setns %s: %s" % (path, os.strerror(ctypes.get_errno())))
    os.close(fd)


# --- frames: Ethernet, IPv4 (no options), UDP 4791, BTH ...

def ip_csum(h):
    s = sum(struct.unpack("!10H", h))
    s = (s & 0xffff) + (s >> 16)
    s = (s & 0xffff) + (s >> 16)
    return struct.pack("!H", ~s & 0xffff)


def icrc(f):
    """RoCEv2's ICRC of frame @f (without its ICRC): a CRC-32 over the
    frame with the fields a router may change masked, as anyone can."""
    ip = bytearray(f[14:34])
    ip[1], ip[8], ip[10:12] = 0xff, 0xff, b"\xff\xff"
    udp = bytearray(f[34:42])
    udp[6:8] = b"\xff\xff"
    rest = bytearray(f[42:])
    rest[4] = 0xff
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(udp) +
                                        bytes(rest)))


def parse(f):
    """(source IP, opcode, destination QPN, PSN) of a RoCEv2 frame, or
    None."""
    if (len(f) < 58 or f[12:14] != b"\x08\x00" or f[14] != 0x45 or
            f[23] != 17 or f[36:38] != b"\x12\xb7"):
        return None
    return (socket.inet_ntoa(f[26:30]), f[42],
            int.from_bytes(f[47:50], "big"), int.from_bytes(f[51:54], "big"))


def bth(op, dqpn, psn, ackreq=True):
    return struct.pack("!BBHBBHBBH", op, 0, 0xffff, 0, dqpn >> 16, dqpn & 0xffff,
                       0x80 if ackreq else 0, (psn >> 16) & 0xff, psn & 0xffff)


def craft(template, body):
    """A frame with @template's Ethernet, IP and UDP headers (addresses,
    ports) around @body (BTH onwards), its lengths, IPv4 checksum and ICRC
    made anew."""
    ip = bytearray(template[14:34])
    ip[2:4] = struct.pack("!H", 20 + 8 + len(body) + 4)
    ip[10:12] = b"\0\0"
    ip[10:12] = ip_csum(bytes(ip))
    udp = template[34:36] + struct.pack("!HHH", 4791, 8 + len(body) + 4, 0)
    f = template[:14] + bytes(ip) + udp + body
    return f + icrc(f)


def recrc(f):
    """@f with its ICRC made again (after a rewrite on the path)."""
    return f[:-4] + icrc(f[:-4])


def reth(va, rkey, length):
    return struct.pack("!QII", va, rkey, length)


class Wire:
    """The attacker in R: a packet socket on each of the bridge's ports."""

    def __init__(self, port_a, port_b):
        self.s = {}
        for side, port in (("A", port_a), ("B", port_b)):
            s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                              socket.htons(ETH_P_ALL))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
            s.bind((port, 0))
            s.setblocking(False)
            self.s[side] = s
        self.sent = 0

    def drain(self):
        for s in self.s.values():
            try:
                while True:
                    s.recv(65536)
            except BlockingIOError:
                pass

    def sniff(self, side, pred, timeout=5.0, what="a frame"):
        """The first frame from box @side (not one the bridge sends it)
        that @pred takes; fails after @timeout."""
        s = self.s[side]
        end = time.time() + timeout
        while time.time() < end:
            if not select.select([s], [], [], 0.05)[0]:
                continue
            try:
                while True:
                    f, addr = s.recvfrom(65536)
                    if addr[2] == PACKET_OUTGOING:
                        continue
                    p = parse(f)
                    if p is not None and pred(p, f):
                        return f
            except BlockingIOError:
                pass
        t.fail("the attacker saw no %s from %s in %.1f s" % (what, side, timeout))

    def collect(self, side, pred, seconds):
        """Every frame from @side that @pred takes within @seconds."""
        got, end, s = [], time.time() + seconds, self.s[side]
        while time.time() < end:
            if not select.select([s], [], [], 0.02)[0]:
                continue
            try:
                while True:
                    f, addr = s.recvfrom(65536)
                    p = parse(f)
                    if addr[2] != PACKET_OUTGOING and p and pred(p, f):
                        got.append(f)
            except BlockingIOError:
                pass
        return got

    def inject(self, to, frames, pace=256):
        """Send @frames to box @to, @pace at a time (the boxes' af_packet
        rings hold 512)."""
        s = self.s[to]
        for i, f in enumerate(frames):
            while True:
                try:
                    s.send(f)
                    break
                except BlockingIOError:
                    time.sleep(0.001)
            if pace and (i + 1) % pace == 0:
                time.sleep(0.01)
        self.sent += len(frames)

    def close(self):
        for s in self.s.values():
            s.close()


# --- the boxes

def tel(p, c):
    r = t.telemetry(p, c)
    if not r:
        t.fail("%s: %s -> %r" % (p, c, r))
    return r


def stats(p):
    return tel(p, "/dprdma/transport/stats,0")


def delta(p, before, keys):
    now = stats(p)
    return {k: now[k] - before[k] for k in keys}


def settle(p, before, keys, cond, timeout=10):
    """The changes of @p's counters @keys since @before once @cond takes
    them (what the attack should have caused has been counted; then a
    moment more for anything it should not have), or as they are after
    @timeout for the check to show."""
    end = time.time() + timeout
    while True:
        d = delta(p, before, keys)
        if cond(d):
            time.sleep(0.1)
            return delta(p, before, keys)
        if time.time() > end:
            return d
        time.sleep(0.02)


def qp(p, qpn):
    return tel(p, "/dprdma/qp,0,%d" % qpn)


def done(p, what, timeout=20):
    end = time.time() + timeout
    while time.time() < end:
        s = cmd(p, "/dprdma/client/status")
        if not s["active"]:
            return s
        time.sleep(0.01)
    t.fail("%s: not done in %d s: %r" % (what, timeout, s))


class Round:
    def __init__(self, secure):
        self.secure = secure
        self.mode = "secure" if secure else "plain"
        pid = PID % 100000
        self.ns = t.bridged_namespaces("at")
        na, nb, self.br, ia, ib = self.ns
        self.port_a, self.port_b = "rata%d" % pid, "ratb%d" % pid
        conf = "/tmp/dprt-attack-%d.conf" % PID
        with open(conf, "w") as f:
            if secure:
                f.write("[security]\nmode = encrypt\npolicy = required\n"
                        "psk = %s\n" % PSK)
        self.a = self.b = None
        self.a = t.Daemon(["-l", "0-1", "--no-pci", "--no-huge", "-m", "512",
                           "--file-prefix", PA, "--vdev", "net_af_packet0,iface=" + ia,
                           "--", "--ip", IP_A + "/24", "--idle", "yield", "-f", conf],
                          prefix=PA, ns=na)
        self.b = t.Daemon(["-l", "0-1", "--no-pci", "--no-huge", "-m", "512",
                           "--file-prefix", PB, "--vdev", "net_af_packet0,iface=" + ib,
                           "--", "--ip", IP_B + "/24", "--idle", "yield", "-f", conf],
                          prefix=PB, ns=nb)
        self.ca = cmd(PA, "/dprdma/client/setup,%d,%d" % (NQP, MR))
        self.cb = cmd(PB, "/dprdma/client/setup,%d,%d" % (NQP, MR))
        self.aq, ap = t.client_qpns(PA, NQP)
        self.bq, bp = t.client_qpns(PB, NQP)
        for i in range(NQP):
            cmd(PA, "/dprdma/client/connect,%d,%d,%d,%s" % (i, self.bq[i], bp[i], IP_B))
            cmd(PB, "/dprdma/client/connect,%d,%d,%d,%s" % (i, self.aq[i], ap[i], IP_A))
        self.va, self.rkey = self.cb["mr_va"], self.cb["rkey"]
        self.home = os.open("/proc/self/ns/net", os.O_RDONLY)
        enter_netns("/var/run/netns/" + self.br.name)
        self.w = Wire(self.port_a, self.port_b)
        self.nft = False

    def log(self, msg):
        t.log("[%s] %s" % (self.mode, msg))

    def check(self, cond, msg):
        t.check(cond, "[%s] %s" % (self.mode, msg))

    def close(self):
        if hasattr(self, "w"):
            self.w.close()
            enter_netns("/proc/self/fd/%d" % self.home)
            os.close(self.home)
        t.stop_and_close([self.b, self.a], self.ns[:3])

    # -- the victim's own traffic, checked

    def write(self, q, off, size, seed, wait=True):
        """A WRITEs @size bytes of pattern @seed to B's MR + @off on QP
        @q: the CRC of what was sent."""
        crc = cmd(PA, "/dprdma/client/fill,%d,%d,%d" % (off, size, seed))["crc32"]
        cmd(PA, "/dprdma/client/run,%d,write,%d,1,%d,%d,%d" %
            (q, size, off, self.va + off, self.rkey))
        if wait:
            s = done(PA, "WRITE on QP %d" % q)
            self.check(s["errors"] == 0, "WRITE %d B on QP %d completed" % (size, q))
        return crc

    def at_b(self, off, size):
        return cmd(PB, "/dprdma/client/checksum,%d,%d" % (off, size))["crc32"]

    def states(self):
        return ([qp(PA, x)["state"] for x in self.aq],
                [qp(PB, x)["state"] for x in self.bq])

    def from_a(self, q, ops):
        return lambda p, f: p[0] == IP_A and p[2] == self.bq[q] and p[1] in ops

    def from_b(self, q, ops):
        return lambda p, f: p[0] == IP_B and p[2] == self.aq[q] and p[1] in ops

    def hold(self, src, dst, dqpn):
        """nftables in R drops what @src sends @dst's QP @dqpn."""
        self.br.sh("nft add table bridge attack && nft add chain bridge attack "
                   "hold '{ type filter hook forward priority 0; }' && "
                   "nft add rule bridge attack hold ip saddr %s ip daddr %s "
                   "udp dport 4791 @th,104,24 %d counter drop" % (src, dst, dqpn))
        self.nft = True

    def release(self):
        out = self.br.sh("nft list table bridge attack").stdout
        self.br.sh("nft delete table bridge attack")
        self.nft = False
        return int(out.split("packets")[1].split()[0])


def rewrite_on_path(r, sender, dqpn, pred, start):
    """R holds back what box @sender sends QP @dqpn of the other; A's
    client runs @start; the attacker sends the first frame @pred takes on
    to the other box with its last 512 bytes of payload rewritten, the
    ICRC made again. @return (frames R held, the receiver's counters'
    changes, A's stream once done)."""
    src, dst, to = (IP_A, IP_B, "B") if sender == "A" else (IP_B, IP_A, "A")
    keys = ("sec_drop_auth", "sec_drop_plain")
    r.w.drain()
    r.hold(src, dst, dqpn)
    cmd(PA, start)
    evil = bytearray(r.w.sniff(sender, pred, what="the frame to rewrite"))
    evil[-4 - 512:-4] = b"EVIL" * 128
    before = stats(PA if to == "A" else PB)
    r.w.inject(to, [recrc(bytes(evil))])
    time.sleep(0.05)
    held = r.release()
    s = done(PA, "the operation rewritten on the path")
    return held, delta(PA if to == "A" else PB, before, keys), s


def rewritten(r, what, held, d, s, got, crc):
    """What a frame of @what rewritten on the path did: the receiver's
    counters' changes @d, A's stream @s, the CRC of the bytes that
    landed @got, of those sent @crc."""
    r.log("rewritten %s: R held %d frames; at its receiver %r" % (what, held, d))
    if r.secure:
        r.check(d["sec_drop_auth"] == 1 and got == crc and s["errors"] == 0,
                "rewritten %s refused as forged; the operation, done again, "
                "carried the real bytes" % what)
    else:
        r.check(got == zlib.crc32(b"EVIL" * 128) and s["errors"] == 0,
                "rewritten %s taken (a limit of plain RoCEv2)" % what)


def run(secure):
    r = Round(secure)
    try:
        attacks(r)
    finally:
        r.close()


def attacks(r):
    w, va, rkey = r.w, r.va, r.rkey
    # from cold: the first WRITE on each QP through the bridge, and what a
    # listener on the segment learns from them: each box's headers and the
    # QPs' PSNs
    w.drain()
    crc0 = r.write(0, 0, 65536, 1)
    r.check(r.at_b(0, 65536) == crc0, "first WRITE of 64 KiB landed, from cold")
    for q in range(1, NQP):
        r.write(q, q << 20, 4096, 10 + q)
    tmpl_a = w.sniff("A", r.from_a(0, range(256)), what="frame of QP 0")
    tmpl_b = w.sniff("B", r.from_b(0, (OP_ACK,)), what="ACK on QP 0")
    keys = ("rx_no_qp", "rx_invalid", "rx_wrong_peer", "nak_seq_tx", "nak_err_tx",
            "ack_tx", "dup_request_rx", "out_of_seq_rx", "sr_held",
            "sec_drop_plain", "sec_drop_auth", "sec_drop_replay",
            "dup_response_rx", "atomic_replays")

    # --- a blind QPN scan: WRITEs as A to random QPNs at B
    rnd = random.Random(PID)
    known = set(r.bq) | {1}
    guesses = []
    while len(guesses) < 4096:
        x = rnd.randrange(2, 1 << 24)
        if x not in known:
            guesses.append(x)
    sb = stats(PB)
    w.inject("B", [craft(tmpl_a, bth(OP_WRITE_ONLY, x, rnd.randrange(1 << 24)) +
                         reth(va, rkey, 8) + b"scanscan") for x in guesses])
    d = settle(PB, sb, keys, lambda d: d["rx_no_qp"] >= 4000)
    r.log("QPN scan, 4,096 guesses: %r" % d)
    r.check(d["rx_no_qp"] >= 4000 and d["ack_tx"] == 0 and d["nak_err_tx"] == 0 and
            d["nak_seq_tx"] == 0,
            "QPN scan: %d of 4,096 guesses counted in rx_no_qp, none answered"
            % d["rx_no_qp"])

    # --- a PSN sweep at B's QP 0 (its QPN known), as A, with B's real
    # rkey: 8,192 PSNs ahead of the window B keeps out of order, 8,192
    # behind it
    e = qp(PB, r.bq[0])["resp_psn"]
    ahead = [(e + (1 << 20) + k) & 0xffffff for k in range(8192)]
    behind = [(e - (1 << 20) - k) & 0xffffff for k in range(8192)]
    sb = stats(PB)
    t0 = time.time()
    w.inject("B", [craft(tmpl_a, bth(OP_WRITE_ONLY, r.bq[0], p) +
                         reth(va, rkey, 8) + b"SWEEPING") for p in ahead + behind])
    rate = 16384 / (time.time() - t0)
    d = settle(PB, sb, keys, lambda d: d["sec_drop_plain"] >= 16000 if r.secure else
               d["out_of_seq_rx"] + d["dup_request_rx"] >= 16000)
    r.log("PSN sweep, 16,384 PSNs at %.0f frames/s (2^24 would take %.0f s): %r"
          % (rate, (1 << 24) / rate, d))
    if r.secure:
        r.check(d["sec_drop_plain"] >= 16000 and d["ack_tx"] == 0 and
                d["nak_seq_tx"] == 0 and d["out_of_seq_rx"] == 0,
                "PSN sweep: every plain frame dropped (%d), none answered"
                % d["sec_drop_plain"])
    else:
        r.check(d["out_of_seq_rx"] + d["dup_request_rx"] >= 16000 and
                d["nak_seq_tx"] <= 1 and d["sr_held"] == 0 and d["nak_err_tx"] == 0,
                "PSN sweep: out of sequence %d, duplicates %d, at most one "
                "sequence NAK (%d), nothing held" %
                (d["out_of_seq_rx"], d["dup_request_rx"], d["nak_seq_tx"]))
    r.check(qp(PB, r.bq[0])["resp_psn"] == e and r.at_b(0, 65536) == crc0,
            "PSN sweep: B's QP 0 expects the same PSN, its memory unchanged")
    crc = r.write(0, 0, 65536, 2)
    r.check(r.at_b(0, 65536) == crc, "QP 0 carries the next WRITE")

    # --- the same inside the window: 64 WRITEs at the 64 PSNs past the
    # one B's idle QP 0 expects, to bytes nobody writes. Plain, B holds
    # them (selective repeat: a gap before them), its SACK names PSNs A
    # never sent, A's PURGE has B drop them before A's next WRITE fills
    # the gap; secure, they are plain frames, dropped
    e = qp(PB, r.bq[0])["resp_psn"]
    off = 6 << 16
    before = r.at_b(off, 8)
    sa, sb = stats(PA), stats(PB)
    w.inject("B", [craft(tmpl_a, bth(OP_WRITE_ONLY, r.bq[0], (e + k) & 0xffffff) +
                         reth(va + off, rkey, 8) + b"INJECTED") for k in range(1, 65)])
    d = settle(PB, sb, keys + ("sr_purged",), lambda d: d["sec_drop_plain"] >= 64
               if r.secure else d["sr_purged"] >= 64)
    da = delta(PA, sa, ("sack_unsent",))
    r.log("64 WRITEs inside the window: at B %r, at A %r" % (d, da))
    if r.secure:
        r.check(d["sec_drop_plain"] == 64 and d["sr_held"] == 0,
                "WRITEs inside the window: dropped as plain")
    else:
        r.check(d["sr_held"] == 64 and d["sr_purged"] == 64 and
                da["sack_unsent"] >= 1,
                "WRITEs inside the window: held, named in a SACK, dropped at "
                "A's purge (%d purges)" % da["sack_unsent"])
    crc = r.write(0, 0, 65536, 3)
    r.check(r.at_b(0, 65536) == crc and r.at_b(off, 8) == before and
            qp(PB, r.bq[0])["state"] == "RTS",
            "A's next WRITE lands whole, the injected bytes nowhere, B's QP 0 "
            "in RTS")

    # --- replays of what A sent on QP 0: a WRITE, then WRITEs over the
    # same bytes, a SEND, a READ, a fetch-and-add
    w.drain()
    crc_x = r.write(0, 1 << 16, 4096, 4)
    x_frames = w.collect("A", r.from_a(0, range(0x06, 0x0b)), 0.3)
    crc_y = r.write(0, 1 << 16, 4096, 5)
    cmd(PB, "/dprdma/client/recv,0,2,%d,4096" % (2 << 20))
    w.drain()
    cmd(PA, "/dprdma/client/fill,%d,64,5" % (3 << 20))
    cmd(PA, "/dprdma/client/run,0,send,64,1,%d,0,0" % (3 << 20))
    done(PA, "SEND")
    s_frames = w.collect("A", r.from_a(0, (OP_SEND_ONLY,)), 0.3)
    t.wait_for(lambda: cmd(PB, "/dprdma/client/status")["recv_done"] >= 1, 10,
               "B's receive of the SEND")
    w.drain()
    cmd(PA, "/dprdma/client/run,0,read,4096,1,%d,%d,%d" %
        (3 << 20, va + (1 << 16), rkey))
    done(PA, "READ")
    rd_frames = w.collect("A", r.from_a(0, (OP_READ_REQ,)), 0.3)
    w.drain()
    cmd(PA, "/dprdma/client/run,0,fadd,8,1,0,%d,%d" % (va + (5 << 16), rkey))
    done(PA, "FETCH_ADD")
    fa_frames = w.collect("A", r.from_a(0, (OP_FADD,)), 0.3)
    val = cmd(PB, "/dprdma/client/read64,%d" % (5 << 16))
    # (a frame sent twice -- a tail probe -- is recorded twice)
    r.check(len(x_frames) >= 4 and s_frames and rd_frames and fa_frames,
            "the attacker recorded the WRITE's frames (%d), the SEND's (%d), "
            "the READ's (%d) and the FETCH_ADD's (%d)" %
            (len(x_frames), len(s_frames), len(rd_frames), len(fa_frames)))
    sa, sb = stats(PA), stats(PB)
    ra = cmd(PB, "/dprdma/client/status")["recv_done"]
    w.inject("B", x_frames + s_frames + rd_frames + fa_frames)
    n = len(x_frames) + len(s_frames) + len(rd_frames) + len(fa_frames)
    d = settle(PB, sb, keys, lambda d: (d["sec_drop_replay"] if r.secure else
                                        d["dup_request_rx"]) >= n)
    da = delta(PA, sa, keys)
    r.log("replays at B: %r; at A: %r" % (d, da))
    r.check(r.at_b(1 << 16, 4096) == crc_y, "replayed WRITE: B keeps the later "
            "bytes (%08x, the replay's %08x)" % (crc_y, crc_x))
    r.check(cmd(PB, "/dprdma/client/status")["recv_done"] == ra,
            "replayed SEND: no receive consumed")
    r.check(cmd(PB, "/dprdma/client/read64,%d" % (5 << 16)) == val,
            "replayed FETCH_ADD: the value not added to again (%r)" % val)
    if r.secure:
        r.check(d["sec_drop_replay"] == n and d["dup_request_rx"] == 0 and
                d["ack_tx"] == 0, "replays: all %d dropped as replays, none "
                "answered" % n)
    else:
        r.check(d["dup_request_rx"] == n and d["atomic_replays"] == len(fa_frames),
                "replays: all %d taken as duplicates, the atomic answered "
                "from its saved result" % n)
    crc = r.write(0, 1 << 16, 4096, 6)
    r.check(r.at_b(1 << 16, 4096) == crc, "QP 0 carries the next WRITE")

    # --- responses for PSNs A never sent, as B, to A's QP 0
    nxt = qp(PA, r.aq[0])["req_psn"]
    aeth_ack = struct.pack("!I", 0x1f << 24)
    aeth_nak = struct.pack("!I", 0x62 << 24)
    forged = [craft(tmpl_b, bth(OP_ACK, r.aq[0], (nxt + 100) & 0xffffff, False) + aeth_ack),
              craft(tmpl_b, bth(OP_ACK, r.aq[0], (nxt + 200) & 0xffffff, False) + aeth_nak),
              craft(tmpl_b, bth(OP_READ_RESP_ONLY, r.aq[0], (nxt + 300) & 0xffffff,
                                False) + aeth_ack + b"R" * 64)]
    sa = stats(PA)
    w.inject("A", forged)
    da = settle(PA, sa, keys, lambda d: (d["sec_drop_plain"] if r.secure else
                                         d["dup_response_rx"]) >= 3)
    r.log("forged responses for PSNs never sent: %r" % da)
    if r.secure:
        r.check(da["sec_drop_plain"] == 3, "forged ACK, NAK, READ response: "
                "dropped as plain")
    else:
        r.check(da["dup_response_rx"] == 3, "forged ACK, NAK, READ response "
                "for PSNs never sent: dropped (dup_response_rx 3)")
    crc = r.write(0, 0, 4096, 7)
    r.check(r.at_b(0, 4096) == crc and r.states()[0][0] == "RTS",
            "A's QP 0 in RTS and carries the next WRITE")

    # --- a CNP forged as B to A's QP 0 (any frame of B's gives the
    # headers): plain, A takes it and cuts the QP's rate, as it must take
    # a CNP from its peer (a limit); secure, B seals its CNPs and a plain
    # one is dropped
    cnp = bytearray(bth(OP_CNP, r.aq[0], 0, False))
    cnp[4] = 0x40                                   # BECN
    sa = stats(PA)
    w.inject("A", [craft(tmpl_b, bytes(cnp) + bytes(16))])
    da = settle(PA, sa, keys + ("cnp_rx",), lambda d: (d["sec_drop_plain"] if r.secure
                                                     else d["cnp_rx"]) >= 1)
    r.log("forged CNP: %r" % da)
    if r.secure:
        r.check(da["sec_drop_plain"] == 1 and da["cnp_rx"] == 0,
                "forged CNP: dropped as plain, the QP's rate not cut")
    else:
        r.check(da["cnp_rx"] == 1, "forged CNP: taken, the QP's rate cut (a "
                "limit of plain RoCEv2)")

    # --- a WRITE with a bad rkey at the PSN B's QP 1 expects (sniffed)
    w.drain()
    r.write(1, 1 << 20, 64, 8)
    last = w.sniff("A", r.from_a(1, range(256)), what="WRITE on QP 1")
    e = (parse(last)[3] + 1) & 0xffffff
    sb = stats(PB)
    w.inject("B", [craft(tmpl_a, bth(OP_WRITE_ONLY, r.bq[1], e) +
                         reth(va + (1 << 20), rkey ^ 0x5a5a00, 8) + b"BADRKEY!")])
    d = settle(PB, sb, keys, lambda d: (d["sec_drop_plain"] if r.secure else
                                        d["nak_err_tx"]) >= 1)
    st = qp(PB, r.bq[1])["state"]
    if r.secure:
        r.check(d["sec_drop_plain"] == 1 and d["nak_err_tx"] == 0 and st == "RTS",
                "bad-rkey WRITE at the right PSN: dropped, B's QP 1 in %s" % st)
        crc = r.write(1, 1 << 20, 4096, 9)
        r.check(r.at_b(1 << 20, 4096) == crc, "QP 1 carries the next WRITE")
    else:
        r.check(d["nak_err_tx"] == 1 and st == "ERR",
                "bad-rkey WRITE at the right PSN: NAKed, B's QP 1 in %s (a "
                "limit of plain RoCEv2)" % st)

    # --- a WRITE rewritten on the path: R holds back A's frames to B's
    # QP 2, the attacker sends B the first one with other bytes
    crc = cmd(PA, "/dprdma/client/fill,%d,512,11" % (2 << 20))["crc32"]
    held, d, s = rewrite_on_path(
        r, "A", r.bq[2], r.from_a(2, (OP_WRITE_ONLY,)),
        "/dprdma/client/run,2,write,512,1,%d,%d,%d" % (2 << 20, va + (2 << 20), rkey))
    rewritten(r, "WRITE", held, d, s, r.at_b(2 << 20, 512), crc)

    # --- a READ response rewritten on the path
    cmd(PB, "/dprdma/client/fill,%d,512,12" % ((2 << 20) + 4096))
    crc = r.at_b((2 << 20) + 4096, 512)
    held, d, s = rewrite_on_path(
        r, "B", r.aq[2], r.from_b(2, (OP_READ_RESP_ONLY,)),
        "/dprdma/client/run,2,read,512,1,%d,%d,%d" %
        (3 << 20, va + (2 << 20) + 4096, rkey))
    rewritten(r, "READ response", held, d, s,
              cmd(PA, "/dprdma/client/checksum,%d,512" % (3 << 20))["crc32"], crc)

    # --- a WRITE held back on the path and an ACK forged for it
    w.drain()
    r.hold(IP_A, IP_B, r.bq[3])
    crc = r.write(3, 3 << 20, 512, 33, wait=False)
    orig = w.sniff("A", r.from_a(3, (OP_WRITE_ONLY,)), what="WRITE on QP 3")
    psn = parse(orig)[3]
    sa = stats(PA)
    w.inject("A", [craft(tmpl_b, bth(OP_ACK, r.aq[3], psn, False) + aeth_ack)])
    # (taken: the WRITE completes; refused: counted -- while R holds the
    # WRITE and A's own resends, which its retry count outlasts)
    if r.secure:
        settle(PA, sa, keys, lambda d: d["sec_drop_plain"] >= 1, timeout=0.3)
    else:
        t.wait_for(lambda: not cmd(PA, "/dprdma/client/status")["active"], 5,
                   "A to take the forged ACK")
    early = cmd(PA, "/dprdma/client/status")
    landed = r.at_b(3 << 20, 512) == crc
    da = delta(PA, sa, keys)
    held = r.release()
    s = done(PA, "the WRITE on QP 3")
    r.log("forged ACK: R held %d frames; at A %r; A's stream before R let "
          "go %r" % (held, da, early))
    if r.secure:
        r.check(da["sec_drop_plain"] == 1 and early["active"] and not landed,
                "forged ACK refused: the WRITE not complete while R held it")
        r.check(s["errors"] == 0 and r.at_b(3 << 20, 512) == crc,
                "the WRITE completed once it landed")
    else:
        r.check(not early["active"] and early["errors"] == 0 and not landed,
                "forged ACK taken: the WRITE completed, its data not at B "
                "(a limit of plain RoCEv2)")

    sa, sbs = r.states()
    want_b = ["RTS"] * NQP if r.secure else ["RTS", "ERR", "RTS", "RTS"]
    r.check(sa == ["RTS"] * NQP and sbs == want_b,
            "QP states after the suite: A %r, B %r" % (sa, sbs))
    r.check(r.at_b(0, 4096) == crc_at(r, 0), "B's data on QP 0 intact")
    cm_dreq(r)


def rping(r, d, args, out):
    """Debian's rping through the drop-ins against daemon @d, its lines
    (one per ping with -v) into the file @out as they come."""
    return subprocess.Popen(["stdbuf", "-oL", "env", "LD_LIBRARY_PATH=" + DROPIN,
                             "DPRDMA_SOCKET=" + d.socket, "timeout", "120",
                             "rping"] + args, stdout=open(out, "w"),
                            stderr=subprocess.STDOUT)


def pings(out):
    with open(out, errors="replace") as f:
        return sum(1 for x in f if "ping data" in x)


def established(port):
    return [c for c in t.telemetry(PA, "/dprdma/cm/conns")
            if " established " in c and ":%d " % port in c + " "]


def cm_dreq(r):
    """A DREQ forged on the path for a live RDMA CM connection: rping from
    B to A, the attacker reads the two communication IDs from B's RTU and
    sends A a DREQ as B. Plain, A's side disconnects (a limit: nothing
    authenticates a MAD). Secure, the MADs between the two boxes carry a
    MAC (dpr_cm_auth.c): the DREQ without one, the DREQ with the RTU's
    trailer, and the RTU itself sent again are dropped and counted, and
    the connection carries pings on."""
    port = 20000 + PID % 10000
    outs = ["/tmp/dprt-attack-rping-%s-%d" % (x, PID) for x in "sc"]
    keys = ("auth_missing", "auth_bad", "auth_replay", "auth_checked", "mad_unknown_id")
    r.w.drain()
    srv = rping(r, r.a, ["-s", "-v", "-a", IP_A, "-p", str(port), "-C", "100000000"],
                outs[0])
    cli = None
    try:
        t.wait_for(lambda: t.cm_listening(PA, port), 20, "rping listening on A")
        cli = rping(r, r.b, ["-c", "-v", "-V", "-a", IP_A, "-p", str(port),
                             "-C", "100000000"], outs[1])
        rtu = r.w.sniff("B", lambda p, f: p[1] == OP_UD_SEND_ONLY and p[2] == 1 and
                        len(f) >= MAD_AT + MAD_LEN and
                        f[MAD_AT + 16:MAD_AT + 18] == struct.pack("!H", CM_RTU),
                        timeout=20, what="RTU of rping's connection")
        t.wait_for(lambda: pings(outs[1]) >= 10, 20, "rping's first pings")
        mad = rtu[MAD_AT:MAD_AT + MAD_LEN]
        trailer = rtu[MAD_AT + MAD_LEN:-4]
        r.log("rping connected; B's RTU: %d bytes of MAD and trailer "
              "(comm IDs %s -> %s)" % (len(rtu) - MAD_AT - 4, mad[24:28].hex(),
                                       mad[28:32].hex()))
        r.check(len(trailer) == (TRAILER if r.secure else 0),
                "the CM's MADs between the boxes carry %s" %
                ("a MAC trailer" if r.secure else "no trailer"))
        dreq = (mad[:8] + os.urandom(8) + struct.pack("!HHI", CM_DREQ, 0, 0) +
                mad[24:32]).ljust(MAD_LEN, b"\0")
        forged = [craft(rtu, rtu[42:MAD_AT] + dreq)]
        if r.secure:
            forged += [craft(rtu, rtu[42:MAD_AT] + dreq + trailer), rtu]
        before = t.telemetry(PA, "/dprdma/cm/stats")
        r.w.inject("A", forged)
        time.sleep(0.5)
        after = t.telemetry(PA, "/dprdma/cm/stats")
        d = {k: after[k] - before[k] for k in keys}
        n0 = pings(outs[1])
        time.sleep(1)
        n1 = pings(outs[1])
        r.log("forged DREQ: at A %r; rping's pings %d, a second later %d"
              % (d, n0, n1))
        if r.secure:
            r.check(d["auth_missing"] == 1 and d["auth_bad"] == 1 and
                    d["auth_replay"] == 1,
                    "forged DREQ dropped (no MAC), with the RTU's MAC dropped "
                    "(bad MAC), the RTU sent again dropped (a replay)")
            r.check(established(port) and n1 > n0 and srv.poll() is None and
                    cli.poll() is None,
                    "the connection still established and carrying pings")
            # a DprdmaCaps Get as B, without a MAC, saying B runs nothing
            # of ours (no key): answered, not believed -- else the next
            # MADs from B's address would be taken without a MAC
            get = struct.pack("!BBBBHHQHHI", 1, 0x30, 1, 1, 0, 0,
                              int.from_bytes(os.urandom(8), "big"), 0xFF01, 0, 0)
            get += b"\0" * 13 + b"\x06\xd9\xd4" + b"\x01\0\0\0" + \
                struct.pack("!IQ", 0, 0)
            before = t.telemetry(PA, "/dprdma/cm/stats")
            r.w.inject("A", [craft(rtu, rtu[42:MAD_AT] + get.ljust(MAD_LEN, b"\0"))])
            t.wait_for(lambda: t.telemetry(PA, "/dprdma/cm/stats")["caps_get_rx"] >
                       before["caps_get_rx"], 5, "A to take the forged Get")
            after = t.telemetry(PA, "/dprdma/cm/stats")
            peer = [x for x in t.telemetry(PA, "/dprdma/cm/peers") if IP_B + " " in x]
            r.log("forged caps Get: caps_unauthenticated %d -> %d; A's peer %r"
                  % (before["caps_unauthenticated"], after["caps_unauthenticated"], peer))
            r.check(after["caps_unauthenticated"] == before["caps_unauthenticated"] + 1 and
                    peer and "our key" in peer[0],
                    "a caps Get without a MAC as B, saying it holds no key: "
                    "counted, not believed (A still holds B to our key)")
        else:
            t.wait_for(lambda: not established(port), 10,
                       "A's side of the connection to end")
            r.check(not established(port),
                    "forged DREQ taken: A's side of the connection ended (a "
                    "limit of plain RoCEv2: MADs are not authenticated)")
    finally:
        for p in (cli, srv):
            if p is not None and p.poll() is None:
                p.kill()
            if p is not None:
                p.wait()
        for o in outs:
            if os.path.exists(o):
                os.unlink(o)


def crc_at(r, off):
    return cmd(PA, "/dprdma/client/checksum,%d,4096" % off)["crc32"]


def main():
    t.require_root_and_netns()
    run(False)
    run(True)
    t.log("PASS")


if __name__ == "__main__":
    main()
