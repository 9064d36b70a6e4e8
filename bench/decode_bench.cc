// Row-decode throughput from a recorded binlog. Writes ROWS rows (a mix of integer, decimal,
// varchar, datetime and text columns) into the stack's MariaDB, records the resulting binlog
// events in memory, then times binberg's row decoder alone on one thread (no network), and the
// whole source path (stream + decode + transaction assembly) once.
//
//   bench/decode_bench [--dir SERVICES_DIR] [--rows N] [--repeat K]

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "lab/endpoints.h"
#include "mysql/binlog_stream.h"
#include "mysql/connection.h"
#include "mysql/transaction_reader.h"

using namespace binberg;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

int main(int argc, char** argv) {
  std::string dir = lab::default_dir();
  long rows = 200000, repeat = 10;
  CLI::App app("Row-decode throughput from a recorded binlog");
  app.add_option("--dir", dir, "the service stack's folder")->capture_default_str();
  app.add_option("--rows", rows, "rows to write and decode")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--repeat", repeat, "decode passes")->capture_default_str()->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  try {
    const auto endpoints = lab::load(dir);
    const auto& maria = endpoints.mariadb();
    auto db = mysql::Connection::open(lab::mariadb_options(maria, lab::MariadbRole::kAdmin));
    db.execute("DROP TABLE IF EXISTS bench_decode");
    db.execute(
        "CREATE TABLE bench_decode (id BIGINT PRIMARY KEY, qty INT, price DECIMAL(12,2), sku VARCHAR(32), "
        "created DATETIME(6), note TEXT) DEFAULT CHARSET=utf8mb4");
    auto status = db.query("SHOW MASTER STATUS");
    const mysql::BinlogPosition start{*status.rows[0][0], std::stoull(*status.rows[0][1])};
    const long batch = 1000;
    for (long first = 0; first < rows; first += batch) {
      std::string sql = "INSERT INTO bench_decode VALUES ";
      for (long id = first; id < std::min(rows, first + batch); ++id) {
        sql += fmt::format("{}({}, {}, {}.{:02}, 'SKU-{:08}', '2026-12-02 10:{:02}:{:02}.{:06}', 'note {}')",
                           id == first ? "" : ",", id, id % 1000, id % 100000, id % 100, id, id / 60 % 60, id % 60,
                           id % 1000000, id);
      }
      db.execute(sql);
    }

    mysql::StreamOptions stream_options;
    stream_options.connection = lab::mariadb_options(maria, lab::MariadbRole::kReplication);
    stream_options.server_id = 9300;
    stream_options.start_position = start;
    stream_options.blocking = false;

    // Record the events once.
    auto charsets = mysql::CharsetNames::load(db);
    auto stream = mysql::BinlogStream::open(stream_options);
    std::optional<mysql::TableMap> table;
    std::vector<mysql::RowsEventData> events;
    std::size_t row_bytes = 0;
    while (auto event = stream.next()) {
      if (event->table_map && event->table_map->table == "bench_decode") {
        table = mysql::parse_table_map(*event->table_map, charsets);
      }
      if (event->rows && table && event->rows->table_id == table->table_id) {
        row_bytes += event->rows->rows.size();
        events.push_back(std::move(*event->rows));
      }
    }
    if (!table) throw Error("no TABLE_MAP for bench_decode in the recorded binlog");

    mysql::RowDecoder decoder;
    std::size_t decoded = 0;
    const auto decode_start = Clock::now();
    for (long r = 0; r < repeat; ++r) {
      for (const auto& event : events) decoded += decoder.decode(*table, event, "bench").size();
    }
    const double decode_seconds = seconds_since(decode_start);

    const auto source_start = Clock::now();
    mysql::TransactionReader reader(stream_options, charsets);
    std::size_t source_rows = 0;
    while (auto txn = reader.next()) source_rows += txn->events.size();
    const double source_seconds = seconds_since(source_start);

    fmt::print("decode_bench: {} rows in {} rows events ({:.1f} MB of row data), 6 columns\n", rows, events.size(),
               row_bytes / 1e6);
    fmt::print("decode only (1 thread, {} passes): {:.0f} rows/s, {:.1f} MB/s\n", repeat, decoded / decode_seconds,
               row_bytes * repeat / decode_seconds / 1e6);
    fmt::print("source path (stream+decode+transactions over loopback): {:.0f} rows/s ({} rows)\n",
               source_rows / source_seconds, source_rows);
    db.execute("DROP TABLE bench_decode");
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "decode_bench: {}\n", e.what());
    return 1;
  }
}
