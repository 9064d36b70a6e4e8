#include "sink/sink_rebuild.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "core/error.h"
#include "iceberg/canonical_row.h"
#include "iceberg/table_scan.h"
#include "iceberg/table_writer.h"
#include "kafka/admin.h"
#include "kafka/consumer.h"

namespace binberg::sink {
namespace {

struct OriginalTables {
  iceberg::LoadedTable changelog;
  std::optional<iceberg::LoadedTable> state;
};

// The tables a sink (not a rebuild) keeps for each of OPTIONS' topics.
std::map<std::string, OriginalTables> load_originals(iceberg::Catalog& catalog, const KafkaSinkOptions& options) {
  std::map<std::string, OriginalTables> originals;
  for (const std::string& ns : catalog.list_namespaces()) {
    for (const iceberg::TableIdentifier& id : catalog.list_tables(ns)) {
      if (!id.name.ends_with(options.changelog_suffix)) continue;
      iceberg::LoadedTable changelog = catalog.load_table(id);
      const auto& properties = changelog.metadata.properties;
      const auto topic = properties.find(tables::kSinkTopicProperty);
      if (topic == properties.end() || properties.contains(tables::kSinkRebuildOfProperty)) continue;
      if (std::find(options.topics.begin(), options.topics.end(), topic->second) == options.topics.end()) continue;
      if (ns == options.iceberg_namespace) {
        throw ConfigError(fmt::format(
            "--rebuild {}: the namespace holds the tables to rebuild ({}); rebuild into another", ns, id.to_string()));
      }
      OriginalTables tables{std::move(changelog), std::nullopt};
      try {
        tables.state = catalog.load_table({ns, id.name.substr(0, id.name.size() - options.changelog_suffix.size())});
      } catch (const iceberg::NoSuchTable&) {
      }  // a source table without a primary key has no current-state table
      originals.emplace(topic->second, std::move(tables));
    }
  }
  for (const std::string& topic : options.topics) {
    if (!originals.contains(topic)) {
      throw ConfigError(fmt::format("no table of binberg sink records topic {} ({}): there is nothing to rebuild",
                                    topic, tables::kSinkTopicProperty));
    }
  }
  return originals;
}

// Loads the originals until two loads in a row agree, so no commit of the original sink lies between
// the tables' versions (a commit changes several tables at once).
std::map<std::string, OriginalTables> load_consistent_originals(iceberg::Catalog& catalog,
                                                                const KafkaSinkOptions& options) {
  const auto locations = [](const std::map<std::string, OriginalTables>& originals) {
    std::vector<std::string> all;
    for (const auto& [topic, tables] : originals) {
      all.push_back(tables.changelog.metadata_location);
      if (tables.state) all.push_back(tables.state->metadata_location);
    }
    return all;
  };
  auto originals = load_originals(catalog, options);
  for (int attempt = 0; attempt < 50; ++attempt) {
    auto again = load_originals(catalog, options);
    if (locations(again) == locations(originals)) return again;
    originals = std::move(again);
  }
  fail("the tables to rebuild change faster than they can be read consistently; stop their sink and try again");
}

const std::string* sink_offsets(const iceberg::Snapshot& snapshot) {
  const auto it = snapshot.summary.find(tables::kSinkOffsetsProperty);
  return it == snapshot.summary.end() ? nullptr : &it->second;
}

// The newest snapshot of TABLE that records sink offsets, starting from its current one.
const iceberg::Snapshot* newest_sink_snapshot(const iceberg::TableMetadata& table) {
  const iceberg::Snapshot* snapshot = table.current_snapshot();
  while (snapshot != nullptr && sink_offsets(*snapshot) == nullptr) {
    snapshot = snapshot->parent_snapshot_id ? table.find_snapshot(*snapshot->parent_snapshot_id) : nullptr;
  }
  return snapshot;
}

// The state of every table after one commit of the original sink: by topic, its changelog's and
// its state table's newest snapshot up to that commit.
struct Cut {
  std::int64_t timestamp_ms = 0;
  std::map<std::string, const iceberg::Snapshot*> changelog, state;
};

// Every commit of the original sink in commit order, as the cut after it.
std::vector<Cut> cuts_of(const std::map<std::string, OriginalTables>& originals) {
  struct Member {
    std::string topic;
    bool state = false;
    const iceberg::Snapshot* snapshot = nullptr;
  };
  std::map<std::string, std::vector<Member>> commits;  // by commit id
  for (const auto& [topic, tables] : originals) {
    const std::string& table_topic = topic;  // a lambda cannot capture a structured binding in clang 14
    const auto collect = [&](const iceberg::TableMetadata& table, bool state) {
      for (const iceberg::Snapshot& snapshot : table.snapshots) {
        const auto id = snapshot.summary.find(iceberg::kCommitIdProperty);
        if (sink_offsets(snapshot) != nullptr && id != snapshot.summary.end()) {
          commits[id->second].push_back(Member{table_topic, state, &snapshot});
        }
      }
    };
    collect(tables.changelog.metadata, false);
    if (tables.state) collect(tables.state->metadata, true);
  }
  std::vector<std::pair<std::int64_t, const std::vector<Member>*>> ordered;
  for (const auto& [id, members] : commits) {
    std::int64_t at = 0;
    for (const Member& member : members) at = std::max(at, member.snapshot->timestamp_ms);
    ordered.emplace_back(at, &members);
  }
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Cut> cuts;
  Cut cut;
  for (const auto& [at, members] : ordered) {
    cut.timestamp_ms = at;
    for (const Member& member : *members) (member.state ? cut.state : cut.changelog)[member.topic] = member.snapshot;
    cuts.push_back(cut);
  }
  return cuts;
}

std::string digest_of(const iceberg::TableMetadata& table, std::optional<std::int64_t> snapshot, std::uint64_t& rows) {
  iceberg::RowDigest digest;
  const iceberg::Schema& schema = table.current_schema();
  if (snapshot || table.current_snapshot() != nullptr) {
    iceberg::scan_rows(iceberg::plan_scan(table, snapshot), schema,
                       [&](const iceberg::Row& row, const iceberg::LiveFile&, std::int64_t) {
                         digest.add(iceberg::canonical_row_encoding(schema, row));
                       });
  }
  rows = digest.rows();
  return digest.finish();
}

std::int64_t parse_integer(const std::string& text, const std::string& what) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) {
    throw ConfigError(fmt::format("--from {}: '{}' is not a non-negative integer", what, text));
  }
  return value;
}

}  // namespace

RebuildFrom RebuildFrom::parse(const std::string& text) {
  if (text == "earliest") return {};
  if (text.starts_with("offset:")) return {Kind::kOffset, parse_integer(text.substr(7), text)};
  if (text.starts_with("timestamp:")) {
    const std::string at = text.substr(10);
    if (at.find('-') == std::string::npos) return {Kind::kTimestamp, parse_integer(at, text)};
    std::tm tm{};
    const char* end = ::strptime(at.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
    if (end == nullptr || std::string(end) != "Z") {
      throw ConfigError(
          fmt::format("--from {}: give the time as YYYY-MM-DDTHH:MM:SSZ (UTC) or in milliseconds since "
                      "the epoch",
                      text));
    }
    return {Kind::kTimestamp, static_cast<std::int64_t>(::timegm(&tm)) * 1000};
  }
  throw ConfigError(fmt::format("--from '{}': expected earliest, offset:<n> or timestamp:<t>", text));
}

std::string RebuildFrom::to_string() const {
  switch (kind) {
    case Kind::kEarliest:
      return "earliest";
    case Kind::kOffset:
      return fmt::format("offset:{}", value);
    case Kind::kTimestamp:
      return fmt::format("timestamp:{}", value);
  }
  return "";
}

namespace {

// Each topic's first offset per partition (what retention left).
using FirstOffsets = std::map<std::string, std::vector<std::int64_t>>;

FirstOffsets first_offsets_of(const KafkaSinkOptions& options) {
  auto consumer = kafka::Consumer::create(kafka::ConsumerOptions{options.kafka, options.group_id, true});
  FirstOffsets first_offsets;
  for (const std::string& topic : options.topics) {
    const std::int32_t partitions = kafka::partition_count(options.kafka, topic);
    for (std::int32_t partition = 0; partition < partitions; ++partition) {
      first_offsets[topic].push_back(consumer.watermarks(topic, partition, std::chrono::seconds(30)).first);
    }
  }
  return first_offsets;
}

// The newest cut at or before FROM (commits only move offsets and time forward); nullopt: none,
// the rebuild starts from empty tables.
std::optional<Cut> newest_cut_at(const std::map<std::string, OriginalTables>& originals, const RebuildFrom& from,
                                 const FirstOffsets& first_offsets) {
  const auto fits = [&](const Cut& cut) {
    if (from.kind == RebuildFrom::Kind::kTimestamp) return cut.timestamp_ms <= from.value;
    for (const auto& [topic, snapshot] : cut.changelog) {
      const auto& firsts = first_offsets.at(topic);
      for (const auto& [partition, next] : sink_next_offsets(*sink_offsets(*snapshot), topic)) {
        const auto index = static_cast<std::size_t>(partition.value);
        const std::int64_t start =
            from.kind == RebuildFrom::Kind::kOffset ? from.value : (index < firsts.size() ? firsts[index] : 0);
        if (next.value > start) return false;
      }
    }
    return true;
  };
  std::optional<Cut> seed;
  for (const Cut& cut : cuts_of(originals)) {
    if (!fits(cut)) break;
    seed = cut;
  }
  return seed;
}

// Throws ConfigError when a record REBUILD needs from its seed on is no longer in TOPIC.
void require_records_from_seed(const SinkRebuildTopic& rebuild, const std::string& topic,
                               const std::vector<std::int64_t>& firsts, const RebuildFrom& from) {
  const auto seed_offsets = sink_next_offsets(rebuild.seed_offsets, "the seed");
  for (std::size_t partition = 0; partition < firsts.size(); ++partition) {
    const auto it = seed_offsets.find(Partition(static_cast<std::int32_t>(partition)));
    const std::int64_t needed = it == seed_offsets.end() ? 0 : it->second.value;
    if (needed < firsts[partition]) {
      throw ConfigError(fmt::format(
          "--from {}: topic {} [{}] starts at offset {} (retention deleted what was before it), but a rebuild from "
          "{} needs it from offset {}; choose a later --from",
          from.to_string(), topic, partition, firsts[partition],
          rebuild.seed_changelog_snapshot ? fmt::format("snapshot {}", *rebuild.seed_changelog_snapshot)
                                          : std::string("empty tables"),
          needed));
    }
  }
}

// TOPIC's rebuild: the original TABLES' offsets to reach, seeded from SEED's snapshots of them.
SinkRebuildTopic plan_topic(const std::string& topic, const OriginalTables& tables, const std::optional<Cut>& seed,
                            const RebuildFrom& from) {
  SinkRebuildTopic rebuild;
  rebuild.original_changelog = tables.changelog.id;
  if (tables.state) rebuild.original_state = tables.state->id;
  const iceberg::Snapshot* target = newest_sink_snapshot(tables.changelog.metadata);
  if (target != nullptr) {
    rebuild.target = sink_next_offsets(*sink_offsets(*target), tables.changelog.id.to_string());
    rebuild.target_changelog_snapshot = tables.changelog.metadata.current_snapshot_id;
  }
  if (tables.state && tables.state->metadata.current_snapshot() != nullptr) {
    rebuild.target_state_snapshot = tables.state->metadata.current_snapshot_id;
  }
  if (!seed || !seed->changelog.contains(topic)) return rebuild;
  const iceberg::Snapshot* changelog = seed->changelog.at(topic);
  rebuild.seed_changelog_snapshot = changelog->snapshot_id;
  rebuild.seed_offsets = *sink_offsets(*changelog);
  if (tables.state) {
    const auto state = seed->state.find(topic);
    if (state == seed->state.end() || *sink_offsets(*state->second) != rebuild.seed_offsets) {
      throw ConfigError(fmt::format(
          "--from {}: the snapshot of {} that goes with snapshot {} of {} was expired; choose a later --from",
          from.to_string(), tables.state->id.to_string(), changelog->snapshot_id, tables.changelog.id.to_string()));
    }
    rebuild.seed_state_snapshot = state->second->snapshot_id;
  }
  return rebuild;
}

}  // namespace

std::map<std::string, SinkRebuildTopic> plan_rebuild(iceberg::Catalog& catalog, const KafkaSinkOptions& options,
                                                     const RebuildFrom& from) {
  if (options.iceberg_namespace.empty()) throw ConfigError("--rebuild needs the namespace to rebuild into");
  const auto originals = load_consistent_originals(catalog, options);
  const FirstOffsets first_offsets = first_offsets_of(options);
  const std::optional<Cut> seed = newest_cut_at(originals, from, first_offsets);
  std::map<std::string, SinkRebuildTopic> plan;
  for (const auto& [topic, tables] : originals) {
    SinkRebuildTopic& rebuild = plan[topic] = plan_topic(topic, tables, seed, from);
    require_records_from_seed(rebuild, topic, first_offsets.at(topic), from);
  }
  return plan;
}

bool RebuildReport::equal() const {
  return std::all_of(tables.begin(), tables.end(), [](const RebuiltTable& table) { return table.equal(); });
}

nlohmann::json RebuildReport::to_json() const {
  nlohmann::json json{{"equal", equal()}, {"tables", nlohmann::json::array()}};
  for (const RebuiltTable& table : tables) {
    json["tables"].push_back({{"original", table.original.to_string()},
                              {"original_snapshot", table.original_snapshot},
                              {"rebuilt", table.rebuilt.to_string()},
                              {"equal", table.equal()},
                              {"original_rows", table.original_rows},
                              {"rebuilt_rows", table.rebuilt_rows},
                              {"original_digest", table.original_digest},
                              {"rebuilt_digest", table.rebuilt_digest}});
  }
  return json;
}

std::string RebuildReport::to_text() const {
  std::string text;
  for (const RebuiltTable& table : tables) {
    text += fmt::format("{} {} (snapshot {}): {} rows, sha256 {}\n   rebuilt {}: {} rows, sha256 {}\n",
                        table.equal() ? "EQUAL    " : "DIFFERENT", table.original.to_string(), table.original_snapshot,
                        table.original_rows, table.original_digest, table.rebuilt.to_string(), table.rebuilt_rows,
                        table.rebuilt_digest);
  }
  return text;
}

RebuildReport compare_rebuild(iceberg::Catalog& catalog, const std::map<std::string, SinkRebuildTopic>& plan,
                              const std::string& ns) {
  RebuildReport report;
  const auto compare = [&](const iceberg::TableIdentifier& original, std::optional<std::int64_t> snapshot) {
    RebuiltTable table{original, {ns, original.name}, snapshot.value_or(0), 0, 0, "", ""};
    table.original_digest = digest_of(catalog.load_table(original).metadata, snapshot, table.original_rows);
    try {
      table.rebuilt_digest = digest_of(catalog.load_table(table.rebuilt).metadata, std::nullopt, table.rebuilt_rows);
    } catch (const iceberg::NoSuchTable&) {
      table.rebuilt_digest = "(no table)";
    }
    report.tables.push_back(std::move(table));
  };
  for (const auto& [topic, rebuild] : plan) {
    if (rebuild.original_state) compare(*rebuild.original_state, rebuild.target_state_snapshot);
    compare(rebuild.original_changelog, rebuild.target_changelog_snapshot);
  }
  return report;
}

}  // namespace binberg::sink
