#!/usr/bin/env python3
"""End-to-end checks of braidrun, driving rank_probe as the ranks.

Each case is one ctest test:  braidrun_test.py --braidrun B --probe P CASE.
A case raises AssertionError (exit 1) with what it saw when braidrun misbehaves.
Processes are found by a unique marker on their command line and by pid files,
so a rank or grandchild left running is caught even when braidrun exits 0.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid

ENV_LINE = re.compile(r"probe pid=(\d+)((?: \w+=\S+)+)$")


class Job:
    """One braidrun invocation's outcome."""

    def __init__(self, returncode, stdout, stderr, elapsed):
        self.returncode, self.stdout, self.stderr, self.elapsed = (
            returncode, stdout, stderr, elapsed)

    def __str__(self):
        return (f"exit {self.returncode} after {self.elapsed:.2f}s\n"
                f"--- stdout ---\n{self.stdout}--- stderr ---\n{self.stderr}")


class Started:
    """A braidrun started in the background; its output goes to files, not pipes,
    so that a leaked grandchild holding them open cannot stall the test."""

    def __init__(self, argv, env=None):
        self.out = tempfile.TemporaryFile(mode="w+")
        self.err = tempfile.TemporaryFile(mode="w+")
        self.start = time.monotonic()
        self.proc = subprocess.Popen(argv, stdout=self.out, stderr=self.err, env=env,
                                     stdin=subprocess.DEVNULL, text=True)

    def wait(self, timeout=20):
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        elapsed = time.monotonic() - self.start
        texts = []
        for f in (self.out, self.err):
            f.seek(0)
            texts.append(f.read())
            f.close()
        return Job(self.proc.returncode, texts[0], texts[1], elapsed)


def run(argv, env=None, timeout=20):
    return Started(argv, env).wait(timeout)


def expect(condition, message, job=None):
    if not condition:
        raise AssertionError(message + ("\n" + str(job) if job is not None else ""))


def parse_env_lines(text):
    """Maps each 'probe pid=... NAME=VALUE...' line to a dict, keyed by BRAID_RANK."""
    by_rank = {}
    for line in text.splitlines():
        match = ENV_LINE.search(line)
        if not match:
            continue
        values = dict(item.split("=", 1) for item in match.group(2).split())
        values["pid"] = match.group(1)
        rank = values["BRAID_RANK"]
        expect(rank not in by_rank, f"rank {rank} printed its environment twice:\n{text}")
        by_rank[rank] = values
    return by_rank


def alive_with_marker(marker):
    """Pids of live (non-zombie) processes whose command line contains marker."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{entry}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found


def pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def expect_no_survivors(marker, pid_dir, expected_pid_files, job):
    """Every process of the job is gone (SIGKILL lands asynchronously, so allow 2 s)."""
    pids = []
    for name in os.listdir(pid_dir):
        if name.endswith(".pid"):
            with open(os.path.join(pid_dir, name)) as f:
                pids.append(int(f.read()))
    expect(len(pids) == expected_pid_files,
           f"expected {expected_pid_files} pid files, found {len(pids)}", job)
    deadline = time.monotonic() + 2
    while True:
        left = sorted(set(alive_with_marker(marker)) | {p for p in pids if pid_alive(p)})
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for pid in left:  # do not leak them into the next test, whatever happens
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    expect(not left, f"processes survived braidrun: {left}", job)


# --- cases --------------------------------------------------------------------


def case_env(a):
    nranks = 4
    env = dict(os.environ, BRAID_RANK="99", RANK="99", WORLD_SIZE="99", MASTER_PORT="1")
    argv = [a.braidrun, "-n", str(nranks), "-x", "BRAIDRUN_TEST_EXTRA=hello=world", "--",
            a.probe, "env", "show", "BRAIDRUN_TEST_EXTRA"]
    job = run(argv, env=env)
    expect(job.returncode == 0, "braidrun failed", job)
    ranks = parse_env_lines(job.stdout)
    expect(sorted(ranks) == [str(r) for r in range(nranks)],
           f"ranks seen: {sorted(ranks)}", job)
    first = ranks["0"]
    host, port = first["BRAID_ROOT"].rsplit(":", 1)
    expect(host == "127.0.0.1" and 0 < int(port) < 65536, "bad BRAID_ROOT", job)
    expect(re.fullmatch(r"[0-9a-f]{32}", first["BRAID_SECRET"]), "bad BRAID_SECRET", job)
    expect(re.fullmatch(r"[0-9a-f]{8}", first["BRAID_JOB_TAG"]), "bad BRAID_JOB_TAG", job)
    expect(first["MASTER_ADDR"] == "127.0.0.1", "bad MASTER_ADDR", job)
    expect(first["MASTER_PORT"] != port and first["MASTER_PORT"] != "1",
           "MASTER_PORT must be a fresh port distinct from BRAID_ROOT's", job)
    for rank, values in ranks.items():
        for name in ("BRAID_RANK", "BRAID_LOCAL_RANK", "RANK", "LOCAL_RANK"):
            expect(values[name] == rank, f"rank {rank}: {name}={values[name]}", job)
        for name in ("BRAID_NRANKS", "BRAID_LOCAL_SIZE", "WORLD_SIZE", "LOCAL_WORLD_SIZE"):
            expect(values[name] == str(nranks), f"rank {rank}: {name}={values[name]}", job)
        for name in ("BRAID_ROOT", "BRAID_SECRET", "BRAID_JOB_TAG", "MASTER_ADDR",
                     "MASTER_PORT"):
            expect(values[name] == first[name], f"rank {rank}: {name} differs from rank 0", job)
    for rank in range(nranks):
        expect(f"probe rank={rank} BRAIDRUN_TEST_EXTRA=hello=world" in job.stdout,
               f"rank {rank} did not get -x BRAIDRUN_TEST_EXTRA", job)
    # A second job must not reuse the first one's secret or tag.
    again = parse_env_lines(run(argv).stdout)["0"]
    expect(again["BRAID_SECRET"] != first["BRAID_SECRET"], "secret reused across jobs", job)
    expect(again["BRAID_JOB_TAG"] != first["BRAID_JOB_TAG"], "job tag reused across jobs", job)


def case_tag_output(a):
    nranks = 3
    job = run([a.braidrun, "--np", str(nranks), "--tag-output", a.probe, "env",
               "partial-lines", "unterminated"])
    expect(job.returncode == 0, "braidrun failed", job)
    for stream, text, want in (
            ("stdout", job.stdout, ["out-first-half out-second-half", "unterminated-last-line"]),
            ("stderr", job.stderr, ["err-first-half err-second-half"])):
        lines = text.splitlines()
        expect(text.endswith("\n"), f"{stream} does not end with a newline", job)
        per_rank = {str(r): [] for r in range(nranks)}
        for line in lines:
            match = re.fullmatch(r"\[(\d+)\] (.*)", line)
            expect(match and match.group(1) in per_rank, f"untagged {stream} line: {line!r}",
                   job)
            per_rank[match.group(1)].append(match.group(2))
        for rank, got in per_rank.items():
            rest = [line for line in got if not line.startswith("probe pid=")]
            expect(rest == want, f"rank {rank} {stream}: {rest} instead of {want}", job)
            for line in got:  # the tag belongs to the rank that wrote the line
                if line.startswith("probe pid="):
                    expect(f" BRAID_RANK={rank} " in line, f"[{rank}] on {line!r}", job)
    expect(len(parse_env_lines(job.stdout)) == nranks, "env lines missing", job)


def case_rank_fails(a):
    marker = "braidrun-test-" + uuid.uuid4().hex
    with tempfile.TemporaryDirectory() as pid_dir:
        # Every rank and its grandchild write a pid file; rank 2 fails once all
        # eight exist, the others would sleep for 30 s.
        job = run([a.braidrun, "-n", "4", a.probe, "marker", marker, "env", "shm",
                   "pidfile", pid_dir, "child", pid_dir, "wait-files", pid_dir, "8",
                   "exit-on", "2", "3", "sleep", "30"])
        expect(job.returncode == 3, "exit status should be rank 2's", job)
        expect("braidrun: rank 2 exited with status 3" in job.stderr, "no failure report", job)
        expect(job.elapsed < 5, "braidrun took too long to stop the job", job)
        expect_no_survivors(marker, pid_dir, 8, job)
    tags = {values["BRAID_JOB_TAG"] for values in parse_env_lines(job.stdout).values()}
    expect(len(tags) == 1, f"job tags: {tags}", job)
    prefix = "braid-" + tags.pop()
    leftovers = [name for name in os.listdir("/dev/shm") if name.startswith(prefix)]
    expect(not leftovers, f"shm segments left behind: {leftovers}", job)


def case_rank_killed(a):
    job = run([a.braidrun, "-n", "3", a.probe, "signal-on", "1", "9", "sleep", "30"])
    expect(job.returncode == 128 + 9, "exit status should be 128+SIGKILL", job)
    expect("braidrun: rank 1 was killed by signal 9" in job.stderr, "no failure report", job)
    expect(job.elapsed < 5, "braidrun took too long to stop the job", job)


def case_timeout(a):
    marker = "braidrun-test-" + uuid.uuid4().hex
    with tempfile.TemporaryDirectory() as pid_dir:
        # 1 s leaves the ranks time to write their pid files on a busy machine.
        job = run([a.braidrun, "-n", "3", "--timeout", "1", a.probe, "marker", marker,
                   "pidfile", pid_dir, "child", pid_dir, "sleep", "30"])
        expect(job.returncode == 124, "timeout should exit 124", job)
        expect("timed out after 1 s" in job.stderr, "no timeout report", job)
        expect(0.95 < job.elapsed < 4.5, "timeout fired at the wrong time", job)
        expect_no_survivors(marker, pid_dir, 6, job)


def case_sigkill_escalation(a):
    marker = "braidrun-test-" + uuid.uuid4().hex
    with tempfile.TemporaryDirectory() as pid_dir:
        # Rank 1 ignores SIGTERM, so only the SIGKILL after the grace period ends it.
        job = run([a.braidrun, "-n", "2", a.probe, "marker", marker, "ignore-term", "pidfile",
                   pid_dir, "wait-files", pid_dir, "2", "exit-on", "0", "5", "sleep", "30"])
        expect(job.returncode == 5, "exit status should be rank 0's", job)
        expect("sending SIGKILL" in job.stderr, "no escalation report", job)
        expect(2.5 < job.elapsed < 7, "SIGKILL was not sent after the grace period", job)
        expect_no_survivors(marker, pid_dir, 2, job)


def case_forward_signal(a):
    marker = "braidrun-test-" + uuid.uuid4().hex
    with tempfile.TemporaryDirectory() as pid_dir:
        started = Started([a.braidrun, "-n", "2", a.probe, "marker", marker, "pidfile",
                           pid_dir, "child", pid_dir, "sleep", "30"])
        deadline = time.monotonic() + 10
        while len([n for n in os.listdir(pid_dir) if n.endswith(".pid")]) < 4:
            if time.monotonic() > deadline or started.proc.poll() is not None:
                expect(False, "ranks did not start", started.wait(timeout=0))
            time.sleep(0.02)
        sent = time.monotonic()
        started.proc.send_signal(signal.SIGTERM)
        job = started.wait(timeout=10)
        expect(job.returncode == 128 + signal.SIGTERM, "exit status should be 128+SIGTERM", job)
        expect("forwarding it to all ranks" in job.stderr, "no forwarding report", job)
        expect(time.monotonic() - sent < 2.5, "ranks were not stopped by the forwarded signal",
               job)
        expect_no_survivors(marker, pid_dir, 4, job)


def case_exec_fails(a):
    for program in ("/nonexistent/braidrun-no-such-program", "braidrun-no-such-program"):
        job = run([a.braidrun, "-n", "2", program])
        expect(job.returncode == 127, "a missing program should exit 127", job)
        expect(program in job.stderr, "the error should name the program", job)


def case_bad_np(a):
    with tempfile.TemporaryDirectory() as pid_dir:
        probe = [a.probe, "pidfile", pid_dir]
        for argv in (["-n", "0"], ["-n", "1025"], ["-n", "abc"], ["-n", "4x"], ["--np=-1"],
                     [], ["-n"]):
            job = run([a.braidrun] + argv + probe)
            expect(job.returncode == 2, f"{argv}: a usage error should exit 2", job)
            expect(re.search(r"-n|--np", job.stderr), f"{argv}: error should name -n", job)
            expect(job.stdout == "", f"{argv}: nothing should reach stdout", job)
        for argv in (["-n", "2", "--bogus"], ["-n", "2", "--timeout", "0"],
                     ["-n", "2", "-x", "NOEQUALS"]):
            job = run([a.braidrun] + argv + probe)
            expect(job.returncode == 2, f"{argv}: a usage error should exit 2", job)
        expect(os.listdir(pid_dir) == [], "a rank ran despite a bad command line")
    job = run([a.braidrun, "--help"])
    expect(job.returncode == 0 and job.stdout.startswith("usage: braidrun"), "--help", job)
    job = run([a.braidrun, "--version"])
    expect(job.returncode == 0 and re.fullmatch(r"braidrun \d+\.\d+\.\d+\n", job.stdout),
           "--version", job)


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--braidrun", required=True)
    parser.add_argument("--probe", required=True)
    parser.add_argument("case", choices=sorted(CASES) + ["all"])
    args = parser.parse_args()
    for name in sorted(CASES) if args.case == "all" else [args.case]:
        start = time.monotonic()
        CASES[name](args)
        print(f"ok {name} ({time.monotonic() - start:.2f}s)")


if __name__ == "__main__":
    sys.exit(main())
