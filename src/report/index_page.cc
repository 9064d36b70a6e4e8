// index.html: one row per drill, the recovery chart, the verification table of the latest
// records, how it was verified, and what the drills do not prove.

#include <fmt/format.h>

#include "evidence/run_record.h"
#include "report/html.h"
#include "report/site_model.h"
#include "report/svg_chart.h"

namespace binberg::report {
namespace {

using nlohmann::json;

double number_at(const json& object, const json::json_pointer& pointer) {
  return object.contains(pointer) && object.at(pointer).is_number() ? object.at(pointer).get<double>() : 0;
}

// "0 rows differ in 3 tables": missing, extra, different rows and duplicate keys over the record's
// reconcile reports.
std::string reconcile_diff(const RecordEntry& entry) {
  const json& reports = entry.record->at("reconcile");
  if (reports.empty()) return "<span class=\"muted\">not reconciled</span>";
  double differing = 0;
  for (const json& report : reports) {
    differing += number_at(report, "/diff/missing"_json_pointer) + number_at(report, "/diff/extra"_json_pointer) +
                 number_at(report, "/diff/different"_json_pointer) +
                 number_at(report, "/iceberg/duplicate_keys"_json_pointer);
  }
  return html_escape(fmt::format("{} rows differ in {} table{}", number_text(differing), reports.size(),
                                 reports.size() == 1 ? "" : "s"));
}

std::string trend(const std::vector<RecordEntry>& entries) {
  std::vector<double> recoveries;
  std::map<std::string, int> verdicts;
  for (const RecordEntry& entry : entries) {
    if (const auto seconds = entry.recovery_seconds()) recoveries.push_back(*seconds);
    ++verdicts[entry.verdict()];
  }
  std::string counts;
  for (const auto& [verdict, count] : verdicts) {
    counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", count, verdict);
  }
  std::string html = html_escape(fmt::format("{} run{}: {}", entries.size(), entries.size() == 1 ? "" : "s", counts));
  if (recoveries.size() > 1) {
    html += " <span class=\"spark\">" +
            render_sparkline(recoveries, fmt::format("recovery seconds of the last {} runs", recoveries.size())) +
            "</span>";
  }
  return html;
}

std::string drills_table(const SiteModel& model) {
  std::string html =
      "<h2 id=\"drills\">Drills</h2>\n<div class=\"table-wrap\"><table>\n<tr><th>drill</th><th>events</th>"
      "<th>recovery</th><th>reconcile diff</th><th>verdict</th><th>latest run</th><th>trend</th></tr>\n";
  for (const auto& [drill, entries] : model.by_drill) {
    const RecordEntry& latest = entries.back();
    const auto recovery = latest.recovery_seconds();
    html += fmt::format(
        "<tr><td><strong>{}</strong><br><span class=\"muted\">{}</span></td><td class=\"num\">{}</td>"
        "<td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        html_escape(drill), html_escape(latest.text("title")), html_escape(json_text(latest.record->at("events"))),
        recovery ? html_escape(number_text(*recovery) + " s") : "<span class=\"muted\">none</span>",
        reconcile_diff(latest), verdict_badge(latest.verdict()), link(latest.page_href(), latest.run), trend(entries));
  }
  return html + "</table></div>\n";
}

std::string recovery_chart(const SiteModel& model) {
  BarChart chart{"Recovery time per drill (latest run; the longest of its faults)", "s", {}};
  for (const RecordEntry* latest : model.latest()) {
    if (const auto seconds = latest->recovery_seconds()) {
      chart.bars.push_back(Bar{latest->drill, *seconds, std::string(verdict_class(latest->verdict()))});
    }
  }
  return "<figure>" + render_bar_chart(chart) +
         "<figcaption>From the fault's injection (or the killed service serving again) to the tables holding every "
         "transaction the source had committed at the fault; the check's threshold is in the table below.</figcaption>"
         "</figure>\n";
}

std::string verification_table(const SiteModel& model) {
  std::string html =
      "<h2 id=\"verification\">Verification (latest run of each drill)</h2>\n<div class=\"table-wrap\"><table>\n"
      "<tr><th>drill</th><th>check</th><th>value</th><th>threshold</th><th>verdict</th></tr>\n";
  for (const RecordEntry* latest : model.latest()) {
    for (const json& check : latest->record->at("checks")) {
      html += fmt::format("<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td>{} {}</td><td>{}</td></tr>\n",
                          link(latest->page_href(), latest->drill), html_escape(json_text(check.at("name"))),
                          html_escape(json_text(check.at("value"))), html_escape(json_text(check.at("comparison"))),
                          html_escape(json_text(check.at("threshold"))), verdict_badge(json_text(check.at("verdict"))));
    }
    if (latest->record->contains("error")) {
      html += fmt::format("<tr><td>{}</td><td colspan=\"4\" class=\"error\">broke off: {}</td></tr>\n",
                          link(latest->page_href(), latest->drill), html_escape(latest->text("error")));
    }
  }
  return html + "</table></div>\n";
}

std::string how_verified(const SiteModel& model) {
  std::string html =
      "<h2 id=\"how\">How this was verified</h2>\n"
      "<p>Every number on these pages is read from the run records below, written once by <code>binberg drill "
      "run</code> and never changed. Before rendering, <code>binberg report</code> checked each record against the "
      "JSON Schema compiled into binberg (" +
      link("run-record.schema.json", "run-record.schema.json") +
      ") and against the SHA-256 its run's <code>manifest.json</code> lists, and would have refused to render any "
      "that failed. The records and manifests are copied here byte for byte: <code>sha256sum runs/*/*.json</code> "
      "gives the hashes below.</p>\n<ul>\n"
      "<li><strong>Reconcile</strong>: <code>binberg reconcile --json</code> compares row counts and the SHA-256 "
      "digests of the canonical rows of the source and of the Iceberg table, diffs rows by key, checks key "
      "uniqueness, and audits the changelog's event ids against the binlog.</li>\n"
      "<li><strong>Snapshot-history ledger sums</strong>: every transaction of the workload moves money between "
      "accounts; the ledger table's balance sums to the same total in every snapshot it ever had, read with binberg's "
      "own scan, so no snapshot held part of a transaction or a change twice.</li>\n"
      "<li><strong>Whole transactions</strong>: every changelog snapshot adds each source transaction (by GTID) "
      "whole and once.</li>\n"
      "<li><strong>Timing</strong>: each time on a timeline is read from a signal named beside it (a SIGKILL sent, an "
      "exit status, a log line, a snapshot's timestamp), not estimated.</li>\n</ul>\n"
      "<div class=\"table-wrap\"><table>\n<tr><th>record</th><th>SHA-256</th></tr>\n";
  for (const evidence::StoredRun& run : model.runs) {
    const std::string manifest = "runs/" + url_segment(run.run_id) + "/manifest.json";
    html += fmt::format("<tr><td>{}</td><td class=\"muted\">the run's manifest</td></tr>\n",
                        link(manifest, run.run_id + "/manifest.json"));
  }
  for (const auto& [drill, entries] : model.by_drill) {
    for (const RecordEntry& entry : entries) {
      html += fmt::format("<tr><td>{}</td><td class=\"digest\">{}</td></tr>\n",
                          link(entry.json_href(), entry.run + "/" + entry.drill + ".json"), html_escape(entry.sha256));
    }
  }
  return html + "</table></div>\n";
}

std::string boundary(const SiteModel& model) {
  std::string html =
      "<h2 id=\"boundary\">What the drills prove, and what they do not</h2>\n<p>They prove, on real services "
      "(MariaDB, Kafka, the registry, PostgreSQL) on one machine, that a SIGKILL of replicate, the sink or the "
      "source, a crash at each step of the commit protocol, and a SIGKILL of the source MariaDB or of the Kafka "
      "broker lose no source transaction and repeat none, in the final tables and in every snapshot before them, "
      "and that binberg recovers by itself within the threshold.</p>\n<p>They do not prove: durability across a "
      "power loss (the fsync order is tested apart, with strace); failover to another source server; leader "
      "failover in a Kafka cluster (the stack has one broker); a sink group rebalanced mid-commit or two sinks on "
      "one table; consumers other than binberg's reading uncommitted records; performance at scale (a quick run "
      "writes about 5,000 row events per drill). Faults not drilled yet (network partitions, disk full, catalog "
      "outage, poison records and others) are listed in docs/drills.md.</p>\n";
  for (const SiteDoc& doc : model.docs) {
    html += fmt::format("<p>{}</p>\n", link(doc.page, doc.title));
  }
  return html;
}

}  // namespace

std::string render_index_page(const SiteModel& model) {
  const std::string latest_run = model.runs.empty() ? "none" : model.runs.back().run_id;
  std::string body = fmt::format(
      "<h1>binberg: fault drill evidence</h1>\n<p>{} runs, {} records, {} drills; latest run <code>{}</code>. "
      "Rendered by <code>binberg report</code> from the run records alone.</p>\n",
      model.runs.size(), model.record_count, model.by_drill.size(), html_escape(latest_run));
  if (model.by_drill.empty()) body += "<p class=\"muted\">No sealed run records were found.</p>\n";
  body += drills_table(model);
  body += recovery_chart(model);
  body += verification_table(model);
  body += how_verified(model);
  body += boundary(model);
  return page("binberg drill evidence", "style.css", body);
}

}  // namespace binberg::report
