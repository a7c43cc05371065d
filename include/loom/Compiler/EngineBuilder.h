//===- EngineBuilder.h - Compiled programs into engines ---------*- C++ -*-===//

#ifndef LOOM_COMPILER_ENGINEBUILDER_H
#define LOOM_COMPILER_ENGINEBUILDER_H

#include "loom/Engine/EngineWriter.h"
#include "loom/Target/Target.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace loom {

/// "loom-0.1 (LLVM 22.x.y)": what engines record as their compiler.
std::string compilerVersion();

/// Compiles `module` (loom IR, before the graph pipeline) with `target`
/// and describes the engine that runs it: one rank per device of its grid
/// (a partitioned program is specialized for each rank by the target),
/// each with the entry's signature (names from `onnx.name`), the target's
/// graph pipeline when `options.optimizeGraph`, and its code, and the
/// device the target compiled for. Errors are emitted on `module`.
mlir::LogicalResult buildEngine(mlir::ModuleOp module, const Target &target,
                                const CompileOptions &options,
                                EngineDescription &engine);

} // namespace loom

#endif // LOOM_COMPILER_ENGINEBUILDER_H
