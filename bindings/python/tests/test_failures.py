"""Failures surface as exceptions naming the rank, never as hangs.

Timeouts here are short on purpose; what they bound is a wait for a peer that never comes,
so load on the machine cannot make these tests fail, only the errors arrive later.

A peer that dies mid-job, and a collective that a peer never joins, must both end in a
DistBackendError on the surviving rank within the group's timeout (braid's deadline is
set from it), with the surviving rank named in the message.
"""
import os
from datetime import timedelta

import pytest
import torch
import torch.distributed as dist

from harness import run_ranks


def dead_peer(rank, world):
    t = torch.ones(1 << 16)
    dist.all_reduce(t)  # everyone connected
    if rank == 1:
        os._exit(0)  # dies without a word; its processes' sockets close
    with pytest.raises(dist.DistBackendError, match=f"rank {rank} of {world}"):
        dist.all_reduce(t)


def missing_peer(rank, world):
    gloo = dist.new_group(backend="gloo", timeout=timedelta(seconds=60))
    t = torch.ones(8)
    if rank == 0:
        # Rank 1 never joins this one. wait() with its own, shorter timeout gives up first;
        # then the 10-second group timeout (braid's deadline) fails the operation itself.
        work = dist.all_reduce(t, async_op=True)
        with pytest.raises(dist.DistBackendError, match="did not complete within 500 ms"):
            work.wait(timeout=timedelta(milliseconds=500))
        with pytest.raises(dist.DistBackendError, match="rank 0 of 2") as err:
            work.wait()
        assert "allreduce" in str(err.value)
    dist.barrier(group=gloo)  # rank 1 waits here for rank 0


def other_device_tensor_rejected(rank, world):
    backend = dist.group.WORLD._get_backend(torch.device("cpu"))
    with pytest.raises(Exception, match="allreduce got a tensor on meta; braid takes CPU and CUDA"):
        backend.allreduce([torch.empty(4, device="meta")])
    t = torch.ones(2)
    dist.all_reduce(t)  # the rejected call queued nothing: ranks are still in step
    assert t.tolist() == [world, world]


def test_dead_peer_is_an_error_naming_the_rank():
    # Rank 1's exit code 0 is fine for the spawn harness; rank 0 must raise, not hang.
    run_ranks(2, dead_peer, timeout_s=20)


def test_collective_without_peer_times_out():
    run_ranks(2, missing_peer, timeout_s=10)


def test_tensors_on_other_devices_are_rejected():
    run_ranks(2, other_device_tensor_rejected)
