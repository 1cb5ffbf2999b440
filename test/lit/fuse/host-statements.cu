// Host statements between a chain's launches: error checks, synchronizations,
// timers and prints that touch none of the launches' memory stay where they
// are and run before the fused kernel, which goes where the chain's last
// launch was; the chain is found under --auto in a function body full of
// other statements. A statement that touches the chain's memory, or changes
// a value a launch reads, ends the chain there; in an annotated block it is
// the refusal.
// RUN: %cuda-rewrite --auto --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s
// RUN: %nvcc-compile %t.cu -o %t.o
#include <cstdio>
#include <cstdlib>

#define CHECK_CUDA(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                       \
              cudaGetErrorString(err_));                                       \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

__host__ __device__ inline int clampi(int v, int lo, int hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

__global__ void blurX(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = (in[y * W + clampi(x - 1, 0, W - 1)] + in[y * W + x] +
                    in[y * W + clampi(x + 1, 0, W - 1)]) / 3;
}

__global__ void blurY(const float *in, float *out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= W || y >= H)
    return;
  out[y * W + x] = (in[clampi(y - 1, 0, H - 1) * W + x] + in[y * W + x] +
                    in[clampi(y + 1, 0, H - 1) * W + x]) / 3;
}

static void report(const char *what, float ms) {
  printf("%s: %.3f ms\n", what, ms);
}

int main(int argc, char **argv) {
  int W = argc > 1 ? atoi(argv[1]) : 1024, H = W;
  size_t bytes = size_t(W) * H * sizeof(float);
  float *in, *tmp, *out;
  CHECK_CUDA(cudaMalloc(&in, bytes));
  CHECK_CUDA(cudaMalloc(&tmp, bytes));
  CHECK_CUDA(cudaMalloc(&out, bytes));
  CHECK_CUDA(cudaMemset(in, 0, bytes));
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);

  cudaEventRecord(start);
  // CHECK: cudaEventRecord(start);
  // CHECK-NEXT: CHECK_CUDA(cudaGetLastError());
  // CHECK-NEXT: CHECK_CUDA(cudaDeviceSynchronize());
  // CHECK-NEXT: float half = 0;
  // CHECK-NEXT: cudaEventRecord(stop);
  // CHECK-NEXT: cudaEventSynchronize(stop);
  // CHECK-NEXT: cudaEventElapsedTime(&half, start, stop);
  // CHECK-NEXT: report("blurX", half);
  // CHECK-NEXT: if (!fused_blurX_to_blurY::launch(grid, block, 0, in, tmp, W, H, out)) {
  // CHECK-NEXT: blurX<<<grid, block>>>(in, tmp, W, H);
  // CHECK-NEXT: blurY<<<grid, block>>>(tmp, out, W, H);
  // CHECK-NEXT: }
  // CHECK-NEXT: CHECK_CUDA(cudaGetLastError());
  // REMARK: host-statements.cu:[[@LINE+1]]:3: remark: rewritten: 2 stages (blurX, blurY){{.*}}; the host statements between its launches (lines {{[0-9]+-[0-9]+}}) touch none of their memory and now run before it [fuse]
  blurX<<<grid, block>>>(in, tmp, W, H);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  float half = 0;
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  cudaEventElapsedTime(&half, start, stop);
  report("blurX", half);
  blurY<<<grid, block>>>(tmp, out, W, H);
  CHECK_CUDA(cudaGetLastError());

  float *host = (float *)malloc(bytes);
  CHECK_CUDA(cudaMemcpy(host, out, bytes, cudaMemcpyDeviceToHost));
  printf("%f\n", host[0]);
  free(host);
  cudaFree(in);
  cudaFree(tmp);
  cudaFree(out);
  return 0;
}

// A copy of the intermediate ends the chain: nothing to fuse.
// CHECK-LABEL: void copied(
// CHECK-NOT: fused_
void copied(const float *in, float *tmp, float *out, float *host, int W,
            int H, dim3 grid, dim3 block) {
  blurX<<<grid, block>>>(in, tmp, W, H);
  cudaMemcpy(host, tmp, sizeof(float), cudaMemcpyDeviceToHost);
  blurY<<<grid, block>>>(tmp, out, W, H);
}

// So does a change of a value a launch reads.
// CHECK-LABEL: void resized(
// CHECK-NOT: fused_
void resized(const float *in, float *tmp, float *out, int W, int H,
             dim3 grid, dim3 block) {
  blurX<<<grid, block>>>(in, tmp, W, H);
  H = H / 2;
  blurY<<<grid, block>>>(tmp, out, W, H);
}

// In an annotated block such a statement is the refusal.
// CHECK-LABEL: void annotated(
void annotated(const float *in, float *tmp, float *out, int W, int H,
               dim3 grid, dim3 block) {
#pragma cuda_rewrite fuse
  {
    blurX<<<grid, block>>>(in, tmp, W, H);
    // REMARK: host-statements.cu:[[@LINE-1]]:5: warning: not rewritten: line [[@LINE+1]]: a host statement between the launches names 'tmp', which the launches pass to their kernels [fuse]
    float *alias = tmp;
    blurY<<<grid, block>>>(tmp, out, W, H);
  }
}
