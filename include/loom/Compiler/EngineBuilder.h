//===- EngineBuilder.h - Compiled programs into engines ---------*- C++ -*-===//

#ifndef LOOM_COMPILER_ENGINEBUILDER_H
#define LOOM_COMPILER_ENGINEBUILDER_H

#include "loom/Engine/EngineWriter.h"
#include "loom/Target/CPU/CPUTarget.h"

#include "mlir/IR/BuiltinOps.h"

#include <string>

namespace loom {

/// "loom-0.1 (LLVM 22.x.y)": what engines record as their compiler.
std::string compilerVersion();

/// Compiles `module` for this CPU and describes the engine that runs it:
/// one rank per device of its grid (a partitioned program is specialized
/// for each rank, its collectives calling the runtime), each with the
/// entry's signature (names from `onnx.name`) and its code as a shared
/// object, and this host's architecture and CPU features. Errors are
/// emitted on `module`.
mlir::LogicalResult buildEngine(mlir::ModuleOp module,
                                const cpu::CompileOptions &options,
                                EngineDescription &engine);

} // namespace loom

#endif // LOOM_COMPILER_ENGINEBUILDER_H
