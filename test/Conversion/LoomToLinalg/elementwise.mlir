// RUN: loom-opt %s --split-input-file --convert-loom-to-linalg | FileCheck %s

// Operands broadcast numpy-style through their indexing maps: a size-1
// dimension reads index 0, missing leading dimensions are dropped.
// CHECK-DAG: #[[COL0:.+]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[LAST:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @add_broadcast
// CHECK-SAME: (%[[A:.+]]: tensor<4x1xf32>, %[[B:.+]]: tensor<3xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty() : tensor<4x3xf32>
// CHECK: %[[R:.+]] = linalg.generic {indexing_maps = [#[[COL0]], #[[LAST]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]] : tensor<4x1xf32>, tensor<3xf32>) outs(%[[INIT]] : tensor<4x3xf32>)
// CHECK: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[S:.+]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK: linalg.yield %[[S]] : f32
// CHECK: return %[[R]]
func.func @add_broadcast(%a: tensor<4x1xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = loom.add %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Integer forms of the arithmetic ops.
// CHECK-LABEL: func.func @integer_ops
// CHECK: arith.divsi
// CHECK: arith.maxsi
func.func @integer_ops(%a: tensor<5xi32>, %b: tensor<5xi32>) -> tensor<5xi32> {
  %0 = loom.div %a, %b : tensor<5xi32>, tensor<5xi32> -> tensor<5xi32>
  %1 = loom.relu %0 : tensor<5xi32>
  return %1 : tensor<5xi32>
}

// -----

// CHECK-LABEL: func.func @gelu_erf
// CHECK: ^bb0(%[[X:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[HX:.+]] = arith.mulf %[[HALF]], %[[X]]
// CHECK: %[[RSQRT2:.+]] = arith.constant 0.707106769 : f32
// CHECK: %[[SX:.+]] = arith.mulf %[[X]], %[[RSQRT2]]
// CHECK: %[[E:.+]] = math.erf %[[SX]]
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[P:.+]] = arith.addf %[[ONE]], %[[E]]
// CHECK: %[[G:.+]] = arith.mulf %[[HX]], %[[P]]
// CHECK: linalg.yield %[[G]]
func.func @gelu_erf(%a: tensor<5xf32>) -> tensor<5xf32> {
  %0 = loom.gelu %a : tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// CHECK-LABEL: func.func @gelu_tanh
// CHECK: arith.constant 4.471500e-02 : f32
// CHECK: math.tanh
func.func @gelu_tanh(%a: tensor<5xf32>) -> tensor<5xf32> {
  %0 = loom.gelu %a {approximate = "tanh"} : tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Comparisons produce i1; a rank-0 operand broadcasts with an empty map.
// CHECK-DAG: #[[SCALAR:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @less
// CHECK: linalg.generic {indexing_maps = [#{{.+}}, #[[SCALAR]], #{{.+}}]
// CHECK: ^bb0(%[[X:.+]]: f32, %[[Y:.+]]: f32, %{{.+}}: i1):
// CHECK: %[[C:.+]] = arith.cmpf olt, %[[X]], %[[Y]] : f32
// CHECK: linalg.yield %[[C]] : i1
func.func @less(%a: tensor<2x3xf32>, %b: tensor<f32>) -> tensor<2x3xi1> {
  %0 = loom.less %a, %b : tensor<2x3xf32>, tensor<f32> -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// CHECK-LABEL: func.func @where
// CHECK: ^bb0(%[[C:.+]]: i1, %[[T:.+]]: f32, %[[F:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[S:.+]] = arith.select %[[C]], %[[T]], %[[F]] : f32
// CHECK: linalg.yield %[[S]]
func.func @where(%c: tensor<2x1xi1>, %a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = loom.where %c, %a, %b : tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @casts
// CHECK: arith.fptosi %{{.+}} : f32 to i64
// CHECK: arith.cmpi ne
// CHECK: arith.uitofp %{{.+}} : i1 to f16
func.func @casts(%a: tensor<4xf32>) -> tensor<4xf16> {
  %0 = loom.cast %a : tensor<4xf32> to tensor<4xi64>
  %1 = loom.cast %0 : tensor<4xi64> to tensor<4xi1>
  %2 = loom.cast %1 : tensor<4xi1> to tensor<4xf16>
  return %2 : tensor<4xf16>
}

// -----

// Python-style modulo: the remainder takes the divisor's sign. A zero
// divisor anywhere is reported first (a reduction, then the runtime's
// check); the loop divides by 1 where the divisor would trap (zero, or
// -1 under the most negative dividend).
// CHECK-LABEL: func.func @mod
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]
// CHECK: arith.cmpi eq
// CHECK: arith.ori
// CHECK: scf.if
// CHECK: call @loom_rt_check_failed
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.+]]: i64, %[[Y:.+]]: i64, %{{.+}}: i64):
// CHECK: %[[SAFE:.+]] = arith.select %{{.+}}, %{{.+}}, %[[Y]] : i64
// CHECK: %[[R:.+]] = arith.remsi %[[X]], %[[SAFE]] : i64
// CHECK: %[[ADJ:.+]] = arith.addi %[[R]], %[[Y]]
// CHECK: arith.select %{{.+}}, %[[ADJ]], %[[R]]
func.func @mod(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
  %0 = loom.mod %a, %b : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// SwiGLU: silu(gate) * up in one generic, the up operand broadcast.
// CHECK-LABEL: func.func @swiglu
// CHECK: linalg.generic
// CHECK: ^bb0(%[[G:.+]]: f32, %[[U:.+]]: f32, %{{.+}}: f32):
// CHECK: math.exp
// CHECK: %[[SILU:.+]] = arith.mulf %[[G]], %{{.+}} : f32
// CHECK: %[[Y:.+]] = arith.mulf %[[SILU]], %[[U]] : f32
// CHECK: linalg.yield %[[Y]] : f32
func.func @swiglu(%g: tensor<4x8xf32>, %u: tensor<8xf32>) -> tensor<4x8xf32> {
  %0 = loom.swiglu %g, %u : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Unsigned tensors become signless (the signature too); the ops whose
// meaning depends on the sign take their unsigned forms.
// CHECK-LABEL: func.func @unsigned
// CHECK-SAME: (%{{.+}}: tensor<4xi8>, %{{.+}}: tensor<4xi8>) -> (tensor<4xf32>, tensor<4xi1>, tensor<4xi8>)
// CHECK: arith.divui
// CHECK: arith.uitofp %{{.+}} : i8 to f32
// CHECK: arith.cmpi ult
// CHECK: arith.shrui
func.func @unsigned(%a: tensor<4xui8>, %b: tensor<4xui8>) -> (tensor<4xf32>, tensor<4xi1>, tensor<4xui8>) {
  %0 = loom.div %a, %b : tensor<4xui8>, tensor<4xui8> -> tensor<4xui8>
  %1 = loom.cast %0 : tensor<4xui8> to tensor<4xf32>
  %2 = loom.less %a, %b : tensor<4xui8>, tensor<4xui8> -> tensor<4xi1>
  %3 = loom.bit_shift %a, %b {direction = "RIGHT"} : tensor<4xui8>, tensor<4xui8> -> tensor<4xui8>
  return %1, %2, %3 : tensor<4xf32>, tensor<4xi1>, tensor<4xui8>
}

// -----

// Quantize to ui8: divide, round half to even, add the zero point,
// saturate to [0, 255], NaN to 0, convert; dequantize: (q - zp) * scale.
// CHECK-LABEL: func.func @quantize
// CHECK: linalg.generic
// CHECK: arith.divf
// CHECK: math.roundeven
// CHECK: arith.uitofp
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.cmpf uno
// CHECK: arith.select
// CHECK: arith.fptoui
// CHECK: linalg.generic
// CHECK: arith.uitofp
// CHECK: arith.subf
// CHECK: arith.mulf
func.func @quantize(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<4xf32> {
  %q = loom.quantize %x, %s, %z : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
  %d = loom.dequantize %q, %s, %z : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}
