#include "sink/sink_simulation.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <climits>

#include "core/failpoint.h"
#include "envelope/change_envelope.h"
#include "sink/sink_invariants.h"

namespace binberg::sink::simulation {
namespace {

using testing::check;

// A sink process dies at a failpoint. Not an Error: nothing in the sink catches it, as nothing
// survives a SIGKILL; the world catches it where it ran the process.
struct SimCrash {};

// Every step of the commit protocol (docs/failpoints.md) a process may die at.
const std::vector<std::string> kCrashPoints = {"sink.after_open",
                                               "iceberg.parquet.before_close",
                                               "iceberg.writer.after_data_files",
                                               "iceberg.writer.after_delete_files",
                                               "iceberg.writer.after_manifests",
                                               "iceberg.writer.after_metadata_file",
                                               "sink.before_commit",
                                               "iceberg.catalog.before_commit",
                                               "iceberg.catalog.after_commit",
                                               "sink.after_commit",
                                               "sink.before_schema_commit"};

constexpr std::uint64_t kStepLimit = 20'000;  // a seed that runs longer does not converge

class World;
class SimInput;

struct Process {
  int id = 0;
  Scaling scaling = Scaling::kAlone;
  std::optional<std::int64_t> read_from;
  std::set<std::int32_t> slots;
  bool slots_changed = true;
  int budget = 0;             // steps left in its turn
  SimInput* input = nullptr;  // of its session under way
  std::unique_ptr<SinkEnvironment> environment;
  std::unique_ptr<KafkaSink> sink;
};

class World {
 public:
  World(std::uint64_t seed, Retention retention);
  void run();
  const Scenario& scenario() const { return scenario_; }

  // The ports' side (SimInput, SimSlots).
  std::optional<ReadItem> next(Process& process, SimInput& input, std::chrono::milliseconds timeout);
  void divert(SimInput& input, const kafka::ConsumedRecord& record, std::string_view suffix);
  void acknowledge(SimInput& input);
  std::vector<HistoryRecord> read_between(const envelope::TopicPartition& partition, std::int64_t from,
                                          std::int64_t to) const;
  const Topics& topics() const { return topics_; }
  SimClock& clock() { return clock_; }
  void attach(SimInput* input) { inputs_.insert(input); }
  void detach(SimInput* input) { inputs_.erase(input); }

 private:
  Process& spawn(Scaling scaling, std::optional<std::int64_t> read_from);
  Process* find(std::optional<int> id);
  // Runs PROCESS's sink for BUDGET steps (then it stops, committing what is whole) or until it dies.
  void turn(Process& process, int budget);
  bool stops(const Process& process) const;
  std::optional<ReadItem> deliver(SimInput& input, std::chrono::milliseconds timeout);
  ReadRecord read_record(const envelope::TopicPartition& partition, std::int64_t offset,
                         const std::map<envelope::TopicPartition, std::int64_t>& skip_below) const;
  void second_writer();
  // Retention deletes the records of a partition of t0's topic below an offset drawn up to its end.
  void delete_records();
  void replay_dead_letter(bool every);
  void check_step();
  void final_run();

  const std::uint64_t seed_;
  SimRandom random_;
  Scenario scenario_;
  SimClock clock_;
  testing::SimCatalog catalog_;
  Topics topics_;
  Source source_;
  SinkInvariants invariants_;
  std::vector<Diversion> acknowledged_;
  std::set<std::string> replayed_;  // event ids of replayed dead letters
  std::set<std::pair<envelope::TopicPartition, std::int64_t>> replayed_origins_;
  std::map<int, std::unique_ptr<Process>> processes_;
  std::set<SimInput*> inputs_;
  std::optional<int> first_, second_;
  std::set<std::string> stopped_;  // topics a sink stopped (their tables are not written any more)
  int next_process_ = 1;
  int depth_ = 0;  // processes running (a second writer's turn runs inside the first's step)
  bool final_ = false;
  std::uint64_t steps_ = 0;
  std::uint64_t checked_changes_ = 0;  // of the catalog, when the tables were last checked
};

class SimInput final : public SinkInput {
 public:
  SimInput(World& world, Process& process) : world_(world), process_(process) {
    process_.input = this;
    world_.attach(this);
  }
  ~SimInput() override {
    if (process_.input == this) process_.input = nullptr;
    world_.detach(this);  // what it diverted and did not acknowledge is lost with it
  }

  std::int32_t partition_count(const std::string& topic) override { return world_.topics().partitions(topic); }
  PartitionBounds bounds(const std::string& topic, Partition partition) override {
    return PartitionBounds{Offset(world_.topics().first({topic, partition.value})),
                           Offset(world_.topics().end({topic, partition.value}))};
  }
  std::optional<Offset> known_first_offset(const std::string& topic, Partition partition) override {
    return Offset(world_.topics().first({topic, partition.value}));
  }
  void assign(const std::vector<kafka::PartitionStart>& starts) override {
    for (const auto& start : starts) cursors[{start.topic, start.partition}] = start.offset;
  }
  void start_reading(const std::map<envelope::TopicPartition, std::int64_t>& skip) override { skip_below = skip; }
  std::optional<ReadItem> next(std::chrono::milliseconds timeout) override {
    return world_.next(process_, *this, timeout);
  }
  std::size_t queued() const override { return 0; }
  std::optional<Offset> end_offset(const std::string& topic, Partition partition) override {
    return Offset(world_.topics().end({topic, partition.value}));
  }
  void report_offsets(const std::vector<kafka::PartitionStart>&) override {}
  void prepare_diversions(const std::string&) override {}
  Diverted divert(const kafka::ConsumedRecord& record, std::string_view suffix, const std::string&) override {
    world_.divert(*this, record, suffix);
    return Diverted::kWhole;
  }
  void flush_diverted() override { world_.acknowledge(*this); }
  std::vector<HistoryRecord> read_between(const std::string& topic, Partition partition, Offset from,
                                          Offset to) override {
    return world_.read_between({topic, partition.value}, from.value, to.value);
  }
  // The simulated records have no time: a replay is judged by all of every other partition.
  Offset offset_at_time(const std::string&, Partition, std::int64_t) override { return Offset(0); }

  std::map<envelope::TopicPartition, std::int64_t> cursors, skip_below;
  std::set<envelope::TopicPartition> ends_reported;
  std::vector<Diversion> unacknowledged;

 private:
  World& world_;
  Process& process_;
};

class SimSlots final : public SlotSource {
 public:
  explicit SimSlots(Process& process) : process_(process) {}
  bool poll() override { return std::exchange(process_.slots_changed, false); }
  std::vector<std::int32_t> slots() const override { return {process_.slots.begin(), process_.slots.end()}; }

 private:
  Process& process_;
};

class SimEnvironment final : public SinkEnvironment {
 public:
  SimEnvironment(World& world, Process& process) : world_(world), process_(process) {}
  TimeSource& clock() override { return world_.clock(); }
  std::string process() override { return fmt::format("sim/{}", process_.id); }
  std::unique_ptr<SinkInput> connect(const KafkaSinkOptions&) override {
    return std::make_unique<SimInput>(world_, process_);
  }
  std::unique_ptr<SlotSource> join_group(const KafkaSinkOptions&, const std::string&) override {
    return std::make_unique<SimSlots>(process_);
  }

 private:
  World& world_;
  Process& process_;
};

// A scenario with retention deleting records drawn as any other, then given the fault: the seeds of
// the other scenarios stay what they were.
Scenario with_retention(Scenario scenario, Retention retention) {
  scenario.deletes_records = retention == Retention::kDeletes;
  return scenario;
}

World::World(std::uint64_t seed, Retention retention)
    : seed_(seed),
      random_(seed),
      scenario_(with_retention(Scenario::draw(random_), retention)),
      topics_(),
      source_(scenario_, random_, topics_, clock_),
      invariants_(catalog_.catalog(), scenario_, source_, topics_) {}

Process& World::spawn(Scaling scaling, std::optional<std::int64_t> read_from) {
  auto process = std::make_unique<Process>();
  process->id = next_process_++;
  process->scaling = scaling;
  process->read_from = read_from;
  process->environment = std::make_unique<SimEnvironment>(*this, *process);
  KafkaSinkOptions options;
  options.kafka.bootstrap_servers = "simulated";
  options.registry.url = "simulated";
  for (int table = 0; table < scenario_.tables; ++table) options.topics.push_back(fmt::format("cdc.sim.t{}", table));
  options.group_id = "sim";
  options.commit.interval = std::chrono::milliseconds(1000);
  options.commit.max_events = 6;
  options.poll_timeout = std::chrono::milliseconds(100);
  options.scale_out = scaling == Scaling::kShared;
  options.member_timeout = std::chrono::milliseconds(2000);
  options.read_from = read_from;
  process->sink = std::make_unique<KafkaSink>(std::move(options), catalog_.catalog(), *process->environment);
  Process& spawned = *process;
  processes_.emplace(spawned.id, std::move(process));
  return spawned;
}

Process* World::find(std::optional<int> id) {
  if (!id) return nullptr;
  const auto it = processes_.find(*id);
  return it == processes_.end() ? nullptr : it->second.get();
}

bool World::stops(const Process& process) const {
  if (!final_) return process.budget <= 0;
  if (process.input == nullptr || !source_.done()) return false;
  for (const auto& [partition, cursor] : process.input->cursors) {
    if (cursor < topics_.end(partition) || !process.input->ends_reported.contains(partition)) return false;
  }
  return !process.input->cursors.empty();
}

void World::turn(Process& process, int budget) {
  process.budget = budget;
  ++depth_;
  const int id = process.id;
  const auto note_stopped = [&] {
    const auto& stopped = process.sink->stats().stopped_tables;
    stopped_.insert(stopped.begin(), stopped.end());
  };
  try {
    process.sink->run([&] { return stops(process); });
    note_stopped();
  } catch (const SimCrash&) {
    note_stopped();
    processes_.erase(id);  // its memory is gone; what it committed stays
  } catch (const ConfigError& error) {
    // A lone sink whose every table stopped (a gap in each) ends: nothing is left for it to write.
    if (!scenario_.deletes_records || !std::string_view(error.what()).starts_with("sink: every table stopped")) throw;
    note_stopped();
    processes_.erase(id);
  }
  --depth_;
}

std::optional<ReadItem> World::next(Process& process, SimInput& input, std::chrono::milliseconds timeout) {
  check(++steps_ <= kStepLimit, "the sinks did not finish within {} steps", kStepLimit);
  check_step();
  --process.budget;
  clock_.advance(std::chrono::milliseconds(random_.below(150)));
  if (!final_) {
    if (random_.percent(25)) source_.step();
    if (random_.percent(4)) replay_dead_letter(false);
    // Only from the first sink's turn: a second writer's turn within its own would run that
    // KafkaSink twice over, and its crash would free the sink the outer turn still runs in.
    if (scenario_.two_writers && depth_ == 1 && process.id == first_ && random_.percent(4)) second_writer();
    if (scenario_.deletes_records && random_.percent(6)) delete_records();
  }
  return deliver(input, timeout);
}

std::optional<ReadItem> World::deliver(SimInput& input, std::chrono::milliseconds timeout) {
  std::vector<envelope::TopicPartition> readable, caught_up;
  for (auto& [partition, cursor] : input.cursors) {
    // A consumer whose next offset was deleted goes on from the first one left, as librdkafka does
    // with auto.offset.reset = earliest (the worst a consumer can do: the sink must see the jump).
    cursor = std::max(cursor, topics_.first(partition));
    if (cursor < topics_.end(partition)) {
      readable.push_back(partition);
    } else if (!input.ends_reported.contains(partition)) {
      caught_up.push_back(partition);
    }
  }
  if (!readable.empty() && random_.percent(85)) {
    const envelope::TopicPartition partition = random_.pick(readable);
    input.ends_reported.erase(partition);
    return ReadItem(read_record(partition, input.cursors[partition]++, input.skip_below));
  }
  if (!caught_up.empty()) {
    const envelope::TopicPartition partition = random_.pick(caught_up);
    input.ends_reported.insert(partition);
    return ReadItem(kafka::PartitionEnd{partition.first, partition.second, input.cursors[partition]});
  }
  clock_.advance(timeout);  // a poll that found nothing
  return std::nullopt;
}

// As the reader hands it over (sink_reader.h): decoded, with the error of a value that does not
// decode; undecoded below the offsets the tables need, and for a schema change.
ReadRecord World::read_record(const envelope::TopicPartition& partition, std::int64_t offset,
                              const std::map<envelope::TopicPartition, std::int64_t>& skip_below) const {
  const LogRecord& log = topics_.at(partition, offset);
  ReadRecord read;
  read.record = log.record;
  read.headers = header_map(log.record);
  const auto skip = skip_below.find(partition);
  if ((skip != skip_below.end() && offset < skip->second) || !log.event) return read;
  if (log.damaged) {
    read.event_error = std::make_exception_ptr(Error("magic byte 1: not a Confluent wire message"));
  } else {
    read.event = *log.event;
  }
  read.key = log.key;
  return read;
}

void World::divert(SimInput& input, const kafka::ConsumedRecord& record, std::string_view suffix) {
  const LogRecord& log = topics_.at({record.topic, record.partition}, record.offset);
  input.unacknowledged.push_back(Diversion{{record.topic, record.partition},
                                           record.offset,
                                           log.event ? log.event->event_id : std::string(),
                                           suffix == kDeadLetterSuffix});
}

void World::acknowledge(SimInput& input) {
  acknowledged_.insert(acknowledged_.end(), input.unacknowledged.begin(), input.unacknowledged.end());
  input.unacknowledged.clear();
}

std::vector<HistoryRecord> World::read_between(const envelope::TopicPartition& partition, std::int64_t from,
                                               std::int64_t to) const {
  std::vector<HistoryRecord> history;
  for (std::int64_t offset = from; offset < std::min(to, topics_.end(partition)); ++offset) {
    const LogRecord& log = topics_.at(partition, offset);
    history.push_back(HistoryRecord{header_map(log.record), log.damaged ? std::nullopt : log.event});
  }
  return history;
}

// An operator replays a dead letter (EVERY: each one not replayed yet), as `binberg dlq replay`.
void World::replay_dead_letter(bool every) {
  std::vector<Diversion> letters;
  for (const Diversion& diversion : acknowledged_) {
    const LogRecord& dead = topics_.at(diversion.partition, diversion.offset);
    if (!diversion.dead_letter || !dead.damaged ||
        replayed_origins_.contains({diversion.partition, diversion.offset})) {
      continue;
    }
    // A dead letter from before a schema change, replayed after it, stops the sink (docs/kafka-sink.md, Not yet).
    if (dead.event->schema->columns.size() != source_.columns(dead.event->source.table) && !known_defects()) continue;
    letters.push_back(diversion);
  }
  if (letters.empty()) return;
  // In source order: a replay applied after a newer change of its key was replayed moves the key
  // back (docs/kafka-sink.md, Not yet); at random otherwise.
  std::sort(letters.begin(), letters.end(), [](const Diversion& a, const Diversion& b) {
    return std::tie(a.partition, a.offset) < std::tie(b.partition, b.offset);
  });
  if (!every) {
    const Diversion chosen = random_.pick(letters);
    const auto oldest = std::find_if(letters.begin(), letters.end(),
                                     [&](const Diversion& letter) { return letter.partition == chosen.partition; });
    letters = {known_defects() ? chosen : *oldest};
  }
  for (const Diversion& letter : letters) {
    if (!replayed_origins_.insert({letter.partition, letter.offset}).second) continue;
    source_.replay(letter.partition, letter.offset);
    replayed_.insert(letter.event_id);
  }
}

void World::delete_records() {
  const auto partition =
      static_cast<std::int32_t>(random_.below(static_cast<std::uint64_t>(scenario_.partitions.at(0))));
  const envelope::TopicPartition deleted{"cdc.sim.t0", partition};
  topics_.delete_below(deleted, static_cast<std::int64_t>(random_.below(
                                    static_cast<std::uint64_t>(topics_.end(deleted) - topics_.first(deleted)) + 1)) +
                                    topics_.first(deleted));
}

// A second sink joins the group and is given one topic; the first learns it only sometimes (a
// stale sink still writing a table another one claimed: fencing must stop it).
void World::second_writer() {
  Process* second = find(second_);
  if (second == nullptr) {
    second = &spawn(Scaling::kShared, std::nullopt);
    second_ = second->id;
    const auto slot = static_cast<std::int32_t>(random_.below(static_cast<std::uint64_t>(scenario_.tables)));
    second->slots = {slot};
    if (Process* first = find(first_); first != nullptr && random_.percent(50)) {
      first->slots.erase(slot);
      first->slots_changed = true;
    }
  }
  turn(*second, static_cast<int>(random_.between(3, 25)));
}

void World::check_step() {
  if (catalog_.changes() == checked_changes_) return;  // the tables are as the last step saw them
  checked_changes_ = catalog_.changes();
  std::vector<Diversion> unacknowledged;
  for (const SimInput* input : inputs_) {
    unacknowledged.insert(unacknowledged.end(), input->unacknowledged.begin(), input->unacknowledged.end());
  }
  invariants_.after_step(acknowledged_, unacknowledged, replayed_);
}

// The end: no more faults, the source finishes and every dead letter is replayed; one sink must
// then bring the tables to every change the source made.
void World::final_run() {
  final_ = true;
  failpoint::disarm_all();
  source_.finish();
  replay_dead_letter(true);
  processes_.clear();
  turn(spawn(Scaling::kAlone, std::nullopt), INT_MAX);
  check(depth_ == 0 && (!processes_.empty() || stopped_.size() == static_cast<std::size_t>(scenario_.tables)),
        "the last sink died");
  std::set<std::string> stopped_tables;  // by source table: cdc.sim.t0 -> t0
  for (const std::string& topic : stopped_) stopped_tables.insert(topic.substr(topic.rfind('.') + 1));
  check(stopped_tables.empty() || scenario_.deletes_records, "tables stopped without a gap: {}",
        fmt::join(stopped_, ", "));
  invariants_.at_end(acknowledged_, replayed_, stopped_tables);
}

void World::run() {
  failpoint::disarm_all();
  for (int crash = 0; crash < scenario_.crashes; ++crash) {
    failpoint::arm_call(
        random_.pick(kCrashPoints), [] { throw SimCrash{}; },
        failpoint::Trigger{failpoint::Action::kCall, {}, random_.below(4) + 1, 1});
  }
  const Scaling scaling = scenario_.two_writers ? Scaling::kShared : Scaling::kAlone;
  const int turns = static_cast<int>(random_.between(1, 4));
  for (int index = 0; index < turns; ++index) {
    Process* first = find(first_);
    const bool rewind = scenario_.rewind && random_.percent(40);
    if (first == nullptr || rewind) {
      if (first != nullptr) processes_.erase(first->id);
      first = &spawn(scaling, rewind ? std::optional<std::int64_t>(kEarliestOffset) : std::nullopt);
      first_ = first->id;
      for (std::int32_t slot = 0; slot < scenario_.tables; ++slot) first->slots.insert(slot);
    }
    turn(*first, static_cast<int>(random_.between(5, 30)));
    if (Process* second = find(second_); second != nullptr && random_.percent(50)) {
      turn(*second, static_cast<int>(random_.between(3, 25)));
    }
  }
  final_run();
}

}  // namespace

void simulate(std::uint64_t seed, Retention retention) {
  World world(seed, retention);
  testing::run_world([&] { world.run(); }, [&] { return world.scenario().to_string(); });
}

}  // namespace binberg::sink::simulation
