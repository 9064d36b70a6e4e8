#include "kafka/admin.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafkacpp.h>

#include "core/error.h"

namespace binberg::kafka {

namespace {

std::unique_ptr<RdKafka::Producer> admin_handle(const ClientOptions& options) {
  // Asking about a topic must never create it (a producer's default on brokers that allow it).
  auto conf = make_config(options, {{"client.id", "binberg-admin"}, {"allow.auto.create.topics", "false"}});
  std::string error;
  std::unique_ptr<RdKafka::Producer> handle(RdKafka::Producer::create(conf.get(), error));
  if (!handle) fail("kafka {}: cannot create admin client: {}", options.bootstrap_servers, error);
  return handle;
}

// One admin request: its options and reply queue, and the event that answers it, all released when
// it goes. Topic creation and deletion wait for the controller (an operation timeout); the other
// requests for the broker that answers (a request timeout).
class AdminRequest {
 public:
  AdminRequest(rd_kafka_t* rk, rd_kafka_admin_op_t operation, std::chrono::milliseconds timeout)
      : timeout_(timeout), queue_(rd_kafka_queue_new(rk)), options_(rd_kafka_AdminOptions_new(rk, operation)) {
    char errstr[512];
    const int ms = static_cast<int>(timeout.count());
    if (operation == RD_KAFKA_ADMIN_OP_CREATETOPICS || operation == RD_KAFKA_ADMIN_OP_DELETETOPICS) {
      rd_kafka_AdminOptions_set_operation_timeout(options_, ms, errstr, sizeof errstr);
    } else {
      rd_kafka_AdminOptions_set_request_timeout(options_, ms, errstr, sizeof errstr);
    }
  }
  ~AdminRequest() {
    if (event_ != nullptr) rd_kafka_event_destroy(event_);
    rd_kafka_AdminOptions_destroy(options_);
    rd_kafka_queue_destroy(queue_);
  }
  AdminRequest(const AdminRequest&) = delete;
  AdminRequest& operator=(const AdminRequest&) = delete;

  rd_kafka_AdminOptions_t* options() const { return options_; }
  rd_kafka_queue_t* queue() const { return queue_; }

  // The answer, or nullptr with FAILURE saying why when none came in time or it failed as a whole.
  rd_kafka_event_t* await(std::string& failure) {
    event_ = rd_kafka_queue_poll(queue_, static_cast<int>(timeout_.count()) + 5000);
    if (event_ == nullptr) {
      failure = "no answer in time";
    } else if (rd_kafka_event_error(event_) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      failure = rd_kafka_event_error_string(event_);
      return nullptr;
    }
    return event_;
  }

 private:
  std::chrono::milliseconds timeout_;
  rd_kafka_queue_t* queue_;
  rd_kafka_AdminOptions_t* options_;
  rd_kafka_event_t* event_ = nullptr;
};

// The failure a per-resource error carries: its message, or its code's.
std::string failure_of(rd_kafka_resp_err_t code, const char* message) {
  return message != nullptr ? message : rd_kafka_err2str(code);
}

// The configs of TOPIC as the brokers apply them (DescribeConfigs).
std::map<std::string, std::string> topic_configs(const ClientOptions& options, rd_kafka_t* rk, const std::string& topic,
                                                 std::chrono::milliseconds timeout) {
  rd_kafka_ConfigResource_t* resource = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str());
  AdminRequest request(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS, timeout);
  rd_kafka_DescribeConfigs(rk, &resource, 1, request.options(), request.queue());
  std::map<std::string, std::string> configs;
  std::string failure;
  if (rd_kafka_event_t* event = request.await(failure)) {
    size_t count = 0;
    const rd_kafka_ConfigResource_t** results =
        rd_kafka_DescribeConfigs_result_resources(rd_kafka_event_DescribeConfigs_result(event), &count);
    for (size_t i = 0; i < count; ++i) {
      if (const rd_kafka_resp_err_t code = rd_kafka_ConfigResource_error(results[i]);
          code != RD_KAFKA_RESP_ERR_NO_ERROR) {
        failure = failure_of(code, rd_kafka_ConfigResource_error_string(results[i]));
        continue;
      }
      size_t entries = 0;
      const rd_kafka_ConfigEntry_t** entry = rd_kafka_ConfigResource_configs(results[i], &entries);
      for (size_t e = 0; e < entries; ++e) {
        const char* value = rd_kafka_ConfigEntry_value(entry[e]);
        configs[rd_kafka_ConfigEntry_name(entry[e])] = value != nullptr ? value : "";
      }
    }
  }
  rd_kafka_ConfigResource_destroy(resource);
  if (!failure.empty())
    fail("kafka {}: cannot describe the configs of topic {}: {}", options.bootstrap_servers, topic, failure);
  return configs;
}

// The metadata of TOPIC; its topic entry is null when the topic does not exist.
struct FoundTopic {
  std::unique_ptr<RdKafka::Metadata> metadata;
  const RdKafka::TopicMetadata* topic = nullptr;
};

FoundTopic find_topic(const ClientOptions& options, RdKafka::Producer& handle, const std::string& topic,
                      std::chrono::milliseconds timeout) {
  std::string error;
  std::unique_ptr<RdKafka::Topic> topic_handle(RdKafka::Topic::create(&handle, topic, nullptr, error));
  if (!topic_handle) fail("kafka {}: topic {}: {}", options.bootstrap_servers, topic, error);
  RdKafka::Metadata* raw = nullptr;
  const auto code = handle.metadata(false, topic_handle.get(), &raw, static_cast<int>(timeout.count()));
  FoundTopic found{std::unique_ptr<RdKafka::Metadata>(raw), nullptr};
  if (code != RdKafka::ERR_NO_ERROR) {
    fail("kafka {}: no metadata for topic {}: {}", options.bootstrap_servers, topic, RdKafka::err2str(code));
  }
  for (const RdKafka::TopicMetadata* candidate : *found.metadata->topics()) {
    if (candidate->topic() != topic || candidate->err() == RdKafka::ERR_UNKNOWN_TOPIC_OR_PART) continue;
    if (candidate->err() != RdKafka::ERR_NO_ERROR) {
      fail("kafka {}: topic {}: {}", options.bootstrap_servers, topic, RdKafka::err2str(candidate->err()));
    }
    found.topic = candidate;
  }
  return found;
}

}  // namespace

CreateResult create_topic(const ClientOptions& options, const TopicSpec& topic, std::chrono::milliseconds timeout) {
  const auto handle = admin_handle(options);
  rd_kafka_t* rk = handle->c_ptr();
  char errstr[512];
  rd_kafka_NewTopic_t* new_topic =
      rd_kafka_NewTopic_new(topic.name.c_str(), topic.partitions, topic.replication_factor, errstr, sizeof errstr);
  if (new_topic == nullptr) fail("kafka: invalid topic spec for {}: {}", topic.name, errstr);
  for (const auto& [key, value] : topic.configs) {
    if (rd_kafka_NewTopic_set_config(new_topic, key.c_str(), value.c_str()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_NewTopic_destroy(new_topic);
      fail("kafka: invalid config {}={} for topic {}", key, value, topic.name);
    }
  }
  AdminRequest request(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS, timeout);
  rd_kafka_CreateTopics(rk, &new_topic, 1, request.options(), request.queue());
  CreateResult result = CreateResult::kCreated;
  std::string failure;
  if (rd_kafka_event_t* event = request.await(failure)) {
    size_t count = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &count);
    for (size_t i = 0; i < count; ++i) {
      const rd_kafka_resp_err_t code = rd_kafka_topic_result_error(results[i]);
      if (code == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        result = CreateResult::kAlreadyExists;
      } else if (code != RD_KAFKA_RESP_ERR_NO_ERROR) {
        failure = failure_of(code, rd_kafka_topic_result_error_string(results[i]));
      }
    }
  }
  rd_kafka_NewTopic_destroy(new_topic);
  if (!failure.empty()) fail("kafka {}: cannot create topic {}: {}", options.bootstrap_servers, topic.name, failure);
  return result;
}

void delete_topic(const ClientOptions& options, const std::string& topic, std::chrono::milliseconds timeout) {
  const auto handle = admin_handle(options);
  rd_kafka_t* rk = handle->c_ptr();
  rd_kafka_DeleteTopic_t* deleted = rd_kafka_DeleteTopic_new(topic.c_str());
  AdminRequest request(rk, RD_KAFKA_ADMIN_OP_DELETETOPICS, timeout);
  rd_kafka_DeleteTopics(rk, &deleted, 1, request.options(), request.queue());
  std::string failure;
  if (rd_kafka_event_t* event = request.await(failure)) {
    size_t count = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(event), &count);
    for (size_t i = 0; i < count; ++i) {
      const rd_kafka_resp_err_t code = rd_kafka_topic_result_error(results[i]);
      if (code != RD_KAFKA_RESP_ERR_NO_ERROR && code != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
        failure = failure_of(code, rd_kafka_topic_result_error_string(results[i]));
      }
    }
  }
  rd_kafka_DeleteTopic_destroy(deleted);
  if (!failure.empty()) fail("kafka {}: cannot delete topic {}: {}", options.bootstrap_servers, topic, failure);
}

void set_topic_configs(const ClientOptions& options, const std::string& topic,
                       const std::map<std::string, std::string>& configs, std::chrono::milliseconds timeout) {
  const auto handle = admin_handle(options);
  rd_kafka_t* rk = handle->c_ptr();
  rd_kafka_ConfigResource_t* resource = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str());
  for (const auto& [key, value] : configs) rd_kafka_ConfigResource_set_config(resource, key.c_str(), value.c_str());
  AdminRequest request(rk, RD_KAFKA_ADMIN_OP_ALTERCONFIGS, timeout);
  rd_kafka_AlterConfigs(rk, &resource, 1, request.options(), request.queue());
  std::string failure;
  if (rd_kafka_event_t* event = request.await(failure)) {
    size_t count = 0;
    const rd_kafka_ConfigResource_t** results =
        rd_kafka_AlterConfigs_result_resources(rd_kafka_event_AlterConfigs_result(event), &count);
    for (size_t i = 0; i < count; ++i) {
      if (const rd_kafka_resp_err_t code = rd_kafka_ConfigResource_error(results[i]);
          code != RD_KAFKA_RESP_ERR_NO_ERROR) {
        failure = failure_of(code, rd_kafka_ConfigResource_error_string(results[i]));
      }
    }
  }
  rd_kafka_ConfigResource_destroy(resource);
  if (!failure.empty())
    fail("kafka {}: cannot set the configs of topic {}: {}", options.bootstrap_servers, topic, failure);
}

std::optional<std::int32_t> partition_count_if_exists(const ClientOptions& options, const std::string& topic,
                                                      std::chrono::milliseconds timeout) {
  const auto handle = admin_handle(options);
  const FoundTopic found = find_topic(options, *handle, topic, timeout);
  if (found.topic == nullptr) return std::nullopt;
  return static_cast<std::int32_t>(found.topic->partitions()->size());
}

std::optional<TopicDescription> describe_topic(const ClientOptions& options, const std::string& topic,
                                               std::chrono::milliseconds timeout) {
  const auto handle = admin_handle(options);
  const FoundTopic found = find_topic(options, *handle, topic, timeout);
  if (found.topic == nullptr) return std::nullopt;
  if (found.topic->partitions()->empty())
    fail("kafka {}: topic {} has no partitions yet", options.bootstrap_servers, topic);
  TopicDescription description;
  description.partitions = static_cast<std::int32_t>(found.topic->partitions()->size());
  description.replication_factor = static_cast<std::int16_t>(found.topic->partitions()->front()->replicas()->size());
  description.configs = topic_configs(options, handle->c_ptr(), topic, timeout);
  return description;
}

std::int32_t partition_count(const ClientOptions& options, const std::string& topic,
                             std::chrono::milliseconds timeout) {
  const auto count = partition_count_if_exists(options, topic, timeout);
  if (!count) fail("kafka {}: topic {} does not exist", options.bootstrap_servers, topic);
  return *count;
}

}  // namespace binberg::kafka
