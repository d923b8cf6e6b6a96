"""Registers braid as a torch.distributed backend named "braid".

    import braid.torch
    dist.init_process_group(backend="braid")            # CPU and CUDA tensors

Rendezvous goes through the Store that torch.distributed creates, so env://, tcp://,
file:// and torchrun work unchanged. CUDA tensors are stream-ordered on the caller's current
stream, as with ProcessGroupNCCL. Sub-groups: dist.new_group opens a new braid communicator on the
sub-group's store (or splits the default one when it is bound to a device), and
dist.split_group uses braidCommSplit.
"""
import torch.distributed as dist

from braid import _torch_backend

BACKEND_NAME = "braid"
BraidBackend = _torch_backend.BraidBackend

# How this process's braid groups were created: "rendezvous" (a new communicator through the
# group's Store) or "split" (braidCommSplit of a device-bound default group).
groups_created = {"rendezvous": 0, "split": 0}


def _create_backend(dist_options, _backend_options):
    """The factory torch.distributed calls (extended API) for every group using braid."""
    split = isinstance(dist_options.split_from, BraidBackend)
    groups_created["split" if split else "rendezvous"] += 1
    return _torch_backend.create_backend(
        dist_options.store,
        dist_options.group_rank,
        dist_options.group_size,
        dist_options.timeout.total_seconds(),
        dist_options.split_from,
    )


def is_registered() -> bool:
    """Whether torch.distributed knows the "braid" backend (true once this module ran)."""
    return BACKEND_NAME.upper() in dist.Backend._plugins


if not is_registered():
    dist.Backend.register_backend(
        BACKEND_NAME, _create_backend, extended_api=True, devices=["cpu", "cuda"]
    )
