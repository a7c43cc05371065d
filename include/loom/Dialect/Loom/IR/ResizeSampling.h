//===- ResizeSampling.h - Where loom.resize reads its input -----*- C++ -*-===//
//
// The source positions and weights of each output position of a resized
// axis (ONNX Resize-13/19): the reference executor interpolates with them,
// and the lowering to linalg bakes them into constant tables, so both share
// one definition of the op's sampling.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_RESIZESAMPLING_H
#define LOOM_DIALECT_LOOM_IR_RESIZESAMPLING_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace loom {

/// One source position of a resized axis: input indices and their weights.
/// `outside` marks a tf_crop_and_resize coordinate outside the input, which
/// makes the whole element the extrapolation value.
struct ResizeSample {
  llvm::SmallVector<int64_t, 4> index;
  llvm::SmallVector<double, 4> weight;
  bool outside = false;
};

/// The attributes of loom.resize that decide the sampling.
struct ResizeSampling {
  llvm::StringRef mode; // nearest, linear, cubic
  llvm::StringRef coordinateMode;
  llvm::StringRef nearestMode;
  double cubicA = -0.75;
  bool excludeOutside = false; // ignored for nearest
  bool crop = false;           // coordinateMode == tf_crop_and_resize
};

/// The samples of every output position of an axis resized from `inLen`
/// to `outLen` by `scale` (an f32 scale that rounds out / in stands for
/// that exact ratio), with the roi bounds of the axis for cropping.
llvm::SmallVector<ResizeSample>
resizeAxisSamples(const ResizeSampling &sampling, float scale, int64_t inLen,
                  int64_t outLen, double roiStart, double roiEnd);

} // namespace loom

#endif // LOOM_DIALECT_LOOM_IR_RESIZESAMPLING_H
