// `binberg gen`: the deterministic workload generator (docs/workload.md). Creates the generator's
// tables if asked, loads initial rows, then runs transactions against the source until a limit,
// paced to a rate if asked, and prints a JSON summary (counts, rate, plan digest, the server's
// GTID position after the last commit). With --dry-run it prints the SQL instead of running it.

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/error.h"
#include "core/secret.h"
#include "lab/runner.h"
#include "mysql/connection.h"

namespace binberg::cli {
namespace {

std::atomic<bool> stop_requested{false};

void request_stop(int) { stop_requested.store(true); }

struct GenArgs {
  mysql::ConnectionOptions server;
  std::string password_env, password_file;
  lab::WorkloadOptions workload;
  lab::RunLimits limits;
  std::string mix = "60:30:10";
  std::uint64_t initial_rows = 0;
  std::string commit_log;
  bool create = false;
  bool dry_run = false;
};

lab::Mix parse_mix(const std::string& text) {
  unsigned insert = 0, update = 0, remove = 0;
  char colon1 = 0, colon2 = 0;
  std::istringstream in(text);
  if (!(in >> insert >> colon1 >> update >> colon2 >> remove) || colon1 != ':' || colon2 != ':' || !in.eof()) {
    throw ConfigError(fmt::format("--mix {}: expected INSERT:UPDATE:DELETE weights, e.g. 60:30:10", text));
  }
  return lab::Mix{insert, update, remove};
}

nlohmann::json summary_json(const GenArgs& args, const lab::RunSummary& summary, std::uint64_t loaded_rows) {
  const auto& events = summary.events;
  return {
      {"seed", args.workload.seed},
      {"prefix", args.workload.prefix},
      {"loaded_rows", loaded_rows},
      {"transactions", summary.transactions},
      {"statements", summary.statements},
      {"schema_changes", summary.schema_changes},
      {"events",
       {{"insert", events.inserts}, {"update", events.updates}, {"delete", events.deletes}, {"total", events.total()}}},
      {"seconds", summary.seconds},
      {"events_per_second", summary.seconds > 0 ? static_cast<double>(events.total()) / summary.seconds : 0.0},
      {"plan_digest", summary.plan_digest},
  };
}

int run_gen(GenArgs args) {
  args.workload.mix = parse_mix(args.mix);
  std::signal(SIGTERM, request_stop);
  std::signal(SIGINT, request_stop);
  args.limits.stop = [] { return stop_requested.load(); };
  if (args.limits.transactions == 0 && args.limits.events == 0) {
    throw ConfigError("gen: give --transactions or --events (or both: whichever comes first)");
  }

  if (args.dry_run) {
    lab::Generator generator(args.workload, std::vector<lab::TableKeys>(lab::kTableCount));
    const lab::TransactionSink print = [](const lab::Transaction&, const std::string& text) { std::cout << text; };
    for (std::size_t table = 0; table < lab::kTableCount && args.initial_rows > 0; ++table) {
      std::cout << lab::transaction_text(generator.bulk_insert(table, args.initial_rows));
    }
    const lab::RunSummary summary = lab::run_workload(generator, args.limits, print);
    std::cerr << summary_json(args, summary, args.initial_rows * lab::kTableCount).dump() << "\n";
    return 0;
  }

  if (args.server.user.empty()) throw ConfigError("gen: --user is required (or use --dry-run)");
  if (args.server.database.empty()) throw ConfigError("gen: --database is required (or use --dry-run)");
  if (!args.password_env.empty() && !args.password_file.empty()) {
    throw ConfigError("gen: give --password-env or --password-file, not both");
  }
  if (!args.password_env.empty()) args.server.password = secret_from_env(args.password_env);
  if (!args.password_file.empty()) args.server.password = secret_from_file(args.password_file);
  mysql::Connection connection = mysql::Connection::open(args.server);
  if (args.create) {
    spdlog::info("gen: creating {}_accounts and {}_orders in {}", args.workload.prefix, args.workload.prefix,
                 args.server.database);
    for (const std::string& statement : lab::create_tables_sql(args.workload.prefix)) {
      connection.execute(statement);
    }
  }
  lab::Generator generator(args.workload, lab::load_keys(connection, args.workload.prefix));
  const lab::TransactionSink sink = lab::server_sink(connection, args.commit_log);
  std::uint64_t loaded_rows = 0;
  constexpr std::uint64_t kLoadRowsPerTransaction = 10'000;
  for (std::size_t table = 0; table < lab::kTableCount; ++table) {
    for (std::uint64_t done = 0; done < args.initial_rows && !stop_requested.load();) {
      const std::uint64_t rows = std::min(kLoadRowsPerTransaction, args.initial_rows - done);
      const lab::Transaction txn = generator.bulk_insert(table, rows);
      sink(txn, {});
      done += rows;
      loaded_rows += rows;
    }
  }
  if (loaded_rows > 0) spdlog::info("gen: loaded {} rows", loaded_rows);
  const lab::RunSummary summary = lab::run_workload(generator, args.limits, sink);
  nlohmann::json json = summary_json(args, summary, loaded_rows);
  // The GTID of this session's last transaction (what a reader of the tables waits for), and the
  // server's whole position after it.
  json["last_gtid"] = connection.scalar("SELECT @@last_gtid").value_or("");
  json["gtid_binlog_pos"] = connection.scalar("SELECT @@gtid_binlog_pos").value_or("");
  std::cout << json.dump(2) << "\n";
  return 0;
}

}  // namespace

Command add_gen_command(CLI::App& app) {
  auto* command = app.add_subcommand("gen", "Run a deterministic workload against MySQL/MariaDB (docs/workload.md)");
  auto args = std::make_shared<GenArgs>();
  auto& server = args->server;
  command->add_option("--host", server.host, "server address")->capture_default_str();
  command->add_option("--port", server.port, "server port")->capture_default_str();
  command->add_option("--user", server.user, "user with CREATE, INSERT, UPDATE, DELETE on the database");
  command->add_option("--password-env", args->password_env, "environment variable holding the password");
  command->add_option("--password-file", args->password_file, "file holding the password (mode 600)");
  command->add_option("--database", server.database, "database of the generator's tables");
  auto& workload = args->workload;
  command->add_option("--prefix", workload.prefix, "table name prefix: <prefix>_accounts, <prefix>_orders")
      ->capture_default_str();
  command->add_option("--seed", workload.seed, "PRNG seed")->capture_default_str();
  command->add_option("--transactions", args->limits.transactions, "stop after this many transactions");
  command->add_option("--events", args->limits.events,
                      "stop at the first transaction boundary at this many row events");
  command->add_option("--rate", args->limits.rate, "row events per second (0: as fast as the server goes)")
      ->capture_default_str();
  command->add_option("--mix", args->mix, "insert:update:delete weights")->capture_default_str();
  command->add_option("--statements", workload.max_statements, "statements per transaction, at most")
      ->capture_default_str();
  command->add_option("--rows-per-statement", workload.rows_per_statement, "rows per INSERT/UPDATE/DELETE, at most")
      ->capture_default_str();
  command->add_option("--multi-table-share", workload.multi_table_share, "share of transactions over several tables")
      ->capture_default_str();
  command->add_option("--hot-keys", workload.hot_keys, "size of each table's hot key set")->capture_default_str();
  command->add_option("--hot-share", workload.hot_share, "share of updates/deletes that hit the hot set")
      ->capture_default_str();
  command->add_option("--key-change-share", workload.key_change_share, "share of updates that change the key")
      ->capture_default_str();
  command
      ->add_option("--large-every", workload.large_every, "every Nth transaction inserts --large-rows rows (0: never)")
      ->capture_default_str();
  command->add_option("--large-rows", workload.large_rows, "rows of a large transaction")->capture_default_str();
  command
      ->add_option("--ddl-every", workload.ddl_every,
                   "every Nth transaction is a schema change: ADD COLUMN (nullable, or NOT NULL with a DEFAULT) or "
                   "widening INT to BIGINT (0: never)")
      ->capture_default_str();
  command->add_option("--initial-rows", args->initial_rows, "rows loaded into each table before the workload")
      ->capture_default_str();
  command->add_option("--commit-log", args->commit_log, "append '<gtid> <commit unix µs> <events>' per transaction");
  command->add_flag("--create", args->create, "drop and create the generator's tables first");
  command->add_flag("--dry-run", args->dry_run, "print the SQL (from empty tables) instead of running it");
  return Command{command, [args] { return run_gen(*args); }};
}

}  // namespace binberg::cli
