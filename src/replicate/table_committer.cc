#include "replicate/table_committer.h"

#include "core/failpoint.h"

namespace binberg::replicate {

std::chrono::milliseconds TableCommitter::commit(const std::vector<iceberg::TableWriter*>& writers,
                                                 const std::string& commit_id,
                                                 const std::vector<std::map<std::string, std::string>>& summaries) {
  const auto started = time_.now();
  std::vector<iceberg::PreparedCommit> prepared;
  for (std::size_t i = 0; i < writers.size(); ++i) {
    prepared.push_back(writers[i]->prepare(commit_id, summaries[i], time_.unix_millis()));
  }
  failpoint::hit("pipeline.before_commit");
  iceberg::commit_tables(catalog_, writers, prepared);
  const auto duration = time_.now() - started;
  metrics_.commit_duration.observe(std::chrono::duration<double>(duration).count());
  for (const iceberg::PreparedCommit& commit : prepared) {
    metrics_.bytes_written.add(static_cast<double>(commit.stats.bytes_written));
  }
  const double now_s = static_cast<double>(time_.unix_millis()) / 1000;
  if (metrics_.last_commit_time.value() > 0) metrics_.commit_interval.set(now_s - metrics_.last_commit_time.value());
  metrics_.last_commit_time.set(now_s);
  metrics_.commits.add();
  return std::chrono::duration_cast<std::chrono::milliseconds>(duration);
}

}  // namespace binberg::replicate
