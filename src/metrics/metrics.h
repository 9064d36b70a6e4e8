#pragma once

// Process metrics in the Prometheus text exposition format (version 0.0.4): counters, gauges
// and histograms, each in a family with fixed label names. Updates are lock-free atomics, so the
// pipeline's hot path pays one atomic add; a scrape renders a consistent-enough view (each value
// is read atomically, a family's members are listed under its mutex).

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace binberg::metrics {

class Counter {
 public:
  void add(double amount = 1) { value_.fetch_add(amount, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Gauge {
 public:
  void set(double value) { value_.store(value, std::memory_order_relaxed); }
  void add(double amount) { value_.fetch_add(amount, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

class Histogram {
 public:
  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value);

  const std::vector<double>& upper_bounds() const { return upper_bounds_; }
  // Cumulative counts per bound, then +Inf.
  std::vector<std::uint64_t> cumulative_counts() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }
  std::uint64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> upper_bounds_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // per bound, then +Inf (not cumulative)
  std::atomic<double> sum_{0};
  std::atomic<std::uint64_t> count_{0};
};

enum class Kind { kCounter, kGauge, kHistogram };

// All metrics of one name: one member per distinct label-value tuple.
class Family {
 public:
  Family(std::string name, std::string help, Kind kind, std::vector<std::string> label_names,
         std::vector<double> buckets = {});

  // The member with LABEL_VALUES (one per label name), created on first use. The reference
  // stays valid for the family's lifetime: callers keep it for the hot path.
  Counter& counter(const std::vector<std::string>& label_values = {});
  Gauge& gauge(const std::vector<std::string>& label_values = {});
  Histogram& histogram(const std::vector<std::string>& label_values = {});

  void render(std::string& out) const;
  const std::string& name() const { return name_; }
  bool has_shape(const std::string& help, Kind kind, const std::vector<std::string>& label_names) const;

 private:
  struct Member {
    Counter counter;
    Gauge gauge;
    std::unique_ptr<Histogram> histogram;
  };
  Member& member(const std::vector<std::string>& label_values, Kind kind);

  std::string name_, help_;
  Kind kind_;
  std::vector<std::string> label_names_;
  std::vector<double> buckets_;
  mutable std::mutex mutex_;
  std::map<std::vector<std::string>, std::unique_ptr<Member>> members_;
};

class Registry {
 public:
  // Families are registered once per name; registering a name again returns the same family
  // (and throws Error when its kind, help or labels differ).
  Family& counter(const std::string& name, const std::string& help, std::vector<std::string> labels = {});
  Family& gauge(const std::string& name, const std::string& help, std::vector<std::string> labels = {});
  Family& histogram(const std::string& name, const std::string& help, std::vector<double> buckets,
                    std::vector<std::string> labels = {});

  // The text exposition of every family, sorted by name.
  std::string render() const;

 private:
  Family& add(const std::string& name, const std::string& help, Kind kind, std::vector<std::string> labels,
              std::vector<double> buckets);

  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Family>> families_;
};

// Label values and help text escaped for the exposition format (backslash, quote, newline).
std::string escape_label_value(const std::string& value);
// A sample value: integers without a fraction, NaN and infinities as Prometheus spells them.
std::string format_value(double value);

}  // namespace binberg::metrics
