#include "../kernels/annexb_count.h"

#include <napi.h>

#include "args.h"
#include "bindings.h"

namespace lookout {

namespace {

/** countPictures(stream Uint8Array, codec 0 (H.265) | 1 (H.264), maxNalBytes) -> { frames, keyframes } */
Napi::Value CountPictures(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ArrayArg<uint8_t> stream = arrayArg<uint8_t>(info, 0, "stream");
  const int64_t codec = intArg(info, 1, "codec", 0, 1);
  const int64_t maxNal = intArg(info, 2, "maxNalBytes", 0, int64_t{1} << 52);
  const PictureCount c = countPictures(stream.data, stream.length, codec == 0 ? AnnexBCodec::Hevc : AnnexBCodec::H264, static_cast<size_t>(maxNal));
  Napi::Object result = Napi::Object::New(env);
  result.Set("frames", Napi::Number::New(env, c.frames));
  result.Set("keyframes", Napi::Number::New(env, c.keyframes));
  return result;
}

}  // namespace

void initAnnexBCount(Napi::Env env, Napi::Object exports) { exports.Set("countPictures", Napi::Function::New<CountPictures>(env, "countPictures")); }

}  // namespace lookout
