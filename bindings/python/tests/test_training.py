"""Training through braid reproduces training through gloo, step by step.

Each rank trains two identical replicas on the same data: one wrapped for braid (the
default group), one for gloo (a group over the same ranks). Their losses must agree at
every step and their parameters at the end: gradient averaging is the only thing the two
runs do differently.
"""
import copy

import pytest
import torch
import torch.distributed as dist
import torch.nn as nn

from harness import run_ranks

STEPS = 12


def make_model():
    torch.manual_seed(0)  # the same initial weights on every rank and for both replicas
    return nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, 4))


def batches(rank):
    g = torch.Generator().manual_seed(100 + rank)  # each rank its own shard of data
    for _ in range(STEPS):
        x = torch.randn(16, 20, generator=g)
        yield x, (x[:, :4] * 2).sin()


def train(model, rank):
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for x, y in batches(rank):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return torch.stack(losses)


def ddp_matches_gloo(rank, world):
    from torch.nn.parallel import DistributedDataParallel as DDP

    gloo = dist.new_group(backend="gloo")
    base = make_model()
    # A small bucket cap gives several buckets: braid all-reduces overlap the backward pass.
    braid_run = DDP(copy.deepcopy(base), bucket_cap_mb=0.01)
    gloo_run = DDP(copy.deepcopy(base), bucket_cap_mb=0.01, process_group=gloo)
    braid_losses = train(braid_run, rank)
    gloo_losses = train(gloo_run, rank)
    torch.testing.assert_close(braid_losses, gloo_losses, rtol=1e-5, atol=1e-6)
    for p, q in zip(braid_run.parameters(), gloo_run.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)
    # And the replicas really trained together: every rank holds the same weights.
    w = braid_run.module[0].weight.detach().clone()
    dist.broadcast(w, src=0)
    torch.testing.assert_close(w, braid_run.module[0].weight.detach())


def fsdp_matches_gloo(rank, world):
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.fsdp import fully_shard

    gloo = dist.new_group(backend="gloo")
    results = []
    for group in (dist.group.WORLD, gloo):
        mesh = DeviceMesh.from_group(group, "cpu")
        model = make_model()
        for layer in model:
            if isinstance(layer, nn.Linear):
                fully_shard(layer, mesh=mesh)
        fully_shard(model, mesh=mesh)
        results.append(train(model, rank))
    torch.testing.assert_close(results[0], results[1], rtol=1e-5, atol=1e-6)


def pipeline_matches_local(rank, world):
    from torch.distributed.pipelining import PipelineStage, ScheduleGPipe

    full = make_model()
    layers = list(full.children())
    per = len(layers) // world
    bounds = [i * per for i in range(world)] + [len(layers)]
    stage_module = nn.Sequential(*layers[bounds[rank]:bounds[rank + 1]])
    stage = PipelineStage(stage_module, rank, world, torch.device("cpu"))
    schedule = ScheduleGPipe(stage, n_microbatches=4)
    x = torch.randn(8, 20, generator=torch.Generator().manual_seed(7))
    if rank == 0:
        schedule.step(x)
    elif rank == world - 1:
        out = schedule.step()
        torch.testing.assert_close(out, full(x), rtol=1e-5, atol=1e-6)
    else:
        schedule.step()


def test_ddp_four_ranks_matches_gloo_loss_curve():
    run_ranks(4, ddp_matches_gloo)


def test_fsdp_fully_shard_on_cpu_matches_gloo():
    run_ranks(2, fsdp_matches_gloo)


def test_pipelining_send_recv():
    run_ranks(2, pipeline_matches_local)
