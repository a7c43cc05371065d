//===- BFloat16Vectors.cpp - bf16 vector moves as integers ----------------===//
//
// See BFloat16Vectors.h. Each rewrite is exact: shuffles and masked memory
// operations move the same bits as i16, and widening a bf16 to f32 is
// appending 16 zero bits (NaNs keep their payload, as fpext does).
//
//===----------------------------------------------------------------------===//

#include "BFloat16Vectors.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"

using namespace llvm;

namespace loom::cpu {
namespace {

bool isBFloat16Vector(Type *type) {
  auto *vector = dyn_cast<VectorType>(type);
  return vector && vector->getElementType()->isBFloatTy();
}

/// The i16 vector of `type`'s shape (a bf16 vector).
VectorType *bitsOf(Type *type) {
  auto *vector = cast<VectorType>(type);
  return VectorType::get(Type::getInt16Ty(type->getContext()),
                         vector->getElementCount());
}

/// The replacement of `inst` computed on integers, or null when it needs
/// none.
Value *rewrite(Instruction &inst) {
  IRBuilder<> b(&inst);
  if (auto *shuffle = dyn_cast<ShuffleVectorInst>(&inst)) {
    if (!isBFloat16Vector(shuffle->getType()))
      return nullptr;
    Value *lhs = shuffle->getOperand(0), *rhs = shuffle->getOperand(1);
    Value *moved =
        b.CreateShuffleVector(b.CreateBitCast(lhs, bitsOf(lhs->getType())),
                              b.CreateBitCast(rhs, bitsOf(rhs->getType())),
                              shuffle->getShuffleMask());
    return b.CreateBitCast(moved, shuffle->getType());
  }
  if (auto *ext = dyn_cast<FPExtInst>(&inst)) {
    if (!isBFloat16Vector(ext->getSrcTy()))
      return nullptr;
    auto *source = cast<VectorType>(ext->getSrcTy());
    auto *words = VectorType::get(b.getInt32Ty(), source->getElementCount());
    Value *wide = b.CreateZExt(
        b.CreateBitCast(ext->getOperand(0), bitsOf(source)), words);
    Value *single = b.CreateBitCast(
        b.CreateShl(wide, ConstantInt::get(words, 16)),
        VectorType::get(b.getFloatTy(), source->getElementCount()));
    return single->getType() == ext->getType()
               ? single
               : b.CreateFPExt(single, ext->getType());
  }
  auto *call = dyn_cast<IntrinsicInst>(&inst);
  if (!call)
    return nullptr;
  if (call->getIntrinsicID() == Intrinsic::masked_load &&
      isBFloat16Vector(call->getType())) {
    // (pointer, mask, passthrough); the alignment is an attribute.
    Value *passthrough = call->getArgOperand(2);
    Value *loaded = b.CreateMaskedLoad(
        bitsOf(call->getType()), call->getArgOperand(0),
        call->getParamAlign(0).valueOrOne(), call->getArgOperand(1),
        b.CreateBitCast(passthrough, bitsOf(passthrough->getType())));
    return b.CreateBitCast(loaded, call->getType());
  }
  if (call->getIntrinsicID() == Intrinsic::masked_store &&
      isBFloat16Vector(call->getArgOperand(0)->getType())) {
    // (value, pointer, mask); the alignment is an attribute.
    Value *value = call->getArgOperand(0);
    return b.CreateMaskedStore(b.CreateBitCast(value, bitsOf(value->getType())),
                               call->getArgOperand(1),
                               call->getParamAlign(1).valueOrOne(),
                               call->getArgOperand(2));
  }
  return nullptr;
}

} // namespace

void moveBFloat16VectorsToIntegers(Module &module) {
  SmallVector<std::pair<Instruction *, Value *>> replaced;
  for (Function &fn : module)
    for (Instruction &inst : instructions(fn))
      if (Value *replacement = rewrite(inst))
        replaced.push_back({&inst, replacement});
  for (auto [inst, replacement] : replaced) {
    // A masked store has no result: the new store stands in for it.
    if (!inst->getType()->isVoidTy())
      inst->replaceAllUsesWith(replacement);
    inst->eraseFromParent();
  }
}

} // namespace loom::cpu
