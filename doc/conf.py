# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The dprdma authors
#
# Sphinx configuration of dprdma's documentation: the HTML site and the
# man pages (doc/man/). meson builds both with -Ddocs=true (warnings are
# errors); by hand: sphinx-build -W -b html doc build/doc/html.

import os

project = "dprdma"
author = "The dprdma authors"
copyright = "2026, The dprdma authors"
version = release = os.environ.get("DPR_VERSION", "0.1.0")

extensions = []
master_doc = "index"
exclude_patterns = ["_build"]
highlight_language = "none"
html_theme = "alabaster"
html_static_path = []

# (source, name, description, authors, section)
man_pages = [
    ("man/dprdmad", "dprdmad", "software RDMA (RoCEv2) appliance on DPDK",
     [author], 8),
    ("man/dprdmactl", "dprdmactl", "look at and steer a running dprdmad",
     [author], 8),
    ("man/dprdmad.conf", "dprdmad.conf", "dprdmad configuration file",
     [author], 5),
    ("man/dprdma-perf", "dprdma-perf", "RDMA benchmarks in perftest's terms",
     [author], 1),
    ("man/dprdma-gen", "dprdma-gen", "RoCEv2 traffic generator on a DPDK port",
     [author], 1),
    ("man/dprdma-pcap", "dprdma-pcap", "check the RoCEv2 frames of a capture",
     [author], 1),
    ("man/dprdma-run", "dprdma-run", "run a verbs program through dprdma's drop-ins",
     [author], 1),
]
man_show_urls = False
