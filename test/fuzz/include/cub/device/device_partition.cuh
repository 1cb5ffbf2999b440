// The fuzzer's stand-in: see cub/cub.cuh.
#pragma clang system_header
#include <cub/cub.cuh>
