#include "publish/kafka_source.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "core/assert.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/failpoint.h"
#include "kafka/admin.h"
#include "kafka/consumer.h"
#include "kafka/producer.h"
#include "mysql/charset.h"
#include "mysql/ddl_statement.h"
#include "mysql/snapshot_reader.h"
#include "mysql/source_checks.h"
#include "publish/change_producer.h"
#include "publish/source_metrics.h"
#include "tables/schema_change.h"

namespace binberg::publish {
namespace {

using Clock = std::chrono::steady_clock;

std::string offsets_topic_of(const KafkaSourceOptions& options) {
  return options.offsets_topic.empty() ? options.topic_prefix + ".binberg.offsets" : options.offsets_topic;
}

nlohmann::json existing_rows_json(const mysql::ExistingRowsValue& value) {
  return {{"kind", value.kind == mysql::ExistingRowsValue::Kind::kLiteral ? "literal" : "implicit"},
          {"text", value.text}};
}

mysql::ExistingRowsValue existing_rows_from_json(const nlohmann::json& json) {
  const std::string kind = json.at("kind").get<std::string>();
  if (kind != "literal" && kind != "implicit") fail("unknown kind '{}'", kind);
  return {kind == "literal" ? mysql::ExistingRowsValue::Kind::kLiteral : mysql::ExistingRowsValue::Kind::kImplicit,
          json.at("text").get<std::string>()};
}

std::string saved_record(const std::string& source_name, const SavedSource& saved) {
  nlohmann::json tables = nlohmann::json::object(), defaults = nlohmann::json::object(),
                 earlier_names = nlohmann::json::object();
  for (const auto& [name, position] : saved.positions) tables[name] = position.to_summary();
  for (const auto& [name, learned] : saved.columns) {
    for (const auto& [column, value] : learned.defaults) defaults[name][column] = existing_rows_json(value);
    for (const auto& [column, names] : learned.earlier_names) earlier_names[name][column] = names;
  }
  nlohmann::json record{{"source", source_name}, {"saved_at_ms", unix_millis()}, {"tables", tables}};
  if (saved.copy) record["initial_copy"] = saved.copy->to_json();
  if (!defaults.empty()) record["column_defaults"] = defaults;
  if (!earlier_names.empty()) record["column_earlier_names"] = earlier_names;
  return record.dump();
}

}  // namespace

std::string change_topic(const std::string& prefix, const capture::CapturedTable& table) {
  return fmt::format("{}.{}.{}", prefix, table.database, table.table);
}

SavedSource to_save(const std::vector<std::unique_ptr<PublishedTable>>& tables,
                    const std::optional<InitialCopy>& copy) {
  SavedSource saved;
  for (const auto& table : tables) {
    // Invariant 1: what a table holds in Kafka only grows; a save never moves a position back.
    BINBERG_ASSERT(!table->saved ||
                       (table->position && capture::compare_binlog(table->position->binlog, table->saved->binlog) >= 0),
                   "table {}: saving {} after {} was saved", table->source.qualified_name(),
                   table->position ? table->position->to_string() : "no position", table->saved->to_string());
    if (table->position) saved.positions.emplace(table->source.qualified_name(), *table->position);
    if (!table->learned.empty()) saved.columns[table->source.qualified_name()] = table->learned;
  }
  saved.copy = copy;
  return saved;
}

SavedSource read_saved_source(const kafka::ClientOptions& kafka, const std::string& offsets_topic,
                              const std::string& source_name) {
  kafka::ConsumerOptions consumer{kafka, "binberg-source-" + source_name + "-positions", true};
  const auto records = kafka::read_to_end(consumer, {{offsets_topic, 0, 0}}, std::chrono::seconds(60));
  SavedSource saved;
  for (const kafka::ConsumedRecord& record : records) {
    if (record.key != source_name) continue;
    saved = {};  // the last record of the source is the whole state; a tombstone resets it
    if (!record.value) continue;
    const std::string where = fmt::format("offsets topic {} [0] offset {}", offsets_topic, record.offset);
    try {
      const auto value = nlohmann::json::parse(*record.value);
      for (const auto& [name, summary] : value.at("tables").items()) {
        const auto position = capture::SourcePosition::from_summary(summary.get<std::map<std::string, std::string>>());
        if (!position) fail("table {} has no position", name);
        saved.positions.emplace(name, *position);
      }
      const nlohmann::json none = nlohmann::json::object();
      const auto& defaults = value.contains("column_defaults") ? value.at("column_defaults") : none;
      for (const auto& [name, columns] : defaults.items()) {
        for (const auto& [column, existing_rows] : columns.items()) {
          saved.columns[name].defaults[column] = existing_rows_from_json(existing_rows);
        }
      }
      if (value.contains("initial_copy")) saved.copy = InitialCopy::from_json(value.at("initial_copy"));
      const auto& earlier_names = value.contains("column_earlier_names") ? value.at("column_earlier_names") : none;
      for (const auto& [name, columns] : earlier_names.items()) {
        for (const auto& [column, names] : columns.items()) {
          saved.columns[name].earlier_names[column] = names.get<std::vector<std::string>>();
        }
      }
    } catch (const std::exception& error) {
      fail("{}: the saved positions of source {} are unreadable: {}", where, source_name, error.what());
    }
  }
  return saved;
}

// One run from reading the saved positions to a stop or a failure; a failure leaves the saved
// positions as they were, and the next session starts from them.
class KafkaSource::Session {
 public:
  explicit Session(KafkaSource& owner)
      : owner_(owner),
        options_(owner.options_),
        registry_(options_.registry),
        reader_metrics_(owner.registry_),
        metrics_(owner.registry_) {}

  void run(const std::function<bool()>& stop);

 private:
  void open();
  void snapshot(const std::vector<PublishedTable*>& tables);
  void stream(const std::function<bool()>& stop);
  // The smallest position a table holds, where streaming starts (each table skips what it has);
  // nullopt when every table stopped.
  std::optional<capture::SourcePosition> stream_start() const;
  // BATCH, read after READ_POSITION; with the last batch of its transaction, the transaction ends
  // and READ_POSITION moves after it.
  void produce_batch(const capture::TransactionBatch& batch, capture::SourcePosition& read_position);
  // TXN, a DDL statement: published to each captured table it names (ChangeProducer::produce_schema_change).
  void publish_schema_change(const SourceTransaction& txn, const std::string& txn_id);
  // Saves every table's position (and, with COPY, that this initial copy begins).
  void save(const std::optional<InitialCopy>& copy = std::nullopt);
  // At least once: keeps the initial copy the saved record says began, if it is whole in Kafka
  // (initial_copy.h): its tables take its position. False when there is none to keep.
  bool keep_earlier_copy();
  PublishedTable* find_table(const std::string& database, const std::string& table);

  KafkaSource& owner_;
  const KafkaSourceOptions& options_;
  registry::RegistryClient registry_;
  capture::SourceReaderMetrics reader_metrics_;
  SourceMetrics metrics_;
  std::optional<ChangeProducer> producer_;
  std::vector<std::unique_ptr<PublishedTable>> tables_;
  // The transaction whose batches are arriving (null between transactions): saves and stops wait for its end.
  std::shared_ptr<const SourceTransaction> in_flight_;
  bool positions_moved_ = false;             // a position advanced since the last save
  std::optional<InitialCopy> earlier_copy_;  // begun by an earlier process, not saved as done
};

PublishedTable* KafkaSource::Session::find_table(const std::string& database, const std::string& table) {
  for (auto& candidate : tables_) {
    if (candidate->source.database == database && candidate->source.table == table) return candidate.get();
  }
  return nullptr;
}

void KafkaSource::Session::open() {
  mysql::Connection connection = mysql::Connection::open(options_.source);
  mysql::require_cdc_ready(connection);
  const std::string offsets_topic = offsets_topic_of(options_);
  kafka::create_topic(options_.kafka,
                      kafka::TopicSpec{offsets_topic, 1, options_.replication_factor, {{"cleanup.policy", "compact"}}});
  // Fence first, then read (exactly-once): init_transactions fences an earlier process of this
  // source and aborts its open transaction. Read before it, the positions could be older than a
  // save that stalled process commits in between, and its records would be produced again.
  failpoint::hit("kafka_source.before_fence");
  producer_.emplace(options_, registry_, metrics_, owner_.stats_);
  failpoint::hit("kafka_source.before_read_positions");
  const SavedSource saved = read_saved_source(options_.kafka, offsets_topic, options_.source_name);
  earlier_copy_ = saved.copy;
  auto& records = owner_.registry_.counter("binberg_source_records_total", "Change records produced", {"table"});
  for (const capture::CapturedTable& captured : options_.tables) {
    auto table = std::make_unique<PublishedTable>();
    table->source = captured;
    table->topic = change_topic(options_.topic_prefix, captured);
    table->records = &records.counter({captured.qualified_name()});
    kafka::create_topic(options_.kafka,
                        kafka::TopicSpec{table->topic, options_.partitions, options_.replication_factor, {}});
    table->partitions = kafka::partition_count(options_.kafka, table->topic);
    if (auto learned = saved.columns.find(captured.qualified_name()); learned != saved.columns.end())
      table->learned = learned->second;
    if (auto it = saved.positions.find(captured.qualified_name()); it != saved.positions.end()) {
      table->saved = table->position = it->second;
      spdlog::info("source: table {} resumes after {}", captured.qualified_name(), it->second.to_string());
    }
    tables_.push_back(std::move(table));
  }
  std::vector<std::string> topics = {offsets_topic_of(options_)};
  for (const auto& table : tables_) topics.push_back(table->topic);
  producer_->learn_topics(topics);
}

void KafkaSource::Session::publish_schema_change(const SourceTransaction& txn, const std::string& txn_id) {
  const SchemaChange& change = *txn.schema_change;
  const std::string where = fmt::format("{}:{} (transaction {})", txn.file, txn.end_pos, txn_id);
  mysql::DdlStatement ddl;
  try {
    ddl = mysql::parse_ddl(change.statement, change.database);
  } catch (const Error& error) {
    fail("binlog {}: {}", where, error.what());
  }
  std::optional<mysql::Connection> connection;
  std::set<PublishedTable*> published;
  for (const mysql::DdlTable& named : ddl.tables) {
    PublishedTable* table = find_table(named.database, named.table);
    if (table == nullptr || !table->stopped.empty() || table->position->contains(txn) ||
        !published.insert(table).second)
      continue;
    tables::PublishedSchemaChange published_change{change.database, change.statement, nullptr};
    if (ddl.kind == mysql::DdlStatement::Kind::kAlterTable) {
      if (!connection) connection.emplace(mysql::Connection::open(options_.source));
      published_change.now = mysql::find_table_schema(*connection, table->source.database, table->source.table);
      table->learned.learn(ddl, table->registered.get());
    }
    producer_->produce_schema_change(*table, txn, txn_id, published_change.to_json());
    metrics_.schema_changes.add();
    spdlog::info("source: table {}: schema change at {} published: {}", table->source.qualified_name(), where,
                 change.statement.substr(0, 300));
  }
}

// Saves every table's position. Exactly-once: in the Kafka transaction of the records before it.
// At-least-once: after every record before it is acknowledged.
void KafkaSource::Session::save(const std::optional<InitialCopy>& copy) {
  const SavedSource saved = to_save(tables_, copy);
  const kafka::OutgoingRecord record{
      offsets_topic_of(options_), 0, options_.source_name, saved_record(options_.source_name, saved), {}};
  failpoint::hit("kafka_source.before_save");
  const auto started = Clock::now();
  const std::size_t records = producer_->save(record);
  failpoint::hit("kafka_source.after_save");
  const std::chrono::duration<double> took = Clock::now() - started;
  metrics_.save_duration.observe(took.count());
  spdlog::debug("source: saved {} records in {:.1f} ms", records, took.count() * 1000);
  for (auto& table : tables_) table->saved = table->position;
  ++owner_.stats_.commits;
  metrics_.commits.add();
  positions_moved_ = false;
  metrics_.pending.set(0);
}

// One consistent snapshot of the tables with no saved position, saved with its position.
void KafkaSource::Session::snapshot(const std::vector<PublishedTable*>& tables) {
  std::vector<mysql::TableName> names;
  for (PublishedTable* table : tables) names.push_back(mysql::TableName{table->source.database, table->source.table});
  auto source = mysql::TableSnapshot::open(options_.source, names, options_.snapshot_chunk_rows);
  const capture::SourcePosition position{source.position().binlog, source.position().gtid};
  spdlog::info("source: snapshot of {} tables at {}", tables.size(), position.to_string());
  const std::string snapshot_id = "snapshot:" + position.binlog.to_string();
  if (options_.delivery == Delivery::kAtLeastOnce) {
    // Where the copy begins, saved before it: a crash after the copy is acknowledged but before
    // its position is saved keeps the copy instead of taking another (keep_earlier_copy).
    InitialCopy copy{snapshot_id, position, {}, {}};
    std::map<std::string, std::int32_t> topics;
    for (PublishedTable* table : tables) {
      copy.tables.push_back(table->source.qualified_name());
      topics[table->topic] = table->partitions;
    }
    copy.start_offsets = partition_ends(options_.kafka, topics);
    save(copy);
  }
  auto last_progress = Clock::now();
  for (;;) {
    const std::vector<ChangeEvent> chunk = source.next_chunk();
    if (chunk.empty()) break;
    PublishedTable& table = *find_table(chunk.front().source.database, chunk.front().source.table);
    for (const ChangeEvent& event : chunk) producer_->produce(table, event, snapshot_id);
    owner_.stats_.snapshot_rows += chunk.size();
    if (Clock::now() - last_progress >= std::chrono::seconds(5)) {
      spdlog::info("source: snapshot: {} rows read, now {}", source.rows_read(), table.source.qualified_name());
      last_progress = Clock::now();
    }
  }
  producer_->end_transaction();  // the snapshot is one transaction
  for (PublishedTable* table : tables) {
    if (table->stopped.empty()) table->position = position;
  }
  save();
  spdlog::info("source: snapshot saved: {} rows", source.rows_read());
}

std::optional<capture::SourcePosition> KafkaSource::Session::stream_start() const {
  std::optional<capture::SourcePosition> start;
  for (const auto& table : tables_) {
    if (table->position && (!start || capture::compare_binlog(table->position->binlog, start->binlog) < 0)) {
      start = table->position;
    }
  }
  return start;
}

void KafkaSource::Session::stream(const std::function<bool()>& stop) {
  const std::optional<capture::SourcePosition> start = stream_start();
  if (!start) return;  // every table stopped in its snapshot
  mysql::Connection connection = mysql::Connection::open(options_.source);
  mysql::require_position_available(connection, start->binlog);
  mysql::StreamOptions stream;
  stream.connection = options_.source;
  stream.server_id = options_.server_id;
  stream.start_position = start->binlog;
  stream.blocking = true;
  stream.heartbeat = options_.heartbeat;
  capture::SourceReader source(stream, mysql::CharsetNames::load(connection), options_.reader, reader_metrics_);
  spdlog::info("source: streaming {} tables from {} ({})", tables_.size(), start->to_string(),
               options_.delivery == Delivery::kExactlyOnce ? "exactly-once" : "at-least-once");

  capture::SourcePosition read_position = *start;
  auto last_save = Clock::now();
  for (;;) {
    if (!in_flight_ && stop()) break;  // stops fall between transactions only
    std::optional<capture::TransactionBatch> batch = source.next(options_.heartbeat);
    if (batch && batch->txn) produce_batch(*batch, read_position);
    const auto since = Clock::now() - last_save;
    const std::size_t pending = producer_->pending_records();
    const bool due = pending >= options_.commit.max_events || (pending > 0 && since >= options_.commit.interval) ||
                     (positions_moved_ && since >= options_.commit.idle_position_interval);
    if (!in_flight_ && due) {
      save();
      last_save = Clock::now();
    }
  }
  if (producer_->pending_records() > 0 || positions_moved_) save();  // a graceful stop saves what it produced
  spdlog::info("source: stopped at {}", read_position.to_string());
}

void KafkaSource::Session::produce_batch(const capture::TransactionBatch& batch,
                                         capture::SourcePosition& read_position) {
  const SourceTransaction& txn = *batch.txn;
  if (in_flight_ != batch.txn) {
    if (in_flight_) fail("source reader: transaction {} began before {} ended", txn.gtid, in_flight_->gtid);
    ++owner_.stats_.transactions;
    metrics_.transactions.add();
    metrics_.lag.set(std::max<double>(0, static_cast<double>(unix_millis() - txn.commit_ts_ms) / 1000));
  }
  in_flight_ = batch.txn;
  for (const ChangeEvent& event : batch.events) {
    PublishedTable* table = find_table(event.source.database, event.source.table);
    if (table == nullptr || !table->stopped.empty() || table->position->contains(txn)) continue;
    producer_->produce(*table, event, txn.id());
  }
  metrics_.pending.set(static_cast<double>(producer_->pending_records()));
  if (!batch.last) return;
  if (txn.schema_change) publish_schema_change(txn, txn.id());  // DDL carries no rows
  producer_->end_transaction();
  capture::SourcePosition after = capture::position_after(read_position, batch);
  for (auto& table : tables_) {
    if (!table->stopped.empty() || table->position->contains(txn)) continue;
    table->position = after;
    positions_moved_ = true;
  }
  read_position = std::move(after);
  in_flight_.reset();
}

bool KafkaSource::Session::keep_earlier_copy() {
  if (options_.delivery != Delivery::kAtLeastOnce || !earlier_copy_) return false;
  const InitialCopy& copy = *earlier_copy_;
  std::vector<PublishedTable*> copied;
  std::map<std::string, std::int32_t> topics;
  for (const std::string& name : copy.tables) {
    const auto dot = name.find('.');
    PublishedTable* table = find_table(name.substr(0, dot), name.substr(dot + 1));
    if (table == nullptr || table->position) return false;  // the capture set changed since: copy again
    copied.push_back(table);
    topics[table->topic] = table->partitions;
  }
  const CopyInKafka found = find_copy(options_.kafka, copy, topics);
  if (!found.not_whole.empty()) {
    spdlog::warn(
        "source: the initial copy {} an earlier process began is not whole in Kafka ({}); taking a new "
        "copy, and sinks drop the unfinished one whole",
        copy.transaction_id, found.not_whole);
    return false;
  }
  std::size_t kept = 0;
  for (PublishedTable* table : copied) {
    // A table with no record in the copy was empty, or stopped by the registry in it: copied again.
    if (!found.records.contains(table->topic)) continue;
    table->position = copy.position;
    ++kept;
  }
  save();
  spdlog::info("source: the initial copy {} is whole in Kafka; {} of its {} tables keep it, at {}", copy.transaction_id,
               kept, copied.size(), copy.position.to_string());
  return kept != 0;
}

void KafkaSource::Session::run(const std::function<bool()>& stop) {
  open();
  keep_earlier_copy();
  std::vector<PublishedTable*> new_tables;
  for (auto& table : tables_) {
    if (!table->position) new_tables.push_back(table.get());
  }
  if (!new_tables.empty()) snapshot(new_tables);
  if (stop()) return;
  stream(stop);
}

KafkaSource::KafkaSource(KafkaSourceOptions options)
    : options_(std::move(options)),
      own_registry_(options_.metrics == nullptr ? std::make_unique<metrics::Registry>() : nullptr),
      registry_(options_.metrics != nullptr ? *options_.metrics : *own_registry_) {
  if (options_.tables.empty()) throw ConfigError("source: no tables to capture");
  if (options_.server_id == 0) throw ConfigError("source: server_id must be set (a replica id unique on the source)");
  if (options_.kafka.bootstrap_servers.empty()) throw ConfigError("source: [kafka] bootstrap_servers is required");
  if (options_.registry.url.empty()) throw ConfigError("source: [registry] url is required");
  if (options_.source_name.empty()) throw ConfigError("source: the source name must not be empty");
}

KafkaSource::~KafkaSource() = default;

void KafkaSource::run(const std::function<bool()>& stop) {
  auto& restarts =
      registry_.counter("binberg_source_restarts_total", "Sessions that failed and started over").counter();
  std::uint32_t failures = 0;
  Backoff backoff(options_.first_retry_backoff, options_.max_retry_backoff);
  std::chrono::milliseconds wait{0};
  for (;;) {
    const std::uint64_t commits_before = stats_.commits;
    stats_.stopped_tables.clear();
    try {
      Session(*this).run(stop);
      return;
    } catch (const ConfigError&) {
      throw;
    } catch (const kafka::ProducerFenced& fenced) {
      // Another process of this source took over; starting over would fence it in turn.
      throw Error(
          fmt::format("source {}: {}. This process stops; the other goes on", options_.source_name, fenced.what()));
    } catch (const Error& error) {
      if (stats_.commits > commits_before) {  // the session got somewhere: start the count again
        failures = 0;
        backoff.reset();
      }
      ++failures;
      ++stats_.restarts;
      restarts.add();
      if (options_.max_consecutive_failures != 0 && failures >= options_.max_consecutive_failures) throw;
      wait = backoff.next();
      spdlog::warn("source: {}; starting over from the saved positions in {} ms", error.what(), wait.count());
    }
    for (auto waited = std::chrono::milliseconds(0); waited < wait; waited += std::chrono::milliseconds(100)) {
      if (stop()) return;  // nothing to save: the failed session's records were not committed
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

}  // namespace binberg::publish
