// One DLC on the chip through the vendor SNPE C API (SNPE 2.x: SNPE/SNPE.h, SNPE/SNPEBuilder.h,
// DlContainer/DlContainer.h): load from bytes, bind the input and every output to user buffers the
// session owns, run on the runtime and performance profile the package names. Compiled only when
// SNPE_ROOT names the SDK (binding.gyp); the detector's snpe back-end refuses with a clear message
// elsewhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lookout {

/** How the DLC takes its one input: float32 NCHW (the compiled packages), or uint8 BGR888 NHWC (the production bake). */
enum class SnpeInputLayout { NchwFloat32, NhwcBgrU8 };

struct SnpeOutput {
  std::string name;
  std::vector<size_t> dims;
  std::vector<float> data;
};

class SnpeSession {
 public:
  /** runtime: "dsp", "gpu" or "cpu"; profile: the package's performance_profile. Throws std::runtime_error naming the vendor's error. */
  static std::unique_ptr<SnpeSession> load(const uint8_t* dlc, size_t size, const std::string& runtime, const std::string& profile);
  ~SnpeSession();
  SnpeSession(const SnpeSession&) = delete;
  SnpeSession& operator=(const SnpeSession&) = delete;

  const std::vector<size_t>& inputDims() const { return inputDims_; }
  SnpeInputLayout inputLayout() const { return layout_; }
  /** Bytes the input takes (elements * 4 for float32, elements for uint8). */
  size_t inputBytes() const { return input_.size(); }
  /**
   * Copies `input` (inputBytes() long) into the session's own input buffer. Called on the JavaScript
   * thread, before the frame is queued: the worker then reads memory the session owns, never the
   * caller's ArrayBuffer (which JavaScript may detach or transfer while the frame runs).
   */
  void setInput(const uint8_t* input, size_t bytes);
  /** Runs the network on the input setInput copied, and leaves the results in outputs(). Throws on failure. */
  void run();
  const std::vector<SnpeOutput>& outputs() const { return outputs_; }

 private:
  SnpeSession() = default;
  void* container_ = nullptr;  // Snpe_DlContainer_Handle_t
  void* snpe_ = nullptr;       // Snpe_SNPE_Handle_t
  void* inputMap_ = nullptr;   // Snpe_UserBufferMap_Handle_t
  void* outputMap_ = nullptr;  // Snpe_UserBufferMap_Handle_t
  std::vector<void*> buffers_;  // Snpe_IUserBuffer_Handle_t, each bound to memory below
  std::string inputName_;
  std::vector<size_t> inputDims_;
  SnpeInputLayout layout_ = SnpeInputLayout::NchwFloat32;
  std::vector<uint8_t> input_;
  std::vector<SnpeOutput> outputs_;
};

}  // namespace lookout
