#include "lab/endpoints.h"

#include <nlohmann/json.hpp>

#include <cstdlib>

#include "core/error.h"
#include "core/version.h"

namespace binberg::lab {
namespace {

template <typename T>
const T& present(const std::optional<T>& value, const char* service, const std::string& dir) {
  if (!value)
    fail("{}/services.json: service '{}' is not running in this stack (start it with `binberg services up`)", dir,
         service);
  return *value;
}

template <typename T>
T field(const nlohmann::json& object, const char* service, const char* key, const std::string& path) {
  if (!object.contains(key)) fail("{}: {}.{} is missing", path, service, key);
  return object.at(key).get<T>();
}

}  // namespace

mysql::ConnectionOptions mariadb_options(const MariadbEndpoint& endpoint, MariadbRole role) {
  mysql::ConnectionOptions options;
  options.host = endpoint.host;
  options.port = endpoint.port;
  options.database = endpoint.database;
  const bool replication = role == MariadbRole::kReplication;
  options.user = replication ? endpoint.replication_user : endpoint.user;
  options.password = replication ? endpoint.replication_password : endpoint.password;
  return options;
}

std::string default_dir() {
  if (const char* dir = std::getenv("BINBERG_SERVICES_DIR"); dir != nullptr && *dir != '\0') return dir;
  return std::string(kSourceDir) + "/.services";
}

const MariadbEndpoint& Endpoints::mariadb() const { return present(mariadb_endpoint, "mariadb", dir); }
const PostgresEndpoint& Endpoints::postgres() const { return present(postgres_endpoint, "postgres", dir); }
const std::string& Endpoints::kafka_bootstrap_servers() const { return present(kafka_bootstrap, "kafka", dir); }
const std::string& Endpoints::registry_url() const { return present(registry_base_url, "registry", dir); }

Endpoints load(const std::string& dir) {
  const std::string path = dir + "/services.json";
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON: {}", path, e.what());
  }
  Endpoints endpoints;
  endpoints.dir = dir;
  if (doc.contains("mariadb")) {
    const auto& maria = doc.at("mariadb");
    endpoints.mariadb_endpoint = MariadbEndpoint{
        field<std::string>(maria, "mariadb", "host", path),
        field<std::uint16_t>(maria, "mariadb", "port", path),
        field<std::string>(maria, "mariadb", "database", path),
        field<std::string>(maria, "mariadb", "user", path),
        field<std::string>(maria, "mariadb", "password", path),
        field<std::string>(maria, "mariadb", "replication_user", path),
        field<std::string>(maria, "mariadb", "replication_password", path),
    };
  }
  if (doc.contains("postgres")) {
    const auto& pg = doc.at("postgres");
    endpoints.postgres_endpoint = PostgresEndpoint{
        field<std::string>(pg, "postgres", "host", path),     field<std::uint16_t>(pg, "postgres", "port", path),
        field<std::string>(pg, "postgres", "database", path), field<std::string>(pg, "postgres", "user", path),
        field<std::string>(pg, "postgres", "password", path),
    };
  }
  if (doc.contains("kafka")) {
    endpoints.kafka_bootstrap = field<std::string>(doc.at("kafka"), "kafka", "bootstrap_servers", path);
  }
  if (doc.contains("registry")) {
    endpoints.registry_base_url = field<std::string>(doc.at("registry"), "registry", "url", path);
  }
  return endpoints;
}

}  // namespace binberg::lab
