#include "iou_matrix.h"

#include "js_math.h"

namespace lookout {

namespace {

double boxArea(const double* b) { return jsMax(0, b[2] - b[0]) * jsMax(0, b[3] - b[1]); }

double iou(const double* a, const double* b) {
  const double iw = jsMin(a[2], b[2]) - jsMax(a[0], b[0]);
  const double ih = jsMin(a[3], b[3]) - jsMax(a[1], b[1]);
  if (iw <= 0 || ih <= 0) return 0;
  const double inter = iw * ih;
  const double uni = boxArea(a) + boxArea(b) - inter;
  return uni > 0 ? inter / uni : 0;
}

}  // namespace

void iouMatrix(const double* a, size_t na, const double* b, size_t nb, const int32_t* classA, const int32_t* classB, double* out) {
  for (size_t i = 0; i < na; i++) {
    for (size_t j = 0; j < nb; j++) {
      const bool otherClass = classA && classB && classA[i] != classB[j];
      out[i * nb + j] = otherClass ? 0 : iou(a + 4 * i, b + 4 * j);
    }
  }
}

}  // namespace lookout
