// A template kernel is rewritten per instantiation the file launches: each
// is analysed with its arguments, and its code is an explicit
// specialization of templates that take the kernel template's parameters
// (declared once, before the first specialization). Launches name the
// launcher with the instantiation's arguments, deduced ones included.
// RUN: %cuda-rewrite --auto --remarks %s -o %t.cu -- 2>&1 | FileCheck %s
// The output keeps these comments; drop them so that no check matches itself.
// RUN: grep -vE '^ *// [A-Z]+(-[A-Z]+)*:' %t.cu | FileCheck --check-prefix=CODE %s
// RUN: %nvcc-compile %t.cu -o %t.o

// A template argument written as a macro: the launch keeps its spelling
// (another value names another instantiation), and the value is pinned.
#define RADIUS 1

// CHECK-DAG: templates.cu:[[@LINE+2]]:17: remark: rewritten: 'box<1, float, true>' runs as box_systolic{{(_aligned|_wide)?}}<1, float, true> (2D box radius 1: 9 points
template <int R, typename T = float, bool Unused = true>
__global__ void box(const T *__restrict__ in, T *__restrict__ out, int W,
                    int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < R || x >= W - R || y < R || y >= H - R)
    return;
  T s = 0;
  for (int j = -R; j <= R; ++j)
    for (int i = -R; i <= R; ++i)
      s += in[(y + j) * W + x + i];
  out[y * W + x] = s / ((2 * R + 1) * (2 * R + 1));
}
// CHECK-DAG: templates.cu:[[@LINE-12]]:17: remark: rewritten: 'box<2, double, true>' runs as box_systolic{{(_aligned|_wide)?}}<2, double, true> (2D box radius 2: 25 points
// The radius-0 instantiation is a point-wise map: no candidate, its launch
// stays.
// CHECK-NOT: 'box<0

// The primary templates, with the kernel template's parameters (no
// default arguments: these are new templates), then a specialization each.
// CODE: /// cuda-rewrite's systolic forms of box, specialized below for each
// CODE-NEXT: /// instantiation this file launches.
// CODE-NEXT: template <int R, typename T, bool Unused> struct box_systolic_shape;
// CODE-NEXT: template <int R, typename T, bool Unused>
// CODE-NEXT: __global__ void box_systolic(const T *__restrict__ in, T *__restrict__ out,
// CODE: {{^}}static void box_systolic_launch(dim3 grid, dim3 block, size_t sharedBytes,
// CODE: static_assert((RADIUS) == 1,
// CODE: template <> struct box_systolic_shape<1, float, true> {
// CODE: template <>
// CODE-NEXT: __global__ void
// CODE-NEXT: __launch_bounds__(box_systolic_shape<1, float, true>::Warps * 32,
// CODE-NEXT: box_systolic_shape<1, float, true>::MinBlocks)
// CODE-NEXT: box_systolic<1, float, true>(const float *__restrict in,
// CODE: {{^}}void box_systolic_launch<1, float, true>(dim3 grid, dim3 block,
// CODE: box<1, float, true><<<grid, block, sharedBytes, stream>>>(in, out, W, H);
// CODE: template <> struct box_systolic_shape<2, double, true> {

// CHECK: templates.cu:[[@LINE+2]]:17: remark: not rewritten: a template kernel: its template parameter 'Rs' is a pack
template <int... Rs>
__global__ void packed(const float *__restrict__ in, float *__restrict__ out,
                       int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 1 || x >= W - 1 || y >= H)
    return;
  out[y * W + x] = in[y * W + x - 1] + in[y * W + x + 1];
}

// A specialization the user wrote is a kernel of its own; the systolic code
// of box's instantiations specializes templates of the same names, so it is
// refused.
// CHECK: templates.cu:[[@LINE+2]]:17: remark: not rewritten: an explicit specialization of a template kernel: its code would clash with the template's instantiations'
template <>
__global__ void box<3, float, true>(const float *__restrict__ in,
                                    float *__restrict__ out, int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 3 || x >= W - 3 || y >= H)
    return;
  out[y * W + x] = in[y * W + x - 3] + in[y * W + x + 3];
}

void run(const float *a, float *b, const double *c, double *d, int W, int H) {
  dim3 block(32, 8), grid((W + 31) / 32, (H + 7) / 8);
  // CODE: box_systolic_launch<RADIUS, float, true>(grid, block, 0, 0, a, b, W, H);
  box<RADIUS><<<grid, block>>>(a, b, W, H);
  // CODE-NEXT: box_systolic_launch<2, double, true>(grid, block, 0, 0, c, d, W, H);
  box<2, double><<<grid, block>>>(c, d, W, H);
  // CODE-NEXT: box<0><<<grid, block>>>(a, b, W, H);
  box<0><<<grid, block>>>(a, b, W, H);
  box<3><<<grid, block>>>(a, b, W, H);
  packed<1, 2><<<grid, block>>>(a, b, W, H);
}
