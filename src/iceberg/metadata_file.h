#pragma once

// Table metadata files on a local file system: the metastore-table naming convention of the spec
// ("Metastore Tables"), <location>/metadata/<V>-<random-uuid>.metadata.json with V zero-padded to
// five digits, each written once and durably.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "iceberg/detail/uuid.h"
#include "iceberg/table_metadata.h"

namespace binberg::iceberg {

// "00003-<uuid>.metadata.json".
std::string metadata_file_name(std::int32_t version, const Uuid& uuid);
// The version of a file named by metadata_file_name (a full path is fine); nullopt for other names.
std::optional<std::int32_t> metadata_file_version(std::string_view path);

// The local path of a table location or file location: a plain absolute path or a file:/ URI.
// Throws Error for other schemes, which need an object-store client.
std::filesystem::path local_path(std::string_view location);

// Writes METADATA as version VERSION under <location>/metadata/ (created if missing) as a new file,
// durably (detail/durable_file.h), and returns its location in the scheme of the table location,
// for the metadata-log or a catalog.
std::string write_metadata_file(const TableMetadata& metadata, std::int32_t version);

// Reads and validates a metadata file. Errors start with "iceberg metadata <location>: ".
TableMetadata read_metadata_file(std::string_view location);

}  // namespace binberg::iceberg
