# The two commands of the README: `make run` and `make test`.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: run test bench build deps install clean gpu-kit

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

# The GPU proof kit (gpu-kit/, <= 60 MiB): a Release CUDA build of only what the kit runs, packed
# with its libraries and gpu-kit/run, for a GPU machine that builds nothing (README: "Proving
# it on a GPU"). Needs nvcc and nccl.h; the PyTorch extension is added when torch is importable.
KIT_BUILD ?= build-kit
KIT_TARGETS = braid braid_cuda braid-perf braid-nccl-compare d2d_copy_bandwidth \
  device_executor_gpu_test device_group_gpu_test device_api_gpu_test graph_capture_gpu_test \
  device_buffer_test ipc_group_test cuda_p2p_gpu_test device_proxy_gpu_test device_proxy_p2p_gpu_test
KIT_LAUNCHER = $(if $(shell command -v ccache),-DCMAKE_C_COMPILER_LAUNCHER=ccache \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
gpu-kit: deps
	cmake -S . -B $(KIT_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DBRAID_WITH_CUDA=ON \
	  $(KIT_LAUNCHER) $(CMAKE_FLAGS)
	cmake --build $(KIT_BUILD) -j $(JOBS) --target $(KIT_TARGETS)
	@if python3 -c "import torch, setuptools" 2>/dev/null; then \
	  mkdir -p $(KIT_BUILD)/python && cd bindings/python && MAX_JOBS=$(JOBS) BRAID_LIBRARY_DIR=$(CURDIR)/$(KIT_BUILD)/src \
	    python3 setup.py -q egg_info --egg-base $(CURDIR)/$(KIT_BUILD)/python \
	    build --build-base $(CURDIR)/$(KIT_BUILD)/python/setup \
	    --build-lib $(CURDIR)/$(KIT_BUILD)/python/lib --build-temp $(CURDIR)/$(KIT_BUILD)/python/obj; \
	else echo "gpu-kit: python3 lacks torch: the kit will skip its PyTorch check"; fi
	tools/gpu_kit/pack $(KIT_BUILD) gpu-kit --python-lib-if-built $(KIT_BUILD)/python/lib

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD)
