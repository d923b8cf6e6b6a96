#!/usr/bin/env bash
# ctest fuzz_<name>: runs one libFuzzer target for BRAID_FUZZ_SECONDS (default 15) from its
# seed corpus. New inputs go to a scratch corpus under the build folder, never the source
# tree; a crash leaves its input as <bin>/crash-<name>-* and fails the test (reproduce with
# `<bin>/<name>_fuzz <that file>`). Exit 77 (skipped) when fuzz_build skipped.
# Usage: run_fuzzer.sh <build folder> <name> <seed corpus folder>
set -euo pipefail
bin=$1 name=$2 seeds=$3
if [[ -f $bin/SKIPPED ]]; then cat "$bin/SKIPPED"; exit 77; fi
fuzzer="$bin/${name}_fuzz"
[[ -x $fuzzer ]] || { echo "fuzz: $fuzzer was not built (did fuzz_build run?)"; exit 1; }

work="$bin/corpus-$name"
mkdir -p "$work"
seed_dirs=()
[[ -d $seeds ]] && seed_dirs=("$seeds")
set +e
"$fuzzer" -max_total_time="${BRAID_FUZZ_SECONDS:-15}" -timeout=10 -rss_limit_mb=2048 \
  -max_len=65536 -print_final_stats=1 -artifact_prefix="$bin/crash-$name-" \
  "$work" "${seed_dirs[@]}" > "$work.log" 2>&1
rc=$?
set -e
# The progress lines are noise; the stats and any crash report are what matter.
grep -v -E '^#[0-9]+.*(NEW|REDUCE|pulse|RELOAD)' "$work.log" | tail -n 60
exit $rc
