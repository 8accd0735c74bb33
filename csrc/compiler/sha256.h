// SHA-256 (FIPS 180-4). Names on-disk kernel cache entries and checks their
// bytes: a strong hash, so two different compiles never share a name and a
// damaged entry never passes for an intact one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace nvfuser {

using Sha256Digest = std::array<uint8_t, 32>;

// Incremental: update() any number of times, then finish() once.
class Sha256 {
 public:
  Sha256();

  void update(const void* data, size_t size);
  void update(const std::string& text) { update(text.data(), text.size()); }
  // The digest of everything added; the hasher is spent afterwards.
  Sha256Digest finish();

 private:
  void compressBlock(const uint8_t* block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> pending_{};
  size_t pendingBytes_ = 0;
  uint64_t totalBytes_ = 0;
};

Sha256Digest sha256(const void* data, size_t size);
inline Sha256Digest sha256(const std::string& text) {
  return sha256(text.data(), text.size());
}

// Lower-case hex, 64 characters.
std::string toHex(const Sha256Digest& digest);

}  // namespace nvfuser
