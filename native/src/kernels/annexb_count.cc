#include "annexb_count.h"

namespace lookout {

namespace {

struct NalInfo {
  int type;
  bool vcl;
  bool keyframe;
  bool beginsAccessUnit;
  bool firstSliceOfPicture;
};

NalInfo hevcNal(const uint8_t* nal, size_t len) {
  const int type = (nal[0] >> 1) & 0x3f;
  NalInfo i{};
  i.type = type;
  i.vcl = type < 32;
  i.keyframe = type >= 16 && type <= 23;  // IRAP: BLA, IDR, CRA
  // AUD, VPS/SPS/PPS, prefix SEI, reserved 41..44 and unspecified 48..55 (H.265 7.4.2.4.4).
  i.beginsAccessUnit = type == 35 || (type >= 32 && type <= 34) || type == 39 || (type >= 41 && type <= 44) || (type >= 48 && type <= 55);
  i.firstSliceOfPicture = len > 2 && (nal[2] & 0x80) != 0;
  return i;
}

NalInfo h264Nal(const uint8_t* nal, size_t len) {
  const int type = nal[0] & 0x1f;
  NalInfo i{};
  i.type = type;
  i.vcl = type >= 1 && type <= 5;
  i.keyframe = type == 5;  // IDR
  // AUD, SPS, PPS, SEI and 14..18 (H.264 7.4.1.2.3).
  i.beginsAccessUnit = type == 9 || type == 7 || type == 8 || type == 6 || (type >= 14 && type <= 18);
  i.firstSliceOfPicture = len > 1 && (nal[1] & 0x80) != 0;
  return i;
}

class Counter {
 public:
  explicit Counter(AnnexBCodec codec) : codec_(codec) {}

  /** A NAL as the splitter emits it: trailing zero bytes stripped, at least 2 bytes left. */
  void nal(const uint8_t* raw, size_t len) {
    while (len > 0 && raw[len - 1] == 0) len--;
    if (len < 2) return;
    const NalInfo i = codec_ == AnnexBCodec::Hevc ? hevcNal(raw, len) : h264Nal(raw, len);
    if (hasVcl_ && (i.beginsAccessUnit || (i.vcl && i.firstSliceOfPicture))) flush();
    if (i.vcl) {
      hasVcl_ = true;
      if (i.keyframe) keyframe_ = true;
    }
  }

  void flush() {
    if (hasVcl_) {
      count_.frames++;
      if (keyframe_) count_.keyframes++;
    }
    hasVcl_ = false;
    keyframe_ = false;
  }

  PictureCount count() const { return count_; }

 private:
  AnnexBCodec codec_;
  bool hasVcl_ = false;
  bool keyframe_ = false;
  PictureCount count_;
};

}  // namespace

PictureCount countPictures(const uint8_t* b, size_t end, AnnexBCodec codec, size_t maxNalBytes) {
  Counter counter(codec);
  bool open = false;
  size_t nalStart = 0;
  size_t i = 0;
  while (i + 2 < end) {
    // A start code is 00 00 01: a byte above 1 at i+2 rules out one beginning at i, i+1 or i+2.
    if (b[i + 2] > 1) {
      i += 3;
      continue;
    }
    if (b[i] == 0 && b[i + 1] == 0 && b[i + 2] == 1) {
      if (open) counter.nal(b + nalStart, i - nalStart);
      open = true;
      nalStart = i + 3;
      i += 3;
    } else {
      i++;
    }
  }
  if (open && end - nalStart > maxNalBytes) open = false;
  if (open && end > nalStart) counter.nal(b + nalStart, end - nalStart);
  counter.flush();
  return counter.count();
}

}  // namespace lookout
