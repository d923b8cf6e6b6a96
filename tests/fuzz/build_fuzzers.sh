#!/usr/bin/env bash
# ctest fuzz_build: builds every target of targets.cmake with clang's libFuzzer into <bin>.
# Exit 77 (ctest: skipped) when no clang can link a libFuzzer program, e.g. without
# libclang-rt-<version>-dev; the fuzz_<name> tests then skip too (they look for <bin>/SKIPPED).
# Usage: build_fuzzers.sh <tests/fuzz source folder> <build folder>
set -euo pipefail
src=$1 bin=$2
mkdir -p "$bin"
rm -f "$bin/SKIPPED"

skip() { echo "fuzz: $1; skipping the fuzz tests" | tee "$bin/SKIPPED"; exit 77; }

cxx=${BRAID_FUZZ_CXX:-}
if [[ -z $cxx ]]; then
  for candidate in clang++ clang++-18 clang++-17 clang++-16 clang++-15 clang++-14; do
    if command -v "$candidate" > /dev/null; then cxx=$(command -v "$candidate"); break; fi
  done
fi
[[ -n $cxx ]] || skip "no clang++ found (set BRAID_FUZZ_CXX)"

probe="$bin/probe"
printf '%s\n' '#include <cstdint>' '#include <cstddef>' \
  'extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }' > "$probe.cc"
"$cxx" -fsanitize=fuzzer,address,undefined "$probe.cc" -o "$probe" 2> "$probe.log" ||
  skip "$cxx cannot link -fsanitize=fuzzer,address,undefined (see $probe.log)"

generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
cmake -S "$src" -B "$bin" "${generator[@]}" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$bin/configure.log" ||
  { cat "$bin/configure.log"; exit 1; }
cmake --build "$bin" -j "${BRAID_FUZZ_JOBS:-2}"
