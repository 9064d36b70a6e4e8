#include "sink/kafka_sink.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/backoff.h"
#include "core/error.h"
#include "sink/kafka_ports.h"
#include "sink/sink_session.h"

namespace binberg::sink {
namespace {

// After a failed session, the sink waits 0.5 s, then twice as long each time, up to 5 s.
constexpr std::chrono::milliseconds kFirstRetry{500};

KafkaSinkOptions checked(KafkaSinkOptions options) {
  if (options.topics.empty()) throw ConfigError("sink: no topics to read ([sink] topics)");
  if (options.kafka.bootstrap_servers.empty()) throw ConfigError("sink: [kafka] bootstrap_servers is required");
  if (options.registry.url.empty()) throw ConfigError("sink: [registry] url is required");
  std::sort(options.topics.begin(), options.topics.end());
  options.topics.erase(std::unique(options.topics.begin(), options.topics.end()), options.topics.end());
  if (options.scale_out && (!options.rebuild.empty() || options.read_from)) {
    throw ConfigError("sink: --from and --rebuild read every table in one process: run them without scale-out");
  }
  return options;
}

}  // namespace

KafkaSink::KafkaSink(KafkaSinkOptions options, iceberg::Catalog& catalog)
    : KafkaSink(std::move(options), catalog, kafka_environment(), nullptr) {}

KafkaSink::KafkaSink(KafkaSinkOptions options, iceberg::Catalog& catalog, SinkEnvironment& environment)
    : KafkaSink(std::move(options), catalog, nullptr, &environment) {}

KafkaSink::KafkaSink(KafkaSinkOptions options, iceberg::Catalog& catalog, std::unique_ptr<SinkEnvironment> owned,
                     SinkEnvironment* borrowed)
    : options_(checked(std::move(options))),
      catalog_(catalog),
      own_environment_(std::move(owned)),
      environment_(borrowed != nullptr ? *borrowed : *own_environment_),
      own_registry_(options_.metrics == nullptr ? std::make_unique<metrics::Registry>() : nullptr),
      metrics_(options_.metrics != nullptr ? *options_.metrics : *own_registry_),
      ownership_(options_.topics,
                 fmt::format("{}/{}/{}", options_.group_id, environment_.process(), environment_.clock().unix_millis()),
                 options_.scale_out ? Scaling::kShared : Scaling::kAlone) {}

KafkaSink::~KafkaSink() = default;

bool KafkaSink::take_slots(SlotSource& slots) {
  const bool fence_ended = ownership_.lift_fences(environment_.clock().now());
  if (!slots.poll() || !ownership_.assign(slots.slots())) return fence_ended;
  metrics_.owned_tables().set(static_cast<double>(ownership_.owned().size()));
  spdlog::info("sink: the group gives this sink {} of {} topics: {}", ownership_.owned().size(), options_.topics.size(),
               fmt::join(ownership_.owned(), ", "));
  return true;
}

bool KafkaSink::back_off(std::chrono::milliseconds backoff, const std::function<bool()>& stop, SlotSource* slots) {
  for (auto waited = std::chrono::milliseconds(0); waited < backoff; waited += std::chrono::milliseconds(100)) {
    if (stop()) return false;
    if (slots != nullptr) take_slots(*slots);  // stays in the group; the next session writes what it holds
    environment_.clock().sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

bool KafkaSink::leave_group(std::unique_ptr<SlotSource>& slots, const std::function<bool()>& stop, const Error& last) {
  spdlog::warn(
      "sink: no commit for {} ms while its sessions fail (last: {}): {} leaves group {} so that the other sinks take "
      "its {} tables, and joins again once the catalog answers",
      options_.stall_timeout.count(), last.what(), ownership_.writer(), options_.group_id, ownership_.owned().size());
  slots.reset();  // closes the member: the group gives its slots to the others at once
  ownership_.assign({});
  metrics_.owned_tables().set(0);
  ++stats_.left_group;
  Backoff backoff(kFirstRetry);
  for (;;) {
    try {
      catalog_.list_namespaces();  // retried inside for [iceberg] catalog_retry_timeout_ms
      break;
    } catch (const ConfigError&) {
      throw;
    } catch (const Error& error) {
      spdlog::debug("sink: the catalog does not answer yet: {}", error.what());
    }
    if (!back_off(backoff.next(), stop, nullptr)) return false;
  }
  spdlog::info("sink: the catalog answers again: {} joins group {} again", ownership_.writer(), options_.group_id);
  return !stop();
}

void KafkaSink::run(const std::function<bool()>& stop) {
  std::uint32_t failures = 0;
  Backoff backoff(kFirstRetry);
  // Since when sessions have failed without a commit between (the sink has work it cannot do).
  std::optional<std::chrono::steady_clock::time_point> failing_since;
  std::unique_ptr<SlotSource> slots;
  // Scale-out: a session ends (committing what is whole) when the group moves topics to or from
  // this sink, and the next one writes the topics it holds then.
  const auto session_stop = [&] { return stop() || (slots && take_slots(*slots)); };
  const SinkContext context{options_, catalog_, environment_, metrics_, stats_, ownership_, carried_barrier_};
  for (;;) {
    const std::uint64_t commits_before = stats_.commits;
    try {
      if (options_.scale_out && !slots) slots = environment_.join_group(options_, ownership_.writer());
      SinkSession(context).run(session_stop);
      if (!slots || stop()) return;
      failing_since.reset();
      continue;
    } catch (const ConfigError&) {
      throw;
    } catch (const TableStopped& stopped) {
      spdlog::error("sink: {}", stopped.what());
      ownership_.stop(stopped.topic(), stopped.what());
      stats_.stopped_tables.push_back(stopped.topic());
      metrics_.stopped_tables.set(static_cast<double>(ownership_.stopped().size()));
    } catch (const AbandonedTransaction& error) {
      spdlog::warn("sink: {}", error.what());
    } catch (const BehindSchemaChange& error) {
      spdlog::warn("sink: {}", error.what());
    } catch (const iceberg::CommitConflict& conflict) {
      spdlog::warn("sink: {}; another writer committed to the table: reading again from the committed offsets",
                   conflict.what());
    } catch (const Error& error) {  // an operating error: a connection, Kafka, the registry, the catalog
      if (stats_.commits > commits_before) {
        failures = 0;
        backoff.reset();
        failing_since.reset();
      }
      if (!failing_since) failing_since = environment_.clock().now();
      ++failures;
      if (options_.max_consecutive_failures != 0 && failures >= options_.max_consecutive_failures) throw;
      // Scale-out: a sink that cannot commit (its catalog unreachable from here) gives its tables to
      // the group rather than holding them idle; the sessions of the others then write them.
      if (slots && environment_.clock().now() - *failing_since >= options_.stall_timeout) {
        if (!leave_group(slots, stop, error)) return;
        failing_since.reset();
        backoff.reset();
        continue;
      }
      const std::chrono::milliseconds wait = backoff.next();
      spdlog::warn("sink: {}; starting over from the committed offsets in {} ms", error.what(), wait.count());
      if (!back_off(wait, stop, slots.get())) return;
    }
    ++stats_.rollbacks;
    metrics_.rollbacks.add();
  }
}

}  // namespace binberg::sink
