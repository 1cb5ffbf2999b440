# Installs cuda-rewrite as a CMake package, so that other projects can write
#
#   find_package(cuda_rewrite REQUIRED)
#   cuda_rewrite_sources(app src/main.cu)
#
# Layout under the prefix:
#   bin/cuda-rewrite
#   bin/cuda-rewrite-probe                        (gpu/probe; where nvcc was found)
#   include/cuda_rewrite/*.cuh                    (runtime/CMakeLists.txt)
#   lib/cmake/cuda_rewrite/cuda_rewriteConfig.cmake
#   lib/cmake/cuda_rewrite/cuda_rewriteConfigVersion.cmake
#   lib/cmake/cuda_rewrite/cuda_rewriteTargets.cmake  (cuda_rewrite::runtime)
#   lib/cmake/cuda_rewrite/CudaRewrite.cmake          (cuda_rewrite_sources)
#   share/cuda_rewrite/probe/cuda-rewrite-probe.cu    (gpu/probe)
#   share/doc/cuda_rewrite/README.md, *.md            (README.md, docs/)
#
# The build tree is a package too: cuda_rewrite_DIR=<build dir> uses the tool
# and probe built there, the runtime headers and CudaRewrite.cmake of the
# source tree, so a change to any of them is picked up without installing.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CUDA_REWRITE_INSTALL_CMAKEDIR "lib/cmake/cuda_rewrite" CACHE STRING
    "Where the CMake package files go, relative to the install prefix")

# The tool links LLVM and clang-cpp as shared libraries. Keep the directories
# of those outside the project (say a custom LLVM_DIR) in the installed
# binary's RPATH, so that it runs without LD_LIBRARY_PATH.
set_target_properties(cuda-rewrite PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS cuda-rewrite RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")

# cuda_rewrite::runtime; runtime/CMakeLists.txt put it in this export set.
install(EXPORT cuda_rewriteTargets
        NAMESPACE cuda_rewrite::
        DESTINATION "${CUDA_REWRITE_INSTALL_CMAKEDIR}")
# The same set for the build tree; its include directory is the source tree's
# (the BUILD_INTERFACE one).
export(EXPORT cuda_rewriteTargets
       NAMESPACE cuda_rewrite::
       FILE "${PROJECT_BINARY_DIR}/cuda_rewriteTargets.cmake")

install(FILES "${PROJECT_SOURCE_DIR}/README.md"
        DESTINATION "${CMAKE_INSTALL_DOCDIR}")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/docs/"
        DESTINATION "${CMAKE_INSTALL_DOCDIR}"
        FILES_MATCHING PATTERN "*.md")

# One template, two config files. The variables below are what differs:
#   CUDA_REWRITE_CONFIG_BINDIR    where cuda-rewrite is (PATH_VARS: relative
#                                 to the prefix, so that the installed tree
#                                 can be moved or unpacked elsewhere)
#   CUDA_REWRITE_CONFIG_PROBEDIR  where cuda-rewrite-probe is
#   CUDA_REWRITE_CONFIG_MODULE    the CudaRewrite.cmake to include
#   CUDA_REWRITE_CONFIG_HINT      what to do when the tool is missing

# Installed: everything next to the config file or under the prefix. Written
# outside the top of the build directory, where find_package would take it
# for the build tree's config (its prefix, computed from the install
# destination, is meaningless there).
set(CUDA_REWRITE_CONFIG_BINDIR "${CMAKE_INSTALL_BINDIR}")
set(CUDA_REWRITE_CONFIG_PROBEDIR "${CMAKE_INSTALL_BINDIR}")
set(CUDA_REWRITE_CONFIG_MODULE "\${CMAKE_CURRENT_LIST_DIR}/CudaRewrite.cmake")
set(CUDA_REWRITE_CONFIG_HINT "reinstall cuda-rewrite")
set(install_config_dir "${PROJECT_BINARY_DIR}/CMakeFiles/cuda_rewrite-install")
configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/cuda_rewriteConfig.cmake.in"
  "${install_config_dir}/cuda_rewriteConfig.cmake"
  INSTALL_DESTINATION "${CUDA_REWRITE_INSTALL_CMAKEDIR}"
  PATH_VARS CUDA_REWRITE_CONFIG_BINDIR CUDA_REWRITE_CONFIG_PROBEDIR)

# Build tree: the prefix is the build directory itself. Multi-configuration
# generators put the tool under tool/<config>/; the package then uses the
# Release build, else the first configuration.
set(CUDA_REWRITE_CONFIG_BINDIR "tool")
set(CUDA_REWRITE_CONFIG_PROBEDIR "tool")
if(CMAKE_CONFIGURATION_TYPES)
  if("Release" IN_LIST CMAKE_CONFIGURATION_TYPES)
    set(config Release)
  else()
    list(GET CMAKE_CONFIGURATION_TYPES 0 config)
  endif()
  string(APPEND CUDA_REWRITE_CONFIG_BINDIR "/${config}")
endif()
set(CUDA_REWRITE_CONFIG_MODULE "${CMAKE_CURRENT_LIST_DIR}/CudaRewrite.cmake")
set(CUDA_REWRITE_CONFIG_HINT
    "build it first (cmake --build ${PROJECT_BINARY_DIR})")
configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/cuda_rewriteConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/cuda_rewriteConfig.cmake"
  INSTALL_DESTINATION "${PROJECT_BINARY_DIR}"
  INSTALL_PREFIX "${PROJECT_BINARY_DIR}"
  PATH_VARS CUDA_REWRITE_CONFIG_BINDIR CUDA_REWRITE_CONFIG_PROBEDIR)

# Annotations and options may change incompatibly between major versions.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/cuda_rewriteConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMajorVersion)

install(FILES
  "${install_config_dir}/cuda_rewriteConfig.cmake"
  "${PROJECT_BINARY_DIR}/cuda_rewriteConfigVersion.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/CudaRewrite.cmake"
  DESTINATION "${CUDA_REWRITE_INSTALL_CMAKEDIR}")
