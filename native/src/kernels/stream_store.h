// Writing a finished output row to the tensor without reading the tensor's lines into the cache
// first. The tensors (3.5 MB for a 544 input, 7 MB for four 384 crops) are bigger than the caches
// and are read next by the model runtime, not by us: an ordinary store first reads each line it
// writes (write-allocate), doubling the memory traffic, and on a 2-core x86 box that traffic alone
// was ~1 ms for the four crops. Non-temporal stores skip the read. The compiler never emits them on
// its own, hence the one intrinsic here (SSE, in every x86-64); elsewhere a plain copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__) && !defined(LOOKOUT_NO_STREAM_STORES)
#include <emmintrin.h>
#define LOOKOUT_STREAM_STORES 1
#endif

namespace lookout {

/** dst[0..n) = src[0..n); call streamFence() before the tensor is handed back. */
inline void streamRow(float* dst, const float* src, size_t n) {
#ifdef LOOKOUT_STREAM_STORES
  size_t i = 0;
  while (i < n && (reinterpret_cast<uintptr_t>(dst + i) & 15) != 0) {
    dst[i] = src[i];
    i++;
  }
  for (; i + 4 <= n; i += 4) _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
  for (; i < n; i++) dst[i] = src[i];
#else
  std::memcpy(dst, src, n * sizeof(float));
#endif
}

/** Orders the streamed stores before anything that follows (the tensor is read by another thread next). */
inline void streamFence() {
#ifdef LOOKOUT_STREAM_STORES
  _mm_sfence();
#endif
}

}  // namespace lookout
