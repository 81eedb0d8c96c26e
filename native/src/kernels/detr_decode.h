// RF-DETR output decoding, as plugins/detector/src/model/decode.ts does it: sigmoid over the [Q, C]
// logits, the k best (query, class) pairs (ties by flat index), the score threshold, boxes from
// normalized cxcywh to xyxy in frame pixels (clamped), and the class remap.
#pragma once

#include <cstdint>
#include <vector>

namespace lookout {

struct DetrDecodeInput {
  const float* boxes;   // Q * 4: cx, cy, w, h in 0..1
  const float* logits;  // Q * C
  int queries;
  int classes;
  int topK;
  double scoreThreshold;
  double frameWidth;
  double frameHeight;
  const int32_t* remap;  // model class -> production id (-1 drops); null keeps model ids
  int remapLength;
};

/** Reused between frames so that a frame allocates nothing once the buffers have grown. */
struct DetrDecodeScratch {
  std::vector<int32_t> index;
  std::vector<double> score;
  std::vector<int32_t> order;
};

/**
 * Writes up to topK detections as 6 doubles each (class, logit, x1, y1, x2, y2), best first, into
 * `out` (room for topK * 6) and returns how many. The logit, not the score, goes back: the caller
 * takes its sigmoid with the same exp as the TypeScript twin (std::exp and V8's Math.exp may differ
 * in the last bit), so the published confidences are the twin's to the bit.
 */
int decodeDetr(const DetrDecodeInput& in, DetrDecodeScratch& scratch, double* out);

}  // namespace lookout
