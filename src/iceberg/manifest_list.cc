#include "iceberg/manifest_list.h"

#include <fmt/format.h>

#include <sstream>

#include "avro/container.h"
#include "core/error.h"
#include "core/failpoint.h"
#include "iceberg/detail/durable_file.h"
#include "iceberg/metadata_file.h"

namespace binberg::iceberg {
namespace {

using manifest_detail::Datum;
using manifest_detail::list_of;
using manifest_detail::optional_field;
using manifest_detail::RecordView;
using manifest_detail::required_field;

// manifest_file field ids (spec "Manifest Lists").
constexpr std::int32_t kManifestPathId = 500, kManifestLengthId = 501, kPartitionSpecId = 502, kContentId = 517,
                       kSequenceNumberId = 515, kMinSequenceNumberId = 516, kAddedSnapshotId = 503, kAddedFilesId = 504,
                       kExistingFilesId = 505, kDeletedFilesId = 506, kAddedRowsId = 512, kExistingRowsId = 513,
                       kDeletedRowsId = 514, kPartitionsId = 507, kSummaryElementId = 508, kKeyMetadataId = 519;
// field_summary (element 508).
constexpr std::int32_t kContainsNullId = 509, kContainsNanId = 518, kLowerBoundId = 510, kUpperBoundId = 511;

const avro::Schema& manifest_file_schema() {
  static const avro::Schema schema = [] {
    const avro::Json summary{{"type", "record"},
                             {"name", "r508"},
                             {"fields", avro::Json::array({
                                            required_field("contains_null", "boolean", kContainsNullId),
                                            optional_field("contains_nan", "boolean", kContainsNanId),
                                            optional_field("lower_bound", "bytes", kLowerBoundId),
                                            optional_field("upper_bound", "bytes", kUpperBoundId),
                                        })}};
    return avro::Schema::from_json(
        avro::Json{{"type", "record"},
                   {"name", "manifest_file"},
                   {"fields", avro::Json::array({
                                  required_field("manifest_path", "string", kManifestPathId),
                                  required_field("manifest_length", "long", kManifestLengthId),
                                  required_field("partition_spec_id", "int", kPartitionSpecId),
                                  required_field("content", "int", kContentId),
                                  required_field("sequence_number", "long", kSequenceNumberId),
                                  required_field("min_sequence_number", "long", kMinSequenceNumberId),
                                  required_field("added_snapshot_id", "long", kAddedSnapshotId),
                                  required_field("added_files_count", "int", kAddedFilesId),
                                  required_field("existing_files_count", "int", kExistingFilesId),
                                  required_field("deleted_files_count", "int", kDeletedFilesId),
                                  required_field("added_rows_count", "long", kAddedRowsId),
                                  required_field("existing_rows_count", "long", kExistingRowsId),
                                  required_field("deleted_rows_count", "long", kDeletedRowsId),
                                  optional_field("partitions", list_of(summary, kSummaryElementId), kPartitionsId),
                                  optional_field("key_metadata", "bytes", kKeyMetadataId),
                              })}});
  }();
  return schema;
}

avro::Value optional_bytes(const std::optional<Bytes>& bytes) {
  return bytes ? avro::Value(avro::Bytes(*bytes)) : avro::Value();
}

void check_manifest(const ManifestFile& manifest) {
  if (manifest.manifest_path.empty()) fail("manifest_path: must not be empty");
  if (manifest.manifest_length < 0) fail("manifest_length: must not be negative, got {}", manifest.manifest_length);
  const int content = static_cast<int>(manifest.content);
  if (content < 0 || content > 1) fail("content: invalid value {}", content);
  for (const auto& [name, count] : {std::pair{"added_files_count", std::int64_t{manifest.added_files_count}},
                                    std::pair{"existing_files_count", std::int64_t{manifest.existing_files_count}},
                                    std::pair{"deleted_files_count", std::int64_t{manifest.deleted_files_count}},
                                    std::pair{"added_rows_count", manifest.added_rows_count},
                                    std::pair{"existing_rows_count", manifest.existing_rows_count},
                                    std::pair{"deleted_rows_count", manifest.deleted_rows_count}}) {
    if (count < 0) fail("{}: must not be negative, got {}", name, count);
  }
  if (manifest.sequence_number < 0 || manifest.min_sequence_number < 0) {
    fail("sequence numbers must not be negative, got {} and {}", manifest.sequence_number,
         manifest.min_sequence_number);
  }
  if (manifest.min_sequence_number > manifest.sequence_number) {
    fail("min_sequence_number {} is above sequence_number {}", manifest.min_sequence_number, manifest.sequence_number);
  }
}

avro::Value manifest_to_avro(const ManifestFile& manifest) {
  avro::Value partitions;
  if (!manifest.partitions.empty()) {
    avro::Array summaries;
    for (const PartitionFieldSummary& summary : manifest.partitions) {
      summaries.emplace_back(avro::Record{{
          avro::Value(summary.contains_null),
          summary.contains_nan ? avro::Value(*summary.contains_nan) : avro::Value(),
          optional_bytes(summary.lower_bound),
          optional_bytes(summary.upper_bound),
      }});
    }
    partitions = std::move(summaries);
  }
  return avro::Record{{
      avro::Value(manifest.manifest_path),
      avro::Value(manifest.manifest_length),
      avro::Value(manifest.partition_spec_id),
      avro::Value(static_cast<std::int32_t>(manifest.content)),
      avro::Value(manifest.sequence_number),
      avro::Value(manifest.min_sequence_number),
      avro::Value(manifest.added_snapshot_id),
      avro::Value(manifest.added_files_count),
      avro::Value(manifest.existing_files_count),
      avro::Value(manifest.deleted_files_count),
      avro::Value(manifest.added_rows_count),
      avro::Value(manifest.existing_rows_count),
      avro::Value(manifest.deleted_rows_count),
      std::move(partitions),
      optional_bytes(manifest.key_metadata),
  }};
}

// MANIFEST as the list of snapshot SNAPSHOT_ID records it: the manifests that snapshot adds get
// its SEQUENCE_NUMBER; every other one must have its own already.
avro::Value committed_manifest_to_avro(ManifestFile& manifest, std::int64_t snapshot_id, std::int64_t sequence_number) {
  const bool unassigned = manifest.sequence_number == kUnassignedSequenceNumber ||
                          manifest.min_sequence_number == kUnassignedSequenceNumber;
  if (unassigned && manifest.added_snapshot_id != snapshot_id) {
    fail("a manifest added by snapshot {} has no sequence number", manifest.added_snapshot_id);
  }
  if (manifest.sequence_number == kUnassignedSequenceNumber) manifest.sequence_number = sequence_number;
  if (manifest.min_sequence_number == kUnassignedSequenceNumber) manifest.min_sequence_number = sequence_number;
  check_manifest(manifest);
  return manifest_to_avro(manifest);
}

ManifestFile manifest_from_avro(const RecordView& record) {
  using manifest_detail::as_int;
  using manifest_detail::as_long;
  ManifestFile manifest;
  manifest.manifest_path = manifest_detail::as_string(record.get(kManifestPathId, "manifest_path"));
  manifest.manifest_length = as_long(record.get(kManifestLengthId, "manifest_length"));
  if (manifest.manifest_length < 0) fail("manifest_length: negative: {}", manifest.manifest_length);
  manifest.partition_spec_id = as_int(record.get(kPartitionSpecId, "partition_spec_id"));
  if (const auto content = record.find(kContentId, "content")) {
    const std::int32_t value = as_int(*content);
    if (value < 0 || value > 1) fail("content: invalid value {}", value);
    manifest.content = static_cast<ManifestContent>(value);
  }
  // v1 manifest lists lack sequence numbers: their initial default is 0.
  const auto sequence = record.find(kSequenceNumberId, "sequence_number");
  manifest.sequence_number = sequence ? as_long(*sequence) : 0;
  const auto min_sequence = record.find(kMinSequenceNumberId, "min_sequence_number");
  manifest.min_sequence_number = min_sequence ? as_long(*min_sequence) : 0;
  if (manifest.sequence_number < 0 || manifest.min_sequence_number < 0) {
    fail("sequence_number: negative ({}, min {})", manifest.sequence_number, manifest.min_sequence_number);
  }
  manifest.added_snapshot_id = as_long(record.get(kAddedSnapshotId, "added_snapshot_id"));
  const auto count = [&](std::int32_t id, const char* name, auto& out) {
    // v1 writers named some counts differently ("added_data_files_count"); ids match either way.
    if (const auto value = record.find(id, name)) {
      if constexpr (sizeof(out) == sizeof(std::int32_t)) {
        out = as_int(*value);
      } else {
        out = as_long(*value);
      }
      if (out < 0) fail("{}: negative: {}", name, out);
    }
  };
  count(kAddedFilesId, "added_files_count", manifest.added_files_count);
  count(kExistingFilesId, "existing_files_count", manifest.existing_files_count);
  count(kDeletedFilesId, "deleted_files_count", manifest.deleted_files_count);
  count(kAddedRowsId, "added_rows_count", manifest.added_rows_count);
  count(kExistingRowsId, "existing_rows_count", manifest.existing_rows_count);
  count(kDeletedRowsId, "deleted_rows_count", manifest.deleted_rows_count);
  if (const auto partitions = record.find(kPartitionsId, "partitions")) {
    for (const Datum& item : manifest_detail::as_array(*partitions)) {
      const RecordView summary_record(item);
      PartitionFieldSummary summary;
      summary.contains_null = manifest_detail::as_bool(summary_record.get(kContainsNullId, "contains_null"));
      if (const auto nan = summary_record.find(kContainsNanId, "contains_nan")) {
        summary.contains_nan = manifest_detail::as_bool(*nan);
      }
      if (const auto lower = summary_record.find(kLowerBoundId, "lower_bound")) {
        summary.lower_bound = manifest_detail::as_bytes(*lower);
      }
      if (const auto upper = summary_record.find(kUpperBoundId, "upper_bound")) {
        summary.upper_bound = manifest_detail::as_bytes(*upper);
      }
      manifest.partitions.push_back(std::move(summary));
    }
  }
  if (const auto key = record.find(kKeyMetadataId, "key_metadata"))
    manifest.key_metadata = manifest_detail::as_bytes(*key);
  return manifest;
}

}  // namespace

void write_manifest_list(const std::string& location, std::int64_t snapshot_id,
                         std::optional<std::int64_t> parent_snapshot_id, std::int64_t sequence_number,
                         std::vector<ManifestFile> manifests) {
  const std::string what = fmt::format("iceberg manifest list {}", location);
  with_context(what, [&] {
    if (sequence_number < 0) fail("sequence number must not be negative, got {}", sequence_number);
    const std::filesystem::path path = local_path(location);
    avro::ContainerWriterOptions options;
    options.codec = avro::Codec::kDeflate;
    options.metadata = {
        {"snapshot-id", std::to_string(snapshot_id)},
        {"parent-snapshot-id", parent_snapshot_id ? std::to_string(*parent_snapshot_id) : "null"},
        {"sequence-number", std::to_string(sequence_number)},
        {"format-version", "2"},
    };
    std::ostringstream out;
    avro::ContainerWriter writer(out, manifest_file_schema(), options, what);
    for (std::size_t i = 0; i < manifests.size(); ++i) {
      ManifestFile& manifest = manifests[i];
      with_context([&] { return fmt::format("manifest {} ({})", i, manifest.manifest_path); },
                   [&] { writer.append(committed_manifest_to_avro(manifest, snapshot_id, sequence_number)); });
    }
    writer.close();
    durable::write_new_file(path, std::move(out).str(), "writing it", "iceberg.manifest_list.before_close");
  });
}

std::vector<ManifestFile> read_manifest_list(const std::string& location) {
  std::vector<ManifestFile> manifests;
  manifest_detail::read_records(
      location, fmt::format("iceberg manifest list {}", location), "manifest",
      [](const manifest_detail::HeaderMetadata&) {},
      [&](const RecordView& record) { manifests.push_back(manifest_from_avro(record)); });
  return manifests;
}

}  // namespace binberg::iceberg
