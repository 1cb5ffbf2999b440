// compile-samples' register check on a real compile, as the script compiles
// (-rdc=true, linked, --resource-usage, PTX kept): a kernel that needs 128
// registers and has no __launch_bounds__ cannot run 1024-thread blocks, and
// the check names it (demangled, an internal kernel too) with its numbers;
// with a bound of 256 threads the same code fits, and with a bound of 1024
// ptxas holds it to 64 registers. A kernel the host never launches is
// dropped by the linker and not checked.
// REQUIRES: nvcc
// RUN: rm -rf %t && mkdir -p %t
// RUN: %nvcc -arch=sm_90 -rdc=true --resource-usage -keep --keep-dir %t %s -o %t/bound -lcudadevrt > %t/resources 2>&1
// RUN: %check-registers --name register-bound %t/resources %t/register-bound.ptx > %t/out; echo "exit $?" >> %t/out
// RUN: FileCheck %s --input-file=%t/out --implicit-check-not=register

// CHECK-DAG: register bound: register-bound: kernel unbounded(float const*, float*, int) uses {{1[0-9][0-9]|2[0-9][0-9]}} registers a thread (no __launch_bounds__: any block, up to 1024 threads): a 1024-thread block needs {{[0-9]+}} registers, more than the 65536 of an sm_90 block
// CHECK-DAG: register bound: register-bound: kernel internal(float const*, float*, int) uses {{[0-9]+}} registers a thread (no __launch_bounds__: any block, up to 1024 threads): a 1024-thread block needs {{[0-9]+}} registers, more than the 65536 of an sm_90 block
// CHECK: exit 1

// All N values are loaded before any is used: about N + 32 registers live.
template <int N> __device__ float pressure(const float *in, int stride) {
  float v[N];
#pragma unroll
  for (int i = 0; i < N; ++i)
    v[i] = in[threadIdx.x + i * stride];
  float s = 0;
#pragma unroll
  for (int i = 0; i < N; ++i)
    s += v[i] * v[N - 1 - i] * v[(i * 7) % N];
  return s;
}

__global__ void unbounded(const float *in, float *out, int stride) {
  out[threadIdx.x] = pressure<96>(in, stride);
}

static __global__ void internal(const float *in, float *out, int stride) {
  out[threadIdx.x] = pressure<96>(in, stride);
}

__global__ void __launch_bounds__(256) bounded(const float *in, float *out,
                                               int stride) {
  out[threadIdx.x] = pressure<96>(in, stride);
}

__global__ void __launch_bounds__(1024) capped(const float *in, float *out,
                                               int stride) {
  out[threadIdx.x] = pressure<96>(in, stride);
}

__global__ void unlaunched(const float *in, float *out, int stride) {
  out[threadIdx.x] = pressure<96>(in, stride);
}

int main() {
  unbounded<<<1, 32>>>(nullptr, nullptr, 0);
  internal<<<1, 32>>>(nullptr, nullptr, 0);
  bounded<<<1, 32>>>(nullptr, nullptr, 0);
  capped<<<1, 32>>>(nullptr, nullptr, 0);
  return 0;
}
