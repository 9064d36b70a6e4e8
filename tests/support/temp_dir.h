#pragma once

#include <filesystem>

namespace binberg::testing {

// A fresh directory removed with everything in it when the test ends.
class TempDir {
 public:
  TempDir();
  // In PARENT (e.g. a memory file system) instead of the system's temporary directory.
  explicit TempDir(const std::filesystem::path& parent);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace binberg::testing
