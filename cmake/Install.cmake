# Installs cuda-rewrite as a CMake package, so that other projects can write
#
#   find_package(cuda_rewrite REQUIRED)
#   cuda_rewrite_sources(app src/main.cu)
#
# Layout under the prefix:
#   bin/cuda-rewrite
#   include/cuda_rewrite/*.cuh                    (runtime/CMakeLists.txt)
#   lib/cmake/cuda_rewrite/cuda_rewriteConfig.cmake
#   lib/cmake/cuda_rewrite/cuda_rewriteConfigVersion.cmake
#   lib/cmake/cuda_rewrite/cuda_rewriteTargets.cmake  (cuda_rewrite::runtime)
#   lib/cmake/cuda_rewrite/CudaRewrite.cmake          (cuda_rewrite_sources)

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

# The config file finds the binary relative to itself (PACKAGE_ paths), so
# the installed tree can be moved or unpacked elsewhere.
set(CUDA_REWRITE_INSTALL_BINDIR "${CMAKE_INSTALL_BINDIR}")
configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/cuda_rewriteConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/cuda_rewriteConfig.cmake"
  INSTALL_DESTINATION "${CUDA_REWRITE_INSTALL_CMAKEDIR}"
  PATH_VARS CUDA_REWRITE_INSTALL_BINDIR)
# Annotations and options may change incompatibly between major versions.
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/cuda_rewriteConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMajorVersion)

install(FILES
  "${PROJECT_BINARY_DIR}/cuda_rewriteConfig.cmake"
  "${PROJECT_BINARY_DIR}/cuda_rewriteConfigVersion.cmake"
  "${CMAKE_CURRENT_LIST_DIR}/CudaRewrite.cmake"
  DESTINATION "${CUDA_REWRITE_INSTALL_CMAKEDIR}")
