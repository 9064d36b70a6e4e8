#include "report/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/assert.h"
#include "report/html.h"

namespace binberg::report {
namespace {

constexpr double kWidth = 640;
constexpr double kPlotLeft = 80, kPlotRight = 620, kPlotTop = 40, kPlotHeight = 200;
constexpr int kSeriesClasses = 6;  // s0..s5 in style.css
constexpr std::size_t kLegendColumns = 3;

// One axis: a domain mapped onto a pixel range, linearly or by decades.
struct Axis {
  double low = 0, high = 1;
  double from_px = 0, to_px = 1;
  YScale scale = YScale::kLinear;
  std::vector<double> ticks;

  double position(double value) const {
    const double at = scale == YScale::kLog
                          ? (std::log10(value) - std::log10(low)) / (std::log10(high) - std::log10(low))
                          : (value - low) / (high - low);
    return from_px + at * (to_px - from_px);
  }
};

double nice_step(double range, int target) {
  const double raw = range / std::max(1, target);
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  const double fraction = raw / magnitude;
  const double nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10;
  return nice * magnitude;
}

// [LOW, HIGH] widened to whole steps (and away from a zero width), with its ticks.
Axis linear_axis(double low, double high, int target) {
  if (high - low < 1e-12 * std::max(1.0, std::fabs(high))) {
    const double pad = low == 0 ? 1 : std::fabs(low) * 0.1;
    low -= pad;
    high += pad;
  }
  const double step = nice_step(high - low, target);
  Axis axis;
  axis.low = std::floor(low / step + 1e-9) * step;
  axis.high = std::ceil(high / step - 1e-9) * step;
  axis.ticks = linear_ticks(axis.low, axis.high, target);
  return axis;
}

Axis log_axis(double low, double high) {
  Axis axis;
  axis.scale = YScale::kLog;
  axis.low = std::pow(10, std::floor(std::log10(low)));
  axis.high = std::pow(10, std::ceil(std::log10(high)));
  if (axis.high <= axis.low) axis.high = axis.low * 10;
  axis.ticks = log_ticks(axis.low, axis.high);
  return axis;
}

std::string svg_open(std::size_t points, const std::string& label, double height) {
  return fmt::format(
      "<svg class=\"chart\" data-points=\"{}\" role=\"img\" aria-label=\"{}\" viewBox=\"0 0 {} {}\" width=\"100%\" "
      "xmlns=\"http://www.w3.org/2000/svg\">\n<title>{}</title>\n",
      points, html_escape(label), kWidth, height, html_escape(label));
}

std::string title_text(const std::string& title) {
  return fmt::format("<text class=\"title\" x=\"{}\" y=\"20\">{}</text>\n", kPlotLeft, html_escape(title));
}

std::string no_data(const std::string& title) {
  std::string svg = svg_open(0, title + ": no data", 120);
  svg += title_text(title);
  svg += fmt::format("<text class=\"nodata\" x=\"{}\" y=\"70\" text-anchor=\"middle\">no data</text>\n</svg>\n",
                     kWidth / 2);
  return svg;
}

// Grid lines, ticks and tick labels of the y axis, then the x axis, then both axis lines.
std::string draw_axes(const Axis& x, const Axis& y, const LineChart& chart) {
  std::string svg;
  for (const double tick : y.ticks) {
    const double py = y.position(tick);
    svg += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        kPlotLeft, py, kPlotRight, kPlotLeft - 6, py + 4, html_escape(number_text(tick)));
  }
  const double bottom = kPlotTop + kPlotHeight;
  for (const double tick : x.ticks) {
    const double px = x.position(tick);
    svg += fmt::format(
        "<line class=\"tick\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        px, bottom, bottom + 5, bottom + 18, html_escape(number_text(tick)));
  }
  svg += fmt::format(
      "<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>"
      "<line class=\"axis\" x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\"/>\n",
      kPlotLeft, kPlotTop, bottom, kPlotRight);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (kPlotLeft + kPlotRight) / 2,
                     bottom + 36, html_escape(chart.x_label));
  const std::string y_label = chart.y_unit.empty() ? chart.y_label : chart.y_label + " (" + chart.y_unit + ")";
  svg += fmt::format("<text x=\"14\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {0})\">{1}</text>\n",
                     kPlotTop + kPlotHeight / 2, html_escape(y_label));
  return svg;
}

std::string draw_series(const ChartSeries& series, int index, const Axis& x, const Axis& y, const std::string& unit) {
  const int css = index % kSeriesClasses;
  std::string svg;
  if (series.points.size() > 1) {
    std::string points;
    for (const auto& [vx, vy] : series.points) {
      points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", x.position(vx), y.position(vy));
    }
    svg += fmt::format("<polyline class=\"line s{}\" points=\"{}\"/>\n", css, points);
  }
  for (const auto& [vx, vy] : series.points) {
    svg += fmt::format(
        "<circle class=\"point s{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\"><title>{}: {} at {}</title></circle>\n", css,
        x.position(vx), y.position(vy), html_escape(series.name),
        html_escape(number_text(vy) + (unit.empty() ? "" : " " + unit)), html_escape(number_text(vx)));
  }
  return svg;
}

std::string draw_legend(const std::vector<ChartSeries>& series, double top) {
  std::string svg;
  const double column_width = (kPlotRight - kPlotLeft) / kLegendColumns;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const double lx = kPlotLeft + static_cast<double>(i % kLegendColumns) * column_width;
    const double ly = top + static_cast<double>(i / kLegendColumns) * 18;
    svg += fmt::format(
        "<rect class=\"s{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"12\" height=\"12\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
        static_cast<int>(i) % kSeriesClasses, lx, ly, lx + 16, ly + 10, html_escape(series[i].name));
  }
  return svg;
}

struct Extent {
  double x_low = std::numeric_limits<double>::infinity(), x_high = -x_low;
  double y_low = x_low, y_high = -x_low;
  std::size_t points = 0;
};

Extent extent_of(const std::vector<ChartSeries>& all) {
  Extent extent;
  for (const ChartSeries& series : all) {
    for (const auto& [x, y] : series.points) {
      extent.x_low = std::min(extent.x_low, x);
      extent.x_high = std::max(extent.x_high, x);
      extent.y_low = std::min(extent.y_low, y);
      extent.y_high = std::max(extent.y_high, y);
      ++extent.points;
    }
  }
  return extent;
}

}  // namespace

std::vector<double> linear_ticks(double low, double high, int target) {
  BINBERG_ASSERT(high > low, "an axis from {} to {}", low, high);
  const double step = nice_step(high - low, target);
  std::vector<double> ticks;
  for (double tick = std::ceil(low / step - 1e-9) * step; tick <= high + step * 1e-9; tick += step) {
    ticks.push_back(std::fabs(tick) < step * 1e-9 ? 0 : tick);
  }
  return ticks;
}

std::vector<double> log_ticks(double low, double high) {
  BINBERG_ASSERT(low > 0 && high > low, "a log axis from {} to {}", low, high);
  std::vector<double> ticks;
  for (int k = static_cast<int>(std::floor(std::log10(low))); k <= static_cast<int>(std::ceil(std::log10(high))); ++k) {
    const double tick = std::pow(10, k);
    if (tick >= low * (1 - 1e-9) && tick <= high * (1 + 1e-9)) ticks.push_back(tick);
  }
  return ticks;
}

std::string render_line_chart(const LineChart& chart) {
  const Extent extent = extent_of(chart.series);
  if (extent.points == 0) return no_data(chart.title);
  const bool log_possible = extent.y_low > 0;
  const bool log = chart.y_scale == YScale::kLog && log_possible;
  std::string title = chart.title;
  if (log) title += " (log scale)";
  if (chart.y_scale == YScale::kLog && !log_possible) title += " (linear: a value is not above 0)";
  Axis x = linear_axis(extent.x_low, extent.x_high, 6);
  x.from_px = kPlotLeft;
  x.to_px = kPlotRight;
  Axis y = log ? log_axis(extent.y_low, extent.y_high) : linear_axis(std::min(0.0, extent.y_low), extent.y_high, 5);
  y.from_px = kPlotTop + kPlotHeight;
  y.to_px = kPlotTop;
  const double legend_top = kPlotTop + kPlotHeight + 50;
  const double legend_rows = static_cast<double>((chart.series.size() + kLegendColumns - 1) / kLegendColumns);
  const std::string label = fmt::format("{}: {} points in {} series, {}{}", title, extent.points, chart.series.size(),
                                        chart.y_label, chart.y_unit.empty() ? "" : " in " + chart.y_unit);
  std::string svg = svg_open(extent.points, label, legend_top + legend_rows * 18 + 6);
  svg += title_text(title);
  svg += draw_axes(x, y, chart);
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    svg += draw_series(chart.series[i], static_cast<int>(i), x, y, chart.y_unit);
  }
  svg += draw_legend(chart.series, legend_top);
  return svg + "</svg>\n";
}

std::string render_bar_chart(const BarChart& chart) {
  if (chart.bars.empty()) return no_data(chart.title);
  constexpr double kLabelRight = 200, kRow = 26, kTop = 34;
  double low = 0, high = 0;
  for (const Bar& bar : chart.bars) {
    low = std::min(low, bar.value);
    high = std::max(high, bar.value);
  }
  Axis x = linear_axis(low, high, 5);
  x.from_px = kLabelRight;
  x.to_px = kPlotRight - 40;
  const double bottom = kTop + kRow * static_cast<double>(chart.bars.size());
  const std::string label = fmt::format("{}: {} bars, {}", chart.title, chart.bars.size(), chart.unit);
  std::string svg = svg_open(chart.bars.size(), label, bottom + 46);
  svg += title_text(chart.title);
  for (const double tick : x.ticks) {
    svg += fmt::format(
        "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        x.position(tick), kTop, bottom, bottom + 16, html_escape(number_text(tick)));
  }
  for (std::size_t i = 0; i < chart.bars.size(); ++i) {
    const Bar& bar = chart.bars[i];
    const double top = kTop + kRow * static_cast<double>(i) + 4;
    const double zero = x.position(0), end = x.position(bar.value);
    const std::string value = number_text(bar.value) + (chart.unit.empty() ? "" : " " + chart.unit);
    svg += fmt::format(
        "<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>"
        "<rect class=\"bar {}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\"><title>{}: {}</title></rect>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
        kLabelRight - 8, top + 13, html_escape(bar.label), html_escape(bar.css_class), std::min(zero, end), top,
        std::fabs(end - zero), kRow - 8, html_escape(bar.label), html_escape(value), std::max(zero, end) + 4, top + 13,
        html_escape(value));
  }
  svg += fmt::format("<line class=\"axis\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>\n", x.position(0),
                     kTop, bottom);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (kLabelRight + kPlotRight) / 2,
                     bottom + 36, html_escape(chart.unit));
  return svg + "</svg>\n";
}

std::string render_sparkline(const std::vector<double>& values, const std::string& description) {
  constexpr double kSparkWidth = 120, kSparkHeight = 28, kPad = 4;
  std::string svg = fmt::format(
      "<svg class=\"chart\" data-points=\"{}\" role=\"img\" aria-label=\"{}\" viewBox=\"0 0 {} {}\" width=\"100%\" "
      "xmlns=\"http://www.w3.org/2000/svg\"><title>{}</title>",
      values.size(), html_escape(description), kSparkWidth, kSparkHeight, html_escape(description));
  if (values.empty()) return svg + "<text class=\"nodata\" x=\"4\" y=\"18\">no data</text></svg>";
  const auto [low_it, high_it] = std::minmax_element(values.begin(), values.end());
  const double low = std::min(0.0, *low_it), high = *high_it > low ? *high_it : low + 1;
  const auto px = [&](std::size_t i) {
    return values.size() == 1
               ? kSparkWidth / 2
               : kPad + (kSparkWidth - 2 * kPad) * static_cast<double>(i) / static_cast<double>(values.size() - 1);
  };
  const auto py = [&](double v) { return kSparkHeight - kPad - (kSparkHeight - 2 * kPad) * (v - low) / (high - low); };
  std::string line;
  for (std::size_t i = 0; i < values.size(); ++i) line += fmt::format("{:.1f},{:.1f} ", px(i), py(values[i]));
  if (values.size() > 1) svg += fmt::format("<polyline class=\"line s0\" points=\"{}\"/>", line);
  for (std::size_t i = 0; i < values.size(); ++i) {
    svg += fmt::format("<circle class=\"point s0\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2\"><title>{}</title></circle>",
                       px(i), py(values[i]), html_escape(number_text(values[i])));
  }
  return svg + "</svg>";
}

}  // namespace binberg::report
