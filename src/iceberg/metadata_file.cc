#include "iceberg/metadata_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "iceberg/detail/text_parsing.h"

namespace binberg::iceberg {
namespace {

constexpr std::string_view kFileScheme = "file:";
constexpr mode_t kFileMode = 0644;

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }
  // Closes now, so that a close error (delayed write failure) is reported.
  int close() { return ::close(std::exchange(fd_, -1)); }

 private:
  int fd_;
};

[[noreturn]] void fail_errno(const std::filesystem::path& path, std::string_view step) {
  fail("cannot write {}: {}: {}", path.string(), step, std::strerror(errno));
}

void write_all(int fd, std::string_view contents, const std::filesystem::path& path) {
  while (!contents.empty()) {
    const ssize_t written = ::write(fd, contents.data(), contents.size());
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) fail_errno(path, "write");
    contents.remove_prefix(static_cast<std::size_t>(written));
  }
}

void fsync_directory(const std::filesystem::path& directory, const std::filesystem::path& path) {
  FileDescriptor fd(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) fail_errno(path, "open directory");
  if (::fsync(fd.get()) != 0) fail_errno(path, "fsync directory");
}

// The location of CHILD under LOCATION, in the scheme LOCATION is written in.
std::string join_location(std::string_view location, std::string_view child) {
  while (location.size() > 1 && location.back() == '/') location.remove_suffix(1);
  return fmt::format("{}/{}", location, child);
}

}  // namespace

std::string metadata_file_name(std::int32_t version, const Uuid& uuid) {
  if (version < 0) fail("metadata file version must not be negative, got {}", version);
  return fmt::format("{:05d}-{}.metadata.json", version, uuid.to_string());
}

std::optional<std::int32_t> metadata_file_version(std::string_view path) {
  constexpr std::string_view kSuffix = ".metadata.json";
  constexpr std::size_t kUuidLength = 36;
  const std::string_view name = path.substr(path.rfind('/') + 1);  // npos + 1 == 0: no directory
  const std::size_t dash = name.find('-');
  if (dash < 5 || dash == std::string_view::npos || !name.ends_with(kSuffix) ||
      name.size() != dash + 1 + kUuidLength + kSuffix.size()) {
    return std::nullopt;
  }
  const std::string_view digits = name.substr(0, dash);
  if (digits.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  const auto version = parse_integer(digits);
  if (!version || *version > std::numeric_limits<std::int32_t>::max()) return std::nullopt;
  try {
    Uuid::parse(name.substr(dash + 1, kUuidLength));
  } catch (const Error&) {
    return std::nullopt;
  }
  return static_cast<std::int32_t>(*version);
}

std::filesystem::path local_path(std::string_view location) {
  if (location.starts_with("/")) return std::filesystem::path(location);
  if (location.starts_with(kFileScheme)) {
    std::string_view rest = location.substr(kFileScheme.size());
    // file:///x and file:/x are the same path; file://host/x names another host.
    if (rest.starts_with("//")) {
      rest.remove_prefix(2);
      if (!rest.starts_with("/")) fail("location {} names a remote host; only local paths are supported", location);
    }
    if (rest.starts_with("/")) return std::filesystem::path(rest);
  }
  fail("location {} is not a local absolute path or file:/ URI", location);
}

void write_file_atomically(const std::filesystem::path& path, std::string_view contents) {
  const std::filesystem::path directory = path.parent_path();
  const std::filesystem::path temp =
      directory / fmt::format(".{}.{}.tmp", path.filename().string(), Uuid::random().to_string());
  FileDescriptor fd(::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, kFileMode));
  if (fd.get() < 0) fail_errno(path, fmt::format("create {}", temp.string()));
  try {
    if (::fchmod(fd.get(), kFileMode) != 0) fail_errno(path, "chmod");
    write_all(fd.get(), contents, path);
    if (::fsync(fd.get()) != 0) fail_errno(path, "fsync");
    if (fd.close() != 0) fail_errno(path, "close");
    if (::rename(temp.c_str(), path.c_str()) != 0) fail_errno(path, fmt::format("rename from {}", temp.string()));
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
  fsync_directory(directory, path);
}

std::string write_metadata_file(const TableMetadata& metadata, std::int32_t version) {
  const std::string contents = table_metadata_to_string(metadata);
  const std::string file_location =
      join_location(metadata.location, "metadata/" + metadata_file_name(version, Uuid::random()));
  const std::filesystem::path path = local_path(file_location);
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  if (error) fail("cannot create {}: {}", path.parent_path().string(), error.message());
  write_file_atomically(path, contents);
  return file_location;
}

TableMetadata read_metadata_file(std::string_view location) {
  return with_context(fmt::format("iceberg metadata {}", location),
                      [&] { return table_metadata_from_string(read_file(local_path(location).string())); });
}

}  // namespace binberg::iceberg
