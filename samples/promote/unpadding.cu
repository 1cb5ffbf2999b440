//===- unpadding.cu - In-place unpadding, a chain of one-block launches ---===//
//
// In-place unpadding (the `upd` benchmark of KLAP, Table I; Gomez-Luna et
// al., "In-place data sliding algorithms for many-core architectures", ICPP
// 2015), the inverse of padding.cu: a rows x cols matrix of ints stored at a
// pitch of cols + pad is packed, in the same buffer, to pitch cols: element
// (r, c) moves from r * (cols + pad) + c to r * cols + c, and the pad
// elements are dropped. Typical use: rows of 4000 stored at pitch 4096.
//
// Elements move down (to lower addresses), so the work goes from the start
// of the matrix to its end: one block moves one chunk of kChunk = 8192
// elements of the packed matrix (512 threads x 16; a chunk may hold parts of
// several rows) and then launches the block of the next chunk, a chain of
// ceil(rows * cols / kChunk) single-block grids (links). A chunk's elements
// land on its own and on those of the chunks below it, which earlier links
// must have read first: that is the dependence between the links, and why the
// chain is serial. Nothing is carried but the chunk number. Reading a chunk
// does not depend on the links before it (they write only below it), which is
// what `overlap_boundary` marks for promotion (docs/design.md section 3).
//
// The next link is launched into cudaStreamTailLaunch (CDP2, CUDA 12+), so
// it starts when the launching grid has finished and sees all it wrote:
// whatever the chain's length, one link runs and one launch is pending at a
// time. (A plain <<<>>> would let the child start while its parent still
// runs, and keep every link's grid open until the end of the chain.)
//
// Each run restores the padded input (its pad elements -1) first, untimed;
// the packed matrix, the buffer's first rows * cols elements, is checked
// exactly (what is left after it is not looked at).
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/promote/unpadding.cu -lcudadevrt -o unpadding
//   ./unpadding [rows [cols [pad]]] [--seed=N] [--reps=N]
//
//   small   ./unpadding 4         4 x 4000 ints, 2 links
//   medium  ./unpadding 51        51 x 4000 ints, 25 links
//   large   ./unpadding           8192 x 4000 ints (32.8M) from pitch 4096,
//                                 4000 links
//
//===----------------------------------------------------------------------===//

#include "chain.cuh"

/// One link: moves the elements of the chunk `chunk` (packed elements
/// chunk * kChunk onwards) of the rows x cols matrix stored at pitch
/// cols + pad in `matrix` to their packed places, after launching the link
/// of the next chunk.
#pragma cuda_rewrite promote
__global__ void unpadChunk(int *matrix, int rows, int cols, int pad,
                           int chunk) {
  const int n = rows * cols;
  const int pitch = cols + pad;
  const int begin = chunk * chain::kChunk;

  // Independent of the parent: read the chunk from its padded places (the
  // links before this one only wrote below them).
  int items[chain::kItemsPerThread];
  for (int k = 0; k < chain::kItemsPerThread; ++k) {
    const int j = begin + k * chain::kBlock + threadIdx.x;
    if (j < n)
      items[k] = matrix[j / cols * pitch + j % cols];
  }

#pragma cuda_rewrite overlap_boundary
  // Depends on the parent: the writes below land on elements of this chunk
  // and of the chunks below it, which the links before this one have read;
  // every thread of this block must have read its own elements too.
  __syncthreads();
  if (threadIdx.x == 0 && n - begin > chain::kChunk) {
    unpadChunk<<<1, chain::kBlock, 0, cudaStreamTailLaunch>>>(
        matrix, rows, cols, pad, chunk + 1);
    harness::checkDeviceLaunch(cudaGetLastError());
  }

  // Move every element to its packed place.
  for (int k = 0; k < chain::kItemsPerThread; ++k) {
    const int j = begin + k * chain::kBlock + threadIdx.x;
    if (j < n)
      matrix[j] = items[k];
  }
}

int main(int argc, char **argv) {
  harness::Args A =
      harness::parseArgs(argc, argv, "unpadding", {8192, 4000, 96});
  const chain::PaddedMatrix M = chain::paddedMatrix(A);
  const int N = M.elements();
  const int Links = chain::links(N);

  // The padded input, -1 in its pad elements; the packed matrix is the
  // reference.
  harness::Rng R(A.Seed);
  std::vector<int> Ref(N);
  R.fill(Ref, 0, INT_MAX);
  std::vector<int> Padded = chain::padded(Ref, M, -1);
  std::printf("unpadding: %d x %d ints from pitch %d; %d links of %d "
              "elements\n",
              M.Rows, M.Cols, M.Pitch, Links, chain::kChunk);

  harness::DeviceArray<int> DPadded(Padded), DMatrix(Padded.size());
  harness::Result Res = harness::measure(
      A,
      [&] {
        // Nothing to poison: the whole buffer is input.
        HARNESS_CHECK(cudaMemcpyAsync(DMatrix.data(), DPadded.data(),
                                      DPadded.bytes(),
                                      cudaMemcpyDeviceToDevice));
      },
      [&] {
        unpadChunk<<<1, chain::kBlock>>>(DMatrix.data(), M.Rows, M.Cols, M.Pad,
                                         0);
      },
      [&] {
        harness::checkDeviceLaunches();
        std::vector<int> Got = DMatrix.download();
        Got.resize(N);
        return harness::compareExact(Got, Ref);
      });
  // The matrix read once and written once, without its padding.
  double Bytes = 2.0 * sizeof(int) * double(N);
  return harness::report(A, Res, Bytes);
}
