# The fuzz targets: one line each. braid_fuzz_target(<name> <library sources...>) builds
# tests/fuzz/<name>_fuzz.cc against the listed sources (paths from the repository root;
# sources listed by several targets are compiled once) and registers the ctest fuzz_<name>,
# which runs it from the seed corpus tests/fuzz/corpus/<name>/ (if any) for
# BRAID_FUZZ_SECONDS. Targets must reach only pure code: no sockets, threads or files.
# Every target links libcrypto (bootstrap/crypto.h).
braid_fuzz_target(bootstrap_frames bootstrap/wire.cc bootstrap/handshake.cc
                  bootstrap/crypto.cc bootstrap/unique_id.cc core/status.cc)
braid_fuzz_target(unique_id bootstrap/unique_id.cc bootstrap/crypto.cc core/status.cc)
braid_fuzz_target(topology_file topology/topo_file.cc topology/graph.cc core/status.cc)
