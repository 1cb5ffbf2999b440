// A stencil kernel defined in a project header the file includes is
// rewritten under --auto: its generated code goes into this file, after the
// #include that brings the kernel in, and the launches in this file call
// the launcher. The header is not written (-i leaves it as it was). A
// launch inside the header stays the original kernel's.
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/main.cu && cp -r %inputs/systolic %t/inc
// RUN: %cuda-rewrite --auto --remarks %t/main.cu -i -- -I %t/inc 2>&1 | FileCheck %s
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t/main.cu | FileCheck %s --check-prefix=CODE
// RUN: diff %inputs/systolic/kernels.cuh %t/inc/kernels.cuh
// RUN: %nvcc-compile -I %t/inc %t/main.cu -o %t/main.o

#include "kernels.cuh"
// CODE: #include "kernels.cuh"
// CODE-EMPTY:
// CODE-NEXT: /// The shape cuda-rewrite chose for smooth_systolic (--remarks says why).

// CHECK-DAG: kernels.cuh:4:17: remark: rewritten: 'smooth' runs as smooth_systolic{{.*}}; 1 launch rewritten)
// CHECK-DAG: kernels.cuh:16:17: remark: not rewritten: no host launch of 'edges' in this file to rewrite [systolic]

void run(const float *in, float *out, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  // CODE: smooth_systolic_launch(grid, block, 0, 0, in, out, W, H);
  smooth<<<grid, block>>>(in, out, W, H);
  runEdges(in, out, W, H);
}
