// --line-directives: the rewrite says with #line directives which line of
// this file each of its lines comes from (the file by its absolute path), so
// that nvcc's diagnostics point here: the first line names the file, and each
// group of edited lines that changes the line count is followed by the
// number of the next untouched line. nvcc/line-directives-errors.cu shows
// nvcc reporting an error at its line here.
// RUN: %cuda-rewrite --line-directives %s -o %t.cu -- 2>&1 | count 0
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck %s -DFILE=%s --match-full-lines
// RUN: %nvcc-compile -rdc=true %t.cu -o %t.o
//
// Every mode that prints or writes the rewritten file carries them: stdout
// and --output-dir give the bytes of -o.
// RUN: %cuda-rewrite --line-directives %s -- > %t.stdout.cu
// RUN: cmp %t.cu %t.stdout.cu
// RUN: rm -rf %t.dir && %cuda-rewrite --line-directives %s --output-dir %t.dir --
// RUN: cmp %t.cu %t.dir/line-directives.cu
// --diff shows them, and applies with patch to give -o's file.
// RUN: %cuda-rewrite --line-directives --diff %s -- > %t.diff
// RUN: FileCheck %s --check-prefix=DIFF -DFILE=%s < %t.diff
// RUN: cp %s %t.patched.cu && patch -s %t.patched.cu < %t.diff
// RUN: cmp %t.cu %t.patched.cu
// --export-fixes keeps the plain edits.
// RUN: %cuda-rewrite --line-directives --export-fixes %t.yaml %s --
// RUN: FileCheck %s --check-prefix=YAML < %t.yaml
// YAML-NOT: #line
// YAML: ReplacementText: "{{.*}}#include \"cuda_rewrite/runtime.cuh\"\n\n"
// YAML-NOT: #line
// Without the option, or with =false, there is none.
// RUN: %cuda-rewrite %s -- | FileCheck %s --check-prefix=NONE
// RUN: %cuda-rewrite --line-directives=false %s -- | FileCheck %s --check-prefix=NONE
// NONE-NOT: {{^}}#line
// NONE: #include "cuda_rewrite/runtime.cuh"
// NONE-NOT: {{^}}#line
// A file without edits is written as it is.
// RUN: printf '__global__ void k(int *p) { *p = 1; }\n' > %t.plain.cu
// RUN: %cuda-rewrite --line-directives %t.plain.cu -o %t.plain.out.cu --
// RUN: cmp %t.plain.cu %t.plain.out.cu
// -i would write directives naming the lines it replaces into the input.
// RUN: not %cuda-rewrite --line-directives -i %s -- 2>&1 | FileCheck %s --check-prefix=INPLACE
// INPLACE: cuda-rewrite: error: --line-directives cannot be combined with -i: {{.*}}

// CHECK:      #line 1 "[[FILE]]"
// CHECK-NEXT: // --line-directives: the rewrite says with #line directives which line of

// The runtime header goes before the first declaration, whose line is named
// after it.
// CHECK:      #include "cuda_rewrite/runtime.cuh"
// CHECK:      #line [[# @LINE + 2]] "[[FILE]]"
// CHECK-NEXT: __global__ void child(float *data, int n, float scale) {
__global__ void child(float *data, int n, float scale) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    data[i] *= scale;
}
// The aggregated kernel is generated after the child, and attributed to the
// lines after it; the next untouched line is named.
// CHECK:      __global__ void __launch_bounds__(1024){{[[:space:]]+}}child_aggregated({{.*}}
// CHECK:      #line [[# @LINE - 3]] "[[FILE]]"
// CHECK-NEXT: // The aggregated kernel is generated after the child, and attributed to the

// The pragma's line is removed and the kernel's head gains launch bounds:
// the line after the head is named.
// CHECK:      __global__ void __launch_bounds__(256) parent(float **rows, const int *lengths,
// CHECK-NEXT: int count, float scale) {
// CHECK-NEXT: #line [[# @LINE + 4]] "[[FILE]]"
#pragma cuda_rewrite aggregate granularity(warp)
__global__ void parent(float **rows, const int *lengths, int count,
                       float scale) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r < count && lengths[r] > 0)
    child<<<(lengths[r] + 31) / 32, 32>>>(rows[r], lengths[r], scale);
}

// The host launch gets a line before it (the pool's reset).
// CHECK:      void run(float **rows, const int *lengths, int count) {
// CHECK-NEXT:   cuda_rewrite::prepareAggregatedLaunch();
// CHECK-NEXT:   parent<<<(count + 255) / 256, 256>>>(rows, lengths, count, 2.0f);
// CHECK-NEXT: #line [[# @LINE + 5]] "[[FILE]]"
// CHECK-NEXT: }
// CHECK-NOT:  {{^}}#line
void run(float **rows, const int *lengths, int count) {
  parent<<<(count + 255) / 256, 256>>>(rows, lengths, count, 2.0f);
}

// DIFF:      +#line 1 "[[FILE]]"
// DIFF-NEXT:  // --line-directives: the rewrite says with #line directives which line of
// DIFF:      +#include "cuda_rewrite/runtime.cuh"
// DIFF:      +#line {{[0-9]+}} "[[FILE]]"
