// The durable file writers' contract beside durability itself (which durability_test.cc proves
// under strace): new files only, mode 0644, no temporary file left behind, missing directories
// created, and errors that name the path.

#include "iceberg/detail/durable_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "core/error.h"
#include "support/temp_dir.h"

namespace binberg::iceberg {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::vector<std::string> names_in(const std::filesystem::path& directory) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(DurableFileTest, WritesANewFileWithMode0644InMissingDirectoriesAndLeavesNoTemporaryFile) {
  binberg::testing::TempDir dir;
  const auto path = dir.path() / "a" / "b" / "file.json";
  const mode_t old_umask = ::umask(077);
  durable::write_new_file(path, "contents", "test file");
  ::umask(old_umask);
  EXPECT_EQ(read_file(path.string()), "contents");
  struct stat status {};
  ASSERT_EQ(::stat(path.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0644u);
  EXPECT_EQ(names_in(path.parent_path()), std::vector<std::string>{"file.json"});
}

TEST(DurableFileTest, NeverReplacesAFile) {
  binberg::testing::TempDir dir;
  const auto path = dir.path() / "file.json";
  durable::write_new_file(path, "first", "test file");
  EXPECT_THAT([&] { durable::write_new_file(path, "second", "test file"); },
              ThrowsMessage<Error>(HasSubstr("test file: the file already exists")));
  EXPECT_EQ(read_file(path.string()), "first");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"file.json"});
}

TEST(DurableFileTest, ErrorsNameTheDirectoryOrFile) {
  binberg::testing::TempDir dir;
  std::ofstream(dir.path() / "plain") << "not a directory";
  const auto under_a_file = dir.path() / "plain" / "sub";
  EXPECT_THAT([&] { durable::create_directories(under_a_file); },
              ThrowsMessage<Error>(HasSubstr("cannot create directory " + under_a_file.string())));
  EXPECT_THAT([&] { durable::sync_written_file(dir.path() / "absent.parquet", "parquet x"); },
              ThrowsMessage<Error>(HasSubstr("parquet x: open " + (dir.path() / "absent.parquet").string())));
}

TEST(DurableFileTest, CreatingDirectoriesThatExistChangesNothing) {
  binberg::testing::TempDir dir;
  durable::create_directories(dir.path() / "x" / "y");
  durable::create_directories(dir.path() / "x" / "y");
  durable::create_directories(dir.path() / "x/");
  EXPECT_EQ(names_in(dir.path() / "x"), std::vector<std::string>{"y"});
}

}  // namespace
}  // namespace binberg::iceberg
