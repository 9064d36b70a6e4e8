#pragma once

// An outside producer writing records into a table's topic that the sink must never apply: copies
// of the source's records with their Avro magic byte damaged (poison, for `<topic>.dlq`), or valid
// changes under another row's key (mis-keyed, for `<topic>.quarantine`). Each carries
// kIntruderHeader, which the sink keeps on what it diverts, so a drill can tell its intruders from
// the source's own records there.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "drill/checks.h"
#include "drill/drill_run.h"
#include "kafka/consumer.h"

namespace binberg::drill {

inline constexpr std::string_view kIntruderHeader = "binberg.drill.intruder";

enum class IntruderKind { kPoison, kMisKeyed };

class Intruder {
 public:
  Intruder(DrillRun& run, std::string topic);

  // Writes COUNT records of KIND, each a copy of a record of the topic (mis-keyed: its change made
  // newer than anything applied, so only the key gate can stop it); returns once acknowledged.
  void write(IntruderKind kind, std::size_t count);
  std::size_t written() const { return written_; }
  // What `<topic><SUFFIX>` holds: the intruders' marks, and how many other records.
  DivertedRecords diverted(std::string_view suffix) const;

 private:
  // The first records of each partition written by the source, with a key and a value.
  std::vector<kafka::ConsumedRecord> originals() const;
  std::string mis_keyed_value(const kafka::ConsumedRecord& original) const;

  DrillRun& run_;
  std::string topic_;
  std::size_t written_ = 0;
};

}  // namespace binberg::drill
