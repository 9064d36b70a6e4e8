#include "kafka/group_membership.h"

#include <librdkafka/rdkafkacpp.h>

#include <utility>
#include <vector>

#include "core/error.h"

namespace binberg::kafka {

namespace {

// Applies each rebalance at once and records the slots held. The group is cooperative-sticky only
// (join() configures nothing else): only the slots that move are assigned or revoked.
class SlotsRebalance : public RdKafka::RebalanceCb {
 public:
  void rebalance_cb(RdKafka::KafkaConsumer* consumer, RdKafka::ErrorCode code,
                    std::vector<RdKafka::TopicPartition*>& partitions) override {
    std::unique_ptr<RdKafka::Error> error;
    if (code == RdKafka::ERR__ASSIGN_PARTITIONS) {
      error.reset(consumer->incremental_assign(partitions));
      for (const RdKafka::TopicPartition* p : partitions) slots.insert(p->partition());
    } else {  // revoked, or lost (this member was dropped from the group)
      error.reset(consumer->incremental_unassign(partitions));
      for (const RdKafka::TopicPartition* p : partitions) slots.erase(p->partition());
    }
    changed = true;
    if (error && failure.empty()) failure = error->str();
  }

  std::set<std::int32_t> slots;
  bool changed = false;
  std::string failure;  // of the last incremental (un)assign that failed
};

}  // namespace

struct GroupMembership::State {
  SlotsRebalance rebalance;  // outlives the consumer, which calls it
  std::unique_ptr<RdKafka::KafkaConsumer> consumer;
  std::string bootstrap, group;
};

GroupMembership::GroupMembership(std::unique_ptr<State> state) : state_(std::move(state)) {}
GroupMembership::GroupMembership(GroupMembership&&) noexcept = default;
GroupMembership& GroupMembership::operator=(GroupMembership&&) noexcept = default;
GroupMembership::~GroupMembership() {
  if (state_ && state_->consumer) state_->consumer->close();
}

GroupMembership GroupMembership::join(const GroupMembershipOptions& options) {
  if (options.group_id.empty()) throw ConfigError("kafka: a group membership needs a group id");
  auto state = std::make_unique<State>();
  state->bootstrap = options.client.bootstrap_servers;
  state->group = options.group_id;
  const auto session_ms = std::to_string(options.session_timeout.count());
  const auto heartbeat_ms = std::to_string(std::max<std::int64_t>(options.session_timeout.count() / 5, 100));
  auto conf = make_config(options.client, {
                                              {"group.id", options.group_id},
                                              {"partition.assignment.strategy", "cooperative-sticky"},
                                              {"session.timeout.ms", session_ms},
                                              {"heartbeat.interval.ms", heartbeat_ms},
                                              {"max.poll.interval.ms", std::to_string(options.stall_timeout.count())},
                                              {"enable.auto.commit", "false"},
                                              {"auto.offset.reset", "latest"},
                                              {"client.id", "binberg"},
                                          });
  std::string error;
  if (conf->set("rebalance_cb", &state->rebalance, error) != RdKafka::Conf::CONF_OK) {
    fail("kafka: cannot set the rebalance callback: {}", error);
  }
  state->consumer.reset(RdKafka::KafkaConsumer::create(conf.get(), error));
  if (!state->consumer) fail("kafka {}: cannot create the group member: {}", options.client.bootstrap_servers, error);
  const auto code = state->consumer->subscribe({options.slots_topic});
  if (code != RdKafka::ERR_NO_ERROR) {
    fail("kafka {}: group {} cannot subscribe to {}: {}", options.client.bootstrap_servers, options.group_id,
         options.slots_topic, RdKafka::err2str(code));
  }
  return GroupMembership(std::move(state));
}

bool GroupMembership::poll() {
  std::unique_ptr<RdKafka::Message> message(state_->consumer->consume(0));
  // Transient errors (a broker away) are retried inside librdkafka; a member it cannot keep in
  // the group loses its slots through the callback.
  if (message->err() == RdKafka::ERR__FATAL) {
    std::string reason;
    state_->consumer->fatal_error(reason);
    fail("kafka {}: group {}: fatal consumer error: {}", state_->bootstrap, state_->group, reason);
  }
  if (!state_->rebalance.failure.empty()) {
    const std::string failure = std::exchange(state_->rebalance.failure, "");
    fail("kafka {}: group {}: a rebalance failed: {}", state_->bootstrap, state_->group, failure);
  }
  return std::exchange(state_->rebalance.changed, false);
}

const std::set<std::int32_t>& GroupMembership::slots() const { return state_->rebalance.slots; }

}  // namespace binberg::kafka
