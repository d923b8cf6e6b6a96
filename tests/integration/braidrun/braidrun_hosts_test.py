#!/usr/bin/env python3
"""End-to-end checks of braidrun's multi-host mode on one machine, without root.

The launcher template is `env BRAID_HOST_ID={host}`: it runs on this machine, but
braidrun cannot tell it from ssh, so everything multi-host is exercised: placement,
the variables on the launcher's command line, the root address, supervision
through the launcher's process, and braid itself, which takes BRAID_HOST_ID as the
rank's host (src/comm/host_identity.h) and so runs its multi-host paths (socket
transport, host-grouped rings, hierarchical algorithms) across the fake hosts.
Each case is one ctest test: braidrun_hosts_test.py --braidrun B --probe P --perf F CASE.
"""
import argparse
import os
import re
import signal
import socket
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from braidrun_test import Started, expect, expect_no_survivors, parse_env_lines, run  # noqa: E402

LOCAL_LAUNCHER = "env BRAID_HOST_ID={host}"


def multi_host(a, *options):
    """braidrun's argv up to the program, with the local launcher and a loopback root."""
    return [a.braidrun, "--launcher", LOCAL_LAUNCHER, "--root-addr", "127.0.0.1", *options, "--"]


def case_placement_and_env(a):
    argv = multi_host(a, "--hosts", "a:2,b:1", "--map-by", "node", "-x", "BRAID_TEST_EXTRA=hi",
                      "-x", "BRAIDRUN_TEST_PLAIN=kept")
    # BRAID_HOST_ID here names braidrun's host; it must not override the launcher's.
    env = dict(os.environ, BRAID_DEBUG_FILE="/dev/null", BRAIDRUN_TEST_PLAIN="ignored",
               BRAID_HOST_ID="head")
    job = run(argv + [a.probe, "env", "show", "BRAID_HOST_ID", "show", "BRAID_TEST_EXTRA",
                      "show", "BRAID_DEBUG_FILE", "show", "GROUP_RANK", "show",
                      "BRAIDRUN_TEST_PLAIN", "show", "BRAID_ROOT_FD"], env=env)
    expect(job.returncode == 0, "braidrun failed", job)
    ranks = parse_env_lines(job.stdout)
    expect(sorted(ranks) == ["0", "1", "2"], f"ranks seen: {sorted(ranks)}", job)
    # --map-by node deals ranks round robin: 0 and 2 on a, 1 on b.
    want = {"0": ("a", "0", "2", "0"), "1": ("b", "0", "1", "1"), "2": ("a", "1", "2", "0")}
    for rank, (host, local_rank, local_size, group) in want.items():
        values = ranks[rank]
        for name, value in (("BRAID_LOCAL_RANK", local_rank), ("LOCAL_RANK", local_rank),
                            ("BRAID_LOCAL_SIZE", local_size), ("LOCAL_WORLD_SIZE", local_size),
                            ("BRAID_NRANKS", "3"), ("WORLD_SIZE", "3")):
            expect(values[name] == value, f"rank {rank}: {name}={values[name]}, not {value}", job)
        for line in (f"probe rank={rank} BRAID_HOST_ID={host}",
                     f"probe rank={rank} BRAID_TEST_EXTRA=hi",
                     f"probe rank={rank} BRAID_DEBUG_FILE=/dev/null",  # BRAID_* travel along
                     f"probe rank={rank} GROUP_RANK={group}",
                     f"probe rank={rank} BRAIDRUN_TEST_PLAIN=kept",  # -x beats the inherited
                     f"probe rank={rank} BRAID_ROOT_FD=<unset>"):  # launched rank 0 binds
            expect(line in job.stdout, f"missing '{line}'", job)
        expect(values["BRAID_ROOT"].startswith("127.0.0.1:"), "BRAID_ROOT", job)
        expect(values["BRAID_ROOT"] == ranks["0"]["BRAID_ROOT"], "BRAID_ROOT differs", job)


def case_local_host_starts_directly(a):
    # Ranks of "localhost" start without the launcher; rank 0 inherits the root socket.
    job = run(multi_host(a, "--hosts", "localhost:1,b:1") +
              [a.probe, "env", "show", "BRAID_HOST_ID", "show", "BRAID_ROOT_FD"])
    expect(job.returncode == 0, "braidrun failed", job)
    expect("probe rank=0 BRAID_HOST_ID=<unset>" in job.stdout, "rank 0 went through", job)
    expect(re.search(r"probe rank=0 BRAID_ROOT_FD=\d+", job.stdout), "rank 0 has no root fd",
           job)
    expect("probe rank=1 BRAID_HOST_ID=b" in job.stdout, "rank 1 missed the launcher", job)
    expect("probe rank=1 BRAID_ROOT_FD=<unset>" in job.stdout, "rank 1 got the root fd", job)


def this_machines_address():
    """A non-loopback IPv4 address of this machine, or None (then the case has nothing to test)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("10.254.254.254", 9))  # sends nothing; picks the default route
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


def case_root_address_from_route(a):
    # Rank 0 runs here (localhost); the other "host" is this machine's own address, which
    # braidrun cannot tell from a remote one, so without --root-addr the root must be
    # advertised at the address of the route to it, and rank 1 must reach it there.
    address = this_machines_address()
    if address is None:
        print("skipped: no non-loopback address")
        return
    argv = [a.braidrun, "--hosts", f"localhost:1,{address}:1", "--launcher", LOCAL_LAUNCHER, "--"]
    job = run(argv + [a.probe, "env"])
    expect(job.returncode == 0, "braidrun failed", job)
    ranks = parse_env_lines(job.stdout)
    for rank in ("0", "1"):
        expect(ranks[rank]["BRAID_ROOT"].startswith(address + ":"),
               f"rank {rank}: BRAID_ROOT should be on {address}", job)
    job = run(argv + [a.perf, "allreduce", "-b", "8", "-e", "64K", "-f", "8", "-c", "1", "-n",
                      "1", "-w", "0"], timeout=60)
    expect(job.returncode == 0 and "Out of bounds values : 0 OK" in job.stdout,
           "ranks could not meet at the advertised root", job)


def case_launched_rank_fails(a):
    marker = "braidrun-test-" + uuid.uuid4().hex
    with tempfile.TemporaryDirectory() as pid_dir:
        job = run(multi_host(a, "--hosts", "a:2,b:2") +
                  [a.probe, "marker", marker, "pidfile", pid_dir, "child", pid_dir,
                   "wait-files", pid_dir, "8", "exit-on", "3", "4", "sleep", "30"])
        expect(job.returncode == 4, "exit status should be rank 3's", job)
        expect("braidrun: rank 3 (host b) exited with status 4" in job.stderr,
               "the report should name the rank and its host", job)
        expect(job.elapsed < 5, "braidrun took too long to stop the job", job)
        expect_no_survivors(marker, pid_dir, 8, job)


def case_forward_signal_through_launcher(a):
    marker = "braidrun-test-" + uuid.uuid4().hex
    with tempfile.TemporaryDirectory() as pid_dir:
        started = Started(multi_host(a, "--hosts", "a,b") +
                          [a.probe, "marker", marker, "pidfile", pid_dir, "sleep", "30"])
        deadline = time.monotonic() + 10
        while len([n for n in os.listdir(pid_dir) if n.endswith(".pid")]) < 2:
            if time.monotonic() > deadline or started.proc.poll() is not None:
                expect(False, "ranks did not start", started.wait(timeout=0))
            time.sleep(0.02)
        started.proc.send_signal(signal.SIGINT)
        job = started.wait(timeout=10)
        expect(job.returncode == 128 + signal.SIGINT, "exit status should be 128+SIGINT", job)
        expect_no_survivors(marker, pid_dir, 2, job)


def case_bad_input(a):
    with tempfile.TemporaryDirectory() as pid_dir:
        probe = [a.probe, "pidfile", pid_dir]
        for options, want in (
                (["--hosts", "a:x"], "needs a whole number of ranks"),
                (["--hosts", "a:2,,b"], "entry 2 is empty"),
                (["--hosts", "a b"], "may hold only letters"),
                (["-n", "5", "--hosts", "a:2,b:2"], "add up to 4 ranks, but -n asks for 5"),
                (["--hosts", "a", "--launcher", "ssh"], "does not contain {host}"),
                (["-n", "2", "--launcher", "ssh {host}"], "needs --hosts"),
                (["--hostfile", "/nonexistent/hosts"], "cannot read hostfile")):
            job = run([a.braidrun] + options + probe)
            expect(job.returncode == 2, f"{options}: a usage error should exit 2", job)
            expect(want in job.stderr, f"{options}: stderr should say '{want}'", job)
        # A launcher that does not exist: 127, before any rank runs.
        job = run([a.braidrun, "--hosts", "a", "--launcher", "braidrun-no-such-launcher {host}",
                   "--root-addr", "127.0.0.1"] + probe)
        expect(job.returncode == 127, "a missing launcher should exit 127", job)
        expect("braidrun-no-such-launcher" in job.stderr, "the error should name it", job)
        expect(os.listdir(pid_dir) == [], "a rank ran despite bad input")


def case_collectives_across_hosts(a):
    # Interleaved hosts (--map-by node): the host-grouped rings and the hierarchical
    # all-reduce run over TCP between the fake hosts; -c 1 makes any wrong result fatal.
    job = run(multi_host(a, "--hosts", "a:2,b:2", "--map-by", "node") +
              [a.perf, "all", "-b", "8", "-e", "1M", "-f", "32", "-c", "1", "-n", "1", "-w", "0"],
              timeout=120)
    expect(job.returncode == 0, "braid-perf failed across hosts", job)
    expect("Out of bounds values : 0 OK" in job.stdout, "results were wrong", job)


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--braidrun", required=True)
    parser.add_argument("--probe", required=True)
    parser.add_argument("--perf", required=True)
    parser.add_argument("case", choices=sorted(CASES) + ["all"])
    args = parser.parse_args()
    for name in sorted(CASES) if args.case == "all" else [args.case]:
        start = time.monotonic()
        CASES[name](args)
        print(f"ok {name} ({time.monotonic() - start:.2f}s)")


if __name__ == "__main__":
    sys.exit(main())
