// The on-disk kernel cache (compiler/kernel_disk_cache): what it guarantees
// against whoever else can put files in its directory, and that
// compileWithNvrtc uses it (docs/security.md names these tests).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "../scoped_env.h"
#include "compiler/kernel_cache_entry.h"
#include "compiler/kernel_disk_cache.h"
#include "compiler/nvrtc_compiler.h"
#include "options.h"

namespace nvfuser {

namespace {
namespace fs = std::filesystem;

const char* const kKernel =
    "extern \"C\" __global__ void k(float* p) { p[0] = 1.f; }";

Sha256Digest keyOf(int i) {
  return sha256("key " + std::to_string(i));
}

KernelCacheEntry entryOf(size_t bytes, char fill, int registers = 12) {
  KernelCacheEntry e;
  e.payload.assign(bytes, fill);
  for (size_t i = 0; i < bytes; i += 97) {
    e.payload[i] = static_cast<char>(i);
  }
  e.registers = registers;
  e.spillBytes = 0;
  return e;
}

std::vector<char> readBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeBytes(const fs::path& p, const std::vector<char>& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Bytes held by entry files (what the size limit counts), and their count.
uint64_t entryBytes(const fs::path& dir, int* count = nullptr) {
  uint64_t total = 0;
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".kernel" && e.is_regular_file()) {
      total += e.file_size();
      ++n;
    }
  }
  if (count != nullptr) {
    *count = n;
  }
  return total;
}

bool isEmpty(const fs::path& dir) {
  return fs::is_empty(dir);
}

// Runs `f` in a child process: true when it returned true in time. A
// child still running after `limit` is killed, so a hang fails the test
// instead of stalling it.
template <typename F>
bool trueInChildWithin(F f, std::chrono::seconds limit) {
  const pid_t child = fork();
  if (child == 0) {
    _exit(f() ? 0 : 1);
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void setModified(const fs::path& p, time_t seconds) {
  const timespec times[2] = {{seconds, 0}, {seconds, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, p.c_str(), times, AT_SYMLINK_NOFOLLOW), 0);
}

class KernelDiskCacheTest : public testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/nvf_kernel_cache_test_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    root_ = pattern;
    dir_ = root_ / "cache";
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(dir_, fs::perms::owner_all, ignored);
    fs::remove_all(root_, ignored);
  }
  fs::path entryPath(int i) const {
    return dir_ / KernelDiskCache::entryName(keyOf(i));
  }

  fs::path root_;
  fs::path dir_;
};
}  // namespace

TEST(KernelCacheEntryTest, EveryByteAndLengthIsChecked) {
  const std::vector<char> bytes =
      encodeKernelCacheEntry(keyOf(1), entryOf(300, 'x'));
  ASSERT_TRUE(decodeKernelCacheEntry(bytes, keyOf(1)).entry);
  EXPECT_FALSE(decodeKernelCacheEntry(bytes, keyOf(2)).entry);
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::vector<char> changed = bytes;
    changed[i] ^= 0x01;
    EXPECT_FALSE(decodeKernelCacheEntry(changed, keyOf(1)).entry) << i;
  }
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::vector<char> cut(bytes.begin(), bytes.begin() + n);
    EXPECT_FALSE(decodeKernelCacheEntry(cut, keyOf(1)).entry) << n;
  }
}

TEST_F(KernelDiskCacheTest, StoreThenLoadRoundTrips) {
  KernelDiskCache cache(dir_.string());
  ASSERT_TRUE(cache.usable()) << cache.unusableReason();
  EXPECT_FALSE(cache.load(keyOf(1)));
  const KernelCacheEntry stored = entryOf(5000, 'c', 40);
  cache.store(keyOf(1), stored);
  std::optional<KernelCacheEntry> loaded = cache.load(keyOf(1));
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->payload, stored.payload);
  EXPECT_EQ(loaded->registers, 40);
  EXPECT_EQ(loaded->spillBytes, 0);
  const KernelDiskCache::Stats s = cache.stats();
  EXPECT_EQ(s.misses, 1u);
  EXPECT_EQ(s.writes, 1u);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.rejected, 0u);
  // One file per entry, private, and no temporary file left behind.
  int count = 0;
  entryBytes(dir_, &count);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), {}), 1);
  struct stat st;
  ASSERT_EQ(stat(entryPath(1).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(KernelDiskCacheTest, MissingDirectoryIsCreatedPrivate) {
  const fs::path nested = root_ / "a" / "b" / "cache";
  KernelDiskCache cache(nested.string() + "/");
  ASSERT_TRUE(cache.usable()) << cache.unusableReason();
  struct stat st;
  ASSERT_EQ(stat(nested.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0077, 0u);
}

TEST_F(KernelDiskCacheTest, TamperedPayloadByteIsRejectedAndRemoved) {
  KernelDiskCache cache(dir_.string());
  cache.store(keyOf(1), entryOf(1000, 'p'));
  std::vector<char> bytes = readBytes(entryPath(1));
  bytes[bytes.size() - 10] ^= 0x40;
  writeBytes(entryPath(1), bytes);
  EXPECT_FALSE(cache.load(keyOf(1)));
  EXPECT_EQ(cache.stats().rejected, 1u);
  EXPECT_NE(cache.lastRejection().find("checksum"), std::string::npos)
      << cache.lastRejection();
  EXPECT_FALSE(fs::exists(entryPath(1)));
}

TEST_F(KernelDiskCacheTest, TamperedRegistersInTheHeaderAreRejected) {
  KernelDiskCache cache(dir_.string());
  cache.store(keyOf(1), entryOf(1000, 'p', 64));
  std::vector<char> bytes = readBytes(entryPath(1));
  bytes[12] = 32;  // registers, little-endian: 64 -> 32
  writeBytes(entryPath(1), bytes);
  EXPECT_FALSE(cache.load(keyOf(1)));
  EXPECT_EQ(cache.stats().rejected, 1u);
  cache.store(keyOf(1), entryOf(1000, 'p', 64));
  ASSERT_TRUE(cache.load(keyOf(1)));
}

TEST_F(KernelDiskCacheTest, EntryPlantedUnderAnotherKeysNameIsRejected) {
  KernelDiskCache cache(dir_.string());
  cache.store(keyOf(1), entryOf(1000, 'a'));
  fs::copy_file(entryPath(1), entryPath(2));
  EXPECT_FALSE(cache.load(keyOf(2)));
  EXPECT_NE(cache.lastRejection().find("another key"), std::string::npos)
      << cache.lastRejection();
  EXPECT_TRUE(cache.load(keyOf(1)));
}

TEST_F(KernelDiskCacheTest, TruncatedEntryIsRejected) {
  KernelDiskCache cache(dir_.string());
  cache.store(keyOf(1), entryOf(1000, 't'));
  const std::vector<char> whole = readBytes(entryPath(1));
  for (size_t length :
       {size_t{0}, size_t{50}, whole.size() / 2, whole.size() - 1}) {
    writeBytes(entryPath(1),
               std::vector<char>(whole.begin(), whole.begin() + length));
    EXPECT_FALSE(cache.load(keyOf(1))) << length;
  }
  EXPECT_EQ(cache.stats().rejected, 4u);
  EXPECT_EQ(cache.stats().hits, 0u);
}

TEST_F(KernelDiskCacheTest, OversizedFileIsRejectedUnread) {
  KernelDiskCache cache(dir_.string());
  std::ofstream(entryPath(1)).put('x');
  fs::resize_file(entryPath(1), KernelDiskCache::kMaxEntryBytes + 1);  // sparse
  EXPECT_FALSE(cache.load(keyOf(1)));
  EXPECT_NE(cache.lastRejection().find("over the limit"), std::string::npos)
      << cache.lastRejection();
}

TEST_F(KernelDiskCacheTest, SymlinkAtEntryNameIsNotFollowedOnRead) {
  KernelDiskCache cache(dir_.string());
  // Even a valid entry for this very key is not read through a link.
  const fs::path elsewhere = root_ / "valid_entry";
  writeBytes(elsewhere, encodeKernelCacheEntry(keyOf(1), entryOf(100, 'v')));
  fs::create_symlink(elsewhere, entryPath(1));
  EXPECT_FALSE(cache.load(keyOf(1)));
  EXPECT_NE(cache.lastRejection().find("symbolic link"), std::string::npos)
      << cache.lastRejection();
  EXPECT_TRUE(fs::is_symlink(entryPath(1)));  // not ours to remove
  EXPECT_TRUE(fs::exists(elsewhere));
}

TEST_F(KernelDiskCacheTest, StoreReplacesSymlinkWithoutTouchingVictim) {
  KernelDiskCache cache(dir_.string());
  const fs::path victim = root_ / "victim.txt";
  const std::vector<char> precious = {'p', 'r', 'e', 'c', 'i', 'o', 'u', 's'};
  writeBytes(victim, precious);
  fs::create_symlink(victim, entryPath(1));
  cache.store(keyOf(1), entryOf(2000, 'w'));
  EXPECT_EQ(readBytes(victim), precious);
  EXPECT_FALSE(fs::is_symlink(entryPath(1)));
  EXPECT_TRUE(fs::is_regular_file(entryPath(1)));
  EXPECT_TRUE(cache.load(keyOf(1)));
}

TEST_F(KernelDiskCacheTest, FifoAtEntryNameDoesNotBlock) {
  KernelDiskCache cache(dir_.string());
  ASSERT_EQ(mkfifo(entryPath(1).c_str(), 0600), 0);
  // Opening a FIFO that has no writer (or no reader) blocks for good.
  ASSERT_TRUE(trueInChildWithin([&] { return !cache.load(keyOf(1)); },
                                std::chrono::seconds(10)));
  EXPECT_FALSE(cache.load(keyOf(1)));
  EXPECT_NE(cache.lastRejection().find("FIFO"), std::string::npos)
      << cache.lastRejection();
  // A store replaces it rather than writing into it.
  ASSERT_TRUE(trueInChildWithin(
      [&] {
        cache.store(keyOf(1), entryOf(100, 'f'));
        return cache.load(keyOf(1)).has_value();
      },
      std::chrono::seconds(10)));
  EXPECT_TRUE(fs::is_regular_file(entryPath(1)));
  EXPECT_TRUE(cache.load(keyOf(1)));
}

TEST_F(KernelDiskCacheTest, DevZeroLinkIsRejected) {
  KernelDiskCache cache(dir_.string());
  fs::create_symlink("/dev/zero", entryPath(1));
  // Reading /dev/zero never ends; the size limit alone would not stop it.
  ASSERT_TRUE(trueInChildWithin([&] { return !cache.load(keyOf(1)); },
                                std::chrono::seconds(10)));
  EXPECT_FALSE(cache.load(keyOf(1)));
  EXPECT_EQ(cache.stats().rejected, 1u);
  EXPECT_NE(cache.lastRejection().find("symbolic link"), std::string::npos)
      << cache.lastRejection();
}

TEST_F(KernelDiskCacheTest, FileOwnedByAnotherUserIsRejected) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "giving a file to another user needs root";
  }
  KernelDiskCache cache(dir_.string());
  cache.store(keyOf(1), entryOf(100, 'o'));
  ASSERT_EQ(chown(entryPath(1).c_str(), 12345, 12345), 0);
  EXPECT_FALSE(cache.load(keyOf(1)));
  EXPECT_NE(cache.lastRejection().find("owned by uid 12345"), std::string::npos)
      << cache.lastRejection();
  EXPECT_TRUE(fs::exists(entryPath(1)));  // not ours to remove
}

TEST_F(KernelDiskCacheTest, DirectoryWritableByOthersIsRefused) {
  fs::create_directory(dir_);
  ASSERT_EQ(chmod(dir_.c_str(), 0777), 0);
  testing::internal::CaptureStderr();
  KernelDiskCache cache(dir_.string());
  const std::string warning = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(cache.usable());
  EXPECT_NE(warning.find("not using the kernel cache directory"),
            std::string::npos)
      << warning;
  EXPECT_NE(warning.find("mode 0777"), std::string::npos) << warning;
  cache.store(keyOf(1), entryOf(100, 'w'));
  EXPECT_FALSE(cache.load(keyOf(1)));
  EXPECT_TRUE(isEmpty(dir_));
  // Even a valid entry planted there is not used.
  writeBytes(entryPath(1), encodeKernelCacheEntry(keyOf(1), entryOf(9, 'e')));
  EXPECT_FALSE(cache.load(keyOf(1)));
}

TEST_F(KernelDiskCacheTest, DirectoryOwnedByAnotherUserIsRefused) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "giving a directory to another user needs root";
  }
  fs::create_directory(dir_);
  ASSERT_EQ(chmod(dir_.c_str(), 0700), 0);
  ASSERT_EQ(chown(dir_.c_str(), 12345, 12345), 0);
  testing::internal::CaptureStderr();
  KernelDiskCache cache(dir_.string());
  const std::string warning = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(cache.usable());
  EXPECT_NE(cache.unusableReason().find("owned by uid 12345"),
            std::string::npos)
      << cache.unusableReason();
  EXPECT_NE(warning.find("owned by uid 12345"), std::string::npos);
  cache.store(keyOf(1), entryOf(100, 'w'));
  EXPECT_TRUE(isEmpty(dir_));
}

TEST_F(KernelDiskCacheTest, DirectoryThatIsASymlinkIsRefused) {
  const fs::path real = root_ / "real";
  fs::create_directory(real);
  fs::create_directory_symlink(real, dir_);
  testing::internal::CaptureStderr();
  KernelDiskCache cache(dir_.string());
  KernelDiskCache withSlash(dir_.string() + "/");
  // "link/." names the link as much as "link/" does.
  KernelDiskCache withDot(dir_.string() + "/.");
  KernelDiskCache withDots(dir_.string() + "/.//./");
  testing::internal::GetCapturedStderr();
  EXPECT_FALSE(cache.usable());
  EXPECT_NE(cache.unusableReason().find("symbolic link"), std::string::npos)
      << cache.unusableReason();
  for (KernelDiskCache* c : {&withSlash, &withDot, &withDots}) {
    EXPECT_FALSE(c->usable());
    EXPECT_NE(c->unusableReason().find("symbolic link"), std::string::npos)
        << c->unusableReason();
    c->store(keyOf(1), entryOf(100, 'w'));
  }
  cache.store(keyOf(1), entryOf(100, 'w'));
  EXPECT_TRUE(isEmpty(real));
}

TEST_F(KernelDiskCacheTest, DirectoryWrittenWithTrailingDotsIsUsed) {
  testing::internal::CaptureStderr();
  KernelDiskCache cache(dir_.string() + "/./");
  const std::string warning = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(cache.usable()) << cache.unusableReason();
  EXPECT_EQ(warning, "");
  cache.store(keyOf(1), entryOf(100, 'w'));
  EXPECT_TRUE(fs::exists(entryPath(1)));
}

TEST_F(KernelDiskCacheTest,
       EvictionKeepsTotalUnderLimitLeastRecentlyUsedFirst) {
  const uint64_t entryFile = kKernelCacheHeaderBytes + 1000;
  const uint64_t limit = 4 * entryFile + entryFile / 2;  // four entries fit
  KernelDiskCache cache(dir_.string(), limit);
  const time_t now = std::time(nullptr);
  for (int i = 0; i < 4; ++i) {
    cache.store(keyOf(i), entryOf(1000, 'e'));
    setModified(entryPath(i), now - 100 + i);  // 0 oldest, 3 newest
  }
  EXPECT_EQ(cache.stats().evictions, 0u);
  ASSERT_TRUE(cache.load(keyOf(0)));  // a hit makes 0 the newest
  cache.store(keyOf(4), entryOf(1000, 'e'));
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_TRUE(fs::exists(entryPath(0)));
  EXPECT_FALSE(fs::exists(entryPath(1)));
  for (int i : {2, 3, 4}) {
    EXPECT_TRUE(fs::exists(entryPath(i))) << i;
  }
  for (int i = 5; i < 30; ++i) {
    cache.store(keyOf(i), entryOf(1000, 'e'));
    EXPECT_LE(entryBytes(dir_), limit) << i;
    EXPECT_TRUE(fs::exists(entryPath(i))) << i;
  }
}

TEST_F(KernelDiskCacheTest, EvictionLeavesForeignFilesAlone) {
  KernelDiskCache cache(dir_.string(), 100);
  writeBytes(dir_ / "notes.txt", std::vector<char>(5000, 'n'));
  cache.store(keyOf(1), entryOf(1000, 'e'));  // over the limit on its own
  EXPECT_TRUE(fs::exists(dir_ / "notes.txt"));
  EXPECT_EQ(entryBytes(dir_), 0u);
}

TEST_F(KernelDiskCacheTest, StaleTemporaryFilesAreRemoved) {
  KernelDiskCache cache(dir_.string());
  const fs::path stale = dir_ / ".tmp-1-2-dead";
  const fs::path fresh = dir_ / ".tmp-1-3-live";
  writeBytes(stale, {'s'});
  writeBytes(fresh, {'f'});
  setModified(stale, std::time(nullptr) - 2 * 3600);
  cache.store(keyOf(1), entryOf(100, 'e'));
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh));  // a writer may still rename it
}

// Writers rename whole files into place, so once an entry exists every
// reader finds a whole one: with writes in place, readers would see
// partial files (and count them as rejected).
TEST_F(KernelDiskCacheTest, ConcurrentWritersNeverExposePartialEntries) {
  KernelDiskCache writerSide(dir_.string());
  KernelDiskCache readerSide(dir_.string());  // as another process would
  const KernelCacheEntry a = entryOf(512 * 1024, 'a', 10);
  const KernelCacheEntry b = entryOf(512 * 1024, 'b', 20);
  writerSide.store(keyOf(7), a);
  std::atomic<int> wrong{0};
  std::atomic<int> missed{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < 60; ++i) {
        writerSide.store(keyOf(7), (i + w) % 2 ? a : b);
      }
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&] {
      for (int i = 0; i < 150; ++i) {
        std::optional<KernelCacheEntry> e = readerSide.load(keyOf(7));
        if (!e) {
          ++missed;
        } else if (!(e->payload == a.payload && e->registers == 10) &&
                   !(e->payload == b.payload && e->registers == 20)) {
          ++wrong;
        }
      }
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(missed.load(), 0);
  EXPECT_EQ(readerSide.stats().rejected, 0u) << readerSide.lastRejection();
  EXPECT_EQ(writerSide.stats().writeFailures, 0u);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), {}), 1);
}

// ---- through compileWithNvrtc ----

namespace {
// kKernel for sm_90 through `cache` alone (no in-memory cache in front).
CompiledKernel compileThrough(KernelDiskCache& cache, int maxRegisters = 0) {
  KernelCaches diskOnly;
  diskOnly.memory = false;
  diskOnly.disk = &cache;
  return compileWithNvrtc(kKernel, "k", "sm_90", false, maxRegisters, diskOnly);
}
}  // namespace

TEST_F(KernelDiskCacheTest, SecondCompileLoadsTheVerifiedEntry) {
  KernelDiskCache cache(dir_.string());
  const CompiledKernel first = compileThrough(cache);
  EXPECT_EQ(cache.stats().writes, 1u);
  const CompiledKernel second = compileThrough(cache);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(second.cubin, first.cubin);
  EXPECT_EQ(second.registers, first.registers);
  EXPECT_EQ(second.spillBytes, first.spillBytes);
  EXPECT_EQ(second.arch, "sm_90");
  // A register cap is another key, so another entry.
  compileThrough(cache, 32);
  EXPECT_EQ(cache.stats().writes, 2u);
}

TEST_F(KernelDiskCacheTest, TamperedEntryIsRecompiledAndRewritten) {
  KernelDiskCache cache(dir_.string());
  const CompiledKernel first = compileThrough(cache);
  const fs::path path = dir_ / KernelDiskCache::entryName(
                                   kernelCacheKey(kKernel, "k", "sm_90", 0));
  std::vector<char> bytes = readBytes(path);
  ASSERT_GT(bytes.size(), kKernelCacheHeaderBytes + 64);
  bytes[kKernelCacheHeaderBytes + 64] ^= 0x10;  // a cubin byte
  writeBytes(path, bytes);
  const CompiledKernel second = compileThrough(cache);
  EXPECT_EQ(second.cubin, first.cubin);
  EXPECT_EQ(cache.stats().rejected, 1u);
  EXPECT_EQ(cache.stats().hits, 0u);
  EXPECT_EQ(cache.stats().writes, 2u);
  compileThrough(cache);
  EXPECT_EQ(cache.stats().hits, 1u);
}

TEST(KernelCacheKeyTest, CoversSourceNameArchAndCap) {
  const Sha256Digest base = kernelCacheKey(kKernel, "k", "sm_90", 0);
  EXPECT_EQ(kernelCacheKey(kKernel, "k", "sm_90", 0), base);
  EXPECT_NE(kernelCacheKey(std::string(kKernel) + " ", "k", "sm_90", 0), base);
  EXPECT_NE(kernelCacheKey(kKernel, "k2", "sm_90", 0), base);
  EXPECT_NE(kernelCacheKey(kKernel, "k", "sm_80", 0), base);
  EXPECT_NE(kernelCacheKey(kKernel, "k", "sm_90", 32), base);
}

// NVFUSER_CACHE_DIR names the cache; NVFUSER_DISABLE=kernel_cache turns
// off both caches, so nothing is written.
TEST_F(KernelDiskCacheTest, DisabledKernelCacheWritesNothing) {
  ScopedEnv cacheDir("NVFUSER_CACHE_DIR", dir_.string());
  // Unique, so no earlier test's compile is in the memory cache.
  const std::string source = std::string(kKernel) + "\n// " + dir_.string();

  const KernelCaches off =
      KernelCaches::forOptions(Options().withOverrides({}, {"kernel_cache"}));
  EXPECT_FALSE(off.memory);
  EXPECT_EQ(off.disk, nullptr);
  compileWithNvrtc(source, "k", "sm_90", false, 0, off);
  EXPECT_FALSE(fs::exists(dir_) && !isEmpty(dir_));

  const KernelCaches on = KernelCaches::forOptions(Options());
  EXPECT_TRUE(on.memory);
  ASSERT_NE(on.disk, nullptr);
  EXPECT_EQ(on.disk, KernelDiskCache::fromEnvironment());
  compileWithNvrtc(source, "k", "sm_90", false, 0, on);
  int count = 0;
  entryBytes(dir_, &count);
  EXPECT_EQ(count, 1);
}

TEST_F(KernelDiskCacheTest, BadSizeLimitFallsBackToTheDefault) {
  {
    ScopedEnv cacheDir("NVFUSER_CACHE_DIR", dir_.string());
    {
      ScopedEnv limit("NVFUSER_CACHE_MAX_BYTES", "1GB");
      testing::internal::CaptureStderr();
      KernelDiskCache* cache = KernelDiskCache::fromEnvironment();
      const std::string warning = testing::internal::GetCapturedStderr();
      ASSERT_NE(cache, nullptr);
      EXPECT_EQ(cache->maxBytes(), KernelDiskCache::kDefaultMaxBytes);
      EXPECT_NE(warning.find("NVFUSER_CACHE_MAX_BYTES"), std::string::npos);
    }
    ScopedEnv limit("NVFUSER_CACHE_MAX_BYTES", "4096");
    EXPECT_EQ(KernelDiskCache::fromEnvironment()->maxBytes(), 4096u);
  }
  ScopedEnv noCacheDir("NVFUSER_CACHE_DIR", "");
  EXPECT_EQ(KernelDiskCache::fromEnvironment(), nullptr);
}

}  // namespace nvfuser
