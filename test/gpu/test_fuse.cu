//===- test/gpu/test_fuse.cu - Tests of cuda_rewrite/fuse.cuh -------------===//
//
// The fuse pass's launchers run a fused kernel only when the buffers it
// writes through global memory share no allocation with the group's other
// buffers (separateAllocations); otherwise the original launches run. Here:
// distinct cudaMalloc and cudaMallocAsync allocations (two of the pool too)
// are separate; two pointers into one allocation (the same one, or
// overlapping halves) are not; a host pointer, which the driver does not
// know, is not either. And the Tile view addresses a warp's shared tile by
// image coordinates.
//
//===----------------------------------------------------------------------===//

#include "cuda_rewrite/fuse.cuh"

#include "harness.cuh"

namespace {

using cuda_rewrite::fuse::separateAllocations;

/// Each lane writes its (x, y) of a 34 x 3 tile starting at (x0 - 1, y0 -
/// 1) through a Tile view, then reads back a neighbour's value.
__global__ void tileKernel(int x0, int y0, int *out) {
  __shared__ int storage[3 * 34];
  const cuda_rewrite::fuse::Tile<int, 34> tile{storage, x0 - 1, y0 - 1};
  for (int i = threadIdx.x; i < 3 * 34; i += 32) {
    const int x = x0 - 1 + i % 34, y = y0 - 1 + i / 34;
    tile(x, y) = 1000 * y + x;
  }
  __syncwarp();
  const int x = x0 + threadIdx.x;
  out[threadIdx.x] = tile(x + 1, y0 + 1) - tile(x - 1, y0 - 1);
}

} // namespace

int main() {
  test::Suite suite("test_fuse");
  suite.run("separate cudaMalloc and cudaMallocAsync allocations", [&] {
    float *A = nullptr, *B = nullptr, *C = nullptr;
    CUDA_OK(cudaMalloc(&A, 1 << 20));
    CUDA_OK(cudaMalloc(&B, 1 << 20));
    CUDA_OK(cudaMallocAsync(&C, 1 << 20, 0));
    CUDA_OK(cudaStreamSynchronize(0));
    const bool Separate = separateAllocations({B}, {A});
    const bool SeparateAsync = separateAllocations({C}, {A, B});
    CUDA_OK(cudaFree(A));
    CUDA_OK(cudaFree(B));
    CUDA_OK(cudaFreeAsync(C, 0));
    EXPECT(Separate, "two cudaMalloc buffers reported as sharing");
    EXPECT(SeparateAsync, "a pool allocation reported as sharing");
    return true;
  });
  suite.run("two stream-ordered pool allocations are separate", [&] {
    float *A = nullptr, *B = nullptr;
    CUDA_OK(cudaMallocAsync(&A, 1 << 20, 0));
    CUDA_OK(cudaMallocAsync(&B, 1 << 20, 0));
    CUDA_OK(cudaStreamSynchronize(0));
    const bool Separate = separateAllocations({A}, {B});
    CUDA_OK(cudaFreeAsync(A, 0));
    CUDA_OK(cudaFreeAsync(B, 0));
    CUDA_OK(cudaStreamSynchronize(0));
    EXPECT(Separate, "two pool allocations reported as sharing");
    return true;
  });
  suite.run("pointers into one allocation are not separate", [&] {
    float *A = nullptr;
    CUDA_OK(cudaMalloc(&A, 1 << 20));
    const bool Same = separateAllocations({A}, {A});
    const bool Halves = separateAllocations({A + 1024}, {A});
    const bool Written = separateAllocations({A, A + 7}, {});
    CUDA_OK(cudaFree(A));
    EXPECT(!Same, "a buffer read and written reported as separate");
    EXPECT(!Halves, "overlapping halves reported as separate");
    EXPECT(!Written, "two written pointers into one allocation reported "
                     "as separate");
    return true;
  });
  suite.run("memory the driver does not know is not separate", [&] {
    static float Host[16];
    float *A = nullptr;
    CUDA_OK(cudaMalloc(&A, 1 << 20));
    const bool HostWritten = separateAllocations({Host}, {A});
    CUDA_OK(cudaFree(A));
    EXPECT(!HostWritten, "a host array reported as a separate allocation");
    return true;
  });
  suite.run("Tile addresses by image coordinates", [&] {
    test::DeviceArray<int> Out;
    CUDA_OK(Out.upload(std::vector<int>(32, 0)));
    tileKernel<<<1, 32>>>(64, 10, Out.get());
    LAUNCH_OK();
    std::vector<int> Got;
    CUDA_OK(Out.download(Got));
    // (x + 1, 11) minus (x - 1, 9): 2000 + 2.
    for (int Lane = 0; Lane != 32; ++Lane)
      EXPECT(Got[Lane] == 2002, "lane %d read %d", Lane, Got[Lane]);
    return true;
  });
  return suite.finish();
}
