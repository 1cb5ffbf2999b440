// With --line-directives, nvcc reports errors in untouched lines after
// generated code at their lines in this file, in host and device code alike;
// without them, at lines of the rewritten copy.
// RUN: %cuda-rewrite --line-directives %s -o %t.cu --
// RUN: not %nvcc-compile -rdc=true -DINJECT_ERRORS %t.cu -o %t.o 2>&1 | FileCheck %s -DFILE=%s
// RUN: %cuda-rewrite %s -o %t.plain.cu --
// RUN: not %nvcc-compile -rdc=true -DINJECT_ERRORS %t.plain.cu -o %t.o 2>&1 | FileCheck %s --check-prefix=PLAIN -DFILE=%t.plain.cu
// Without the errors, the rewrite compiles.
// RUN: %nvcc-compile -rdc=true %t.cu -o %t.o

__global__ void child(float *data, int n, float scale) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    data[i] *= scale;
}

#pragma cuda_rewrite aggregate granularity(block)
__global__ void parent(float **rows, const int *lengths, int count,
                       float scale) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < count && lengths[r] > 0)
    child<<<(lengths[r] + 31) / 32, 32>>>(rows[r], lengths[r], scale);
}

void run(float **rows, const int *lengths, int count) {
  parent<<<(count + 255) / 256, 256>>>(rows, lengths, count, 2.0f);
}

#ifdef INJECT_ERRORS
// CHECK: [[FILE]]([[# @LINE + 2]]): error: identifier "injected_host_error" is undefined
// PLAIN: [[FILE]]({{[0-9]+}}): error: identifier "injected_host_error" is undefined
int injected = injected_host_error;

__global__ void after(int *p) {
  // CHECK: [[FILE]]([[# @LINE + 2]]): error: identifier "injected_device_error" is undefined
  // PLAIN: [[FILE]]({{[0-9]+}}): error: identifier "injected_device_error" is undefined
  *p = injected_device_error;
}
#endif
