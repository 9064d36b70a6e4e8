#include "report/html.h"

#include <gtest/gtest.h>

#include "report/site_model.h"

namespace binberg::report {
namespace {

TEST(HtmlEscapeTest, MarkupAndBothQuotesBecomeEntities) {
  EXPECT_EQ(html_escape("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
  EXPECT_EQ(html_escape("\"onmouseover='x' & y"), "&quot;onmouseover=&#39;x&#39; &amp; y");
  EXPECT_EQ(html_escape("plain_table.name"), "plain_table.name");
}

TEST(HtmlEscapeTest, ALinkEscapesItsHrefAndText) {
  EXPECT_EQ(link("a\"b.html", "<b>"), "<a href=\"a&quot;b.html\">&lt;b&gt;</a>");
}

TEST(UrlSegmentTest, SlashesHashesAndDotsCannotLeaveTheSegment) {
  EXPECT_EQ(url_segment("20261207T010203Z-0123abcd"), "20261207T010203Z-0123abcd");
  EXPECT_EQ(url_segment("a/b#c?d e"), "a%2Fb%23c%3Fd%20e");
  EXPECT_EQ(url_segment(".."), "%2E.");
}

TEST(JsonHtmlTest, KeysAndValuesOfAnObjectAreEscaped) {
  const std::string html = json_html({{"<k>", "<v>"}, {"list", {"a", "<b>"}}});
  EXPECT_EQ(html.find("<k>"), std::string::npos) << html;
  EXPECT_EQ(html.find("<v>"), std::string::npos) << html;
  EXPECT_NE(html.find("&lt;b&gt;"), std::string::npos) << html;
}

TEST(NumberTextTest, IntegersHaveNoDecimalsAndOthersFourSignificantDigits) {
  EXPECT_EQ(number_text(5), "5");
  EXPECT_EQ(number_text(1.23456), "1.235");
  EXPECT_EQ(number_text(0.001), "0.001");
}

TEST(HeadingAnchorTest, MatchesGitHubsAnchors) {
  EXPECT_EQ(heading_anchor("replicate-kill"), "replicate-kill");
  EXPECT_EQ(heading_anchor("binberg replicate crashed or was killed (path A)"),
            "binberg-replicate-crashed-or-was-killed-path-a");
  EXPECT_EQ(heading_anchor("The Kafka broker restarted (path B)"), "the-kafka-broker-restarted-path-b");
}

TEST(DocPageTest, HeadingsGetAnchorsAndEverythingElseIsEscapedText) {
  const std::string html = render_doc_page("Doc", "# Title\n\n<b>bold</b>\n\n```sh\n# not a heading\n```\n## Two\n");
  EXPECT_NE(html.find("<h1 id=\"title\">Title</h1>"), std::string::npos) << html;
  EXPECT_NE(html.find("<h2 id=\"two\">Two</h2>"), std::string::npos) << html;
  EXPECT_NE(html.find("&lt;b&gt;bold&lt;/b&gt;"), std::string::npos) << html;
  EXPECT_NE(html.find("# not a heading"), std::string::npos) << "a comment in a code fence is no heading";
}

}  // namespace
}  // namespace binberg::report
