# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""Memory windows (issue 44 item 4) through the drop-in: type 1 windows
bound with ibv_bind_mw, type 2 ones with IBV_WR_BIND_MW and
ibv_wr_bind_mw; a peer's WRITE, READ and atomics through a window's key,
within its range and access only; local invalidation (IBV_WR_LOCAL_INV),
remote invalidation (IBV_WR_SEND_WITH_INV, the receiver's completion
saying which key went), and what a peer gets for a key that has gone:
IBV_WC_REM_ACCESS_ERR, as rxe and ConnectX give it. The errors of the
verbs themselves: a bind the MR does not allow completes in
IBV_WC_MW_BIND_ERR, an MR under a bound window cannot be deregistered
(EBUSY)."""

import errno
import unittest

import pyverbs.enums as e
from pyverbs.mr import MR, MW, MWBind, MWBindInfo
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPCap, QPInitAttr
from pyverbs.wr import SendWR, SGE

from base import ACCESS, DeviceTest, Side, connect_rc, poll, post_recv

SIZE = 8192
WIN_OFF, WIN_LEN = 1024, 2048
WIN_ACCESS = e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ | \
    e.IBV_ACCESS_REMOTE_ATOMIC | e.IBV_ACCESS_LOCAL_WRITE


def inc_rkey(k):
    return (k & ~0xff) | ((k + 1) & 0xff)


class Pair:
    """Two connected ends whose MRs allow windows to be bound."""

    def __init__(self, ctx, mr_access=ACCESS | e.IBV_ACCESS_MW_BIND):
        self.a = Side(ctx, e.IBV_QPT_RC, SIZE)
        self.b = Side(ctx, e.IBV_QPT_RC, SIZE)
        for s in (self.a, self.b):
            s.mr.close()
            s.mr = MR(s.pd, SIZE, mr_access)
        connect_rc(self.a, self.b)

    def close(self):
        self.a.close()
        self.b.close()


def bind2(side, mw, off=WIN_OFF, length=WIN_LEN, access=WIN_ACCESS,
          status=e.IBV_WC_SUCCESS):
    """A type 2 window of @side bound by its QP through IBV_WR_BIND_MW:
    its new key."""
    key = inc_rkey(mw.rkey)
    wr = SendWR(wr_id=0xb1, opcode=e.IBV_WR_BIND_MW,
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_bind_wr(mw, MWBindInfo(side.mr, side.mr.buf + off, length, access))
    side.qp.post_send(wr)
    wc = poll(side.cq)[0]
    assert wc.status == status, "bind: status %d" % wc.status
    if status == e.IBV_WC_SUCCESS:
        assert wc.opcode == e.IBV_WC_BIND_MW and wc.wr_id == 0xb1
    return key


def rdma(side, opcode, rkey, raddr, off=0, length=64, cmp_add=0, swap=0):
    """One signaled RDMA op of @side to (rkey, raddr): its completion."""
    sge = SGE(side.mr.buf + off, length, side.mr.lkey)
    wr = SendWR(wr_id=0x77, opcode=opcode, num_sge=1, sg=[sge],
                send_flags=e.IBV_SEND_SIGNALED)
    if opcode in (e.IBV_WR_ATOMIC_CMP_AND_SWP, e.IBV_WR_ATOMIC_FETCH_AND_ADD):
        wr.set_wr_atomic(rkey, raddr, cmp_add, swap)
    else:
        wr.set_wr_rdma(rkey, raddr)
    side.qp.post_send(wr)
    return poll(side.cq)[0]


def invalidating_wr(opcode, key):
    wr = SendWR(wr_id=0x1f, opcode=opcode, num_sge=0, sg=[],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.imm_data = key          # (ibv_send_wr's invalidate_rkey: a union)
    return wr


class MemoryWindows(DeviceTest):

    def setUp(self):
        super().setUp()
        self.p = Pair(self.ctx)
        self.mws = []

    def tearDown(self):
        for mw in self.mws:
            mw.close()
        self.p.close()
        super().tearDown()

    def mw(self, side, mw_type):
        w = MW(side.pd, mw_type)
        self.mws.append(w)
        return w

    def test_type2_write_read_atomic_through_window(self):
        a, b = self.p.a, self.p.b
        key = bind2(b, self.mw(b, e.IBV_MW_TYPE_2))
        base = b.mr.buf + WIN_OFF
        a.mr.write(bytes(range(256)) * 2, 512, 0)
        wc = rdma(a, e.IBV_WR_RDMA_WRITE, key, base + 100, length=512)
        self.assertEqual(wc.status, e.IBV_WC_SUCCESS)
        self.assertEqual(b.mr.read(512, WIN_OFF + 100), bytes(range(256)) * 2)
        self.assertEqual(b.mr.read(100, WIN_OFF), bytes(100))
        wc = rdma(a, e.IBV_WR_RDMA_READ, key, base + 100, off=4096, length=512)
        self.assertEqual(wc.status, e.IBV_WC_SUCCESS)
        self.assertEqual(a.mr.read(512, 4096), bytes(range(256)) * 2)
        wc = rdma(a, e.IBV_WR_ATOMIC_FETCH_AND_ADD, key, base + 8, off=2048,
                  length=8, cmp_add=5)
        self.assertEqual(wc.status, e.IBV_WC_SUCCESS)
        self.assertEqual(int.from_bytes(b.mr.read(8, WIN_OFF + 8), "little"), 5)

    def test_past_the_window_is_refused(self):
        a, b = self.p.a, self.p.b
        key = bind2(b, self.mw(b, e.IBV_MW_TYPE_2))
        # inside the MR, one byte past the window
        wc = rdma(a, e.IBV_WR_RDMA_WRITE, key,
                  b.mr.buf + WIN_OFF + WIN_LEN - 63, length=64)
        self.assertEqual(wc.status, e.IBV_WC_REM_ACCESS_ERR)
        self.assertEqual(b.mr.read(WIN_LEN, WIN_OFF), bytes(WIN_LEN))

    def test_window_access_is_its_own(self):
        a, b = self.p.a, self.p.b
        # the MR allows remote write, the window does not
        key = bind2(b, self.mw(b, e.IBV_MW_TYPE_2),
                    access=e.IBV_ACCESS_REMOTE_READ)
        wc = rdma(a, e.IBV_WR_RDMA_READ, key, b.mr.buf + WIN_OFF)
        self.assertEqual(wc.status, e.IBV_WC_SUCCESS)
        wc = rdma(a, e.IBV_WR_RDMA_WRITE, key, b.mr.buf + WIN_OFF)
        self.assertEqual(wc.status, e.IBV_WC_REM_ACCESS_ERR)

    def test_type2_window_is_its_qps(self):
        """A type 2 window answers through the QP that bound it only,
        not another QP of the same PD (IBA 10.6.7.2.2, type 2B)."""
        a, b = self.p.a, self.p.b
        key = bind2(b, self.mw(b, e.IBV_MW_TYPE_2))

        class End:
            pass
        a2, b2 = End(), End()
        cap = QPCap(max_send_wr=8, max_recv_wr=8, max_send_sge=1,
                    max_recv_sge=1)
        for mine, side in ((a2, a), (b2, b)):
            mine.ctx = side.ctx
            mine.qp = QP(side.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=side.cq,
                                             rcq=side.cq, cap=cap))
        try:
            connect_rc(a2, b2)
            sge = SGE(a.mr.buf, 64, a.mr.lkey)
            wr = SendWR(wr_id=9, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                        sg=[sge], send_flags=e.IBV_SEND_SIGNALED)
            wr.set_wr_rdma(key, b.mr.buf + WIN_OFF)
            a2.qp.post_send(wr)
            wcs = poll(a.cq, 1)
            self.assertEqual(wcs[0].status, e.IBV_WC_REM_ACCESS_ERR)
            # through its own QP it still works
            wc = rdma(a, e.IBV_WR_RDMA_WRITE, key, b.mr.buf + WIN_OFF)
            self.assertEqual(wc.status, e.IBV_WC_SUCCESS)
        finally:
            a2.qp.close()
            b2.qp.close()

    def test_local_invalidate(self):
        a, b = self.p.a, self.p.b
        key = bind2(b, self.mw(b, e.IBV_MW_TYPE_2))
        b.qp.post_send(invalidating_wr(e.IBV_WR_LOCAL_INV, key))
        wc = poll(b.cq)[0]
        self.assertEqual((wc.status, wc.opcode),
                         (e.IBV_WC_SUCCESS, e.IBV_WC_LOCAL_INV))
        wc = rdma(a, e.IBV_WR_RDMA_WRITE, key, b.mr.buf + WIN_OFF)
        self.assertEqual(wc.status, e.IBV_WC_REM_ACCESS_ERR)

    def test_bound_again_after_invalidation(self):
        """Bind, invalidate, bind again (another range): the old key is
        refused, the new one reaches the new range only."""
        a, b = self.p.a, self.p.b
        mw = self.mw(b, e.IBV_MW_TYPE_2)
        key1 = bind2(b, mw)
        b.qp.post_send(invalidating_wr(e.IBV_WR_LOCAL_INV, key1))
        poll(b.cq)
        key2 = bind2(b, mw, off=4096, length=1024)
        self.assertNotEqual(key1, key2)
        a.mr.write(b"\xab" * 64, 64, 0)
        wc = rdma(a, e.IBV_WR_RDMA_WRITE, key2, b.mr.buf + 4096)
        self.assertEqual(wc.status, e.IBV_WC_SUCCESS)
        self.assertEqual(b.mr.read(64, 4096), b"\xab" * 64)
        wc = rdma(a, e.IBV_WR_RDMA_WRITE, key1, b.mr.buf + WIN_OFF)
        self.assertEqual(wc.status, e.IBV_WC_REM_ACCESS_ERR)

    def test_send_with_invalidate(self):
        a, b = self.p.a, self.p.b
        key = bind2(b, self.mw(b, e.IBV_MW_TYPE_2))
        post_recv(b, off=0, length=256, wr_id=0x5e)
        a.mr.write(b"\x42" * 100, 100, 0)
        sge = SGE(a.mr.buf, 100, a.mr.lkey)
        wr = SendWR(wr_id=0x1f, opcode=e.IBV_WR_SEND_WITH_INV, num_sge=1,
                    sg=[sge], send_flags=e.IBV_SEND_SIGNALED)
        wr.imm_data = key
        a.qp.post_send(wr)
        wc = poll(a.cq)[0]
        self.assertEqual((wc.status, wc.opcode),
                         (e.IBV_WC_SUCCESS, e.IBV_WC_SEND))
        wc = poll(b.cq)[0]
        self.assertEqual((wc.status, wc.opcode, wc.wr_id, wc.byte_len),
                         (e.IBV_WC_SUCCESS, e.IBV_WC_RECV, 0x5e, 100))
        self.assertTrue(wc.wc_flags & e.IBV_WC_WITH_INV)
        self.assertFalse(wc.wc_flags & e.IBV_WC_WITH_IMM)
        self.assertEqual(wc.imm_data, key)     # invalidated_rkey
        self.assertEqual(b.mr.read(100, 0), b"\x42" * 100)
        wc = rdma(a, e.IBV_WR_RDMA_WRITE, key, b.mr.buf + WIN_OFF)
        self.assertEqual(wc.status, e.IBV_WC_REM_ACCESS_ERR)

    def test_send_with_invalidate_of_no_window(self):
        """A peer's SEND WITH INVALIDATE naming a key that is no bound
        type 2 window (here an MR's): an invalid request."""
        a, b = self.p.a, self.p.b
        post_recv(b, off=0, length=256)
        a.qp.post_send(invalidating_wr(e.IBV_WR_SEND_WITH_INV, b.mr.rkey))
        wc = poll(a.cq)[0]
        self.assertEqual(wc.status, e.IBV_WC_REM_INV_REQ_ERR)
        # the MR is untouched
        wc = poll(b.cq)[0]
        self.assertNotEqual(wc.status, e.IBV_WC_SUCCESS)

    def test_type1_bind_rebind_unbind(self):
        a, b = self.p.a, self.p.b
        mw = self.mw(b, e.IBV_MW_TYPE_1)
        keys = []
        for off in (WIN_OFF, 4096):
            b.qp.bind_mw(mw, MWBind(MWBindInfo(b.mr, b.mr.buf + off, 512,
                                               WIN_ACCESS), e.IBV_SEND_SIGNALED))
            wc = poll(b.cq)[0]
            self.assertEqual((wc.status, wc.opcode),
                             (e.IBV_WC_SUCCESS, e.IBV_WC_BIND_MW))
            keys.append(mw.rkey)
            a.mr.write(bytes([off >> 8]) * 64, 64, 0)
            wc = rdma(a, e.IBV_WR_RDMA_WRITE, mw.rkey, b.mr.buf + off)
            self.assertEqual(wc.status, e.IBV_WC_SUCCESS)
            self.assertEqual(b.mr.read(64, off), bytes([off >> 8]) * 64)
        self.assertNotEqual(keys[0], keys[1])
        # length 0: bound to nothing
        b.qp.bind_mw(mw, MWBind(MWBindInfo(b.mr, b.mr.buf, 0, 0),
                                e.IBV_SEND_SIGNALED))
        self.assertEqual(poll(b.cq)[0].status, e.IBV_WC_SUCCESS)
        wc = rdma(a, e.IBV_WR_RDMA_WRITE, mw.rkey, b.mr.buf + 4096)
        self.assertEqual(wc.status, e.IBV_WC_REM_ACCESS_ERR)

    def test_dereg_of_an_mr_under_a_window(self):
        b = self.p.b
        mw = MW(b.pd, e.IBV_MW_TYPE_2)
        bind2(b, mw)
        with self.assertRaises(PyverbsRDMAError) as cm:
            b.mr.close()
        self.assertEqual(cm.exception.error_code, errno.EBUSY)
        mw.close()              # the window goes: the MR can
        b.mr.close()


class BindErrors(DeviceTest):
    """Binds the verbs refuse complete in IBV_WC_MW_BIND_ERR and take the
    QP to the error state (as rxe)."""

    def check_refused(self, mr_access, mw_type, access, twice=False):
        p = Pair(self.ctx, mr_access=mr_access)
        mw = MW(p.b.pd, mw_type)
        try:
            if twice:
                bind2(p.b, mw)
            bind2(p.b, mw, access=access, status=e.IBV_WC_MW_BIND_ERR)
        finally:
            mw.close()
            p.close()

    def test_mr_without_mw_bind(self):
        self.check_refused(ACCESS, e.IBV_MW_TYPE_2, WIN_ACCESS)

    def test_remote_write_over_mr_without_local_write(self):
        self.check_refused(e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_MW_BIND,
                           e.IBV_MW_TYPE_2, e.IBV_ACCESS_REMOTE_WRITE)

    def test_type2_bound_twice(self):
        self.check_refused(ACCESS | e.IBV_ACCESS_MW_BIND, e.IBV_MW_TYPE_2,
                           WIN_ACCESS, twice=True)

    def test_wrong_type(self):
        with self.assertRaises(PyverbsRDMAError):
            from pyverbs.pd import PD
            with PD(self.ctx) as pd:
                MW(pd, 3)


class Rounds(DeviceTest):
    def test_windows_made_bound_used_and_freed_again(self):
        """Fifty rounds of a window in one process: allocated, bound,
        written through, invalidated by the peer, freed; every key new,
        every byte where the window put it."""
        p = Pair(self.ctx)
        seen = set()
        try:
            for r in range(50):
                mw = MW(p.b.pd, e.IBV_MW_TYPE_2)
                off = 64 * (r % 32)
                key = bind2(p.b, mw, off=off, length=256)
                self.assertNotIn(key, seen)
                seen.add(key)
                p.a.mr.write(bytes([r]) * 256, 256, 0)
                wc = rdma(p.a, e.IBV_WR_RDMA_WRITE, key, p.b.mr.buf + off,
                          length=256)
                self.assertEqual(wc.status, e.IBV_WC_SUCCESS)
                self.assertEqual(p.b.mr.read(256, off), bytes([r]) * 256)
                post_recv(p.b, off=4096, length=64)
                p.a.qp.post_send(invalidating_wr(e.IBV_WR_SEND_WITH_INV, key))
                self.assertEqual(poll(p.a.cq)[0].status, e.IBV_WC_SUCCESS)
                wc = poll(p.b.cq)[0]
                self.assertEqual(wc.imm_data, key)
                mw.close()
        finally:
            p.close()


if __name__ == "__main__":
    unittest.main()
