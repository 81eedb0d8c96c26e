#include "resize_taps.h"

#include <algorithm>
#include <cmath>

namespace lookout {

namespace {

double triangle(double x) {
  double a = std::fabs(x);
  return a < 1 ? 1 - a : 0;
}

struct Window {
  int first;
  std::vector<double> w;
};

}  // namespace

ResizeTaps computeResizeTaps(int inSize, int outSize, bool antialias) {
  const double scale = static_cast<double>(inSize) / static_cast<double>(outSize);
  const bool widen = antialias && scale > 1;
  const double support = widen ? scale : 1;
  const double invScale = widen ? 1 / scale : 1;

  std::vector<Window> windows(static_cast<size_t>(outSize));
  int maxTaps = 1;
  std::vector<double> w;
  for (int i = 0; i < outSize; i++) {
    const double center = scale * (i + 0.5);
    const int first = std::max(static_cast<int>(std::trunc(center - support + 0.5)), 0);
    const int last = std::min(static_cast<int>(std::trunc(center + support + 0.5)), inSize);
    w.clear();
    double total = 0;
    for (int j = first; j < last; j++) {
      double v = triangle((j - center + 0.5) * invScale);
      w.push_back(v);
      total += v;
    }
    // Drop zero-weight ends so the tap count stays small (2 when not widened).
    int lo = 0;
    int hi = static_cast<int>(w.size());
    while (lo < hi - 1 && w[lo] == 0) lo++;
    while (hi > lo + 1 && w[hi - 1] == 0) hi--;
    Window& out = windows[static_cast<size_t>(i)];
    out.first = first + lo;
    for (int k = lo; k < hi; k++) out.w.push_back(total > 0 ? w[k] / total : 1.0 / (hi - lo));
    maxTaps = std::max(maxTaps, static_cast<int>(out.w.size()));
  }

  ResizeTaps t;
  t.inSize = inSize;
  t.outSize = outSize;
  t.taps = std::min(maxTaps, inSize);
  t.start.assign(static_cast<size_t>(outSize), 0);
  t.weights.assign(static_cast<size_t>(outSize) * t.taps, 0.0f);
  for (int i = 0; i < outSize; i++) {
    const Window& win = windows[static_cast<size_t>(i)];
    // Shift the window left where padding would run past the image; padded weights stay zero.
    const int s = std::min(win.first, inSize - t.taps);
    t.start[static_cast<size_t>(i)] = s;
    for (size_t k = 0; k < win.w.size(); k++) {
      t.weights[static_cast<size_t>(i) * t.taps + (win.first - s) + k] = static_cast<float>(win.w[k]);
    }
  }
  return t;
}

std::vector<int32_t> quantizeTaps(const ResizeTaps& t) {
  std::vector<int32_t> q(t.weights.size());
  for (int i = 0; i < t.outSize; i++) {
    const size_t base = static_cast<size_t>(i) * t.taps;
    double total = 0;
    for (int k = 0; k < t.taps; k++) total += static_cast<double>(t.weights[base + k]);
    // Rounding the running sum (not each weight) keeps every share >= 0 and the window's sum at
    // exactly 4096 whatever the tap count; std::round and Math.round agree on values >= 0.
    double running = 0;
    int32_t previous = 0;
    for (int k = 0; k < t.taps; k++) {
      running += static_cast<double>(t.weights[base + k]);
      const int32_t bound = k == t.taps - 1 ? 4096 : static_cast<int32_t>(std::round(running / total * 4096.0));
      q[base + k] = bound - previous;
      previous = bound;
    }
  }
  return q;
}

}  // namespace lookout
