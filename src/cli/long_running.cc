#include <spdlog/spdlog.h>

#include <atomic>
#include <csignal>

#include "cli/commands.h"

namespace binberg::cli {
namespace {

std::atomic<bool> stop_requested{false};

void request_stop(int) { stop_requested.store(true); }

}  // namespace

std::unique_ptr<metrics::Exporter> export_metrics(metrics::Registry& registry, const std::string& address) {
  if (address.empty()) return nullptr;
  auto exporter = std::make_unique<metrics::Exporter>(registry, address);
  spdlog::info("metrics on {}", exporter->url());
  return exporter;
}

std::function<bool()> stop_on_signals() {
  std::signal(SIGTERM, request_stop);
  std::signal(SIGINT, request_stop);
  return [] { return stop_requested.load(); };
}

}  // namespace binberg::cli
