// runs/<run>/<drill>.html: one drill run, from its record: timeline, checks, reconcile digests,
// path A vs path B parity, metric charts, provenance, config and the raw record.

#include <fmt/format.h>

#include <algorithm>

#include "report/html.h"
#include "report/site_model.h"
#include "report/svg_chart.h"

namespace binberg::report {
namespace {

using nlohmann::json;

constexpr const char* kRoot = "../../";  // from runs/<run>/ back to the site's folder

std::string seconds_since(const json& record, std::int64_t at_ms) {
  const auto started = record.at("started_at_ms").get<std::int64_t>();
  return fmt::format("{:+.3f} s", static_cast<double>(at_ms - started) / 1000);
}

std::string header(const SiteModel& model, const RecordEntry& entry) {
  const json& record = *entry.record;
  std::string html = fmt::format("<p>{}</p>\n<h1>{} {}</h1>\n", link(std::string(kRoot) + "index.html", "← all drills"),
                                 html_escape(entry.text("title")), verdict_badge(entry.verdict()));
  html += fmt::format(
      "<dl class=\"kv\"><dt>drill</dt><dd><code>{}</code></dd><dt>run</dt><dd><code>{}</code></dd>"
      "<dt>started</dt><dd>{}</dd><dt>wall time</dt><dd>{} s</dd><dt>events</dt><dd>{}</dd><dt>seed</dt><dd>{}</dd>"
      "<dt>size</dt><dd>{}</dd><dt>paths</dt><dd>{}</dd><dt>recovery</dt><dd>{}</dd>",
      html_escape(entry.drill), html_escape(entry.run),
      html_escape(utc_time(record.at("started_at_ms").get<std::int64_t>())),
      html_escape(json_text(record.at("wall_seconds"))), html_escape(json_text(record.at("events"))),
      html_escape(json_text(record.at("seed"))), record.at("quick").get<bool>() ? "quick" : "full",
      json_html(record.at("paths")),
      entry.recovery_seconds() ? html_escape(number_text(*entry.recovery_seconds()) + " s (the longest of its faults)")
                               : "<span class=\"muted\">none recorded</span>");
  html += fmt::format("<dt>record</dt><dd>{} <span class=\"digest\">SHA-256 {}</span></dd>",
                      link(url_segment(entry.drill) + ".json", entry.drill + ".json"), html_escape(entry.sha256));
  const std::string docs = entry.text("docs");
  if (!docs.empty()) {
    const auto href = model.docs_href(docs);
    html += fmt::format("<dt>docs</dt><dd>{}</dd>",
                        href ? link(kRoot + *href, docs) : "<code>" + html_escape(docs) + "</code>");
  }
  html += "</dl>\n";
  if (record.contains("error")) {
    html += fmt::format("<p class=\"error\">The drill broke off before its checks: {}</p>\n",
                        html_escape(entry.text("error")));
  }
  return html;
}

std::string timeline(const json& record) {
  std::vector<json> events(record.at("timeline").begin(), record.at("timeline").end());
  std::stable_sort(events.begin(), events.end(), [](const json& a, const json& b) {
    return a.at("at_ms").get<std::int64_t>() < b.at("at_ms").get<std::int64_t>();
  });
  std::string html =
      "<h2 id=\"timeline\">Timeline</h2>\n<p class=\"muted\">inject → detect → recover → verify, each time read "
      "from the signal beside it, relative to the drill's start.</p>\n<div class=\"table-wrap\"><table>\n"
      "<tr><th>phase</th><th>at</th><th>signal</th><th>detail</th></tr>\n";
  for (const json& event : events) {
    html += fmt::format("<tr><td><strong>{}</strong></td><td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>\n",
                        html_escape(json_text(event.at("phase"))),
                        html_escape(seconds_since(record, event.at("at_ms").get<std::int64_t>())),
                        html_escape(json_text(event.at("signal"))), html_escape(json_text(event.value("detail", ""))));
  }
  if (events.empty()) html += "<tr><td colspan=\"4\" class=\"muted\">no events recorded</td></tr>\n";
  return html + "</table></div>\n";
}

std::string checks(const json& record) {
  std::string html =
      "<h2 id=\"checks\">Checks</h2>\n<div class=\"table-wrap\"><table>\n<tr><th>check</th><th>value</th>"
      "<th>comparison</th><th>threshold</th><th>verdict</th><th>detail</th></tr>\n";
  for (const json& check : record.at("checks")) {
    html += fmt::format(
        "<tr><td><code>{}</code></td><td>{}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        html_escape(json_text(check.at("name"))), html_escape(json_text(check.at("value"))),
        html_escape(json_text(check.at("comparison"))), html_escape(json_text(check.at("threshold"))),
        verdict_badge(json_text(check.at("verdict"))), html_escape(json_text(check.value("detail", ""))));
  }
  if (record.at("checks").empty()) html += "<tr><td colspan=\"6\" class=\"muted\">no check ran</td></tr>\n";
  return html + "</table></div>\n";
}

std::string provenance(const json& record) {
  std::string html = "<h2 id=\"provenance\">Provenance</h2>\n" + json_html(record.at("provenance"));
  html += "<h2 id=\"config\">Config</h2>\n" + json_html(record.at("config"));
  html +=
      "<h2 id=\"logs\">Logs</h2>\n<p class=\"muted\">Kept beside the record in the runs folder, not copied "
      "here.</p>\n<div class=\"table-wrap\"><table>\n<tr><th>file</th><th>SHA-256</th></tr>\n";
  for (const json& log : record.value("logs", json::array())) {
    html += fmt::format("<tr><td><code>{}</code></td><td class=\"digest\">{}</td></tr>\n",
                        html_escape(json_text(log.at("path"))), html_escape(json_text(log.at("sha256"))));
  }
  return html + "</table></div>\n";
}

}  // namespace

std::string render_run_page(const SiteModel& model, const RecordEntry& entry) {
  const json& record = *entry.record;
  std::string body = header(model, entry);
  body += timeline(record);
  body += checks(record);
  body += reconcile_section(record);
  body += parity_section(record);
  body += samples_section(record);
  body += provenance(record);
  return page(entry.drill + " " + entry.run + ": " + entry.verdict(), std::string(kRoot) + "style.css", body);
}

}  // namespace binberg::report
