#pragma once

// The Kafka form of a change event (path B). Key: the primary key as an Avro record ("Key").
// Value: a Debezium-compatible change envelope ("Envelope": before, after, source, op, ts_ms) whose
// row images are the record "Value", one field per source column (column_codec.h). Consumers
// that know Debezium's MySQL envelope read it as they are; binberg's sink also rebuilds the
// source table's exact shape from the schema itself — the envelope's "binberg.table" property
// (database, table, primary key) and each column field's "binberg.column" description — so the
// registry's schema id is all a record needs.
//
// source.pos is the binlog position right after the transaction's commit (where a reader resumes),
// not the row event's own position as in Debezium; source.row is the row's index in its
// transaction, so (gtid or file:pos, row) names a row event exactly and gives its event id.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "avro/schema.h"
#include "avro/value.h"
#include "core/change_event.h"
#include "core/table_schema.h"

namespace binberg::envelope {

// Kafka headers of every change record.
inline constexpr std::string_view kEventIdHeader = "binberg.event_id";
inline constexpr std::string_view kPositionHeader = "binberg.position";  // "<gtid> <file>:<pos>"
// An update that changes the primary key travels as two records, as Debezium sends it: a delete
// of the old key (header value "old") in the old key's partition and a create of the new key
// ("new") in the new key's, so each key's changes stay in order in its own partition. Both carry
// the update's event id; a consumer that wants the update joins them (same transaction, same row).
inline constexpr std::string_view kKeyChangeHeader = "binberg.key_change";
// A DDL statement on the table: a record without key and value in every partition of the topic,
// in the statement's own transaction; the header holds what the statement means as JSON
// (tables::PublishedSchemaChange). Consumers that know nothing of it see tombstone-like records.
inline constexpr std::string_view kSchemaChangeHeader = "binberg.schema_change";

struct EnvelopeSchemas {
  std::optional<avro::Schema> key;  // none for a table without a primary key
  avro::Schema value;
};

// What the records written before a table took its present shape say of its columns, by column
// name: what a reader of the present schema needs to read them as the source table has those rows
// now (and what a registry's BACKWARD check asks for).
struct ColumnHistory {
  // NOT NULL columns added since: the value the rows written before hold in them (Avro default).
  std::map<std::string, Value> defaults;
  // Renamed columns: their earlier names, newest first (Avro aliases).
  std::map<std::string, std::vector<std::string>> earlier_names;
};

// The schemas of TOPIC's records for TABLE; names live in the namespace TOPIC gives (each
// dot-separated part made a valid Avro name). Throws ConfigError when two column names become the
// same Avro name. HISTORY gives the fields defaults and aliases (key fields aliases only).
EnvelopeSchemas envelope_schemas(const TableSchema& table, std::string_view topic, const ColumnHistory& history = {});

// The source table an envelope schema describes; throws Error naming what is missing or wrong.
TableSchema table_schema_of(const avro::Schema& value_schema);

// KEY holds the primary-key values in key order.
avro::Value key_datum(const TableSchema& table, const RowImage& key);
RowImage key_from_datum(const TableSchema& table, const avro::Value& key);

// CONNECTOR_NAME goes to source.name (Debezium's topic prefix); TS_MS is when the record was made.
avro::Value envelope_datum(const ChangeEvent& event, std::string_view connector_name, std::int64_t ts_ms);
// The change event of an envelope of TABLE's schema. Throws Error when the envelope breaks
// Debezium's rules (unknown op, a missing or unexpected before/after image).
ChangeEvent change_event_from_datum(const avro::Value& envelope, std::shared_ptr<const TableSchema> table);

}  // namespace binberg::envelope
