// Chains the promote pass refuses, each with the reason; nothing is written
// for them (the output equals the input without its pragmas).
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=OUT < %t.cu
// OUT-NOT: {{_promot}}ed

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: cannot promote 'grid2' (P): the host launch (line {{[0-9]+}}) does not launch a grid of literally 1 block [promote] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite promote
__global__ void grid2(int *out, int chunk) {
  if (threadIdx.x == 0 && chunk < 8)
    grid2<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
  out[chunk * 64 + threadIdx.x] = chunk;
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: cannot promote 'blocks' (P): the host launch (line {{[0-9]+}}) uses block size '128', the self-launch '64': every link must have the same block [promote] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite promote
__global__ void blocks(int *out, int chunk) {
  if (threadIdx.x == 0 && chunk < 8)
    blocks<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
  out[chunk * 64 + threadIdx.x] = chunk;
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: cannot promote 'twice' (P): the kernel launches itself more than once (line {{[0-9]+}}); a chain has one successor per link [promote] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite promote
__global__ void twice(int *out, int chunk) {
  if (threadIdx.x == 0 && chunk < 8)
    twice<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
  if (threadIdx.x == 0 && chunk < 4)
    twice<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 2);
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: cannot promote 'everyThread' (P): the self-launch is not guarded by a test that selects one thread of the block (`threadIdx.x == 0`, or a local that holds threadIdx.x compared with 0): one thread must launch the next link [promote] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite promote
__global__ void everyThread(int *out, int chunk) {
  out[chunk * 64 + threadIdx.x] = chunk;
  if (chunk < 8)
    everyThread<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
}

// A local that once held threadIdx.x but changes selects no one thread.
// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: cannot promote 'movedLead' (P): the self-launch is not guarded by a test that selects one thread of the block
#pragma cuda_rewrite promote
__global__ void movedLead(int *out, int chunk) {
  int lead = threadIdx.x;
  lead += chunk;
  out[chunk * 64 + threadIdx.x] = chunk;
  if (lead == 0 && chunk < 8)
    movedLead<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: cannot promote 'looped' (P): the self-launch (line {{[0-9]+}}) is inside a loop [promote] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite promote
__global__ void looped(int *out, int chunk) {
  for (int k = 0; k < 1; ++k)
    if (threadIdx.x == 0 && chunk < 8)
      looped<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: cannot promote 'forgotten' (P): the self-launch (line {{[0-9]+}}) goes to stream 'cudaStreamFireAndForget'; only cudaStreamTailLaunch or the default stream keep the order that promotion reproduces [promote] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite promote
__global__ void forgotten(int *out, int chunk) {
  if (threadIdx.x == 0 && chunk < 8)
    forgotten<<<1, 64, 0, cudaStreamFireAndForget>>>(out, chunk + 1);
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: cannot promote 'noBoundary' (PO): `overlap` needs `#pragma cuda_rewrite overlap_boundary` in the kernel's body, where the part of the prologue independent of the previous link ends [promote] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite promote overlap
__global__ void noBoundary(int *out, int chunk) {
  if (threadIdx.x == 0 && chunk < 8)
    noBoundary<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
  out[chunk * 64 + threadIdx.x] = chunk;
}

// In place: each link reads and writes `data`; the prologue reads it.
// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: cannot promote 'inPlace' (PO): the prologue before overlap_boundary (line {{[0-9]+}}) accesses 'data', which the links both read and write: the pass cannot show that it does not read what an earlier link writes, so only the variants without `overlap` apply [promote] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite promote overlap
__global__ void inPlace(int *data, int chunk) {
  const int v = data[chunk * 64 + threadIdx.x + 1];
#pragma cuda_rewrite overlap_boundary
  __syncthreads();
  if (threadIdx.x == 0 && chunk < 8)
    inPlace<<<1, 64, 0, cudaStreamTailLaunch>>>(data, chunk + 1);
  data[chunk * 64 + threadIdx.x] = v;
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: cannot promote 'aliased' (P): 'out' is written and may alias another pointer parameter; mark the pointers __restrict__ if they never overlap [promote] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite promote
__global__ void aliased(const int *in, int *out, int chunk) {
  if (threadIdx.x == 0 && chunk < 8)
    aliased<<<1, 64, 0, cudaStreamTailLaunch>>>(in, out, chunk + 1);
  out[chunk * 64 + threadIdx.x] = in[chunk * 64 + threadIdx.x];
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: cannot promote 'speculativeOverlap' (PO): the launch condition 'total > 0' depends on values computed in the body, so the next link would be launched speculatively; with `overlap` its prologue would run before it knows whether it exists [promote] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite promote overlap
__global__ void speculativeOverlap(const int *__restrict__ in,
                                   int *__restrict__ out, int chunk) {
  const int v = in[chunk * 64 + threadIdx.x];
#pragma cuda_rewrite overlap_boundary
  const int total = __syncthreads_count(v > 0);
  if (threadIdx.x == 0 && total > 0)
    speculativeOverlap<<<1, 64, 0, cudaStreamTailLaunch>>>(in, out, chunk + 1);
  out[chunk * 64 + threadIdx.x] = v;
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: cannot promote 'early' (P): a return before the self-launch (line {{[0-9]+}}) would leave the next link waiting [promote] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite promote
__global__ void early(int *out, int chunk, int offset) {
  if (offset < 0)
    return;
  if (threadIdx.x == 0 && chunk < 8)
    early<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1, offset + out[0]);
  out[chunk * 64 + threadIdx.x] = offset;
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: cannot promote 'doubling' (PA): argument 'stride * 2' for parameter 'stride' is not the parameter plus or minus a constant, so a pool block cannot compute its link's value from its ticket (aggregate(n) needs that; plain promote does not) [promote] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite promote aggregate(8)
__global__ void doubling(int *out, int stride) {
  if (threadIdx.x == 0 && stride < 1024)
    doubling<<<1, 64, 0, cudaStreamTailLaunch>>>(out, stride * 2);
  out[stride + threadIdx.x] = stride;
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: cannot promote 'pooledBlockIdx' (PA): the body reads blockIdx or gridDim, which differ between the blocks of a pool (aggregate(n)) [promote] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite promote aggregate(8)
__global__ void pooledBlockIdx(int *out, int chunk) {
  if (threadIdx.x == 0 && chunk < 8)
    pooledBlockIdx<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
  out[chunk * 64 + threadIdx.x + blockIdx.x] = chunk;
}

// CHECK: refusals.cu:[[@LINE+2]]:17: warning: not rewritten: cannot promote 'deviceOnly' (P): no host launch of 'deviceOnly' in this file: the first link must be launched from the host [promote] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite promote
__global__ void deviceOnly(int *out, int chunk) {
  if (threadIdx.x == 0 && chunk < 8)
    deviceOnly<<<1, 64, 0, cudaStreamTailLaunch>>>(out, chunk + 1);
}

void host(int *out, const int *in) {
  grid2<<<2, 64>>>(out, 0);
  blocks<<<1, 128>>>(out, 0);
  twice<<<1, 64>>>(out, 0);
  everyThread<<<1, 64>>>(out, 0);
  movedLead<<<1, 64>>>(out, 0);
  looped<<<1, 64>>>(out, 0);
  forgotten<<<1, 64>>>(out, 0);
  noBoundary<<<1, 64>>>(out, 0);
  inPlace<<<1, 64>>>(out, 0);
  aliased<<<1, 64>>>(in, out, 0);
  speculativeOverlap<<<1, 64>>>(in, out, 0);
  early<<<1, 64>>>(out, 0, 0);
  doubling<<<1, 64>>>(out, 1);
  pooledBlockIdx<<<1, 64>>>(out, 0);
}
