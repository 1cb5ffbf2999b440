//===- cfd.cu - Euler solver on an unstructured mesh, a loop of stages ----===//
//
// Solves the compressible Euler equations with Rodinia's euler3d scheme (the
// `CFD` benchmark of VersaPipe, Table 1 and Figure 15): a finite-volume
// method on an unstructured mesh of elements with 4 faces each, central
// fluxes with scalar smoothing, far-field and wall boundaries, and the
// 3-step Runge-Kutta update of euler3d (u_j+1 = u_0 + dt / (4 - j) * R(u_j)).
// The mesh is built from the seed: a square of side x side cells whose
// vertices are jittered (so every element has its own area and face
// normals), minus the cells of five thin plates along the flow (their faces
// are walls); the square's sides are far field. Elements are numbered 32x32
// cells at a time, in random order inside each block (a partitioned
// unstructured mesh): neighbours are mostly, not always, in the same chunk. The
// flow starts at Mach 1.2 (3 degrees angle of attack) with a few random density
// bumps.
//
// An item is a chunk of 1024 elements (VersaPipe found 1024 elements an item
// best) at one iteration (Chunk, 8 bytes). Every iteration runs three
// stages, all threads(32), lane r owning elements 32e + r of the chunk:
//
//   stepFactor (light: the local time step from the element's own state)
//     -> flux (heavy: 4 faces, each reading a neighbour's 5 variables and
//              its 3-component normal, about 300 flops; an element's 41
//              loads are in flight together, so it takes many registers)
//     -> timeStep (light: the Runge-Kutta update into the next buffer)
//     -> stepFactor of iteration k + 1, once its inputs are complete.
//
// flux reads neighbours, so iteration k + 1 of a chunk may start only when
// the chunks it reads have finished iteration k, and it may overwrite a
// buffer only when no chunk still reads it. Two ways, chosen on the command
// line, both with atomic counters:
//  - default (after Rodinia): a per-iteration counter; the last chunk to
//    finish timeStep of iteration k calls stepFactor for every chunk of
//    iteration k + 1 (a global barrier, as between Rodinia's kernels);
//  - --local: a per-iteration, per-chunk counter; a chunk finishing
//    iteration k counts itself into every chunk whose elements neighbour its
//    own (itself included), and the last of those calls stepFactor for it.
//    Chunks then run up to one iteration apart.
// State buffers: the initial state I and three buffers A, B, C. Iteration k
// (Runge-Kutta step j = k mod 3) reads its neighbours from cur(k) = I, A
// (j = 0), B (j = 1), C (j = 2), its own base u_0 from I (k < 3) or A, and
// writes next(k) = B, C, A. A chunk overwrites a buffer that its neighbours
// read one or more iterations before, never in the current one, and its own
// base A only in place. All three stages are threads(32) because a group of n
// threads calls a threads(n) stage together: timeStep's lanes agree (a
// shuffle or a ballot) on whether they are the last, then all call
// stepFactor.
//
// The CPU reference runs the same float operations per element, in the same
// order (the element functions are shared); the GPU contracts some multiply-
// adds into FMAs, so the final state is compared with a tolerance. It does
// not depend on the order in which items run.
//
// In the RTC original, iteration k + 1 runs inside the call of the item that
// finished iteration k: the call chain goes entry -> (stepFactor -> flux ->
// timeStep) x iterations, 28 frames at 9 iterations; main raises the device
// stack limit for that. By default the RTC original runs every iteration
// after the first in one warp (the barrier's last one): the serial loop that
// the other execution models spread over the GPU. (With --local it is hardly
// less serial: the warp that finishes a chunk's neighbourhood runs the chunk,
// and so becomes the last neighbour of the next ones.)
//
//   nvcc -O3 -arch=sm_90 -rdc=true -I samples/common -I runtime/include
//        samples/pipeline/cfd.cu -lcudadevrt -o cfd
//   ./cfd [side [iterations]] [--local] [--seed=N]
//
// Default: a 320x320 square (about 102k elements, 100 chunks), 9 iterations
// (3 Runge-Kutta steps of 3).
//
//===----------------------------------------------------------------------===//

#include "harness.cuh"

#include <algorithm>
#include <cmath>

/// Elements per item.
constexpr int kChunk = 1024;
constexpr int kPerLane = kChunk / 32;
/// Elements a lane of stepFactor and timeStep handles at once: their loads
/// are issued before their stores, which might alias them, so a lane waits
/// for memory once a batch, not once an element. That matters most in the
/// RTC original, where one warp runs whole iterations. (flux, with 41 loads
/// an element, does one at a time.)
constexpr int kBatch = 2;
/// Faces (neighbours) per element, conserved variables, space dimensions.
constexpr int kFaces = 4;
constexpr int kVars = 5;
constexpr int kDims = 3;
/// Variables: density, momentum x/y/z, density * energy (euler3d's layout).
constexpr int kDensity = 0;
constexpr int kMomentum = 1;
constexpr int kEnergy = 4;
/// Neighbour markers of boundary faces.
constexpr int kWall = -1;
constexpr int kFarField = -2;
/// Runge-Kutta steps per time step.
constexpr int kRK = 3;
constexpr float kGamma = 1.4f;
constexpr float kSmoothing = 0.2f;
constexpr float kMach = 1.2f;
constexpr double kAngleOfAttackDeg = 3.0;
/// The RTC call chain grows 3 frames per iteration.
constexpr int kMaxIterations = 60;

/// The item: a chunk of kChunk consecutive elements at one iteration.
struct Chunk {
  int index;
  int iteration;
};

/// The mesh, in euler3d's structure-of-arrays layout (nelr = padded count).
struct Mesh {
  int nelr;
  const float *areas;   ///< [nelr]
  const int *neighbors; ///< [kFaces][nelr], or kWall / kFarField
  const float *normals; ///< [kDims][kFaces][nelr] inward, |n| = face size
};

/// The far-field state and its flux contributions.
struct FarField {
  float variables[kVars];
  float3 fluxMomentumX, fluxMomentumY, fluxMomentumZ, fluxEnergy;
};

/// Everything the stages reach, set once by the host.
struct Cfd {
  Mesh mesh;
  FarField farField;
  int numElements, numChunks, numIterations;
  int localDependencies; ///< --local
  const float *initial;  ///< [kVars][nelr] the state before iteration 0
  float *state[3];       ///< A, B, C: [kVars][nelr] each
  float *stepFactors;    ///< [nelr]
  float *fluxes;         ///< [kVars][nelr]
  int *iterationsDone;   ///< [iteration] chunks done (default)
  int *chunksDone;       ///< [iteration][chunk] neighbour chunks done (--local)
  const int *adjacencyStart; ///< [numChunks + 1] into adjacency
  const int *adjacency;      ///< the chunks each chunk reads, itself included
};

__constant__ Cfd gCfd;

//===-- The scheme, shared by the GPU and the CPU reference ---------------===//

/// A variable that other items write during the run: through L2 (__ldcg) on
/// the GPU, where their fenced writes are, never from a stale L1 line.
__host__ __device__ inline float loadState(const float *p) {
#ifdef __CUDA_ARCH__
  return __ldcg(p);
#else
  return *p;
#endif
}

/// The buffers of iteration \p k: -1 is the initial state, 0..2 are A, B, C.
__host__ __device__ inline int curBuffer(int k) {
  const int j = k % kRK;
  return j == 0 ? (k == 0 ? -1 : 0) : j;
}
__host__ __device__ inline int baseBuffer(int k) { return k < kRK ? -1 : 0; }
__host__ __device__ inline int nextBuffer(int k) { return (k % kRK + 1) % kRK; }

struct ElementState {
  float density, energy, pressure, speedSqd, speedOfSound;
  float3 momentum, velocity;
};

__host__ __device__ inline float pressureOf(float density, float energy,
                                            float speedSqd) {
  return (kGamma - 1.0f) * (energy - 0.5f * density * speedSqd);
}

__host__ __device__ inline float speedOfSoundOf(float density, float pressure) {
  return sqrtf(kGamma * pressure / density);
}

// The element functions come in two parts, loads and arithmetic, so that
// a stage can issue the loads of several elements before it waits for the
// first (a lone warp, as in the RTC original, waits for memory once a batch
// rather than once a face); the CPU reference calls the same parts.

/// The variables of element \p i of the state \p vars.
__host__ __device__ inline ElementState loadElement(const float *vars, int nelr,
                                                    int i) {
  ElementState s;
  s.density = loadState(vars + kDensity * nelr + i);
  s.momentum = make_float3(loadState(vars + (kMomentum + 0) * nelr + i),
                           loadState(vars + (kMomentum + 1) * nelr + i),
                           loadState(vars + (kMomentum + 2) * nelr + i));
  s.energy = loadState(vars + kEnergy * nelr + i);
  return s;
}

/// The quantities derived from the variables.
__host__ __device__ inline void derive(ElementState &s) {
  s.velocity = make_float3(s.momentum.x / s.density, s.momentum.y / s.density,
                           s.momentum.z / s.density);
  s.speedSqd = s.velocity.x * s.velocity.x + s.velocity.y * s.velocity.y +
               s.velocity.z * s.velocity.z;
  s.pressure = pressureOf(s.density, s.energy, s.speedSqd);
  s.speedOfSound = speedOfSoundOf(s.density, s.pressure);
}

/// The flux contributions of a state (euler3d's compute_flux_contribution).
__host__ __device__ inline void
fluxContribution(float density, float3 momentum, float energy, float pressure,
                 float3 velocity, float3 &fcMomentumX, float3 &fcMomentumY,
                 float3 &fcMomentumZ, float3 &fcEnergy) {
  fcMomentumX.x = velocity.x * momentum.x + pressure;
  fcMomentumX.y = velocity.x * momentum.y;
  fcMomentumX.z = velocity.x * momentum.z;
  fcMomentumY.x = fcMomentumX.y;
  fcMomentumY.y = velocity.y * momentum.y + pressure;
  fcMomentumY.z = velocity.y * momentum.z;
  fcMomentumZ.x = fcMomentumX.z;
  fcMomentumZ.y = fcMomentumY.z;
  fcMomentumZ.z = velocity.z * momentum.z + pressure;
  const float energyPressure = energy + pressure;
  fcEnergy.x = velocity.x * energyPressure;
  fcEnergy.y = velocity.y * energyPressure;
  fcEnergy.z = velocity.z * energyPressure;
}

/// What the local time step of an element reads.
struct StepInputs {
  float area;
  ElementState self;
};

__host__ __device__ inline StepInputs loadStepInputs(const Mesh &m,
                                                     const float *vars, int i) {
  return StepInputs{m.areas[i], loadElement(vars, m.nelr, i)};
}

/// The local time step over the volume (euler3d's compute_step_factor).
__host__ __device__ inline float stepFactorFrom(StepInputs in) {
  derive(in.self);
  return 0.5f /
         (sqrtf(in.area) * (sqrtf(in.self.speedSqd) + in.self.speedOfSound));
}

/// What the residual of an element reads: its faces and the variables of
/// itself and its neighbours.
struct FluxInputs {
  int neighbors[kFaces];
  float3 normals[kFaces];
  ElementState self, faces[kFaces];
};

__host__ __device__ inline FluxInputs loadFluxInputs(const Mesh &m,
                                                     const float *vars, int i) {
  const int nelr = m.nelr;
  FluxInputs in;
  for (int j = 0; j < kFaces; ++j) {
    in.neighbors[j] = m.neighbors[j * nelr + i];
    in.normals[j] = make_float3(m.normals[(j + 0 * kFaces) * nelr + i],
                                m.normals[(j + 1 * kFaces) * nelr + i],
                                m.normals[(j + 2 * kFaces) * nelr + i]);
  }
  in.self = loadElement(vars, nelr, i);
  // A boundary face loads the element itself (unused), so that no load
  // waits behind a branch.
  for (int j = 0; j < kFaces; ++j)
    in.faces[j] =
        loadElement(vars, nelr, in.neighbors[j] >= 0 ? in.neighbors[j] : i);
  return in;
}

/// What one side of a face contributes to the central flux across it: its
/// momentum and its energy and momentum fluxes.
struct FaceFlux {
  float3 momentum, energy, momentumX, momentumY, momentumZ;
};

__host__ __device__ inline float component(float3 v, int d) {
  return d == 0 ? v.x : d == 1 ? v.y : v.z;
}

/// Adds the central flux across a face with normal \p normal between this
/// element (\p self) and the other side, one normal component at a time in
/// euler3d's order (the CPU reference runs this same code).
__host__ __device__ inline void
addCentralFlux(float3 normal, const FaceFlux &other, const FaceFlux &self,
               float &density, float &energy, float3 &momentum) {
  for (int d = 0; d < kDims; ++d) {
    float factor = 0.5f * component(normal, d);
    density +=
        factor * (component(other.momentum, d) + component(self.momentum, d));
    energy += factor * (component(other.energy, d) + component(self.energy, d));
    momentum.x +=
        factor * (component(other.momentumX, d) + component(self.momentumX, d));
    momentum.y +=
        factor * (component(other.momentumY, d) + component(self.momentumY, d));
    momentum.z +=
        factor * (component(other.momentumZ, d) + component(self.momentumZ, d));
  }
}

/// The residual of an element (euler3d's compute_flux).
__host__ __device__ inline void fluxFrom(FluxInputs in, const FarField &ff,
                                         float out[kVars]) {
  ElementState &s = in.self;
  derive(s);
  float3 fcMomX, fcMomY, fcMomZ, fcEnergy;
  fluxContribution(s.density, s.momentum, s.energy, s.pressure, s.velocity,
                   fcMomX, fcMomY, fcMomZ, fcEnergy);
  const float speed = sqrtf(s.speedSqd);
  const FaceFlux self{s.momentum, fcEnergy, fcMomX, fcMomY, fcMomZ};

  float fluxDensity = 0.0f, fluxEnergy = 0.0f;
  float3 fluxMomentum = make_float3(0.0f, 0.0f, 0.0f);
  for (int j = 0; j < kFaces; ++j) {
    const int nb = in.neighbors[j];
    const float3 normal = in.normals[j];
    const float normalLen =
        sqrtf(normal.x * normal.x + normal.y * normal.y + normal.z * normal.z);
    if (nb >= 0) {
      ElementState &t = in.faces[j];
      derive(t);
      float3 nbMomX, nbMomY, nbMomZ, nbEnergy;
      fluxContribution(t.density, t.momentum, t.energy, t.pressure, t.velocity,
                       nbMomX, nbMomY, nbMomZ, nbEnergy);
      // Artificial viscosity.
      float factor =
          -normalLen * kSmoothing * 0.5f *
          (speed + sqrtf(t.speedSqd) + s.speedOfSound + t.speedOfSound);
      fluxDensity += factor * (s.density - t.density);
      fluxEnergy += factor * (s.energy - t.energy);
      fluxMomentum.x += factor * (s.momentum.x - t.momentum.x);
      fluxMomentum.y += factor * (s.momentum.y - t.momentum.y);
      fluxMomentum.z += factor * (s.momentum.z - t.momentum.z);
      addCentralFlux(normal, {t.momentum, nbEnergy, nbMomX, nbMomY, nbMomZ},
                     self, fluxDensity, fluxEnergy, fluxMomentum);
    } else if (nb == kWall) {
      fluxMomentum.x += normal.x * s.pressure;
      fluxMomentum.y += normal.y * s.pressure;
      fluxMomentum.z += normal.z * s.pressure;
    } else if (nb == kFarField) {
      const float3 farMomentum =
          make_float3(ff.variables[kMomentum + 0], ff.variables[kMomentum + 1],
                      ff.variables[kMomentum + 2]);
      addCentralFlux(normal,
                     {farMomentum, ff.fluxEnergy, ff.fluxMomentumX,
                      ff.fluxMomentumY, ff.fluxMomentumZ},
                     self, fluxDensity, fluxEnergy, fluxMomentum);
    }
  }
  out[kDensity] = fluxDensity;
  out[kMomentum + 0] = fluxMomentum.x;
  out[kMomentum + 1] = fluxMomentum.y;
  out[kMomentum + 2] = fluxMomentum.z;
  out[kEnergy] = fluxEnergy;
}

/// The Runge-Kutta update of variable \p v of element \p i at iteration k
/// (euler3d's time_step): base + stepFactor / (kRK + 1 - j) * flux.
__host__ __device__ inline float updated(float base, float stepFactor,
                                         float flux, int k) {
  const float factor = stepFactor / float(kRK + 1 - k % kRK);
  return base + factor * flux;
}

//===-- Stages ------------------------------------------------------------===//

__device__ inline const float *stateBuffer(int b) {
  return b < 0 ? gCfd.initial : gCfd.state[b];
}

/// Element e of lane \p rank in chunk \p c, or -1 past the last element.
__device__ inline int elementOf(Chunk c, int e, int rank) {
  const int i = c.index * kChunk + e * 32 + rank;
  return i < gCfd.numElements ? i : -1;
}

// The stages hand chunks around a cycle, so one of them is declared ahead;
// the stage pragma marks its definition.
__device__ void stepFactor(Chunk c, int rank);

/// The Runge-Kutta update of the chunk's elements, then the dependency
/// counting that starts the next iteration.
#pragma cuda_rewrite stage threads(32)
__device__ void timeStep(Chunk c, int rank) {
  const int nelr = gCfd.mesh.nelr, k = c.iteration;
  const float *base = stateBuffer(baseBuffer(k));
  float *next = gCfd.state[nextBuffer(k)];
  // Not unrolled: one batch's values in registers at a time.
#pragma unroll 1
  for (int e = 0; e < kPerLane; e += kBatch) {
    // kBatch elements' loads first, then their stores (see kBatch).
    int at[kBatch];
    float factor[kBatch], old[kBatch][kVars], residual[kBatch][kVars];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      at[b] = elementOf(c, e + b, rank);
      if (at[b] < 0)
        continue;
      factor[b] = loadState(gCfd.stepFactors + at[b]);
#pragma unroll
      for (int v = 0; v < kVars; ++v) {
        old[b][v] = loadState(base + v * nelr + at[b]);
        residual[b][v] = loadState(gCfd.fluxes + v * nelr + at[b]);
      }
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (at[b] >= 0)
#pragma unroll
        for (int v = 0; v < kVars; ++v)
          next[v * nelr + at[b]] =
              updated(old[b][v], factor[b], residual[b][v], k);
  }
  if (k + 1 == gCfd.numIterations)
    return;
  // Publish every lane's new state before any lane counts the chunk done.
  __threadfence();
  __syncwarp();
  if (!gCfd.localDependencies) {
    int last = 0;
    if (rank == 0)
      last = atomicAdd(gCfd.iterationsDone + k, 1) == gCfd.numChunks - 1;
    if (__shfl_sync(0xffffffffu, last, 0)) {
      __threadfence(); // see every chunk's new state
      for (int d = 0; d < gCfd.numChunks; ++d)
        stepFactor(Chunk{d, k + 1}, rank);
    }
    return;
  }
  // --local: lane r counts this chunk into adjacency entry r (of each 32).
  int *ready = gCfd.chunksDone + (k + 1) * gCfd.numChunks;
  const int begin = gCfd.adjacencyStart[c.index];
  const int end = gCfd.adjacencyStart[c.index + 1];
  for (int at = begin; at < end; at += 32) {
    bool last = false;
    if (at + rank < end) {
      const int d = gCfd.adjacency[at + rank];
      const int needed = gCfd.adjacencyStart[d + 1] - gCfd.adjacencyStart[d];
      last = atomicAdd(ready + d, 1) == needed - 1;
    }
    unsigned lastOnes = __ballot_sync(0xffffffffu, last);
    if (lastOnes)
      __threadfence(); // see the other chunks' new state
    while (lastOnes) {
      const int b = __ffs(lastOnes) - 1;
      lastOnes &= lastOnes - 1;
      stepFactor(Chunk{gCfd.adjacency[at + b], k + 1}, rank);
    }
  }
}

/// The residuals of the chunk's elements: the heavy stage.
#pragma cuda_rewrite stage threads(32)
__device__ void flux(Chunk c, int rank) {
  const int nelr = gCfd.mesh.nelr;
  const float *cur = stateBuffer(curBuffer(c.iteration));
  // One element at a time: its 41 loads are already in flight together.
#pragma unroll 1
  for (int e = 0; e < kPerLane; ++e) {
    const int i = elementOf(c, e, rank);
    if (i < 0)
      break;
    float out[kVars];
    fluxFrom(loadFluxInputs(gCfd.mesh, cur, i), gCfd.farField, out);
    for (int v = 0; v < kVars; ++v)
      gCfd.fluxes[v * nelr + i] = out[v];
  }
  // timeStep's lanes (another warp, after a rewrite) read them.
  __threadfence();
  __syncwarp();
  timeStep(c, rank);
}

/// The local time steps of the chunk's elements.
#pragma cuda_rewrite stage threads(32)
__device__ void stepFactor(Chunk c, int rank) {
  const float *cur = stateBuffer(curBuffer(c.iteration));
  // Not unrolled: one batch's values in registers at a time.
#pragma unroll 1
  for (int e = 0; e < kPerLane; e += kBatch) {
    // kBatch elements' loads first, then their stores (see kBatch).
    int at[kBatch];
    StepInputs in[kBatch];
    float factor[kBatch];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      at[b] = elementOf(c, e + b, rank);
      if (at[b] >= 0)
        in[b] = loadStepInputs(gCfd.mesh, cur, at[b]);
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (at[b] >= 0)
        factor[b] = stepFactorFrom(in[b]);
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
      if (at[b] >= 0)
        gCfd.stepFactors[at[b]] = factor[b];
  }
  __threadfence(); // as in flux
  __syncwarp();
  flux(c, rank);
}

/// One warp per chunk: iteration 0.
__global__ void cfdSolve(int numChunks) {
  const int warp = int((blockIdx.x * blockDim.x + threadIdx.x) / 32);
  const int lane = int(threadIdx.x % 32);
  if (warp < numChunks)
    stepFactor(Chunk{warp, 0}, lane);
}

//===-- Host: the mesh, the initial flow and the CPU reference ------------===//

namespace {

struct HostMesh {
  int NumElements = 0, Nelr = 0, NumChunks = 0;
  int Walls = 0, FarFaces = 0;
  std::vector<float> Areas, Normals;
  std::vector<int> Neighbors;
  std::vector<float> CenterX, CenterY;
  std::vector<int> AdjacencyStart, Adjacency;
};

/// The jittered square of Side x Side cells minus the cells of 5 plates.
HostMesh makeMesh(harness::Rng &R, int Side) {
  auto Uniform = [&] { return double(R.next() >> 11) * 0x1.0p-53; };
  const int NV = Side + 1;
  const double H = 1.0 / Side;
  // Vertices: interior ones jittered by up to a quarter cell, so cells stay
  // convex; boundary ones stay on the square's sides.
  std::vector<double> VX(size_t(NV) * NV), VY(size_t(NV) * NV);
  for (int J = 0; J < NV; ++J)
    for (int I = 0; I < NV; ++I) {
      const bool Inner = I > 0 && I < Side && J > 0 && J < Side;
      VX[size_t(J) * NV + I] = (I + (Inner ? 0.5 * Uniform() - 0.25 : 0)) * H;
      VY[size_t(J) * NV + I] = (J + (Inner ? 0.5 * Uniform() - 0.25 : 0)) * H;
    }
  // Five thin plates along the flow, one cell thick, in rows at least 3
  // apart. (Obstacles with concave staircase corners facing the flow make
  // euler3d's central scheme blow up within a few dozen iterations; plates
  // reach a steady state.)
  constexpr int kPlates = 5;
  int Row[kPlates], Begin[kPlates], End[kPlates];
  for (int K = 0; K < kPlates; ++K) {
    bool Apart;
    do {
      Row[K] = int((0.15 + 0.7 * Uniform()) * Side);
      Apart = true;
      for (int Q = 0; Q < K; ++Q)
        Apart = Apart && std::abs(Row[Q] - Row[K]) >= 3;
    } while (!Apart);
    Begin[K] = int((0.1 + 0.5 * Uniform()) * Side);
    End[K] = Begin[K] + int((0.1 + 0.25 * Uniform()) * Side);
  }
  auto Solid = [&](int I, int J) {
    for (int K = 0; K < kPlates; ++K)
      if (J == Row[K] && I >= Begin[K] && I < End[K])
        return true;
    return false;
  };

  // Number the fluid cells block by block, shuffled inside each block.
  std::vector<int> Id(size_t(Side) * Side, -1);
  HostMesh M;
  std::vector<int> CellOf;
  for (int BY = 0; BY < Side; BY += 32)
    for (int BX = 0; BX < Side; BX += 32) {
      const size_t First = CellOf.size();
      for (int J = BY; J < std::min(BY + 32, Side); ++J)
        for (int I = BX; I < std::min(BX + 32, Side); ++I)
          if (!Solid(I, J))
            CellOf.push_back(J * Side + I);
      for (size_t K = CellOf.size() - 1; K > First; --K)
        std::swap(CellOf[K], CellOf[First + R.next() % (K - First + 1)]);
    }
  M.NumElements = int(CellOf.size());
  M.NumChunks = (M.NumElements + kChunk - 1) / kChunk;
  M.Nelr = M.NumChunks * kChunk;
  for (int E = 0; E < M.NumElements; ++E)
    Id[CellOf[E]] = E;

  const int N = M.Nelr;
  M.Areas.assign(N, 0.f);
  M.Normals.assign(size_t(kDims) * kFaces * N, 0.f);
  M.Neighbors.assign(size_t(kFaces) * N, kFarField);
  M.CenterX.assign(N, 0.f);
  M.CenterY.assign(N, 0.f);
  for (int E = 0; E < M.NumElements; ++E) {
    const int I = CellOf[E] % Side, J = CellOf[E] / Side;
    // Corners counter-clockwise; face f runs from corner f to corner f + 1
    // and faces the neighbour below, right, above, left.
    const int CI[4] = {I, I + 1, I + 1, I}, CJ[4] = {J, J, J + 1, J + 1};
    const int NI[4] = {I, I + 1, I, I - 1}, NJ[4] = {J - 1, J, J + 1, J};
    double Area = 0, SX = 0, SY = 0;
    for (int F = 0; F < kFaces; ++F) {
      const size_t A = size_t(CJ[F]) * NV + CI[F];
      const size_t B = size_t(CJ[(F + 1) % 4]) * NV + CI[(F + 1) % 4];
      Area += VX[A] * VY[B] - VX[B] * VY[A];
      SX += VX[A];
      SY += VY[A];
      // Inward normal (left of a counter-clockwise edge), as long as the
      // face: what euler3d's update expects.
      M.Normals[(F + 0 * kFaces) * size_t(N) + E] = float(-(VY[B] - VY[A]));
      M.Normals[(F + 1 * kFaces) * size_t(N) + E] = float(VX[B] - VX[A]);
      M.Normals[(F + 2 * kFaces) * size_t(N) + E] = 0.f;
      int Nb = kFarField;
      if (NI[F] >= 0 && NI[F] < Side && NJ[F] >= 0 && NJ[F] < Side)
        Nb = Solid(NI[F], NJ[F]) ? kWall : Id[size_t(NJ[F]) * Side + NI[F]];
      M.Neighbors[size_t(F) * N + E] = Nb;
      M.Walls += Nb == kWall;
      M.FarFaces += Nb == kFarField;
    }
    M.Areas[E] = float(0.5 * Area);
    M.CenterX[E] = float(SX / 4);
    M.CenterY[E] = float(SY / 4);
  }

  // The chunks that each chunk's elements read (itself included).
  M.AdjacencyStart.push_back(0);
  for (int C = 0; C < M.NumChunks; ++C) {
    std::vector<int> Read{C};
    for (int E = C * kChunk; E < std::min((C + 1) * kChunk, M.NumElements); ++E)
      for (int F = 0; F < kFaces; ++F) {
        const int Nb = M.Neighbors[size_t(F) * N + E];
        if (Nb >= 0)
          Read.push_back(Nb / kChunk);
      }
    std::sort(Read.begin(), Read.end());
    Read.erase(std::unique(Read.begin(), Read.end()), Read.end());
    M.Adjacency.insert(M.Adjacency.end(), Read.begin(), Read.end());
    M.AdjacencyStart.push_back(int(M.Adjacency.size()));
  }
  return M;
}

/// euler3d's free stream, at kMach and kAngleOfAttackDeg.
FarField makeFarField() {
  FarField F;
  const float Angle = float(kAngleOfAttackDeg * M_PI / 180.0);
  F.variables[kDensity] = 1.4f;
  const float Pressure = 1.0f;
  const float SpeedOfSound = std::sqrt(kGamma * Pressure / F.variables[0]);
  const float Speed = kMach * SpeedOfSound;
  const float3 Velocity =
      make_float3(Speed * std::cos(Angle), Speed * std::sin(Angle), 0.0f);
  const float3 Momentum = make_float3(F.variables[kDensity] * Velocity.x,
                                      F.variables[kDensity] * Velocity.y,
                                      F.variables[kDensity] * Velocity.z);
  F.variables[kMomentum + 0] = Momentum.x;
  F.variables[kMomentum + 1] = Momentum.y;
  F.variables[kMomentum + 2] = Momentum.z;
  F.variables[kEnergy] = F.variables[kDensity] * (0.5f * (Speed * Speed)) +
                         Pressure / (kGamma - 1.0f);
  fluxContribution(F.variables[kDensity], Momentum, F.variables[kEnergy],
                   Pressure, Velocity, F.fluxMomentumX, F.fluxMomentumY,
                   F.fluxMomentumZ, F.fluxEnergy);
  return F;
}

/// The free stream with a few isentropic density bumps (up to +-15%).
std::vector<float> makeInitialState(harness::Rng &R, const HostMesh &M,
                                    const FarField &F) {
  auto Uniform = [&] { return double(R.next() >> 11) * 0x1.0p-53; };
  constexpr int kBumps = 6;
  double BX[kBumps], BY[kBumps], BW[kBumps], BA[kBumps];
  for (int B = 0; B < kBumps; ++B) {
    BX[B] = Uniform();
    BY[B] = Uniform();
    BW[B] = 0.03 + 0.07 * Uniform();
    BA[B] = 0.15 * (2 * Uniform() - 1);
  }
  const double Rho = F.variables[kDensity], P = 1.0;
  const double VX = F.variables[kMomentum] / Rho,
               VY = F.variables[kMomentum + 1] / Rho;
  std::vector<float> State(size_t(kVars) * M.Nelr, 0.f);
  for (int E = 0; E < M.NumElements; ++E) {
    double Bump = 0;
    for (int B = 0; B < kBumps; ++B) {
      const double DX = M.CenterX[E] - BX[B], DY = M.CenterY[E] - BY[B];
      Bump += BA[B] * std::exp(-(DX * DX + DY * DY) / (BW[B] * BW[B]));
    }
    const double Density = Rho * (1 + Bump);
    const double Pressure = P * std::pow(1 + Bump, double(kGamma));
    State[size_t(kDensity) * M.Nelr + E] = float(Density);
    State[size_t(kMomentum) * M.Nelr + E] = float(Density * VX);
    State[size_t(kMomentum + 1) * M.Nelr + E] = float(Density * VY);
    State[size_t(kMomentum + 2) * M.Nelr + E] = 0.f;
    State[size_t(kEnergy) * M.Nelr + E] =
        float(0.5 * Density * (VX * VX + VY * VY) + Pressure / (kGamma - 1));
  }
  return State;
}

/// The CPU reference: the same element functions, iteration by iteration.
/// Returns the state after the last iteration.
std::vector<float> solveOnHost(const HostMesh &HM, const FarField &FF,
                               const std::vector<float> &Initial,
                               int Iterations) {
  const int N = HM.Nelr;
  const Mesh M{N, HM.Areas.data(), HM.Neighbors.data(), HM.Normals.data()};
  std::vector<float> Buffers[3];
  for (std::vector<float> &B : Buffers)
    B.assign(size_t(kVars) * N, 0.f);
  std::vector<float> StepFactors(N), Fluxes(size_t(kVars) * N);
  auto Buffer = [&](int B) -> const float * {
    return B < 0 ? Initial.data() : Buffers[B].data();
  };
  for (int K = 0; K < Iterations; ++K) {
    const float *Cur = Buffer(curBuffer(K)), *Base = Buffer(baseBuffer(K));
    float *Next = Buffers[nextBuffer(K)].data();
    for (int I = 0; I < HM.NumElements; ++I)
      StepFactors[I] = stepFactorFrom(loadStepInputs(M, Cur, I));
    for (int I = 0; I < HM.NumElements; ++I) {
      float Out[kVars];
      fluxFrom(loadFluxInputs(M, Cur, I), FF, Out);
      for (int V = 0; V < kVars; ++V)
        Fluxes[size_t(V) * N + I] = Out[V];
    }
    for (int I = 0; I < HM.NumElements; ++I)
      for (int V = 0; V < kVars; ++V)
        Next[size_t(V) * N + I] =
            updated(Base[size_t(V) * N + I], StepFactors[I],
                    Fluxes[size_t(V) * N + I], K);
  }
  return Buffers[nextBuffer(Iterations - 1)];
}

} // namespace

int main(int argc, char **argv) {
  harness::Args A =
      harness::parseArgs(argc, argv, "cfd", {320, 9}, {"--local"});
  if (A.size(0) < 32 || A.size(0) > 4096 || A.size(1) < 1 ||
      A.size(1) > kMaxIterations)
    harness::fail("need 32 <= side <= 4096 and 1 <= iterations <= 60");
  const int Side = int(A.size(0)), Iterations = int(A.size(1));
  const bool Local = A.has("--local");

  harness::Rng R(A.Seed);
  const HostMesh HM = makeMesh(R, Side);
  const FarField FF = makeFarField();
  const std::vector<float> Initial = makeInitialState(R, HM, FF);
  const int N = HM.Nelr, NumChunks = HM.NumChunks;
  int MaxDegree = 0;
  for (int C = 0; C < NumChunks; ++C)
    MaxDegree =
        std::max(MaxDegree, HM.AdjacencyStart[C + 1] - HM.AdjacencyStart[C]);
  std::printf("cfd: %d elements in %d chunks of %d (%d wall and %d far-field "
              "faces), %d iterations; a chunk reads up to %d chunks%s\n",
              HM.NumElements, NumChunks, kChunk, HM.Walls, HM.FarFaces,
              Iterations, MaxDegree,
              Local ? "; per-chunk dependencies (--local)"
                    : "; a barrier per iteration");

  const std::vector<float> Final = solveOnHost(HM, FF, Initial, Iterations);
  std::vector<double> Ref(Final.begin(), Final.end());
  {
    double Lo = INFINITY, Hi = -INFINITY;
    for (int I = 0; I < HM.NumElements; ++I) {
      Lo = std::min(Lo, Ref[size_t(kDensity) * N + I]);
      Hi = std::max(Hi, Ref[size_t(kDensity) * N + I]);
    }
    for (int V = 0; V < kVars; ++V)
      for (int I = 0; I < HM.NumElements; ++I)
        if (!std::isfinite(Ref[size_t(V) * N + I]))
          harness::fail("the CPU reference's flow blew up (try fewer "
                        "iterations)");
    std::printf("cfd: density after the last iteration in [%.4f, %.4f]\n", Lo,
                Hi);
  }

  // The RTC call chain: cfdSolve -> (stepFactor -> flux -> timeStep) x
  // iterations. ptxas gives the stages 24-64 byte frames (saved registers and
  // spills); 128 bytes a frame leaves room for other compilers, and stays
  // small because the limit is reserved for every resident thread.
  const size_t Frames = 1 + 3 * size_t(Iterations);
  HARNESS_CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 1024 + Frames * 128));

  harness::DeviceArray<float> DAreas(HM.Areas), DNormals(HM.Normals);
  harness::DeviceArray<int> DNeighbors(HM.Neighbors);
  harness::DeviceArray<int> DAdjStart(HM.AdjacencyStart),
      DAdjacency(HM.Adjacency);
  harness::DeviceArray<float> DInitial(Initial);
  harness::DeviceArray<float> DStateA(size_t(kVars) * N),
      DStateB(size_t(kVars) * N), DStateC(size_t(kVars) * N);
  harness::DeviceArray<float> DStepFactors(N), DFluxes(size_t(kVars) * N);
  // Counters: the barrier's per iteration, then --local's per iteration and
  // chunk.
  harness::DeviceArray<int> DCounters(size_t(Iterations) * (1 + NumChunks));
  Cfd P{};
  P.mesh = Mesh{N, DAreas.data(), DNeighbors.data(), DNormals.data()};
  P.farField = FF;
  P.numElements = HM.NumElements;
  P.numChunks = NumChunks;
  P.numIterations = Iterations;
  P.localDependencies = Local;
  P.initial = DInitial.data();
  P.state[0] = DStateA.data();
  P.state[1] = DStateB.data();
  P.state[2] = DStateC.data();
  P.stepFactors = DStepFactors.data();
  P.fluxes = DFluxes.data();
  P.iterationsDone = DCounters.data();
  P.chunksDone = DCounters.data() + Iterations;
  P.adjacencyStart = DAdjStart.data();
  P.adjacency = DAdjacency.data();
  HARNESS_CHECK(cudaMemcpyToSymbol(gCfd, &P, sizeof P));
  harness::DeviceArray<float> *Outputs[3] = {&DStateA, &DStateB, &DStateC};
  harness::DeviceArray<float> &DFinal = *Outputs[nextBuffer(Iterations - 1)];

  const int Block = 128;
  const int Grid = (NumChunks * 32 + Block - 1) / Block;
  harness::Result Res = harness::measure(
      A,
      [&] {
        DStateA.poison();
        DStateB.poison();
        DStateC.poison();
      },
      [&] {
        // The dependency counters start at zero.
        HARNESS_CHECK(cudaMemsetAsync(DCounters.data(), 0, DCounters.bytes()));
#pragma cuda_rewrite pipeline
        cfdSolve<<<Grid, Block>>>(NumChunks);
      },
      [&] {
        // The GPU fuses some multiply-adds that the CPU rounds twice.
        return harness::compareFloat(
            DFinal.download(), Ref,
            [&](size_t I) { return int(I % N) < HM.NumElements; }, 1e-4);
      });
  // Per iteration and element, at least: the state, the base state, the
  // mesh (area, 4 neighbours, 12 normal components), the step factor and
  // the flux written and read back, the new state written: 44 words.
  double Bytes = 44.0 * sizeof(float) * HM.NumElements * Iterations;
  return harness::report(A, Res, Bytes,
                         size_t(HM.NumElements) * size_t(Iterations));
}
