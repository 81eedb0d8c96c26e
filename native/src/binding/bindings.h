// Each binding file registers its part of the addon's exports.
#pragma once

#include <napi.h>

namespace lookout {

void initResampler(Napi::Env env, Napi::Object exports);
void initDetrDecoder(Napi::Env env, Napi::Object exports);
void initIouMatrix(Napi::Env env, Napi::Object exports);
void initAnnexBCount(Napi::Env env, Napi::Object exports);
#ifdef LOOKOUT_WITH_SNPE
void initSnpe(Napi::Env env, Napi::Object exports);
#endif

}  // namespace lookout
