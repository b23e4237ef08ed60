// Reductions on device memory, one grid-stride kernel per dtype x op. Each
// element goes through exactly the scalar code of the CPU kernels
// (reduce_ops.h for the operation, convert_impl.h for the narrow formats,
// compiled here for the device with --expt-relaxed-constexpr), and the module
// is built with -fmad=false and IEEE division, so a device reduction gives the
// bits the host one gives. Aliasing: dst may equal a or b (each thread reads
// its element before writing it).
#include <cuda_runtime.h>

#include "kernels/convert_impl.h"
#include "kernels/cuda/launch.h"
#include "kernels/reduce_ops.h"

namespace braid::kernels::cuda {
namespace {

// Host values <-> the fp32 (or native) compute type, per storage type.
template <class T>
struct Plain {
  using Storage = T;
  __device__ static T load(T v) { return v; }
  __device__ static T store(T v) { return v; }
};
struct Half {
  using Storage = uint16_t;
  __device__ static float load(uint16_t v) { return decodeHalf(v); }
  __device__ static uint16_t store(float v) { return encodeHalf(v); }
};
struct Bf16 {
  using Storage = uint16_t;
  __device__ static float load(uint16_t v) { return decodeBf16(v); }
  __device__ static uint16_t store(float v) { return encodeBf16(v); }
};
template <class Format>
struct Fp8 {
  using Storage = uint8_t;
  __device__ static float load(uint8_t v) { return Format::decode(v); }
  __device__ static uint8_t store(float v) { return static_cast<uint8_t>(Format::encode(bitsOf(v))); }
};

template <class S, class Op>
__global__ void reduceKernel(typename S::Storage* d, const typename S::Storage* a, const typename S::Storage* b,
                             size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    d[i] = S::store(Op::apply(S::load(a[i]), S::load(b[i])));
}

template <class S, class Op>
int launchReduce(void* d, const void* a, const void* b, size_t n, cudaStream_t s) {
  using T = typename S::Storage;
  reduceKernel<S, Op><<<gridFor(n), kBlockThreads, 0, s>>>(static_cast<T*>(d), static_cast<const T*>(a),
                                                            static_cast<const T*>(b), n);
  return static_cast<int>(cudaGetLastError());
}

template <class S>
int byOp(int op, void* d, const void* a, const void* b, size_t n, cudaStream_t s) {
  switch (op) {
    case 0: return launchReduce<S, SumOp>(d, a, b, n, s);
    case 1: return launchReduce<S, ProdOp>(d, a, b, n, s);
    case 2: return launchReduce<S, MaxOp>(d, a, b, n, s);
    case 3: return launchReduce<S, MinOp>(d, a, b, n, s);
    case 4: return launchReduce<S, SumOp>(d, a, b, n, s);  // Avg: Sum, divided once at the end
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

template <class T>
__global__ void divideIntKernel(T* p, size_t n, uint64_t divisor) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = static_cast<T>(p[i] / static_cast<T>(divisor));  // truncates toward zero, as the CPU
}
template <class S, class F>
__global__ void divideFloatKernel(typename S::Storage* p, size_t n, F dv) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    p[i] = S::store(S::load(p[i]) / dv);
}

template <class T>
int launchDivideInt(void* p, size_t n, uint64_t divisor, cudaStream_t s) {
  divideIntKernel<T><<<gridFor(n), kBlockThreads, 0, s>>>(static_cast<T*>(p), n, divisor);
  return static_cast<int>(cudaGetLastError());
}
template <class S, class F>
int launchDivideFloat(void* p, size_t n, uint64_t divisor, cudaStream_t s) {
  divideFloatKernel<S, F><<<gridFor(n), kBlockThreads, 0, s>>>(static_cast<typename S::Storage*>(p), n,
                                                              static_cast<F>(divisor));
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

// DataType order (base/types.h, NCCL's): Int8, Uint8, Int32, Uint32, Int64,
// Uint64, Float16, Float32, Float64, Bfloat16, Float8e4m3, Float8e5m2.
int reduce(void* d, const void* a, const void* b, size_t n, int dtype, int op, void* stream) {
  if (n == 0) return 0;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case 0: return byOp<Plain<int8_t>>(op, d, a, b, n, s);
    case 1: return byOp<Plain<uint8_t>>(op, d, a, b, n, s);
    case 2: return byOp<Plain<int32_t>>(op, d, a, b, n, s);
    case 3: return byOp<Plain<uint32_t>>(op, d, a, b, n, s);
    case 4: return byOp<Plain<int64_t>>(op, d, a, b, n, s);
    case 5: return byOp<Plain<uint64_t>>(op, d, a, b, n, s);
    case 6: return byOp<Half>(op, d, a, b, n, s);
    case 7: return byOp<Plain<float>>(op, d, a, b, n, s);
    case 8: return byOp<Plain<double>>(op, d, a, b, n, s);
    case 9: return byOp<Bf16>(op, d, a, b, n, s);
    case 10: return byOp<Fp8<E4m3Format>>(op, d, a, b, n, s);
    case 11: return byOp<Fp8<E5m2Format>>(op, d, a, b, n, s);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

int divide(void* p, size_t n, int dtype, uint64_t divisor, void* stream) {
  if (n == 0 || divisor == 0) return 0;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case 0: return launchDivideInt<int8_t>(p, n, divisor, s);
    case 1: return launchDivideInt<uint8_t>(p, n, divisor, s);
    case 2: return launchDivideInt<int32_t>(p, n, divisor, s);
    case 3: return launchDivideInt<uint32_t>(p, n, divisor, s);
    case 4: return launchDivideInt<int64_t>(p, n, divisor, s);
    case 5: return launchDivideInt<uint64_t>(p, n, divisor, s);
    case 6: return launchDivideFloat<Half, float>(p, n, divisor, s);
    case 7: return launchDivideFloat<Plain<float>, float>(p, n, divisor, s);
    case 8: return launchDivideFloat<Plain<double>, double>(p, n, divisor, s);
    case 9: return launchDivideFloat<Bf16, float>(p, n, divisor, s);
    case 10: return launchDivideFloat<Fp8<E4m3Format>, float>(p, n, divisor, s);
    case 11: return launchDivideFloat<Fp8<E5m2Format>, float>(p, n, divisor, s);
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
}

}  // namespace braid::kernels::cuda
