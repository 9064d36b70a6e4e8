#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <memory>

#include "core/error.h"
#include "iceberg/catalog_retry.h"
#include "iceberg/sql_connection.h"

namespace binberg::iceberg {
namespace {

class SqliteConnection : public SqlConnection {
 public:
  SqliteConnection(sqlite3* db, std::string description) : db_(db), description_(std::move(description)) {}
  ~SqliteConnection() override { sqlite3_close_v2(db_); }
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  std::vector<SqlRow> query(const std::string& sql, const std::vector<SqlValue>& parameters) override {
    std::vector<SqlRow> rows;
    run(sql, parameters, &rows);
    return rows;
  }

  std::int64_t execute(const std::string& sql, const std::vector<SqlValue>& parameters) override {
    run(sql, parameters, nullptr);
    return sqlite3_changes64(db_);
  }

  void begin_write() override { run("BEGIN IMMEDIATE", {}, nullptr); }
  void commit() override { run("COMMIT", {}, nullptr); }
  void rollback() noexcept override { sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr); }
  void reconnect() override {}  // a file: a busy database is waited for on the same handle
  const std::string& description() const override { return description_; }

 private:
  [[noreturn]] void error(const std::string& sql) const {
    const int code = sqlite3_errcode(db_);
    const std::string message =
        fmt::format("catalog {}: {} (in: {})", description_, sqlite3_errmsg(db_), sql.substr(0, 120));
    if (classify_sqlite_failure(code) == FailureKind::kRetry) throw DatabaseBusy(message);
    if (code == SQLITE_CANTOPEN || code == SQLITE_IOERR) throw ConnectionError(message);
    throw Error(message);
  }

  void run(const std::string& sql, const std::vector<SqlValue>& parameters, std::vector<SqlRow>* rows) {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &raw, nullptr) != SQLITE_OK) error(sql);
    const std::unique_ptr<sqlite3_stmt, decltype(&sqlite3_finalize)> statement(raw, &sqlite3_finalize);
    for (std::size_t i = 0; i < parameters.size(); ++i) {
      const int index = static_cast<int>(i + 1);
      const int result = parameters[i] ? sqlite3_bind_text(raw, index, parameters[i]->data(),
                                                           static_cast<int>(parameters[i]->size()), SQLITE_TRANSIENT)
                                       : sqlite3_bind_null(raw, index);
      if (result != SQLITE_OK) error(sql);
    }
    for (;;) {
      const int step = sqlite3_step(raw);
      if (step == SQLITE_DONE) return;
      if (step != SQLITE_ROW) error(sql);
      if (rows == nullptr) continue;
      SqlRow row;
      for (int c = 0; c < sqlite3_column_count(raw); ++c) {
        if (sqlite3_column_type(raw, c) == SQLITE_NULL) {
          row.emplace_back(std::nullopt);
        } else {
          const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(raw, c));
          row.emplace_back(std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(raw, c))));
        }
      }
      rows->push_back(std::move(row));
    }
  }

  sqlite3* db_;
  std::string description_;
};

}  // namespace

std::unique_ptr<SqlConnection> open_sqlite(const std::string& uri, CatalogDurability durability) {
  constexpr std::string_view kPrefix = "sqlite:///";
  if (!uri.starts_with(kPrefix) || uri.size() <= kPrefix.size() || uri[kPrefix.size()] != '/') {
    throw ConfigError(
        fmt::format("catalog uri {}: expected sqlite:/// followed by an absolute path "
                    "(four slashes, e.g. sqlite:////var/lib/binberg/catalog.db)",
                    uri));
  }
  const std::string path = uri.substr(kPrefix.size());
  // Create the file ourselves so it is private to its owner whatever the umask.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) throw ConnectionError(fmt::format("catalog {}: cannot open or create the file", uri));
  ::close(fd);
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK) {
    const std::string message = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close_v2(db);
    throw ConnectionError(fmt::format("catalog {}: {}", uri, message));
  }
  // Other processes (another binberg, pyiceberg) hold the lock briefly; wait rather than fail. A
  // lock held longer is DatabaseBusy, which the catalog retries with backoff (catalog_retry.h).
  sqlite3_busy_timeout(db, 5'000);
  std::unique_ptr<SqlConnection> connection = std::make_unique<SqliteConnection>(db, uri);
  // The journal mode is the database's (WAL persists in the file); synchronous is the session's.
  connection->execute("PRAGMA synchronous = EXTRA");
  const auto setting = [&](const char* pragma) { return connection->query(pragma).at(0).at(0).value_or(""); };
  require_durable(uri, sqlite_durability_problems(setting("PRAGMA journal_mode"), setting("PRAGMA synchronous")),
                  durability);
  return connection;
}

}  // namespace binberg::iceberg
