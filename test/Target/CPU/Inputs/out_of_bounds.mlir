// An element read at an index the caller gives: the smallest program whose
// compiled code can read outside its buffer (test/Target/CPU/runtime-checks.test).
func.func @main(%t: tensor<4xf32>, %i: tensor<i64>) -> tensor<1xf32> {
  %raw = tensor.extract %i[] : tensor<i64>
  %idx = arith.index_cast %raw : i64 to index
  %v = tensor.extract %t[%idx] : tensor<4xf32>
  %r = tensor.from_elements %v : tensor<1xf32>
  return %r : tensor<1xf32>
}
