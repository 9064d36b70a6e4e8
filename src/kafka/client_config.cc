#include "kafka/client_config.h"

#include <librdkafka/rdkafkacpp.h>

#include "core/error.h"

namespace binberg::kafka {

bool is_secret_property(const std::string& name) {
  for (const char* marker : {"password", "secret", "sasl.oauthbearer.config", "ssl.key.pem", "ssl_key"}) {
    if (name.find(marker) != std::string::npos) return true;
  }
  return false;
}

std::unique_ptr<RdKafka::Conf> make_config(const ClientOptions& options,
                                           const std::map<std::string, std::string>& defaults) {
  if (options.bootstrap_servers.empty()) throw ConfigError("kafka: bootstrap servers are not set");
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::map<std::string, std::string> merged = defaults;
  for (const auto& [key, value] : options.properties) merged[key] = value;
  merged["bootstrap.servers"] = options.bootstrap_servers;
  for (const auto& [key, value] : merged) {
    std::string error;
    if (conf->set(key, value, error) != RdKafka::Conf::CONF_OK) {
      throw ConfigError(fmt::format("kafka: property {}={} rejected: {}", key,
                                    is_secret_property(key) ? "<redacted>" : value, error));
    }
  }
  return conf;
}

}  // namespace binberg::kafka
