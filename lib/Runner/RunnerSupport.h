//===- RunnerSupport.h - Helpers shared by loom-run's runners ---*- C++ -*-===//
//
// Reading, generating, printing and comparing tensors: the same for the
// reference executor, compiled code and engines.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_RUNNER_RUNNERSUPPORT_H
#define LOOM_LIB_RUNNER_RUNNERSUPPORT_H

#include "loom/Reference/Tensor.h"
#include "loom/Runner/Runner.h"

#include "mlir/IR/MLIRContext.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

struct loom_engine; // loom/runtime.h
struct loom_comm;   // loom/comm.h

namespace loom::runner {

/// A loaded engine, released with loom_engine_free.
using EnginePtr = std::unique_ptr<loom_engine, void (*)(loom_engine *)>;

/// Loads `options.model` through the runtime's C API with
/// `options.threads` threads; null after printing the runtime's error.
EnginePtr loadEngine(const RunOptions &options);

/// A communicator, released with loom_comm_free.
using CommPtr = std::unique_ptr<loom_comm, void (*)(loom_comm *)>;

/// With options.mpi, this process's MPI communicator (under mpirun: one
/// rank per process), checked to have `numRanks` processes; null without
/// options.mpi. False after printing an error (no MPI in this build, a
/// failed start, the wrong process count).
bool openMpiCommunicator(const RunOptions &options, int32_t numRanks,
                         CommPtr &comm);

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

/// Writes output `index` of `rank` to options.outputDirectory (when set) as
/// output_N.npy (rankR_output_N.npy for R > 0); false after an error.
bool writeOutput(const RunOptions &options, size_t rank, size_t index,
                 const reference::Tensor &t);

/// Compares rank 0's outputs (every rank's with options.compareAllRanks)
/// with the expected tensor files, by value or top-1, and prints the
/// verdict; nullopt after an error (count mismatch, unreadable file).
std::optional<bool> compareWithExpected(
    const RunOptions &options, mlir::MLIRContext *context,
    const std::vector<std::string> &expectedFiles,
    llvm::ArrayRef<llvm::SmallVector<reference::Tensor>> rankOutputs);

} // namespace loom::runner

#endif // LOOM_LIB_RUNNER_RUNNERSUPPORT_H
