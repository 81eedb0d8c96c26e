// Separable bilinear resampling weights: the C++ port of core/src/native/resize-taps.ts, computed in
// the same double arithmetic and stored as float32, so both sides resample with identical tables.
#pragma once

#include <cstdint>
#include <vector>

namespace lookout {

struct ResizeTaps {
  int inSize = 0;
  int outSize = 0;
  int taps = 0;
  /** First source index of each output position's window. */
  std::vector<int32_t> start;
  /** outSize * taps weights, each window summing to 1 (padding is zero). */
  std::vector<float> weights;
};

/** Requires inSize > 0 and outSize > 0 (callers check). */
ResizeTaps computeResizeTaps(int inSize, int outSize, bool antialias);

/** The taps as 4096ths (each >= 0, exactly 4096 per window), for the uint8 (fixed-point) path. */
std::vector<int32_t> quantizeTaps(const ResizeTaps& t);

}  // namespace lookout
