#pragma once

// The HTML building blocks of the evidence site. Everything that came from a run record is user
// data (a table name, a check's detail, a drill's title): it reaches the page only through
// html_escape, which also makes it safe inside a quoted attribute value.

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace binberg::report {

// TEXT with & < > " ' replaced by entities: inert as element content and as a quoted attribute.
std::string html_escape(std::string_view text);

// SEGMENT of a relative URL with everything but [A-Za-z0-9._~-] percent-encoded, so a run folder's
// name cannot end a link early ('#', '?') or climb out of the site ('/').
std::string url_segment(std::string_view segment);

// <a href="HREF">TEXT</a>, both escaped.
std::string link(std::string_view href, std::string_view text);

// A whole page: doctype, UTF-8, viewport, the stylesheet at STYLESHEET (relative), the escaped
// TITLE, and BODY (already HTML) inside <main>.
std::string page(std::string_view title, std::string_view stylesheet, std::string_view body);

// A JSON value as short text (strings unquoted, numbers compact, null as "null"), not yet escaped.
std::string json_text(const nlohmann::json& value);

// A JSON value as HTML: objects as nested definition lists, arrays of scalars joined, scalars
// escaped. For provenance and config, whose keys the schema leaves open.
std::string json_html(const nlohmann::json& value);

// A number as short text: integers without decimals, others with up to 4 significant digits.
std::string number_text(double value);

// Unix milliseconds as an ISO 8601 UTC time, e.g. 2026-12-07T06:55:50Z.
std::string utc_time(std::int64_t unix_ms);

// The CSS class of a verdict ("pass", "fail", "skipped", "incomplete"); "unknown" for anything else.
std::string_view verdict_class(std::string_view verdict);

// The site's one stylesheet (style.css): readable at 375 px, printable, no external fonts.
std::string_view stylesheet();

// <span class="verdict CLASS">VERDICT in capitals</span>.
std::string verdict_badge(std::string_view verdict);

}  // namespace binberg::report
