#include "avro/encoding.h"

#include <bit>
#include <limits>
#include <set>
#include <utility>

#include "avro/utf8.h"
#include "core/error.h"

namespace binberg::avro {

namespace {

template <typename UInt>
void append_little_endian(std::string& out, UInt bits) {
  for (std::size_t i = 0; i < sizeof(UInt); ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

template <typename UInt>
UInt load_little_endian(std::string_view bytes) {
  UInt bits = 0;
  for (std::size_t i = 0; i < sizeof(UInt); ++i)
    bits |= static_cast<UInt>(static_cast<std::uint8_t>(bytes[i])) << (8 * i);
  return bits;
}

std::string_view as_chars(const Bytes& bytes) { return {reinterpret_cast<const char*>(bytes.data()), bytes.size()}; }

Bytes to_bytes(std::string_view chars) { return Bytes(chars.begin(), chars.end()); }

}  // namespace

void Encoder::write_long(std::int64_t value) {
  auto zigzag = (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
  while (zigzag >= 0x80) {
    out_.push_back(static_cast<char>((zigzag & 0x7f) | 0x80));
    zigzag >>= 7;
  }
  out_.push_back(static_cast<char>(zigzag));
}

void Encoder::write_float(float value) { append_little_endian(out_, std::bit_cast<std::uint32_t>(value)); }

void Encoder::write_double(double value) { append_little_endian(out_, std::bit_cast<std::uint64_t>(value)); }

void Encoder::write_bytes(std::string_view bytes) {
  write_long(static_cast<std::int64_t>(bytes.size()));
  out_.append(bytes);
}

DecodeError::DecodeError(std::string message) : Error(message), problem_(std::move(message)) {}

void DecodeError::prepend_path(std::string_view segment) {
  path_ = fmt::format("/{}{}", segment, path_);
  set_message(fmt::format("{}, at {}", problem_, path_));
}

void Decoder::fail_at(std::size_t offset, std::string_view problem) const {
  throw DecodeError(fmt::format("avro: {} at byte {} of {}", problem, base_offset_ + offset, context_));
}

Decoder::Nesting::Nesting(Decoder& decoder) : decoder_(decoder) {
  if (++decoder_.depth_ > kMaxNestingDepth) {
    --decoder_.depth_;
    decoder_.fail_at(decoder_.position_, fmt::format("data nests deeper than {} levels", kMaxNestingDepth));
  }
}

// Varints are little-endian base-128. The last allowed byte may only carry the bits the type has left,
// so an over-long or out-of-range encoding is rejected instead of silently wrapping.
std::uint64_t Decoder::read_varint(int max_bytes, std::uint8_t max_last_byte, std::string_view what) {
  const std::size_t start = position_;
  std::uint64_t result = 0;
  for (int i = 0; i < max_bytes; ++i) {
    if (position_ >= data_.size()) fail_at(start, fmt::format("truncated {}", what));
    const auto byte = static_cast<std::uint8_t>(data_[position_++]);
    if (i == max_bytes - 1 && byte > max_last_byte) fail_at(start, fmt::format("overlong or out-of-range {}", what));
    result |= static_cast<std::uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) break;
  }
  return result;
}

bool Decoder::read_bool() {
  const std::size_t start = position_;
  const auto byte = static_cast<std::uint8_t>(take(1, "boolean")[0]);
  if (byte > 1) fail_at(start, fmt::format("invalid boolean byte {}", byte));
  return byte == 1;
}

std::int32_t Decoder::read_int() {
  const std::uint64_t zigzag = read_varint(5, 0x0f, "int");
  return static_cast<std::int32_t>(static_cast<std::int64_t>(zigzag >> 1) ^ -static_cast<std::int64_t>(zigzag & 1));
}

std::int64_t Decoder::read_long() {
  const std::uint64_t zigzag = read_varint(10, 0x01, "long");
  return static_cast<std::int64_t>((zigzag >> 1) ^ (0 - (zigzag & 1)));
}

float Decoder::read_float() { return std::bit_cast<float>(load_little_endian<std::uint32_t>(take(4, "float"))); }

double Decoder::read_double() { return std::bit_cast<double>(load_little_endian<std::uint64_t>(take(8, "double"))); }

std::string_view Decoder::read_bytes() {
  const std::size_t start = position_;
  const std::int64_t length = read_long();
  if (length < 0) fail_at(start, fmt::format("negative length {}", length));
  if (static_cast<std::uint64_t>(length) > remaining()) {
    fail_at(start, fmt::format("length {} exceeds the {} remaining bytes", length, remaining()));
  }
  return take(static_cast<std::size_t>(length), "bytes");
}

std::string_view Decoder::read_string() {
  const std::string_view text = read_bytes();
  if (const auto problem = find_invalid_utf8(text)) {
    const std::size_t start = position_ - text.size();
    fail_at(start + problem->offset, fmt::format("invalid UTF-8 in a string of {} bytes ({} at byte {} of the string)",
                                                 text.size(), problem->reason, problem->offset));
  }
  return text;
}

std::string_view Decoder::read_fixed(std::size_t size) { return take(size, "fixed"); }

std::size_t Decoder::read_union_branch(std::size_t branch_count) {
  const std::size_t start = position_;
  const std::int64_t branch = read_long();
  if (branch < 0 || static_cast<std::uint64_t>(branch) >= branch_count) {
    fail_at(start, fmt::format("union branch {} out of range for a union of {}", branch, branch_count));
  }
  return static_cast<std::size_t>(branch);
}

Decoder::BlockHeader Decoder::read_block_header() {
  const std::size_t start = position_;
  const std::int64_t count = read_long();
  if (count >= 0) return {static_cast<std::size_t>(count), std::nullopt};
  if (count == std::numeric_limits<std::int64_t>::min()) fail_at(start, "block count out of range");
  const std::int64_t byte_size = read_long();
  if (byte_size < 0 || static_cast<std::uint64_t>(byte_size) > remaining()) {
    fail_at(start,
            fmt::format("block byte size {} is negative or exceeds the {} remaining bytes", byte_size, remaining()));
  }
  return {static_cast<std::size_t>(-count), static_cast<std::size_t>(byte_size)};
}

void Decoder::count_empty_items(std::size_t count, std::size_t at) {
  if (empty_items_ > max_empty_items_ || count > max_empty_items_ - empty_items_) {
    fail_at(at, fmt::format("block count {} is larger than the data can hold: more than {} items that encode to no "
                            "bytes in one input",
                            count, max_empty_items_));
  }
  empty_items_ += count;
}

void Decoder::skip(std::size_t size) { take(size, "skipped data"); }

void Decoder::expect_end() const {
  if (remaining() != 0) fail_at(position_, fmt::format("{} trailing bytes after the last datum", remaining()));
}

std::string_view Decoder::take(std::size_t size, std::string_view what) {
  if (size > remaining()) {
    fail_at(position_, fmt::format("truncated {}: needs {} bytes, {} remain", what, size, remaining()));
  }
  const std::string_view bytes = data_.substr(position_, size);
  position_ += size;
  return bytes;
}

namespace {

bool can_encode_empty_visiting(const Node& schema, std::set<const Node*>& visiting) {
  switch (schema.type) {
    case Type::kNull:
      return true;
    case Type::kFixed:
      return schema.fixed_size == 0;
    case Type::kRecord:
      // A record reached again through itself has no finite datum along that path.
      if (!visiting.insert(&schema).second) return false;
      for (const Field& field : schema.fields) {
        if (!can_encode_empty_visiting(*field.type, visiting)) return false;
      }
      return true;
    default:
      return false;
  }
}

// The item count of one block, bounded so hostile counts cannot allocate or loop without input to back them.
void check_block_count(const Node& items, Decoder& decoder, const Decoder::BlockHeader& block,
                       std::size_t block_start) {
  if (can_encode_empty(items)) return decoder.count_empty_items(block.count, block_start);
  if (block.count > decoder.remaining()) {
    decoder.fail_at(block_start, fmt::format("block count {} is larger than the data can hold", block.count));
  }
}

// Mismatches between a value and a schema carry their path outwards, so the message says where.
struct EncodeMismatch {
  std::string path;
  std::string problem;
};

[[noreturn]] void mismatch(const Node& schema, const Value& value) {
  throw EncodeMismatch{"", fmt::format("a {} value does not fit {}", value.kind(), schema.describe())};
}

template <typename Body>
void at_path(std::string_view segment, Body&& body) {
  try {
    body();
  } catch (EncodeMismatch& e) {
    e.path = fmt::format("/{}{}", segment, e.path);
    throw;
  }
}

template <typename T>
const T& expect(const Node& schema, const Value& value) {
  if (!value.is<T>()) mismatch(schema, value);
  return value.as<T>();
}

// The first branch whose type takes values of this kind; unions hold at most one branch per unnamed type.
std::optional<std::size_t> branch_for(const Node& union_schema, const Value& value) {
  for (std::size_t i = 0; i < union_schema.branches.size(); ++i) {
    const Node& branch = *union_schema.branches[i];
    const bool fits = std::visit(
        [&](const auto& held) {
          using T = std::decay_t<decltype(held)>;
          if constexpr (std::is_same_v<T, std::monostate>) return branch.type == Type::kNull;
          if constexpr (std::is_same_v<T, bool>) return branch.type == Type::kBoolean;
          if constexpr (std::is_same_v<T, std::int32_t>) return branch.type == Type::kInt;
          if constexpr (std::is_same_v<T, std::int64_t>) return branch.type == Type::kLong;
          if constexpr (std::is_same_v<T, float>) return branch.type == Type::kFloat;
          if constexpr (std::is_same_v<T, double>) return branch.type == Type::kDouble;
          if constexpr (std::is_same_v<T, std::string>) return branch.type == Type::kString;
          if constexpr (std::is_same_v<T, Bytes>) {
            return branch.type == Type::kBytes || (branch.type == Type::kFixed && branch.fixed_size == held.size());
          }
          if constexpr (std::is_same_v<T, Enum>)
            return branch.type == Type::kEnum && held.index < branch.symbols.size();
          if constexpr (std::is_same_v<T, Array>) return branch.type == Type::kArray;
          if constexpr (std::is_same_v<T, Map>) return branch.type == Type::kMap;
          if constexpr (std::is_same_v<T, Record>) {
            return branch.type == Type::kRecord && branch.fields.size() == held.fields.size();
          }
          if constexpr (std::is_same_v<T, Union>) return false;
        },
        value.data());
    if (fits) return i;
  }
  return std::nullopt;
}

void encode_value(const Node& schema, const Value& value, Encoder& encoder);

void encode_array(const Node& schema, const Value& value, Encoder& encoder) {
  const Array& items = expect<Array>(schema, value);
  if (!items.empty()) encoder.write_long(static_cast<std::int64_t>(items.size()));
  for (std::size_t i = 0; i < items.size(); ++i) {
    at_path(std::to_string(i), [&] { encode_value(*schema.items, items[i], encoder); });
  }
  encoder.write_long(0);
}

void encode_map(const Node& schema, const Value& value, Encoder& encoder) {
  const Map& entries = expect<Map>(schema, value);
  if (!entries.empty()) encoder.write_long(static_cast<std::int64_t>(entries.size()));
  // Not a structured binding: clang 14 (the fuzz build) cannot capture those in a lambda.
  for (const auto& entry : entries) {
    const std::string& key = entry.first;
    const Value& item = entry.second;
    if (const auto problem = find_invalid_utf8(key)) {
      throw EncodeMismatch{"", fmt::format("map key \"{}\" is not valid UTF-8 ({} at byte {})", printable_bytes(key),
                                           problem->reason, problem->offset)};
    }
    encoder.write_bytes(key);
    at_path(key, [&] { encode_value(*schema.items, item, encoder); });
  }
  encoder.write_long(0);
}

void encode_record(const Node& schema, const Value& value, Encoder& encoder) {
  const Record& record = expect<Record>(schema, value);
  if (record.fields.size() != schema.fields.size()) {
    throw EncodeMismatch{"", fmt::format("record value has {} fields, {} has {}", record.fields.size(),
                                         schema.describe(), schema.fields.size())};
  }
  for (const Field& field : schema.fields) {
    at_path("fields/" + field.name, [&] { encode_value(*field.type, record.fields[field.position], encoder); });
  }
}

void encode_union(const Node& schema, const Value& value, Encoder& encoder) {
  const Union* chosen = value.is<Union>() ? &value.as<Union>() : nullptr;
  const std::optional<std::size_t> branch = chosen ? std::optional(chosen->branch()) : branch_for(schema, value);
  if (!branch || *branch >= schema.branches.size()) mismatch(schema, value);
  encoder.write_long(static_cast<std::int64_t>(*branch));
  at_path(std::to_string(*branch),
          [&] { encode_value(*schema.branches[*branch], chosen ? chosen->value() : value, encoder); });
}

void encode_value(const Node& schema, const Value& value, Encoder& encoder) {
  switch (schema.type) {
    case Type::kNull:
      if (!value.is_null()) mismatch(schema, value);
      return;
    case Type::kBoolean:
      return encoder.write_bool(expect<bool>(schema, value));
    case Type::kInt:
      return encoder.write_int(expect<std::int32_t>(schema, value));
    case Type::kLong:
      return encoder.write_long(expect<std::int64_t>(schema, value));
    case Type::kFloat:
      return encoder.write_float(expect<float>(schema, value));
    case Type::kDouble:
      return encoder.write_double(expect<double>(schema, value));
    case Type::kString: {
      const std::string& text = expect<std::string>(schema, value);
      if (const auto problem = find_invalid_utf8(text)) {
        throw EncodeMismatch{"", fmt::format("string of {} bytes is not valid UTF-8 ({} at byte {})", text.size(),
                                             problem->reason, problem->offset)};
      }
      return encoder.write_bytes(text);
    }
    case Type::kBytes:
      return encoder.write_bytes(as_chars(expect<Bytes>(schema, value)));
    case Type::kFixed: {
      const Bytes& bytes = expect<Bytes>(schema, value);
      if (bytes.size() != schema.fixed_size) {
        throw EncodeMismatch{
            "", fmt::format("{} bytes do not fit {} of size {}", bytes.size(), schema.describe(), schema.fixed_size)};
      }
      return encoder.write_fixed(as_chars(bytes));
    }
    case Type::kEnum: {
      const Enum& symbol = expect<Enum>(schema, value);
      if (symbol.index >= schema.symbols.size()) {
        throw EncodeMismatch{"",
                             fmt::format("symbol index {} is out of range for {}", symbol.index, schema.describe())};
      }
      return encoder.write_int(static_cast<std::int32_t>(symbol.index));
    }
    case Type::kArray:
      return encode_array(schema, value, encoder);
    case Type::kMap:
      return encode_map(schema, value, encoder);
    case Type::kRecord:
      return encode_record(schema, value, encoder);
    case Type::kUnion:
      return encode_union(schema, value, encoder);
  }
}

// What a walk does with a block whose byte size the writer recorded: read its items, or (when
// skipping) jump over it whole.
enum class SizedBlocks { kRead, kJump };

// Walks the items of a blocked array or map; `item` reads or skips one item (and for maps its key).
template <typename ReadItem>
void for_each_block_item(const Node& items, Decoder& decoder, ReadItem&& item,
                         SizedBlocks sized_blocks = SizedBlocks::kRead) {
  for (;;) {
    const std::size_t block_start = decoder.offset();
    const Decoder::BlockHeader block = decoder.read_block_header();
    if (block.count == 0) return;
    if (sized_blocks == SizedBlocks::kJump && block.byte_size) {
      decoder.skip(*block.byte_size);
      continue;
    }
    check_block_count(items, decoder, block, block_start);
    for (std::size_t i = 0; i < block.count; ++i) item();
  }
}

}  // namespace

bool can_encode_empty(const Node& schema) {
  std::set<const Node*> visiting;
  return can_encode_empty_visiting(schema, visiting);
}

void for_each_item(const Node& items, Decoder& decoder, const std::function<void()>& item) {
  for_each_block_item(items, decoder, item);
}

void encode(const Node& schema, const Value& value, Encoder& encoder) {
  try {
    encode_value(schema, value, encoder);
  } catch (const EncodeMismatch& e) {
    fail("avro encode: {} at {}", e.problem, e.path.empty() ? "/" : e.path);
  }
}

std::string encode(const Schema& schema, const Value& value) {
  std::string out;
  Encoder encoder(out);
  encode(schema.root(), value, encoder);
  return out;
}

Value decode(const Node& schema, Decoder& decoder) {
  const Decoder::Nesting nesting(decoder);
  switch (schema.type) {
    case Type::kNull:
      return Value();
    case Type::kBoolean:
      return decoder.read_bool();
    case Type::kInt:
      return decoder.read_int();
    case Type::kLong:
      return decoder.read_long();
    case Type::kFloat:
      return decoder.read_float();
    case Type::kDouble:
      return decoder.read_double();
    case Type::kString:
      return std::string(decoder.read_string());
    case Type::kBytes:
      return to_bytes(decoder.read_bytes());
    case Type::kFixed:
      return to_bytes(decoder.read_fixed(schema.fixed_size));
    case Type::kEnum: {
      const std::size_t start = decoder.offset();
      const std::int32_t index = decoder.read_int();
      if (index < 0 || static_cast<std::size_t>(index) >= schema.symbols.size()) {
        decoder.fail_at(start, fmt::format("enum index {} out of range for {}", index, schema.describe()));
      }
      return Enum{static_cast<std::size_t>(index)};
    }
    case Type::kArray: {
      Array items;
      for_each_block_item(*schema.items, decoder, [&] {
        with_decode_path([&] { return std::to_string(items.size()); },
                         [&] { items.push_back(decode(*schema.items, decoder)); });
      });
      return items;
    }
    case Type::kMap: {
      Map entries;
      for_each_block_item(*schema.items, decoder, [&] {
        const std::size_t key_start = decoder.offset();
        std::string key(decoder.read_string());
        Value item = with_decode_path([&] { return key; }, [&] { return decode(*schema.items, decoder); });
        if (!entries.emplace(std::move(key), std::move(item)).second) decoder.fail_at(key_start, "duplicate map key");
      });
      return entries;
    }
    case Type::kRecord: {
      Record record;
      record.fields.reserve(schema.fields.size());
      for (const Field& field : schema.fields) {
        with_decode_path([&] { return "fields/" + field.name; },
                         [&] { record.fields.push_back(decode(*field.type, decoder)); });
      }
      return record;
    }
    case Type::kUnion: {
      const std::size_t branch = decoder.read_union_branch(schema.branches.size());
      return Union(branch, with_decode_path([&] { return std::to_string(branch); },
                                            [&] { return decode(*schema.branches[branch], decoder); }));
    }
  }
  decoder.fail_at(decoder.offset(), "unknown schema type");
}

Value decode(const Schema& schema, std::string_view datum) {
  Decoder decoder(datum);
  Value value = decode(schema.root(), decoder);
  decoder.expect_end();
  return value;
}

void skip(const Node& schema, Decoder& decoder) {
  const Decoder::Nesting nesting(decoder);
  switch (schema.type) {
    case Type::kNull:
      return;
    case Type::kBoolean:
      decoder.read_bool();
      return;
    case Type::kInt:
    case Type::kEnum:
      decoder.read_int();
      return;
    case Type::kLong:
      decoder.read_long();
      return;
    case Type::kFloat:
      decoder.skip(4);
      return;
    case Type::kDouble:
      decoder.skip(8);
      return;
    case Type::kString:
    case Type::kBytes:
      decoder.read_bytes();
      return;
    case Type::kFixed:
      decoder.skip(schema.fixed_size);
      return;
    case Type::kArray:
    case Type::kMap: {
      const bool is_map = schema.type == Type::kMap;
      for_each_block_item(
          *schema.items, decoder,
          [&] {
            if (is_map) decoder.read_bytes();
            skip(*schema.items, decoder);
          },
          SizedBlocks::kJump);
      return;
    }
    case Type::kRecord:
      for (const Field& field : schema.fields) skip(*field.type, decoder);
      return;
    case Type::kUnion:
      skip(*schema.branches[decoder.read_union_branch(schema.branches.size())], decoder);
      return;
  }
}

}  // namespace binberg::avro
