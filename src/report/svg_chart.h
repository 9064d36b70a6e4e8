#pragma once

// Charts as inline SVG, drawn here from numbers (no script, no external file). Every chart is
//   <svg class="chart" data-points="N" role="img" aria-label="..." viewBox="..." width="100%">
// with exactly N data marks: one <circle class="point"> per point of a line chart, one
// <rect class="bar"> per bar; a test (or a reader of the source) can count them. A chart with no
// points says "no data" rather than drawing empty axes.

#include <string>
#include <utility>
#include <vector>

namespace binberg::report {

enum class YScale { kLinear, kLog };

struct ChartSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y)
};

struct LineChart {
  std::string title;
  std::string x_label;  // with its unit, e.g. "seconds since the drill started"
  std::string y_label;
  std::string y_unit;
  // kLog draws decades; it falls back to linear (and says so) when a value is not positive.
  YScale y_scale = YScale::kLinear;
  std::vector<ChartSeries> series;
};

struct Bar {
  std::string label;
  double value = 0;
  std::string css_class;  // e.g. the drill's verdict, so a failed drill's bar stands out
};

struct BarChart {
  std::string title;
  std::string unit;
  std::vector<Bar> bars;
};

std::string render_line_chart(const LineChart& chart);
std::string render_bar_chart(const BarChart& chart);
// A tiny line of VALUES (in order) without axes, for a table cell; DESCRIPTION is its aria-label.
std::string render_sparkline(const std::vector<double>& values, const std::string& description);

// The tick positions of an axis over [LOW, HIGH]: "nice" steps (1, 2, 5 x 10^k), about TARGET of
// them, for a linear axis; every power of ten in the range for a log axis (LOW > 0).
std::vector<double> linear_ticks(double low, double high, int target);
std::vector<double> log_ticks(double low, double high);

}  // namespace binberg::report
