//===- schedule_util.h - Schedule helpers of the Halide generators --------===//
//
// Shared by bench/halide/*_generator.cpp. Each generator computes the same
// function as its sample in samples/fuse/ and schedules it two ways: a
// manual GPU schedule when the target has CUDA (the peer the bench times),
// and a plain breadth-first CPU schedule otherwise, used only by the host
// check (build.sh --host-check) that runs the algorithm against the samples'
// float64 references on a machine without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef CUDA_REWRITE_BENCH_HALIDE_SCHEDULE_UTIL_H
#define CUDA_REWRITE_BENCH_HALIDE_SCHEDULE_UTIL_H

#include "Halide.h"

#include <string>

namespace hlbench {

using namespace Halide;

/// The threads of every block that uses threadsOver().
constexpr int kBlockThreads = 256;

/// Maps a stage computed at a GPU block (compute_at the consumer's block
/// loop) onto kBlockThreads threads, one-dimensionally: its loops over
/// \p X and \p Y (X the inner) are fused into one and split by the block
/// size, so that a region of any constant shape keeps all threads busy
/// except in the last round, and every stage of the kernel agrees on a
/// 1-D block of kBlockThreads threads. Dimensions inner to X (reordered
/// there beforehand) stay loops of each thread.
inline void threadsOver(Stage S, const VarOrRVar &X, const VarOrRVar &Y,
                        const std::string &Name) {
  Var T(Name + "_t"), TO(Name + "_to"), TI(Name + "_ti");
  S.fuse(X, Y, T)
      .split(T, TO, TI, kBlockThreads, TailStrategy::GuardWithIf)
      .gpu_threads(TI);
}

/// The CPU schedule of the host check: \p F computed whole, rows in
/// parallel, vectorized along x where it has an x.
inline void cpuRoot(Func F) {
  F.compute_root();
  const std::vector<Var> Args = F.args();
  if (Args.size() >= 2)
    F.parallel(Args[1]);
  if (!Args.empty())
    F.vectorize(Args[0], 8, TailStrategy::GuardWithIf);
}

} // namespace hlbench

#endif
