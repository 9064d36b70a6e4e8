#pragma once

// Serves a Registry over HTTP for Prometheus: GET /metrics (text format 0.0.4) and GET /healthz,
// on its own thread, until destroyed.

#include <memory>
#include <string>
#include <thread>

#include "metrics/metrics.h"

namespace httplib {
class Server;
}

namespace binberg::metrics {

class Exporter {
 public:
  // ADDRESS is "host:port" ("[::1]:port" for IPv6); port 0 picks a free one. Throws ConfigError
  // for a malformed address and Error naming it when it cannot be bound.
  Exporter(const Registry& registry, const std::string& address);
  ~Exporter();
  Exporter(const Exporter&) = delete;
  Exporter& operator=(const Exporter&) = delete;

  const std::string& url() const { return url_; }  // http://host:port/metrics

 private:
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string url_;
};

}  // namespace binberg::metrics
