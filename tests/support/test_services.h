#pragma once

// Access to the stack the `services` ctest fixture started. A test that needs a service and cannot
// find it fails: a missing service is never reported as a pass or a skip.

#include <cstdint>
#include <filesystem>
#include <string>

#include "lab/endpoints.h"
#include "mysql/connection.h"

namespace binberg::testing {

const lab::Endpoints& stack();

mysql::ConnectionOptions mariadb_admin_options();
mysql::ConnectionOptions mariadb_replication_options();

// A name unique to this test process and call, for topics, tables and subjects.
std::string unique_name(const std::string& prefix);

// SIGKILLs a service of the stack ("mariadb", "kafka", "registry") by its PID file.
void kill_service(const std::string& service);
// Starts it again (`scripts/services up --only SERVICE`); returns once it serves.
void start_service(const std::string& service);
// Both, for MariaDB.
void kill_and_restart_mariadb();
// Terminates every client backend of the stack's PostgreSQL but the caller's (the catalogs'
// connections among them), as an administrator's pg_terminate_backend would; returns how many.
int terminate_postgres_backends();

// The [source], [capture] and [iceberg] sections of a binberg configuration for the stack's MariaDB
// (its password from $BINBERG_TEST_SOURCE_PASSWORD, set here), capturing the tables whose names
// start with TABLE_PREFIX in the stack's database, with catalog.db (or the catalog CATALOG_URI
// names, its password from $BINBERG_TEST_CATALOG_PASSWORD) and warehouse/ in DIR, and the Iceberg
// tables in ICEBERG_NAMESPACE (empty: the source database's).
std::string source_config(std::uint32_t server_id, const std::string& table_prefix, const std::filesystem::path& dir,
                          const std::string& catalog_uri = "", const std::string& iceberg_namespace = "");

// The SQL catalog on the stack's PostgreSQL: its URI, and its password.
std::string postgres_catalog_uri();
std::string postgres_catalog_password();

// Runs a shell command and returns its stdout; fails the test (via exception) on non-zero exit.
std::string run_command(const std::string& command);

}  // namespace binberg::testing
