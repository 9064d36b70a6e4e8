#pragma once

// `binberg sink --rebuild NAMESPACE --from earliest|offset:<n>|timestamp:<t>`: rebuilds the tables
// a sink keeps for its topics into fresh tables (a new lineage) in NAMESPACE, then compares them
// with the originals by digest.
//
// A rebuild starts from a commit of the original sink — the newest one at or before FROM (offset:
// every partition's recorded offset at most N; timestamp: committed at or before T; earliest: none,
// empty tables) — copying the rows that commit holds, and replays the topics from the offsets it
// records up to the offsets the original stands at when the rebuild is planned. Commits are whole
// across tables (one commit of the original is the seed of every table), so the rebuild meets no
// part of a source transaction; its tables must then hold the original's rows exactly. A rebuild
// that stops midway resumes from what it committed (its tables record their own offsets).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "iceberg/catalog.h"
#include "sink/kafka_sink.h"

namespace binberg::sink {

struct RebuildFrom {
  enum class Kind { kEarliest, kOffset, kTimestamp };
  Kind kind = Kind::kEarliest;
  std::int64_t value = 0;  // kOffset: the offset; kTimestamp: milliseconds since the epoch

  // "earliest", "offset:<n>", "timestamp:<ms since the epoch | YYYY-MM-DDTHH:MM:SSZ>"; throws ConfigError.
  static RebuildFrom parse(const std::string& text);
  std::string to_string() const;
};

// Plans the rebuild of OPTIONS' topics' tables into OPTIONS.iceberg_namespace. Throws ConfigError
// when a topic has no table of the sink, the namespace holds them, no commit is old enough, or the
// records the seed needs were deleted by retention.
std::map<std::string, SinkRebuildTopic> plan_rebuild(iceberg::Catalog& catalog, const KafkaSinkOptions& options,
                                                     const RebuildFrom& from);

struct RebuiltTable {
  iceberg::TableIdentifier original, rebuilt;
  std::int64_t original_snapshot = 0;
  std::uint64_t original_rows = 0, rebuilt_rows = 0;
  std::string original_digest, rebuilt_digest;  // SHA-256 of the canonical rows (iceberg/canonical_row.h)
  bool equal() const { return original_rows == rebuilt_rows && original_digest == rebuilt_digest; }
};

struct RebuildReport {
  std::vector<RebuiltTable> tables;
  bool equal() const;
  nlohmann::json to_json() const;
  std::string to_text() const;
};

// Compares the rebuilt tables in NS with the originals at the snapshots PLAN targets.
RebuildReport compare_rebuild(iceberg::Catalog& catalog, const std::map<std::string, SinkRebuildTopic>& plan,
                              const std::string& ns);

}  // namespace binberg::sink
