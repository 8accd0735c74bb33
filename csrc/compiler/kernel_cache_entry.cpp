#include "compiler/kernel_cache_entry.h"

#include <algorithm>
#include <cstring>

namespace nvfuser {

namespace {
constexpr char kMagic[8] = {'N', 'V', 'F', 'K', 'E', 'R', 'N', 'L'};
constexpr size_t kChecksumOffset = kKernelCacheHeaderBytes - 32;
// ptxas never reports more registers per thread than an SM gives a thread;
// anything else came from somewhere other than ptxas.
constexpr int32_t kMaxRegisters = 255;

// Integers are stored little-endian byte by byte, so the format does not
// depend on the host.
void putUnsigned(char* at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    at[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  }
}

uint64_t getUnsigned(const std::vector<char>& in, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= uint64_t{static_cast<uint8_t>(in[at + i])} << (8 * i);
  }
  return v;
}

int32_t getInt32(const std::vector<char>& in, size_t at) {
  const auto bits = static_cast<uint32_t>(getUnsigned(in, at, 4));
  int32_t v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
}

Sha256Digest checksumOf(const std::vector<char>& bytes) {
  Sha256 hasher;
  hasher.update(bytes.data(), kChecksumOffset);
  hasher.update(bytes.data() + kKernelCacheHeaderBytes,
                bytes.size() - kKernelCacheHeaderBytes);
  return hasher.finish();
}

bool equalBytes(const std::vector<char>& bytes, size_t at,
                const Sha256Digest& d) {
  return std::memcmp(bytes.data() + at, d.data(), d.size()) == 0;
}

DecodedKernelCacheEntry rejected(std::string reason) {
  DecodedKernelCacheEntry d;
  d.reason = std::move(reason);
  return d;
}
}  // namespace

std::vector<char> encodeKernelCacheEntry(const Sha256Digest& key,
                                         const KernelCacheEntry& entry) {
  std::vector<char> out(kKernelCacheHeaderBytes + entry.payload.size());
  char* header = out.data();
  std::memcpy(header, kMagic, sizeof(kMagic));
  putUnsigned(header + 8, kKernelCacheFormatVersion, 4);
  putUnsigned(header + 12, static_cast<uint32_t>(entry.registers), 4);
  putUnsigned(header + 16, static_cast<uint32_t>(entry.spillBytes), 4);
  putUnsigned(header + 20, entry.payload.size(), 8);
  std::memcpy(header + 28, key.data(), key.size());
  std::copy(entry.payload.begin(), entry.payload.end(),
            out.begin() + kKernelCacheHeaderBytes);
  const Sha256Digest checksum = checksumOf(out);
  std::memcpy(header + kChecksumOffset, checksum.data(), checksum.size());
  return out;
}

DecodedKernelCacheEntry decodeKernelCacheEntry(const std::vector<char>& bytes,
                                               const Sha256Digest& key) {
  if (bytes.size() < kKernelCacheHeaderBytes) {
    return rejected("shorter than a header (" + std::to_string(bytes.size()) +
                    " bytes)");
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return rejected("not a kernel cache entry (bad magic)");
  }
  const uint64_t version = getUnsigned(bytes, 8, 4);
  if (version != kKernelCacheFormatVersion) {
    return rejected("format version " + std::to_string(version) +
                    ", expected " + std::to_string(kKernelCacheFormatVersion));
  }
  const uint64_t payloadBytes = getUnsigned(bytes, 20, 8);
  if (payloadBytes != bytes.size() - kKernelCacheHeaderBytes) {
    return rejected("payload length " + std::to_string(payloadBytes) +
                    " but the file holds " +
                    std::to_string(bytes.size() - kKernelCacheHeaderBytes));
  }
  if (!equalBytes(bytes, 28, key)) {
    return rejected("written for another key");
  }
  if (!equalBytes(bytes, kChecksumOffset, checksumOf(bytes))) {
    return rejected("checksum mismatch");
  }
  KernelCacheEntry entry;
  entry.registers = getInt32(bytes, 12);
  entry.spillBytes = getInt32(bytes, 16);
  if (entry.registers < -1 || entry.registers > kMaxRegisters ||
      entry.spillBytes < -1) {
    return rejected("implausible registers/spills in the header");
  }
  entry.payload.assign(bytes.begin() + kKernelCacheHeaderBytes, bytes.end());
  DecodedKernelCacheEntry d;
  d.entry = std::move(entry);
  return d;
}

}  // namespace nvfuser
