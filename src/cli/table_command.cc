// `binberg table ls|show|snapshots|files|scan|compact|rewrite-manifests|expire|remove-orphans`:
// the operator's view of the Iceberg tables binberg writes, and their maintenance. Tables are
// found through the catalog of a binberg configuration file (--config) or a catalog URI and
// warehouse given directly. Every subcommand prints text, or JSON with --json.

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

#include <charconv>
#include <iostream>
#include <memory>
#include <set>

#include "cli/commands.h"
#include "cli/config.h"
#include "core/clock.h"
#include "core/error.h"
#include "iceberg/canonical_row.h"
#include "iceberg/catalog.h"
#include "iceberg/compaction.h"
#include "iceberg/snapshot_expiry.h"
#include "iceberg/table_scan.h"
#include "mysql/snapshot_reader.h"

namespace binberg::cli {
namespace {

using nlohmann::json;

struct TableArgs {
  std::string config;
  std::string catalog_uri;
  std::string warehouse;
  std::string catalog_name = "binberg";
  std::string table;  // namespace.name (or a namespace for ls)
  bool json_output = false;
  std::optional<std::int64_t> snapshot_id;
  std::size_t limit = 20;
  // compact
  std::int64_t target_file_size_mb = 128;
  std::size_t min_input_files = 2;
  // expire / remove-orphans
  std::string older_than;
  std::size_t retain_last = 1;
  bool dry_run = false;
};

std::unique_ptr<iceberg::Catalog> open_catalog(const TableArgs& args) {
  iceberg::CatalogOptions options;
  if (!args.config.empty()) {
    options = load_config(args.config).catalog;
  } else if (!args.catalog_uri.empty()) {
    options.uri = args.catalog_uri;
    options.warehouse = args.warehouse;
    options.name = args.catalog_name;
  } else {
    throw ConfigError("give --config FILE or --catalog URI (with --warehouse) to find the tables");
  }
  return iceberg::open_catalog(options);
}

iceberg::TableIdentifier table_id(const std::string& name) {
  const auto dot = name.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == name.size()) {
    throw ConfigError(fmt::format("table \"{}\": expected namespace.table", name));
  }
  return iceberg::TableIdentifier{name.substr(0, dot), name.substr(dot + 1)};
}

// "90s", "30m", "72h", "7d" -> milliseconds.
std::int64_t parse_age(const std::string& text, const std::string& option) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  const std::string unit(end, text.data() + text.size());
  const std::map<std::string, std::int64_t> units = {{"s", 1000}, {"m", 60'000}, {"h", 3'600'000}, {"d", 86'400'000}};
  const auto it = units.find(unit);
  if (error != std::errc() || value < 0 || it == units.end()) {
    throw ConfigError(fmt::format("{} \"{}\": expected a number and a unit, s, m, h or d (e.g. 72h)", option, text));
  }
  return value * it->second;
}

std::string summary_value(const iceberg::Snapshot* snapshot, const std::string& key) {
  if (snapshot == nullptr) return "-";
  const auto it = snapshot->summary.find(key);
  return it == snapshot->summary.end() ? "-" : it->second;
}

void print(const TableArgs& args, const json& document, const std::string& text) {
  if (args.json_output) {
    std::cout << document.dump(2) << "\n";
  } else {
    std::cout << text;
  }
}

// The tables CONFIG captures that have no Iceberg tables in CATALOG (LISTED names those it has), in
// namespace NS if given: "stopped" with why binberg cannot map one (stopped_reason), else "not
// created" yet. The source says what is captured; when it cannot be asked, a warning says they
// are not listed.
void list_captured_without_tables(const Config& config, iceberg::Catalog& catalog, const std::set<std::string>& listed,
                                  const std::string& ns, json& list, std::string& text) {
  std::optional<mysql::Connection> connection;
  std::vector<capture::CapturedTable> captured;
  try {
    connection.emplace(mysql::Connection::open(config.source));
    captured = resolve_tables(*connection, config.capture);
  } catch (const Error& error) {
    spdlog::warn("table ls: the captured tables without Iceberg tables are not listed: {}", error.what());
    return;
  }
  for (const capture::CapturedTable& table : captured) {
    const std::string table_ns = config.iceberg_namespace.empty() ? table.database : config.iceberg_namespace;
    const std::string name = table_ns + "." + table.table;
    if ((!ns.empty() && table_ns != ns) || listed.contains(name + config.changelog_suffix)) continue;
    const auto schema = mysql::load_table_schema(*connection, table.database, table.table);
    const std::optional<std::string> stopped = stopped_reason(config, catalog, table, *schema);
    const std::string status = stopped ? "stopped" : "not created";
    const std::string reason = stopped.value_or("binberg creates its Iceberg tables when it first copies it");
    list.push_back({{"table", name}, {"status", status}, {"reason", reason}});
    text += fmt::format("{:<40} {}: {}\n", name, status, reason);
  }
}

int run_ls(const TableArgs& args) {
  const auto catalog = open_catalog(args);
  std::vector<std::string> namespaces = args.table.empty() ? catalog->list_namespaces() : std::vector{args.table};
  json list = json::array();
  std::set<std::string> listed;
  std::string text = fmt::format("{:<40} {:>8} {:>12} {:>8} {:>8}\n", "TABLE", "SNAPS", "RECORDS", "DATA", "DELETES");
  for (const std::string& ns : namespaces) {
    for (const iceberg::TableIdentifier& id : catalog->list_tables(ns)) {
      const iceberg::LoadedTable table = catalog->load_table(id);
      const iceberg::Snapshot* current = table.metadata.current_snapshot();
      listed.insert(id.to_string());
      list.push_back({{"table", id.to_string()},
                      {"snapshots", table.metadata.snapshots.size()},
                      {"total-records", summary_value(current, "total-records")},
                      {"total-data-files", summary_value(current, "total-data-files")},
                      {"total-delete-files", summary_value(current, "total-delete-files")}});
      text += fmt::format("{:<40} {:>8} {:>12} {:>8} {:>8}\n", id.to_string(), table.metadata.snapshots.size(),
                          summary_value(current, "total-records"), summary_value(current, "total-data-files"),
                          summary_value(current, "total-delete-files"));
    }
  }
  if (!args.config.empty()) {
    list_captured_without_tables(load_config(args.config), *catalog, listed, args.table, list, text);
  }
  print(args, list, text);
  return 0;
}

int run_show(const TableArgs& args) {
  const auto catalog = open_catalog(args);
  const iceberg::LoadedTable table = catalog->load_table(table_id(args.table));
  const iceberg::TableMetadata& metadata = table.metadata;
  const iceberg::Snapshot* current = metadata.current_snapshot();
  json document{{"table", table.id.to_string()},
                {"metadata-location", table.metadata_location},
                {"location", metadata.location},
                {"table-uuid", metadata.table_uuid.to_string()},
                {"schema", iceberg::schema_to_json(metadata.current_schema())},
                {"partition-spec", iceberg::partition_spec_to_json(metadata.default_spec())},
                {"properties", metadata.properties},
                {"snapshots", metadata.snapshots.size()}};
  if (current != nullptr) {
    document["current-snapshot"] = {{"snapshot-id", current->snapshot_id},
                                    {"timestamp", utc_time(current->timestamp_ms)},
                                    {"operation", iceberg::operation_name(current->operation)},
                                    {"summary", current->summary}};
  }
  std::string text = fmt::format("table     {}\nmetadata  {}\nlocation  {}\nschema    ", table.id.to_string(),
                                 table.metadata_location, metadata.location);
  for (const auto& field : metadata.current_schema().fields()) {
    text += fmt::format("\n  {:>4} {:<32} {}{}", field.id, field.name, field.type->to_string(),
                        field.required ? " required" : "");
  }
  text += fmt::format("\npartition {}\nsnapshots {}\n", iceberg::partition_spec_to_json(metadata.default_spec()).dump(),
                      metadata.snapshots.size());
  if (current != nullptr) {
    text += fmt::format("current   {} ({}, {})\n", current->snapshot_id, iceberg::operation_name(current->operation),
                        utc_time(current->timestamp_ms));
    for (const auto& [key, value] : current->summary) text += fmt::format("  {} = {}\n", key, value);
  }
  print(args, document, text);
  return 0;
}

int run_snapshots(const TableArgs& args) {
  const auto catalog = open_catalog(args);
  const iceberg::LoadedTable table = catalog->load_table(table_id(args.table));
  json list = json::array();
  std::string text = fmt::format("{:<20} {:<20} {:>6} {:<24} {:<10} {:>10} {:>10}  {}\n", "SNAPSHOT", "PARENT", "SEQ",
                                 "TIME", "OPERATION", "ADDED", "DELETES", "COMMIT");
  for (const iceberg::Snapshot& snapshot : table.metadata.snapshots) {
    const std::string parent = snapshot.parent_snapshot_id ? std::to_string(*snapshot.parent_snapshot_id) : "-";
    list.push_back({{"snapshot-id", snapshot.snapshot_id},
                    {"parent-snapshot-id", parent},
                    {"sequence-number", snapshot.sequence_number},
                    {"timestamp-ms", snapshot.timestamp_ms},
                    {"operation", iceberg::operation_name(snapshot.operation)},
                    {"summary", snapshot.summary}});
    text += fmt::format("{:<20} {:<20} {:>6} {:<24} {:<10} {:>10} {:>10}  {}\n", snapshot.snapshot_id, parent,
                        snapshot.sequence_number, utc_time(snapshot.timestamp_ms),
                        iceberg::operation_name(snapshot.operation), summary_value(&snapshot, "added-records"),
                        summary_value(&snapshot, "added-position-deletes"),
                        summary_value(&snapshot, iceberg::kCommitIdProperty));
  }
  print(args, list, text);
  return 0;
}

int run_files(const TableArgs& args) {
  const auto catalog = open_catalog(args);
  const iceberg::LoadedTable table = catalog->load_table(table_id(args.table));
  const iceberg::ScanPlan plan = iceberg::plan_scan(table.metadata, args.snapshot_id);
  json list = json::array();
  std::string text = fmt::format("{:<16} {:>10} {:>12} {:>6}  {}\n", "CONTENT", "RECORDS", "BYTES", "SEQ", "PATH");
  const auto add = [&](const iceberg::LiveFile& file) {
    static const char* const kContent[] = {"data", "position-deletes", "equality-deletes"};
    const char* content = kContent[static_cast<int>(file.file.content)];
    list.push_back({{"content", content},
                    {"file-path", file.file.file_path},
                    {"record-count", file.file.record_count},
                    {"file-size-in-bytes", file.file.file_size_in_bytes},
                    {"data-sequence-number", file.data_sequence_number},
                    {"spec-id", file.spec_id}});
    text += fmt::format("{:<16} {:>10} {:>12} {:>6}  {}\n", content, file.file.record_count,
                        file.file.file_size_in_bytes, file.data_sequence_number, file.file.file_path);
  };
  for (const auto& file : plan.data_files) add(file);
  for (const auto& file : plan.delete_files) add(file);
  print(args, list, text);
  return 0;
}

// Rows in the canonical text form reconcile digests (docs/reconcile.md), one JSON array per line.
int run_scan(const TableArgs& args) {
  const auto catalog = open_catalog(args);
  const iceberg::LoadedTable table = catalog->load_table(table_id(args.table));
  const iceberg::Schema& schema = table.metadata.current_schema();
  const iceberg::ScanPlan plan = iceberg::plan_scan(table.metadata, args.snapshot_id);
  json header = json::array();
  for (const auto& field : schema.fields()) header.push_back(field.name);
  std::cout << header.dump() << "\n";
  std::size_t printed = 0;
  std::size_t total = 0;
  iceberg::scan_rows(plan, schema, [&](const iceberg::Row& row, const iceberg::LiveFile&, std::int64_t) {
    ++total;
    if (args.limit != 0 && printed >= args.limit) return;
    json cells = json::array();
    for (std::size_t c = 0; c < row.size(); ++c) {
      const auto text = iceberg::canonical_text(*schema.fields()[c].type, row[c]);
      cells.push_back(text ? json(*text) : json(nullptr));
    }
    std::cout << cells.dump() << "\n";
    ++printed;
  });
  spdlog::info("{}: {} rows, {} printed", table.id.to_string(), total, printed);
  return 0;
}

json compaction_json(const iceberg::CompactionResult& result) {
  return {{"committed", result.snapshot_id.has_value()},
          {"snapshot-id", result.snapshot_id ? json(*result.snapshot_id) : json(nullptr)},
          {"rewritten-data-files", result.rewritten_data_files},
          {"added-data-files", result.added_data_files},
          {"removed-delete-files", result.removed_delete_files},
          {"rows-written", result.rows_written},
          {"deleted-rows-dropped", result.rows_dropped},
          {"bytes-written", result.bytes_written},
          {"manifests-before", result.manifests_before},
          {"manifests-after", result.manifests_after},
          {"rebased-deletes", result.rebased_deletes},
          {"attempts", result.attempts}};
}

using Compaction = iceberg::CompactionResult (*)(iceberg::Catalog&, const iceberg::TableIdentifier&,
                                                 const iceberg::CompactionOptions&);

// COMPACTION is iceberg::compact_table or iceberg::rewrite_manifests.
int run_compact(const TableArgs& args, Compaction compaction) {
  if (args.target_file_size_mb < 1) throw ConfigError("--target-file-size-mb must be at least 1");
  const auto catalog = open_catalog(args);
  iceberg::CompactionOptions options;
  options.target_file_size_bytes = args.target_file_size_mb << 20;
  options.min_input_files = args.min_input_files;
  const iceberg::TableIdentifier id = table_id(args.table);
  const iceberg::CompactionResult result = compaction(*catalog, id, options);
  const std::string text =
      result.snapshot_id
          ? fmt::format(
                "{}: snapshot {}: {} data files rewritten into {} ({} rows), {} delete files removed, manifests {} -> "
                "{}\n",
                id.to_string(), *result.snapshot_id, result.rewritten_data_files, result.added_data_files,
                result.rows_written, result.removed_delete_files, result.manifests_before, result.manifests_after)
          : fmt::format("{}: nothing to do\n", id.to_string());
  print(args, compaction_json(result), text);
  return 0;
}

// What a file removal (expire, remove-orphans) reports: JSON (without "dry-run", added here) and text.
struct RemovalReport {
  json document;
  std::string text;
};

// The skeleton of expire and remove-orphans: both remove files older than --older-than (DEFAULT_AGE
// when not given) from one table, or only report them with --dry-run. REMOVE runs the removal on
// the table with the cut-off time (Unix ms) and reports.
template <typename Remove>
int run_removal(const TableArgs& args, const char* default_age, Remove remove) {
  const auto catalog = open_catalog(args);
  const std::int64_t older_than_ms =
      unix_millis() - parse_age(args.older_than.empty() ? default_age : args.older_than, "--older-than");
  const iceberg::TableIdentifier id = table_id(args.table);
  RemovalReport report = remove(*catalog, id, older_than_ms);
  report.document["dry-run"] = args.dry_run;
  print(args, report.document, report.text);
  return 0;
}

int run_expire(const TableArgs& args) {
  return run_removal(args, "7d", [&](iceberg::Catalog& catalog, const iceberg::TableIdentifier& id, std::int64_t cut) {
    iceberg::ExpireOptions options;
    options.older_than_ms = cut;
    options.retain_last = args.retain_last;
    options.dry_run = args.dry_run;
    const iceberg::ExpireResult result = iceberg::expire_snapshots(catalog, id, options);
    const char* would = args.dry_run ? "would be " : "";
    return RemovalReport{{{"expired-snapshots", result.expired_snapshots},
                          {"deleted-files", result.deleted_files},
                          {"deleted-bytes", result.deleted_bytes}},
                         fmt::format("{}: {} snapshots {}expired, {} files {}deleted\n", id.to_string(),
                                     result.expired_snapshots.size(), would, result.deleted_files.size(), would)};
  });
}

int run_remove_orphans(const TableArgs& args) {
  return run_removal(args, "3d", [&](iceberg::Catalog& catalog, const iceberg::TableIdentifier& id, std::int64_t cut) {
    iceberg::OrphanOptions options;
    options.older_than_ms = cut;
    options.dry_run = args.dry_run;
    const iceberg::OrphanResult result = iceberg::remove_orphan_files(catalog, id, options);
    std::string text;
    for (const std::string& file : result.orphan_files) text += file + "\n";
    text += fmt::format("{}: {} of {} files are orphans ({} bytes){}\n", id.to_string(), result.orphan_files.size(),
                        result.files_checked, result.orphan_bytes,
                        args.dry_run ? ", nothing deleted (dry run)" : ", deleted");
    return RemovalReport{{{"files-checked", result.files_checked},
                          {"orphan-files", result.orphan_files},
                          {"orphan-bytes", result.orphan_bytes}},
                         std::move(text)};
  });
}

// The table command's subcommands: the options they share, and what each runs.
struct TableSubcommands {
  std::shared_ptr<TableArgs> args = std::make_shared<TableArgs>();
  std::vector<std::pair<CLI::App*, std::function<int()>>> actions;

  // Every subcommand finds the catalog and may print JSON; all but ls work on one table.
  CLI::App* with_catalog(CLI::App* sub) const {
    sub->add_option("-c,--config", args->config, "binberg configuration file (its [iceberg] catalog)");
    sub->add_option("--catalog", args->catalog_uri,
                    "catalog URI instead of --config (sqlite:////path.db, postgresql://...)");
    sub->add_option("--warehouse", args->warehouse, "warehouse with --catalog");
    sub->add_option("--catalog-name", args->catalog_name, "catalog name with --catalog")->capture_default_str();
    sub->add_flag("--json", args->json_output, "print JSON");
    return sub;
  }
  CLI::App* with_table(CLI::App* sub) const {
    with_catalog(sub)->add_option("table", args->table, "namespace.table")->required();
    return sub;
  }
  // expire and remove-orphans remove files older than --older-than, or only report them.
  CLI::App* with_removal(CLI::App* sub, const std::string& older_than_help) const {
    with_table(sub)->add_option("--older-than", args->older_than, older_than_help);
    sub->add_flag("--dry-run", args->dry_run, "report, change nothing");
    return sub;
  }
};

void add_inspection_commands(CLI::App* command, TableSubcommands& subs) {
  const std::shared_ptr<TableArgs>& args = subs.args;
  auto* ls = subs.with_catalog(command->add_subcommand(
      "ls", "List tables with their size; with --config also the captured tables that have none, and why"));
  ls->add_option("namespace", args->table, "only this namespace");
  subs.actions.emplace_back(ls, [args] { return run_ls(*args); });

  auto* show =
      subs.with_table(command->add_subcommand("show", "Schema, partitioning, properties and the current snapshot"));
  subs.actions.emplace_back(show, [args] { return run_show(*args); });

  auto* snapshots = subs.with_table(command->add_subcommand("snapshots", "Every snapshot with its summary"));
  subs.actions.emplace_back(snapshots, [args] { return run_snapshots(*args); });

  auto* files = subs.with_table(command->add_subcommand("files", "Live data and delete files of a snapshot"));
  files->add_option("--snapshot", args->snapshot_id, "snapshot id (default: the current one)");
  subs.actions.emplace_back(files, [args] { return run_files(*args); });

  auto* scan = subs.with_table(
      command->add_subcommand("scan", "Rows of a snapshot, deletes applied, as JSON arrays of canonical text"));
  scan->add_option("--snapshot", args->snapshot_id, "snapshot id (default: the current one)");
  scan->add_option("--limit", args->limit, "rows to print (0: all)")->capture_default_str();
  subs.actions.emplace_back(scan, [args] { return run_scan(*args); });
}

void add_maintenance_commands(CLI::App* command, TableSubcommands& subs) {
  const std::shared_ptr<TableArgs>& args = subs.args;
  auto* compact = subs.with_table(
      command->add_subcommand("compact", "Rewrite small and delete-laden files; drop resolved deletes"));
  compact->add_option("--target-file-size-mb", args->target_file_size_mb, "size of the files written")
      ->capture_default_str();
  compact
      ->add_option("--min-input-files", args->min_input_files,
                   "small files a partition needs (without deletes) to be rewritten")
      ->capture_default_str();
  subs.actions.emplace_back(compact, [args] { return run_compact(*args, iceberg::compact_table); });

  auto* manifests =
      subs.with_table(command->add_subcommand("rewrite-manifests", "Merge the manifests; no data file changes"));
  subs.actions.emplace_back(manifests, [args] { return run_compact(*args, iceberg::rewrite_manifests); });

  auto* expire =
      subs.with_removal(command->add_subcommand("expire", "Expire old snapshots and delete the files only they needed"),
                        "age of the snapshots to expire, e.g. 7d, 12h (default 7d)");
  expire->add_option("--retain-last", args->retain_last, "newest ancestors of the current snapshot always kept")
      ->capture_default_str();
  subs.actions.emplace_back(expire, [args] { return run_expire(*args); });

  auto* orphans =
      subs.with_removal(command->add_subcommand("remove-orphans", "Delete files nothing in the table refers to"),
                        "grace period: younger files are kept, a writer may be committing them (default 3d)");
  subs.actions.emplace_back(orphans, [args] { return run_remove_orphans(*args); });
}

}  // namespace

Command add_table_command(CLI::App& app) {
  auto* command = app.add_subcommand("table", "Inspect and maintain the Iceberg tables binberg writes");
  command->require_subcommand(1);
  TableSubcommands subs;
  add_inspection_commands(command, subs);
  add_maintenance_commands(command, subs);
  return Command{command, [actions = std::move(subs.actions)] {
                   for (const auto& [sub, action] : actions) {
                     if (sub->parsed()) return action();
                   }
                   return 2;
                 }};
}

}  // namespace binberg::cli
