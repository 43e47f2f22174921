# `cmake --install`: the CLI, the public headers, the library and a CMake package so that a pipeline
# can `find_package(warpsearch CONFIG REQUIRED)` and link `warpsearch::warpsearch`
# (examples/consumer shows it; CI builds it against an installed tree).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS warpsearch_lib EXPORT warpsearchTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET warpsearch_cli)
  install(TARGETS warpsearch_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/warpsearch DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/warpsearch/version.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/warpsearch)

set(WARPSEARCH_CONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/warpsearch)
install(EXPORT warpsearchTargets NAMESPACE warpsearch:: DESTINATION ${WARPSEARCH_CONFIG_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/warpsearchConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/warpsearchConfig.cmake
                              INSTALL_DESTINATION ${WARPSEARCH_CONFIG_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/warpsearchConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/warpsearchConfig.cmake ${PROJECT_BINARY_DIR}/warpsearchConfigVersion.cmake
        DESTINATION ${WARPSEARCH_CONFIG_DIR})
