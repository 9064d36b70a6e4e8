#pragma once

// librdkafka configuration from binberg's settings. Every librdkafka property (security.protocol,
// ssl.*, sasl.*) passes through unchanged; values of secret properties never reach messages or logs.

#include <map>
#include <memory>
#include <string>

namespace RdKafka {
class Conf;
}

namespace binberg::kafka {

struct ClientOptions {
  std::string bootstrap_servers;
  std::map<std::string, std::string> properties;  // extra librdkafka properties, e.g. TLS/SASL
};

// True for properties whose values are credentials (passwords, keys, tokens).
bool is_secret_property(const std::string& name);

// Builds a global librdkafka config from OPTIONS plus the client's own DEFAULTS (OPTIONS win);
// throws ConfigError naming the property librdkafka rejected.
std::unique_ptr<RdKafka::Conf> make_config(const ClientOptions& options,
                                           const std::map<std::string, std::string>& defaults);

}  // namespace binberg::kafka
