#pragma once

// Finding a keyed table's rows by reading the key columns of its data files: all of them for the
// primary-key index a writer opens with, or only those of the keys a batch changed once the index
// outgrew its bound (key-scan mode, table_writer.h).

#include <cstdint>
#include <string>
#include <unordered_map>

#include "iceberg/arrow_rows.h"
#include "iceberg/catalog.h"
#include "iceberg/detail/primary_key_index.h"
#include "iceberg/table_scan.h"

namespace binberg::iceberg {

// The index of every live row of TABLE's current snapshot, keyed by KEY_SCHEMA's columns. Stops
// early, returning part of it, once it holds more than MAX_BYTES (checked every 65,536 keys).
// Throws Error when the table has equality delete files or holds a key twice.
PrimaryKeyIndex index_primary_keys(const LoadedTable& table, const Schema& key_schema, std::size_t max_bytes);

// The live data files of METADATA's current snapshot that may hold a row of KEYS (encoded key ->
// its values, KEY_SCHEMA's columns), with all its delete files. With one integer key column, files
// whose key bounds hold none of KEYS are left out; otherwise every data file may.
ScanPlan plan_key_scan(const TableMetadata& metadata, const Schema& key_schema,
                       const std::unordered_map<std::string, Row>& keys);

// Reads the key column of PLAN's data files and records where each row of KEYS is: its file in
// INDEX, its location in FOUND (a key FOUND holds already keeps its location).
void locate_keys(const ScanPlan& plan, const Schema& key_schema, const std::unordered_map<std::string, Row>& keys,
                 PrimaryKeyIndex& index, std::unordered_map<std::string, PrimaryKeyIndex::Location>& found);

}  // namespace binberg::iceberg
