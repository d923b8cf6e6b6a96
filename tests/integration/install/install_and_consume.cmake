# Installs the build tree into a scratch prefix, then configures, builds and
# runs the consumer project against it, once through CMake and once through
# pkg-config.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message("${out}")
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f include/braid.h include/braid_mpi.h lib/libbraid.so lib/libbraid.a lib/libnccl.so.2
          lib/cmake/braid/braidConfig.cmake lib/pkgconfig/braid.pc lib/pkgconfig/braid_mpi.pc)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "make install did not install ${f}")
  endif()
endforeach()

run(${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/consumer -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${prefix} -DMPI_PROGRAM=${MPI_PROGRAM})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
set(ENV{LD_LIBRARY_PATH} ${prefix}/lib)
run(${WORK_DIR}/consumer/consumer)
# Where an MPI is installed, braid::braid_mpi built the MPI program: one process checks that
# braidCommInitMPI refuses an MPI that is not (or no longer) initialised.
if(EXISTS ${WORK_DIR}/consumer/consumer_mpi)
  run(${WORK_DIR}/consumer/consumer_mpi uninit)
endif()

set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
execute_process(COMMAND pkg-config --cflags --libs braid OUTPUT_VARIABLE flags
                OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config does not know braid")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
run(cc -std=c99 -Wall -Werror ${CONSUMER_DIR}/consumer.c ${flags} -o ${WORK_DIR}/consumer_pc)
run(${WORK_DIR}/consumer_pc)

# braid_mpi.pc: braid's flags, the MPI's from its compiler wrapper (mpicc: the default MPI).
find_program(MPICC mpicc)
if(MPICC AND EXISTS ${WORK_DIR}/consumer/consumer_mpi)
  execute_process(COMMAND pkg-config --cflags --libs braid_mpi OUTPUT_VARIABLE flags
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config does not know braid_mpi")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(${MPICC} -std=c99 -Wall -Werror ${MPI_PROGRAM} ${flags} -o ${WORK_DIR}/consumer_mpi_pc)
  run(${WORK_DIR}/consumer_mpi_pc uninit)
endif()
