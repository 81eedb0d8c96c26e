#include "snpe_session.h"

#include <cstring>
#include <stdexcept>

#include "DlContainer/DlContainer.h"
#include "DlSystem/DlEnums.h"
#include "DlSystem/DlError.h"
#include "DlSystem/IBufferAttributes.h"
#include "DlSystem/IUserBuffer.h"
#include "DlSystem/RuntimeList.h"
#include "DlSystem/StringList.h"
#include "DlSystem/TensorShape.h"
#include "DlSystem/UserBufferMap.h"
#include "SNPE/SNPE.h"
#include "SNPE/SNPEBuilder.h"
#include "SNPE/SNPEUtil.h"

namespace lookout {

namespace {

[[noreturn]] void fail(const std::string& what) {
  const char* vendor = Snpe_ErrorCode_GetLastErrorString();
  throw std::runtime_error(what + (vendor && *vendor ? std::string(": ") + vendor : std::string()));
}

Snpe_Runtime_t runtimeOf(const std::string& name) {
  if (name == "dsp") return SNPE_RUNTIME_DSP;
  if (name == "gpu") return SNPE_RUNTIME_GPU;
  if (name == "cpu") return SNPE_RUNTIME_CPU;
  throw std::runtime_error("unknown SNPE runtime " + name + " (dsp, gpu or cpu)");
}

/** The package's performance_profile (spec 02, config.json) as the SDK's enum. */
Snpe_PerformanceProfile_t profileOf(const std::string& name) {
  if (name == "high_performance") return SNPE_PERFORMANCE_PROFILE_HIGH_PERFORMANCE;
  if (name == "sustained_high_performance") return SNPE_PERFORMANCE_PROFILE_SUSTAINED_HIGH_PERFORMANCE;
  if (name == "burst") return SNPE_PERFORMANCE_PROFILE_BURST;
  if (name == "balanced" || name == "default") return SNPE_PERFORMANCE_PROFILE_BALANCED;
  if (name == "power_saver") return SNPE_PERFORMANCE_PROFILE_POWER_SAVER;
  if (name == "low_balanced") return SNPE_PERFORMANCE_PROFILE_LOW_BALANCED;
  throw std::runtime_error("unknown SNPE performance profile " + name);
}

/** A shape handle's dimensions; the handle is deleted. */
std::vector<size_t> dimsOf(Snpe_TensorShape_Handle_t shape) {
  if (!shape) fail("the runtime gave no tensor shape");
  std::vector<size_t> dims(Snpe_TensorShape_Rank(shape));
  for (size_t i = 0; i < dims.size(); i++) dims[i] = Snpe_TensorShape_At(shape, i);
  Snpe_TensorShape_Delete(shape);
  return dims;
}

std::vector<std::string> namesOf(Snpe_StringList_Handle_t list) {
  if (!list) fail("the runtime gave no tensor names");
  std::vector<std::string> names;
  for (size_t i = 0; i < Snpe_StringList_Size(list); i++) names.emplace_back(Snpe_StringList_At(list, i));
  Snpe_StringList_Delete(list);
  return names;
}

size_t elementsOf(const std::vector<size_t>& dims) {
  size_t n = 1;
  for (size_t d : dims) n *= d;
  return n;
}

}  // namespace

std::unique_ptr<SnpeSession> SnpeSession::load(const uint8_t* dlc, size_t size, const std::string& runtime, const std::string& profile) {
  std::unique_ptr<SnpeSession> s(new SnpeSession());
  s->container_ = Snpe_DlContainer_OpenBuffer(dlc, size);
  if (!s->container_) fail("the DLC does not open");

  Snpe_SNPEBuilder_Handle_t builder = Snpe_SNPEBuilder_Create(s->container_);
  Snpe_RuntimeList_Handle_t runtimes = Snpe_RuntimeList_Create();
  Snpe_RuntimeList_Add(runtimes, runtimeOf(runtime));
  Snpe_SNPEBuilder_SetRuntimeProcessorOrder(builder, runtimes);
  Snpe_SNPEBuilder_SetPerformanceProfile(builder, profileOf(profile));
  Snpe_SNPEBuilder_SetUseUserSuppliedBuffers(builder, 1);
  s->snpe_ = Snpe_SNPEBuilder_Build(builder);
  Snpe_RuntimeList_Delete(runtimes);
  Snpe_SNPEBuilder_Delete(builder);
  if (!s->snpe_) fail("the " + runtime + " runtime cannot build the network");

  const std::vector<std::string> inputs = namesOf(Snpe_SNPE_GetInputTensorNames(s->snpe_));
  if (inputs.size() != 1) throw std::runtime_error("the DLC has " + std::to_string(inputs.size()) + " inputs; an RF-DETR graph has one");
  s->inputName_ = inputs[0];
  s->inputDims_ = dimsOf(Snpe_SNPE_GetInputDimensions(s->snpe_, s->inputName_.c_str()));
  const std::vector<size_t>& d = s->inputDims_;
  // [1, H, W, 3]: the production bake's BGR888 substream as it is; [1, 3, H, W]: normalized floats.
  if (d.size() == 4 && d[3] == 3 && d[1] != 3) s->layout_ = SnpeInputLayout::NhwcBgrU8;
  else if (d.size() == 4 && d[1] == 3) s->layout_ = SnpeInputLayout::NchwFloat32;
  else throw std::runtime_error("the DLC input is neither [1, 3, H, W] nor [1, H, W, 3]");

  s->inputMap_ = Snpe_UserBufferMap_Create();
  s->outputMap_ = Snpe_UserBufferMap_Create();
  const bool u8 = s->layout_ == SnpeInputLayout::NhwcBgrU8;
  const size_t element = u8 ? 1 : sizeof(float);
  s->input_.assign(elementsOf(d) * element, 0);
  // Strides in bytes, fastest varying dimension last.
  auto bind = [&s](void* memory, size_t bytes, const std::vector<size_t>& dims, size_t elementBytes, bool unsigned8, void* map, const std::string& name) {
    std::vector<size_t> strides(dims.size());
    size_t stride = elementBytes;
    for (size_t i = dims.size(); i-- > 0;) {
      strides[i] = stride;
      stride *= dims[i];
    }
    Snpe_TensorShape_Handle_t stridesHandle = Snpe_TensorShape_CreateDimsSize(strides.data(), strides.size());
    Snpe_UserBufferEncoding_Handle_t encoding = unsigned8 ? Snpe_UserBufferEncodingUnsigned8Bit_Create() : Snpe_UserBufferEncodingFloat_Create();
    Snpe_IUserBuffer_Handle_t buffer = Snpe_Util_CreateUserBuffer(memory, bytes, stridesHandle, encoding);
    Snpe_TensorShape_Delete(stridesHandle);
    if (unsigned8) Snpe_UserBufferEncodingUnsigned8Bit_Delete(encoding);
    else Snpe_UserBufferEncodingFloat_Delete(encoding);
    if (!buffer) fail("cannot bind a buffer to " + name);
    s->buffers_.push_back(buffer);
    Snpe_UserBufferMap_Add(map, name.c_str(), buffer);
  };
  bind(s->input_.data(), s->input_.size(), d, element, u8, s->inputMap_, s->inputName_);

  for (const std::string& name : namesOf(Snpe_SNPE_GetOutputTensorNames(s->snpe_))) {
    Snpe_IBufferAttributes_Handle_t attrs = Snpe_SNPE_GetInputOutputBufferAttributes(s->snpe_, name.c_str());
    if (!attrs) fail("no buffer attributes for output " + name);
    SnpeOutput out{name, dimsOf(Snpe_IBufferAttributes_GetDims(attrs)), {}};
    Snpe_IBufferAttributes_Delete(attrs);
    out.data.assign(elementsOf(out.dims), 0.0f);
    s->outputs_.push_back(std::move(out));
  }
  // Bound after the vector stops growing: the buffers keep pointers into each output's data.
  for (SnpeOutput& out : s->outputs_) bind(out.data.data(), out.data.size() * sizeof(float), out.dims, sizeof(float), false, s->outputMap_, out.name);
  return s;
}

void SnpeSession::setInput(const uint8_t* input, size_t bytes) {
  if (bytes != input_.size()) throw std::runtime_error("input has " + std::to_string(bytes) + " bytes, the DLC takes " + std::to_string(input_.size()));
  std::memcpy(input_.data(), input, bytes);
}

void SnpeSession::run() {
  if (Snpe_SNPE_ExecuteUserBuffers(snpe_, inputMap_, outputMap_) != SNPE_SUCCESS) fail("execution failed");
}

SnpeSession::~SnpeSession() {
  if (inputMap_) Snpe_UserBufferMap_Delete(inputMap_);
  if (outputMap_) Snpe_UserBufferMap_Delete(outputMap_);
  for (void* b : buffers_) Snpe_IUserBuffer_Delete(b);
  if (snpe_) Snpe_SNPE_Delete(snpe_);
  if (container_) Snpe_DlContainer_Delete(container_);
}

}  // namespace lookout
