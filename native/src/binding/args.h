// Argument checks for the bindings: every typed array is checked for its element type and length
// before a kernel reads or writes it, so a wrong call is a JavaScript TypeError or RangeError, never
// a read past the end. (The TypeScript wrappers check first, with the twins' messages.)
#pragma once

#include <napi.h>

#include <cstdint>
#include <string>

namespace lookout {

[[noreturn]] inline void throwType(Napi::Env env, const std::string& message) { throw Napi::TypeError::New(env, message); }
[[noreturn]] inline void throwRange(Napi::Env env, const std::string& message) { throw Napi::RangeError::New(env, message); }

template <typename T>
struct ArrayKind;
template <>
struct ArrayKind<uint8_t> {
  static constexpr napi_typedarray_type type = napi_uint8_array;
  static constexpr const char* name = "a Uint8Array";
};
template <>
struct ArrayKind<int32_t> {
  static constexpr napi_typedarray_type type = napi_int32_array;
  static constexpr const char* name = "an Int32Array";
};
template <>
struct ArrayKind<float> {
  static constexpr napi_typedarray_type type = napi_float32_array;
  static constexpr const char* name = "a Float32Array";
};
template <>
struct ArrayKind<double> {
  static constexpr napi_typedarray_type type = napi_float64_array;
  static constexpr const char* name = "a Float64Array";
};

/** A typed array argument of element type T (a Buffer is a Uint8Array). */
template <typename T>
struct ArrayArg {
  T* data;
  size_t length;
};

template <typename T>
ArrayArg<T> arrayArg(const Napi::CallbackInfo& info, size_t at, const char* what) {
  Napi::Env env = info.Env();
  if (info.Length() <= at || !info[at].IsTypedArray()) throwType(env, std::string(what) + " must be " + ArrayKind<T>::name);
  Napi::TypedArray array = info[at].As<Napi::TypedArray>();
  // napi_uint8_clamped_array is not a Uint8Array (Buffer, Uint8Array are napi_uint8_array).
  if (array.TypedArrayType() != ArrayKind<T>::type) throwType(env, std::string(what) + " must be " + ArrayKind<T>::name);
  Napi::TypedArrayOf<T> typed = info[at].As<Napi::TypedArrayOf<T>>();
  return {typed.Data(), typed.ElementLength()};
}

/** An optional typed array: null or undefined gives a null pointer. */
template <typename T>
ArrayArg<T> optionalArrayArg(const Napi::CallbackInfo& info, size_t at, const char* what) {
  if (info.Length() <= at || info[at].IsNull() || info[at].IsUndefined()) return {nullptr, 0};
  return arrayArg<T>(info, at, what);
}

/** An integer argument within [min, max]. */
inline int64_t intArg(const Napi::CallbackInfo& info, size_t at, const char* what, int64_t min, int64_t max) {
  Napi::Env env = info.Env();
  if (info.Length() <= at || !info[at].IsNumber()) throwType(env, std::string(what) + " must be a number");
  const double v = info[at].As<Napi::Number>().DoubleValue();
  if (!(v >= static_cast<double>(min) && v <= static_cast<double>(max)) || static_cast<double>(static_cast<int64_t>(v)) != v) {
    throwRange(env, std::string(what) + " must be an integer in " + std::to_string(min) + ".." + std::to_string(max) + " (got " + std::to_string(v) + ")");
  }
  return static_cast<int64_t>(v);
}

inline double numberArg(const Napi::CallbackInfo& info, size_t at, const char* what) {
  if (info.Length() <= at || !info[at].IsNumber()) throwType(info.Env(), std::string(what) + " must be a number");
  return info[at].As<Napi::Number>().DoubleValue();
}

inline bool boolArg(const Napi::CallbackInfo& info, size_t at, const char* what) {
  if (info.Length() <= at || !info[at].IsBoolean()) throwType(info.Env(), std::string(what) + " must be a boolean");
  return info[at].As<Napi::Boolean>().Value();
}

/** Sizes of one image axis: big enough for any camera, small enough that products fit in size_t and int. */
constexpr int64_t kMaxImageSide = 1 << 15;

}  // namespace lookout
