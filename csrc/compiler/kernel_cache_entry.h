// The bytes of one on-disk kernel cache entry: a fixed header, then the
// cubin. The header echoes the entry's key and ends with a SHA-256 of the
// header before it and the payload, so a file is used only when every byte
// is what was written for that key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/sha256.h"

namespace nvfuser {

struct KernelCacheEntry {
  std::vector<char> payload;  // the cubin
  // ptxas' report, as CompiledKernel keeps it (-1: it did not say).
  int32_t registers = -1;
  int32_t spillBytes = -1;
};

// Changes whenever the layout or the meaning of an entry changes; it is
// part of every key too, so entries of other versions are never opened.
constexpr uint32_t kKernelCacheFormatVersion = 1;
// magic, version, registers, spills, payload length, key, checksum.
constexpr size_t kKernelCacheHeaderBytes = 8 + 4 + 4 + 4 + 8 + 32 + 32;

std::vector<char> encodeKernelCacheEntry(const Sha256Digest& key,
                                         const KernelCacheEntry& entry);

// The entry, when `bytes` is a whole, intact entry written for `key`.
struct DecodedKernelCacheEntry {
  std::optional<KernelCacheEntry> entry;
  std::string reason;  // why not, when there is no entry
};
DecodedKernelCacheEntry decodeKernelCacheEntry(const std::vector<char>& bytes,
                                               const Sha256Digest& key);

}  // namespace nvfuser
