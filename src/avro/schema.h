#pragma once

// Avro schemas: a parsed, validated, immutable graph of nodes. Every JSON key of the schema text is
// kept, in its original order, so a schema prints back with all attributes (Iceberg relies on
// "field-id", "element-id", "key-id", "value-id", "adjust-to-utc" surviving a round trip).

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace binberg::avro {

// Insertion-ordered so printed schemas keep the key order they were written with.
using Json = nlohmann::ordered_json;

enum class Type : std::uint8_t {
  kNull,
  kBoolean,
  kInt,
  kLong,
  kFloat,
  kDouble,
  kBytes,
  kString,
  kRecord,
  kEnum,
  kArray,
  kMap,
  kUnion,
  kFixed,
};

enum class LogicalType : std::uint8_t {
  kNone,
  kDecimal,
  kUuid,
  kDate,
  kTimeMillis,
  kTimeMicros,
  kTimestampMillis,
  kTimestampMicros,
  kLocalTimestampMillis,
  kLocalTimestampMicros,
};

std::string_view type_name(Type type);
std::string_view logical_type_name(LogicalType logical_type);

struct Node;

struct Field {
  std::string name;
  const Node* type = nullptr;
  std::optional<Json> default_value;
  std::vector<std::string> aliases;
  std::size_t position = 0;
  // The field's JSON object as written; its "type" key holds null (the schema lives in `type`).
  Json properties;
};

// One schema node. Named types (record, enum, fixed) exist once: every reference by name points at
// the defining node, so recursive schemas form cycles and nodes are compared by address.
struct Node {
  Type type = Type::kNull;
  std::string name;                  // full name of a named type
  std::vector<std::string> aliases;  // full names
  std::vector<Field> fields;         // record
  std::vector<std::string> symbols;  // enum
  std::optional<std::string> enum_default;
  std::size_t fixed_size = 0;
  const Node* items = nullptr;        // array items or map values
  std::vector<const Node*> branches;  // union
  // Invalid logical types are ignored as the specification requires (they stay in `properties`).
  LogicalType logical_type = LogicalType::kNone;
  int precision = 0;
  int scale = 0;
  // The JSON object as written; keys holding child schemas ("fields", "items", "values") hold null.
  // Null for a primitive written as a bare string and for unions.
  Json properties;

  bool is_named() const { return type == Type::kRecord || type == Type::kEnum || type == Type::kFixed; }
  std::string_view unqualified_name() const;
  const Field* find_field(std::string_view field_name) const;
  std::optional<std::size_t> symbol_index(std::string_view symbol) const;
  // "int", "record a.b.C", "union" ...: how error messages name a node.
  std::string describe() const;
};

class Schema {
 public:
  // The "null" schema.
  Schema();

  // Throws Error naming the JSON path of the first problem (unknown type, duplicate name, bad default...).
  static Schema parse(std::string_view json_text);
  static Schema from_json(const Json& json);

  const Node& root() const { return *root_; }
  const Node* find_named(std::string_view full_name) const;

  // Full JSON with every attribute: the text written into container file headers.
  std::string to_json() const;
  // Parsing Canonical Form, the input of fingerprints.
  std::string canonical_form() const;
  // CRC-64-AVRO (Rabin) of the canonical form.
  std::uint64_t fingerprint64() const;
  std::array<std::uint8_t, 32> fingerprint_sha256() const;

  struct Graph;  // owns the nodes; defined in schema.cc

 private:
  Schema(std::shared_ptr<const Graph> graph, const Node* root) : graph_(std::move(graph)), root_(root) {}

  std::shared_ptr<const Graph> graph_;
  const Node* root_ = nullptr;
};

// CRC-64-AVRO (the Rabin fingerprint of the specification) of arbitrary bytes.
std::uint64_t crc64_avro(std::string_view bytes);

}  // namespace binberg::avro
