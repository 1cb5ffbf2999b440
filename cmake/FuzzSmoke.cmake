# The one-minute fuzz run of the test suite (ctest fuzz-smoke): test/fuzz's
# target built into the ordinary build, where the compiler is clang++-22 and
# its libFuzzer runtime is installed (libclang-rt-22-dev; CI builds this
# way). Only the fuzz target's own file is compiled with -fsanitize=fuzzer,
# ASan and UBSan; the project's libraries stay as built, so libFuzzer steers
# by little coverage and misses what only asserts and UBSan inside them would
# report, but a crash, a heap error (ASan's allocator sees every malloc), a
# hang or an out-of-memory anywhere is still a failure. The long, fully
# instrumented run is scripts/fuzz.sh (-DCUDA_REWRITE_FUZZ=ON,
# cmake/Fuzz.cmake).
include(CheckCXXSourceCompiles)
set(CUDA_REWRITE_FUZZ_SMOKE_SECONDS 60 CACHE STRING
    "How long ctest's fuzz-smoke test fuzzes")
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang" AND
   CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 22 AND
   CMAKE_CXX_COMPILER_VERSION VERSION_LESS 23)
  set(CMAKE_REQUIRED_FLAGS -fsanitize=fuzzer,address,undefined)
  set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=fuzzer,address,undefined)
  check_cxx_source_compiles([[
    #include <cstddef>
    #include <cstdint>
    extern "C" int LLVMFuzzerTestOneInput(const uint8_t *, size_t) {
      return 0;
    }]] CUDA_REWRITE_HAVE_LIBFUZZER)
  unset(CMAKE_REQUIRED_FLAGS)
  unset(CMAKE_REQUIRED_LINK_OPTIONS)
endif()
if(NOT CUDA_REWRITE_HAVE_LIBFUZZER)
  message(STATUS "fuzz-smoke test not registered: it needs clang++-22 as the "
                 "C++ compiler and libclang-rt-22-dev")
  return()
endif()

set(sanitizers -fsanitize=fuzzer,address,undefined
               -fno-sanitize-recover=undefined)
add_executable(cuda-rewrite-fuzz-smoke
               ${PROJECT_SOURCE_DIR}/test/fuzz/FrontEndFuzzer.cpp)
target_link_libraries(cuda-rewrite-fuzz-smoke PRIVATE cuda_rewrite_driver)
target_compile_options(cuda-rewrite-fuzz-smoke PRIVATE ${sanitizers} -UNDEBUG)
target_link_options(cuda-rewrite-fuzz-smoke PRIVATE ${sanitizers})
target_compile_definitions(cuda-rewrite-fuzz-smoke PRIVATE
  CUDA_REWRITE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_test(NAME fuzz-smoke
         COMMAND ${PROJECT_SOURCE_DIR}/test/fuzz/smoke.sh
                 $<TARGET_FILE:cuda-rewrite-fuzz-smoke>
                 ${CMAKE_CURRENT_BINARY_DIR}/fuzz-smoke
                 ${CUDA_REWRITE_FUZZ_SMOKE_SECONDS})
