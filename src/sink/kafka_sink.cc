#include "sink/kafka_sink.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "capture/source_position.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/failpoint.h"
#include "envelope/change_envelope.h"
#include "envelope/transaction_footprint.h"
#include "iceberg/table_scan.h"
#include "kafka/admin.h"
#include "kafka/consumer.h"
#include "kafka/producer.h"
#include "mysql/ddl_statement.h"
#include "sink/dead_letters.h"
#include "sink/sink_reader.h"
#include "tables/schema_change.h"
#include "tables/table_pair.h"

namespace binberg::sink {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::minutes kFlushTimeout{10};

std::int64_t parse_epoch(const std::string& text, const std::string& table) {
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    fail("table {}: {} '{}' is not a number", table, tables::kSinkWriterEpochProperty, text);
  }
}

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string("unknown-host");
}

// "<file>:<pos>" (BinlogPosition::to_string); nullopt for anything else.
std::optional<mysql::BinlogPosition> parse_binlog_position(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  mysql::BinlogPosition position{std::string(text.substr(0, colon)), 0};
  const auto digits = text.substr(colon + 1);
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), position.offset);
  if (error != std::errc() || end != digits.data() + digits.size() || digits.empty()) return std::nullopt;
  return position;
}

// A change's place in the source history. Within a partition the records of `binberg source`
// are in this order, so a record that is not after the partition's last applied one was applied.
struct Coordinates {
  mysql::BinlogPosition binlog;
  std::uint32_t row = 0;
  int part = 0;  // 1 for the new-key half of a primary-key update (it follows the old-key half)

  std::string to_string() const { return fmt::format("{}#{}{}", binlog.to_string(), row, part == 1 ? "/new" : ""); }
  static Coordinates parse(const std::string& text) {
    const auto hash = text.rfind('#');
    const auto binlog = hash == std::string::npos ? std::nullopt : parse_binlog_position(text.substr(0, hash));
    if (!binlog) fail("'{}' is not <file>:<pos>#<row>", text);
    Coordinates c;
    c.binlog = *binlog;
    std::string row = text.substr(hash + 1);
    if (row.ends_with("/new")) {
      c.part = 1;
      row.resize(row.size() - 4);
    }
    c.row = static_cast<std::uint32_t>(std::stoul(row));
    return c;
  }
};

std::strong_ordering compare(const Coordinates& a, const Coordinates& b) {
  if (auto order = capture::compare_binlog(a.binlog, b.binlog); order != 0) return order;
  if (a.row != b.row) return a.row <=> b.row;
  return a.part <=> b.part;
}

// What a table has applied of one partition of its topic.
struct Progress {
  std::int64_t next_offset = 0;
  std::optional<Coordinates> last;
  // The transaction and source position of the last record counted (applied or diverted); empty in
  // tables written before they were recorded.
  std::string last_txn;
  std::optional<mysql::BinlogPosition> last_txn_position;
  std::int64_t timestamp_ms = 0;  // of the record before next_offset, when read here (not recorded)
};

// Where EVENT stands in the source history; KEY_CHANGE is its record's kKeyChangeHeader.
Coordinates coordinates_of(const ChangeEvent& event, const std::string& key_change) {
  return Coordinates{mysql::BinlogPosition{event.source.file, event.source.end_pos}, event.source.row_index,
                     key_change == "new" ? 1 : 0};
}

std::string key_change_of(const Headers& headers) {
  const auto part = headers.find(envelope::kKeyChangeHeader);
  return part == headers.end() ? "" : part->second;
}

std::string progress_json(const std::map<std::int32_t, Progress>& partitions) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [partition, progress] : partitions) {
    nlohmann::json entry{{"next_offset", progress.next_offset}};
    if (progress.last) entry["last"] = progress.last->to_string();
    if (!progress.last_txn.empty()) entry["last_txn"] = progress.last_txn;
    if (progress.last_txn_position) entry["last_txn_position"] = progress.last_txn_position->to_string();
    json[std::to_string(partition)] = entry;
  }
  return json.dump();
}

std::map<std::int32_t, Progress> parse_progress(const std::string& text, const std::string& where) {
  std::map<std::int32_t, Progress> partitions;
  try {
    const nlohmann::json json = nlohmann::json::parse(text);
    for (const auto& [partition, entry] : json.items()) {
      Progress progress;
      progress.next_offset = entry.at("next_offset").get<std::int64_t>();
      if (entry.contains("last")) progress.last = Coordinates::parse(entry["last"].get<std::string>());
      if (entry.contains("last_txn")) progress.last_txn = entry["last_txn"].get<std::string>();
      if (entry.contains("last_txn_position")) {
        progress.last_txn_position = parse_binlog_position(entry["last_txn_position"].get<std::string>());
        if (!progress.last_txn_position) fail("partition {}: last_txn_position is not <file>:<pos>", partition);
      }
      partitions.emplace(std::stoi(partition), progress);
    }
  } catch (const std::exception& error) {
    fail("{}: {} is unreadable: {}", where, tables::kSinkOffsetsProperty, error.what());
  }
  return partitions;
}

// A transaction the source abandoned: the session rolls back and reads again without it.
class AbandonedTransaction : public Error {
 public:
  using Error::Error;
};

// A schema change of TOPIC's table the policy refused: the session rolls back (what the other
// tables read but did not commit is read again) and the next ones write the other tables only.
class TableStopped : public Error {
 public:
  TableStopped(std::string topic, const std::string& message) : Error(message), topic_(std::move(topic)) {}
  const std::string& topic() const { return topic_; }

 private:
  std::string topic_;
};

// The source position a record's kPositionHeader names ("<gtid> <file>:<pos>"), if it has one.
std::optional<mysql::BinlogPosition> header_position(const Headers& headers) {
  const auto it = headers.find(envelope::kPositionHeader);
  if (it == headers.end()) return std::nullopt;
  const std::string_view text = it->second;  // "<gtid> <file>:<pos>", the GTID may be empty
  const auto space = text.rfind(' ');
  return parse_binlog_position(space == std::string_view::npos ? text : text.substr(space + 1));
}

}  // namespace

class KafkaSink::Session {
 public:
  explicit Session(KafkaSink& owner)
      : owner_(owner),
        options_(owner.options_),
        decoder_(options_.registry),
        records_(owner.registry_.counter("binberg_sink_records_total", "Records read").counter()),
        applied_(owner.registry_.counter("binberg_sink_applied_total", "Changes applied to the tables").counter()),
        redelivered_(owner.registry_.counter("binberg_sink_redelivered_total",
                                             "Records skipped as already applied, by how they were recognized",
                                             {"by"})),
        dead_letters_(
            owner.registry_.counter("binberg_sink_dead_letters_total", "Undecodable records sent to <topic>.dlq")
                .counter()),
        quarantined_(owner.registry_
                         .counter("binberg_sink_quarantined_total",
                                  "Records whose key is not their row's key, sent to <topic>.quarantine")
                         .counter()),
        replays_(owner.registry_.counter("binberg_sink_replays_total",
                                         "Replayed dead letters, by what the sink did with them", {"verdict"})),
        commits_(owner.registry_.counter("binberg_sink_commits_total", "Iceberg commits").counter()),
        fenced_(owner.registry_
                    .counter("binberg_sink_fenced_total",
                             "Tables this sink stopped writing because another sink claimed them after it")
                    .counter()),
        schema_changes_(
            owner.registry_.counter("binberg_sink_schema_changes_total", "DDL statements applied to the tables")
                .counter()),
        held_(owner.registry_
                  .gauge("binberg_sink_held_records",
                         "Records read behind a schema change that not every partition of its topic reached yet")
                  .gauge()),
        open_transactions_(
            owner.registry_.gauge("binberg_sink_open_transactions", "Source transactions partly read").gauge()),
        queued_(owner.registry_
                    .gauge("binberg_sink_queued_records", "Records read and decoded, waiting for the sink's thread")
                    .gauge()),
        lag_(owner.registry_.gauge("binberg_sink_lag_records",
                                   "Records between a partition's committed offset and its end",
                                   {"topic", "partition"})),
        lag_seconds_(owner.registry_.gauge(
            "binberg_sink_lag_seconds",
            "0 when a partition is read to its end and committed; else seconds since the first record past its "
            "committed offset was written to Kafka (before it is read: since the newest committed one was)",
            {"topic", "partition"})) {}

  void run(const std::function<bool()>& stop);

 private:
  // A DDL statement (kSchemaChangeHeader) met in some partitions of a table's topic. The records
  // behind it in those partitions are held until every partition met it (then each has handed over
  // all changes before it) and it is applied: the tables never mix changes from either side of it.
  struct MetSchemaChange {
    std::string txn, gtid;
    mysql::BinlogPosition position;
    tables::PublishedSchemaChange change;
    std::set<std::int32_t> partitions;             // where its footprint says it is
    std::map<std::int32_t, std::int64_t> offsets;  // of its record, in the partitions that met it
    std::deque<ReadRecord> held;                   // read behind it there, in order
  };
  struct Table {
    std::string topic;
    std::int32_t partitions = 1;
    std::map<std::int32_t, Progress> committed, progress;
    // What was committed before this session (committed_before); `committed` moves on with it.
    std::map<std::int32_t, Progress> committed_at_open;
    std::optional<iceberg::TableIdentifier> changelog_id;  // of existing tables
    std::shared_ptr<const TableSchema> schema;             // what the tables hold
    std::unique_ptr<iceberg::TableWriter> state, changelog;
    std::optional<tables::RowMapping> mapping;
    bool dirty = false;
    // The newest change applied to these tables (kSinkTableNewestProperty), and the one the
    // committed snapshot claims as its source position (kBinlogFileProperty...), if it claims one.
    std::optional<Coordinates> newest, claimed;
    std::string newest_gtid;
    // By partition: when the first record read past the committed offset was written to Kafka.
    std::map<std::int32_t, std::int64_t> pending_since_ms;
    std::map<std::string, ChangeEvent> key_change_halves;  // by event id, until the other half comes
    const SinkRebuildTopic* rebuild = nullptr;             // rebuild mode: where it starts and stops
    std::int64_t epoch = 0;                                // the writer epoch its commits carry (invariant 8)
    // The changelog snapshot open() read the offsets from (none: no table or no snapshot yet).
    std::optional<std::int64_t> opened_at;
    std::uint64_t snapshot_rows = 0;  // of the source's initial copy, read whole since the last commit
    std::optional<MetSchemaChange> schema_change;
  };
  struct OpenTransaction {
    mysql::BinlogPosition position;                // where it ends in the source
    std::optional<envelope::Footprint> footprint;  // of the partitions this sink reads
    envelope::Footprint counted;
  };
  // The transaction a partition is in the middle of, and whether its last record there came.
  struct PartitionTransaction {
    std::string id;
    bool ended = false;
  };

  void open();
  // Rebuild mode: opens TABLE's fresh tables and copies into them the rows of the original's seed
  // commit, whose offsets become TABLE's progress (committed with the rows in the first commit).
  void seed(Table& table);
  // Rebuild mode: every partition reached the original's offsets.
  bool finished() const;
  // READ as the reader handed it over, or (REPLAYED) taken from the records that waited while draining.
  void handle(ReadRecord& read, bool replayed = false);
  // Throws AbandonedTransaction when RECORD shows its partition's unended transaction was given up.
  void check_abandoned(const kafka::ConsumedRecord& record, const std::string& txn_id,
                       const std::optional<mysql::BinlogPosition>& position);
  // READ's change; nullopt after sending it to the dead-letter topic.
  std::optional<ChangeEvent> decode(ReadRecord& read);
  // A replayed dead letter (kReplayOfHeader naming ORIGIN), outside every source transaction.
  void replay(Table& table, const ReadRecord& read, ChangeEvent event, const RecordOrigin& origin);
  enum class ReplayVerdict { kApply, kSuperseded, kDuplicate };
  ReplayVerdict judge_replay(const kafka::ConsumedRecord& record, const ChangeEvent& event, const RecordOrigin& origin);
  // Why READ's key is not the key of EVENT's row, or nullopt when it is (the audit gate).
  std::optional<std::string> key_problem(const ReadRecord& read, const ChangeEvent& event);
  // Whether a record of transaction TXN_ID at POSITION waits while draining: it begins a
  // transaction newer than every open one (older ones are let in, or the open ones might wait
  // for records behind them in their partitions).
  bool waits(const std::string& txn_id, const std::optional<mysql::BinlogPosition>& position) const;
  // READ is a schema change's record in its partition; false when it was dealt with (a redelivery,
  // or malformed and dead-lettered) and its offset may move past it.
  bool meet_schema_change(Table& table, ReadRecord& read, const Progress& progress, const std::string& txn_id,
                          const std::optional<mysql::BinlogPosition>& position);
  // Every partition met TABLE's schema change: applies it, then handles the records held behind it.
  void apply_schema_change(Table& table);
  void divert(const kafka::ConsumedRecord& record, const std::string& suffix, const std::string& reason);
  // RECORD to `<topic>.dlq` (undecodable) or `<topic>.quarantine` (mis-keyed), counted.
  void dead_letter(const kafka::ConsumedRecord& record, const std::string& reason);
  void quarantine(const kafka::ConsumedRecord& record, const std::string& reason);
  void apply(Table& table, ChangeEvent event, const std::string& key_change);
  void open_writers(Table& table, const std::shared_ptr<const TableSchema>& schema);
  // Opens TABLE's writers if needed and maps SCHEMA's rows onto them; a schema that does not fit
  // stops the sink (ConfigError).
  void map_schema(Table& table, const std::shared_ptr<const TableSchema>& schema, const kafka::ConsumedRecord& record);
  // PROGRESS is that of RECORD's partition.
  void count(const kafka::ConsumedRecord& record, Progress& progress, const std::string& txn_id,
             const std::optional<mysql::BinlogPosition>& position, const Headers& headers);
  bool committed_before(const Table& table, std::int32_t partition, const std::string& txn_id,
                        const mysql::BinlogPosition& position) const;
  bool whole() const { return open_.empty(); }
  void start_draining() {
    draining_ = true;
    horizon_ = {};
    for (const auto& [id, txn] : open_) {
      if (horizon_.file.empty() || capture::compare_binlog(txn.position, horizon_) > 0) horizon_ = txn.position;
    }
  }
  // Commits the tables (ONLY: that one alone) with what they applied; COMMIT_ID: a generated one.
  void commit(Table* only = nullptr, std::string commit_id = "");
  bool claimable(const Table& table) const;
  bool claim_missing(const Table& table) const;
  // A table became claimable at a position its committed snapshot does not claim yet.
  bool claim_due() const;
  void commit_group_offsets();
  void update_lag();

  KafkaSink& owner_;
  const KafkaSinkOptions& options_;
  RecordDecoder decoder_;  // for replays' judgement; the reader decodes the records read
  metrics::Counter& records_;
  metrics::Counter& applied_;
  metrics::Family& redelivered_;
  metrics::Counter& dead_letters_;
  metrics::Counter& quarantined_;
  metrics::Family& replays_;
  metrics::Counter& commits_;
  metrics::Counter& fenced_;
  metrics::Counter& schema_changes_;
  metrics::Gauge& held_;
  metrics::Gauge& open_transactions_;
  metrics::Gauge& queued_;
  metrics::Family& lag_;
  metrics::Family& lag_seconds_;
  std::optional<kafka::Consumer> consumer_;
  std::optional<SinkReader> reader_;  // reads consumer_ (declared after it: stops first)
  // The partitions whose end the reader reported after the last record handed over.
  std::set<envelope::TopicPartition> at_end_;
  std::optional<kafka::Producer> diverted_;  // dead letters and quarantine
  std::map<std::string, Table> tables_;      // by topic
  std::map<std::string, OpenTransaction> open_;
  std::map<envelope::TopicPartition, PartitionTransaction> in_partition_;
  // Draining: a commit is due; records of transactions that begin meanwhile wait here.
  bool draining_ = false;
  mysql::BinlogPosition horizon_;  // the newest open transaction when draining began
  std::deque<ReadRecord> waiting_;
  // read_from: the partitions read again from before the tables' offsets, until they get there.
  std::map<envelope::TopicPartition, std::int64_t> rereading_;
  std::set<envelope::TopicPartition> waiting_partitions_;
  std::size_t pending_changes_ = 0;
  bool offsets_moved_ = false;  // records read since the last commit (applied, skipped or diverted)
  // The newest change applied (by source position): its coordinates, GTID and source commit time.
  std::optional<Coordinates> newest_;
  std::string newest_gtid_;
  std::int64_t newest_commit_ms_ = 0;
  std::uint64_t commit_sequence_ = 0;  // makes commit ids unique within a millisecond
};

std::map<std::int32_t, std::int64_t> sink_next_offsets(const std::string& summary_value, const std::string& where) {
  std::map<std::int32_t, std::int64_t> offsets;
  for (const auto& [partition, progress] : parse_progress(summary_value, where))
    offsets[partition] = progress.next_offset;
  return offsets;
}

void KafkaSink::Session::open() {
  const bool rebuilding = !options_.rebuild.empty();
  // Tables this sink made before, by the topic they record (a rebuild finds only its own). With a
  // namespace configured, all of them are there: other namespaces of a shared catalog are not read.
  std::map<std::string, iceberg::TableIdentifier> existing;
  for (const std::string& ns : owner_.catalog_.list_namespaces()) {
    if (!options_.iceberg_namespace.empty() && ns != options_.iceberg_namespace) continue;
    for (const iceberg::TableIdentifier& id : owner_.catalog_.list_tables(ns)) {
      if (!id.name.ends_with(options_.changelog_suffix)) continue;
      const auto& properties = owner_.catalog_.load_table(id).metadata.properties;
      if (properties.contains(tables::kSinkRebuildOfProperty) != rebuilding) continue;
      if (auto it = properties.find(tables::kSinkTopicProperty); it != properties.end())
        existing.emplace(it->second, id);
    }
  }
  consumer_.emplace(kafka::Consumer::create(kafka::ConsumerOptions{options_.kafka, options_.group_id, true}));
  bool seeded = false;
  std::vector<std::string> fenced;
  for (const std::string& topic : owner_.owned_) {
    if (owner_.fenced_until_.contains(topic) || owner_.stopped_.contains(topic)) continue;
    Table& table = tables_[topic];
    table.topic = topic;
    table.partitions = kafka::partition_count(options_.kafka, topic);
    if (rebuilding) table.rebuild = &options_.rebuild.at(topic);
    std::int64_t epoch = 0;  // the table's, and who holds it
    std::string writer;
    if (auto it = existing.find(topic); it != existing.end()) {
      table.changelog_id = it->second;
      const iceberg::LoadedTable changelog = owner_.catalog_.load_table(it->second);
      if (const iceberg::Snapshot* snapshot = changelog.metadata.current_snapshot()) {
        table.opened_at = snapshot->snapshot_id;
        if (auto at = snapshot->summary.find(tables::kSinkWriterEpochProperty); at != snapshot->summary.end()) {
          epoch = parse_epoch(at->second, it->second.to_string());
          writer = snapshot->summary.count(tables::kSinkWriterProperty) != 0
                       ? snapshot->summary.at(tables::kSinkWriterProperty)
                       : "";
        }
        if (auto offsets = snapshot->summary.find(tables::kSinkOffsetsProperty); offsets != snapshot->summary.end()) {
          table.committed = parse_progress(offsets->second, "table " + it->second.to_string());
        }
        if (auto newest = snapshot->summary.find(tables::kSinkTableNewestProperty); newest != snapshot->summary.end()) {
          table.newest = Coordinates::parse(newest->second);
          table.newest_gtid = snapshot->summary.count(tables::kSinkTableNewestGtidProperty) != 0
                                  ? snapshot->summary.at(tables::kSinkTableNewestGtidProperty)
                                  : "";
          if (capture::SourcePosition::from_summary(snapshot->summary)) table.claimed = table.newest;
        }
      }
    }
    // Invariant 8: a table this sink got since its last commit there is claimed at the next epoch;
    // one it holds must still be at its own epoch, else another sink claimed it since.
    if (owner_.to_claim_.contains(topic)) {
      table.epoch = epoch + 1;
    } else if (epoch == owner_.epochs_[topic] && writer == owner_.writer_) {
      table.epoch = epoch;
    } else {
      spdlog::warn(
          "sink: table {} was claimed by {} at writer epoch {} (this sink held epoch {}): it stops writing "
          "topic {} until it is given the topic again",
          table.changelog_id ? table.changelog_id->to_string() : topic, writer, epoch, owner_.epochs_[topic], topic);
      fenced.push_back(topic);
      continue;
    }
    table.progress = table.committed_at_open = table.committed;
    if (table.rebuild && table.committed.empty() && table.rebuild->seed_changelog_snapshot) {
      seed(table);
      seeded = true;
    }
  }
  for (const std::string& topic : fenced) {
    tables_.erase(topic);
    ++owner_.stats_.fenced;
    fenced_.add();
    // Kafka's view may be the stale one (this sink was paused and the group moved the topic on,
    // or the other sink was): the topic is taken up again only if the group still gives it to
    // this sink once its members had time to learn where it is.
    if (options_.scale_out) {
      owner_.fenced_until_[topic] = Clock::now() + options_.member_timeout;
    } else {
      owner_.owned_.erase(topic);
    }
  }
  if (tables_.empty()) {
    if (!options_.scale_out && !owner_.owned_.empty()) {  // the topics it still owns are all stopped
      std::vector<std::string> reasons;
      for (const auto& [topic, reason] : owner_.stopped_) reasons.push_back(reason);
      throw ConfigError(fmt::format("sink: every table stopped: {}", fmt::join(reasons, "; ")));
    }
    if (!options_.scale_out) {
      throw ConfigError(
          fmt::format("sink: other sinks claimed every table of group {}: run one sink per group, or "
                      "[sink] scale_out = true in all of them",
                      options_.group_id));
    }
    return;  // a standby until the group gives this sink a topic
  }
  if (seeded) {
    commit();  // the seed's rows and offsets, before anything read
    for (auto& [topic, table] : tables_) table.committed_at_open = table.committed;
  }
  std::vector<kafka::PartitionStart> starts;
  for (auto& [topic, table] : tables_) {
    for (std::int32_t partition = 0; partition < table.partitions; ++partition) {
      const std::int64_t needed = table.progress[partition].next_offset;
      const std::int64_t first = consumer_->watermarks(topic, partition, std::chrono::seconds(30)).first;
      if (needed < first) {
        throw ConfigError(fmt::format(
            "topic {} [{}] starts at offset {} (retention deleted what was before it), but the tables need it from "
            "offset {}: applying what is left would leave a gap; rebuild the tables from a later commit "
            "(binberg sink --rebuild NAMESPACE --from timestamp:...)",
            topic, partition, first, needed));
      }
      std::int64_t start = needed;
      if (options_.read_from) {
        start = *options_.read_from == kEarliestOffset ? first : *options_.read_from;
        if (start > needed) {
          throw ConfigError(
              fmt::format("topic {} [{}]: --from offset {} is past the next offset the tables need ({}); "
                          "records {}..{} would never be applied",
                          topic, partition, start, needed, needed, start - 1));
        }
      }
      starts.push_back(kafka::PartitionStart{topic, partition, start});
      if (start < needed) rereading_[{topic, partition}] = needed;
    }
    spdlog::info("sink: topic {} ({} partitions) from {}{}", topic, table.partitions,
                 table.committed.empty() ? "the beginning" : progress_json(table.committed),
                 table.rebuild ? fmt::format(", rebuilding {} up to {}", table.rebuild->original_changelog.to_string(),
                                             nlohmann::json(table.rebuild->target).dump())
                               : "");
  }
  consumer_->assign(starts);
  commit_group_offsets();  // a rewound group shows where the tables are again
  failpoint::hit("sink.after_open");
}

void KafkaSink::Session::seed(Table& table) {
  const SinkRebuildTopic& plan = *table.rebuild;
  const iceberg::LoadedTable original = owner_.catalog_.load_table(plan.original_changelog);
  const auto schema = tables::recorded_source_schema(original);
  if (!schema) {
    fail("table {} records no source definition ({}); binberg cannot rebuild it", plan.original_changelog.to_string(),
         tables::kSourceSchemaProperty);
  }
  open_writers(table, schema);
  const auto copy = [&](const iceberg::TableIdentifier& from, std::int64_t snapshot, iceberg::TableWriter& to) {
    const iceberg::LoadedTable source = from == plan.original_changelog ? original : owner_.catalog_.load_table(from);
    const iceberg::Schema& fields = to.table().metadata.current_schema();
    if (source.metadata.current_schema().fields() != fields.fields()) {
      fail("table {} no longer has the columns its source definition gives; binberg cannot rebuild it",
           from.to_string());
    }
    std::uint64_t rows = 0;
    iceberg::scan_rows(iceberg::plan_scan(source.metadata, snapshot), fields,
                       [&](const iceberg::Row& row, const iceberg::LiveFile&, std::int64_t) {
                         to.mode() == iceberg::WriteMode::kUpsert ? to.upsert(row) : to.append(row);
                         ++rows;
                       });
    spdlog::info("sink: rebuild of {} starts from snapshot {} of {} ({} rows)", table.topic, snapshot, from.to_string(),
                 rows);
  };
  copy(plan.original_changelog, *plan.seed_changelog_snapshot, *table.changelog);
  if (table.state) {
    if (!plan.original_state || !plan.seed_state_snapshot) {
      fail("table {} has no current-state table to rebuild from", plan.original_changelog.to_string());
    }
    copy(*plan.original_state, *plan.seed_state_snapshot, *table.state);
  }
  table.progress = parse_progress(plan.seed_offsets, "the rebuild's seed");
  table.dirty = true;
}

bool KafkaSink::Session::finished() const {
  if (options_.rebuild.empty()) return false;
  for (const auto& [topic, table] : tables_) {
    for (const auto& [partition, offset] : table.rebuild->target) {
      const auto progress = table.progress.find(partition);
      if (offset > (progress == table.progress.end() ? 0 : progress->second.next_offset)) return false;
    }
  }
  return true;
}

void KafkaSink::Session::open_writers(Table& table, const std::shared_ptr<const TableSchema>& schema) {
  const std::string ns = options_.iceberg_namespace.empty() ? schema->database : options_.iceberg_namespace;
  std::map<std::string, std::string> properties = {{tables::kSinkTopicProperty, table.topic}};
  if (table.rebuild) properties[tables::kSinkRebuildOfProperty] = table.rebuild->original_changelog.to_string();
  tables::TablePair pair;
  try {
    pair = tables::open_table_pair(owner_.catalog_, ns, schema->table, options_.changelog_suffix, schema,
                                   options_.types, properties);
  } catch (const tables::UnmappableTable& error) {
    throw TableStopped(
        table.topic,
        fmt::format("topic {}: the table is not written: {}. binberg sink creates none of its Iceberg tables and goes "
                    "on with the other tables; once the table can be mapped, a restart applies the topic from its "
                    "first record, so nothing is lost while Kafka keeps it",
                    table.topic, error.what()));
  }
  // The writers commit on top of what they load now: it must be what the offsets were read from,
  // or another writer moved the table since (and this session would apply its records again).
  const iceberg::Snapshot* now = pair.changelog->metadata.current_snapshot();
  if ((now ? std::optional(now->snapshot_id) : std::nullopt) != table.opened_at) {
    throw iceberg::CommitConflict(
        fmt::format("table {} moved on since this session read its offsets", pair.changelog_id.to_string()));
  }
  table.schema = pair.schema;
  table.changelog_id = pair.changelog_id;
  if (pair.state) {
    table.state =
        std::make_unique<iceberg::TableWriter>(std::move(*pair.state), iceberg::WriteMode::kUpsert, options_.writer);
  }
  table.changelog =
      std::make_unique<iceberg::TableWriter>(std::move(*pair.changelog), iceberg::WriteMode::kAppend, options_.writer);
}

void KafkaSink::Session::map_schema(Table& table, const std::shared_ptr<const TableSchema>& schema,
                                    const kafka::ConsumedRecord& record) {
  if (!table.changelog) open_writers(table, schema);
  if (!table.mapping || &table.mapping->source() != schema.get()) {
    table.mapping.reset();
    try {
      table.mapping.emplace(schema, table.state ? &table.state->table().metadata.current_schema() : nullptr,
                            &table.changelog->table().metadata.current_schema());
    } catch (const Error& error) {
      throw ConfigError(fmt::format(
          "topic {} [{}] offset {}: the record's schema does not fit the Iceberg tables {} ({}): the source table "
          "changed without a schema change record before it (binberg source publishes one for every DDL statement it "
          "reads). binberg sink stops here, so nothing is lost",
          record.topic, record.partition, record.offset, table.changelog_id->to_string(), error.what()));
    }
  }
}

void KafkaSink::Session::divert(const kafka::ConsumedRecord& record, const std::string& suffix,
                                const std::string& reason) {
  const std::string topic = record.topic + suffix;
  if (!diverted_) diverted_.emplace(kafka::Producer::create(options_.kafka, kafka::ProducerMode::kIdempotent));
  kafka::create_topic(options_.kafka, kafka::TopicSpec{topic, 1, 1, {}});
  diverted_->send(
      kafka::OutgoingRecord{topic, std::nullopt, record.key, record.value, diverted_headers(record, reason)});
  spdlog::warn("sink: {} [{}] offset {} -> {}: {}", record.topic, record.partition, record.offset, topic, reason);
}

void KafkaSink::Session::dead_letter(const kafka::ConsumedRecord& record, const std::string& reason) {
  divert(record, std::string(kDeadLetterSuffix), reason);
  ++owner_.stats_.dead_letters;
  dead_letters_.add();
}

void KafkaSink::Session::quarantine(const kafka::ConsumedRecord& record, const std::string& reason) {
  divert(record, std::string(kQuarantineSuffix), reason);
  ++owner_.stats_.quarantined;
  quarantined_.add();
}

std::optional<ChangeEvent> KafkaSink::Session::decode(ReadRecord& read) {
  if (read.event) return std::move(read.event);
  const kafka::ConsumedRecord& record = read.record;
  if (!read.event_error)
    fail("{} [{}] offset {}: handed over undecoded", record.topic, record.partition, record.offset);
  try {
    std::rethrow_exception(read.event_error);
  } catch (const registry::RegistryError& error) {
    if (error.http_status() != 404) throw;  // the registry is unwell: retry, do not dead-letter
    dead_letter(record, fmt::format("unknown schema id: {}", error.what()));
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& error) {
    dead_letter(record, error.what());
  }
  return std::nullopt;
}

void KafkaSink::Session::apply(Table& table, ChangeEvent event, const std::string& key_change) {
  const Coordinates at{mysql::BinlogPosition{event.source.file, event.source.end_pos}, event.source.row_index, 0};
  if (!newest_ || compare(at, *newest_) > 0) {
    newest_ = at;
    newest_gtid_ = event.source.gtid;
    newest_commit_ms_ = event.source.commit_ts_ms;
  }
  if (!table.newest || compare(at, *table.newest) > 0) {
    table.newest = at;
    table.newest_gtid = event.source.gtid;
  }
  const tables::RowMapping& mapping = *table.mapping;
  if (key_change.empty()) {
    tables::apply_change(mapping, event, table.state.get(), *table.changelog);
  } else {
    // The halves of a primary-key update: the state moves at once, the changelog gets the one
    // update row path A writes once both halves are here.
    if (key_change == "old" && table.state) table.state->remove(mapping.state_row(*event.before));
    if (key_change == "new" && table.state) table.state->upsert(mapping.state_row(*event.after));
    auto half = table.key_change_halves.find(event.event_id);
    if (half == table.key_change_halves.end()) {
      table.key_change_halves.emplace(event.event_id, std::move(event));
    } else {
      ChangeEvent update = std::move(half->second);
      table.key_change_halves.erase(half);
      if (key_change == "old") {
        update.before = std::move(event.before);
      } else {
        update.after = std::move(event.after);
      }
      update.op = Op::kUpdate;
      table.changelog->append(mapping.changelog_row(update));
    }
  }
  table.dirty = true;
  ++pending_changes_;
  ++owner_.stats_.applied;
  applied_.add();
}

std::optional<std::string> KafkaSink::Session::key_problem(const ReadRecord& read, const ChangeEvent& event) {
  if (event.schema->primary_key.empty()) return std::nullopt;
  if (!read.record.key) return "the record has no key";
  if (read.key) {
    if (*read.key != primary_key_of(event)) return "the record's key is not its row's key";
    return std::nullopt;
  }
  if (!read.key_error)
    fail("{} [{}] offset {}: key not decoded", read.record.topic, read.record.partition, read.record.offset);
  try {
    std::rethrow_exception(read.key_error);
  } catch (const registry::RegistryError& error) {
    if (error.http_status() != 404) throw;
    return fmt::format("the key's schema is unknown: {}", error.what());
  } catch (const Error& error) {
    return fmt::format("the key does not decode: {}", error.what());
  }
  return std::nullopt;
}

bool KafkaSink::Session::waits(const std::string& txn_id, const std::optional<mysql::BinlogPosition>& position) const {
  if (!txn_id.empty() && open_.contains(txn_id)) return false;
  return !position || horizon_.file.empty() || capture::compare_binlog(*position, horizon_) > 0;
}

// Counts RECORD towards its transaction; the transaction is whole once its footprint is known
// and every partition this sink reads holds the records the footprint lists.
void KafkaSink::Session::count(const kafka::ConsumedRecord& record, Progress& progress, const std::string& txn_id,
                               const std::optional<mysql::BinlogPosition>& position, const Headers& headers) {
  const envelope::TopicPartition partition{record.topic, record.partition};
  if (txn_id.empty()) return;  // a producer without transactions: every record stands alone
  progress.last_txn = txn_id;
  progress.last_txn_position = position;
  const auto end = headers.find(envelope::kTransactionEndHeader);
  in_partition_[partition] = PartitionTransaction{txn_id, end != headers.end()};
  OpenTransaction& txn = open_[txn_id];
  if (position) txn.position = *position;
  ++txn.counted[partition];
  if (end != headers.end()) {
    envelope::Footprint footprint;
    for (const auto& [where, records] : envelope::parse_footprint(end->second)) {
      const auto other = tables_.find(where.first);
      if (other == tables_.end()) continue;  // another sink's
      if (!txn.position.file.empty() && committed_before(other->second, where.second, txn_id, txn.position)) continue;
      footprint.emplace(where, records);
    }
    txn.footprint = std::move(footprint);
  }
  if (txn.footprint && txn.counted == *txn.footprint) {
    if (txn_id.starts_with("snapshot:")) {  // the source's initial copy: its size per table, for the audit
      for (const auto& [where, records] : *txn.footprint) tables_.at(where.first).snapshot_rows += records;
    }
    open_.erase(txn_id);
  }
  open_transactions_.set(static_cast<double>(open_.size()));
}

// Whether the records of transaction TXN_ID (one of whose changes is at POSITION) in PARTITION of
// TABLE's topic were committed before this session: then it reads none of them. Each table is
// committed in whole transactions, but two tables may have been committed by different sinks
// (scale-out) or a table by a sink reading only it, so one table can hold its part of a
// transaction that another still lacks. The partition's last committed record (applied or
// diverted) is then of this transaction, or of a later one (past every change of it).
bool KafkaSink::Session::committed_before(const Table& table, std::int32_t partition, const std::string& txn_id,
                                          const mysql::BinlogPosition& position) const {
  const auto committed = table.committed_at_open.find(partition);
  if (committed == table.committed_at_open.end()) return false;
  const Progress& last = committed->second;
  return last.last_txn == txn_id ||
         (last.last_txn_position && capture::compare_binlog(*last.last_txn_position, position) > 0);
}

// A newer transaction while the partition's current one never ended there: the source gave that
// one up (an at-least-once source that crashed and started over elsewhere, e.g. with a new
// snapshot). It is dropped whole. A record of an older transaction is a redelivery, not this: a
// source that starts over from a saved position produces the unended transaction again first.
void KafkaSink::Session::check_abandoned(const kafka::ConsumedRecord& record, const std::string& txn_id,
                                         const std::optional<mysql::BinlogPosition>& position) {
  if (txn_id.empty() || !position) return;
  const auto current = in_partition_.find({record.topic, record.partition});
  if (current == in_partition_.end() || current->second.ended || current->second.id.empty() ||
      current->second.id == txn_id) {
    return;
  }
  const auto open = open_.find(current->second.id);
  if (open == open_.end()) return;
  // A source that starts over after an unended snapshot takes a new one before anything else; other
  // transactions are newer by position (an older one is a redelivery, produced again first).
  const bool snapshot_replaced = current->second.id.starts_with("snapshot:");
  if (!snapshot_replaced && capture::compare_binlog(*position, open->second.position) <= 0) return;
  owner_.abandoned_.insert(current->second.id);
  throw AbandonedTransaction(fmt::format(
      "{} [{}] offset {}: transaction {} was abandoned by its source; reading again from the committed offsets "
      "without it",
      record.topic, record.partition, record.offset, current->second.id));
}

void KafkaSink::Session::handle(ReadRecord& read, bool replayed) {
  const kafka::ConsumedRecord& record = read.record;
  Table& table = tables_.at(record.topic);
  if (table.rebuild) {  // a rebuild stops where the original stood
    const auto target = table.rebuild->target.find(record.partition);
    if (target == table.rebuild->target.end() || record.offset >= target->second) return;
  }
  Progress& progress = table.progress[record.partition];
  const envelope::TopicPartition partition{record.topic, record.partition};
  if (record.offset < progress.next_offset) {
    ++owner_.stats_.redelivered_by_offset;
    redelivered_.counter({"offset"}).add();
    if (const auto it = rereading_.find(partition); it != rereading_.end() && record.offset + 1 >= it->second) {
      rereading_.erase(it);
      if (rereading_.empty()) {
        spdlog::info("sink: read again up to the tables' offsets: {} records redelivered, none applied",
                     owner_.stats_.redelivered_by_offset);
      }
    }
    return;
  }
  table.pending_since_ms.emplace(record.partition, record.timestamp_ms);  // the first not committed
  if (table.schema_change && table.schema_change->offsets.contains(record.partition)) {
    table.schema_change->held.push_back(std::move(read));  // behind a schema change not applied yet
    return;
  }
  const Headers& headers = read.headers;
  const auto txn_header = headers.find(envelope::kTransactionHeader);
  const std::string txn_id = txn_header == headers.end() ? std::string() : txn_header->second;
  const std::optional<mysql::BinlogPosition> position = header_position(headers);
  // Before anything may wait: a commit waits for every open transaction, so the record that shows
  // one was abandoned must not wait behind it. But a record behind others of its partition that
  // still wait is checked when its turn comes: until then the partition's current transaction is
  // not the one before it (it would look abandoned).
  if (replayed || !waiting_partitions_.contains(partition)) check_abandoned(record, txn_id, position);
  // While draining, a transaction newer than the open ones waits, and so does all after it in its partition.
  if (draining_ && (waiting_partitions_.contains(partition) || waits(txn_id, position))) {
    waiting_partitions_.insert(partition);
    waiting_.push_back(std::move(read));
    return;
  }
  ++owner_.stats_.records;
  records_.add();
  const auto advance = [&] {
    progress.next_offset = record.offset + 1;
    progress.timestamp_ms = record.timestamp_ms;
    offsets_moved_ = true;
  };
  if (!txn_id.empty() && owner_.abandoned_.contains(txn_id)) return advance();
  if (headers.contains(envelope::kSchemaChangeHeader)) {
    if (!meet_schema_change(table, read, progress, txn_id, position)) advance();
    return;
  }
  std::optional<ChangeEvent> event = decode(read);
  if (!event) {
    count(record, progress, txn_id, position, headers);
    return advance();
  }
  if (const auto replay_of = headers.find(kReplayOfHeader); replay_of != headers.end()) {
    std::optional<RecordOrigin> origin;
    try {
      origin = RecordOrigin::parse(replay_of->second);
    } catch (const Error& error) {
      dead_letter(record, fmt::format("{}: {}", kReplayOfHeader, error.what()));
      return advance();
    }
    replay(table, read, std::move(*event), *origin);
    return advance();
  }
  const std::string key_change = key_change_of(headers);
  const Coordinates coordinates = coordinates_of(*event, key_change);
  if (progress.last && compare(coordinates, *progress.last) <= 0) {
    ++owner_.stats_.redelivered_by_position;
    redelivered_.counter({"position"}).add();
    return advance();
  }
  map_schema(table, event->schema, record);
  if (const auto problem = key_problem(read, *event)) {
    quarantine(record, *problem);
  } else {
    apply(table, std::move(*event), key_change);
    progress.last = coordinates;
  }
  count(record, progress, txn_id, position, headers);
  advance();
}

bool KafkaSink::Session::meet_schema_change(Table& table, ReadRecord& read, const Progress& progress,
                                            const std::string& txn_id,
                                            const std::optional<mysql::BinlogPosition>& position) {
  const kafka::ConsumedRecord& record = read.record;
  const auto end = read.headers.find(envelope::kTransactionEndHeader);
  std::optional<tables::PublishedSchemaChange> change;
  std::set<std::int32_t> partitions;
  try {
    if (txn_id.empty() || !position || end == read.headers.end()) {
      fail("it lacks its transaction, position or footprint header");
    }
    change = tables::PublishedSchemaChange::parse(read.headers.find(envelope::kSchemaChangeHeader)->second);
    for (const auto& [where, records] : envelope::parse_footprint(end->second)) {
      if (where.first == record.topic) partitions.insert(where.second);
    }
    if (!partitions.contains(record.partition)) fail("its footprint does not name its own partition");
  } catch (const Error& error) {
    dead_letter(record, fmt::format("malformed schema change record: {}", error.what()));
    return false;
  }
  // Met again (an at-least-once source repeating itself, a rewind): the partition is past it.
  if ((progress.last_txn_position && capture::compare_binlog(*position, *progress.last_txn_position) <= 0) ||
      (progress.last && capture::compare_binlog(*position, progress.last->binlog) <= 0)) {
    ++owner_.stats_.redelivered_by_position;
    redelivered_.counter({"position"}).add();
    return false;
  }
  if (!table.schema_change) {
    const std::string& text = read.headers.find(envelope::kPositionHeader)->second;
    table.schema_change.emplace(MetSchemaChange{
        txn_id, text.substr(0, text.rfind(' ')), *position, std::move(*change), std::move(partitions), {}, {}});
  } else if (table.schema_change->txn != txn_id) {
    // A partition holds everything behind the statement it met, so the next one cannot come first.
    fail("{} [{}] offset {}: schema change {} met while {} is not applied in every partition", record.topic,
         record.partition, record.offset, txn_id, table.schema_change->txn);
  }
  table.schema_change->offsets[record.partition] = record.offset;
  in_partition_[{record.topic, record.partition}] = PartitionTransaction{txn_id, true};
  if (table.schema_change->offsets.size() == table.schema_change->partitions.size()) apply_schema_change(table);
  return true;
}

// What came before the statement is committed first (the table alone: its part of every
// transaction before the statement is whole, since every partition passed them). The statement
// then evolves the tables, as in path A (evolve_tables), in a commit of its own whose offsets pass
// its records: the snapshot that first holds the statement is the first with the new schema, and
// a crash before that commit meets it again. A statement the policy refuses stops the table before
// it (TableStopped: the other tables go on), at every start, until the operator accepts it.
void KafkaSink::Session::apply_schema_change(Table& table) {
  MetSchemaChange met = std::move(*table.schema_change);
  table.schema_change.reset();
  const std::string where = fmt::format("{} (transaction {}; topic {} offsets {})", met.position.to_string(), met.txn,
                                        table.topic, nlohmann::json(met.offsets).dump());
  if (!table.changelog && table.changelog_id) {
    const auto recorded = tables::recorded_source_schema(owner_.catalog_.load_table(*table.changelog_id));
    if (!recorded) {
      throw ConfigError(fmt::format("table {} records no source definition ({}): binberg sink cannot evolve it",
                                    table.changelog_id->to_string(), tables::kSourceSchemaProperty));
    }
    open_writers(table, recorded);
  }
  if (table.changelog) {
    commit(&table);  // the changes before the statement, under the old schema
    const auto refuse = [&](const std::string& why) {
      return TableStopped(
          table.topic,
          fmt::format("table {}: schema change at {} refused: {}. binberg sink stops writing the table before it, so "
                      "nothing is lost, and goes on with the other tables; the table stays at offsets {}. Accept the "
                      "change with binberg sink --accept-schema-change {} (docs/schema-evolution.md). Statement: {}",
                      table.changelog_id->to_string(), where, why, progress_json(table.committed), met.txn,
                      met.change.statement.substr(0, 300)));
    };
    const mysql::DdlStatement ddl = mysql::parse_ddl(met.change.statement, met.change.database);
    if (ddl.kind != mysql::DdlStatement::Kind::kAlterTable) throw refuse(tables::kNotAnAlterTable);
    const TableSchema now =
        met.change.now ? *met.change.now : TableSchema{table.schema->database, table.schema->table, {}, {}};
    const auto& accepted_ones = options_.accepted_schema_changes;
    const bool accepted = std::find(accepted_ones.begin(), accepted_ones.end(), met.txn) != accepted_ones.end();
    tables::EvolvedTables evolved;
    try {
      evolved =
          tables::evolve_tables(ddl, *table.schema, now, accepted, options_.types, table.state.get(), *table.changelog);
    } catch (const tables::SchemaChangeRefused& error) {
      throw refuse(error.what());
    }
    if (accepted)
      spdlog::warn("sink: table {}: applying schema change at {} as accepted by the operator", table.topic, where);
    if (evolved.changed) {
      table.schema = evolved.source;
      table.mapping.reset();
    }
    spdlog::info("sink: table {}: schema change at {} applied{}", table.changelog_id->to_string(), where,
                 evolved.filled_rows == 0
                     ? ""
                     : fmt::format("; {} existing rows given the added columns' values", evolved.filled_rows));
  }
  // Without tables yet there is nothing to evolve: the first change makes them with its schema.
  for (const auto& [partition, offset] : met.offsets) {
    Progress& progress = table.progress[partition];
    progress.next_offset = offset + 1;
    progress.last_txn = met.txn;
    progress.last_txn_position = met.position;
  }
  const Coordinates at{met.position, 0, 0};
  if (!table.newest || compare(at, *table.newest) > 0) {
    table.newest = at;
    table.newest_gtid = met.gtid;
  }
  if (table.changelog) {
    table.dirty = true;
    failpoint::hit("sink.before_schema_commit");
    commit(&table, fmt::format("sink:{}:schema:{}", options_.group_id, met.txn));
  }
  ++owner_.stats_.schema_changes;
  schema_changes_.add();
  for (ReadRecord& held : met.held) handle(held, /*replayed=*/true);
}

void KafkaSink::Session::replay(Table& table, const ReadRecord& read, ChangeEvent event, const RecordOrigin& origin) {
  const kafka::ConsumedRecord& record = read.record;
  map_schema(table, event.schema, record);
  if (const auto problem = key_problem(read, event)) return quarantine(record, *problem);
  const ReplayVerdict verdict = judge_replay(record, event, origin);
  const char* what = verdict == ReplayVerdict::kApply        ? "applied"
                     : verdict == ReplayVerdict::kSuperseded ? "superseded"
                                                             : "duplicate";
  replays_.counter({what}).add();
  spdlog::info("sink: {} [{}] offset {} replays {} (event {}): {}", record.topic, record.partition, record.offset,
               origin.to_string(), event.event_id, what);
  switch (verdict) {
    case ReplayVerdict::kDuplicate:
      ++owner_.stats_.replays_duplicate;
      return;
    case ReplayVerdict::kSuperseded:  // the key holds a newer change: history only
      ++owner_.stats_.replays_superseded;
      table.changelog->append(table.mapping->changelog_row(event));
      table.dirty = true;
      ++pending_changes_;
      return;
    case ReplayVerdict::kApply:
      ++owner_.stats_.replays_applied;
      apply(table, std::move(event), "");
      return;
  }
}

// The records of the replay's partition between the dead letter's origin and the replay decide:
// one replaying the same origin makes this one a duplicate; a change of the same key newer in the
// source makes it superseded (the key's state must not move back). A key's changes all live in
// its partition, so nothing outside that range can be newer. Undecodable records were never
// applied and do not count (their own replays are judged the same way, later).
KafkaSink::Session::ReplayVerdict KafkaSink::Session::judge_replay(const kafka::ConsumedRecord& record,
                                                                   const ChangeEvent& event,
                                                                   const RecordOrigin& origin) {
  const RowImage key = primary_key_of(event);
  const Coordinates at = coordinates_of(event, "");
  const bool same_partition = origin.topic == record.topic && origin.partition == record.partition;
  const std::int64_t from = same_partition ? origin.offset + 1 : 0;
  const auto between =
      kafka::read_range(kafka::ConsumerOptions{options_.kafka, options_.group_id + ".replay", true},
                        {record.topic, record.partition, from}, record.offset, std::chrono::minutes(5));
  bool superseded = false;
  // The newest change the partition showed since the origin: a clean copy of the replayed change
  // (an at-least-once source producing it again) was applied only if nothing as new came first.
  std::optional<Coordinates> newest;
  for (const kafka::ConsumedRecord& other : between) {
    const auto headers = header_map(other);
    if (const auto of = headers.find(kReplayOfHeader); of != headers.end()) {
      if (of->second == origin.to_string()) return ReplayVerdict::kDuplicate;
      continue;  // another dead letter's replay: older than the partition's changes around it
    }
    if (!other.value) continue;
    std::optional<ChangeEvent> change;
    try {
      change = decoder_.change(*other.value);
    } catch (const registry::RegistryError& error) {
      if (error.http_status() != 404) throw;  // an outage: judge again later, never on partial knowledge
    } catch (const Error&) {
      // never applied: it does not hold the key
    }
    if (!change) continue;
    const Coordinates coordinates = coordinates_of(*change, key_change_of(headers));
    if (change->event_id == event.event_id && (!newest || compare(*newest, at) < 0)) {
      return ReplayVerdict::kDuplicate;  // its clean copy was applied
    }
    if (primary_key_of(*change) == key && compare(coordinates, at) > 0) superseded = true;
    if (!newest || compare(coordinates, *newest) > 0) newest = coordinates;
  }
  return superseded ? ReplayVerdict::kSuperseded : ReplayVerdict::kApply;
}

// Whether TABLE's tables, once what was read is committed, equal the source table at the position
// of the newest change they hold: every partition of its topic read to its end (nothing waits),
// and that position not claimed yet. A change older than it cannot be missing: the source
// produces in source order, and `binberg reconcile` still checks the binlog up to its own point.
bool KafkaSink::Session::claimable(const Table& table) const {
  if (!table.newest || table.rebuild) return false;
  for (std::int32_t partition = 0; partition < table.partitions; ++partition) {
    if (!at_end_.contains({table.topic, partition}) || waiting_partitions_.contains({table.topic, partition})) {
      return false;
    }
  }
  return true;
}

bool KafkaSink::Session::claim_missing(const Table& table) const {
  return table.changelog && claimable(table) && (!table.claimed || compare(*table.newest, *table.claimed) != 0);
}

bool KafkaSink::Session::claim_due() const {
  return std::any_of(tables_.begin(), tables_.end(), [&](const auto& entry) { return claim_missing(entry.second); });
}

void KafkaSink::Session::commit(Table* only, std::string commit_id) {
  const auto started = Clock::now();
  std::vector<iceberg::TableWriter*> writers;
  std::vector<iceberg::PreparedCommit> prepared;
  std::vector<std::pair<Table*, bool>> committed;  // and whether its snapshot claims a position
  if (diverted_) diverted_->flush(kFlushTimeout);  // dead letters are safe before the offsets move past them
  if (commit_id.empty()) commit_id = fmt::format("sink:{}:{}-{}", options_.group_id, unix_millis(), ++commit_sequence_);
  for (auto& [topic, table] : tables_) {
    if (!table.changelog || (only != nullptr && &table != only)) continue;  // no table yet to hold offsets
    const std::string progress = progress_json(table.progress);
    // Every snapshot committed while the table is caught up claims its position, a rewrite of
    // older keys (a replay) included; one that only claims is committed when none does yet.
    const bool claim = claimable(table);
    if (!table.dirty && progress == progress_json(table.committed) && !claim_missing(table)) continue;
    for (auto& [id, half] : table.key_change_halves) {  // a lone half (its partner not sunk here)
      table.changelog->append(table.mapping->changelog_row(half));
    }
    table.key_change_halves.clear();
    std::map<std::string, std::string> summary = {{tables::kSinkOffsetsProperty, progress},
                                                  {tables::kSinkGroupProperty, options_.group_id},
                                                  {tables::kSinkWriterProperty, owner_.writer_},
                                                  {tables::kSinkWriterEpochProperty, std::to_string(table.epoch)}};
    if (newest_) {
      summary[tables::kSinkNewestGtidProperty] = newest_gtid_;
      summary[tables::kSinkNewestCommitProperty] = std::to_string(newest_commit_ms_);
    }
    if (table.snapshot_rows != 0) summary[tables::kSnapshotRowsProperty] = std::to_string(table.snapshot_rows);
    if (table.newest) {
      summary[tables::kSinkTableNewestProperty] = table.newest->to_string();
      summary[tables::kSinkTableNewestGtidProperty] = table.newest_gtid;
    }
    if (claim) {
      const capture::SourcePosition position{table.newest->binlog, table.newest_gtid.empty()
                                                                       ? mysql::GtidPosition{}
                                                                       : mysql::GtidPosition::parse(table.newest_gtid)};
      summary.merge(position.to_summary());
    }
    if (table.state) {
      writers.push_back(table.state.get());
      prepared.push_back(table.state->prepare(commit_id, summary, unix_millis()));
    }
    writers.push_back(table.changelog.get());
    prepared.push_back(table.changelog->prepare(commit_id, summary, unix_millis()));
    committed.emplace_back(&table, claim);
  }
  if (only == nullptr) offsets_moved_ = false;
  if (writers.empty()) return;
  failpoint::hit("sink.before_commit");
  const auto prepared_at = Clock::now();
  iceberg::commit_tables(owner_.catalog_, writers, prepared);
  failpoint::hit("sink.after_commit");
  spdlog::debug("sink: committed {} changes to {} tables: files {} ms, catalog {} ms", pending_changes_,
                committed.size(), std::chrono::duration_cast<std::chrono::milliseconds>(prepared_at - started).count(),
                std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - prepared_at).count());
  for (const auto& [table, claimed] : committed) {
    table->committed = table->progress;
    table->dirty = false;
    table->pending_since_ms.clear();
    for (const ReadRecord& read : waiting_) {  // read, not yet applied: still pending
      if (read.record.topic == table->topic) {
        table->pending_since_ms.emplace(read.record.partition, read.record.timestamp_ms);
      }
    }
    table->claimed = claimed ? table->newest : std::nullopt;
    table->snapshot_rows = 0;
    owner_.epochs_[table->topic] = table->epoch;  // claimed, or held still
    owner_.to_claim_.erase(table->topic);
  }
  commit_group_offsets();
  ++owner_.stats_.commits;
  commits_.add();
  if (only == nullptr) pending_changes_ = 0;
}

// For monitoring only (kafka-consumer-groups shows the lag); a start reads the tables' offsets.
void KafkaSink::Session::commit_group_offsets() {
  std::vector<kafka::PartitionStart> offsets;
  for (const auto& [topic, table] : tables_) {
    for (const auto& [partition, progress] : table.committed) {
      offsets.push_back(kafka::PartitionStart{topic, partition, progress.next_offset});
    }
  }
  update_lag();
  if (offsets.empty()) return;
  try {
    consumer_->commit(offsets);
  } catch (const Error& error) {
    spdlog::warn("sink: {} (the tables hold the offsets; only monitoring misses them)", error.what());
  }
}

// Lag in seconds: 0 once the partition is read to its end and all of it committed; else the age of
// the first record read past the committed offset, or, while none is read yet, the age of the
// newest record the tables hold (an upper bound: the first one they lack came after it).
void KafkaSink::Session::update_lag() {
  const std::int64_t now = unix_millis();
  if (reader_) queued_.set(static_cast<double>(reader_->queued()));  // none yet while opening
  std::size_t held = 0;
  for (const auto& [topic, table] : tables_) held += table.schema_change ? table.schema_change->held.size() : 0;
  held_.set(static_cast<double>(held));
  for (const auto& [topic, table] : tables_) {
    for (const auto& [partition, committed] : table.committed) {
      const auto high = consumer_->high_watermark(topic, partition);
      if (!high) continue;
      const std::vector<std::string> labels = {topic, std::to_string(partition)};
      lag_.gauge(labels).set(static_cast<double>(*high - committed.next_offset));
      const auto read = table.progress.find(partition);
      const bool uncommitted = read != table.progress.end() && read->second.next_offset > committed.next_offset;
      const auto pending = table.pending_since_ms.find(partition);
      if (!uncommitted && !waiting_partitions_.contains({topic, partition}) && at_end_.contains({topic, partition})) {
        lag_seconds_.gauge(labels).set(0);
      } else if (pending != table.pending_since_ms.end()) {
        lag_seconds_.gauge(labels).set(static_cast<double>(now - pending->second) / 1000.0);
      } else if (committed.timestamp_ms > 0) {
        lag_seconds_.gauge(labels).set(static_cast<double>(now - committed.timestamp_ms) / 1000.0);
      }
    }
  }
}

void KafkaSink::Session::run(const std::function<bool()>& stop) {
  open();
  reader_.emplace(*consumer_, options_.registry, rereading_, options_.queue_records);
  auto last_commit = Clock::now();
  auto last_lag = Clock::now();
  auto draining_since = Clock::now();
  bool stop_requested = false, stopping = false;
  for (;;) {
    // stop() is asked every time round (scale-out serves the group's callbacks in it, draining too).
    stop_requested = stop() || stop_requested || finished();
    // A drain begins only once the records that waited through the last one are handled again:
    // during a drain they stay where they are, so an open transaction with a record among them
    // would never end. (They are handled one per round, without reading: this takes little time.)
    if (!stopping && stop_requested && waiting_.empty()) {
      stopping = true;
      start_draining();
      draining_since = Clock::now();
    }
    if (!waiting_.empty() && !draining_) {
      ReadRecord read = std::move(waiting_.front());
      waiting_.pop_front();
      if (waiting_.empty()) waiting_partitions_.clear();
      handle(read, /*replayed=*/true);
    } else if (std::optional<ReadItem> item = reader_->next(options_.poll_timeout)) {
      if (auto* end = std::get_if<kafka::PartitionEnd>(&*item)) {
        at_end_.emplace(end->topic, end->partition);
      } else {
        ReadRecord& read = std::get<ReadRecord>(*item);
        at_end_.erase({read.record.topic, read.record.partition});
        handle(read);
      }
    }
    if (Clock::now() - last_lag >= std::chrono::seconds(1)) {
      update_lag();
      last_lag = Clock::now();
    }
    const auto since = Clock::now() - last_commit;
    // Records that changed nothing (redelivered, diverted) are committed too, at the interval, so
    // the tables' offsets and the lag they show reach the partition's end.
    if (!draining_ && waiting_.empty() &&
        (pending_changes_ >= options_.commit.max_events ||
         (since >= options_.commit.interval && (pending_changes_ > 0 || offsets_moved_ || claim_due())))) {
      start_draining();
      draining_since = Clock::now();
    }
    if (draining_ && whole()) {
      commit();
      last_commit = Clock::now();
      draining_ = false;
      if (stopping) {
        owner_.stats_.rebuilt = finished();
        return;
      }
    } else if (draining_ && Clock::now() - draining_since >= std::chrono::seconds(30)) {
      spdlog::warn("sink: waiting {} s for {} transactions to arrive whole (first: {})",
                   std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - draining_since).count(),
                   open_.size(), open_.begin()->first);
      if (stopping) return;  // what is not whole is read again at the next start
      draining_since = Clock::now();
    }
  }
}

KafkaSink::KafkaSink(KafkaSinkOptions options, iceberg::Catalog& catalog)
    : options_(std::move(options)),
      catalog_(catalog),
      own_registry_(options_.metrics == nullptr ? std::make_unique<metrics::Registry>() : nullptr),
      registry_(options_.metrics != nullptr ? *options_.metrics : *own_registry_),
      writer_(fmt::format("{}/{}/{}/{}", options_.group_id, host_name(), ::getpid(), unix_millis())),
      stopped_tables_(
          registry_
              .gauge("binberg_sink_stopped_tables",
                     "Tables this sink stopped writing: at a refused schema change, or unmappable ([types])")
              .gauge()) {
  if (options_.topics.empty()) throw ConfigError("sink: no topics to read ([sink] topics)");
  if (options_.kafka.bootstrap_servers.empty()) throw ConfigError("sink: [kafka] bootstrap_servers is required");
  if (options_.registry.url.empty()) throw ConfigError("sink: [registry] url is required");
  std::sort(options_.topics.begin(), options_.topics.end());
  options_.topics.erase(std::unique(options_.topics.begin(), options_.topics.end()), options_.topics.end());
  if (options_.scale_out && (!options_.rebuild.empty() || options_.read_from)) {
    throw ConfigError("sink: --from and --rebuild read every table in one process: run them without scale-out");
  }
  if (!options_.scale_out) owned_ = to_claim_ = {options_.topics.begin(), options_.topics.end()};
}

kafka::GroupMembership KafkaSink::join_group() {
  // Slot i is the i-th of the sorted topics: every sink of the group must read the same topics.
  // The slots topic's partition count checks their number; its first record, the list the first
  // sink of the group wrote there, checks the topics themselves.
  const std::string slots_topic = options_.group_id + ".slots";
  const auto topics = static_cast<std::int32_t>(options_.topics.size());
  kafka::create_topic(options_.kafka, kafka::TopicSpec{slots_topic, topics, options_.replication_factor, {}});
  if (const std::int32_t slots = kafka::partition_count(options_.kafka, slots_topic); slots != topics) {
    throw ConfigError(
        fmt::format("sink: group {} shares {} topics ({} has {} partitions) but this sink reads {}: every "
                    "sink of a group must read the same topics",
                    options_.group_id, slots, slots_topic, slots, topics));
  }
  const std::string list = nlohmann::json(options_.topics).dump();  // sorted by the constructor
  const auto first_list = [&] {
    return kafka::read_range(kafka::ConsumerOptions{options_.kafka, options_.group_id + ".slots-check", true},
                             {slots_topic, 0, 0}, 1, std::chrono::seconds(30));
  };
  std::vector<kafka::ConsumedRecord> first = first_list();
  if (first.empty()) {  // the group's first sink; of two at once, the one written first counts
    auto producer = kafka::Producer::create(options_.kafka, kafka::ProducerMode::kIdempotent);
    producer.send(kafka::OutgoingRecord{slots_topic, 0, std::string("topics"), list, {}});
    producer.flush(kFlushTimeout);
    first = first_list();
  }
  if (first.empty() || first.front().value != list) {
    throw ConfigError(fmt::format(
        "sink: group {} shares the topics {} (the first record of {}) but this sink reads {}: every sink of a "
        "group must read the same topics",
        options_.group_id, first.empty() ? std::string("(unreadable)") : first.front().value.value_or(""), slots_topic,
        list));
  }
  auto membership = kafka::GroupMembership::join(kafka::GroupMembershipOptions{
      options_.kafka, options_.group_id + ".members", slots_topic, options_.member_timeout, options_.stall_timeout});
  spdlog::info("sink: {} joined group {} sharing {} topics", writer_, options_.group_id, topics);
  return membership;
}

bool KafkaSink::take_slots(kafka::GroupMembership& membership) {
  const auto now = Clock::now();
  const bool fence_ended = std::erase_if(fenced_until_, [&](const auto& fenced) {
                             if (fenced.second > now) return false;
                             to_claim_.insert(fenced.first);
                             return true;
                           }) > 0;
  if (!membership.poll()) return fence_ended;
  std::set<std::string> owned;
  for (const std::int32_t slot : membership.slots()) {
    if (slot >= 0 && static_cast<std::size_t>(slot) < options_.topics.size()) owned.insert(options_.topics[slot]);
  }
  if (owned == owned_) return fence_ended;
  for (const std::string& topic : owned) {
    if (!owned_.contains(topic)) to_claim_.insert(topic);  // given (back) to this sink: claim it anew
  }
  std::erase_if(to_claim_, [&](const std::string& topic) { return !owned.contains(topic); });
  std::erase_if(fenced_until_, [&](const auto& fenced) { return !owned.contains(fenced.first); });
  owned_ = std::move(owned);
  registry_.gauge("binberg_sink_owned_tables", "Topics whose tables this sink writes")
      .gauge()
      .set(static_cast<double>(owned_.size()));
  spdlog::info("sink: the group gives this sink {} of {} topics: {}", owned_.size(), options_.topics.size(),
               fmt::join(owned_, ", "));
  return true;
}

KafkaSink::~KafkaSink() = default;

void KafkaSink::run(const std::function<bool()>& stop) {
  auto& rollbacks =
      registry_.counter("binberg_sink_rollbacks_total", "Sessions started over from the committed tables").counter();
  std::uint32_t failures = 0;
  auto backoff = std::chrono::milliseconds(500);
  std::optional<kafka::GroupMembership> membership;
  // Scale-out: a session ends (committing what is whole) when the group moves topics to or from
  // this sink, and the next one writes the topics it holds then.
  const auto session_stop = [&] { return stop() || (membership && take_slots(*membership)); };
  for (;;) {
    const std::uint64_t commits_before = stats_.commits;
    try {
      if (options_.scale_out && !membership) membership.emplace(join_group());
      Session(*this).run(session_stop);
      if (!membership || stop()) return;
      continue;
    } catch (const ConfigError&) {
      throw;
    } catch (const TableStopped& stopped) {
      spdlog::error("sink: {}", stopped.what());
      stopped_.emplace(stopped.topic(), stopped.what());
      stats_.stopped_tables.push_back(stopped.topic());
      stopped_tables_.set(static_cast<double>(stopped_.size()));
    } catch (const AbandonedTransaction& error) {
      spdlog::warn("sink: {}", error.what());
    } catch (const iceberg::CommitConflict& conflict) {
      spdlog::warn("sink: {}; another writer committed to the table: reading again from the committed offsets",
                   conflict.what());
    } catch (const Error& error) {
      if (stats_.commits > commits_before) {
        failures = 0;
        backoff = std::chrono::milliseconds(500);
      }
      ++failures;
      if (options_.max_consecutive_failures != 0 && failures >= options_.max_consecutive_failures) throw;
      spdlog::warn("sink: {}; starting over from the committed offsets in {} ms", error.what(), backoff.count());
      for (auto waited = std::chrono::milliseconds(0); waited < backoff; waited += std::chrono::milliseconds(100)) {
        if (stop()) return;
        if (membership) take_slots(*membership);  // stays in the group; the next session writes what it holds
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      backoff = std::min(backoff * 2, std::chrono::milliseconds(30'000));
    }
    ++stats_.rollbacks;
    rollbacks.add();
  }
}

}  // namespace binberg::sink
