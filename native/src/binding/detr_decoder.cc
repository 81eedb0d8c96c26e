// DetrDecoder: RF-DETR decoding with its candidate buffers kept between frames.
#include <napi.h>

#include <cstdint>
#include <string>

#include "../kernels/detr_decode.h"
#include "args.h"
#include "bindings.h"

namespace lookout {

namespace {

class DetrDecoder : public Napi::ObjectWrap<DetrDecoder> {
 public:
  static Napi::Function Define(Napi::Env env) { return DefineClass(env, "DetrDecoder", {InstanceMethod<&DetrDecoder::Decode>("decode")}); }

  explicit DetrDecoder(const Napi::CallbackInfo& info) : Napi::ObjectWrap<DetrDecoder>(info) {}

 private:
  /**
   * decode(boxes Float32Array[Q*4], logits Float32Array[Q*C], Q, C, topK, threshold, frameWidth,
   * frameHeight, remap Int32Array | null, out Float64Array[topK*6]) -> detections written
   */
  Napi::Value Decode(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    ArrayArg<float> boxes = arrayArg<float>(info, 0, "boxes");
    ArrayArg<float> logits = arrayArg<float>(info, 1, "logits");
    DetrDecodeInput in{};
    in.queries = static_cast<int>(intArg(info, 2, "queries", 1, 1 << 20));
    in.classes = static_cast<int>(intArg(info, 3, "classes", 1, 1 << 16));
    // The kernel keeps flat (query, class) indexes as int32: a larger Q*C would wrap them negative and
    // read boxes before their start. Checked on the sizes, before any buffer length.
    if (static_cast<int64_t>(in.queries) * in.classes > INT32_MAX) {
      throwRange(env, "queries*classes must be at most " + std::to_string(INT32_MAX) + " (got " + std::to_string(static_cast<int64_t>(in.queries) * in.classes) + ")");
    }
    in.topK = static_cast<int>(intArg(info, 4, "topK", 1, 1 << 24));
    in.scoreThreshold = numberArg(info, 5, "scoreThreshold");
    in.frameWidth = numberArg(info, 6, "frameWidth");
    in.frameHeight = numberArg(info, 7, "frameHeight");
    ArrayArg<int32_t> remap = optionalArrayArg<int32_t>(info, 8, "remap");
    ArrayArg<double> out = arrayArg<double>(info, 9, "output");
    if (boxes.length != static_cast<size_t>(in.queries) * 4) throwRange(env, "boxes must hold Q*4 values");
    if (logits.length != static_cast<size_t>(in.queries) * in.classes) throwRange(env, "logits must hold Q*C values");
    if (out.length < static_cast<size_t>(in.topK) * 6) throwRange(env, "output must hold topK*6 values");
    in.boxes = boxes.data;
    in.logits = logits.data;
    in.remap = remap.data;
    in.remapLength = static_cast<int>(remap.length);
    return Napi::Number::New(env, decodeDetr(in, scratch_, out.data));
  }

  DetrDecodeScratch scratch_;
};

}  // namespace

void initDetrDecoder(Napi::Env env, Napi::Object exports) { exports.Set("DetrDecoder", DetrDecoder::Define(env)); }

}  // namespace lookout
