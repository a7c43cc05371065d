// Attention masked by position alone -- a causal sliding window aligned to
// the first key, and windows on both sides -- on queries and keys whose
// sequence positions context parallelism splits
// (partition-attention-windows.test).
func.func @main(%x: tensor<1x16x32xf32>, %y: tensor<1x16x16xf32>) -> (tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>) {
  %qs = loom.constant dense<[1, 16, 4, 8]> : tensor<4xi64>
  %ks = loom.constant dense<[1, 16, 2, 8]> : tensor<4xi64>
  %q0 = loom.reshape %x, %qs : (tensor<1x16x32xf32>, tensor<4xi64>) -> tensor<1x16x4x8xf32>
  %k0 = loom.reshape %y, %ks : (tensor<1x16x16xf32>, tensor<4xi64>) -> tensor<1x16x2x8xf32>
  %q = loom.transpose %q0 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x4x8xf32> -> tensor<1x4x16x8xf32>
  %k = loom.transpose %k0 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x16x2x8xf32> -> tensor<1x2x16x8xf32>
  %a = loom.attention %q, %k, %k {is_causal = true, left_window = 3 : i64, start_aligned = true} : (tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x4x16x8xf32>
  %b = loom.attention %q, %k, %k {left_window = 2 : i64, right_window = 5 : i64} : (tensor<1x4x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x4x16x8xf32>
  return %a, %b : tensor<1x4x16x8xf32>, tensor<1x4x16x8xf32>
}
