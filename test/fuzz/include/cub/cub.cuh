//===- cub/cub.cuh - The fuzzer's stand-in for CUB --------------*- C++ -*-===//
//
// CUB needs the CUDA toolkit's headers, which the fuzzer does not parse
// (cuda_runtime.h here says why). The seeds use a few of its classes; they
// are declared here with members that accept any arguments: the tool only
// sees calls into a system header, as with the real CUB.
//
//===----------------------------------------------------------------------===//
#pragma clang system_header
#ifndef CUDA_REWRITE_FUZZ_CUB_CUH
#define CUDA_REWRITE_FUZZ_CUB_CUH

namespace cub {

#define CUDA_REWRITE_FUZZ_ANY(Name)                                            \
  template <typename... Args> __device__ void Name(Args &&...) {}

enum BlockLoadAlgorithm {
  BLOCK_LOAD_DIRECT,
  BLOCK_LOAD_STRIPED,
  BLOCK_LOAD_VECTORIZE,
  BLOCK_LOAD_TRANSPOSE,
  BLOCK_LOAD_WARP_TRANSPOSE
};
enum BlockStoreAlgorithm {
  BLOCK_STORE_DIRECT,
  BLOCK_STORE_STRIPED,
  BLOCK_STORE_VECTORIZE,
  BLOCK_STORE_TRANSPOSE,
  BLOCK_STORE_WARP_TRANSPOSE
};
enum BlockScanAlgorithm { BLOCK_SCAN_RAKING, BLOCK_SCAN_WARP_SCANS };
enum BlockReduceAlgorithm { BLOCK_REDUCE_RAKING, BLOCK_REDUCE_WARP_REDUCTIONS };

template <typename T, int BlockDimX, int ItemsPerThread,
          BlockLoadAlgorithm Algorithm = BLOCK_LOAD_DIRECT, int BlockDimY = 1,
          int BlockDimZ = 1>
struct BlockLoad {
  struct TempStorage {};
  __device__ BlockLoad() {}
  __device__ BlockLoad(TempStorage &) {}
  CUDA_REWRITE_FUZZ_ANY(Load);
};

template <typename T, int BlockDimX, int ItemsPerThread,
          BlockStoreAlgorithm Algorithm = BLOCK_STORE_DIRECT, int BlockDimY = 1,
          int BlockDimZ = 1>
struct BlockStore {
  struct TempStorage {};
  __device__ BlockStore() {}
  __device__ BlockStore(TempStorage &) {}
  CUDA_REWRITE_FUZZ_ANY(Store);
};

template <typename T, int BlockDimX,
          BlockScanAlgorithm Algorithm = BLOCK_SCAN_RAKING, int BlockDimY = 1,
          int BlockDimZ = 1>
struct BlockScan {
  struct TempStorage {};
  __device__ BlockScan() {}
  __device__ BlockScan(TempStorage &) {}
  CUDA_REWRITE_FUZZ_ANY(ExclusiveSum);
  CUDA_REWRITE_FUZZ_ANY(ExclusiveScan);
  CUDA_REWRITE_FUZZ_ANY(InclusiveSum);
  CUDA_REWRITE_FUZZ_ANY(InclusiveScan);
};

template <typename T, int BlockDimX,
          BlockReduceAlgorithm Algorithm = BLOCK_REDUCE_WARP_REDUCTIONS,
          int BlockDimY = 1, int BlockDimZ = 1>
struct BlockReduce {
  struct TempStorage {};
  __device__ BlockReduce() {}
  __device__ BlockReduce(TempStorage &) {}
  template <typename... Args> __device__ T Sum(Args &&...) { return T(); }
  template <typename... Args> __device__ T Reduce(Args &&...) { return T(); }
};

#undef CUDA_REWRITE_FUZZ_ANY

struct DeviceSelect {
  template <typename... Args> static cudaError_t If(Args &&...) {
    return cudaSuccess;
  }
  template <typename... Args> static cudaError_t Flagged(Args &&...) {
    return cudaSuccess;
  }
  template <typename... Args> static cudaError_t Unique(Args &&...) {
    return cudaSuccess;
  }
};
struct DevicePartition {
  template <typename... Args> static cudaError_t If(Args &&...) {
    return cudaSuccess;
  }
  template <typename... Args> static cudaError_t Flagged(Args &&...) {
    return cudaSuccess;
  }
};
struct DeviceScan {
  template <typename... Args> static cudaError_t ExclusiveSum(Args &&...) {
    return cudaSuccess;
  }
  template <typename... Args> static cudaError_t InclusiveSum(Args &&...) {
    return cudaSuccess;
  }
};
struct DeviceReduce {
  template <typename... Args> static cudaError_t Sum(Args &&...) {
    return cudaSuccess;
  }
  template <typename... Args> static cudaError_t Max(Args &&...) {
    return cudaSuccess;
  }
};

} // namespace cub

#endif
