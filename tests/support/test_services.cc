#include "support/test_services.h"

#include <fmt/format.h>

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>

#include "core/error.h"
#include "iceberg/sql_connection.h"
#include "lab/stack_control.h"

namespace binberg::testing {

const lab::Endpoints& stack() {
  static const lab::Endpoints endpoints = [] {
    const char* dir = std::getenv("BINBERG_SERVICES_DIR");
    if (dir == nullptr) {
      fail("BINBERG_SERVICES_DIR is not set: run integration tests through ctest (fixture `services`)");
    }
    return lab::load(dir);
  }();
  return endpoints;
}

mysql::ConnectionOptions mariadb_admin_options() {
  return lab::mariadb_options(stack().mariadb(), lab::MariadbRole::kAdmin);
}
mysql::ConnectionOptions mariadb_replication_options() {
  return lab::mariadb_options(stack().mariadb(), lab::MariadbRole::kReplication);
}

std::string source_config(std::uint32_t server_id, const std::string& table_prefix, const std::filesystem::path& dir,
                          const std::string& catalog_uri, const std::string& iceberg_namespace) {
  const auto& mariadb = stack().mariadb();
  ::setenv("BINBERG_TEST_SOURCE_PASSWORD", mariadb.password.c_str(), 1);
  ::setenv("BINBERG_TEST_CATALOG_PASSWORD", postgres_catalog_password().c_str(), 1);
  return fmt::format(R"([source]
host = "{}"
port = {}
user = "{}"
password_env = "BINBERG_TEST_SOURCE_PASSWORD"
server_id = {}

[capture]
include = ["{}.{}*"]

[iceberg]
catalog_uri = "{}"
{}{}warehouse = "{}/warehouse"
)",
                     mariadb.host, mariadb.port, mariadb.user, server_id, mariadb.database, table_prefix,
                     catalog_uri.empty() ? fmt::format("sqlite:///{}/catalog.db", dir.string()) : catalog_uri,
                     catalog_uri.empty() ? "" : "catalog_password_env = \"BINBERG_TEST_CATALOG_PASSWORD\"\n",
                     iceberg_namespace.empty() ? "" : fmt::format("namespace = \"{}\"\n", iceberg_namespace),
                     dir.string());
}

std::string postgres_catalog_uri() {
  const auto& pg = stack().postgres();
  return fmt::format("postgresql://{}@{}:{}/{}", pg.user, pg.host, pg.port, pg.database);
}

std::string postgres_catalog_password() { return stack().postgres().password; }

std::string unique_name(const std::string& prefix) {
  static std::atomic<int> counter{0};
  const auto now =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  return fmt::format("{}_{}_{}_{}", prefix, ::getpid(), now % 1000000000, counter++);
}

std::string run_command(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  if (!pipe) fail("cannot run: {}", command);
  std::string output;
  std::array<char, 4096> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe.get())) output.append(buffer.data(), n);
  const int status = ::pclose(pipe.release());
  if (status != 0) fail("command exited with status {}: {}\n{}", status, command, output);
  return output;
}

void kill_service(const std::string& service) { lab::kill_service(stack().dir, service); }

void start_service(const std::string& service) {
  const auto& services = stack();
  const int offset = services.mariadb().port - 13306;
  run_command(fmt::format("bash '{}/scripts/services' up --only {} --dir '{}' --port-offset {} 2>&1",
                          BINBERG_SOURCE_DIR, service, services.dir, offset));
}

int terminate_postgres_backends() {
  iceberg::CatalogOptions options;
  options.uri = postgres_catalog_uri();
  options.password = postgres_catalog_password();
  options.durability = iceberg::CatalogDurability::kNotRequired;
  const auto admin = iceberg::open_postgres(options);
  const auto rows = admin->query(
      "SELECT COUNT(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
      "AND backend_type = 'client backend' AND usename = current_user");
  return std::stoi(rows.at(0).at(0).value_or("0"));
}

void kill_and_restart_mariadb() {
  kill_service("mariadb");
  start_service("mariadb");
}

}  // namespace binberg::testing
