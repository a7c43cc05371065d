// Attention whose batch, query and key lengths are known only at run time
// (grouped-query heads, 4 sharing 2): causal with an additive mask whose
// rows may broadcast at run time, a boolean mask over the keys, causal
// alone, a causal sliding window aligned to the first key, and windows on
// both sides. Compiled once, run at several sizes
// (make_attention_inputs.py).
func.func @main(%q: tensor<?x4x?x8xf32>, %k: tensor<?x2x?x8xf32>,
                %v: tensor<?x2x?x6xf32>, %mask: tensor<?x1x?x?xf32>,
                %keep: tensor<?x1x1x?xi1>)
    -> (tensor<?x4x?x6xf32>, tensor<?x4x?x6xf32>, tensor<?x4x?x6xf32>,
        tensor<?x4x?x6xf32>, tensor<?x4x?x6xf32>) {
  %a = loom.attention %q, %k, %v, %mask {is_causal = true} : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x6xf32>, tensor<?x1x?x?xf32>) -> tensor<?x4x?x6xf32>
  %b = loom.attention %q, %k, %v, %keep {scale = 0.25 : f32} : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x6xf32>, tensor<?x1x1x?xi1>) -> tensor<?x4x?x6xf32>
  %c = loom.attention %q, %k, %v {is_causal = true} : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x6xf32>) -> tensor<?x4x?x6xf32>
  %d = loom.attention %q, %k, %v {is_causal = true, left_window = 20 : i64, start_aligned = true} : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x6xf32>) -> tensor<?x4x?x6xf32>
  %e = loom.attention %q, %k, %v {left_window = 3 : i64, right_window = 140 : i64} : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x6xf32>) -> tensor<?x4x?x6xf32>
  return %a, %b, %c, %d, %e : tensor<?x4x?x6xf32>, tensor<?x4x?x6xf32>, tensor<?x4x?x6xf32>, tensor<?x4x?x6xf32>, tensor<?x4x?x6xf32>
}
