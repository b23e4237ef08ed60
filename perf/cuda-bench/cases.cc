#include "cases.h"

#include <algorithm>

#include "kernels/codec.h"

namespace braid::cudabench {

namespace {

bool wanted(const Options& o, const char* kernel) {
  return std::find(o.kernels.begin(), o.kernels.end(), kernel) != o.kernels.end();
}

void addReduceAndDivide(std::vector<Case>& out, const Options& o, const kernels::DeviceModule& m,
                        const Buffers& buf, cudaStream_t s) {
  for (int t = 0; t < kNumDataTypes; ++t) {
    const DataType type = static_cast<DataType>(t);
    const size_t count = buf.bytes() / dataTypeSize(type), bytes = count * dataTypeSize(type);
    uint8_t *a = buf.a(), *b = buf.b(), *d = buf.d();
    if (wanted(o, "reduce")) {
      for (int op = 0; op < kNumRedOps; ++op) {
        Case c{"reduce", dataTypeName(type), redOpName(static_cast<RedOp>(op)), 3 * bytes, type, {}, {}, {}};
        c.launch = [&m, a, b, d, count, t, op, s] { return m.reduce(d, a, b, count, t, op, s); };
        out.push_back(std::move(c));
      }
    }
    if (wanted(o, "divide")) {
      Case c{"divide", dataTypeName(type), "-", 2 * bytes, type, {}, {}, {}};
      // In place: every repetition starts again from a's values, so that it
      // does not time division of ever smaller numbers.
      c.before = [a, d, bytes, s] {
        return static_cast<int>(cudaMemcpyAsync(d, a, bytes, cudaMemcpyDeviceToDevice, s));
      };
      const uint64_t divisor = o.divisor;
      c.launch = [&m, d, count, t, divisor, s] { return m.divide(d, count, t, divisor, s); };
      out.push_back(std::move(c));
    }
  }
}

void addCodecs(std::vector<Case>& out, const Options& o, const kernels::DeviceModule& m, const Buffers& buf,
               cudaStream_t s) {
  for (DataType host : {DataType::kFloat32, DataType::kBfloat16}) {
    for (int f = 0; f < kernels::kNumWireFormats; ++f) {
      kernels::CodecParams p;
      p.format = static_cast<kernels::WireFormat>(f);
      p.hostType = host;
      p.lossScale = p.format == kernels::WireFormat::kFloat16 ? o.lossScale : 1.0f;
      p.blockSize = o.fp8Block;
      const kernels::DeviceCodec dc{f, static_cast<int>(host), p.lossScale, p.blockSize};
      const size_t count = buf.bytes() / dataTypeSize(host);
      const size_t traffic = count * dataTypeSize(host) + kernels::encodedBytes(p, count);
      const std::string format = kernels::wireFormatName(p.format);
      uint8_t *a = buf.a(), *b = buf.b(), *d = buf.d();
      if (wanted(o, "encode")) {
        Case c{"encode", dataTypeName(host), format, traffic, host, {}, {}, {}};
        c.launch = [&m, dc, a, d, count, s] { return m.encode(&dc, a, count, d, s); };
        out.push_back(std::move(c));
      }
      if (wanted(o, "decode")) {
        Case c{"decode", dataTypeName(host), format, traffic, host, {}, {}, {}};
        // The wire in b: a's values encoded by the module itself.
        c.setup = [&m, dc, a, b, count, s] {
          const int err = m.encode(&dc, a, count, b, s);
          return err ? err : static_cast<int>(cudaStreamSynchronize(s));
        };
        c.launch = [&m, dc, b, d, count, s] { return m.decode(&dc, b, count, d, s); };
        out.push_back(std::move(c));
      }
    }
  }
}

}  // namespace

Case copyCase(const Buffers& buf, cudaStream_t s) {
  uint8_t *a = buf.a(), *d = buf.d();
  const size_t bytes = buf.bytes();
  Case c{"copy", "-", "-", 2 * bytes, DataType::kUint8, {}, {}, {}};
  c.launch = [a, d, bytes, s] {
    return static_cast<int>(cudaMemcpyAsync(d, a, bytes, cudaMemcpyDeviceToDevice, s));
  };
  return c;
}

std::vector<Case> moduleCases(const Options& o, const kernels::DeviceModule& m, const Buffers& buf,
                              cudaStream_t s) {
  std::vector<Case> out;
  addReduceAndDivide(out, o, m, buf, s);
  addCodecs(out, o, m, buf, s);
  return out;
}

}  // namespace braid::cudabench
