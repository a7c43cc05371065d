//===- ConvWindow.h - Window attributes of convolutions and pools -*- C++
//-*-===//
//
// Reading the kernel, strides, dilations and pads of ONNX convolution and
// pooling nodes, with `auto_pad` resolved to explicit pads. Shared by the NN
// builders and the quantized convolutions.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_IMPORTER_ONNX_CONVWINDOW_H
#define LOOM_LIB_IMPORTER_ONNX_CONVWINDOW_H

#include "NodeBinder.h"

namespace loom::onnx_import {

/// The resolved window of a convolution or pooling node.
struct Window {
  llvm::SmallVector<int64_t> kernel, strides, pads, dilations;
};

/// Reads the ints attribute `name` with exactly `count` values, each at
/// least `minValue`; `fallback` repeated when the attribute is absent.
std::optional<llvm::SmallVector<int64_t>>
countedInts(NodeBinder &b, llvm::StringRef name, size_t count, int64_t fallback,
            int64_t minValue);

/// Checks that `in` is `[N, C, D1..Dk]` with k >= 1 and returns k.
std::optional<size_t> spatialRank(NodeBinder &b, mlir::RankedTensorType in);

/// Reads `kernel_shape` (required for pooling).
mlir::LogicalResult readPoolKernel(NodeBinder &b, size_t spatial, Window &w);

/// The kernel of a convolution: the weight's spatial sizes, checked against
/// `kernel_shape` when both are known.
mlir::LogicalResult readConvKernel(NodeBinder &b, mlir::RankedTensorType weight,
                                   size_t spatial, Window &w);

/// Reads strides and dilations (default 1).
mlir::LogicalResult readStridesDilations(NodeBinder &b, size_t spatial,
                                         Window &w, bool hasDilations = true);

/// Reads `auto_pad`; an error for anything but the four ONNX values.
std::optional<std::string> readAutoPad(NodeBinder &b);

/// Resolves the pads of a forward window (convolution, pooling) over `in`:
/// explicit `pads`, or `auto_pad` computed for static spatial sizes.
mlir::LogicalResult resolveForwardPads(NodeBinder &b, mlir::RankedTensorType in,
                                       Window &w);

/// The whole window of a forward convolution of `in` by `weight`.
mlir::LogicalResult readConvWindow(NodeBinder &b, mlir::RankedTensorType in,
                                   mlir::RankedTensorType weight, Window &w);

} // namespace loom::onnx_import

#endif // LOOM_LIB_IMPORTER_ONNX_CONVWINDOW_H
