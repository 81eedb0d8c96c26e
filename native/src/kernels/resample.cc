#include "resample.h"

#include <cstddef>

namespace lookout {

namespace {

/** row[i] = sum over t of w[t] * src row t, for a rectangle `n` bytes wide: the vectorized half. */
void combineRows(const uint8_t* const* rows, const float* w, int taps, size_t n, float* __restrict row) {
  const uint8_t* __restrict r0 = rows[0];
  const float w0 = w[0];
  if (taps == 1) {
    for (size_t i = 0; i < n; i++) row[i] = w0 * static_cast<float>(r0[i]);
    return;
  }
  const uint8_t* __restrict r1 = rows[1];
  const float w1 = w[1];
  if (taps == 2) {
    for (size_t i = 0; i < n; i++) row[i] = w0 * static_cast<float>(r0[i]) + w1 * static_cast<float>(r1[i]);
    return;
  }
  const uint8_t* __restrict r2 = rows[2];
  const float w2 = w[2];
  for (size_t i = 0; i < n; i++) row[i] = w0 * static_cast<float>(r0[i]) + w1 * static_cast<float>(r1[i]) + w2 * static_cast<float>(r2[i]);
  for (int t = 3; t < taps; t++) {
    const uint8_t* __restrict rt = rows[t];
    const float wt = w[t];
    for (size_t i = 0; i < n; i++) row[i] += wt * static_cast<float>(rt[i]);
  }
}

/** One output row of the three planes from the combined row (interleaved B, G, R floats). */
void resampleRow(const float* __restrict row, const ResizeTaps& xt, const float scale[3], const float bias[3], float* __restrict r, float* __restrict g,
                 float* __restrict b) {
  const int taps = xt.taps;
  const int32_t* start = xt.start.data();
  const float* w = xt.weights.data();
  const int n = xt.outSize;
  const float sr = scale[0], sg = scale[1], sb = scale[2];
  const float br = bias[0], bg = bias[1], bb = bias[2];
  if (taps == 1) {
    for (int ox = 0; ox < n; ox++) {
      const float* p = row + static_cast<size_t>(start[ox]) * 3;
      const float w0 = w[ox];
      b[ox] = w0 * p[0] * sb + bb;
      g[ox] = w0 * p[1] * sg + bg;
      r[ox] = w0 * p[2] * sr + br;
    }
  } else if (taps == 2) {
    for (int ox = 0; ox < n; ox++) {
      const float* p = row + static_cast<size_t>(start[ox]) * 3;
      const float w0 = w[2 * ox], w1 = w[2 * ox + 1];
      b[ox] = (w0 * p[0] + w1 * p[3]) * sb + bb;
      g[ox] = (w0 * p[1] + w1 * p[4]) * sg + bg;
      r[ox] = (w0 * p[2] + w1 * p[5]) * sr + br;
    }
  } else if (taps == 3) {
    for (int ox = 0; ox < n; ox++) {
      const float* p = row + static_cast<size_t>(start[ox]) * 3;
      const float w0 = w[3 * ox], w1 = w[3 * ox + 1], w2 = w[3 * ox + 2];
      b[ox] = (w0 * p[0] + w1 * p[3] + w2 * p[6]) * sb + bb;
      g[ox] = (w0 * p[1] + w1 * p[4] + w2 * p[7]) * sg + bg;
      r[ox] = (w0 * p[2] + w1 * p[5] + w2 * p[8]) * sr + br;
    }
  } else {
    for (int ox = 0; ox < n; ox++) {
      const float* p = row + static_cast<size_t>(start[ox]) * 3;
      const float* wt = w + static_cast<size_t>(ox) * taps;
      float ab = 0, ag = 0, ar = 0;
      for (int t = 0; t < taps; t++, p += 3) {
        ab += wt[t] * p[0];
        ag += wt[t] * p[1];
        ar += wt[t] * p[2];
      }
      b[ox] = ab * sb + bb;
      g[ox] = ag * sg + bg;
      r[ox] = ar * sr + br;
    }
  }
}

}  // namespace

void resampleToNchw(const BgrFrame& frame, const PixelRect& rect, const ResizeTaps& xt, const ResizeTaps& yt, const float scale[3], const float bias[3],
                    float* out, std::vector<float>& scratch) {
  const size_t rowBytes = static_cast<size_t>(rect.width) * 3;
  const size_t stride = static_cast<size_t>(frame.width) * 3;
  if (scratch.size() < rowBytes) scratch.resize(rowBytes);
  const size_t plane = static_cast<size_t>(xt.outSize) * yt.outSize;
  const uint8_t* origin = frame.data + static_cast<size_t>(rect.y) * stride + static_cast<size_t>(rect.x) * 3;
  std::vector<const uint8_t*> rows(static_cast<size_t>(yt.taps));
  for (int oy = 0; oy < yt.outSize; oy++) {
    const int first = yt.start[static_cast<size_t>(oy)];
    for (int t = 0; t < yt.taps; t++) rows[static_cast<size_t>(t)] = origin + static_cast<size_t>(first + t) * stride;
    combineRows(rows.data(), yt.weights.data() + static_cast<size_t>(oy) * yt.taps, yt.taps, rowBytes, scratch.data());
    const size_t o = static_cast<size_t>(oy) * xt.outSize;
    resampleRow(scratch.data(), xt, scale, bias, out + o, out + plane + o, out + 2 * plane + o);
  }
}

void resampleToBgrU8(const BgrFrame& frame, const ResizeTaps& xt, const std::vector<int32_t>& xq, const ResizeTaps& yt, const std::vector<int32_t>& yq,
                     uint8_t* out, std::vector<uint32_t>& scratch) {
  const size_t rowBytes = static_cast<size_t>(frame.width) * 3;
  if (scratch.size() < rowBytes) scratch.resize(rowBytes);
  uint32_t* __restrict row = scratch.data();
  for (int oy = 0; oy < yt.outSize; oy++) {
    const int first = yt.start[static_cast<size_t>(oy)];
    const int32_t* wy = yq.data() + static_cast<size_t>(oy) * yt.taps;
    // Each combined value is at most 255 * 4096; each output sum at most 255 * 4096 * 4096 < 2^32.
    const uint8_t* __restrict r0 = frame.data + static_cast<size_t>(first) * rowBytes;
    const uint32_t w0 = static_cast<uint32_t>(wy[0]);
    for (size_t i = 0; i < rowBytes; i++) row[i] = w0 * r0[i];
    for (int t = 1; t < yt.taps; t++) {
      const uint8_t* __restrict rt = frame.data + static_cast<size_t>(first + t) * rowBytes;
      const uint32_t wt = static_cast<uint32_t>(wy[t]);
      for (size_t i = 0; i < rowBytes; i++) row[i] += wt * rt[i];
    }
    uint8_t* o = out + static_cast<size_t>(oy) * xt.outSize * 3;
    for (int ox = 0; ox < xt.outSize; ox++) {
      const uint32_t* p = row + static_cast<size_t>(xt.start[static_cast<size_t>(ox)]) * 3;
      const int32_t* wx = xq.data() + static_cast<size_t>(ox) * xt.taps;
      uint32_t a0 = 0, a1 = 0, a2 = 0;
      for (int t = 0; t < xt.taps; t++, p += 3) {
        const uint32_t w = static_cast<uint32_t>(wx[t]);
        a0 += w * p[0];
        a1 += w * p[1];
        a2 += w * p[2];
      }
      o[3 * ox] = static_cast<uint8_t>((a0 + (1u << 23)) >> 24);
      o[3 * ox + 1] = static_cast<uint8_t>((a1 + (1u << 23)) >> 24);
      o[3 * ox + 2] = static_cast<uint8_t>((a2 + (1u << 23)) >> 24);
    }
  }
}

}  // namespace lookout
