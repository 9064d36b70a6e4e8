#pragma once

// Avro object container files: a header (magic, metadata map, 16-byte sync marker) followed by blocks
// of (object count, byte size, codec-compressed objects, sync marker).

#include <array>
#include <cstddef>
#include <cstdint>
#include <istream>
#include <map>
#include <optional>
#include <ostream>
#include <string>

#include "avro/codec.h"
#include "avro/encoding.h"
#include "avro/resolution.h"
#include "avro/schema.h"
#include "avro/value.h"

namespace binberg::avro {

using SyncMarker = std::array<std::uint8_t, 16>;

// Blocks larger than this (compressed or not) are rejected: a corrupt size must not allocate without bound.
inline constexpr std::size_t kMaxContainerBlockBytes = std::size_t{1} << 28;

struct ContainerWriterOptions {
  Codec codec = Codec::kNull;
  // A block is written once this many encoded (uncompressed) bytes are buffered.
  std::size_t block_size = 64 * 1024;
  int deflate_level = -1;  // zlib's default
  // Extra header metadata (e.g. Iceberg's "schema", "partition-spec"); "avro." keys are reserved.
  std::map<std::string, std::string> metadata;
  std::optional<SyncMarker> sync_marker;  // random when unset
};

class ContainerWriter {
 public:
  // Writes the header at once; the schema's full JSON (every attribute) is stored as "avro.schema".
  ContainerWriter(std::ostream& out, Schema schema, ContainerWriterOptions options = {},
                  std::string destination = "avro container");

  // Throws Error (and writes nothing of the value) when the value does not fit the schema.
  void append(const Value& value);
  // Writes the buffered values as one block.
  void flush();
  // Flushes and ends the file. A writer destroyed without close() leaves buffered values unwritten.
  void close();

  const Schema& schema() const { return schema_; }
  std::uint64_t values_written() const { return values_written_; }

 private:
  void write(std::string_view bytes);

  std::ostream& out_;
  Schema schema_;
  ContainerWriterOptions options_;
  std::string destination_;
  SyncMarker sync_{};
  std::string block_;
  std::size_t block_values_ = 0;
  std::uint64_t values_written_ = 0;
  bool closed_ = false;
};

// Streams values block by block; only the current block is held in memory.
class ContainerReader {
 public:
  // Reads and validates the header (magic, metadata, codec, schema). `source` names the input in errors.
  explicit ContainerReader(std::istream& in, std::string source = "avro container");
  // Values are resolved from the file's writer schema to `reader_schema`.
  ContainerReader(std::istream& in, Schema reader_schema, std::string source = "avro container");

  // Reads the next value; false at the end of the file. Throws Error on any corruption.
  bool next(Value& value);

  const Schema& writer_schema() const { return writer_schema_; }
  // All header metadata, including "avro.schema" (verbatim) and "avro.codec".
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  Codec codec() const { return codec_; }

 private:
  bool load_block();

  class Input {
   public:
    Input(std::istream& in, std::string source) : in_(in), source_(std::move(source)) {}
    bool at_end();
    std::int64_t read_long(std::string_view what);
    std::string read_exact(std::size_t size, std::string_view what);
    std::size_t offset() const { return offset_; }
    const std::string& source() const { return source_; }
    [[noreturn]] void fail_at(std::size_t offset, std::string_view problem) const;

   private:
    std::istream& in_;
    std::string source_;
    std::size_t offset_ = 0;
  };

  Input input_;
  std::map<std::string, std::string> metadata_;
  Schema writer_schema_;
  std::optional<Resolver> resolver_;
  Codec codec_ = Codec::kNull;
  SyncMarker sync_{};
  std::uint64_t block_index_ = 0;
  std::string block_;
  std::optional<Decoder> decoder_;
  std::size_t block_values_left_ = 0;
};

}  // namespace binberg::avro
