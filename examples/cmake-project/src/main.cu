// Expands a ragged array: row R owns the slots [Offsets[R], Offsets[R + 1])
// of Out, and each parent thread launches a child grid that fills its row's
// slots with the row number. One small launch per thread is slow as plain
// dynamic parallelism; the pragma asks cuda-rewrite to aggregate the launches.
#include "util.cuh"

#include <vector>

namespace {

constexpr int NumRows = 1000; // Below the 2048 pending-launch limit.
constexpr int ChildBlock = 32;
constexpr int ParentBlock = 128;

/// Number of slots of row \p Row: 1 to 70, so that some children need more
/// than one block.
int rowLength(int Row) { return 1 + (Row * 37) % 70; }

} // namespace

__global__ void fillRow(int *Out, int Begin, int Count, int Value) {
  int I = blockIdx.x * blockDim.x + threadIdx.x;
  if (I < Count)
    Out[Begin + I] = Value;
}

__global__ void expandRows(int *Out, const int *Offsets, int NumRows) {
  int Row = blockIdx.x * blockDim.x + threadIdx.x;
  if (Row >= NumRows)
    return;
  int Begin = Offsets[Row];
  int Count = Offsets[Row + 1] - Begin;
#pragma cuda_rewrite aggregate
  fillRow<<<ceilDiv(Count, ChildBlock), ChildBlock>>>(Out, Begin, Count, Row);
}

int main() {
  std::vector<int> Offsets(NumRows + 1, 0);
  for (int Row = 0; Row < NumRows; ++Row)
    Offsets[Row + 1] = Offsets[Row] + rowLength(Row);
  int Total = Offsets[NumRows];

  int *DevOut = nullptr;
  int *DevOffsets = nullptr;
  CHECK_CUDA(cudaMalloc(&DevOut, Total * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&DevOffsets, Offsets.size() * sizeof(int)));
  // Poisoned, so that a slot no child wrote is caught.
  CHECK_CUDA(cudaMemset(DevOut, 0xff, Total * sizeof(int)));
  CHECK_CUDA(cudaMemcpy(DevOffsets, Offsets.data(),
                        Offsets.size() * sizeof(int), cudaMemcpyHostToDevice));

  expandRows<<<ceilDiv(NumRows, ParentBlock), ParentBlock>>>(DevOut, DevOffsets,
                                                            NumRows);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());

  std::vector<int> Out(Total);
  CHECK_CUDA(cudaMemcpy(Out.data(), DevOut, Total * sizeof(int),
                        cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(DevOut));
  CHECK_CUDA(cudaFree(DevOffsets));

  int Errors = 0;
  for (int Row = 0; Row < NumRows; ++Row)
    for (int I = Offsets[Row]; I < Offsets[Row + 1]; ++I)
      if (Out[I] != Row && Errors++ < 5)
        std::fprintf(stderr, "Out[%d] = %d, expected %d\n", I, Out[I], Row);
  std::printf("%s: %d rows, %d slots, %d wrong\n", Errors ? "FAIL" : "PASS",
              NumRows, Total, Errors);
  return Errors ? 1 : 0;
}
