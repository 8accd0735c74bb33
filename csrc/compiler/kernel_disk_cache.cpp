#include "compiler/kernel_disk_cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace nvfuser {

namespace {
constexpr const char* kEntrySuffix = ".kernel";
// A temporary file this old belongs to a writer that died: a live one
// renames its file within a second of creating it.
constexpr time_t kStaleTemporarySeconds = 3600;

void warn(const std::string& message) {
  std::cerr << "nvfuser: warning: " << message << std::endl;
}

bool isEntryName(const std::string& name) {
  const std::string suffix = kEntrySuffix;
  const size_t hexDigits = 2 * sizeof(Sha256Digest);
  if (name.size() != hexDigits + suffix.size() ||
      name.compare(hexDigits, suffix.size(), suffix) != 0) {
    return false;
  }
  return std::all_of(name.begin(), name.begin() + hexDigits, [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
}

struct EntryFile {
  std::string name;
  uint64_t bytes = 0;
  timespec modified = {};
};

bool lessRecentlyUsed(const EntryFile& a, const EntryFile& b) {
  if (a.modified.tv_sec != b.modified.tv_sec) {
    return a.modified.tv_sec < b.modified.tv_sec;
  }
  if (a.modified.tv_nsec != b.modified.tv_nsec) {
    return a.modified.tv_nsec < b.modified.tv_nsec;
  }
  return a.name < b.name;  // deterministic among equal times
}

// Our entries in the directory (regular files of ours with entry names;
// anything else is left alone and not counted). Removes temporary files
// that writers which died left behind.
std::vector<EntryFile> scanEntries(int dirFd) {
  std::vector<EntryFile> entries;
  // A descriptor of its own: duplicates share readdir's position.
  const int listFd = openat(dirFd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (listFd < 0) {
    return entries;
  }
  DIR* listing = fdopendir(listFd);
  if (listing == nullptr) {
    close(listFd);
    return entries;
  }
  const time_t now = std::time(nullptr);
  while (const dirent* found = readdir(listing)) {
    const std::string name = found->d_name;
    const bool isEntry = isEntryName(name);
    if (!isEntry && !isTemporaryFileName(name)) {
      continue;
    }
    struct stat st;
    if (fstatat(dirFd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
      continue;
    }
    if (!isEntry) {
      if (now - st.st_mtime > kStaleTemporarySeconds) {
        unlinkat(dirFd, name.c_str(), 0);
      }
      continue;
    }
    entries.push_back({name, static_cast<uint64_t>(st.st_size), st.st_mtim});
  }
  closedir(listing);
  return entries;
}

// NVFUSER_CACHE_MAX_BYTES: a positive number of bytes; `why` says what was
// wrong with anything else.
uint64_t parseMaxBytes(const char* text, std::string* why) {
  if (text == nullptr || *text == '\0') {
    return KernelDiskCache::kDefaultMaxBytes;
  }
  const std::string value = text;
  const bool digits = std::all_of(value.begin(), value.end(),
                                  [](char c) { return c >= '0' && c <= '9'; });
  errno = 0;
  const unsigned long long parsed =
      digits ? std::strtoull(value.c_str(), nullptr, 10) : 0;
  if (!digits || errno == ERANGE || parsed == 0) {
    *why = "NVFUSER_CACHE_MAX_BYTES='" + value +
           "' is not a positive number of bytes; using " +
           std::to_string(KernelDiskCache::kDefaultMaxBytes);
    return KernelDiskCache::kDefaultMaxBytes;
  }
  return parsed;
}
}  // namespace

KernelDiskCache::KernelDiskCache(const std::string& dir, uint64_t maxBytes)
    : dir_(dir), maxBytes_(maxBytes) {
  dirFd_ = openPrivateDirectory(dir, &unusableReason_);
  if (!usable()) {
    warn("not using the kernel cache directory '" + dir + "': " +
         unusableReason_ + "; kernels are compiled without the disk cache");
  }
}

KernelDiskCache* KernelDiskCache::fromEnvironment() {
  const char* dir = std::getenv("NVFUSER_CACHE_DIR");
  if (dir == nullptr || *dir == '\0') {
    return nullptr;
  }
  std::string limitProblem;
  const uint64_t maxBytes =
      parseMaxBytes(std::getenv("NVFUSER_CACHE_MAX_BYTES"), &limitProblem);
  // Lives as long as the process; bounded by the settings it ever sees.
  static std::mutex mutex;
  static std::map<std::pair<std::string, uint64_t>,
                  std::unique_ptr<KernelDiskCache>>
      caches;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<KernelDiskCache>& cache = caches[{dir, maxBytes}];
  if (cache == nullptr) {
    if (!limitProblem.empty()) {
      warn(limitProblem);
    }
    cache = std::make_unique<KernelDiskCache>(dir, maxBytes);
  }
  return cache.get();
}

std::string KernelDiskCache::entryName(const Sha256Digest& key) {
  return toHex(key) + kEntrySuffix;
}

std::optional<KernelCacheEntry> KernelDiskCache::load(const Sha256Digest& key) {
  if (!usable()) {
    return std::nullopt;
  }
  const std::string name = entryName(key);
  OwnedFile file = readOwnedFile(dirFd_.get(), name, kMaxEntryBytes);
  if (file.outcome == OwnedFile::Outcome::Missing) {
    ++misses_;
    return std::nullopt;
  }
  std::string problem = file.reason;
  if (file.outcome == OwnedFile::Outcome::Read) {
    DecodedKernelCacheEntry decoded = decodeKernelCacheEntry(file.bytes, key);
    if (decoded.entry) {
      // Makes it the most recently used entry for eviction.
      futimens(file.fd.get(), nullptr);
      ++hits_;
      return std::move(decoded.entry);
    }
    problem = decoded.reason;
  }
  reject(name + ": " + problem);
  // Only a regular file of ours goes; the next store replaces anything else
  // by rename.
  removeIfSameFile(dirFd_.get(), name, file.info);
  return std::nullopt;
}

void KernelDiskCache::store(const Sha256Digest& key,
                            const KernelCacheEntry& entry) {
  if (!usable()) {
    return;
  }
  const std::vector<char> bytes = encodeKernelCacheEntry(key, entry);
  std::string problem;
  if (bytes.size() > kMaxEntryBytes) {
    problem = "an entry of " + std::to_string(bytes.size()) +
              " bytes is over the limit of " + std::to_string(kMaxEntryBytes);
  } else if (replaceFile(dirFd_.get(), entryName(key), bytes, tempCounter_++,
                         &problem)) {
    ++writes_;
    evictOverLimit();
    return;
  }
  ++writeFailures_;
  warnWriteFailure(problem);
}

void KernelDiskCache::evictOverLimit() {
  std::lock_guard<std::mutex> lock(evictMutex_);
  std::vector<EntryFile> entries = scanEntries(dirFd_.get());
  uint64_t total = 0;
  for (const EntryFile& e : entries) {
    total += e.bytes;
  }
  if (total <= maxBytes_) {
    return;
  }
  std::sort(entries.begin(), entries.end(), lessRecentlyUsed);
  for (const EntryFile& e : entries) {
    if (total <= maxBytes_) {
      break;
    }
    if (unlinkat(dirFd_.get(), e.name.c_str(), 0) == 0) {
      ++evictions_;
      total -= e.bytes;
    } else if (errno == ENOENT) {
      total -= e.bytes;  // another process evicted it
    }
  }
}

void KernelDiskCache::reject(const std::string& reason) {
  ++rejected_;
  std::lock_guard<std::mutex> lock(mutex_);
  lastRejection_ = reason;
}

void KernelDiskCache::warnWriteFailure(const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!warnedWriteFailure_) {
    warnedWriteFailure_ = true;
    warn("could not write to the kernel cache directory '" + dir_ +
         "': " + reason + " (further failures are not reported)");
  }
}

KernelDiskCache::Stats KernelDiskCache::stats() const {
  Stats s;
  s.hits = hits_;
  s.misses = misses_;
  s.rejected = rejected_;
  s.writes = writes_;
  s.writeFailures = writeFailures_;
  s.evictions = evictions_;
  return s;
}

std::string KernelDiskCache::lastRejection() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lastRejection_;
}

}  // namespace nvfuser
