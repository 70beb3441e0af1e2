# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""A receive queue holds max_recv_wr receives not yet completed, as an
RNIC's does: however long the program waits (the daemon's worker takes
what is posted into its transport at once), one more is refused with
ENOMEM; a completed receive makes room for exactly one more."""

import errno
import time
import unittest

import pyverbs.enums as e
from pyverbs.pyverbs_error import PyverbsRDMAError

from base import DeviceTest, Side, connect_rc, poll, post_recv, post_send


class RecvQueueTest(DeviceTest):

    def test_full_rq_stays_full(self):
        a = Side(self.ctx, e.IBV_QPT_RC, 4096, depth=16)
        b = Side(self.ctx, e.IBV_QPT_RC, 4096, depth=16)
        try:
            connect_rc(a, b)
            cap = b.qp.query(e.IBV_QP_CAP)[0].cap
            n = cap.max_recv_wr
            for i in range(n):
                post_recv(b, 0, 64, wr_id=i)
            time.sleep(0.2)             # the worker took them all by now
            with self.assertRaises(PyverbsRDMAError) as ex:
                post_recv(b, 0, 64, wr_id=n)
            self.assertEqual(ex.exception.error_code, errno.ENOMEM)
            # one SEND completes one receive: room for one
            post_send(a, e.IBV_WR_SEND, 0, 64)
            self.assertEqual(poll(a.cq)[0].status, e.IBV_WC_SUCCESS)
            wc = poll(b.cq)[0]
            self.assertEqual((wc.status, wc.wr_id), (e.IBV_WC_SUCCESS, 0))
            post_recv(b, 0, 64, wr_id=n)
            with self.assertRaises(PyverbsRDMAError) as ex:
                post_recv(b, 0, 64, wr_id=n + 1)
            self.assertEqual(ex.exception.error_code, errno.ENOMEM)
        finally:
            a.close()
            b.close()


if __name__ == "__main__":
    unittest.main()
