#include "avro/container.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "core/error.h"

namespace binberg::avro {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kSchema = R"({"type": "record", "name": "row", "fields": [
    {"name": "id", "type": "long", "field-id": 1},
    {"name": "name", "type": ["null", "string"], "default": null, "field-id": 2},
    {"name": "payload", "type": "bytes", "field-id": 3}]})";

Value row(std::int64_t id) {
  Value name = id % 3 == 0 ? Value(Union(0, Value())) : Value(Union(1, Value(fmt::format("row-{}", id))));
  return Record{{Value(id), std::move(name), Value(Bytes(static_cast<std::size_t>(id % 50), 0xab))}};
}

std::string write_file(Codec codec, int rows, std::size_t block_size = 256,
                       std::map<std::string, std::string> metadata = {}) {
  std::ostringstream out;
  ContainerWriterOptions options;
  options.codec = codec;
  options.block_size = block_size;
  options.metadata = std::move(metadata);
  ContainerWriter writer(out, Schema::parse(kSchema), options);
  for (int i = 0; i < rows; ++i) writer.append(row(i));
  writer.close();
  EXPECT_EQ(writer.values_written(), static_cast<std::uint64_t>(rows));
  return out.str();
}

std::vector<Value> read_all(const std::string& file) {
  std::istringstream in(file);
  ContainerReader reader(in, "test.avro");
  std::vector<Value> values;
  for (Value value; reader.next(value);) values.push_back(std::move(value));
  return values;
}

void expect_read_error(const std::string& file, std::string_view message) {
  try {
    read_all(file);
    ADD_FAILURE() << "read a corrupt file";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(message));
  }
}

class AvroContainerCodec : public ::testing::TestWithParam<Codec> {};

TEST_P(AvroContainerCodec, RoundTripsManyBlocksWithMetadata) {
  const std::string file = write_file(GetParam(), 500, 256, {{"format-version", "2"}, {"content", "data"}});
  std::istringstream in(file);
  ContainerReader reader(in, "test.avro");
  EXPECT_EQ(reader.codec(), GetParam());
  EXPECT_EQ(reader.metadata().at("format-version"), "2");
  EXPECT_EQ(reader.metadata().at("content"), "data");
  EXPECT_EQ(reader.metadata().at("avro.codec"), codec_name(GetParam()));
  // The writer schema is stored exactly as printed, attributes included.
  EXPECT_EQ(reader.metadata().at("avro.schema"), Schema::parse(kSchema).to_json());
  EXPECT_EQ(reader.writer_schema().root().fields[2].properties.at("field-id"), 3);
  std::int64_t count = 0;
  for (Value value; reader.next(value); ++count) ASSERT_EQ(value, row(count));
  EXPECT_EQ(count, 500);
}

TEST_P(AvroContainerCodec, EmptyFileHasHeaderOnly) { EXPECT_TRUE(read_all(write_file(GetParam(), 0)).empty()); }

INSTANTIATE_TEST_SUITE_P(Codecs, AvroContainerCodec, ::testing::Values(Codec::kNull, Codec::kDeflate, Codec::kSnappy),
                         [](const auto& param_info) { return std::string(codec_name(param_info.param)); });

TEST(AvroContainer, CompressesWithDeflateAndSnappy) {
  const std::size_t plain = write_file(Codec::kNull, 300, 1 << 20).size();
  EXPECT_LT(write_file(Codec::kDeflate, 300, 1 << 20).size(), plain / 2);
  EXPECT_LT(write_file(Codec::kSnappy, 300, 1 << 20).size(), plain);
}

TEST(AvroContainer, ReadsThroughAReaderSchema) {
  const std::string file = write_file(Codec::kDeflate, 10);
  std::istringstream in(file);
  ContainerReader reader(in, Schema::parse(R"({"type": "record", "name": "row", "fields": [
      {"name": "id", "type": "double"}, {"name": "extra", "type": "int", "default": 7}]})"));
  std::vector<Value> values;
  for (Value value; reader.next(value);) values.push_back(value);
  ASSERT_EQ(values.size(), 10u);
  EXPECT_EQ(values[4], Value(Record{{Value(4.0), Value(std::int32_t{7})}}));
}

TEST(AvroContainer, RejectedAppendLeavesTheFileValid) {
  std::ostringstream out;
  ContainerWriter writer(out, Schema::parse(kSchema));
  writer.append(row(1));
  EXPECT_THROW(
      writer.append(Value(Record{{Value(std::int64_t{2}), Value(Union(1, Value(std::int64_t{3}))), Value(Bytes{})}})),
      Error);
  writer.append(row(3));
  writer.close();
  EXPECT_EQ(read_all(out.str()), (std::vector<Value>{row(1), row(3)}));
  EXPECT_THROW(writer.append(row(4)), Error);
}

TEST(AvroContainer, RejectsReservedMetadataKeys) {
  std::ostringstream out;
  ContainerWriterOptions options;
  options.metadata["avro.codec"] = "null";
  EXPECT_THROW(ContainerWriter(out, Schema::parse(kSchema), options), Error);
}

TEST(AvroContainer, RejectsCorruptFiles) {
  const std::string file = write_file(Codec::kNull, 20, 128);
  expect_read_error("", "truncated magic");
  expect_read_error("Obj\x02" + file.substr(4), "bad magic");

  // The sync marker follows the header; corrupting its copy after the first block breaks that block.
  ContainerWriterOptions options;
  options.sync_marker = SyncMarker{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  std::ostringstream out;
  ContainerWriter writer(out, Schema::parse(kSchema), options);
  writer.append(row(1));
  writer.close();
  std::string bad_sync = out.str();
  bad_sync[bad_sync.size() - 1] ^= 0x01;
  expect_read_error(bad_sync, "sync marker mismatch after block 0");

  std::string bad_codec = file;
  const auto codec_at = bad_codec.find("null", bad_codec.find("avro.codec"));
  bad_codec.replace(codec_at, 4, "zstd");
  expect_read_error(bad_codec, "unsupported codec 'zstd'");

  std::string bad_schema = file;
  bad_schema.replace(bad_schema.find("\"long\""), 6, "\"lung\"");
  expect_read_error(bad_schema, "invalid writer schema in test.avro");
}

TEST(AvroContainer, RejectsBlocksThatLie) {
  std::ostringstream out;
  ContainerWriterOptions options;
  options.sync_marker = SyncMarker{};
  ContainerWriter writer(out, Schema::parse(R"("long")"), options);
  writer.close();
  const std::string header = out.str();
  const std::string sync(16, '\0');
  auto block = [&](std::int64_t count, const std::string& data) {
    std::string encoded;
    Encoder encoder(encoded);
    encoder.write_long(count);
    encoder.write_long(static_cast<std::int64_t>(data.size()));
    return encoded + data + sync;
  };
  EXPECT_EQ(read_all(header + block(2, "\x02\x04")),
            (std::vector<Value>{Value(std::int64_t{1}), Value(std::int64_t{2})}));
  expect_read_error(header + block(5, "\x02\x04"), "claims 5 objects in 2 bytes");
  expect_read_error(header + block(1, "\x02\x04"), "1 trailing bytes after the last datum");
  expect_read_error(header + block(-1, "\x02"), "invalid block 0");
  expect_read_error(header + block(2, "\x02\x80"), "truncated long");
  std::string huge_size;
  Encoder(huge_size).write_long(1);
  Encoder(huge_size).write_long(std::int64_t{1} << 40);
  expect_read_error(header + huge_size, "invalid block 0");
  Encoder(huge_size = "").write_long(1);
  Encoder(huge_size).write_long(1000);
  expect_read_error(header + huge_size + "\x02", "truncated block data");
}

TEST(AvroContainer, RejectsCorruptCompressedBlocks) {
  for (const Codec codec : {Codec::kDeflate, Codec::kSnappy}) {
    std::string file = write_file(codec, 50, 1 << 20);
    // Flip a bit in the middle of the only block's data (it sits just before the trailing sync marker).
    file[file.size() - 16 - 10] ^= 0x40;
    EXPECT_THROW(read_all(file), Error) << codec_name(codec);
  }
}

TEST(AvroContainer, EveryTruncationFailsOrEndsAtABlockBoundary) {
  for (const Codec codec : {Codec::kNull, Codec::kDeflate, Codec::kSnappy}) {
    const std::string file = write_file(codec, 40, 200);
    const std::vector<Value> all = read_all(file);
    for (std::size_t length = 0; length < file.size(); ++length) {
      try {
        const std::vector<Value> values = read_all(file.substr(0, length));
        // Only a cut right after a sync marker is a valid (shorter) file.
        ASSERT_LT(values.size(), all.size());
        EXPECT_TRUE(std::equal(values.begin(), values.end(), all.begin()));
      } catch (const Error&) {
      }
    }
  }
}

}  // namespace
}  // namespace binberg::avro
