#include "report/html.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>

namespace binberg::report {

std::string html_escape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        escaped += "&amp;";
        break;
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      case '"':
        escaped += "&quot;";
        break;
      case '\'':
        escaped += "&#39;";
        break;
      default:
        escaped += c;
    }
  }
  return escaped;
}

std::string url_segment(std::string_view segment) {
  std::string encoded;
  for (const char c : segment) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) != 0 || c == '.' || c == '_' || c == '~' || c == '-') {
      encoded += c;
    } else {
      encoded += fmt::format("%{:02X}", byte);
    }
  }
  // "." and ".." are path steps, not names.
  if (encoded == "." || encoded == "..") encoded.replace(0, 1, "%2E");
  return encoded;
}

std::string link(std::string_view href, std::string_view text) {
  return fmt::format("<a href=\"{}\">{}</a>", html_escape(href), html_escape(text));
}

std::string page(std::string_view title, std::string_view stylesheet, std::string_view body) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<link rel=\"stylesheet\" "
      "href=\"{}\">\n</head>\n<body>\n<main>\n{}</main>\n</body>\n</html>\n",
      html_escape(title), html_escape(stylesheet), body);
}

std::string number_text(double value) {
  if (!std::isfinite(value)) return std::isnan(value) ? "NaN" : (value > 0 ? "∞" : "-∞");
  if (value == std::trunc(value) && std::fabs(value) < 1e15) return fmt::format("{}", static_cast<long long>(value));
  return fmt::format("{:.4g}", value);
}

std::string json_text(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_integer()) return value.dump();
  if (value.is_number()) return number_text(value.get<double>());
  return value.dump();
}

std::string json_html(const nlohmann::json& value) {
  if (value.is_object()) {
    if (value.empty()) return "<span class=\"muted\">none</span>";
    std::string html = "<dl class=\"kv\">";
    for (const auto& [key, item] : value.items()) {
      html += fmt::format("<dt>{}</dt><dd>{}</dd>", html_escape(key), json_html(item));
    }
    return html + "</dl>";
  }
  if (value.is_array()) {
    const bool scalars =
        std::all_of(value.begin(), value.end(), [](const nlohmann::json& item) { return item.is_primitive(); });
    std::string html;
    for (const nlohmann::json& item : value) {
      if (scalars) {
        html += fmt::format("{}<code>{}</code>", html.empty() ? "" : " ", html_escape(json_text(item)));
      } else {
        html += json_html(item);
      }
    }
    return html.empty() ? "<span class=\"muted\">none</span>" : html;
  }
  return html_escape(json_text(value));
}

std::string utc_time(std::int64_t unix_ms) {
  const std::chrono::sys_seconds at{std::chrono::seconds(unix_ms / 1000)};
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", at);
}

std::string_view verdict_class(std::string_view verdict) {
  for (const std::string_view known : {"pass", "fail", "skipped", "incomplete"}) {
    if (verdict == known) return known;
  }
  return "unknown";
}

std::string verdict_badge(std::string_view verdict) {
  std::string upper(verdict);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return fmt::format("<span class=\"verdict {}\">{}</span>", verdict_class(verdict), html_escape(upper));
}

std::string_view stylesheet() {
  return R"css(/* binberg evidence site: no fonts or files from outside this folder, no scripts. */
:root { --fg: #1a1a1a; --muted: #5f6368; --line: #d0d4d9; --pass: #1b7f3b; --fail: #b3261e; --skip: #8a6d00; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: #fff;
       font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1100px; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: 0.5rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 0.6rem; border-bottom: 1px solid var(--line); padding-bottom: 0.2rem; }
h3 { font-size: 1rem; margin: 1.2rem 0 0.4rem; }
a { color: #0b57d0; }
code, pre, .digest { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace;
                     font-size: 0.85em; }
.digest { word-break: break-all; }
pre { white-space: pre-wrap; word-break: break-word; background: #f6f8fa; padding: 0.6rem; border-radius: 4px; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; margin: 0.4rem 0 1rem; }
th, td { text-align: left; vertical-align: top; padding: 0.3rem 0.5rem; border-bottom: 1px solid var(--line); }
th { background: #f1f3f4; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.muted { color: var(--muted); }
.verdict { font-weight: 700; padding: 0 0.35rem; border-radius: 3px; border: 1px solid currentColor; white-space: nowrap; }
.verdict.pass { color: var(--pass); }
.verdict.fail, .verdict.unknown { color: var(--fail); }
.verdict.skipped, .verdict.incomplete { color: var(--skip); }
.error { color: var(--fail); font-weight: 600; }
dl.kv { display: grid; grid-template-columns: max-content 1fr; gap: 0.1rem 0.8rem; margin: 0.2rem 0; }
dl.kv dt { color: var(--muted); }
dl.kv dd { margin: 0; overflow-wrap: anywhere; }
figure { margin: 0.8rem 0 1.4rem; }
figcaption { color: var(--muted); font-size: 0.9em; }
svg.chart { width: 100%; height: auto; max-width: 760px; display: block; }
.spark { display: inline-block; width: 120px; vertical-align: middle; }
.spark svg.chart { max-width: 120px; }
svg.chart text { font: 13px system-ui, sans-serif; fill: #333; }
svg.chart .title { font-size: 15px; font-weight: 600; }
.spark svg.chart text { font-size: 11px; }
table.side th:first-child { width: 7rem; }
svg.chart .axis, svg.chart .tick { stroke: #666; stroke-width: 1; }
svg.chart .grid { stroke: #e3e6ea; stroke-width: 1; }
svg.chart .line { fill: none; stroke-width: 2; }
svg.chart .nodata { font-size: 14px; fill: var(--muted); }
svg.chart .s0 { stroke: #0b57d0; fill: #0b57d0; } svg.chart .s1 { stroke: #d06a0b; fill: #d06a0b; }
svg.chart .s2 { stroke: #1b7f3b; fill: #1b7f3b; } svg.chart .s3 { stroke: #8e24aa; fill: #8e24aa; }
svg.chart .s4 { stroke: #b3261e; fill: #b3261e; } svg.chart .s5 { stroke: #00838f; fill: #00838f; }
svg.chart .line.s0, svg.chart .line.s1, svg.chart .line.s2, svg.chart .line.s3, svg.chart .line.s4,
svg.chart .line.s5 { fill: none; }
svg.chart rect.bar { fill: #0b57d0; } svg.chart rect.bar.fail { fill: #b3261e; }
svg.chart rect.bar.incomplete { fill: #8a6d00; }
@media (max-width: 600px) { body { font-size: 14px; } main { padding: 0.5rem; } th, td { padding: 0.25rem; } }
@media print {
  body { font-size: 11pt; } main { max-width: none; padding: 0; }
  a { color: inherit; text-decoration: none; }
  h2 { break-after: avoid; } figure, tr { break-inside: avoid; }
  .table-wrap { overflow: visible; }
  pre { background: none; border: 1px solid var(--line); }
}
)css";
}

}  // namespace binberg::report
