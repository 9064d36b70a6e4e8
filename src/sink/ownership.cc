#include "sink/ownership.h"

#include <algorithm>

#include "core/assert.h"

namespace binberg::sink {

Ownership::Ownership(std::vector<std::string> topics, std::string writer, Scaling scaling)
    : topics_(std::move(topics)), writer_(std::move(writer)), scaling_(scaling) {
  BINBERG_ASSERT(std::is_sorted(topics_.begin(), topics_.end()), "the topics are sorted: slot i is the i-th");
  if (scaling_ == Scaling::kAlone) owned_ = to_claim_ = {topics_.begin(), topics_.end()};
}

bool Ownership::writes(const std::string& topic) const {
  return owned_.contains(topic) && !fenced_until_.contains(topic) && !stopped_.contains(topic);
}

Epoch Ownership::held(const std::string& topic) const {
  const auto it = epochs_.find(topic);
  return it == epochs_.end() ? Epoch() : it->second;
}

Claim Ownership::judge(const std::string& topic, Epoch table_epoch, const std::string& table_writer) const {
  if (to_claim_.contains(topic)) return Claim{Claim::Kind::kClaim, table_epoch.next()};
  if (table_epoch == held(topic) && table_writer == writer_) return Claim{Claim::Kind::kHold, table_epoch};
  return Claim{Claim::Kind::kFenced, table_epoch};
}

void Ownership::committed(const std::string& topic, Epoch epoch) {
  BINBERG_ASSERT(epoch >= held(topic), "table of topic {}: committed at writer epoch {} after holding it at {}", topic,
                 epoch, held(topic));
  epochs_[topic] = epoch;
  to_claim_.erase(topic);
}

void Ownership::fence(const std::string& topic, Time until) {
  if (scaling_ == Scaling::kShared) {
    fenced_until_[topic] = until;
  } else {
    owned_.erase(topic);
  }
}

void Ownership::stop(const std::string& topic, std::string reason) { stopped_.emplace(topic, std::move(reason)); }

bool Ownership::lift_fences(Time now) {
  return std::erase_if(fenced_until_, [&](const auto& fenced) {
           if (fenced.second > now) return false;
           to_claim_.insert(fenced.first);
           return true;
         }) > 0;
}

bool Ownership::assign(const std::vector<std::int32_t>& slots) {
  std::set<std::string> owned;
  for (const std::int32_t slot : slots) {
    if (slot >= 0 && static_cast<std::size_t>(slot) < topics_.size()) owned.insert(topics_[slot]);
  }
  if (owned == owned_) return false;
  for (const std::string& topic : owned) {
    if (!owned_.contains(topic)) to_claim_.insert(topic);  // given (back) to this sink: claim it anew
  }
  std::erase_if(to_claim_, [&](const std::string& topic) { return !owned.contains(topic); });
  std::erase_if(fenced_until_, [&](const auto& fenced) { return !owned.contains(fenced.first); });
  owned_ = std::move(owned);
  return true;
}

}  // namespace binberg::sink
