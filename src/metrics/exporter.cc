#include "metrics/exporter.h"

#include <fmt/format.h>
#include <httplib.h>
#include <sys/socket.h>

#include <chrono>

#include "core/error.h"

namespace binberg::metrics {
namespace {

struct HostPort {
  std::string host;
  int port = 0;
};

HostPort parse_address(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) {
    throw ConfigError(fmt::format("metrics address '{}': expected host:port, e.g. 127.0.0.1:9464", address));
  }
  HostPort result;
  result.host = address.substr(0, colon);
  if (result.host.front() == '[' && result.host.back() == ']')
    result.host = result.host.substr(1, result.host.size() - 2);
  try {
    std::size_t used = 0;
    result.port = std::stoi(address.substr(colon + 1), &used);
    if (used != address.size() - colon - 1 || result.port < 0 || result.port > 65535) throw std::out_of_range("port");
  } catch (const std::logic_error&) {
    throw ConfigError(fmt::format("metrics address '{}': the port must be 0..65535", address));
  }
  return result;
}

}  // namespace

Exporter::Exporter(const Registry& registry, const std::string& address)
    : server_(std::make_unique<httplib::Server>()) {
  const HostPort where = parse_address(address);
  // httplib's default adds SO_REUSEPORT, which would let a second binberg share the port and
  // split the scrapes between processes; a port in use must be an error instead.
  server_->set_socket_options([](int socket) {
    int yes = 1;
    ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server_->Get("/metrics", [&registry](const httplib::Request&, httplib::Response& response) {
    response.set_content(registry.render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  server_->Get("/healthz", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("ok\n", "text/plain");
  });
  int port = where.port;
  if (port == 0) {
    port = server_->bind_to_any_port(where.host);
  } else if (!server_->bind_to_port(where.host, port)) {
    port = -1;
  }
  if (port < 0) fail("metrics: cannot listen on {} (in use, or not a local address?)", address);
  const bool v6 = where.host.find(':') != std::string::npos;
  url_ = fmt::format("http://{}{}{}:{}/metrics", v6 ? "[" : "", where.host, v6 ? "]" : "", port);
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() before the server runs would be lost and the destructor would wait forever.
  while (!server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

Exporter::~Exporter() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace binberg::metrics
