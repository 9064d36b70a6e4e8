#include "sink/session_open.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "capture/source_position.h"
#include "core/assert.h"
#include "sink/kafka_sink.h"

namespace binberg::sink {

SessionOpening::SessionOpening(const SinkContext& sink, SessionState& state,
                               std::map<std::string, TableOutput>& outputs)
    : sink_(sink), options_(sink.options), state_(state), outputs_(outputs) {}

// With a namespace configured, all of them are there: other namespaces of a shared catalog are not read.
std::map<std::string, iceberg::TableIdentifier> SessionOpening::existing_tables() {
  const bool rebuilding = !options_.rebuild.empty();
  std::map<std::string, iceberg::TableIdentifier> existing;
  for (const std::string& ns : sink_.catalog.list_namespaces()) {
    if (!options_.iceberg_namespace.empty() && ns != options_.iceberg_namespace) continue;
    for (const iceberg::TableIdentifier& id : sink_.catalog.list_tables(ns)) {
      if (!id.name.ends_with(options_.changelog_suffix)) continue;
      const auto& properties = sink_.catalog.load_table(id).metadata.properties;
      if (properties.contains(tables::kSinkRebuildOfProperty) != rebuilding) continue;
      if (auto it = properties.find(tables::kSinkTopicProperty); it != properties.end())
        existing.emplace(it->second, id);
    }
  }
  return existing;
}

bool SessionOpening::open_table(const std::string& topic,
                                const std::map<std::string, iceberg::TableIdentifier>& existing, SinkInput& input) {
  TableState& table = state_.add_table(topic);
  if (!options_.rebuild.empty()) table.rebuild = &options_.rebuild.at(topic);
  TableOutput& output = outputs_.try_emplace(topic, sink_.catalog, options_, topic, table.rebuild).first->second;
  table.partitions = input.partition_count(topic);
  input.prepare_diversions(topic);  // its dead letters' topics, before anything is read
  Epoch epoch;                      // the table's, and who holds it
  std::string writer;
  if (auto it = existing.find(topic); it != existing.end()) {
    output.found(it->second);
    const iceberg::LoadedTable changelog = sink_.catalog.load_table(it->second);
    if (const iceberg::Snapshot* snapshot = changelog.metadata.current_snapshot()) {
      const auto& summary = snapshot->summary;
      table.opened_at = snapshot->snapshot_id;
      if (auto at = summary.find(tables::kSinkWriterEpochProperty); at != summary.end()) {
        epoch = Epoch::parse(at->second, it->second.to_string());
        writer = summary.count(tables::kSinkWriterProperty) != 0 ? summary.at(tables::kSinkWriterProperty) : "";
      }
      if (auto offsets = summary.find(tables::kSinkOffsetsProperty); offsets != summary.end()) {
        table.committed = parse_progress(offsets->second, "table " + it->second.to_string());
      }
      if (auto newest = summary.find(tables::kSinkTableNewestProperty); newest != summary.end()) {
        table.newest = Coordinates::parse(newest->second);
        table.newest_gtid = summary.count(tables::kSinkTableNewestGtidProperty) != 0
                                ? summary.at(tables::kSinkTableNewestGtidProperty)
                                : "";
        if (capture::SourcePosition::from_summary(summary)) table.claimed = table.newest;
      }
    }
  }
  // Invariant 8: a table this sink got since its last commit there is claimed at the next epoch;
  // one it holds must still be at its own epoch, else another sink claimed it since.
  const Claim claim = sink_.ownership.judge(topic, epoch, writer);
  if (claim.kind == Claim::Kind::kFenced) {
    spdlog::warn(
        "sink: table {} was claimed by {} at writer epoch {} (this sink held epoch {}): it stops writing "
        "topic {} until it is given the topic again",
        output.changelog_id() ? output.changelog_id()->to_string() : topic, writer, epoch, sink_.ownership.held(topic),
        topic);
    return false;
  }
  BINBERG_ASSERT(claim.epoch >= epoch, "topic {}: writer epoch {} below the table's {} (invariant 8)", topic,
                 claim.epoch, epoch);
  table.epoch = claim.epoch;
  table.progress = table.committed_at_open = table.committed;
  return true;
}

Opening SessionOpening::open_tables(const std::map<std::string, iceberg::TableIdentifier>& existing, SinkInput& input) {
  bool seeded = false;
  std::vector<std::string> fenced;
  for (const std::string& topic : sink_.ownership.owned()) {
    if (!sink_.ownership.writes(topic)) continue;
    if (!open_table(topic, existing, input)) {
      fenced.push_back(topic);
      continue;
    }
    TableState& table = state_.table(topic);
    if (table.rebuild && table.committed.empty() && table.rebuild->seed_changelog_snapshot) {
      // Rebuild mode: the rows of the original's seed commit, whose offsets become the table's
      // progress (committed with the rows in the first commit).
      outputs_.at(topic).seed(*table.rebuild, table.opened_at);
      table.writing = true;
      table.progress = parse_progress(table.rebuild->seed_offsets, "the rebuild's seed");
      table.dirty = true;
      seeded = true;
    }
  }
  for (const std::string& topic : fenced) {
    state_.drop_table(topic);
    outputs_.erase(topic);
    ++sink_.stats.fenced;
    sink_.metrics.fenced.add();
    // Kafka's view may be the stale one (this sink was paused and the group moved the topic on,
    // or the other sink was): the topic is taken up again only if the group still gives it to
    // this sink once its members had time to learn where it is.
    sink_.ownership.fence(topic, sink_.environment.clock().now() + options_.member_timeout);
  }
  if (state_.tables().empty()) {
    if (!options_.scale_out && !sink_.ownership.owned().empty()) {  // the topics it still owns are all stopped
      std::vector<std::string> reasons;
      for (const auto& [topic, reason] : sink_.ownership.stopped()) reasons.push_back(reason);
      throw ConfigError(fmt::format("sink: every table stopped: {}", fmt::join(reasons, "; ")));
    }
    if (!options_.scale_out) {
      throw ConfigError(
          fmt::format("sink: other sinks claimed every table of group {}: run one sink per group, or "
                      "[sink] scale_out = true in all of them",
                      options_.group_id));
    }
    return Opening::kStandby;
  }
  return seeded ? Opening::kSeeded : Opening::kOpened;
}

void stop_at_gap(const TableState& table, Partition partition, const OffsetGap& gap) {
  const std::string what = gap.describe(table.topic, partition);
  if (table.rebuild) throw ConfigError(fmt::format("sink: rebuild: {}", what));
  throw TableStopped(table.topic, fmt::format("table of {}: {}", table.topic, what));
}

void SessionOpening::assign_partitions(SinkInput& input) {
  std::vector<kafka::PartitionStart> starts;
  for (auto& [topic, table] : state_.tables()) {
    for (std::int32_t number = 0; number < table.partitions; ++number) {
      const Partition partition(number);
      const Offset needed = table.progress_of(partition).next_offset;
      const PartitionBounds bounds = input.bounds(topic, partition);
      // Invariant 5: never a silent jump over what the tables still need.
      if (const auto gap = gap_at_start(needed, bounds)) stop_at_gap(table, partition, *gap);
      Offset start = needed;
      if (options_.read_from) {
        start = *options_.read_from == kEarliestOffset ? bounds.first : Offset(*options_.read_from);
        if (start > needed) {
          throw ConfigError(
              fmt::format("topic {} [{}]: --from offset {} is past the next offset the tables need ({}); "
                          "records {}..{} would never be applied",
                          topic, partition, start, needed, needed, start.value - 1));
        }
      }
      starts.push_back(kafka::PartitionStart{topic, number, start.value});
      state_.expect({topic, number}, start);
      if (start < needed) state_.reread({topic, number}, needed);
    }
    spdlog::info("sink: topic {} ({} partitions) from {}{}", topic, table.partitions,
                 table.committed.empty() ? "the beginning" : progress_json(table.committed),
                 table.rebuild ? fmt::format(", rebuilding {} up to {}", table.rebuild->original_changelog.to_string(),
                                             offsets_json(table.rebuild->target))
                               : "");
  }
  input.assign(starts);
}

}  // namespace binberg::sink
