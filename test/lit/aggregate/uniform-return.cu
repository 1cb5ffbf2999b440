// A parent with barriers that returns early is aggregated at block (and
// kernel) granularity when the return's condition is the same for every
// thread of the block: built from the block's index, unchanged parameters,
// locals that never change, and loads at such addresses from memory the
// kernel cannot write (a __restrict__ pointer to const). Else it stays at
// warp granularity, and the remark says which condition may differ.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s
// RUN: %nvcc-compile -rdc=true %t.cu -o %t.o

struct Node {
  int count, first;
};

__global__ void leaf(int *out, int first, int count) {
  if (threadIdx.x < count)
    out[first + threadIdx.x] = first;
}

#pragma cuda_rewrite aggregate
__global__ void visit(const Node *__restrict__ nodes, int *out, int small) {
  const Node &node = nodes[blockIdx.x];
  if (node.count <= small)
    return;
  __shared__ int firsts[64];
  firsts[threadIdx.x % 64] = node.first + threadIdx.x;
  __syncthreads();
  // CHECK-DAG: uniform-return.cu:[[@LINE+2]]:5: remark: rewritten: aggregated at kernel granularity into 'leaf_aggregated'
  if (threadIdx.x == 0)
    leaf<<<1, 64>>>(out, firsts[0], node.count);
}

#pragma cuda_rewrite aggregate
__global__ void perThread(const Node *__restrict__ nodes, int *out, int n) {
  if (threadIdx.x >= n)
    return;
  __syncthreads();
  // CHECK-DAG: uniform-return.cu:[[@LINE+1]]:3: remark: rewritten: aggregated at warp granularity into 'leaf_aggregated_2' (not kernel or block granularity: the parent kernel uses __syncthreads and returns early (line [[@LINE-2]]) where the condition at line [[@LINE-3]] may differ between the block's threads
  leaf<<<1, 32>>>(out, nodes[threadIdx.x].first, 32);
}

void run(const Node *nodes, int *out, int blocks) {
  visit<<<blocks, 64>>>(nodes, out, 4);
  perThread<<<blocks, 64>>>(nodes, out, 16);
}
