#include "registry/registry_client.h"

#include <httplib.h>

#include <nlohmann/json.hpp>

#include <cctype>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

namespace binberg::registry {
namespace {

constexpr const char* kContentType = "application/vnd.schemaregistry.v1+json";
// Apicurio's own REST API (see set_compatibility) speaks plain JSON.
constexpr const char* kJsonContentType = "application/json";

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
  // `path` is relative to the configured URL; `target` below is the whole request path.
  nlohmann::json call(const std::string& method, const std::string& path, const nlohmann::json* body) {
    return call_target(method, url.path + path, body, kContentType);
  }

  nlohmann::json call_target(const std::string& method, const std::string& target, const nlohmann::json* body,
                             const char* content_type) {
    auto backoff = options.first_backoff;
    for (int attempt = 1;; ++attempt) {
      try {
        return call_once(method, target, body, content_type);
      } catch (const RegistryError& e) {
        if (e.http_status() < 500 || attempt >= options.attempts) throw;
      } catch (const ConnectionError&) {
        if (attempt >= options.attempts) throw;
      }
      std::this_thread::sleep_for(backoff);
      backoff *= 2;
    }
  }

  nlohmann::json call_once(const std::string& method, const std::string& target, const nlohmann::json* body,
                           const char* content_type) {
    httplib::Headers headers = {{"Accept", content_type}};
    httplib::Result result = method == "GET"    ? http.Get(target, headers)
                             : method == "POST" ? http.Post(target, headers, body->dump(), content_type)
                                                : http.Put(target, headers, body->dump(), content_type);
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
  auto level_of = [](const nlohmann::json& answer) {
    return answer.value("compatibilityLevel", answer.value("compatibility", ""));
  };
  if (subject.empty()) return level_of(state_->call("GET", "/config", nullptr));
  try {
    return level_of(state_->call("GET", "/config/" + encode_segment(subject) + "?defaultToGlobal=true", nullptr));
  } catch (const RegistryError& e) {
    // Apicurio answers 404 for a subject with neither versions nor a rule of its own, where
    // Confluent answers with the global level.
    if (e.http_status() != 404) throw;
    return level_of(state_->call("GET", "/config", nullptr));
  }
}

bool RegistryClient::is_compatible(const std::string& subject, const std::string& schema) {
  nlohmann::json body = {{"schema", schema}, {"schemaType", "AVRO"}};
  return state_->call("POST", "/compatibility/subjects/" + encode_segment(subject) + "/versions/latest", &body)
      .at("is_compatible")
      .get<bool>();
}

namespace {

// The base path of Apicurio's native v3 API next to its ccompat API ("/apis/ccompat/v7" ->
// "/apis/registry/v3"), or nullopt when the URL is not an Apicurio ccompat URL.
std::optional<std::string> apicurio_native_base(const std::string& ccompat_path) {
  for (const std::string_view suffix : {"/apis/ccompat/v7", "/apis/ccompat/v6"}) {
    if (ccompat_path.ends_with(suffix)) {
      return ccompat_path.substr(0, ccompat_path.size() - suffix.size()) + "/apis/registry/v3";
    }
  }
  return std::nullopt;
}

}  // namespace

void RegistryClient::set_compatibility(const std::string& subject, const std::string& level) {
  nlohmann::json body = {{"compatibility", level}};
  const std::string config_path = subject.empty() ? "/config" : "/config/" + encode_segment(subject);
  const auto native_base = apicurio_native_base(state_->url.path);
  if (subject.empty() || level != "NONE") {
    state_->call("PUT", config_path, &body);
    return;
  }
  // Confluent keeps NONE as the subject's level. Apicurio's ccompat API instead deletes the
  // subject's (artifact's) COMPATIBILITY rule, so the global rule applies again, and answers 404
  // when the subject has no rule and no versions yet. Check which happened, and on Apicurio set
  // the rule through its native API, where a rule of NONE is kept and overrides the global rule
  // (checked against Apicurio 3.0.9).
  try {
    state_->call("PUT", config_path, &body);
  } catch (const RegistryError& e) {
    if (!native_base || e.http_status() != 404) throw;
  }
  const std::string effective = compatibility(subject);
  if (effective == "NONE") return;
  if (!native_base) {
    fail(
        "registry {}: setting compatibility NONE on subject '{}' did not take effect: the registry reports {} "
        "(it dropped the subject's rule, so the global level applies); use a level other than NONE",
        state_->url.origin, subject, effective);
  }
  // The native API only updates a rule that exists (or one of an artifact that exists, which a
  // subject without versions is not), so first create the subject's rule through ccompat with the
  // level already in force: until the second call lands, nothing changes for writers.
  nlohmann::json placeholder = {{"compatibility", effective}};
  state_->call("PUT", config_path, &placeholder);
  nlohmann::json rule = {{"ruleType", "COMPATIBILITY"}, {"config", "NONE"}};
  state_->call_target("PUT",
                      *native_base + "/groups/default/artifacts/" + encode_segment(subject) + "/rules/COMPATIBILITY",
                      &rule, kJsonContentType);
  if (const std::string now = compatibility(subject); now != "NONE") {
    fail(
        "registry {}: compatibility NONE on subject '{}' did not take effect through Apicurio's native API "
        "either: the registry reports {}",
        state_->url.origin, subject, now);
  }
}

}  // namespace binberg::registry
