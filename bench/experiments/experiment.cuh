// What the experiments share: a checked CUDA call, a float4 copy kernel (the
// bandwidth ceiling), a timer that reports the median of 30 runs after 3
// warm-ups, and the same pseudo-random input.
#ifndef CUDA_REWRITE_BENCH_EXPERIMENT_CUH
#define CUDA_REWRITE_BENCH_EXPERIMENT_CUH

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                               \
  do {                                                                         \
    cudaError_t E = (x);                                                       \
    if (E != cudaSuccess) {                                                    \
      std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(E));    \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

__global__ void copyKernel4(const float4 *__restrict__ in,
                            float4 *__restrict__ out, long long n4) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n4)
    out[i] = in[i];
}

struct Timer {
  cudaEvent_t A, B;
  Timer() {
    CHECK(cudaEventCreate(&A));
    CHECK(cudaEventCreate(&B));
  }
  template <class F> float median(F Launch, int Reps = 30) {
    for (int I = 0; I < 3; ++I)
      Launch();
    CHECK(cudaDeviceSynchronize());
    std::vector<float> Ms;
    for (int I = 0; I < Reps; ++I) {
      CHECK(cudaEventRecord(A));
      Launch();
      CHECK(cudaEventRecord(B));
      CHECK(cudaEventSynchronize(B));
      CHECK(cudaGetLastError());
      float T;
      CHECK(cudaEventElapsedTime(&T, A, B));
      Ms.push_back(T);
    }
    std::sort(Ms.begin(), Ms.end());
    return Ms[Ms.size() / 2];
  }
};

/// \p N floats in [0, 1) from a fixed linear congruential sequence.
inline std::vector<float> randomInput(long long N) {
  std::vector<float> In(N);
  unsigned S = 12345;
  for (auto &V : In) {
    S = S * 1664525u + 1013904223u;
    V = (S >> 8) * (1.f / 16777216.f);
  }
  return In;
}

/// N floats of randomInput() on the device, and room for N outputs; never
/// freed: the experiments are short programs.
struct DeviceBuffers {
  float *In = nullptr, *Out = nullptr;
  explicit DeviceBuffers(long long N) {
    const std::vector<float> Host = randomInput(N);
    CHECK(cudaMalloc(&In, N * sizeof(float)));
    CHECK(cudaMalloc(&Out, N * sizeof(float)));
    CHECK(
        cudaMemcpy(In, Host.data(), N * sizeof(float), cudaMemcpyHostToDevice));
  }
};

#endif
