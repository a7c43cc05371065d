// RUN: loom-opt %s --split-input-file --convert-loom-to-linalg | FileCheck %s

// The selections go into a tensor of the static bound B * C * N = 30 rows
// through an scf.for nest over batch and class carrying the rows, the
// count and the candidate mask. Per class: one loop marks the candidates
// (score > score_threshold, compared in f64), a stable merge sort orders
// the boxes by score (ogt: equal scores keep the lower index), then one
// visit per box in that order, considered when it is a candidate and
// fewer than max_output_boxes_per_class are kept: an IoU loop over the
// class's kept boxes, in f64, reading their corners and areas from a
// [5, N] buffer written as they are kept; a kept box is one [batch, class,
// box] row. The result is the first `count`
// rows; the cast to the model's static shape compares the count with it at
// run time (zeros and a reported error when they differ).
// CHECK-LABEL: func.func @nms
// CHECK-SAME: (%[[BOXES:[^ ,:]+]]: tensor<2x5x4xf32>, %[[SCORES:[^ ,:]+]]: tensor<2x3x5xf32>, %[[K:[^ ,:]+]]: tensor<1xi64>, %[[IOU:[^ ,:]+]]: tensor<1xf32>, %[[MIN:[^ ,:]+]]: tensor<1xf32>)
// CHECK: %[[KV:[^ ,:]+]] = tensor.extract %[[K]][%{{.+}}] : tensor<1xi64>
// CHECK: %[[IOUV:[^ ,:]+]] = tensor.extract %[[IOU]][%{{.+}}] : tensor<1xf32>
// CHECK: %[[IOU64:[^ ,:]+]] = arith.extf %[[IOUV]] : f32 to f64
// CHECK: %[[MINV:[^ ,:]+]] = tensor.extract %[[MIN]][%{{.+}}] : tensor<1xf32>
// CHECK: %[[MIN64:[^ ,:]+]] = arith.extf %[[MINV]] : f32 to f64
// CHECK: %[[ROWS:[^ ,:]+]] = tensor.empty() : tensor<30x3xi64>
// CHECK: %[[MASK:[^ ,:]+]] = tensor.empty() : tensor<5xi1>
// CHECK: %[[KEPTBOXES:[^ ,:]+]] = tensor.empty() : tensor<5x5xf64>
// CHECK: %[[ALL:[^ ,:]+]]:4 = scf.for %[[B:[^ ,:]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %[[ROWS]], %{{.+}} = %{{.+}}, %{{.+}} = %[[MASK]], %{{.+}} = %[[KEPTBOXES]]) -> (tensor<30x3xi64>, index, tensor<5xi1>, tensor<5x5xf64>)
// CHECK: scf.for %[[C:[^ ,:]+]] = %{{.+}} iter_args(%{{.+}} = %{{.+}}, %[[START:[^ ,:]+]] = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<30x3xi64>, index, tensor<5xi1>, tensor<5x5xf64>)
// CHECK: %[[CAND:[^ ,:]+]]:2 = scf.for {{.+}} -> (tensor<5xi1>, index)
// CHECK: tensor.extract %[[SCORES]][%[[B]], %[[C]], %{{.+}}] : tensor<2x3x5xf32>
// CHECK: arith.cmpf ogt, %{{.+}}, %[[MIN64]] : f64
// CHECK: %[[SORT:[^ ,:]+]]:3 = scf.while
// CHECK: scf.while
// CHECK: tensor.extract %[[SCORES]][%[[B]], %[[C]], %{{.+}}] : tensor<2x3x5xf32>
// CHECK: tensor.extract %[[SCORES]][%[[B]], %[[C]], %{{.+}}] : tensor<2x3x5xf32>
// CHECK: arith.cmpf ogt, %{{.+}}, %{{.+}} : f32
// CHECK: scf.for %[[POS:[^ ,:]+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %{{.+}}, %[[COUNT:[^ ,:]+]] = %{{.+}}, %[[KEPTNOW:[^ ,:]+]] = %{{.+}}) -> (tensor<30x3xi64>, index, tensor<5x5xf64>)
// CHECK: %[[AT:[^ ,:]+]] = tensor.extract %[[SORT]]#1[%[[POS]]] : tensor<?xi64>
// CHECK: %[[BOX:[^ ,:]+]] = arith.index_cast %[[AT]] : i64 to index
// CHECK: %[[KEPT:[^ ,:]+]] = arith.subi %[[COUNT]], %[[START]] : index
// CHECK: %[[KEPT64:[^ ,:]+]] = arith.index_cast %[[KEPT]] : index to i64
// CHECK: %[[UNDER:[^ ,:]+]] = arith.cmpi slt, %[[KEPT64]], %[[KV]] : i64
// CHECK: %[[ISCAND:[^ ,:]+]] = tensor.extract %[[CAND]]#0[%[[BOX]]] : tensor<5xi1>
// CHECK: %[[ROOM:[^ ,:]+]] = arith.andi %[[UNDER]], %[[ISCAND]] : i1
// CHECK: scf.if %[[ROOM]] -> (tensor<30x3xi64>, index, tensor<5x5xf64>)
// CHECK-COUNT-4: tensor.extract %[[BOXES]][%[[B]], %[[BOX]], %{{.+}}] : tensor<2x5x4xf32>
// CHECK: %[[SLOTS:[^ ,:]+]] = arith.subi %[[COUNT]], %[[START]] : index
// CHECK: %[[HIT:[^ ,:]+]] = scf.for %[[SLOT:[^ ,:]+]] = %{{.+}} to %[[SLOTS]] step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (i1)
// CHECK-COUNT-5: tensor.extract %[[KEPTNOW]][%{{.+}}, %[[SLOT]]] : tensor<5x5xf64>
// CHECK-NOT: tensor.extract %[[BOXES]]
// CHECK: %[[RATIO:[^ ,:]+]] = arith.divf %{{.+}}, %{{.+}} : f64
// CHECK: arith.cmpf ogt, %[[RATIO]], %[[IOU64]] : f64
// CHECK: scf.if %[[HIT]] -> (tensor<30x3xi64>, index, tensor<5x5xf64>)
// CHECK: } else {
// CHECK-COUNT-5: tensor.insert %{{.+}} into %{{.+}}[%{{.+}}, %[[SLOTS]]] : tensor<5x5xf64>
// CHECK-COUNT-3: tensor.insert %{{.+}} into %{{.+}}[%[[COUNT]], %{{.+}}] : tensor<30x3xi64>
// CHECK: %[[SLICE:[^ ,:]+]] = tensor.extract_slice %[[ALL]]#0[0, 0] [%[[ALL]]#1, 3] [1, 1] : tensor<30x3xi64> to tensor<?x3xi64>
// CHECK: %[[DIM:[^ ,:]+]] = tensor.dim %[[SLICE]], %{{.+}} : tensor<?x3xi64>
// CHECK: arith.cmpi ne, %[[DIM]], %{{.+}} : index
// CHECK: func.call @loom_rt_shape_error
// CHECK: %[[CHECKED:[^ ,:]+]] = scf.if %{{.+}} -> (tensor<6x3xi64>) {
// CHECK: tensor.cast %[[SLICE]] : tensor<?x3xi64> to tensor<6x3xi64>
// CHECK: return %[[CHECKED]]
func.func @nms(%boxes: tensor<2x5x4xf32>, %scores: tensor<2x3x5xf32>, %k: tensor<1xi64>, %iou: tensor<1xf32>, %min: tensor<1xf32>) -> tensor<6x3xi64> {
  %sel = loom.non_max_suppression %boxes, %scores max_output_boxes_per_class %k iou_threshold %iou score_threshold %min : (tensor<2x5x4xf32>, tensor<2x3x5xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x3xi64>
  %c = tensor.cast %sel : tensor<?x3xi64> to tensor<6x3xi64>
  return %c : tensor<6x3xi64>
}

// -----

// center_point_box: the corners are center -+ size / 2 in f64; without
// iou_threshold the threshold is 0, without score_threshold every box is a
// candidate (no compare), and the scalars may be 0-D.
// CHECK-LABEL: func.func @center
// CHECK-SAME: %[[K:[a-z0-9]+]]: tensor<i64>)
// CHECK: tensor.extract %[[K]][] : tensor<i64>
// CHECK: %[[ZERO:[^ ,:]+]] = arith.constant 0.000000e+00 : f64
// CHECK: tensor.empty() : tensor<4x3xi64>
// CHECK-NOT: arith.cmpf ogt, {{.+}} : f64
// CHECK: tensor.insert %{{.+}} into %{{.+}} : tensor<4xi1>
// CHECK: arith.cmpf ogt, %{{.+}}, %{{.+}} : f16
// CHECK: arith.extf %{{.+}} : f16 to f64
// CHECK: %[[HALFW:[^ ,:]+]] = arith.divf %{{.+}}, %{{.+}} : f64
// CHECK: %[[HALFH:[^ ,:]+]] = arith.divf %{{.+}}, %{{.+}} : f64
// CHECK: arith.subf %{{.+}}, %[[HALFH]] : f64
// CHECK: arith.subf %{{.+}}, %[[HALFW]] : f64
// CHECK: arith.addf %{{.+}}, %[[HALFH]] : f64
// CHECK: arith.addf %{{.+}}, %[[HALFW]] : f64
// CHECK: arith.cmpf ogt, %{{.+}}, %[[ZERO]] : f64
// CHECK: tensor.extract_slice %{{.+}}[0, 0] [%{{.+}}, 3] [1, 1] : tensor<4x3xi64> to tensor<?x3xi64>
func.func @center(%boxes: tensor<1x4x4xf16>, %scores: tensor<1x1x4xf16>, %k: tensor<i64>) -> tensor<2x3xi64> {
  %sel = loom.non_max_suppression %boxes, %scores max_output_boxes_per_class %k {center_point_box = true} : (tensor<1x4x4xf16>, tensor<1x1x4xf16>, tensor<i64>) -> tensor<?x3xi64>
  %c = tensor.cast %sel : tensor<?x3xi64> to tensor<2x3xi64>
  return %c : tensor<2x3xi64>
}

// -----

// Without max_output_boxes_per_class nothing is selected (ONNX's default
// 0): the visits compare the kept count with 0.
// CHECK-LABEL: func.func @no_limit
// CHECK: %[[NONE:[^ ,:]+]] = arith.constant 0 : i64
// CHECK: arith.cmpi slt, %{{.+}}, %[[NONE]] : i64
// CHECK: tensor.extract_slice %{{.+}}[0, 0] [%{{.+}}, 3] [1, 1] : tensor<3x3xi64> to tensor<?x3xi64>
func.func @no_limit(%boxes: tensor<1x3x4xf32>, %scores: tensor<1x1x3xf32>) -> tensor<0x3xi64> {
  %sel = loom.non_max_suppression %boxes, %scores : (tensor<1x3x4xf32>, tensor<1x1x3xf32>) -> tensor<?x3xi64>
  %c = tensor.cast %sel : tensor<?x3xi64> to tensor<0x3xi64>
  return %c : tensor<0x3xi64>
}

// -----

// Boxes counted at run time (those a score filter kept): the bound on the
// rows, the candidate mask and the loops take the sizes from tensor.dim.
// CHECK-LABEL: func.func @run_time_boxes
// CHECK-SAME: (%[[BOXES:.+]]: tensor<1x?x4xf32>, %[[SCORES:.+]]: tensor<1x2x?xf32>
// CHECK-DAG: %[[N:[^ ,:]+]] = tensor.dim %[[BOXES]], %{{.+}} : tensor<1x?x4xf32>
// CHECK-DAG: %[[BC:[^ ,:]+]] = arith.muli %{{.+}}, %{{.+}} : index
// CHECK: %[[BOUND:[^ ,:]+]] = arith.muli %[[BC]], %[[N]] : index
// CHECK: tensor.empty(%[[BOUND]]) : tensor<?x3xi64>
// CHECK: tensor.empty(%[[N]]) : tensor<?xi1>
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[N]] step
// CHECK: tensor.extract_slice %{{.+}}[0, 0] [%{{.+}}, 3] [1, 1] : tensor<?x3xi64> to tensor<?x3xi64>
func.func @run_time_boxes(%boxes: tensor<1x?x4xf32>, %scores: tensor<1x2x?xf32>, %k: tensor<1xi64>) -> tensor<?x3xi64> {
  %sel = loom.non_max_suppression %boxes, %scores max_output_boxes_per_class %k : (tensor<1x?x4xf32>, tensor<1x2x?xf32>, tensor<1xi64>) -> tensor<?x3xi64>
  return %sel : tensor<?x3xi64>
}
