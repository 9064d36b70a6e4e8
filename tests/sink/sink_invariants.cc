#include "sink/sink_invariants.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <utility>

#include "capture/source_position.h"
#include "iceberg/table_writer.h"
#include "sink/progress.h"
#include "tables/snapshot_properties.h"

namespace binberg::sink::simulation {
namespace {

using testing::check;

std::optional<std::int64_t> number(const iceberg::Literal& value) {
  if (const auto* small = std::get_if<std::int32_t>(&value)) return *small;
  if (const auto* large = std::get_if<std::int64_t>(&value)) return *large;
  return std::nullopt;
}

std::optional<std::int64_t> number(const Value& value) {
  if (const auto* integer = std::get_if<std::int64_t>(&value)) return *integer;
  return std::nullopt;
}

// ROW (id, v) is IMAGE's (none: all null).
bool same_image(const iceberg::Row& row, const std::optional<RowImage>& image) {
  if (!image) return std::all_of(row.begin(), row.end(), [](const auto& value) { return !number(value); });
  return number(row.at(0)) == number(image->at(0)) && number(row.at(1)) == number(image->at(1));
}

std::string summary_value(const std::map<std::string, std::string>& summary, const char* key,
                          const std::string& table) {
  const auto it = summary.find(key);
  check(it != summary.end(), "table {}: a snapshot without {}", table, key);
  return it->second;
}

bool diverted(const std::vector<Diversion>& diversions, const std::string& event_id) {
  return std::any_of(diversions.begin(), diversions.end(),
                     [&](const Diversion& diversion) { return diversion.event_id == event_id; });
}

}  // namespace

SinkInvariants::SinkInvariants(iceberg::Catalog& catalog, const Scenario& scenario, const Source& source,
                               const Topics& topics)
    : catalog_(catalog), scenario_(scenario), source_(source), topics_(topics) {
  for (int index = 0; index < scenario.tables; ++index) {
    const std::string name = fmt::format("t{}", index);
    tables_.emplace(name, Table{name,
                                "cdc.sim." + name,
                                testing::TableWatch(catalog, {"sim", name + "_changelog"}, {"sim", name}, {"id", "v"}),
                                {},
                                0,
                                {},
                                {},
                                {},
                                {}});
  }
}

void SinkInvariants::after_step(const std::vector<Diversion>& acknowledged,
                                const std::vector<Diversion>& unacknowledged, const std::set<std::string>& replayed) {
  for (auto& [name, table] : tables_) {
    while (const auto snapshot = table.watch.next()) {
      check_snapshot(table, *snapshot, acknowledged, unacknowledged, replayed);
    }
  }
}

void SinkInvariants::check_snapshot(Table& table, const testing::ObservedSnapshot& snapshot,
                                    const std::vector<Diversion>& acknowledged,
                                    const std::vector<Diversion>& unacknowledged,
                                    const std::set<std::string>& replayed) {
  const std::string where = fmt::format("table {} snapshot {}", table.name, snapshot.snapshot_id);
  const auto& summary = snapshot.summary;
  // 1: the offsets only grow, and the current-state table commits with its changelog.
  const std::string offsets = summary_value(summary, tables::kSinkOffsetsProperty, table.name);
  std::map<std::int32_t, std::int64_t> now;
  for (const auto& [partition, offset] : sink_next_offsets(offsets, where)) now[partition.value] = offset.value;
  for (const auto& [partition, offset] : table.offsets) {
    check(now.contains(partition) && now.at(partition) >= offset, "{}: partition {} moves back from offset {} ({})",
          where, partition, offset, offsets);
  }
  const std::map<std::int32_t, std::int64_t> previous = std::exchange(table.offsets, now);
  const auto state = table.watch.state();
  // The current-state table is as it is now: it is checked with the changelog's current snapshot.
  check(!snapshot.current || (state && state->summary.contains(tables::kSinkOffsetsProperty) &&
                              state->summary.at(tables::kSinkOffsetsProperty) == offsets &&
                              state->summary.at(iceberg::kCommitIdProperty) ==
                                  summary_value(summary, iceberg::kCommitIdProperty, table.name)),
        "{}: the current-state table was not committed with its changelog", where);
  // 8: epochs only grow, one writer per epoch.
  const std::int64_t epoch = std::stoll(summary_value(summary, tables::kSinkWriterEpochProperty, table.name));
  const std::string writer = summary_value(summary, tables::kSinkWriterProperty, table.name);
  check(epoch >= table.epoch, "{}: writer epoch {} after {}", where, epoch, table.epoch);
  const auto [holder, first] = table.writers.emplace(epoch, writer);
  check(holder->second == writer, "{}: writers {} and {} at epoch {}", where, holder->second, writer, epoch);
  table.epoch = epoch;
  // 4: a diverted record is acknowledged before a commit passes it (by the sink that diverted it,
  // or by another that diverted it too).
  for (const Diversion& diversion : unacknowledged) {
    if (diversion.partition.first != table.topic || diversion.offset >= now[diversion.partition.second]) continue;
    check(std::any_of(acknowledged.begin(), acknowledged.end(),
                      [&](const Diversion& safe) {
                        return safe.partition == diversion.partition && safe.offset == diversion.offset;
                      }),
          "{}: offset {} of partition {} is committed while its diversion is not acknowledged", where, diversion.offset,
          diversion.partition.second);
  }
  check_rows(table, snapshot, replayed);
  check_passed(table, where, previous, now, acknowledged, unacknowledged);
  check_claim(table, snapshot, acknowledged, unacknowledged);
  if (snapshot.current) check_state(table, state->rows);
}

void SinkInvariants::check_rows(Table& table, const testing::ObservedSnapshot& snapshot,
                                const std::set<std::string>& replayed) {
  const std::string where = fmt::format("table {} snapshot {}", table.name, snapshot.snapshot_id);
  const std::string commit = summary_value(snapshot.summary, iceberg::kCommitIdProperty, table.name);
  for (const testing::ChangelogRow& row : snapshot.added) {
    const auto found = source_.events().find(row.event_id);
    check(found != source_.events().end(), "{}: event {} is no change the source made", where, row.event_id);
    const SourceEvent& event = found->second;
    check(event.table == table.name, "{}: event {} is a change of table {}", where, row.event_id, event.table);
    // 7: an abandoned transaction is dropped whole.
    check(!source_.abandoned().contains(event.txn), "{}: event {} of abandoned transaction {}", where, row.event_id,
          event.txn);
    // 3: no event twice, each as the source made it.
    const auto [other, fresh] = event_table_.emplace(row.event_id, table.name);
    check(fresh, "{}: event {} is applied twice", where, row.event_id);
    check(row.op == static_cast<char>(event.event.op) && same_image(row.after, event.event.after) &&
              same_image(row.before, event.event.before),
          "{}: event {} is not the change the source made ({} {} {})", where, row.event_id, row.op,
          testing::to_string(row.after), testing::to_string(row.before));
    table.changelog.push_back(row);
    if (replayed.contains(row.event_id)) continue;  // a replayed dead letter stands outside its transaction
    // 2: whole transactions, in one snapshot of each table and one commit of them all.
    const auto [reached, first] = table.transactions.emplace(event.txn, snapshot.snapshot_id);
    check(reached->second == snapshot.snapshot_id, "{}: transaction {} reached the table in two snapshots ({} and {})",
          where, event.txn, reached->second, snapshot.snapshot_id);
    if (scenario_.two_writers) continue;  // tables committed apart
    const auto [brought, new_one] = commit_of_.emplace(event.txn, commit);
    check(brought->second == commit, "{}: transaction {} reached its tables in two commits ({} and {})", where,
          event.txn, brought->second, commit);
  }
}

void SinkInvariants::check_passed(const Table& table, const std::string& where,
                                  const std::map<std::int32_t, std::int64_t>& previous,
                                  const std::map<std::int32_t, std::int64_t>& now,
                                  const std::vector<Diversion>& acknowledged,
                                  const std::vector<Diversion>& unacknowledged) const {
  for (const auto& [partition, next] : now) {
    const envelope::TopicPartition where_read{table.topic, partition};
    const auto before = previous.find(partition);
    for (std::int64_t offset = before == previous.end() ? 0 : before->second; offset < next; ++offset) {
      const LogRecord& log = topics_.at(where_read, offset);
      if (!log.event) continue;  // a schema change: applied with its own commit
      const std::string& id = log.event->event_id;
      const auto event = source_.events().find(id);
      const bool abandoned = event != source_.events().end() && source_.abandoned().contains(event->second.txn);
      check(event_table_.contains(id) || diverted(acknowledged, id) || diverted(unacknowledged, id) || abandoned,
            "{}: partition {} is committed up to offset {}, past offset {} whose change {} it never applied{}", where,
            partition, next, offset, id,
            offset < topics_.first(where_read)
                ? fmt::format(" (retention deleted offsets below {})", topics_.first(where_read))
                : "");
    }
  }
}

void SinkInvariants::check_claim(const Table& table, const testing::ObservedSnapshot& snapshot,
                                 const std::vector<Diversion>& acknowledged,
                                 const std::vector<Diversion>& unacknowledged) {
  const auto position = capture::SourcePosition::from_summary(snapshot.summary);
  if (!position) return;
  // 9: the snapshot holds every change of its table up to the position it claims.
  for (const auto& [id, event] : source_.events()) {
    if (event.table != table.name || source_.abandoned().contains(event.txn)) continue;
    const mysql::BinlogPosition at{event.event.source.file, event.event.source.end_pos};
    if (capture::compare_binlog(at, position->binlog) > 0) continue;
    check(event_table_.contains(id) || diverted(acknowledged, id) || diverted(unacknowledged, id),
          "table {} snapshot {} claims {} but lacks event {}", table.name, snapshot.snapshot_id,
          position->binlog.to_string(), id);
  }
}

// 3: the current state is the changelog folded in source order, and no key moves back.
void SinkInvariants::check_state(Table& table, const std::vector<iceberg::Row>& rows) {
  std::vector<testing::ChangelogRow> history = table.changelog;
  std::stable_sort(history.begin(), history.end(), [](const auto& a, const auto& b) {
    return std::tie(a.binlog_pos, a.row_index) < std::tie(b.binlog_pos, b.row_index);
  });
  std::map<std::int64_t, std::int64_t> folded;
  for (const testing::ChangelogRow& row : history) {
    if (const auto key = number(row.before.at(0))) folded.erase(*key);
    if (const auto key = number(row.after.at(0))) folded[*key] = number(row.after.at(1)).value_or(-1);
  }
  std::map<std::int64_t, std::int64_t> state;
  for (const iceberg::Row& row : rows) {
    const auto key = number(row.at(0));
    check(key && state.emplace(*key, number(row.at(1)).value_or(-1)).second, "table {}: key {} twice in the state",
          table.name, testing::to_string(row));
  }
  if (state != folded) {
    std::string changes;
    for (const testing::ChangelogRow& row : history) {
      changes += fmt::format("\n  {} {} {} -> {}", row.event_id, row.op, testing::to_string(row.before),
                             testing::to_string(row.after));
    }
    check(false, "table {}: the current state {} is not its changelog folded in source order {}:{}", table.name, state,
          folded, changes);
  }
  for (const auto& [key, v] : state) {
    auto& newest = table.newest_v[key];
    check(v >= newest, "table {}: key {} moves back from v {} to {}", table.name, key, newest, v);
    newest = v;
  }
}

void SinkInvariants::at_end(const std::vector<Diversion>& acknowledged, const std::set<std::string>& replayed,
                            const std::set<std::string>& stopped) {
  after_step(acknowledged, {}, replayed);
  for (const auto& [id, event] : source_.events()) {
    if (source_.abandoned().contains(event.txn) || stopped.contains(event.table)) continue;
    check(event_table_.contains(id) || diverted(acknowledged, id), "event {} of transaction {} is lost", id, event.txn);
  }
  for (auto& [name, table] : tables_) {
    for (const auto& [partition, offset] : table.offsets) {
      check(offset <= topics_.end({table.topic, partition}), "table {}: partition {} committed past its end ({})", name,
            partition, offset);
    }
    if (!acknowledged.empty() || stopped.contains(name))
      continue;  // a diverted change is missing from the tables, rightly
    std::map<std::int64_t, std::int64_t> state;
    const auto now = table.watch.state();
    for (const iceberg::Row& row : now ? now->rows : std::vector<iceberg::Row>{}) {
      state[*number(row.at(0))] = *number(row.at(1));
    }
    check(state == source_.rows().at(name), "table {}: {} at the end, the source has {}", name, state,
          source_.rows().at(name));
  }
}

}  // namespace binberg::sink::simulation
