"""Runs a function on N local ranks with torch.distributed initialised, for the tests.

Each rank is a forked child of the pytest process (fork, not spawn: the children inherit
the already imported torch instead of importing it again, which costs seconds per rank on
a 2-core machine). A rank's exception fails the test with that rank's traceback.

Every rank gets a braid default group and, when asked, a gloo group over the same ranks:
the independent reference the tests compare braid against.
"""
import os
import socket
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _entry(rank, world_size, port, backend, timeout_s, device_id, fn, args):
    import braid.torch  # noqa: F401  registers the backend in this rank

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.manual_seed(1234 + rank)
    dist.init_process_group(
        backend,
        rank=rank,
        world_size=world_size,
        timeout=timedelta(seconds=timeout_s),
        device_id=device_id,
    )
    try:
        fn(rank, world_size, *args)
    finally:
        dist.destroy_process_group()


def run_ranks(world_size, fn, *args, backend="braid", timeout_s=120, device_id=None,
              start_method="fork"):
    """Runs fn(rank, world_size, *args) on `world_size` forked ranks; raises if any fails.
    device_id binds the default group to a device (init_process_group's argument).
    start_method "spawn" is for CUDA tests: a forked child cannot use CUDA once the parent
    has touched it (fn must then be importable by module and name)."""
    mp.start_processes(
        _entry,
        args=(world_size, free_port(), backend, timeout_s, device_id, fn, args),
        nprocs=world_size,
        join=True,
        start_method=start_method,
    )
