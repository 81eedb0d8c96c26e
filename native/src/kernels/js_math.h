// Math.min / Math.max as JavaScript defines them, so that the kernels give the TypeScript twins'
// results bit for bit: NaN in either argument gives NaN, and +0 is greater than -0 (std::min and
// std::max return their first argument for NaN and for signed zeros).
#pragma once

#include <cmath>
#include <limits>

namespace lookout {

inline double jsMax(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

inline double jsMin(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

}  // namespace lookout
