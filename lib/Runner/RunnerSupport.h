//===- RunnerSupport.h - Helpers shared by loom-run's runners ---*- C++ -*-===//
//
// Reading, generating, printing and comparing tensors: the same for the
// reference executor, compiled code and engines.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNNER_RUNNERSUPPORT_H
#define LOOM_LIB_RUNNER_RUNNERSUPPORT_H

#include "loom/Reference/Tensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <random>
#include <string>
#include <vector>

namespace loom::runner {

/// Expands a single directory argument into its tensor files (those named
/// `prefix`N.pb, or the .npy files); false after printing an error.
bool expandFiles(const std::vector<std::string> &given, llvm::StringRef prefix,
                 std::vector<std::string> &files);

/// Seeded random values: floats in [-1, 1), integers in [0, 4), booleans.
reference::Tensor randomTensor(mlir::RankedTensorType type,
                               std::mt19937_64 &rng, int64_t dynamicDimSize);

/// Type, the first `count` values and the sum.
void printTensor(llvm::raw_ostream &os, const reference::Tensor &t, int count);

/// |got - expected| <= atol + rtol * |expected| element by element; prints
/// the worst element when they differ.
bool compareTensors(llvm::StringRef name, const reference::Tensor &got,
                    const reference::Tensor &expected, double rtol,
                    double atol);

/// The top-1 index along the last axis agrees in every row.
bool compareTop1(llvm::StringRef name, const reference::Tensor &got,
                 const reference::Tensor &expected);

/// ONNX test data stores bfloat16 (and sometimes float16) as uint16 bits.
void reinterpretHalfBits(reference::Tensor &t, reference::ElementKind wanted);

} // namespace loom::runner

#endif // LOOM_LIB_RUNNER_RUNNERSUPPORT_H
