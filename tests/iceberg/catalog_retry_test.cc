// How the SQL catalog classifies a failed statement (reconnect, retry, or the caller's error) and
// how it retries: a bounded exponential backoff, a budget per call, one warning per outage, and a
// commit whose answer was lost marked for the next attempt. On a fake connection and clock.

#include "iceberg/catalog_retry.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <sstream>
#include <vector>

#include "iceberg/sql_connection.h"

namespace binberg::iceberg {
namespace {

using std::chrono::milliseconds;

TEST(CatalogFailureTest, PostgresConnectionFailuresReconnectBusyOnesRetryTheRestAreTheCallers) {
  struct Case {
    ConnectionHealth health;
    const char* sqlstate;
    FailureKind kind;
  };
  const std::vector<Case> cases = {
      {ConnectionHealth::kBad, "", FailureKind::kReconnect},       // the server went without an answer
      {ConnectionHealth::kBad, "23505", FailureKind::kReconnect},  // whatever it said, the connection is gone
      {ConnectionHealth::kOk, "08006", FailureKind::kReconnect},   // connection_failure
      {ConnectionHealth::kOk, "08003", FailureKind::kReconnect},   // connection_does_not_exist
      {ConnectionHealth::kOk, "08001", FailureKind::kReconnect},   // sqlclient_unable_to_establish_sqlconnection
      {ConnectionHealth::kOk, "08P01", FailureKind::kReconnect},   // protocol_violation
      {ConnectionHealth::kOk, "57P01", FailureKind::kReconnect},   // admin_shutdown: pg_terminate_backend
      {ConnectionHealth::kOk, "57P02", FailureKind::kReconnect},   // crash_shutdown
      {ConnectionHealth::kOk, "57P03", FailureKind::kReconnect},   // cannot_connect_now: starting up
      {ConnectionHealth::kOk, "40001", FailureKind::kRetry},       // serialization_failure
      {ConnectionHealth::kOk, "40P01", FailureKind::kRetry},       // deadlock_detected
      {ConnectionHealth::kOk, "57014", FailureKind::kFatal},       // query_canceled
      {ConnectionHealth::kOk, "23505", FailureKind::kFatal},       // unique_violation
      {ConnectionHealth::kOk, "42P01", FailureKind::kFatal},       // undefined_table
      {ConnectionHealth::kOk, "42501", FailureKind::kFatal},       // insufficient_privilege
      {ConnectionHealth::kOk, "28P01", FailureKind::kFatal},       // invalid_password
      {ConnectionHealth::kOk, "", FailureKind::kFatal},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(classify_postgres_failure(c.health, c.sqlstate), c.kind)
        << "SQLSTATE '" << c.sqlstate << "' health " << static_cast<int>(c.health);
  }
}

TEST(CatalogFailureTest, SqliteBusyAndLockedRetryEverythingElseIsTheCallers) {
  EXPECT_EQ(classify_sqlite_failure(SQLITE_BUSY), FailureKind::kRetry);
  EXPECT_EQ(classify_sqlite_failure(SQLITE_LOCKED), FailureKind::kRetry);
  EXPECT_EQ(classify_sqlite_failure(SQLITE_BUSY_SNAPSHOT), FailureKind::kRetry);  // an extended code
  EXPECT_EQ(classify_sqlite_failure(SQLITE_LOCKED_SHAREDCACHE), FailureKind::kRetry);
  for (const int code :
       {SQLITE_ERROR, SQLITE_CONSTRAINT, SQLITE_IOERR, SQLITE_CORRUPT, SQLITE_CANTOPEN, SQLITE_FULL, SQLITE_READONLY}) {
    EXPECT_EQ(classify_sqlite_failure(code), FailureKind::kFatal) << sqlite3_errstr(code);
  }
}

TEST(CatalogBackoffTest, DoublesFromOneHundredMillisecondsUpToFiveSeconds) {
  Backoff backoff(kCatalogFirstRetry);
  std::vector<long long> delays;
  for (int i = 0; i < 9; ++i) delays.push_back(backoff.next().count());
  EXPECT_EQ(delays, (std::vector<long long>{100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000}));
}

class FakeConnection final : public SqlConnection {
 public:
  std::vector<SqlRow> query(const std::string&, const std::vector<SqlValue>&) override { return {}; }
  std::int64_t execute(const std::string&, const std::vector<SqlValue>&) override { return 0; }
  void begin_write() override {}
  void commit() override {}
  void rollback() noexcept override {}
  void reconnect() override {
    ++reconnects;
    if (failing_reconnects > 0) {
      --failing_reconnects;
      throw ConnectionLost("catalog fake: cannot reconnect");
    }
  }
  const std::string& description() const override { return description_; }

  int reconnects = 0, failing_reconnects = 0;

 private:
  std::string description_ = "postgresql://127.0.0.1:1/fake";
};

class FakeClock final : public TimeSource {
 public:
  std::chrono::steady_clock::time_point now() override { return now_; }
  std::int64_t unix_millis() override { return 0; }
  void sleep_for(milliseconds duration) override {
    slept.push_back(duration.count());
    now_ += duration;
  }
  std::vector<long long> slept;

 private:
  std::chrono::steady_clock::time_point now_{};
};

class CatalogRetryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    logger_ = spdlog::default_logger();
    auto capture = std::make_shared<spdlog::logger>("capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(log_));
    capture->set_level(spdlog::level::info);
    spdlog::set_default_logger(capture);
  }
  void TearDown() override { spdlog::set_default_logger(logger_); }

  std::size_t logged(const std::string& text) const {
    std::size_t count = 0;
    for (std::size_t at = log_.str().find(text); at != std::string::npos; at = log_.str().find(text, at + 1)) ++count;
    return count;
  }

  // A call that fails FAILURES times with E, then succeeds; returns how many attempts it made.
  template <typename E>
  int failing(int failures) {
    int attempts = 0;
    retry_.run("read", [&](CatalogAttempt& attempt) {
      EXPECT_EQ(attempt.number, ++attempts);
      if (attempts <= failures) throw E("catalog fake: gone");
    });
    return attempts;
  }

  std::ostringstream log_;
  std::shared_ptr<spdlog::logger> logger_;
  FakeConnection db_;
  FakeClock clock_;
  CatalogRetry retry_{db_, milliseconds(10'000), clock_};
};

TEST_F(CatalogRetryTest, ALostConnectionIsReopenedBeforeEachNextAttemptWithBackoff) {
  EXPECT_EQ(failing<ConnectionLost>(3), 4);
  EXPECT_EQ(db_.reconnects, 3);
  EXPECT_EQ(clock_.slept, (std::vector<long long>{100, 200, 400}));
  EXPECT_FALSE(retry_.in_outage());
}

TEST_F(CatalogRetryTest, ABusyDatabaseIsAskedAgainOnTheSameConnection) {
  EXPECT_EQ(failing<DatabaseBusy>(2), 3);
  EXPECT_EQ(db_.reconnects, 0);
  EXPECT_EQ(clock_.slept, (std::vector<long long>{100, 200}));
}

TEST_F(CatalogRetryTest, AnyOtherErrorIsTheCallersAtOnce) {
  EXPECT_THROW(failing<Error>(1), Error);
  EXPECT_THROW(failing<ConnectionError>(1), ConnectionError) << "a file that cannot be opened is not retried here";
  EXPECT_TRUE(clock_.slept.empty());
  EXPECT_EQ(db_.reconnects, 0);
}

TEST_F(CatalogRetryTest, ACallGivesUpWhenItsBudgetIsSpentAndTheNextOneReconnectsFirst) {
  CatalogRetry retry(db_, milliseconds(1'000), clock_);
  int attempts = 0;
  try {
    retry.run("commit", [&](CatalogAttempt&) {
      ++attempts;
      throw ConnectionLost("catalog fake: gone");
    });
    ADD_FAILURE() << "no CatalogUnavailable";
  } catch (const CatalogUnavailable& error) {
    EXPECT_EQ(std::string(error.what()),
              "catalog postgresql://127.0.0.1:1/fake: commit: no answer for 1000 ms (nothing was committed); "
              "reconnecting");
  }
  EXPECT_EQ(attempts, 4);  // after 100 + 200 + 400 ms; 800 more would pass the budget
  EXPECT_EQ(clock_.slept, (std::vector<long long>{100, 200, 400}));
  EXPECT_TRUE(retry.in_outage());
  db_.failing_reconnects = 1;  // still away at the next call's first attempt
  retry.run("read", [](CatalogAttempt&) {});
  EXPECT_EQ(db_.reconnects, 5);
  EXPECT_FALSE(retry.in_outage());
}

TEST_F(CatalogRetryTest, AnOutageIsLoggedOnceAndItsEndOnce) {
  CatalogRetry retry(db_, milliseconds(1'000), clock_);
  for (int call = 0; call < 3; ++call) {
    EXPECT_THROW(retry.run("read", [](CatalogAttempt&) { throw ConnectionLost("catalog fake: gone"); }),
                 CatalogUnavailable);
  }
  retry.run("read", [](CatalogAttempt&) {});
  EXPECT_EQ(logged("reconnecting with backoff"), 1u) << log_.str();
  EXPECT_EQ(logged("answers again after"), 1u) << log_.str();
  EXPECT_EQ(logged("password"), 0u);
  retry.run("read", [](CatalogAttempt&) {});
  EXPECT_EQ(logged("answers again after"), 1u) << "no outage, nothing logged";
}

TEST_F(CatalogRetryTest, ACommitWhoseAnswerWasLostMarksTheNextAttempt) {
  std::vector<bool> unknown;
  retry_.run("commit", [&](CatalogAttempt& attempt) {
    unknown.push_back(attempt.after_unknown_commit);
    if (attempt.number == 1) throw ConnectionLost("catalog fake: lost before COMMIT");  // rolled back
    if (attempt.number == 2) {
      CatalogRetry::commit(attempt, [] { throw ConnectionLost("catalog fake: lost during COMMIT"); });
    }
  });
  EXPECT_EQ(unknown, (std::vector<bool>{false, false, true}));
}

}  // namespace
}  // namespace binberg::iceberg
