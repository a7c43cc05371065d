//===- ShardingInterfaceImpl.h - loom ops in the shard dialect --*- C++ -*-===//
//
// External models of the upstream `shard::ShardingInterface` for every loom
// op, so that `sharding-propagation` and `shard-partition` see loom programs.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_SHARDING_SHARDINGINTERFACEIMPL_H
#define LOOM_DIALECT_LOOM_SHARDING_SHARDINGINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace loom {

/// Attaches a ShardingInterface model to every loom op.
///
/// Each op describes itself as a loop nest over its operand and result
/// dimensions (the upstream model of linalg ops): elementwise and
/// broadcasting ops, casts, matmul (a split contraction becomes a partial
/// result and one `shard.all_reduce`), reductions, softmax and
/// normalizations (split only where they do not reduce), transpose, reshapes
/// whose split dimension maps through, gather, rotary embeddings and
/// attention (split over batch and heads, grouped-query aware). A split that
/// does not divide a dimension is never chosen. Ops without such a rule
/// (convolutions, pooling, top-k, scatter, ...) run replicated: their
/// operands are gathered first.
void registerShardingInterfaceExternalModels(mlir::DialectRegistry &registry);

} // namespace loom

#endif // LOOM_DIALECT_LOOM_SHARDING_SHARDINGINTERFACEIMPL_H
