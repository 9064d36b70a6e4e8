#include "iceberg/catalog_retry.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <algorithm>

#include "core/assert.h"
#include "core/failpoint.h"
#include "iceberg/sql_connection.h"

namespace binberg::iceberg {

FailureKind classify_postgres_failure(ConnectionHealth health, std::string_view sqlstate) {
  if (health == ConnectionHealth::kBad) return FailureKind::kReconnect;
  // Class 08: connection exception; 57P01 admin_shutdown (pg_terminate_backend, a fast shutdown),
  // 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up, in recovery).
  if (sqlstate.starts_with("08") || sqlstate == "57P01" || sqlstate == "57P02" || sqlstate == "57P03") {
    return FailureKind::kReconnect;
  }
  // 40001 serialization_failure, 40P01 deadlock_detected: the server rolled the transaction back.
  if (sqlstate == "40001" || sqlstate == "40P01") return FailureKind::kRetry;
  return FailureKind::kFatal;
}

FailureKind classify_sqlite_failure(int result_code) {
  switch (result_code & 0xff) {
    case SQLITE_BUSY:    // another connection holds the lock past the busy timeout
    case SQLITE_LOCKED:  // a conflict inside a shared cache
      return FailureKind::kRetry;
    default:
      return FailureKind::kFatal;
  }
}

namespace {

long long millis(std::chrono::steady_clock::duration duration) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(duration).count();
}

}  // namespace

CatalogRetry::CatalogRetry(SqlConnection& db, std::chrono::milliseconds budget, TimeSource& time)
    : db_(db), budget_(budget), clock_(time) {}

void CatalogRetry::run(std::string_view what, const std::function<void(CatalogAttempt&)>& call) {
  const auto deadline = clock_.now() + budget_;
  Backoff backoff(kCatalogFirstRetry);
  CatalogAttempt attempt;
  for (;; ++attempt.number) {
    try {
      if (reconnect_) {
        db_.reconnect();
        reconnect_ = false;
      }
      // Tests and drills cut the connection here (docs/failpoints.md).
      try {
        failpoint::hit("iceberg.catalog.connection_lost");
      } catch (const failpoint::FailpointError& error) {
        throw ConnectionLost(fmt::format("catalog {}: {}", db_.description(), error.what()));
      }
      call(attempt);
      if (outage_since_) {
        spdlog::info("catalog {}: answers again after {} ms ({} attempts)", db_.description(),
                     millis(clock_.now() - *outage_since_), outage_attempts_);
        outage_since_.reset();
        outage_attempts_ = 0;
      }
      return;
    } catch (const ConnectionLost& error) {
      lost(error, FailureKind::kReconnect);
    } catch (const DatabaseBusy& error) {
      lost(error, FailureKind::kRetry);
    }
    const std::chrono::milliseconds delay = backoff.next();
    if (clock_.now() + delay > deadline) {
      throw CatalogUnavailable(fmt::format(
          "catalog {}: {}: no answer for {} ms ({}){}", db_.description(), what, budget_.count(),
          attempt.after_unknown_commit ? "the outcome of its last COMMIT is unknown; the tables say whether it landed"
                                       : "nothing was committed",
          reconnect_ ? "; reconnecting" : ""));
    }
    clock_.sleep_for(delay);
  }
}

void CatalogRetry::commit(CatalogAttempt& attempt, const std::function<void()>& transaction_commit) {
  try {
    transaction_commit();
    attempt.after_unknown_commit = false;
  } catch (const ConnectionError&) {
    // The COMMIT may have reached the server and its answer been lost (PostgreSQL), or may have
    // failed (SQLite busy): the next attempt reads the tables before doing anything.
    attempt.after_unknown_commit = true;
    throw;
  }
}

void CatalogRetry::lost(const ConnectionError& error, FailureKind kind) {
  const bool connection_gone = kind == FailureKind::kReconnect;
  reconnect_ = reconnect_ || connection_gone;
  ++outage_attempts_;
  if (outage_since_) {
    spdlog::debug("catalog {}: still unavailable: {}", db_.description(), error.what());
    return;
  }
  outage_since_ = clock_.now();
  // The message names host, port and database (SqlConnection::description), never a password.
  spdlog::warn("{}: {} with backoff ({} ms to {} ms) until it answers", error.what(),
               connection_gone ? "reconnecting" : "retrying", kCatalogFirstRetry.count(), Backoff::kMost.count());
  BINBERG_ASSERT(outage_attempts_ == 1, "catalog {}: an outage begins at its first failed attempt, not at {}",
                 db_.description(), outage_attempts_);
}

}  // namespace binberg::iceberg
