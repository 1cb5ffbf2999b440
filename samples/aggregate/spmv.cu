//===- spmv.cu - CSR sparse matrix-vector product, one child per row ------===//
//
// y = A x for a sparse matrix A in CSR form whose rows have very different
// lengths: most are short, a tenth are long, a few are empty. The parent
// kernel spmvCsr has one thread per row; a thread with a non-empty row
// launches spmvRow, one block of kRowThreads threads that multiplies the row's
// nonzeros with x and sums the products with a tree reduction in shared
// memory (which is why its block size is a compile-time constant). Empty rows
// are written by the parent itself.
//
// The reduction reassociates the sum, so y is checked by relative error
// against a float64 reference. Matrix and vector entries are positive, which
// keeps the sums free of cancellation and the float32 error near 1e-7.
//
// --flat runs the textbook CSR-vector kernel instead: one warp per row,
// reduced with shuffles.
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/aggregate/spmv.cu -lcudadevrt -o spmv
//   ./spmv [rows [long_row_max]] [--flat] [--seed=N] [--reps=N]
//
// Default: 65536 x 65536 with about 2.7M nonzeros (row lengths 1-32, a tenth
// up to 512, 2% empty): about 64k child launches in one spmvCsr call.
//
//===----------------------------------------------------------------------===//

#include "harness.cuh"

#include <climits>

namespace {

/// Threads of the one-block child grid that computes a row.
constexpr int kRowThreads = 64;
/// Threads per block of the parent grid: one thread per row.
constexpr int kParentThreads = 256;

/// A sparse matrix in CSR form: row r holds values[k] at column colIdx[k]
/// for k in [rowPtr[r], rowPtr[r + 1]).
struct CsrMatrix {
  int NumRows = 0, NumCols = 0;
  std::vector<int> RowPtr, ColIdx;
  std::vector<float> Values;
  long numNonzeros() const { return long(ColIdx.size()); }
};

} // namespace

/// Child: one block computes y[row], the dot product of the row's nonzeros
/// [begin, end) with x.
__global__ void spmvRow(const int *__restrict__ colIdx,
                        const float *__restrict__ values, int begin, int end,
                        const float *__restrict__ x, float *__restrict__ y,
                        int row) {
  __shared__ float partial[kRowThreads];
  float sum = 0.0f;
  for (int k = begin + threadIdx.x; k < end; k += blockDim.x)
    sum += values[k] * x[colIdx[k]];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = kRowThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    y[row] = partial[0];
}

/// Parent: one thread per row, which launches a child block for its row.
#pragma cuda_rewrite aggregate
__global__ void spmvCsr(int numRows, const int *__restrict__ rowPtr,
                        const int *__restrict__ colIdx,
                        const float *__restrict__ values,
                        const float *__restrict__ x, float *__restrict__ y) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < numRows) {
    int begin = rowPtr[row], end = rowPtr[row + 1];
    if (begin == end) {
      y[row] = 0.0f; // Nothing to launch for an empty row.
    } else {
      spmvRow<<<1, kRowThreads>>>(colIdx, values, begin, end, x, y, row);
      harness::checkDeviceLaunch(cudaGetLastError());
    }
  }
}

/// Flat version (CSR-vector): one warp per row, lanes stride over the row and
/// the partial sums are reduced with shuffles.
__global__ void spmvCsrFlat(int numRows, const int *__restrict__ rowPtr,
                            const int *__restrict__ colIdx,
                            const float *__restrict__ values,
                            const float *__restrict__ x,
                            float *__restrict__ y) {
  int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int lane = threadIdx.x % 32;
  if (row >= numRows)
    return;
  float sum = 0.0f;
  for (int k = rowPtr[row] + lane; k < rowPtr[row + 1]; k += 32)
    sum += values[k] * x[colIdx[k]];
  for (int offset = 16; offset > 0; offset /= 2)
    sum += __shfl_down_sync(0xffffffffu, sum, offset);
  if (lane == 0)
    y[row] = sum;
}

namespace {

/// Random matrix: 2% empty rows, 88% with 1-32 nonzeros, 10% with up to
/// LongRowMax; columns uniform (repeats allowed, as in an unassembled
/// matrix), values in [0, 1).
CsrMatrix makeMatrix(harness::Rng &R, int NumRows, int LongRowMax) {
  CsrMatrix M;
  M.NumRows = M.NumCols = NumRows;
  M.RowPtr.resize(NumRows + 1);
  M.RowPtr[0] = 0;
  for (int Row = 0; Row < NumRows; ++Row) {
    int Kind = int(R.next() % 100), Length;
    if (Kind < 2)
      Length = 0;
    else if (Kind < 90)
      Length = 1 + int(R.next() % 32);
    else
      Length = 33 + int(R.next() % uint64_t(std::max(LongRowMax - 32, 1)));
    M.RowPtr[Row + 1] = M.RowPtr[Row] + Length;
  }
  M.ColIdx.resize(M.RowPtr[NumRows]);
  M.Values.resize(M.RowPtr[NumRows]);
  for (int &Col : M.ColIdx)
    Col = int(R.next() % uint64_t(M.NumCols));
  R.fill(M.Values, 0.0f, 1.0f);
  return M;
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A =
      harness::parseArgs(argc, argv, "spmv", {65536, 512}, {"--flat"});
  const bool Flat = A.has("--flat");
  if (A.size(0) < 1 || A.size(0) >= INT_MAX / 32 || A.size(1) < 33 ||
      A.size(0) * A.size(1) >= INT_MAX)
    harness::fail("need 1 <= rows, 33 <= long_row_max and fewer than 2^31 "
                  "nonzeros");
  const int NumRows = int(A.size(0)), LongRowMax = int(A.size(1));

  harness::Rng R(A.Seed);
  CsrMatrix M = makeMatrix(R, NumRows, LongRowMax);
  std::vector<float> X(M.NumCols);
  R.fill(X, 0.0f, 1.0f);

  std::vector<double> Ref(NumRows, 0.0);
  long Launches = 0;
  for (int Row = 0; Row < NumRows; ++Row) {
    for (int K = M.RowPtr[Row]; K < M.RowPtr[Row + 1]; ++K)
      Ref[Row] += double(M.Values[K]) * X[M.ColIdx[K]];
    Launches += M.RowPtr[Row + 1] > M.RowPtr[Row];
  }
  std::printf("spmv: %d x %d, %ld nonzeros, %ld child launches in one spmvCsr "
              "call%s\n",
              M.NumRows, M.NumCols, M.numNonzeros(), Launches,
              Flat ? "; running the flat version" : "");

  // One launch per row, all of them possibly pending at once.
  if (!Flat)
    HARNESS_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount,
                                     std::max(NumRows, 2048)));

  harness::DeviceArray<int> DRowPtr(M.RowPtr), DColIdx(M.ColIdx);
  harness::DeviceArray<float> DValues(M.Values), DX(X), DY(NumRows);
  harness::Result Res = harness::measure(
      A, [&] { DY.poison(); },
      [&] {
        if (Flat) {
          long Threads = long(NumRows) * 32;
          spmvCsrFlat<<<(Threads + kParentThreads - 1) / kParentThreads,
                        kParentThreads>>>(NumRows, DRowPtr.data(),
                                          DColIdx.data(), DValues.data(),
                                          DX.data(), DY.data());
        } else {
          spmvCsr<<<(NumRows + kParentThreads - 1) / kParentThreads,
                    kParentThreads>>>(NumRows, DRowPtr.data(), DColIdx.data(),
                                      DValues.data(), DX.data(), DY.data());
        }
        HARNESS_CHECK(cudaGetLastError());
      },
      [&] {
        harness::checkDeviceLaunches();
        return harness::compareFloat(DY.download(), Ref);
      });
  // The matrix and x read once, y written once.
  double Bytes =
      sizeof(int) * (double(NumRows + 1) + double(M.numNonzeros())) +
      sizeof(float) * (double(M.numNonzeros()) + M.NumCols + NumRows);
  return harness::report(A, Res, Bytes);
}
