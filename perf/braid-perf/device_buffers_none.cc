// device_buffers.h without CUDA: braid was configured without a CUDA toolkit
// (or with BRAID_CUDA=off), so --memory device cannot run; say so clearly.
#include "device_buffers.h"

namespace braid::perf::device {

namespace {
const std::string kNoCuda =
    "braid-perf was built without CUDA (configure braid with a CUDA toolkit, BRAID_CUDA=auto or on, "
    "for --memory device)";
}  // namespace

std::string select(int, std::string*) { return kNoCuda; }
std::string allocate(size_t, void**) { return kNoCuda; }
void release(void*) {}
std::string upload(void*, const void*, size_t) { return kNoCuda; }
std::string download(void*, const void*, size_t) { return kNoCuda; }
std::string streamCreate(void**) { return kNoCuda; }
std::string streamSynchronize(void*) { return kNoCuda; }
void streamDestroy(void*) {}

}  // namespace braid::perf::device
