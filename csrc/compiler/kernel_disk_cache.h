// The on-disk kernel cache: one self-checking file per compiled kernel, in a
// directory that only the current user can write. A load returns bytes only
// after they match their key and checksum; it never follows a link, opens a
// FIFO or a device, or reads a file of unbounded size. A store never writes
// in place: it writes a new file and renames it over the entry's name.
// docs/security.md ("On-disk kernel cache") states what this guarantees.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "compiler/kernel_cache_entry.h"
#include "compiler/private_files.h"
#include "compiler/sha256.h"

namespace nvfuser {

class KernelDiskCache {
 public:
  static constexpr uint64_t kDefaultMaxBytes = uint64_t{1} << 30;
  // Larger files are never read, larger entries never written.
  static constexpr uint64_t kMaxEntryBytes = uint64_t{64} << 20;

  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;    // no file under the entry's name
    uint64_t rejected = 0;  // a file there failed a check (not a miss)
    uint64_t writes = 0;
    uint64_t writeFailures = 0;
    uint64_t evictions = 0;
  };

  // Uses `dir`, creating it (and missing parents) with mode 0700. When `dir`
  // is a symbolic link, not a directory, not owned by the effective user or
  // writable by its group or others, it is refused: one warning on stderr,
  // then every load misses and every store does nothing.
  explicit KernelDiskCache(const std::string& dir,
                           uint64_t maxBytes = kDefaultMaxBytes);
  KernelDiskCache(const KernelDiskCache&) = delete;
  KernelDiskCache& operator=(const KernelDiskCache&) = delete;

  // The process' cache of $NVFUSER_CACHE_DIR, holding at most
  // $NVFUSER_CACHE_MAX_BYTES; nullptr when NVFUSER_CACHE_DIR is unset or
  // empty. One instance per (directory, limit), so each warns once.
  static KernelDiskCache* fromEnvironment();

  bool usable() const { return dirFd_.valid(); }
  // Why the directory was refused ("" when usable).
  const std::string& unusableReason() const { return unusableReason_; }
  const std::string& dir() const { return dir_; }
  uint64_t maxBytes() const { return maxBytes_; }

  // The verified entry stored for `key`; nullopt when there is none or the
  // file there fails a check (a regular file of ours is then removed).
  std::optional<KernelCacheEntry> load(const Sha256Digest& key);
  // Stores `entry` under `key`, then removes least recently used entries
  // while the directory holds more than maxBytes(). Failures are counted
  // (and the first one warned about), never thrown.
  void store(const Sha256Digest& key, const KernelCacheEntry& entry);

  Stats stats() const;
  // Why the last rejected file was rejected ("" when none was).
  std::string lastRejection() const;

  // The file name of `key`'s entry inside dir().
  static std::string entryName(const Sha256Digest& key);

 private:
  void reject(const std::string& reason);
  void warnWriteFailure(const std::string& reason);
  void evictOverLimit();

  const std::string dir_;
  const uint64_t maxBytes_;
  FileDescriptor dirFd_;  // every file operation is relative to it
  std::string unusableReason_;
  std::atomic<uint64_t> tempCounter_{0};

  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
  std::atomic<uint64_t> rejected_{0};
  std::atomic<uint64_t> writes_{0};
  std::atomic<uint64_t> writeFailures_{0};
  std::atomic<uint64_t> evictions_{0};

  mutable std::mutex mutex_;  // guards the two members below
  std::string lastRejection_;
  bool warnedWriteFailure_ = false;
  std::mutex evictMutex_;  // one eviction scan at a time per instance
};

}  // namespace nvfuser
