//===- InitAllDialects.cpp - Dialects Loom's tools load -------------------===//

#include "loom/InitAllDialects.h"

#include "loom/Dialect/Loom/IR/LoomDialect.h"
#include "loom/Dialect/Loom/Sharding/ShardingInterfaceImpl.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/RuntimeOpVerification.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/RuntimeOpVerification.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/RuntimeOpVerification.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

void loom::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<loom::LoomDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::tensor::TensorDialect, mlir::linalg::LinalgDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::memref::MemRefDialect, mlir::scf::SCFDialect,
                  mlir::shard::ShardDialect, mlir::vector::VectorDialect,
                  mlir::cf::ControlFlowDialect>();
  loom::registerShardingInterfaceExternalModels(registry);
  // `loomc --runtime-checks`: bounds and shape checks (cf.assert) on every
  // memref access, subview and linalg op.
  mlir::memref::registerRuntimeVerifiableOpInterfaceExternalModels(registry);
  mlir::linalg::registerRuntimeVerifiableOpInterfaceExternalModels(registry);
  mlir::tensor::registerRuntimeVerifiableOpInterfaceExternalModels(registry);
  // The CPU pipeline inlines the helpers that buffer deallocation creates.
  mlir::func::registerInlinerExtension(registry);
}
