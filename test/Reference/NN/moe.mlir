// loom.moe on values checked by hand, by the reference kernel and by the
// lowering (dispatch/combine form, compiled for this CPU).
// RUN: loom-run %s | FileCheck %s
// RUN: loom-run %s --backend=cpu | FileCheck %s
//
// Expert e (no activation) is x -> (e + 1) * x. Scores:
//   token 0 [0.5, 0.3, 0.2]: experts 0, 1
//   token 1 [0.1, 0.1, 0.8]: experts 2, 0 (a tie keeps the lower expert)
//   token 2 [0.2, 0.6, 0.2]: experts 1, 0
// Normalized: y0 = (0.5*1 + 0.3*2)/0.8 x0 = 1.375 x0,
//   y1 = (0.8*3 + 0.1*1)/0.9 x1 = 2.7778 x1, y2 = (0.6*2 + 0.2*1)/0.8 x2 = 1.75 x2.
// CHECK: output 0: f32[3, 2] [1.375, 2.75, 2.5, -5, 7, 0]
// Not normalized: 1.1 x0, 2.5 x1, 1.4 x2.
// CHECK: output 1: f32[3, 2] [1.1, 2.2, 2.25, -4.5, 5.6, 0]
// Capacity factor 0.5: C = ceil(0.5 * 3 tokens * 2 / 3 experts) = 1. First
// choices take the slots (token 0 -> expert 0, token 1 -> 2, token 2 -> 1);
// every second choice finds its expert full and is dropped, and the kept
// weights are not rescaled: 0.625 x0, (0.8/0.9)*3 x1, 0.75*2 x2.
// CHECK: output 2: f32[3, 2] [0.625, 1.25, 2.4, -4.8, 6, 0]
// k = 1 with SiLU experts, capacity factor 1.5: C = ceil(1.5 * 3 * 1 / 3) = 2;
// every token keeps its first choice (experts 0, 2, 1: one each). Expert e
// is silu((e + 1) x) with silu(v) = v / (1 + exp(-v)):
//   token 0: 0.5 * silu([1, 2])      = [0.365529, 0.880797]
//   token 1: 0.8 * silu([2.7, -5.4]) = [2.023978, -0.019424]
//   token 2: 0.6 * silu([8, 0])      = [4.798390, 0]
// CHECK: output 3: f32[3, 2] [0.365529, 0.880797, 2.02398, -0.0194239, 4.79839, 0]
// Gated experts, k = 1: relu(x @ w_gate[e]) * (x @ w_in[e]) @ w_out[e] with
// w_gate[e] = I, so expert e is relu(x) * (e + 1) x:
//   token 0: 0.5 * relu([1, 2]) * [1, 2]         = [0.5, 2]
//   token 1: 0.8 * relu([0.9, -1.8]) * [2.7, -5.4] = [1.944, 0]
//   token 2: 0.6 * relu([4, 0]) * [8, 0]         = [19.2, 0]
// CHECK: output 4: f32[3, 2] [0.5, 2, 1.944, 0, 19.2, 0]
func.func @main() -> (tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) {
  %x = loom.constant dense<[[1.0, 2.0], [0.9, -1.8], [4.0, 0.0]]> : tensor<3x2xf32>
  %p = loom.constant dense<[[0.5, 0.3, 0.2], [0.1, 0.1, 0.8], [0.2, 0.6, 0.2]]> : tensor<3x3xf32>
  %w1 = loom.constant dense<[[[1.0, 0.0], [0.0, 1.0]], [[2.0, 0.0], [0.0, 2.0]], [[3.0, 0.0], [0.0, 3.0]]]> : tensor<3x2x2xf32>
  %w2 = loom.constant dense<[[[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]]]> : tensor<3x2x2xf32>
  %a = loom.moe %x, %p, %w1, %w2 {k = 2 : i64, normalize = true} : (tensor<3x2xf32>, tensor<3x3xf32>, tensor<3x2x2xf32>, tensor<3x2x2xf32>) -> tensor<3x2xf32>
  %b = loom.moe %x, %p, %w1, %w2 {k = 2 : i64} : (tensor<3x2xf32>, tensor<3x3xf32>, tensor<3x2x2xf32>, tensor<3x2x2xf32>) -> tensor<3x2xf32>
  %c = loom.moe %x, %p, %w1, %w2 {k = 2 : i64, normalize = true, capacity_factor = 0.5 : f64} : (tensor<3x2xf32>, tensor<3x3xf32>, tensor<3x2x2xf32>, tensor<3x2x2xf32>) -> tensor<3x2xf32>
  %d = loom.moe %x, %p, %w1, %w2 {k = 1 : i64, activation = "silu", capacity_factor = 1.5 : f64} : (tensor<3x2xf32>, tensor<3x3xf32>, tensor<3x2x2xf32>, tensor<3x2x2xf32>) -> tensor<3x2xf32>
  %e = loom.moe %x, %p, %w1, %w2 gate %w2 {k = 1 : i64, activation = "relu"} : (tensor<3x2xf32>, tensor<3x3xf32>, tensor<3x2x2xf32>, tensor<3x2x2xf32>, tensor<3x2x2xf32>) -> tensor<3x2xf32>
  return %a, %b, %c, %d, %e : tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>
}
