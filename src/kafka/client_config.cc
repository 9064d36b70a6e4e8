#include "kafka/client_config.h"

#include <librdkafka/rdkafkacpp.h>
#include <spdlog/spdlog.h>

#include "core/error.h"

namespace binberg::kafka {
namespace {

// librdkafka's log lines and errors through binberg's logger (timestamps, levels, --log-level),
// never raw on stderr. A broker going away is an operating condition the client retries: a warning;
// what librdkafka calls a warning is a retry it handles itself: info.
class LogThroughSpdlog : public RdKafka::EventCb {
 public:
  void event_cb(RdKafka::Event& event) override {
    switch (event.type()) {
      case RdKafka::Event::EVENT_LOG:
        spdlog::log(level_of(event.severity()), "kafka {}: {}", event.fac(), event.str());
        break;
      case RdKafka::Event::EVENT_ERROR:
        spdlog::log(event.fatal() ? spdlog::level::err : spdlog::level::warn, "kafka: {}: {}",
                    RdKafka::err2str(event.err()), event.str());
        break;
      default:
        break;
    }
  }

 private:
  static spdlog::level::level_enum level_of(RdKafka::Event::Severity severity) {
    if (severity <= RdKafka::Event::EVENT_SEVERITY_CRITICAL) return spdlog::level::err;
    // librdkafka's own warnings are retries it handles (e.g. "coordinator load in progress").
    if (severity <= RdKafka::Event::EVENT_SEVERITY_ERROR) return spdlog::level::warn;
    if (severity <= RdKafka::Event::EVENT_SEVERITY_INFO) return spdlog::level::info;
    return spdlog::level::debug;
  }
};

}  // namespace

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
  // A broker that was down is retried every second at most: librdkafka's default backoff grows to
  // 10 s, which the broker-restart drill measured as up to 14 s of binberg's recovery after the
  // broker served again. [kafka.properties] may still set it.
  std::map<std::string, std::string> merged = {{"reconnect.backoff.max.ms", "1000"}};
  for (const auto& [key, value] : defaults) merged[key] = value;
  for (const auto& [key, value] : options.properties) merged[key] = value;
  merged["bootstrap.servers"] = options.bootstrap_servers;
  for (const auto& [key, value] : merged) {
    std::string error;
    if (conf->set(key, value, error) != RdKafka::Conf::CONF_OK) {
      throw ConfigError(fmt::format("kafka: property {}={} rejected: {}", key,
                                    is_secret_property(key) ? "<redacted>" : value, error));
    }
  }
  static LogThroughSpdlog log;  // stateless; lives as long as every client
  std::string error;
  if (conf->set("event_cb", static_cast<RdKafka::EventCb*>(&log), error) != RdKafka::Conf::CONF_OK) {
    fail("kafka: cannot route the client's log: {}", error);
  }
  return conf;
}

}  // namespace binberg::kafka
