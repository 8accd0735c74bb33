// File operations for a directory that only the current user may write,
// safe against whatever else is found in it: every operation is relative to
// a directory descriptor (renaming the path away changes nothing), never
// follows a symbolic link, never opens a FIFO or a device, never reads more
// than a bound, and writes only new files that are renamed into place.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

namespace nvfuser {

// Owns a file descriptor; closes it.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor();
  FileDescriptor(FileDescriptor&& other) noexcept;
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release();

 private:
  int fd_ = -1;
};

// Opens `path` as a directory private to the effective user, creating it
// and missing parents with mode 0700. Refuses (invalid descriptor, `why`
// set) a symbolic link, a non-directory, a directory owned by another user
// or one that its group or others may write.
FileDescriptor openPrivateDirectory(const std::string& path, std::string* why);

struct OwnedFile {
  enum class Outcome { Missing, Rejected, Read };
  Outcome outcome = Outcome::Missing;
  std::string reason;       // when rejected
  std::vector<char> bytes;  // when read
  FileDescriptor fd;        // open for reading, when read
  struct stat info = {};    // of the file read or rejected, when known
};

// Reads `name` in `dirFd` when it is a regular file owned by the effective
// user of at most `maxBytes`; anything else is rejected before a byte of it
// is read. Reads only from a regular file already checked, so a FIFO or a
// device is never read (and, but for a race, never even opened).
OwnedFile readOwnedFile(int dirFd, const std::string& name, uint64_t maxBytes);

enum class NewFile { Written, Exists, Failed };
// Creates `name` in `dirFd` with `mode` and writes `bytes` to it, refusing
// whatever is at `name` already (O_CREAT | O_EXCL | O_NOFOLLOW): an existing
// file is never overwritten, a link never followed, not even a dangling one.
// Exists when the name is taken; Failed with `why` set when it could not
// (a partly written file is removed). Safe in any directory, not only a
// private one (NVFUSER_DUMP files go to the current directory).
NewFile writeNewFile(int dirFd, const std::string& name,
                     const std::vector<char>& bytes, mode_t mode,
                     std::string* why);

// Writes `bytes` to a new file (mode 0600, unique name) in `dirFd` and
// renames it to `name`, replacing whatever was there (a link is replaced,
// never followed). Returns false with `why` set when it could not.
bool replaceFile(int dirFd, const std::string& name,
                 const std::vector<char>& bytes, uint64_t uniqueNumber,
                 std::string* why);

// Removes `name` when it is still the regular file of ours described by
// `seen`, so a file that another process renamed there meanwhile stays.
void removeIfSameFile(int dirFd, const std::string& name,
                      const struct stat& seen);

// Names of temporary files replaceFile writes.
bool isTemporaryFileName(const std::string& name);

}  // namespace nvfuser
