//===- padding.cu - In-place padding, a chain of one-block launches -------===//
//
// In-place padding (the `pd` benchmark of KLAP, Table I; Gomez-Luna et al.,
// "In-place data sliding algorithms for many-core architectures", ICPP
// 2015): a rows x cols matrix of ints, stored row after row, is given a
// pitch of cols + pad in the same buffer: element (r, c) moves from
// r * cols + c to r * (cols + pad) + c, and the pad elements after every row
// are set to 0. Typical use: rows of 4000 padded to 4096 for alignment.
//
// Elements move up (to higher addresses), so the work goes from the end of
// the matrix to its start: one block moves one chunk of kChunk = 8192
// elements (512 threads x 16; a chunk may hold parts of several rows) and
// then launches the block of the chunk below, a chain of
// ceil(rows * cols / kChunk) single-block grids (links). A chunk's elements
// land on its own and on those of the chunks above it, which earlier links
// must have read first: that is the dependence between the links, and why the
// chain is serial. Nothing is carried but the chunk number. Reading a chunk
// does not depend on the links before it (they write only above it), which is
// what `overlap_boundary` marks for promotion (docs/design.md section 3).
//
// The next link is launched into cudaStreamTailLaunch (CDP2, CUDA 12+), so
// it starts when the launching grid has finished and sees all it wrote:
// whatever the chain's length, one link runs and one launch is pending at a
// time. (A plain <<<>>> would let the child start while its parent still
// runs, and keep every link's grid open until the end of the chain.)
//
// Each run restores the unpadded input into the poisoned buffer first
// (untimed); the whole padded matrix is checked exactly.
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/promote/padding.cu -lcudadevrt -o padding
//   ./padding [rows [cols [pad]]] [--seed=N] [--reps=N]
//
//   small   ./padding 4           4 x 4000 ints, 2 links
//   medium  ./padding 51          51 x 4000 ints, 25 links
//   large   ./padding             8192 x 4000 ints (32.8M) to pitch 4096,
//                                 4000 links
//
//===----------------------------------------------------------------------===//

#include "chain.cuh"

/// One link: moves the elements of the chunk `chunk` (unpadded elements
/// chunk * kChunk onwards) of the rows x cols matrix in `matrix` to their
/// places at pitch cols + pad, after launching the link of the chunk below.
#pragma cuda_rewrite promote
__global__ void padChunk(int *matrix, int rows, int cols, int pad, int chunk) {
  const int n = rows * cols;
  const int pitch = cols + pad;
  const int begin = chunk * chain::kChunk;

  // Independent of the parent: read the chunk (the links before this one
  // only wrote above it).
  int items[chain::kItemsPerThread];
  for (int k = 0; k < chain::kItemsPerThread; ++k) {
    const int j = begin + k * chain::kBlock + threadIdx.x;
    if (j < n)
      items[k] = matrix[j];
  }

#pragma cuda_rewrite overlap_boundary
  // Depends on the parent: the writes below land on elements of this chunk
  // and of the chunks above it, which the links before this one have read;
  // every thread of this block must have read its own elements too.
  __syncthreads();
  if (threadIdx.x == 0 && chunk > 0) {
    padChunk<<<1, chain::kBlock, 0, cudaStreamTailLaunch>>>(matrix, rows, cols,
                                                            pad, chunk - 1);
    harness::checkDeviceLaunch(cudaGetLastError());
  }

  // Move every element to its padded place; the thread with the last
  // element of a row also zeroes the row's padding.
  for (int k = 0; k < chain::kItemsPerThread; ++k) {
    const int j = begin + k * chain::kBlock + threadIdx.x;
    if (j >= n)
      continue;
    const int row = j / cols;
    const int col = j % cols;
    matrix[row * pitch + col] = items[k];
    if (col == cols - 1)
      for (int c = cols; c < pitch; ++c)
        matrix[row * pitch + c] = 0;
  }
}

int main(int argc, char **argv) {
  harness::Args A = harness::parseArgs(argc, argv, "padding", {8192, 4000, 96});
  const chain::PaddedMatrix M = chain::paddedMatrix(A);
  const int N = M.elements();
  const int Links = chain::links(N);

  harness::Rng R(A.Seed);
  std::vector<int> In(N);
  R.fill(In, 0, INT_MAX);
  // CPU reference: the padded matrix.
  std::vector<int> Ref = chain::padded(In, M, 0);
  std::printf("padding: %d x %d ints to pitch %d; %d links of %d elements\n",
              M.Rows, M.Cols, M.Pitch, Links, chain::kChunk);

  harness::DeviceArray<int> DIn(In), DMatrix(Ref.size());
  harness::Result Res = harness::measure(
      A,
      [&] {
        // The whole buffer poisoned, then the unpadded input at its start.
        DMatrix.poison();
        HARNESS_CHECK(cudaMemcpyAsync(DMatrix.data(), DIn.data(), DIn.bytes(),
                                      cudaMemcpyDeviceToDevice));
      },
      [&] {
        padChunk<<<1, chain::kBlock>>>(DMatrix.data(), M.Rows, M.Cols, M.Pad,
                                       Links - 1);
      },
      [&] {
        harness::checkDeviceLaunches();
        return harness::compareExact(DMatrix.download(), Ref);
      });
  // The matrix read once, the padded matrix written once.
  double Bytes = sizeof(int) * (double(N) + double(Ref.size()));
  return harness::report(A, Res, Bytes);
}
