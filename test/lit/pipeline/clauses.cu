// The pragma's clauses reach the runner (model(kbk), config("...")); a
// threads(32) stage hands items to another threads(32) stage after its group
// waits (pushFromGroup), and a one-thread stage runs a wide stage's ranks in a
// loop, pushed once (pushOnce). The output compiles.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %nvcc-compile -rdc=true %t.cu -o %t.o

#include <cuda_runtime.h>

struct Job {
  int index, step;
};

__device__ int *out;

__device__ void reduce(Job j, int rank);

#pragma cuda_rewrite stage
__device__ void start(Job j) {
  for (int r = 0; r < 32; ++r)
    reduce(j, r);
}

#pragma cuda_rewrite stage threads(32)
__device__ void reduce(Job j, int rank) {
  atomicAdd(&out[j.index], rank); // ranks independent: a loop may run them
  if (j.step < 3)
    reduce(Job{j.index, j.step + 1}, rank);
}

__global__ void launchJobs(int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    start(Job{i, 0});
}

int main() {
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  // REMARK: clauses.cu:[[@LINE+2]]:3: remark: rewritten: pipeline 'launchJobs' runs its 2 stages from queues: start, reduce (threads(32)) (with recursion or loops between stages); model kbk, or the one in 'tuned/jobs.cfg' where it exists; CUDA_REWRITE_PIPELINE_MODEL or CUDA_REWRITE_PIPELINE_CONFIG choose another at run time [pipeline]
#pragma cuda_rewrite pipeline model(kbk) config("tuned/jobs.cfg")
  launchJobs<<<4, 256, 0, stream>>>(1000);
  return cudaStreamSynchronize(stream) != cudaSuccess;
}

// CHECK: __device__ void start_inPipeline(Job j, const launchJobs_Pipeline &pipeline) {
// CHECK-NEXT:   for (int r = 0; r < 32; ++r)
// CHECK-NEXT:     pipeline.reduce.pushOnce(j, r);
// CHECK: __device__ void reduce_inPipeline(Job j, int rank,
// CHECK:     pipeline.reduce.pushFromGroup(Job{j.index, j.step + 1}, rank);
// CHECK: __global__ void launchJobs_seedPipeline(int n, launchJobs_Pipeline pipeline) {
// CHECK:     pipeline.start.push(Job{i, 0});
// CHECK:       {"launchJobs", 2, stages, 256, "kbk", "tuned/jobs.cfg"});
// CHECK: CUDA_REWRITE_CHECK(launchJobs_runPipeline(4, 256, 0, stream, 1000));
