#pragma once

// Client for a Confluent-compatible schema registry (Confluent Schema Registry, Apicurio's
// /apis/ccompat/v7, Redpanda). Subjects follow TopicNameStrategy: "<topic>-key", "<topic>-value".

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "core/error.h"

namespace binberg::registry {

// The registry answered with an error document {"error_code": N, "message": ...}.
class RegistryError : public Error {
 public:
  RegistryError(int http_status, int error_code, const std::string& message);
  int http_status() const { return http_status_; }
  int error_code() const { return error_code_; }

 private:
  int http_status_;
  int error_code_;
};

struct RegistryOptions {
  std::string url;  // base URL, e.g. http://127.0.0.1:18081/apis/ccompat/v7
  std::chrono::milliseconds timeout{10000};
  int attempts = 3;  // tries for connection failures and 5xx answers, with doubling backoff
  std::chrono::milliseconds first_backoff{200};
};

struct SubjectVersion {
  std::string subject;
  std::int32_t version = 0;
  std::int32_t id = 0;
  std::string schema;
};

std::string key_subject(const std::string& topic);
std::string value_subject(const std::string& topic);

class RegistryClient {
 public:
  explicit RegistryClient(RegistryOptions options);
  RegistryClient(RegistryClient&&) noexcept;
  RegistryClient& operator=(RegistryClient&&) noexcept;
  ~RegistryClient();

  // Registers SCHEMA (Avro JSON) under SUBJECT and returns its id; the same schema again gives
  // the same id. Throws RegistryError with http_status 409 when the subject's rule rejects it.
  std::int32_t register_schema(const std::string& subject, const std::string& schema);
  // The schema text with this id; RegistryError 404/40403 when unknown. Ids never change their
  // schema, so answers are cached for the client's lifetime.
  std::string schema_by_id(std::int32_t id);
  // The registered version of SCHEMA under SUBJECT; RegistryError 404 when it is not registered.
  SubjectVersion lookup(const std::string& subject, const std::string& schema);
  SubjectVersion latest_version(const std::string& subject);
  // The subject's compatibility level, falling back to the global one when it has none; the
  // global level when SUBJECT is empty.
  std::string compatibility(const std::string& subject);
  // Whether SCHEMA may follow the subject's latest version under the subject's rule.
  bool is_compatible(const std::string& subject, const std::string& schema);
  // Sets the compatibility level (BACKWARD, FORWARD, FULL, *_TRANSITIVE, NONE) of SUBJECT, or the
  // global default when SUBJECT is empty. A subject level of NONE always means NONE, even where
  // the global level is stricter: Apicurio's ccompat API drops a subject rule set to NONE (so the
  // global rule applied again), so against Apicurio the rule is set through its native API
  // instead; against a registry that drops it otherwise, this throws Error saying so.
  void set_compatibility(const std::string& subject, const std::string& level);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace binberg::registry
