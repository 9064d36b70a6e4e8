// libFuzzer entry point over the datum decoder, schema resolution and the container reader.
// Build with clang -fsanitize=fuzzer to fuzz; the avro tests also drive it with seeded inputs.
// Any exception other than binberg::Error, and any sanitizer report, is a bug; so is a decoded datum
// that does not encode back to an encoding which decodes the same.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <sstream>
#include <string_view>

#include "avro/container.h"
#include "avro/encoding.h"
#include "avro/resolution.h"
#include "core/error.h"
#include "fuzz_decoder.h"

namespace binberg::avro::fuzzing {

const std::vector<Schema>& fuzz_schemas() {
  static const std::vector<Schema> schemas = [] {
    std::vector<Schema> parsed;
    for (const char* text : {
             R"("long")",
             R"(["null", "int", "string", {"type": "array", "items": ["null", "double"]}])",
             R"({"type": "map", "values": {"type": "array", "items": "bytes"}})",
             R"({"type": "record", "name": "List", "fields": [
                 {"name": "v", "type": "float"}, {"name": "next", "type": ["null", "List"]}]})",
             R"({"type": "record", "name": "r", "fields": [
                 {"name": "b", "type": "boolean"}, {"name": "e", "type": {"type": "enum", "name": "E",
                  "symbols": ["A", "B", "C"]}}, {"name": "f", "type": {"type": "fixed", "name": "F", "size": 3}},
                 {"name": "n", "type": {"type": "array", "items": "null"}},
                 {"name": "m", "type": {"type": "map", "values": ["null", "r"]}}]})",
         }) {
      parsed.push_back(Schema::parse(text));
    }
    return parsed;
  }();
  return schemas;
}

namespace {

// Each fuzz schema read through a reader schema that promotes, reorders and drops.
const Schema& reader_for(std::size_t index) {
  static const std::vector<Schema> readers = [] {
    std::vector<Schema> parsed;
    for (const char* text : {
             R"(["null", "double"])",
             R"(["string", "null", "long", {"type": "array", "items": ["double", "null"]}])",
             R"({"type": "map", "values": {"type": "array", "items": "string"}})",
             R"({"type": "record", "name": "List", "fields": [
                 {"name": "next", "type": ["null", "List"]}, {"name": "v", "type": "double"},
                 {"name": "extra", "type": "int", "default": 1}]})",
             R"({"type": "record", "name": "r", "fields": [
                 {"name": "m", "type": {"type": "map", "values": ["null", "r"]}},
                 {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["C", "A", "Z"], "default": "Z"}}]})",
         }) {
      parsed.push_back(Schema::parse(text));
    }
    return parsed;
  }();
  return readers.at(index);
}

// Far below kMaxEmptyItems, so inputs claiming a million nulls cost little time and the fuzzer
// tries more of them; the cap's logic is the same.
constexpr std::size_t kFuzzMaxEmptyItems = 4096;

Decoder fuzz_decoder(std::string_view datum) {
  Decoder decoder(datum);
  decoder.set_max_empty_items(kFuzzMaxEmptyItems);
  return decoder;
}

}  // namespace

void fuzz_datum(std::size_t index, std::string_view datum) {
  const Schema& schema = fuzz_schemas()[index];
  std::optional<Value> value;
  try {
    Decoder decoder = fuzz_decoder(datum);
    value = decode(schema.root(), decoder);
    decoder.expect_end();
  } catch (const Error&) {
  }
  if (value) {
    // Whatever decodes must encode again (strings included: the decoder validated their UTF-8) and
    // decode back to the same encoding. Outside the try: an exception here is a bug, not bad input.
    const std::string encoded = encode(schema, *value);
    if (encode(schema, decode(schema, encoded)) != encoded) __builtin_trap();
  }
  try {
    Decoder decoder = fuzz_decoder(datum);
    skip(schema.root(), decoder);
  } catch (const Error&) {
  }
  try {
    static const std::vector<Resolver> resolvers = [] {
      std::vector<Resolver> built;
      for (std::size_t i = 0; i < fuzz_schemas().size(); ++i) built.emplace_back(fuzz_schemas()[i], reader_for(i));
      return built;
    }();
    Decoder decoder = fuzz_decoder(datum);
    resolvers[index].read(decoder);
    decoder.expect_end();
  } catch (const Error&) {
  }
}

void fuzz_container(std::string_view file) {
  try {
    std::istringstream in{std::string(file)};
    ContainerReader reader(in, "fuzz input");
    for (Value value; reader.next(value);) {
    }
  } catch (const Error&) {
  }
}

std::vector<std::string> seed_inputs() {
  std::vector<std::string> valid;
  const auto& schemas = fuzz_schemas();
  // Datums of each schema found among random bytes that happen to decode.
  for (std::size_t index = 0; index < schemas.size(); ++index) {
    std::mt19937 random(static_cast<std::uint32_t>(index));
    for (int attempt = 0, found = 0; attempt < 20000 && found < 4; ++attempt) {
      std::string datum(random() % 40, '\0');
      for (char& byte : datum) byte = static_cast<char>(random() % 8);  // small bytes decode often
      try {
        const Value value = decode(schemas[index], datum);
        valid.push_back(static_cast<char>(index) + encode(schemas[index], value));
        ++found;
      } catch (const Error&) {
      }
    }
  }
  // Multi-byte UTF-8 in a string and in map keys.
  valid.push_back('\1' + encode(schemas[1], Union(2, Value("Z\xc3\xbcrich \xe2\x82\xac \xf0\x9f\x98\x80"))));
  valid.push_back('\2' + encode(schemas[2], Map{{"caf\xc3\xa9", Array{Bytes{1, 2}}}, {"k", Array{}}}));
  for (const Codec codec : {Codec::kNull, Codec::kDeflate, Codec::kSnappy}) {
    std::ostringstream out;
    ContainerWriterOptions options;
    options.codec = codec;
    options.block_size = 16;
    ContainerWriter writer(out, schemas[3], options);
    for (int i = 0; i < 6; ++i) {
      Value list = Union(0, Value());
      for (int depth = 0; depth < i; ++depth) list = Union(1, Value(Record{{Value(1.5f * depth), list}}));
      writer.append(Record{{Value(0.5f), list}});
    }
    writer.close();
    valid.push_back(static_cast<char>(kContainerInput) + out.str());
  }
  return valid;
}

}  // namespace binberg::avro::fuzzing

#ifndef BINBERG_FUZZ_SEPARATE_TARGETS
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace binberg::avro::fuzzing;
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & kContainerInput) {
    fuzz_container(rest);
  } else {
    fuzz_datum(data[0] % fuzz_schemas().size(), rest);
  }
  return 0;
}
#endif
