#!/usr/bin/env bash
# `cmake --install` yields a prefix that works wherever it is put, with the source and build
# trees out of reach:
#   - an outside C project links the shared and the static library through find_package(braid)
#     and through pkg-config (--static for the static one) and runs;
#   - the prefix is then moved, the source and build trees are hidden (a private mount namespace
#     with empty file systems mounted over them), and without LD_LIBRARY_PATH: braid-perf runs
#     alone and under braidrun, braid-sim lists and loads the installed reference machines,
#     braid-topo loads one, braid-train starts, the static consumers run.
#   install_test.sh SOURCE_DIR BUILD_DIR GENERATOR
# Exits 77 (skipped) where no mount namespace can be made.
set -euo pipefail

if [ "${1:-}" = "--hidden" ]; then  # phase 2, inside the mount namespace
  shift
  source_dir="$1" build_dir="$2" prefix="$3" work="$4"
  for dir in "$source_dir" "$build_dir"; do
    [ -d "$dir" ] && mount -t tmpfs braid-hidden "$dir"
  done
  [ ! -e "$source_dir/CMakeLists.txt" ] || { echo "the source tree is still visible"; exit 1; }
  unset LD_LIBRARY_PATH
  cd /
  bin="$prefix/bin"
  fail() { echo "FAILED: $*"; exit 1; }
  expect_status() {  # expect_status STATUS command...: runs it, output to $work/out
    local want="$1"; shift
    set +e; "$@" >"$work/out" 2>&1; local got=$?; set -e
    [ "$got" = "$want" ] || { cat "$work/out"; fail "$* exited $got, expected $want"; }
  }
  for program in braid-perf braid-sim braid-topo braid-train braidrun; do
    runpath=$(readelf -d "$bin/$program" | grep -E 'RUNPATH|RPATH' || true)
    case "$runpath" in
      *'$ORIGIN/../lib'*) ;;
      *) fail "$program's RUNPATH is not relative to it: '$runpath'" ;;
    esac
  done
  expect_status 0 "$bin/braid-perf" allreduce -b 8 -e 64K -f 8 -n 2 -w 1
  grep -q "Avg bus bandwidth" "$work/out" || { cat "$work/out"; fail "braid-perf alone printed no table"; }
  expect_status 0 "$bin/braidrun" -n 2 -- "$bin/braid-perf" allreduce -b 8 -e 64K -f 8 -n 2 -w 1
  expect_status 0 "$bin/braid-sim" --machine list
  grep -qx dgx_h100 "$work/out" || { cat "$work/out"; fail "braid-sim --machine list lacks dgx_h100"; }
  expect_status 0 "$bin/braid-sim" --machine dgx_h100 --gpus 8 --size 1M --collectives allreduce
  expect_status 2 "$bin/braid-sim" --machine no_such_machine
  grep -q "dgx_h100" "$work/out" || { cat "$work/out"; fail "braid-sim --machine bogus did not list the machines"; }
  expect_status 0 "$bin/braid-topo" --file "$prefix/share/braid/machines/dgx1.topo"
  expect_status 0 "$bin/braid-train" --help
  expect_status 0 "$work/consumer/consumer_static"
  expect_status 0 "$work/consumer_pc_static"
  echo "installed programs run from the moved prefix with the source tree hidden"
  exit 0
fi

source_dir="$(cd "$1" && pwd)" build_dir="$(cd "$2" && pwd)" generator="$3"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/braid-install.XXXXXX")"
trap 'rm -rf "$work"' EXIT
staged="$work/staged"
log="$work/log"
run() { "$@" >>"$log" 2>&1 || { cat "$log"; echo "FAILED: $*"; exit 1; }; }

run cmake --install "$build_dir" --prefix "$staged"
for f in include/braid.h lib/libbraid.so lib/libbraid.a lib/cmake/braid/braidConfig.cmake \
         lib/pkgconfig/braid.pc bin/braid-perf bin/braidrun bin/braid-sim bin/braid-topo \
         bin/braid-train share/braid/machines/dgx_h100.topo; do
  [ -e "$staged/$f" ] || { echo "FAILED: cmake --install did not install $f"; exit 1; }
done

# Outside C projects, built against the staged prefix.
run cmake -S "$here/consumer" -B "$work/consumer" -G "$generator" -DCMAKE_PREFIX_PATH="$staged"
run cmake --build "$work/consumer"
export PKG_CONFIG_PATH="$staged/lib/pkgconfig"
read -r -a shared_flags <<<"$(pkg-config --cflags --libs braid)"
run cc -std=c99 -Wall -Werror "$here/consumer/consumer.c" "${shared_flags[@]}" -o "$work/consumer_pc"
# --static: Libs.private must carry what libbraid.a needs; -Bstatic makes -lbraid the archive.
read -r -a static_flags <<<"$(pkg-config --static --cflags --libs braid |
                              sed 's/-lbraid\b/-Wl,-Bstatic -lbraid -Wl,-Bdynamic/')"
run cc -std=c99 -Wall -Werror "$here/consumer/consumer.c" "${static_flags[@]}" -o "$work/consumer_pc_static"
for program in consumer/consumer_static consumer_pc_static; do
  if readelf -d "$work/$program" | grep -q 'NEEDED.*libbraid'; then
    echo "FAILED: $program links libbraid.so, not the static library"; exit 1
  fi
done
run "$work/consumer/consumer"                                  # CMake's build RPATH
LD_LIBRARY_PATH="$staged/lib" run "$work/consumer_pc"          # as a pkg-config user runs it

# Move the prefix, then hide the trees it was built from.
mv "$staged" "$work/moved"
namespace=()
if unshare -m true 2>/dev/null; then
  namespace=(unshare -m)
elif unshare -rm true 2>/dev/null; then
  namespace=(unshare -rm)
else
  echo "no mount namespace available (unshare -m): the hidden-tree half is skipped"
  exit 77
fi
"${namespace[@]}" bash "$0" --hidden "$source_dir" "$build_dir" "$work/moved" "$work"
