// Metadata file naming (spec "Metastore Tables"), writing and reading.

#include "iceberg/metadata_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "core/error.h"
#include "sample_table.h"
#include "support/temp_dir.h"

namespace binberg::iceberg {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::ThrowsMessage;

TEST(MetadataFileTest, NamesFilesWithFiveDigitVersionAndUuid) {
  const Uuid uuid = Uuid::parse("f79c3e09-677c-4bbd-a479-3f349cb785e7");
  EXPECT_EQ(metadata_file_name(3, uuid), "00003-f79c3e09-677c-4bbd-a479-3f349cb785e7.metadata.json");
  EXPECT_EQ(metadata_file_name(123456, uuid), "123456-f79c3e09-677c-4bbd-a479-3f349cb785e7.metadata.json");
  EXPECT_EQ(metadata_file_version("/t/metadata/00003-f79c3e09-677c-4bbd-a479-3f349cb785e7.metadata.json"), 3);
  EXPECT_EQ(metadata_file_version("00012-f79c3e09-677c-4bbd-a479-3f349cb785e7.metadata.json"), 12);
  EXPECT_EQ(metadata_file_version("v3.metadata.json"), std::nullopt);
  EXPECT_EQ(metadata_file_version("00003-f79c3e09.metadata.json"), std::nullopt);
}

TEST(MetadataFileTest, UuidsAreRandomVersion4) {
  const Uuid uuid = Uuid::random();
  EXPECT_NE(uuid, Uuid::random());
  EXPECT_THAT(uuid.to_string(), MatchesRegex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"));
  EXPECT_EQ(Uuid::parse(uuid.to_string()), uuid);
  EXPECT_EQ(Uuid::parse("F79C3E09-677C-4BBD-A479-3F349CB785E7").to_string(), "f79c3e09-677c-4bbd-a479-3f349cb785e7");
  EXPECT_THAT([] { Uuid::parse("f79c3e09677c-4bbd-a479-3f349cb785e7a"); },
              ThrowsMessage<Error>(HasSubstr("invalid UUID")));
}

TEST(MetadataFileTest, LocalPathsFromPlainPathsAndFileUris) {
  EXPECT_EQ(local_path("/a/b"), "/a/b");
  EXPECT_EQ(local_path("file:///a/b"), "/a/b");
  EXPECT_EQ(local_path("file:/a/b"), "/a/b");
  EXPECT_THAT([] { local_path("s3://bucket/t"); }, ThrowsMessage<Error>(HasSubstr("not a local absolute path")));
  EXPECT_THAT([] { local_path("file://host/a"); }, ThrowsMessage<Error>(HasSubstr("names a remote host")));
  EXPECT_THAT([] { local_path("relative/t"); }, ThrowsMessage<Error>(HasSubstr("not a local absolute path")));
}

TEST(MetadataFileTest, WritesUnderTheTableMetadataDirectoryAndReadsBack) {
  binberg::testing::TempDir dir;
  const std::string location = "file://" + (dir.path() / "table").string();
  const TableMetadata metadata = test_tables::sample_metadata(location);
  const std::string file = write_metadata_file(metadata, 0);
  EXPECT_THAT(file, MatchesRegex(location + "/metadata/00000-[0-9a-f-]{36}\\.metadata\\.json"));
  EXPECT_EQ(metadata_file_version(file), 0);
  EXPECT_EQ(table_metadata_to_string(read_metadata_file(file)), table_metadata_to_string(metadata));
  EXPECT_NE(write_metadata_file(metadata, 0), file);  // a fresh uuid per write
}

TEST(MetadataFileTest, ReadErrorsNameTheFile) {
  binberg::testing::TempDir dir;
  const auto path = dir.path() / "00001-bad.metadata.json";
  std::ofstream(path) << R"({"format-version": 2, "table-uuid": "f79c3e09-677c-4bbd-a479-3f349cb785e7"})";
  EXPECT_THAT([&] { read_metadata_file(path.string()); },
              ThrowsMessage<Error>(HasSubstr("iceberg metadata " + path.string() +
                                             ": table metadata is missing required field \"location\"")));
  EXPECT_THAT([&] { read_metadata_file((dir.path() / "absent.json").string()); },
              ThrowsMessage<Error>(HasSubstr("cannot read")));
}

}  // namespace
}  // namespace binberg::iceberg
