#!/usr/bin/env python3
"""PyTorch's own NCCL backend on braid's libnccl.so.2 (the GPU kit's check 12).

    nccl_ddp.py train --backend nccl|gloo --out FILE    under torchrun, 2 ranks on GPU 0
    nccl_ddp.py compare NCCL_FILE GLOO_FILE             the two runs' weights agree
    nccl_ddp.py which-nccl DROPIN                       this process's NCCL is DROPIN
                                                        (exit 77: torch without CUDA)

PyTorch loads its own libnccl.so.2 by path when it is imported (torch/__init__.py preloads the
nvidia-nccl wheel's), so LD_LIBRARY_PATH does not replace it; LD_PRELOAD of the drop-in does:
the preloaded library comes first in the global symbol scope, and libtorch_cuda.so's nccl*
calls bind to it. `which-nccl` and `train --backend nccl` prove it from inside the process:
the address ncclGetVersion resolves to must lie in DROPIN ($BRAID_NCCL_DROPIN for train), and
the version it reports must be the drop-in's.

`train` runs a few DDP steps of a small MLP, each rank on different data, and writes the final
weights; the nccl run keeps its tensors on cuda:0, the gloo run on the CPU. `compare` fails
when the weights differ by more than float rounding, or when a run's replicas differ.
"""
import argparse
import ctypes
import os
import sys

STEPS = 5
DROPIN_VERSION = 23203  # what braid's libnccl.so.2 reports (BRAID_NCCL_VERSION, bindings/nccl)


class DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def nccl_in_process():
    """(the file ncclGetVersion resolves to in the global scope, the version it reports)."""
    process = ctypes.CDLL(None)
    try:
        get_version = process.ncclGetVersion
    except AttributeError:
        return None, None
    info = DlInfo()
    libc = ctypes.CDLL("libc.so.6")
    libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
    address = ctypes.cast(get_version, ctypes.c_void_p).value
    if not libc.dladdr(address, ctypes.byref(info)) or not info.dli_fname:
        return None, None
    version = ctypes.c_int(0)
    get_version.argtypes = [ctypes.POINTER(ctypes.c_int)]
    get_version(ctypes.byref(version))
    return os.path.realpath(info.dli_fname.decode()), version.value


def check_nccl_is(dropin):
    """None when this process's NCCL is the drop-in, else a sentence saying which it is."""
    path, version = nccl_in_process()
    want = os.path.realpath(dropin)
    if path is None:
        return "ncclGetVersion is not loaded in this process"
    if path != want or version != DROPIN_VERSION:
        return (f"ncclGetVersion resolves to {path} (version {version}), not braid's drop-in "
                f"{want} (version {DROPIN_VERSION})")
    return None


def which_nccl(args):
    import torch  # the point: torch's own loading of NCCL must not win over the preload
    if torch.version.cuda is None:
        print(f"which-nccl: skipped: torch {torch.__version__} is built without CUDA, so it "
              "loads no NCCL to replace")
        sys.exit(77)
    error = check_nccl_is(args.dropin)
    if error:
        sys.exit(f"which-nccl: {error}")
    print(f"which-nccl: torch {torch.__version__} (CUDA {torch.version.cuda}) binds NCCL to "
          f"{os.path.realpath(args.dropin)}")


def train(args):
    import torch
    import torch.distributed as dist
    cuda = args.backend == "nccl"
    if cuda:
        torch.cuda.set_device(0)  # both ranks share the one GPU: braid allows it, NCCL does not
    device = torch.device("cuda:0" if cuda else "cpu")
    dist.init_process_group(backend=args.backend)
    rank, size = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 4)).to(device)
    ddp = torch.nn.parallel.DistributedDataParallel(model, device_ids=[0] if cuda else None)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for step in range(STEPS):
        # Different data on each rank, so a gradient that was not averaged shows in the weights.
        generator = torch.Generator().manual_seed(1000 * step + 17 * rank)
        x = torch.randn(16, 32, generator=generator) * (1 + rank)
        y = torch.randn(16, 4, generator=generator)
        loss = (ddp(x.to(device)) - y.to(device)).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    weights = torch.cat([p.detach().flatten() for p in model.parameters()]).cpu()
    gathered = [torch.empty_like(weights).to(device) for _ in range(size)]
    dist.all_gather(gathered, weights.to(device))
    if cuda:
        error = check_nccl_is(os.environ["BRAID_NCCL_DROPIN"])
        if error:
            sys.exit(f"rank {rank}: {error}")
    if rank == 0:
        torch.save({"weights": weights, "replicas": [g.cpu() for g in gathered],
                    "size": size}, args.out)
        print(f"{args.backend}: {size} ranks, {STEPS} DDP steps, weights in {args.out}")
    dist.destroy_process_group()


def compare(args):
    import torch
    runs = {name: torch.load(path) for name, path in (("nccl", args.nccl), ("gloo", args.gloo))}
    for name, run in runs.items():
        if run["size"] != 2:
            sys.exit(f"compare: the {name} run had {run['size']} ranks, not 2")
        for i, replica in enumerate(run["replicas"]):
            if not torch.equal(replica, run["weights"]):
                sys.exit(f"compare: in the {name} run, rank {i}'s weights differ from rank 0's")
    a, b = runs["nccl"]["weights"], runs["gloo"]["weights"]
    difference = (a - b).abs().max().item()
    # GPU and CPU kernels round differently; a lost or doubled gradient moves weights by ~1e-2.
    if not torch.allclose(a, b, rtol=1e-4, atol=1e-5):
        sys.exit(f"compare: NCCL-on-braid and gloo weights differ by up to {difference:.3g}")
    print(f"compare: NCCL-on-braid and gloo agree after {STEPS} DDP steps "
          f"(max |difference| {difference:.3g} over {a.numel()} weights)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("train")
    p.add_argument("--backend", choices=["nccl", "gloo"], required=True)
    p.add_argument("--out", required=True)
    p = commands.add_parser("compare")
    p.add_argument("nccl")
    p.add_argument("gloo")
    p = commands.add_parser("which-nccl")
    p.add_argument("dropin")
    args = parser.parse_args()
    {"train": train, "compare": compare, "which-nccl": which_nccl}[args.command](args)


if __name__ == "__main__":
    main()
