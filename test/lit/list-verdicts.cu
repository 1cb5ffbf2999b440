// --list shows the verdict a rewrite with the same options reaches, taken
// from the passes themselves: a kernel the systolic pass refuses is listed
// as refused, for the reason the rewrite's warning gives, not as bound for
// the systolic pass.
// RUN: %cuda-rewrite --list %s -- 2>&1 | FileCheck %s --check-prefix=LIST --implicit-check-not=warning: --implicit-check-not=error:
// RUN: %cuda-rewrite %s -o %t.cu -- 2>&1 | FileCheck %s --check-prefix=WARN
//
// The options a rewrite takes change the verdicts the same way.
// RUN: %cuda-rewrite --list --auto %s -- | FileCheck %s --check-prefix=AUTO
// RUN: %cuda-rewrite --list --only=aggregate %s -- | FileCheck %s --check-prefix=ONLY
// RUN: %cuda-rewrite --list --aggregate-granularity=block %s -- | FileCheck %s --check-prefix=BLOCK
//
// A clause the kernel cannot take fails the rewrite; --list says so and
// still lists the file.
// RUN: not %cuda-rewrite %s -o %t.bad.cu -- -DBAD_CLAUSE 2>&1 | FileCheck %s --check-prefix=BAD-REWRITE
// RUN: %cuda-rewrite --list %s -- -DBAD_CLAUSE | FileCheck %s --check-prefix=BAD

// LIST: list-verdicts.cu:[[@LINE+4]]:17: stencil: kernel 'bias'
// LIST-SAME: -> systolic [#pragma cuda_rewrite systolic]: would refuse: the stored value adds '1.0f', which reads no input; only weighted sums of reads become partial sums{{$}}
// WARN-DAG: list-verdicts.cu:[[@LINE+2]]:17: warning: not rewritten: the stored value adds '1.0f', which reads no input; only weighted sums of reads become partial sums [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void bias(const float *__restrict__ in, float *__restrict__ out,
                     int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1)
    out[y * W + x] = in[y * W + x - 1] + in[y * W + x + 1] + 1.0f;
}

// LIST: list-verdicts.cu:[[@LINE+4]]:17: stencil: kernel 'unnamed'
// LIST-SAME: -> systolic [#pragma cuda_rewrite systolic]: would refuse: parameter 5 has no name, so the launcher cannot pass it on{{$}}
// WARN-DAG: list-verdicts.cu:[[@LINE+2]]:17: warning: not rewritten: parameter 5 has no name, so the launcher cannot pass it on [systolic] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite systolic
__global__ void unnamed(const float *__restrict__ in, float *__restrict__ out,
                        int W, int H, int) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1)
    out[y * W + x] = in[(y - 1) * W + x] + in[(y + 1) * W + x];
}

// LIST: list-verdicts.cu:[[@LINE+5]]:17: stencil: kernel 'jacobi'
// LIST-SAME: -> systolic [#pragma cuda_rewrite systolic]: would rewrite: 'jacobi' runs as jacobi_systolic
// ONLY: list-verdicts.cu:[[@LINE+3]]:17: stencil: kernel 'jacobi'
// ONLY-SAME: -> systolic [#pragma cuda_rewrite systolic]: not rewritten: the 'systolic' pass is disabled (--only/--disable){{$}}
#pragma cuda_rewrite systolic
__global__ void jacobi(const float *__restrict__ in, float *__restrict__ out,
                       int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1)
    out[y * W + x] = 0.25f * (in[y * W + x - 1] + in[y * W + x + 1] +
                              in[(y - 1) * W + x] + in[(y + 1) * W + x]);
}

// Without a pragma or --auto nothing is rewritten; the list says what
// --auto would do.
// LIST: list-verdicts.cu:[[@LINE+4]]:17: stencil: kernel 'plain'
// LIST-SAME: -> systolic: not rewritten: not annotated; add '#pragma cuda_rewrite systolic' or pass --auto; under --auto: would rewrite: 'plain' runs as plain_systolic
// AUTO: list-verdicts.cu:[[@LINE+2]]:17: stencil: kernel 'plain'
// AUTO-SAME: -> systolic: would rewrite: 'plain' runs as plain_systolic
__global__ void plain(const float *__restrict__ in, float *__restrict__ out,
                      int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1)
    out[y * W + x] = in[y * W + x - 1] - in[y * W + x + 1];
}

// BAD-REWRITE: list-verdicts.cu:[[@LINE+4]]:31: error: clause cannot apply here: z(shared) applies to 3D stencils, and 'flat' is 2D [systolic]
// BAD: list-verdicts.cu:[[@LINE+5]]:17: stencil: kernel 'flat'
// BAD-SAME: -> systolic [#pragma cuda_rewrite systolic z(shared)]: would fail: clause cannot apply here: z(shared) applies to 3D stencils, and 'flat' is 2D{{$}}
#ifdef BAD_CLAUSE
#pragma cuda_rewrite systolic z(shared)
#endif
__global__ void flat(const float *__restrict__ in, float *__restrict__ out,
                     int W, int H) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1)
    out[y * W + x] = in[(y - 1) * W + x] - in[(y + 1) * W + x];
}

__global__ void child(int *data, int n) { data[threadIdx.x] = n; }

// A pragma with nothing to rewrite: the rewrite warns, the list says so on
// the pragma's line.
// LIST: list-verdicts.cu:[[@LINE+2]]:1: pragma: aggregate -> function 'idle' at [[@LINE+3]]:1: would warn: nothing to rewrite: kernel 'idle' makes no device-side kernel launch{{$}}
// WARN-DAG: list-verdicts.cu:[[@LINE+1]]:1: warning: nothing to rewrite: kernel 'idle' makes no device-side kernel launch [aggregate] [-Wcuda-rewrite-refused]
#pragma cuda_rewrite aggregate
__global__ void idle(int *data) { data[threadIdx.x] = 0; }

// The granularity a rewrite would take, --aggregate-granularity included.
#pragma cuda_rewrite aggregate
__global__ void parent(int *data, int n) {
  // LIST: list-verdicts.cu:[[@LINE+2]]:3: device-launch: 'child' launched from kernel 'parent' -> aggregate [#pragma cuda_rewrite aggregate]: would rewrite: aggregated at
  // BLOCK: list-verdicts.cu:[[@LINE+1]]:3: device-launch: 'child' launched from kernel 'parent' -> aggregate [#pragma cuda_rewrite aggregate]: would rewrite: aggregated at block granularity
  child<<<1, 32>>>(data + blockIdx.x * 32, n);
}

// What the rewrite changes beside its candidates, such as a cudaMalloc in
// a parent kernel, is a line of its own.
#pragma cuda_rewrite aggregate
__global__ void allocating(int **buffers, int n) {
  int *scratch = nullptr;
  // LIST: list-verdicts.cu:[[@LINE+1]]:3: aggregate: would rewrite: device-side cudaMalloc aggregated at
  cudaMalloc((void **)&scratch, n * sizeof(int));
  buffers[blockIdx.x * blockDim.x + threadIdx.x] = scratch;
  // LIST: list-verdicts.cu:[[@LINE+1]]:3: device-launch: 'child' launched from kernel 'allocating' -> aggregate [#pragma cuda_rewrite aggregate]: would rewrite: aggregated
  child<<<1, 32>>>(scratch, n);
}

void host(const float *in, float *out, int *data, int W, int H) {
  dim3 grid(W / 16, H / 16), block(16, 16);
  bias<<<grid, block>>>(in, out, W, H);
  unnamed<<<grid, block>>>(in, out, W, H, 0);
  jacobi<<<grid, block>>>(in, out, W, H);
  plain<<<grid, block>>>(in, out, W, H);
  flat<<<grid, block>>>(in, out, W, H);
  parent<<<1, 32>>>(data, 1);
  allocating<<<1, 32>>>(nullptr, 1);
}
