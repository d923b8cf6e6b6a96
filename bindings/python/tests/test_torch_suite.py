"""PyTorch's own distributed test suite (torch.testing._internal.distributed.distributed_test)
run against backend braid, the way third-party backends run it: declare what the backend
supports in the suite's feature tables before importing it, then subclass TestDistBackend
and DistributedTest._DistTestBase with BACKEND=braid.

    BRAID_TORCH_SUITE=ci    (default) the bounded subset in CI_TESTS below (conftest.py
                            deselects the others)
    BRAID_TORCH_SUITE=full  every test of the suite (about an hour on 2 cores)
    WORLD_SIZE=2..4         ranks per test (default 2)

Each test forks WORLD_SIZE ranks (the suite itself spawns them, which re-imports torch in
every rank; forking keeps the CI subset within its time budget). Results of the full run,
and why tests are skipped, are in bindings/python/README.md.
"""
import atexit
import os
import shutil
import tempfile

os.environ.setdefault("BACKEND", "braid")
os.environ.setdefault("WORLD_SIZE", "2")
if "TEMP_DIR" not in os.environ:  # the suite's barrier files; removed by the process making it
    os.environ["TEMP_DIR"] = tempfile.mkdtemp(prefix="braid_torch_suite_")
    atexit.register(shutil.rmtree, os.environ["TEMP_DIR"], ignore_errors=True)

import torch.multiprocessing  # noqa: E402

import braid.torch  # noqa: E402,F401  registers "braid" before the suite reads BACKEND
from torch.testing._internal.common_distributed import DistTestCases  # noqa: E402

# What braid supports, in the suite's terms. Not "gpu"/"cuda": braid's device path is not
# built yet. "sendrecv anysource" is skipped: braid has no receive-from-any-rank.
for feature in ("ddp", "subgroup", "plugin"):
    DistTestCases.backend_feature[feature].add("braid")
DistTestCases.skip_collective["sendrecv anysource"].add("braid")

from torch.testing._internal.distributed.distributed_test import (  # noqa: E402
    DistributedTest,
    TestDistBackend,
)

# The CI subset: tests that pass with braid (see the README's table), one or two per
# collective plus DDP and sub-groups; under two minutes on 2 cores at WORLD_SIZE=2.
CI_TESTS = {
    "test_all_reduce_sum",
    "test_all_reduce_max",
    "test_all_reduce_sum_async",
    "test_all_reduce_sum_complex",
    "test_all_reduce_complex_unsupported_ops",
    "test_broadcast",
    "test_reduce_sum",
    "test_reduce_sum_twice",
    "test_all_gather",
    "test_all_gather_coalesced_simple",
    "test_gather",
    "test_gather_checks",
    "test_scatter",
    "test_scatter_checks",
    "test_send_recv",
    "test_send_recv_with_tag",
    "test_isend",
    "test_irecv",
    "test_barrier",
    "test_DistributedDataParallelCPU",
    "test_DistributedDataParallel_requires_grad",
    "test_static_graph_api_cpu",
    "test_get_rank_size_group",
    "test_destroy_group",
}


class TestBraidBackend(TestDistBackend, DistributedTest._DistTestBase):
    def setUp(self):
        super().setUp()
        # Fork rather than spawn: ranks inherit the imported torch (see the module comment).
        self._start_processes(torch.multiprocessing.get_context("fork").Process)

    def tearDown(self):
        super().tearDown()
        # The suite leaves its FileStore file behind when the ranks exit early (a skip).
        if os.path.exists(self.file_name):
            os.remove(self.file_name)

