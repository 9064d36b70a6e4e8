#include "support/temp_dir.h"

#include <cstdlib>
#include <string>

#include "core/error.h"

namespace binberg::testing {

TempDir::TempDir() : TempDir(std::filesystem::temp_directory_path()) {}

TempDir::TempDir(const std::filesystem::path& parent) {
  std::string pattern = (parent / "binberg-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) fail("cannot create a temp dir from {}", pattern);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace binberg::testing
