//===- cuda_rewrite/pipeline.cuh - Running pipelines -----------*- CUDA -*-===//
//
// Part of cuda-rewrite: the header-only device runtime included by rewritten
// code.
//
//===----------------------------------------------------------------------===//
//
// The host half of the pipeline runtime (rewriters/pipeline/, VersaPipe
// sections 4, 5 and 7, docs/references.md). A rewritten pipeline launch seeds
// the stages' queues (pipeline_queue.cuh) with the entry kernel and then hands
// a Runner its kernels; the Runner runs them under an execution model:
//
//   kbk         one kernel per stage and round; the host reads the queues'
//               lengths after each round and stops when all are empty.
//   megakernel  one persistent kernel over all stages on every SM; each
//               block takes batches from the latest stage that has items.
//   coarse      one persistent kernel per stage, each in its own stream and
//               bound to its own SMs (an even split unless configured).
//   fine        one persistent kernel on every SM whose blocks each serve
//               one stage (VersaPipe's binding of blocks to stages), so
//               the stages share every SM.
//   hybrid      stage groups from a configuration file, each a megakernel,
//               coarse or fine group on its own SMs.
//   rtc         the original entry kernel, run to completion (the reference).
//
// Which one (pipeline_config.cuh has the file format):
//   CUDA_REWRITE_PIPELINE_TUNE=<file>      the autotuner's configurations
//                                          (below), else
//   CUDA_REWRITE_PIPELINE_MODEL=<model>    overrides the rest, else
//   CUDA_REWRITE_PIPELINE_CONFIG=<file>    a configuration file, else
//   the pragma's config(<file>) if that file exists, else
//   the pragma's model (auto: megakernel).
// CUDA_REWRITE_PIPELINE_CAPACITY=<n> sets the queues' capacity,
// CUDA_REWRITE_PIPELINE_ADAPT=1 turns on online adaptation (blocks that find
// no work retire, counted in pinned host memory, and the host launches as
// many blocks for the group with the most items waiting) and
// CUDA_REWRITE_PIPELINE_GREEN=1 binds groups on disjoint SMs with green
// contexts instead of the %smid filter (pipeline_green.cuh).
// CUDA_REWRITE_PIPELINE_WATCHDOG_MS=<ms> reports a persistent run still
// going after that long (its queues and where its blocks stayed) and stops
// it with cudaErrorLaunchTimeout.
//
// No two persistent kernels share an SM. Blocks of different kernels that
// the occupancy API says fit together do not always get resident together:
// on an H100 the last of four per-stage kernels whose quotas summed to at
// most one SM got no block at all, and the run never ended. The fine model
// therefore binds the blocks of one kernel to stages instead.
//
// For the offline tuner (scripts/pipeline-tune.py):
//   CUDA_REWRITE_PIPELINE_DESCRIBE=<file>  writes the stages and how many
//                                          blocks of each kernel fit an SM;
//   CUDA_REWRITE_PIPELINE_TUNE=<file>      runs the configurations of the
//                                          file in turn, one per launch,
//                                          stopping any that runs past 3x
//                                          the best so far;
//   CUDA_REWRITE_PIPELINE_TIMES=<file>     appends each run's time (for kbk
//                                          also its rounds and the time
//                                          its kernels kept the GPU busy).
//
//===----------------------------------------------------------------------===//

#ifndef CUDA_REWRITE_PIPELINE_CUH
#define CUDA_REWRITE_PIPELINE_CUH

#include "cuda_rewrite/error.cuh"
#include "cuda_rewrite/pipeline_config.cuh"
#include "cuda_rewrite/pipeline_green.cuh"
#include "cuda_rewrite/pipeline_queue.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace cuda_rewrite {
namespace pipeline {

/// What the rewrite knows of a stage.
struct StageDesc {
  const char *name;
  int groupSize; ///< threads(n)
  size_t itemBytes;
};

/// What the rewrite knows of a pipeline.
struct PipelineDesc {
  const char *name; ///< The entry kernel's name.
  int stageCount;
  const StageDesc *stages;
  int blockThreads;       ///< Of every generated kernel (their launch bounds).
  const char *model;      ///< The pragma's model(...), "auto" if none.
  const char *configFile; ///< The pragma's config(...), null if none.
};

/// The generated kernels: workers[first * stageCount + last] is the
/// persistent worker over stages [first, last], kernelByKernel[s] the KBK
/// kernel of stage s. Both take (pipeline struct, ...) by value.
struct Kernels {
  const void *const *workers;
  const void *const *kernelByKernel;
};

/// Placement counters: one region per launch of a persistent kernel, the
/// first launches and the adaptation's.
inline constexpr int kMaxLaunches = 64;
/// Polls of empty queues after which a block may retire (about 50 us).
inline constexpr int kAdaptIdlePolls = 64;

namespace detail {

static __global__ void resetQueues(Control *control) {
  int stage = blockIdx.y;
  QueueState &queue = control->queues[stage];
  for (Position slot = blockIdx.x * blockDim.x + threadIdx.x;
       slot < queue.capacity; slot += gridDim.x * blockDim.x)
    queue.sequence[slot] = slot;
}

inline const char *env(const char *name) {
  const char *value = std::getenv(name);
  return value && *value ? value : nullptr;
}

inline bool readText(const char *file, std::string &text) {
  std::ifstream in(file);
  if (!in)
    return false;
  text.assign(std::istreambuf_iterator<char>(in), {});
  return true;
}

} // namespace detail

/// Runs one pipeline; the rewrite keeps one per pipeline launch site, so its
/// queues are allocated once and reused by every launch.
class Runner {
public:
  explicit Runner(const PipelineDesc &desc) : desc(desc) {
    for (int s = 0; s < desc.stageCount; ++s)
      stageNames.push_back(desc.stages[s].name);
  }
  Runner(const Runner &) = delete;
  Runner &operator=(const Runner &) = delete;

  /// Chooses the model and readies the queues for a run on \p stream.
  cudaError_t prepare(cudaStream_t stream) {
    std::string why;
    RunConfig next;
    if (!chooseConfig(next, why)) {
      std::fprintf(stderr, "cuda-rewrite: error: pipeline '%s': %s\n",
                   desc.name, why.c_str());
      return cudaErrorInvalidValue;
    }
    if (control && next.capacity != config.capacity)
      release(); // queues of another size
    config = next;
    if (cudaError_t error = allocate())
      return error;
    if (timing())
      cudaEventRecord(start, stream);
    if (config.model == "rtc")
      return cudaSuccess;
    // Positions run on from one run to the next (a finished run leaves every
    // queue empty); everything is reset only after an aborted run.
    int rounds = config.rounds ? config.rounds : kBatchRounds;
    int spread = config.spread ? config.spread : kBlocksPerExtraRound;
    if (rounds != host.batchRounds || spread != host.spreadBlocks) {
      host.batchRounds = rounds;
      host.spreadBlocks = spread;
      if (!needsReset) // else the reset below copies them
        if (cudaError_t error = cudaMemcpyAsync(
                &control->batchRounds, &host.batchRounds, 2 * sizeof(int),
                cudaMemcpyHostToDevice, stream))
          return error;
    }
    if (needsReset) {
      for (int s = 0; s < desc.stageCount; ++s)
        host.queues[s].head = host.queues[s].tail = host.queues[s].used = 0;
      host.inFlight = host.abort = host.error = 0;
      host.overflowStage = -1;
      if (cudaError_t error = cudaMemcpyAsync(control, &host, sizeof(Control),
                                              cudaMemcpyHostToDevice, stream))
        return error;
      detail::resetQueues<<<dim3(64, desc.stageCount), 256, 0, stream>>>(
          control);
      needsReset = false;
    }
    return cudaGetLastError();
  }

  /// Whether this run is the original program (model rtc).
  bool runsOriginal() const { return config.model == "rtc"; }

  Control *deviceControl() const { return control; }

  template <class T> Queue<T> queue(int stage) const {
    return {control, stage, static_cast<T *>(slots[stage])};
  }

  /// Runs the seeded pipeline to the end with \p kernels; \p args is the
  /// generated pipeline struct the kernels take first. Synchronizes
  /// \p stream and returns the first error (an overflow included).
  cudaError_t run(const Kernels &kernels, const void *args,
                  cudaStream_t stream) {
    describe(kernels);
    runStart = std::chrono::steady_clock::now();
    timedOut = false;
    cudaError_t error = cudaGetLastError(); // the seeding launch
    if (!error)
      error = config.model == "kbk" ? runKernelByKernel(kernels, args, stream)
                                    : runPersistent(kernels, args, stream);
    if (!error)
      error = cudaStreamSynchronize(stream);
    if (!error)
      error = cudaMemcpy(&host, control, sizeof(Control),
                         cudaMemcpyDeviceToHost);
    if (!error && host.error && !timedOut) {
      error = static_cast<cudaError_t>(host.error);
      std::fprintf(stderr,
                   "cuda-rewrite: error: pipeline '%s': the queue of stage "
                   "'%s' overflowed (%zu items; set "
                   "CUDA_REWRITE_PIPELINE_CAPACITY): %s\n",
                   desc.name,
                   host.overflowStage >= 0
                       ? desc.stages[host.overflowStage].name
                       : "?",
                   config.capacity, cudaGetErrorString(error));
    }
    if (error || timedOut)
      needsReset = true;
    if (error)
      return leaveAsLastError(error);
    recordTime(stream);
    return cudaSuccess;
  }

  /// After the original entry kernel (model rtc): records its time.
  cudaError_t ranOriginal(cudaStream_t stream) {
    cudaError_t error = cudaGetLastError();
    if (!error && timing()) {
      error = cudaStreamSynchronize(stream);
      recordTime(stream);
    }
    return error;
  }

private:
  //===-- Configuration ---------------------------------------------------===//

  static const char *timesFile() {
    return detail::env("CUDA_REWRITE_PIPELINE_TIMES");
  }
  bool timing() const { return timesFile() || !candidates.empty(); }

  bool chooseConfig(RunConfig &result, std::string &why) {
    std::string text;
    if (const char *tune = detail::env("CUDA_REWRITE_PIPELINE_TUNE")) {
      if (candidates.empty()) {
        if (!detail::readText(tune, text)) {
          why = std::string("cannot read tuning file '") + tune + "'";
          return false;
        }
        candidates = splitCandidates(text);
      }
      candidate = launchCount++ % candidates.size();
      if (!parseConfig(candidates[candidate], stageNames,
                       std::string(tune) + "#" + std::to_string(candidate),
                       result, why))
        return false;
    } else if (const char *model = detail::env("CUDA_REWRITE_PIPELINE_MODEL")) {
      result.model = model;
      result.source = "CUDA_REWRITE_PIPELINE_MODEL";
    } else if (const char *file = detail::env("CUDA_REWRITE_PIPELINE_CONFIG")) {
      if (!detail::readText(file, text)) {
        why = std::string("cannot read configuration '") + file + "'";
        return false;
      }
      if (!parseConfig(text, stageNames, file, result, why))
        return false;
    } else if (desc.configFile && detail::readText(desc.configFile, text)) {
      if (!parseConfig(text, stageNames, desc.configFile, result, why))
        return false;
    } else {
      result.model =
          std::strcmp(desc.model, "auto") ? desc.model : "megakernel";
      result.source = "the pragma";
    }
    if (const char *capacity = detail::env("CUDA_REWRITE_PIPELINE_CAPACITY"))
      result.capacity = std::strtoull(capacity, nullptr, 10);
    if (const char *adapt = detail::env("CUDA_REWRITE_PIPELINE_ADAPT"))
      result.adapt = std::strcmp(adapt, "0") != 0;
    if (const char *green = detail::env("CUDA_REWRITE_PIPELINE_GREEN"))
      result.green = std::strcmp(green, "0") != 0;
    return validateConfig(result, why);
  }

  //===-- Memory ----------------------------------------------------------===//

  cudaError_t allocate() {
    if (control)
      return cudaSuccess;
    if (desc.stageCount > kMaxStages)
      return cudaErrorInvalidValue;
    std::memset(&host, 0, sizeof host);
    host.stageCount = desc.stageCount;
    for (int s = 0; s < desc.stageCount; ++s) {
      host.groupSize[s] = desc.stages[s].groupSize;
      host.queues[s].capacity = config.capacity;
      if (cudaError_t error = cudaMalloc(
              &slots[s], config.capacity * desc.stages[s].itemBytes))
        return error;
      if (cudaError_t error = cudaMalloc(&host.queues[s].sequence,
                                         config.capacity * sizeof(Position)))
        return error;
    }
    if (cudaError_t error = cudaMalloc(&control, sizeof(Control)))
      return error;
    if (cudaError_t error = cudaMalloc(
            &counters, (kMaxLaunches * (kMaxSms + 2) + kMaxStages) *
                           sizeof(int)))
      return error;
    if (cudaError_t error = cudaMallocHost(&lengths, sizeof(Control)))
      return error;
    if (!start) { // Streams, events and host memory outlive the queues.
      cudaEventCreate(&start);
      cudaEventCreate(&stop);
      for (cudaStream_t &s : streams)
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
      for (cudaEvent_t &e : done)
        cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
      cudaEventCreateWithFlags(&seeded, cudaEventDisableTiming);
      cudaHostAlloc(&retired, sizeof(int), cudaHostAllocMapped);
      cudaHostGetDevicePointer(&retiredOnDevice, retired, 0);
    }
    needsReset = true;
    return cudaGetLastError();
  }

  void release() {
    for (int s = 0; s < desc.stageCount; ++s) {
      cudaFree(slots[s]);
      cudaFree(host.queues[s].sequence);
      slots[s] = nullptr;
    }
    cudaFree(control);
    cudaFree(counters);
    cudaFreeHost(lengths);
    control = nullptr;
  }

  /// Returns \p error, leaving it for the program's cudaGetLastError too
  /// where the runtime can: an overflow shows as the failed allocation it
  /// is. (The rewritten launch statement has no value to return it in.)
  static cudaError_t leaveAsLastError(cudaError_t error) {
    if (error == cudaErrorMemoryAllocation) {
      void *never = nullptr;
      if (cudaMalloc(&never, ~size_t(0) / 2) == cudaSuccess)
        cudaFree(never);
    }
    return error;
  }

  //===-- Time-outs (tuning) ----------------------------------------------===//

  /// The longest a tuning candidate may run: 3x the best so far.
  double limitMs() const { return candidates.empty() ? 0 : 3 * bestMs; }

  /// Whether the run has gone on for more than \p limit ms (0: no limit).
  bool runLongerThan(double limit) const {
    return limit > 0 &&
           std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - runStart)
                   .count() > limit;
  }

  bool pastLimit() const { return runLongerThan(limitMs()); }

  /// CUDA_REWRITE_PIPELINE_WATCHDOG_MS: a persistent run still going after
  /// this long is reported with the state of its queues and placement, then
  /// stopped (cudaErrorLaunchTimeout). For finding out why a run hangs.
  static double watchdogMs() {
    const char *ms = detail::env("CUDA_REWRITE_PIPELINE_WATCHDOG_MS");
    return ms ? std::strtod(ms, nullptr) : 0;
  }

  bool pastWatchdog() const { return runLongerThan(watchdogMs()); }

  /// What the watchdog prints: per stage its queue's positions, then per
  /// persistent kernel where its blocks were to stay and how many did.
  void reportHang(const std::vector<WorkerLaunch> &launches,
                  const std::vector<int> &fits) {
    cudaStream_t side = streams[kMaxStages - 1];
    std::vector<int> region((kMaxSms + 2) * launches.size());
    cudaMemcpyAsync(lengths, control, sizeof(Control), cudaMemcpyDeviceToHost,
                    side);
    cudaMemcpyAsync(region.data(), counters, region.size() * sizeof(int),
                    cudaMemcpyDeviceToHost, side);
    cudaStreamSynchronize(side);
    std::fprintf(stderr,
                 "cuda-rewrite: error: pipeline '%s' (model %s) still "
                 "running after %.0f ms; in flight %d, abort %d\n",
                 desc.name, config.model.c_str(), watchdogMs(),
                 lengths->inFlight, lengths->abort);
    for (int s = 0; s < desc.stageCount; ++s) {
      const QueueState &q = lengths->queues[s];
      std::fprintf(stderr,
                   "  stage %s: head %llu tail %llu used %llu capacity %llu\n",
                   desc.stages[s].name, q.head, q.tail, q.used, q.capacity);
    }
    for (size_t k = 0; k < launches.size(); ++k) {
      const int *r = region.data() + k * (kMaxSms + 2);
      int smsUsed = 0;
      for (int sm = 0; sm < kMaxSms; ++sm)
        smsUsed += r[sm] > 0;
      std::fprintf(stderr,
                   "  kernel %s..%s: SMs %d-%d, %d per SM (%d fit), "
                   "%d blocks decided, %d stayed, on %d SMs\n",
                   desc.stages[launches[k].firstStage].name,
                   desc.stages[launches[k].lastStage].name,
                   launches[k].smFirst, launches[k].smLast,
                   launches[k].blocksPerSm, fits[k], r[kMaxSms],
                   r[kMaxSms + 1], smsUsed);
    }
  }

  /// Stops a run that is past its time: every block sees the abort flag.
  void stopRun() {
    int one = 1;
    cudaMemcpyAsync(&control->abort, &one, sizeof one, cudaMemcpyHostToDevice,
                    streams[kMaxStages - 1]);
    cudaStreamSynchronize(streams[kMaxStages - 1]);
    timedOut = true;
  }

  //===-- Models ----------------------------------------------------------===//

  cudaError_t runKernelByKernel(const Kernels &kernels, const void *args,
                                cudaStream_t stream) {
    kbkRounds = 0;
    for (;; ++kbkRounds) {
      if (cudaError_t error = cudaMemcpyAsync(lengths, control,
                                              sizeof(Control),
                                              cudaMemcpyDeviceToHost, stream))
        return error;
      if (cudaError_t error = cudaStreamSynchronize(stream))
        return error;
      if (lengths->abort)
        return cudaSuccess; // run() reports the error
      if (pastLimit()) {
        timedOut = true;
        return cudaSuccess;
      }
      bool any = false;
      cudaEvent_t *round = timing() ? roundEvents(kbkRounds) : nullptr;
      for (int s = 0; s < desc.stageCount; ++s) {
        Position first = lengths->queues[s].head;
        Position count = lengths->queues[s].tail - first;
        if (!count)
          continue;
        if (round && !any)
          cudaEventRecord(round[0], stream);
        any = true;
        Position perBlock = desc.blockThreads / desc.stages[s].groupSize;
        unsigned blocks =
            static_cast<unsigned>((count + perBlock - 1) / perBlock);
        void *params[] = {const_cast<void *>(args), &first, &count};
        if (cudaError_t error = cudaLaunchKernel(
                kernels.kernelByKernel[s], dim3(blocks),
                dim3(desc.blockThreads), params, 0, stream))
          return error;
      }
      if (!any)
        return cudaSuccess;
      if (round)
        cudaEventRecord(round[1], stream);
    }
  }

  /// The start and end events of KBK round \p round (timing only).
  cudaEvent_t *roundEvents(int round) {
    while (static_cast<int>(kbkEvents.size()) <= round) {
      kbkEvents.emplace_back();
      cudaEventCreate(&kbkEvents.back()[0]);
      cudaEventCreate(&kbkEvents.back()[1]);
    }
    return kbkEvents[round].data();
  }

  /// The time KBK's rounds kept the GPU busy: the run's time less this is
  /// the host round trips a persistent model saves at most.
  float kbkBusyMs() {
    float busy = 0;
    for (int r = 0; r < kbkRounds; ++r) {
      float ms = 0;
      cudaEventElapsedTime(&ms, kbkEvents[r][0], kbkEvents[r][1]);
      busy += ms;
    }
    return busy;
  }

  const void *worker(const Kernels &kernels, const WorkerLaunch &w) const {
    return kernels.workers[w.firstStage * desc.stageCount + w.lastStage];
  }

  /// The persistent kernels of the configured model.
  std::vector<WorkerLaunch> workerLaunches(int smCount) const {
    int n = desc.stageCount;
    std::vector<WorkerLaunch> result;
    if (config.model == "megakernel") {
      result.push_back({0, n - 1, 0, smCount - 1, 0});
    } else if (config.model == "coarse") {
      for (int s = 0; s < n; ++s)
        result.push_back(
            {s, s, smCount * s / n, smCount * (s + 1) / n - 1, 0});
    } else if (config.model == "fine") {
      result.push_back({0, n - 1, 0, smCount - 1, 0, /*fine=*/true, {}});
    } else {
      result = config.workers;
    }
    return result;
  }

  /// No two kernels share an SM (see the file comment), and a fine kernel
  /// has a block for each of its stages.
  bool placeable(const std::vector<WorkerLaunch> &launches) const {
    for (size_t k = 0; k < launches.size(); ++k) {
      const WorkerLaunch &w = launches[k];
      int stages = w.lastStage - w.firstStage + 1;
      if (w.fine && w.blocksPerSm * (w.smLast - w.smFirst + 1) < stages) {
        std::fprintf(stderr,
                     "cuda-rewrite: error: pipeline '%s': the fine group "
                     "%s..%s has %d block(s) per SM on %d SM(s), fewer than "
                     "its %d stages (%s)\n",
                     desc.name, desc.stages[w.firstStage].name,
                     desc.stages[w.lastStage].name, w.blocksPerSm,
                     w.smLast - w.smFirst + 1, stages, config.source.c_str());
        return false;
      }
      for (size_t j = 0; j < k; ++j)
        if (launches[j].smFirst <= w.smLast &&
            w.smFirst <= launches[j].smLast) {
          std::fprintf(stderr,
                       "cuda-rewrite: error: pipeline '%s': the groups of "
                       "%s and %s share SMs; give each group its own SMs "
                       "(%s)\n",
                       desc.name, desc.stages[launches[j].firstStage].name,
                       desc.stages[w.firstStage].name, config.source.c_str());
          return false;
        }
    }
    return true;
  }

  /// The cycle of stages the blocks of fine kernel \p w serve in turn (see
  /// Placement::roles): each stage as many times as its blocks per SM,
  /// interleaved so that the first blocks to stay cover every stage.
  static std::vector<int> roleCycle(const WorkerLaunch &w) {
    std::vector<int> left;
    for (int s = w.firstStage; s <= w.lastStage; ++s)
      left.push_back(w.stageBlocks.empty()
                         ? 1
                         : w.stageBlocks[static_cast<size_t>(
                               s - w.firstStage)]);
    std::vector<int> cycle;
    for (bool any = true; any && cycle.size() < size_t(kMaxRoleCycle);) {
      any = false;
      for (size_t i = 0; i < left.size(); ++i)
        if (left[i] > 0 && cycle.size() < size_t(kMaxRoleCycle)) {
          cycle.push_back(w.firstStage + static_cast<int>(i));
          --left[i];
          any = true;
        }
    }
    return cycle;
  }

  /// Launches persistent kernel \p w as launch \p region on \p s.
  cudaError_t launchWorker(const Kernels &kernels, const void *args,
                           const WorkerLaunch &w, int grid, int region,
                           cudaStream_t s) {
    int *region0 = counters + region * (kMaxSms + 2);
    Placement placement{w.smFirst,
                        w.smLast,
                        w.blocksPerSm,
                        region0,
                        region0 + kMaxSms,
                        region0 + kMaxSms + 1,
                        counters + kMaxLaunches * (kMaxSms + 2),
                        config.adapt ? kAdaptIdlePolls : 0,
                        retiredOnDevice,
                        0,
                        w.firstStage,
                        {}};
    if (w.fine) {
      std::vector<int> cycle = roleCycle(w);
      placement.roleCount = static_cast<int>(cycle.size());
      for (size_t i = 0; i < cycle.size(); ++i)
        placement.roles[i] = static_cast<signed char>(cycle[i]);
    }
    if (cudaError_t error = cudaMemsetAsync(region0, 0,
                                            (kMaxSms + 2) * sizeof(int), s))
      return error;
    void *params[] = {const_cast<void *>(args), &placement};
    active.push_back(s);
    return cudaLaunchKernel(worker(kernels, w), dim3(grid),
                            dim3(desc.blockThreads), params, 0, s);
  }

  /// Green partitions for \p launches whose SM ranges are disjoint (coarse
  /// and hybrid groups): one per range, with a stream per launch, created
  /// once per layout. Null where there is one range or the driver cannot
  /// (then the %smid filter binds them, and a warning says why once).
  GreenPartitions *greenFor(const std::vector<WorkerLaunch> &launches) {
    std::vector<std::pair<int, int>> ranges;
    for (const WorkerLaunch &w : launches)
      if (std::find(ranges.begin(), ranges.end(),
                    std::make_pair(w.smFirst, w.smLast)) == ranges.end())
        ranges.push_back({w.smFirst, w.smLast});
    std::sort(ranges.begin(), ranges.end());
    for (size_t i = 1; i < ranges.size(); ++i)
      if (ranges[i].first <= ranges[i - 1].second)
        return nullptr; // overlapping groups share SMs: no partition
    if (ranges.size() < 2)
      return nullptr;
    std::string layout;
    std::vector<int> sms, streamsPer;
    for (const std::pair<int, int> &range : ranges) {
      int first = range.first, last = range.second;
      layout += std::to_string(first) + "-" + std::to_string(last) + " ";
      sms.push_back(last - first + 1);
      streamsPer.push_back(static_cast<int>(std::count_if(
          launches.begin(), launches.end(),
          [&](const WorkerLaunch &w) { return w.smFirst == first; })));
    }
    std::unique_ptr<GreenPartitions> &made = green[layout];
    if (!made) {
      made = std::make_unique<GreenPartitions>();
      std::string why;
      if (!made->create(sms, streamsPer, why)) {
        std::fprintf(stderr,
                     "cuda-rewrite: warning: pipeline '%s': no green "
                     "contexts (%s); groups are bound by SM id\n",
                     desc.name, why.c_str());
        made.reset(new GreenPartitions());
      }
    }
    return made->empty() ? nullptr : made.get();
  }

  cudaError_t runPersistent(const Kernels &kernels, const void *args,
                            cudaStream_t stream) {
    int device = 0, smCount = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&smCount, cudaDevAttrMultiProcessorCount, device);
    std::vector<WorkerLaunch> launches = workerLaunches(smCount);
    if (launches.size() > static_cast<size_t>(kMaxStages - 1))
      return cudaErrorInvalidValue;
    std::vector<int> fits(launches.size());
    for (size_t k = 0; k < launches.size(); ++k) {
      if (cudaError_t error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
              &fits[k], worker(kernels, launches[k]), desc.blockThreads, 0))
        return error;
      if (fits[k] < 1)
        return cudaErrorInvalidConfiguration;
    }
    for (size_t k = 0; k < launches.size(); ++k) {
      WorkerLaunch &w = launches[k];
      if (w.blocksPerSm == 0 || w.blocksPerSm > fits[k])
        w.blocksPerSm = fits[k];
      w.smLast = std::min(w.smLast, smCount - 1);
      if (w.smFirst > w.smLast)
        return cudaErrorInvalidValue;
    }
    if (!placeable(launches))
      return cudaErrorInvalidConfiguration;
    *retired = 0;
    if (cudaError_t error = cudaMemsetAsync(
            counters + kMaxLaunches * (kMaxSms + 2), 0,
            kMaxStages * sizeof(int), stream))
      return error;
    cudaEventRecord(seeded, stream);
    active.clear();
    GreenPartitions *partitions = config.green ? greenFor(launches) : nullptr;
    std::vector<int> firsts; // partition i holds the i-th SM range
    for (const WorkerLaunch &w : launches)
      firsts.push_back(w.smFirst);
    std::sort(firsts.begin(), firsts.end());
    firsts.erase(std::unique(firsts.begin(), firsts.end()), firsts.end());
    std::vector<size_t> used(firsts.size());
    for (size_t k = 0; k < launches.size(); ++k) {
      WorkerLaunch w = launches[k];
      cudaStream_t s = streams[k];
      // Enough blocks to fill every SM: those not on their SMs exit at once.
      int grid = fits[k] * smCount;
      if (partitions) { // the partition's SMs are the kernel's
        size_t i = std::find(firsts.begin(), firsts.end(), w.smFirst) -
                   firsts.begin();
        s = partitions->stream(i, used[i]++);
        grid = fits[k] * partitions->smCount(i);
        w.smFirst = 0;
        w.smLast = kMaxSms - 1;
      }
      cudaStreamWaitEvent(s, seeded, 0);
      if (cudaError_t error =
              launchWorker(kernels, args, w, grid, static_cast<int>(k), s))
        return error;
    }
    if (config.adapt || limitMs() > 0 || watchdogMs() > 0)
      return watch(kernels, args, launches, fits);
    for (size_t k = 0; k < active.size(); ++k) {
      cudaEventRecord(done[k], active[k]);
      cudaStreamWaitEvent(stream, done[k], 0);
    }
    return cudaGetLastError();
  }

  /// Waits for the persistent kernels of \p launches on the host: stops a
  /// tuning run past its time, and (online adaptation) launches blocks for
  /// the stage with the most items waiting whenever blocks have retired.
  cudaError_t watch(const Kernels &kernels, const void *args,
                    const std::vector<WorkerLaunch> &launches,
                    const std::vector<int> &fits) {
    int replaced = 0, region = static_cast<int>(launches.size());
    bool hung = false;
    size_t next = launches.size();
    cudaStream_t side = streams[kMaxStages - 1];
    for (;;) {
      bool running = false;
      for (size_t k = 0; k < active.size() && !running; ++k)
        running = cudaStreamQuery(active[k]) == cudaErrorNotReady;
      if (!running) {
        cudaError_t error = cudaGetLastError();
        return error || !hung ? error : cudaErrorLaunchTimeout;
      }
      if (!timedOut && pastLimit())
        stopRun();
      if (!hung && pastWatchdog()) {
        reportHang(launches, fits);
        hung = true;
        stopRun();
      }
      int now = __atomic_load_n(retired, __ATOMIC_RELAXED);
      if (config.adapt && !timedOut && now > replaced &&
          region < kMaxLaunches) {
        cudaMemcpyAsync(lengths, control, sizeof(Control),
                        cudaMemcpyDeviceToHost, side);
        cudaStreamSynchronize(side);
        // A group's kernel serves its stages together, or (fine) each
        // block one of them: the busiest group, or fine stage, gets blocks.
        size_t busiest = 0;
        int busiestStage = 0;
        Position most = 0;
        for (size_t k = 0; k < launches.size(); ++k) {
          Position waiting = 0;
          for (int s = launches[k].firstStage; s <= launches[k].lastStage;
               ++s) {
            Position stage = lengths->queues[s].tail - lengths->queues[s].head;
            if (launches[k].fine && stage > most) {
              most = stage;
              busiest = k;
              busiestStage = s;
            }
            waiting += stage;
          }
          if (!launches[k].fine && waiting > most) {
            most = waiting;
            busiest = k;
          }
        }
        if (most > 0) {
          WorkerLaunch anywhere = launches[busiest];
          anywhere.smFirst = 0;
          anywhere.smLast = kMaxSms - 1;
          anywhere.blocksPerSm = fits[busiest];
          if (anywhere.fine) { // every new block serves the busiest stage
            anywhere.stageBlocks.assign(
                anywhere.lastStage - anywhere.firstStage + 1, 0);
            anywhere.stageBlocks[busiestStage - anywhere.firstStage] = 1;
          }
          cudaStream_t s = streams[std::min<size_t>(next++, kMaxStages - 2)];
          if (cudaError_t error = launchWorker(kernels, args, anywhere,
                                               now - replaced, region++, s))
            return error;
          replaced = now;
        }
      }
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  //===-- Reports for the tuner -------------------------------------------===//

  /// CUDA_REWRITE_PIPELINE_DESCRIBE: the stages and, for every persistent
  /// kernel, how many of its blocks fit on an SM (once per program).
  void describe(const Kernels &kernels) {
    const char *file = detail::env("CUDA_REWRITE_PIPELINE_DESCRIBE");
    if (!file || described)
      return;
    described = true;
    std::FILE *out = std::fopen(file, "w");
    if (!out)
      return;
    int device = 0, smCount = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&smCount, cudaDevAttrMultiProcessorCount, device);
    std::fprintf(out, "pipeline %s\nsms %d\n", desc.name, smCount);
    for (int s = 0; s < desc.stageCount; ++s)
      std::fprintf(out, "stage %s threads %d\n", desc.stages[s].name,
                   desc.stages[s].groupSize);
    for (int first = 0; first < desc.stageCount; ++first)
      for (int last = first; last < desc.stageCount; ++last) {
        int fits = 0;
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &fits, kernels.workers[first * desc.stageCount + last],
            desc.blockThreads, 0);
        std::fprintf(out, "kernel %s %s fits %d\n", desc.stages[first].name,
                     desc.stages[last].name, fits);
      }
    std::fclose(out);
  }

  void recordTime(cudaStream_t stream) {
    if (!timing())
      return;
    float ms = 0;
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    cudaEventElapsedTime(&ms, start, stop);
    if (!candidates.empty() && !timedOut && (bestMs == 0 || ms < bestMs))
      bestMs = ms;
    if (const char *file = timesFile())
      if (std::FILE *out = std::fopen(file, "a")) {
        std::fprintf(out, "pipeline=%s model=%s candidate=%d ms=%.6f",
                     desc.name, config.model.c_str(),
                     candidates.empty() ? -1 : static_cast<int>(candidate),
                     ms);
        if (config.model == "kbk")
          std::fprintf(out, " rounds=%d busy_ms=%.6f", kbkRounds,
                       kbkBusyMs());
        std::fprintf(out, "%s\n", timedOut ? " timeout" : "");
        std::fclose(out);
      }
  }

  PipelineDesc desc;
  std::vector<std::string> stageNames;
  RunConfig config;
  Control host{};
  Control *control = nullptr;
  Control *lengths = nullptr; ///< Pinned: the queues' positions.
  void *slots[kMaxStages] = {};
  int *counters = nullptr; ///< Placement regions, then live blocks per group.
  int *retired = nullptr, *retiredOnDevice = nullptr; ///< Mapped host memory.
  bool needsReset = true, described = false, timedOut = false;
  std::vector<cudaStream_t> active; ///< Streams of this run's kernels.
  std::map<std::string, std::unique_ptr<GreenPartitions>> green;
  std::vector<std::string> candidates; ///< CUDA_REWRITE_PIPELINE_TUNE
  size_t candidate = 0, launchCount = 0;
  double bestMs = 0;
  int kbkRounds = 0; ///< Rounds of the last KBK run.
  std::vector<std::array<cudaEvent_t, 2>> kbkEvents; ///< Per round: start, end.
  std::chrono::steady_clock::time_point runStart;
  cudaStream_t streams[kMaxStages] = {};
  cudaEvent_t done[kMaxStages] = {}, seeded = nullptr, start = nullptr,
              stop = nullptr;
};

} // namespace pipeline
} // namespace cuda_rewrite

#endif // CUDA_REWRITE_PIPELINE_CUH
