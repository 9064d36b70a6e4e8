#include <gtest/gtest.h>
#include <librdkafka/rdkafkacpp.h>

#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "core/error.h"
#include "kafka/admin.h"
#include "kafka/consumer.h"
#include "kafka/group_membership.h"
#include "kafka/producer.h"
#include "support/test_services.h"

namespace binberg::kafka {
namespace {

using namespace std::chrono_literals;

ClientOptions client() { return ClientOptions{testing::stack().kafka_bootstrap_servers(), {}}; }

std::string new_topic(int partitions = 1) {
  const std::string topic = testing::unique_name("binberg.test");
  EXPECT_EQ(create_topic(client(), TopicSpec{topic, partitions, 1, {}}), CreateResult::kCreated);
  return topic;
}

// Reads TOPIC partition 0 from offset 0 until IDLE passes with no new record.
std::vector<ConsumedRecord> read_all(const std::string& topic, bool read_committed,
                                     std::chrono::milliseconds idle = 2000ms) {
  auto consumer = Consumer::create(ConsumerOptions{client(), testing::unique_name("group"), read_committed});
  consumer.assign({PartitionStart{topic, 0, 0}});
  std::vector<ConsumedRecord> records;
  auto last = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - last < idle) {
    if (auto record = consumer.poll(200ms)) {
      records.push_back(*record);
      last = std::chrono::steady_clock::now();
    }
  }
  return records;
}

std::vector<std::string> values(const std::vector<ConsumedRecord>& records) {
  std::vector<std::string> out;
  for (const auto& r : records) out.push_back(r.value.value_or("<null>"));
  return out;
}

OutgoingRecord record(const std::string& topic, const std::string& key, const std::string& value) {
  return OutgoingRecord{topic, 0, key, value, {Header{"binberg.event_id", "e-" + key}}};
}

// Polls MEMBERS until SETTLED says their slots are as wanted, or fails after 60 s.
void poll_until(std::vector<GroupMembership*> members, const std::function<bool()>& settled) {
  for (int attempt = 0; attempt < 600; ++attempt) {
    for (GroupMembership* member : members) member->poll();
    if (settled()) return;
    std::this_thread::sleep_for(100ms);
  }
  ADD_FAILURE() << "the group's slots did not settle";
}

// Members of a group share the slots (the partitions of one topic) without overlap; a member that
// joins takes slots from the others (cooperative), and one that leaves hands its slots back.
TEST(KafkaTest, GroupMembersShareSlotsAndHandThemOver) {
  const std::string slots = new_topic(4);
  const GroupMembershipOptions options{client(), testing::unique_name("members"), slots, 6000ms};
  auto first = GroupMembership::join(options);
  poll_until({&first}, [&] { return first.slots().size() == 4; });
  std::optional<GroupMembership> second = GroupMembership::join(options);
  poll_until({&first, &*second}, [&] { return first.slots().size() == 2 && second->slots().size() == 2; });
  std::set<std::int32_t> all = first.slots();
  all.insert(second->slots().begin(), second->slots().end());
  EXPECT_EQ(all, (std::set<std::int32_t>{0, 1, 2, 3})) << "two members hold every slot once";
  EXPECT_FALSE(first.poll()) << "nothing moved since";
  second.reset();  // leaves the group
  poll_until({&first}, [&] { return first.slots().size() == 4; });
}

TEST(KafkaTest, CreateTopicTwiceReportsExisting) {
  const std::string topic = new_topic();
  EXPECT_EQ(create_topic(client(), TopicSpec{topic, 1, 1, {}}), CreateResult::kAlreadyExists);
  EXPECT_THROW(create_topic(client(), TopicSpec{testing::unique_name("bad"), 1, 3, {}}), Error)
      << "replication factor 3 on a single broker must fail";
}

TEST(KafkaTest, IdempotentProducerDeliversEveryRecordOnceWithKeysAndHeaders) {
  const std::string topic = new_topic();
  auto producer = Producer::create(client(), ProducerMode::kIdempotent);
  for (int i = 0; i < 100; ++i) producer.send(record(topic, std::to_string(i), "v" + std::to_string(i)));
  producer.flush(30s);
  EXPECT_EQ(producer.delivered(), 100u);

  auto records = read_all(topic, /*read_committed=*/true);
  ASSERT_EQ(records.size(), 100u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(records[i].offset, i);
    EXPECT_EQ(records[i].key, std::to_string(i));
    EXPECT_EQ(records[i].value, "v" + std::to_string(i));
    ASSERT_EQ(records[i].headers.size(), 1u);
    EXPECT_EQ(records[i].headers[0].value, "e-" + std::to_string(i));
  }
}

TEST(KafkaTest, ReadCommittedSeesCommittedTransactionsOnly) {
  const std::string topic = new_topic();
  auto producer = Producer::create(client(), ProducerMode::kTransactional, testing::unique_name("txn"));
  producer.begin_transaction();
  producer.send(record(topic, "1", "committed-1"));
  producer.send(record(topic, "2", "committed-2"));
  producer.commit_transaction();
  producer.begin_transaction();
  producer.send(record(topic, "3", "aborted-3"));
  producer.flush(30s);  // the aborted record reaches the log before the abort marker
  producer.abort_transaction();
  producer.begin_transaction();
  producer.send(record(topic, "4", "committed-4"));
  producer.commit_transaction();

  EXPECT_EQ(values(read_all(topic, /*read_committed=*/true)),
            (std::vector<std::string>{"committed-1", "committed-2", "committed-4"}));
  // The aborted record is really in the log: an uncommitted reader sees it.
  EXPECT_EQ(values(read_all(topic, /*read_committed=*/false)),
            (std::vector<std::string>{"committed-1", "committed-2", "aborted-3", "committed-4"}));
}

TEST(KafkaTest, OpenTransactionIsInvisibleUntilCommitted) {
  const std::string topic = new_topic();
  auto producer = Producer::create(client(), ProducerMode::kTransactional, testing::unique_name("txn"));
  producer.begin_transaction();
  producer.send(record(topic, "1", "pending"));
  producer.flush(30s);
  EXPECT_TRUE(read_all(topic, /*read_committed=*/true, 1500ms).empty());
  producer.commit_transaction();
  EXPECT_EQ(values(read_all(topic, /*read_committed=*/true)), (std::vector<std::string>{"pending"}));
}

TEST(KafkaTest, ProducingToAMissingTopicFailsLoudly) {
  auto producer = Producer::create(client(), ProducerMode::kIdempotent);
  producer.send(record(testing::unique_name("missing"), "k", "v"));
  EXPECT_THROW(producer.flush(20s), Error);
}

// librdkafka 2.0.2 gates features on broker API versions; Kafka 4 removed old protocol versions
// (KIP-896). This proves the features binberg's exactly-once design needs stay enabled.
class FeatureLog : public RdKafka::EventCb {
 public:
  void event_cb(RdKafka::Event& event) override {
    if (event.type() != RdKafka::Event::EVENT_LOG) return;
    std::lock_guard lock(mutex);
    lines.push_back(event.str());
  }
  std::mutex mutex;
  std::vector<std::string> lines;
};

TEST(KafkaTest, BrokerKeepsIdempotenceTransactionsAndGroupFeatures) {
  FeatureLog log;
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string error;
  ASSERT_EQ(conf->set("bootstrap.servers", testing::stack().kafka_bootstrap_servers(), error), RdKafka::Conf::CONF_OK);
  ASSERT_EQ(conf->set("debug", "feature,broker", error), RdKafka::Conf::CONF_OK);
  ASSERT_EQ(conf->set("enable.idempotence", "true", error), RdKafka::Conf::CONF_OK);
  ASSERT_EQ(conf->set("event_cb", &log, error), RdKafka::Conf::CONF_OK);
  std::unique_ptr<RdKafka::Producer> producer(RdKafka::Producer::create(conf.get(), error));
  ASSERT_TRUE(producer) << error;
  const std::string topic = new_topic();
  const std::string payload = "x";
  ASSERT_EQ(producer->produce(topic, 0, RdKafka::Producer::RK_MSG_COPY, const_cast<char*>(payload.data()),
                              payload.size(), nullptr, 0, 0, nullptr),
            RdKafka::ERR_NO_ERROR);
  ASSERT_EQ(producer->flush(30000), RdKafka::ERR_NO_ERROR);
  producer->poll(100);

  std::lock_guard lock(log.mutex);
  bool saw_feature_lines = false;
  for (const auto& line : log.lines) {
    if (line.find("Updated enabled protocol features") != std::string::npos ||
        line.find("ApiVersion") != std::string::npos) {
      saw_feature_lines = true;
    }
    if (line.find("Disabling feature") == std::string::npos) continue;
    for (const char* feature : {"IdempotentProducer", "MsgVer2", "ZSTD", "BrokerGroupCoordinator"}) {
      EXPECT_EQ(line.find(feature), std::string::npos) << "broker disabled a needed feature: " << line;
    }
  }
  EXPECT_TRUE(saw_feature_lines) << "debug=feature produced no feature log lines; the check proved nothing";
}

}  // namespace
}  // namespace binberg::kafka
