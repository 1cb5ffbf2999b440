// A stencil kernel defined in a project header the file includes is
// rewritten under --auto: its generated code goes into this file, after the
// #include that brings the kernel in, and the launches in this file call
// the launcher. The header is not written (-i leaves it as it was). A
// launch inside the header stays the original kernel's.
// RUN: rm -rf %t && mkdir -p %t && cp %s %t/main.cu && cp -r %inputs/systolic %t/inc
// RUN: %cuda-rewrite --auto --remarks %t/main.cu -i -- -I %t/inc 2>&1 | FileCheck %s
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t/main.cu | FileCheck %s --check-prefix=CODE
// RUN: diff %inputs/systolic/kernels.cuh %t/inc/kernels.cuh
// RUN: %nvcc-compile -rdc=true -I %t/inc %t/main.cu -o %t/main.o
// A pragma in the header annotates its kernel (without --auto, only that
// one is rewritten); another pass's pragma there is ignored, with a warning.
// RUN: cp %s %t/annotated.cu
// RUN: %cuda-rewrite --remarks %t/annotated.cu -o %t/annotated.out.cu -- -I %t/inc 2>&1 | FileCheck %s --check-prefix=ANNOTATED
// RUN: %cuda-rewrite --list %t/annotated.cu -- -I %t/inc 2>&1 | FileCheck %s --check-prefix=LIST
// RUN: %nvcc-compile -rdc=true -I %t/inc %t/annotated.out.cu -o %t/annotated.o
// ANNOTATED-DAG: kernels.cuh:{{[0-9]+}}:1: warning: cuda_rewrite pragma ignored: 'promote' is read in the file being rewritten only; in an included file, only 'systolic' is
// ANNOTATED-DAG: kernels.cuh:{{[0-9]+}}:17: remark: rewritten: 'sharpen' runs as sharpen_systolic{{.*}}: p(4) as given
// ANNOTATED-DAG: kernels.cuh:4:17: remark: not rewritten: not annotated; add '#pragma cuda_rewrite systolic' or pass --auto [systolic]
// LIST: kernels.cuh:4:17: stencil: kernel 'smooth'
// LIST: kernels.cuh:{{[0-9]+}}:1: pragma: systolic p(4) -> function 'sharpen' at kernels.cuh:{{[0-9]+}}:1

#include "kernels.cuh"
// CODE: #include "kernels.cuh"
// CODE-EMPTY:
// CODE-NEXT: /// The shape cuda-rewrite chose for {{sharpen|smooth}}_systolic (--remarks says why).

// CHECK-DAG: kernels.cuh:4:17: remark: rewritten: 'smooth' runs as smooth_systolic{{.*}}; 1 launch rewritten)
// CHECK-DAG: kernels.cuh:16:17: remark: not rewritten: no host launch of 'edges' in this file to rewrite [systolic]
// CHECK-DAG: kernels.cuh:{{[0-9]+}}:17: remark: rewritten: 'sharpen' runs as sharpen_systolic{{.*}}: p(4) as given

void run(const float *in, float *out, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  // CODE: smooth_systolic_launch(grid, block, 0, 0, in, out, W, H);
  smooth<<<grid, block>>>(in, out, W, H);
  runEdges(in, out, W, H);
  sharpen<<<grid, block>>>(in, out, W, H);
}
