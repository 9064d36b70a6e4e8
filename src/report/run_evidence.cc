// The evidence sections of a run page: reconcile reports with their digests side by side, path A
// vs path B parity, and one chart per metric series the record sampled.

#include <fmt/format.h>

#include "report/html.h"
#include "report/site_model.h"
#include "report/svg_chart.h"

namespace binberg::report {
namespace {

using nlohmann::json;

std::string at(const json& object, const json::json_pointer& pointer) {
  return object.contains(pointer) ? json_text(object.at(pointer)) : std::string();
}

std::string digest_cell(const std::string& digest, const std::string& other) {
  if (digest.empty()) return "<td class=\"muted\">none</td>";
  const bool same = digest == other;
  return fmt::format("<td class=\"digest\">{}<br><span class=\"verdict {}\">{}</span></td>", html_escape(digest),
                     same ? "pass" : "fail", same ? "equal" : "differs");
}

// Series whose values span orders of magnitude (durations) read better by decades.
YScale scale_for(const std::string& name, const std::vector<std::pair<double, double>>& points) {
  if (name.find("duration") != std::string::npos) return YScale::kLog;
  double low = 0, high = 0;
  for (const auto& [x, y] : points) {
    if (y <= 0) return YScale::kLinear;
    low = low == 0 ? y : std::min(low, y);
    high = std::max(high, y);
  }
  return low > 0 && high / low >= 1000 ? YScale::kLog : YScale::kLinear;
}

}  // namespace

std::string reconcile_section(const json& record) {
  std::string html =
      "<h2 id=\"reconcile\">Reconcile</h2>\n<p class=\"muted\">binberg reconcile: the source table beside the "
      "Iceberg table, with the SHA-256 digests of their canonical rows.</p>\n";
  if (record.at("reconcile").empty()) return html + "<p class=\"muted\">Not reconciled.</p>\n";
  for (const json& report : record.at("reconcile")) {
    const std::string verdict = json_text(report.at("verdict"));
    const std::string source_digest = at(report, "/source/digest"_json_pointer);
    const std::string table_digest = at(report, "/iceberg/digest"_json_pointer);
    html += fmt::format(
        "<h3>path {} · <code>{}</code> {}</h3>\n<div class=\"table-wrap\"><table class=\"side\">\n"
        "<tr><th></th><th>source</th><th>iceberg</th></tr>\n"
        "<tr><th>rows</th><td>{}</td><td>{}</td></tr>\n<tr><th>position</th><td>{}</td><td>{}</td></tr>\n"
        "<tr><th>SHA-256</th>{}{}</tr>\n</table></div>\n",
        html_escape(json_text(report.at("path"))), html_escape(json_text(report.at("table"))),
        verdict_badge(verdict == "equal" ? "pass" : verdict), html_escape(at(report, "/source/rows"_json_pointer)),
        html_escape(at(report, "/iceberg/rows"_json_pointer)), html_escape(at(report, "/source/position"_json_pointer)),
        html_escape(at(report, "/iceberg/position"_json_pointer) + " (snapshot " +
                    at(report, "/iceberg/snapshot_id"_json_pointer) + ")"),
        digest_cell(source_digest, table_digest), digest_cell(table_digest, source_digest));
    html += fmt::format(
        "<p>reconcile verdict <code>{}</code>; diff: {} missing, {} extra, {} different, {} duplicate keys; "
        "changelog audit: {} ({} source events, {} changelog rows, {} missing, {} duplicates)</p>\n",
        html_escape(verdict), html_escape(at(report, "/diff/missing"_json_pointer)),
        html_escape(at(report, "/diff/extra"_json_pointer)), html_escape(at(report, "/diff/different"_json_pointer)),
        html_escape(at(report, "/iceberg/duplicate_keys"_json_pointer)),
        html_escape(at(report, "/audit/verdict"_json_pointer)),
        html_escape(at(report, "/audit/source_events"_json_pointer)),
        html_escape(at(report, "/audit/changelog_rows"_json_pointer)),
        html_escape(at(report, "/audit/missing"_json_pointer)),
        html_escape(at(report, "/audit/duplicates"_json_pointer)));
  }
  return html;
}

std::string parity_section(const json& record) {
  const json parity = record.value("parity", json::array());
  if (parity.empty()) {
    return "<h2 id=\"parity\">Path A vs path B</h2>\n<p class=\"muted\">This drill ran one path; no parity was "
           "recorded.</p>\n";
  }
  std::string html =
      "<h2 id=\"parity\">Path A vs path B</h2>\n<div class=\"table-wrap\"><table>\n<tr><th>table</th>"
      "<th>source digest</th><th>path A digest</th><th>path B digest</th><th>equal</th></tr>\n";
  for (const json& row : parity) {
    html += fmt::format(
        "<tr><td><code>{}</code></td><td class=\"digest\">{}</td><td class=\"digest\">{}</td>"
        "<td class=\"digest\">{}</td><td>{}</td></tr>\n",
        html_escape(json_text(row.at("table"))), html_escape(json_text(row.at("source_digest"))),
        html_escape(json_text(row.at("a_digest"))), html_escape(json_text(row.at("b_digest"))),
        verdict_badge(row.at("equal").get<bool>() ? "pass" : "fail"));
  }
  return html + "</table></div>\n";
}

std::string samples_section(const json& record) {
  std::string html = "<h2 id=\"samples\">Metrics over time</h2>\n";
  const json& samples = record.at("samples");
  if (samples.empty()) return html + "<p class=\"muted\">The record holds no metric series.</p>\n";
  const auto started = record.at("started_at_ms").get<std::int64_t>();
  for (const auto& [name, series] : samples.items()) {
    ChartSeries line{name, {}};
    for (const json& point : series.at("points")) {
      line.points.emplace_back(static_cast<double>(point.at(0).get<std::int64_t>() - started) / 1000,
                               point.at(1).get<double>());
    }
    const std::string unit = json_text(series.at("unit"));
    LineChart chart{name, "seconds since the drill started", name, unit, scale_for(name, line.points), {}};
    chart.series.push_back(std::move(line));
    html += "<figure>" + render_line_chart(chart);
    if (series.contains("description")) {
      html += "<figcaption>" + html_escape(json_text(series.at("description"))) + "</figcaption>";
    }
    html += "</figure>\n";
  }
  return html;
}

}  // namespace binberg::report
