//===- test/gpu/test_pipeline.cu - Tests of cuda_rewrite/pipeline.cuh -----===//
//
// The queues, termination and execution models of the pipeline runtime under
// contention, with kernels written the way rewriters/pipeline/ generates them
// (the lit tests in test/lit/pipeline/ show the same shapes from the tool).
//
// The pipeline: `split` halves a range of indices recursively (one push per
// half, so tens of thousands of pushes race on one queue), `leaf` is a
// threads(32) stage whose 32 lanes reduce with shuffles (a group must be
// exactly one warp), and `again` loops back to `split` for a few rounds.
// Every index must be visited exactly `rounds` times with the exact sum: a
// lost or duplicated item, or a group that is not a warp, shows. Each model
// runs several times (a hang fails the test by its CTest time-out). A tiny
// queue must overflow with cudaErrorMemoryAllocation, not hang and not lose
// items silently, and the next run must work again.
//
//===----------------------------------------------------------------------===//

#include "cuda_rewrite/pipeline.cuh"

#include "harness.cuh"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

constexpr int kRounds = 3;

} // namespace

struct Range {
  int begin, end, round;
};
struct Visit {
  int index, round;
};

__device__ int *visits;
__device__ int *sums;

//===-- What the rewrite generates ----------------------------------------===//

struct seed_Pipeline {
  cuda_rewrite::pipeline::Control *control;
  cuda_rewrite::pipeline::Queue<Range> split;
  cuda_rewrite::pipeline::Queue<Visit> leaf;
  cuda_rewrite::pipeline::Queue<Visit> again;
};

__device__ void split_inPipeline(Range r, const seed_Pipeline &pipeline) {
  if (r.end - r.begin > 1) {
    int middle = r.begin + (r.end - r.begin) / 2;
    pipeline.split.push(Range{r.begin, middle, r.round});
    pipeline.split.push(Range{middle, r.end, r.round});
  } else if (r.end - r.begin == 1) { // more chunks than indices: empty ranges
    pipeline.leaf.push(Visit{r.begin, r.round});
  }
}

__device__ void leaf_inPipeline(Visit v, int rank,
                                const seed_Pipeline &pipeline) {
  int sum = rank;
  for (int offset = 16; offset > 0; offset /= 2)
    sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (rank == 0) {
    atomicAdd(&visits[v.index], 1);
    atomicAdd(&sums[v.index], sum + v.index);
    pipeline.again.push(v);
  }
}

__device__ void again_inPipeline(Visit v, const seed_Pipeline &pipeline) {
  if (v.round + 1 < kRounds)
    pipeline.split.push(Range{v.index, v.index + 1, v.round + 1});
}

__global__ void seed_seedPipeline(int n, int chunks, seed_Pipeline pipeline) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < chunks)
    pipeline.split.push(
        Range{int(long(i) * n / chunks), int(long(i + 1) * n / chunks), 0});
}

template <int First, int Last>
__device__ void seed_runPipelineBatch(const seed_Pipeline &pipeline,
                                      const cuda_rewrite::pipeline::Batch &b) {
  if constexpr (First <= 0 && 0 <= Last)
    if (b.stage == 0) {
      for (unsigned item = threadIdx.x; item < unsigned(b.count);
           item += blockDim.x)
        split_inPipeline(pipeline.split.take(b.first + item), pipeline);
      return;
    }
  if constexpr (First <= 1 && 1 <= Last)
    if (b.stage == 1) {
      for (unsigned item = threadIdx.x / 32; item < unsigned(b.count);
           item += blockDim.x / 32)
        leaf_inPipeline(pipeline.leaf.take(b.first + item), threadIdx.x % 32,
                        pipeline);
      return;
    }
  if constexpr (First <= 2 && 2 <= Last)
    if (b.stage == 2) {
      for (unsigned item = threadIdx.x; item < unsigned(b.count);
           item += blockDim.x)
        again_inPipeline(pipeline.again.take(b.first + item), pipeline);
      return;
    }
}

template <int First, int Last>
__global__ void __launch_bounds__(256)
    seed_pipelineWorker(seed_Pipeline pipeline,
                        cuda_rewrite::pipeline::Placement placement) {
  if (!cuda_rewrite::pipeline::stayOnThisSm(placement))
    return;
  cuda_rewrite::pipeline::Batch batch;
  while (cuda_rewrite::pipeline::nextBatch(*pipeline.control, placement,
                                           First, Last, batch)) {
    seed_runPipelineBatch<First, Last>(pipeline, batch);
    cuda_rewrite::pipeline::finishBatch(*pipeline.control, batch);
  }
}

template <int Stage>
__global__ void __launch_bounds__(256)
    seed_pipelineStage(seed_Pipeline pipeline,
                       cuda_rewrite::pipeline::Position first,
                       cuda_rewrite::pipeline::Position count) {
  cuda_rewrite::pipeline::Batch batch =
      cuda_rewrite::pipeline::kernelByKernelBatch(*pipeline.control, Stage,
                                                  first, count);
  seed_runPipelineBatch<Stage, Stage>(pipeline, batch);
  cuda_rewrite::pipeline::finishBatch(*pipeline.control, batch);
}

static cudaError_t seed_runPipeline(dim3 grid, dim3 block, size_t sharedBytes,
                                    cudaStream_t stream, int n, int chunks) {
  static const cuda_rewrite::pipeline::StageDesc stages[] = {
      {"split", 1, sizeof(Range)},
      {"leaf", 32, sizeof(Visit)},
      {"again", 1, sizeof(Visit)}};
  static cuda_rewrite::pipeline::Runner runner(
      {"seed", 3, stages, 256, "auto", nullptr});
  static const void *const workers[] = {
      (const void *)seed_pipelineWorker<0, 0>,
      (const void *)seed_pipelineWorker<0, 1>,
      (const void *)seed_pipelineWorker<0, 2>,
      nullptr,
      (const void *)seed_pipelineWorker<1, 1>,
      (const void *)seed_pipelineWorker<1, 2>,
      nullptr,
      nullptr,
      (const void *)seed_pipelineWorker<2, 2>};
  static const void *const stageKernels[] = {
      (const void *)seed_pipelineStage<0>, (const void *)seed_pipelineStage<1>,
      (const void *)seed_pipelineStage<2>};
  if (cudaError_t error = runner.prepare(stream))
    return error;
  seed_Pipeline pipeline{runner.deviceControl(), runner.queue<Range>(0),
                         runner.queue<Visit>(1), runner.queue<Visit>(2)};
  seed_seedPipeline<<<grid, block, sharedBytes, stream>>>(n, chunks, pipeline);
  return runner.run({workers, stageKernels}, &pipeline, stream);
}

//===-- The tests ---------------------------------------------------------===//

namespace {

/// Runs the pipeline over n indices under the current environment and
/// checks every index was visited kRounds times with the exact sum.
bool runAndCheck(int n, int chunks) {
  test::DeviceArray<int> dVisits, dSums;
  CUDA_OK(dVisits.allocate(n));
  CUDA_OK(dSums.allocate(n));
  CUDA_OK(cudaMemset(dVisits.get(), 0, n * sizeof(int)));
  CUDA_OK(cudaMemset(dSums.get(), 0, n * sizeof(int)));
  int *v = dVisits.get(), *s = dSums.get();
  CUDA_OK(cudaMemcpyToSymbol(visits, &v, sizeof v));
  CUDA_OK(cudaMemcpyToSymbol(sums, &s, sizeof s));
  CUDA_OK(seed_runPipeline((chunks + 127) / 128, 128, 0, 0, n, chunks));
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<int> hv, hs;
  CUDA_OK(dVisits.download(hv));
  CUDA_OK(dSums.download(hs));
  for (int i = 0; i < n; ++i) {
    EXPECT(hv[i] == kRounds, "index %d visited %d times", i, hv[i]);
    EXPECT(hs[i] == kRounds * (496 + i), "index %d sum %d", i, hs[i]);
  }
  return true;
}

void setModel(const char *model) {
  setenv("CUDA_REWRITE_PIPELINE_MODEL", model, 1);
}

} // namespace

int main() {
  test::Suite suite("test_pipeline");
  for (const char *model : {"kbk", "megakernel", "coarse", "fine"})
    suite.run(std::string("model ") + model + ": every item exactly once, "
                                              "5 runs",
              [&] {
                setModel(model);
                for (int run = 0; run < 5; ++run) {
                  int n = suite.uniform(1, 200000);
                  int chunks = suite.uniform(1, 4096);
                  if (!runAndCheck(n, chunks))
                    return false;
                }
                return true;
              });
  suite.run("model hybrid from a configuration file", [&] {
    unsetenv("CUDA_REWRITE_PIPELINE_MODEL");
    const char *file = "test_pipeline_hybrid.cfg";
    std::ofstream(file) << "# split and leaf share a megakernel\n"
                           "model hybrid\n"
                           "group split..leaf megakernel sms 0-99\n"
                           "group again fine sms 100-131 blocks 2\n";
    setenv("CUDA_REWRITE_PIPELINE_CONFIG", file, 1);
    bool ok = runAndCheck(150000, 1000) && runAndCheck(7, 3);
    unsetenv("CUDA_REWRITE_PIPELINE_CONFIG");
    return ok;
  });
  suite.run("online adaptation (coarse, blocks retire and are relaunched): "
            "every item exactly once, 5 runs",
            [&] {
              setModel("coarse");
              setenv("CUDA_REWRITE_PIPELINE_ADAPT", "1", 1);
              bool ok = true;
              for (int run = 0; run < 5 && ok; ++run)
                ok = runAndCheck(suite.uniform(1000, 200000),
                                 suite.uniform(1, 4096));
              unsetenv("CUDA_REWRITE_PIPELINE_ADAPT");
              return ok;
            });
  suite.run("fine: blocks bound to stages by configured numbers per SM, "
            "and with online adaptation (blocks retire and are relaunched "
            "for the busiest stage): every item exactly once, 3 runs each",
            [&] {
              unsetenv("CUDA_REWRITE_PIPELINE_MODEL");
              const char *file = "test_pipeline_fine.cfg";
              std::ofstream(file) << "model hybrid\n"
                                     "group split..again fine sms 0-131 "
                                     "blocks 2,1,1\n";
              setenv("CUDA_REWRITE_PIPELINE_CONFIG", file, 1);
              bool ok = true;
              for (int run = 0; run < 3 && ok; ++run)
                ok = runAndCheck(suite.uniform(1000, 200000),
                                 suite.uniform(1, 4096));
              unsetenv("CUDA_REWRITE_PIPELINE_CONFIG");
              setModel("fine");
              setenv("CUDA_REWRITE_PIPELINE_ADAPT", "1", 1);
              for (int run = 0; run < 3 && ok; ++run)
                ok = runAndCheck(suite.uniform(1000, 200000),
                                 suite.uniform(1, 4096));
              unsetenv("CUDA_REWRITE_PIPELINE_ADAPT");
              return ok;
            });
  suite.run("coarse groups in green contexts (or bound by SM id where the "
            "driver has none): every item exactly once, 5 runs",
            [&] {
              setModel("coarse");
              setenv("CUDA_REWRITE_PIPELINE_GREEN", "1", 1);
              bool ok = true;
              for (int run = 0; run < 5 && ok; ++run)
                ok = runAndCheck(suite.uniform(1000, 200000),
                                 suite.uniform(1, 4096));
              unsetenv("CUDA_REWRITE_PIPELINE_GREEN");
              return ok;
            });
  suite.run("tuning: one candidate per launch, each timed; the description "
            "lists every kernel",
            [&] {
              unsetenv("CUDA_REWRITE_PIPELINE_MODEL");
              const char *tune = "test_pipeline_tune.cfg";
              const char *times = "test_pipeline_times.txt";
              const char *described = "test_pipeline_describe.txt";
              std::ofstream(tune) << "model kbk\n---\nmodel fine\n---\n"
                                     "model hybrid\n"
                                     "group split megakernel sms 0-65\n"
                                     "group leaf..again fine sms 66-131\n";
              std::remove(times);
              setenv("CUDA_REWRITE_PIPELINE_TUNE", tune, 1);
              setenv("CUDA_REWRITE_PIPELINE_TIMES", times, 1);
              setenv("CUDA_REWRITE_PIPELINE_DESCRIBE", described, 1);
              // A candidate past 3x the best so far is stopped: the output
              // of a tuning run is not checked, only that each ran and was
              // timed (or marked as timed out).
              test::DeviceArray<int> dVisits, dSums;
              CUDA_OK(dVisits.allocate(50000));
              CUDA_OK(dSums.allocate(50000));
              int *v = dVisits.get(), *s = dSums.get();
              CUDA_OK(cudaMemcpyToSymbol(visits, &v, sizeof v));
              CUDA_OK(cudaMemcpyToSymbol(sums, &s, sizeof s));
              cudaError_t error = cudaSuccess;
              for (int run = 0; run < 6 && !error; ++run)
                error = seed_runPipeline(4, 128, 0, 0, 50000, 500);
              unsetenv("CUDA_REWRITE_PIPELINE_TUNE");
              unsetenv("CUDA_REWRITE_PIPELINE_TIMES");
              unsetenv("CUDA_REWRITE_PIPELINE_DESCRIBE");
              CUDA_OK(error);
              std::ifstream in(times);
              int lines = 0, perCandidate[3] = {};
              for (std::string line; std::getline(in, line); ++lines) {
                size_t at = line.find("candidate=");
                EXPECT(at != std::string::npos, "line '%s'", line.c_str());
                ++perCandidate[std::atoi(line.c_str() + at + 10) % 3];
              }
              EXPECT(lines == 6, "%d timed runs", lines);
              EXPECT(perCandidate[0] == 2 && perCandidate[1] == 2 &&
                         perCandidate[2] == 2,
                     "runs per candidate %d %d %d", perCandidate[0],
                     perCandidate[1], perCandidate[2]);
              std::ifstream d(described);
              int kernels = 0;
              for (std::string line; std::getline(d, line);)
                kernels += line.rfind("kernel ", 0) == 0 &&
                           line.find(" fits ") != std::string::npos &&
                           std::atoi(line.c_str() + line.find(" fits ") + 6) > 0;
              EXPECT(kernels == 6, "%d kernels described", kernels);
              return true;
            });
  suite.run("an overflowing queue reports cudaErrorMemoryAllocation, and the "
            "next run works",
            [&] {
              setModel("megakernel");
              setenv("CUDA_REWRITE_PIPELINE_CAPACITY", "64", 1);
              cudaError_t error = seed_runPipeline(64, 128, 0, 0, 100000, 8192);
              unsetenv("CUDA_REWRITE_PIPELINE_CAPACITY");
              EXPECT(error == cudaErrorMemoryAllocation, "got %s",
                     cudaGetErrorName(error));
              // Also left for the program's own check after the launch.
              error = cudaGetLastError();
              EXPECT(error == cudaErrorMemoryAllocation, "last error %s",
                     cudaGetErrorName(error));
              return runAndCheck(5000, 100);
            });
  suite.run("a configuration naming an unknown model is refused", [&] {
    setModel("warp-speed");
    cudaError_t error = seed_runPipeline(1, 32, 0, 0, 10, 1);
    EXPECT(error == cudaErrorInvalidValue, "got %s", cudaGetErrorName(error));
    return true;
  });
  return suite.finish();
}
