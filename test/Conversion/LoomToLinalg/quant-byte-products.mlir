// RUN: loom-opt %s --split-input-file --convert-loom-to-linalg=byte-products=true | FileCheck %s
// RUN: loom-opt %s --split-input-file --convert-loom-to-linalg | FileCheck %s --check-prefix=WIDENED

// A u8 activation times a constant s8 weight with zero weight zero points:
// the product keeps both as bytes (rows collapsed to [6, 5]) and widens
// them in its body, unsigned and signed; the activation's zero point 3
// becomes the epilogue's correction 3 * colsum(w) = [3 * 25, 3 * -148],
// subtracted in i32 before the f64 scaling.
// CHECK-LABEL: func.func @qmatmul_bytes
// CHECK: %[[W:.+]] = arith.constant dense<{{\[\[}}1, -2], [3, -4], [5, -6], [7, -8], [9, -128]]> : tensor<5x2xi8>
// CHECK: %[[PRODUCT:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.+}}, %[[W]] : tensor<6x5xi8>, tensor<5x2xi8>) outs(%{{.+}} : tensor<6x2xi32>)
// CHECK: ^bb0(%[[A:.+]]: i8, %[[B:.+]]: i8, %[[ACC:.+]]: i32):
// CHECK-NEXT: %[[AW:.+]] = arith.extui %[[A]] : i8 to i32
// CHECK-NEXT: %[[BW:.+]] = arith.extsi %[[B]] : i8 to i32
// CHECK-NEXT: %[[M:.+]] = arith.muli %[[AW]], %[[BW]] : i32
// CHECK-NEXT: %[[S:.+]] = arith.addi %[[ACC]], %[[M]] : i32
// CHECK-NEXT: linalg.yield %[[S]] : i32
// CHECK: %[[CORRECTION:.+]] = arith.constant dense<[75, -444]> : tensor<2xi32>
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %{{.+}}, %{{.+}}, %[[CORRECTION]] : tensor<2x3x2xi32>, tensor<f32>, tensor<f32>, tensor<2xi32>)
// CHECK: ^bb0(%[[SUM:.+]]: i32, %{{.+}}: f32, %{{.+}}: f32, %[[C:.+]]: i32, %{{.+}}: f32):
// CHECK-NEXT: arith.subi %[[SUM]], %[[C]] : i32
// Without the option: centred and widened operands, as before.
// WIDENED-LABEL: func.func @qmatmul_bytes
// WIDENED: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<6x5xi32>, tensor<5x2xi32>)
func.func @qmatmul_bytes(%a: tensor<2x3x5xui8>, %sa: tensor<f32>, %sw: tensor<f32>) -> tensor<2x3x2xf32> {
  %w = loom.constant dense<[[1, -2], [3, -4], [5, -6], [7, -8], [9, -128]]> : tensor<5x2xi8>
  %za = loom.constant dense<3> : tensor<ui8>
  %zw = loom.constant dense<0> : tensor<i8>
  %y = loom.qmatmul %a, %w scales(%sa, %sw) zero_points(%za, %zw) : (tensor<2x3x5xui8>, tensor<5x2xi8>, tensor<f32>, tensor<f32>, tensor<ui8>, tensor<i8>) -> tensor<2x3x2xf32>
  return %y : tensor<2x3x2xf32>
}

// -----

// A 2-D convolution: the byte input is padded with its zero point (10),
// the generic has conv_2d_nchw_fchw's maps and the byte body, and the
// correction is 10 * (the sum of each filter) per output channel.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
// CHECK-DAG: #[[FILTER:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @qconv_bytes
// CHECK: %[[ZP:.+]] = arith.constant 10 : i8
// CHECK: %[[PAD:.+]] = tensor.pad %{{.+}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[ZP]] : i8
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[FILTER]], #[[OUT]]], {{.+}}} ins(%[[PAD]], %{{.+}} : tensor<1x1x6x6xi8>, tensor<2x1x3x3xi8>) outs(%{{.+}} : tensor<1x2x4x4xi32>)
// CHECK: arith.extui
// CHECK: arith.constant dense<{{\[\[\[}}450]], {{\[\[}}-450]]]> : tensor<2x1x1xi32>
// WIDENED-LABEL: func.func @qconv_bytes
// WIDENED: linalg.conv_2d_nchw_fchw
func.func @qconv_bytes(%x: tensor<1x1x4x4xui8>, %sx: tensor<f32>, %sw: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %w = loom.constant dense<[[[[1, 2, 3], [4, 5, 6], [7, 8, 9]]], [[[-1, -2, -3], [-4, -5, -6], [-7, -8, -9]]]]> : tensor<2x1x3x3xi8>
  %zx = loom.constant dense<10> : tensor<ui8>
  %zw = loom.constant dense<0> : tensor<2xi8>
  %y = loom.qconv %x, %w scales(%sx, %sw) zero_points(%zx, %zw) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x1x4x4xui8>, tensor<2x1x3x3xi8>, tensor<f32>, tensor<2xf32>, tensor<ui8>, tensor<2xi8>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}

// -----

// Not byte products: a weight with a non-zero zero point (its centred
// values leave the signed byte range), a signed activation, and a weight
// that is not a constant keep the widened form.
// CHECK-LABEL: func.func @not_bytes
// CHECK-NOT: : tensor<4x8xi8>, tensor<8x4xi8>) outs(
// CHECK-COUNT-3: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<4x8xi32>, tensor<8x4xi32>)
func.func @not_bytes(%a: tensor<4x8xui8>, %s: tensor<4x8xi8>, %wv: tensor<8x4xi8>, %sa: tensor<f32>, %sw: tensor<f32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %w = loom.constant dense<1> : tensor<8x4xi8>
  %za = loom.constant dense<3> : tensor<ui8>
  %zw = loom.constant dense<1> : tensor<i8>
  %zero = loom.constant dense<0> : tensor<i8>
  %y0 = loom.qmatmul %a, %w scales(%sa, %sw) zero_points(%za, %zw) : (tensor<4x8xui8>, tensor<8x4xi8>, tensor<f32>, tensor<f32>, tensor<ui8>, tensor<i8>) -> tensor<4x4xf32>
  %y1 = loom.qmatmul %s, %w scales(%sa, %sw) zero_points(%zero, %zero) : (tensor<4x8xi8>, tensor<8x4xi8>, tensor<f32>, tensor<f32>, tensor<i8>, tensor<i8>) -> tensor<4x4xf32>
  %y2 = loom.qmatmul %a, %wv scales(%sa, %sw) zero_points(%za, %zero) : (tensor<4x8xui8>, tensor<8x4xi8>, tensor<f32>, tensor<f32>, tensor<ui8>, tensor<i8>) -> tensor<4x4xf32>
  return %y0, %y1, %y2 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}
