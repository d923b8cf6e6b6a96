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

.PHONY: run test bench build configure deps deps-run python-deps install clean

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

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD)
