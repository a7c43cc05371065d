// RUN: loom-opt %s --loom-cpu-fuse-elementwise | FileCheck %s
// RUN: loom-opt %s --linalg-fuse-elementwise-ops | FileCheck %s --check-prefix=UPSTREAM

// An activation stays out of the matrix product that consumes it: fused,
// erf would run once per output column (upstream fuses it).
// CHECK-LABEL: func.func @activation_into_product
// CHECK: linalg.generic
// CHECK:   math.erf
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// UPSTREAM-LABEL: func.func @activation_into_product
// UPSTREAM: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// UPSTREAM: math.erf

// A math function read by a broadcast is not recomputed per column...
// CHECK-LABEL: func.func @exp_into_broadcast
// CHECK: linalg.generic
// CHECK:   math.exp
// CHECK: linalg.generic
// CHECK-NOT: math.exp
// CHECK:   arith.subf

// ... but cheap arithmetic is, and anything read once per element fuses.
// CHECK-LABEL: func.func @cheap_into_broadcast
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.subf
// CHECK-LABEL: func.func @exp_into_elementwise
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK-NEXT: arith.subf

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i, 0)>
func.func @activation_into_product(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>) -> tensor<8x32xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.erf %a : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<8x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e2 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %m = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%g, %w : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f : tensor<8x32xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  return %m : tensor<8x32xf32>
}
func.func @exp_into_broadcast(%x: tensor<8x1xf32>, %y: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %e = tensor.empty() : tensor<8x1xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x1xf32>) outs(%e : tensor<8x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<8x1xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%y, %g : tensor<8x32xf32>, tensor<8x1xf32>) outs(%e2 : tensor<8x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x32xf32>
  return %s : tensor<8x32xf32>
}
func.func @cheap_into_broadcast(%x: tensor<8x1xf32>, %y: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %e = tensor.empty() : tensor<8x1xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x1xf32>) outs(%e : tensor<8x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<8x1xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %s = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%y, %g : tensor<8x32xf32>, tensor<8x1xf32>) outs(%e2 : tensor<8x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x32xf32>
  return %s : tensor<8x32xf32>
}
func.func @exp_into_elementwise(%x: tensor<8x32xf32>, %y: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %e = tensor.empty() : tensor<8x32xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x32xf32>) outs(%e : tensor<8x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<8x32xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%y, %g : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e : tensor<8x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<8x32xf32>
  return %s : tensor<8x32xf32>
}

// A view that bounds an elementwise op's reads by the result's run-time
// size (loom.run_time_bound) moves above its input's producer, which then
// fuses with the op; an unmarked slice stays where it is.
// CHECK-LABEL: func.func @run_time_bound_view
// CHECK-DAG: tensor.extract_slice %arg0[0, 0] [%arg2, %arg3]
// CHECK-DAG: tensor.extract_slice %arg1[0, 0] [%arg2, %arg3]
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.exp
// CHECK-NEXT: arith.addf
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @unmarked_slice
// CHECK: math.exp
// CHECK: tensor.extract_slice
// CHECK: arith.addf
func.func @run_time_bound_view(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>, %m: index, %n: index) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %xm = tensor.dim %x, %c0 : tensor<?x?xf32>
  %xn = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e0 = tensor.empty(%xm, %xn) : tensor<?x?xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%e0 : tensor<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %view = tensor.extract_slice %exp[0, 0] [%m, %n] [1, 1] {loom.run_time_bound} : tensor<?x?xf32> to tensor<?x?xf32>
  %yview = tensor.extract_slice %y[0, 0] [%m, %n] [1, 1] {loom.run_time_bound} : tensor<?x?xf32> to tensor<?x?xf32>
  %e1 = tensor.empty(%m, %n) : tensor<?x?xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%view, %yview : tensor<?x?xf32>, tensor<?x?xf32>) outs(%e1 : tensor<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  return %sum : tensor<?x?xf32>
}

func.func @unmarked_slice(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>, %m: index, %n: index) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %xm = tensor.dim %x, %c0 : tensor<?x?xf32>
  %xn = tensor.dim %x, %c1 : tensor<?x?xf32>
  %e0 = tensor.empty(%xm, %xn) : tensor<?x?xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%e0 : tensor<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  %view = tensor.extract_slice %exp[0, 0] [%m, %n] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %e1 = tensor.empty(%m, %n) : tensor<?x?xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%view, %y : tensor<?x?xf32>, tensor<?x?xf32>) outs(%e1 : tensor<?x?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<?x?xf32>
  return %sum : tensor<?x?xf32>
}
