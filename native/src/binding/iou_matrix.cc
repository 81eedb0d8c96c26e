#include "../kernels/iou_matrix.h"

#include <napi.h>

#include "args.h"
#include "bindings.h"

namespace lookout {

namespace {

/** iouMatrix(a Float64Array[n*4], b Float64Array[m*4], classA Int32Array[n] | null, classB Int32Array[m] | null, out Float64Array[n*m]) */
Napi::Value IouMatrix(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ArrayArg<double> a = arrayArg<double>(info, 0, "boxes a");
  ArrayArg<double> b = arrayArg<double>(info, 1, "boxes b");
  ArrayArg<int32_t> ca = optionalArrayArg<int32_t>(info, 2, "classes a");
  ArrayArg<int32_t> cb = optionalArrayArg<int32_t>(info, 3, "classes b");
  ArrayArg<double> out = arrayArg<double>(info, 4, "output");
  if (a.length % 4 != 0 || b.length % 4 != 0) throwRange(env, "boxes must hold 4 values (x1, y1, x2, y2) per box");
  const size_t na = a.length / 4, nb = b.length / 4;
  if ((ca.data == nullptr) != (cb.data == nullptr)) throwType(env, "class ids must be given for both sides or neither");
  if (ca.data && (ca.length != na || cb.length != nb)) throwRange(env, "class ids must hold one value per box");
  if (out.length != na * nb) throwRange(env, "output must hold |a| x |b| values");
  iouMatrix(a.data, na, b.data, nb, ca.data, cb.data, out.data);
  return env.Undefined();
}

}  // namespace

void initIouMatrix(Napi::Env env, Napi::Object exports) { exports.Set("iouMatrix", Napi::Function::New<IouMatrix>(env, "iouMatrix")); }

}  // namespace lookout
