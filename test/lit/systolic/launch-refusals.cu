// The launches of a kernel are rewritten to call its launcher, so every one
// must be a host launch after the kernel's definition or a file-scope
// declaration of it, outside macros and
// templates; a kernel with no launch in the file is not rewritten either.
// The launcher takes the kernel's parameters as written and passes them on
// by name: an unnamed parameter or a default argument is refused.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s
// RUN: grep -v '^#pragma cuda_rewrite' %s | diff - %t.cu

#define STENCIL_BODY                                                           \
  int x = blockIdx.x * blockDim.x + threadIdx.x;                               \
  int y = blockIdx.y * blockDim.y + threadIdx.y;                               \
  if (x < 1 || x >= W - 1 || y < 1 || y >= H - 1)                              \
    return;                                                                    \
  out[y * W + x] = in[y * W + x - 1] + in[(y + 1) * W + x];

void runEarly(const float *in, float *out, int W, int H) {
  // Declared in the function only: the launcher, declared at file scope
  // after a declaration of the kernel there (systolic/declared-before.cu),
  // has no place before this launch.
  __global__ void early(const float *__restrict__ in,
                        float *__restrict__ out, int W, int H);
  // CHECK-DAG: launch-refusals.cu:[[#@LINE+5]]:17: warning: not rewritten: a launch (line [[@LINE+1]]) comes before the kernel's definition and every declaration of it in the same scope, where the generated launcher is not yet declared [systolic] [-Wcuda-rewrite-refused]
  early<<<dim3(W / 32, H / 8), dim3(32, 8)>>>(in, out, W, H);
}

#pragma cuda_rewrite systolic
__global__ void early(const float *__restrict__ in, float *__restrict__ out,
                      int W, int H) {
  STENCIL_BODY
}

// CHECK-DAG: launch-refusals.cu:[[@LINE+2]]:17: warning: not rewritten: it is launched from device code (line [[@LINE+9]]); only host launches are rewritten [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void fromDevice(const float *__restrict__ in,
                           float *__restrict__ out, int W, int H) {
  STENCIL_BODY
}

__global__ void parent(const float *in, float *out, int W, int H) {
  if (threadIdx.x == 0)
    fromDevice<<<dim3(W / 32, H / 8), dim3(32, 8)>>>(in, out, W, H);
}

// CHECK-DAG: launch-refusals.cu:[[@LINE+2]]:17: warning: not rewritten: no host launch of 'unlaunched' in this file to rewrite [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void unlaunched(const float *__restrict__ in,
                           float *__restrict__ out, int W, int H) {
  STENCIL_BODY
}

// The remark is checked at the launch, in run() below.
#pragma cuda_rewrite systolic
__global__ void inMacro(const float *__restrict__ in, float *__restrict__ out,
                        int W, int H) {
  STENCIL_BODY
}
#define LAUNCH(k, ...) k<<<dim3(4, 4), dim3(32, 8)>>>(__VA_ARGS__)

// CHECK-DAG: launch-refusals.cu:[[@LINE+2]]:17: warning: not rewritten: a launch (line [[@LINE+7]]) is inside a template [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void inTemplate(const float *__restrict__ in,
                           float *__restrict__ out, int W, int H) {
  STENCIL_BODY
}
template <typename T> void runTemplate(const T *in, T *out, int W, int H) {
  inTemplate<<<dim3(4, 4), dim3(32, 8)>>>(in, out, W, H);
}

// CHECK-DAG: launch-refusals.cu:[[@LINE+2]]:17: warning: not rewritten: parameter 5 has no name, so the launcher cannot pass it on [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void unnamed(const float *__restrict__ in, float *__restrict__ out,
                        int W, int H, int) {
  STENCIL_BODY
}

// CHECK-DAG: launch-refusals.cu:[[@LINE+2]]:17: warning: not rewritten: parameter 5 ('c') has a default argument [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void defaults(const float *__restrict__ in,
                         float *__restrict__ out, int W, int H,
                         float c = 2.0f) {
  STENCIL_BODY
}

// One launch the pass cannot rewrite keeps the others too: a host launch
// alongside the device one of fromDevice is left as it is.
void run(const float *in, float *out, int W, int H) {
  dim3 block(32, 8), grid(W / 32, H / 8);
  fromDevice<<<grid, block>>>(in, out, W, H);
  early<<<grid, block>>>(in, out, W, H);
  // CHECK-DAG: launch-refusals.cu:{{[0-9]+}}:17: warning: not rewritten: a launch (line [[@LINE+1]]) is inside a macro [systolic] [-Wcuda-rewrite-refused]
  LAUNCH(inMacro, in, out, W, H);
  runTemplate(in, out, W, H);
  unnamed<<<grid, block>>>(in, out, W, H, 7);
  defaults<<<grid, block>>>(in, out, W, H);
}
// CHECK-NOT: remark: rewritten
