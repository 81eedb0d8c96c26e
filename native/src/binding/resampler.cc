// Resampler: the preprocessing (whole frame to NCHW float), the text cascade's crops (several
// rectangles to NCHW float) and the production bake's uint8 BGR input, with tap tables cached per
// size pair so a steady stream of frames computes them once.
#include "bindings.h"

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "../kernels/resample.h"
#include "../kernels/resize_taps.h"
#include "args.h"

namespace lookout {

namespace {

struct CachedTaps {
  ResizeTaps taps;
  std::vector<int32_t> quantized;  // filled on first use by the uint8 path
};

class Resampler : public Napi::ObjectWrap<Resampler> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Resampler", {InstanceMethod<&Resampler::Nchw>("nchw"), InstanceMethod<&Resampler::BgrU8>("bgrU8")});
  }

  explicit Resampler(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Resampler>(info) {}

 private:
  /** Crops seen in a stream vary in size; past this many pairs the cache starts over (between calls). */
  static constexpr size_t kMaxCachedPairs = 64;

  void trimCache() {
    if (cache_.size() > kMaxCachedPairs) cache_.clear();
  }

  /** The entry stays valid for the whole call: entries are only dropped by trimCache, before one. */
  CachedTaps& taps(int inSize, int outSize, bool antialias) {
    const auto key = std::make_tuple(inSize, outSize, antialias);
    auto found = cache_.find(key);
    if (found != cache_.end()) return *found->second;
    auto entry = std::make_unique<CachedTaps>();
    entry->taps = computeResizeTaps(inSize, outSize, antialias);
    return *cache_.emplace(key, std::move(entry)).first->second;
  }

  static BgrFrame frameArg(const Napi::CallbackInfo& info) {
    ArrayArg<uint8_t> bgr = arrayArg<uint8_t>(info, 0, "frame");
    const int w = static_cast<int>(intArg(info, 1, "frame width", 1, kMaxImageSide));
    const int h = static_cast<int>(intArg(info, 2, "frame height", 1, kMaxImageSide));
    if (bgr.length != static_cast<size_t>(w) * h * 3) {
      throwRange(info.Env(), "frame has " + std::to_string(bgr.length) + " bytes, expected " + std::to_string(w) + "x" + std::to_string(h) + "x3");
    }
    return {bgr.data, w, h};
  }

  static void readTriple(const Napi::CallbackInfo& info, size_t at, const char* what, float out[3]) {
    ArrayArg<double> v = arrayArg<double>(info, at, what);
    if (v.length != 3) throwRange(info.Env(), std::string(what) + " must hold 3 values (R, G, B)");
    for (int c = 0; c < 3; c++) out[c] = static_cast<float>(v.data[c]);
  }

  /** nchw(frame, width, height, rects Int32Array [x, y, w, h]*, dstWidth, dstHeight, antialias, scale, bias, out) */
  Napi::Value Nchw(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const BgrFrame frame = frameArg(info);
    ArrayArg<int32_t> rects = arrayArg<int32_t>(info, 3, "rects");
    const int dw = static_cast<int>(intArg(info, 4, "output width", 1, kMaxImageSide));
    const int dh = static_cast<int>(intArg(info, 5, "output height", 1, kMaxImageSide));
    const bool antialias = boolArg(info, 6, "antialias");
    float scale[3], bias[3];
    readTriple(info, 7, "scale", scale);
    readTriple(info, 8, "bias", bias);
    ArrayArg<float> out = arrayArg<float>(info, 9, "output");
    if (rects.length % 4 != 0) throwRange(env, "rects must hold 4 values (x, y, width, height) per rectangle");
    const size_t count = rects.length / 4;
    const size_t perRect = static_cast<size_t>(3) * dw * dh;
    if (out.length != count * perRect) {
      throwRange(env, "output has " + std::to_string(out.length) + " values, expected " + std::to_string(count) + " x 3 x " + std::to_string(dh) + " x " +
                          std::to_string(dw));
    }
    for (size_t r = 0; r < count; r++) {
      const int32_t* q = rects.data + 4 * r;
      const bool inside = q[0] >= 0 && q[1] >= 0 && q[2] > 0 && q[3] > 0 && q[2] <= frame.width - q[0] && q[3] <= frame.height - q[1];
      if (!inside) throwRange(env, "rect " + std::to_string(r) + " is not a non-empty rectangle inside the frame");
    }
    trimCache();
    for (size_t r = 0; r < count; r++) {
      const int32_t* q = rects.data + 4 * r;
      const PixelRect rect{q[0], q[1], q[2], q[3]};
      const CachedTaps& xt = taps(rect.width, dw, antialias);
      const CachedTaps& yt = taps(rect.height, dh, antialias);
      resampleToNchw(frame, rect, xt.taps, yt.taps, scale, bias, out.data + r * perRect, floatScratch_);
    }
    return env.Undefined();
  }

  /** bgrU8(frame, width, height, dstWidth, dstHeight, antialias, out Uint8Array) */
  Napi::Value BgrU8(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const BgrFrame frame = frameArg(info);
    const int dw = static_cast<int>(intArg(info, 3, "output width", 1, kMaxImageSide));
    const int dh = static_cast<int>(intArg(info, 4, "output height", 1, kMaxImageSide));
    const bool antialias = boolArg(info, 5, "antialias");
    ArrayArg<uint8_t> out = arrayArg<uint8_t>(info, 6, "output");
    if (out.length != static_cast<size_t>(dw) * dh * 3) {
      throwRange(env, "output has " + std::to_string(out.length) + " bytes, expected " + std::to_string(dw) + "x" + std::to_string(dh) + "x3");
    }
    trimCache();
    CachedTaps& xt = taps(frame.width, dw, antialias);
    if (xt.quantized.empty()) xt.quantized = quantizeTaps(xt.taps);
    CachedTaps& yt = taps(frame.height, dh, antialias);
    if (yt.quantized.empty()) yt.quantized = quantizeTaps(yt.taps);
    resampleToBgrU8(frame, xt.taps, xt.quantized, yt.taps, yt.quantized, out.data, intScratch_);
    return env.Undefined();
  }

  std::map<std::tuple<int, int, bool>, std::unique_ptr<CachedTaps>> cache_;
  std::vector<float> floatScratch_;
  std::vector<uint32_t> intScratch_;
};

/** resizeTaps(inSize, outSize, antialias): the tables, for the tests that hold them equal to the twin's. */
Napi::Value ResizeTapsOf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int in = static_cast<int>(intArg(info, 0, "input size", 1, kMaxImageSide));
  const int out = static_cast<int>(intArg(info, 1, "output size", 1, kMaxImageSide));
  const bool antialias = boolArg(info, 2, "antialias");
  const ResizeTaps t = computeResizeTaps(in, out, antialias);
  const std::vector<int32_t> q = quantizeTaps(t);
  Napi::Object result = Napi::Object::New(env);
  result.Set("taps", Napi::Number::New(env, t.taps));
  Napi::Int32Array start = Napi::Int32Array::New(env, t.start.size());
  std::copy(t.start.begin(), t.start.end(), start.Data());
  Napi::Float32Array weights = Napi::Float32Array::New(env, t.weights.size());
  std::copy(t.weights.begin(), t.weights.end(), weights.Data());
  Napi::Int32Array quantized = Napi::Int32Array::New(env, q.size());
  std::copy(q.begin(), q.end(), quantized.Data());
  result.Set("start", start);
  result.Set("weights", weights);
  result.Set("quantized", quantized);
  return result;
}

}  // namespace

void initResampler(Napi::Env env, Napi::Object exports) {
  exports.Set("Resampler", Resampler::Define(env));
  exports.Set("resizeTaps", Napi::Function::New<ResizeTapsOf>(env, "resizeTaps"));
}

}  // namespace lookout
