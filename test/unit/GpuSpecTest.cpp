//===- GpuSpecTest.cpp - Built-in GPU specs and the spec file format ------===//

#include "gpu/GpuSpec.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace cuda_rewrite;
using namespace llvm;

namespace {

/// The error message of \p E, or "" if it succeeded.
template <typename T> std::string errorOf(Expected<T> E) {
  if (E)
    return "";
  return toString(E.takeError());
}

/// The built-in H100 spec as JSON text, with \p Key's value replaced by
/// \p Value (verbatim JSON), or removed if \p Value is empty.
std::string h100JSONWith(StringRef Key, StringRef Value) {
  std::string Text = gpuSpecToJSON(cantFail(getBuiltinGpuSpec("sm_90")));
  std::string Needle = ("\"" + Key + "\": ").str();
  size_t Begin = Text.find(Needle);
  EXPECT_NE(Begin, std::string::npos) << Key.str();
  size_t End = Text.find_first_of(",\n", Begin + Needle.size());
  if (Value.empty()) {
    // Drop the whole line with its comma; for the last key, the comma that
    // ends the line before.
    size_t LineBegin = Text.rfind('\n', Begin);
    if (Text[End] == ',') {
      Text.erase(LineBegin, End + 1 - LineBegin);
    } else {
      Text.erase(LineBegin, End - LineBegin);
      Text.erase(LineBegin - 1, 1);
    }
  } else {
    Text.replace(Begin + Needle.size(), End - Begin - Needle.size(),
                 Value.str());
  }
  return Text;
}

TEST(GpuSpecTest, BuiltinH100) {
  Expected<GpuSpec> S = getBuiltinGpuSpec("sm_90");
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  EXPECT_EQ(S->Arch, "sm_90");
  EXPECT_EQ(S->Source, "datasheet");
  EXPECT_EQ(S->SmCount, 132u);
  EXPECT_EQ(S->RegistersPerSm, 65536u);
  EXPECT_EQ(S->SharedMemoryPerSm, 228u * 1024);
  EXPECT_EQ(S->SharedMemoryPerBlockOptin, 227u * 1024);
  EXPECT_EQ(S->L2CacheBytes, 50u * 1024 * 1024);
  EXPECT_NEAR(S->CopyBandwidthGBps, 3000, 1);
  // 3.35 TB/s HBM3 peak; the copy figure must stay below it.
  EXPECT_NEAR(S->peakMemoryBandwidthGBps(), 3352, 1);
  EXPECT_LT(S->CopyBandwidthGBps, S->peakMemoryBandwidthGBps());
  // 3 GB at 3000 GB/s: 1 ms.
  EXPECT_NEAR(S->minMillisecondsToMove(3000000000ull), 1.0, 1e-9);
}

TEST(GpuSpecTest, ArchVariantUsesBaseFigures) {
  Expected<GpuSpec> S = getBuiltinGpuSpec("sm_90a");
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  EXPECT_EQ(S->Arch, "sm_90a");
  EXPECT_EQ(S->SmCount, 132u);
}

TEST(GpuSpecTest, EveryBuiltinIsConsistent) {
  ASSERT_FALSE(builtinGpuArchs().empty());
  for (StringRef Arch : builtinGpuArchs()) {
    Expected<GpuSpec> S = getBuiltinGpuSpec(Arch);
    ASSERT_TRUE(bool(S)) << toString(S.takeError());
    // Going through the loader applies its consistency checks.
    Expected<GpuSpec> Back = parseGpuSpec(gpuSpecToJSON(*S), Arch);
    ASSERT_TRUE(bool(Back)) << toString(Back.takeError());
  }
}

TEST(GpuSpecTest, UnknownArchListsKnownOnes) {
  std::string Message = errorOf(getBuiltinGpuSpec("sm_75"));
  EXPECT_NE(Message.find("unknown GPU architecture 'sm_75'"), std::string::npos)
      << Message;
  for (StringRef Arch : builtinGpuArchs())
    EXPECT_NE(Message.find(Arch.str()), std::string::npos) << Message;
  EXPECT_NE(Message.find("--gpu-spec"), std::string::npos) << Message;
  EXPECT_NE(errorOf(getBuiltinGpuSpec("")), "");
  EXPECT_NE(errorOf(getBuiltinGpuSpec("sm_9x")), "");
}

TEST(GpuSpecTest, RoundTrip) {
  GpuSpec S = cantFail(getBuiltinGpuSpec("sm_90"));
  S.Name = "NVIDIA H200 \"test\"";
  S.Source = "measured";
  S.CopyBandwidthGBps = 4123.456789012345;
  std::string Text = gpuSpecToJSON(S);
  Expected<GpuSpec> Back = parseGpuSpec(Text, "roundtrip.json");
  ASSERT_TRUE(bool(Back)) << toString(Back.takeError());
  EXPECT_EQ(*Back, S);
  // Deterministic and in schema order.
  EXPECT_EQ(gpuSpecToJSON(*Back), Text);
  EXPECT_LT(Text.find("\"schema_version\""), Text.find("\"name\""));
  EXPECT_LT(Text.find("\"sm_count\""), Text.find("\"copy_bandwidth_gbps\""));
}

TEST(GpuSpecTest, LoadsFileAndSelects) {
  SmallString<128> Path;
  ASSERT_FALSE(sys::fs::createTemporaryFile("gpuspec", "json", Path));
  GpuSpec S = cantFail(getBuiltinGpuSpec("sm_90"));
  S.SmCount = 114; // An H100 PCIe.
  S.Source = "measured";
  {
    std::error_code EC;
    raw_fd_ostream OS(Path, EC);
    ASSERT_FALSE(EC);
    writeGpuSpec(OS, S);
  }
  Expected<GpuSpec> Loaded = loadGpuSpecFile(Path);
  ASSERT_TRUE(bool(Loaded)) << toString(Loaded.takeError());
  EXPECT_EQ(*Loaded, S);
  // The file wins over --gpu; without one, --gpu decides.
  EXPECT_EQ(cantFail(selectGpuSpec("sm_80", Path)).SmCount, 114u);
  EXPECT_EQ(cantFail(selectGpuSpec("sm_90", "")).SmCount, 132u);
  sys::fs::remove(Path);

  std::string Message = errorOf(loadGpuSpecFile(Path));
  EXPECT_NE(Message.find(Path.str().str()), std::string::npos) << Message;
  EXPECT_NE(Message.find("cannot read"), std::string::npos) << Message;
}

TEST(GpuSpecTest, MalformedJSON) {
  std::string Message =
      errorOf(parseGpuSpec("{\"sm_count\": 132,", "bad.json"));
  EXPECT_NE(Message.find("gpu spec 'bad.json'"), std::string::npos) << Message;
  EXPECT_NE(Message.find("invalid JSON"), std::string::npos) << Message;

  Message = errorOf(parseGpuSpec("[1, 2]", "array.json"));
  EXPECT_NE(Message.find("expected a JSON object"), std::string::npos)
      << Message;
}

TEST(GpuSpecTest, MissingKey) {
  std::string Message =
      errorOf(parseGpuSpec(h100JSONWith("l2_cache_bytes", ""), "f.json"));
  EXPECT_NE(Message.find("gpu spec 'f.json'"), std::string::npos) << Message;
  EXPECT_NE(Message.find("missing key 'l2_cache_bytes'"), std::string::npos)
      << Message;

  Message =
      errorOf(parseGpuSpec(h100JSONWith("copy_bandwidth_gbps", ""), "f.json"));
  EXPECT_NE(Message.find("missing key 'copy_bandwidth_gbps'"),
            std::string::npos)
      << Message;
}

TEST(GpuSpecTest, WrongType) {
  std::string Message =
      errorOf(parseGpuSpec(h100JSONWith("sm_count", "\"132\""), "f.json"));
  EXPECT_NE(Message.find("key 'sm_count' must be a positive integer, not the "
                         "string \"132\""),
            std::string::npos)
      << Message;

  // Counts are integers: a fraction or a negative number is a mistake.
  EXPECT_NE(errorOf(parseGpuSpec(h100JSONWith("sm_count", "132.5"), "f")), "");
  EXPECT_NE(errorOf(parseGpuSpec(h100JSONWith("warp_size", "-32"), "f")), "");
  EXPECT_NE(errorOf(parseGpuSpec(h100JSONWith("sm_count", "0"), "f")), "");
  // Zero is fine where the schema allows it.
  EXPECT_EQ(errorOf(parseGpuSpec(
                h100JSONWith("shared_memory_reserved_per_block", "0"), "f")),
            "");

  Message = errorOf(parseGpuSpec(h100JSONWith("name", "7"), "f.json"));
  EXPECT_NE(Message.find("key 'name' must be a string, not the number 7"),
            std::string::npos)
      << Message;

  Message = errorOf(
      parseGpuSpec(h100JSONWith("copy_bandwidth_gbps", "null"), "f.json"));
  EXPECT_NE(Message.find("key 'copy_bandwidth_gbps' must be a positive "
                         "number, not null"),
            std::string::npos)
      << Message;
}

TEST(GpuSpecTest, BadValues) {
  std::string Message =
      errorOf(parseGpuSpec(h100JSONWith("schema_version", "2"), "f.json"));
  EXPECT_NE(Message.find("unsupported schema_version 2"), std::string::npos)
      << Message;

  Message = errorOf(parseGpuSpec(h100JSONWith("arch", "\"hopper\""), "f"));
  EXPECT_NE(Message.find("key 'arch'"), std::string::npos) << Message;

  Message = errorOf(parseGpuSpec(h100JSONWith("source", "\"guess\""), "f"));
  EXPECT_NE(Message.find("key 'source'"), std::string::npos) << Message;

  Message = errorOf(parseGpuSpec(
      h100JSONWith("shared_memory_per_block_optin", "999999999"), "f"));
  EXPECT_NE(Message.find("shared_memory_per_sm"), std::string::npos) << Message;
}

TEST(GpuSpecTest, IgnoresUnknownKeys) {
  std::string Text = h100JSONWith("name", "\"X\", \"pcie_gen\": 5");
  Expected<GpuSpec> S = parseGpuSpec(Text, "f.json");
  ASSERT_TRUE(bool(S)) << toString(S.takeError());
  EXPECT_EQ(S->Name, "X");
}

} // namespace
