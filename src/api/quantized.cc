// C entry points of the quantized collectives: check the codec and its
// config, then run the exchange collective with the codec attached.
#include <braid/braid.h>

#include <optional>
#include <string>

#include "api/exchange.h"
#include "api/handles.h"

namespace {

using braid::Status;
using braid::kernels::CodecParams;
using braid::kernels::WireFormat;

// *params: the codec to use, or std::nullopt for braidCodecNone (the plain
// collective). Checked before anything else so bad settings change nothing.
Status codecFor(const char* fn, braidDataType_t t, braidCodec_t codec, const braidQuantConfig_t* config,
                std::optional<CodecParams>* params) {
  const std::string f(fn);
  if (t != braidFloat32 && t != braidBfloat16)
    return braid::invalidArgument(f + ": datatype " + std::to_string(static_cast<int>(t)) +
                                  " cannot be quantized (braidFloat32 or braidBfloat16 only)");
  if (codec < braidCodecNone || codec >= braidNumCodecs)
    return braid::invalidArgument(f + ": unknown codec " + std::to_string(static_cast<int>(codec)));
  braidQuantConfig_t defaults = BRAID_QUANT_CONFIG_INITIALIZER;
  if (config) {
    if (config->size < sizeof(braidQuantConfig_t) || config->magic != BRAID_QUANT_CONFIG_MAGIC ||
        config->version < 1 || config->version > BRAID_QUANT_CONFIG_VERSION)
      return braid::invalidArgument(f + ": config was not made from BRAID_QUANT_CONFIG_INITIALIZER "
                                        "(size, magic or version is wrong)");
    defaults = *config;
  }
  if (codec == braidCodecNone) {
    params->reset();
    return Status::ok();
  }
  CodecParams p;
  p.format = static_cast<WireFormat>(static_cast<int>(codec) - 1);
  p.hostType = static_cast<braid::DataType>(t);
  p.lossScale = defaults.lossScale;
  p.blockSize = defaults.blockSize == 0 ? braid::kernels::kDefaultFp8BlockSize : defaults.blockSize;
  Status valid = braid::kernels::checkCodecParams(p);
  if (!valid.isOk()) return braid::invalidArgument(f + ": " + valid.message());
  *params = p;
  return Status::ok();
}

const CodecParams* ptr(const std::optional<CodecParams>& p) { return p ? &*p : nullptr; }

Status allToAllQ(const void* s, void* r, size_t count, braidDataType_t t, braidCodec_t codec,
                 const braidQuantConfig_t* config, braidComm_t comm, braidStream_t stream, const char* fn) {
  std::optional<CodecParams> p;
  BRAID_RETURN_IF_ERROR(codecFor(fn, t, codec, config, &p));
  return braid::api::allToAll(fn, s, r, count, t, ptr(p), comm, stream);
}

Status allToAllvQ(const void* s, const size_t sc[], const size_t sd[], void* r, const size_t rc[],
                  const size_t rd[], braidDataType_t t, braidCodec_t codec, const braidQuantConfig_t* config,
                  braidComm_t comm, braidStream_t stream, const char* fn) {
  std::optional<CodecParams> p;
  BRAID_RETURN_IF_ERROR(codecFor(fn, t, codec, config, &p));
  return braid::api::allToAllv(fn, s, sc, sd, r, rc, rd, t, ptr(p), comm, stream);
}

Status allGatherQ(const void* s, void* r, size_t count, braidDataType_t t, braidCodec_t codec,
                  const braidQuantConfig_t* config, braidComm_t comm, braidStream_t stream, const char* fn) {
  std::optional<CodecParams> p;
  BRAID_RETURN_IF_ERROR(codecFor(fn, t, codec, config, &p));
  return braid::api::allGather(fn, s, r, count, t, ptr(p), comm, stream);
}

}  // namespace

namespace api = braid::api;

extern "C" {

braidResult_t braidAllToAllQuantized(const void* s, void* r, size_t count, braidDataType_t t, braidCodec_t codec,
                                     braidComm_t comm, braidStream_t stream) {
  api::CommPin pin(comm);
  return api::report(comm, allToAllQ(s, r, count, t, codec, nullptr, comm, stream, "braidAllToAllQuantized"));
}
braidResult_t braidAllToAllQuantizedConfig(const void* s, void* r, size_t count, braidDataType_t t,
                                           braidCodec_t codec, const braidQuantConfig_t* config, braidComm_t comm,
                                           braidStream_t stream) {
  api::CommPin pin(comm);
  return api::report(comm, allToAllQ(s, r, count, t, codec, config, comm, stream, "braidAllToAllQuantizedConfig"));
}
braidResult_t braidAllToAllvQuantized(const void* s, const size_t sc[], const size_t sd[], void* r,
                                      const size_t rc[], const size_t rd[], braidDataType_t t, braidCodec_t codec,
                                      braidComm_t comm, braidStream_t stream) {
  api::CommPin pin(comm);
  return api::report(comm,
                     allToAllvQ(s, sc, sd, r, rc, rd, t, codec, nullptr, comm, stream, "braidAllToAllvQuantized"));
}
braidResult_t braidAllToAllvQuantizedConfig(const void* s, const size_t sc[], const size_t sd[], void* r,
                                            const size_t rc[], const size_t rd[], braidDataType_t t,
                                            braidCodec_t codec, const braidQuantConfig_t* config, braidComm_t comm,
                                            braidStream_t stream) {
  api::CommPin pin(comm);
  return api::report(
      comm, allToAllvQ(s, sc, sd, r, rc, rd, t, codec, config, comm, stream, "braidAllToAllvQuantizedConfig"));
}
braidResult_t braidAllGatherQuantized(const void* s, void* r, size_t count, braidDataType_t t, braidCodec_t codec,
                                      braidComm_t comm, braidStream_t stream) {
  api::CommPin pin(comm);
  return api::report(comm, allGatherQ(s, r, count, t, codec, nullptr, comm, stream, "braidAllGatherQuantized"));
}
braidResult_t braidAllGatherQuantizedConfig(const void* s, void* r, size_t count, braidDataType_t t,
                                            braidCodec_t codec, const braidQuantConfig_t* config, braidComm_t comm,
                                            braidStream_t stream) {
  api::CommPin pin(comm);
  return api::report(comm,
                     allGatherQ(s, r, count, t, codec, config, comm, stream, "braidAllGatherQuantizedConfig"));
}

}  // extern "C"
