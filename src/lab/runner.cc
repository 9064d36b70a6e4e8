#include "lab/runner.h"

#include <fmt/format.h>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <fstream>
#include <memory>
#include <thread>

#include "core/clock.h"
#include "core/error.h"

namespace binberg::lab {
namespace {

using Clock = std::chrono::steady_clock;

class Sha256 {
 public:
  Sha256() : context_(EVP_MD_CTX_new(), &EVP_MD_CTX_free) {
    if (!context_ || EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr) != 1) fail("SHA-256: init failed");
  }
  void update(const std::string& data) { EVP_DigestUpdate(context_.get(), data.data(), data.size()); }
  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned length = 0;
    EVP_DigestFinal_ex(context_.get(), digest, &length);
    std::string out;
    for (unsigned i = 0; i < length; ++i) out += fmt::format("{:02x}", digest[i]);
    return out;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context_;
};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

std::string transaction_text(const Transaction& txn) {
  std::string text = "START TRANSACTION;\n";
  for (const std::string& statement : txn.statements) text += statement + ";\n";
  return text + "COMMIT;\n";
}

RunSummary run_workload(Generator& generator, const RunLimits& limits, const TransactionSink& sink) {
  RunSummary summary;
  Sha256 digest;
  const auto started = Clock::now();
  auto last_progress = started;
  while (!limits.stop()) {
    if (limits.transactions != 0 && summary.transactions >= limits.transactions) break;
    if (limits.events != 0 && summary.events.total() >= limits.events) break;
    const Transaction txn = generator.next();
    const std::string text = transaction_text(txn);
    sink(txn, text);
    digest.update(text);
    ++summary.transactions;
    summary.statements += txn.statements.size();
    if (txn.schema_change) ++summary.schema_changes;
    summary.events += txn.events;
    if (limits.rate > 0) {
      const auto due = started + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                                     static_cast<double>(summary.events.total()) / limits.rate));
      std::this_thread::sleep_until(due);
    }
    if (Clock::now() - last_progress >= limits.progress) {
      const double elapsed = seconds_since(started);
      spdlog::info("gen: {} transactions, {} row events in {:.1f} s ({:.0f} events/s)", summary.transactions,
                   summary.events.total(), elapsed, static_cast<double>(summary.events.total()) / elapsed);
      last_progress = Clock::now();
    }
  }
  summary.seconds = seconds_since(started);
  summary.plan_digest = digest.hex();
  return summary;
}

std::vector<TableKeys> load_keys(mysql::Connection& connection, const std::string& prefix) {
  std::vector<TableKeys> keys(kTableCount);
  for (std::size_t table = 0; table < kTableCount; ++table) {
    const std::string name = prefix + kTableSuffixes[table];
    for (const mysql::Row& row : connection.query(fmt::format("SELECT id FROM {} ORDER BY id", name)).rows) {
      keys[table].live.push_back(std::stoll(row.at(0).value()));
    }
    if (!keys[table].live.empty()) keys[table].next_id = keys[table].live.back() + 1;
  }
  return keys;
}

TransactionSink server_sink(mysql::Connection& connection, const std::string& commit_log) {
  // TIMESTAMP values are written in UTC, so they mean the same instant on every server.
  connection.execute("SET time_zone = '+00:00'");
  std::shared_ptr<std::ofstream> log;
  if (!commit_log.empty()) {
    log = std::make_shared<std::ofstream>(commit_log, std::ios::app);
    if (!*log) fail("gen: cannot open the commit log {}", commit_log);
  }
  return [&connection, log](const Transaction& txn, const std::string&) {
    connection.execute("START TRANSACTION");
    for (const std::string& statement : txn.statements) connection.execute(statement);
    connection.execute("COMMIT");
    if (log) {
      const auto committed =
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
              .count();
      const std::string gtid = connection.scalar("SELECT @@last_gtid").value_or("");
      *log << gtid << ' ' << committed << ' ' << txn.events.total() << '\n';
      log->flush();
    }
  };
}

}  // namespace binberg::lab
