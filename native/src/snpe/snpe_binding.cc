// The addon's `snpe` export (built only against the vendor SDK): load(dlc, runtime, profile) resolves
// to a session whose execute(input) resolves to its outputs by name. Loading and running happen off
// the JavaScript thread (a DLC takes seconds to initialise; a frame tens of milliseconds on the DSP).
#include <napi.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "../binding/args.h"
#include "../binding/bindings.h"
#include "snpe_session.h"

namespace lookout {

namespace {

class SessionWrap : public Napi::ObjectWrap<SessionWrap> {
 public:
  static Napi::FunctionReference* constructor;

  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "SnpeSession", {InstanceMethod<&SessionWrap::Execute>("execute"), InstanceMethod<&SessionWrap::Release>("release")});
  }

  explicit SessionWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<SessionWrap>(info) {
    if (info.Length() != 1 || !info[0].IsExternal()) throwType(info.Env(), "SnpeSession is made by snpe.load");
    session_.reset(info[0].As<Napi::External<SnpeSession>>().Data());
    Napi::Env env = info.Env();
    Napi::Object self = info.This().As<Napi::Object>();
    Napi::Array dims = Napi::Array::New(env, session_->inputDims().size());
    for (size_t i = 0; i < session_->inputDims().size(); i++) dims.Set(i, Napi::Number::New(env, static_cast<double>(session_->inputDims()[i])));
    self.Set("inputDims", dims);
    self.Set("inputLayout", session_->inputLayout() == SnpeInputLayout::NhwcBgrU8 ? "nhwc_bgr_uint8" : "nchw_float32");
    Napi::Array outputs = Napi::Array::New(env, session_->outputs().size());
    for (size_t i = 0; i < session_->outputs().size(); i++) {
      const SnpeOutput& o = session_->outputs()[i];
      Napi::Object entry = Napi::Object::New(env);
      entry.Set("name", o.name);
      Napi::Array od = Napi::Array::New(env, o.dims.size());
      for (size_t j = 0; j < o.dims.size(); j++) od.Set(j, Napi::Number::New(env, static_cast<double>(o.dims[j])));
      entry.Set("dims", od);
      outputs.Set(i, entry);
    }
    self.Set("outputs", outputs);
  }

  SnpeSession* session() { return session_.get(); }
  bool busy = false;

 private:
  Napi::Value Execute(const Napi::CallbackInfo& info);

  Napi::Value Release(const Napi::CallbackInfo& info) {
    if (busy) throwType(info.Env(), "the SNPE session is running a frame; release it once that frame is done");
    session_.reset();
    return info.Env().Undefined();
  }

  std::unique_ptr<SnpeSession> session_;
};

Napi::FunctionReference* SessionWrap::constructor = nullptr;

class LoadWorker : public Napi::AsyncWorker {
 public:
  LoadWorker(Napi::Env env, std::vector<uint8_t> dlc, std::string runtime, std::string profile)
      : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), dlc_(std::move(dlc)), runtime_(std::move(runtime)), profile_(std::move(profile)) {}

  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override {
    try {
      session_ = SnpeSession::load(dlc_.data(), dlc_.size(), runtime_, profile_);
    } catch (const std::exception& e) {
      SetError(e.what());
    }
    dlc_.clear();
    dlc_.shrink_to_fit();
  }

  void OnOK() override {
    Napi::Env env = Env();
    deferred_.Resolve(SessionWrap::constructor->New({Napi::External<SnpeSession>::New(env, session_.release())}));
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  std::vector<uint8_t> dlc_;
  std::string runtime_;
  std::string profile_;
  std::unique_ptr<SnpeSession> session_;
};

/** Runs one frame whose input is already in the session's buffer (copied on the JavaScript thread). */
class ExecuteWorker : public Napi::AsyncWorker {
 public:
  ExecuteWorker(Napi::Env env, SessionWrap* wrap, Napi::Object self) : Napi::AsyncWorker(env), deferred_(Napi::Promise::Deferred::New(env)), wrap_(wrap) {
    self_.Reset(self, 1);  // the session stays alive while the worker runs it
  }

  Napi::Promise promise() { return deferred_.Promise(); }

  void Execute() override {
    try {
      wrap_->session()->run();
    } catch (const std::exception& e) {
      SetError(e.what());
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    wrap_->busy = false;
    Napi::Object result = Napi::Object::New(env);
    for (const SnpeOutput& o : wrap_->session()->outputs()) {
      Napi::Float32Array data = Napi::Float32Array::New(env, o.data.size());
      std::copy(o.data.begin(), o.data.end(), data.Data());
      result.Set(o.name, data);
    }
    deferred_.Resolve(result);
  }

  void OnError(const Napi::Error& e) override {
    wrap_->busy = false;
    deferred_.Reject(e.Value());
  }

 private:
  Napi::Promise::Deferred deferred_;
  SessionWrap* wrap_;
  Napi::ObjectReference self_;
};

/** execute(input Float32Array (NCHW) | Uint8Array (NHWC BGR888)) -> Promise<{ [output name]: Float32Array }> */
Napi::Value SessionWrap::Execute(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!session_) throwType(env, "the SNPE session was released");
  if (busy) throwType(env, "the SNPE session runs one frame at a time");
  if (info.Length() < 1 || !info[0].IsTypedArray()) throwType(env, "input must be a Float32Array or a Uint8Array");
  Napi::TypedArray input = info[0].As<Napi::TypedArray>();
  const bool u8 = session_->inputLayout() == SnpeInputLayout::NhwcBgrU8;
  if (input.TypedArrayType() != (u8 ? napi_uint8_array : napi_float32_array)) {
    throwType(env, u8 ? "this DLC takes BGR888 bytes (a Uint8Array)" : "this DLC takes float32 NCHW (a Float32Array)");
  }
  // A detached buffer has no data and length 0: refused here like any other wrong length.
  if (input.ByteLength() != session_->inputBytes()) throwRange(env, "input has " + std::to_string(input.ByteLength()) + " bytes, the DLC takes " + std::to_string(session_->inputBytes()));
  const uint8_t* bytes = static_cast<const uint8_t*>(input.ArrayBuffer().Data()) + input.ByteOffset();
  // Copied now, on this thread: the worker must not read the caller's ArrayBuffer, which JavaScript
  // may detach, transfer or resize while the frame runs. Not busy yet, so no worker reads the buffer.
  try {
    session_->setInput(bytes, input.ByteLength());
  } catch (const std::exception& e) {
    // Only Napi::Error becomes a JavaScript exception; anything else thrown here would end the process.
    throwRange(env, e.what());
  }
  busy = true;
  auto* worker = new ExecuteWorker(env, this, info.This().As<Napi::Object>());
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

/** load(dlc Uint8Array, runtime "dsp" | "gpu" | "cpu", performanceProfile) -> Promise<SnpeSession> */
Napi::Value Load(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  ArrayArg<uint8_t> dlc = arrayArg<uint8_t>(info, 0, "dlc");
  if (info.Length() < 3 || !info[1].IsString() || !info[2].IsString()) throwType(env, "runtime and performance profile must be strings");
  auto* worker = new LoadWorker(env, std::vector<uint8_t>(dlc.data, dlc.data + dlc.length), info[1].As<Napi::String>(), info[2].As<Napi::String>());
  Napi::Promise promise = worker->promise();
  worker->Queue();
  return promise;
}

}  // namespace

void initSnpe(Napi::Env env, Napi::Object exports) {
  Napi::Function ctor = SessionWrap::Define(env);
  SessionWrap::constructor = new Napi::FunctionReference(Napi::Persistent(ctor));
  env.AddCleanupHook([] {
    delete SessionWrap::constructor;
    SessionWrap::constructor = nullptr;
  });
  Napi::Object snpe = Napi::Object::New(env);
  snpe.Set("load", Napi::Function::New<Load>(env, "load"));
  snpe.Set("Session", ctor);
  exports.Set("snpe", snpe);
}

}  // namespace lookout
