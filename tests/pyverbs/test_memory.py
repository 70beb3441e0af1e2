# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
"""Memory a program registers, as it has it (issue 44 items 1 and 5):
private anonymous memory, shared anonymous memory (MAP_SHARED |
MAP_ANONYMOUS), a sealed memfd, a file mapped MAP_PRIVATE -- each the
target of a peer's WRITE and the source of its READ, every byte checked;
the same pages registered twice, one registration gone while the other
still carries traffic; buffers freed and mapped again at the same address
between registrations; and the errnos of the verbs as rdma-core documents
them (EINVAL for an access combination IBA forbids, EFAULT for memory
that is not mapped, EOPNOTSUPP for a shared mapping of a file the daemon
cannot hold)."""

import ctypes
import errno
import fcntl
import mmap
import os
import tempfile
import unittest

import pyverbs.enums as e
from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsRDMAError

from base import ACCESS, DeviceTest, Side, connect_rc, poll, post_send

SIZE = 3 * 4096
F_SEAL_SHRINK, F_SEAL_GROW, F_ADD_SEALS = 0x2, 0x4, 1033


def addr_of(m):
    return ctypes.addressof(ctypes.c_char.from_buffer(m))


def pattern(seed):
    return bytes(((seed * 29 + i * 13 + (i >> 9)) & 0xff) for i in range(SIZE))


class Memory(DeviceTest):

    def setUp(self):
        super().setUp()
        self.a = Side(self.ctx, e.IBV_QPT_RC, SIZE)
        self.b = Side(self.ctx, e.IBV_QPT_RC, SIZE)
        connect_rc(self.a, self.b)
        self.keep = []

    def tearDown(self):
        self.a.close()
        self.b.close()
        for m in self.keep:
            m.close()
        super().tearDown()

    def traffic_into(self, mem, mr, seed):
        """a WRITEs into @mr (over @mem) and READs it back: every byte."""
        a = self.a
        data = pattern(seed)
        a.mr.write(data, SIZE, 0)
        sge_wr = post_send  # (base's: a's MR at 0, the remote by its MR)

        class Remote:
            pass
        rem = Remote()
        rem.mr = mr
        sge_wr(a, e.IBV_WR_RDMA_WRITE, 0, SIZE, remote=rem)
        self.assertEqual(poll(a.cq)[0].status, e.IBV_WC_SUCCESS)
        self.assertEqual(bytes(mem[:SIZE]), data, "WRITE landed in the memory")
        mem[:SIZE] = pattern(seed + 1)
        sge_wr(a, e.IBV_WR_RDMA_READ, 0, SIZE, remote=rem)
        self.assertEqual(poll(a.cq)[0].status, e.IBV_WC_SUCCESS)
        self.assertEqual(a.mr.read(SIZE, 0), pattern(seed + 1),
                         "READ took the memory's bytes")

    def register(self, mem):
        return MR(self.b.pd, SIZE, ACCESS, address=addr_of(mem))

    def test_private_anonymous(self):
        m = mmap.mmap(-1, SIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        self.keep.append(m)
        mr = self.register(m)
        self.traffic_into(m, mr, 1)
        mr.close()

    def test_shared_anonymous(self):
        m = mmap.mmap(-1, SIZE, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
        self.keep.append(m)
        mr = self.register(m)
        self.traffic_into(m, mr, 2)
        mr.close()

    def test_sealed_memfd(self):
        fd = os.memfd_create("dprt", os.MFD_ALLOW_SEALING)
        try:
            os.ftruncate(fd, SIZE)
            fcntl.fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW)
            m = mmap.mmap(fd, SIZE, flags=mmap.MAP_SHARED)
        finally:
            os.close(fd)
        self.keep.append(m)
        mr = self.register(m)
        self.traffic_into(m, mr, 3)
        mr.close()

    def private_file(self, f, seed):
        """@f's pages mapped MAP_PRIVATE, registered and written to."""
        f.write(bytes([seed]) * SIZE)
        f.flush()
        m = mmap.mmap(f.fileno(), SIZE, flags=mmap.MAP_PRIVATE)
        self.keep.append(m)
        mr = self.register(m)
        self.traffic_into(m, mr, seed)
        mr.close()

    def test_private_file_mapping(self):
        with tempfile.TemporaryFile() as f:
            self.private_file(f, 4)

    def test_private_file_long_path(self):
        # /proc/self/maps gives the path whole: a line longer than the
        # shim reads at once (512) is one mapping, its rest not another
        with tempfile.TemporaryDirectory() as d:
            deep = os.path.join(d, "a" * 250, "b" * 250)
            os.makedirs(deep)
            with open(os.path.join(deep, "c" * 200), "w+b") as f:
                self.private_file(f, 5)

    def test_shared_file_mapping_refused(self):
        with tempfile.TemporaryFile() as f:
            f.truncate(SIZE)
            m = mmap.mmap(f.fileno(), SIZE, flags=mmap.MAP_SHARED)
        self.keep.append(m)
        with self.assertRaises(PyverbsRDMAError) as cm:
            self.register(m)
        self.assertEqual(cm.exception.error_code, errno.EOPNOTSUPP)

    def test_registered_twice_one_goes(self):
        """Two MRs over the same pages: both carry traffic; one
        deregistered, its key refused, the other's still lands."""
        m = mmap.mmap(-1, SIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        self.keep.append(m)
        mr1, mr2 = self.register(m), self.register(m)
        self.assertNotEqual(mr1.rkey, mr2.rkey)
        self.traffic_into(m, mr1, 5)
        self.traffic_into(m, mr2, 6)
        mr1.close()
        self.traffic_into(m, mr2, 7)
        mr2.close()

    def test_freed_and_mapped_again(self):
        """Memory registered, deregistered, unmapped; new memory mapped at
        the same address and registered: the data goes to the new pages."""
        m = mmap.mmap(-1, SIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        where = addr_of(m)
        mr = self.register(m)
        self.traffic_into(m, mr, 8)
        mr.close()
        m.close()
        for r in range(4):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.mmap.restype = ctypes.c_void_p
            libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                  ctypes.c_int, ctypes.c_int, ctypes.c_long]
            p = libc.mmap(where, SIZE, mmap.PROT_READ | mmap.PROT_WRITE,
                          mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x10, -1, 0)
            self.assertEqual(p, where, "mapped again at the same address")
            buf = (ctypes.c_char * SIZE).from_address(where)
            mr = MR(self.b.pd, SIZE, ACCESS, address=where)
            self.traffic_into(memoryview(buf).cast("B"), mr, 10 + r)
            mr.close()
            libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
            libc.munmap(where, SIZE)

    def test_errnos(self):
        m = mmap.mmap(-1, SIZE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        self.keep.append(m)
        # remote write without local write (IBA C10-53)
        with self.assertRaises(PyverbsRDMAError) as cm:
            MR(self.b.pd, SIZE, e.IBV_ACCESS_REMOTE_WRITE, address=addr_of(m))
        self.assertEqual(cm.exception.error_code, errno.EINVAL)
        # an unmapped page
        hole = mmap.mmap(-1, 3 * 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        self.keep.append(hole)
        base = addr_of(hole)
        libc = ctypes.CDLL(None)
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        libc.munmap(base + 4096, 4096)
        with self.assertRaises(PyverbsRDMAError) as cm:
            MR(self.b.pd, 3 * 4096, ACCESS, address=base)
        self.assertEqual(cm.exception.error_code, errno.EFAULT)


if __name__ == "__main__":
    unittest.main()
