#include "avro/schema.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "avro/value.h"
#include "core/error.h"

namespace binberg::avro {

namespace {

constexpr std::array<std::pair<std::string_view, Type>, 8> kPrimitives = {{
    {"null", Type::kNull},
    {"boolean", Type::kBoolean},
    {"int", Type::kInt},
    {"long", Type::kLong},
    {"float", Type::kFloat},
    {"double", Type::kDouble},
    {"bytes", Type::kBytes},
    {"string", Type::kString},
}};

constexpr std::array<std::pair<std::string_view, LogicalType>, 9> kLogicalTypes = {{
    {"decimal", LogicalType::kDecimal},
    {"uuid", LogicalType::kUuid},
    {"date", LogicalType::kDate},
    {"time-millis", LogicalType::kTimeMillis},
    {"time-micros", LogicalType::kTimeMicros},
    {"timestamp-millis", LogicalType::kTimestampMillis},
    {"timestamp-micros", LogicalType::kTimestampMicros},
    {"local-timestamp-millis", LogicalType::kLocalTimestampMillis},
    {"local-timestamp-micros", LogicalType::kLocalTimestampMicros},
}};

std::optional<Type> primitive_type(std::string_view name) {
  for (const auto& [primitive_name, type] : kPrimitives) {
    if (primitive_name == name) return type;
  }
  return std::nullopt;
}

bool is_valid_name(std::string_view name) {
  auto is_start = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  auto is_rest = [&](char c) { return is_start(c) || (c >= '0' && c <= '9'); };
  return !name.empty() && is_start(name.front()) && std::all_of(name.begin() + 1, name.end(), is_rest);
}

// A full name is dot-separated valid names; an empty namespace is the null namespace.
bool is_valid_dotted(std::string_view dotted) {
  for (std::size_t start = 0;;) {
    const std::size_t dot = dotted.find('.', start);
    if (!is_valid_name(dotted.substr(start, dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool is_valid_namespace(std::string_view ns) { return ns.empty() || is_valid_dotted(ns); }

std::string_view namespace_of(std::string_view full_name) {
  const std::size_t dot = full_name.rfind('.');
  return dot == std::string_view::npos ? std::string_view() : full_name.substr(0, dot);
}

std::string qualify(std::string_view name, std::string_view ns) {
  if (name.find('.') != std::string_view::npos || ns.empty()) return std::string(name);
  return fmt::format("{}.{}", ns, name);
}

[[noreturn]] void schema_error(const std::string& path, std::string_view message) {
  fail("avro schema: {} at {}", message, path.empty() ? "/" : path);
}

// Largest number of decimal digits a two's-complement value of `size` bytes always holds.
int max_decimal_precision(std::size_t size) {
  if (size == 0) return 0;
  return static_cast<int>(std::floor(static_cast<double>(8 * size - 1) * std::log10(2.0)));
}

// Copies an object's keys in order, nulling those whose values are child schemas parsed separately.
Json shallow_properties(const Json& object, std::initializer_list<std::string_view> child_keys) {
  Json properties = Json::object();
  for (const auto& [key, value] : object.items()) {
    const bool is_child = std::find(child_keys.begin(), child_keys.end(), key) != child_keys.end();
    properties[key] = is_child ? Json() : value;
  }
  return properties;
}

}  // namespace

std::string_view type_name(Type type) {
  switch (type) {
    case Type::kRecord:
      return "record";
    case Type::kEnum:
      return "enum";
    case Type::kArray:
      return "array";
    case Type::kMap:
      return "map";
    case Type::kUnion:
      return "union";
    case Type::kFixed:
      return "fixed";
    default:
      return kPrimitives[static_cast<std::size_t>(type)].first;
  }
}

std::string_view logical_type_name(LogicalType logical_type) {
  if (logical_type == LogicalType::kNone) return "none";
  return kLogicalTypes[static_cast<std::size_t>(logical_type) - 1].first;
}

std::string_view Node::unqualified_name() const {
  const std::size_t dot = name.rfind('.');
  return dot == std::string::npos ? std::string_view(name) : std::string_view(name).substr(dot + 1);
}

const Field* Node::find_field(std::string_view field_name) const {
  for (const Field& field : fields) {
    if (field.name == field_name) return &field;
  }
  return nullptr;
}

std::optional<std::size_t> Node::symbol_index(std::string_view symbol) const {
  const auto it = std::find(symbols.begin(), symbols.end(), symbol);
  if (it == symbols.end()) return std::nullopt;
  return static_cast<std::size_t>(it - symbols.begin());
}

std::string Node::describe() const {
  if (is_named()) return fmt::format("{} {}", type_name(type), name);
  if (type == Type::kArray) return fmt::format("array of {}", items->describe());
  if (type == Type::kMap) return fmt::format("map of {}", items->describe());
  if (type != Type::kUnion) return std::string(type_name(type));
  std::string out = "union [";
  for (std::size_t i = 0; i < branches.size(); ++i) out += (i ? ", " : "") + branches[i]->describe();
  return out + "]";
}

struct Schema::Graph {
  std::vector<std::unique_ptr<Node>> nodes;
  std::map<std::string, const Node*, std::less<>> named;
};

namespace {

class Parser {
 public:
  explicit Parser(Schema::Graph& graph) : graph_(graph) {}

  const Node* parse(const Json& json, const std::string& ns, const std::string& path) {
    if (json.is_string()) return parse_name(json.get<std::string>(), ns, path);
    if (json.is_array()) return parse_union(json, ns, path);
    if (json.is_object()) return parse_object(json, ns, path);
    schema_error(path, fmt::format("a schema must be a string, object or array, not {}", json.dump()));
  }

  // Defaults are checked once the whole graph exists: a default may use types defined after its field.
  void check_defaults() const {
    for (const auto& [record, index, path] : defaults_) {
      const Field& field = record->fields[index];
      try {
        value_from_json(*field.type, *field.default_value);
      } catch (const Error& e) {
        schema_error(path, fmt::format("field '{}' has an invalid default: {}", field.name, e.what()));
      }
    }
  }

 private:
  Node& add(Type type, Json properties) {
    auto& node = graph_.nodes.emplace_back(std::make_unique<Node>());
    node->type = type;
    node->properties = std::move(properties);
    return *node;
  }

  const Node* parse_name(const std::string& name, const std::string& ns, const std::string& path) {
    if (const auto primitive = primitive_type(name)) return &add(*primitive, Json());
    for (const std::string& candidate : {qualify(name, ns), name}) {
      if (const auto it = graph_.named.find(candidate); it != graph_.named.end()) return it->second;
    }
    schema_error(path, fmt::format("unknown type '{}'", name));
  }

  const Node* parse_union(const Json& json, const std::string& ns, const std::string& path) {
    Node& node = add(Type::kUnion, Json());
    std::set<std::string> seen;
    for (std::size_t i = 0; i < json.size(); ++i) {
      const std::string branch_path = fmt::format("{}/{}", path, i);
      const Node* branch = parse(json[i], ns, branch_path);
      if (branch->type == Type::kUnion) schema_error(branch_path, "a union may not directly contain a union");
      // Unnamed types may appear once each; named types once per name.
      const std::string key = branch->is_named() ? "named " + branch->name : std::string(type_name(branch->type));
      if (!seen.insert(key).second)
        schema_error(branch_path, fmt::format("union contains {} twice", branch->describe()));
      node.branches.push_back(branch);
    }
    return &node;
  }

  const Node* parse_object(const Json& json, const std::string& ns, const std::string& path) {
    const auto type_it = json.find("type");
    if (type_it == json.end()) schema_error(path, "schema object has no 'type'");
    if (!type_it->is_string()) return parse(*type_it, ns, path + "/type");
    const std::string& type = type_it->get_ref<const std::string&>();
    if (const auto primitive = primitive_type(type)) {
      Node& node = add(*primitive, shallow_properties(json, {}));
      apply_logical_type(node, path);
      return &node;
    }
    if (type == "record" || type == "error") return parse_record(json, ns, path);
    if (type == "enum") return parse_enum(json, ns, path);
    if (type == "fixed") return parse_fixed(json, ns, path);
    if (type == "array" || type == "map") {
      const char* child_key = type == "array" ? "items" : "values";
      const auto child = json.find(child_key);
      if (child == json.end()) schema_error(path, fmt::format("{} has no '{}'", type, child_key));
      Node& node = add(type == "array" ? Type::kArray : Type::kMap, shallow_properties(json, {child_key}));
      node.items = parse(*child, ns, fmt::format("{}/{}", path, child_key));
      return &node;
    }
    // {"type": "SomeName"} refers to a named type defined earlier.
    return parse_name(type, ns, path + "/type");
  }

  // Name, namespace and aliases of a named type; registers it so later (and recursive) references resolve.
  Node& add_named(Type type, const Json& json, std::initializer_list<std::string_view> child_keys,
                  const std::string& enclosing_ns, const std::string& path) {
    const auto name_it = json.find("name");
    if (name_it == json.end() || !name_it->is_string()) {
      schema_error(path, fmt::format("{} has no string 'name'", type_name(type)));
    }
    const std::string& name = name_it->get_ref<const std::string&>();
    std::string ns = enclosing_ns;
    if (const auto ns_it = json.find("namespace"); ns_it != json.end() && !ns_it->is_null()) {
      if (!ns_it->is_string() || !is_valid_namespace(ns_it->get_ref<const std::string&>())) {
        schema_error(path + "/namespace", fmt::format("invalid namespace {}", ns_it->dump()));
      }
      ns = ns_it->get<std::string>();
    }
    Node& node = add(type, shallow_properties(json, child_keys));
    node.name = qualify(name, ns);
    if (!is_valid_dotted(node.name)) schema_error(path + "/name", fmt::format("invalid name '{}'", node.name));
    if (primitive_type(node.unqualified_name())) {
      schema_error(path + "/name", fmt::format("'{}' is a primitive type name", node.name));
    }
    for (const std::string& alias : parse_aliases(json, path)) {
      node.aliases.push_back(qualify(alias, namespace_of(node.name)));
    }
    if (!graph_.named.emplace(node.name, &node).second) {
      schema_error(path + "/name", fmt::format("type '{}' is defined twice", node.name));
    }
    return node;
  }

  static std::vector<std::string> parse_aliases(const Json& json, const std::string& path) {
    std::vector<std::string> aliases;
    const auto it = json.find("aliases");
    if (it == json.end()) return aliases;
    if (!it->is_array()) schema_error(path + "/aliases", "aliases must be an array of names");
    for (const Json& alias : *it) {
      if (!alias.is_string() || !is_valid_dotted(alias.get_ref<const std::string&>())) {
        schema_error(path + "/aliases", fmt::format("invalid alias {}", alias.dump()));
      }
      aliases.push_back(alias.get<std::string>());
    }
    return aliases;
  }

  const Node* parse_record(const Json& json, const std::string& enclosing_ns, const std::string& path) {
    Node& record = add_named(Type::kRecord, json, {"fields"}, enclosing_ns, path);
    const auto fields = json.find("fields");
    if (fields == json.end() || !fields->is_array()) schema_error(path, "record has no 'fields' array");
    const std::string ns(namespace_of(record.name));
    for (std::size_t i = 0; i < fields->size(); ++i) {
      const Json& field_json = (*fields)[i];
      const std::string field_path = fmt::format("{}/fields/{}", path, i);
      if (!field_json.is_object()) schema_error(field_path, "a field must be an object");
      const auto name = field_json.find("name");
      if (name == field_json.end() || !name->is_string() || !is_valid_name(name->get_ref<const std::string&>())) {
        schema_error(field_path, "field has no valid 'name'");
      }
      if (record.find_field(name->get_ref<const std::string&>())) {
        schema_error(field_path, fmt::format("field '{}' is defined twice", name->get<std::string>()));
      }
      const auto type = field_json.find("type");
      if (type == field_json.end()) schema_error(field_path, fmt::format("field '{}' has no type", *name));
      if (const auto order = field_json.find("order"); order != field_json.end()) {
        if (*order != "ascending" && *order != "descending" && *order != "ignore") {
          schema_error(field_path + "/order", fmt::format("invalid order {}", order->dump()));
        }
      }
      Field field;
      field.name = name->get<std::string>();
      field.position = i;
      field.aliases = parse_aliases(field_json, field_path);
      field.properties = shallow_properties(field_json, {"type"});
      field.type = parse(*type, ns, field_path + "/type");
      if (const auto default_value = field_json.find("default"); default_value != field_json.end()) {
        field.default_value = *default_value;
        defaults_.push_back({&record, i, field_path});
      }
      record.fields.push_back(std::move(field));
    }
    return &record;
  }

  const Node* parse_enum(const Json& json, const std::string& enclosing_ns, const std::string& path) {
    Node& node = add_named(Type::kEnum, json, {}, enclosing_ns, path);
    const auto symbols = json.find("symbols");
    if (symbols == json.end() || !symbols->is_array()) schema_error(path, "enum has no 'symbols' array");
    for (const Json& symbol : *symbols) {
      if (!symbol.is_string() || !is_valid_name(symbol.get_ref<const std::string&>())) {
        schema_error(path + "/symbols", fmt::format("invalid symbol {}", symbol.dump()));
      }
      if (node.symbol_index(symbol.get_ref<const std::string&>())) {
        schema_error(path + "/symbols", fmt::format("symbol {} appears twice", symbol.dump()));
      }
      node.symbols.push_back(symbol.get<std::string>());
    }
    if (const auto default_symbol = json.find("default"); default_symbol != json.end()) {
      if (!default_symbol->is_string() || !node.symbol_index(default_symbol->get_ref<const std::string&>())) {
        schema_error(path + "/default", fmt::format("enum default {} is not a symbol", default_symbol->dump()));
      }
      node.enum_default = default_symbol->get<std::string>();
    }
    return &node;
  }

  const Node* parse_fixed(const Json& json, const std::string& enclosing_ns, const std::string& path) {
    Node& node = add_named(Type::kFixed, json, {}, enclosing_ns, path);
    const auto size = json.find("size");
    if (size == json.end() || !size->is_number_unsigned()) schema_error(path, "fixed has no non-negative 'size'");
    node.fixed_size = size->get<std::size_t>();
    apply_logical_type(node, path);
    return &node;
  }

  // Recognizes a valid logical type; an invalid one is ignored, as the specification requires.
  static void apply_logical_type(Node& node, const std::string& path) {
    const auto it = node.properties.find("logicalType");
    if (it == node.properties.end() || !it->is_string()) return;
    const auto known =
        std::find_if(kLogicalTypes.begin(), kLogicalTypes.end(), [&](const auto& entry) { return entry.first == *it; });
    if (known == kLogicalTypes.end()) return;
    const LogicalType logical = known->second;
    switch (logical) {
      case LogicalType::kDecimal:
        if (node.type == Type::kBytes || node.type == Type::kFixed) apply_decimal(node, path);
        return;
      case LogicalType::kUuid:
        if (node.type == Type::kString || (node.type == Type::kFixed && node.fixed_size == 16)) {
          node.logical_type = logical;
        }
        return;
      case LogicalType::kDate:
      case LogicalType::kTimeMillis:
        if (node.type == Type::kInt) node.logical_type = logical;
        return;
      default:
        if (node.type == Type::kLong) node.logical_type = logical;
        return;
    }
  }

  static void apply_decimal(Node& node, const std::string& path) {
    const Json& properties = node.properties;
    const auto precision = properties.find("precision");
    const auto scale = properties.find("scale");
    if (precision == properties.end() || !precision->is_number_integer()) return;
    if (scale != properties.end() && !scale->is_number_integer()) return;
    const auto precision_value = precision->get<std::int64_t>();
    const std::int64_t scale_value = scale == properties.end() ? 0 : scale->get<std::int64_t>();
    if (precision_value <= 0 || scale_value < 0 || scale_value > precision_value) return;
    if (node.type == Type::kFixed && precision_value > max_decimal_precision(node.fixed_size)) return;
    if (precision_value > std::numeric_limits<int>::max()) schema_error(path, "decimal precision is too large");
    node.logical_type = LogicalType::kDecimal;
    node.precision = static_cast<int>(precision_value);
    node.scale = static_cast<int>(scale_value);
  }

  struct PendingDefault {
    const Node* record;
    std::size_t field_index;
    std::string path;
  };

  Schema::Graph& graph_;
  std::vector<PendingDefault> defaults_;
};

// Prints named types in full at their first occurrence and by full name afterwards, like the parser reads them.
class Printer {
 public:
  Json full(const Node& node) {
    if (node.is_named() && !defined_.insert(&node).second) return node.name;
    if (node.type == Type::kUnion) return branches(node, &Printer::full);
    if (node.properties.is_null()) return type_name(node.type);
    Json out = node.properties;
    if (node.type == Type::kRecord) {
      Json& fields = out["fields"] = Json::array();
      for (const Field& field : node.fields) {
        Json& printed = fields.emplace_back(field.properties);
        printed["type"] = full(*field.type);
      }
    } else if (node.type == Type::kArray) {
      out["items"] = full(*node.items);
    } else if (node.type == Type::kMap) {
      out["values"] = full(*node.items);
    }
    return out;
  }

  // Parsing Canonical Form: full names, only the attributes that affect parsing, in the specified order.
  Json canonical(const Node& node) {
    if (node.is_named() && !defined_.insert(&node).second) return node.name;
    Json out = Json::object();
    switch (node.type) {
      case Type::kUnion:
        return branches(node, &Printer::canonical);
      case Type::kRecord:
        out["name"] = node.name;
        out["type"] = "record";
        out["fields"] = Json::array();
        for (const Field& field : node.fields)
          out["fields"].push_back({{"name", field.name}, {"type", canonical(*field.type)}});
        return out;
      case Type::kEnum:
        out["name"] = node.name;
        out["type"] = "enum";
        out["symbols"] = node.symbols;
        return out;
      case Type::kFixed:
        out["name"] = node.name;
        out["type"] = "fixed";
        out["size"] = node.fixed_size;
        return out;
      case Type::kArray:
        return {{"type", "array"}, {"items", canonical(*node.items)}};
      case Type::kMap:
        return {{"type", "map"}, {"values", canonical(*node.items)}};
      default:
        return type_name(node.type);
    }
  }

 private:
  Json branches(const Node& node, Json (Printer::*print)(const Node&)) {
    Json out = Json::array();
    for (const Node* branch : node.branches) out.push_back((this->*print)(*branch));
    return out;
  }

  std::set<const Node*> defined_;
};

}  // namespace

Schema::Schema() : Schema(from_json(Json("null"))) {}

Schema Schema::parse(std::string_view json_text) {
  Json json;
  try {
    json = Json::parse(json_text);
  } catch (const Json::exception& e) {
    fail("avro schema: invalid JSON: {}", e.what());
  }
  return from_json(json);
}

Schema Schema::from_json(const Json& json) {
  auto graph = std::make_shared<Graph>();
  Parser parser(*graph);
  const Node* root = parser.parse(json, "", "");
  parser.check_defaults();
  return Schema(std::move(graph), root);
}

const Node* Schema::find_named(std::string_view full_name) const {
  const auto it = graph_->named.find(full_name);
  return it == graph_->named.end() ? nullptr : it->second;
}

std::string Schema::to_json() const { return Printer().full(*root_).dump(); }

std::string Schema::canonical_form() const { return Printer().canonical(*root_).dump(); }

std::uint64_t Schema::fingerprint64() const { return crc64_avro(canonical_form()); }

std::array<std::uint8_t, 32> Schema::fingerprint_sha256() const {
  const std::string form = canonical_form();
  std::array<std::uint8_t, 32> digest{};
  unsigned int length = 0;
  if (EVP_Digest(form.data(), form.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1 ||
      length != digest.size()) {
    fail("avro schema: SHA-256 of the canonical form failed");
  }
  return digest;
}

std::uint64_t crc64_avro(std::string_view bytes) {
  constexpr std::uint64_t kEmpty = 0xc15d213aa4d7a795ULL;
  static constexpr auto kTable = [] {
    std::array<std::uint64_t, 256> table{};
    for (std::uint64_t i = 0; i < 256; ++i) {
      std::uint64_t fp = i;
      for (int bit = 0; bit < 8; ++bit) fp = (fp >> 1) ^ (kEmpty & (0 - (fp & 1)));
      table[i] = fp;
    }
    return table;
  }();
  std::uint64_t fp = kEmpty;
  for (const char c : bytes) fp = (fp >> 8) ^ kTable[(fp ^ static_cast<std::uint8_t>(c)) & 0xff];
  return fp;
}

}  // namespace binberg::avro
