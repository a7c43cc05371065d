//===- ExpertParallel.h - Expert parallelism for loom.moe -------*- C++ -*-===//
//
// Mixture-of-experts layers in dispatch/combine form: tokens routed to
// fixed-capacity slots of their experts, the experts run on their slots,
// and the results combined with the routing weights. On one rank this is
// how `loom.moe` is lowered; over an "ep" grid axis the slots travel to the
// ranks that own the experts and back with one `shard.all_to_all` each.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_SHARDING_EXPERTPARALLEL_H
#define LOOM_DIALECT_LOOM_SHARDING_EXPERTPARALLEL_H

#include "loom/Dialect/Loom/IR/LoomOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace loom {

/// Where the experts of a partitioned `loom.moe` live: `ranks` ranks along
/// `axes` of `grid` each hold `experts / ranks` consecutive experts, and the
/// ranks of that group hold different tokens.
struct ExpertPlacement {
  mlir::FlatSymbolRefAttr grid;
  llvm::SmallVector<mlir::shard::GridAxis> axes;
  int64_t ranks = 1;
};

/// Builds `moe` in dispatch/combine form on `input` and `scores` (this
/// rank's tokens) and `wIn`, `wOut` and the optional `wGate` (this rank's
/// experts). Without
/// `placement` every expert is local and no collective is built (the
/// lowering of `loom.moe`); with it, the dispatch buffer `[E, C, D]` is
/// exchanged with `shard.all_to_all` over the placement's axes before the
/// local experts run and exchanged back after. The capacity C is
/// `moe.getCapacity(local tokens)`. Fails with a diagnostic on dynamic
/// shapes.
mlir::FailureOr<mlir::Value>
buildMoEDispatchCombine(mlir::OpBuilder &builder, MoEOp moe, mlir::Value input,
                        mlir::Value scores, mlir::Value wIn, mlir::Value wOut,
                        mlir::Value wGate,
                        const ExpertPlacement *placement = nullptr);

/// Builds `moe` (without a capacity factor) in dense form: every expert on
/// every token, weighted by the routing weights scattered to the experts
/// (zero for the experts a token did not choose). On one rank this does
/// the same work as the dispatch/combine form without its gather and
/// scatter products.
mlir::FailureOr<mlir::Value> buildMoEDense(mlir::OpBuilder &builder, MoEOp moe,
                                           mlir::Value input,
                                           mlir::Value scores, mlir::Value wIn,
                                           mlir::Value wOut, mlir::Value wGate);

/// Annotates every `loom.moe` of `func` for expert parallelism over grid
/// axis `epAxis` of `grid` (degree `ep`): its expert weights split by
/// experts. Its tokens are split by the arguments' annotation (the "ep"
/// axis splits the tokens of the whole program, as data parallelism does).
/// A positive `capacityFactor` becomes the capacity factor of every
/// `loom.moe` that has none. Fails with a diagnostic when `ep` does not
/// divide the experts or the capacity factor is negative.
mlir::LogicalResult annotateExpertParallel(mlir::func::FuncOp func,
                                           mlir::FlatSymbolRefAttr grid,
                                           mlir::shard::GridAxis epAxis,
                                           int64_t ep,
                                           double capacityFactor = 0.0);

/// The loop nest `loom.moe` presents to the sharding framework: tokens,
/// model features, routing scores' experts, experts, hidden features.
/// input [tokens, model], scores [tokens, scoreExperts], w_in [experts,
/// model, hidden], w_out [experts, hidden, model], the optional w_gate
/// like w_in, result [tokens, model].
/// Only tokens and experts are ever split; one grid axis may split both
/// (expert parallelism).
enum MoELoop : int64_t {
  kMoETokens,
  kMoEModel,
  kMoEScoreExperts,
  kMoEExperts,
  kMoEHidden,
  kMoENumLoops
};

/// Chooses the split of `moe`'s tokens (from its result, input or scores)
/// and experts (from its expert weights) given what propagation knows.
mlir::FailureOr<mlir::shard::ShardingOption>
chooseMoESharding(MoEOp moe,
                  llvm::ArrayRef<mlir::shard::Sharding> operandShardings,
                  llvm::ArrayRef<mlir::shard::Sharding> resultShardings);

/// Partitions `moe`: with whole experts, the op on the local tokens; with
/// experts split, the dispatch/combine form with its two all-to-alls.
mlir::LogicalResult
partitionMoE(MoEOp moe, llvm::ArrayRef<mlir::Value> partitionedOperands,
             llvm::ArrayRef<mlir::shard::Sharding> operandShardings,
             llvm::ArrayRef<mlir::shard::Sharding> resultShardings,
             mlir::IRMapping &partitionMap,
             mlir::SymbolTableCollection &symbolTable,
             mlir::OpBuilder &builder);

} // namespace loom

#endif // LOOM_DIALECT_LOOM_SHARDING_EXPERTPARALLEL_H
