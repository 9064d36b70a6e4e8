#pragma once

// A fault drill: a real binberg pipeline on the drill stack's real services, a deterministic
// workload, one fault injected at a precise moment (a gate on committed progress, or a failpoint
// inside binberg), its detection and recovery timed from the system's own signals, and a verdict
// computed from checks that can each fail: reconcile, the invariants over every snapshot, and the
// drill's own. Drills are data (the table in drills.cc); docs/drills.md explains each one, what it
// proves and what it does not.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace binberg::drill {

class DrillRun;

enum class DrillSize {
  kFull,   // the sizes: >= 100,000 row events
  kQuick,  // ~5,000 events: CI and `make test`
};

struct DrillOptions {
  DrillSize size = DrillSize::kFull;
  std::uint64_t events = 0;  // row events of the workload; 0: the size's default
  std::uint64_t seed = 1;
  std::filesystem::path runs_dir;      // where run records go (append-only run folders)
  std::filesystem::path services_dir;  // the drill stack's folder
  unsigned port_offset = 700;          // the drill stack's ports: the defaults shifted by this
  std::filesystem::path binberg;       // the binberg binary the drills run

  std::uint64_t workload_events() const;
};

struct Drill {
  std::string name;   // `binberg drill run NAME`
  std::string title;  // one line
  std::string paths;  // "A", "B", "A+B"
  std::function<void(DrillRun&)> body;
};

// Every drill, in the order `drill run all` takes them.
const std::vector<Drill>& all_drills();
// Null when there is no drill NAME.
const Drill* find_drill(const std::string& name);

}  // namespace binberg::drill
