//===- DecoderShape.h - A decoder's shape, read from its program -*- C++ -*-=//
//
// The cluster planner (loom/ClusterPlanner) predicts from a decoder's shape:
// hidden size, layers, heads, MLP width, vocabulary, experts. A Hugging Face
// config.json states it; an ONNX export only implies it. This reads it from
// the program after the graph pipeline has recognized attention, norms and
// gated activations, so that loom-plan and `plan=auto` can plan exported
// models.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_SHARDING_DECODERSHAPE_H
#define LOOM_DIALECT_LOOM_SHARDING_DECODERSHAPE_H

#include "loom/ClusterPlanner/ClusterPlanner.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

namespace loom {

/// The shape of the decoder-only transformer `module` runs: layers from its
/// `loom.attention` ops, heads and head size from their operands, hidden
/// size from its norms, MLP width and gating from `loom.swiglu` or the
/// activation between the MLP's products, vocabulary from the embedding
/// table and the logits, experts from `loom.moe` or the router's
/// `loom.topk`, tied embeddings by comparing the head's weights with the
/// table. An error says which part is missing (an encoder without logits,
/// a program whose attention was not recognized, layers of different
/// shapes).
llvm::Expected<plan::ModelShape> recognizeDecoder(mlir::ModuleOp module,
                                                  llvm::StringRef name);

/// What one call of the decoder program does, for the serving planner:
/// sequences (the batch), tokens each adds (its query length) and the keys
/// each attends (query plus cache), and the bytes of an activation.
struct DecoderCall {
  int64_t batch = 1;
  int64_t queryTokens = 1;
  int64_t keyTokens = 1;
  int64_t valueBytes = 4;
  /// Floating-point weight elements and their bytes in the program.
  double parameters = 0;
  double parameterBytes = 0;
  /// Bytes of the program's results (static shapes; dynamic ones count 0).
  double outputBytes = 0;
};

/// Reads the call's sizes from the first attention op (static shapes
/// needed) and counts the program's floating-point constants.
llvm::Expected<DecoderCall> describeDecoderCall(mlir::ModuleOp module);

} // namespace loom

#endif // LOOM_DIALECT_LOOM_SHARDING_DECODERSHAPE_H
