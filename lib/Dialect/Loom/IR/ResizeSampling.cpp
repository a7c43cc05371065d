//===- ResizeSampling.cpp - Where loom.resize reads its input ------------===//

#include "loom/Dialect/Loom/IR/ResizeSampling.h"

#include <algorithm>
#include <cmath>

using namespace llvm;

namespace loom {
namespace {

/// The source coordinate of output position `x` along an axis
/// (ONNX Resize-13/19 coordinate_transformation_mode). As in ONNX's
/// reference implementation, the "resized length" of align_corners,
/// pytorch_half_pixel and tf_crop_and_resize is `scale * input length`,
/// which is the output length whenever the scale came from sizes.
double sourceCoordinate(StringRef mode, double x, double scale, int64_t inLen,
                        int64_t outLen, double roiStart, double roiEnd) {
  double outWidth = scale * static_cast<double>(inLen);
  double inWidth = static_cast<double>(inLen);
  if (mode == "align_corners")
    return outWidth == 1 ? 0.0 : x * (inWidth - 1) / (outWidth - 1);
  if (mode == "asymmetric")
    return x / scale;
  if (mode == "tf_crop_and_resize") {
    double c = outWidth == 1
                   ? (roiEnd - roiStart) * (inWidth - 1) / 2
                   : x * (roiEnd - roiStart) * (inWidth - 1) / (outWidth - 1);
    return c + roiStart * (inWidth - 1);
  }
  if (mode == "pytorch_half_pixel")
    return outWidth == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (mode == "tf_half_pixel_for_nn")
    return (x + 0.5) / scale;
  if (mode == "half_pixel_symmetric") {
    double adjustment = static_cast<double>(outLen) / outWidth;
    double center = inWidth / 2;
    double offset = center * (1 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  // half_pixel
  return (x + 0.5) / scale - 0.5;
}

/// The samples of one output position along one axis, following the ONNX
/// reference: the ratio of the coordinate to its floor lies in (0, 1] (an
/// integral coordinate has ratio 1 on the left neighbour window), the
/// neighbour window reads the input edge-padded by ceil(n/2) and slides to
/// stay inside that padding, and exclude_outside drops (and renormalizes
/// away) neighbours outside the input.
ResizeSample resizeSample(StringRef mode, StringRef nearestMode, double coord,
                          int64_t inLen, double cubicA, bool excludeOutside) {
  ResizeSample s;
  double floorC = std::floor(coord);
  bool integral = coord == floorC;
  double ratio = integral ? 1.0 : coord - floorC;
  int64_t base = static_cast<int64_t>(floorC);
  SmallVector<double, 4> coeffs;
  int64_t first; // leftmost neighbour before sliding
  if (mode == "nearest") {
    bool right;
    if (integral)
      right = true;
    else if (nearestMode == "round_prefer_ceil")
      right = ratio >= 0.5;
    else if (nearestMode == "floor")
      right = false;
    else if (nearestMode == "ceil")
      right = true;
    else // round_prefer_floor
      right = ratio > 0.5;
    coeffs = {right ? 0.0 : 1.0, right ? 1.0 : 0.0};
    first = integral ? base - 1 : base;
  } else if (mode == "linear") {
    coeffs = {1 - ratio, ratio};
    first = integral ? base - 1 : base;
  } else { // cubic
    double a = cubicA, r = ratio, r1 = ratio + 1, q = 1 - ratio, q1 = 2 - ratio;
    coeffs = {((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a,
              ((a + 2) * r - (a + 3)) * r * r + 1,
              ((a + 2) * q - (a + 3)) * q * q + 1,
              ((a * q1 - 5 * a) * q1 + 8 * a) * q1 - 4 * a};
    first = integral ? base - 2 : base - 1;
  }
  int64_t n = coeffs.size();
  int64_t pad = (n + 1) / 2;
  // The window [first, first + n) slides to fit [-pad, inLen + pad).
  first = std::max(first, -pad);
  first = std::min(first, inLen + pad - n);
  if (excludeOutside) {
    double total = 0;
    for (int64_t i = 0; i < n; ++i) {
      int64_t idx = first + i;
      if (idx < 0 || idx >= inLen)
        coeffs[i] = 0;
      total += coeffs[i];
    }
    for (double &c : coeffs)
      c /= total;
  }
  for (int64_t i = 0; i < n; ++i) {
    s.index.push_back(std::clamp<int64_t>(first + i, 0, inLen - 1));
    s.weight.push_back(coeffs[i]);
  }
  return s;
}

} // namespace

SmallVector<ResizeSample> resizeAxisSamples(const ResizeSampling &sampling,
                                            float scaleF32, int64_t inLen,
                                            int64_t outLen, double roiStart,
                                            double roiEnd) {
  SmallVector<ResizeSample> samples;
  // An axis of scale 1 that keeps its length (and, cropping, its whole
  // extent) is copied, whatever the coordinate mode: ONNX's reference
  // does so, and it keeps tf_half_pixel_for_nn from shifting N and C.
  if (scaleF32 == 1.0f && outLen == inLen &&
      (!sampling.crop || (roiStart == 0.0 && roiEnd == 1.0))) {
    for (int64_t o = 0; o < outLen; ++o) {
      ResizeSample s;
      s.index.push_back(o);
      s.weight.push_back(1.0);
      samples.push_back(s);
    }
    return samples;
  }
  // Scales are f32; when one is the f32 rounding of out / in (always so
  // when the model gave 'sizes', which the importer turns into scales),
  // the exact ratio is used, as ONNX defines the scale for sizes.
  // Otherwise the f32 scale.
  double scale = static_cast<double>(scaleF32);
  double ratio = static_cast<double>(outLen) / static_cast<double>(inLen);
  if (outLen > 0 && static_cast<float>(ratio) == scaleF32)
    scale = ratio;
  bool excludeOutside = sampling.excludeOutside && sampling.mode != "nearest";
  for (int64_t o = 0; o < outLen; ++o) {
    double c = sourceCoordinate(sampling.coordinateMode, static_cast<double>(o),
                                scale, inLen, outLen, roiStart, roiEnd);
    if (sampling.crop && (c < 0 || c > static_cast<double>(inLen - 1))) {
      ResizeSample s;
      s.outside = true;
      samples.push_back(s);
      continue;
    }
    samples.push_back(resizeSample(sampling.mode, sampling.nearestMode, c,
                                   inLen, sampling.cubicA, excludeOutside));
  }
  return samples;
}

} // namespace loom
