#include "evidence/json_schema.h"

#include <fmt/format.h>

#include <cmath>
#include <regex>
#include <set>

#include "core/error.h"

namespace binberg::evidence {
namespace {

using nlohmann::json;

const std::set<std::string, std::less<>> kKeywords = {"type",
                                                      "enum",
                                                      "const",
                                                      "properties",
                                                      "required",
                                                      "additionalProperties",
                                                      "patternProperties",
                                                      "minProperties",
                                                      "items",
                                                      "additionalItems",
                                                      "minItems",
                                                      "maxItems",
                                                      "uniqueItems",
                                                      "minimum",
                                                      "maximum",
                                                      "exclusiveMinimum",
                                                      "exclusiveMaximum",
                                                      "multipleOf",
                                                      "minLength",
                                                      "maxLength",
                                                      "pattern",
                                                      "allOf",
                                                      "anyOf",
                                                      "oneOf",
                                                      "not",
                                                      "definitions",
                                                      "$ref",
                                                      "$schema",
                                                      "$id",
                                                      "$comment",
                                                      "title",
                                                      "description",
                                                      "default",
                                                      "examples",
                                                      "format"};

// JSON pointer escaping of one reference token (RFC 6901).
std::string escape_token(const std::string& token) {
  std::string out;
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// Checks that SCHEMA (at POINTER) uses only supported keywords, recursively.
void check_supported(const json& schema, const std::string& pointer) {
  if (schema.is_boolean()) return;
  if (!schema.is_object())
    fail("JSON schema {}: a schema must be an object or a boolean", pointer.empty() ? "#" : pointer);
  for (const auto& [keyword, value] : schema.items()) {
    const std::string at = pointer + "/" + escape_token(keyword);
    if (!kKeywords.contains(keyword)) fail("JSON schema {}: keyword '{}' is not supported", at, keyword);
    if (keyword == "properties" || keyword == "patternProperties" || keyword == "definitions") {
      if (!value.is_object()) fail("JSON schema {}: must be an object", at);
      for (const auto& [name, sub] : value.items()) check_supported(sub, at + "/" + escape_token(name));
    } else if (keyword == "allOf" || keyword == "anyOf" || keyword == "oneOf") {
      if (!value.is_array() || value.empty()) fail("JSON schema {}: must be a non-empty array", at);
      for (std::size_t i = 0; i < value.size(); ++i) check_supported(value[i], at + "/" + std::to_string(i));
    } else if (keyword == "items") {
      if (value.is_array()) {
        for (std::size_t i = 0; i < value.size(); ++i) check_supported(value[i], at + "/" + std::to_string(i));
      } else {
        check_supported(value, at);
      }
    } else if (keyword == "not" || keyword == "additionalProperties" || keyword == "additionalItems") {
      check_supported(value, at);
    } else if (keyword == "pattern") {
      if (!value.is_string()) fail("JSON schema {}: must be a string", at);
      try {
        std::regex(value.get<std::string>(), std::regex::ECMAScript);
      } catch (const std::regex_error& error) {
        fail("JSON schema {}: not a regular expression: {}", at, error.what());
      }
    } else if (keyword == "$ref") {
      if (!value.is_string() || !value.get<std::string>().starts_with("#"))
        fail("JSON schema {}: only references inside the document ('#...') are supported", at);
    }
  }
}

std::string type_of(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "array";
    default:
      return "object";
  }
}

bool has_type(const json& value, const std::string& type) {
  const std::string actual = type_of(value);
  if (actual == type) return true;
  if (type == "number") return actual == "integer";
  // 1.0 is an integer in JSON Schema's data model.
  if (type == "integer" && actual == "number") return std::trunc(value.get<double>()) == value.get<double>();
  return false;
}

// JSON Schema equality: numbers by value (1 == 1.0), the rest structurally.
bool same(const json& a, const json& b) {
  if (a.is_number() && b.is_number()) return a.get<double>() == b.get<double>();
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!same(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (const auto& [key, value] : a.items()) {
      if (!b.contains(key) || !same(value, b.at(key))) return false;
    }
    return true;
  }
  return a == b;
}

// Length of a UTF-8 string in code points, as JSON Schema counts it.
std::size_t code_points(const std::string& text) {
  std::size_t count = 0;
  for (unsigned char c : text) count += (c & 0xC0) != 0x80 ? 1 : 0;
  return count;
}

class Validator {
 public:
  explicit Validator(const json& root) : root_(root) {}

  void validate(const json& schema, const json& value, const std::string& at, std::vector<std::string>& errors) {
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) errors.push_back(fmt::format("{}: no value is allowed here", where(at)));
      return;
    }
    if (const auto ref = schema.find("$ref"); ref != schema.end()) {  // $ref overrides its siblings (draft-07)
      if (++depth_ > 200) fail("JSON schema: $ref {} recurses without end", ref->get<std::string>());
      validate(resolve(ref->get<std::string>()), value, at, errors);
      --depth_;
      return;
    }
    check_type(schema, value, at, errors);
    check_values(schema, value, at, errors);
    if (value.is_number()) check_number(schema, value, at, errors);
    if (value.is_string()) check_string(schema, value, at, errors);
    if (value.is_array()) check_array(schema, value, at, errors);
    if (value.is_object()) check_object(schema, value, at, errors);
    check_combinations(schema, value, at, errors);
  }

 private:
  static std::string where(const std::string& at) { return at.empty() ? "/" : at; }

  // A reference is a URI fragment holding a JSON pointer: percent-decoded first (RFC 3986), then
  // resolved with ~0/~1 escapes (RFC 6901).
  const json& resolve(const std::string& ref) const {
    std::string pointer;
    for (std::size_t i = 1; i < ref.size(); ++i) {
      if (ref[i] == '%' && i + 2 < ref.size()) {
        pointer += static_cast<char>(std::stoi(ref.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        pointer += ref[i];
      }
    }
    try {
      return root_.at(json::json_pointer(pointer));
    } catch (const json::exception& error) {
      fail("JSON schema: $ref '{}' names nothing in the schema ({})", ref, error.what());
    }
  }

  bool valid(const json& schema, const json& value) {
    std::vector<std::string> errors;
    validate(schema, value, "", errors);
    return errors.empty();
  }

  void check_type(const json& schema, const json& value, const std::string& at, std::vector<std::string>& errors) {
    const auto type = schema.find("type");
    if (type == schema.end()) return;
    std::vector<std::string> allowed;
    if (type->is_array()) {
      for (const auto& t : *type) allowed.push_back(t.get<std::string>());
    } else {
      allowed.push_back(type->get<std::string>());
    }
    for (const auto& t : allowed) {
      if (has_type(value, t)) return;
    }
    errors.push_back(fmt::format("{}: is {}, not {}", where(at), type_of(value), fmt::join(allowed, " or ")));
  }

  static void check_values(const json& schema, const json& value, const std::string& at,
                           std::vector<std::string>& errors) {
    if (const auto e = schema.find("enum"); e != schema.end()) {
      bool found = false;
      for (const auto& option : *e) found = found || same(option, value);
      if (!found) errors.push_back(fmt::format("{}: {} is not one of {}", where(at), value.dump(), e->dump()));
    }
    if (const auto c = schema.find("const"); c != schema.end() && !same(*c, value)) {
      errors.push_back(fmt::format("{}: {} is not {}", where(at), value.dump(), c->dump()));
    }
  }

  static void check_number(const json& schema, const json& value, const std::string& at,
                           std::vector<std::string>& errors) {
    const double x = value.get<double>();
    const auto bound = [&](const char* keyword, auto holds, const char* says) {
      if (const auto b = schema.find(keyword); b != schema.end() && !holds(x, b->template get<double>())) {
        errors.push_back(fmt::format("{}: {} is not {} {}", where(at), value.dump(), says, b->dump()));
      }
    };
    bound(
        "minimum", [](double v, double b) { return v >= b; }, ">=");
    bound(
        "maximum", [](double v, double b) { return v <= b; }, "<=");
    bound(
        "exclusiveMinimum", [](double v, double b) { return v > b; }, ">");
    bound(
        "exclusiveMaximum", [](double v, double b) { return v < b; }, "<");
    if (const auto m = schema.find("multipleOf"); m != schema.end()) {
      const double quotient = x / m->get<double>();
      if (!std::isfinite(quotient) || std::abs(quotient - std::round(quotient)) > 1e-9) {
        errors.push_back(fmt::format("{}: {} is not a multiple of {}", where(at), value.dump(), m->dump()));
      }
    }
  }

  static void check_string(const json& schema, const json& value, const std::string& at,
                           std::vector<std::string>& errors) {
    const std::string& text = value.get_ref<const std::string&>();
    const std::size_t length = code_points(text);
    if (const auto n = schema.find("minLength"); n != schema.end() && length < n->get<std::size_t>()) {
      errors.push_back(fmt::format("{}: shorter than {} characters", where(at), n->get<std::size_t>()));
    }
    if (const auto n = schema.find("maxLength"); n != schema.end() && length > n->get<std::size_t>()) {
      errors.push_back(fmt::format("{}: longer than {} characters", where(at), n->get<std::size_t>()));
    }
    if (const auto p = schema.find("pattern"); p != schema.end()) {
      if (!std::regex_search(text, std::regex(p->get<std::string>(), std::regex::ECMAScript))) {
        errors.push_back(fmt::format("{}: {} does not match {}", where(at), value.dump(), p->dump()));
      }
    }
  }

  void check_array(const json& schema, const json& value, const std::string& at, std::vector<std::string>& errors) {
    if (const auto n = schema.find("minItems"); n != schema.end() && value.size() < n->get<std::size_t>()) {
      errors.push_back(fmt::format("{}: fewer than {} items", where(at), n->get<std::size_t>()));
    }
    if (const auto n = schema.find("maxItems"); n != schema.end() && value.size() > n->get<std::size_t>()) {
      errors.push_back(fmt::format("{}: more than {} items", where(at), n->get<std::size_t>()));
    }
    if (const auto u = schema.find("uniqueItems"); u != schema.end() && u->get<bool>()) {
      for (std::size_t i = 0; i < value.size(); ++i) {
        for (std::size_t j = i + 1; j < value.size(); ++j) {
          if (same(value[i], value[j])) errors.push_back(fmt::format("{}: items {} and {} are equal", where(at), i, j));
        }
      }
    }
    const auto items = schema.find("items");
    if (items == schema.end()) return;
    if (!items->is_array()) {
      for (std::size_t i = 0; i < value.size(); ++i) validate(*items, value[i], at + "/" + std::to_string(i), errors);
      return;
    }
    for (std::size_t i = 0; i < value.size(); ++i) {
      const std::string item = at + "/" + std::to_string(i);
      if (i < items->size()) {
        validate((*items)[i], value[i], item, errors);
      } else if (const auto more = schema.find("additionalItems"); more != schema.end()) {
        validate(*more, value[i], item, errors);
      }
    }
  }

  void check_object(const json& schema, const json& value, const std::string& at, std::vector<std::string>& errors) {
    if (const auto required = schema.find("required"); required != schema.end()) {
      for (const auto& name : *required) {
        if (!value.contains(name.get<std::string>())) {
          errors.push_back(fmt::format("{}: required property '{}' is missing", where(at), name.get<std::string>()));
        }
      }
    }
    if (const auto n = schema.find("minProperties"); n != schema.end() && value.size() < n->get<std::size_t>()) {
      errors.push_back(fmt::format("{}: fewer than {} properties", where(at), n->get<std::size_t>()));
    }
    const auto properties = schema.find("properties");
    const auto patterns = schema.find("patternProperties");
    const auto additional = schema.find("additionalProperties");
    for (const auto& [name, member] : value.items()) {
      const std::string member_at = at + "/" + escape_token(name);
      bool matched = false;
      if (properties != schema.end() && properties->contains(name)) {
        matched = true;
        validate(properties->at(name), member, member_at, errors);
      }
      if (patterns != schema.end()) {
        for (const auto& [pattern, sub] : patterns->items()) {
          if (std::regex_search(name, std::regex(pattern, std::regex::ECMAScript))) {
            matched = true;
            validate(sub, member, member_at, errors);
          }
        }
      }
      if (!matched && additional != schema.end()) {
        if (additional->is_boolean() && !additional->get<bool>()) {
          errors.push_back(fmt::format("{}: property '{}' is not allowed", where(at), name));
        } else {
          validate(*additional, member, member_at, errors);
        }
      }
    }
  }

  void check_combinations(const json& schema, const json& value, const std::string& at,
                          std::vector<std::string>& errors) {
    if (const auto all = schema.find("allOf"); all != schema.end()) {
      for (const auto& sub : *all) validate(sub, value, at, errors);
    }
    if (const auto any = schema.find("anyOf"); any != schema.end()) {
      bool one = false;
      for (const auto& sub : *any) one = one || valid(sub, value);
      if (!one) errors.push_back(fmt::format("{}: matches none of anyOf", where(at)));
    }
    if (const auto of = schema.find("oneOf"); of != schema.end()) {
      std::size_t matching = 0;
      for (const auto& sub : *of) matching += valid(sub, value) ? 1 : 0;
      if (matching != 1) errors.push_back(fmt::format("{}: matches {} of oneOf, not exactly 1", where(at), matching));
    }
    if (const auto no = schema.find("not"); no != schema.end() && valid(*no, value)) {
      errors.push_back(fmt::format("{}: matches the schema it must not", where(at)));
    }
  }

  const json& root_;
  int depth_ = 0;
};

}  // namespace

JsonSchema JsonSchema::parse(const nlohmann::json& schema) {
  check_supported(schema, "");
  return JsonSchema(std::make_shared<const json>(schema));
}

std::vector<std::string> JsonSchema::validate(const nlohmann::json& document) const {
  std::vector<std::string> errors;
  Validator(*root_).validate(*root_, document, "", errors);
  return errors;
}

}  // namespace binberg::evidence
