// RUN: loom-opt %s --split-input-file --convert-loom-to-linalg | FileCheck %s

// Each operand minus its zero point, widened to i32 (unsigned operands
// zero-extend, signed ones sign-extend; per-column zero points broadcast
// over the rows); an i32 linalg.matmul sums the products exactly; the
// epilogue scales in f64 as the reference does, acc * (sa * sw[n]), and
// rounds once to f32.
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[SCALAR3:.+]] = affine_map<(d0, d1, d2) -> ()>
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[COL3:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @qmatmul_per_channel
// CHECK-SAME: (%[[A:.+]]: tensor<2x3x16xi8>, %[[W:.+]]: tensor<16x8xi8>, %[[SA:.+]]: tensor<f32>, %[[SW:.+]]: tensor<8xf32>, %[[ZA:.+]]: tensor<i8>, %[[ZW:.+]]: tensor<8xi8>)
// CHECK: %[[CA:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[SCALAR3]], #[[ID3]]], {{.+}}} ins(%[[A]], %[[ZA]] : tensor<2x3x16xi8>, tensor<i8>) outs(%{{.+}} : tensor<2x3x16xi32>)
// CHECK: ^bb0(%[[X:.+]]: i8, %[[Z:.+]]: i8, %{{.+}}: i32):
// CHECK: %[[XW:.+]] = arith.extui %[[X]] : i8 to i32
// CHECK: %[[ZW32:.+]] = arith.extui %[[Z]] : i8 to i32
// CHECK: %[[D:.+]] = arith.subi %[[XW]], %[[ZW32]] : i32
// CHECK: linalg.yield %[[D]] : i32
// CHECK: %[[CW:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[COL]], #[[ID2]]], {{.+}}} ins(%[[W]], %[[ZW]] : tensor<16x8xi8>, tensor<8xi8>) outs(%{{.+}} : tensor<16x8xi32>)
// CHECK: arith.extsi %{{.+}} : i8 to i32
// CHECK: arith.extsi %{{.+}} : i8 to i32
// CHECK: arith.subi
// CHECK: %[[ROWS:.+]] = tensor.expand_shape %{{.+}} output_shape [6, 16] : tensor<96xi32> into tensor<6x16xi32>
// CHECK: %[[ZERO:.+]] = arith.constant 0 : i32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : i32) outs(%{{.+}} : tensor<6x8xi32>)
// CHECK: %[[MM:.+]] = linalg.matmul ins(%[[ROWS]], %[[CW]] : tensor<6x16xi32>, tensor<16x8xi32>) outs(%[[INIT]] : tensor<6x8xi32>)
// CHECK: %[[ACC:.+]] = tensor.expand_shape %{{.+}} output_shape [2, 3, 8] : tensor<48xi32> into tensor<2x3x8xi32>
// CHECK: %[[Y:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[SCALAR3]], #[[COL3]], #[[ID3]]], {{.+}}} ins(%[[ACC]], %[[SA]], %[[SW]] : tensor<2x3x8xi32>, tensor<f32>, tensor<8xf32>) outs(%{{.+}} : tensor<2x3x8xf32>)
// CHECK: ^bb0(%[[I:.+]]: i32, %[[S0:.+]]: f32, %[[S1:.+]]: f32, %{{.+}}: f32):
// CHECK: %[[S0D:.+]] = arith.extf %[[S0]] : f32 to f64
// CHECK: %[[S1D:.+]] = arith.extf %[[S1]] : f32 to f64
// CHECK: %[[S:.+]] = arith.mulf %[[S0D]], %[[S1D]] : f64
// CHECK: %[[ID:.+]] = arith.sitofp %[[I]] : i32 to f64
// CHECK: %[[P:.+]] = arith.mulf %[[ID]], %[[S]] : f64
// CHECK: %[[R:.+]] = arith.truncf %[[P]] : f64 to f32
// CHECK: linalg.yield %[[R]] : f32
// CHECK: return %[[Y]]
func.func @qmatmul_per_channel(%a: tensor<2x3x16xui8>, %w: tensor<16x8xi8>, %sa: tensor<f32>, %sw: tensor<8xf32>, %za: tensor<ui8>, %zw: tensor<8xi8>) -> tensor<2x3x8xf32> {
  %y = loom.qmatmul %a, %w scales(%sa, %sw) zero_points(%za, %zw) : (tensor<2x3x16xui8>, tensor<16x8xi8>, tensor<f32>, tensor<8xf32>, tensor<ui8>, tensor<8xi8>) -> tensor<2x3x8xf32>
  return %y : tensor<2x3x8xf32>
}

// -----

// Without zero points |q| <= 128, so 40000 products of int8 still fit i32.
// CHECK-LABEL: func.func @qmatmul_no_zero_points
// CHECK: arith.extsi %{{.+}} : i8 to i32
// CHECK-NEXT: linalg.yield
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<1x40000xi32>, tensor<40000x2xi32>) outs(%{{.+}} : tensor<1x2xi32>)
func.func @qmatmul_no_zero_points(%a: tensor<1x40000xi8>, %w: tensor<40000x2xi8>, %sa: tensor<f32>, %sw: tensor<f32>) -> tensor<1x2xf32> {
  %y = loom.qmatmul %a, %w scales(%sa, %sw) : (tensor<1x40000xi8>, tensor<40000x2xi8>, tensor<f32>, tensor<f32>) -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

// -----

// With zero points |q - zp| <= 255: i32 holds sums of up to 33025 products;
// longer reductions accumulate in i64.
// CHECK-LABEL: func.func @qmatmul_long
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<1x40000xi64>, tensor<40000x2xi64>) outs(%{{.+}} : tensor<1x2xi64>)
// CHECK: arith.sitofp %{{.+}} : i64 to f64
func.func @qmatmul_long(%a: tensor<1x40000xui8>, %w: tensor<40000x2xi8>, %sa: tensor<f32>, %sw: tensor<f32>, %za: tensor<ui8>, %zw: tensor<i8>) -> tensor<1x2xf32> {
  %y = loom.qmatmul %a, %w scales(%sa, %sw) zero_points(%za, %zw) : (tensor<1x40000xui8>, tensor<40000x2xi8>, tensor<f32>, tensor<f32>, tensor<ui8>, tensor<i8>) -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

// -----

// A 2-D ungrouped convolution: the centered input is padded with zeros
// (after centering, so padding adds nothing), per-output-channel weight
// zero points broadcast as [M, 1, 1, 1], an i32 linalg.conv_2d_nchw_fchw,
// and the epilogue adds the bias in f64 after scaling.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[SCALAR:.+]] = affine_map<(d0, d1, d2, d3) -> ()>
// CHECK-DAG: #[[WZP:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, 0, 0, 0)>
// CHECK-DAG: #[[CHAN:.+]] = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
// CHECK-LABEL: func.func @qconv_bias
// CHECK-SAME: (%[[X:.+]]: tensor<1x3x8x8xi8>, %[[W:.+]]: tensor<16x3x3x3xi8>, %[[SX:.+]]: tensor<f32>, %[[SW:.+]]: tensor<16xf32>, %[[ZX:.+]]: tensor<i8>, %[[ZW:.+]]: tensor<16xi8>, %[[B:.+]]: tensor<16xf32>)
// CHECK: %[[CX:.+]] = linalg.generic {{.+}} ins(%[[X]], %[[ZX]] : tensor<1x3x8x8xi8>, tensor<i8>) outs(%{{.+}} : tensor<1x3x8x8xi32>)
// CHECK: arith.extui
// CHECK: %[[ZW4:.+]] = tensor.expand_shape %[[ZW]] {{.+}} output_shape [16, 1, 1, 1]
// CHECK: %[[CW:.+]] = linalg.generic {indexing_maps = [#[[ID]], #[[WZP]], #[[ID]]], {{.+}}} ins(%[[W]], %[[ZW4]] : tensor<16x3x3x3xi8>, tensor<16x1x1x1xi8>) outs(%{{.+}} : tensor<16x3x3x3xi32>)
// CHECK: arith.extsi
// CHECK: %[[PZERO:.+]] = arith.constant 0 : i32
// CHECK: %[[PAD:.+]] = tensor.pad %[[CX]] low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: tensor.yield %[[PZERO]] : i32
// CHECK: %[[CONV:.+]] = linalg.conv_2d_nchw_fchw {{.+}} ins(%[[PAD]], %[[CW]] : tensor<1x3x10x10xi32>, tensor<16x3x3x3xi32>) outs(%{{.+}} : tensor<1x16x8x8xi32>)
// CHECK: %[[SW3:.+]] = tensor.expand_shape %[[SW]] {{.+}} output_shape [16, 1, 1]
// CHECK: %[[B3:.+]] = tensor.expand_shape %[[B]] {{.+}} output_shape [16, 1, 1]
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[SCALAR]], #[[CHAN]], #[[CHAN]], #[[ID]]], {{.+}}} ins(%[[CONV]], %[[SX]], %[[SW3]], %[[B3]] : {{.+}}) outs(%{{.+}} : tensor<1x16x8x8xf32>)
// CHECK: %[[S:.+]] = arith.mulf %{{.+}}, %{{.+}} : f64
// CHECK: %[[ACC:.+]] = arith.sitofp %{{.+}} : i32 to f64
// CHECK: %[[V:.+]] = arith.mulf %[[ACC]], %[[S]] : f64
// CHECK: %[[BD:.+]] = arith.extf %{{.+}} : f32 to f64
// CHECK: %[[SUM:.+]] = arith.addf %[[V]], %[[BD]] : f64
// CHECK: arith.truncf %[[SUM]] : f64 to f32
func.func @qconv_bias(%x: tensor<1x3x8x8xui8>, %w: tensor<16x3x3x3xi8>, %sx: tensor<f32>, %sw: tensor<16xf32>, %zx: tensor<ui8>, %zw: tensor<16xi8>, %b: tensor<16xf32>) -> tensor<1x16x8x8xf32> {
  %y = loom.qconv %x, %w scales(%sx, %sw) zero_points(%zx, %zw) bias(%b) {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xui8>, tensor<16x3x3x3xi8>, tensor<f32>, tensor<16xf32>, tensor<ui8>, tensor<16xi8>, tensor<16xf32>) -> tensor<1x16x8x8xf32>
  return %y : tensor<1x16x8x8xf32>
}

// -----

// Grouped and strided: an i32 generic with window dimensions whose input
// channel is (m floordiv M/group) * C/group + c.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, (d1 floordiv 3) * 2 + d4, d2 * 2 + d5, d3 * 2 + d6)>
// CHECK-DAG: #[[WT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @qconv_grouped
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[WT]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%{{.+}}, %{{.+}} : tensor<1x4x9x9xi32>, tensor<6x2x3x3xi32>) outs(%{{.+}} : tensor<1x6x4x4xi32>)
// CHECK: ^bb0(%[[P:.+]]: i32, %[[Q:.+]]: i32, %[[ACC:.+]]: i32):
// CHECK: %[[M:.+]] = arith.muli %[[P]], %[[Q]] : i32
// CHECK: %[[S:.+]] = arith.addi %[[ACC]], %[[M]] : i32
// CHECK: linalg.yield %[[S]] : i32
// CHECK: arith.truncf %{{.+}} : f64 to f32
func.func @qconv_grouped(%x: tensor<1x4x9x9xi8>, %w: tensor<6x2x3x3xi8>, %sx: tensor<f32>, %sw: tensor<f32>) -> tensor<1x6x4x4xf32> {
  %y = loom.qconv %x, %w scales(%sx, %sw) {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x9x9xi8>, tensor<6x2x3x3xi8>, tensor<f32>, tensor<f32>) -> tensor<1x6x4x4xf32>
  return %y : tensor<1x6x4x4xf32>
}

// -----

// f8E4M3FN tensors travel as their bits (i8). Quantize divides, then
// encodes on the f32 bits: the significand shifted to 3 mantissa bits (more
// below the least normal exponent, -6), rounded half to even on the dropped
// bits, codes past the largest (0x7E, 448) saturated, NaN to its code.
// Dequantize decodes the bits exactly. An fp8 qmatmul decodes its operands
// to f64 and sums the products there (exactly), then scales as above.
// CHECK-LABEL: func.func @fp8
// CHECK-SAME: (%{{.+}}: tensor<4xf32>, %{{.+}}: tensor<f32>, %[[W:.+]]: tensor<4x2xi8>, %{{.+}}: tensor<2xf32>) -> (tensor<4xf32>, tensor<1x2xf32>)
// CHECK: %[[Q:.+]] = linalg.generic {{.+}} outs(%{{.+}} : tensor<4xi8>)
// CHECK: arith.divf
// CHECK: arith.bitcast %{{.+}} : f32 to i32
// CHECK: arith.shrui
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: arith.cmpi ugt
// CHECK: arith.cmpi sgt
// CHECK: arith.cmpf uno
// CHECK: arith.trunci %{{.+}} : i32 to i8
// CHECK: linalg.generic {{.+}} ins(%[[Q]], %{{.+}} : tensor<4xi8>, tensor<f32>) outs(%{{.+}} : tensor<4xf32>)
// CHECK: arith.extui %{{.+}} : i8 to i32
// CHECK: arith.bitcast %{{.+}} : i32 to f32
// CHECK: arith.mulf
// CHECK: %[[Q2:.+]] = tensor.expand_shape %[[Q]]
// CHECK: %[[A:.+]] = linalg.generic {{.+}} ins(%[[Q2]] : tensor<1x4xi8>) outs(%{{.+}} : tensor<1x4xf64>)
// CHECK: arith.extf %{{.+}} : f32 to f64
// CHECK: %[[B:.+]] = linalg.generic {{.+}} ins(%[[W]] : tensor<4x2xi8>) outs(%{{.+}} : tensor<4x2xf64>)
// CHECK: linalg.matmul ins(%[[A]], %[[B]] : tensor<1x4xf64>, tensor<4x2xf64>) outs(%{{.+}} : tensor<1x2xf64>)
// CHECK: arith.mulf %{{.+}}, %{{.+}} : f64
// CHECK: arith.truncf %{{.+}} : f64 to f32
func.func @fp8(%x: tensor<4xf32>, %s: tensor<f32>, %w: tensor<4x2xf8E4M3FN>, %sw: tensor<2xf32>) -> (tensor<4xf32>, tensor<1x2xf32>) {
  %q = loom.quantize %x, %s : (tensor<4xf32>, tensor<f32>) -> tensor<4xf8E4M3FN>
  %d = loom.dequantize %q, %s : (tensor<4xf8E4M3FN>, tensor<f32>) -> tensor<4xf32>
  %q2 = loom.unsqueeze %q {axes = array<i64: 0>} : tensor<4xf8E4M3FN> -> tensor<1x4xf8E4M3FN>
  %y = loom.qmatmul %q2, %w scales(%s, %sw) : (tensor<1x4xf8E4M3FN>, tensor<4x2xf8E4M3FN>, tensor<f32>, tensor<2xf32>) -> tensor<1x2xf32>
  return %d, %y : tensor<4xf32>, tensor<1x2xf32>
}

// -----

// Constant weights are centred and widened at compile time: the product
// reads an i32 constant (which the CPU target packs once) instead of
// widening the weight on every call. Per-output-channel zero points of a
// convolution weight read inside a loom.fusion; per-column zero points of
// an unsigned matmul weight.
// CHECK-LABEL: func.func @constant_weights
// CHECK: %[[CW:.+]] = arith.constant dense<{{\[\[\[\[}}1]], {{\[\[}}-2]]], {{\[\[\[}}2]], {{\[\[}}3]]], {{\[\[\[}}6]], {{\[\[}}-5]]]]> : tensor<3x2x1x1xi32>
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%{{.+}}, %[[CW]] : tensor<1x2x4x4xi32>, tensor<3x2x1x1xi32>)
// CHECK: %[[MW:.+]] = arith.constant dense<{{\[\[}}-1, 254], [1, 0]]> : tensor<2x2xi32>
// CHECK: linalg.matmul ins(%{{.+}}, %[[MW]] : tensor<16x2xi32>, tensor<2x2xi32>)
func.func @constant_weights(%x: tensor<1x2x4x4xui8>, %sx: tensor<f32>, %zx: tensor<ui8>, %a: tensor<16x2xui8>) -> (tensor<1x3x4x4xf32>, tensor<16x2xf32>) {
  %w = loom.constant dense<[[[[1]], [[-2]]], [[[3]], [[4]]], [[[5]], [[-6]]]]> : tensor<3x2x1x1xi8>
  %sw = loom.constant dense<[0.5, 0.25, 2.0]> : tensor<3xf32>
  %zw = loom.constant dense<[0, 1, -1]> : tensor<3xi8>
  %y = loom.fusion "epilogue" ins(%x, %w, %sx, %sw, %zx, %zw : tensor<1x2x4x4xui8>, tensor<3x2x1x1xi8>, tensor<f32>, tensor<3xf32>, tensor<ui8>, tensor<3xi8>) -> tensor<1x3x4x4xf32> {
  ^bb0(%bx: tensor<1x2x4x4xui8>, %bw: tensor<3x2x1x1xi8>, %bsx: tensor<f32>, %bsw: tensor<3xf32>, %bzx: tensor<ui8>, %bzw: tensor<3xi8>):
    %c = loom.qconv %bx, %bw scales(%bsx, %bsw) zero_points(%bzx, %bzw) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x4x4xui8>, tensor<3x2x1x1xi8>, tensor<f32>, tensor<3xf32>, tensor<ui8>, tensor<3xi8>) -> tensor<1x3x4x4xf32>
    loom.yield %c : tensor<1x3x4x4xf32>
  }
  %m = loom.constant dense<[[1, 255], [3, 1]]> : tensor<2x2xui8>
  %zm = loom.constant dense<[2, 1]> : tensor<2xui8>
  %sm = loom.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %z = loom.qmatmul %a, %m scales(%sx, %sm) zero_points(%zx, %zm) : (tensor<16x2xui8>, tensor<2x2xui8>, tensor<f32>, tensor<2xf32>, tensor<ui8>, tensor<2xui8>) -> tensor<16x2xf32>
  return %y, %z : tensor<1x3x4x4xf32>, tensor<16x2xf32>
}

// -----

// Constant scales are multiplied, and a constant bias widened, at compile
// time in the f64 operations the epilogue would perform (0.5 * [0.25,
// 0.125] and the bias [3, -7] as f64): per element the code only
// converts the sum, multiplies and adds.
// CHECK-LABEL: func.func @qconv_constant_scales
// CHECK-DAG: %[[SCALE:.+]] = arith.constant dense<{{\[\[\[}}1.250000e-01]], {{\[\[}}6.250000e-02]]]> : tensor<2x1x1xf64>
// CHECK-DAG: %[[BIAS:.+]] = arith.constant dense<{{\[\[\[}}3.000000e+00]], {{\[\[}}-7.000000e+00]]]> : tensor<2x1x1xf64>
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %[[SCALE]], %[[BIAS]] : tensor<1x2x4x4xi32>, tensor<2x1x1xf64>, tensor<2x1x1xf64>)
// CHECK-NEXT: ^bb0(%[[ACC:.+]]: i32, %[[S:.+]]: f64, %[[B:.+]]: f64, %{{.+}}: f32):
// CHECK-NEXT: %[[A:.+]] = arith.sitofp %[[ACC]] : i32 to f64
// CHECK-NEXT: %[[V:.+]] = arith.mulf %[[A]], %[[S]] : f64
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[V]], %[[B]] : f64
// CHECK-NEXT: arith.truncf %[[SUM]] : f64 to f32
func.func @qconv_constant_scales(%x: tensor<1x1x4x4xi8>, %w: tensor<2x1x1x1xi8>) -> tensor<1x2x4x4xf32> {
  %sx = loom.constant dense<0.5> : tensor<f32>
  %sw = loom.constant dense<[0.25, 0.125]> : tensor<2xf32>
  %b = loom.constant dense<[3.0, -7.0]> : tensor<2xf32>
  %y = loom.qconv %x, %w scales(%sx, %sw) bias(%b) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x4x4xi8>, tensor<2x1x1x1xi8>, tensor<f32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  return %y : tensor<1x2x4x4xf32>
}
