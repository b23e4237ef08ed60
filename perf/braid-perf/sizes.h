// Message sizes: parsing "128M" and walking the sweep as nccl-tests does.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace braid::perf {

// "8", "64K", "128M", "1G" (powers of 1024, as nccl-tests; lower case too; a
// trailing "B" or "iB" is accepted). std::nullopt on anything else or overflow.
std::optional<size_t> parseSize(const std::string& text);

// minBytes, then times stepFactor when stepFactor > 1, else plus stepBytes,
// while <= maxBytes. Empty when min > max or when neither step can advance.
std::vector<size_t> sizeSweep(size_t minBytes, size_t maxBytes, size_t stepFactor, size_t stepBytes);

}  // namespace braid::perf
