// A pipeline with recursion (split calls itself), a threads(32) stage and a
// loop back to an earlier stage (again -> split): the generated queues,
// stage copies, batch runner, kernels and launcher. The output compiles.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %nvcc-compile -rdc=true %t.cu -o %t.o

#include <cuda_runtime.h>

struct Range {
  int begin, end, round;
};
struct Visit {
  int index, round;
};

__device__ int *visits;

__device__ void again(Visit v);
__device__ void leaf(Visit v, int rank);

// REMARK-DAG: models.cu:[[@LINE+2]]:17: remark: rewritten: 'split' runs from a queue as stage 0 of pipeline 'seed' [pipeline]
#pragma cuda_rewrite stage
__device__ void split(Range r) {
  if (r.end - r.begin > 1) {
    int middle = r.begin + (r.end - r.begin) / 2;
    split(Range{r.begin, middle, r.round});
    split(Range{middle, r.end, r.round});
  } else {
    again(Visit{r.begin, r.round});
  }
}

#pragma cuda_rewrite stage threads(32)
__device__ void leaf(Visit v, int rank) {
  int sum = rank;
  for (int offset = 16; offset > 0; offset /= 2)
    sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (rank == 0) {
    atomicAdd(&visits[v.index], sum);
    again(v);
  }
}

#pragma cuda_rewrite stage
__device__ void again(Visit v) {
  if (v.round < 3)
    split(Range{v.index, v.index + 1, v.round + 1});
}

__global__ void seed(int n, int chunks) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < chunks)
    split(Range{i * n / chunks, (i + 1) * n / chunks, 0});
  leaf(Visit{int(blockIdx.x), 0}, threadIdx.x % 32);
}

int main() {
  int n = 1000, chunks = 64;
  // REMARK-DAG: models.cu:[[@LINE+2]]:3: remark: rewritten: pipeline 'seed' runs its 3 stages from queues: split, leaf (threads(32)), again (with recursion or loops between stages); model megakernel (model(auto) without a configuration); CUDA_REWRITE_PIPELINE_MODEL or CUDA_REWRITE_PIPELINE_CONFIG choose another at run time [pipeline]
#pragma cuda_rewrite pipeline
  seed<<<(chunks + 127) / 128, 128>>>(n, chunks);
  return cudaDeviceSynchronize() != cudaSuccess;
}

// CHECK: #include "cuda_rewrite/pipeline.cuh"
// CHECK-NOT: #pragma
// CHECK: struct seed_Pipeline {
// CHECK-NEXT:   cuda_rewrite::pipeline::Control *control;
// CHECK-NEXT:   cuda_rewrite::pipeline::Queue<Range> split;
// CHECK-NEXT:   cuda_rewrite::pipeline::Queue<Visit> leaf;
// CHECK-NEXT:   cuda_rewrite::pipeline::Queue<Visit> again;
// CHECK: __device__ void split_inPipeline(Range r, const seed_Pipeline &pipeline) {
// CHECK:     pipeline.split.push(Range{r.begin, middle, r.round});
// CHECK-NEXT:     pipeline.split.push(Range{middle, r.end, r.round});
// CHECK:     pipeline.again.push(Visit{r.begin, r.round});
// CHECK: __device__ void leaf_inPipeline(Visit v, int rank,
// CHECK-NEXT:                                 const seed_Pipeline &pipeline) {
// CHECK:     sum += __shfl_down_sync(0xffffffffu, sum, offset);
// CHECK:     pipeline.again.push(v);
// CHECK: __device__ void again_inPipeline(Visit v, const seed_Pipeline &pipeline) {
// CHECK-NEXT:   if (v.round < 3)
// CHECK-NEXT:     pipeline.split.push(Range{v.index, v.index + 1, v.round + 1});
// CHECK: __global__ void seed_seedPipeline(int n, int chunks, seed_Pipeline pipeline) {
// CHECK:     pipeline.split.push(Range{i * n / chunks, (i + 1) * n / chunks, 0});
// CHECK-NEXT:   pipeline.leaf.pushOnce(Visit{int(blockIdx.x), 0}, threadIdx.x % 32);
// CHECK: template <int First, int Last>
// CHECK: seed_runPipelineBatch(const seed_Pipeline &pipeline,
// CHECK:   if constexpr (First <= 1 && 1 <= Last)
// CHECK-NEXT:     if (batch.stage == 1) {
// CHECK-NEXT:       for (unsigned item = threadIdx.x / 32; item < unsigned(batch.count);
// CHECK-NEXT:            item += blockDim.x / 32)
// CHECK-NEXT:         leaf_inPipeline(pipeline.leaf.take(batch.first + item),
// CHECK-NEXT:                         threadIdx.x % 32, pipeline);
// CHECK: __global__ void __launch_bounds__(256)
// CHECK-NEXT:     seed_pipelineWorker(seed_Pipeline pipeline,
// CHECK:   if (!cuda_rewrite::pipeline::stayOnThisSm(placement))
// CHECK:   while (cuda_rewrite::pipeline::nextBatch(*pipeline.control, First, Last,
// CHECK:     seed_pipelineStage(seed_Pipeline pipeline,
// CHECK: static cudaError_t seed_runPipeline(dim3 grid, dim3 block, size_t sharedBytes,
// CHECK-NEXT:                                     cudaStream_t stream, int n, int chunks) {
// CHECK:       {"leaf", 32, sizeof(Visit)},
// CHECK:       {"seed", 3, stages, 256, "auto", nullptr});
// CHECK:       (const void *)seed_pipelineWorker<0, 2>,
// CHECK-NEXT:       nullptr,
// CHECK:     seed<<<grid, block, sharedBytes, stream>>>(n, chunks);
// CHECK:   seed_seedPipeline<<<grid, block, sharedBytes, stream>>>(n, chunks, pipeline);
// CHECK-NEXT:   return runner.run({workers, rounds}, &pipeline, stream);
// CHECK: CUDA_REWRITE_CHECK(seed_runPipeline((chunks + 127) / 128, 128, 0, 0, n, chunks));
