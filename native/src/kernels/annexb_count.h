// Pictures and keyframes of a whole H.265 or H.264 Annex B stream, counted exactly as core's
// AnnexBSplitter + AccessUnitAssembler (H.265) and the encode plugin's H264AccessUnitAssembler group
// them (core/src/media/annexb-count.ts is the TypeScript twin), without copying a byte: the
// recorder's sidecars keep their keyframe_count meaning whichever side counted.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lookout {

enum class AnnexBCodec { Hevc = 0, H264 = 1 };

struct PictureCount {
  uint32_t frames = 0;
  uint32_t keyframes = 0;
};

/** A NAL still open at the end of the stream and longer than maxNalBytes is dropped, as the splitter drops it. */
PictureCount countPictures(const uint8_t* data, size_t length, AnnexBCodec codec, size_t maxNalBytes);

}  // namespace lookout
