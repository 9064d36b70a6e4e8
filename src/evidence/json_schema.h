#pragma once

// A JSON Schema (draft-07) validator for the keywords binberg's evidence schemas use. No C++
// library for it ships with Debian 12, so it is written from the specification and tested against
// the official JSON-Schema-Test-Suite (Debian's json-schema-test-suite) and Python's jsonschema.
//
// Supported: boolean schemas; type; enum; const; properties, required, additionalProperties,
// patternProperties, minProperties; items (one schema or a tuple), additionalItems, minItems,
// maxItems, uniqueItems; minimum, maximum, exclusiveMinimum, exclusiveMaximum, multipleOf;
// minLength, maxLength, pattern (ECMAScript); allOf, anyOf, oneOf, not; definitions and $ref to a
// JSON pointer in the same document ("#", "#/definitions/x"). Annotations ($schema, $id, $comment,
// title, description, default, examples, format) are accepted and not checked. A schema using any
// other keyword is refused when it is parsed, so nothing is silently left unchecked.

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace binberg::evidence {

class JsonSchema {
 public:
  // Throws Error naming the JSON pointer of the first unsupported keyword or malformed value.
  static JsonSchema parse(const nlohmann::json& schema);

  // Every violation, as "<JSON pointer of the value>: <what is wrong>"; empty when DOCUMENT is valid.
  std::vector<std::string> validate(const nlohmann::json& document) const;

 private:
  explicit JsonSchema(std::shared_ptr<const nlohmann::json> root) : root_(std::move(root)) {}
  std::shared_ptr<const nlohmann::json> root_;
};

}  // namespace binberg::evidence
