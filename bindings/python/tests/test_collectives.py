"""Every c10d collective on backend braid against gloo's result on the same inputs.

Each rank builds its inputs from a seeded generator, runs the collective once on the braid
default group and once on a gloo group over the same ranks, and requires equal results
(exactly for integers; within rounding for floating point, whose summation order differs
between the two libraries). One forked job per world size runs all the cases, naming the
case in any failure.
"""
import pytest
import torch
import torch.distributed as dist

from harness import run_ranks

REDUCE_OPS = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX]
DTYPES = [torch.float32, torch.float64, torch.int32, torch.int64, torch.uint8]


def make(shape, dtype, rank, salt=0):
    """Deterministic per-rank input; small integers keep products and sums exact."""
    g = torch.Generator().manual_seed(1000 * rank + salt)
    return torch.randint(1, 4, shape, generator=g).to(dtype)


def both(ref, fn):
    """fn(group) on braid (the default group) and on the gloo reference group."""
    return fn(None), fn(ref)


def check(case, got, want):
    try:
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    except AssertionError as e:
        raise AssertionError(f"{case}: braid differs from gloo on rank {dist.get_rank()}") from e


def all_reduce_cases(rank, world, ref):
    for dtype in DTYPES:
        for op in REDUCE_OPS:
            def run(group, dtype=dtype, op=op):
                t = make((37,), dtype, rank)
                dist.all_reduce(t, op=op, group=group)
                return t
            check(f"all_reduce {op} {dtype}", *both(ref, run))
    # AVG (gloo has none): compare with gloo's SUM divided by the world size.
    t = make((33,), torch.float32, rank)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    s = make((33,), torch.float32, rank)
    dist.all_reduce(s, group=ref)
    check("all_reduce AVG", t, s / world)
    # Half precision: braid reduces in fp32; gloo's fp32 result, rounded, is the reference.
    for dtype in (torch.float16, torch.bfloat16):
        t = make((40,), dtype, rank)
        dist.all_reduce(t)
        s = make((40,), torch.float32, rank)
        dist.all_reduce(s, group=ref)
        check(f"all_reduce SUM {dtype}", t, s.to(dtype))
    # fp8 (torch.float8_e4m3fn / float8_e5m2, braid's e4m3 / e5m2): each step rounds once from
    # fp32. Sums of these small integers stay exact in e4m3 (every integer up to 16); e5m2
    # keeps two mantissa bits, so it is compared within its rounding.
    for dtype, rtol in ((torch.float8_e4m3fn, 0.0), (torch.float8_e5m2, 0.25)):
        t = make((40,), torch.float32, rank).to(dtype)
        dist.all_reduce(t)
        s = make((40,), torch.float32, rank)
        dist.all_reduce(s, group=ref)
        torch.testing.assert_close(t.float(), s, rtol=rtol, atol=0.0,
                                   msg=f"all_reduce SUM {dtype} on rank {rank}")
    # A non-contiguous tensor and an empty one.
    def strided(group):
        t = make((6, 5), torch.float32, rank).t()
        dist.all_reduce(t, group=group)
        return t
    check("all_reduce non-contiguous", *both(ref, strided))
    empty = torch.empty(0)
    dist.all_reduce(empty)
    # Coalesced all-reduce (the coalescing manager's fast path: allreduce_coalesced).
    def coalesced(group):
        ts = [make((n,), torch.float32, rank, n) for n in (3, 17, 1)]
        with dist._coalescing_manager(group=group, async_ops=True) as cm:
            for t in ts:
                dist.all_reduce(t, group=group)
        cm.wait()
        return ts
    check("allreduce_coalesced", *both(ref, coalesced))


def movement_cases(rank, world, ref):
    for root in range(world):
        def bcast(group, root=root):
            t = make((5, 3), torch.float64, rank, root)
            dist.broadcast(t, src=root, group=group)
            return t
        check(f"broadcast root {root}", *both(ref, bcast))

        def reduce(group, root=root):
            t = make((11,), torch.int64, rank, root)
            dist.reduce(t, dst=root, group=group)
            return t if rank == root else None
        check(f"reduce root {root}", *both(ref, reduce))

        def gather(group, root=root):
            t = make((4,), torch.int32, rank, root)
            out = [torch.zeros(4, dtype=torch.int32) for _ in range(world)] if rank == root else None
            dist.gather(t, out, dst=root, group=group)
            return out
        check(f"gather root {root}", *both(ref, gather))

        def scatter(group, root=root):
            parts = [make((3, 2), torch.float32, r, root) for r in range(world)]
            out = torch.zeros(3, 2)
            dist.scatter(out, parts if rank == root else None, src=root, group=group)
            return out
        check(f"scatter root {root}", *both(ref, scatter))

    def all_gather(group):
        out = [torch.zeros(2, 3, dtype=torch.bool) for _ in range(world)]
        dist.all_gather(out, make((2, 3), torch.int32, rank) > 1, group=group)
        return out
    check("all_gather (bool)", *both(ref, all_gather))

    def all_gather_into_tensor(group):
        out = torch.zeros(world * 7, dtype=torch.float16)
        dist.all_gather_into_tensor(out, make((7,), torch.float16, rank), group=group)
        return out
    check("all_gather_into_tensor", *both(ref, all_gather_into_tensor))

    def all_gather_coalesced(group):
        outs, works = [], []
        with dist._coalescing_manager(group=group, async_ops=True) as cm:
            for n in (5, 1, 9):
                out = torch.zeros(world * n)
                dist.all_gather_into_tensor(out, make((n,), torch.float32, rank, n), group=group)
                outs.append(out)
        cm.wait()
        return outs
    check("allgather_into_tensor_coalesced", *both(ref, all_gather_coalesced))

    def reduce_scatter(group):
        out = torch.zeros(6, dtype=torch.int64)
        parts = [make((6,), torch.int64, rank, r) for r in range(world)]
        dist.reduce_scatter(out, parts, op=dist.ReduceOp.MAX, group=group)
        return out
    check("reduce_scatter", *both(ref, reduce_scatter))

    def reduce_scatter_tensor(group):
        out = torch.zeros(5)
        dist.reduce_scatter_tensor(out, make((5 * world,), torch.float32, rank), group=group)
        return out
    check("reduce_scatter_tensor", *both(ref, reduce_scatter_tensor))

    def reduce_scatter_coalesced(group):
        outs = []
        with dist._coalescing_manager(group=group, async_ops=True) as cm:
            for n in (2, 8):
                out = torch.zeros(n)
                dist.reduce_scatter_tensor(out, make((n * world,), torch.float32, rank, n),
                                           group=group)
                outs.append(out)
        cm.wait()
        return outs
    check("reduce_scatter_tensor_coalesced", *both(ref, reduce_scatter_coalesced))


def all_to_all_cases(rank, world, ref):
    def equal_split(group):
        out = torch.zeros(world * 3, 2)
        dist.all_to_all_single(out, make((world * 3, 2), torch.float32, rank), group=group)
        return out
    check("all_to_all_single", *both(ref, equal_split))

    # Rank r sends (r + p) % 3 + 1 rows to peer p; it receives (p + r) % 3 + 1 from peer p.
    in_splits = [(rank + p) % 3 + 1 for p in range(world)]
    out_splits = [(p + rank) % 3 + 1 for p in range(world)]

    def uneven(group):
        out = torch.zeros(sum(out_splits), 4, dtype=torch.int64)
        data = make((sum(in_splits), 4), torch.int64, rank)
        dist.all_to_all_single(out, data, out_splits, in_splits, group=group)
        return out
    check("all_to_all_single with splits", *both(ref, uneven))

    def lists(group):
        ins = [make((3,), torch.float32, rank, p) for p in range(world)]  # gloo: equal sizes
        outs = [torch.zeros(3) for _ in range(world)]
        dist.all_to_all(outs, ins, group=group)
        return outs
    check("all_to_all (lists)", *both(ref, lists))


def point_to_point_cases(rank, world, ref):
    right, left = (rank + 1) % world, (rank - 1) % world

    def ring_batch(group):
        out = torch.zeros(1000)
        ops = [dist.P2POp(dist.isend, make((1000,), torch.float32, rank), right, group),
               dist.P2POp(dist.irecv, out, left, group)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        return out
    check("batch_isend_irecv ring", *both(ref, ring_batch))

    def blocking(group):
        # Even ranks send first, odd ranks receive first: no rank waits on a waiting peer.
        out = torch.zeros(3, dtype=torch.int64)
        msg = make((3,), torch.int64, rank)
        if rank % 2 == 0:
            dist.send(msg, right, group=group)
            dist.recv(out, left, group=group)
        else:
            dist.recv(out, left, group=group)
            dist.send(msg, right, group=group)
        return out
    if world % 2 == 0:
        check("send/recv", *both(ref, blocking))

    dist.barrier()


def future_cases(rank, world, ref):
    t = make((8,), torch.float32, rank)
    work = dist.all_reduce(t, async_op=True)
    (result,) = work.get_future().wait()
    want = make((8,), torch.float32, rank)
    dist.all_reduce(want, group=ref)
    check("get_future() value", result, want)
    assert work.is_completed() and work.is_success()


def error_cases(rank, world, ref):
    t = torch.ones(4, dtype=torch.int32)
    with pytest.raises(Exception, match="does not support ReduceOp"):
        dist.all_reduce(t, op=dist.ReduceOp.BAND)
    with pytest.raises(Exception, match="cannot reduce tensors of dtype"):
        dist.all_reduce(torch.ones(2, dtype=torch.int16))
    with pytest.raises(Exception, match="expects 1 output tensors|expects .* output tensors"):
        dist.all_gather([torch.zeros(4)] * (world + 1), torch.zeros(4))
    # Errors raised before queueing leave every rank in step: this still works.
    dist.all_reduce(t)
    assert t.tolist() == [world] * 4


def subgroup_cases(rank, world, ref):
    members = [r for r in range(world) if r % 2 == 0]
    group = dist.new_group(members)  # a fresh braid communicator over the members
    if rank in members:
        t = torch.tensor([float(rank)])
        dist.all_reduce(t, group=group)
        assert t.item() == float(sum(members)), f"new_group sum on rank {rank}: {t.item()}"
    halves = [list(range(world // 2)), list(range(world // 2, world))]
    split = dist.split_group(split_ranks=halves)  # braidCommSplit of the default group
    mine = halves[0] if rank < world // 2 else halves[1]
    t = torch.tensor([rank + 1])
    dist.all_reduce(t, group=split)
    assert t.item() == sum(r + 1 for r in mine), f"split_group sum on rank {rank}: {t.item()}"
    assert dist.get_process_group_ranks(split) == mine


def all_cases(rank, world):
    ref = dist.new_group(backend="gloo")
    for cases in (all_reduce_cases, movement_cases, all_to_all_cases, point_to_point_cases,
                  future_cases, error_cases, subgroup_cases):
        cases(rank, world, ref)


@pytest.mark.parametrize("world", [2, 3, 4])
def test_collectives_match_gloo(world):
    run_ranks(world, all_cases)


def split_new_group(rank, world):
    import braid.torch

    members = [0, 2]
    group = dist.new_group(members)  # every rank takes part in the split; rank 1 as NOCOLOR
    assert braid.torch.groups_created == {"rendezvous": 1, "split": 1 if rank in members else 0}
    if rank in members:
        t = torch.tensor([rank + 1.0])
        dist.all_reduce(t, group=group)
        assert t.item() == 4.0
    dist.barrier()


def test_new_group_splits_a_device_bound_default_group():
    run_ranks(3, split_new_group, device_id=torch.device("cpu", 0))
