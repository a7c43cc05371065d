// RUN: loom-opt %s --split-input-file --convert-loom-to-linalg --canonicalize | FileCheck %s

// Pads in the edge, reflect and wrap modes, and pads read at run time,
// map each output position to a window position c = o - begin, the window
// being the input less any cropped (negative-pad) ends. Canonicalization
// folds the window sizes of constant pads so that the checks can name them.

// Reflect: the window position c = o - begin is taken modulo the period
// 2 (size - 1) and mirrored past the last element.
// CHECK-LABEL: func.func @reflect_pad
// CHECK-DAG: %[[PERIOD:.+]] = arith.constant 6 : index
// CHECK-DAG: %[[LAST:.+]] = arith.constant 3 : index
// CHECK: linalg.generic
// CHECK: %[[C:.+]] = arith.subi %{{.+}}, %{{.+}} : index
// CHECK: %[[REM:.+]] = arith.remsi %[[C]], %[[PERIOD]] : index
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[REM]]
// CHECK: %[[UP:.+]] = arith.addi %[[REM]], %[[PERIOD]] : index
// CHECK: %[[MOD:.+]] = arith.select %[[NEG]], %[[UP]], %[[REM]]
// CHECK: %[[ABOVE:.+]] = arith.cmpi sgt, %[[MOD]], %[[LAST]]
// CHECK: %[[MIRROR:.+]] = arith.subi %[[PERIOD]], %[[MOD]] : index
// CHECK: arith.select %[[ABOVE]], %[[MIRROR]], %[[MOD]]
// CHECK: tensor.extract
func.func @reflect_pad(%x: tensor<4xf32>) -> tensor<7xf32> {
  %p = loom.constant dense<[2, 1]> : tensor<2xi64>
  %y = loom.pad %x, %p {mode = "reflect"} : (tensor<4xf32>, tensor<2xi64>) -> tensor<7xf32>
  return %y : tensor<7xf32>
}

// -----

// Wrap: c = o - begin modulo the window (remsi keeps c's sign, so a
// negative remainder is moved up by one window); a crop at the end narrows
// the window to 4 - 1.
// CHECK-LABEL: func.func @wrap_pad
// CHECK-DAG: %[[WINDOW:.+]] = arith.constant 3 : index
// CHECK: linalg.generic
// CHECK: %[[C:.+]] = arith.subi %{{.+}}, %{{.+}} : index
// CHECK: %[[REM:.+]] = arith.remsi %[[C]], %[[WINDOW]] : index
// CHECK: %[[NEG:.+]] = arith.cmpi slt, %[[REM]]
// CHECK: %[[UP:.+]] = arith.addi %[[REM]], %[[WINDOW]] : index
// CHECK: arith.select %[[NEG]], %[[UP]], %[[REM]]
// CHECK: tensor.extract
func.func @wrap_pad(%x: tensor<4xf32>) -> tensor<8xf32> {
  %p = loom.constant dense<[5, -1]> : tensor<2xi64>
  %y = loom.pad %x, %p {mode = "wrap"} : (tensor<4xf32>, tensor<2xi64>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}
