// Launches written in macros, in templates and under __CUDA_ARCH__ are
// refused with a remark saying why (docs/design.md section 4), never rewritten
// wrongly; the file itself is left unchanged apart from its pragmas.
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=OUT < %t.cu

__global__ void child(int *p) { p[threadIdx.x] = 1; }

#define SPAWN(p) child<<<1, 32>>>(p)

#pragma cuda_rewrite aggregate
__global__ void viaMacro(int *p) {
  // CHECK: macro-template.cu:[[@LINE+1]]:3: warning: not rewritten: written inside a macro expansion; rewriting it would change the macro for every use (expand the macro here to rewrite it) [aggregate] [-Wcuda-rewrite-refused]
  SPAWN(p);
}

#pragma cuda_rewrite aggregate
template <int N> __global__ void viaTemplate(int *p) {
  // CHECK: macro-template.cu:[[@LINE+1]]:3: warning: not rewritten: inside a template; the 'aggregate' pass does not rewrite templates yet [aggregate] [-Wcuda-rewrite-refused]
  child<<<N, 32>>>(p);
}
template __global__ void viaTemplate<2>(int *);

#pragma cuda_rewrite aggregate
__global__ void viaArch(int *p) {
#ifdef __CUDA_ARCH__
  // CHECK: macro-template.cu:[[@LINE+1]]:3: warning: not rewritten: under a __CUDA_ARCH__ conditional, where host and device compilations see different code [aggregate] [-Wcuda-rewrite-refused]
  child<<<1, 32>>>(p);
#endif
}

// OUT: #define SPAWN(p) child<<<1, 32>>>(p)
// OUT-NOT: {{^}}#pragma
// OUT: SPAWN(p);
// OUT: child<<<N, 32>>>(p);
