// The tracker's IoU matrix (plugins/tracker/src/geometry/box.ts): row-major |a| x |b| intersection
// over union of [x1, y1, x2, y2] boxes, 0 where either box is empty; with class ids, pairs of
// different classes are 0 (a person's track never takes a car's box).
#pragma once

#include <cstddef>
#include <cstdint>

namespace lookout {

void iouMatrix(const double* a, size_t na, const double* b, size_t nb, const int32_t* classA, const int32_t* classB, double* out);

}  // namespace lookout
