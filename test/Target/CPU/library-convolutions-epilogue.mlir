// RUN: loom-opt %s --split-input-file --loom-cpu-library-convolutions | FileCheck %s

// On buffers, as after the memory plan: a marked convolution into a
// zero-filled arena view, then a bias per channel and ReLU into another,
// disjoint view. The library applies both on the way out (flags: constant
// filter 2 | bias 4 | ReLU 8 = 14), writing the epilogue's buffer; the
// fill and the epilogue are gone.
// CHECK-DAG: memref.global "private" constant @__loom_conv_desc_0 : memref<20xi64> = dense<[1, 1, 8, 16, 16, 16, 3, 3, 14, 14, 1, 1, 1, 1, 0, 0, 0, 0, 1, 14]>
// CHECK-LABEL: func.func @bias_relu
// CHECK-NOT: linalg.fill
// CHECK: %[[BIAS:.+]] = memref.extract_aligned_pointer_as_index %{{.+}} : memref<16x1x1xf32>
// CHECK: %[[RESULT:.+]] = memref.extract_aligned_pointer_as_index %[[VIEW:.+]] : memref<1x16x14x14xf32>
// CHECK: call @loom_rt_conv2d_f32(
// CHECK-NOT: linalg.generic
// CHECK: return
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
memref.global "private" constant @w : memref<16x8x3x3xf32> = dense<0.5>
memref.global "private" constant @b : memref<16x1x1xf32> = dense<0.25>
func.func @bias_relu(%x: memref<1x8x16x16xf32>, %out: memref<1x16x14x14xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c12544 = arith.constant 12544 : index
  %arena = memref.alloc() : memref<25088xi8>
  %w = memref.get_global @w : memref<16x8x3x3xf32>
  %b = memref.get_global @b : memref<16x1x1xf32>
  %conv = memref.view %arena[%c0][] : memref<25088xi8> to memref<1x16x14x14xf32>
  linalg.fill ins(%zero : f32) outs(%conv : memref<1x16x14x14xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, loom.library = "onednn", strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x8x16x16xf32>, memref<16x8x3x3xf32>) outs(%conv : memref<1x16x14x14xf32>)
  %result = memref.view %arena[%c12544][] : memref<25088xi8> to memref<1x16x14x14xf32>
  linalg.generic {indexing_maps = [#id, #channel, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv, %b : memref<1x16x14x14xf32>, memref<16x1x1xf32>) outs(%result : memref<1x16x14x14xf32>) {
  ^bb0(%c: f32, %bias: f32, %o: f32):
    %s = arith.addf %c, %bias : f32
    %p = arith.cmpf ogt, %s, %zero : f32
    %r = arith.select %p, %s, %zero : f32
    linalg.yield %r : f32
  }
  memref.copy %result, %out : memref<1x16x14x14xf32> to memref<1x16x14x14xf32>
  return
}

// -----

// Not fused: the epilogue's buffer overlaps the convolution's input (the
// memory plan may reuse an input's bytes once the convolution has read
// them, but a fused library call would still be reading), or the epilogue
// adds a residual too. The convolution alone goes to the library (flags 2,
// a null bias) and the epilogues stay.
// CHECK-LABEL: func.func @not_fused
// CHECK: %[[NOBIAS:.+]] = arith.constant 0 : i64
// CHECK: call @loom_rt_conv2d_f32(%{{.+}}, %{{.+}}, %[[NOBIAS]],
// CHECK: linalg.generic
// CHECK: call @loom_rt_conv2d_f32(%{{.+}}, %{{.+}}, %{{.+}},
// CHECK: linalg.generic
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>
memref.global "private" constant @w : memref<16x8x3x3xf32> = dense<0.5>
memref.global "private" constant @b : memref<16x1x1xf32> = dense<0.25>
func.func @not_fused(%out: memref<1x16x14x14xf32>, %residual: memref<1x16x14x14xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c8192 = arith.constant 8192 : index
  %c20736 = arith.constant 20736 : index
  %arena = memref.alloc() : memref<40000xi8>
  %w = memref.get_global @w : memref<16x8x3x3xf32>
  %b = memref.get_global @b : memref<16x1x1xf32>
  %x = memref.view %arena[%c0][] : memref<40000xi8> to memref<1x8x16x16xf32>
  %conv = memref.view %arena[%c8192][] : memref<40000xi8> to memref<1x16x14x14xf32>
  linalg.fill ins(%zero : f32) outs(%conv : memref<1x16x14x14xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, loom.library = "onednn", strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x8x16x16xf32>, memref<16x8x3x3xf32>) outs(%conv : memref<1x16x14x14xf32>)
  %overlapping = memref.view %arena[%c0][] : memref<40000xi8> to memref<1x16x14x14xf32>
  linalg.generic {indexing_maps = [#id, #channel, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv, %b : memref<1x16x14x14xf32>, memref<16x1x1xf32>) outs(%overlapping : memref<1x16x14x14xf32>) {
  ^bb0(%c: f32, %bias: f32, %o: f32):
    %s = arith.addf %c, %bias : f32
    linalg.yield %s : f32
  }
  %conv2 = memref.view %arena[%c20736][] : memref<40000xi8> to memref<1x16x14x14xf32>
  linalg.fill ins(%zero : f32) outs(%conv2 : memref<1x16x14x14xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, loom.library = "onednn", strides = dense<1> : tensor<2xi64>} ins(%x, %w : memref<1x8x16x16xf32>, memref<16x8x3x3xf32>) outs(%conv2 : memref<1x16x14x14xf32>)
  linalg.generic {indexing_maps = [#id, #channel, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%conv2, %b, %residual : memref<1x16x14x14xf32>, memref<16x1x1xf32>, memref<1x16x14x14xf32>) outs(%out : memref<1x16x14x14xf32>) {
  ^bb0(%c: f32, %bias: f32, %r: f32, %o: f32):
    %s = arith.addf %c, %bias : f32
    %t = arith.addf %s, %r : f32
    linalg.yield %t : f32
  }
  return
}
