#include "drill/pipeline.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fstream>
#include <nlohmann/json.hpp>

#include "capture/source_position.h"
#include "core/assert.h"
#include "core/error.h"
#include "drill/checks.h"
#include "drill/signals.h"
#include "tables/snapshot_properties.h"
#include "verify/snapshot_history.h"

namespace binberg::drill {
namespace {

using evidence::Check;
using evidence::Comparison;

constexpr std::chrono::seconds kReconcileWait{180};

std::string changelog_of(const std::string& table) { return table + "_changelog"; }

// A sink under steady load never reads its topics to their end, so its snapshots claim no source
// position; but each partition is in source order, so once every partition applied a transaction
// at or after P, the table holds every transaction up to P: the least of the partitions' last
// transaction positions (binberg.sink.offsets). Nullopt before every partition has one.
std::optional<mysql::BinlogPosition> sink_position(const std::map<std::string, std::string>& summary) {
  const auto offsets = summary.find(tables::kSinkOffsetsProperty);
  if (offsets == summary.end()) return std::nullopt;
  std::optional<mysql::BinlogPosition> least;
  const nlohmann::json partitions = nlohmann::json::parse(offsets->second);
  for (const auto& [partition, coordinates] : partitions.items()) {
    const std::string text = coordinates.value("last_txn_position", std::string());
    const auto colon = text.rfind(':');
    if (colon == std::string::npos) return std::nullopt;
    const mysql::BinlogPosition position{text.substr(0, colon), std::stoull(text.substr(colon + 1))};
    if (!least || capture::compare_binlog(position, *least) < 0) least = position;
  }
  return least;
}

}  // namespace

Pipeline::Pipeline(DrillRun& run, std::string path, const Workload& workload)
    : run_(run),
      path_(std::move(path)),
      tables_(workload.tables()),
      ledger_(workload.ledger()),
      dir_(run.dir() / ("path-" + path_)) {
  std::filesystem::create_directories(dir_);
  config_ = dir_ / "binberg.toml";
}

void Pipeline::write_config(std::uint32_t server_id, const std::string& extra) {
  const lab::MariadbEndpoint& mariadb = run_.stack().mariadb();
  const std::filesystem::path password = dir_ / "cdc-password";
  {
    // Created 0600 before the secret is written: it is never readable by others, not even briefly.
    const int fd = ::open(password.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) fail("cannot create {}: {}", password.string(), std::strerror(errno));
    const std::string& secret = mariadb.replication_password;
    const bool written = ::write(fd, secret.data(), secret.size()) == static_cast<ssize_t>(secret.size());
    ::close(fd);
    if (!written) fail("cannot write {}", password.string());
  }
  std::string include;
  for (const std::string& table : tables_) {
    include += fmt::format("{}\"{}.{}\"", include.empty() ? "" : ", ", mariadb.database, table);
  }
  std::ofstream out(config_);
  out << fmt::format(R"([source]
host = "{}"
port = {}
user = "{}"
password_file = "{}"
server_id = {}

[capture]
include = [{}]

[iceberg]
catalog_uri = "sqlite:///{}"
warehouse = "{}"

[commit]
interval_ms = 200

[metrics]
address = "127.0.0.1:0"
{})",
                     mariadb.host, mariadb.port, mariadb.replication_user, password.string(), server_id, include,
                     (dir_ / "catalog.db").string(), (dir_ / "warehouse").string(), extra);
  if (!out) fail("cannot write {}", config_.string());
}

iceberg::Catalog& Pipeline::catalog() {
  if (!catalog_) {
    iceberg::CatalogOptions options;
    options.uri = "sqlite:///" + (dir_ / "catalog.db").string();
    options.warehouse = (dir_ / "warehouse").string();
    catalog_ = iceberg::open_catalog(options);
  }
  return *catalog_;
}

ProcessExit Pipeline::kill(const std::string& name) {
  lab::ChildProcess& process = run_.process(name);
  BINBERG_ASSERT(process.running(), "drill {}: {} is not running", run_.drill().name, name);
  const int status = process.stop(SIGKILL);
  return ProcessExit{name, status, unix_ms()};
}

ProcessExit Pipeline::wait_for_exit(const std::string& name, std::chrono::seconds timeout) {
  const std::optional<int> status = run_.process(name).wait_for_exit(timeout);
  if (!status) throw DrillAborted(fmt::format("{} did not exit within {} s", name, timeout.count()));
  return ProcessExit{name, *status, unix_ms()};
}

std::size_t Pipeline::committed_snapshots() {
  std::size_t snapshots = 0;
  for (const std::string& table : tables_) {
    const iceberg::TableIdentifier id{run_.stack().mariadb().database, changelog_of(table)};
    try {
      snapshots += catalog().load_table(id).metadata.snapshots.size();
    } catch (const iceberg::NoSuchTable&) {
      // not made yet
    }
  }
  return snapshots;
}

std::optional<mysql::BinlogPosition> Pipeline::committed_position(const std::string& table,
                                                                  std::int64_t& committed_at_ms) {
  iceberg::LoadedTable loaded;
  try {
    loaded = catalog().load_table(iceberg::TableIdentifier{run_.stack().mariadb().database, table});
  } catch (const iceberg::NoSuchTable&) {
    return std::nullopt;  // not made yet
  }
  const iceberg::Snapshot* snapshot = loaded.metadata.current_snapshot();
  if (snapshot == nullptr) return std::nullopt;
  std::optional<mysql::BinlogPosition> position;
  if (const auto claimed = capture::SourcePosition::from_summary(snapshot->summary)) position = claimed->binlog;
  if (!position) position = sink_position(snapshot->summary);
  if (position) committed_at_ms = snapshot->timestamp_ms;
  return position;
}

void Pipeline::start(const Environment& environment) {
  for (const std::string& name : processes()) start_process(name, environment);
}

std::int64_t Pipeline::wait_until_tables_contain(const mysql::BinlogPosition& position, std::chrono::seconds timeout) {
  return wait_until_table_contains(ledger_, position, timeout);
}

std::int64_t Pipeline::wait_until_table_contains(const std::string& table, const mysql::BinlogPosition& position,
                                                 std::chrono::seconds timeout) {
  std::int64_t committed_at_ms = 0;
  run_.wait_for(fmt::format("path {}'s table {} to reach {}", path_, table, position.to_string()), timeout, [&] {
    const auto committed = committed_position(table, committed_at_ms);
    return committed && capture::compare_binlog(*committed, position) >= 0;
  });
  return committed_at_ms;
}

void Pipeline::verify(const Workload& workload) {
  reconcile();
  check_history(workload);
  stop_cleanly();
}

void Pipeline::reconcile() {
  const auto started = unix_ms();
  const DrillRun::Finished finished = run_.run_to_end(
      "reconcile-" + path_,
      {"reconcile", "--config", config_.string(), "--json", "--wait", std::to_string(kReconcileWait.count())},
      kReconcileWait + std::chrono::seconds(120));
  const std::string name = "reconcile_path_" + lowercase_path();
  nlohmann::json report;
  try {
    report = nlohmann::json::parse(finished.output);
  } catch (const nlohmann::json::exception& error) {
    run_.check(
        Check::skipped(name, "equal", Comparison::kEqual,
                       fmt::format("reconcile exited {} without a JSON report ({}); see {}", finished.exit_status,
                                   error.what(), run_.log("reconcile-" + path_).string())));
    return;
  }
  std::string differences;
  for (const nlohmann::json& table : report.at("tables")) {
    nlohmann::json entry = {{"path", path_},
                            {"table", table.value("/source/table"_json_pointer, std::string())},
                            {"verdict", table.value("verdict", std::string())}};
    for (const char* part : {"source", "iceberg", "diff", "audit"}) {
      if (table.contains(part)) entry[part] = table[part];
    }
    if (entry["verdict"] != "equal") {
      differences += fmt::format("{}{}: {}", differences.empty() ? "" : "; ", entry["table"].get<std::string>(),
                                 table.dump().substr(0, 600));
    }
    run_.record().reconcile.push_back(std::move(entry));
  }
  const std::string verdict = report.at("verdict").get<std::string>();
  run_.mark(evidence::Phase::kVerify, fmt::format("binberg reconcile exit status {}", finished.exit_status),
            fmt::format("path {}: {}", path_, verdict), unix_ms());
  run_.check(Check::compare(name, verdict, Comparison::kEqual, "equal",
                            differences.empty() ? fmt::format("{} tables, {:.1f} s", report.at("tables").size(),
                                                              static_cast<double>(unix_ms() - started) / 1000)
                                                : differences));
}

void Pipeline::check_history(const Workload& workload) {
  const std::string& database = run_.stack().mariadb().database;
  try {
    const auto sums = verify::check_every_snapshot_sums_to(
        catalog(), iceberg::TableIdentifier{database, workload.ledger()}, "balance", workload.ledger_total());
    run_.check(history_check("ledger_sum_path_" + lowercase_path(), sums, 2,
                             fmt::format("sum(balance) = {} in each", workload.ledger_total())));
    std::vector<iceberg::TableIdentifier> changelogs;
    for (const std::string& table : tables_) changelogs.push_back({database, changelog_of(table)});
    const auto whole = verify::check_whole_transactions(catalog(), changelogs);
    run_.check(history_check("whole_transactions_path_" + lowercase_path(), whole, 2,
                             fmt::format("{} source transactions, each whole, once", whole.transactions_checked)));
  } catch (const Error& error) {
    run_.check(Check::skipped("snapshot_history_path_" + lowercase_path(), 0, Comparison::kEqual,
                              fmt::format("cannot read the tables' history: {}", error.what())));
  }
}

void Pipeline::stop_cleanly() {
  std::vector<ProcessExit> exits;
  for (const std::string& name : processes()) {
    lab::ChildProcess& process = run_.process(name);
    if (!process.running()) continue;
    process.send(SIGTERM);
    std::optional<int> status = process.wait_for_exit(std::chrono::seconds(60));
    if (!status) {  // it did not stop: that is the finding, after it is killed
      process.stop(SIGKILL);
      status = -SIGKILL;
    }
    exits.push_back(ProcessExit{name, *status, unix_ms()});
  }
  run_.check(clean_stop_check("clean_stop_path_" + lowercase_path(), exits));
}

PathA::PathA(DrillRun& run, const Workload& workload) : Pipeline(run, "A", workload) { write_config(5100, ""); }

void PathA::start_process(const std::string& name, const Environment& environment,
                          const std::vector<std::string>& extra_args) {
  BINBERG_ASSERT(name == "replicate", "path A has no process {}", name);
  std::vector<std::string> args = {"replicate", "--config", config().string()};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  run_.start(name, args, environment);
}

PathB::PathB(DrillRun& run, const Workload& workload) : Pipeline(run, "B", workload) {
  const std::string& prefix = run.prefix();
  std::string topics;
  for (const std::string& table : workload.tables()) {
    topics += fmt::format("{}\"{}.{}.{}\"", topics.empty() ? "" : ", ", prefix, run.stack().mariadb().database, table);
  }
  write_config(5200, fmt::format(R"(
[kafka]
bootstrap_servers = "{}"
topic_prefix = "{}"
partitions = 3
delivery = "exactly-once"
source_name = "{}"

[registry]
url = "{}"

[sink]
topics = [{}]
group_id = "{}-sink"
)",
                                 run.stack().kafka_bootstrap_servers(), prefix, prefix, run.stack().registry_url(),
                                 topics, prefix));
}

void PathB::start_process(const std::string& name, const Environment& environment,
                          const std::vector<std::string>& extra_args) {
  BINBERG_ASSERT(name == "source" || name == "sink", "path B has no process {}", name);
  const std::uintmax_t from = log_size(run_.log(name));
  std::vector<std::string> args = {name, "--config", config().string()};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  run_.start(name, args, environment);
  // The sink subscribes to the source's topics: they exist once the source streams.
  if (name == "source") {
    run_.wait_for("the source to stream", std::chrono::seconds(120),
                  [&] { return log_line_time(run_.log(name), "source: streaming", from).has_value(); });
  }
}

}  // namespace binberg::drill
