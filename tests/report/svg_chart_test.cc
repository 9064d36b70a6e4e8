#include "report/svg_chart.h"

#include <gtest/gtest.h>

#include <regex>

namespace binberg::report {
namespace {

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t found = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++found;
  return found;
}

std::string data_points(const std::string& svg) {
  std::smatch match;
  if (!std::regex_search(svg, match, std::regex("<svg class=\"chart\" data-points=\"([0-9]+)\" role=\"img\""))) {
    return "missing";
  }
  return match[1];
}

TEST(SvgChartTest, ALineChartHasOnePointPerDataPointAndSaysHowMany) {
  LineChart chart{"lag", "seconds since the drill started", "lag", "events", YScale::kLinear, {}};
  chart.series.push_back({"path A", {{0, 1}, {1, 5}, {2, 3}}});
  chart.series.push_back({"path B", {{0, 2}, {1, 0}, {2, 7}, {3, 4}}});
  const std::string svg = render_line_chart(chart);
  EXPECT_EQ(data_points(svg), "7") << svg;
  EXPECT_EQ(count(svg, "<circle class=\"point"), 7u);
  EXPECT_EQ(count(svg, "<polyline"), 2u) << "one line per series";
  EXPECT_NE(svg.find(">path A</text>"), std::string::npos) << "the legend names each series";
  EXPECT_NE(svg.find("lag (events)"), std::string::npos) << "the y axis has its unit";
  EXPECT_NE(svg.find("viewBox=\"0 0 640 "), std::string::npos);
  EXPECT_NE(svg.find("width=\"100%\""), std::string::npos);
}

TEST(SvgChartTest, LinearTicksAreNiceSteps) {
  EXPECT_EQ(linear_ticks(0, 10, 5), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(linear_ticks(0, 1, 4), (std::vector<double>{0, 0.5, 1}));
  EXPECT_EQ(linear_ticks(-5, 5, 2), (std::vector<double>{-5, 0, 5}));
}

TEST(SvgChartTest, LogTicksAreEveryDecadeInTheRange) {
  EXPECT_EQ(log_ticks(0.001, 100), (std::vector<double>{0.001, 0.01, 0.1, 1, 10, 100}));
  EXPECT_EQ(log_ticks(1, 10), (std::vector<double>{1, 10}));
}

TEST(SvgChartTest, ALogChartLabelsItsDecades) {
  LineChart chart{
      "commit duration", "s", "duration", "s", YScale::kLog, {{"commits", {{0, 0.002}, {1, 0.5}, {2, 40}}}}};
  const std::string svg = render_line_chart(chart);
  EXPECT_EQ(data_points(svg), "3");
  for (const char* tick : {">0.001<", ">0.01<", ">0.1<", ">1<", ">10<", ">100<"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick << " missing in " << svg;
  }
  EXPECT_NE(svg.find("(log scale)"), std::string::npos);
}

TEST(SvgChartTest, ALogChartWithAValueNotAboveZeroFallsBackToLinearAndSaysSo) {
  LineChart chart{"lag", "s", "lag", "events", YScale::kLog, {{"lag", {{0, 0}, {1, 100}}}}};
  const std::string svg = render_line_chart(chart);
  EXPECT_EQ(data_points(svg), "2");
  EXPECT_NE(svg.find("linear: a value is not above 0"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;
}

TEST(SvgChartTest, AnEmptyChartSaysNoDataInsteadOfDrawingNothing) {
  for (const LineChart& chart : {LineChart{"empty", "s", "y", "", YScale::kLinear, {}},
                                 LineChart{"empty", "s", "y", "", YScale::kLog, {{"none", {}}}}}) {
    const std::string svg = render_line_chart(chart);
    EXPECT_EQ(data_points(svg), "0") << svg;
    EXPECT_NE(svg.find(">no data<"), std::string::npos) << svg;
    EXPECT_EQ(count(svg, "<circle"), 0u);
  }
  const std::string bars = render_bar_chart(BarChart{"recovery", "s", {}});
  EXPECT_EQ(data_points(bars), "0");
  EXPECT_NE(bars.find(">no data<"), std::string::npos);
}

TEST(SvgChartTest, OnePointOrAFlatLineStillHasAnAxis) {
  const std::string one = render_line_chart(LineChart{"one", "s", "y", "", YScale::kLinear, {{"a", {{5, 3}}}}});
  EXPECT_EQ(data_points(one), "1");
  EXPECT_EQ(one.find("nan"), std::string::npos) << one;
  EXPECT_EQ(one.find("inf"), std::string::npos) << one;
  const std::string flat =
      render_line_chart(LineChart{"flat", "s", "y", "", YScale::kLog, {{"a", {{0, 10}, {1, 10}, {2, 10}}}}});
  EXPECT_EQ(data_points(flat), "3");
  EXPECT_EQ(flat.find("nan"), std::string::npos) << flat;
}

TEST(SvgChartTest, ABarChartHasOneBarPerValue) {
  const std::string svg = render_bar_chart(
      BarChart{"recovery", "s", {{"replicate-kill", 1.5, "pass"}, {"sink-kill", 4, "fail"}, {"x", 0, ""}}});
  EXPECT_EQ(data_points(svg), "3") << svg;
  EXPECT_EQ(count(svg, "<rect class=\"bar"), 3u);
  EXPECT_NE(svg.find("<rect class=\"bar fail\""), std::string::npos);
  EXPECT_NE(svg.find(">4 s<"), std::string::npos) << "each bar is labelled with its value and unit";
}

TEST(SvgChartTest, TitlesSeriesAndLabelsAreEscaped) {
  LineChart chart{"<script>", "s", "\"onmouseover=", "", YScale::kLinear, {{"<b>", {{0, 1}}}}};
  const std::string svg = render_line_chart(chart) + render_bar_chart(BarChart{"<i>", "\"", {{"<script>", 1, "\">"}}});
  EXPECT_EQ(svg.find("<script"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("<b>"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("\"onmouseover"), std::string::npos) << svg;
}

TEST(SvgChartTest, ASparklineHasAPointPerValue) {
  const std::string svg = render_sparkline({1, 2, 0.5}, "recovery");
  EXPECT_EQ(data_points(svg), "3");
  EXPECT_EQ(count(svg, "<circle class=\"point"), 3u);
  EXPECT_EQ(data_points(render_sparkline({}, "none")), "0");
}

}  // namespace
}  // namespace binberg::report
