//===- KernelUtils.cpp - Helpers shared by the reference kernels ----------===//

#include "KernelUtils.h"

namespace loom::reference {

std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  llvm::SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

int64_t broadcastSourceIndex(llvm::ArrayRef<int64_t> outIndex,
                             llvm::ArrayRef<int64_t> shape) {
  size_t offset = outIndex.size() - shape.size();
  int64_t linear = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    linear = linear * shape[d] + (shape[d] == 1 ? 0 : outIndex[offset + d]);
  return linear;
}

void forEachIndex(
    llvm::ArrayRef<int64_t> shape,
    llvm::function_ref<void(int64_t, llvm::ArrayRef<int64_t>)> fn) {
  int64_t total = 1;
  for (int64_t d : shape)
    total *= d;
  llvm::SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t linear = 0; linear < total; ++linear) {
    fn(linear, index);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

int64_t linearIndex(llvm::ArrayRef<int64_t> index,
                    llvm::ArrayRef<int64_t> shape) {
  int64_t linear = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    linear = linear * shape[d] + index[d];
  return linear;
}

mlir::FailureOr<int64_t> getAxis(mlir::Operation *op, int64_t axis,
                                 int64_t rank) {
  int64_t a = normalizedAxis(axis, rank);
  if (a < 0 || a >= rank)
    return op->emitError() << "axis " << axis << " is out of range for rank "
                           << rank;
  return a;
}

llvm::SmallVector<int64_t> toInts(const Tensor &t) {
  llvm::SmallVector<int64_t> values;
  for (int64_t i = 0, n = t.numElements(); i < n; ++i)
    values.push_back(t.getInt(i));
  return values;
}

} // namespace loom::reference
