#pragma once

// The small SQL surface the catalog needs, over SQLite and PostgreSQL: parameterized statements
// written with '?' placeholders, text parameters and results, explicit transactions.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iceberg/catalog.h"

namespace binberg::iceberg {

using SqlValue = std::optional<std::string>;
using SqlRow = std::vector<SqlValue>;

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
  // "sqlite:///..." or "postgresql://host:port/db", for messages (no password).
  virtual const std::string& description() const = 0;
};

// sqlite:///<absolute path> (the file is created with mode 0600 when missing).
std::unique_ptr<SqlConnection> open_sqlite(const std::string& uri);
// postgresql://... with OPTIONS' password and connection properties.
std::unique_ptr<SqlConnection> open_postgres(const CatalogOptions& options);

}  // namespace binberg::iceberg
