// Resampling of packed BGR888 frames (or a rectangle of one) for the vision models:
//  - to float32 NCHW RGB planes with a per-channel scale and bias (the detector's normalized input,
//    the text cascade's 0..1 crops);
//  - to uint8 BGR888 NHWC (the production bake's DLC input), in fixed point.
// Both are separable: each output row first combines its source rows (a contiguous loop the compiler
// vectorizes), then resamples that one row horizontally.
#pragma once

#include <cstdint>
#include <vector>

#include "resize_taps.h"

namespace lookout {

/** A packed BGR888 frame. */
struct BgrFrame {
  const uint8_t* data;
  int width;
  int height;
};

/** A rectangle of the frame, in whole pixels, inside it. */
struct PixelRect {
  int x;
  int y;
  int width;
  int height;
};

/** Writes 3 planes (R, G, B) of xt.outSize * yt.outSize floats at `out`: value * scale[c] + bias[c]. */
void resampleToNchw(const BgrFrame& frame, const PixelRect& rect, const ResizeTaps& xt, const ResizeTaps& yt, const float scale[3], const float bias[3],
                    float* out, std::vector<float>& scratch);

/**
 * Writes xt.outSize * yt.outSize BGR888 pixels at `out`, from 4096ths weights (quantizeTaps); each
 * value is the weighted sum rounded half up, exactly as the TypeScript twin computes it.
 */
void resampleToBgrU8(const BgrFrame& frame, const ResizeTaps& xt, const std::vector<int32_t>& xq, const ResizeTaps& yt, const std::vector<int32_t>& yq,
                     uint8_t* out, std::vector<uint32_t>& scratch);

}  // namespace lookout
