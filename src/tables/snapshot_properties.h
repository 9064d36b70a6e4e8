#pragma once

// Every key binberg writes into Iceberg snapshot summaries and table properties, in one place: a
// reader of the tables (reconcile, the drills, an operator with pyiceberg) finds here what each
// key means and who writes it. The Iceberg layer writes two more into every snapshot it commits:
// iceberg::kWriterIdProperty ("binberg.writer-id") and iceberg::kCommitIdProperty
// ("binberg.commit-id", table_writer.h).

namespace binberg::tables {

// Where a table stands in the source's history (capture/source_position.h), in every snapshot
// path A commits and in path B's when the sink has read a table's topic to its end.
inline constexpr const char* kBinlogFileProperty = "binberg.source.binlog-file";
inline constexpr const char* kBinlogPosProperty = "binberg.source.binlog-pos";
inline constexpr const char* kGtidProperty = "binberg.source.gtid";

// Snapshot summary of the changelog commit that holds a table's initial copy: how many rows the
// copy had (reconcile's event audit expects exactly that many snapshot events).
inline constexpr const char* kSnapshotRowsProperty = "binberg.snapshot-rows";

// Table property: the source table definition binberg records in its Iceberg tables, so a restart knows what the tables
// were made from without asking the source, whose definition may have moved on.
inline constexpr const char* kSourceSchemaProperty = "binberg.source-schema";

// Path B's sink (sink/kafka_sink.h).
inline constexpr const char* kSinkTopicProperty = "binberg.sink.topic";      // table property
inline constexpr const char* kSinkOffsetsProperty = "binberg.sink.offsets";  // snapshot summary (JSON)
inline constexpr const char* kSinkGroupProperty = "binberg.sink.group";      // snapshot summary
// Snapshot summary: the sink process that committed it (group/host/pid/start time) and the epoch
// at which it holds the table (invariant 8).
inline constexpr const char* kSinkWriterProperty = "binberg.sink.writer";
inline constexpr const char* kSinkWriterEpochProperty = "binberg.sink.writer-epoch";
// Snapshot summary: the GTID and source commit time of the newest source transaction (by source
// position) applied so far, over all tables. Newest, not a position: with several partitions,
// older transactions of other partitions may still be on their way. Freshness is measured by it.
inline constexpr const char* kSinkNewestGtidProperty = "binberg.sink.newest-gtid";
inline constexpr const char* kSinkNewestCommitProperty = "binberg.sink.newest-source-commit-ms";
// Snapshot summary, per table: the coordinates and GTID of the newest change applied to it. When
// the sink has read every partition of the table's topic to its end, the snapshot also claims that
// position as its source position (source_position.h), which `binberg reconcile` checks.
inline constexpr const char* kSinkTableNewestProperty = "binberg.sink.table-newest";
inline constexpr const char* kSinkTableNewestGtidProperty = "binberg.sink.table-newest-gtid";
// Table property of rebuilt tables (`binberg sink --rebuild`): the changelog table they rebuild.
// Rebuilt tables and a sink's own tables never mix: each finds only its kind.
inline constexpr const char* kSinkRebuildOfProperty = "binberg.sink.rebuild-of";

}  // namespace binberg::tables
