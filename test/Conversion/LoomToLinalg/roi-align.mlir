// RUN: loom-opt %s --split-input-file --convert-loom-to-linalg | FileCheck %s

// One parallel generic over [R, C, Ho, Wo]: the box and its batch index
// come from tensor.extract, the sampling grid is an scf.for nest with
// static bounds (sampling_ratio 2) carrying an f64 sum, and each sample
// reads four neighbours; the sum is divided by the sample count.
// CHECK-LABEL: func.func @avg
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x6x7xf32>, %[[ROIS:.+]]: tensor<4x4xf32>, %[[IDX:.+]]: tensor<4xi64>)
// CHECK: %[[R:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%{{.+}} : tensor<4x3x2x3xf32>)
// CHECK: %[[ROI:.+]] = linalg.index 0
// CHECK: %[[CH:.+]] = linalg.index 1
// CHECK: %[[BATCH:.+]] = tensor.extract %[[IDX]][%[[ROI]]] : tensor<4xi64>
// CHECK: arith.maxsi %[[BATCH]]
// CHECK: %[[N:.+]] = arith.index_cast %{{.+}} : i64 to index
// CHECK-COUNT-4: tensor.extract %[[ROIS]][%[[ROI]], %{{.+}}] : tensor<4x4xf32>
// CHECK: %[[TWO:.+]] = arith.constant 2 : index
// CHECK: %[[SUM:.+]] = scf.for %{{.+}} = %{{.+}} to %[[TWO]] step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (f64)
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[TWO]] step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (f64)
// CHECK-COUNT-4: tensor.extract %[[X]][%[[N]], %[[CH]], %{{.+}}, %{{.+}}] : tensor<2x3x6x7xf32>
// CHECK: arith.addf
// CHECK: scf.yield
// CHECK: scf.yield
// CHECK: %[[MEAN:.+]] = arith.divf %[[SUM]], %{{.+}} : f64
// CHECK: %[[OUT:.+]] = arith.truncf %[[MEAN]] : f64 to f32
// CHECK: linalg.yield %[[OUT]] : f32
// CHECK: return %[[R]]
func.func @avg(%x: tensor<2x3x6x7xf32>, %rois: tensor<4x4xf32>, %idx: tensor<4xi64>) -> tensor<4x3x2x3xf32> {
  %y = loom.roi_align %x, %rois, %idx {output_height = 2 : i64, output_width = 3 : i64, sampling_ratio = 2 : i64, spatial_scale = 0.5 : f32} : tensor<2x3x6x7xf32>, tensor<4x4xf32>, tensor<4xi64> -> tensor<4x3x2x3xf32>
  return %y : tensor<4x3x2x3xf32>
}

// -----

// sampling_ratio 0: the samples per bin are ceil(roi_size / output_size)
// of each box, so the scf.for bounds are computed in the body; "max" keeps
// the largest weighted corner and is not divided.
// CHECK-LABEL: func.func @max_adaptive
// CHECK: linalg.generic
// CHECK: %[[CH:.+]] = math.ceil %{{.+}} : f64
// CHECK: %[[GH:.+]] = arith.fptosi %[[CH]] : f64 to i64
// CHECK: %[[GHC:.+]] = arith.maxsi %[[GH]], %{{.+}} : i64
// CHECK: math.ceil
// CHECK: %[[UB:.+]] = arith.index_cast %[[GHC]] : i64 to index
// CHECK: %[[M:.+]] = scf.for %{{.+}} = %{{.+}} to %[[UB]] step
// CHECK: scf.for
// CHECK-COUNT-4: tensor.extract %{{.+}} : tensor<2x3x6x7xf32>
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: scf.yield
// CHECK: scf.yield
// CHECK-NOT: arith.divf
// CHECK: %[[OUT:.+]] = arith.truncf %[[M]] : f64 to f32
// CHECK: linalg.yield %[[OUT]] : f32
func.func @max_adaptive(%x: tensor<2x3x6x7xf32>, %rois: tensor<4x4xf32>, %idx: tensor<4xi64>) -> tensor<4x3x2x3xf32> {
  %y = loom.roi_align %x, %rois, %idx {mode = "max", output_height = 2 : i64, output_width = 3 : i64, sampling_ratio = 0 : i64, spatial_scale = 0.5 : f32, coordinate_transformation_mode = "output_half_pixel"} : tensor<2x3x6x7xf32>, tensor<4x4xf32>, tensor<4xi64> -> tensor<4x3x2x3xf32>
  return %y : tensor<4x3x2x3xf32>
}
