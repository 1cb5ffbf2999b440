// A launch into a stream the thread creates for it alone (next to the launch,
// then at most destroyed) is ordered against no other work: it joins the
// aggregated launch like a launch into the default stream, the stream's
// declaration, creation and destruction go with it, and the remark says why
// (NVIDIA's cdpSimpleQuicksort launches each half so). A stream that a
// second launch also uses, or one that comes from elsewhere, orders work:
// such a launch stays, and its stream.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s --check-prefix=OUT
// RUN: %nvcc-compile -rdc=true %t.cu -o %t.o

__global__ void leaf(int *p, int i) { p[i * 32 + threadIdx.x] = i; }

#pragma cuda_rewrite aggregate
__global__ void fresh(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    // REMARK: streams.cu:[[@LINE+1]]:5: remark: rewritten: aggregated at {{.*}}; its stream 's' is created for this launch alone (line [[@LINE-1]]) and orders nothing else, so the launch joins the others [aggregate]
    leaf<<<1, 32, 0, s>>>(p, i);
    cudaStreamDestroy(s);
  }
}

#pragma cuda_rewrite aggregate
__global__ void shared(int *p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  // CHECK: streams.cu:[[@LINE+1]]:3: warning: not rewritten: the launch names a stream that may order it after or before other work
  leaf<<<1, 32, 0, s>>>(p, i);
  // CHECK: streams.cu:[[@LINE+1]]:3: warning: not rewritten: the launch names a stream that may order it
  leaf<<<1, 32, 0, s>>>(p, i + n);
  cudaStreamDestroy(s);
}

#pragma cuda_rewrite aggregate
__global__ void given(int *p, cudaStream_t s) {
  // CHECK: streams.cu:[[@LINE+1]]:3: warning: not rewritten: the launch names a stream that may order it
  leaf<<<1, 32, 0, s>>>(p, threadIdx.x);
}

// OUT-LABEL: fresh_body(
// OUT-NOT: cudaStream
// OUT: cr_pending_0.request(1, 32, 0, leaf_args{i});
// OUT-LABEL: void shared(
// OUT: cudaStream_t s;
// OUT-NEXT: cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
// OUT: leaf<<<1, 32, 0, s>>>(p, i);
// OUT: leaf<<<1, 32, 0, s>>>(p, i + n);
// OUT-NEXT: cudaStreamDestroy(s);

void run(int *p, int n, cudaStream_t s) {
  fresh<<<(n + 127) / 128, 128>>>(p, n);
  shared<<<(n + 127) / 128, 128>>>(p, n);
  given<<<1, 32>>>(p, s);
}
