// Initial-copy read throughput of mysql::TableSnapshot on the stack's MariaDB. Creates three tables
// of ROWS rows each (an INT key; a composite key led by an ENUM; no key), reads each whole in
// chunks of CHUNK rows as the initial copy does (keyset paging; --streamed: one streamed SELECT per
// table, as reconcile reads), and prints the rows read and rows/s. A count other than ROWS is a
// copy that lost or repeated rows. Prints figures; never asserts on time.
//
//   bench/snapshot_bench [--dir SERVICES_DIR] [--rows N] [--chunk-rows N] [--streamed] [--keep]
//
// --keep leaves the tables (and reuses tables of the right size), so a second run (another build)
// reads the same rows.

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdlib>
#include <string>

#include "lab/endpoints.h"
#include "mysql/connection.h"
#include "mysql/snapshot_reader.h"

using namespace binberg;
using Clock = std::chrono::steady_clock;

namespace {

struct BenchTable {
  const char* name;
  const char* definition;
  const char* rows;  // INSERT ... SELECT expressions over seq (0-based)
};

constexpr BenchTable kTables[] = {
    {"bench_snap_int", "id INT PRIMARY KEY, qty INT, sku VARCHAR(32), created DATETIME(6)",
     "seq, seq % 1000, CONCAT('SKU-', seq), TIMESTAMP'2026-01-01 00:00:00' + INTERVAL seq SECOND"},
    {"bench_snap_enum_int", "k ENUM('z','a','m','b') NOT NULL, id INT, qty INT, sku VARCHAR(32), PRIMARY KEY (k, id)",
     "1 + seq % 4, seq, seq % 1000, CONCAT('SKU-', seq)"},
    {"bench_snap_keyless", "id INT, qty INT, sku VARCHAR(32)", "seq % 1000, seq % 7, CONCAT('SKU-', seq % 5000)"},
};

void create(mysql::Connection& db, const BenchTable& table, long rows) {
  const auto existing = db.scalar(fmt::format(
      "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '{}'",
      table.name));
  if (existing == "1" && db.scalar(fmt::format("SELECT COUNT(*) FROM {}", table.name)) == std::to_string(rows)) return;
  db.execute(fmt::format("DROP TABLE IF EXISTS {}", table.name));
  db.execute(fmt::format("CREATE TABLE {} ({}) DEFAULT CHARSET=utf8mb4", table.name, table.definition));
  for (long first = 0; first < rows; first += 100'000) {
    db.execute(fmt::format("INSERT INTO {} SELECT {} FROM seq_{}_to_{}", table.name, table.rows, first,
                           std::min(rows, first + 100'000) - 1));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = lab::default_dir();
  long rows = 1'000'000, chunk_rows = 10'000;
  bool keep = false;
  bool streamed = false;
  CLI::App app("Initial-copy throughput per key type");
  app.add_option("--dir", dir, "the service stack's folder")->capture_default_str();
  app.add_option("--rows", rows, "rows per table")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--chunk-rows", chunk_rows, "rows per chunk")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_flag("--streamed", streamed, "stream every table instead of keyset paging");
  app.add_flag("--keep", keep, "leave the tables (and reuse tables of the right size)");
  CLI11_PARSE(app, argc, argv);
  const mysql::ReadMethod method = streamed ? mysql::ReadMethod::kStreamed : mysql::ReadMethod::kKeysetPaging;
  try {
    const auto endpoints = lab::load(dir);
    const auto& maria = endpoints.mariadb();
    auto db = mysql::Connection::open(lab::mariadb_options(maria, lab::MariadbRole::kAdmin));
    for (const BenchTable& table : kTables) {
      create(db, table, rows);
      const auto start = Clock::now();
      auto snapshot =
          mysql::TableSnapshot::open(lab::mariadb_options(maria, lab::MariadbRole::kReplication), maria.database,
                                     table.name, static_cast<std::size_t>(chunk_rows), method);
      std::uint64_t read = 0;
      for (auto chunk = snapshot.next_chunk(); !chunk.empty(); chunk = snapshot.next_chunk()) read += chunk.size();
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      fmt::print("snapshot_bench: {:<20} {} of {} rows in {:.1f} s: {:.0f} rows/s (chunks of {}, {})\n", table.name,
                 read, rows, seconds, static_cast<double>(read) / seconds, chunk_rows,
                 snapshot.paged(0) ? "keyset paging" : "streamed");
      if (!keep) db.execute(fmt::format("DROP TABLE {}", table.name));
    }
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "snapshot_bench: {}\n", e.what());
    return 1;
  }
}
