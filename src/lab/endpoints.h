#pragma once

// Endpoints of a local service stack started by `binberg services up` (scripts/services), read
// from the stack's services.json. Used by the smoke command and the integration tests.

#include <cstdint>
#include <optional>
#include <string>

#include "mysql/connection.h"

namespace binberg::lab {

struct MariadbEndpoint {
  std::string host;
  std::uint16_t port = 0;
  std::string database;
  std::string user;
  std::string password;
  std::string replication_user;
  std::string replication_password;
};

struct PostgresEndpoint {
  std::string host;
  std::uint16_t port = 0;
  std::string database;
  std::string user;
  std::string password;
};

// A stack may run only some services (`--only`); asking for one that is absent throws Error
// saying how to start it.
class Endpoints {
 public:
  std::string dir;
  std::optional<MariadbEndpoint> mariadb_endpoint;
  std::optional<PostgresEndpoint> postgres_endpoint;
  std::optional<std::string> kafka_bootstrap;
  std::optional<std::string> registry_base_url;

  const MariadbEndpoint& mariadb() const;
  const PostgresEndpoint& postgres() const;
  const std::string& kafka_bootstrap_servers() const;
  const std::string& registry_url() const;
};

enum class MariadbRole { kAdmin, kReplication };

// Client options for the stack's MariaDB as its admin user (tests, demo) or its CDC user.
mysql::ConnectionOptions mariadb_options(const MariadbEndpoint& endpoint, MariadbRole role);

// The services dir: $BINBERG_SERVICES_DIR, else <source dir>/.services.
std::string default_dir();

// Loads <dir>/services.json; throws Error naming the file and the missing service or key.
Endpoints load(const std::string& dir);

}  // namespace binberg::lab
