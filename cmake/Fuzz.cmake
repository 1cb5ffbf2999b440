# -DCUDA_REWRITE_FUZZ=ON: the project's own code (analysis/, rewriters/,
# tool/) compiled with libFuzzer's coverage instrumentation, ASan and UBSan,
# and test/fuzz/'s cuda-rewrite-fuzz linked against it. Clang, LLVM and the
# C++ library stay uninstrumented: the fuzzer steers by our code's coverage.
#
# Only clang 22 works: -fsanitize=fuzzer is clang's, and its libFuzzer and
# sanitizer runtimes must match the compiler (libclang-rt-22-dev).
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR
   NOT CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 22 OR
   NOT CMAKE_CXX_COMPILER_VERSION VERSION_LESS 23)
  message(FATAL_ERROR "CUDA_REWRITE_FUZZ needs clang++-22 as the C++ "
    "compiler (found ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} "
    "at ${CMAKE_CXX_COMPILER}); configure a fresh build directory with "
    "-DCMAKE_CXX_COMPILER=clang++-22 (scripts/fuzz.sh does)")
endif()

# A UBSan report aborts, so that libFuzzer keeps it as a crash; -UNDEBUG
# keeps our asserts and llvm_unreachable (and LLVM's inline ones, such as
# cast<>) whatever the build type.
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined
                    -fno-sanitize-recover=undefined -fno-omit-frame-pointer
                    -g -UNDEBUG)
# Coverage of our code only: see the list.
add_compile_options(-fsanitize-coverage-ignorelist=${CMAKE_CURRENT_SOURCE_DIR}/test/fuzz/coverage-ignorelist.txt)
add_link_options(-fsanitize=address,undefined)
