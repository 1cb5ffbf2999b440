//===- cuda_rewrite/pipeline.cuh - Running pipelines -----------*- CUDA -*-===//
//
// Part of cuda-rewrite: the header-only device runtime included by rewritten
// code.
//
//===----------------------------------------------------------------------===//
//
// The host half of the pipeline runtime (rewriters/pipeline/, VersaPipe,
// seed 004 sections 4, 5 and 7). A rewritten pipeline launch seeds the
// stages' queues with the entry kernel and then hands a Runner its kernels;
// the Runner runs them under an execution model:
//
//   kbk         one kernel per stage and round; the host reads the queues'
//               lengths after each round and stops when all are empty.
//   megakernel  one persistent kernel over all stages on every SM; each
//               block takes batches from the latest stage that has items.
//   coarse      one persistent kernel per stage, each in its own stream and
//               bound to its own SMs (an even split unless configured).
//   fine        one persistent kernel per stage, all sharing the SMs, with a
//               quota of blocks per SM for each (they fit on an SM together).
//   hybrid      stage groups from a configuration file, each a megakernel,
//               coarse or fine group on its own SMs.
//   rtc         the original entry kernel, run to completion (the reference).
//
// Which one: CUDA_REWRITE_PIPELINE_MODEL=<model> if set, else the file named
// by CUDA_REWRITE_PIPELINE_CONFIG, else the pragma's config(<file>) if that
// file exists, else the pragma's model (auto: megakernel). The file, written
// by scripts/pipeline-tune.py or by hand:
//
//   model hybrid
//   capacity 1048576                          # items per stage queue
//   group split..dice megakernel sms 0-87 blocks 2
//   group shade fine sms 88-131 blocks 4      # blocks: per SM, or n,n,...
//
// CUDA_REWRITE_PIPELINE_CAPACITY overrides the capacity, and
// CUDA_REWRITE_PIPELINE_TIMES=<file> appends each run's time (for the tuner).
//
//===----------------------------------------------------------------------===//

#ifndef CUDA_REWRITE_PIPELINE_CUH
#define CUDA_REWRITE_PIPELINE_CUH

#include "cuda_rewrite/error.cuh"
#include "cuda_rewrite/pipeline_queue.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
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

/// One persistent kernel of a run: its stages, SMs and blocks per SM.
struct WorkerLaunch {
  int firstStage, lastStage;
  int smFirst, smLast;
  int blocksPerSm; ///< 0: as many as fit.
};

/// A run's execution model, from the configuration.
struct RunConfig {
  std::string model = "megakernel";
  size_t capacity = size_t(1) << 20;
  std::vector<WorkerLaunch> workers; ///< hybrid: as configured
  std::string source;                ///< Where the configuration came from.
};

namespace detail {

static __global__ void resetQueues(Control *control) {
  int stage = blockIdx.y;
  QueueState &queue = control->queues[stage];
  for (Position slot = blockIdx.x * blockDim.x + threadIdx.x;
       slot < queue.capacity; slot += gridDim.x * blockDim.x)
    queue.sequence[slot] = slot;
}

inline std::string trim(const std::string &text) {
  size_t begin = text.find_first_not_of(" \t\r");
  size_t end = text.find_last_not_of(" \t\r");
  return begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
}

inline bool parseRange(const std::string &text, int &first, int &last) {
  size_t dash = text.find('-');
  char *end = nullptr;
  first = static_cast<int>(std::strtol(text.c_str(), &end, 10));
  if (end == text.c_str())
    return false;
  if (dash == std::string::npos) {
    last = first;
    return *end == '\0';
  }
  last = static_cast<int>(std::strtol(text.c_str() + dash + 1, &end, 10));
  return *end == '\0' && first <= last;
}

} // namespace detail

/// Runs one pipeline; the rewrite keeps one per pipeline launch site, so its
/// queues are allocated once and reused by every launch.
class Runner {
public:
  explicit Runner(const PipelineDesc &desc) : desc(desc) {}
  Runner(const Runner &) = delete;
  Runner &operator=(const Runner &) = delete;

  /// Chooses the model and readies the queues for a run on \p stream.
  cudaError_t prepare(cudaStream_t stream) {
    std::string why;
    RunConfig next;
    if (!readConfig(next, why)) {
      std::fprintf(stderr, "cuda-rewrite: error: pipeline '%s': %s\n",
                   desc.name, why.c_str());
      return cudaErrorInvalidValue;
    }
    if (control && next.capacity != config.capacity)
      release(); // queues of another size
    config = next;
    if (config.model == "rtc")
      return cudaSuccess;
    if (cudaError_t error = allocate())
      return error;
    // Positions run on from one run to the next (a finished run leaves every
    // queue empty); only counters that a run leaves non-zero are cleared, and
    // everything after an aborted run.
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
    if (timesFile())
      cudaEventRecord(start, stream);
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
    cudaError_t error = cudaGetLastError(); // the seeding launch
    if (!error)
      error = config.model == "kbk" ? runKernelByKernel(kernels, args, stream)
                                    : runPersistent(kernels, args, stream);
    if (!error)
      error = cudaStreamSynchronize(stream);
    if (!error)
      error = cudaMemcpy(&host, control, sizeof(Control),
                         cudaMemcpyDeviceToHost);
    if (!error && host.error) {
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
    if (error) {
      needsReset = true;
      return error;
    }
    recordTime(stream);
    return cudaSuccess;
  }

  const RunConfig &configuration() const { return config; }

private:
  //===-- Configuration ---------------------------------------------------===//

  static const char *env(const char *name) {
    const char *value = std::getenv(name);
    return value && *value ? value : nullptr;
  }

  static const char *timesFile() {
    return env("CUDA_REWRITE_PIPELINE_TIMES");
  }

  bool readConfig(RunConfig &out, std::string &why) const {
    RunConfig result;
    if (const char *model = env("CUDA_REWRITE_PIPELINE_MODEL")) {
      result.model = model;
      result.source = "CUDA_REWRITE_PIPELINE_MODEL";
    } else if (const char *file = env("CUDA_REWRITE_PIPELINE_CONFIG")) {
      if (!readFile(file, result, why))
        return false;
    } else if (desc.configFile && std::ifstream(desc.configFile).good()) {
      if (!readFile(desc.configFile, result, why))
        return false;
    } else {
      result.model = std::strcmp(desc.model, "auto") ? desc.model
                                                     : "megakernel";
      result.source = "the pragma";
    }
    if (const char *capacity = env("CUDA_REWRITE_PIPELINE_CAPACITY"))
      result.capacity = std::strtoull(capacity, nullptr, 10);
    static const char *const Models[] = {"rtc",    "kbk",  "megakernel",
                                         "coarse", "fine", "hybrid"};
    if (std::none_of(std::begin(Models), std::end(Models),
                     [&](const char *m) { return result.model == m; })) {
      why = "unknown model '" + result.model + "' (from " + result.source +
            "); models: rtc, kbk, megakernel, coarse, fine, hybrid";
      return false;
    }
    if (result.model == "hybrid" && result.workers.empty()) {
      why = "model hybrid needs 'group' lines in a configuration file";
      return false;
    }
    if (result.capacity < 2 || (result.capacity & (result.capacity - 1))) {
      why = "capacity " + std::to_string(result.capacity) +
            " is not a power of two";
      return false;
    }
    out = result;
    return true;
  }

  int stageIndex(const std::string &name) const {
    for (int s = 0; s < desc.stageCount; ++s)
      if (name == desc.stages[s].name)
        return s;
    return -1;
  }

  bool readFile(const char *file, RunConfig &result, std::string &why) const {
    std::ifstream in(file);
    if (!in) {
      why = std::string("cannot read configuration '") + file + "'";
      return false;
    }
    result.source = file;
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
      line = detail::trim(line.substr(0, line.find('#')));
      if (line.empty())
        continue;
      std::istringstream words(line);
      std::string key;
      words >> key;
      std::string where = std::string(file) + ":" + std::to_string(number);
      if (key == "model") {
        words >> result.model;
      } else if (key == "capacity") {
        words >> result.capacity;
      } else if (key == "group") {
        if (!readGroup(words, result, why)) {
          why = where + ": " + why;
          return false;
        }
      } else {
        why = where + ": unknown key '" + key + "'";
        return false;
      }
      if (words.fail()) {
        why = where + ": cannot read '" + line + "'";
        return false;
      }
    }
    return true;
  }

  /// `group <stage>[..<stage>] megakernel|coarse|fine sms <a>-<b>
  /// [blocks <n>[,<n>...]]`.
  bool readGroup(std::istringstream &words, RunConfig &result,
                 std::string &why) const {
    std::string stages, model, smsKey, sms, blocksKey, blocks;
    words >> stages >> model >> smsKey >> sms >> blocksKey >> blocks;
    words.clear();
    size_t dots = stages.find("..");
    int first = stageIndex(stages.substr(0, dots));
    int last = dots == std::string::npos ? first
                                         : stageIndex(stages.substr(dots + 2));
    if (first < 0 || last < first) {
      why = "'" + stages + "' is not a stage or a range first..last of stages";
      return false;
    }
    int smFirst, smLast;
    if (smsKey != "sms" || !detail::parseRange(sms, smFirst, smLast)) {
      why = "expected 'sms <first>-<last>'";
      return false;
    }
    std::vector<int> quota;
    if (blocksKey == "blocks") {
      std::stringstream list(blocks);
      for (std::string item; std::getline(list, item, ',');)
        quota.push_back(std::atoi(item.c_str()));
    } else if (!blocksKey.empty()) {
      why = "expected 'blocks <n>[,<n>...]' after the SMs";
      return false;
    }
    auto quotaOf = [&](int i) {
      return quota.empty() ? 0 : quota[std::min<size_t>(i, quota.size() - 1)];
    };
    if (model == "megakernel") {
      result.workers.push_back({first, last, smFirst, smLast, quotaOf(0)});
    } else if (model == "fine") {
      for (int s = first; s <= last; ++s)
        result.workers.push_back(
            {s, s, smFirst, smLast, quotaOf(s - first)});
    } else if (model == "coarse") {
      int count = last - first + 1, span = smLast - smFirst + 1;
      if (span < count) {
        why = "a coarse group needs an SM per stage";
        return false;
      }
      for (int s = first; s <= last; ++s) {
        int i = s - first;
        result.workers.push_back({s, s, smFirst + span * i / count,
                                  smFirst + span * (i + 1) / count - 1,
                                  quotaOf(i)});
      }
    } else {
      why = "unknown group model '" + model + "' (megakernel, coarse, fine)";
      return false;
    }
    return true;
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
      if (cudaError_t error = cudaMalloc(&slots[s], config.capacity *
                                                        desc.stages[s].itemBytes))
        return error;
      if (cudaError_t error =
              cudaMalloc(&host.queues[s].sequence,
                         config.capacity * sizeof(Position)))
        return error;
    }
    if (cudaError_t error = cudaMalloc(&control, sizeof(Control)))
      return error;
    if (cudaError_t error = cudaMalloc(
            &placementCounters,
            kMaxStages * (kMaxSms + 2) * sizeof(int)))
      return error;
    if (cudaError_t error = cudaMallocHost(&lengths, sizeof(Control)))
      return error;
    if (!start) { // streams and events outlive a change of capacity
      cudaEventCreate(&start);
      cudaEventCreate(&stop);
      for (int s = 0; s < kMaxStages; ++s) {
        cudaStreamCreateWithFlags(&streams[s], cudaStreamNonBlocking);
        cudaEventCreateWithFlags(&done[s], cudaEventDisableTiming);
      }
      cudaEventCreateWithFlags(&seeded, cudaEventDisableTiming);
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
    cudaFree(placementCounters);
    cudaFreeHost(lengths);
    control = nullptr;
  }

  //===-- Models ----------------------------------------------------------===//

  cudaError_t runKernelByKernel(const Kernels &kernels, const void *args,
                                cudaStream_t stream) {
    for (;;) {
      if (cudaError_t error =
              cudaMemcpyAsync(lengths, control, sizeof(Control),
                              cudaMemcpyDeviceToHost, stream))
        return error;
      if (cudaError_t error = cudaStreamSynchronize(stream))
        return error;
      if (lengths->abort)
        return cudaSuccess; // run() reports the error
      bool any = false;
      for (int s = 0; s < desc.stageCount; ++s) {
        Position first = lengths->queues[s].head;
        Position count = lengths->queues[s].tail - first;
        if (!count)
          continue;
        any = true;
        Position perBlock = desc.blockThreads / desc.stages[s].groupSize;
        unsigned blocks = static_cast<unsigned>((count + perBlock - 1) / perBlock);
        void *params[] = {const_cast<void *>(args), &first, &count};
        if (cudaError_t error = cudaLaunchKernel(
                kernels.kernelByKernel[s], dim3(blocks),
                dim3(desc.blockThreads), params, 0, stream))
          return error;
      }
      if (!any)
        return cudaSuccess;
    }
  }

  /// The persistent kernels of the configured model.
  std::vector<WorkerLaunch> workerLaunches(int smCount) const {
    int n = desc.stageCount;
    std::vector<WorkerLaunch> result;
    if (config.model == "megakernel") {
      result.push_back({0, n - 1, 0, smCount - 1, 0});
    } else if (config.model == "coarse") {
      for (int s = 0; s < n; ++s)
        result.push_back({s, s, smCount * s / n, smCount * (s + 1) / n - 1, 0});
    } else if (config.model == "fine") {
      for (int s = 0; s < n; ++s)
        result.push_back({s, s, 0, smCount - 1, -1}); // placed by shareSms
    } else {
      result = config.workers;
    }
    return result;
  }

  /// The fine model's placement of the kernels marked blocksPerSm < 0: SMs
  /// that several stages share, with a quota of blocks per SM for each that
  /// lets them fit together. Stages are packed first-fit, heaviest first
  /// (one block of a kernel takes 1 / fits of an SM), into as few sets as
  /// fit, each set on an equal share of the SMs; within a set, the stages
  /// take one more block per SM in turn while they fit.
  static void shareSms(std::vector<WorkerLaunch> &launches,
                       const std::vector<int> &fits, int smCount) {
    std::vector<size_t> shared;
    for (size_t k = 0; k < launches.size(); ++k)
      if (launches[k].blocksPerSm < 0)
        shared.push_back(k);
    if (shared.empty())
      return;
    std::sort(shared.begin(), shared.end(),
              [&](size_t a, size_t b) { return fits[a] < fits[b]; });
    std::vector<std::vector<size_t>> sets;
    std::vector<double> loads;
    for (size_t k : shared) {
      size_t set = 0;
      while (set < sets.size() && loads[set] + 1.0 / fits[k] > 1.0 + 1e-9)
        ++set;
      if (set == sets.size()) {
        sets.emplace_back();
        loads.push_back(0);
      }
      sets[set].push_back(k);
      loads[set] += 1.0 / fits[k];
    }
    int count = static_cast<int>(sets.size());
    for (int set = 0; set < count; ++set) {
      for (size_t k : sets[set]) {
        launches[k].smFirst = smCount * set / count;
        launches[k].smLast = smCount * (set + 1) / count - 1;
        launches[k].blocksPerSm = 1;
      }
      // One more block at a time, in turn, while the SM still fits them.
      for (bool grew = true; grew;) {
        grew = false;
        for (size_t k : sets[set])
          if (loads[set] + 1.0 / fits[k] <= 1.0 + 1e-9) {
            ++launches[k].blocksPerSm;
            loads[set] += 1.0 / fits[k];
            grew = true;
          }
      }
    }
  }

  cudaError_t runPersistent(const Kernels &kernels, const void *args,
                            cudaStream_t stream) {
    int device = 0, smCount = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&smCount, cudaDevAttrMultiProcessorCount, device);
    std::vector<WorkerLaunch> launches = workerLaunches(smCount);
    if (launches.size() > static_cast<size_t>(kMaxStages))
      return cudaErrorInvalidValue;
    std::vector<int> fits(launches.size());
    for (size_t k = 0; k < launches.size(); ++k) {
      const WorkerLaunch &w = launches[k];
      const void *kernel =
          kernels.workers[w.firstStage * desc.stageCount + w.lastStage];
      if (cudaError_t error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
              &fits[k], kernel, desc.blockThreads, 0))
        return error;
      if (fits[k] < 1)
        return cudaErrorInvalidConfiguration;
    }
    // Kernels that share an SM must fit on it together, or one of them may
    // never get a block and the run never ends: the sum over kernels of
    // quota / blocks-that-fit stays at most 1 on every SM (each resource a
    // block uses is at most its SM's capacity / blocks-that-fit).
    shareSms(launches, fits, smCount);
    for (size_t k = 0; k < launches.size(); ++k) {
      WorkerLaunch &w = launches[k];
      if (w.blocksPerSm == 0 || w.blocksPerSm > fits[k])
        w.blocksPerSm = fits[k];
      w.smLast = std::min(w.smLast, smCount - 1);
      if (w.smFirst > w.smLast)
        return cudaErrorInvalidValue;
    }
    for (int sm = 0; sm < smCount; ++sm) {
      double load = 0;
      for (size_t k = 0; k < launches.size(); ++k)
        if (sm >= launches[k].smFirst && sm <= launches[k].smLast)
          load += double(launches[k].blocksPerSm) / fits[k];
      if (load > 1.0 + 1e-9) {
        std::fprintf(stderr,
                     "cuda-rewrite: error: pipeline '%s': the blocks placed "
                     "on SM %d do not fit on it together (%s)\n",
                     desc.name, sm, config.source.c_str());
        return cudaErrorInvalidConfiguration;
      }
    }
    if (cudaError_t error = cudaMemsetAsync(
            placementCounters, 0,
            launches.size() * (kMaxSms + 2) * sizeof(int), stream))
      return error;
    cudaEventRecord(seeded, stream);
    for (size_t k = 0; k < launches.size(); ++k) {
      const WorkerLaunch &w = launches[k];
      int *counters = placementCounters + k * (kMaxSms + 2);
      Placement placement{w.smFirst,         w.smLast,     w.blocksPerSm,
                          counters,          counters + kMaxSms,
                          counters + kMaxSms + 1};
      void *params[] = {const_cast<void *>(args), &placement};
      cudaStreamWaitEvent(streams[k], seeded, 0);
      if (cudaError_t error = cudaLaunchKernel(
              kernels.workers[w.firstStage * desc.stageCount + w.lastStage],
              dim3(fits[k] * smCount), dim3(desc.blockThreads), params, 0,
              streams[k]))
        return error;
      cudaEventRecord(done[k], streams[k]);
      cudaStreamWaitEvent(stream, done[k], 0);
    }
    return cudaGetLastError();
  }

  void recordTime(cudaStream_t stream) {
    const char *file = timesFile();
    if (!file)
      return;
    float ms = 0;
    cudaEventRecord(stop, stream);
    cudaEventSynchronize(stop);
    cudaEventElapsedTime(&ms, start, stop);
    if (FILE *out = std::fopen(file, "a")) {
      std::fprintf(out, "pipeline=%s model=%s ms=%.6f\n", desc.name,
                   config.model.c_str(), ms);
      std::fclose(out);
    }
  }

  PipelineDesc desc;
  RunConfig config;
  Control host{};
  Control *control = nullptr;
  Control *lengths = nullptr; ///< Pinned: the queues' positions, for KBK.
  void *slots[kMaxStages] = {};
  int *placementCounters = nullptr;
  bool needsReset = true;
  cudaStream_t streams[kMaxStages] = {};
  cudaEvent_t done[kMaxStages] = {}, seeded = nullptr, start = nullptr,
              stop = nullptr;
};

} // namespace pipeline
} // namespace cuda_rewrite

#endif // CUDA_REWRITE_PIPELINE_CUH
