// A document of docs/ (drills.md, runbook.md) in the site, so a run page can link its section:
// headings become <h1>..<h6> with GitHub's anchors, everything between them stays as written, escaped
// and preformatted. Not a markdown renderer, on purpose: nothing in it can become markup.

#include <fmt/format.h>

#include <cctype>
#include <map>
#include <sstream>

#include "report/html.h"
#include "report/site_model.h"

namespace binberg::report {

std::string heading_anchor(const std::string& heading) {
  std::string anchor;
  for (const char c : heading) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) != 0 || c == '-' || c == '_' || byte >= 0x80) {
      anchor += static_cast<char>(std::tolower(byte));
    } else if (c == ' ') {
      anchor += '-';
    }
  }
  return anchor;
}

std::string render_doc_page(const std::string& title, const std::string& markdown) {
  std::string body = fmt::format("<p>{}</p>\n", link("index.html", "← all drills"));
  std::string block;
  const auto flush = [&] {
    if (block.find_first_not_of(" \n") != std::string::npos) body += "<pre>" + html_escape(block) + "</pre>\n";
    block.clear();
  };
  std::map<std::string, int> anchors_seen;
  bool in_fence = false;
  std::istringstream lines(markdown);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("```")) in_fence = !in_fence;
    const std::size_t level = line.find_first_not_of('#');
    if (in_fence || level == 0 || level > 6 || level == std::string::npos || line[level] != ' ') {
      block += line + "\n";
      continue;
    }
    flush();
    const std::string text = line.substr(level + 1);
    std::string anchor = heading_anchor(text);
    if (const int seen = anchors_seen[anchor]++; seen > 0) anchor += fmt::format("-{}", seen);
    body += fmt::format("<h{0} id=\"{1}\">{2}</h{0}>\n", level, html_escape(anchor), html_escape(text));
  }
  flush();
  return page(title, "style.css", body);
}

}  // namespace binberg::report
