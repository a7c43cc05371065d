//===- Interpreter.cpp - The reference executor ---------------------------===//

#include "loom/Reference/Interpreter.h"

#include "loom/Reference/Collectives.h"

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"

#include <thread>

using namespace mlir;

namespace loom::reference {

void KernelRegistry::add(llvm::StringRef opName, Kernel kernel) {
  kernels[opName] = std::move(kernel);
}

const Kernel *KernelRegistry::lookup(llvm::StringRef opName) const {
  auto it = kernels.find(opName);
  return it == kernels.end() ? nullptr : &it->second;
}

static LogicalResult runFusion(Operation *op, ArrayRef<const Tensor *> operands,
                               SmallVectorImpl<Tensor> &results);
static LogicalResult runPipelineStage(Operation *op,
                                      ArrayRef<const Tensor *> operands,
                                      SmallVectorImpl<Tensor> &results);
static LogicalResult runIf(Operation *op, ArrayRef<const Tensor *> operands,
                           SmallVectorImpl<Tensor> &results);
static LogicalResult runLoop(Operation *op, ArrayRef<const Tensor *> operands,
                             SmallVectorImpl<Tensor> &results);

const KernelRegistry &KernelRegistry::get() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    registerElementwiseKernels(r);
    registerNNKernels(r);
    registerQuantKernels(r);
    registerReductionKernels(r);
    registerShapeKernels(r);
    registerShardKernels(r);
    registerUpstreamKernels(r);
    r.add("loom.fusion", runFusion);
    r.add("loom.pipeline_stage", runPipelineStage);
    r.add("loom.if", runIf);
    r.add("loom.loop", runLoop);
    return r;
  }();
  return registry;
}

FailureOr<Tensor> tensorFromAttr(ElementsAttr attr, Location loc) {
  auto type = cast<ShapedType>(attr.getType());
  std::optional<ElementKind> kind = getElementKind(type.getElementType());
  if (!kind || !type.hasStaticShape())
    return emitError(loc) << "unsupported constant of type " << type;
  Tensor t(*kind, type.getShape());
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    // Resource blobs hold little-endian row-major elements.
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return emitError(loc) << "constant resource has no data";
    std::optional<Tensor> fromBlob =
        tensorFromBytes(*kind, type.getShape(), blob->getData());
    if (!fromBlob)
      return emitError(loc)
             << "constant resource holds " << blob->getData().size()
             << " bytes, which does not match " << type;
    return std::move(*fromBlob);
  }
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return emitError(loc) << "unsupported constant attribute";
  if (t.isFloat()) {
    int64_t i = 0;
    for (APFloat v : dense.getValues<APFloat>()) {
      bool lost;
      v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
                &lost);
      t.setDouble(i++, v.convertToDouble());
    }
  } else {
    int64_t i = 0;
    bool isUnsigned = isUnsignedKind(*kind) || *kind == ElementKind::I1;
    for (const APInt &v : dense.getValues<APInt>())
      t.setInt(i++, isUnsigned ? static_cast<int64_t>(v.getZExtValue())
                               : v.getSExtValue());
  }
  return t;
}

DenseElementsAttr attrFromTensor(const Tensor &tensor, Type elementType) {
  std::optional<ElementKind> kind = getElementKind(elementType);
  if (!kind || *kind != tensor.kind())
    return {};
  auto type = RankedTensorType::get(tensor.shape(), elementType);
  int64_t n = tensor.numElements();
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    SmallVector<APFloat> values;
    values.reserve(n);
    for (int64_t i = 0; i < n; ++i) {
      // The tensor holds values already rounded to the element type, so
      // the conversion is exact.
      APFloat v(tensor.getDouble(i));
      bool lost;
      v.convert(floatType.getFloatSemantics(),
                llvm::APFloat::rmNearestTiesToEven, &lost);
      values.push_back(v);
    }
    return DenseElementsAttr::get(type, values);
  }
  unsigned width = getBitWidth(*kind);
  SmallVector<APInt> values;
  values.reserve(n);
  for (int64_t i = 0; i < n; ++i)
    values.push_back(APInt(width, static_cast<uint64_t>(tensor.getInt(i)),
                           /*isSigned=*/false, /*implicitTrunc=*/true));
  return DenseElementsAttr::get(type, values);
}

/// Checks a computed tensor against a static type.
static LogicalResult checkAgainstType(Operation *op, const Tensor &t, Type type,
                                      StringRef what) {
  // A sharding carries no data at run time.
  if (isa<shard::ShardingType>(type))
    return success();
  // Scalars (the `index` values of shard ops, mostly) are rank-0 tensors.
  if (type.isIndex() || type.isIntOrFloat()) {
    std::optional<ElementKind> kind =
        type.isIndex() ? ElementKind::I64 : getElementKind(type);
    if (!kind || *kind != t.kind() || t.rank() != 0)
      return op->emitError() << what << " is " << t.typeString()
                             << " at run time, which does not match " << type;
    return success();
  }
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return op->emitError() << what << " has unsupported type " << type;
  // Tensors of `index` (tensor.from_elements of shard op results) hold i64.
  std::optional<ElementKind> kind =
      ranked.getElementType().isIndex()
          ? ElementKind::I64
          : getElementKind(ranked.getElementType());
  bool shapeOk = ranked.getRank() == t.rank();
  for (int64_t i = 0; shapeOk && i < t.rank(); ++i)
    shapeOk = ranked.isDynamicDim(i) || ranked.getDimSize(i) == t.dim(i);
  if (!kind || *kind != t.kind() || !shapeOk)
    return op->emitError() << what << " is " << t.typeString()
                           << " at run time, which does not match " << type;
  return success();
}

/// Runs the ops of `block` in order, reading and extending `values` (which
/// must already hold the block's arguments), and returns the operands of
/// its terminator: the function's return or a fusion's yield. The function
/// body and loom.fusion share it, so a fused op runs exactly as it did
/// before kernel formation.
static FailureOr<SmallVector<Tensor>>
runBlock(Block &block, llvm::DenseMap<Value, Tensor> &values) {
  const KernelRegistry &registry = KernelRegistry::get();
  for (Operation &op : block) {
    if (isa<func::ReturnOp, loom::YieldOp>(op)) {
      SmallVector<Tensor> results;
      for (Value v : op.getOperands()) {
        auto it = values.find(v);
        if (it == values.end())
          return op.emitError() << "returns a value defined outside the block";
        results.push_back(it->second);
      }
      return results;
    }
    const Kernel *kernel = registry.lookup(op.getName().getStringRef());
    if (!kernel)
      return op.emitError() << "the reference executor has no kernel for '"
                            << op.getName() << "'";
    SmallVector<const Tensor *> operands;
    for (Value v : op.getOperands()) {
      auto it = values.find(v);
      if (it == values.end())
        return op.emitError() << "uses a value defined outside the function";
      operands.push_back(&it->second);
    }
    SmallVector<Tensor> results;
    if (failed((*kernel)(&op, operands, results)))
      return failure();
    if (results.size() != op.getNumResults())
      return op.emitError() << "kernel produced " << results.size()
                            << " results, expected " << op.getNumResults();
    for (auto [i, result] : llvm::enumerate(op.getResults())) {
      if (failed(checkAgainstType(&op, results[i], result.getType(),
                                  "result " + std::to_string(i))))
        return failure();
      values[result] = std::move(results[i]);
    }
  }
  return block.getParentOp()->emitError()
         << (isa<func::FuncOp>(block.getParentOp())
                 ? "function body has no return"
                 : "body has no terminator");
}

/// Runs the one block of `region` with `operands` as its arguments (the
/// region is isolated from above, so nothing else is visible), appending
/// what its loom.yield gives to `results`.
static LogicalResult runIsolatedRegion(Operation *op, Region &region,
                                       ArrayRef<const Tensor *> operands,
                                       SmallVectorImpl<Tensor> &results) {
  if (region.empty())
    return op->emitError() << "has no body to run";
  Block &body = region.front();
  if (body.getNumArguments() != operands.size())
    return op->emitError() << "has " << operands.size() << " operands for "
                           << body.getNumArguments() << " block arguments";
  llvm::DenseMap<Value, Tensor> values;
  for (auto [arg, operand] : llvm::zip(body.getArguments(), operands))
    values[arg] = *operand;
  FailureOr<SmallVector<Tensor>> yielded = runBlock(body, values);
  if (failed(yielded))
    return failure();
  results.append(std::make_move_iterator(yielded->begin()),
                 std::make_move_iterator(yielded->end()));
  return success();
}

/// loom.fusion: its region runs like a function body whose arguments are
/// the fusion's operands.
static LogicalResult runFusion(Operation *op, ArrayRef<const Tensor *> operands,
                               SmallVectorImpl<Tensor> &results) {
  if (op->getNumRegions() != 1)
    return op->emitError() << "has no body to run";
  return runIsolatedRegion(op, op->getRegion(0), operands, results);
}

/// loom.if: the branch the condition selects runs on the inputs (the
/// operands after the condition).
static LogicalResult runIf(Operation *op, ArrayRef<const Tensor *> operands,
                           SmallVectorImpl<Tensor> &results) {
  auto ifOp = cast<loom::IfOp>(op);
  const Tensor &condition = *operands.front();
  if (condition.numElements() != 1)
    return op->emitError() << "condition holds " << condition.numElements()
                           << " elements at run time, not one";
  Region &branch =
      condition.getInt(0) != 0 ? ifOp.getThenRegion() : ifOp.getElseRegion();
  return runIsolatedRegion(op, branch, operands.drop_front(), results);
}

/// loom.loop: the body runs while the iteration number is below the trip
/// count and the condition holds; the carried values pass from one
/// iteration to the next and the scan outputs are stacked.
static LogicalResult runLoop(Operation *op, ArrayRef<const Tensor *> operands,
                             SmallVectorImpl<Tensor> &results) {
  auto loop = cast<loom::LoopOp>(op);
  size_t numCarried = loop.getCarried().size();
  size_t numScans = loop.getNumScanOutputs();
  const Tensor &tripCount = *operands[0], &condition = *operands[1];
  if (tripCount.numElements() != 1 || condition.numElements() != 1)
    return op->emitError() << "trip count and condition must hold one "
                              "element each at run time";
  int64_t trips = tripCount.getInt(0);
  bool running = condition.getInt(0) != 0;
  SmallVector<Tensor> carried;
  for (const Tensor *value : operands.slice(2, numCarried))
    carried.push_back(*value);
  ArrayRef<const Tensor *> inputs = operands.drop_front(2 + numCarried);
  std::vector<std::vector<Tensor>> scans(numScans);
  Block &body = loop.getBody().front();
  for (int64_t iteration = 0; running && iteration < trips; ++iteration) {
    llvm::DenseMap<Value, Tensor> values;
    Tensor number(ElementKind::I64, {}), go(ElementKind::I1, {});
    number.setInt(0, iteration);
    go.setInt(0, 1);
    values[body.getArgument(0)] = std::move(number);
    values[body.getArgument(1)] = std::move(go);
    for (auto [i, value] : llvm::enumerate(carried))
      values[body.getArgument(2 + i)] = std::move(value);
    for (auto [i, input] : llvm::enumerate(inputs))
      values[body.getArgument(2 + numCarried + i)] = *input;
    FailureOr<SmallVector<Tensor>> yielded = runBlock(body, values);
    if (failed(yielded))
      return failure();
    if ((*yielded)[0].numElements() != 1)
      return op->emitError()
             << "body yields a condition of " << (*yielded)[0].numElements()
             << " elements at iteration " << iteration;
    running = (*yielded)[0].getInt(0) != 0;
    for (size_t i = 0; i < numCarried; ++i)
      carried[i] = std::move((*yielded)[1 + i]);
    for (size_t k = 0; k < numScans; ++k)
      scans[k].push_back(std::move((*yielded)[1 + numCarried + k]));
  }
  results.append(std::make_move_iterator(carried.begin()),
                 std::make_move_iterator(carried.end()));
  for (auto [k, values] : llvm::enumerate(scans)) {
    auto type = cast<RankedTensorType>(op->getResult(numCarried + k).getType());
    std::optional<ElementKind> kind = getElementKind(type.getElementType());
    if (!kind)
      return op->emitError() << "unsupported scan output type " << type;
    SmallVector<int64_t> shape{static_cast<int64_t>(values.size())};
    if (values.empty()) {
      // No iteration ran: the per-iteration shape comes from the type.
      if (llvm::any_of(type.getShape().drop_front(), ShapedType::isDynamic))
        return op->emitError()
               << "no iteration ran, and scan output " << k
               << " has no static per-iteration shape (" << type << ")";
      llvm::append_range(shape, type.getShape().drop_front());
      results.push_back(Tensor(*kind, shape));
      continue;
    }
    llvm::append_range(shape, values.front().shape());
    Tensor stacked(*kind, shape);
    int64_t each = values.front().numElements();
    for (auto [iteration, value] : llvm::enumerate(values)) {
      if (value.shape() != values.front().shape())
        return op->emitError()
               << "scan output " << k << " is " << value.typeString()
               << " at iteration " << iteration << " but "
               << values.front().typeString()
               << " at iteration 0; ONNX stacks values of one shape";
      for (int64_t e = 0; e < each; ++e) {
        int64_t at = static_cast<int64_t>(iteration) * each + e;
        if (stacked.isFloat())
          stacked.setDouble(at, value.getDouble(e));
        else
          stacked.setInt(at, value.getInt(e));
      }
    }
    results.push_back(std::move(stacked));
  }
  return success();
}

/// loom.pipeline_stage: the ranks of the stage run the region like a
/// fusion; every other rank skips it and gets zeros.
static LogicalResult runPipelineStage(Operation *op,
                                      ArrayRef<const Tensor *> operands,
                                      SmallVectorImpl<Tensor> &results) {
  auto stage = cast<loom::PipelineStageOp>(op);
  FailureOr<int64_t> coordinate =
      gridCoordinate(op, stage.getGridAttr(), stage.getGridAxisIndex());
  if (failed(coordinate))
    return failure();
  if (*coordinate == stage.getStageIndex())
    return runFusion(op, operands, results);
  for (Type type : op->getResultTypes()) {
    auto ranked = dyn_cast<RankedTensorType>(type);
    std::optional<ElementKind> kind =
        ranked ? getElementKind(ranked.getElementType()) : std::nullopt;
    if (!kind || !ranked.hasStaticShape())
      return op->emitError() << "unsupported result type " << type;
    results.push_back(Tensor(*kind, ranked.getShape()));
  }
  return success();
}

/// Runs one op's kernel on the calling thread's rank.
static FailureOr<SmallVector<Tensor>>
evaluateOpOnRank(Operation *op, ArrayRef<Tensor> operands) {
  const Kernel *kernel =
      KernelRegistry::get().lookup(op->getName().getStringRef());
  if (!kernel)
    return op->emitError() << "the reference executor has no kernel for '"
                           << op->getName() << "'";
  if (operands.size() != op->getNumOperands())
    return op->emitError() << "evaluated with " << operands.size()
                           << " values for " << op->getNumOperands()
                           << " operands";
  SmallVector<const Tensor *> pointers;
  for (const Tensor &t : operands)
    pointers.push_back(&t);
  SmallVector<Tensor> results;
  if (failed((*kernel)(op, pointers, results)))
    return failure();
  if (results.size() != op->getNumResults())
    return op->emitError() << "kernel produced " << results.size()
                           << " results, expected " << op->getNumResults();
  for (auto [i, result] : llvm::enumerate(op->getResults()))
    if (failed(checkAgainstType(op, results[i], result.getType(),
                                "result " + std::to_string(i))))
      return failure();
  return results;
}

/// Runs the function on the calling thread's rank.
static FailureOr<SmallVector<Tensor>> executeOnRank(func::FuncOp func,
                                                    ArrayRef<Tensor> inputs) {
  if (func.isExternal())
    return func.emitError() << "cannot execute a function without a body";
  Block &entry = func.getBody().front();
  if (inputs.size() != entry.getNumArguments())
    return func.emitError() << "expects " << entry.getNumArguments()
                            << " inputs, got " << inputs.size();
  llvm::DenseMap<Value, Tensor> values;
  for (auto [i, arg] : llvm::enumerate(entry.getArguments())) {
    if (failed(checkAgainstType(func, inputs[i], arg.getType(),
                                "input " + std::to_string(i))))
      return failure();
    values[arg] = inputs[i];
  }
  return runBlock(entry, values);
}

/// Reports messages that were sent but never received: the program is
/// wrong even though no rank waited for them.
static LogicalResult checkDelivered(func::FuncOp func,
                                    const Communicator &communicator) {
  std::vector<std::string> undelivered = communicator.getUndeliveredMessages();
  for (const std::string &message : undelivered)
    func.emitError() << message;
  return success(undelivered.empty());
}

FailureOr<SmallVector<Tensor>> evaluateOp(Operation *op,
                                          ArrayRef<Tensor> operands) {
  if (getCurrentRankContext())
    return evaluateOpOnRank(op, operands);
  Communicator communicator(1, RankOptions().timeout);
  RankContext context{&communicator, 0};
  RankContextScope scope(context);
  return evaluateOpOnRank(op, operands);
}

FailureOr<SmallVector<Tensor>> execute(func::FuncOp func,
                                       ArrayRef<Tensor> inputs) {
  if (getCurrentRankContext())
    return executeOnRank(func, inputs);
  // The only rank of a one-device grid.
  Communicator communicator(1, RankOptions().timeout);
  RankContext context{&communicator, 0};
  RankContextScope scope(context);
  FailureOr<SmallVector<Tensor>> results = executeOnRank(func, inputs);
  if (failed(results) || failed(checkDelivered(func, communicator)))
    return failure();
  return results;
}

FailureOr<SmallVector<SmallVector<Tensor>>>
executeRanks(func::FuncOp func, int64_t numRanks,
             ArrayRef<SmallVector<Tensor>> inputs, const RankOptions &options) {
  if (numRanks < 1)
    return func.emitError() << "needs at least one rank, got " << numRanks;
  if (static_cast<int64_t>(inputs.size()) != numRanks)
    return func.emitError() << "got inputs for " << inputs.size()
                            << " ranks, expected " << numRanks;
  if (options.timeout.count() <= 0)
    return func.emitError() << "the rank timeout must be positive";

  Communicator communicator(numRanks, options.timeout);
  // Each rank's diagnostics, captured on its thread (the engine calls
  // handlers on the emitting thread, under its lock) and re-emitted in a
  // readable order once every rank has stopped.
  std::vector<std::vector<Diagnostic>> diagnostics(numRanks);
  std::vector<std::optional<SmallVector<Tensor>>> results(numRanks);
  {
    ScopedDiagnosticHandler handler(
        func.getContext(), [&](Diagnostic &diag) -> LogicalResult {
          RankContext *context = getCurrentRankContext();
          if (!context || context->communicator != &communicator)
            return failure();
          diagnostics[context->rank].push_back(std::move(diag));
          return success();
        });
    std::vector<std::thread> threads;
    for (int64_t rank = 0; rank < numRanks; ++rank) {
      threads.emplace_back([&, rank] {
        RankContext context{&communicator, rank};
        RankContextScope scope(context);
        FailureOr<SmallVector<Tensor>> outputs =
            executeOnRank(func, inputs[rank]);
        if (succeeded(outputs)) {
          results[rank] = std::move(*outputs);
        } else {
          std::string reason = "rank " + std::to_string(rank) + " failed";
          if (!diagnostics[rank].empty())
            reason += ": " + diagnostics[rank].front().str();
          communicator.poison(rank, reason);
        }
        communicator.finish(rank);
      });
    }
    for (std::thread &thread : threads)
      thread.join();
  }

  // The rank that failed first, then the ranks it brought down (and any
  // warnings of a successful run).
  std::optional<int64_t> first = communicator.getFirstFailedRank();
  SmallVector<int64_t> order;
  if (first)
    order.push_back(*first);
  for (int64_t rank = 0; rank < numRanks; ++rank)
    if (rank != first)
      order.push_back(rank);
  for (int64_t rank : order) {
    for (Diagnostic &diag : diagnostics[rank]) {
      InFlightDiagnostic reemitted = func.getContext()->getDiagEngine().emit(
          diag.getLocation(), diag.getSeverity());
      reemitted << "rank " << rank << ": " << diag.str();
      for (Diagnostic &note : diag.getNotes())
        reemitted.attachNote(note.getLocation()) << note.str();
    }
  }
  if (first || failed(checkDelivered(func, communicator)))
    return failure();
  SmallVector<SmallVector<Tensor>> outputs;
  for (std::optional<SmallVector<Tensor>> &r : results)
    outputs.push_back(std::move(*r));
  return outputs;
}

} // namespace loom::reference
