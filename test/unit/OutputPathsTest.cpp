//===- OutputPathsTest.cpp - Where outputs land, and how they are written -===//
//
// outputDirPath must keep every --output-dir file strictly below the
// directory; writeFilesAtomically must refuse links, keep modes, and write
// all files or none.
//
//===----------------------------------------------------------------------===//

#include "tool/Output.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"
#include <algorithm>
#ifdef LLVM_ON_UNIX
#include <csignal>
#include <sys/resource.h>
#endif

using namespace cuda_rewrite;
using namespace llvm;

namespace {

TEST(OutputPaths, RelativePathsAreKept) {
  EXPECT_EQ(outputDirPath("out", "a.cu"), "out/a.cu");
  EXPECT_EQ(outputDirPath("out", "src/a.cu"), "out/src/a.cu");
  EXPECT_EQ(outputDirPath("out/", "src/a.cu"), "out/src/a.cu");
  EXPECT_EQ(outputDirPath("../out", "src/a.cu"), "../out/src/a.cu");
}

TEST(OutputPaths, DotsAreResolvedLexically) {
  EXPECT_EQ(outputDirPath("out", "./src/./a.cu"), "out/src/a.cu");
  EXPECT_EQ(outputDirPath("out", "src//a.cu"), "out/src/a.cu");
  EXPECT_EQ(outputDirPath("out", "src/x/../a.cu"), "out/src/a.cu");
  EXPECT_EQ(outputDirPath("out", "a/b/../../c/a.cu"), "out/c/a.cu");
}

// The bug this guards: only a leading `..` was caught, so a/../../x.cu was
// written to out/a/../../x.cu, beside out.
TEST(OutputPaths, PathsLeavingTheCurrentDirectoryKeepTheirName) {
  EXPECT_EQ(outputDirPath("out", "../x/a.cu"), "out/a.cu");
  EXPECT_EQ(outputDirPath("out", "a/../../x.cu"), "out/x.cu");
  EXPECT_EQ(outputDirPath("out", "a/../b/../../../y/x.cu"), "out/x.cu");
  EXPECT_EQ(outputDirPath("out", "./../x.cu"), "out/x.cu");
}

TEST(OutputPaths, AbsolutePathsKeepTheirName) {
  EXPECT_EQ(outputDirPath("out", "/abs/a.cu"), "out/a.cu");
  EXPECT_EQ(outputDirPath("out", "/abs/../a.cu"), "out/a.cu");
  EXPECT_EQ(outputDirPath("/o", "/abs/a.cu"), "/o/a.cu");
}

// A directory whose name merely starts with two dots is no parent.
TEST(OutputPaths, DotDotPrefixedNamesAreOrdinary) {
  EXPECT_EQ(outputDirPath("out", "..src/a.cu"), "out/..src/a.cu");
  EXPECT_EQ(outputDirPath("out", "...cu"), "out/...cu");
}

TEST(OutputPaths, NamesOfNoFileGiveNoPath) {
  EXPECT_EQ(outputDirPath("out", ".."), "");
  EXPECT_EQ(outputDirPath("out", "a/.."), "");
  EXPECT_EQ(outputDirPath("out", "a/../.."), "");
  EXPECT_EQ(outputDirPath("out", "/"), "");
  EXPECT_EQ(outputDirPath("out", "."), "");
}

/// A fresh directory, removed with everything in it at the end.
class OutputFiles : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(sys::fs::createUniqueDirectory("output-paths", Root));
  }
  void TearDown() override { sys::fs::remove_directories(Root); }

  std::string path(StringRef Relative) const {
    SmallString<256> P(Root);
    sys::path::append(P, Relative);
    return std::string(P);
  }
  void write(StringRef Relative, StringRef Text) {
    std::error_code EC;
    raw_fd_ostream OS(path(Relative), EC);
    ASSERT_FALSE(EC);
    OS << Text;
  }
  std::string read(StringRef Relative) const {
    auto Buffer = MemoryBuffer::getFile(path(Relative));
    return Buffer ? (*Buffer)->getBuffer().str() : "<missing>";
  }
  unsigned mode(StringRef Relative) const {
    sys::fs::file_status Status;
    EXPECT_FALSE(sys::fs::status(path(Relative), Status));
    return Status.permissions();
  }
  /// Every entry of the tree, so that a leftover temporary file shows.
  std::vector<std::string> entries() const {
    std::vector<std::string> Names;
    std::error_code EC;
    for (sys::fs::recursive_directory_iterator I(Root, EC), E; I != E && !EC;
         I.increment(EC))
      Names.push_back(I->path().substr(Root.size() + 1));
    std::sort(Names.begin(), Names.end());
    return Names;
  }

  SmallString<256> Root;
};

std::string errorOf(Error E) { return E ? toString(std::move(E)) : ""; }

TEST_F(OutputFiles, ReplacesKeepingTheMode) {
  write("a.cu", "old");
  ASSERT_FALSE(sys::fs::setPermissions(path("a.cu"), sys::fs::perms(0750)));
  EXPECT_EQ(errorOf(writeFilesAtomically({{path("a.cu"), "new", "", ""}},
                                         /*FollowSymlinks=*/false)),
            "");
  EXPECT_EQ(read("a.cu"), "new");
  EXPECT_EQ(mode("a.cu"), 0750u);
  EXPECT_EQ(entries(), std::vector<std::string>{"a.cu"});
}

TEST_F(OutputFiles, NewFileTakesTheInputsModeLessTheUmask) {
  write("in.cu", "in");
  ASSERT_FALSE(sys::fs::setPermissions(path("in.cu"), sys::fs::perms(0600)));
  EXPECT_EQ(errorOf(writeFilesAtomically(
                {{path("new/out.cu"), "out", path("in.cu"), ""}}, false)),
            "");
  EXPECT_EQ(read("new/out.cu"), "out");
  EXPECT_EQ(mode("new/out.cu"), 0600u & ~sys::fs::getUmask());
}

TEST_F(OutputFiles, LinksAreRefusedUnlessFollowed) {
  write("target.cu", "old");
  ASSERT_FALSE(sys::fs::create_link("target.cu", path("link.cu")));
  FileWrite W{path("link.cu"), "new", "", ""};
  EXPECT_EQ(errorOf(writeFilesAtomically({W}, false)),
            "refusing to write '" + path("link.cu") +
                "': it is a symbolic link; pass --follow-symlinks to write "
                "through it");
  EXPECT_EQ(read("target.cu"), "old");
  EXPECT_EQ(errorOf(writeFilesAtomically({W}, true)), "");
  EXPECT_EQ(read("target.cu"), "new");
  EXPECT_TRUE(sys::fs::is_symlink_file(path("link.cu")));
}

TEST_F(OutputFiles, DanglingLinksAreRefusedEvenWhenFollowed) {
  ASSERT_FALSE(sys::fs::create_link("missing.cu", path("link.cu")));
  EXPECT_EQ(errorOf(writeFilesAtomically({{path("link.cu"), "new", "", ""}},
                                         /*FollowSymlinks=*/true)),
            "cannot write '" + path("link.cu") +
                "': it is a symbolic link to no file (No such file or "
                "directory)");
  EXPECT_EQ(entries(), std::vector<std::string>{"link.cu"});
}

TEST_F(OutputFiles, LinkedDirectoriesInsideTheOutputDirAreRefused) {
  ASSERT_FALSE(sys::fs::create_directories(path("elsewhere")));
  ASSERT_FALSE(sys::fs::create_directories(path("out")));
  ASSERT_FALSE(sys::fs::create_link(path("elsewhere"), path("out/src")));
  FileWrite W{outputDirPath(path("out"), "src/a.cu"), "new", "", path("out")};
  EXPECT_EQ(errorOf(writeFilesAtomically({W}, false)),
            "refusing to write '" + path("out/src/a.cu") + "': '" +
                path("out/src") + "' is a symbolic link inside --output-dir '" +
                path("out") + "'; pass --follow-symlinks to write through it");
  EXPECT_EQ(read("elsewhere/a.cu"), "<missing>");
  EXPECT_EQ(errorOf(writeFilesAtomically({W}, true)), "");
  EXPECT_EQ(read("elsewhere/a.cu"), "new");
}

// One bad output stops all: the first file is not replaced, and no
// temporary file stays behind.
TEST_F(OutputFiles, OneRefusalWritesNothing) {
  write("a.cu", "old");
  write("file", "");
  EXPECT_EQ(errorOf(writeFilesAtomically({{path("a.cu"), "new", "", ""},
                                          {path("file/b.cu"), "new", "", ""}},
                                         false)),
            "cannot write '" + path("file/b.cu") + "': '" + path("file") +
                "' is not a directory");
  EXPECT_EQ(read("a.cu"), "old");
  EXPECT_EQ(entries(), (std::vector<std::string>{"a.cu", "file"}));
}

TEST_F(OutputFiles, DirectoriesAndDuplicatesAreRefused) {
  ASSERT_FALSE(sys::fs::create_directories(path("dir")));
  EXPECT_EQ(errorOf(writeFilesAtomically({{path("dir"), "x", "", ""}}, false)),
            "cannot write '" + path("dir") + "': it is a directory");
  EXPECT_EQ(errorOf(writeFilesAtomically({{path("a.cu"), "x", "", ""},
                                          {path("dir/../a.cu"), "y", "", ""}},
                                         false)),
            "two outputs would write '" + path("dir/../a.cu") + "'");
  EXPECT_EQ(read("a.cu"), "<missing>");
}

// out/a.cu as a file and out/a.cu/fixes.yaml below it cannot both be
// written; found before anything is, not at the second rename.
TEST_F(OutputFiles, AnOutputBelowAnotherIsRefused) {
  EXPECT_EQ(
      errorOf(writeFilesAtomically({{path("out/a.cu/fixes.yaml"), "y", "", ""},
                                    {path("out/b.cu"), "b", "", ""},
                                    {path("out/a.cu"), "a", "", ""}},
                                   false)),
      "cannot write '" + path("out/a.cu/fixes.yaml") + "': '" +
          path("out/a.cu") +
          "', a directory on its path, is another "
          "output");
  EXPECT_EQ(entries(), std::vector<std::string>{});
  // x.cu sorts between x and x/y.cu.
  EXPECT_NE(errorOf(writeFilesAtomically({{path("x"), "x", "", ""},
                                          {path("x.cu"), "x", "", ""},
                                          {path("x/y.cu"), "y", "", ""}},
                                         false)),
            "");
  EXPECT_EQ(entries(), std::vector<std::string>{});
  // A name that only starts like another output's is no conflict.
  EXPECT_EQ(errorOf(writeFilesAtomically({{path("out/a"), "a", "", ""},
                                          {path("out/a.cu"), "b", "", ""},
                                          {path("out/ab/c.cu"), "c", "", ""}},
                                         false)),
            "");
  EXPECT_EQ(read("out/ab/c.cu"), "c");
}

#ifdef LLVM_ON_UNIX
/// Runs \p Write with files limited to \p MaxBytes, so that writing a longer
/// one fails with EFBIG (SIGXFSZ ignored) after its directories were made.
template <typename Fn> Error withFileSizeLimit(rlim_t MaxBytes, Fn Write) {
  struct rlimit Old;
  EXPECT_EQ(getrlimit(RLIMIT_FSIZE, &Old), 0);
  struct rlimit Small = Old;
  Small.rlim_cur = MaxBytes;
  auto OldHandler = std::signal(SIGXFSZ, SIG_IGN);
  EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &Small), 0);
  Error E = Write();
  EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &Old), 0);
  std::signal(SIGXFSZ, OldHandler);
  return E;
}

// A write that fails after the checks (here: the file-size limit; in life a
// full disk) removes the directories it made, as well as its temporary files.
TEST_F(OutputFiles, AFailedWriteLeavesNoNewDirectoryBehind) {
  write("a.cu", "old");
  ASSERT_FALSE(sys::fs::create_directories(path("out")));
  std::string Error = errorOf(withFileSizeLimit(8, [&] {
    return writeFilesAtomically(
        {{path("out/new/deeper/b.cu"), "short", "", ""},
         {path("a.cu"), "longer than the limit", "", ""}},
        false);
  }));
  EXPECT_NE(Error.find("cannot write '" + path("a.cu") + "'"),
            std::string::npos)
      << Error;
  EXPECT_EQ(read("a.cu"), "old");
  // out existed before, so it stays.
  EXPECT_EQ(entries(), (std::vector<std::string>{"a.cu", "out"}));
}
#endif

} // namespace
