#pragma once

// How the SQL catalog lives through its database going away for a while: a PostgreSQL restart, a
// backend terminated by an administrator, a network cut, or (SQLite) another process holding the
// database lock. A statement that failed is classified (classify_postgres_failure,
// classify_sqlite_failure): a lost connection is reopened, a busy database waited for, both with
// a bounded exponential backoff (100 ms doubling to 5 s), until the call succeeds or its retry
// budget (CatalogOptions::retry_timeout) runs out (CatalogUnavailable); any other failure is the
// caller's at once. One warning per outage names the catalog (never its credentials), and one
// line says when it answers again.
//
// What may run again: every catalog call is a read, or one SQL transaction that the database
// rolled back when the connection went (nothing committed), except when the connection went
// during the COMMIT itself: then the commit may have landed. That attempt is marked
// (CatalogAttempt::after_unknown_commit) and the next one first reads what the database holds to
// decide (SqlCatalog::commit: every table at its new metadata = landed, at its old one = run
// again, which the compare-and-swap keeps from applying twice).

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/backoff.h"
#include "core/clock.h"
#include "core/error.h"
#include "iceberg/catalog.h"

namespace binberg::iceberg {

class SqlConnection;

// What the catalog does after a statement failed.
enum class FailureKind {
  kReconnect,  // the connection is gone: reopen it, then run the call again
  kRetry,      // the database is busy (a lock, a deadlock victim): run the call again on the same connection
  kFatal,      // the statement itself failed (bad SQL, a constraint, a permission): the caller's error
};

enum class ConnectionHealth { kOk, kBad };  // PQstatus: CONNECTION_OK or not

// HEALTH after the failure, and the SQLSTATE the server sent (empty when none came: the
// connection broke before an answer).
FailureKind classify_postgres_failure(ConnectionHealth health, std::string_view sqlstate);
// An SQLite result code (extended codes are reduced to their primary code).
FailureKind classify_sqlite_failure(int result_code);

// Thrown by a SqlConnection for kReconnect and kRetry failures (the catalog retries them).
class ConnectionLost : public ConnectionError {
 public:
  using ConnectionError::ConnectionError;
};
class DatabaseBusy : public ConnectionError {
 public:
  using ConnectionError::ConnectionError;
};

// A catalog call is retried after 100 ms, 200 ms, 400 ms, ... up to 5 s (core/backoff.h).
inline constexpr std::chrono::milliseconds kCatalogFirstRetry{100};

// What one attempt of a catalog call knows about the attempts before it.
struct CatalogAttempt {
  int number = 1;
  // The previous attempt lost its connection while COMMIT was on its way: it may have landed.
  bool after_unknown_commit = false;
};

// Runs the calls of one catalog on one connection, reconnecting and retrying as above.
class CatalogRetry {
 public:
  // Waits on TIME (a test's or a simulation's moves only when slept on).
  CatalogRetry(SqlConnection& db, std::chrono::milliseconds budget, TimeSource& time = system_time());

  // Runs CALL (given the attempt) until it returns; rethrows what it throws except ConnectionLost
  // and DatabaseBusy, which are retried until BUDGET is spent (then CatalogUnavailable naming WHAT).
  void run(std::string_view what, const std::function<void(CatalogAttempt&)>& call);
  // Commits TRANSACTION_COMMIT (the caller's COMMIT) for ATTEMPT: a lost connection then marks the
  // next attempt as after_unknown_commit.
  static void commit(CatalogAttempt& attempt, const std::function<void()>& transaction_commit);

  bool in_outage() const { return outage_since_.has_value(); }

 private:
  // KIND: kReconnect (the connection is gone) or kRetry (the database is busy).
  void lost(const ConnectionError& error, FailureKind kind);

  SqlConnection& db_;
  std::chrono::milliseconds budget_;
  TimeSource& clock_;
  bool reconnect_ = false;  // the connection is gone: reopen before the next attempt
  std::optional<std::chrono::steady_clock::time_point> outage_since_;
  int outage_attempts_ = 0;
};

}  // namespace binberg::iceberg
