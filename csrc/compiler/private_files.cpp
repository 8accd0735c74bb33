#include "compiler/private_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <random>
#include <utility>

namespace nvfuser {

namespace {
constexpr const char* kTemporaryPrefix = ".tmp-";

std::string errnoText(int error) {
  return std::strerror(error);
}

std::string withoutTrailingSlashes(std::string path) {
  // "link/" resolves the link, so the checks below must see "link".
  while (path.size() > 1 && path.back() == '/') {
    path.pop_back();
  }
  return path;
}

// "link/." and "link/./" resolve the link too: the directory they name is
// the path without its trailing "." components.
std::string withoutTrailingDots(std::string path) {
  path = withoutTrailingSlashes(std::move(path));
  while (path.size() > 2 && path.compare(path.size() - 2, 2, "/.") == 0) {
    path = withoutTrailingSlashes(path.substr(0, path.size() - 1));
  }
  return path;
}

bool makeDirectory(const std::string& path, std::string* why) {
  if (mkdir(path.c_str(), 0700) == 0 || errno == EEXIST) {
    return true;
  }
  *why = "cannot create " + path + ": " + errnoText(errno);
  return false;
}

// mkdir -p, with mode 0700 for every directory it creates.
bool makeDirectories(const std::string& path, std::string* why) {
  if (mkdir(path.c_str(), 0700) == 0 || errno == EEXIST) {
    return true;
  }
  const size_t slash = path.find_last_of('/');
  if (errno != ENOENT || slash == std::string::npos || slash == 0) {
    return makeDirectory(path, why);
  }
  return makeDirectories(withoutTrailingSlashes(path.substr(0, slash)), why) &&
         makeDirectory(path, why);
}

std::string describeType(mode_t mode) {
  if (S_ISLNK(mode)) {
    return "a symbolic link";
  }
  if (S_ISFIFO(mode)) {
    return "a FIFO";
  }
  if (S_ISCHR(mode) || S_ISBLK(mode)) {
    return "a device";
  }
  if (S_ISDIR(mode)) {
    return "a directory";
  }
  if (S_ISSOCK(mode)) {
    return "a socket";
  }
  return "not a regular file";
}

std::string octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode));
  return text;
}

// Why the opened directory is not private to us, or "".
std::string privacyProblem(const struct stat& st) {
  if (!S_ISDIR(st.st_mode)) {
    return "it is " + describeType(st.st_mode);
  }
  if (st.st_uid != geteuid()) {
    return "it is owned by uid " + std::to_string(st.st_uid) +
           ", not by the current user (uid " + std::to_string(geteuid()) + ")";
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return "its group or others may write it (mode " +
           octal(st.st_mode & 07777) + "; chmod 700 fixes that)";
  }
  return "";
}

// Reads up to `size` bytes; false when the file ends early or goes on.
bool readExactly(int fd, std::vector<char>& bytes, size_t size) {
  bytes.resize(size);
  size_t got = 0;
  while (got < size) {
    const ssize_t n = read(fd, bytes.data() + got, size - got);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    got += static_cast<size_t>(n);
  }
  char extra;
  ssize_t n;
  do {
    n = read(fd, &extra, 1);
  } while (n < 0 && errno == EINTR);
  return n == 0;
}

bool writeAll(int fd, const std::vector<char>& bytes, std::string* why) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      *why = "cannot write: " + errnoText(n < 0 ? errno : EIO);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

uint64_t randomBits() {
  try {
    std::random_device device;
    return (uint64_t{device()} << 32) ^ device();
  } catch (const std::exception&) {
    // O_EXCL keeps names unique anyway; this only avoids retries.
    return static_cast<uint64_t>(
        std::chrono::steady_clock::now().time_since_epoch().count());
  }
}

std::string temporaryName(uint64_t uniqueNumber) {
  char noise[17];
  std::snprintf(noise, sizeof(noise), "%016llx",
                static_cast<unsigned long long>(randomBits()));
  return kTemporaryPrefix + std::to_string(getpid()) + "-" +
         std::to_string(uniqueNumber) + "-" + noise;
}

// By reference: callers build the reason from the file (its type, errno)
// in the same call, and a by-value parameter may be moved into first.
OwnedFile rejectedFile(OwnedFile&& file, std::string reason) {
  file.outcome = OwnedFile::Outcome::Rejected;
  file.reason = std::move(reason);
  return std::move(file);
}
}  // namespace

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) {
    close(fd_);
  }
}

FileDescriptor::FileDescriptor(FileDescriptor&& other) noexcept
    : fd_(other.release()) {}

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) {
      close(fd_);
    }
    fd_ = other.release();
  }
  return *this;
}

int FileDescriptor::release() {
  return std::exchange(fd_, -1);
}

FileDescriptor openPrivateDirectory(const std::string& rawPath,
                                    std::string* why) {
  if (rawPath.empty()) {
    *why = "the path is empty";
    return {};
  }
  const std::string path = withoutTrailingDots(rawPath);
  if (!makeDirectories(path, why)) {
    return {};
  }
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    *why = "cannot stat it: " + errnoText(errno);
    return {};
  }
  if (!S_ISDIR(st.st_mode)) {
    *why = "it is " + describeType(st.st_mode);
    return {};
  }
  FileDescriptor fd(
      open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    *why = "cannot open it: " + errnoText(errno);
    return {};
  }
  // What counts is what was opened: the path may have changed since lstat.
  if (fstat(fd.get(), &st) != 0) {
    *why = "cannot stat it: " + errnoText(errno);
    return {};
  }
  *why = privacyProblem(st);
  return why->empty() ? std::move(fd) : FileDescriptor();
}

OwnedFile readOwnedFile(int dirFd, const std::string& name, uint64_t maxBytes) {
  OwnedFile file;
  if (fstatat(dirFd, name.c_str(), &file.info, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) {
      return file;
    }
    return rejectedFile(std::move(file), "cannot stat: " + errnoText(errno));
  }
  // Checked before opening: opening a FIFO can block, opening a device can
  // act on it.
  if (!S_ISREG(file.info.st_mode)) {
    return rejectedFile(std::move(file),
                        "it is " + describeType(file.info.st_mode));
  }
  // O_NOFOLLOW and O_NONBLOCK hold if it was replaced since fstatat.
  FileDescriptor fd(openat(dirFd, name.c_str(),
                           O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) {
      return OwnedFile();
    }
    return rejectedFile(std::move(file),
                        errno == ELOOP ? "it is a symbolic link"
                                       : "cannot open: " + errnoText(errno));
  }
  if (fstat(fd.get(), &file.info) != 0) {
    return rejectedFile(std::move(file), "cannot stat: " + errnoText(errno));
  }
  if (!S_ISREG(file.info.st_mode)) {
    return rejectedFile(std::move(file),
                        "it is " + describeType(file.info.st_mode));
  }
  if (file.info.st_uid != geteuid()) {
    return rejectedFile(std::move(file), "it is owned by uid " +
                                             std::to_string(file.info.st_uid));
  }
  const auto size = static_cast<uint64_t>(file.info.st_size);
  if (size > maxBytes) {
    return rejectedFile(std::move(file), std::to_string(size) +
                                             " bytes, over the limit of " +
                                             std::to_string(maxBytes));
  }
  if (!readExactly(fd.get(), file.bytes, static_cast<size_t>(size))) {
    file.bytes.clear();
    return rejectedFile(std::move(file), "it changed size while read");
  }
  file.outcome = OwnedFile::Outcome::Read;
  file.fd = std::move(fd);
  return file;
}

NewFile writeNewFile(int dirFd, const std::string& name,
                     const std::vector<char>& bytes, mode_t mode,
                     std::string* why) {
  FileDescriptor fd(openat(dirFd, name.c_str(),
                           O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                           mode));
  if (!fd.valid()) {
    if (errno == EEXIST) {
      return NewFile::Exists;
    }
    *why = "cannot create " + name + ": " + errnoText(errno);
    return NewFile::Failed;
  }
  bool ok = writeAll(fd.get(), bytes, why);
  if (ok && close(fd.release()) != 0) {
    *why = "cannot close " + name + ": " + errnoText(errno);
    ok = false;
  }
  if (!ok) {
    unlinkat(dirFd, name.c_str(), 0);
    return NewFile::Failed;
  }
  return NewFile::Written;
}

bool replaceFile(int dirFd, const std::string& name,
                 const std::vector<char>& bytes, uint64_t uniqueNumber,
                 std::string* why) {
  std::string temporary;
  NewFile outcome = NewFile::Exists;
  for (int attempt = 0; attempt < 4 && outcome == NewFile::Exists; ++attempt) {
    temporary = temporaryName(uniqueNumber);
    outcome = writeNewFile(dirFd, temporary, bytes, 0600, why);
  }
  if (outcome == NewFile::Exists) {
    *why = "cannot create a temporary file: every name tried was taken";
  }
  if (outcome != NewFile::Written) {
    return false;
  }
  // rename() replaces the name itself: a link there is replaced, its target
  // untouched; a reader sees the old file or the new one, never a part.
  if (renameat(dirFd, temporary.c_str(), dirFd, name.c_str()) != 0) {
    *why = "cannot rename it to " + name + ": " + errnoText(errno);
    unlinkat(dirFd, temporary.c_str(), 0);
    return false;
  }
  return true;
}

void removeIfSameFile(int dirFd, const std::string& name,
                      const struct stat& seen) {
  struct stat now;
  if (fstatat(dirFd, name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISREG(now.st_mode) && S_ISREG(seen.st_mode) &&
      now.st_uid == geteuid() && now.st_dev == seen.st_dev &&
      now.st_ino == seen.st_ino) {
    unlinkat(dirFd, name.c_str(), 0);
  }
}

bool isTemporaryFileName(const std::string& name) {
  return name.rfind(kTemporaryPrefix, 0) == 0;
}

}  // namespace nvfuser
