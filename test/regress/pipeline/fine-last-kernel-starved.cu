// Found by test/fuzz/difftest (pipeline, seed 1, program p77; 11 of 300
// programs hung the same way): under the fine model (this pragma's) the run
// never ended. Fine ran one persistent kernel per stage with quotas of
// blocks per SM that the occupancy API said fit together; on an H100 the
// last kernel got no block at all (CUDA_REWRITE_PIPELINE_WATCHDOG_MS showed
// its items waiting and none of its blocks decided). Fine is now one kernel
// whose blocks each serve one stage, and no two persistent kernels share an
// SM. The fix is in the runtime: `difftest.py prepare --regress` runs this
// on the GPU under every model.
//
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- -I %difftest 2>&1 | FileCheck %s
// RUN: %nvcc-compile -rdc=true -I %difftest %t.cu -o %t.o
// CHECK: remark: rewritten: pipeline 'p77_entry' runs its 4 stages from queues: {{.*}}; model fine;
#include "difftest.cuh"

// ==== difftest program p77 ====
struct p77_Item {
  int id;     // the entry item it comes from
  int depth;  // recursion depth
  int iter;   // loop iteration
  unsigned key;
};

__host__ __device__ inline unsigned p77_mix(unsigned x) { return difftest::mix(x); }

// Accumulators: sums per stage, histograms, visits per entry item
// and stage, stage 0's slot per entry item.
constexpr int p77_kRoots = 59;
constexpr int p77_kHist = 4;
constexpr int p77_kVisits = p77_kHist + 128;
constexpr int p77_kFirst = p77_kVisits + p77_kRoots * 4;
constexpr int p77_kSize = p77_kFirst + p77_kRoots;

__device__ unsigned p77_acc[p77_kSize];
__device__ int p77_deepest[p77_kRoots];

/// Some stages take their item packed: key, id, depth, iteration.
__host__ __device__ inline unsigned long long p77_pack(p77_Item it) {
  return (unsigned long long)it.key | (unsigned long long)it.id << 32 |
         (unsigned long long)it.depth << 48 | (unsigned long long)it.iter << 56;
}
__host__ __device__ inline p77_Item p77_unpack(unsigned long long v) {
  return p77_Item{int(v >> 32 & 0xffff), int(v >> 48 & 0xff), int(v >> 56),
                 unsigned(v)};
}

__device__ void p77_s0(p77_Item it, int rank);
__device__ void p77_s1(unsigned long long packed);
__device__ void p77_s2(unsigned long long packed);
__device__ void p77_s3(p77_Item it);

#pragma cuda_rewrite stage threads(32)
__device__ void p77_s0(p77_Item it, int rank) {
  const unsigned h = p77_mix(it.key ^ 2437237168u);
  unsigned v = p77_mix(h + unsigned(rank));
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (rank == 0)
    atomicAdd(&p77_acc[0], v);
  if (rank == 0) {
    atomicAdd(&p77_acc[p77_kHist + 0 * 32 + h % 32], 1u);
    atomicAdd(&p77_acc[p77_kVisits + it.id * 4 + 0], 1u);
    atomicMax(&p77_deepest[it.id], it.depth);
  }
  if ((h >> 17) % 3 != 0) {
    if (rank == 0)
      p77_s1(p77_pack(p77_Item{it.id, it.depth, it.iter, p77_mix(h + 1808030930u)}));
  }
  if ((h >> 2) % 2 != 0) {
    if (rank == 0)
      p77_s2(p77_pack(p77_Item{it.id, it.depth, it.iter, p77_mix(h + 1327391422u)}));
  }
  if ((h >> 12) % 5 != 0) {
    if (rank == 0)
      p77_s2(p77_pack(p77_Item{it.id, it.depth, it.iter, p77_mix(h + 906375863u)}));
  }
  if (it.depth < 6 && (h >> 22) % 5 != 0) {
    for (unsigned k = 0; k < 2; ++k) {
      p77_s0(p77_Item{it.id, it.depth + 1, it.iter, p77_mix(h + 3075631874u + k)}, rank);
    }
  }
}

#pragma cuda_rewrite stage
__device__ void p77_s1(unsigned long long packed) {
  const p77_Item it = p77_unpack(packed);
  const unsigned h = p77_mix(it.key ^ 3222069471u);
  atomicAdd(&p77_acc[1], h);
  atomicAdd(&p77_acc[p77_kHist + 1 * 32 + h % 32], 1u);
  atomicAdd(&p77_acc[p77_kVisits + it.id * 4 + 1], 1u);
  atomicMax(&p77_deepest[it.id], it.depth);
  if ((h >> 2) % 3 != 0) {
    for (unsigned k = 0; k < 2; ++k) {
      p77_s3(p77_Item{it.id, it.depth, it.iter, p77_mix(h + 2647841735u + k)});
    }
  }
}

#pragma cuda_rewrite stage
__device__ void p77_s2(unsigned long long packed) {
  const p77_Item it = p77_unpack(packed);
  const unsigned h = p77_mix(it.key ^ 220653971u);
  atomicAdd(&p77_acc[2], h);
  atomicAdd(&p77_acc[p77_kHist + 2 * 32 + h % 32], 1u);
  atomicAdd(&p77_acc[p77_kVisits + it.id * 4 + 2], 1u);
  atomicMax(&p77_deepest[it.id], it.depth);
  if ((h >> 12) % 2 != 0)
    p77_s3(p77_Item{it.id, it.depth, it.iter, p77_mix(h + 4119323701u)});
}

#pragma cuda_rewrite stage
__device__ void p77_s3(p77_Item it) {
  const unsigned h = p77_mix(it.key ^ 672096311u);
  atomicXor(&p77_acc[3], h);
  atomicAdd(&p77_acc[p77_kHist + 3 * 32 + h % 32], 1u);
  atomicAdd(&p77_acc[p77_kVisits + it.id * 4 + 3], 1u);
  atomicMax(&p77_deepest[it.id], it.depth);
}

__global__ void p77_entry(const unsigned *seeds, int n) {
  // 32 threads run each item of p77_s0.
  int i = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (i >= n)
    return;
  p77_s0(p77_Item{i, 0, 0, seeds[i]}, threadIdx.x % 32);
}

static void p77_ref_s0(p77_Item it, std::vector<unsigned> &acc, std::vector<int> &deepest);
static void p77_ref_s1(p77_Item it, std::vector<unsigned> &acc, std::vector<int> &deepest);
static void p77_ref_s2(p77_Item it, std::vector<unsigned> &acc, std::vector<int> &deepest);
static void p77_ref_s3(p77_Item it, std::vector<unsigned> &acc, std::vector<int> &deepest);

static void p77_ref_s0(p77_Item it, std::vector<unsigned> &acc, std::vector<int> &deepest) {
  const unsigned h = p77_mix(it.key ^ 2437237168u);
  unsigned v = 0;
  for (int rank = 0; rank < 32; ++rank)
    v += p77_mix(h + unsigned(rank));
  acc[0] += v;
  acc[p77_kHist + 0 * 32 + h % 32] += 1u;
  acc[p77_kVisits + it.id * 4 + 0] += 1u;
  if (it.depth > deepest[it.id])
    deepest[it.id] = it.depth;
  if ((h >> 17) % 3 != 0)
    p77_ref_s1(p77_Item{it.id, it.depth, it.iter, p77_mix(h + 1808030930u)}, acc, deepest);
  if ((h >> 2) % 2 != 0)
    p77_ref_s2(p77_Item{it.id, it.depth, it.iter, p77_mix(h + 1327391422u)}, acc, deepest);
  if ((h >> 12) % 5 != 0)
    p77_ref_s2(p77_Item{it.id, it.depth, it.iter, p77_mix(h + 906375863u)}, acc, deepest);
  if (it.depth < 6 && (h >> 22) % 5 != 0) {
    for (unsigned k = 0; k < 2; ++k) {
      p77_ref_s0(p77_Item{it.id, it.depth + 1, it.iter, p77_mix(h + 3075631874u + k)}, acc, deepest);
    }
  }
}

static void p77_ref_s1(p77_Item it, std::vector<unsigned> &acc, std::vector<int> &deepest) {
  const unsigned h = p77_mix(it.key ^ 3222069471u);
  acc[1] += h;
  acc[p77_kHist + 1 * 32 + h % 32] += 1u;
  acc[p77_kVisits + it.id * 4 + 1] += 1u;
  if (it.depth > deepest[it.id])
    deepest[it.id] = it.depth;
  if ((h >> 2) % 3 != 0) {
    for (unsigned k = 0; k < 2; ++k) {
      p77_ref_s3(p77_Item{it.id, it.depth, it.iter, p77_mix(h + 2647841735u + k)}, acc, deepest);
    }
  }
}

static void p77_ref_s2(p77_Item it, std::vector<unsigned> &acc, std::vector<int> &deepest) {
  const unsigned h = p77_mix(it.key ^ 220653971u);
  acc[2] += h;
  acc[p77_kHist + 2 * 32 + h % 32] += 1u;
  acc[p77_kVisits + it.id * 4 + 2] += 1u;
  if (it.depth > deepest[it.id])
    deepest[it.id] = it.depth;
  if ((h >> 12) % 2 != 0)
    p77_ref_s3(p77_Item{it.id, it.depth, it.iter, p77_mix(h + 4119323701u)}, acc, deepest);
}

static void p77_ref_s3(p77_Item it, std::vector<unsigned> &acc, std::vector<int> &deepest) {
  const unsigned h = p77_mix(it.key ^ 672096311u);
  acc[3] ^= h;
  acc[p77_kHist + 3 * 32 + h % 32] += 1u;
  acc[p77_kVisits + it.id * 4 + 3] += 1u;
  if (it.depth > deepest[it.id])
    deepest[it.id] = it.depth;
}

static void p77_reference(const std::vector<unsigned> &seeds, std::vector<unsigned> &acc, std::vector<int> &deepest) {
  for (int i = 0; i < int(seeds.size()); ++i) {
    p77_ref_s0(p77_Item{i, 0, 0, seeds[i]}, acc, deepest);
  }
}

static void run_p77(difftest::Rng &rng, difftest::Check &check) {
  const int n = p77_kRoots;
  difftest::Buffer<unsigned> seeds(n);
  rng.fill(seeds.Host, 0, 4294967295.0);
  seeds.upload();
  std::vector<unsigned> gotAcc(p77_kSize, difftest::poisonValue<unsigned>());
  std::vector<int> gotDeepest(n, difftest::poisonValue<int>());
  DIFFTEST_CUDA(cudaMemcpyToSymbol(p77_acc, gotAcc.data(), sizeof(unsigned) * gotAcc.size()));
  DIFFTEST_CUDA(cudaMemcpyToSymbol(p77_deepest, gotDeepest.data(), sizeof(int) * gotDeepest.size()));
  // The RTC original calls 10 functions deep at most.
  DIFFTEST_CUDA(cudaDeviceSetLimit(cudaLimitStackSize, 1024 + 10 * 256));
  const unsigned *seedData = seeds.data();
  for (int rep = 0; rep < 2; ++rep) {
#pragma cuda_rewrite pipeline model(fine)
    p77_entry<<<(n * 32 + 127) / 128, 128>>>(seedData, n);
    DIFFTEST_CUDA(cudaGetLastError());
  }
  DIFFTEST_CUDA(cudaDeviceSynchronize());
  DIFFTEST_CUDA(cudaMemcpyFromSymbol(gotAcc.data(), p77_acc, sizeof(unsigned) * gotAcc.size()));
  DIFFTEST_CUDA(cudaMemcpyFromSymbol(gotDeepest.data(), p77_deepest, sizeof(int) * gotDeepest.size()));
  // The reference: the same stages, one item after another.
  std::vector<unsigned> wantAcc(p77_kSize, difftest::poisonValue<unsigned>());
  std::vector<int> wantDeepest(n, difftest::poisonValue<int>());
  for (int rep = 0; rep < 2; ++rep)
    p77_reference(seeds.Host, wantAcc, wantDeepest);
  difftest::expectExact(check, "acc", gotAcc, wantAcc);
  difftest::expectExact(check, "deepest", gotDeepest, wantDeepest);
}
// ==== end of p77 ====

DIFFTEST_MAIN({"p77", run_p77})
