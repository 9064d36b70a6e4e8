#include "drill/workload.h"

#include <fmt/format.h>

#include "core/assert.h"
#include "core/error.h"
#include "lab/prng.h"
#include "lab/runner.h"
#include "lab/workload.h"

namespace binberg::drill {
namespace {

constexpr std::uint64_t kLoadRowsPerTransaction = 10'000;

lab::WorkloadOptions generator_options(const std::string& prefix, std::uint64_t seed) {
  lab::WorkloadOptions options;
  options.seed = seed;
  options.prefix = prefix;
  options.rows_per_statement = 4;
  options.large_every = 500;  // a large transaction now and then: many batches, spilled files
  options.large_rows = 2'000;
  return options;
}

}  // namespace

Workload::Workload(DrillRun& run, std::uint64_t initial_rows) : run_(run) {
  mysql::Connection connection = run_.admin();
  connection.execute(fmt::format("DROP TABLE IF EXISTS {}", ledger()));
  for (const std::string& statement : lab::create_tables_sql(run_.prefix())) connection.execute(statement);
  connection.execute(fmt::format("CREATE TABLE {} (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL)", ledger()));
  connection.execute(
      fmt::format("INSERT INTO {} SELECT seq, {} FROM seq_1_to_{}", ledger(), kOpeningBalance, kLedgerAccounts));
  lab::Generator generator(generator_options(run_.prefix(), run_.options().seed),
                           std::vector<lab::TableKeys>(lab::kTableCount));
  const lab::TransactionSink sink = lab::server_sink(connection);
  for (std::size_t table = 0; table < lab::kTableCount; ++table) {
    for (std::uint64_t done = 0; done < initial_rows;) {
      const std::uint64_t rows = std::min(kLoadRowsPerTransaction, initial_rows - done);
      sink(generator.bulk_insert(table, rows), {});
      done += rows;
    }
  }
}

Workload::~Workload() { stop(); }

std::vector<std::string> Workload::tables() const {
  return {run_.prefix() + "_accounts", run_.prefix() + "_orders", ledger()};
}

std::string Workload::ledger() const { return run_.prefix() + "_ledger"; }

void Workload::start(std::uint64_t events, std::chrono::seconds spread) {
  BINBERG_ASSERT(!running_.load(), "drill {}: a workload phase started while one runs", run_.drill().name);
  ++phases_;
  running_ = true;
  generating_ = true;
  stop_ = false;
  events_done_ = 0;
  transfers_done_ = 0;
  transfer_events_ = 0;
  generator_error_.clear();
  transfer_error_.clear();
  const std::uint64_t seed = run_.options().seed * 1'000 + phases_;
  const double rate = static_cast<double>(events) / static_cast<double>(std::max<std::int64_t>(1, spread.count()));
  generator_ = std::thread([this, events, rate, seed] { run_generator(events, rate, seed); });
  transfers_ = std::thread([this, seed] { run_transfers(seed); });
}

void Workload::run_generator(std::uint64_t events, double rate, std::uint64_t seed) {
  try {
    mysql::Connection connection = run_.admin();
    lab::Generator generator(generator_options(run_.prefix(), seed), lab::load_keys(connection, run_.prefix()));
    const lab::TransactionSink commit = lab::server_sink(connection);
    lab::RunLimits limits;
    limits.events = events;
    limits.rate = rate;
    limits.progress = std::chrono::hours(1);  // the drill prints its own progress
    limits.stop = [this] { return stop_.load(); };
    lab::run_workload(generator, limits, [&](const lab::Transaction& txn, const std::string& text) {
      commit(txn, text);
      events_done_ += txn.events.total();
    });
  } catch (const std::exception& error) {
    generator_error_ = error.what();
    stop_ = true;  // the source is gone: so are the transfers' chances
  }
  generating_ = false;
}

void Workload::run_transfers(std::uint64_t seed) {
  try {
    mysql::Connection connection = run_.admin();
    lab::Prng random(seed ^ 0x7472616e73666572ULL);
    while (!stop_.load()) {
      const auto accounts = random.between(2, 6);
      std::int64_t balance = 0;
      std::uint64_t changed = 0;
      connection.execute("START TRANSACTION");
      for (std::int64_t i = 0; i < accounts; ++i) {
        const std::int64_t id = random.between(1, kLedgerAccounts);
        // The last account takes what the others gave: every transaction sums to zero.
        const std::int64_t amount = i + 1 < accounts ? random.between(-500, 500) : -balance;
        balance += amount;
        connection.execute(fmt::format("UPDATE {} SET balance = balance + {} WHERE id = {}", ledger(), amount, id));
        changed += amount != 0 ? 1 : 0;
      }
      connection.execute("COMMIT");
      ++transfers_done_;
      transfer_events_ += changed;
    }
  } catch (const std::exception& error) {
    transfer_error_ = error.what();
  }
}

PhaseResult Workload::finish() {
  if (generator_.joinable()) generator_.join();
  stop_ = true;
  if (transfers_.joinable()) transfers_.join();
  running_ = false;
  PhaseResult result{events_done_.load(), transfers_done_.load(), transfer_events_.load(), generator_error_};
  if (result.error.empty()) result.error = transfer_error_;
  return result;
}

PhaseResult Workload::stop() {
  stop_ = true;
  return finish();
}

}  // namespace binberg::drill
