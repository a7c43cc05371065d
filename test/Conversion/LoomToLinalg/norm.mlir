// RUN: loom-opt %s --split-input-file --convert-loom-to-linalg | FileCheck %s

// Mean, then variance of the centered input, then one generic that
// normalizes and applies scale and bias broadcast over the trailing axes.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[STAT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
// CHECK-DAG: #[[PARAM:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @layer_norm
// CHECK-SAME: (%[[X:.+]]: tensor<2x8x64xf32>, %[[G:.+]]: tensor<64xf32>, %[[B:.+]]: tensor<64xf32>)
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[X]] : tensor<2x8x64xf32>) outs(%{{.+}} : tensor<2x8x1xf32>)
// CHECK: %[[MEAN:.+]] = linalg.generic {{.+}} ins(%[[SUM]] : tensor<2x8x1xf32>)
// CHECK: %[[SQ:.+]] = linalg.generic {{.+}} ins(%[[X]], %[[MEAN]] : tensor<2x8x64xf32>, tensor<2x8x1xf32>)
// CHECK: %[[SQSUM:.+]] = linalg.generic {{.+}} ins(%[[SQ]] : tensor<2x8x64xf32>)
// CHECK: %[[VAR:.+]] = linalg.generic {{.+}} ins(%[[SQSUM]] : tensor<2x8x1xf32>)
// CHECK: %[[Y:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[STAT]], #[[STAT]], #[[PARAM]], #[[PARAM]], #[[ID]]], {{.+}} ins(%[[X]], %[[MEAN]], %[[VAR]], %[[G]], %[[B]] :
// CHECK: ^bb0(%[[XV:.+]]: f32, %[[MV:.+]]: f32, %[[VV:.+]]: f32, %[[GV:.+]]: f32, %[[BV:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[EPS:.+]] = arith.constant 9.99999974E-6 : f32
// CHECK: %[[C:.+]] = arith.subf %[[XV]], %[[MV]]
// CHECK: %[[VE:.+]] = arith.addf %[[VV]], %[[EPS]]
// CHECK: %[[INV:.+]] = math.rsqrt %[[VE]]
// CHECK: %[[N:.+]] = arith.mulf %[[C]], %[[INV]]
// CHECK: %[[S:.+]] = arith.mulf %[[N]], %[[GV]]
// CHECK: %[[R:.+]] = arith.addf %[[S]], %[[BV]]
// CHECK: linalg.yield %[[R]]
// CHECK: return %[[Y]]
func.func @layer_norm(%x: tensor<2x8x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<2x8x64xf32> {
  %y = loom.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  return %y : tensor<2x8x64xf32>
}

// -----

// CHECK-LABEL: func.func @rms_norm
// CHECK: arith.mulf
// CHECK: math.rsqrt
func.func @rms_norm(%x: tensor<2x8x64xf32>, %g: tensor<64xf32>) -> tensor<2x8x64xf32> {
  %y = loom.rms_norm %x, %g {axis = -1 : i64, epsilon = 1.0e-06 : f32} : tensor<2x8x64xf32>, tensor<64xf32> -> tensor<2x8x64xf32>
  return %y : tensor<2x8x64xf32>
}

// -----

// Per-channel parameters become [C, 1, 1] views.
// CHECK-LABEL: func.func @batch_norm
// CHECK-COUNT-4: tensor.expand_shape %{{.+}} {{.+}} output_shape [3, 1, 1]
// CHECK: math.rsqrt
func.func @batch_norm(%x: tensor<1x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
  %y = loom.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f32} : tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// A 16-bit softmax sums its exponentials in f32 and rounds once.
// CHECK-LABEL: func.func @softmax_bf16
// CHECK: arith.extf %{{.+}} : bf16 to f32
// CHECK: math.exp %{{.+}} : f32
// CHECK: arith.truncf %{{.+}} : f32 to bf16
func.func @softmax_bf16(%x: tensor<2x16xbf16>) -> tensor<2x16xbf16> {
  %0 = loom.softmax %x {axis = 1 : i64} : tensor<2x16xbf16>
  return %0 : tensor<2x16xbf16>
}
