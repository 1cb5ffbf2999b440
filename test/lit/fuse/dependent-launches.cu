// Launches in a host function template whose kernels depend on the
// template's arguments name no kernel until instantiated: the stage graph
// once asked them for their kernel's name and crashed (found by --coverage
// on a public benchmark). Now the block is refused, with --auto too.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s
// RUN: %cuda-rewrite --auto --remarks %s -o %t.auto.cu -- 2>&1 | FileCheck %s --check-prefix=AUTO

template <int Scale>
__global__ void stretch(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = Scale * in[i];
}

template <int Scale> void run(const float *in, float *t, float *out, int n) {
#pragma cuda_rewrite fuse
  {
    // CHECK: warning: not rewritten: {{.*}}a launch in a template, whose kernel depends on the template's arguments
    stretch<Scale><<<(n + 255) / 256, 256>>>(in, t, n);
    stretch<Scale><<<(n + 255) / 256, 256>>>(t, out, n);
  }
}

template <int Scale> void runAuto(const float *in, float *t, float *out, int n) {
  // AUTO-NOT: error
  // AUTO-NOT: rewritten: 2 stages
  stretch<Scale><<<(n + 255) / 256, 256>>>(in, t, n);
  stretch<Scale><<<(n + 255) / 256, 256>>>(t, out, n);
}

template void run<2>(const float *, float *, float *, int);
template void runAuto<2>(const float *, float *, float *, int);
