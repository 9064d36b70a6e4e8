#pragma once

// Membership in a Kafka consumer group used only to share out *slots* among processes: the slots
// are the partitions of one (empty) topic, and the group's cooperative-sticky assignor gives each
// member some of them. The group protocol brings what processes sharing work need: a member that
// dies or stops heartbeating loses its slots after the session timeout, a joining member takes
// slots from the others without the rest moving (cooperative rebalancing), and every change
// reaches the member through poll().
//
// Kafka's view is not a lock: a member that was paused may still act on slots the group already
// gave to another. Callers fence what they write themselves (the sink: writer epochs in its
// tables and the catalog's compare-and-swap).

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "kafka/client_config.h"

namespace binberg::kafka {

struct GroupMembershipOptions {
  ClientOptions client;
  std::string group_id;
  std::string slots_topic;
  // A member not heard of for this long is dropped from the group and its slots go to the others.
  std::chrono::milliseconds session_timeout{10'000};
  // So is one that does not poll() for this long (its process is alive, its work stuck); at least
  // SESSION_TIMEOUT.
  std::chrono::milliseconds stall_timeout{300'000};
};

class GroupMembership {
 public:
  // Joins the group (asynchronously: the first slots arrive through poll()).
  static GroupMembership join(const GroupMembershipOptions& options);

  GroupMembership(GroupMembership&&) noexcept;
  GroupMembership& operator=(GroupMembership&&) noexcept;
  ~GroupMembership();  // leaves the group: its slots go to the others at once

  // Serves the group's callbacks (call it at least every few seconds); returns true when the
  // slots this member holds changed since the last call. Throws Error on a fatal consumer error.
  bool poll();
  const std::set<std::int32_t>& slots() const;

 private:
  struct State;
  explicit GroupMembership(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace binberg::kafka
