// Launch geometry shared by the module's kernels.
//
// Streaming kernels are memory bound, so what matters is bytes in flight:
// every kernel is a grid-stride loop over a grid that just fills the device
// (SMs x the blocks of that kernel one SM keeps resident), each thread moving
// 16-byte vectors, several at a time, so that a big vector costs one launch
// and no block scheduling, and every SM ends at the same time (at most one
// resident wave: with equal work per thread, a partial second wave would
// leave most SMs idle while it runs). Narrow formats are the exception: one
// conversion per element can make a kernel issue-bound, so the fp8 and
// bf16 paths convert two elements per instruction where the inputs allow
// (fp8_words.h, codec.cu).
//
// Per element the kernels run exactly the scalar code of the CPU kernels; the
// vector accesses only change how the bytes travel. Elements before the first
// 16-byte boundary (the head) and after the last whole vector (the tail), and
// everything when the pointers disagree on alignment, take the scalar path.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/device_module.h"

namespace braid::kernels::cuda {

constexpr unsigned kBlockThreads = 256;
constexpr size_t kVectorBytes = 16;

int reduce(void* d, const void* a, const void* b, size_t n, int dtype, int op, void* stream);
int divide(void* p, size_t n, int dtype, uint64_t divisor, void* stream);
int encode(const DeviceCodec* p, const void* src, size_t n, void* dst, void* stream);
int decode(const DeviceCodec* p, const void* src, size_t n, void* dst, void* stream);
// Loads every reduce and divide kernel of the current device (prepareElementwise).
int preloadReduceKernels();

// How n elements split between the vector loop and the scalar path: units of
// `per` elements from element `head` on; elements [0, head) and
// [head + units * per, n) go one at a time.
struct Split {
  size_t head, units;
};

// `bytes[k]`: the element size of pointer k, which the vector loop reaches
// `per` elements at a time, so with accesses of min(16, per * bytes[k])
// bytes. The first h < per at which every pointer p_k + h * bytes[k] is
// aligned to its access starts the vectors; with no such h (or n too short)
// everything is scalar.
template <size_t K>
Split splitFor(size_t n, size_t per, const void* const (&ptrs)[K], const size_t (&bytes)[K]) {
  for (size_t h = 0; h < per && h < n; ++h) {
    bool aligned = true;
    for (size_t k = 0; k < K; ++k) {
      const size_t access = per * bytes[k] < kVectorBytes ? per * bytes[k] : kVectorBytes;
      aligned = aligned && (reinterpret_cast<uintptr_t>(ptrs[k]) + h * bytes[k]) % access == 0;
    }
    if (aligned) return {h, (n - h) / per};
  }
  return {n, 0};
}

}  // namespace braid::kernels::cuda

#if defined(__CUDACC__)  // the device half: only the .cu files see it
#include <cuda_runtime.h>

#include <atomic>
#include <type_traits>
#include <utility>

namespace braid::kernels::cuda {

// Blocks of kBlockThreads that `kernel` keeps resident per SM. Asked once per
// kernel (its instantiation's static `cache`): the answer depends only on the
// kernel and the architecture, and the module is built for one.
inline int blocksPerSm(std::atomic<int>& cache, const void* kernel) {
  int n = cache.load(std::memory_order_relaxed);
  if (n > 0) return n;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, kBlockThreads, 0) != cudaSuccess || n < 1) {
    (void)cudaGetLastError();  // not this launch's error: fall back to one block per SM
    return 1;
  }
  cache.store(n, std::memory_order_relaxed);
  return n;
}

// Blocks for `work` grid-stride items: one per kBlockThreads items, at most
// one resident wave of the current device.
inline unsigned gridFor(size_t work, int perSm) {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms < 1)
    sms = 1;  // the launch itself reports what is wrong
  const size_t cap = size_t(sms) * size_t(perSm);
  const size_t blocks = (work + kBlockThreads - 1) / kBlockThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > cap ? cap : blocks));
}

// N elements of T with the widest aligned accesses (4, 8 or 16 bytes, or
// several 16-byte ones). Copied through __builtin_memcpy so that the
// compiler keeps them in registers.
template <class T, int N>
struct Pack {
  T v[N];
};

template <class T, int N>
__device__ __forceinline__ Pack<T, N> loadPack(const T* p) {
  constexpr size_t kBytes = N * sizeof(T);
  static_assert(kBytes == 4 || kBytes == 8 || kBytes % 16 == 0, "no single access of this width");
  Pack<T, N> r;
  if constexpr (kBytes % 16 == 0) {
#pragma unroll
    for (size_t k = 0; k < kBytes / 16; ++k) {
      const uint4 w = reinterpret_cast<const uint4*>(p)[k];
      __builtin_memcpy(reinterpret_cast<char*>(r.v) + 16 * k, &w, 16);
    }
  } else if constexpr (kBytes == 8) {
    const uint2 w = *reinterpret_cast<const uint2*>(p);
    __builtin_memcpy(r.v, &w, 8);
  } else {
    const uint32_t w = *reinterpret_cast<const uint32_t*>(p);
    __builtin_memcpy(r.v, &w, 4);
  }
  return r;
}

template <class T, int N>
__device__ __forceinline__ void storePack(T* p, const Pack<T, N>& r) {
  constexpr size_t kBytes = N * sizeof(T);
  static_assert(kBytes == 4 || kBytes == 8 || kBytes % 16 == 0, "no single access of this width");
  if constexpr (kBytes % 16 == 0) {
#pragma unroll
    for (size_t k = 0; k < kBytes / 16; ++k) {
      uint4 w;
      __builtin_memcpy(&w, reinterpret_cast<const char*>(r.v) + 16 * k, 16);
      reinterpret_cast<uint4*>(p)[k] = w;
    }
  } else if constexpr (kBytes == 8) {
    uint2 w;
    __builtin_memcpy(&w, r.v, 8);
    *reinterpret_cast<uint2*>(p) = w;
  } else {
    uint32_t w;
    __builtin_memcpy(&w, r.v, 4);
    *reinterpret_cast<uint32_t*>(p) = w;
  }
}

// Whether Op has prepareBlock(): work every block does once, before its
// elements (filling a table in shared memory), ending in __syncthreads().
template <class Op, class = void>
struct PreparesBlock : std::false_type {};
template <class Op>
struct PreparesBlock<Op, std::void_t<decltype(std::declval<const Op&>().prepareBlock())>> : std::true_type {};

// Whether an element operation F has pack(): a whole vector unit at once,
// returning false (having written nothing) when that unit needs F's
// per-element code. F says so with kHasPack.
template <class F, class = void>
struct HasPack : std::false_type {};
template <class F>
struct HasPack<F, std::void_t<decltype(F::kHasPack)>> : std::bool_constant<F::kHasPack> {};

// The element-wise kernel. Op supplies kPer (elements per vector unit),
// kUnroll (units loaded before any is computed: bytes in flight per thread),
// load(i) (the inputs of elements [i, i + kPer), vector loads), store(i, in)
// (computes and writes them), one(i) (element i, scalar loads and stores)
// and optionally prepareBlock(). Each element is read before it is written,
// by the one thread that owns it, so an output may alias an input exactly.
template <class Op>
__global__ void __launch_bounds__(kBlockThreads) elementwiseKernel(Op op, size_t n, Split split) {
  constexpr int kPer = Op::kPer, kUnroll = Op::kUnroll;
  if constexpr (PreparesBlock<Op>::value) op.prepareBlock();
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  const size_t t = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const size_t head = split.head, units = split.units;
  size_t u = t;
  for (; u + (kUnroll - 1) * stride < units; u += kUnroll * stride) {
    decltype(op.load(0)) in[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) in[k] = op.load(head + (u + k * stride) * kPer);
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) op.store(head + (u + k * stride) * kPer, in[k]);
  }
  for (; u < units; u += stride) op.store(head + u * kPer, op.load(head + u * kPer));
  const size_t tail = head + units * kPer, scalar = head + (n - tail);
  for (size_t j = t; j < scalar; j += stride) op.one(j < head ? j : tail + (j - head));
}

// The resident blocks per SM of elementwiseKernel<Op>, once known.
template <class Op>
inline std::atomic<int> gElementwiseBlocksPerSm{0};

// Loads elementwiseKernel<Op> and learns its occupancy now. CUDA loads a
// kernel lazily at its first launch, under locks that a thread blocked in
// another CUDA call may hold; preloadKernels() does this on the user's thread
// so that a braid worker's first launch is only a launch.
template <class Op>
int prepareElementwise() {
  cudaFuncAttributes attributes;
  const void* kernel = reinterpret_cast<const void*>(&elementwiseKernel<Op>);
  if (cudaError_t err = cudaFuncGetAttributes(&attributes, kernel); err != cudaSuccess)
    return static_cast<int>(err);
  (void)blocksPerSm(gElementwiseBlocksPerSm<Op>, kernel);
  return 0;
}

template <class Op>
int launchElementwise(const Op& op, size_t n, Split split, cudaStream_t s) {
  const int perSm =
      blocksPerSm(gElementwiseBlocksPerSm<Op>, reinterpret_cast<const void*>(&elementwiseKernel<Op>));
  const unsigned grid = gridFor(split.units ? split.units : n, perSm);
  elementwiseKernel<Op><<<grid, kBlockThreads, 0, s>>>(op, n, split);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace braid::kernels::cuda
#endif
