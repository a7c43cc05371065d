// RUN: loom-opt %s -loom-recognize -split-input-file | FileCheck %s

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

// The ONNX exporter's spelling: ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/Div,
// then Mul by gamma and Add of beta.
// CHECK-LABEL: func.func @layer_norm_onnx
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>, %[[G:.*]]: tensor<32xf32>, %[[B:.*]]: tensor<32xf32>)
// CHECK: %[[Y:.*]] = loom.layer_norm %[[X]], %[[G]], %[[B]] {axis = 2 : i64}
// CHECK-NOT: loom.reduce_mean
// CHECK: return %[[Y]]
func.func @layer_norm_onnx(%x: tensor<2x8x32xf32>, %g: tensor<32xf32>, %b: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %two = loom.constant dense<2.0> : tensor<f32>
  %eps = loom.constant dense<1.0e-5> : tensor<f32>
  %m = loom.reduce_mean %x {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %d = loom.sub %x, %m : tensor<2x8x32xf32>, tensor<2x8x1xf32> -> tensor<2x8x32xf32>
  %q = loom.pow %d, %two : tensor<2x8x32xf32>, tensor<f32> -> tensor<2x8x32xf32>
  %v = loom.reduce_mean %q {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %s = loom.add %v, %eps : tensor<2x8x1xf32>, tensor<f32> -> tensor<2x8x1xf32>
  %r = loom.sqrt %s : tensor<2x8x1xf32>
  %n = loom.div %d, %r : tensor<2x8x32xf32>, tensor<2x8x1xf32> -> tensor<2x8x32xf32>
  %gn = loom.mul %n, %g : tensor<2x8x32xf32>, tensor<32xf32> -> tensor<2x8x32xf32>
  %y = loom.add %gn, %b : tensor<2x8x32xf32>, tensor<32xf32> -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

// d * d, rsqrt, gamma first, no bias; normalization over the last two axes.
// CHECK-LABEL: func.func @layer_norm_rsqrt
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>, %[[G:.*]]: tensor<8x32xf32>)
// CHECK: %[[Y:.*]] = loom.layer_norm %[[X]], %[[G]] {axis = 1 : i64, epsilon = 9.99999996E-13 : f32}
// CHECK: return %[[Y]]
func.func @layer_norm_rsqrt(%x: tensor<2x8x32xf32>, %g: tensor<8x32xf32>) -> tensor<2x8x32xf32> {
  %eps = loom.constant dense<1.0e-12> : tensor<1xf32>
  %m = loom.reduce_mean %x {axes = array<i64: 1, 2>} : tensor<2x8x32xf32> -> tensor<2x1x1xf32>
  %d = loom.sub %x, %m : tensor<2x8x32xf32>, tensor<2x1x1xf32> -> tensor<2x8x32xf32>
  %q = loom.mul %d, %d : tensor<2x8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  %v = loom.reduce_mean %q {axes = array<i64: 1, 2>} : tensor<2x8x32xf32> -> tensor<2x1x1xf32>
  %s = loom.add %eps, %v : tensor<1xf32>, tensor<2x1x1xf32> -> tensor<2x1x1xf32>
  %r = loom.rsqrt %s : tensor<2x1x1xf32>
  %gd = loom.mul %g, %d : tensor<8x32xf32>, tensor<2x8x32xf32> -> tensor<2x8x32xf32>
  %y = loom.mul %gd, %r : tensor<2x8x32xf32>, tensor<2x1x1xf32> -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

// The variance is taken over other axes than the mean: not a layer norm,
// but still the RMS norm of the centered input over those axes.
// CHECK-LABEL: func.func @layer_norm_wrong_axis
// CHECK-NOT: loom.layer_norm
// CHECK: %[[D:.*]] = loom.sub
// CHECK: %[[Y:.*]] = loom.rms_norm %[[D]], %{{.*}} {axis = 1 : i64}
// CHECK-NOT: loom.layer_norm
// CHECK: return %[[Y]]
func.func @layer_norm_wrong_axis(%x: tensor<2x8x32xf32>, %g: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %two = loom.constant dense<2.0> : tensor<f32>
  %eps = loom.constant dense<1.0e-5> : tensor<f32>
  %m = loom.reduce_mean %x {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %d = loom.sub %x, %m : tensor<2x8x32xf32>, tensor<2x8x1xf32> -> tensor<2x8x32xf32>
  %q = loom.pow %d, %two : tensor<2x8x32xf32>, tensor<f32> -> tensor<2x8x32xf32>
  %v = loom.reduce_mean %q {axes = array<i64: 1, 2>} : tensor<2x8x32xf32> -> tensor<2x1x1xf32>
  %s = loom.add %v, %eps : tensor<2x1x1xf32>, tensor<f32> -> tensor<2x1x1xf32>
  %r = loom.sqrt %s : tensor<2x1x1xf32>
  %n = loom.div %d, %r : tensor<2x8x32xf32>, tensor<2x1x1xf32> -> tensor<2x8x32xf32>
  %y = loom.mul %n, %g : tensor<2x8x32xf32>, tensor<32xf32> -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

// Statistics over a leading axis are not a layer norm's.
// CHECK-LABEL: func.func @layer_norm_leading_axis
// CHECK-NOT: loom.layer_norm
// CHECK: return
func.func @layer_norm_leading_axis(%x: tensor<8x32xf32>, %g: tensor<8x1xf32>) -> tensor<8x32xf32> {
  %two = loom.constant dense<2.0> : tensor<f32>
  %eps = loom.constant dense<1.0e-5> : tensor<f32>
  %m = loom.reduce_mean %x {axes = array<i64: 0>} : tensor<8x32xf32> -> tensor<1x32xf32>
  %d = loom.sub %x, %m : tensor<8x32xf32>, tensor<1x32xf32> -> tensor<8x32xf32>
  %q = loom.pow %d, %two : tensor<8x32xf32>, tensor<f32> -> tensor<8x32xf32>
  %v = loom.reduce_mean %q {axes = array<i64: 0>} : tensor<8x32xf32> -> tensor<1x32xf32>
  %s = loom.add %v, %eps : tensor<1x32xf32>, tensor<f32> -> tensor<1x32xf32>
  %r = loom.sqrt %s : tensor<1x32xf32>
  %n = loom.div %d, %r : tensor<8x32xf32>, tensor<1x32xf32> -> tensor<8x32xf32>
  %y = loom.mul %n, %g : tensor<8x32xf32>, tensor<8x1xf32> -> tensor<8x32xf32>
  return %y : tensor<8x32xf32>
}

// -----

// The centered input is also returned: it must stay, so nothing is gained.
// CHECK-LABEL: func.func @layer_norm_extra_user
// CHECK: %[[D:.*]] = loom.sub
// CHECK-NOT: loom.layer_norm
// CHECK: return %{{.*}}, %[[D]]
func.func @layer_norm_extra_user(%x: tensor<2x8x32xf32>, %g: tensor<32xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x32xf32>) {
  %two = loom.constant dense<2.0> : tensor<f32>
  %eps = loom.constant dense<1.0e-5> : tensor<f32>
  %m = loom.reduce_mean %x {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %d = loom.sub %x, %m : tensor<2x8x32xf32>, tensor<2x8x1xf32> -> tensor<2x8x32xf32>
  %q = loom.pow %d, %two : tensor<2x8x32xf32>, tensor<f32> -> tensor<2x8x32xf32>
  %v = loom.reduce_mean %q {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %s = loom.add %v, %eps : tensor<2x8x1xf32>, tensor<f32> -> tensor<2x8x1xf32>
  %r = loom.sqrt %s : tensor<2x8x1xf32>
  %n = loom.div %d, %r : tensor<2x8x32xf32>, tensor<2x8x1xf32> -> tensor<2x8x32xf32>
  %y = loom.mul %n, %g : tensor<2x8x32xf32>, tensor<32xf32> -> tensor<2x8x32xf32>
  return %y, %d : tensor<2x8x32xf32>, tensor<2x8x32xf32>
}

//===----------------------------------------------------------------------===//
// RMSNorm
//===----------------------------------------------------------------------===//

// -----

// Llama as exported: x * (1 / sqrt(mean(x^2) + eps)) * w.
// CHECK-LABEL: func.func @rms_norm_llama
// CHECK-SAME: (%[[X:.*]]: tensor<1x8x32xf32>, %[[W:.*]]: tensor<32xf32>)
// CHECK: %[[Y:.*]] = loom.rms_norm %[[X]], %[[W]] {axis = 2 : i64, epsilon = 9.99999997E-7 : f32}
// CHECK-NOT: loom.sqrt
// CHECK: return %[[Y]]
func.func @rms_norm_llama(%x: tensor<1x8x32xf32>, %w: tensor<32xf32>) -> tensor<1x8x32xf32> {
  %two = loom.constant dense<2.0> : tensor<f32>
  %one = loom.constant dense<1.0> : tensor<f32>
  %eps = loom.constant dense<1.0e-6> : tensor<f32>
  %q = loom.pow %x, %two : tensor<1x8x32xf32>, tensor<f32> -> tensor<1x8x32xf32>
  %v = loom.reduce_mean %q {axes = array<i64: 2>} : tensor<1x8x32xf32> -> tensor<1x8x1xf32>
  %s = loom.add %v, %eps : tensor<1x8x1xf32>, tensor<f32> -> tensor<1x8x1xf32>
  %r = loom.sqrt %s : tensor<1x8x1xf32>
  %i = loom.div %one, %r : tensor<f32>, tensor<1x8x1xf32> -> tensor<1x8x1xf32>
  %n = loom.mul %x, %i : tensor<1x8x32xf32>, tensor<1x8x1xf32> -> tensor<1x8x32xf32>
  %y = loom.mul %n, %w : tensor<1x8x32xf32>, tensor<32xf32> -> tensor<1x8x32xf32>
  return %y : tensor<1x8x32xf32>
}

// -----

// x / sqrt(...) * w, with an integer exponent and x * x.
// CHECK-LABEL: func.func @rms_norm_div
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>, %[[W:.*]]: tensor<16xf32>)
// CHECK: %[[Y:.*]] = loom.rms_norm %[[X]], %[[W]] {axis = 1 : i64}
// CHECK: return %[[Y]]
func.func @rms_norm_div(%x: tensor<4x16xf32>, %w: tensor<16xf32>) -> tensor<4x16xf32> {
  %eps = loom.constant dense<1.0e-5> : tensor<f32>
  %q = loom.mul %x, %x : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %v = loom.reduce_mean %q {axes = array<i64: 1>} : tensor<4x16xf32> -> tensor<4x1xf32>
  %s = loom.add %v, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = loom.sqrt %s : tensor<4x1xf32>
  %n = loom.div %x, %r : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
  %y = loom.mul %w, %n : tensor<16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// x * rsqrt(...) * w, the form of graphs that were already simplified.
// CHECK-LABEL: func.func @rms_norm_rsqrt
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>, %[[W:.*]]: tensor<16xf32>)
// CHECK: %[[Y:.*]] = loom.rms_norm %[[X]], %[[W]] {axis = 1 : i64}
// CHECK: return %[[Y]]
func.func @rms_norm_rsqrt(%x: tensor<4x16xf32>, %w: tensor<16xf32>) -> tensor<4x16xf32> {
  %two = loom.constant dense<2> : tensor<i64>
  %eps = loom.constant dense<1.0e-5> : tensor<f32>
  %q = loom.pow %x, %two : tensor<4x16xf32>, tensor<i64> -> tensor<4x16xf32>
  %v = loom.reduce_mean %q {axes = array<i64: 1>} : tensor<4x16xf32> -> tensor<4x1xf32>
  %s = loom.add %v, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = loom.rsqrt %s : tensor<4x1xf32>
  %n = loom.mul %r, %x : tensor<4x1xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %y = loom.mul %n, %w : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Cubes are not squares.
// CHECK-LABEL: func.func @rms_norm_wrong_exponent
// CHECK-NOT: loom.rms_norm
// CHECK: return
func.func @rms_norm_wrong_exponent(%x: tensor<4x16xf32>, %w: tensor<16xf32>) -> tensor<4x16xf32> {
  %three = loom.constant dense<3.0> : tensor<f32>
  %eps = loom.constant dense<1.0e-5> : tensor<f32>
  %q = loom.pow %x, %three : tensor<4x16xf32>, tensor<f32> -> tensor<4x16xf32>
  %v = loom.reduce_mean %q {axes = array<i64: 1>} : tensor<4x16xf32> -> tensor<4x1xf32>
  %s = loom.add %v, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = loom.rsqrt %s : tensor<4x1xf32>
  %n = loom.mul %x, %r : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
  %y = loom.mul %n, %w : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// The reciprocal RMS is also returned: it must stay.
// CHECK-LABEL: func.func @rms_norm_extra_user
// CHECK: %[[R:.*]] = loom.rsqrt
// CHECK-NOT: loom.rms_norm
// CHECK: return %{{.*}}, %[[R]]
func.func @rms_norm_extra_user(%x: tensor<4x16xf32>, %w: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x1xf32>) {
  %eps = loom.constant dense<1.0e-5> : tensor<f32>
  %q = loom.mul %x, %x : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %v = loom.reduce_mean %q {axes = array<i64: 1>} : tensor<4x16xf32> -> tensor<4x1xf32>
  %s = loom.add %v, %eps : tensor<4x1xf32>, tensor<f32> -> tensor<4x1xf32>
  %r = loom.rsqrt %s : tensor<4x1xf32>
  %n = loom.mul %x, %r : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
  %y = loom.mul %n, %w : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  return %y, %r : tensor<4x16xf32>, tensor<4x1xf32>
}

//===----------------------------------------------------------------------===//
// GELU
//===----------------------------------------------------------------------===//

// -----

// PyTorch's export of nn.GELU(): (x * 0.5) * (erf(x / sqrt(2)) + 1).
// CHECK-LABEL: func.func @gelu_erf_torch
// CHECK-SAME: (%[[X:.*]]: tensor<8x128xf32>)
// CHECK: %[[Y:.*]] = loom.gelu %[[X]] : tensor<8x128xf32>
// CHECK-NOT: loom.erf
// CHECK: return %[[Y]]
func.func @gelu_erf_torch(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %sqrt2 = loom.constant dense<1.41421354> : tensor<f32>
  %half = loom.constant dense<5.000000e-01> : tensor<f32>
  %one = loom.constant dense<1.000000e+00> : tensor<f32>
  %a = loom.div %x, %sqrt2 : tensor<8x128xf32>, tensor<f32> -> tensor<8x128xf32>
  %e = loom.erf %a : tensor<8x128xf32>
  %h = loom.mul %x, %half : tensor<8x128xf32>, tensor<f32> -> tensor<8x128xf32>
  %p = loom.add %e, %one : tensor<8x128xf32>, tensor<f32> -> tensor<8x128xf32>
  %y = loom.mul %h, %p : tensor<8x128xf32>, tensor<8x128xf32> -> tensor<8x128xf32>
  return %y : tensor<8x128xf32>
}

// -----

// 0.5 * x * (1 + erf(x * 0.70710678)).
// CHECK-LABEL: func.func @gelu_erf_half_first
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK: %[[Y:.*]] = loom.gelu %[[X]] : tensor<8xf32>
// CHECK: return %[[Y]]
func.func @gelu_erf_half_first(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = loom.constant dense<0.70710678> : tensor<f32>
  %half = loom.constant dense<5.000000e-01> : tensor<f32>
  %one = loom.constant dense<1.000000e+00> : tensor<f32>
  %h = loom.mul %half, %x : tensor<f32>, tensor<8xf32> -> tensor<8xf32>
  %a = loom.mul %x, %c : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %e = loom.erf %a : tensor<8xf32>
  %p = loom.add %one, %e : tensor<f32>, tensor<8xf32> -> tensor<8xf32>
  %y = loom.mul %h, %p : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// x * (1 + erf(x / sqrt(2))) * 0.5 (and the 0.5 inside).
// CHECK-LABEL: func.func @gelu_erf_half_last
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK: %[[Y:.*]] = loom.gelu %[[X]] : tensor<8xf32>
// CHECK: %[[Z:.*]] = loom.gelu %[[X]] : tensor<8xf32>
// CHECK: return %[[Y]], %[[Z]]
func.func @gelu_erf_half_last(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %sqrt2 = loom.constant dense<1.414213562> : tensor<f32>
  %half = loom.constant dense<5.000000e-01> : tensor<f32>
  %one = loom.constant dense<1.000000e+00> : tensor<f32>
  %a = loom.div %x, %sqrt2 : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %e = loom.erf %a : tensor<8xf32>
  %p = loom.add %e, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %xp = loom.mul %x, %p : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %y = loom.mul %xp, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %a2 = loom.div %x, %sqrt2 : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %e2 = loom.erf %a2 : tensor<8xf32>
  %p2 = loom.add %e2, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %ph = loom.mul %p2, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %z = loom.mul %x, %ph : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %y, %z : tensor<8xf32>, tensor<8xf32>
}

// -----

// GPT-2's tanh approximation with pow(x, 3), and with x * x * x.
// CHECK-LABEL: func.func @gelu_tanh
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK: %[[Y:.*]] = loom.gelu %[[X]] {approximate = "tanh"} : tensor<8xf32>
// CHECK: %[[Z:.*]] = loom.gelu %[[X]] {approximate = "tanh"} : tensor<8xf32>
// CHECK-NOT: loom.tanh
// CHECK: return %[[Y]], %[[Z]]
func.func @gelu_tanh(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %half = loom.constant dense<5.000000e-01> : tensor<f32>
  %one = loom.constant dense<1.000000e+00> : tensor<f32>
  %three = loom.constant dense<3.000000e+00> : tensor<f32>
  %k = loom.constant dense<4.471500e-02> : tensor<f32>
  %s = loom.constant dense<0.797884583> : tensor<f32>
  %c = loom.pow %x, %three : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %kc = loom.mul %k, %c : tensor<f32>, tensor<8xf32> -> tensor<8xf32>
  %in = loom.add %x, %kc : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %arg = loom.mul %s, %in : tensor<f32>, tensor<8xf32> -> tensor<8xf32>
  %t = loom.tanh %arg : tensor<8xf32>
  %p = loom.add %one, %t : tensor<f32>, tensor<8xf32> -> tensor<8xf32>
  %h = loom.mul %half, %x : tensor<f32>, tensor<8xf32> -> tensor<8xf32>
  %y = loom.mul %h, %p : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %x2 = loom.mul %x, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %x3 = loom.mul %x2, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %kc2 = loom.mul %x3, %k : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %in2 = loom.add %kc2, %x : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %arg2 = loom.mul %in2, %s : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %t2 = loom.tanh %arg2 : tensor<8xf32>
  %p2 = loom.add %t2, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %xp = loom.mul %x, %p2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %z = loom.mul %xp, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  return %y, %z : tensor<8xf32>, tensor<8xf32>
}

// -----

// erf(x * 0.6) is not GELU's.
// CHECK-LABEL: func.func @gelu_wrong_constant
// CHECK-NOT: loom.gelu
// CHECK: loom.erf
// CHECK-NOT: loom.gelu
// CHECK: return
func.func @gelu_wrong_constant(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = loom.constant dense<0.6> : tensor<f32>
  %half = loom.constant dense<5.000000e-01> : tensor<f32>
  %one = loom.constant dense<1.000000e+00> : tensor<f32>
  %h = loom.mul %x, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %a = loom.mul %x, %c : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %e = loom.erf %a : tensor<8xf32>
  %p = loom.add %e, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %y = loom.mul %h, %p : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// The erf is also returned: it must stay.
// CHECK-LABEL: func.func @gelu_extra_user
// CHECK: %[[E:.*]] = loom.erf
// CHECK-NOT: loom.gelu
// CHECK: return %{{.*}}, %[[E]]
func.func @gelu_extra_user(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %sqrt2 = loom.constant dense<1.41421354> : tensor<f32>
  %half = loom.constant dense<5.000000e-01> : tensor<f32>
  %one = loom.constant dense<1.000000e+00> : tensor<f32>
  %a = loom.div %x, %sqrt2 : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %e = loom.erf %a : tensor<8xf32>
  %h = loom.mul %x, %half : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %p = loom.add %e, %one : tensor<8xf32>, tensor<f32> -> tensor<8xf32>
  %y = loom.mul %h, %p : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %y, %e : tensor<8xf32>, tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// SiLU
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @silu
// CHECK-SAME: (%[[X:.*]]: tensor<8x64xf32>)
// CHECK: %[[A:.*]] = loom.silu %[[X]] : tensor<8x64xf32>
// CHECK: %[[B:.*]] = loom.silu %[[X]] : tensor<8x64xf32>
// CHECK-NOT: loom.sigmoid
// CHECK: return %[[A]], %[[B]]
func.func @silu(%x: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %s = loom.sigmoid %x : tensor<8x64xf32>
  %a = loom.mul %x, %s : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  %s2 = loom.sigmoid %x : tensor<8x64xf32>
  %b = loom.mul %s2, %x : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  return %a, %b : tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// y * sigmoid(x) gates with another value; a shared sigmoid must stay.
// CHECK-LABEL: func.func @silu_negative
// CHECK-NOT: loom.silu
// CHECK: return
func.func @silu_negative(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %s = loom.sigmoid %x : tensor<8xf32>
  %a = loom.mul %y, %s : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  %s2 = loom.sigmoid %x : tensor<8xf32>
  %b = loom.mul %x, %s2 : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %a, %b, %s2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

// -----

// CHECK-LABEL: func.func @softmax_shifted
// CHECK-SAME: (%[[X:.*]]: tensor<4x10xf32>)
// CHECK: %[[Y:.*]] = loom.softmax %[[X]] {axis = 1 : i64} : tensor<4x10xf32>
// CHECK-NOT: loom.exp
// CHECK: return %[[Y]]
func.func @softmax_shifted(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %m = loom.reduce_max %x {axes = array<i64: 1>} : tensor<4x10xf32> -> tensor<4x1xf32>
  %d = loom.sub %x, %m : tensor<4x10xf32>, tensor<4x1xf32> -> tensor<4x10xf32>
  %e = loom.exp %d : tensor<4x10xf32>
  %s = loom.reduce_sum %e {axes = array<i64: 1>} : tensor<4x10xf32> -> tensor<4x1xf32>
  %y = loom.div %e, %s : tensor<4x10xf32>, tensor<4x1xf32> -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}

// -----

// Without the shift, over axis 0, and as exp * reciprocal(sum).
// CHECK-LABEL: func.func @softmax_unshifted
// CHECK-SAME: (%[[X:.*]]: tensor<4x10xf32>)
// CHECK: %[[Y:.*]] = loom.softmax %[[X]] {axis = 0 : i64} : tensor<4x10xf32>
// CHECK: %[[Z:.*]] = loom.softmax %[[X]] {axis = 1 : i64} : tensor<4x10xf32>
// CHECK: return %[[Y]], %[[Z]]
func.func @softmax_unshifted(%x: tensor<4x10xf32>) -> (tensor<4x10xf32>, tensor<4x10xf32>) {
  %e = loom.exp %x : tensor<4x10xf32>
  %s = loom.reduce_sum %e {axes = array<i64: 0>} : tensor<4x10xf32> -> tensor<1x10xf32>
  %y = loom.div %e, %s : tensor<4x10xf32>, tensor<1x10xf32> -> tensor<4x10xf32>
  %e2 = loom.exp %x : tensor<4x10xf32>
  %s2 = loom.reduce_sum %e2 {axes = array<i64: 1>} : tensor<4x10xf32> -> tensor<4x1xf32>
  %r2 = loom.reciprocal %s2 : tensor<4x1xf32>
  %z = loom.mul %e2, %r2 : tensor<4x10xf32>, tensor<4x1xf32> -> tensor<4x10xf32>
  return %y, %z : tensor<4x10xf32>, tensor<4x10xf32>
}

// -----

// The max is taken over another axis than the sum.
// CHECK-LABEL: func.func @softmax_wrong_axis
// CHECK-NOT: loom.softmax
// CHECK: return
func.func @softmax_wrong_axis(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %m = loom.reduce_max %x {axes = array<i64: 0>} : tensor<4x10xf32> -> tensor<1x10xf32>
  %d = loom.sub %x, %m : tensor<4x10xf32>, tensor<1x10xf32> -> tensor<4x10xf32>
  %e = loom.exp %d : tensor<4x10xf32>
  %s = loom.reduce_sum %e {axes = array<i64: 1>} : tensor<4x10xf32> -> tensor<4x1xf32>
  %y = loom.div %e, %s : tensor<4x10xf32>, tensor<4x1xf32> -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}

// -----

// exp(x) is also returned: it must stay.
// CHECK-LABEL: func.func @softmax_extra_user
// CHECK: %[[E:.*]] = loom.exp
// CHECK-NOT: loom.softmax
// CHECK: return %{{.*}}, %[[E]]
func.func @softmax_extra_user(%x: tensor<4x10xf32>) -> (tensor<4x10xf32>, tensor<4x10xf32>) {
  %e = loom.exp %x : tensor<4x10xf32>
  %s = loom.reduce_sum %e {axes = array<i64: 1>} : tensor<4x10xf32> -> tensor<4x1xf32>
  %y = loom.div %e, %s : tensor<4x10xf32>, tensor<4x1xf32> -> tensor<4x10xf32>
  return %y, %e : tensor<4x10xf32>, tensor<4x10xf32>
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

// -----

// q @ k^T * scale, softmax, @ v: no mask.
// CHECK-LABEL: func.func @attention_scaled
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x8x16xf32>, %[[K:.*]]: tensor<1x4x8x16xf32>, %[[V:.*]]: tensor<1x4x8x16xf32>)
// CHECK: %[[O:.*]] = loom.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f32}
// CHECK-NOT: loom.softmax
// CHECK: return %[[O]]
func.func @attention_scaled(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %c = loom.constant dense<2.500000e-01> : tensor<f32>
  %kt = loom.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x8x16xf32> -> tensor<1x4x16x8xf32>
  %s = loom.matmul %q, %kt : tensor<1x4x8x16xf32>, tensor<1x4x16x8xf32> -> tensor<1x4x8x8xf32>
  %ss = loom.mul %s, %c : tensor<1x4x8x8xf32>, tensor<f32> -> tensor<1x4x8x8xf32>
  %p = loom.softmax %ss {axis = 3 : i64} : tensor<1x4x8x8xf32>
  %o = loom.matmul %p, %v : tensor<1x4x8x8xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

// Division by sqrt(D) given as sqrt of a constant, an additive mask from the
// caller, and a softmax spelled out (recognized first).
// CHECK-LABEL: func.func @attention_masked
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[K:.*]]: tensor<2x4x8x16xf32>, %[[V:.*]]: tensor<2x4x8x16xf32>, %[[M:.*]]: tensor<2x1x1x8xf32>)
// CHECK: %[[O:.*]] = loom.attention %[[Q]], %[[K]], %[[V]], %[[M]] {scale = 2.500000e-01 : f32}
// CHECK-NOT: loom.exp
// CHECK: return %[[O]]
func.func @attention_masked(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %m: tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32> {
  %d = loom.constant dense<1.600000e+01> : tensor<f32>
  %sd = loom.sqrt %d : tensor<f32>
  %kt = loom.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x8x16xf32> -> tensor<2x4x16x8xf32>
  %s = loom.matmul %q, %kt : tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x8x8xf32>
  %ss = loom.div %s, %sd : tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
  %sm = loom.add %m, %ss : tensor<2x1x1x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %mx = loom.reduce_max %sm {axes = array<i64: 3>} : tensor<2x4x8x8xf32> -> tensor<2x4x8x1xf32>
  %sh = loom.sub %sm, %mx : tensor<2x4x8x8xf32>, tensor<2x4x8x1xf32> -> tensor<2x4x8x8xf32>
  %e = loom.exp %sh : tensor<2x4x8x8xf32>
  %sum = loom.reduce_sum %e {axes = array<i64: 3>} : tensor<2x4x8x8xf32> -> tensor<2x4x8x1xf32>
  %p = loom.div %e, %sum : tensor<2x4x8x8xf32>, tensor<2x4x8x1xf32> -> tensor<2x4x8x8xf32>
  %o = loom.matmul %p, %v : tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// A constant upper triangle of large negatives is the causal mask; keys in
// [B, T, H, D] are transposed straight to [B, H, D, T] (the exporter's
// permute(0, 2, 3, 1)); without a scale op the scale is 1.
// CHECK-LABEL: func.func @attention_causal
// CHECK-SAME: (%[[Q:.*]]: tensor<1x2x3x4xf32>, %[[K:.*]]: tensor<1x3x2x4xf32>, %[[V:.*]]: tensor<1x2x3x4xf32>)
// CHECK: %[[KT:.*]] = loom.transpose %[[K]] {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x2x4xf32> -> tensor<1x2x3x4xf32>
// CHECK: %[[O:.*]] = loom.attention %[[Q]], %[[KT]], %[[V]] {is_causal = true, scale = 1.000000e+00 : f32}
// CHECK: return %[[O]]
func.func @attention_causal(%q: tensor<1x2x3x4xf32>, %k: tensor<1x3x2x4xf32>, %v: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %mask = loom.constant dense<[[0.0, -1.0e9, -1.0e9], [0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0]]> : tensor<3x3xf32>
  %kt = loom.transpose %k {perm = array<i64: 0, 2, 3, 1>} : tensor<1x3x2x4xf32> -> tensor<1x2x4x3xf32>
  %s = loom.matmul %q, %kt : tensor<1x2x3x4xf32>, tensor<1x2x4x3xf32> -> tensor<1x2x3x3xf32>
  %sm = loom.add %s, %mask : tensor<1x2x3x3xf32>, tensor<3x3xf32> -> tensor<1x2x3x3xf32>
  %p = loom.softmax %sm {axis = -1 : i64} : tensor<1x2x3x3xf32>
  %o = loom.matmul %p, %v : tensor<1x2x3x3xf32>, tensor<1x2x3x4xf32> -> tensor<1x2x3x4xf32>
  return %o : tensor<1x2x3x4xf32>
}

// -----

// A constant mask that is not causal (a masked diagonal entry) is passed on.
// CHECK-LABEL: func.func @attention_constant_mask
// CHECK: %[[M:.*]] = loom.constant
// CHECK: loom.attention %{{.*}}, %{{.*}}, %{{.*}}, %[[M]] {scale = 5.000000e-01 : f32}
// CHECK-NOT: is_causal
func.func @attention_constant_mask(%q: tensor<1x2x3x4xf32>, %k: tensor<1x2x3x4xf32>, %v: tensor<1x2x3x4xf32>) -> tensor<1x2x3x4xf32> {
  %mask = loom.constant dense<[[0.0, -1.0e9, -1.0e9], [0.0, -1.0e9, -1.0e9], [0.0, 0.0, 0.0]]> : tensor<3x3xf32>
  %c = loom.constant dense<5.000000e-01> : tensor<f32>
  %kt = loom.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x2x3x4xf32> -> tensor<1x2x4x3xf32>
  %s = loom.matmul %q, %kt : tensor<1x2x3x4xf32>, tensor<1x2x4x3xf32> -> tensor<1x2x3x3xf32>
  %ss = loom.mul %c, %s : tensor<f32>, tensor<1x2x3x3xf32> -> tensor<1x2x3x3xf32>
  %sm = loom.add %ss, %mask : tensor<1x2x3x3xf32>, tensor<3x3xf32> -> tensor<1x2x3x3xf32>
  %p = loom.softmax %sm {axis = 3 : i64} : tensor<1x2x3x3xf32>
  %o = loom.matmul %p, %v : tensor<1x2x3x3xf32>, tensor<1x2x3x4xf32> -> tensor<1x2x3x4xf32>
  return %o : tensor<1x2x3x4xf32>
}

// -----

// Grouped-query heads: the exporter repeats [1, 2, T, D] keys and values to
// 4 heads with unsqueeze/expand/reshape (and tile); attention takes the
// un-repeated ones. The q-side scale (PyTorch's sqrt(scale) on q and k)
// folds into `scale`.
// CHECK-LABEL: func.func @attention_gqa
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4x8x16xf32>, %[[K:.*]]: tensor<1x2x8x16xf32>, %[[V:.*]]: tensor<1x2x8x16xf32>)
// CHECK: %[[O:.*]] = loom.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f32} : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32>
// CHECK-NOT: loom.expand
// CHECK-NOT: loom.tile
// CHECK: return %[[O]]
func.func @attention_gqa(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %c = loom.constant dense<5.000000e-01> : tensor<f32>
  %shape5 = loom.constant dense<[1, 2, 2, 8, 16]> : tensor<5xi64>
  %reps = loom.constant dense<[1, 1, 2, 1, 1]> : tensor<5xi64>
  %shape4 = loom.constant dense<[1, 4, 8, 16]> : tensor<4xi64>
  %ku = loom.unsqueeze %k {axes = array<i64: 2>} : tensor<1x2x8x16xf32> -> tensor<1x2x1x8x16xf32>
  %ke = loom.expand %ku, %shape5 : (tensor<1x2x1x8x16xf32>, tensor<5xi64>) -> tensor<1x2x2x8x16xf32>
  %kr = loom.reshape %ke, %shape4 : (tensor<1x2x2x8x16xf32>, tensor<4xi64>) -> tensor<1x4x8x16xf32>
  %vu = loom.unsqueeze %v {axes = array<i64: 2>} : tensor<1x2x8x16xf32> -> tensor<1x2x1x8x16xf32>
  %ve = loom.tile %vu, %reps : (tensor<1x2x1x8x16xf32>, tensor<5xi64>) -> tensor<1x2x2x8x16xf32>
  %vr = loom.reshape %ve, %shape4 : (tensor<1x2x2x8x16xf32>, tensor<4xi64>) -> tensor<1x4x8x16xf32>
  %qs = loom.mul %q, %c : tensor<1x4x8x16xf32>, tensor<f32> -> tensor<1x4x8x16xf32>
  %kt = loom.transpose %kr {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x8x16xf32> -> tensor<1x4x16x8xf32>
  %ks = loom.mul %kt, %c : tensor<1x4x16x8xf32>, tensor<f32> -> tensor<1x4x16x8xf32>
  %s = loom.matmul %qs, %ks : tensor<1x4x8x16xf32>, tensor<1x4x16x8xf32> -> tensor<1x4x8x8xf32>
  %p = loom.softmax %s {axis = 3 : i64} : tensor<1x4x8x8xf32>
  %o = loom.matmul %p, %vr : tensor<1x4x8x8xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

// Tiling two heads along the heads axis orders the copies h = r * Hkv + kvh,
// which is not attention's grouping: the repeated keys are used as they are.
// CHECK-LABEL: func.func @attention_tiled_heads
// CHECK: %[[KR:.*]] = loom.tile
// CHECK: %[[VR:.*]] = loom.tile
// CHECK: loom.attention %{{.*}}, %[[KR]], %[[VR]]
func.func @attention_tiled_heads(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %reps = loom.constant dense<[1, 2, 1, 1]> : tensor<4xi64>
  %kr = loom.tile %k, %reps : (tensor<1x2x8x16xf32>, tensor<4xi64>) -> tensor<1x4x8x16xf32>
  %vr = loom.tile %v, %reps : (tensor<1x2x8x16xf32>, tensor<4xi64>) -> tensor<1x4x8x16xf32>
  %kt = loom.transpose %kr {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x8x16xf32> -> tensor<1x4x16x8xf32>
  %s = loom.matmul %q, %kt : tensor<1x4x8x16xf32>, tensor<1x4x16x8xf32> -> tensor<1x4x8x8xf32>
  %p = loom.softmax %s {axis = 3 : i64} : tensor<1x4x8x8xf32>
  %o = loom.matmul %p, %vr : tensor<1x4x8x8xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

// Softmax over the queries is not attention; nor are scores that are also
// returned.
// CHECK-LABEL: func.func @attention_negative
// CHECK-NOT: loom.attention
// CHECK: return
func.func @attention_negative(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>) {
  %kt = loom.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x8x16xf32> -> tensor<1x4x16x8xf32>
  %s = loom.matmul %q, %kt : tensor<1x4x8x16xf32>, tensor<1x4x16x8xf32> -> tensor<1x4x8x8xf32>
  %p = loom.softmax %s {axis = 2 : i64} : tensor<1x4x8x8xf32>
  %o = loom.matmul %p, %v : tensor<1x4x8x8xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  %kt2 = loom.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x8x16xf32> -> tensor<1x4x16x8xf32>
  %s2 = loom.matmul %q, %kt2 : tensor<1x4x8x16xf32>, tensor<1x4x16x8xf32> -> tensor<1x4x8x8xf32>
  %p2 = loom.softmax %s2 {axis = 3 : i64} : tensor<1x4x8x8xf32>
  %o2 = loom.matmul %p2, %v : tensor<1x4x8x8xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o, %o2, %s2 : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x8xf32>
}

//===----------------------------------------------------------------------===//
// Rotary embedding
//===----------------------------------------------------------------------===//

// -----

// Llama's rotate_half with constant [S, D] tables whose halves are equal:
// the op gets their first halves.
// CHECK-LABEL: func.func @rotary_constant_tables
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x2x4xf32>)
// CHECK-DAG: %[[COS:.*]] = loom.constant dense<{{\[\[}}1.000000e+00, 1.000000e+00], [5.000000e-01, 2.500000e-01]]> : tensor<2x2xf32>
// CHECK-DAG: %[[SIN:.*]] = loom.constant dense<{{\[\[}}0.000000e+00, 0.000000e+00], [7.500000e-01, 1.250000e-01]]> : tensor<2x2xf32>
// CHECK: %[[Y:.*]] = loom.rotary_embedding %[[X]], %[[COS]], %[[SIN]] : tensor<1x2x2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32> -> tensor<1x2x2x4xf32>
// CHECK-NOT: loom.concat
// CHECK: return %[[Y]]
func.func @rotary_constant_tables(%x: tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %cos = loom.constant dense<[[1.0, 1.0, 1.0, 1.0], [0.5, 0.25, 0.5, 0.25]]> : tensor<2x4xf32>
  %sin = loom.constant dense<[[0.0, 0.0, 0.0, 0.0], [0.75, 0.125, 0.75, 0.125]]> : tensor<2x4xf32>
  %s0 = loom.constant dense<0> : tensor<1xi64>
  %s2 = loom.constant dense<2> : tensor<1xi64>
  %end = loom.constant dense<9223372036854775807> : tensor<1xi64>
  %ax = loom.constant dense<-1> : tensor<1xi64>
  %x1 = loom.slice %x, %s0, %s2, %ax : (tensor<1x2x2x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x2x2xf32>
  %x2 = loom.slice %x, %s2, %end, %ax : (tensor<1x2x2x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x2x2xf32>
  %n = loom.neg %x2 : tensor<1x2x2x2xf32>
  %r = loom.concat %n, %x1 {axis = 3 : i64} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x4xf32>
  %a = loom.mul %x, %cos : tensor<1x2x2x4xf32>, tensor<2x4xf32> -> tensor<1x2x2x4xf32>
  %b = loom.mul %sin, %r : tensor<2x4xf32>, tensor<1x2x2x4xf32> -> tensor<1x2x2x4xf32>
  %y = loom.add %b, %a : tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32> -> tensor<1x2x2x4xf32>
  return %y : tensor<1x2x2x4xf32>
}

// -----

// Tables computed in the model (HF's emb = cat(freqs, freqs); emb.cos()),
// halves by a split and the negation as a product with -1.
// CHECK-LABEL: func.func @rotary_computed_tables
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x8x4xf32>, %[[F:.*]]: tensor<8x2xf32>)
// CHECK-DAG: %[[COS:.*]] = loom.cos %[[F]] : tensor<8x2xf32>
// CHECK-DAG: %[[SIN:.*]] = loom.sin %[[F]] : tensor<8x2xf32>
// CHECK: %[[Y:.*]] = loom.rotary_embedding %[[X]], %[[COS]], %[[SIN]]
// CHECK: return %[[Y]]
func.func @rotary_computed_tables(%x: tensor<1x2x8x4xf32>, %f: tensor<8x2xf32>) -> tensor<1x2x8x4xf32> {
  %emb = loom.concat %f, %f {axis = 1 : i64} : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x4xf32>
  %cos = loom.cos %emb : tensor<8x4xf32>
  %sin = loom.sin %emb : tensor<8x4xf32>
  %m1 = loom.constant dense<-1.0> : tensor<f32>
  %x1, %x2 = loom.split %x {axis = 3 : i64, sizes = array<i64: 2, 2>} : tensor<1x2x8x4xf32> -> tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>
  %n = loom.mul %x2, %m1 : tensor<1x2x8x2xf32>, tensor<f32> -> tensor<1x2x8x2xf32>
  %r = loom.concat %n, %x1 {axis = -1 : i64} : (tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>) -> tensor<1x2x8x4xf32>
  %a = loom.mul %cos, %x : tensor<8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %b = loom.mul %r, %sin : tensor<1x2x8x4xf32>, tensor<8x4xf32> -> tensor<1x2x8x4xf32>
  %y = loom.add %a, %b : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %y : tensor<1x2x8x4xf32>
}

// -----

// Tables whose halves differ are not rotate_half's: nothing changes.
// CHECK-LABEL: func.func @rotary_unequal_halves
// CHECK-NOT: loom.rotary_embedding
// CHECK: loom.concat
// CHECK-NOT: loom.rotary_embedding
// CHECK: return
func.func @rotary_unequal_halves(%x: tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32> {
  %cos = loom.constant dense<[[1.0, 1.0, 1.0, 1.0], [0.5, 0.25, 0.5, 0.3]]> : tensor<2x4xf32>
  %sin = loom.constant dense<[[0.0, 0.0, 0.0, 0.0], [0.75, 0.125, 0.75, 0.125]]> : tensor<2x4xf32>
  %s0 = loom.constant dense<0> : tensor<1xi64>
  %s2 = loom.constant dense<2> : tensor<1xi64>
  %s4 = loom.constant dense<4> : tensor<1xi64>
  %ax = loom.constant dense<3> : tensor<1xi64>
  %x1 = loom.slice %x, %s0, %s2, %ax : (tensor<1x2x2x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x2x2xf32>
  %x2 = loom.slice %x, %s2, %s4, %ax : (tensor<1x2x2x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x2x2xf32>
  %n = loom.neg %x2 : tensor<1x2x2x2xf32>
  %r = loom.concat %n, %x1 {axis = 3 : i64} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x4xf32>
  %a = loom.mul %x, %cos : tensor<1x2x2x4xf32>, tensor<2x4xf32> -> tensor<1x2x2x4xf32>
  %b = loom.mul %r, %sin : tensor<1x2x2x4xf32>, tensor<2x4xf32> -> tensor<1x2x2x4xf32>
  %y = loom.add %a, %b : tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32> -> tensor<1x2x2x4xf32>
  return %y : tensor<1x2x2x4xf32>
}

// -----

// concat(x1, -x2) rotates the other way; and halves sliced from another
// tensor than the one multiplied by cos do not rotate it.
// CHECK-LABEL: func.func @rotary_wrong_order
// CHECK-NOT: loom.rotary_embedding
// CHECK: return
func.func @rotary_wrong_order(%x: tensor<1x2x2x4xf32>, %z: tensor<1x2x2x4xf32>) -> (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) {
  %cos = loom.constant dense<[[1.0, 1.0, 1.0, 1.0], [0.5, 0.25, 0.5, 0.25]]> : tensor<2x4xf32>
  %sin = loom.constant dense<[[0.0, 0.0, 0.0, 0.0], [0.75, 0.125, 0.75, 0.125]]> : tensor<2x4xf32>
  %x1, %x2 = loom.split %x {axis = 3 : i64, sizes = array<i64: 2, 2>} : tensor<1x2x2x4xf32> -> tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
  %n = loom.neg %x2 : tensor<1x2x2x2xf32>
  %r = loom.concat %x1, %n {axis = 3 : i64} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x4xf32>
  %a = loom.mul %x, %cos : tensor<1x2x2x4xf32>, tensor<2x4xf32> -> tensor<1x2x2x4xf32>
  %b = loom.mul %r, %sin : tensor<1x2x2x4xf32>, tensor<2x4xf32> -> tensor<1x2x2x4xf32>
  %y = loom.add %a, %b : tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32> -> tensor<1x2x2x4xf32>
  %z1, %z2 = loom.split %z {axis = 3 : i64, sizes = array<i64: 2, 2>} : tensor<1x2x2x4xf32> -> tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
  %nz = loom.neg %z2 : tensor<1x2x2x2xf32>
  %rz = loom.concat %nz, %z1 {axis = 3 : i64} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x4xf32>
  %az = loom.mul %x, %cos : tensor<1x2x2x4xf32>, tensor<2x4xf32> -> tensor<1x2x2x4xf32>
  %bz = loom.mul %rz, %sin : tensor<1x2x2x4xf32>, tensor<2x4xf32> -> tensor<1x2x2x4xf32>
  %w = loom.add %az, %bz : tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32> -> tensor<1x2x2x4xf32>
  return %y, %w : tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>
}

// -----

// SwiGLU: silu(gate) * up in either order, after SiLU's own recognition.
// CHECK-LABEL: func.func @swiglu
// CHECK-SAME: %[[G:[^:]*]]: tensor<8x64xf32>, %[[U:[^:]*]]: tensor<8x64xf32>
// CHECK: %[[A:.*]] = loom.swiglu %[[G]], %[[U]] : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
// CHECK: %[[B:.*]] = loom.swiglu %[[U]], %[[G]] : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
// CHECK: return %[[A]], %[[B]]
func.func @swiglu(%g: tensor<8x64xf32>, %u: tensor<8x64xf32>) -> (tensor<8x64xf32>, tensor<8x64xf32>) {
  %s = loom.sigmoid %g : tensor<8x64xf32>
  %silu = loom.mul %g, %s : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  %a = loom.mul %silu, %u : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  %silu2 = loom.silu %u : tensor<8x64xf32>
  %b = loom.mul %g, %silu2 : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  return %a, %b : tensor<8x64xf32>, tensor<8x64xf32>
}

// -----

// Negative: a SiLU with another user stays (fusing it would compute it twice).
// CHECK-LABEL: func.func @swiglu_shared_silu
// CHECK-NOT: loom.swiglu
// CHECK: %[[S:.*]] = loom.silu
// CHECK: loom.mul %[[S]]
func.func @swiglu_shared_silu(%g: tensor<8xf32>, %u: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %s = loom.silu %g : tensor<8xf32>
  %a = loom.mul %s, %u : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %a, %s : tensor<8xf32>, tensor<8xf32>
}

// -----

// Mixture of experts as PyTorch exports it: top-2 routing normalized by the
// sum of the two weights, one-hot combine weights, every expert (SiLU MLP)
// on every token, weighted sum over experts (operands of the last product in
// either order).
// CHECK-LABEL: func.func @moe_top2
// CHECK-SAME: (%[[X:[^:]*]]: tensor<6x16xf32>, %[[P:[^:]*]]: tensor<6x4xf32>, %[[W1:[^:]*]]: tensor<4x16x32xf32>, %[[W2:[^:]*]]: tensor<4x32x16xf32>)
// CHECK-NOT: loom.one_hot
// CHECK: %[[Y:.*]] = loom.moe %[[X]], %[[P]], %[[W1]], %[[W2]] {activation = "silu", k = 2 : i64, normalize = true} : (tensor<6x16xf32>, tensor<6x4xf32>, tensor<4x16x32xf32>, tensor<4x32x16xf32>) -> tensor<6x16xf32>
// CHECK-NEXT: return %[[Y]]
func.func @moe_top2(%x: tensor<6x16xf32>, %p: tensor<6x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>) -> (tensor<6x16xf32>) {
  %k = loom.constant dense<2> : tensor<1xi64>
  %depth = loom.constant dense<4> : tensor<i64>
  %onoff = loom.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %shape = loom.constant dense<[4, 6, 16]> : tensor<3xi64>
  %v, %i = loom.topk %p, %k {axis = 1 : i64} : tensor<6x4xf32>, tensor<1xi64> -> tensor<6x2xf32>, tensor<6x2xi64>
  %vs = loom.reduce_sum %v {axes = array<i64: 1>} : tensor<6x2xf32> -> tensor<6x1xf32>
  %w = loom.div %v, %vs : tensor<6x2xf32>, tensor<6x1xf32> -> tensor<6x2xf32>
  %m = loom.one_hot %i, %depth, %onoff {axis = 2 : i64} : tensor<6x2xi64>, tensor<i64>, tensor<2xf32> -> tensor<6x2x?xf32>
  %wu = loom.unsqueeze %w {axes = array<i64: 2>} : tensor<6x2xf32> -> tensor<6x2x1xf32>
  %mw = loom.mul %m, %wu : tensor<6x2x?xf32>, tensor<6x2x1xf32> -> tensor<6x2x?xf32>
  %c = loom.reduce_sum %mw {axes = array<i64: 1>, keepdims = false} : tensor<6x2x?xf32> -> tensor<6x?xf32>
  %xu = loom.unsqueeze %x {axes = array<i64: 0>} : tensor<6x16xf32> -> tensor<1x6x16xf32>
  %xe = loom.expand %xu, %shape : (tensor<1x6x16xf32>, tensor<3xi64>) -> tensor<4x6x16xf32>
  %h = loom.matmul %xe, %w1 : tensor<4x6x16xf32>, tensor<4x16x32xf32> -> tensor<4x6x32xf32>
  %a = loom.silu %h : tensor<4x6x32xf32>
  %o = loom.matmul %a, %w2 : tensor<4x6x32xf32>, tensor<4x32x16xf32> -> tensor<4x6x16xf32>
  %ct = loom.transpose %c {perm = array<i64: 1, 0>} : tensor<6x?xf32> -> tensor<?x6xf32>
  %cu = loom.unsqueeze %ct {axes = array<i64: 2>} : tensor<?x6xf32> -> tensor<?x6x1xf32>
  %ow = loom.mul %cu, %o : tensor<?x6x1xf32>, tensor<4x6x16xf32> -> tensor<4x6x16xf32>
  %y = loom.reduce_sum %ow {axes = array<i64: 0>, keepdims = false} : tensor<4x6x16xf32> -> tensor<6x16xf32>
  return %y : tensor<6x16xf32>
}

// -----

// The top-k scores used as they are, ReLU experts.
// CHECK-LABEL: func.func @moe_relu_raw_weights
// CHECK: loom.moe %{{.*}} {activation = "relu", k = 2 : i64} :
func.func @moe_relu_raw_weights(%x: tensor<6x16xf32>, %p: tensor<6x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>) -> (tensor<6x16xf32>) {
  %k = loom.constant dense<2> : tensor<1xi64>
  %depth = loom.constant dense<4> : tensor<i64>
  %onoff = loom.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %shape = loom.constant dense<[4, 6, 16]> : tensor<3xi64>
  %v, %i = loom.topk %p, %k {axis = 1 : i64} : tensor<6x4xf32>, tensor<1xi64> -> tensor<6x2xf32>, tensor<6x2xi64>
  %m = loom.one_hot %i, %depth, %onoff {axis = 2 : i64} : tensor<6x2xi64>, tensor<i64>, tensor<2xf32> -> tensor<6x2x?xf32>
  %wu = loom.unsqueeze %v {axes = array<i64: 2>} : tensor<6x2xf32> -> tensor<6x2x1xf32>
  %mw = loom.mul %m, %wu : tensor<6x2x?xf32>, tensor<6x2x1xf32> -> tensor<6x2x?xf32>
  %c = loom.reduce_sum %mw {axes = array<i64: 1>, keepdims = false} : tensor<6x2x?xf32> -> tensor<6x?xf32>
  %xu = loom.unsqueeze %x {axes = array<i64: 0>} : tensor<6x16xf32> -> tensor<1x6x16xf32>
  %xe = loom.expand %xu, %shape : (tensor<1x6x16xf32>, tensor<3xi64>) -> tensor<4x6x16xf32>
  %h = loom.matmul %xe, %w1 : tensor<4x6x16xf32>, tensor<4x16x32xf32> -> tensor<4x6x32xf32>
  %a = loom.relu %h : tensor<4x6x32xf32>
  %o = loom.matmul %a, %w2 : tensor<4x6x32xf32>, tensor<4x32x16xf32> -> tensor<4x6x16xf32>
  %ct = loom.transpose %c {perm = array<i64: 1, 0>} : tensor<6x?xf32> -> tensor<?x6xf32>
  %cu = loom.unsqueeze %ct {axes = array<i64: 2>} : tensor<?x6xf32> -> tensor<?x6x1xf32>
  %ow = loom.mul %cu, %o : tensor<?x6x1xf32>, tensor<4x6x16xf32> -> tensor<4x6x16xf32>
  %y = loom.reduce_sum %ow {axes = array<i64: 0>, keepdims = false} : tensor<4x6x16xf32> -> tensor<6x16xf32>
  return %y : tensor<6x16xf32>
}

// -----

// Experts without an activation.
// CHECK-LABEL: func.func @moe_linear_experts
// CHECK: loom.moe %{{.*}} {k = 2 : i64, normalize = true} :
func.func @moe_linear_experts(%x: tensor<6x16xf32>, %p: tensor<6x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>) -> (tensor<6x16xf32>) {
  %k = loom.constant dense<2> : tensor<1xi64>
  %depth = loom.constant dense<4> : tensor<i64>
  %onoff = loom.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %shape = loom.constant dense<[4, 6, 16]> : tensor<3xi64>
  %v, %i = loom.topk %p, %k {axis = 1 : i64} : tensor<6x4xf32>, tensor<1xi64> -> tensor<6x2xf32>, tensor<6x2xi64>
  %vs = loom.reduce_sum %v {axes = array<i64: 1>} : tensor<6x2xf32> -> tensor<6x1xf32>
  %w = loom.div %v, %vs : tensor<6x2xf32>, tensor<6x1xf32> -> tensor<6x2xf32>
  %m = loom.one_hot %i, %depth, %onoff {axis = 2 : i64} : tensor<6x2xi64>, tensor<i64>, tensor<2xf32> -> tensor<6x2x?xf32>
  %wu = loom.unsqueeze %w {axes = array<i64: 2>} : tensor<6x2xf32> -> tensor<6x2x1xf32>
  %mw = loom.mul %m, %wu : tensor<6x2x?xf32>, tensor<6x2x1xf32> -> tensor<6x2x?xf32>
  %c = loom.reduce_sum %mw {axes = array<i64: 1>, keepdims = false} : tensor<6x2x?xf32> -> tensor<6x?xf32>
  %xu = loom.unsqueeze %x {axes = array<i64: 0>} : tensor<6x16xf32> -> tensor<1x6x16xf32>
  %xe = loom.expand %xu, %shape : (tensor<1x6x16xf32>, tensor<3xi64>) -> tensor<4x6x16xf32>
  %h = loom.matmul %xe, %w1 : tensor<4x6x16xf32>, tensor<4x16x32xf32> -> tensor<4x6x32xf32>
  %o = loom.matmul %h, %w2 : tensor<4x6x32xf32>, tensor<4x32x16xf32> -> tensor<4x6x16xf32>
  %ct = loom.transpose %c {perm = array<i64: 1, 0>} : tensor<6x?xf32> -> tensor<?x6xf32>
  %cu = loom.unsqueeze %ct {axes = array<i64: 2>} : tensor<?x6xf32> -> tensor<?x6x1xf32>
  %ow = loom.mul %cu, %o : tensor<?x6x1xf32>, tensor<4x6x16xf32> -> tensor<4x6x16xf32>
  %y = loom.reduce_sum %ow {axes = array<i64: 0>, keepdims = false} : tensor<4x6x16xf32> -> tensor<6x16xf32>
  return %y : tensor<6x16xf32>
}

// -----

// Negative: one-hot values [1, 0] weight the experts that were not chosen.
// CHECK-LABEL: func.func @moe_on_off_swapped
// CHECK-NOT: loom.moe
// CHECK: loom.one_hot
func.func @moe_on_off_swapped(%x: tensor<6x16xf32>, %p: tensor<6x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>) -> (tensor<6x16xf32>) {
  %k = loom.constant dense<2> : tensor<1xi64>
  %depth = loom.constant dense<4> : tensor<i64>
  %onoff = loom.constant dense<[1.0, 0.0]> : tensor<2xf32>
  %shape = loom.constant dense<[4, 6, 16]> : tensor<3xi64>
  %v, %i = loom.topk %p, %k {axis = 1 : i64} : tensor<6x4xf32>, tensor<1xi64> -> tensor<6x2xf32>, tensor<6x2xi64>
  %vs = loom.reduce_sum %v {axes = array<i64: 1>} : tensor<6x2xf32> -> tensor<6x1xf32>
  %w = loom.div %v, %vs : tensor<6x2xf32>, tensor<6x1xf32> -> tensor<6x2xf32>
  %m = loom.one_hot %i, %depth, %onoff {axis = 2 : i64} : tensor<6x2xi64>, tensor<i64>, tensor<2xf32> -> tensor<6x2x?xf32>
  %wu = loom.unsqueeze %w {axes = array<i64: 2>} : tensor<6x2xf32> -> tensor<6x2x1xf32>
  %mw = loom.mul %m, %wu : tensor<6x2x?xf32>, tensor<6x2x1xf32> -> tensor<6x2x?xf32>
  %c = loom.reduce_sum %mw {axes = array<i64: 1>, keepdims = false} : tensor<6x2x?xf32> -> tensor<6x?xf32>
  %xu = loom.unsqueeze %x {axes = array<i64: 0>} : tensor<6x16xf32> -> tensor<1x6x16xf32>
  %xe = loom.expand %xu, %shape : (tensor<1x6x16xf32>, tensor<3xi64>) -> tensor<4x6x16xf32>
  %h = loom.matmul %xe, %w1 : tensor<4x6x16xf32>, tensor<4x16x32xf32> -> tensor<4x6x32xf32>
  %a = loom.silu %h : tensor<4x6x32xf32>
  %o = loom.matmul %a, %w2 : tensor<4x6x32xf32>, tensor<4x32x16xf32> -> tensor<4x6x16xf32>
  %ct = loom.transpose %c {perm = array<i64: 1, 0>} : tensor<6x?xf32> -> tensor<?x6xf32>
  %cu = loom.unsqueeze %ct {axes = array<i64: 2>} : tensor<?x6xf32> -> tensor<?x6x1xf32>
  %ow = loom.mul %cu, %o : tensor<?x6x1xf32>, tensor<4x6x16xf32> -> tensor<4x6x16xf32>
  %y = loom.reduce_sum %ow {axes = array<i64: 0>, keepdims = false} : tensor<4x6x16xf32> -> tensor<6x16xf32>
  return %y : tensor<6x16xf32>
}

// -----

// Negative: routing to the lowest scores is not top-k routing.
// CHECK-LABEL: func.func @moe_smallest
// CHECK-NOT: loom.moe
// CHECK: loom.topk
func.func @moe_smallest(%x: tensor<6x16xf32>, %p: tensor<6x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>) -> (tensor<6x16xf32>) {
  %k = loom.constant dense<2> : tensor<1xi64>
  %depth = loom.constant dense<4> : tensor<i64>
  %onoff = loom.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %shape = loom.constant dense<[4, 6, 16]> : tensor<3xi64>
  %v, %i = loom.topk %p, %k {axis = 1 : i64, largest = false} : tensor<6x4xf32>, tensor<1xi64> -> tensor<6x2xf32>, tensor<6x2xi64>
  %vs = loom.reduce_sum %v {axes = array<i64: 1>} : tensor<6x2xf32> -> tensor<6x1xf32>
  %w = loom.div %v, %vs : tensor<6x2xf32>, tensor<6x1xf32> -> tensor<6x2xf32>
  %m = loom.one_hot %i, %depth, %onoff {axis = 2 : i64} : tensor<6x2xi64>, tensor<i64>, tensor<2xf32> -> tensor<6x2x?xf32>
  %wu = loom.unsqueeze %w {axes = array<i64: 2>} : tensor<6x2xf32> -> tensor<6x2x1xf32>
  %mw = loom.mul %m, %wu : tensor<6x2x?xf32>, tensor<6x2x1xf32> -> tensor<6x2x?xf32>
  %c = loom.reduce_sum %mw {axes = array<i64: 1>, keepdims = false} : tensor<6x2x?xf32> -> tensor<6x?xf32>
  %xu = loom.unsqueeze %x {axes = array<i64: 0>} : tensor<6x16xf32> -> tensor<1x6x16xf32>
  %xe = loom.expand %xu, %shape : (tensor<1x6x16xf32>, tensor<3xi64>) -> tensor<4x6x16xf32>
  %h = loom.matmul %xe, %w1 : tensor<4x6x16xf32>, tensor<4x16x32xf32> -> tensor<4x6x32xf32>
  %a = loom.silu %h : tensor<4x6x32xf32>
  %o = loom.matmul %a, %w2 : tensor<4x6x32xf32>, tensor<4x32x16xf32> -> tensor<4x6x16xf32>
  %ct = loom.transpose %c {perm = array<i64: 1, 0>} : tensor<6x?xf32> -> tensor<?x6xf32>
  %cu = loom.unsqueeze %ct {axes = array<i64: 2>} : tensor<?x6xf32> -> tensor<?x6x1xf32>
  %ow = loom.mul %cu, %o : tensor<?x6x1xf32>, tensor<4x6x16xf32> -> tensor<4x6x16xf32>
  %y = loom.reduce_sum %ow {axes = array<i64: 0>, keepdims = false} : tensor<4x6x16xf32> -> tensor<6x16xf32>
  return %y : tensor<6x16xf32>
}

// -----

// Negative: a one-hot over 3 classes cannot select among 4 experts.
// CHECK-LABEL: func.func @moe_depth_mismatch
// CHECK-NOT: loom.moe
// CHECK: loom.one_hot
func.func @moe_depth_mismatch(%x: tensor<6x16xf32>, %p: tensor<6x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>) -> (tensor<6x16xf32>) {
  %k = loom.constant dense<2> : tensor<1xi64>
  %depth = loom.constant dense<3> : tensor<i64>
  %onoff = loom.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %shape = loom.constant dense<[4, 6, 16]> : tensor<3xi64>
  %v, %i = loom.topk %p, %k {axis = 1 : i64} : tensor<6x4xf32>, tensor<1xi64> -> tensor<6x2xf32>, tensor<6x2xi64>
  %vs = loom.reduce_sum %v {axes = array<i64: 1>} : tensor<6x2xf32> -> tensor<6x1xf32>
  %w = loom.div %v, %vs : tensor<6x2xf32>, tensor<6x1xf32> -> tensor<6x2xf32>
  %m = loom.one_hot %i, %depth, %onoff {axis = 2 : i64} : tensor<6x2xi64>, tensor<i64>, tensor<2xf32> -> tensor<6x2x?xf32>
  %wu = loom.unsqueeze %w {axes = array<i64: 2>} : tensor<6x2xf32> -> tensor<6x2x1xf32>
  %mw = loom.mul %m, %wu : tensor<6x2x?xf32>, tensor<6x2x1xf32> -> tensor<6x2x?xf32>
  %c = loom.reduce_sum %mw {axes = array<i64: 1>, keepdims = false} : tensor<6x2x?xf32> -> tensor<6x?xf32>
  %xu = loom.unsqueeze %x {axes = array<i64: 0>} : tensor<6x16xf32> -> tensor<1x6x16xf32>
  %xe = loom.expand %xu, %shape : (tensor<1x6x16xf32>, tensor<3xi64>) -> tensor<4x6x16xf32>
  %h = loom.matmul %xe, %w1 : tensor<4x6x16xf32>, tensor<4x16x32xf32> -> tensor<4x6x32xf32>
  %a = loom.silu %h : tensor<4x6x32xf32>
  %o = loom.matmul %a, %w2 : tensor<4x6x32xf32>, tensor<4x32x16xf32> -> tensor<4x6x16xf32>
  %ct = loom.transpose %c {perm = array<i64: 1, 0>} : tensor<6x?xf32> -> tensor<?x6xf32>
  %cu = loom.unsqueeze %ct {axes = array<i64: 2>} : tensor<?x6xf32> -> tensor<?x6x1xf32>
  %ow = loom.mul %cu, %o : tensor<?x6x1xf32>, tensor<4x6x16xf32> -> tensor<4x6x16xf32>
  %y = loom.reduce_sum %ow {axes = array<i64: 0>, keepdims = false} : tensor<4x6x16xf32> -> tensor<6x16xf32>
  return %y : tensor<6x16xf32>
}

// -----

// Negative: the dense hidden activations are also returned, so they must
// be computed anyway.
// CHECK-LABEL: func.func @moe_hidden_used
// CHECK-NOT: loom.moe
// CHECK: loom.one_hot
func.func @moe_hidden_used(%x: tensor<6x16xf32>, %p: tensor<6x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>) -> (tensor<6x16xf32>, tensor<4x6x32xf32>) {
  %k = loom.constant dense<2> : tensor<1xi64>
  %depth = loom.constant dense<4> : tensor<i64>
  %onoff = loom.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %shape = loom.constant dense<[4, 6, 16]> : tensor<3xi64>
  %v, %i = loom.topk %p, %k {axis = 1 : i64} : tensor<6x4xf32>, tensor<1xi64> -> tensor<6x2xf32>, tensor<6x2xi64>
  %vs = loom.reduce_sum %v {axes = array<i64: 1>} : tensor<6x2xf32> -> tensor<6x1xf32>
  %w = loom.div %v, %vs : tensor<6x2xf32>, tensor<6x1xf32> -> tensor<6x2xf32>
  %m = loom.one_hot %i, %depth, %onoff {axis = 2 : i64} : tensor<6x2xi64>, tensor<i64>, tensor<2xf32> -> tensor<6x2x?xf32>
  %wu = loom.unsqueeze %w {axes = array<i64: 2>} : tensor<6x2xf32> -> tensor<6x2x1xf32>
  %mw = loom.mul %m, %wu : tensor<6x2x?xf32>, tensor<6x2x1xf32> -> tensor<6x2x?xf32>
  %c = loom.reduce_sum %mw {axes = array<i64: 1>, keepdims = false} : tensor<6x2x?xf32> -> tensor<6x?xf32>
  %xu = loom.unsqueeze %x {axes = array<i64: 0>} : tensor<6x16xf32> -> tensor<1x6x16xf32>
  %xe = loom.expand %xu, %shape : (tensor<1x6x16xf32>, tensor<3xi64>) -> tensor<4x6x16xf32>
  %h = loom.matmul %xe, %w1 : tensor<4x6x16xf32>, tensor<4x16x32xf32> -> tensor<4x6x32xf32>
  %a = loom.silu %h : tensor<4x6x32xf32>
  %o = loom.matmul %a, %w2 : tensor<4x6x32xf32>, tensor<4x32x16xf32> -> tensor<4x6x16xf32>
  %ct = loom.transpose %c {perm = array<i64: 1, 0>} : tensor<6x?xf32> -> tensor<?x6xf32>
  %cu = loom.unsqueeze %ct {axes = array<i64: 2>} : tensor<?x6xf32> -> tensor<?x6x1xf32>
  %ow = loom.mul %cu, %o : tensor<?x6x1xf32>, tensor<4x6x16xf32> -> tensor<4x6x16xf32>
  %y = loom.reduce_sum %ow {axes = array<i64: 0>, keepdims = false} : tensor<4x6x16xf32> -> tensor<6x16xf32>
  return %y, %h : tensor<6x16xf32>, tensor<4x6x32xf32>
}

// -----

// Each token gathers its two experts' weights by index and runs only those
// (GELU experts, normalized weights, the weights before the outputs).
// CHECK-LABEL: func.func @moe_gathered_weights
// CHECK-SAME: (%[[X:[^:]*]]: tensor<8x16xf32>, %[[P:[^:]*]]: tensor<8x4xf32>, %[[W1:[^:]*]]: tensor<4x16x32xf32>, %[[W2:[^:]*]]: tensor<4x32x16xf32>)
// CHECK-NOT: loom.gather
// CHECK: %[[Y:.*]] = loom.moe %[[X]], %[[P]], %[[W1]], %[[W2]] {activation = "gelu", k = 2 : i64, normalize = true}
// CHECK-NEXT: return %[[Y]]
func.func @moe_gathered_weights(%x: tensor<8x16xf32>, %p: tensor<8x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>) -> tensor<8x16xf32> {
  %k = loom.constant dense<2> : tensor<1xi64>
  %v, %i = loom.topk %p, %k {axis = 1 : i64} : tensor<8x4xf32>, tensor<1xi64> -> tensor<8x2xf32>, tensor<8x2xi64>
  %j = loom.add %i, %i : tensor<8x2xi64>, tensor<8x2xi64> -> tensor<8x2xi64>
  %g1 = loom.gather %w1, %i : tensor<4x16x32xf32>, tensor<8x2xi64> -> tensor<8x2x16x32xf32>
  %g2 = loom.gather %w2, %i : tensor<4x32x16xf32>, tensor<8x2xi64> -> tensor<8x2x32x16xf32>
  %xu = loom.unsqueeze %x {axes = array<i64: 1, 2>} : tensor<8x16xf32> -> tensor<8x1x1x16xf32>
  %h = loom.matmul %xu, %g1 : tensor<8x1x1x16xf32>, tensor<8x2x16x32xf32> -> tensor<8x2x1x32xf32>
  %a = loom.gelu %h : tensor<8x2x1x32xf32>
  %o = loom.matmul %a, %g2 : tensor<8x2x1x32xf32>, tensor<8x2x32x16xf32> -> tensor<8x2x1x16xf32>
  %os = loom.squeeze %o {axes = array<i64: 2>} : tensor<8x2x1x16xf32> -> tensor<8x2x16xf32>
  %s = loom.reduce_sum %v {axes = array<i64: 1>} : tensor<8x2xf32> -> tensor<8x1xf32>
  %w = loom.div %v, %s : tensor<8x2xf32>, tensor<8x1xf32> -> tensor<8x2xf32>
  %wu = loom.unsqueeze %w {axes = array<i64: 2>} : tensor<8x2xf32> -> tensor<8x2x1xf32>
  %m = loom.mul %wu, %os : tensor<8x2x1xf32>, tensor<8x2x16xf32> -> tensor<8x2x16xf32>
  %y = loom.reduce_sum %m {axes = array<i64: 1>, keepdims = false} : tensor<8x2x16xf32> -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// Negative: the output weights are gathered by other indices than the input
// weights.
// CHECK-LABEL: func.func @moe_gathered_other_indices
// CHECK-NOT: loom.moe
// CHECK: loom.gather
func.func @moe_gathered_other_indices(%x: tensor<8x16xf32>, %p: tensor<8x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>) -> tensor<8x16xf32> {
  %k = loom.constant dense<2> : tensor<1xi64>
  %v, %i = loom.topk %p, %k {axis = 1 : i64} : tensor<8x4xf32>, tensor<1xi64> -> tensor<8x2xf32>, tensor<8x2xi64>
  %j = loom.add %i, %i : tensor<8x2xi64>, tensor<8x2xi64> -> tensor<8x2xi64>
  %g1 = loom.gather %w1, %i : tensor<4x16x32xf32>, tensor<8x2xi64> -> tensor<8x2x16x32xf32>
  %g2 = loom.gather %w2, %j : tensor<4x32x16xf32>, tensor<8x2xi64> -> tensor<8x2x32x16xf32>
  %xu = loom.unsqueeze %x {axes = array<i64: 1, 2>} : tensor<8x16xf32> -> tensor<8x1x1x16xf32>
  %h = loom.matmul %xu, %g1 : tensor<8x1x1x16xf32>, tensor<8x2x16x32xf32> -> tensor<8x2x1x32xf32>
  %a = loom.gelu %h : tensor<8x2x1x32xf32>
  %o = loom.matmul %a, %g2 : tensor<8x2x1x32xf32>, tensor<8x2x32x16xf32> -> tensor<8x2x1x16xf32>
  %os = loom.squeeze %o {axes = array<i64: 2>} : tensor<8x2x1x16xf32> -> tensor<8x2x16xf32>
  %s = loom.reduce_sum %v {axes = array<i64: 1>} : tensor<8x2xf32> -> tensor<8x1xf32>
  %w = loom.div %v, %s : tensor<8x2xf32>, tensor<8x1xf32> -> tensor<8x2xf32>
  %wu = loom.unsqueeze %w {axes = array<i64: 2>} : tensor<8x2xf32> -> tensor<8x2x1xf32>
  %m = loom.mul %wu, %os : tensor<8x2x1xf32>, tensor<8x2x16xf32> -> tensor<8x2x16xf32>
  %y = loom.reduce_sum %m {axes = array<i64: 1>, keepdims = false} : tensor<8x2x16xf32> -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// Gated (SwiGLU) experts in the dense form: silu(x @ w_gate) * (x @ w_up),
// both on the same expanded tokens.
// CHECK-LABEL: func.func @moe_dense_swiglu
// CHECK-SAME: (%[[X:[^:]*]]: tensor<6x16xf32>, %[[P:[^:]*]]: tensor<6x4xf32>, %[[WG:[^:]*]]: tensor<4x16x32xf32>, %[[WU:[^:]*]]: tensor<4x16x32xf32>, %[[WD:[^:]*]]: tensor<4x32x16xf32>)
// CHECK: %[[Y:.*]] = loom.moe %[[X]], %[[P]], %[[WU]], %[[WD]] gate %[[WG]] {activation = "silu", k = 2 : i64}
// CHECK-NEXT: return %[[Y]]
func.func @moe_dense_swiglu(%x: tensor<6x16xf32>, %p: tensor<6x4xf32>, %wg: tensor<4x16x32xf32>, %wu: tensor<4x16x32xf32>, %wd: tensor<4x32x16xf32>) -> tensor<6x16xf32> {
  %k = loom.constant dense<2> : tensor<1xi64>
  %depth = loom.constant dense<4> : tensor<i64>
  %onoff = loom.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %shape = loom.constant dense<[4, 6, 16]> : tensor<3xi64>
  %v, %i = loom.topk %p, %k {axis = 1 : i64} : tensor<6x4xf32>, tensor<1xi64> -> tensor<6x2xf32>, tensor<6x2xi64>
  %m = loom.one_hot %i, %depth, %onoff {axis = 2 : i64} : tensor<6x2xi64>, tensor<i64>, tensor<2xf32> -> tensor<6x2x?xf32>
  %vu = loom.unsqueeze %v {axes = array<i64: 2>} : tensor<6x2xf32> -> tensor<6x2x1xf32>
  %mw = loom.mul %m, %vu : tensor<6x2x?xf32>, tensor<6x2x1xf32> -> tensor<6x2x?xf32>
  %c = loom.reduce_sum %mw {axes = array<i64: 1>, keepdims = false} : tensor<6x2x?xf32> -> tensor<6x?xf32>
  %xu = loom.unsqueeze %x {axes = array<i64: 0>} : tensor<6x16xf32> -> tensor<1x6x16xf32>
  %xe = loom.expand %xu, %shape : (tensor<1x6x16xf32>, tensor<3xi64>) -> tensor<4x6x16xf32>
  %g = loom.matmul %xe, %wg : tensor<4x6x16xf32>, tensor<4x16x32xf32> -> tensor<4x6x32xf32>
  %u = loom.matmul %xe, %wu : tensor<4x6x16xf32>, tensor<4x16x32xf32> -> tensor<4x6x32xf32>
  %sig = loom.sigmoid %g : tensor<4x6x32xf32>
  %silu = loom.mul %g, %sig : tensor<4x6x32xf32>, tensor<4x6x32xf32> -> tensor<4x6x32xf32>
  %h = loom.mul %silu, %u : tensor<4x6x32xf32>, tensor<4x6x32xf32> -> tensor<4x6x32xf32>
  %o = loom.matmul %h, %wd : tensor<4x6x32xf32>, tensor<4x32x16xf32> -> tensor<4x6x16xf32>
  %ct = loom.transpose %c {perm = array<i64: 1, 0>} : tensor<6x?xf32> -> tensor<?x6xf32>
  %cu = loom.unsqueeze %ct {axes = array<i64: 2>} : tensor<?x6xf32> -> tensor<?x6x1xf32>
  %ow = loom.mul %o, %cu : tensor<4x6x16xf32>, tensor<?x6x1xf32> -> tensor<4x6x16xf32>
  %y = loom.reduce_sum %ow {axes = array<i64: 0>, keepdims = false} : tensor<4x6x16xf32> -> tensor<6x16xf32>
  return %y : tensor<6x16xf32>
}
