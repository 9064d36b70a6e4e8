#pragma once

// The small SQL surface the catalog needs, over SQLite and PostgreSQL: parameterized statements
// written with '?' placeholders, text parameters and results, explicit transactions.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iceberg/catalog.h"

namespace binberg::iceberg {

using SqlValue = std::optional<std::string>;
using SqlRow = std::vector<SqlValue>;

// A failed statement throws ConnectionLost (reconnect) or DatabaseBusy (retry) as
// catalog_retry.h classifies it, else Error (ConnectionError for SQLite files that cannot be
// opened or written).
class SqlConnection {
 public:
  virtual ~SqlConnection() = default;
  // Runs SQL with PARAMETERS bound to its '?' placeholders; returns its rows (if any).
  virtual std::vector<SqlRow> query(const std::string& sql, const std::vector<SqlValue>& parameters = {}) = 0;
  // Runs SQL and returns how many rows it changed.
  virtual std::int64_t execute(const std::string& sql, const std::vector<SqlValue>& parameters = {}) = 0;
  // Starts a transaction that takes the write lock at once (SQLite BEGIN IMMEDIATE), so two
  // writers serialize instead of failing at commit.
  virtual void begin_write() = 0;
  virtual void commit() = 0;
  virtual void rollback() noexcept = 0;
  // Reopens a connection that broke (ConnectionLost), with the session settings open_* made;
  // throws ConnectionLost while the database cannot be reached. SQLite: nothing to reopen.
  virtual void reconnect() = 0;
  // "sqlite:///..." or "postgresql://host:port/db", for messages (no password).
  virtual const std::string& description() const = 0;
};

// What a catalog commit relies on: once the database acknowledged COMMIT, the transaction survives
// a crash of the process, the database server or the machine. Each open function sets what a
// session can set and checks the rest:
//   - SQLite: a rollback journal or WAL (never journal_mode OFF or MEMORY) and synchronous = EXTRA:
//     FULL syncs the journal and the database, EXTRA also the directory after the journal's
//     removal, which is the commit point in rollback-journal mode (in WAL mode EXTRA is FULL);
//   - PostgreSQL: fsync = on and full_page_writes = on (server settings: a crash could otherwise
//     lose or tear committed transactions), and synchronous_commit not off (set to on for the
//     session when it is off; every other value flushes the commit locally before acknowledging it).
// A setting that breaks this is a ConfigError naming it and how to fix it, unless DURABILITY is
// kNotRequired: then a warning names it.

// Why SQLite with JOURNAL_MODE and SYNCHRONOUS (PRAGMA values: "delete", 3) is not durable; empty if it is.
std::vector<std::string> sqlite_durability_problems(const std::string& journal_mode, const std::string& synchronous);
// Why a PostgreSQL server reporting SETTINGS (SHOW fsync, full_page_writes, synchronous_commit) is
// not durable; empty if it is.
std::vector<std::string> postgres_durability_problems(const std::map<std::string, std::string>& settings);
// Throws ConfigError naming catalog DESCRIPTION and PROBLEMS, or logs them as a warning when
// DURABILITY is kNotRequired. Nothing when PROBLEMS is empty.
void require_durable(const std::string& description, const std::vector<std::string>& problems,
                     CatalogDurability durability);

// sqlite:///<absolute path> (the file is created with mode 0600 when missing).
std::unique_ptr<SqlConnection> open_sqlite(const std::string& uri, CatalogDurability durability);
// postgresql://... with OPTIONS' password, connection properties and durability.
std::unique_ptr<SqlConnection> open_postgres(const CatalogOptions& options);

}  // namespace binberg::iceberg
