#pragma once

// Iceberg catalogs: where a table's current metadata file is recorded and how a commit swaps it.
//
// binberg's catalog is the SQL catalog of Iceberg's JDBC catalog and pyiceberg's SqlCatalog (the
// same two tables, iceberg_tables and iceberg_namespace_properties), on SQLite (one file, the
// default) or PostgreSQL (many processes on many hosts). pyiceberg opens the same catalog.
//
// Invariants enforced here:
//   - a commit is a compare-and-swap of metadata_location: it lands only if the table still
//     points at the metadata the commit was built on, so no commit is lost or applied twice;
//   - a multi-table commit swaps every table in one SQL transaction: all land or none does;
//   - a commit the database acknowledged survives a crash of the database's host: open_catalog
//     refuses a database whose settings could lose or tear a committed transaction (PostgreSQL with
//     fsync or full_page_writes off), and sets what a session can set (SQLite synchronous = EXTRA,
//     PostgreSQL synchronous_commit on when off), unless the operator accepted a non-durable
//     catalog (CatalogDurability::kNotRequired). The files a commit names are durable before it
//     (detail/durable_file.h).

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/error.h"
#include "iceberg/table_metadata.h"

namespace binberg::iceberg {

struct TableIdentifier {
  std::string namespace_name;
  std::string name;
  std::string to_string() const { return namespace_name + "." + name; }
  friend bool operator==(const TableIdentifier&, const TableIdentifier&) = default;
  friend auto operator<=>(const TableIdentifier&, const TableIdentifier&) = default;
};

// Whether open_catalog insists on a catalog database that keeps every commit it acknowledged.
enum class CatalogDurability {
  kRequired,
  kNotRequired,  // [iceberg] allow_non_durable_catalog: run anyway, with a warning (tests, throwaway data)
};

struct CatalogOptions {
  std::string name = "binberg";  // the catalog_name column: several catalogs may share a database
  // "sqlite:////abs/path/catalog.db" (sqlite:/// + an absolute path, as pyiceberg writes it) or
  // "postgresql://user@host:port/database" (libpq URI).
  std::string uri;
  // Root of new tables (absolute path or file:/ URI): <warehouse>/<namespace>.db/<table>.
  std::string warehouse;
  std::string password;                                      // PostgreSQL; never logged
  std::map<std::string, std::string> connection_properties;  // libpq keywords: sslmode, sslrootcert, ...
  CatalogDurability durability = CatalogDurability::kRequired;
  // How long one catalog call reconnects and retries while its database is unreachable or busy
  // before it gives up with CatalogUnavailable ([iceberg] catalog_retry_timeout_ms; catalog_retry.h).
  std::chrono::milliseconds retry_timeout{30'000};
  // The clock those retries wait on: the system's, or a simulation's (not owned).
  TimeSource* time = &system_time();
};

struct LoadedTable {
  TableIdentifier id;
  std::string metadata_location;
  TableMetadata metadata;
};

struct TableCommit {
  TableIdentifier id;
  std::string expected_metadata_location;  // what the commit was built on
  std::string new_metadata_location;       // written, not yet visible
};

// The compare-and-swap failed: a table no longer points at the expected metadata.
class CommitConflict : public Error {
 public:
  using Error::Error;
};
// The catalog's database stayed unreachable (or busy) for a whole retry budget. The call may be
// made again later; a commit that ends so may or may not have landed: its caller learns which from
// the tables (commit_or_recognize, and a restart that reads its progress from the snapshots).
class CatalogUnavailable : public ConnectionError {
 public:
  using ConnectionError::ConnectionError;
};
class NoSuchTable : public Error {
 public:
  using Error::Error;
};
class NoSuchNamespace : public Error {
 public:
  using Error::Error;
};
class AlreadyExists : public Error {
 public:
  using Error::Error;
};

class Catalog {
 public:
  virtual ~Catalog() = default;

  virtual void create_namespace(const std::string& ns, const std::map<std::string, std::string>& properties = {}) = 0;
  virtual std::vector<std::string> list_namespaces() = 0;
  virtual std::map<std::string, std::string> namespace_properties(const std::string& ns) = 0;
  // Refuses a namespace that still has tables.
  virtual void drop_namespace(const std::string& ns) = 0;

  // Writes the table's first metadata file and registers it. AlreadyExists, NoSuchNamespace.
  virtual LoadedTable create_table(const TableIdentifier& id, const Schema& schema, const PartitionSpec& spec,
                                   const SortOrder& order, const std::map<std::string, std::string>& properties) = 0;
  virtual LoadedTable load_table(const TableIdentifier& id) = 0;         // NoSuchTable
  virtual std::string metadata_location(const TableIdentifier& id) = 0;  // NoSuchTable
  virtual std::vector<TableIdentifier> list_tables(const std::string& ns) = 0;
  // Removes the catalog entry; the files stay (removing them is maintenance's job).
  virtual void drop_table(const TableIdentifier& id) = 0;

  // Swaps every table of COMMITS in one transaction, or none: CommitConflict names the first table
  // whose location was not the expected one. A connection lost on the way is reopened and the
  // transaction run again; lost during its COMMIT, the tables first say whether it landed. Failpoints
  // iceberg.catalog.before_commit (nothing sent yet) and iceberg.catalog.after_commit (committed, reply not yet seen by
  // the caller).
  virtual void commit(const std::vector<TableCommit>& commits) = 0;
};

// Opens the catalog OPTIONS.uri names, creating its two tables when missing. ConfigError for a
// bad URI or a database that would not keep commits durable (naming each setting and its fix),
// ConnectionError for an unreachable database (naming it, never the password).
std::unique_ptr<Catalog> open_catalog(const CatalogOptions& options);

}  // namespace binberg::iceberg
