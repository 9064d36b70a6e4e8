#include "metrics/scrape.h"

#include <httplib.h>

#include <sstream>

namespace binberg::metrics {
namespace {

// The metric name of an exposition line ("" for comments and blank lines).
std::string metric_of(const std::string& line) {
  if (line.empty() || line[0] == '#') return "";
  return line.substr(0, line.find_first_of("{ "));
}

}  // namespace

std::optional<std::string> scrape(const std::string& url, std::chrono::milliseconds timeout) {
  const auto slash = url.find('/', url.find("://") + 3);
  httplib::Client client(url.substr(0, slash));
  client.set_connection_timeout(timeout);
  client.set_read_timeout(timeout);
  const auto response = client.Get(slash == std::string::npos ? "/" : url.substr(slash));
  if (!response || response->status != 200) return std::nullopt;
  return response->body;
}

double sample_sum(const std::string& exposition, const std::string& name, const std::vector<std::string>& labels) {
  double sum = 0;
  std::istringstream in(exposition);
  for (std::string line; std::getline(in, line);) {
    if (metric_of(line) != name) continue;
    bool matches = true;
    for (const std::string& label : labels) matches = matches && line.find(label) != std::string::npos;
    if (matches) sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

std::optional<double> sample_max(const std::string& exposition, const std::string& name) {
  std::optional<double> largest;
  std::istringstream in(exposition);
  for (std::string line; std::getline(in, line);) {
    if (metric_of(line) != name) continue;
    const double value = std::stod(line.substr(line.rfind(' ') + 1));
    if (!largest || value > *largest) largest = value;
  }
  return largest;
}

std::size_t sample_count(const std::string& exposition, const std::string& name) {
  std::size_t count = 0;
  std::istringstream in(exposition);
  for (std::string line; std::getline(in, line);) count += metric_of(line) == name ? 1 : 0;
  return count;
}

}  // namespace binberg::metrics
