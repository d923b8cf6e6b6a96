# ctest driver (cmake -P): installs the build into a fresh prefix, then runs
# install_lookup_check against it, and removes the prefix whatever the outcome.
# Arguments (-D): BUILD_DIR, PREFIX, LIBDIR (relative, as GNUInstallDirs), CHECK.
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}"
  RESULT_VARIABLE install_rc OUTPUT_VARIABLE install_out ERROR_VARIABLE install_out)
if(install_rc EQUAL 0)
  execute_process(COMMAND "${CHECK}" "${PREFIX}/${LIBDIR}"
    RESULT_VARIABLE check_rc OUTPUT_VARIABLE check_out ERROR_VARIABLE check_out)
endif()
file(REMOVE_RECURSE "${PREFIX}")
if(NOT install_rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${install_rc}):\n${install_out}")
endif()
message("${check_out}")
if(NOT check_rc EQUAL 0)
  message(FATAL_ERROR "install_lookup_check failed (${check_rc})")
endif()
