#include "metrics/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"

namespace binberg::metrics {
namespace {

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kCounter:
      return "counter";
    case Kind::kGauge:
      return "gauge";
    case Kind::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// Backslash and newline are always escaped; double quotes only in label values (HELP text keeps them).
enum class Quotes { kKept, kEscaped };

std::string escape(const std::string& text, Quotes quotes) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quotes == Quotes::kEscaped) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

// {a="x",b="y"} plus EXTRA (e.g. le="0.5"); empty without labels.
std::string label_text(const std::vector<std::string>& names, const std::vector<std::string>& values,
                       const std::string& extra = "") {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += fmt::format("{}{}=\"{}\"", out.empty() ? "" : ",", names[i], escape_label_value(values[i]));
  }
  if (!extra.empty()) out += (out.empty() ? "" : ",") + extra;
  return out.empty() ? "" : "{" + out + "}";
}

}  // namespace

std::string escape_label_value(const std::string& value) { return escape(value, Quotes::kEscaped); }

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) return fmt::format("{}", static_cast<std::int64_t>(value));
  return fmt::format("{}", value);
}

Histogram::Histogram(std::vector<double> upper_bounds)
    : upper_bounds_(std::move(upper_bounds)),
      buckets_(std::make_unique<std::atomic<std::uint64_t>[]>(upper_bounds_.size() + 1)) {
  if (!std::is_sorted(upper_bounds_.begin(), upper_bounds_.end())) fail("histogram bounds must be sorted");
}

void Histogram::observe(double value) {
  const auto bucket = static_cast<std::size_t>(std::lower_bound(upper_bounds_.begin(), upper_bounds_.end(), value) -
                                               upper_bounds_.begin());
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

std::vector<std::uint64_t> Histogram::cumulative_counts() const {
  std::vector<std::uint64_t> counts;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i <= upper_bounds_.size(); ++i) {
    total += buckets_[i].load(std::memory_order_relaxed);
    counts.push_back(total);
  }
  return counts;
}

Family::Family(std::string name, std::string help, Kind kind, std::vector<std::string> label_names,
               std::vector<double> buckets)
    : name_(std::move(name)),
      help_(std::move(help)),
      kind_(kind),
      label_names_(std::move(label_names)),
      buckets_(std::move(buckets)) {}

bool Family::has_shape(const std::string& help, Kind kind, const std::vector<std::string>& label_names) const {
  return help == help_ && kind == kind_ && label_names == label_names_;
}

Family::Member& Family::member(const std::vector<std::string>& label_values, Kind kind) {
  if (kind != kind_) fail("metric {} is a {}, not a {}", name_, kind_name(kind_), kind_name(kind));
  if (label_values.size() != label_names_.size()) {
    fail("metric {}: {} label values for {} labels", name_, label_values.size(), label_names_.size());
  }
  std::lock_guard lock(mutex_);
  auto& slot = members_[label_values];
  if (!slot) {
    slot = std::make_unique<Member>();
    if (kind_ == Kind::kHistogram) slot->histogram = std::make_unique<Histogram>(buckets_);
  }
  return *slot;
}

Counter& Family::counter(const std::vector<std::string>& label_values) {
  return member(label_values, Kind::kCounter).counter;
}
Gauge& Family::gauge(const std::vector<std::string>& label_values) { return member(label_values, Kind::kGauge).gauge; }
Histogram& Family::histogram(const std::vector<std::string>& label_values) {
  return *member(label_values, Kind::kHistogram).histogram;
}

void Family::render(std::string& out) const {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name_, escape(help_, Quotes::kKept), name_, kind_name(kind_));
  std::lock_guard lock(mutex_);
  for (const auto& [values, member] : members_) {
    switch (kind_) {
      case Kind::kCounter:
        out += fmt::format("{}{} {}\n", name_, label_text(label_names_, values), format_value(member->counter.value()));
        break;
      case Kind::kGauge:
        out += fmt::format("{}{} {}\n", name_, label_text(label_names_, values), format_value(member->gauge.value()));
        break;
      case Kind::kHistogram: {
        const Histogram& histogram = *member->histogram;
        const std::vector<std::uint64_t> counts = histogram.cumulative_counts();
        for (std::size_t i = 0; i < counts.size(); ++i) {
          const std::string bound = i < buckets_.size() ? format_value(buckets_[i]) : "+Inf";
          out += fmt::format("{}_bucket{} {}\n", name_, label_text(label_names_, values, "le=\"" + bound + "\""),
                             counts[i]);
        }
        out += fmt::format("{}_sum{} {}\n", name_, label_text(label_names_, values), format_value(histogram.sum()));
        out += fmt::format("{}_count{} {}\n", name_, label_text(label_names_, values), counts.back());
        break;
      }
    }
  }
}

Family& Registry::add(const std::string& name, const std::string& help, Kind kind, std::vector<std::string> labels,
                      std::vector<double> buckets) {
  std::lock_guard lock(mutex_);
  auto& slot = families_[name];
  if (!slot) {
    slot = std::make_unique<Family>(name, help, kind, std::move(labels), std::move(buckets));
    return *slot;
  }
  if (!slot->has_shape(help, kind, labels)) {
    fail("metric {} registered twice with a different kind, help or labels", name);
  }
  return *slot;
}

Family& Registry::counter(const std::string& name, const std::string& help, std::vector<std::string> labels) {
  return add(name, help, Kind::kCounter, std::move(labels), {});
}
Family& Registry::gauge(const std::string& name, const std::string& help, std::vector<std::string> labels) {
  return add(name, help, Kind::kGauge, std::move(labels), {});
}
Family& Registry::histogram(const std::string& name, const std::string& help, std::vector<double> buckets,
                            std::vector<std::string> labels) {
  return add(name, help, Kind::kHistogram, std::move(labels), std::move(buckets));
}

std::string Registry::render() const {
  std::string out;
  std::lock_guard lock(mutex_);
  for (const auto& [name, family] : families_) family->render(out);
  return out;
}

}  // namespace binberg::metrics
