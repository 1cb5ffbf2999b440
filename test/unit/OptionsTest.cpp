#include "tool/Options.h"
#include "tool/Output.h"
#include "gtest/gtest.h"

using namespace cuda_rewrite;

namespace {

ToolOptions withSources(std::vector<std::string> Sources) {
  ToolOptions Opts;
  Opts.Sources = std::move(Sources);
  return Opts;
}

std::string errorOf(ToolOptions &Opts) {
  llvm::Error E = validateOptions(Opts);
  return E ? llvm::toString(std::move(E)) : "";
}

std::string errorOf(ToolOptions &&Opts) { return errorOf(Opts); }

} // namespace

TEST(Options, OneInputToStdoutIsFine) {
  EXPECT_EQ(errorOf(withSources({"a.cu"})), "");
}

TEST(Options, NoInputIsAUsageError) {
  EXPECT_EQ(errorOf(withSources({})),
            "no input files (give <file.cu>... or -p <build dir>)");
}

TEST(Options, SeveralInputsNeedAnOutputMode) {
  EXPECT_NE(errorOf(withSources({"a.cu", "b.cu"})), "");
  ToolOptions Opts = withSources({"a.cu", "b.cu"});
  Opts.OutputDir = "out";
  EXPECT_EQ(errorOf(Opts), "");
  Opts = withSources({"a.cu", "b.cu"});
  Opts.OutputFile = "x.cu";
  EXPECT_EQ(errorOf(Opts), "-o needs exactly one input file; use "
                           "--output-dir or -i for several");
}

TEST(Options, ConflictingOutputModes) {
  ToolOptions Opts = withSources({"a.cu"});
  Opts.InPlace = true;
  Opts.OutputFile = "x.cu";
  EXPECT_EQ(errorOf(Opts), "-i cannot be combined with -o or --output-dir");
  Opts = withSources({"a.cu"});
  Opts.List = true;
  Opts.Diff = true;
  EXPECT_NE(errorOf(Opts).find("--list rewrites nothing"), std::string::npos);
}

TEST(Options, DuplicateInput) {
  EXPECT_EQ(errorOf(withSources({"a.cu", "a.cu"})),
            "input file 'a.cu' is given twice");
}

TEST(Options, PassSelection) {
  ToolOptions Opts = withSources({"a.cu"});
  Opts.Only = "aggregate,systolic";
  Opts.Disable = "systolic";
  ASSERT_EQ(errorOf(Opts), "");
  EXPECT_TRUE(Opts.Passes.contains("aggregate"));
  EXPECT_FALSE(Opts.Passes.contains("systolic"));
  EXPECT_FALSE(Opts.Passes.contains("fuse"));

  Opts = withSources({"a.cu"});
  Opts.Disable = "pipeline";
  ASSERT_EQ(errorOf(Opts), "");
  EXPECT_TRUE(Opts.Passes.contains("fuse"));
  EXPECT_FALSE(Opts.Passes.contains("pipeline"));
}

TEST(Options, UnknownPassListsValidOnes) {
  ToolOptions Opts = withSources({"a.cu"});
  Opts.Only = "aggregate,,fuse";
  EXPECT_EQ(errorOf(Opts), "unknown pass ''; valid passes: aggregate, "
                           "promote, systolic, fuse, pipeline");
}

TEST(Options, GpuMustBeAnArch) {
  ToolOptions Opts = withSources({"a.cu"});
  Opts.Gpu = "hopper";
  EXPECT_EQ(errorOf(Opts),
            "--gpu takes an architecture such as sm_90, not 'hopper'");
}

TEST(Output, OutputDirKeepsRelativePaths) {
  EXPECT_EQ(outputDirPath("out", "src/a.cu"), "out/src/a.cu");
  EXPECT_EQ(outputDirPath("out", "./src/./a.cu"), "out/src/a.cu");
  EXPECT_EQ(outputDirPath("out", "../x/a.cu"), "out/a.cu");
  EXPECT_EQ(outputDirPath("out", "/abs/a.cu"), "out/a.cu");
}
