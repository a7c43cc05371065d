//===- EngineBuilder.cpp - Compiled programs into engines -----------------===//
//
// The step between a target (code per rank) and the engine file, the same
// for every target: the entry's signature is read before lowering
// (afterwards it is a list of pointers), the partitioned program is
// specialized for each rank, the target's graph pipeline and code
// generator compile it, and the target records the device it compiled for,
// which the runtime checks.
//
//===----------------------------------------------------------------------===//

#include "loom/Compiler/EngineBuilder.h"

#include "loom/Compiler/Compiler.h"

#include "loom/Dialect/Loom/Sharding/EngineGrid.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/Config/llvm-config.h"

using namespace mlir;

namespace loom {
namespace {

/// The runtime's name of an element type ("f32", "ui8", "i1", ...), or ""
/// when the runtime has no such dtype.
std::string dtypeName(Type type) {
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  // The 8- and 4-bit floats: one byte per element, named as MLIR prints
  // them.
  if (isa<Float8E4M3FNType, Float8E4M3FNUZType, Float8E5M2Type,
          Float8E5M2FNUZType, Float4E2M1FNType, Float8E8M0FNUType>(type)) {
    std::string name;
    llvm::raw_string_ostream os(name);
    type.print(os);
    return name;
  }
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return "";
  unsigned width = integer.getWidth();
  if (width == 1)
    return "i1";
  if (width != 2 && width != 4 && width != 8 && width != 16 && width != 32 &&
      width != 64)
    return "";
  return (integer.isUnsigned() ? "ui" : "i") + std::to_string(width);
}

/// The engine's description of value `i` of `types`, named by its
/// `onnx.name` attribute when it has one.
FailureOr<EngineTensor> describe(func::FuncOp func, Type type,
                                 DictionaryAttr attrs, StringRef fallback) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  // Symbolic dimensions are written "?": the caller gives an input's at
  // execute time, the code computes an output's.
  if (!tensor)
    return func.emitError("engines need ranked tensors; ")
           << fallback << " is " << type;
  EngineTensor t;
  t.dtype = dtypeName(tensor.getElementType());
  if (t.dtype.empty())
    return func.emitError("the runtime has no element type ")
           << tensor.getElementType() << " (" << fallback << ")";
  t.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  StringAttr name =
      attrs ? dyn_cast_or_null<StringAttr>(attrs.get("onnx.name")) : nullptr;
  t.name = name ? name.getValue().str() : fallback.str();
  return t;
}

} // namespace

std::string compilerVersion() {
  return std::string("loom-0.1 (LLVM ") + LLVM_VERSION_STRING + ")";
}

LogicalResult buildEngine(ModuleOp module, const Target &target,
                          const CompileOptions &options,
                          EngineDescription &engine) {
  func::FuncOp entry = findEntry(module);
  if (!entry)
    return module.emitError("an engine needs @main or a single function");
  FailureOr<std::optional<int64_t>> gridSize = engineGridSize(module);
  if (failed(gridSize))
    return failure();
  int64_t numRanks = gridSize->value_or(1);
  EngineRank rank;
  FunctionType signature = entry.getFunctionType();
  for (auto [i, type] : llvm::enumerate(signature.getInputs())) {
    FailureOr<EngineTensor> t = describe(entry, type, entry.getArgAttrDict(i),
                                         "input_" + std::to_string(i));
    if (failed(t))
      return failure();
    if (auto axis =
            dyn_cast_or_null<IntegerAttr>(entry.getArgAttr(i, "loom.state")))
      t->stateAxis = axis.getInt();
    // loom.profile: {dim, min, opt, max} per symbolic dimension.
    if (auto profile = dyn_cast_or_null<DenseI64ArrayAttr>(
            entry.getArgAttr(i, "loom.profile")))
      for (int64_t at = 0; at + 3 < profile.size(); at += 4)
        t->profile.push_back(
            {profile[at], profile[at + 1], profile[at + 2], profile[at + 3]});
    rank.inputs.push_back(std::move(*t));
  }
  for (auto [i, type] : llvm::enumerate(signature.getResults())) {
    FailureOr<EngineTensor> t = describe(
        entry, type, entry.getResultAttrDict(i), "output_" + std::to_string(i));
    if (failed(t))
      return failure();
    rank.outputs.push_back(std::move(*t));
  }

  // One program per rank: the partitioned program specialized for it (a
  // program without a grid is its own rank 0).
  engine.ranks.clear();
  for (int64_t r = 0; r < numRanks; ++r) {
    OwningOpRef<ModuleOp> copy = module.clone();
    if (gridSize->has_value() && failed(target.specializeForRank(*copy, r)))
      return failure();
    if (failed(runGraphPipeline(target, *copy, options)))
      return failure();
    CompileOptions lowering = options;
    lowering.optimizeGraph = false;
    EngineRank compiled = rank;
    if (failed(target.compileRank(*copy, lowering, compiled, engine)))
      return failure();
    engine.ranks.push_back(std::move(compiled));
  }
  engine.compilerVersion = compilerVersion();
  target.describeDevice(engine);
  FailureOr<std::optional<SmallVector<int64_t>>> gridShape =
      engineGridShape(module);
  engine.grid = *gridShape ? **gridShape : SmallVector<int64_t>{1};
  return success();
}

} // namespace loom
