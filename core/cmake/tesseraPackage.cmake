# tessera_install_package(): what an application finds an installed Tessera by, for the targets
# installed into the tesseraTargets export set (tessera::runtime; a full build adds
# tessera::core, tessera::tune and tessera::plugin_api):
# - the CMake package, find_package(tessera [VERSION]): <libdir>/cmake/tessera, versioned with
#   SameMajorVersion, as the libraries' SONAMEs are;
# - pkg-config files in <libdir>/pkgconfig: tessera-runtime.pc, and tessera.pc where libtessera
#   is built.
# Both locate the prefix relative to themselves, so an installed tree (or a wheel's tessera/
# folder) can be moved.
include(CMakePackageConfigHelpers)
set(TESSERA_PACKAGE_TEMPLATE_DIR ${CMAKE_CURRENT_LIST_DIR})

function(tessera_install_package)
  set(cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/tessera)
  install(EXPORT tesseraTargets NAMESPACE tessera:: DESTINATION ${cmake_dir})
  configure_package_config_file(${TESSERA_PACKAGE_TEMPLATE_DIR}/tesseraConfig.cmake.in
    ${PROJECT_BINARY_DIR}/core/tesseraConfig.cmake INSTALL_DESTINATION ${cmake_dir}
    PATH_VARS TESSERA_PLUGIN_INSTALL_DIR)
  write_basic_package_version_file(${PROJECT_BINARY_DIR}/core/tesseraConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
  install(FILES ${PROJECT_BINARY_DIR}/core/tesseraConfig.cmake
                ${PROJECT_BINARY_DIR}/core/tesseraConfigVersion.cmake
          DESTINATION ${cmake_dir})

  set(pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
  file(RELATIVE_PATH TESSERA_PC_TO_PREFIX "/${pc_dir}" "/")
  string(REGEX REPLACE "/$" "" TESSERA_PC_TO_PREFIX "${TESSERA_PC_TO_PREFIX}")
  set(pc_files tessera-runtime.pc)
  if(TARGET tessera_core)
    list(APPEND pc_files tessera.pc)
  endif()
  foreach(pc ${pc_files})
    configure_file(${TESSERA_PACKAGE_TEMPLATE_DIR}/${pc}.in ${PROJECT_BINARY_DIR}/core/${pc} @ONLY)
    install(FILES ${PROJECT_BINARY_DIR}/core/${pc} DESTINATION ${pc_dir})
  endforeach()
endfunction()
