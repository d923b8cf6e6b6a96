#!/usr/bin/env python3
"""The GPU kit's runner (tools/gpu_kit/run, packed as KIT/run), on a machine without a GPU.

    gpu_kit_test.py KIT

- --dry-run lists the 15 checks in the issue's priority order, and runs nothing;
- a plain run exits 0 with every check `skipped: no GPU` in gpu-report.md;
- with --assume-gpu and fake checks: a check that hangs (with a child of its own) is killed
  at its timeout, child included, and the run goes on; a check that crashes fails alone; a
  check past the budget is `not reached`; the report and the failed check's log are written;
  at most 8 files land in --out;
- bad arguments are refused with a message naming them.
Exit 77 (skipped) on a machine with a GPU, where the no-GPU half cannot be shown.
"""
import os
import subprocess
import sys
import tempfile
import time

EXPECTED_IDS = ["1", "2", "3a", "3b", "3c", "4a", "4b", "5", "6", "7", "8", "9", "10", "11",
                "12"]


def run(kit, *args, timeout=120):
    return subprocess.run([os.path.join(kit, "run"), *args], capture_output=True, text=True,
                          timeout=timeout)


def fail(msg, r=None):
    print("FAIL:", msg)
    if r is not None:
        print("--- stdout\n" + r.stdout + "\n--- stderr\n" + r.stderr)
    sys.exit(1)


def report_rows(out):
    with open(os.path.join(out, "gpu-report.md")) as f:
        rows = [l for l in f.read().splitlines() if l.startswith("| ") and not l.startswith("| check")]
    return {r.split("|")[1].strip(): [c.strip() for c in r.split("|")[1:-1]] for r in rows}


def main():
    kit = os.path.abspath(sys.argv[1])
    smi = subprocess.run(["sh", "-c", "nvidia-smi -L 2>/dev/null | grep -q '^GPU '"])
    if smi.returncode == 0:
        print("skipped: a GPU is present; the no-GPU behaviour cannot be tested here")
        return 77

    r = run(kit, "--dry-run")
    ids = [l.split("]")[0][1:] for l in r.stdout.splitlines() if l.startswith("[")]
    if r.returncode != 0 or ids != EXPECTED_IDS:
        fail(f"--dry-run listed {ids}, expected {EXPECTED_IDS}", r)
    for needle in ("bin/device_executor_gpu_test", "bin/braid-nccl-compare", "test_cuda_backend",
                   "nccl/all_reduce_perf", "lib/nccl/libnccl.so.2", "nccl/nccl_ddp.py"):
        if needle not in r.stdout:
            fail(f"--dry-run does not mention {needle}", r)

    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "plain")
        r = run(kit, "--out", out)
        if r.returncode != 0:
            fail(f"without a GPU run must exit 0, got {r.returncode}", r)
        skipped = [l for l in r.stdout.splitlines() if l.endswith("skipped: no GPU")]
        if len(skipped) != len(EXPECTED_IDS):
            fail(f"{len(skipped)} checks printed 'skipped: no GPU', expected {len(EXPECTED_IDS)}", r)
        rows = report_rows(out)
        if sorted(rows) != sorted(EXPECTED_IDS) or any(v[2] != "skipped" or v[4] != "no GPU"
                                                        for v in rows.values()):
            fail(f"gpu-report.md rows: {rows}")

        # Timeouts, crashes and the budget, with fake checks standing in for GPU programs.
        out = os.path.join(tmp, "fake")
        start = time.monotonic()
        r = run(kit, "--assume-gpu", "--only", "hang,crash,ok,late", "--budget", "15",
                "--out", out,
                "--extra-check", "hang:2:sleep 300 & echo child $!; sleep 300",
                "--extra-check", "crash:10:echo about to crash; kill -SEGV $$",
                "--extra-check", "ok:10:echo fine",
                "--extra-check", "late:100:sleep 30")
        took = time.monotonic() - start
        if took > 40:
            fail(f"the fake run took {took:.0f} s: a timeout or the budget was not enforced", r)
        if r.returncode != 1:
            fail(f"a run with failed checks must exit 1, got {r.returncode}", r)
        rows = report_rows(out)
        want = {"hang": "fail (timeout 2 s in 'extra')", "crash": "fail ('extra' killed by signal 11)",
                "ok": "pass"}
        for cid, status in want.items():
            if rows.get(cid, [None] * 3)[2] != status:
                fail(f"check {cid}: report says {rows.get(cid)}, expected '{status}'", r)
        if not rows["late"][2].startswith("fail (budget ran out"):
            fail(f"check late should have been cut by the 15 s budget: {rows['late']}", r)
        with open(os.path.join(out, "failed-logs.txt")) as f:
            logs = f.read()
        child = [l.split()[1] for l in logs.splitlines() if l.startswith("child ")]
        if "about to crash" not in logs or not child:
            fail("failed-logs.txt lacks the failed checks' output:\n" + logs)
        if os.path.exists(f"/proc/{child[0]}"):
            with open(f"/proc/{child[0]}/cmdline", "rb") as f:
                if b"sleep" in f.read():
                    fail(f"the hung check's child {child[0]} survived its timeout")
        files = os.listdir(out)
        if len(files) > 8 or "gpu-report.md" not in files:
            fail(f"--out holds {files}")

        # Past the budget: checks that would start with too little time left are not reached.
        out = os.path.join(tmp, "budget")
        r = run(kit, "--assume-gpu", "--only", "a,b", "--budget", "10", "--out", out,
                "--extra-check", "a:100:sleep 3", "--extra-check", "b:100:echo never")
        rows = report_rows(out)
        if rows["a"][2] != "pass" or rows["b"][2] != "not reached" or r.returncode != 0:
            fail(f"budget: {rows}", r)

    r = run(kit, "--budget", "-5")
    if r.returncode != 2 or "--budget" not in r.stderr:
        fail("a negative --budget must be refused naming it", r)
    r = run(kit, "--bogus")
    if r.returncode != 2 or "--bogus" not in r.stderr:
        fail("an unknown flag must be refused naming it", r)
    print("gpu kit runner: dry run, no-GPU run, timeouts, crashes and budget all behave")
    return 0


if __name__ == "__main__":
    sys.exit(main())
