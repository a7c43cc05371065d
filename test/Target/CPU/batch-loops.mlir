// RUN: loom-opt %s --split-input-file --loom-cpu-batch-loops | FileCheck %s
// RUN: loom-opt %s --split-input-file --loom-cpu-batch-loops --loom-cpu-select-library-convolutions=min-flops=0 --loom-cpu-im2col --loom-cpu-contraction-order --loom-cpu-bufferize --loom-cpu-library-convolutions | FileCheck %s --check-prefix=LIBRARY

// A convolution whose only run-time size is the batch: a loop over the
// batch, and in it the convolution on one image (static types: im2col and
// the library take it as they take a batch-1 model). The filter is not
// sliced; the output's zeros are filled one image at a time, just before
// the convolution, and its slice is inserted back into the loop's tensor.
// CHECK-LABEL: func.func @conv_batch
// CHECK-SAME: (%[[X:.+]]: tensor<?x3x16x16xf32>, %[[W:.+]]: tensor<8x3x3x3xf32>)
// CHECK: %[[EMPTY:.+]] = tensor.empty
// CHECK-NOT: linalg.fill
// CHECK: %[[N:.+]] = tensor.dim %[[X]], %c0
// CHECK: %[[LOOP:.+]] = scf.for %[[I:.+]] = %{{.+}} to %[[N]] step %{{.+}} iter_args(%[[ACC:.+]] = %[[EMPTY]]) -> (tensor<?x8x14x14xf32>)
// CHECK: %[[IN:.+]] = tensor.extract_slice %[[X]][%[[I]], 0, 0, 0] [1, 3, 16, 16] [1, 1, 1, 1] : tensor<?x3x16x16xf32> to tensor<1x3x16x16xf32>
// CHECK: %[[SLICE:.+]] = tensor.extract_slice %[[ACC]][%[[I]], 0, 0, 0] [1, 8, 14, 14] [1, 1, 1, 1] : tensor<?x8x14x14xf32> to tensor<1x8x14x14xf32>
// CHECK: %[[OUT:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[SLICE]] : tensor<1x8x14x14xf32>)
// CHECK: %[[CONV:.+]] = linalg.conv_2d_nchw_fchw {{.*}} ins(%[[IN]], %[[W]] : tensor<1x3x16x16xf32>, tensor<8x3x3x3xf32>) outs(%[[OUT]] : tensor<1x8x14x14xf32>) -> tensor<1x8x14x14xf32>
// CHECK: %[[PUT:.+]] = tensor.insert_slice %[[CONV]] into %[[ACC]][%[[I]], 0, 0, 0] [1, 8, 14, 14] [1, 1, 1, 1]
// CHECK: scf.yield %[[PUT]]
// CHECK: return %[[LOOP]]
//
// The library computes each image: its input and output are one image of
// the whole buffers, at an offset known at run time, added to the
// buffers' addresses (4 bytes per element). It overwrites the output (the
// fill before it is gone), and the slice it wrote is not copied onto
// itself.
// LIBRARY-LABEL: func.func @conv_batch
// LIBRARY-NOT: linalg.fill
// LIBRARY: scf.for
// LIBRARY: %[[IN:.+]] = memref.subview %{{.+}}[%[[I:.+]], 0, 0, 0] [1, 3, 16, 16]
// LIBRARY: %[[OUT:.+]] = memref.subview %{{.+}}[%[[I]], 0, 0, 0] [1, 8, 14, 14]
// LIBRARY: %[[INBASE:.+]] = memref.extract_aligned_pointer_as_index %[[IN]]
// LIBRARY: %[[INAT:.+]] = arith.index_cast %[[INBASE]]
// LIBRARY: %{{.+}}, %[[INOFF:.+]], %{{.+}}:4, %{{.+}}:4 = memref.extract_strided_metadata %[[IN]]
// LIBRARY: %[[INOFF64:.+]] = arith.index_cast %[[INOFF]]
// LIBRARY: %[[INBYTES:.+]] = arith.muli %[[INOFF64]], %c4_i64
// LIBRARY: %[[INADDR:.+]] = arith.addi %[[INAT]], %[[INBYTES]]
// LIBRARY: call @loom_rt_conv2d_f32(%[[INADDR]],
// LIBRARY-NOT: linalg.conv
// LIBRARY-NOT: linalg.copy
// LIBRARY-NOT: linalg.fill
// LIBRARY: scf.yield
func.func @conv_batch(%x: tensor<?x3x16x16xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<?x8x14x14xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3x16x16xf32>
  %empty = tensor.empty(%n) : tensor<?x8x14x14xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x8x14x14xf32>) -> tensor<?x8x14x14xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<?x3x16x16xf32>, tensor<8x3x3x3xf32>) outs(%fill : tensor<?x8x14x14xf32>) -> tensor<?x8x14x14xf32>
  return %y : tensor<?x8x14x14xf32>
}

// -----

// The bias and ReLU that alone use a convolution's result join it in the
// loop, on the same image (its result slice, not the whole tensor): one
// loop, the elementwise op on [1, 8, 14, 14]; the library call then takes
// them as its epilogue (the bias's address, no generic left).
// CHECK-LABEL: func.func @conv_bias_relu
// CHECK: scf.for
// CHECK: %[[CONV:.+]] = linalg.conv_2d_nchw_fchw {{.*}} -> tensor<1x8x14x14xf32>
// CHECK: %[[OUT:.+]] = tensor.extract_slice %{{.+}}[%{{.+}}, 0, 0, 0] [1, 8, 14, 14]
// CHECK: %[[ACT:.+]] = linalg.generic {{.*}} ins(%[[CONV]], %{{.+}} : tensor<1x8x14x14xf32>, tensor<8xf32>) outs(%[[OUT]] : tensor<1x8x14x14xf32>)
// CHECK: tensor.insert_slice %[[ACT]]
// CHECK-NOT: scf.for
// CHECK: return
// LIBRARY-LABEL: func.func @conv_bias_relu
// LIBRARY-SAME: %[[BIAS:[a-z0-9]+]]: memref<8xf32>
// LIBRARY: scf.for
// LIBRARY: %[[B:.+]] = memref.extract_aligned_pointer_as_index %[[BIAS]]
// LIBRARY: %[[BADDR:.+]] = arith.index_cast %[[B]]
// LIBRARY: call @loom_rt_conv2d_f32(%{{.+}}, %{{.+}}, %[[BADDR]],
// LIBRARY-NOT: linalg.generic
// LIBRARY-NOT: linalg.copy
// LIBRARY: return
#nchw = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @conv_bias_relu(%x: tensor<?x3x16x16xf32>, %w: tensor<8x3x3x3xf32>, %bias: tensor<8xf32>) -> tensor<?x8x14x14xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x3x16x16xf32>
  %empty = tensor.empty(%n) : tensor<?x8x14x14xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x8x14x14xf32>) -> tensor<?x8x14x14xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : tensor<?x3x16x16xf32>, tensor<8x3x3x3xf32>) outs(%fill : tensor<?x8x14x14xf32>) -> tensor<?x8x14x14xf32>
  %out = tensor.empty(%n) : tensor<?x8x14x14xf32>
  %act = linalg.generic {indexing_maps = [#nchw, #channel, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    ins(%y, %bias : tensor<?x8x14x14xf32>, tensor<8xf32>) outs(%out : tensor<?x8x14x14xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x8x14x14xf32>
  return %act : tensor<?x8x14x14xf32>
}

// -----

// A reduction over rows (a max pool's or a norm's) whose batch is not
// dimension 0: the batch loop is found by the maps, not by position.
// CHECK-LABEL: func.func @batch_inner
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ins(%{{.+}} : tensor<4x1x8xf32>) outs(%{{.+}} : tensor<4x1xf32>)
#in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @batch_inner(%x: tensor<4x?x8xf32>, %init: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "reduction"]}
    ins(%x : tensor<4x?x8xf32>) outs(%init : tensor<4x?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4x?xf32>
  return %r : tensor<4x?xf32>
}

// -----

// Left alone: two run-time sizes (a batch and a sequence), an elementwise
// op (no reduction loop: its loops vectorize at any size), a body that
// reads its loop index, and a run-time size the loop would not slice (the
// reduced dimension).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: scf.for
// CHECK: return
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#rows = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @left_alone(%a: tensor<?x?x8xf32>, %b: tensor<?x8xf32>, %c: tensor<?x8x8xf32>, %d: tensor<2x?xf32>)
    -> (tensor<?x?xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %a, %c0 : tensor<?x?x8xf32>
  %s = tensor.dim %a, %c1 : tensor<?x?x8xf32>
  %e0 = tensor.empty(%n, %s) : tensor<?x?xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #rows], iterator_types = ["parallel", "parallel", "reduction"]}
    ins(%a : tensor<?x?x8xf32>) outs(%e0 : tensor<?x?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<?x?xf32>
  %m = tensor.dim %b, %c0 : tensor<?x8xf32>
  %e1 = tensor.empty(%m) : tensor<?x8xf32>
  %neg = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    ins(%b : tensor<?x8xf32>) outs(%e1 : tensor<?x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  } -> tensor<?x8xf32>
  %k = tensor.dim %c, %c0 : tensor<?x8x8xf32>
  %e2 = tensor.empty(%k) : tensor<?x8xf32>
  %indexed = linalg.generic {indexing_maps = [#id3, #rows], iterator_types = ["parallel", "parallel", "reduction"]}
    ins(%c : tensor<?x8x8xf32>) outs(%e2 : tensor<?x8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %f = arith.sitofp %ii : i64 to f32
    %y = arith.addf %x, %acc : f32
    %z = arith.addf %y, %f : f32
    linalg.yield %z : f32
  } -> tensor<?x8xf32>
  %e3 = tensor.empty() : tensor<2xf32>
  %rowsum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
    ins(%d : tensor<2x?xf32>) outs(%e3 : tensor<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<2xf32>
  return %sum, %neg, %indexed, %rowsum : tensor<?x?xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<2xf32>
}

// -----

// A matrix product whose run-time size is its row count alone: left whole.
// One row per iteration would be a matrix-vector product; the register
// tiles take rows known only at run time as they are (a transformer's
// projections on [batch x tokens, features]).
// CHECK-LABEL: func.func @product_rows
// CHECK-NOT: scf.for
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<?x64xf32>, tensor<64x32xf32>) outs(%{{.+}} : tensor<?x32xf32>)
// CHECK-NOT: scf.for
// CHECK: return
func.func @product_rows(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>) -> tensor<?x32xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %m = tensor.dim %x, %c0 : tensor<?x64xf32>
  %empty = tensor.empty(%m) : tensor<?x32xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x32xf32>) -> tensor<?x32xf32>
  %y = linalg.matmul ins(%x, %w : tensor<?x64xf32>, tensor<64x32xf32>) outs(%fill : tensor<?x32xf32>) -> tensor<?x32xf32>
  return %y : tensor<?x32xf32>
}

// -----

// The same product with a run-time batch before 16 static rows: each
// iteration keeps its 16 rows (a register tile's worth), so the batch is
// split.
// CHECK-LABEL: func.func @product_batch_of_rows
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ins(%{{.+}}, %{{.+}} : tensor<1x16x64xf32>, tensor<64x32xf32>) outs(%{{.+}} : tensor<1x16x32xf32>)
#lhs = affine_map<(b, m, n, k) -> (b, m, k)>
#rhs = affine_map<(b, m, n, k) -> (k, n)>
#res = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @product_batch_of_rows(%x: tensor<?x16x64xf32>, %w: tensor<64x32xf32>) -> tensor<?x16x32xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x16x64xf32>
  %empty = tensor.empty(%n) : tensor<?x16x32xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x16x32xf32>) -> tensor<?x16x32xf32>
  %y = linalg.generic {indexing_maps = [#lhs, #rhs, #res], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
    ins(%x, %w : tensor<?x16x64xf32>, tensor<64x32xf32>) outs(%fill : tensor<?x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x16x32xf32>
  return %y : tensor<?x16x32xf32>
}
