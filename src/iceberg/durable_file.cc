#include "iceberg/detail/durable_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/failpoint.h"
#include "iceberg/detail/uuid.h"

namespace binberg::iceberg::durable {
namespace {

constexpr mode_t kFileMode = 0644;
// Directories get what the umask allows, as mkdir -p gives them.
constexpr mode_t kDirectoryMode = 0777;

[[noreturn]] void fail_errno(std::string_view what, std::string_view step) {
  fail("{}: {}: {}", what, step, std::strerror(errno));
}

class Descriptor {
 public:
  explicit Descriptor(int fd) : fd_(fd) {}
  ~Descriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }
  // Closes now, so that a close error (a delayed write failure) is reported.
  int close() { return ::close(std::exchange(fd_, -1)); }

 private:
  int fd_;
};

// Opens PATH (a file, or a directory with O_DIRECTORY) and fsyncs it.
void sync_path(const std::filesystem::path& path, int flags, std::string_view what) {
  Descriptor fd(::open(path.c_str(), flags | O_CLOEXEC));
  if (fd.get() < 0) fail_errno(what, fmt::format("open {} to fsync it", path.string()));
  if (::fsync(fd.get()) != 0) fail_errno(what, fmt::format("fsync {}", path.string()));
}

void sync_directory(const std::filesystem::path& directory, std::string_view what) {
  sync_path(directory, O_RDONLY | O_DIRECTORY, what);
}

bool names_a_directory(const std::filesystem::path& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode);
}

void write_all(int fd, std::string_view contents, std::string_view what) {
  while (!contents.empty()) {
    const ssize_t written = ::write(fd, contents.data(), contents.size());
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) fail_errno(what, "write");
    contents.remove_prefix(static_cast<std::size_t>(written));
  }
}

}  // namespace

void create_directories(const std::filesystem::path& directory) {
  const std::string what = fmt::format("cannot create directory {}", directory.string());
  std::vector<std::filesystem::path> missing;  // deepest first
  for (std::filesystem::path at = directory; !names_a_directory(at); at = at.parent_path()) {
    if (at == at.parent_path()) fail("{}: its root {} is not a directory", what, at.string());
    if (at.has_filename()) missing.push_back(at);  // "a/b/" names "a/b" again
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    // Another process may have made it meanwhile; its parent is synced again all the same, since
    // that process may not have done so yet.
    if (::mkdir(it->c_str(), kDirectoryMode) != 0 && !(errno == EEXIST && names_a_directory(*it))) {
      fail_errno(what, fmt::format("mkdir {}", it->string()));
    }
    sync_directory(it->parent_path(), what);
  }
}

void write_new_file(const std::filesystem::path& path, std::string_view contents, std::string_view what,
                    std::string_view failpoint) {
  const std::filesystem::path directory = path.parent_path();
  durable::create_directories(directory);
  const std::filesystem::path temp =
      directory / fmt::format(".{}.{}.tmp", path.filename().string(), Uuid::random().to_string());
  Descriptor fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, kFileMode));
  if (fd.get() < 0) fail_errno(what, fmt::format("create {}", temp.string()));
  try {
    if (::fchmod(fd.get(), kFileMode) != 0) fail_errno(what, "chmod");
    write_all(fd.get(), contents, what);
    if (::fsync(fd.get()) != 0) fail_errno(what, "fsync");
    if (fd.close() != 0) fail_errno(what, "close");
    if (!failpoint.empty()) failpoint::hit(failpoint);
    // link(), unlike rename(), never replaces an existing file.
    if (::link(temp.c_str(), path.c_str()) != 0) {
      if (errno == EEXIST) fail("{}: the file already exists", what);
      fail_errno(what, fmt::format("link from {}", temp.string()));
    }
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
  ::unlink(temp.c_str());
  sync_directory(directory, what);
}

void sync_written_file(const std::filesystem::path& path, std::string_view what) {
  sync_path(path, O_RDONLY, what);
  sync_directory(path.parent_path(), what);
}

}  // namespace binberg::iceberg::durable
