#include "sink/table_output.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/assert.h"
#include "core/failpoint.h"
#include "iceberg/table_scan.h"
#include "mysql/ddl_statement.h"
#include "sink/kafka_sink.h"
#include "tables/table_pair.h"

namespace binberg::sink {

KeyChange key_change_from(const std::string& header) {
  if (header == "old") return KeyChange::kOldKey;
  if (header == "new") return KeyChange::kNewKey;
  return KeyChange::kNone;
}

TableOutput::TableOutput(iceberg::Catalog& catalog, const KafkaSinkOptions& options, std::string topic,
                         const SinkRebuildTopic* rebuild)
    : catalog_(catalog), options_(options), topic_(std::move(topic)), rebuild_(rebuild) {}

void TableOutput::open(const std::shared_ptr<const TableSchema>& schema, std::optional<std::int64_t> opened_at) {
  BINBERG_ASSERT(!is_open(), "the tables of topic {} are opened twice", topic_);
  const std::string ns = options_.iceberg_namespace.empty() ? schema->database : options_.iceberg_namespace;
  std::map<std::string, std::string> properties = {{tables::kSinkTopicProperty, topic_}};
  if (rebuild_ != nullptr) properties[tables::kSinkRebuildOfProperty] = rebuild_->original_changelog.to_string();
  tables::TablePair pair;
  try {
    pair = tables::open_table_pair(catalog_, ns, schema->table, options_.changelog_suffix, schema, options_.types,
                                   properties);
  } catch (const tables::UnmappableTable& error) {
    throw TableStopped(
        topic_,
        fmt::format("topic {}: the table is not written: {}. binberg sink creates none of its Iceberg tables and goes "
                    "on with the other tables; once the table can be mapped, a restart applies the topic from its "
                    "first record, so nothing is lost while Kafka keeps it",
                    topic_, error.what()));
  }
  const iceberg::Snapshot* now = pair.changelog->metadata.current_snapshot();
  if ((now ? std::optional(now->snapshot_id) : std::nullopt) != opened_at) {
    throw iceberg::CommitConflict(
        fmt::format("table {} moved on since this session read its offsets", pair.changelog_id.to_string()));
  }
  schema_ = pair.schema;
  changelog_id_ = pair.changelog_id;
  if (pair.state) {
    state_ =
        std::make_unique<iceberg::TableWriter>(std::move(*pair.state), iceberg::WriteMode::kUpsert, options_.writer);
  }
  changelog_ =
      std::make_unique<iceberg::TableWriter>(std::move(*pair.changelog), iceberg::WriteMode::kAppend, options_.writer);
}

void TableOutput::open_recorded(std::optional<std::int64_t> opened_at) {
  BINBERG_ASSERT(changelog_id_.has_value(), "topic {}: no tables to open", topic_);
  const auto recorded = tables::recorded_source_schema(catalog_.load_table(*changelog_id_));
  if (!recorded) {
    throw ConfigError(fmt::format("table {} records no source definition ({}): binberg sink cannot evolve it",
                                  changelog_id_->to_string(), tables::kSourceSchemaProperty));
  }
  open(recorded, opened_at);
}

void TableOutput::map(const std::shared_ptr<const TableSchema>& schema, const kafka::ConsumedRecord& record) {
  BINBERG_ASSERT(is_open(), "{} [{}] offset {}: mapped before its tables are open", record.topic, record.partition,
                 record.offset);
  if (mapping_ && &mapping_->source() == schema.get()) return;
  mapping_.reset();
  try {
    mapping_.emplace(schema, state_ ? &state_->table().metadata.current_schema() : nullptr,
                     &changelog_->table().metadata.current_schema());
  } catch (const Error& error) {
    throw ConfigError(fmt::format(
        "topic {} [{}] offset {}: the record's schema does not fit the Iceberg tables {} ({}): the source table "
        "changed without a schema change record before it (binberg source publishes one for every DDL statement it "
        "reads). binberg sink stops here, so nothing is lost",
        record.topic, record.partition, record.offset, changelog_id_->to_string(), error.what()));
  }
}

void TableOutput::apply(ChangeEvent event, KeyChange key_change) {
  BINBERG_ASSERT(mapping_.has_value(), "topic {}: event {} applied before its schema was mapped", topic_,
                 event.event_id);
  // `corrupt`: the change is lost, a defect on purpose (in a rebuild alone: the rebuild's own name).
  if (failpoint::hit(rebuild_ != nullptr ? "sink.rebuild.apply_event" : "sink.apply_event")) return;
  const tables::RowMapping& mapping = *mapping_;
  if (key_change == KeyChange::kNone) return tables::apply_change(mapping, event, state_.get(), *changelog_);
  // The halves of a primary-key update: the state moves at once, the changelog gets the one update
  // row path A writes once both halves are here.
  if (key_change == KeyChange::kOldKey && state_) state_->remove(mapping.state_row(*event.before));
  if (key_change == KeyChange::kNewKey && state_) state_->upsert(mapping.state_row(*event.after));
  auto half = key_change_halves_.find(event.event_id);
  if (half == key_change_halves_.end()) {
    key_change_halves_.emplace(event.event_id, std::move(event));
    return;
  }
  ChangeEvent update = std::move(half->second);
  key_change_halves_.erase(half);
  if (key_change == KeyChange::kOldKey) {
    update.before = std::move(event.before);
  } else {
    update.after = std::move(event.after);
  }
  update.op = Op::kUpdate;
  changelog_->append(mapping.changelog_row(update));
}

void TableOutput::append_history(const ChangeEvent& event) { changelog_->append(mapping_->changelog_row(event)); }

void TableOutput::seed(const SinkRebuildTopic& plan, std::optional<std::int64_t> opened_at) {
  const iceberg::LoadedTable original = catalog_.load_table(plan.original_changelog);
  const auto schema = tables::recorded_source_schema(original);
  if (!schema) {
    fail("table {} records no source definition ({}); binberg cannot rebuild it", plan.original_changelog.to_string(),
         tables::kSourceSchemaProperty);
  }
  open(schema, opened_at);
  const auto copy = [&](const iceberg::TableIdentifier& from, std::int64_t snapshot, iceberg::TableWriter& to) {
    const iceberg::LoadedTable source = from == plan.original_changelog ? original : catalog_.load_table(from);
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
    spdlog::info("sink: rebuild of {} starts from snapshot {} of {} ({} rows)", topic_, snapshot, from.to_string(),
                 rows);
  };
  copy(plan.original_changelog, *plan.seed_changelog_snapshot, *changelog_);
  if (state_) {
    if (!plan.original_state || !plan.seed_state_snapshot) {
      fail("table {} has no current-state table to rebuild from", plan.original_changelog.to_string());
    }
    copy(*plan.original_state, *plan.seed_state_snapshot, *state_);
  }
}

tables::EvolvedTables TableOutput::evolve(const tables::PublishedSchemaChange& change, Acceptance acceptance) {
  BINBERG_ASSERT(is_open() && changelog_->pending_changes() == 0 && (!state_ || state_->pending_changes() == 0),
                 "topic {}: a schema change meets tables with changes not committed", topic_);
  const mysql::DdlStatement ddl = mysql::parse_ddl(change.statement, change.database);
  if (ddl.kind != mysql::DdlStatement::Kind::kAlterTable) throw tables::SchemaChangeRefused(tables::kNotAnAlterTable);
  const TableSchema now = change.now ? *change.now : TableSchema{schema_->database, schema_->table, {}, {}};
  tables::EvolvedTables evolved =
      tables::evolve_tables(ddl, *schema_, now, acceptance, options_.types, state_.get(), *changelog_);
  if (evolved.changed) {
    schema_ = evolved.source;
    mapping_.reset();
  }
  return evolved;
}

void TableOutput::prepare(const std::string& commit_id, const std::map<std::string, std::string>& summary,
                          std::int64_t now_ms, std::vector<iceberg::TableWriter*>& writers,
                          std::vector<iceberg::PreparedCommit>& prepared) {
  BINBERG_ASSERT(is_open(), "topic {}: a commit prepared without tables", topic_);
  for (auto& [id, half] : key_change_halves_) {  // a lone half (its partner not sunk here)
    changelog_->append(mapping_->changelog_row(half));
  }
  key_change_halves_.clear();
  // A table and its changelog commit together, in the same catalog transaction.
  const std::size_t before = writers.size();
  if (state_) {
    writers.push_back(state_.get());
    prepared.push_back(state_->prepare(commit_id, summary, now_ms));
  }
  writers.push_back(changelog_.get());
  prepared.push_back(changelog_->prepare(commit_id, summary, now_ms));
  BINBERG_ASSERT(writers.size() == before + (state_ ? 2 : 1) && writers.size() == prepared.size(),
                 "topic {}: its tables are not prepared together", topic_);
}

}  // namespace binberg::sink
