# ctest driver (cmake -P) for braid-perf --memory device (-D PERF=<braid-perf>).
# With a usable GPU the small sweep must pass its own #wrong checks (exit 0). Without one
# braid-perf must fail cleanly: exit 1 and one sentence saying there is no usable CUDA
# device — not a crash, a hang or a usage error. Either way, -t > 1 with host memory is a
# usage error naming the flag.
execute_process(COMMAND "${PERF}" allreduce --memory device -t 2 -b 8 -e 64K -f 8 -n 2 -w 1
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
if(rc EQUAL 0)
  message("GPU present: braid-perf --memory device passed its checks\n${out}")
elseif(NOT rc EQUAL 1)
  message(FATAL_ERROR "expected exit 0 (GPU) or 1 (no GPU), got '${rc}'\n${out}\n${err}")
elseif(NOT err MATCHES "^braid-perf: --memory device: no usable CUDA device \\(cudaGetDeviceCount: [^\n]+\\)\n$")
  message(FATAL_ERROR "exit 1 without the no-GPU sentence (a GPU run that failed?):\n${out}\n${err}")
else()
  message("no GPU: ${err}")
endif()

execute_process(COMMAND "${PERF}" allreduce -t 2
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 2 OR NOT err MATCHES "-t/--nthreads 2: several ranks per process need --memory device")
  message(FATAL_ERROR "-t 2 with host memory: expected exit 2 naming -t, got '${rc}': ${err}")
endif()
