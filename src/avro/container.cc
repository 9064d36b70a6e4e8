#include "avro/container.h"

#include <algorithm>
#include <random>
#include <utility>

#include "core/error.h"

namespace binberg::avro {

namespace {

constexpr std::string_view kMagic("Obj\x01", 4);
constexpr std::string_view kSchemaKey = "avro.schema";
constexpr std::string_view kCodecKey = "avro.codec";

SyncMarker random_sync_marker() {
  std::random_device random;
  SyncMarker marker;
  for (auto& byte : marker) byte = static_cast<std::uint8_t>(random());
  return marker;
}

std::string_view as_chars(const SyncMarker& marker) {
  return {reinterpret_cast<const char*>(marker.data()), marker.size()};
}

}  // namespace

ContainerWriter::ContainerWriter(std::ostream& out, Schema schema, ContainerWriterOptions options,
                                 std::string destination)
    : out_(out), schema_(std::move(schema)), options_(std::move(options)), destination_(std::move(destination)) {
  for (const auto& [key, value] : options_.metadata) {
    if (key.starts_with("avro.")) fail("avro container: metadata key '{}' for {} is reserved", key, destination_);
  }
  sync_ = options_.sync_marker.value_or(random_sync_marker());
  std::string header(kMagic);
  Encoder encoder(header);
  encoder.write_long(static_cast<std::int64_t>(options_.metadata.size() + 2));
  encoder.write_bytes(kSchemaKey);
  encoder.write_bytes(schema_.to_json());
  encoder.write_bytes(kCodecKey);
  encoder.write_bytes(codec_name(options_.codec));
  for (const auto& [key, value] : options_.metadata) {
    encoder.write_bytes(key);
    encoder.write_bytes(value);
  }
  encoder.write_long(0);
  encoder.write_fixed(as_chars(sync_));
  write(header);
}

void ContainerWriter::append(const Value& value) {
  if (closed_) fail("avro container: append to {} after close", destination_);
  const std::size_t size_before = block_.size();
  Encoder encoder(block_);
  try {
    encode(schema_.root(), value, encoder);
  } catch (...) {
    block_.resize(size_before);  // drop the partial encoding so the block stays valid
    throw;
  }
  ++block_values_;
  ++values_written_;
  if (block_.size() >= options_.block_size) flush();
}

void ContainerWriter::flush() {
  if (block_values_ == 0) return;
  const std::string data = compress(options_.codec, block_, options_.deflate_level);
  std::string header;
  Encoder encoder(header);
  encoder.write_long(static_cast<std::int64_t>(block_values_));
  encoder.write_long(static_cast<std::int64_t>(data.size()));
  write(header);
  write(data);
  write(as_chars(sync_));
  block_.clear();
  block_values_ = 0;
}

void ContainerWriter::close() {
  if (closed_) return;
  flush();
  out_.flush();
  if (!out_) fail("avro container: flushing {} failed", destination_);
  closed_ = true;
}

void ContainerWriter::write(std::string_view bytes) {
  out_.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out_) fail("avro container: writing {} bytes to {} failed", bytes.size(), destination_);
}

void ContainerReader::Input::fail_at(std::size_t offset, std::string_view problem) const {
  fail("avro container: {} at byte {} of {}", problem, offset, source_);
}

bool ContainerReader::Input::at_end() { return in_.peek() == std::istream::traits_type::eof(); }

// Gathers the varint's bytes from the stream, then lets Decoder apply its strict checks.
std::int64_t ContainerReader::Input::read_long(std::string_view what) {
  const std::size_t start = offset_;
  std::string bytes;
  while (bytes.size() < 10) {
    const auto byte = in_.get();
    if (byte == std::istream::traits_type::eof()) break;
    ++offset_;
    bytes.push_back(static_cast<char>(byte));
    if ((byte & 0x80) == 0) break;
  }
  return Decoder(bytes, fmt::format("{} ({})", source_, what), start).read_long();
}

std::string ContainerReader::Input::read_exact(std::size_t size, std::string_view what) {
  // Grows with the data actually present, so a corrupt size cannot allocate more than the input holds.
  constexpr std::size_t kChunk = 1 << 20;
  std::string out;
  while (out.size() < size) {
    const std::size_t piece = std::min(kChunk, size - out.size());
    const std::size_t old_size = out.size();
    out.resize(old_size + piece);
    in_.read(out.data() + old_size, static_cast<std::streamsize>(piece));
    const auto got = static_cast<std::size_t>(in_.gcount());
    offset_ += got;
    if (got != piece) fail_at(offset_, fmt::format("truncated {}: {} of {} bytes present", what, old_size + got, size));
  }
  return out;
}

ContainerReader::ContainerReader(std::istream& in, std::string source) : input_(in, std::move(source)) {
  if (input_.read_exact(kMagic.size(), "magic") != kMagic) input_.fail_at(0, "not an Avro container (bad magic)");
  for (;;) {
    const std::size_t block_start = input_.offset();
    std::int64_t count = input_.read_long("metadata block count");
    if (count == 0) break;
    if (count < 0) {  // a negative count is followed by the block's byte size, which readers may ignore
      if (count == std::numeric_limits<std::int64_t>::min()) input_.fail_at(block_start, "metadata count out of range");
      count = -count;
      input_.read_long("metadata block size");
    }
    for (std::int64_t i = 0; i < count; ++i) {
      const std::size_t entry_start = input_.offset();
      auto read_string = [&](std::string_view what) {
        const std::int64_t length = input_.read_long(what);
        if (length < 0 || static_cast<std::uint64_t>(length) > kMaxContainerBlockBytes) {
          input_.fail_at(entry_start, fmt::format("invalid {} length {}", what, length));
        }
        return input_.read_exact(static_cast<std::size_t>(length), what);
      };
      std::string key = read_string("metadata key");
      std::string value = read_string("metadata value");
      if (!metadata_.emplace(std::move(key), std::move(value)).second) {
        input_.fail_at(entry_start, "duplicate metadata key");
      }
    }
  }
  const std::string sync = input_.read_exact(sync_.size(), "sync marker");
  std::copy(sync.begin(), sync.end(), sync_.begin());

  const auto schema = metadata_.find(std::string(kSchemaKey));
  if (schema == metadata_.end()) input_.fail_at(0, "header has no avro.schema");
  writer_schema_ = with_context(fmt::format("avro container: invalid writer schema in {}", input_.source()),
                                [&] { return Schema::parse(schema->second); });
  if (const auto codec = metadata_.find(std::string(kCodecKey)); codec != metadata_.end()) {
    codec_ = parse_codec(codec->second, input_.source());
  }
}

ContainerReader::ContainerReader(std::istream& in, Schema reader_schema, std::string source)
    : ContainerReader(in, std::move(source)) {
  resolver_.emplace(writer_schema_, std::move(reader_schema));
}

bool ContainerReader::load_block() {
  if (input_.at_end()) return false;
  const std::size_t start = input_.offset();
  const std::int64_t count = input_.read_long("block object count");
  const std::int64_t size = input_.read_long("block size");
  if (count < 0 || size < 0 || static_cast<std::uint64_t>(size) > kMaxContainerBlockBytes) {
    input_.fail_at(start, fmt::format("invalid block {}: {} objects in {} bytes", block_index_, count, size));
  }
  const std::string data = input_.read_exact(static_cast<std::size_t>(size), "block data");
  if (input_.read_exact(sync_.size(), "sync marker") != as_chars(sync_)) {
    input_.fail_at(input_.offset() - sync_.size(), fmt::format("sync marker mismatch after block {}", block_index_));
  }
  const std::string where = fmt::format("block {} of {}", block_index_, input_.source());
  block_ = decompress(codec_, data, kMaxContainerBlockBytes, where);
  decoder_.emplace(block_, where);
  // Each object takes at least one byte unless the schema allows empty encodings.
  const std::size_t max_count = can_encode_empty(writer_schema_.root()) ? kMaxEmptyItems : block_.size();
  if (static_cast<std::uint64_t>(count) > max_count) {
    input_.fail_at(start, fmt::format("block {} claims {} objects in {} bytes", block_index_, count, block_.size()));
  }
  block_values_left_ = static_cast<std::size_t>(count);
  ++block_index_;
  return true;
}

bool ContainerReader::next(Value& value) {
  while (block_values_left_ == 0) {
    if (!load_block()) return false;
  }
  value = resolver_ ? resolver_->read(*decoder_) : decode(writer_schema_.root(), *decoder_);
  if (--block_values_left_ == 0) decoder_->expect_end();
  return true;
}

}  // namespace binberg::avro
