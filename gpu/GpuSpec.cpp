//===- GpuSpec.cpp - The target GPU's figures for the cost models ---------===//

#include "gpu/GpuSpec.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include <cmath>

using namespace llvm;

namespace cuda_rewrite {

namespace {

/// An integer key of the schema (GpuSpec.h) and the smallest value that
/// makes sense for it. One table drives reading, writing and comparing, so
/// the three cannot drift apart.
struct IntField {
  const char *Key;
  uint64_t GpuSpec::*Member;
  uint64_t Min;
};

const IntField IntFields[] = {
    {"sm_count", &GpuSpec::SmCount, 1},
    {"warp_size", &GpuSpec::WarpSize, 1},
    {"max_threads_per_sm", &GpuSpec::MaxThreadsPerSm, 1},
    {"max_threads_per_block", &GpuSpec::MaxThreadsPerBlock, 1},
    {"max_blocks_per_sm", &GpuSpec::MaxBlocksPerSm, 1},
    {"registers_per_sm", &GpuSpec::RegistersPerSm, 1},
    {"registers_per_block", &GpuSpec::RegistersPerBlock, 1},
    {"max_registers_per_thread", &GpuSpec::MaxRegistersPerThread, 1},
    {"shared_memory_per_sm", &GpuSpec::SharedMemoryPerSm, 1},
    {"shared_memory_per_block", &GpuSpec::SharedMemoryPerBlock, 1},
    {"shared_memory_per_block_optin", &GpuSpec::SharedMemoryPerBlockOptin, 1},
    {"shared_memory_reserved_per_block", &GpuSpec::SharedMemoryReservedPerBlock,
     0},
    {"l2_cache_bytes", &GpuSpec::L2CacheBytes, 1},
    {"global_memory_bytes", &GpuSpec::GlobalMemoryBytes, 1},
    {"sm_clock_khz", &GpuSpec::SmClockKHz, 1},
    {"memory_clock_khz", &GpuSpec::MemoryClockKHz, 1},
    {"memory_bus_width_bits", &GpuSpec::MemoryBusWidthBits, 1},
};

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

/// NVIDIA H100 SXM5 80GB: deviceQuery figures and the datasheet. The copy
/// bandwidth is an estimate (about 90% of the 3.35 TB/s DRAM peak), which is
/// why its source is "datasheet"; a probe run on the GPU replaces it.
GpuSpec h100Sxm() {
  GpuSpec S;
  S.Name = "NVIDIA H100 SXM5 80GB";
  S.Arch = "sm_90";
  S.Source = "datasheet";
  S.SmCount = 132;
  S.WarpSize = 32;
  S.MaxThreadsPerSm = 2048;
  S.MaxThreadsPerBlock = 1024;
  S.MaxBlocksPerSm = 32;
  S.RegistersPerSm = 65536;
  S.RegistersPerBlock = 65536;
  S.MaxRegistersPerThread = 255;
  S.SharedMemoryPerSm = 228 * KiB;
  S.SharedMemoryPerBlock = 48 * KiB;
  S.SharedMemoryPerBlockOptin = 227 * KiB;
  S.SharedMemoryReservedPerBlock = 1 * KiB;
  S.L2CacheBytes = 50 * MiB;
  S.GlobalMemoryBytes = 80 * GiB;
  S.SmClockKHz = 1980000;
  S.MemoryClockKHz = 2619000;
  S.MemoryBusWidthBits = 5120;
  S.CopyBandwidthGBps = 3000;
  return S;
}

/// NVIDIA A100 SXM4 80GB, likewise; copy bandwidth estimated at about 85% of
/// the 2.04 TB/s DRAM peak.
GpuSpec a100Sxm() {
  GpuSpec S;
  S.Name = "NVIDIA A100 SXM4 80GB";
  S.Arch = "sm_80";
  S.Source = "datasheet";
  S.SmCount = 108;
  S.WarpSize = 32;
  S.MaxThreadsPerSm = 2048;
  S.MaxThreadsPerBlock = 1024;
  S.MaxBlocksPerSm = 32;
  S.RegistersPerSm = 65536;
  S.RegistersPerBlock = 65536;
  S.MaxRegistersPerThread = 255;
  S.SharedMemoryPerSm = 164 * KiB;
  S.SharedMemoryPerBlock = 48 * KiB;
  S.SharedMemoryPerBlockOptin = 163 * KiB;
  S.SharedMemoryReservedPerBlock = 1 * KiB;
  S.L2CacheBytes = 40 * MiB;
  S.GlobalMemoryBytes = 80 * GiB;
  S.SmClockKHz = 1410000;
  S.MemoryClockKHz = 1593000;
  S.MemoryBusWidthBits = 5120;
  S.CopyBandwidthGBps = 1750;
  return S;
}

struct BuiltinSpec {
  StringRef Arch;
  GpuSpec (*Make)();
};

/// Sorted by arch.
const BuiltinSpec BuiltinSpecs[] = {{"sm_80", a100Sxm}, {"sm_90", h100Sxm}};

Error specError(StringRef FileName, const Twine &Message) {
  return createStringError(inconvertibleErrorCode(),
                           "gpu spec '" + FileName + "': " + Message);
}

/// "the string "132"", "a boolean true", ...: what the file had instead.
std::string describe(const json::Value &V) {
  std::string Text = formatv("{0}", V).str();
  if (Text.size() > 40)
    Text = Text.substr(0, 37) + "...";
  switch (V.kind()) {
  case json::Value::Null:
    return "null";
  case json::Value::Boolean:
    return "the boolean " + Text;
  case json::Value::Number:
    return "the number " + Text;
  case json::Value::String:
    return "the string " + Text;
  case json::Value::Array:
    return "an array";
  case json::Value::Object:
    return "an object";
  }
  llvm_unreachable("unknown JSON kind");
}

/// Reads the keys of one JSON object, each with a message that names the
/// key, the file and what was found instead.
class FieldReader {
public:
  FieldReader(const json::Object &Obj, StringRef FileName)
      : Obj(Obj), FileName(FileName) {}

  Expected<const json::Value *> get(StringRef Key) {
    if (const json::Value *V = Obj.get(Key))
      return V;
    return specError(FileName, "missing key '" + Key + "'");
  }

  Error wrongType(StringRef Key, StringRef Expected, const json::Value &V) {
    return specError(FileName, "key '" + Key + "' must be " + Expected +
                                   ", not " + describe(V));
  }

  Error readString(StringRef Key, std::string &Out) {
    Expected<const json::Value *> V = get(Key);
    if (!V)
      return V.takeError();
    std::optional<StringRef> S = (*V)->getAsString();
    if (!S)
      return wrongType(Key, "a string", **V);
    Out = S->str();
    return Error::success();
  }

  Error readInt(StringRef Key, uint64_t Min, uint64_t &Out) {
    Expected<const json::Value *> V = get(Key);
    if (!V)
      return V.takeError();
    // getAsUINT64 takes only integer literals: "132.5" or "1e3" is a typo
    // or a unit mistake, not a count.
    std::optional<uint64_t> N = (*V)->getAsUINT64();
    if (!N || *N < Min)
      return wrongType(
          Key, Min ? "a positive integer" : "a non-negative integer", **V);
    Out = *N;
    return Error::success();
  }

  Error readPositiveNumber(StringRef Key, double &Out) {
    Expected<const json::Value *> V = get(Key);
    if (!V)
      return V.takeError();
    std::optional<double> D = (*V)->getAsNumber();
    if (!D || !std::isfinite(*D) || *D <= 0)
      return wrongType(Key, "a positive number", **V);
    Out = *D;
    return Error::success();
  }

private:
  const json::Object &Obj;
  StringRef FileName;
};

bool isArchName(StringRef Arch) {
  if (!Arch.consume_front("sm_"))
    return false;
  // sm_90a, sm_100f: arch-specific and family variants.
  if (Arch.ends_with("a") || Arch.ends_with("f"))
    Arch = Arch.drop_back();
  return !Arch.empty() && all_of(Arch, isDigit);
}

/// Figures that contradict each other mean a hand-edited or corrupt file;
/// the cost models would pick impossible configurations from them.
Error checkConsistent(const GpuSpec &S, StringRef FileName) {
  if (!isArchName(S.Arch))
    return specError(FileName, "key 'arch' must look like \"sm_90\", not \"" +
                                   S.Arch + "\"");
  if (S.Source != "measured" && S.Source != "datasheet")
    return specError(FileName,
                     "key 'source' must be \"measured\" or \"datasheet\", "
                     "not \"" +
                         S.Source + "\"");
  if (S.SharedMemoryPerBlock > S.SharedMemoryPerBlockOptin ||
      S.SharedMemoryPerBlockOptin > S.SharedMemoryPerSm)
    return specError(FileName, "expected shared_memory_per_block <= "
                               "shared_memory_per_block_optin <= "
                               "shared_memory_per_sm");
  if (S.MaxThreadsPerBlock > S.MaxThreadsPerSm ||
      S.MaxThreadsPerBlock % S.WarpSize != 0)
    return specError(FileName, "expected max_threads_per_block to be a "
                               "multiple of warp_size and at most "
                               "max_threads_per_sm");
  if (S.RegistersPerBlock > S.RegistersPerSm)
    return specError(FileName,
                     "expected registers_per_block <= registers_per_sm");
  return Error::success();
}

} // namespace

bool GpuSpec::operator==(const GpuSpec &Other) const {
  if (Name != Other.Name || Arch != Other.Arch || Source != Other.Source ||
      CopyBandwidthGBps != Other.CopyBandwidthGBps)
    return false;
  return all_of(IntFields, [&](const IntField &F) {
    return this->*F.Member == Other.*F.Member;
  });
}

SmallVector<StringRef, 4> builtinGpuArchs() {
  SmallVector<StringRef, 4> Archs;
  for (const BuiltinSpec &B : BuiltinSpecs)
    Archs.push_back(B.Arch);
  return Archs;
}

Expected<GpuSpec> getBuiltinGpuSpec(StringRef Arch) {
  // sm_90a only adds instructions to sm_90: the same chip, the same figures.
  StringRef Base = Arch;
  if (isArchName(Arch) && (Arch.ends_with("a") || Arch.ends_with("f")))
    Base = Arch.drop_back();
  for (const BuiltinSpec &B : BuiltinSpecs) {
    if (B.Arch != Base)
      continue;
    GpuSpec S = B.Make();
    S.Arch = Arch.str();
    return S;
  }
  return createStringError(
      inconvertibleErrorCode(),
      "unknown GPU architecture '" + Arch +
          "'; built-in specs: " + join(builtinGpuArchs(), ", ") +
          "; for another GPU, run cuda-rewrite-probe on it and pass "
          "--gpu-spec=<file.json>");
}

Expected<GpuSpec> parseGpuSpec(StringRef JSONText, StringRef FileName) {
  Expected<json::Value> Root = json::parse(JSONText);
  if (!Root)
    return specError(FileName, "invalid JSON: " + toString(Root.takeError()));
  const json::Object *Obj = Root->getAsObject();
  if (!Obj)
    return specError(FileName,
                     "expected a JSON object, not " + describe(*Root));

  FieldReader R(*Obj, FileName);
  // The version first: a future schema may have renamed the other keys, and
  // "unsupported version" is the helpful message then.
  uint64_t Version = 0;
  if (Error E = R.readInt("schema_version", 1, Version))
    return E;
  if (Version != uint64_t(GpuSpecSchemaVersion))
    return specError(FileName, "unsupported schema_version " + Twine(Version) +
                                   " (this cuda-rewrite "
                                   "reads version " +
                                   Twine(GpuSpecSchemaVersion) + ")");

  GpuSpec S;
  if (Error E = R.readString("name", S.Name))
    return E;
  if (Error E = R.readString("arch", S.Arch))
    return E;
  if (Error E = R.readString("source", S.Source))
    return E;
  for (const IntField &F : IntFields)
    if (Error E = R.readInt(F.Key, F.Min, S.*F.Member))
      return E;
  if (Error E =
          R.readPositiveNumber("copy_bandwidth_gbps", S.CopyBandwidthGBps))
    return E;
  if (Error E = checkConsistent(S, FileName))
    return E;
  return S;
}

Expected<GpuSpec> loadGpuSpecFile(StringRef Path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buffer =
      MemoryBuffer::getFile(Path, /*IsText=*/true);
  if (!Buffer)
    return specError(Path, "cannot read: " + Buffer.getError().message());
  return parseGpuSpec((*Buffer)->getBuffer(), Path);
}

Expected<GpuSpec> selectGpuSpec(StringRef Arch, StringRef SpecFile) {
  if (!SpecFile.empty())
    return loadGpuSpecFile(SpecFile);
  return getBuiltinGpuSpec(Arch);
}

void writeGpuSpec(raw_ostream &OS, const GpuSpec &Spec) {
  // json::OStream keeps our key order (json::Object would sort the keys),
  // so the file reads like the schema comment.
  json::OStream J(OS, /*IndentSize=*/2);
  J.object([&] {
    J.attribute("schema_version", GpuSpecSchemaVersion);
    J.attribute("name", Spec.Name);
    J.attribute("arch", Spec.Arch);
    J.attribute("source", Spec.Source);
    for (const IntField &F : IntFields)
      J.attribute(F.Key, Spec.*F.Member);
    J.attribute("copy_bandwidth_gbps", Spec.CopyBandwidthGBps);
  });
  OS << "\n";
}

std::string gpuSpecToJSON(const GpuSpec &Spec) {
  std::string Text;
  raw_string_ostream OS(Text);
  writeGpuSpec(OS, Spec);
  return Text;
}

} // namespace cuda_rewrite
