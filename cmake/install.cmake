# make install: shared + static library, include/braid.h and the header-only MPI companion
# include/braid_mpi.h, a CMake package (find_package(braid) -> braid::braid, and
# braid::braid_mpi where an MPI is found) and pkg-config files (braid.pc, braid_mpi.pc); with
# CUDA, also the device-path plugin libbraid_cuda.so, which libbraid dlopens from its own
# directory (src/comm/device_path.cc), so it goes to the same libdir and is no part of the export.
include(CMakePackageConfigHelpers)

install(TARGETS braid braid_static EXPORT braidTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET braid_cuda)
  install(TARGETS braid_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
# braid_mpi.h is header-only and needs no MPI to install: it is compiled with the program's MPI.
install(FILES ${PROJECT_SOURCE_DIR}/include/braid.h ${PROJECT_SOURCE_DIR}/include/braid_mpi.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT braidTargets NAMESPACE braid:: FILE braidTargets.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/braid)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/braidConfig.cmake.in
  ${PROJECT_BINARY_DIR}/braidConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/braid)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/braidConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/braidConfig.cmake ${PROJECT_BINARY_DIR}/braidConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/braid)

file(RELATIVE_PATH braid_pc_to_prefix /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${PROJECT_SOURCE_DIR}/cmake/braid.pc.in ${PROJECT_BINARY_DIR}/braid.pc @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/braid_mpi.pc.in ${PROJECT_BINARY_DIR}/braid_mpi.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/braid.pc ${PROJECT_BINARY_DIR}/braid_mpi.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
