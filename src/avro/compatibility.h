#pragma once

// Schema evolution checks with the Schema Registry's compatibility levels, built on the resolution rules.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "avro/schema.h"

namespace binberg::avro {

enum class Compatibility {
  kNone,
  kBackward,            // the new schema reads data written with the latest one
  kForward,             // the latest schema reads data written with the new one
  kFull,                // both
  kBackwardTransitive,  // as kBackward, against every earlier schema
  kForwardTransitive,
  kFullTransitive,
};

std::string_view compatibility_name(Compatibility level);  // "BACKWARD_TRANSITIVE", ...
std::optional<Compatibility> parse_compatibility(std::string_view name);

// Every way `candidate` breaks `level` against `history` (oldest first). Each message names the
// direction, the version and the schema path, e.g.
// "backward, version 2: /fields/price/type: reader type string not compatible with writer type int".
// Empty when compatible.
std::vector<std::string> check_compatibility(const Schema& candidate, std::span<const Schema> history,
                                             Compatibility level);

}  // namespace binberg::avro
