// lookout_native: the frame hot paths of the vision plugins (core/src/native/native-addon.ts loads
// it; each kernel has a TypeScript twin used when it is absent or LOOKOUT_NATIVE=0).
#include <napi.h>

#include "bindings.h"

namespace {

/**
 * The kernels' calling convention. The loader refuses an addon of another version (a stale build
 * left in native/build) with a warning and runs the twins, rather than calling it wrongly.
 */
constexpr int kAbiVersion = 1;

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("abiVersion", Napi::Number::New(env, kAbiVersion));
#ifdef LOOKOUT_SANITIZED
  exports.Set("sanitized", Napi::Boolean::New(env, true));
#else
  exports.Set("sanitized", Napi::Boolean::New(env, false));
#endif
  lookout::initResampler(env, exports);
  lookout::initDetrDecoder(env, exports);
  lookout::initIouMatrix(env, exports);
  lookout::initAnnexBCount(env, exports);
#ifdef LOOKOUT_WITH_SNPE
  lookout::initSnpe(env, exports);
#endif
  return exports;
}

}  // namespace

NODE_API_MODULE(lookout_native, Init)
