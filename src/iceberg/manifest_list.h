#pragma once

// Iceberg v2 manifest lists (spec "Manifest Lists"): the Avro file a snapshot names, one
// manifest_file record per manifest of the snapshot.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "iceberg/manifest.h"

namespace binberg::iceberg {

// Writes MANIFESTS as the manifest list at LOCATION (path or file:/ URI; the file must not exist).
// Manifests whose sequence numbers are unassigned get SEQUENCE_NUMBER (both sequence_number and
// min_sequence_number, as the spec requires for new manifests); such a manifest must have been
// added by SNAPSHOT_ID. Header metadata: snapshot-id, parent-snapshot-id ("null" when none),
// sequence-number, format-version "2". The file appears complete under LOCATION or not at all.
void write_manifest_list(const std::string& location, std::int64_t snapshot_id,
                         std::optional<std::int64_t> parent_snapshot_id, std::int64_t sequence_number,
                         std::vector<ManifestFile> manifests);

// Reads a manifest list written by any v1 or v2 writer: absent v2 fields take the spec's defaults
// (content data, sequence numbers 0, counts 0). Errors start with "iceberg manifest list <location>: ".
std::vector<ManifestFile> read_manifest_list(const std::string& location);

}  // namespace binberg::iceberg
