// The Iceberg table layer on a large keyed table: load, primary-key index rebuild (time, bytes per
// key), one upsert commit of many changed rows (time, bytes written) with the index and with
// keys located by scan, scan rate without and with position deletes, and compaction. A SQLite catalog in a scratch
// directory; one thread. Prints figures (text and one JSON line) and never asserts on time.
//
//   bench/table_bench [--rows N] [--changes K] [--dir D] [--keep]

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

#include "core/error.h"
#include "iceberg/catalog.h"
#include "iceberg/compaction.h"
#include "iceberg/table_scan.h"
#include "iceberg/table_writer.h"

using namespace binberg;
using namespace binberg::iceberg;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

Schema bench_schema() {
  return Schema(0,
                {NestedField{1, "id", true, long_type(), std::nullopt},
                 NestedField{2, "customer", false, string_type(), std::nullopt},
                 NestedField{3, "total", false, decimal_type(12, 2), std::nullopt},
                 NestedField{4, "placed", false, timestamptz_type(), std::nullopt},
                 NestedField{5, "score", false, double_type(), std::nullopt}},
                {1});
}

Row bench_row(std::int64_t id, std::int64_t version) {
  return Row{id, fmt::format("customer-{}", (id * 7919 + version) % 100'000), Decimal{id * 100 + version},
             std::int64_t{1'700'000'000'000'000} + id * 1000 + version, static_cast<double>(version) / 3.0};
}

std::int64_t scan_count(const TableMetadata& metadata, double& seconds) {
  const auto started = Clock::now();
  std::int64_t rows = 0;
  scan_rows(plan_scan(metadata), metadata.current_schema(), [&](const Row&, const LiveFile&, std::int64_t) { ++rows; });
  seconds = seconds_since(started);
  return rows;
}

std::int64_t directory_bytes(const std::filesystem::path& path) {
  std::int64_t bytes = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(path)) {
    if (entry.is_regular_file()) bytes += static_cast<std::int64_t>(entry.file_size());
  }
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t rows = 10'000'000, changes = 100'000;
  std::string dir;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--keep") {
      keep = true;
    } else if (i + 1 < argc && arg == "--rows") {
      rows = std::atoll(argv[++i]);
    } else if (i + 1 < argc && arg == "--changes") {
      changes = std::atoll(argv[++i]);
    } else if (i + 1 < argc && arg == "--dir") {
      dir = argv[++i];
    } else {
      fmt::print(stderr, "usage: table_bench [--rows N] [--changes K] [--dir D] [--keep]\n");
      return 2;
    }
  }
  if (rows < 1 || changes < 1 || changes > rows) {
    fmt::print(stderr, "table_bench: need 1 <= changes <= rows\n");
    return 2;
  }
  if (dir.empty())
    dir = fmt::format("{}/binberg-table-bench-{}", std::filesystem::temp_directory_path().string(), ::getpid());
  std::filesystem::create_directories(dir);
  try {
    CatalogOptions options;
    options.uri = "sqlite:///" + std::filesystem::absolute(dir).string() + "/catalog.db";
    options.warehouse = std::filesystem::absolute(dir).string() + "/warehouse";
    const auto catalog = open_catalog(options);
    catalog->create_namespace("bench");
    const TableIdentifier id{"bench", "orders"};
    catalog->create_table(id, bench_schema(), PartitionSpec::unpartitioned(), SortOrder::unsorted(), {});

    // Load: one commit of ROWS inserts (the writer spills to data files as its buffer fills).
    auto started = Clock::now();
    {
      TableWriter writer(catalog->load_table(id), WriteMode::kUpsert);
      for (std::int64_t key = 1; key <= rows; ++key) writer.upsert(bench_row(key, 0));
      commit_tables(*catalog, {&writer}, {writer.prepare("load", {}, 0)});
    }
    const double load_seconds = seconds_since(started);
    const std::int64_t table_bytes = directory_bytes(options.warehouse);

    double scan_clean_seconds = 0;
    const std::int64_t scanned_clean = scan_count(catalog->load_table(id).metadata, scan_clean_seconds);

    // Index rebuild when a writer opens the table, then one commit of CHANGES changed keys spread
    // over the table: nine in ten updates, one in ten deletes.
    started = Clock::now();
    TableWriter writer(catalog->load_table(id), WriteMode::kUpsert);
    const double index_seconds = seconds_since(started);
    const double bytes_per_key = static_cast<double>(writer.index().memory_bytes()) / static_cast<double>(rows);
    std::mt19937_64 random(42);
    std::uniform_int_distribution<std::int64_t> key(1, rows);
    const auto commit_changes = [&](TableWriter& changed, const std::string& commit_id, std::int64_t version) {
      for (std::int64_t i = 0; i < changes; ++i) {
        const std::int64_t k = key(random);
        if (i % 10 == 9) {
          changed.remove(Row{k, std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{}});
        } else {
          changed.upsert(bench_row(k, version + i));
        }
      }
      PreparedCommit commit = changed.prepare(commit_id, {}, 0);
      commit_tables(*catalog, {&changed}, {commit});
      return commit;
    };
    started = Clock::now();
    const PreparedCommit prepared = commit_changes(writer, "changes", 1);
    const double upsert_seconds = seconds_since(started);

    // The same again with no room for an index: the writer locates the changed keys at commit by
    // reading the key column of the data files (random keys: every file is a candidate).
    TableWriterOptions no_index;
    no_index.max_index_bytes = 0;
    started = Clock::now();
    TableWriter scanning(catalog->load_table(id), WriteMode::kUpsert, no_index);
    const PreparedCommit scanned = commit_changes(scanning, "changes-by-scan", changes + 1);
    const double key_scan_seconds = seconds_since(started);

    double scan_deletes_seconds = 0;
    const std::int64_t scanned_deletes = scan_count(catalog->load_table(id).metadata, scan_deletes_seconds);

    started = Clock::now();
    const CompactionResult compaction = compact_table(*catalog, id);
    const double compact_seconds = seconds_since(started);
    double scan_compacted_seconds = 0;
    const std::int64_t scanned_compacted = scan_count(catalog->load_table(id).metadata, scan_compacted_seconds);
    if (scanned_compacted != scanned_deletes)
      fail("compaction changed the row count: {} -> {}", scanned_deletes, scanned_compacted);

    fmt::print("table_bench: {} rows, one commit of {} changed keys (90% updates, 10% deletes)\n", rows, changes);
    fmt::print("  load                {:>8.2f} s  {:>12.0f} rows/s  {:>8.1f} MiB on disk\n", load_seconds,
               static_cast<double>(rows) / load_seconds, static_cast<double>(table_bytes) / (1 << 20));
    fmt::print("  index rebuild       {:>8.2f} s  {:>12.0f} keys/s  {:>8.1f} bytes/key\n", index_seconds,
               static_cast<double>(rows) / index_seconds, bytes_per_key);
    fmt::print(
        "  upsert commit       {:>8.2f} s  {:>12.0f} changes/s  {:>6.1f} MiB written ({} data, {} delete files, {} "
        "position deletes)\n",
        upsert_seconds, static_cast<double>(changes) / upsert_seconds,
        static_cast<double>(prepared.stats.bytes_written) / (1 << 20), prepared.stats.data_files,
        prepared.stats.delete_files, prepared.stats.deleted_rows);
    fmt::print(
        "  upsert, key scan    {:>8.2f} s  {:>12.0f} changes/s  {:>6.1f} MiB written, {} data files read for keys, "
        "index {} bytes\n",
        key_scan_seconds, static_cast<double>(changes) / key_scan_seconds,
        static_cast<double>(scanned.stats.bytes_written) / (1 << 20), scanning.files_scanned_for_keys(),
        scanning.index().memory_bytes());
    fmt::print("  scan, no deletes    {:>8.2f} s  {:>12.0f} rows/s\n", scan_clean_seconds,
               static_cast<double>(scanned_clean) / scan_clean_seconds);
    fmt::print("  scan, with deletes  {:>8.2f} s  {:>12.0f} rows/s\n", scan_deletes_seconds,
               static_cast<double>(scanned_deletes) / scan_deletes_seconds);
    fmt::print("  compaction          {:>8.2f} s  {:>12.0f} rows/s  {} files -> {}, {} delete files removed\n",
               compact_seconds, static_cast<double>(compaction.rows_written) / compact_seconds,
               compaction.rewritten_data_files, compaction.added_data_files, compaction.removed_delete_files);
    fmt::print("  scan, compacted     {:>8.2f} s  {:>12.0f} rows/s\n", scan_compacted_seconds,
               static_cast<double>(scanned_compacted) / scan_compacted_seconds);
    fmt::print(
        "{{\"bench\": \"table\", \"rows\": {}, \"changes\": {}, \"load_s\": {:.3f}, \"index_rebuild_s\": {:.3f}, "
        "\"index_bytes_per_key\": {:.1f}, \"upsert_commit_s\": {:.3f}, \"upsert_bytes_written\": {}, "
        "\"upsert_key_scan_s\": {:.3f}, "
        "\"scan_rows_per_s\": {:.0f}, \"scan_with_deletes_rows_per_s\": {:.0f}, \"compaction_s\": {:.3f}, "
        "\"scan_compacted_rows_per_s\": {:.0f}}}\n",
        rows, changes, load_seconds, index_seconds, bytes_per_key, upsert_seconds, prepared.stats.bytes_written,
        key_scan_seconds, static_cast<double>(scanned_clean) / scan_clean_seconds,
        static_cast<double>(scanned_deletes) / scan_deletes_seconds, compact_seconds,
        static_cast<double>(scanned_compacted) / scan_compacted_seconds);
  } catch (const std::exception& error) {
    fmt::print(stderr, "table_bench: {}\n", error.what());
    if (!keep) std::filesystem::remove_all(dir);
    return 1;
  }
  if (!keep) std::filesystem::remove_all(dir);
  return 0;
}
