# The two commands of the README: `make run` and `make test`. Each prints one line per stage;
# what apt, pip, cmake and the compiler say goes to $(LOG).
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
CTEST_ARGS ?=
# `make test BUILD_TARGETS="..." CTEST_ARGS="-R ..."` builds and runs a part of the suite.
BUILD_TARGETS ?=
# The Python tests and plots run in this virtual environment (tools/install_python_deps.sh).
VENV ?= $(BUILD)/venv
LOG ?= $(BUILD)/make.log
STAGE := tools/stage.sh $(LOG)

ifeq ($(BRAID_SKIP_PYTHON_DEPS),1)
PYTHON_FLAGS :=
else
PYTHON_FLAGS := -DPython3_EXECUTABLE=$(abspath $(VENV))/bin/python
endif

.PHONY: run test bench build configure deps deps-run python-deps install clean gpu-kit

# Builds only what it runs: braidrun and braid-perf (and the library under them).
run: deps-run
	@$(STAGE) "configuring $(BUILD)" cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)
	@$(STAGE) "building braidrun and braid-perf" cmake --build $(BUILD) -j $(JOBS) --target braidrun braid-perf
	BRAID_TRANSPORT=shm $(BUILD)/tools/braidrun -n 4 -- \
	  $(BUILD)/perf/braid-perf allreduce -b 8 -e 64M -f 4 -c 1 -n 10 -w 2

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) --timeout 600 $(CTEST_ARGS)

# Microbenchmarks of the host kernels (needs Google Benchmark: libbenchmark-dev).
bench: build
	@test -x $(BUILD)/perf/braid-microbench || \
	  { echo "braid-microbench was not built: Google Benchmark (libbenchmark-dev) is missing"; exit 1; }
	$(BUILD)/perf/braid-microbench --benchmark_min_time=0.05 $(BENCH_ARGS)

build: configure
	@$(STAGE) "building $(or $(BUILD_TARGETS),everything (tests included))" \
	  cmake --build $(BUILD) -j $(JOBS) $(if $(BUILD_TARGETS),--target $(BUILD_TARGETS))

configure: deps python-deps
	@$(STAGE) "configuring $(BUILD)" cmake -S . -B $(BUILD) -G Ninja $(PYTHON_FLAGS) $(CMAKE_FLAGS)

deps-run:
	@$(STAGE) "Debian packages for make run" tools/install_deps.sh run

deps:
	@$(STAGE) "Debian packages for make test" tools/install_deps.sh test

# BRAID_SKIP_PYTHON_DEPS=1 leaves the environment out: the Python tests are then skipped.
python-deps: deps
ifneq ($(BRAID_SKIP_PYTHON_DEPS),1)
	@$(STAGE) "Python packages in $(VENV)" tools/install_python_deps.sh $(VENV)
endif

# The GPU proof kit (gpu-kit/, <= 60 MiB): a Release CUDA build of only what the kit runs, packed
# with its libraries and gpu-kit/run, for a GPU machine that builds nothing (README: "Proving
# it on a GPU"). Needs nvcc and nccl.h; the PyTorch extension is added when torch is importable,
# nccl-tests (built against NCCL's header, linked to braid's libnccl.so.2) when its source is in
# NCCL_TESTS_SRC (git clone https://github.com/NVIDIA/nccl-tests third_party/nccl-tests).
KIT_BUILD ?= build-kit
NCCL_TESTS_SRC ?= third_party/nccl-tests
KIT_TARGETS = braid braid_cuda braid_nccl braid-perf braid-nccl-compare d2d_copy_bandwidth \
  device_executor_gpu_test device_group_gpu_test device_api_gpu_test graph_capture_gpu_test \
  device_buffer_test ipc_group_test cuda_p2p_gpu_test device_proxy_gpu_test device_proxy_p2p_gpu_test
KIT_LAUNCHER = $(if $(shell command -v ccache),-DCMAKE_C_COMPILER_LAUNCHER=ccache \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
gpu-kit: deps
	cmake -S . -B $(KIT_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DBRAID_WITH_CUDA=ON -DBRAID_WITH_MPI=OFF \
	  $(KIT_LAUNCHER) $(CMAKE_FLAGS)
	cmake --build $(KIT_BUILD) -j $(JOBS) --target $(KIT_TARGETS)
	@if python3 -c "import torch, setuptools" 2>/dev/null; then \
	  mkdir -p $(KIT_BUILD)/python && cd bindings/python && MAX_JOBS=$(JOBS) BRAID_LIBRARY_DIR=$(CURDIR)/$(KIT_BUILD)/src \
	    python3 setup.py -q egg_info --egg-base $(CURDIR)/$(KIT_BUILD)/python \
	    build --build-base $(CURDIR)/$(KIT_BUILD)/python/setup \
	    --build-lib $(CURDIR)/$(KIT_BUILD)/python/lib --build-temp $(CURDIR)/$(KIT_BUILD)/python/obj; \
	else echo "gpu-kit: python3 lacks torch: the kit will skip its PyTorch check"; fi
	@rm -rf $(KIT_BUILD)/nccl-tests/bin
	@if [ -f $(NCCL_TESTS_SRC)/src/Makefile ]; then \
	  JOBS=$(JOBS) tools/gpu_kit/build_nccl_tests $(NCCL_TESTS_SRC) \
	    $(KIT_BUILD)/bindings/nccl/libnccl.so.2 $(KIT_BUILD)/nccl-tests; \
	else echo "gpu-kit: no nccl-tests source in $(NCCL_TESTS_SRC) (git clone" \
	  "https://github.com/NVIDIA/nccl-tests $(NCCL_TESTS_SRC)): the kit will skip check 11"; fi
	tools/gpu_kit/pack $(KIT_BUILD) gpu-kit --python-lib-if-built $(KIT_BUILD)/python/lib \
	  --nccl-tests-if-built $(KIT_BUILD)/nccl-tests/bin

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD)
