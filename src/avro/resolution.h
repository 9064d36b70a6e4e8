#pragma once

// Schema resolution: reading data written with one schema (the writer's) as another (the reader's),
// following the rules of the Avro specification: numeric promotions, string<->bytes, record fields
// matched by name or reader alias, defaults for fields the writer lacks, enum defaults, unions on
// either side and named types matched by unqualified name or alias.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "avro/encoding.h"
#include "avro/schema.h"
#include "avro/value.h"

namespace binberg::avro {

// Every way a reader using `reader` would fail on data written with `writer`, each as
// "<path in the reader schema>: <problem>". Empty when the reader can read everything the writer writes.
std::vector<std::string> resolution_problems(const Node& writer, const Node& reader);

class Resolver {
 public:
  // Throws Error listing every problem when the reader cannot read the writer's data.
  Resolver(Schema writer, Schema reader);

  // Reads one datum written with the writer schema as a value of the reader schema.
  Value read(Decoder& decoder) const;
  // Reads a buffer holding exactly one datum.
  Value read(std::string_view datum) const;

  const Schema& writer() const;
  const Schema& reader() const;

  struct Plan;  // how each writer/reader node pair resolves; defined in resolution.cc

 private:
  std::shared_ptr<const Plan> plan_;
};

}  // namespace binberg::avro
