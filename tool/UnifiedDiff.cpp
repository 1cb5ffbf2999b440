//===- UnifiedDiff.cpp - --diff output ------------------------------------===//
//
// Myers' O(ND) shortest edit script over lines. The rewritten file differs
// from its input in a few places, so the common prefix and suffix are
// trimmed first and D stays small.
//
//===----------------------------------------------------------------------===//

#include "tool/UnifiedDiff.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <vector>

using namespace llvm;

namespace cuda_rewrite {

namespace {

constexpr unsigned Context = 3;

/// Lines with their terminators, so that a missing final newline is seen.
std::vector<StringRef> splitLines(StringRef Text) {
  std::vector<StringRef> Lines;
  while (!Text.empty()) {
    size_t End = Text.find('\n');
    End = End == StringRef::npos ? Text.size() : End + 1;
    Lines.push_back(Text.take_front(End));
    Text = Text.drop_front(End);
  }
  return Lines;
}

enum class Op { Keep, Delete, Insert };

/// The edit script turning A into B, one Op per line.
std::vector<Op> shortestEditScript(ArrayRef<StringRef> A,
                                   ArrayRef<StringRef> B) {
  const int N = A.size(), M = B.size(), Max = N + M;
  std::vector<int> V(2 * Max + 2, 0);
  std::vector<std::vector<int>> Trace;
  int FinalD = 0;
  for (int D = 0; D <= Max; ++D) {
    Trace.push_back(V);
    bool Done = false;
    for (int K = -D; K <= D; K += 2) {
      int X = (K == -D || (K != D && V[Max + K - 1] < V[Max + K + 1]))
                  ? V[Max + K + 1]
                  : V[Max + K - 1] + 1;
      int Y = X - K;
      while (X < N && Y < M && A[X] == B[Y])
        ++X, ++Y;
      V[Max + K] = X;
      if (X >= N && Y >= M) {
        Done = true;
        break;
      }
    }
    if (Done) {
      FinalD = D;
      break;
    }
  }
  // Walk the trace backwards to recover the path.
  std::vector<Op> Script;
  int X = N, Y = M;
  for (int D = FinalD; D > 0; --D) {
    const std::vector<int> &Prev = Trace[D];
    int K = X - Y;
    bool Down = K == -D || (K != D && Prev[Max + K - 1] < Prev[Max + K + 1]);
    int PrevK = Down ? K + 1 : K - 1;
    int PrevX = Prev[Max + PrevK], PrevY = PrevX - PrevK;
    while (X > PrevX && Y > PrevY)
      Script.push_back(Op::Keep), --X, --Y;
    Script.push_back(Down ? Op::Insert : Op::Delete);
    X = PrevX, Y = PrevY;
  }
  while (X > 0 && Y > 0)
    Script.push_back(Op::Keep), --X, --Y;
  std::reverse(Script.begin(), Script.end());
  return Script;
}

void printLine(raw_ostream &OS, char Prefix, StringRef Line) {
  OS << Prefix << Line;
  if (!Line.ends_with("\n"))
    OS << "\n\\ No newline at end of file\n";
}

} // namespace

std::string unifiedDiff(StringRef Path, StringRef Before, StringRef After) {
  if (Before == After)
    return "";
  std::vector<StringRef> A = splitLines(Before), B = splitLines(After);
  size_t Prefix = 0;
  while (Prefix < A.size() && Prefix < B.size() && A[Prefix] == B[Prefix])
    ++Prefix;
  size_t Suffix = 0;
  while (Suffix < A.size() - Prefix && Suffix < B.size() - Prefix &&
         A[A.size() - 1 - Suffix] == B[B.size() - 1 - Suffix])
    ++Suffix;

  std::vector<Op> Script(Prefix, Op::Keep);
  std::vector<Op> Middle =
      shortestEditScript(ArrayRef(A).slice(Prefix, A.size() - Prefix - Suffix),
                         ArrayRef(B).slice(Prefix, B.size() - Prefix - Suffix));
  Script.insert(Script.end(), Middle.begin(), Middle.end());
  Script.insert(Script.end(), Suffix, Op::Keep);

  std::string Out;
  raw_string_ostream OS(Out);
  OS << "--- " << Path << "\n+++ " << Path << "\n";
  // Group changes whose context overlaps into hunks.
  size_t I = 0;
  while (I < Script.size()) {
    while (I < Script.size() && Script[I] == Op::Keep)
      ++I;
    if (I == Script.size())
      break;
    size_t Start = I >= Context ? I - Context : 0;
    size_t End = I, KeepRun = 0;
    for (size_t J = I; J < Script.size(); ++J) {
      if (Script[J] == Op::Keep) {
        if (++KeepRun > 2 * Context)
          break;
      } else {
        KeepRun = 0;
        End = J + 1;
      }
    }
    End = std::min(Script.size(), End + Context);

    // Line numbers where the hunk starts in A and B.
    size_t LineA = 0, LineB = 0;
    for (size_t J = 0; J < Start; ++J) {
      if (Script[J] != Op::Insert)
        ++LineA;
      if (Script[J] != Op::Delete)
        ++LineB;
    }
    size_t CountA = 0, CountB = 0;
    for (size_t J = Start; J < End; ++J) {
      CountA += Script[J] != Op::Insert;
      CountB += Script[J] != Op::Delete;
    }
    OS << "@@ -" << (CountA ? LineA + 1 : LineA) << "," << CountA << " +"
       << (CountB ? LineB + 1 : LineB) << "," << CountB << " @@\n";
    for (size_t J = Start, IA = LineA, IB = LineB; J < End; ++J) {
      switch (Script[J]) {
      case Op::Keep:
        printLine(OS, ' ', A[IA++]);
        ++IB;
        break;
      case Op::Delete:
        printLine(OS, '-', A[IA++]);
        break;
      case Op::Insert:
        printLine(OS, '+', B[IB++]);
        break;
      }
    }
    I = End;
  }
  return Out;
}

} // namespace cuda_rewrite
