// Collectives on CUDA device buffers (core/device_staging.h) and on braid
// streams bound to a CUDA stream. Each test runs twice: through the fake CUDA
// module (fake_cuda_module.cc), which runs braid's staging path on any host,
// and through the real libbraid-cuda.so, which skips unless this host has an
// NVIDIA driver (every rank is a process on the one GPU).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "device_memory.h"
#include "harness.h"
#include "matrix.h"

namespace braid::itest {
namespace {

enum class Module { kFake, kReal };

class DeviceBuffers : public ::testing::TestWithParam<Module> {
 protected:
  void SetUp() override {
    const bool real = GetParam() == Module::kReal;
    const std::string path = real ? realCudaModulePath() : fakeCudaModulePath();
    if (path.empty()) GTEST_SKIP() << "braid was built without CUDA (BRAID_CUDA=off or no toolkit)";
    if (real && access("/dev/nvidiactl", F_OK) != 0) GTEST_SKIP() << "no NVIDIA driver on this host";
    // Set in the parent before the ranks are forked; the parent never loads
    // the module itself.
    setenv("BRAID_CUDA_MODULE", path.c_str(), 1);
    // Small pieces, so that the matrix's counts are cut unevenly (4099 floats:
    // 2048 + 2048 + 3) and the big ones into many pieces.
    setenv("BRAID_CUDA_CHUNK_BYTES", "8192", 1);
  }
  void TearDown() override {
    unsetenv("BRAID_CUDA_MODULE");
    unsetenv("BRAID_CUDA_CHUNK_BYTES");
  }
};

const DeviceMemory* openOrFail() {
  const DeviceMemory* device = nullptr;
  std::string why;
  EXPECT_TRUE(DeviceMemory::open(&device, &why)) << why;
  return device;
}

// The whole matrix, groups of sends and receives included, at a smaller big
// count (every piece is a collective of its own).
MatrixOptions deviceMatrix() {
  MatrixOptions m;
  m.bigCount = size_t{1} << 18;
  return m;
}

RunOptions ranks(int n) {
  RunOptions o;
  o.nranks = n;
  o.sharedBytes = 64;
  o.limitSeconds = 150;
  return o;
}

TEST_P(DeviceBuffers, MatrixInline) {
  for (int n : {1, 2, 3}) {
    SCOPED_TRACE("ranks " + std::to_string(n));
    runRanks(ranks(n), [n](RankContext& ctx) {
      if (const DeviceMemory* device = openOrFail())
        runInline(buildMatrix(n, deviceMatrix()), ctx.comm, ctx.rank, n, ctx.shared, device);
    });
  }
}

TEST_P(DeviceBuffers, MatrixOnStream) {
  runRanks(ranks(4), [](RankContext& ctx) {
    if (const DeviceMemory* device = openOrFail())
      runOnStream(buildMatrix(4, deviceMatrix()), ctx.comm, ctx.rank, 4, ctx.shared, 16, device);
  });
}

// The matrix on a braid stream bound to a CUDA stream of this rank's own;
// hostToo: then again on host buffers.
void matrixOnBoundStream(RankContext& ctx, const MatrixOptions& matrix, bool hostToo) {
  const DeviceMemory* device = openOrFail();
  if (!device) return;
  void* cudaStream = device->createStream();
  braidStream_t bound = nullptr;
  ASSERT_EQ(braidStreamWrapCuda(cudaStream, &bound), braidSuccess) << braidGetLastError(nullptr);
  MatrixOptions m = matrix;
  runOnStream(buildMatrix(ctx.nranks, m), ctx.comm, ctx.rank, ctx.nranks, ctx.shared, 16, device, bound);
  if (hostToo) {
    m.bigCount = 0;
    runOnStream(buildMatrix(ctx.nranks, m), ctx.comm, ctx.rank, ctx.nranks, ctx.shared, 16, nullptr, bound);
  }
  EXPECT_EQ(braidStreamDestroy(bound), braidSuccess);
  device->synchronize(cudaStream);
  device->destroyStream(cudaStream);
}

// The matrix again on a braid stream bound to a CUDA stream: host and device
// buffers both go through the binding's ordering.
TEST_P(DeviceBuffers, MatrixOnCudaBoundStream) {
  runRanks(ranks(3), [](RankContext& ctx) { matrixOnBoundStream(ctx, deviceMatrix(), true); });
}

// Work queued on the CUDA stream before the collective is its input; work
// queued after it sees its output; the host thread syncs once, at the end.
// On a GPU the producer and consumer are kernels (the module's float sum).
void orderedAllReduce(RankContext& ctx, size_t count) {
  const DeviceMemory* device = openOrFail();
  if (!device) return;
  const int n = ctx.nranks, r = ctx.rank;
  std::vector<float> a(count), b(count), got(count, -1.0f);
  for (size_t i = 0; i < count; ++i) {
    a[i] = static_cast<float>(r + 1);
    b[i] = static_cast<float>(i % 97);
  }
  auto* da = static_cast<float*>(device->alloc(count * sizeof(float)));
  auto* db = static_cast<float*>(device->alloc(count * sizeof(float)));
  auto* in = static_cast<float*>(device->alloc(count * sizeof(float)));
  auto* out = static_cast<float*>(device->alloc(count * sizeof(float)));
  auto* twice = static_cast<float*>(device->alloc(count * sizeof(float)));
  void* cudaStream = device->createStream();
  braidStream_t bound = nullptr;
  ASSERT_EQ(braidStreamWrapCuda(cudaStream, &bound), braidSuccess) << braidGetLastError(nullptr);
  device->copyAsync(da, a.data(), count * sizeof(float), cudaStream);
  device->copyAsync(db, b.data(), count * sizeof(float), cudaStream);
  // in = a + b, by a kernel where there is one.
  const bool kernels = device->addFloats(in, da, db, count, cudaStream);
  if (!kernels) {
    std::vector<float> sum(count);
    for (size_t i = 0; i < count; ++i) sum[i] = a[i] + b[i];
    device->copyAsync(in, sum.data(), count * sizeof(float), cudaStream);
  }
  ASSERT_EQ(braidAllReduce(in, out, count, braidFloat32, braidSum, ctx.comm, bound), braidSuccess)
      << braidGetLastError(ctx.comm);
  // twice = out + out: reads the collective's output on the CUDA stream.
  const float* result = out;
  if (kernels && device->addFloats(twice, out, out, count, cudaStream)) result = twice;
  device->copyAsync(got.data(), result, count * sizeof(float), cudaStream);
  device->synchronize(cudaStream);
  const float ranksSum = static_cast<float>(n * (n + 1) / 2);
  for (size_t i = 0; i < count; ++i) {
    const float want =
        (ranksSum + static_cast<float>(n) * static_cast<float>(i % 97)) * (result == twice ? 2 : 1);
    ASSERT_EQ(got[i], want) << "element " << i << " on rank " << r;
  }
  EXPECT_EQ(braidStreamSynchronize(bound), braidSuccess) << braidGetLastError(ctx.comm);
  EXPECT_EQ(braidStreamDestroy(bound), braidSuccess);
  fprintf(stderr, "rank %d: the CUDA stream waited by %s%s\n", r, device->flagWaitMechanism().c_str(),
          kernels ? ", kernels on both sides" : "");
  device->destroyStream(cudaStream);
  for (void* p : {static_cast<void*>(da), static_cast<void*>(db), static_cast<void*>(in),
                  static_cast<void*>(out), static_cast<void*>(twice)})
    device->release(p);
}

TEST_P(DeviceBuffers, CudaStreamOrdersTheCollective) {
  runRanks(ranks(2), [](RankContext& ctx) { orderedAllReduce(ctx, (size_t{1} << 20) + 3); });
}

TEST_P(DeviceBuffers, CudaStreamOrdersTheCollectiveWithHostFunctions) {
  setenv("BRAID_CUDA_FLAG_WAIT", "hostfn", 1);
  runRanks(ranks(2), [](RankContext& ctx) { orderedAllReduce(ctx, 4099); });
  unsetenv("BRAID_CUDA_FLAG_WAIT");
}

// Input on the device, output in host memory (and the reverse): each side
// is staged on its own.
TEST_P(DeviceBuffers, MixedHostAndDeviceSides) {
  runRanks(ranks(2), [](RankContext& ctx) {
    const DeviceMemory* device = openOrFail();
    if (!device) return;
    const size_t count = 5000;
    std::vector<int32_t> host(count), result(count, 0);
    for (size_t i = 0; i < count; ++i) host[i] = static_cast<int32_t>(i) * (ctx.rank + 1);
    void* d = device->alloc(count * sizeof(int32_t));
    device->copy(d, host.data(), count * sizeof(int32_t));
    ASSERT_EQ(braidAllReduce(d, result.data(), count, braidInt32, braidSum, ctx.comm, nullptr), braidSuccess)
        << braidGetLastError(ctx.comm);
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(result[i], static_cast<int32_t>(i) * 3) << i;
    ASSERT_EQ(braidAllReduce(host.data(), d, count, braidInt32, braidMax, ctx.comm, nullptr), braidSuccess)
        << braidGetLastError(ctx.comm);
    device->copy(result.data(), d, count * sizeof(int32_t));
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(result[i], static_cast<int32_t>(i) * 2) << i;
    device->release(d);
  });
}

// A group mixing device and host buffers, on a CUDA-bound stream: the
// members' staging is taken at the calls, the copies run around the fused op.
TEST_P(DeviceBuffers, GroupsMixDeviceAndHostBuffersOnABoundStream) {
  runRanks(ranks(3), [](RankContext& ctx) {
    const DeviceMemory* device = openOrFail();
    if (!device) return;
    const int n = ctx.nranks, r = ctx.rank;
    const size_t count = 3001;
    std::vector<int32_t> mine(count), fromHost(n * count, -1), fromDevice(n * count, -1);
    for (size_t i = 0; i < count; ++i) mine[i] = static_cast<int32_t>(i) * 10 + r;
    void* send = device->alloc(count * sizeof(int32_t));
    void* recv = device->alloc(n * count * sizeof(int32_t));
    device->copy(send, mine.data(), count * sizeof(int32_t));
    void* cudaStream = device->createStream();
    braidStream_t bound = nullptr;
    ASSERT_EQ(braidStreamWrapCuda(cudaStream, &bound), braidSuccess) << braidGetLastError(nullptr);
    // Every rank sends its device buffer to every rank twice: once into a
    // device buffer, once into host memory.
    ASSERT_EQ(braidGroupStart(), braidSuccess);
    for (int q = 0; q < n; ++q) {
      EXPECT_EQ(braidSend(send, count, braidInt32, q, ctx.comm, bound), braidSuccess)
          << braidGetLastError(ctx.comm);
      EXPECT_EQ(braidSend(mine.data(), count, braidInt32, q, ctx.comm, bound), braidSuccess);
    }
    for (int p = 0; p < n; ++p) {
      EXPECT_EQ(braidRecv(static_cast<int32_t*>(recv) + p * count, count, braidInt32, p, ctx.comm, bound),
                braidSuccess)
          << braidGetLastError(ctx.comm);
      EXPECT_EQ(braidRecv(fromHost.data() + p * count, count, braidInt32, p, ctx.comm, bound), braidSuccess);
    }
    ASSERT_EQ(braidGroupEnd(), braidSuccess) << braidGetLastError(nullptr);
    ASSERT_EQ(braidStreamSynchronize(bound), braidSuccess) << braidGetLastError(ctx.comm);
    device->copyAsync(fromDevice.data(), recv, n * count * sizeof(int32_t), cudaStream);
    device->synchronize(cudaStream);
    for (int p = 0; p < n; ++p)
      for (size_t i = 0; i < count; ++i) {
        const int32_t want = static_cast<int32_t>(i) * 10 + p;
        ASSERT_EQ(fromDevice[p * count + i], want) << "from rank " << p << " element " << i;
        ASSERT_EQ(fromHost[p * count + i], want) << "from rank " << p << " element " << i;
      }
    EXPECT_EQ(braidStreamDestroy(bound), braidSuccess);
    device->destroyStream(cudaStream);
    device->release(send);
    device->release(recv);
  });
}

// Collectives between ranks of one host go device to device over CUDA IPC
// (core/device_direct.h). BRAID_CUDA_IPC=require turns a fallback to staging
// into an error, so the matrix's all-reduces, reduces, broadcasts,
// all-gathers, reduce-scatters and all-to-alls (every dtype, op, root and
// count, in place and not, inline and on a braid stream) must have gone that
// way; small workspaces cut the bigger counts into many chunks and uneven
// slices. The fake module
// maps its "device memory" between processes like IPC and reduces with the
// CPU kernels.
class IpcEnv {
 public:
  IpcEnv() {
    setenv("BRAID_CUDA_IPC", "require", 1);
    setenv("BRAID_CUDA_IPC_CHUNK_BYTES", "16384", 1);
    setenv("BRAID_CUDA_IPC_MIN_BYTES", "0", 1);
  }
  ~IpcEnv() {
    for (const char* v : {"BRAID_CUDA_IPC", "BRAID_CUDA_IPC_CHUNK_BYTES", "BRAID_CUDA_IPC_MIN_BYTES"})
      unsetenv(v);
  }
};

// The big count of the IPC matrices: 12289 = 3 * 4096 + 1 elements (48 KiB
// of floats) spans several 16 KiB workspace chunks and ends in a short one,
// and splits unevenly between 2 or 3 ranks. Each chunk costs the ranks a few
// barriers, so the staging matrices' 2^18 (hundreds of chunks a call) would
// only repeat the same steps: with it this test took 38 s of CI's time.
MatrixOptions ipcMatrix() {
  MatrixOptions m;
  m.bigCount = 3 * 4096 + 1;
  return m;
}

TEST_P(DeviceBuffers, CollectivesGoDeviceToDeviceOverIpc) {
  IpcEnv ipc;
  for (int n : {2, 3}) {
    SCOPED_TRACE("ranks " + std::to_string(n));
    runRanks(ranks(n), [n](RankContext& ctx) {
      if (const DeviceMemory* device = openOrFail())
        runInline(buildMatrix(n, ipcMatrix()), ctx.comm, ctx.rank, n, ctx.shared, device);
    });
  }
  runRanks(ranks(3), [](RankContext& ctx) {
    if (const DeviceMemory* device = openOrFail())
      runOnStream(buildMatrix(3, ipcMatrix()), ctx.comm, ctx.rank, 3, ctx.shared, 16, device);
  });
}

// On a CUDA-bound stream (BRAID_CUDA_IPC_BOUND's default, set here so that
// the test says what it runs): on an H200 one rank once hung this way, before
// the kernels were loaded at setup (core/device_direct.cc).
TEST_P(DeviceBuffers, CollectivesGoDeviceToDeviceOnABoundStream) {
  IpcEnv ipc;
  setenv("BRAID_CUDA_IPC_BOUND", "1", 1);
  runRanks(ranks(3), [](RankContext& ctx) { matrixOnBoundStream(ctx, ipcMatrix(), false); });
  runRanks(ranks(2), [](RankContext& ctx) { orderedAllReduce(ctx, (size_t{1} << 20) + 3); });
  unsetenv("BRAID_CUDA_IPC_BOUND");
}

// One rank that cannot export its workspace (the fake refuses IPC there):
// every rank learns it at the same call, refuses under require, and the
// communicator still runs collectives.
TEST_P(DeviceBuffers, DeviceDirectSetUpIsAgreed) {
  if (GetParam() == Module::kReal) GTEST_SKIP() << "the fake module decides which rank refuses";
  IpcEnv ipc;
  runRanks(ranks(3), [](RankContext& ctx) {
    const DeviceMemory* device = openOrFail();
    if (!device) return;
    if (ctx.rank == 1) setenv("BRAID_FAKE_CUDA_NO_IPC", "1", 1);
    void* d = device->alloc(64 * sizeof(float));
    EXPECT_EQ(braidAllReduce(d, d, 64, braidFloat32, braidSum, ctx.comm, nullptr), braidNotSupported);
    const std::string why = braidGetLastError(ctx.comm);
    EXPECT_NE(why.find("BRAID_CUDA_IPC=require"), std::string::npos) << why;
    std::vector<int32_t> v(16, ctx.rank + 1);
    ASSERT_EQ(braidAllReduce(v.data(), v.data(), v.size(), braidInt32, braidSum, ctx.comm, nullptr),
              braidSuccess)
        << braidGetLastError(ctx.comm);
    EXPECT_EQ(v[0], 6);
    device->release(d);
  });
}

// Encodes and decodes the fake module has run in this process; -1 where it
// is not loaded (the real module runs kernels, which nothing here counts).
long fakeCodings() {
  void* module = dlopen(fakeCudaModulePath().c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (module == nullptr) return -1;
  auto count = reinterpret_cast<long (*)()>(dlsym(module, "braidFakeCudaCodings"));
  const long v = count ? count() : -1;
  dlclose(module);
  return v;
}

// Values over many binades, both signs, some zeros, differing per rank and
// block, as float32 or cut to bf16.
std::vector<uint8_t> quantizedInput(size_t count, braidDataType_t t, int rank) {
  const size_t es = t == braidFloat32 ? 4 : 2;
  std::vector<uint8_t> out(count * es);
  for (size_t i = 0; i < count; ++i) {
    const float v = i % 17 == 0
                        ? 0.0f
                        : std::ldexp(static_cast<float>((i * 7919 + rank * 104729) % 1000) / 1000.0f - 0.5f,
                                     static_cast<int>((i / 13 + rank) % 40) - 20);
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    if (es == 4)
      std::memcpy(&out[4 * i], &bits, 4);
    else {
      const uint16_t h = static_cast<uint16_t>(bits >> 16);
      std::memcpy(&out[2 * i], &h, 2);
    }
  }
  return out;
}

// One rank's quantized all-to-all and all-gather on device buffers against
// the same calls on host buffers, bit for bit; the device calls inline
// (stream null) or on `stream`. *codings: how many encodes and decodes the
// fake module ran for them.
void quantizedOnDeviceMatchesHost(RankContext& ctx, const DeviceMemory& device, braidDataType_t t,
                                  braidCodec_t codec, braidStream_t stream, long* codings) {
  const int n = ctx.nranks;
  const size_t count = 1000;  // three fp8 blocks of 256 and a short one
  const size_t es = t == braidFloat32 ? 4 : 2;
  const std::vector<uint8_t> send = quantizedInput(n * count, t, ctx.rank);
  std::vector<uint8_t> want(n * count * es), got(n * count * es, 0xEE);
  void* dsend = device.alloc(send.size());
  void* drecv = device.alloc(got.size());
  device.copy(dsend, send.data(), send.size());
  const long before = fakeCodings();

  ASSERT_EQ(braidAllToAllQuantized(send.data(), want.data(), count, t, codec, ctx.comm, nullptr),
            braidSuccess)
      << braidGetLastError(ctx.comm);
  ASSERT_EQ(braidAllToAllQuantized(dsend, drecv, count, t, codec, ctx.comm, stream), braidSuccess)
      << braidGetLastError(ctx.comm);
  if (stream) {
    ASSERT_EQ(braidStreamSynchronize(stream), braidSuccess) << braidGetLastError(ctx.comm);
  }
  device.copy(got.data(), drecv, got.size());
  EXPECT_TRUE(got == want) << "all-to-all, codec " << codec << ", dtype " << t;

  ASSERT_EQ(braidAllGatherQuantized(send.data(), want.data(), count, t, codec, ctx.comm, nullptr),
            braidSuccess)
      << braidGetLastError(ctx.comm);
  ASSERT_EQ(braidAllGatherQuantized(dsend, drecv, count, t, codec, ctx.comm, stream), braidSuccess)
      << braidGetLastError(ctx.comm);
  if (stream) {
    ASSERT_EQ(braidStreamSynchronize(stream), braidSuccess) << braidGetLastError(ctx.comm);
  }
  device.copy(got.data(), drecv, got.size());
  EXPECT_TRUE(got == want) << "all-gather, codec " << codec << ", dtype " << t;

  *codings = fakeCodings() - before;
  device.release(dsend);
  device.release(drecv);
}

// Quantized all-to-all and all-gather of device buffers encode and decode
// on the device and stage only wire bytes: the bits of the host path, for
// every codec and host type, inline, on a braid stream and on one bound to
// a CUDA stream. With the fake module, the codings are counted: n encodes
// and n decodes for the all-to-all, one encode and n decodes for the
// all-gather; BRAID_CUDA_DEVICE_CODEC=0 codes on the CPU (none).
TEST_P(DeviceBuffers, QuantizedCallsCodeOnTheDevice) {
  const bool fake = GetParam() == Module::kFake;
  for (const char* setting : {"1", "0"}) {
    SCOPED_TRACE(std::string("BRAID_CUDA_DEVICE_CODEC=") + setting);
    setenv("BRAID_CUDA_DEVICE_CODEC", setting, 1);
    runRanks(ranks(3), [fake, setting](RankContext& ctx) {
      const DeviceMemory* device = openOrFail();
      if (!device) return;
      braidStream_t plain = nullptr, bound = nullptr;
      void* cudaStream = device->createStream();
      ASSERT_EQ(braidStreamCreate(&plain), braidSuccess) << braidGetLastError(nullptr);
      ASSERT_EQ(braidStreamWrapCuda(cudaStream, &bound), braidSuccess) << braidGetLastError(nullptr);
      for (braidStream_t stream : {braidStream_t{nullptr}, plain, bound})
        for (braidDataType_t t : {braidFloat32, braidBfloat16})
          for (braidCodec_t codec :
               {braidCodecFloat16, braidCodecBfloat16, braidCodecFloat8e4m3, braidCodecFloat8e5m2}) {
            long codings = 0;
            quantizedOnDeviceMatchesHost(ctx, *device, t, codec, stream, &codings);
            if (fake) {
              EXPECT_EQ(codings, std::string(setting) == "1" ? 3 * ctx.nranks + 1 : 0);
            }
          }
      EXPECT_EQ(braidStreamDestroy(plain), braidSuccess);
      EXPECT_EQ(braidStreamDestroy(bound), braidSuccess);
      device->destroyStream(cudaStream);
    });
  }
  unsetenv("BRAID_CUDA_DEVICE_CODEC");
}

INSTANTIATE_TEST_SUITE_P(Modules, DeviceBuffers, ::testing::Values(Module::kFake, Module::kReal),
                         [](const ::testing::TestParamInfo<Module>& p) {
                           return p.param == Module::kFake ? std::string("Fake") : std::string("Gpu");
                         });

}  // namespace
}  // namespace braid::itest
