// RUN: loom-opt %s -loom-precision=precision=fp16 -split-input-file | FileCheck %s --check-prefixes=CHECK,FP16
// RUN: loom-opt %s -loom-precision=precision=bf16 -split-input-file | FileCheck %s --check-prefixes=CHECK,BF16

// A matmul takes its operands in the low type; its result is cast back.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>)
// FP16: %[[A16:.*]] = loom.cast %[[A]] : tensor<4x8xf32> to tensor<4x8xf16>
// FP16: %[[B16:.*]] = loom.cast %[[B]] : tensor<8x16xf32> to tensor<8x16xf16>
// FP16: %[[Y:.*]] = loom.matmul %[[A16]], %[[B16]] : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x16xf16>
// FP16: %[[R:.*]] = loom.cast %[[Y]] : tensor<4x16xf16> to tensor<4x16xf32>
// BF16: %[[A16:.*]] = loom.cast %[[A]] : tensor<4x8xf32> to tensor<4x8xbf16>
// BF16: %[[B16:.*]] = loom.cast %[[B]] : tensor<8x16xf32> to tensor<8x16xbf16>
// BF16: %[[Y:.*]] = loom.matmul %[[A16]], %[[B16]] : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xbf16>
// BF16: %[[R:.*]] = loom.cast %[[Y]] : tensor<4x16xbf16> to tensor<4x16xf32>
// CHECK: return %[[R]] : tensor<4x16xf32>
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %0 = loom.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// The bias of a convolution is cast too; the attributes are kept.
// CHECK-LABEL: func.func @conv
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x4x4xf32>, %[[W:.*]]: tensor<3x2x1x1xf32>, %[[B:.*]]: tensor<3xf32>)
// FP16-DAG: %[[X16:.*]] = loom.cast %[[X]] : tensor<1x2x4x4xf32> to tensor<1x2x4x4xf16>
// FP16-DAG: %[[W16:.*]] = loom.cast %[[W]] : tensor<3x2x1x1xf32> to tensor<3x2x1x1xf16>
// FP16-DAG: %[[B16:.*]] = loom.cast %[[B]] : tensor<3xf32> to tensor<3xf16>
// FP16: %[[Y:.*]] = loom.conv %[[X16]], %[[W16]], %[[B16]] {dilations = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf16>, tensor<3x2x1x1xf16>, tensor<3xf16>) -> tensor<1x3x4x4xf16>
// FP16: %[[R:.*]] = loom.cast %[[Y]] : tensor<1x3x4x4xf16> to tensor<1x3x4x4xf32>
// BF16: loom.conv {{.*}} : (tensor<1x2x4x4xbf16>, tensor<3x2x1x1xbf16>, tensor<3xbf16>) -> tensor<1x3x4x4xbf16>
// BF16: %[[R:.*]] = loom.cast %{{.*}} : tensor<1x3x4x4xbf16> to tensor<1x3x4x4xf32>
// CHECK: return %[[R]]
func.func @conv(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>, %b: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
  %0 = loom.conv %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  return %0 : tensor<1x3x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @conv_transpose
// FP16: %[[Y:.*]] = loom.conv_transpose %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x3x3xf16>, tensor<4x2x3x3xf16>) -> tensor<1x2x7x7xf16>
// FP16: %[[R:.*]] = loom.cast %[[Y]] : tensor<1x2x7x7xf16> to tensor<1x2x7x7xf32>
// BF16: %[[Y:.*]] = loom.conv_transpose {{.*}} : (tensor<1x4x3x3xbf16>, tensor<4x2x3x3xbf16>) -> tensor<1x2x7x7xbf16>
// BF16: %[[R:.*]] = loom.cast %[[Y]] : tensor<1x2x7x7xbf16> to tensor<1x2x7x7xf32>
// CHECK: return %[[R]]
func.func @conv_transpose(%x: tensor<1x4x3x3xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x2x7x7xf32> {
  %0 = loom.conv_transpose %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>, group = 1 : i64} : (tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x7x7xf32>
  return %0 : tensor<1x2x7x7xf32>
}

// -----

// Query, key and value are cast; the additive mask stays f32 (f32's large
// negative "masked" values would overflow f16 to -inf).
// CHECK-LABEL: func.func @attention
// CHECK-SAME: %[[M:[^:]*]]: tensor<4x4xf32>)
// FP16: %[[Y:.*]] = loom.attention %{{.*}}, %{{.*}}, %{{.*}}, %[[M]] {scale = 2.500000e-01 : f32} : (tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>, tensor<1x2x4x8xf16>, tensor<4x4xf32>) -> tensor<1x2x4x8xf16>
// FP16: %[[R:.*]] = loom.cast %[[Y]] : tensor<1x2x4x8xf16> to tensor<1x2x4x8xf32>
// BF16: %[[Y:.*]] = loom.attention %{{.*}}, %{{.*}}, %{{.*}}, %[[M]] {scale = 2.500000e-01 : f32} : (tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<4x4xf32>) -> tensor<1x2x4x8xbf16>
// BF16: %[[R:.*]] = loom.cast %[[Y]] : tensor<1x2x4x8xbf16> to tensor<1x2x4x8xf32>
// CHECK: return %[[R]]
func.func @attention(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %m: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %0 = loom.attention %q, %k, %v, %m {scale = 2.500000e-01 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<4x4xf32>) -> tensor<1x2x4x8xf32>
  return %0 : tensor<1x2x4x8xf32>
}

// -----

// Normalizations and softmax stay f32.
// CHECK-LABEL: func.func @f32_ops
// CHECK-NOT: loom.cast
// CHECK: loom.layer_norm %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NOT: loom.cast
// CHECK: loom.softmax %{{.*}} {axis = 1 : i64} : tensor<2x8xf32>
// CHECK-NOT: loom.cast
// CHECK: return
func.func @f32_ops(%x: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  %0 = loom.layer_norm %x, %g {axis = 1 : i64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %1 = loom.softmax %0 {axis = 1 : i64} : tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}

// -----

// Weights become low-precision constants, rounded to nearest-even: 0.1 is
// 0.0999755859375 in f16 and 0.10009765625 in bf16; 65504 (f16's largest)
// is 65536 in bf16; 3e-8 is f16's smallest subnormal.
// CHECK-LABEL: func.func @dense_weight
// FP16: %[[W:.*]] = loom.constant dense<{{\[}}[1.000000e+00, 9.997550e-02], [6.550400e+04, 5.960460e-08]]> : tensor<2x2xf16>
// FP16: loom.matmul %{{.*}}, %[[W]] : tensor<2x2xf16>, tensor<2x2xf16> -> tensor<2x2xf16>
// BF16: %[[W:.*]] = loom.constant dense<{{\[}}[1.000000e+00, 1.000980e-01], [6.553600e+04, 3.003520e-08]]> : tensor<2x2xbf16>
// BF16: loom.matmul %{{.*}}, %[[W]] : tensor<2x2xbf16>, tensor<2x2xbf16> -> tensor<2x2xbf16>
// CHECK-NOT: tensor<2x2xf32> to
func.func @dense_weight(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = loom.constant dense<[[1.0, 0.1], [65504.0, 3.0e-8]]> : tensor<2x2xf32>
  %0 = loom.matmul %a, %w : tensor<2x2xf32>, tensor<2x2xf32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// Splats stay splats, whatever their size.
// CHECK-LABEL: func.func @splat_weight
// FP16: loom.constant dense<9.997550e-02> : tensor<64x64xf16>
// BF16: loom.constant dense<1.000980e-01> : tensor<64x64xbf16>
// CHECK-NOT: loom.constant
func.func @splat_weight(%a: tensor<2x64xf32>) -> tensor<2x64xf32> {
  %w = loom.constant dense<0.1> : tensor<64x64xf32>
  %0 = loom.matmul %a, %w : tensor<2x64xf32>, tensor<64x64xf32> -> tensor<2x64xf32>
  return %0 : tensor<2x64xf32>
}

// -----

// Resource weights get a new blob of 2-byte elements: [1, 0.1, 1.5, -2] is
// 3C00 2E66 3E00 C000 in f16 and 3F80 3DCD 3FC0 C000 in bf16 (little-endian
// after the 4-byte alignment header).
// CHECK-LABEL: func.func @resource_weight
// FP16: %[[W:.*]] = loom.constant dense_resource<w_f16> : tensor<2x2xf16>
// FP16: loom.matmul %{{.*}}, %[[W]] : tensor<1x2xf16>, tensor<2x2xf16>
// BF16: %[[W:.*]] = loom.constant dense_resource<w_bf16> : tensor<2x2xbf16>
// BF16: loom.matmul %{{.*}}, %[[W]] : tensor<1x2xbf16>, tensor<2x2xbf16>
// CHECK-NOT: dense_resource<w>
// FP16: w_f16: "0x08000000003C662E003E00C0"
// BF16: w_bf16: "0x08000000803FCD3DC03F00C0"
func.func @resource_weight(%a: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %w = loom.constant dense_resource<w> : tensor<2x2xf32>
  %0 = loom.matmul %a, %w : tensor<1x2xf32>, tensor<2x2xf32> -> tensor<1x2xf32>
  return %0 : tensor<1x2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w: "0x040000000000803FCDCCCC3D0000C03F000000C0"
    }
  }
#-}

// -----

// Two contractions in a row: the cast back to f32 after the first and the
// cast to the low type before the second cancel.
// CHECK-LABEL: func.func @chain
// FP16: %[[Y:.*]] = loom.matmul %{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<8x8xf16> -> tensor<4x8xf16>
// FP16-NOT: loom.cast %[[Y]]
// FP16: %[[Z:.*]] = loom.matmul %[[Y]], %{{.*}} : tensor<4x8xf16>, tensor<8x8xf16> -> tensor<4x8xf16>
// FP16: %[[R:.*]] = loom.cast %[[Z]] : tensor<4x8xf16> to tensor<4x8xf32>
// BF16: %[[Y:.*]] = loom.matmul %{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<8x8xbf16> -> tensor<4x8xbf16>
// BF16-NOT: loom.cast %[[Y]]
// BF16: %[[Z:.*]] = loom.matmul %[[Y]], %{{.*}} : tensor<4x8xbf16>, tensor<8x8xbf16> -> tensor<4x8xbf16>
// BF16: %[[R:.*]] = loom.cast %[[Z]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK: return %[[R]]
func.func @chain(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>, %c: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %0 = loom.matmul %a, %b : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %1 = loom.matmul %0, %c : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// A low -> f32 -> low round trip is exact and goes.
// CHECK-LABEL: func.func @low_round_trip
// CHECK-SAME: (%[[Y:.*]]: tensor<4xf16>)
// CHECK-NOT: loom.cast
// CHECK: return %[[Y]] : tensor<4xf16>
func.func @low_round_trip(%y: tensor<4xf16>) -> tensor<4xf16> {
  %0 = loom.cast %y : tensor<4xf16> to tensor<4xf32>
  %1 = loom.cast %0 : tensor<4xf32> to tensor<4xf16>
  return %1 : tensor<4xf16>
}

// -----

// f32 -> f16 -> f32 rounds and stays.
// CHECK-LABEL: func.func @f32_round_trip_kept
// CHECK: %[[A:.*]] = loom.cast %{{.*}} : tensor<4xf32> to tensor<4xf16>
// CHECK: %[[B:.*]] = loom.cast %[[A]] : tensor<4xf16> to tensor<4xf32>
// CHECK: return %[[B]]
func.func @f32_round_trip_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = loom.cast %x : tensor<4xf32> to tensor<4xf16>
  %1 = loom.cast %0 : tensor<4xf16> to tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Programs already in a 16-bit type are left alone.
// CHECK-LABEL: func.func @f16_program
// CHECK-NOT: loom.cast
// CHECK: loom.matmul %{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x16xf16>
// CHECK-NOT: loom.cast
// CHECK: return
func.func @f16_program(%a: tensor<4x8xf16>, %b: tensor<8x16xf16>) -> tensor<4x16xf16> {
  %0 = loom.matmul %a, %b : tensor<4x8xf16>, tensor<8x16xf16> -> tensor<4x16xf16>
  return %0 : tensor<4x16xf16>
}

// -----

// Integer contractions are not floating point and stay as they are.
// CHECK-LABEL: func.func @integer_matmul
// CHECK-NOT: loom.cast
// CHECK: loom.matmul %{{.*}}, %{{.*}} : tensor<4x8xi32>, tensor<8x16xi32> -> tensor<4x16xi32>
// CHECK-NOT: loom.cast
// CHECK: return
func.func @integer_matmul(%a: tensor<4x8xi32>, %b: tensor<8x16xi32>) -> tensor<4x16xi32> {
  %0 = loom.matmul %a, %b : tensor<4x8xi32>, tensor<8x16xi32> -> tensor<4x16xi32>
  return %0 : tensor<4x16xi32>
}

// -----

// Casts to types other than the low one are not the pass's business.
// CHECK-LABEL: func.func @other_casts
// CHECK: loom.cast %{{.*}} : tensor<2xf32> to tensor<2xf64>
func.func @other_casts() -> tensor<2xf64> {
  %c = loom.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = loom.cast %c : tensor<2xf32> to tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// An operand used twice is cast once.
// CHECK-LABEL: func.func @square
// FP16: %[[A:.*]] = loom.cast %{{.*}} : tensor<4x4xf32> to tensor<4x4xf16>
// BF16: %[[A:.*]] = loom.cast %{{.*}} : tensor<4x4xf32> to tensor<4x4xbf16>
// CHECK-NEXT: loom.matmul %[[A]], %[[A]]
func.func @square(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = loom.matmul %a, %a : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
