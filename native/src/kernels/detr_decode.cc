#include "detr_decode.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "js_math.h"

namespace lookout {

namespace {

/** Slack for the logit-space prefilter; the exact score test follows, so this only has to be generous. */
constexpr double kPrefilterSlack = 1e-6;

bool finiteBox(const float* b) { return std::isfinite(b[0]) && std::isfinite(b[1]) && std::isfinite(b[2]) && std::isfinite(b[3]); }

}  // namespace

int decodeDetr(const DetrDecodeInput& in, DetrDecodeScratch& s, double* out) {
  const size_t total = static_cast<size_t>(in.queries) * in.classes;
  const double threshold = in.scoreThreshold;
  const double prefilter =
      threshold > 0 && threshold < 1 ? std::log(threshold / (1 - threshold)) - kPrefilterSlack : -std::numeric_limits<double>::infinity();
  s.index.clear();
  s.score.clear();
  for (size_t i = 0; i < total; i++) {
    const double x = in.logits[i];
    // A NaN logit fails both tests; so does a query whose box is not finite (fp16 overflow).
    if (!(x >= prefilter)) continue;
    const double score = 1 / (1 + std::exp(-x));
    if (score >= threshold && finiteBox(in.boxes + (i / in.classes) * 4)) {
      s.index.push_back(static_cast<int32_t>(i));
      s.score.push_back(score);
    }
  }

  const int n = static_cast<int>(s.index.size());
  s.order.resize(static_cast<size_t>(n));
  for (int j = 0; j < n; j++) s.order[static_cast<size_t>(j)] = j;
  // Best first; equal scores by flat index: a strict total order, so the k best are one set.
  auto better = [&s](int32_t a, int32_t b) {
    const double sa = s.score[static_cast<size_t>(a)], sb = s.score[static_cast<size_t>(b)];
    return sa > sb || (sa == sb && s.index[static_cast<size_t>(a)] < s.index[static_cast<size_t>(b)]);
  };
  const int k = std::min(n, in.topK);
  std::partial_sort(s.order.begin(), s.order.begin() + k, s.order.end(), better);

  const double W = in.frameWidth;
  const double H = in.frameHeight;
  int written = 0;
  for (int j = 0; j < k; j++) {
    const int32_t cand = s.order[static_cast<size_t>(j)];
    const int32_t index = s.index[static_cast<size_t>(cand)];
    const int32_t q = index / in.classes;
    const int32_t modelClass = index - q * in.classes;
    const int32_t c = in.remap ? (modelClass < in.remapLength ? in.remap[modelClass] : -1) : modelClass;
    if (c < 0) continue;
    const float* b = in.boxes + static_cast<size_t>(q) * 4;
    const double cx = b[0], cy = b[1], w = b[2], h = b[3];
    double* o = out + static_cast<size_t>(written) * 6;
    o[0] = c;
    o[1] = in.logits[index];
    o[2] = jsMin(jsMax((cx - 0.5 * w) * W, 0), W);
    o[3] = jsMin(jsMax((cy - 0.5 * h) * H, 0), H);
    o[4] = jsMin(jsMax((cx + 0.5 * w) * W, 0), W);
    o[5] = jsMin(jsMax((cy + 0.5 * h) * H, 0), H);
    written++;
  }
  return written;
}

}  // namespace lookout
