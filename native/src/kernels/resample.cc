#include "resample.h"

#include <cstddef>
#include <cstring>

#include "stream_store.h"

namespace {

const float kUnitScale[3] = {1, 1, 1};
const float kZeroBias[3] = {0, 0, 0};

}  // namespace

namespace lookout {

namespace {

/** Four floats in one register: GCC's vector extension (SSE on x86-64, NEON on aarch64). */
typedef float v4 __attribute__((vector_size(16)));

inline v4 load4(const float* p) {
  v4 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

inline void store4(float* p, v4 v) { __builtin_memcpy(p, &v, sizeof v); }

/** A source row's bytes (B, G, R interleaved) as floats. */
void toFloat(const uint8_t* __restrict src, size_t n, float* __restrict dst) {
  for (size_t i = 0; i < n; i++) dst[i] = static_cast<float>(src[i]);
}

/** dst[i] = sum over t of w[t] * rows[t][i]: contiguous, so the compiler vectorizes it. */
void combineRows(const float* const* rows, const float* w, int taps, size_t n, float* __restrict dst) {
  const float* __restrict r0 = rows[0];
  const float w0 = w[0];
  if (taps == 1) {
    for (size_t i = 0; i < n; i++) dst[i] = w0 * r0[i];
    return;
  }
  const float* __restrict r1 = rows[1];
  const float w1 = w[1];
  if (taps == 2) {
    for (size_t i = 0; i < n; i++) dst[i] = w0 * r0[i] + w1 * r1[i];
    return;
  }
  const float* __restrict r2 = rows[2];
  const float w2 = w[2];
  for (size_t i = 0; i < n; i++) dst[i] = w0 * r0[i] + w1 * r1[i] + w2 * r2[i];
  for (int t = 3; t < taps; t++) {
    const float* __restrict rt = rows[t];
    const float wt = w[t];
    for (size_t i = 0; i < n; i++) dst[i] += wt * rt[i];
  }
}

/**
 * One row resampled horizontally: `row` holds interleaved B, G, R floats (padded by one float), and
 * each output pixel is the weighted sum of its taps' (B, G, R, next) quadruples, so the three
 * channels share one vector multiply-add per tap. The quadruples go to `quad` (4 floats a pixel).
 */
void resampleQuads(const float* __restrict row, const ResizeTaps& xt, float* __restrict quad) {
  const int taps = xt.taps;
  const int32_t* start = xt.start.data();
  const float* w = xt.weights.data();
  const int n = xt.outSize;
  if (taps == 1) {
    for (int ox = 0; ox < n; ox++) store4(quad + 4 * ox, w[ox] * load4(row + static_cast<size_t>(start[ox]) * 3));
  } else if (taps == 2) {
    for (int ox = 0; ox < n; ox++) {
      const float* p = row + static_cast<size_t>(start[ox]) * 3;
      store4(quad + 4 * ox, w[2 * ox] * load4(p) + w[2 * ox + 1] * load4(p + 3));
    }
  } else if (taps == 3) {
    for (int ox = 0; ox < n; ox++) {
      const float* p = row + static_cast<size_t>(start[ox]) * 3;
      store4(quad + 4 * ox, w[3 * ox] * load4(p) + w[3 * ox + 1] * load4(p + 3) + w[3 * ox + 2] * load4(p + 6));
    }
  } else {
    for (int ox = 0; ox < n; ox++) {
      const float* p = row + static_cast<size_t>(start[ox]) * 3;
      const float* wt = w + static_cast<size_t>(ox) * taps;
      v4 acc = {0, 0, 0, 0};
      for (int t = 0; t < taps; t++, p += 3) acc += wt[t] * load4(p);
      store4(quad + 4 * ox, acc);
    }
  }
}

/** Quadruples (B, G, R, -) split into R, G, B rows, each value * scale[c] + bias[c] (c: R, G, B). */
void splitQuads(const float* __restrict quad, size_t n, const float scale[3], const float bias[3], float* __restrict r, float* __restrict g,
                float* __restrict b) {
  const float sr = scale[0], sg = scale[1], sb = scale[2];
  const float br = bias[0], bg = bias[1], bb = bias[2];
  for (size_t i = 0; i < n; i++) {
    b[i] = quad[4 * i] * sb + bb;
    g[i] = quad[4 * i + 1] * sg + bg;
    r[i] = quad[4 * i + 2] * sr + br;
  }
}

/** Rows of a ring buffer, by source row: a row is computed once however many output rows use it. */
class RowRing {
 public:
  RowRing(float* base, int slots, size_t rowFloats) : base_(base), slots_(slots), rowFloats_(rowFloats), held_(static_cast<size_t>(slots), -1) {}

  /** The slot for source row `y`, and whether it already holds it. */
  float* slot(int y, bool& held) {
    const size_t s = static_cast<size_t>(y % slots_);
    held = held_[s] == y;
    held_[s] = y;
    return base_ + s * rowFloats_;
  }

 private:
  float* base_;
  int slots_;
  size_t rowFloats_;
  std::vector<int> held_;
};

}  // namespace

void resampleToNchw(const BgrFrame& frame, const PixelRect& rect, const ResizeTaps& xt, const ResizeTaps& yt, const float scale[3], const float bias[3],
                    float* out, std::vector<float>& scratch) {
  const size_t rowBytes = static_cast<size_t>(rect.width) * 3;
  const size_t stride = static_cast<size_t>(frame.width) * 3;
  const size_t dw = static_cast<size_t>(xt.outSize);
  const size_t plane = dw * yt.outSize;
  const uint8_t* origin = frame.data + static_cast<size_t>(rect.y) * stride + static_cast<size_t>(rect.x) * 3;
  const int ty = yt.taps;
  std::vector<const float*> rows(static_cast<size_t>(ty));
  // The horizontal pass is the dear one (a gather per pixel; the vertical one is contiguous): run it
  // on whichever rows are fewer. Enlarging rows (a small crop to 384) resamples each source row once
  // into a ring of R, G, B rows and combines them per output row; otherwise each output row first
  // combines its source rows and is then resampled once.
  const bool horizontalFirst = rect.height < yt.outSize;
  const size_t ringRow = horizontalFirst ? 3 * dw : rowBytes + 4;  // +4: the last quadruple's padding
  const size_t need = rowBytes + 4 + static_cast<size_t>(ty) * ringRow + 4 * dw + 3 * dw + 4;
  if (scratch.size() < need) scratch.resize(need);
  float* line = scratch.data();  // one source row as floats, padded
  float* ringBase = line + rowBytes + 4;
  float* quad = ringBase + static_cast<size_t>(ty) * ringRow;
  float* planes = quad + 4 * dw;  // one output row of R, G, B before it is streamed out
  line[rowBytes] = 0;
  RowRing ring(ringBase, ty, ringRow);

  for (int oy = 0; oy < yt.outSize; oy++) {
    const int first = yt.start[static_cast<size_t>(oy)];
    const float* wy = yt.weights.data() + static_cast<size_t>(oy) * ty;
    for (int t = 0; t < ty; t++) {
      bool held = false;
      float* slot = ring.slot(first + t, held);
      if (!held) {
        const uint8_t* src = origin + static_cast<size_t>(first + t) * stride;
        if (horizontalFirst) {
          toFloat(src, rowBytes, line);
          resampleQuads(line, xt, quad);
          splitQuads(quad, dw, kUnitScale, kZeroBias, slot, slot + dw, slot + 2 * dw);
        } else {
          toFloat(src, rowBytes, slot);
          slot[rowBytes] = 0;
        }
      }
      rows[static_cast<size_t>(t)] = slot;
    }
    if (horizontalFirst) {
      combineRows(rows.data(), wy, ty, 3 * dw, planes);
      for (int c = 0; c < 3; c++) {
        float* p = planes + c * dw;
        const float s = scale[c], b = bias[c];
        for (size_t i = 0; i < dw; i++) p[i] = p[i] * s + b;
      }
    } else {
      combineRows(rows.data(), wy, ty, rowBytes, line);
      resampleQuads(line, xt, quad);
      splitQuads(quad, dw, scale, bias, planes, planes + dw, planes + 2 * dw);
    }
    const size_t o = static_cast<size_t>(oy) * dw;
    streamRow(out + o, planes, dw);
    streamRow(out + plane + o, planes + dw, dw);
    streamRow(out + 2 * plane + o, planes + 2 * dw, dw);
  }
  streamFence();
}

void resampleToBgrU8(const BgrFrame& frame, const ResizeTaps& xt, const std::vector<int32_t>& xq, const ResizeTaps& yt, const std::vector<int32_t>& yq,
                     uint8_t* out, std::vector<uint32_t>& scratch) {
  const size_t rowBytes = static_cast<size_t>(frame.width) * 3;
  if (xt.outSize == frame.width && yt.outSize == frame.height) {
    // Same size: every window is one tap of 4096, so the result is the frame itself.
    std::memcpy(out, frame.data, rowBytes * frame.height);
    return;
  }
  typedef uint32_t u4 __attribute__((vector_size(16)));
  if (scratch.size() < rowBytes + 4) scratch.resize(rowBytes + 4);
  uint32_t* __restrict row = scratch.data();
  row[rowBytes] = 0;  // the last quadruple's fourth lane
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
    // The three channels of a pixel as one (B, G, R, next) quadruple per tap, as the float path does.
    for (int ox = 0; ox < xt.outSize; ox++) {
      const uint32_t* p = row + static_cast<size_t>(xt.start[static_cast<size_t>(ox)]) * 3;
      const int32_t* wx = xq.data() + static_cast<size_t>(ox) * xt.taps;
      u4 acc = {1u << 23, 1u << 23, 1u << 23, 0};
      for (int t = 0; t < xt.taps; t++, p += 3) {
        u4 v;
        __builtin_memcpy(&v, p, sizeof v);
        acc += static_cast<uint32_t>(wx[t]) * v;
      }
      acc >>= 24;
      o[3 * ox] = static_cast<uint8_t>(acc[0]);
      o[3 * ox + 1] = static_cast<uint8_t>(acc[1]);
      o[3 * ox + 2] = static_cast<uint8_t>(acc[2]);
    }
  }
}

}  // namespace lookout
