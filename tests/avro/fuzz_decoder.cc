// libFuzzer entry point over the datum decoder, schema resolution and the container reader.
// Build with clang -fsanitize=fuzzer to fuzz; the avro tests also drive it with seeded inputs.
// Any exception other than binberg::Error, and any sanitizer report, is a bug.

#include <cstddef>
#include <cstdint>
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

void fuzz_datum(std::size_t index, std::string_view datum) {
  const Schema& schema = fuzz_schemas()[index];
  try {
    decode(schema, datum);
  } catch (const Error&) {
  }
  try {
    Decoder decoder(datum);
    skip(schema.root(), decoder);
  } catch (const Error&) {
  }
  try {
    static const std::vector<Resolver> resolvers = [] {
      std::vector<Resolver> built;
      for (std::size_t i = 0; i < fuzz_schemas().size(); ++i) built.emplace_back(fuzz_schemas()[i], reader_for(i));
      return built;
    }();
    resolvers[index].read(datum);
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

}  // namespace

}  // namespace binberg::avro::fuzzing

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
