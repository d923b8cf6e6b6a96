# The two commands of the README: `make run` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: run test bench build deps install clean

run: build
	BRAID_TRANSPORT=shm $(BUILD)/tools/braidrun -n 4 -- \
	  $(BUILD)/perf/braid-perf allreduce -b 8 -e 64M -f 4 -c 1 -n 10 -w 2

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) --timeout 600

# Microbenchmarks of the host kernels (needs Google Benchmark: libbenchmark-dev).
bench: build
	@test -x $(BUILD)/perf/braid-microbench || \
	  { echo "braid-microbench was not built: Google Benchmark (libbenchmark-dev) is missing"; exit 1; }
	$(BUILD)/perf/braid-microbench --benchmark_min_time=0.05 $(BENCH_ARGS)

build: deps
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

deps:
	@tools/install_deps.sh

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD)
