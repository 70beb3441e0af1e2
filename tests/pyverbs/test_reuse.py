# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""A completion means the data landed, whatever came before: many rounds
in one process of open / register / connect / transfer / destroy, the
next round's buffers at the addresses the last round's had (malloc gives
them back), each round with its own pattern, so data placed where an
earlier round's objects pointed shows as a mismatch. rdma-core's own
tests do exactly this one after the other; through the drop-in, the
second test in a process used to report success for data that never
arrived (a registration found pages already shared by an earlier,
closed context's file, and sent the daemon the new context's file)."""

import unittest

import pyverbs.enums as e
from pyverbs.device import Context

from base import DEV, Side, connect_rc, poll, post_recv, post_send

SIZE = 8192
ROUNDS = 12


def pattern(round_, k):
    return bytes(((round_ * 37 + k * 11 + i) & 0xff) for i in range(SIZE))


class ReuseTest(unittest.TestCase):

    def one_round(self, r, same_context):
        ctx_a = Context(name=DEV)
        ctx_b = ctx_a if same_context else Context(name=DEV)
        a, b = Side(ctx_a, e.IBV_QPT_RC, SIZE), Side(ctx_b, e.IBV_QPT_RC, SIZE)
        try:
            connect_rc(a, b)
            # SEND
            a.mr.write(pattern(r, 0), SIZE)
            b.mr.write(bytes(SIZE), SIZE)
            post_recv(b)
            post_send(a, e.IBV_WR_SEND)
            for wc in poll(a.cq) + poll(b.cq):
                self.assertEqual(wc.status, e.IBV_WC_SUCCESS)
            self.assertEqual(b.mr.read(SIZE, 0), pattern(r, 0),
                             "round %d: SEND's data not in the receive buffer" % r)
            # WRITE
            a.mr.write(pattern(r, 1), SIZE)
            post_send(a, e.IBV_WR_RDMA_WRITE, remote=b)
            self.assertEqual(poll(a.cq)[0].status, e.IBV_WC_SUCCESS)
            self.assertEqual(b.mr.read(SIZE, 0), pattern(r, 1),
                             "round %d: WRITE's data not at the target" % r)
            # READ
            b.mr.write(pattern(r, 2), SIZE)
            post_send(a, e.IBV_WR_RDMA_READ, remote=b)
            self.assertEqual(poll(a.cq)[0].status, e.IBV_WC_SUCCESS)
            self.assertEqual(a.mr.read(SIZE, 0), pattern(r, 2),
                             "round %d: READ's data not in the local buffer" % r)
        finally:
            a.close()
            b.close()
            ctx_a.close()
            if not same_context:
                ctx_b.close()

    def test_rounds_new_contexts(self):
        """Each round its own two contexts, closed at its end."""
        for r in range(ROUNDS):
            self.one_round(r, False)

    def test_rounds_one_context(self):
        """Each round one context for both QPs."""
        for r in range(ROUNDS):
            self.one_round(r + 100, True)


if __name__ == "__main__":
    unittest.main()
