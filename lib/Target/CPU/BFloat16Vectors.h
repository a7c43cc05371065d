//===- BFloat16Vectors.h - bf16 vector moves as integers --------*- C++ -*-===//
//
// An LLVM IR rewrite the CPU target applies to every module it translates.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_LIB_TARGET_CPU_BFLOAT16VECTORS_H
#define LOOM_LIB_TARGET_CPU_BFLOAT16VECTORS_H

namespace llvm {
class Module;
} // namespace llvm

namespace loom::cpu {

/// Rewrites the operations on bf16 vectors that only move bits - shuffles,
/// masked loads and stores - onto i16 vectors, and widenings of bf16
/// vectors to f32 into integer shifts (a bf16 is the high half of its
/// f32). LLVM 22's X86 backend takes these apart element by element for
/// bf16 vectors wider than a register (a masked load of 64 bf16 and a
/// stride-2 shuffle: 94 instructions, against 6 for i16), which made bf16
/// window copies and depthwise convolutions 8x slower than f32 ones.
void moveBFloat16VectorsToIntegers(llvm::Module &module);

} // namespace loom::cpu

#endif // LOOM_LIB_TARGET_CPU_BFLOAT16VECTORS_H
