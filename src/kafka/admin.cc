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

// The configs of TOPIC as the brokers apply them (DescribeConfigs).
std::map<std::string, std::string> topic_configs(const ClientOptions& options, rd_kafka_t* rk, const std::string& topic,
                                                 std::chrono::milliseconds timeout) {
  char errstr[512];
  rd_kafka_ConfigResource_t* resource = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str());
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
  rd_kafka_AdminOptions_t* admin_options = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
  rd_kafka_AdminOptions_set_request_timeout(admin_options, static_cast<int>(timeout.count()), errstr, sizeof errstr);
  rd_kafka_DescribeConfigs(rk, &resource, 1, admin_options, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, static_cast<int>(timeout.count()) + 5000);
  std::map<std::string, std::string> configs;
  std::string failure;
  if (event == nullptr) {
    failure = "no answer in time";
  } else if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    failure = rd_kafka_event_error_string(event);
  } else {
    size_t count = 0;
    const rd_kafka_ConfigResource_t** results =
        rd_kafka_DescribeConfigs_result_resources(rd_kafka_event_DescribeConfigs_result(event), &count);
    for (size_t i = 0; i < count; ++i) {
      if (rd_kafka_ConfigResource_error(results[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        failure = rd_kafka_ConfigResource_error_string(results[i]);
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
  if (event != nullptr) rd_kafka_event_destroy(event);
  rd_kafka_AdminOptions_destroy(admin_options);
  rd_kafka_queue_destroy(queue);
  rd_kafka_ConfigResource_destroy(resource);
  if (!failure.empty())
    fail("kafka {}: cannot describe the configs of topic {}: {}", options.bootstrap_servers, topic, failure);
  return configs;
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
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
  rd_kafka_AdminOptions_t* admin_options = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_operation_timeout(admin_options, static_cast<int>(timeout.count()), errstr, sizeof errstr);
  rd_kafka_CreateTopics(rk, &new_topic, 1, admin_options, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, static_cast<int>(timeout.count()) + 5000);

  CreateResult result = CreateResult::kCreated;
  std::string failure;
  if (event == nullptr) {
    failure = "no answer from the controller in time";
  } else if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    failure = rd_kafka_event_error_string(event);
  } else {
    size_t count = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &count);
    for (size_t i = 0; i < count; ++i) {
      rd_kafka_resp_err_t code = rd_kafka_topic_result_error(results[i]);
      if (code == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        result = CreateResult::kAlreadyExists;
      } else if (code != RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char* message = rd_kafka_topic_result_error_string(results[i]);
        failure = message != nullptr ? message : rd_kafka_err2str(code);
      }
    }
  }
  if (event != nullptr) rd_kafka_event_destroy(event);
  rd_kafka_AdminOptions_destroy(admin_options);
  rd_kafka_queue_destroy(queue);
  rd_kafka_NewTopic_destroy(new_topic);
  if (!failure.empty()) fail("kafka {}: cannot create topic {}: {}", options.bootstrap_servers, topic.name, failure);
  return result;
}

void delete_topic(const ClientOptions& options, const std::string& topic, std::chrono::milliseconds timeout) {
  const auto handle = admin_handle(options);
  rd_kafka_t* rk = handle->c_ptr();
  char errstr[512];
  rd_kafka_DeleteTopic_t* deleted = rd_kafka_DeleteTopic_new(topic.c_str());
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
  rd_kafka_AdminOptions_t* admin_options = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DELETETOPICS);
  rd_kafka_AdminOptions_set_operation_timeout(admin_options, static_cast<int>(timeout.count()), errstr, sizeof errstr);
  rd_kafka_DeleteTopics(rk, &deleted, 1, admin_options, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, static_cast<int>(timeout.count()) + 5000);
  std::string failure;
  if (event == nullptr) {
    failure = "no answer from the controller in time";
  } else if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    failure = rd_kafka_event_error_string(event);
  } else {
    size_t count = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(event), &count);
    for (size_t i = 0; i < count; ++i) {
      const rd_kafka_resp_err_t code = rd_kafka_topic_result_error(results[i]);
      if (code != RD_KAFKA_RESP_ERR_NO_ERROR && code != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
        const char* message = rd_kafka_topic_result_error_string(results[i]);
        failure = message != nullptr ? message : rd_kafka_err2str(code);
      }
    }
  }
  if (event != nullptr) rd_kafka_event_destroy(event);
  rd_kafka_AdminOptions_destroy(admin_options);
  rd_kafka_queue_destroy(queue);
  rd_kafka_DeleteTopic_destroy(deleted);
  if (!failure.empty()) fail("kafka {}: cannot delete topic {}: {}", options.bootstrap_servers, topic, failure);
}

void set_topic_configs(const ClientOptions& options, const std::string& topic,
                       const std::map<std::string, std::string>& configs, std::chrono::milliseconds timeout) {
  const auto handle = admin_handle(options);
  rd_kafka_t* rk = handle->c_ptr();
  char errstr[512];
  rd_kafka_ConfigResource_t* resource = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str());
  for (const auto& [key, value] : configs) rd_kafka_ConfigResource_set_config(resource, key.c_str(), value.c_str());
  rd_kafka_queue_t* queue = rd_kafka_queue_new(rk);
  rd_kafka_AdminOptions_t* admin_options = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_ALTERCONFIGS);
  rd_kafka_AdminOptions_set_request_timeout(admin_options, static_cast<int>(timeout.count()), errstr, sizeof errstr);
  rd_kafka_AlterConfigs(rk, &resource, 1, admin_options, queue);
  rd_kafka_event_t* event = rd_kafka_queue_poll(queue, static_cast<int>(timeout.count()) + 5000);
  std::string failure;
  if (event == nullptr) {
    failure = "no answer from the broker in time";
  } else if (rd_kafka_event_error(event) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    failure = rd_kafka_event_error_string(event);
  } else {
    size_t count = 0;
    const rd_kafka_ConfigResource_t** results =
        rd_kafka_AlterConfigs_result_resources(rd_kafka_event_AlterConfigs_result(event), &count);
    for (size_t i = 0; i < count; ++i) {
      if (rd_kafka_ConfigResource_error(results[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char* message = rd_kafka_ConfigResource_error_string(results[i]);
        failure = message != nullptr ? message : rd_kafka_err2str(rd_kafka_ConfigResource_error(results[i]));
      }
    }
  }
  if (event != nullptr) rd_kafka_event_destroy(event);
  rd_kafka_AdminOptions_destroy(admin_options);
  rd_kafka_queue_destroy(queue);
  rd_kafka_ConfigResource_destroy(resource);
  if (!failure.empty())
    fail("kafka {}: cannot set the configs of topic {}: {}", options.bootstrap_servers, topic, failure);
}

std::optional<std::int32_t> partition_count_if_exists(const ClientOptions& options, const std::string& topic,
                                                      std::chrono::milliseconds timeout) {
  const auto handle = admin_handle(options);
  std::string error;
  std::unique_ptr<RdKafka::Topic> topic_handle(RdKafka::Topic::create(handle.get(), topic, nullptr, error));
  if (!topic_handle) fail("kafka {}: topic {}: {}", options.bootstrap_servers, topic, error);
  RdKafka::Metadata* raw = nullptr;
  const auto code = handle->metadata(false, topic_handle.get(), &raw, static_cast<int>(timeout.count()));
  std::unique_ptr<RdKafka::Metadata> metadata(raw);
  if (code != RdKafka::ERR_NO_ERROR) {
    fail("kafka {}: no metadata for topic {}: {}", options.bootstrap_servers, topic, RdKafka::err2str(code));
  }
  for (const RdKafka::TopicMetadata* found : *metadata->topics()) {
    if (found->topic() != topic) continue;
    if (found->err() == RdKafka::ERR_UNKNOWN_TOPIC_OR_PART) return std::nullopt;
    if (found->err() != RdKafka::ERR_NO_ERROR) {
      fail("kafka {}: topic {}: {}", options.bootstrap_servers, topic, RdKafka::err2str(found->err()));
    }
    return static_cast<std::int32_t>(found->partitions()->size());
  }
  return std::nullopt;
}

std::optional<TopicDescription> describe_topic(const ClientOptions& options, const std::string& topic,
                                               std::chrono::milliseconds timeout) {
  const auto handle = admin_handle(options);
  std::string error;
  std::unique_ptr<RdKafka::Topic> topic_handle(RdKafka::Topic::create(handle.get(), topic, nullptr, error));
  if (!topic_handle) fail("kafka {}: topic {}: {}", options.bootstrap_servers, topic, error);
  RdKafka::Metadata* raw = nullptr;
  const auto code = handle->metadata(false, topic_handle.get(), &raw, static_cast<int>(timeout.count()));
  std::unique_ptr<RdKafka::Metadata> metadata(raw);
  if (code != RdKafka::ERR_NO_ERROR) {
    fail("kafka {}: no metadata for topic {}: {}", options.bootstrap_servers, topic, RdKafka::err2str(code));
  }
  for (const RdKafka::TopicMetadata* found : *metadata->topics()) {
    if (found->topic() != topic) continue;
    if (found->err() == RdKafka::ERR_UNKNOWN_TOPIC_OR_PART) return std::nullopt;
    if (found->err() != RdKafka::ERR_NO_ERROR || found->partitions()->empty()) {
      fail("kafka {}: topic {}: {}", options.bootstrap_servers, topic, RdKafka::err2str(found->err()));
    }
    TopicDescription description;
    description.partitions = static_cast<std::int32_t>(found->partitions()->size());
    description.replication_factor = static_cast<std::int16_t>(found->partitions()->front()->replicas()->size());
    description.configs = topic_configs(options, handle->c_ptr(), topic, timeout);
    return description;
  }
  return std::nullopt;
}

std::int32_t partition_count(const ClientOptions& options, const std::string& topic,
                             std::chrono::milliseconds timeout) {
  const auto count = partition_count_if_exists(options, topic, timeout);
  if (!count) fail("kafka {}: topic {} does not exist", options.bootstrap_servers, topic);
  return *count;
}

}  // namespace binberg::kafka
