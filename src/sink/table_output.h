#pragma once

// The Iceberg side of one table a sink keeps (the I/O shell's part for the catalog): the two writers
// of table_pair.h, the mapping of the records' schema onto them, and the half of a primary-key
// update whose other half has not come yet. What the session decides about records it carries out
// here; what it records about them (offsets, coordinates, epochs) is in SessionState.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/change_event.h"
#include "core/error.h"
#include "iceberg/catalog.h"
#include "iceberg/table_writer.h"
#include "kafka/consumer.h"
#include "tables/schema_change.h"
#include "tables/table_mapping.h"
#include "tables/table_pair.h"

namespace binberg::sink {

struct KafkaSinkOptions;
struct SinkRebuildTopic;

// TOPIC's table stopped: a schema change the policy refused, or a table binberg cannot map onto
// Iceberg tables. The session rolls back (what the other tables read but did not commit is read
// again) and the next ones write the other tables only.
class TableStopped : public Error {
 public:
  TableStopped(std::string topic, const std::string& message) : Error(message), topic_(std::move(topic)) {}
  const std::string& topic() const { return topic_; }

 private:
  std::string topic_;
};

using tables::Acceptance;

// How a changelog row for the half of a primary-key update is written.
enum class KeyChange { kNone, kOldKey, kNewKey };
KeyChange key_change_from(const std::string& header);  // kKeyChangeHeader: "", "old", "new"

class TableOutput {
 public:
  TableOutput(iceberg::Catalog& catalog, const KafkaSinkOptions& options, std::string topic,
              const SinkRebuildTopic* rebuild);

  bool is_open() const { return changelog_ != nullptr; }
  // The changelog of existing tables (found before they are opened), or of the open ones.
  const std::optional<iceberg::TableIdentifier>& changelog_id() const { return changelog_id_; }
  void found(iceberg::TableIdentifier changelog_id) { changelog_id_ = std::move(changelog_id); }
  bool has_state() const { return state_ != nullptr; }

  // Opens the tables (making what is missing for SCHEMA). They must be where the session read its
  // offsets (OPENED_AT: the changelog's snapshot then, none: no snapshot or no table), or another
  // writer moved them since and this session would apply its records again: CommitConflict. A
  // table binberg cannot map onto Iceberg tables ([types]) stops alone: TableStopped.
  void open(const std::shared_ptr<const TableSchema>& schema, std::optional<std::int64_t> opened_at);
  // Opens the existing tables with the source definition they record (ConfigError when none).
  void open_recorded(std::optional<std::int64_t> opened_at);
  // Maps SCHEMA's rows onto the open tables; a schema that does not fit stops the sink (ConfigError
  // naming RECORD).
  void map(const std::shared_ptr<const TableSchema>& schema, const kafka::ConsumedRecord& record);

  void apply(ChangeEvent event, KeyChange key_change);
  // A replayed change whose key holds a newer one: history only.
  void append_history(const ChangeEvent& event);

  // Rebuild mode: opens the tables (as open()) and copies the rows of the original's seed commit
  // into them.
  void seed(const SinkRebuildTopic& plan, std::optional<std::int64_t> opened_at);

  // Applies a DDL statement the policy allows (or the operator accepted) to the tables, which hold
  // no pending changes. Throws tables::SchemaChangeRefused saying why not.
  tables::EvolvedTables evolve(const tables::PublishedSchemaChange& change, Acceptance acceptance);

  // Writes the files of what was applied and the next metadata of both tables with SUMMARY,
  // adding the writers to WRITERS and their commits to PREPARED (one catalog transaction).
  void prepare(const std::string& commit_id, const std::map<std::string, std::string>& summary, std::int64_t now_ms,
               std::vector<iceberg::TableWriter*>& writers, std::vector<iceberg::PreparedCommit>& prepared);

 private:
  iceberg::Catalog& catalog_;
  const KafkaSinkOptions& options_;
  const std::string topic_;
  const SinkRebuildTopic* rebuild_;
  std::optional<iceberg::TableIdentifier> changelog_id_;
  std::shared_ptr<const TableSchema> schema_;  // what the tables hold
  std::unique_ptr<iceberg::TableWriter> state_, changelog_;
  std::optional<tables::RowMapping> mapping_;
  std::map<std::string, ChangeEvent> key_change_halves_;  // by event id, until the other half comes
};

}  // namespace binberg::sink
