#include "support/simulation.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/assert.h"
#include "core/error.h"
#include "core/failpoint.h"
#include "iceberg/table_scan.h"

namespace binberg::testing {
namespace {

std::optional<std::uint64_t> env_number(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  try {
    return std::stoull(text);
  } catch (const std::exception&) {
    throw ConfigError(fmt::format("{}={} is not a number", name, text));
  }
}

// The replay command of the seed running now, for a crash (a segmentation fault has no exception
// to carry it): written by the signal handler with write(2) alone, which is async-signal-safe.
char crash_note[4096] = {};

extern "C" void report_crash(int signal) {
  const ssize_t written = ::write(STDERR_FILENO, crash_note, std::strlen(crash_note));
  static_cast<void>(written);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

void note_crash(const std::string& note) {
  const std::string text = note.empty() ? std::string() : "\nsimulation crashed; " + note + "\n";
  std::snprintf(crash_note, sizeof crash_note, "%s", text.c_str());
  for (const int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(signal, note.empty() ? SIG_DFL : report_crash);
}

std::string executable() {
  std::error_code error;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("<test binary>") : path.string();
}

std::string literal_text(const iceberg::Literal& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "null";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return "'" + v + "'";
        } else if constexpr (std::is_same_v<T, bool> || std::is_arithmetic_v<T>) {
          return fmt::format("{}", v);
        } else {
          return "<value>";
        }
      },
      value);
}

}  // namespace

ChangeEvent sim_change(std::shared_ptr<const TableSchema> schema, Op op, std::optional<RowImage> before,
                       std::optional<RowImage> after, std::uint32_t row_index, std::int64_t commit_ts_ms) {
  ChangeEvent event;
  event.op = op;
  event.before = std::move(before);
  event.after = std::move(after);
  event.source.server_id = 1;
  event.source.row_index = row_index;
  event.source.commit_ts_ms = commit_ts_ms;
  event.source.database = schema->database;
  event.source.table = schema->table;
  event.schema = std::move(schema);
  return event;
}

void run_world(const std::function<void()>& run, const std::function<std::string()>& describe) {
  static const bool logging = std::getenv("BINBERG_SIMULATION_LOG") != nullptr;
  spdlog::set_level(logging ? spdlog::level::debug : spdlog::level::off);
  try {
    run();
  } catch (const std::exception& error) {
    failpoint::disarm_all();
    throw InvariantBroken(fmt::format("{}\nscenario: {}", error.what(), describe()));
  }
  failpoint::disarm_all();
}

std::string replay_command(std::uint64_t seed) {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string filter =
      test == nullptr ? std::string("*") : fmt::format("{}.{}", test->test_suite_name(), test->name());
  return fmt::format("BINBERG_SIMULATION_SEED={} {} --gtest_filter='{}'", seed, executable(), filter);
}

namespace {

// Runs RUN for SEED; false (reported, with the replay command) when it fails.
bool run_seed(std::uint64_t seed, const std::function<void(std::uint64_t seed)>& run) {
  set_assertion_note("replay with: " + replay_command(seed));
  note_crash("replay with: " + replay_command(seed));
  std::string failure;
  try {
    run(seed);
  } catch (const std::exception& error) {
    failure = error.what();
  }
  set_assertion_note("");
  note_crash("");
  if (!failure.empty()) {
    ADD_FAILURE() << "seed " << seed << ": " << failure << "\nreplay with: " << replay_command(seed);
    return false;
  }
  if (::testing::Test::HasFailure()) {
    ADD_FAILURE() << "seed " << seed << " failed (above)\nreplay with: " << replay_command(seed);
    return false;
  }
  return true;
}

}  // namespace

void run_seeds(std::uint64_t default_count, const std::function<void(std::uint64_t seed)>& run) {
  std::uint64_t first = env_number("BINBERG_SIMULATION_FIRST_SEED").value_or(1);
  std::uint64_t count = env_number("BINBERG_SIMULATION_SEEDS").value_or(default_count);
  if (const auto one = env_number("BINBERG_SIMULATION_SEED")) {
    first = *one;
    count = 1;
  }
  for (std::uint64_t seed = first; seed < first + count; ++seed) {
    if (!run_seed(seed, run)) return;
  }
  std::printf("simulation: seeds %llu..%llu held every invariant\n", static_cast<unsigned long long>(first),
              static_cast<unsigned long long>(first + count - 1));
}

void run_listed_seeds(const std::vector<std::uint64_t>& seeds, const std::function<void(std::uint64_t seed)>& run) {
  const auto one = env_number("BINBERG_SIMULATION_SEED");  // the replay of one of them
  for (const std::uint64_t seed : one ? std::vector<std::uint64_t>{*one} : seeds) {
    if (!run_seed(seed, run)) return;
  }
}

namespace {

std::filesystem::path memory_or_temp() {
  std::error_code error;
  const std::filesystem::path memory("/dev/shm");
  return std::filesystem::is_directory(memory, error) && ::access(memory.c_str(), W_OK) == 0
             ? memory
             : std::filesystem::temp_directory_path();
}

}  // namespace

// The real catalog, counting what changes it (every call passes through).
class SimCatalog::Counting final : public iceberg::Catalog {
 public:
  explicit Counting(std::unique_ptr<iceberg::Catalog> catalog) : catalog_(std::move(catalog)) {}

  void create_namespace(const std::string& ns, const std::map<std::string, std::string>& properties) override {
    catalog_->create_namespace(ns, properties);
  }
  std::vector<std::string> list_namespaces() override { return catalog_->list_namespaces(); }
  std::map<std::string, std::string> namespace_properties(const std::string& ns) override {
    return catalog_->namespace_properties(ns);
  }
  void drop_namespace(const std::string& ns) override { catalog_->drop_namespace(ns); }
  iceberg::LoadedTable create_table(const iceberg::TableIdentifier& id, const iceberg::Schema& schema,
                                    const iceberg::PartitionSpec& spec, const iceberg::SortOrder& order,
                                    const std::map<std::string, std::string>& properties) override {
    ++changes;
    return catalog_->create_table(id, schema, spec, order, properties);
  }
  iceberg::LoadedTable load_table(const iceberg::TableIdentifier& id) override { return catalog_->load_table(id); }
  std::string metadata_location(const iceberg::TableIdentifier& id) override { return catalog_->metadata_location(id); }
  std::vector<iceberg::TableIdentifier> list_tables(const std::string& ns) override {
    return catalog_->list_tables(ns);
  }
  void drop_table(const iceberg::TableIdentifier& id) override {
    ++changes;
    catalog_->drop_table(id);
  }
  void commit(const std::vector<iceberg::TableCommit>& commits) override {
    ++changes;  // also when it fails: the commit may have landed all the same
    catalog_->commit(commits);
  }

  std::uint64_t changes = 0;

 private:
  std::unique_ptr<iceberg::Catalog> catalog_;
};

SimCatalog::SimCatalog(TimeSource& time) : dir_(memory_or_temp()) {
  options_.time = &time;
  options_.name = "binberg";
  options_.uri = "sqlite:///" + dir_.path().string() + "/catalog.db";
  options_.warehouse = dir_.path().string() + "/warehouse";
  catalog_ = std::make_unique<Counting>(iceberg::open_catalog(options_));
}

SimCatalog::~SimCatalog() = default;

iceberg::Catalog& SimCatalog::catalog() { return *catalog_; }

std::uint64_t SimCatalog::changes() const { return catalog_->changes; }

TableWatch::TableWatch(iceberg::Catalog& catalog, iceberg::TableIdentifier changelog, iceberg::TableIdentifier state,
                       std::vector<std::string> columns)
    : catalog_(catalog), changelog_(std::move(changelog)), state_(std::move(state)), columns_(std::move(columns)) {}

std::optional<std::string> TableWatch::location(const iceberg::TableIdentifier& table) {
  try {
    return catalog_.metadata_location(table);
  } catch (const iceberg::NoSuchTable&) {
    return std::nullopt;
  } catch (const iceberg::NoSuchNamespace&) {
    return std::nullopt;
  }
}

std::optional<ObservedSnapshot> TableWatch::next() {
  const std::optional<std::string> now = location(changelog_);
  if (!now || (now == last_location_ && !behind_)) return std::nullopt;
  last_location_ = now;
  const iceberg::LoadedTable table = catalog_.load_table(changelog_);
  const iceberg::Snapshot* current = table.metadata.current_snapshot();
  behind_ = false;
  if (current == nullptr || current->snapshot_id == last_snapshot_) return std::nullopt;
  // The table only moves forward: the last snapshot seen is an ancestor of this one.
  std::vector<const iceberg::Snapshot*> unseen;  // newest first, down to the last one seen
  bool descends = !last_snapshot_;
  for (const iceberg::Snapshot* at = current; at != nullptr;) {
    if (last_snapshot_ && at->snapshot_id == *last_snapshot_) {
      descends = true;
      break;
    }
    unseen.push_back(at);
    at = at->parent_snapshot_id ? table.metadata.find_snapshot(*at->parent_snapshot_id) : nullptr;
  }
  check(descends, "table {}: snapshot {} does not descend from snapshot {} seen before", changelog_.to_string(),
        current->snapshot_id, last_snapshot_.value_or(0));
  const iceberg::Snapshot* next = unseen.back();
  behind_ = next != current;
  last_snapshot_ = next->snapshot_id;
  ObservedSnapshot observed{next->snapshot_id, next->summary, {}, !behind_};
  iceberg::ScanPlan plan = iceberg::plan_scan(table.metadata, next->snapshot_id);
  check(plan.delete_files.empty(), "changelog {} has delete files: it is append-only", changelog_.to_string());
  std::erase_if(plan.data_files,
                [&](const iceberg::LiveFile& file) { return !seen_files_.insert(file.file.file_path).second; });
  const iceberg::Schema& schema = table.metadata.current_schema();
  const auto field = [&](const std::string& name) {
    for (std::size_t index = 0; index < schema.fields().size(); ++index) {
      if (schema.fields()[index].name == name) return index;
    }
    throw InvariantBroken(fmt::format("changelog {} has no column {}", changelog_.to_string(), name));
  };
  const std::size_t event_id = field("_event_id"), op = field("_op"), gtid = field("_gtid"),
                    file = field("_binlog_file"), pos = field("_binlog_pos"), row_index = field("_row_index");
  std::vector<std::size_t> after, before;
  for (const std::string& column : columns_) {
    after.push_back(field(column));
    before.push_back(field("_before_" + column));
  }
  iceberg::scan_rows(plan, schema, [&](const iceberg::Row& row, const iceberg::LiveFile&, std::int64_t) {
    ChangelogRow entry;
    entry.event_id = std::get<std::string>(row.at(event_id));
    entry.op = std::get<std::string>(row.at(op)).at(0);
    if (const auto* text = std::get_if<std::string>(&row.at(gtid))) entry.gtid = *text;
    if (const auto* text = std::get_if<std::string>(&row.at(file))) entry.binlog_file = *text;
    if (const auto* number = std::get_if<std::int64_t>(&row.at(pos))) entry.binlog_pos = *number;
    if (const auto* number = std::get_if<std::int32_t>(&row.at(row_index))) entry.row_index = *number;
    for (std::size_t index : after) entry.after.push_back(row.at(index));
    for (std::size_t index : before) entry.before.push_back(row.at(index));
    observed.added.push_back(std::move(entry));
  });
  return observed;
}

std::optional<TableWatch::State> TableWatch::state() {
  if (!location(state_)) return std::nullopt;
  const iceberg::LoadedTable table = catalog_.load_table(state_);
  State state;
  const iceberg::Snapshot* current = table.metadata.current_snapshot();
  if (current == nullptr) return state;
  state.summary = current->summary;
  const iceberg::Schema& schema = table.metadata.current_schema();
  std::vector<std::size_t> fields;
  for (const std::string& column : columns_) {
    for (std::size_t index = 0; index < schema.fields().size(); ++index) {
      if (schema.fields()[index].name == column) fields.push_back(index);
    }
  }
  for (const iceberg::Row& row : iceberg::read_table_rows(table.metadata)) {
    iceberg::Row watched;
    for (std::size_t index : fields) watched.push_back(row.at(index));
    state.rows.push_back(std::move(watched));
  }
  return state;
}

std::string to_string(const iceberg::Row& row) {
  std::string text = "(";
  for (std::size_t i = 0; i < row.size(); ++i) text += (i == 0 ? "" : ", ") + literal_text(row[i]);
  return text + ")";
}

}  // namespace binberg::testing
