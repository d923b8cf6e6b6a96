"""backend="braid" on CUDA tensors: 2 ranks (processes) sharing GPU 0, against gloo.

Every c10d collective runs on CUDA tensors through braid and, on copies of the same inputs,
through a gloo group on CPU tensors; results must match (exactly for integers, within
rounding for floating point). A 2-rank DDP run on CUDA tensors through braid must reproduce,
step by step, the losses of the same run through gloo on CPU tensors (gloo's CUDA support
does not cover every call DDP makes; the two differ only by GPU vs CPU float32 rounding). Operations are stream-ordered like
ProcessGroupNCCL's: the tests issue them on a side stream and on the default stream, with
async_op and without, and read results only after wait().

Skipped without a CUDA device. Runs with unittest alone (the GPU kit's check 10 has no
pytest) or under pytest. Ranks are spawned, not forked: a forked child cannot use CUDA.
"""
import unittest

import torch
import torch.distributed as dist

from harness import run_ranks

HAVE_GPU = torch.cuda.is_available() and torch.cuda.device_count() > 0
WORLD = 2
REDUCE_OPS = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX]
DTYPES = [torch.float32, torch.float64, torch.int32, torch.int64, torch.uint8]


def make(shape, dtype, rank, salt=0):
    """Deterministic per-rank CPU input; small integers keep sums and products exact."""
    g = torch.Generator().manual_seed(1000 * rank + salt)
    return torch.randint(1, 4, shape, generator=g).to(dtype)


def check(case, got, want):
    try:
        torch.testing.assert_close(got.cpu(), want.cpu(), rtol=1e-5, atol=1e-5)
    except AssertionError as e:
        raise AssertionError(f"{case}: braid on CUDA differs from gloo on rank "
                             f"{dist.get_rank()}") from e


def collectives(rank, world):
    torch.cuda.set_device(0)
    dev = torch.device("cuda", 0)
    ref = dist.new_group(backend="gloo")
    side = torch.cuda.Stream()

    for dtype in DTYPES:
        for op in REDUCE_OPS:
            t = make((37,), dtype, rank).to(dev)
            dist.all_reduce(t, op=op)
            s = make((37,), dtype, rank)
            dist.all_reduce(s, op=op, group=ref)
            check(f"all_reduce {op} {dtype}", t, s)
    # AVG, half precision, a large buffer (the Simple protocol), a non-contiguous tensor.
    t = make((33,), torch.float32, rank).to(dev)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    s = make((33,), torch.float32, rank)
    dist.all_reduce(s, group=ref)
    check("all_reduce AVG", t, s / world)
    for dtype in (torch.float16, torch.bfloat16):
        t = make((40,), dtype, rank).to(dev)
        dist.all_reduce(t)
        s = make((40,), torch.float32, rank)
        dist.all_reduce(s, group=ref)
        check(f"all_reduce SUM {dtype}", t, s.to(dtype))
    big = make((1 << 20,), torch.float32, rank, salt=5)
    t = big.to(dev)
    dist.all_reduce(t)
    dist.all_reduce(big, group=ref)
    check("all_reduce 4 MiB", t, big)
    t = make((6, 5), torch.float32, rank).to(dev).t()
    dist.all_reduce(t)
    s = make((6, 5), torch.float32, rank).t()
    dist.all_reduce(s, group=ref)
    check("all_reduce non-contiguous", t, s)

    # Stream order: inputs written on a side stream, the collective issued there with
    # async_op, the result read on the default stream after wait().
    with torch.cuda.stream(side):
        t = torch.full((1 << 16,), float(rank + 1), device=dev)
        t.mul_(2)
        work = dist.all_reduce(t, async_op=True)
    work.wait()  # the default stream now waits for the side stream's all-reduce
    got = t * 1
    torch.testing.assert_close(got.cpu(), torch.full((1 << 16,), 2.0 * (1 + 2)))
    # The future: its value is usable after wait(), as ProcessGroupNCCL's.
    t = torch.full((100,), float(rank), device=dev)
    fut = dist.all_reduce(t, async_op=True).get_future()
    (value,) = fut.wait()
    torch.testing.assert_close(value.cpu(), torch.full((100,), 1.0))

    for root in range(world):
        t = make((21,), torch.int64, rank, salt=1).to(dev)
        dist.broadcast(t, src=root)
        s = make((21,), torch.int64, rank, salt=1)
        dist.broadcast(s, src=root, group=ref)
        check(f"broadcast root {root}", t, s)
        t = make((19,), torch.float32, rank, salt=2).to(dev)
        dist.reduce(t, dst=root)
        s = make((19,), torch.float32, rank, salt=2)
        dist.reduce(s, dst=root, group=ref)
        if rank == root:
            check(f"reduce root {root}", t, s)

    inp = make((7,), torch.int32, rank, salt=3)
    outs = [torch.empty(7, dtype=torch.int32, device=dev) for _ in range(world)]
    dist.all_gather(outs, inp.to(dev))
    want = [torch.empty(7, dtype=torch.int32) for _ in range(world)]
    dist.all_gather(want, inp, group=ref)
    for i in range(world):
        check(f"all_gather block {i}", outs[i], want[i])
    whole = torch.empty(7 * world, dtype=torch.int32, device=dev)
    dist.all_gather_into_tensor(whole, inp.to(dev))
    check("all_gather_into_tensor", whole, torch.cat(want))

    parts = [make((5,), torch.float32, rank, salt=10 + i) for i in range(world)]
    out = torch.empty(5, device=dev)
    dist.reduce_scatter(out, [p.to(dev) for p in parts])
    summed = torch.stack([torch.stack([make((5,), torch.float32, r, salt=10 + i)
                                       for i in range(world)]) for r in range(world)]).sum(0)
    check("reduce_scatter", out, summed[rank])
    out = torch.empty(5, device=dev)
    dist.reduce_scatter_tensor(out, torch.cat(parts).to(dev))
    check("reduce_scatter_tensor", out, summed[rank])

    inp = make((world * 3,), torch.int64, rank, salt=4)
    out = torch.empty(world * 3, dtype=torch.int64, device=dev)
    dist.all_to_all_single(out, inp.to(dev))
    want = torch.empty(world * 3, dtype=torch.int64)
    dist.all_to_all_single(want, inp, group=ref)
    check("all_to_all_single", out, want)
    in_splits = [rank + 1 + i for i in range(world)]
    out_splits = [r + 1 + rank for r in range(world)]
    inp = make((sum(in_splits),), torch.float32, rank, salt=6)
    out = torch.empty(sum(out_splits), device=dev)
    dist.all_to_all_single(out, inp.to(dev), out_splits, in_splits)
    want = torch.empty(sum(out_splits))
    dist.all_to_all_single(want, inp, out_splits, in_splits, group=ref)
    check("all_to_all_single with splits", out, want)
    ins = [make((4,), torch.int32, rank, salt=20 + i) for i in range(world)]
    outs = [torch.empty(4, dtype=torch.int32, device=dev) for _ in range(world)]
    dist.all_to_all(outs, [t.to(dev) for t in ins])
    for i in range(world):
        check(f"all_to_all block {i}", outs[i], make((4,), torch.int32, i, salt=20 + rank))

    for root in range(world):
        inp = make((6,), torch.float32, rank, salt=7)
        got = [torch.empty(6, device=dev) for _ in range(world)] if rank == root else None
        dist.gather(inp.to(dev), got, dst=root)
        if rank == root:
            for i in range(world):
                check(f"gather root {root} block {i}", got[i], make((6,), torch.float32, i, salt=7))
        src = [make((6,), torch.float32, root, salt=30 + i).to(dev) for i in range(world)]
        out = torch.empty(6, device=dev)
        dist.scatter(out, src if rank == root else None, src=root)
        check(f"scatter root {root}", out, make((6,), torch.float32, root, salt=30 + rank))

    peer = 1 - rank
    mine = make((1000,), torch.float32, rank, salt=8).to(dev)
    theirs = torch.empty(1000, device=dev)
    reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, mine, peer),
                                   dist.P2POp(dist.irecv, theirs, peer)])
    for r in reqs:
        r.wait()
    check("batch_isend_irecv", theirs, make((1000,), torch.float32, peer, salt=8))
    if rank == 0:
        dist.send(mine, 1)
    else:
        dist.recv(theirs, 0)
        check("send/recv", theirs, make((1000,), torch.float32, 0, salt=8))
    dist.barrier()

    # Bad input: a CPU tensor mixed with a CUDA one is refused (by braid: "... on the same
    # device"; torch may refuse it first), and nothing was queued: the ranks stay in step.
    try:
        dist.all_to_all_single(torch.empty(world * 2, device=dev), torch.zeros(world * 2))
    except Exception as e:  # noqa: BLE001  (torch wraps the backend's error)
        assert "device" in str(e), str(e)
    else:
        raise AssertionError("a CPU input with a CUDA output was accepted")
    t = torch.ones(3, device=dev)
    dist.all_reduce(t)
    check("all_reduce after a refused call", t, torch.full((3,), float(world)))
    torch.cuda.synchronize()


def _train(group, dev, steps):
    """Losses of a small MLP trained with DDP over `group` on `dev` (same seeds everywhere)."""
    torch.backends.cuda.matmul.allow_tf32 = False  # float32 as on the CPU
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 8)).to(dev)
    ddp = torch.nn.parallel.DistributedDataParallel(
        model, device_ids=[0] if dev.type == "cuda" else None, process_group=group,
        bucket_cap_mb=0.01)  # several buckets
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    losses = []
    rank = dist.get_rank()
    for step in range(steps):
        g = torch.Generator().manual_seed(100 * step + rank)
        x = torch.randn(16, 32, generator=g).to(dev)
        y = torch.randn(16, 8, generator=g).to(dev)
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu() for p in model.parameters()]


def ddp(rank, world):
    torch.cuda.set_device(0)
    ref = dist.new_group(backend="gloo")
    braid_losses, braid_params = _train(None, torch.device("cuda", 0), 6)
    gloo_losses, gloo_params = _train(ref, torch.device("cpu"), 6)
    torch.testing.assert_close(torch.tensor(braid_losses), torch.tensor(gloo_losses),
                               rtol=1e-4, atol=1e-5)
    for a, b in zip(braid_params, gloo_params):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


@unittest.skipUnless(HAVE_GPU, "no CUDA device")
class CudaBackend(unittest.TestCase):
    def test_every_collective_against_gloo(self):
        run_ranks(WORLD, collectives, timeout_s=180, start_method="spawn")

    def test_ddp_reproduces_gloo(self):
        run_ranks(WORLD, ddp, timeout_s=180, start_method="spawn")


if __name__ == "__main__":
    unittest.main()
