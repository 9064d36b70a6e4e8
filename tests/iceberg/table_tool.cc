// A writer process for the table layer's crash and concurrency tests: it commits batches of
// ChangeGenerator changes to one table, so a test can SIGKILL it at a failpoint or run two of them
// against one catalog and then check the table against the generator's expected state.
//
//   table_tool --uri U --warehouse W --table NAME --seed S --key-space K [--first-key F]
//              --changes N --batches B [--skip-batches A] [--writer-id ID] [--maintenance compact|expire]
//              [--create unpartitioned|bucketed] [--max-buffered-bytes M]
//
// --create first creates the table in namespace db (bucketed: partitioned by bucket[4] of its key).
// Batches 1..A only advance the generator (another process committed them); batches A+1..B are
// committed one snapshot each, retried from a fresh load of the table on CommitConflict; a batch
// beyond M buffered bytes spills to data files before its commit. Then --maintenance compacts the
// table, or expires every snapshot but the current one.
// BINBERG_FAILPOINTS arms failpoints. Prints {"commits": C, "conflicts": X} on success.

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>

#include "core/clock.h"
#include "core/failpoint.h"
#include "iceberg/compaction.h"
#include "iceberg/snapshot_expiry.h"
#include "iceberg/table_writer.h"
#include "table_test_support.h"

namespace {

using namespace binberg::iceberg;

std::map<std::string, std::string> parse_arguments(int argc, char** argv) {
  std::map<std::string, std::string> arguments;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string name = argv[i];
    if (name.rfind("--", 0) != 0) throw std::runtime_error("expected an option, got " + name);
    arguments[name.substr(2)] = argv[i + 1];
  }
  return arguments;
}

std::string required(const std::map<std::string, std::string>& arguments, const std::string& name) {
  auto it = arguments.find(name);
  if (it == arguments.end()) throw std::runtime_error("missing --" + name);
  return it->second;
}

std::int64_t number(const std::map<std::string, std::string>& arguments, const std::string& name,
                    std::optional<std::int64_t> fallback = std::nullopt) {
  auto it = arguments.find(name);
  if (it == arguments.end()) {
    if (fallback) return *fallback;
    throw std::runtime_error("missing --" + name);
  }
  return std::stoll(it->second);
}

void create_table(Catalog& catalog, const TableIdentifier& id, const std::string& layout) {
  if (layout != "unpartitioned" && layout != "bucketed") {
    throw std::runtime_error("--create: expected unpartitioned or bucketed, got " + layout);
  }
  const PartitionSpec spec =
      layout == "unpartitioned"
          ? PartitionSpec::unpartitioned()
          : PartitionSpec(0, {PartitionField{1, kFirstPartitionFieldId, "id_bucket", Transform::bucket(4)}});
  catalog.create_table(id, test_tables::keyed_schema(), spec, SortOrder::unsorted(), {});
}

int run(int argc, char** argv) {
  binberg::failpoint::arm_from_environment();
  const auto arguments = parse_arguments(argc, argv);
  CatalogOptions options;
  options.uri = required(arguments, "uri");
  options.warehouse = required(arguments, "warehouse");
  const TableIdentifier id{"db", required(arguments, "table")};
  const auto changes = static_cast<int>(number(arguments, "changes"));
  const std::int64_t batches = number(arguments, "batches");
  const std::int64_t skipped = number(arguments, "skip-batches", 0);
  TableWriterOptions writer_options;
  writer_options.writer_id = arguments.contains("writer-id") ? arguments.at("writer-id") : "table_tool";
  writer_options.max_buffered_bytes = static_cast<std::size_t>(
      number(arguments, "max-buffered-bytes", static_cast<std::int64_t>(writer_options.max_buffered_bytes)));

  test_tables::ChangeGenerator generator(static_cast<std::uint64_t>(number(arguments, "seed")),
                                         number(arguments, "key-space"), number(arguments, "first-key", 1));
  for (std::int64_t batch = 1; batch <= skipped; ++batch) generator.apply(nullptr, changes);

  const auto catalog = open_catalog(options);
  if (const auto it = arguments.find("create"); it != arguments.end()) create_table(*catalog, id, it->second);
  int commits = 0;
  int conflicts = 0;
  for (std::int64_t batch = skipped + 1; batch <= batches; ++batch) {
    const test_tables::ChangeGenerator before = generator;
    for (;;) {
      generator = before;
      TableWriter writer(catalog->load_table(id), WriteMode::kUpsert, writer_options);
      generator.apply(writer, changes);
      const auto now_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
              .count();
      const PreparedCommit prepared = writer.prepare(fmt::format("{}-{}", writer_options.writer_id, batch), {}, now_ms);
      try {
        commit_tables(*catalog, {&writer}, {prepared});
        ++commits;
        break;
      } catch (const CommitConflict&) {
        ++conflicts;  // another writer committed first: reload and apply the batch again
      }
    }
  }
  if (const auto it = arguments.find("maintenance"); it != arguments.end()) {
    if (it->second == "compact") {
      compact_table(*catalog, id);
    } else if (it->second == "expire") {
      ExpireOptions expire;
      expire.older_than_ms = binberg::unix_millis() + 60'000;
      expire_snapshots(*catalog, id, expire);
    } else {
      throw std::runtime_error("--maintenance: expected compact or expire, got " + it->second);
    }
  }
  std::cout << fmt::format(R"({{"commits": {}, "conflicts": {}}})", commits, conflicts) << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& error) {
    std::cerr << "table_tool: " << error.what() << std::endl;
    return 1;
  }
}
