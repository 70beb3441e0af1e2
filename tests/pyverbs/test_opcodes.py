# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""Every opcode of every transport (RC: SEND, SEND with immediate, WRITE,
WRITE with immediate, READ, both atomics; UC: SENDs and WRITEs; UD:
SENDs) through both ways of posting (ibv_post_send and the ibv_wr_*
builder) and both kinds of CQ (ibv_poll_cq and the extended CQ), each
combination in rounds whose QPs, CQs, MRs and buffers are made anew
(malloc hands back the same addresses): every byte checked where it must
land, every completion field checked (opcode, status, length, immediate,
flags, QP numbers)."""

import itertools
import socket
import time
import unittest

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.cq import CQ, CQEX, CqInitAttrEx, PollCqAttr
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPEx, QPInitAttr, QPInitAttrEx
from pyverbs.wr import RecvWR, SendWR, SGE

from base import ACCESS, GID, PORT, DeviceTest, connect_rc

SIZE = 3000            # three packets at the 1024 B MTU the pairs use
GRH = 40
QKEY = 0x11111111
ROUNDS = 3

OPS = {
    e.IBV_QPT_RC: [e.IBV_WR_SEND, e.IBV_WR_SEND_WITH_IMM, e.IBV_WR_RDMA_WRITE,
                   e.IBV_WR_RDMA_WRITE_WITH_IMM, e.IBV_WR_RDMA_READ,
                   e.IBV_WR_ATOMIC_CMP_AND_SWP, e.IBV_WR_ATOMIC_FETCH_AND_ADD],
    e.IBV_QPT_UC: [e.IBV_WR_SEND, e.IBV_WR_SEND_WITH_IMM, e.IBV_WR_RDMA_WRITE,
                   e.IBV_WR_RDMA_WRITE_WITH_IMM],
    e.IBV_QPT_UD: [e.IBV_WR_SEND, e.IBV_WR_SEND_WITH_IMM],
}
SEND_OPS = (e.IBV_QP_EX_WITH_SEND | e.IBV_QP_EX_WITH_SEND_WITH_IMM |
            e.IBV_QP_EX_WITH_RDMA_WRITE | e.IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
            e.IBV_QP_EX_WITH_RDMA_READ | e.IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
            e.IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)
SEND_OPS_UD = e.IBV_QP_EX_WITH_SEND | e.IBV_QP_EX_WITH_SEND_WITH_IMM
WC_EX = (e.IBV_WC_EX_WITH_BYTE_LEN | e.IBV_WC_EX_WITH_IMM |
         e.IBV_WC_EX_WITH_QP_NUM | e.IBV_WC_EX_WITH_SRC_QP)
ATOMICS = (e.IBV_WR_ATOMIC_CMP_AND_SWP, e.IBV_WR_ATOMIC_FETCH_AND_ADD)
WITH_IMM = (e.IBV_WR_SEND_WITH_IMM, e.IBV_WR_RDMA_WRITE_WITH_IMM)
SENDS = (e.IBV_WR_SEND, e.IBV_WR_SEND_WITH_IMM)


class Wc:
    """A completion read from either kind of CQ, the same fields."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def poll_any(cq, n, tries=2000000):
    got = []
    if isinstance(cq, CQEX):
        while len(got) < n and tries > 0:
            tries -= 1
            if cq.start_poll(PollCqAttr()) != 0:
                continue
            while True:
                got.append(Wc(status=cq.status, wr_id=cq.wr_id,
                              opcode=cq.read_opcode(), byte_len=cq.read_byte_len(),
                              imm=cq.read_imm_data(), flags=cq.read_wc_flags(),
                              qp_num=cq.read_qp_num(), src_qp=cq.read_src_qp()))
                if len(got) == n or cq.poll_next() != 0:
                    break
            cq.end_poll()
    else:
        while len(got) < n and tries > 0:
            tries -= 1
            k, wcs = cq.poll(n - len(got))
            got.extend(Wc(status=w.status, wr_id=w.wr_id, opcode=w.opcode,
                          byte_len=w.byte_len, imm=w.imm_data, flags=w.wc_flags,
                          qp_num=w.qp_num, src_qp=w.src_qp) for w in wcs[:k])
    if len(got) < n:
        raise AssertionError("%d of %d completions" % (len(got), n))
    return got


class End:
    """One end: PD, a CQ of @cq_kind, an MR and a QP made with @ex (the
    builder) or not."""

    def __init__(self, ctx, qpt, ex, cq_kind):
        self.ctx, self.qpt, self.ex = ctx, qpt, ex
        self.pd = PD(ctx)
        if cq_kind == "ex":
            self.cq = CQEX(ctx, CqInitAttrEx(cqe=64, wc_flags=WC_EX))
        else:
            self.cq = CQ(ctx, 64)
        self.mr = MR(self.pd, 2 * SIZE + GRH, ACCESS)
        cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1,
                    max_recv_sge=1)
        if ex:
            ia = QPInitAttrEx(qp_type=qpt, scq=self.cq, rcq=self.cq, cap=cap,
                              pd=self.pd,
                              comp_mask=e.IBV_QP_INIT_ATTR_PD |
                              e.IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
                              send_ops_flags=SEND_OPS_UD
                              if qpt == e.IBV_QPT_UD else SEND_OPS)
            self.qp = QPEx(ctx, ia)
        else:
            self.qp = QP(self.pd, QPInitAttr(qp_type=qpt, scq=self.cq,
                                             rcq=self.cq, cap=cap))
        self.ah = None

    def close(self):
        for o in (self.ah, self.qp, self.mr, self.cq, self.pd):
            if o is not None:
                o.close()


def connect_ud(a, b):
    for me, peer in ((a, b), (b, a)):
        attr = QPAttr(qp_state=e.IBV_QPS_INIT, port_num=PORT)
        attr.qkey = QKEY
        me.qp.to_init(attr)
        me.qp.to_rtr(QPAttr(qp_state=e.IBV_QPS_RTR))
        attr = QPAttr(qp_state=e.IBV_QPS_RTS)
        attr.sq_psn = 0
        me.qp.to_rts(attr)
        gr = GlobalRoute(dgid=peer.ctx.query_gid(PORT, GID), sgid_index=GID)
        me.ah = AH(me.pd, attr=AHAttr(gr=gr, is_global=1, port_num=PORT))


def pattern(seed, n):
    return bytes(((seed * 53 + i * 7 + (i >> 8)) & 0xff) for i in range(n))


class OpcodeMatrix(DeviceTest):

    def post(self, a, b, op, length, imm):
        """@op of @length bytes from a's MR at 0 (an atomic: 8 bytes at
        SIZE) to b: its MR at 0 (READ: from b's MR to a's at SIZE)."""
        if a.ex:
            qp = a.qp
            qp.wr_start()
            qp.wr_id = op + 100
            qp.wr_flags = e.IBV_SEND_SIGNALED
            if op == e.IBV_WR_SEND:
                qp.wr_send()
            elif op == e.IBV_WR_SEND_WITH_IMM:
                qp.wr_send_imm(imm)
            elif op == e.IBV_WR_RDMA_WRITE:
                qp.wr_rdma_write(b.mr.rkey, b.mr.buf)
            elif op == e.IBV_WR_RDMA_WRITE_WITH_IMM:
                qp.wr_rdma_write_imm(b.mr.rkey, b.mr.buf, imm)
            elif op == e.IBV_WR_RDMA_READ:
                qp.wr_rdma_read(b.mr.rkey, b.mr.buf)
            elif op == e.IBV_WR_ATOMIC_CMP_AND_SWP:
                qp.wr_atomic_cmp_swp(b.mr.rkey, b.mr.buf, 0x1111, 0x2222)
            else:
                qp.wr_atomic_fetch_add(b.mr.rkey, b.mr.buf, 0x10)
            if a.qpt == e.IBV_QPT_UD:
                qp.wr_set_ud_addr(a.ah, b.qp.qp_num, QKEY)
            if op == e.IBV_WR_RDMA_READ:
                qp.wr_set_sge(SGE(a.mr.buf + SIZE, length, a.mr.lkey))
            elif op in ATOMICS:
                qp.wr_set_sge(SGE(a.mr.buf + SIZE, 8, a.mr.lkey))
            else:
                qp.wr_set_sge(SGE(a.mr.buf, length, a.mr.lkey))
            qp.wr_complete()
            return
        off = SIZE if op == e.IBV_WR_RDMA_READ or op in ATOMICS else 0
        n = 8 if op in ATOMICS else length
        wr = SendWR(wr_id=op + 100, opcode=op, num_sge=1,
                    sg=[SGE(a.mr.buf + off, n, a.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        if op in WITH_IMM:
            wr.imm_data = socket.htonl(imm)
        if op in ATOMICS:
            wr.set_wr_atomic(b.mr.rkey, b.mr.buf, 0x1111, 0x2222)
            if op == e.IBV_WR_ATOMIC_FETCH_AND_ADD:
                wr.set_wr_atomic(b.mr.rkey, b.mr.buf, 0x10, 0)
        elif op not in SENDS:
            wr.set_wr_rdma(b.mr.rkey, b.mr.buf)
        if a.qpt == e.IBV_QPT_UD:
            wr.set_wr_ud(a.ah, b.qp.qp_num, QKEY)
        a.qp.post_send(wr)

    def one(self, qpt, ex, cq_kind, op, r):
        a = End(self.ctx, qpt, ex, cq_kind)
        b = End(self.ctx, qpt, ex, cq_kind)
        what = "%s %s %s op %d round %d" % (
            {2: "RC", 3: "UC", 4: "UD"}[qpt], "wr_*" if ex else "post_send",
            cq_kind, op, r)
        try:
            if qpt == e.IBV_QPT_UD:
                connect_ud(a, b)
            else:
                connect_rc(a, b, qpt)
            length = 1000 if qpt == e.IBV_QPT_UD else SIZE
            data = pattern(r * 10 + op, length)
            a.mr.write(data, length, 0)
            a.mr.write(bytes(SIZE), SIZE, SIZE)
            b.mr.write(bytes(2 * SIZE), 2 * SIZE, 0)
            imm = 0x5a000000 + r * 256 + op     # (host order, as pyverbs
            # takes it in wr_*_imm; ibv_send_wr's imm_data is big-endian)
            recv = op in SENDS or op == e.IBV_WR_RDMA_WRITE_WITH_IMM
            grh = GRH if qpt == e.IBV_QPT_UD else 0
            if recv:
                b.qp.post_recv(RecvWR(wr_id=0x77, num_sge=1, sg=[
                    SGE(b.mr.buf + SIZE - grh, SIZE + grh, b.mr.lkey)]))
            if op == e.IBV_WR_RDMA_READ:
                b.mr.write(data, length, 0)
            if op in ATOMICS:
                b.mr.write((0x1111).to_bytes(8, "little"), 8, 0)
            self.post(a, b, op, length, imm)
            wc = poll_any(a.cq, 1)[0]
            self.assertEqual((wc.status, wc.wr_id), (e.IBV_WC_SUCCESS, op + 100),
                             what)
            want_op = {e.IBV_WR_RDMA_WRITE: e.IBV_WC_RDMA_WRITE,
                       e.IBV_WR_RDMA_WRITE_WITH_IMM: e.IBV_WC_RDMA_WRITE,
                       e.IBV_WR_RDMA_READ: e.IBV_WC_RDMA_READ,
                       e.IBV_WR_ATOMIC_CMP_AND_SWP: e.IBV_WC_COMP_SWAP,
                       e.IBV_WR_ATOMIC_FETCH_AND_ADD: e.IBV_WC_FETCH_ADD}
            self.assertEqual(wc.opcode, want_op.get(op, e.IBV_WC_SEND), what)
            self.assertEqual(wc.qp_num, a.qp.qp_num, what)
            if recv:
                rc = poll_any(b.cq, 1)[0]
                self.assertEqual((rc.status, rc.wr_id, rc.qp_num),
                                 (e.IBV_WC_SUCCESS, 0x77, b.qp.qp_num), what)
                self.assertEqual(rc.opcode, e.IBV_WC_RECV if op in SENDS else
                                 e.IBV_WC_RECV_RDMA_WITH_IMM, what)
                self.assertEqual(rc.byte_len, length + grh, what)
                self.assertEqual(bool(rc.flags & e.IBV_WC_WITH_IMM),
                                 op in WITH_IMM, what)
                if op in WITH_IMM:
                    self.assertEqual(socket.ntohl(rc.imm), imm, what)
                if qpt == e.IBV_QPT_UD:
                    self.assertEqual(rc.src_qp, a.qp.qp_num, what)
                    self.assertTrue(rc.flags & e.IBV_WC_GRH, what)
            if op in SENDS:
                self.assertEqual(b.mr.read(length, SIZE), data, what)
            elif op in (e.IBV_WR_RDMA_WRITE, e.IBV_WR_RDMA_WRITE_WITH_IMM):
                if qpt == e.IBV_QPT_UC and not recv:
                    # UC completes a WRITE once it is sent: nothing tells
                    # the program when it landed; it must within a second
                    deadline = time.monotonic() + 1.0
                    while (b.mr.read(length, 0) != data
                           and time.monotonic() < deadline):
                        time.sleep(0.001)
                self.assertEqual(b.mr.read(length, 0), data, what)
                self.assertEqual(b.mr.read(SIZE, SIZE), bytes(SIZE), what)
            elif op == e.IBV_WR_RDMA_READ:
                self.assertEqual(a.mr.read(length, SIZE), data, what)
            else:
                old = int.from_bytes(a.mr.read(8, SIZE), "little")
                new = int.from_bytes(b.mr.read(8, 0), "little")
                self.assertEqual(old, 0x1111, what)
                self.assertEqual(new, 0x2222 if op == e.IBV_WR_ATOMIC_CMP_AND_SWP
                                 else 0x1121, what)
        finally:
            a.close()
            b.close()

    def test_matrix(self):
        for r in range(ROUNDS):
            for qpt, ex, cq_kind in itertools.product(
                    (e.IBV_QPT_RC, e.IBV_QPT_UC, e.IBV_QPT_UD), (False, True),
                    ("legacy", "ex")):
                for op in OPS[qpt]:
                    self.one(qpt, ex, cq_kind, op, r)


if __name__ == "__main__":
    unittest.main()
