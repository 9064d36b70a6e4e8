#include "registry/registry_client.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include <cctype>
#include <map>
#include <mutex>
#include <thread>

namespace binberg::registry {
namespace {

constexpr const char* kContentType = "application/vnd.schemaregistry.v1+json";

struct ParsedUrl {
  std::string origin;  // scheme://host:port
  std::string path;    // without trailing slash
};

ParsedUrl parse_url(const std::string& url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string::npos) throw ConfigError(fmt::format("registry: URL '{}' has no scheme", url));
  auto path_start = url.find('/', scheme_end + 3);
  ParsedUrl parsed{url.substr(0, path_start), path_start == std::string::npos ? "" : url.substr(path_start)};
  while (!parsed.path.empty() && parsed.path.back() == '/') parsed.path.pop_back();
  return parsed;
}

// Percent-encodes one URL path segment (RFC 3986 unreserved characters pass through).
std::string encode_segment(const std::string& segment) {
  std::string out;
  for (unsigned char c : segment) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

}  // namespace

RegistryError::RegistryError(int http_status, int error_code, const std::string& message)
    : Error(message), http_status_(http_status), error_code_(error_code) {}

std::string key_subject(const std::string& topic) { return topic + "-key"; }
std::string value_subject(const std::string& topic) { return topic + "-value"; }

struct RegistryClient::State {
  RegistryOptions options;
  ParsedUrl url;
  httplib::Client http;
  std::mutex cache_mutex;
  std::map<std::int32_t, std::string> schemas_by_id;

  explicit State(RegistryOptions o) : options(std::move(o)), url(parse_url(options.url)), http(url.origin) {
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(options.timeout);
    const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(options.timeout - seconds);
    http.set_connection_timeout(seconds.count(), micros.count());
    http.set_read_timeout(seconds.count(), micros.count());
    http.set_write_timeout(seconds.count(), micros.count());
  }

  // Sends a request and returns the parsed JSON body of a 2xx answer; throws otherwise.
  // Connection failures and 5xx answers are retried: registering the same schema is idempotent.
  nlohmann::json call(const std::string& method, const std::string& path, const nlohmann::json* body) {
    auto backoff = options.first_backoff;
    for (int attempt = 1;; ++attempt) {
      try {
        return call_once(method, path, body);
      } catch (const RegistryError& e) {
        if (e.http_status() < 500 || attempt >= options.attempts) throw;
      } catch (const ConnectionError&) {
        if (attempt >= options.attempts) throw;
      }
      std::this_thread::sleep_for(backoff);
      backoff *= 2;
    }
  }

  nlohmann::json call_once(const std::string& method, const std::string& path, const nlohmann::json* body) {
    const std::string target = url.path + path;
    httplib::Headers headers = {{"Accept", kContentType}};
    httplib::Result result = method == "GET"    ? http.Get(target, headers)
                             : method == "POST" ? http.Post(target, headers, body->dump(), kContentType)
                                                : http.Put(target, headers, body->dump(), kContentType);
    if (!result) {
      throw ConnectionError(
          fmt::format("registry {}: {} {} failed: {}", url.origin, method, target, httplib::to_string(result.error())));
    }
    nlohmann::json answer = nlohmann::json::parse(result->body, nullptr, /*allow_exceptions=*/false);
    if (result->status >= 200 && result->status < 300) {
      if (answer.is_discarded()) fail("registry {}: {} {}: answer is not JSON", url.origin, method, target);
      return answer;
    }
    int error_code = result->status;
    std::string message = result->body;
    if (answer.is_object()) {
      error_code = answer.value("error_code", result->status);
      message = answer.value("message", result->body);
    }
    throw RegistryError(result->status, error_code,
                        fmt::format("registry {}: {} {} answered {} (error_code {}): {}", url.origin, method, target,
                                    result->status, error_code, message));
  }
};

namespace {
SubjectVersion subject_version(const nlohmann::json& answer, const std::string& subject) {
  return SubjectVersion{answer.value("subject", subject), answer.at("version").get<std::int32_t>(),
                        answer.at("id").get<std::int32_t>(), answer.at("schema").get<std::string>()};
}
}  // namespace

RegistryClient::RegistryClient(RegistryOptions options) : state_(std::make_unique<State>(std::move(options))) {}
RegistryClient::RegistryClient(RegistryClient&&) noexcept = default;
RegistryClient& RegistryClient::operator=(RegistryClient&&) noexcept = default;
RegistryClient::~RegistryClient() = default;

std::int32_t RegistryClient::register_schema(const std::string& subject, const std::string& schema) {
  nlohmann::json body = {{"schema", schema}, {"schemaType", "AVRO"}};
  return state_->call("POST", "/subjects/" + encode_segment(subject) + "/versions", &body).at("id").get<std::int32_t>();
}

std::string RegistryClient::schema_by_id(std::int32_t id) {
  {
    std::lock_guard lock(state_->cache_mutex);
    if (auto it = state_->schemas_by_id.find(id); it != state_->schemas_by_id.end()) return it->second;
  }
  std::string schema = state_->call("GET", fmt::format("/schemas/ids/{}", id), nullptr).at("schema").get<std::string>();
  std::lock_guard lock(state_->cache_mutex);
  return state_->schemas_by_id.emplace(id, std::move(schema)).first->second;
}

SubjectVersion RegistryClient::lookup(const std::string& subject, const std::string& schema) {
  nlohmann::json body = {{"schema", schema}, {"schemaType", "AVRO"}};
  return subject_version(state_->call("POST", "/subjects/" + encode_segment(subject), &body), subject);
}

SubjectVersion RegistryClient::latest_version(const std::string& subject) {
  return subject_version(state_->call("GET", "/subjects/" + encode_segment(subject) + "/versions/latest", nullptr),
                         subject);
}

std::string RegistryClient::compatibility(const std::string& subject) {
  const auto answer = state_->call("GET", "/config/" + encode_segment(subject) + "?defaultToGlobal=true", nullptr);
  return answer.value("compatibilityLevel", answer.value("compatibility", ""));
}

bool RegistryClient::is_compatible(const std::string& subject, const std::string& schema) {
  nlohmann::json body = {{"schema", schema}, {"schemaType", "AVRO"}};
  return state_->call("POST", "/compatibility/subjects/" + encode_segment(subject) + "/versions/latest", &body)
      .at("is_compatible")
      .get<bool>();
}

void RegistryClient::set_compatibility(const std::string& subject, const std::string& level) {
  nlohmann::json body = {{"compatibility", level}};
  state_->call("PUT", subject.empty() ? "/config" : "/config/" + encode_segment(subject), &body);
}

}  // namespace binberg::registry
