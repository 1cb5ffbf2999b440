//===- cuda_rewrite/pipeline_config.cuh - Pipeline configurations -*- CUDA -*-===//
//
// Part of cuda-rewrite: the header-only device runtime included by rewritten
// code.
//
//===----------------------------------------------------------------------===//
//
// Which execution model a pipeline run uses (pipeline.cuh runs it), read
// from the environment, a configuration file or the pragma. A configuration
// file, written by scripts/pipeline-tune.py or by hand:
//
//   model hybrid                              # rtc kbk megakernel coarse fine
//   capacity 1048576                          # items per stage queue
//   adapt on                                  # online adaptation
//   green on                                  # groups in green contexts
//   rounds 4                                  # batches: rounds per reservation
//   spread 16                                 # ... while a round per 16 blocks waits
//   group split..dice megakernel sms 0-87 blocks 2
//   group shade fine sms 88-131 blocks 4      # blocks: per SM, or n,n,...
//
// `group` lines make a hybrid: each names a range of stages (by name), their
// model (megakernel: one persistent kernel for the range; coarse: one per
// stage, each on its own part of the SMs; fine: one kernel whose blocks each
// serve one stage, sharing the SMs) and the SMs they run on; groups may not
// share SMs. A tuning file holds several configurations
// separated by lines `---`.
//
//===----------------------------------------------------------------------===//

#ifndef CUDA_REWRITE_PIPELINE_CONFIG_CUH
#define CUDA_REWRITE_PIPELINE_CONFIG_CUH

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace cuda_rewrite {
namespace pipeline {

/// One persistent kernel of a run: its stages, SMs and blocks per SM.
struct WorkerLaunch {
  int firstStage, lastStage;
  int smFirst, smLast;
  int blocksPerSm; ///< 0: as many as fit.
  /// Fine: each block serves one of the stages (Placement::roles), each
  /// stage stageBlocks[stage - firstStage] blocks per SM (empty: in turn).
  bool fine = false;
  std::vector<int> stageBlocks;
};

/// A run's execution model.
struct RunConfig {
  std::string model = "megakernel";
  size_t capacity = size_t(1) << 20;
  bool adapt = false;
  bool green = false; ///< Bind groups to SMs with green contexts.
  int rounds = 0;     ///< Most rounds per reservation; 0: the default.
  int spread = 0;     ///< Blocks per extra round; 0: the default.
  std::vector<WorkerLaunch> workers; ///< hybrid: as configured
  std::string source;                ///< Where the configuration came from.
};

namespace detail {

inline std::string trim(const std::string &text) {
  size_t begin = text.find_first_not_of(" \t\r");
  size_t end = text.find_last_not_of(" \t\r");
  return begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
}

/// `a-b` or `a` (a == b).
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

inline int stageIndex(const std::vector<std::string> &stages,
                      const std::string &name) {
  auto it = std::find(stages.begin(), stages.end(), name);
  return it == stages.end() ? -1 : static_cast<int>(it - stages.begin());
}

/// The rest of a `group` line: `<stage>[..<stage>] megakernel|coarse|fine
/// sms <a>-<b> [blocks <n>[,<n>...]]`.
inline bool parseGroup(std::istringstream &words,
                       const std::vector<std::string> &stages,
                       RunConfig &result, std::string &why) {
  std::string range, model, smsKey, sms, blocksKey, blocks;
  words >> range >> model >> smsKey >> sms >> blocksKey >> blocks;
  words.clear();
  size_t dots = range.find("..");
  int first = stageIndex(stages, range.substr(0, dots));
  int last = dots == std::string::npos
                 ? first
                 : stageIndex(stages, range.substr(dots + 2));
  if (first < 0 || last < first) {
    why = "'" + range + "' is not a stage or a range first..last of stages";
    return false;
  }
  int smFirst, smLast;
  if (smsKey != "sms" || !parseRange(sms, smFirst, smLast)) {
    why = "expected 'sms <first>-<last>'";
    return false;
  }
  std::vector<int> quota;
  if (blocksKey == "blocks") {
    std::stringstream list(blocks);
    for (std::string item; std::getline(list, item, ',');)
      quota.push_back(std::max(0, std::atoi(item.c_str())));
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
    std::vector<int> stageBlocks;
    int total = 0;
    for (int s = first; !quota.empty() && s <= last; ++s) {
      stageBlocks.push_back(quotaOf(s - first));
      total += stageBlocks.back();
      if (stageBlocks.back() < 1) {
        why = "a fine group needs at least one block per SM for each stage";
        return false;
      }
    }
    result.workers.push_back(
        {first, last, smFirst, smLast, total, /*fine=*/true, stageBlocks});
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

} // namespace detail

/// Parses one configuration (see the file comment) of a pipeline with
/// \p stages; \p source names it in messages.
inline bool parseConfig(const std::string &text,
                        const std::vector<std::string> &stages,
                        const std::string &source, RunConfig &result,
                        std::string &why) {
  result.source = source;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = detail::trim(line.substr(0, line.find('#')));
    if (line.empty())
      continue;
    std::istringstream words(line);
    std::string key, value;
    words >> key;
    std::string where = source + ":" + std::to_string(number);
    if (key == "model") {
      words >> result.model;
    } else if (key == "capacity") {
      words >> result.capacity;
    } else if (key == "rounds") {
      words >> result.rounds;
    } else if (key == "spread") {
      words >> result.spread;
    } else if (key == "adapt" || key == "green") {
      words >> value;
      (key == "adapt" ? result.adapt : result.green) = value == "on";
    } else if (key == "group") {
      if (!detail::parseGroup(words, stages, result, why)) {
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

/// Checks what parseConfig cannot: the model is known, a hybrid has groups,
/// the capacity is a power of two.
inline bool validateConfig(RunConfig &config, std::string &why) {
  static const char *const Models[] = {"rtc",    "kbk",  "megakernel",
                                       "coarse", "fine", "hybrid"};
  if (std::none_of(std::begin(Models), std::end(Models),
                   [&](const char *m) { return config.model == m; })) {
    why = "unknown model '" + config.model + "' (from " + config.source +
          "); models: rtc, kbk, megakernel, coarse, fine, hybrid";
    return false;
  }
  if (config.model == "hybrid" && config.workers.empty()) {
    why = "model hybrid needs 'group' lines in a configuration file";
    return false;
  }
  if (config.rounds < 0 || config.spread < 0) {
    why = "rounds and spread must not be negative";
    return false;
  }
  if (config.capacity < 2 || (config.capacity & (config.capacity - 1))) {
    why = "capacity " + std::to_string(config.capacity) +
          " is not a power of two";
    return false;
  }
  return true;
}

/// The configurations of a tuning file, separated by lines `---`.
inline std::vector<std::string> splitCandidates(const std::string &text) {
  std::vector<std::string> result(1);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (detail::trim(line) == "---")
      result.emplace_back();
    else
      result.back() += line + "\n";
  }
  return result;
}

} // namespace pipeline
} // namespace cuda_rewrite

#endif // CUDA_REWRITE_PIPELINE_CONFIG_CUH
