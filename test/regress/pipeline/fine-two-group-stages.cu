// Found by test/fuzz/difftest (pipeline, seed 1, program p139): like
// fine-last-kernel-starved.cu, the fine model's last per-stage kernel (of
// four, two of them threads(32) stages) never got a block and the run hung.
//
// RUN: %cuda-rewrite --remarks %s -o %t.cu -- -I %difftest 2>&1 | FileCheck %s
// RUN: %nvcc-compile -rdc=true -I %difftest %t.cu -o %t.o
// CHECK: remark: rewritten: pipeline 'p139_entry' runs its 4 stages from queues: {{.*}}; model fine;
#include "difftest.cuh"

// ==== difftest program p139 ====
struct p139_Item {
  int id;     // the entry item it comes from
  int depth;  // recursion depth
  int iter;   // loop iteration
  unsigned key;
  unsigned *acc;
  int *deepest;
};

__host__ __device__ inline unsigned p139_mix(unsigned x) { return difftest::mix(x); }

// Accumulators: sums per stage, histograms, visits per entry item
// and stage, stage 0's slot per entry item.
constexpr int p139_kRoots = 1231;
constexpr int p139_kHist = 4;
constexpr int p139_kVisits = p139_kHist + 128;
constexpr int p139_kFirst = p139_kVisits + p139_kRoots * 4;
constexpr int p139_kSize = p139_kFirst + p139_kRoots;

__device__ void p139_s0(p139_Item it, int rank);
__device__ void p139_s1(p139_Item it);
__device__ void p139_s2(p139_Item it);
__device__ void p139_s3(p139_Item it, int rank);

#pragma cuda_rewrite stage threads(32)
__device__ void p139_s0(p139_Item it, int rank) {
  const unsigned h = p139_mix(it.key ^ 1422628697u);
  unsigned v = p139_mix(h + unsigned(rank));
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (rank == 0)
    atomicAdd(&it.acc[0], v);
  if (rank == 0) {
    atomicAdd(&it.acc[p139_kHist + 0 * 32 + h % 32], 1u);
    atomicAdd(&it.acc[p139_kVisits + it.id * 4 + 0], 1u);
    atomicMax(&it.deepest[it.id], it.depth);
    it.acc[p139_kFirst + it.id] = h;
  }
  if ((h >> 18) % 5 != 0) {
    if (rank == 0)
      p139_s1(p139_Item{it.id, it.depth, it.iter, p139_mix(h + 489419212u), it.acc, it.deepest});
  }
  p139_s3(p139_Item{it.id, it.depth, it.iter, p139_mix(h + 4166737852u), it.acc, it.deepest}, rank);
}

#pragma cuda_rewrite stage
__device__ void p139_s1(p139_Item it) {
  const unsigned h = p139_mix(it.key ^ 1000694253u);
  atomicXor(&it.acc[1], h);
  atomicAdd(&it.acc[p139_kHist + 1 * 32 + h % 32], 1u);
  atomicAdd(&it.acc[p139_kVisits + it.id * 4 + 1], 1u);
  atomicMax(&it.deepest[it.id], it.depth);
  if ((h >> 9) % 3 != 0)
    p139_s2(p139_Item{it.id, it.depth, it.iter, p139_mix(h + 3421105400u), it.acc, it.deepest});
  if (it.depth < 1) {
    for (unsigned k = 0; k < 2; ++k) {
      p139_s1(p139_Item{it.id, it.depth + 1, it.iter, p139_mix(h + 1505604657u + k), it.acc, it.deepest});
    }
  }
}

#pragma cuda_rewrite stage
__device__ void p139_s2(p139_Item it) {
  const unsigned h = p139_mix(it.key ^ 1121915532u);
  atomicXor(&it.acc[2], h);
  atomicAdd(&it.acc[p139_kHist + 2 * 32 + h % 32], 1u);
  atomicAdd(&it.acc[p139_kVisits + it.id * 4 + 2], 1u);
  atomicMax(&it.deepest[it.id], it.depth);
}

#pragma cuda_rewrite stage threads(32)
__device__ void p139_s3(p139_Item it, int rank) {
  const unsigned h = p139_mix(it.key ^ 1794274208u);
  unsigned v = p139_mix(h + unsigned(rank));
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (rank == 0)
    atomicXor(&it.acc[3], v);
  if (rank == 0) {
    atomicAdd(&it.acc[p139_kHist + 3 * 32 + h % 32], 1u);
    atomicAdd(&it.acc[p139_kVisits + it.id * 4 + 3], 1u);
    atomicMax(&it.deepest[it.id], it.depth);
  }
}

__global__ void p139_entry(const unsigned *seeds, int n, unsigned *acc, int *deepest) {
  // 32 threads run each item of p139_s0.
  int i = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  if (i >= n)
    return;
  p139_s0(p139_Item{i, 0, 0, seeds[i], acc, deepest}, threadIdx.x % 32);
}

static void p139_ref_s0(p139_Item it, std::vector<unsigned> &acc, std::vector<int> &deepest);
static void p139_ref_s1(p139_Item it, std::vector<unsigned> &acc, std::vector<int> &deepest);
static void p139_ref_s2(p139_Item it, std::vector<unsigned> &acc, std::vector<int> &deepest);
static void p139_ref_s3(p139_Item it, std::vector<unsigned> &acc, std::vector<int> &deepest);

static void p139_ref_s0(p139_Item it, std::vector<unsigned> &acc, std::vector<int> &deepest) {
  const unsigned h = p139_mix(it.key ^ 1422628697u);
  unsigned v = 0;
  for (int rank = 0; rank < 32; ++rank)
    v += p139_mix(h + unsigned(rank));
  acc[0] += v;
  acc[p139_kHist + 0 * 32 + h % 32] += 1u;
  acc[p139_kVisits + it.id * 4 + 0] += 1u;
  if (it.depth > deepest[it.id])
    deepest[it.id] = it.depth;
  acc[p139_kFirst + it.id] = h;
  if ((h >> 18) % 5 != 0)
    p139_ref_s1(p139_Item{it.id, it.depth, it.iter, p139_mix(h + 489419212u), it.acc, it.deepest}, acc, deepest);
  p139_ref_s3(p139_Item{it.id, it.depth, it.iter, p139_mix(h + 4166737852u), it.acc, it.deepest}, acc, deepest);
}

static void p139_ref_s1(p139_Item it, std::vector<unsigned> &acc, std::vector<int> &deepest) {
  const unsigned h = p139_mix(it.key ^ 1000694253u);
  acc[1] ^= h;
  acc[p139_kHist + 1 * 32 + h % 32] += 1u;
  acc[p139_kVisits + it.id * 4 + 1] += 1u;
  if (it.depth > deepest[it.id])
    deepest[it.id] = it.depth;
  if ((h >> 9) % 3 != 0)
    p139_ref_s2(p139_Item{it.id, it.depth, it.iter, p139_mix(h + 3421105400u), it.acc, it.deepest}, acc, deepest);
  if (it.depth < 1) {
    for (unsigned k = 0; k < 2; ++k) {
      p139_ref_s1(p139_Item{it.id, it.depth + 1, it.iter, p139_mix(h + 1505604657u + k), it.acc, it.deepest}, acc, deepest);
    }
  }
}

static void p139_ref_s2(p139_Item it, std::vector<unsigned> &acc, std::vector<int> &deepest) {
  const unsigned h = p139_mix(it.key ^ 1121915532u);
  acc[2] ^= h;
  acc[p139_kHist + 2 * 32 + h % 32] += 1u;
  acc[p139_kVisits + it.id * 4 + 2] += 1u;
  if (it.depth > deepest[it.id])
    deepest[it.id] = it.depth;
}

static void p139_ref_s3(p139_Item it, std::vector<unsigned> &acc, std::vector<int> &deepest) {
  const unsigned h = p139_mix(it.key ^ 1794274208u);
  unsigned v = 0;
  for (int rank = 0; rank < 32; ++rank)
    v += p139_mix(h + unsigned(rank));
  acc[3] ^= v;
  acc[p139_kHist + 3 * 32 + h % 32] += 1u;
  acc[p139_kVisits + it.id * 4 + 3] += 1u;
  if (it.depth > deepest[it.id])
    deepest[it.id] = it.depth;
}

static void p139_reference(const std::vector<unsigned> &seeds, std::vector<unsigned> &acc, std::vector<int> &deepest) {
  for (int i = 0; i < int(seeds.size()); ++i) {
    p139_ref_s0(p139_Item{i, 0, 0, seeds[i], nullptr, nullptr}, acc, deepest);
  }
}

static void run_p139(difftest::Rng &rng, difftest::Check &check) {
  const int n = p139_kRoots;
  difftest::Buffer<unsigned> seeds(n);
  rng.fill(seeds.Host, 0, 4294967295.0);
  seeds.upload();
  difftest::Buffer<unsigned> acc(p139_kSize);
  difftest::Buffer<int> deepest(n);
  acc.poison();
  deepest.poison();
  unsigned *accData = acc.data();
  int *deepestData = deepest.data();
  // The RTC original calls 5 functions deep at most.
  DIFFTEST_CUDA(cudaDeviceSetLimit(cudaLimitStackSize, 1024 + 5 * 256));
  // The rewritten launch's default run: a hybrid of the models.
  int sms = 0;
  DIFFTEST_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::string text = "model hybrid\n";
  text += "adapt on\n";
  text += "group p139_s0..p139_s1 megakernel sms " + std::to_string(sms * 0 / 2) + "-" + std::to_string(sms * 1 / 2 - 1) + "\n";
  text += "group p139_s3..p139_s2 fine sms " + std::to_string(sms * 1 / 2) + "-" + std::to_string(sms * 2 / 2 - 1) + "\n";
  char config[] = "/tmp/difftest-p139-XXXXXX";
  const int fd = mkstemp(config);
  if (std::FILE *f = fd >= 0 ? fdopen(fd, "w") : nullptr) {
    std::fputs(text.c_str(), f);
    std::fclose(f);
    setenv("CUDA_REWRITE_PIPELINE_CONFIG", config, 1);
  }
  const unsigned *seedData = seeds.data();
  for (int rep = 0; rep < 1; ++rep) {
#pragma cuda_rewrite pipeline model(fine)
    p139_entry<<<(n * 32 + 255) / 256, 256>>>(seedData, n, accData, deepestData);
    DIFFTEST_CUDA(cudaGetLastError());
  }
  DIFFTEST_CUDA(cudaDeviceSynchronize());
  unsetenv("CUDA_REWRITE_PIPELINE_CONFIG");
  std::remove(config);
  const std::vector<unsigned> &gotAcc = acc.download();
  const std::vector<int> &gotDeepest = deepest.download();
  // The reference: the same stages, one item after another.
  std::vector<unsigned> wantAcc(p139_kSize, difftest::poisonValue<unsigned>());
  std::vector<int> wantDeepest(n, difftest::poisonValue<int>());
  for (int rep = 0; rep < 1; ++rep)
    p139_reference(seeds.Host, wantAcc, wantDeepest);
  difftest::expectExact(check, "acc", gotAcc, wantAcc);
  difftest::expectExact(check, "deepest", gotDeepest, wantDeepest);
}
// ==== end of p139 ====

DIFFTEST_MAIN({"p139", run_p139})
