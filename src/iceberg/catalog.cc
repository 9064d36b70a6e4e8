#include "iceberg/catalog.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>

#include "core/assert.h"
#include "core/clock.h"
#include "core/failpoint.h"
#include "iceberg/catalog_retry.h"
#include "iceberg/metadata_file.h"
#include "iceberg/sql_connection.h"

namespace binberg::iceberg {
namespace {

// The SQL catalog: pyiceberg's SqlCatalog and Iceberg's JDBC catalog (schema V1) on one database.
// Every call runs through retry_ (catalog_retry.h): a lost connection is reopened and the call run
// again, as a whole — a read, or one transaction the database rolled back — and a transaction
// whose COMMIT went unanswered first asks the database whether it landed.
class SqlCatalog : public Catalog {
 public:
  SqlCatalog(std::unique_ptr<SqlConnection> connection, CatalogOptions options)
      : db_(std::move(connection)), options_(std::move(options)), retry_(*db_, options_.retry_timeout, *options_.time) {
    create_if_missing(
        "CREATE TABLE IF NOT EXISTS iceberg_tables (catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) "
        "NOT NULL, table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), previous_metadata_location "
        "VARCHAR(1000), iceberg_type VARCHAR(5), PRIMARY KEY (catalog_name, table_namespace, table_name))");
    upgrade_to_v1();
    create_if_missing(
        "CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (catalog_name VARCHAR(255) NOT NULL, namespace "
        "VARCHAR(255) NOT NULL, property_key VARCHAR(255) NOT NULL, property_value VARCHAR(1000) NOT NULL, PRIMARY "
        "KEY (catalog_name, namespace, property_key))");
  }

  void create_namespace(const std::string& ns, const std::map<std::string, std::string>& properties) override {
    check_name("namespace", ns);
    retry_.run("create namespace", [&](CatalogAttempt& attempt) {
      if (attempt.after_unknown_commit && namespace_exists(ns)) return;  // it landed
      Transaction transaction(*db_);
      if (namespace_exists(ns)) throw AlreadyExists(fmt::format("{}: namespace {} already exists", where(), ns));
      std::map<std::string, std::string> rows = properties;
      rows.emplace("exists", "true");  // pyiceberg's marker: a namespace is a property row
      for (const auto& [key, value] : rows) {
        db_->execute(
            "INSERT INTO iceberg_namespace_properties (catalog_name, namespace, property_key, property_value) VALUES "
            "(?, ?, ?, ?)",
            {options_.name, ns, key, value});
      }
      transaction.commit(attempt);
    });
  }

  std::vector<std::string> list_namespaces() override {
    std::vector<std::string> namespaces;
    retry_.run("list namespaces", [&](CatalogAttempt&) {
      namespaces.clear();
      for (const auto& row :
           db_->query("SELECT namespace FROM iceberg_namespace_properties WHERE catalog_name = ? UNION SELECT "
                      "table_namespace FROM iceberg_tables WHERE catalog_name = ? ORDER BY 1",
                      {options_.name, options_.name})) {
        namespaces.push_back(row[0].value_or(""));
      }
    });
    return namespaces;
  }

  std::map<std::string, std::string> namespace_properties(const std::string& ns) override {
    std::map<std::string, std::string> properties;
    retry_.run("namespace properties", [&](CatalogAttempt&) {
      if (!namespace_exists(ns)) throw NoSuchNamespace(fmt::format("{}: no namespace {}", where(), ns));
      properties.clear();
      for (const auto& row : db_->query(
               "SELECT property_key, property_value FROM iceberg_namespace_properties WHERE catalog_name = ? AND "
               "namespace = ?",
               {options_.name, ns})) {
        properties[row[0].value_or("")] = row[1].value_or("");
      }
    });
    return properties;
  }

  void drop_namespace(const std::string& ns) override {
    retry_.run("drop namespace", [&](CatalogAttempt& attempt) {
      if (attempt.after_unknown_commit && !namespace_exists(ns)) return;  // it landed
      Transaction transaction(*db_);
      if (!namespace_exists(ns)) throw NoSuchNamespace(fmt::format("{}: no namespace {}", where(), ns));
      const auto tables = db_->query(
          "SELECT COUNT(*) FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ?", {options_.name, ns});
      if (tables[0][0].value_or("0") != "0") {
        throw Error(fmt::format("{}: namespace {} still has {} tables", where(), ns, *tables[0][0]));
      }
      db_->execute("DELETE FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ?",
                   {options_.name, ns});
      transaction.commit(attempt);
    });
  }

  LoadedTable create_table(const TableIdentifier& id, const Schema& schema, const PartitionSpec& spec,
                           const SortOrder& order, const std::map<std::string, std::string>& properties) override {
    check_name("table", id.name);
    retry_.run("create table", [&](CatalogAttempt&) {
      if (!namespace_exists(id.namespace_name)) {
        throw NoSuchNamespace(
            fmt::format("{}: no namespace {} for table {}", where(), id.namespace_name, id.to_string()));
      }
      if (find_location(id)) throw AlreadyExists(fmt::format("{}: table {} already exists", where(), id.to_string()));
    });
    std::string warehouse = options_.warehouse;
    if (warehouse.empty()) throw ConfigError(fmt::format("{}: no warehouse set for new tables", where()));
    while (warehouse.size() > 1 && warehouse.back() == '/') warehouse.pop_back();
    const std::string location = fmt::format("{}/{}.db/{}", warehouse, id.namespace_name, id.name);
    TableMetadata metadata = TableMetadata::create(location, schema, spec, order, properties, unix_millis());
    const std::string metadata_location = write_metadata_file(metadata, 0);
    retry_.run("create table", [&](CatalogAttempt& attempt) {
      const auto existing = find_location(id);
      if (attempt.after_unknown_commit && existing == metadata_location) return;  // it landed
      if (existing) throw AlreadyExists(fmt::format("{}: table {} already exists", where(), id.to_string()));
      Transaction transaction(*db_);
      if (find_location(id)) throw AlreadyExists(fmt::format("{}: table {} already exists", where(), id.to_string()));
      db_->execute(
          "INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location, "
          "previous_metadata_location, iceberg_type) VALUES (?, ?, ?, ?, NULL, 'TABLE')",
          {options_.name, id.namespace_name, id.name, metadata_location});
      transaction.commit(attempt);
    });
    return LoadedTable{id, metadata_location, std::move(metadata)};
  }

  LoadedTable load_table(const TableIdentifier& id) override {
    const std::string location = metadata_location(id);
    return LoadedTable{id, location, read_metadata_file(location)};
  }

  std::string metadata_location(const TableIdentifier& id) override {
    std::optional<std::string> location;
    retry_.run("read the metadata location", [&](CatalogAttempt&) { location = find_location(id); });
    if (!location) throw NoSuchTable(fmt::format("{}: no table {}", where(), id.to_string()));
    return *location;
  }

  std::vector<TableIdentifier> list_tables(const std::string& ns) override {
    std::vector<TableIdentifier> tables;
    retry_.run("list tables", [&](CatalogAttempt&) {
      tables.clear();
      for (const auto& row :
           db_->query("SELECT table_name FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND "
                      "(iceberg_type = 'TABLE' OR iceberg_type IS NULL) ORDER BY table_name",
                      {options_.name, ns})) {
        tables.push_back(TableIdentifier{ns, row[0].value_or("")});
      }
    });
    return tables;
  }

  void drop_table(const TableIdentifier& id) override {
    retry_.run("drop table", [&](CatalogAttempt& attempt) {
      // One statement, its own transaction: a connection lost on it leaves its outcome unknown.
      attempt.after_unknown_commit = attempt.after_unknown_commit || attempt.number > 1;
      const std::int64_t dropped =
          db_->execute("DELETE FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?",
                       {options_.name, id.namespace_name, id.name});
      if (dropped == 0 && !attempt.after_unknown_commit) {
        throw NoSuchTable(fmt::format("{}: no table {}", where(), id.to_string()));
      }
    });
  }

  void commit(const std::vector<TableCommit>& commits) override {
    if (commits.empty()) return;
    failpoint::hit("iceberg.catalog.before_commit");
    retry_.run("commit", [&](CatalogAttempt& attempt) {
      if (attempt.after_unknown_commit && landed(commits)) return;
      Transaction transaction(*db_);
      for (const TableCommit& commit : commits) {
        const std::int64_t swapped = db_->execute(
            "UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? WHERE catalog_name = ? "
            "AND table_namespace = ? AND table_name = ? AND metadata_location = ?",
            {commit.new_metadata_location, commit.expected_metadata_location, options_.name, commit.id.namespace_name,
             commit.id.name, commit.expected_metadata_location});
        if (swapped != 1) {
          const auto current = find_location(commit.id);
          throw CommitConflict(fmt::format("{}: table {} moved on: it is at {}, the commit was built on {}", where(),
                                           commit.id.to_string(), current.value_or("(dropped)"),
                                           commit.expected_metadata_location));
        }
      }
      transaction.commit(attempt);
      try {
        failpoint::hit("iceberg.catalog.commit_reply_lost");  // tests and drills: COMMIT done, its answer lost
      } catch (const failpoint::FailpointError& error) {
        attempt.after_unknown_commit = true;
        throw ConnectionLost(fmt::format("{}: {}", where(), error.what()));
      }
    });
    failpoint::hit("iceberg.catalog.after_commit");
  }

 private:
  // Rolls back unless committed.
  class Transaction {
   public:
    explicit Transaction(SqlConnection& db) : db_(db) { db_.begin_write(); }
    ~Transaction() {
      if (!done_) db_.rollback();
    }
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit(CatalogAttempt& attempt) {
      CatalogRetry::commit(attempt, [&] { db_.commit(); });  // on failure the destructor rolls back
      done_ = true;
    }

   private:
    SqlConnection& db_;
    bool done_ = false;
  };

  std::string where() const { return "catalog " + db_->description(); }

  // After a COMMIT whose answer was lost: true when every table of COMMITS points at its new
  // metadata (the commit landed), false when every one still points at the metadata it was built
  // on (it did not: running it again is safe, its compare-and-swap cannot apply twice).
  // CommitConflict when a table is elsewhere: another writer moved it, before or after this commit,
  // so only the tables' snapshots can say what this one holds (its caller reads them again).
  bool landed(const std::vector<TableCommit>& commits) {
    std::size_t moved = 0, stayed = 0;
    for (const TableCommit& commit : commits) {
      const auto current = find_location(commit.id);
      if (current == commit.new_metadata_location) {
        ++moved;
      } else if (current == commit.expected_metadata_location) {
        ++stayed;
      } else {
        throw CommitConflict(fmt::format(
            "{}: table {} is at {}, neither the metadata a commit whose answer was lost was built on ({}) nor the one "
            "it made ({}): another writer moved it",
            where(), commit.id.to_string(), current.value_or("(dropped)"), commit.expected_metadata_location,
            commit.new_metadata_location));
      }
    }
    // One SQL transaction swaps every table of a commit: it can never be half applied.
    BINBERG_ASSERT(moved == 0 || stayed == 0, "{}: a commit of {} tables is half applied: {} moved, {} did not",
                   where(), commits.size(), moved, stayed);
    spdlog::info("{}: a commit of {} tables whose answer was lost {}", where(), commits.size(),
                 moved == commits.size() ? "landed" : "did not land: running it again");
    return moved == commits.size();
  }

  void check_name(const char* what, const std::string& name) const {
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
      throw ConfigError(fmt::format("{}: '{}' is not a valid {} name", where(), name, what));
    }
  }

  // Schema V1 of the JDBC catalog (which pyiceberg also reads without complaint) adds
  // iceberg_type: 'TABLE', 'VIEW', or NULL for rows V0 writers made. A V0 catalog gets the column.
  bool has_iceberg_type() {
    try {
      db_->query("SELECT iceberg_type FROM iceberg_tables WHERE 1 = 0");
      return true;
    } catch (const Error&) {
      return false;
    }
  }

  // On PostgreSQL, CREATE TABLE IF NOT EXISTS fails (a unique violation in its system catalog) when
  // another process creates the same table at the same moment, e.g. two sinks starting on a fresh
  // catalog; once that one committed, the statement is a no-op.
  void create_if_missing(const std::string& statement) {
    try {
      db_->execute(statement);
    } catch (const Error&) {
      db_->execute(statement);
    }
  }

  void upgrade_to_v1() {
    if (has_iceberg_type()) return;
    try {
      db_->execute("ALTER TABLE iceberg_tables ADD COLUMN iceberg_type VARCHAR(5)");
      spdlog::info("{}: catalog upgraded to the V1 schema (iceberg_type column)", where());
    } catch (const Error&) {
      if (!has_iceberg_type()) throw;  // another process added it meanwhile: fine
    }
  }

  bool namespace_exists(const std::string& ns) {
    return !db_->query(
                   "SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name = ? AND namespace = ? UNION SELECT 1 "
                   "FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ?",
                   {options_.name, ns, options_.name, ns})
                .empty();
  }

  std::optional<std::string> find_location(const TableIdentifier& id) {
    const auto rows = db_->query(
        "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = "
        "? AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)",
        {options_.name, id.namespace_name, id.name});
    if (rows.empty()) return std::nullopt;
    return rows[0][0];
  }

  std::unique_ptr<SqlConnection> db_;
  CatalogOptions options_;
  CatalogRetry retry_;
};

}  // namespace

std::unique_ptr<Catalog> open_catalog(const CatalogOptions& options) {
  if (options.uri.starts_with("sqlite:")) {
    return std::make_unique<SqlCatalog>(open_sqlite(options.uri, options.durability), options);
  }
  if (options.uri.starts_with("postgresql://") || options.uri.starts_with("postgres://")) {
    return std::make_unique<SqlCatalog>(open_postgres(options), options);
  }
  // A URI with user info may hold a password: do not echo it.
  const std::string shown = options.uri.find('@') == std::string::npos ? options.uri : "(redacted)";
  throw ConfigError(fmt::format("catalog uri '{}': expected sqlite:////<absolute path> or postgresql://...", shown));
}

}  // namespace binberg::iceberg
