# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""What the pyverbs suite shares: a device (DPR_PYVERBS_DEV, dprdma0 by
default) opened through whatever libibverbs the process loaded (the
drop-in, with LD_LIBRARY_PATH at build/drop-in), its RoCEv2 GID, and
connected QP pairs made from pyverbs objects, as rdma-core's own tests
make them (its tests/base.py), kept small and explicit here."""

import os
import unittest

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import RecvWR, SendWR, SGE

DEV = os.environ.get("DPR_PYVERBS_DEV", "dprdma0")
GID = int(os.environ.get("DPR_PYVERBS_GID", "1"))    # ::ffff:IPv4, RoCEv2
PORT = 1
ACCESS = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
          e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)


class Side:
    """One end: a context, PD, CQ, an MR and a QP of @qp_type."""

    def __init__(self, ctx, qp_type, size, depth=64):
        self.ctx = ctx
        self.pd = PD(ctx)
        self.cq = CQ(ctx, 4 * depth)
        self.mr = MR(self.pd, size, ACCESS)
        cap = QPCap(max_send_wr=depth, max_recv_wr=depth, max_send_sge=2,
                    max_recv_sge=2)
        self.qp = QP(self.pd, QPInitAttr(qp_type=qp_type, scq=self.cq,
                                         rcq=self.cq, cap=cap))
        self.size = size

    def close(self):
        for o in (self.qp, self.mr, self.cq, self.pd):
            o.close()


def connect_rc(a, b, qp_type=e.IBV_QPT_RC):
    """a.qp and b.qp to RTS, each other's peer (RC or UC)."""
    gid_a = a.ctx.query_gid(PORT, GID)
    gid_b = b.ctx.query_gid(PORT, GID)
    for me, peer, gid in ((a, b, gid_b), (b, a, gid_a)):
        attr = QPAttr(qp_state=e.IBV_QPS_INIT, port_num=PORT)
        attr.qp_access_flags = ACCESS if qp_type == e.IBV_QPT_RC else \
            e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE
        me.qp.to_init(attr)
        attr = QPAttr(qp_state=e.IBV_QPS_RTR, port_num=PORT,
                      path_mtu=e.IBV_MTU_1024)
        attr.dest_qp_num = peer.qp.qp_num
        attr.rq_psn = 0
        gr = GlobalRoute(dgid=gid, sgid_index=GID)
        attr.ah_attr = AHAttr(gr=gr, is_global=1, port_num=PORT)
        if qp_type == e.IBV_QPT_RC:
            attr.max_dest_rd_atomic = 4
            attr.min_rnr_timer = 12
        me.qp.to_rtr(attr)
        attr = QPAttr(qp_state=e.IBV_QPS_RTS)
        attr.sq_psn = 0
        if qp_type == e.IBV_QPT_RC:
            attr.timeout = 14
            attr.retry_cnt = 7
            attr.rnr_retry = 7
            attr.max_rd_atomic = 4
        me.qp.to_rts(attr)


def poll(cq, n=1, tries=2000000):
    """n work completions from @cq (busy polling, bounded)."""
    got = []
    while len(got) < n and tries > 0:
        tries -= 1
        k, wcs = cq.poll(n - len(got))
        got.extend(wcs[:k])
    if len(got) < n:
        raise AssertionError("%d of %d completions" % (len(got), n))
    return got


def post_recv(side, off=0, length=None, wr_id=0):
    sge = SGE(side.mr.buf + off, length or side.size - off, side.mr.lkey)
    side.qp.post_recv(RecvWR(wr_id=wr_id, num_sge=1, sg=[sge]))


def post_send(side, opcode, off=0, length=None, wr_id=0, remote=None,
              roff=0, flags=e.IBV_SEND_SIGNALED, imm=None):
    sge = SGE(side.mr.buf + off, length if length is not None else
              side.size - off, side.mr.lkey)
    wr = SendWR(wr_id=wr_id, opcode=opcode, num_sge=1, sg=[sge],
                send_flags=flags)
    if remote is not None:
        wr.set_wr_rdma(remote.mr.rkey, remote.mr.buf + roff)
    if imm is not None:
        wr.imm_data = imm
    side.qp.post_send(wr)


class DeviceTest(unittest.TestCase):
    """A test case with the device open (self.ctx), closed after it."""

    def setUp(self):
        self.ctx = Context(name=DEV)

    def tearDown(self):
        self.ctx.close()
