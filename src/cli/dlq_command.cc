// `binberg dlq ls|show|replay`: the dead letters of `binberg sink` (records it could not decode,
// kept with their original bytes in `<topic>.dlq`) and their replay, once repaired, into the topic
// they came from. The sink applies a replay at most once and never moves a key back
// (sink/kafka_sink.h), so replaying is safe while it runs; `ls` shows what was replayed.

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "cli/commands.h"
#include "cli/config.h"
#include "core/clock.h"
#include "core/error.h"
#include "kafka/admin.h"
#include "kafka/producer.h"
#include "sink/dead_letters.h"
#include "sink/kafka_sink.h"

namespace binberg::cli {
namespace {

using nlohmann::json;
constexpr std::chrono::seconds kReadTimeout{120};

struct DlqArgs {
  std::string config;
  std::vector<std::string> topics;
  std::vector<std::int64_t> offsets;
  bool all = false;
  bool reencode = false;
  std::optional<std::int32_t> schema_id;
  bool force = false;
  bool json_output = false;
};

std::string hex(const std::optional<std::string>& bytes) {
  if (!bytes) return "null";
  std::string out;
  for (unsigned char c : *bytes) out += fmt::format("{:02x}", c);
  return out;
}

std::string printable(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return text;
}

json row_json(const TableSchema& table, const std::optional<RowImage>& image) {
  if (!image) return nullptr;
  json row = json::object();
  for (std::size_t i = 0; i < table.columns.size() && i < image->size(); ++i) {
    row[table.columns[i].name] = is_null((*image)[i]) ? json(nullptr) : json(to_display_string((*image)[i]));
  }
  return row;
}

json change_json(const ChangeEvent& event) {
  return json{{"op", std::string(1, static_cast<char>(event.op))},
              {"event_id", event.event_id},
              {"table", event.schema->database + "." + event.schema->table},
              {"before", row_json(*event.schema, event.before)},
              {"after", row_json(*event.schema, event.after)}};
}

struct Context {
  sink::KafkaSinkOptions sink;
  std::vector<std::string> topics;
};

Context context(const DlqArgs& args) {
  Context context{kafka_sink_options(load_config(args.config)), args.topics};
  if (context.topics.empty()) context.topics = context.sink.topics;
  if (context.topics.empty()) throw ConfigError("no topics: give --topic or [sink] topics in the configuration");
  return context;
}

int run_ls(const DlqArgs& args) {
  const Context ctx = context(args);
  json document = json::array();
  for (const std::string& topic : ctx.topics) {
    const auto letters = sink::read_dead_letters(ctx.sink.kafka, topic, kReadTimeout);
    const auto replayed = letters.empty() ? std::map<sink::RecordOrigin, sink::RecordOrigin>{}
                                          : sink::replayed_origins(ctx.sink.kafka, topic, kReadTimeout);
    if (!args.json_output) {
      fmt::print("{}{}: {} dead letters\n", topic, sink::kDeadLetterSuffix, letters.size());
      if (!letters.empty()) {
        fmt::print("  {:>8}  {:<32}  {:<24}  {:<24}  {}\n", "offset", "origin", "written", "replayed", "error");
      }
    }
    for (const sink::DeadLetter& letter : letters) {
      const auto replay = replayed.find(letter.origin);
      const std::string replayed_as = replay == replayed.end() ? "" : replay->second.to_string();
      if (args.json_output) {
        document.push_back(json{{"topic", topic},
                                {"dlq_offset", letter.record.offset},
                                {"origin", letter.origin.to_string()},
                                {"origin_timestamp", utc_time(letter.origin_timestamp_ms)},
                                {"error", letter.error},
                                {"replayed_as", replayed_as.empty() ? json(nullptr) : json(replayed_as)}});
      } else {
        fmt::print("  {:>8}  {:<32}  {:<24}  {:<24}  {}\n", letter.record.offset, letter.origin.to_string(),
                   utc_time(letter.origin_timestamp_ms), replayed_as.empty() ? "-" : replayed_as,
                   printable(letter.error));
      }
    }
  }
  if (args.json_output) std::cout << document.dump(2) << "\n";
  return 0;
}

// The dead letters of TOPIC that ARGS selects (--offset, or --all); throws naming a missing offset.
std::vector<sink::DeadLetter> selected(const DlqArgs& args, const Context& ctx, const std::string& topic) {
  auto letters = sink::read_dead_letters(ctx.sink.kafka, topic, kReadTimeout);
  if (args.all) return letters;
  std::vector<sink::DeadLetter> chosen;
  for (std::int64_t offset : args.offsets) {
    const auto it = std::find_if(letters.begin(), letters.end(),
                                 [&](const sink::DeadLetter& letter) { return letter.record.offset == offset; });
    if (it == letters.end()) {
      throw ConfigError(fmt::format("{}{} has no dead letter at offset {} (binberg dlq ls lists them)", topic,
                                    sink::kDeadLetterSuffix, offset));
    }
    chosen.push_back(*it);
  }
  return chosen;
}

int run_show(const DlqArgs& args) {
  const Context ctx = context(args);
  if (ctx.topics.size() != 1) throw ConfigError("dlq show: give one --topic");
  sink::RecordDecoder decoder(ctx.sink.registry);
  json document = json::array();
  const std::int32_t partitions = kafka::partition_count(ctx.sink.kafka, ctx.topics.front());
  for (const sink::DeadLetter& letter : selected(args, ctx, ctx.topics.front())) {
    json headers = json::object();
    for (const kafka::Header& header : letter.record.headers) headers[header.name] = header.value;
    json entry{{"dlq_offset", letter.record.offset},
               {"origin", letter.origin.to_string()},
               {"origin_timestamp", utc_time(letter.origin_timestamp_ms)},
               {"error", letter.error},
               {"headers", headers},
               {"key_hex", hex(letter.record.key)},
               {"value_hex", hex(letter.record.value)}};
    // What each replay would carry, so the operator can choose (or see why neither works).
    for (const bool reencode : {false, true}) {
      const char* name = reencode ? "reencoded" : "as_is";
      try {
        const kafka::OutgoingRecord out =
            sink::replay_record(letter, sink::ReplayEncoding{reencode, args.schema_id}, decoder, partitions);
        entry[name] = json{{"partition", *out.partition}, {"change", change_json(decoder.change(*out.value))}};
      } catch (const Error& error) {
        entry[name] = json{{"error", error.what()}};
      }
    }
    document.push_back(entry);
  }
  if (args.json_output) {
    std::cout << document.dump(2) << "\n";
    return 0;
  }
  for (const json& entry : document) {
    fmt::print("dead letter {}{}@{}\n  origin      {} (written {})\n  error       {}\n", ctx.topics.front(),
               sink::kDeadLetterSuffix, entry["dlq_offset"].get<std::int64_t>(), entry["origin"].get<std::string>(),
               entry["origin_timestamp"].get<std::string>(), printable(entry["error"].get<std::string>()));
    for (const auto& [name, value] : entry["headers"].items())
      fmt::print("  header      {} = {}\n", name, value.get<std::string>());
    fmt::print("  key         {}\n  value       {}\n", entry["key_hex"].get<std::string>(),
               entry["value_hex"].get<std::string>());
    for (const char* name : {"as_is", "reencoded"}) {
      const json& replay = entry[name];
      if (replay.contains("error")) {
        fmt::print("  replay {:<9} no: {}\n", name, printable(replay["error"].get<std::string>()));
      } else {
        fmt::print("  replay {:<9} partition {}: {}\n", name, replay["partition"].get<int>(), replay["change"].dump());
      }
    }
  }
  return 0;
}

int run_replay(const DlqArgs& args) {
  if (args.all == !args.offsets.empty()) throw ConfigError("dlq replay: give --offset N (repeatable) or --all");
  if (args.schema_id && !args.reencode) throw ConfigError("dlq replay: --schema-id goes with --reencode");
  const Context ctx = context(args);
  if (!args.all && ctx.topics.size() != 1) throw ConfigError("dlq replay --offset: give one --topic");
  sink::RecordDecoder decoder(ctx.sink.registry);
  auto producer = kafka::Producer::create(ctx.sink.kafka, kafka::ProducerMode::kIdempotent);
  json document = json::array();
  std::size_t failed = 0;
  for (const std::string& topic : ctx.topics) {
    const auto letters = selected(args, ctx, topic);
    if (letters.empty()) continue;
    const auto replayed = args.force ? std::map<sink::RecordOrigin, sink::RecordOrigin>{}
                                     : sink::replayed_origins(ctx.sink.kafka, topic, kReadTimeout);
    const std::int32_t partitions = kafka::partition_count(ctx.sink.kafka, topic);
    std::set<sink::RecordOrigin> sent;  // a sink that restarted may have diverted a record twice
    for (const sink::DeadLetter& letter : letters) {
      json entry{{"topic", topic}, {"dlq_offset", letter.record.offset}, {"origin", letter.origin.to_string()}};
      if (!sent.insert(letter.origin).second) {
        entry["skipped"] = "its origin was replayed above (the dead-letter topic holds it twice)";
      } else if (const auto done = replayed.find(letter.origin); done != replayed.end()) {
        entry["skipped"] = fmt::format("replayed already as {} (--force replays it again; the sink skips it)",
                                       done->second.to_string());
      } else {
        try {
          const kafka::OutgoingRecord out =
              sink::replay_record(letter, sink::ReplayEncoding{args.reencode, args.schema_id}, decoder, partitions);
          producer.send(out);
          entry["replayed_to"] = fmt::format("{}/{}", out.topic, *out.partition);
          entry["event_id"] = decoder.change(*out.value).event_id;
        } catch (const Error& error) {
          entry["error"] = error.what();
          ++failed;
        }
      }
      document.push_back(entry);
    }
  }
  producer.flush(std::chrono::minutes(2));  // every replay acknowledged before we say so
  if (args.json_output) {
    std::cout << document.dump(2) << "\n";
  } else {
    for (const json& entry : document) {
      const std::string what = entry.contains("replayed_to")
                                   ? fmt::format("replayed to {} (event {})", entry["replayed_to"].get<std::string>(),
                                                 entry["event_id"].get<std::string>())
                               : entry.contains("skipped") ? "skipped: " + entry["skipped"].get<std::string>()
                                                           : "NOT replayed: " + entry["error"].get<std::string>();
      fmt::print("{}{}@{} (from {}): {}\n", entry["topic"].get<std::string>(), sink::kDeadLetterSuffix,
                 entry["dlq_offset"].get<std::int64_t>(), entry["origin"].get<std::string>(), printable(what));
    }
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

Command add_dlq_command(CLI::App& app) {
  auto* command = app.add_subcommand("dlq", "Inspect the sink's dead letters and replay repaired ones");
  command->require_subcommand(1);
  auto args = std::make_shared<DlqArgs>();
  const auto common = [&](CLI::App* sub) {
    sub->add_option("-c,--config", args->config, "configuration file (TOML, see docs/configuration.md)")->required();
    sub->add_option("--topic", args->topics, "a topic the sink reads (default: every [sink] topic)");
    sub->add_flag("--json", args->json_output, "print JSON");
  };
  auto* ls = command->add_subcommand("ls", "List dead letters: origin, time, error, and whether replayed");
  common(ls);
  auto* show = command->add_subcommand("show", "One dead letter in full, and what each kind of replay would carry");
  common(show);
  show->add_option("--offset", args->offsets, "its offset in <topic>.dlq")->required();
  show->add_option("--schema-id", args->schema_id, "registered schema to re-encode with (default: the latest)");
  auto* replay = command->add_subcommand("replay", "Produce dead letters again into the topic they came from");
  common(replay);
  replay->add_option("--offset", args->offsets, "offset in <topic>.dlq (repeatable)");
  replay->add_flag("--all", args->all, "every dead letter not yet replayed");
  replay->add_flag("--reencode", args->reencode,
                   "read the Avro body with a registered schema of the topic (a wrong magic byte or schema id)");
  replay->add_option("--schema-id", args->schema_id, "with --reencode: this schema instead of the latest version");
  replay->add_flag("--force", args->force,
                   "replay even what was replayed before (the sink recognizes the repeat and skips it)");
  return Command{command, [args, ls, show, replay] {
                   if (ls->parsed()) return run_ls(*args);
                   if (show->parsed()) return run_show(*args);
                   if (replay->parsed()) return run_replay(*args);
                   return 2;
                 }};
}

}  // namespace binberg::cli
