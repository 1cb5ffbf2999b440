// Found by test/fuzz/difftest (promote, seed 1, program p227): under --auto
// promotion of this chain is refused (a return before the self-launch) and
// the aggregation pass takes its self-launch instead, with no per-launch
// arguments: the empty argument struct left the launch table's block map
// misaligned (cudaErrorMisalignedAddress), as in
// aggregate/empty-launch-args.cu.
// difftest-flags: --auto
//
// RUN: %cuda-rewrite --auto --remarks %s -o %t.cu -- -I %difftest 2>&1 | FileCheck %s
// RUN: %nvcc-compile -rdc=true -I %difftest %t.cu -o %t.o
// CHECK-DAG: remark: rewritten: aggregated at kernel granularity into 'p227_map_aggregated'; {{.*}}per-launch arguments: none [aggregate]
// CHECK-DAG: warning: not rewritten: cannot promote 'p227_map' (PAO): a return before the self-launch
#include "difftest.cuh"

// ==== difftest program p227 ====
constexpr int p227_kBlock = 48;  // threads of a link
constexpr int p227_kItems = 1;  // elements per thread
constexpr int p227_kChunk = p227_kBlock * p227_kItems;  // elements per link
constexpr int p227_kHist = 13;  // counters

/// One link: maps its chunk; thread 0 launches the next link.
#pragma cuda_rewrite promote aggregate(4) overlap
__global__ void p227_map(const int *__restrict__ in, int *__restrict__ out,
                         int *__restrict__ hist, int n, int begin) {
  if (n <= 0)
    return;
  const int i = begin + threadIdx.x;
  const int v = i < n ? in[i] : -1;
#pragma cuda_rewrite overlap_boundary
  if (threadIdx.x == 0 && begin + p227_kChunk < n)
    p227_map<<<1, p227_kBlock>>>(in, out, hist, n, begin + p227_kChunk);
  if (i < n) {
    out[i] = v * 3 + begin / 7;
    atomicAdd(&hist[v % p227_kHist], 1);
  }
}

static void run_p227(difftest::Rng &rng, difftest::Check &check) {
  const int n = 501;
  difftest::Buffer<int> in(n), out(n);
  rng.fill(in.Host, 0, 999);
  in.upload();
  out.poison();
  difftest::Buffer<int> hist(p227_kHist);
  hist.Host.assign(hist.size(), 0);
  hist.upload();
  p227_map<<<1, p227_kBlock>>>(in.data(), out.data(), hist.data(), n, 0);
  DIFFTEST_CUDA(cudaGetLastError());

  // The chain on the host, link after link.
  std::vector<int> want(n);
  std::vector<bool> written(n, false);
  std::vector<int> wantHist(p227_kHist);
  const int linkCount = (n + p227_kChunk - 1) / p227_kChunk;
  for (int link = 0; link < linkCount; ++link) {
    for (int i = link * p227_kChunk; i < n && i < (link + 1) * p227_kChunk; ++i) {
      want[i] = in.Host[i] * 3 + link * p227_kChunk / 7;
      written[i] = true;
      ++wantHist[in.Host[i] % p227_kHist];
    }
  }
  difftest::expectExact(check, "out", out.download(), want, written);
  difftest::expectExact(check, "hist", hist.download(), wantHist);
}
// ==== end of p227 ====

DIFFTEST_MAIN({"p227", run_p227})
