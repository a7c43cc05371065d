// A program with 12 outputs: written with --output-dir and read back as a
// directory of expected outputs, output_10.npy must pair with output 10,
// not output 2 (the files are ordered by number, not by name).
// RUN: rm -rf %t && mkdir -p %t
// RUN: loom-run %s --output-dir %t
// RUN: loom-run %s --expected %t --rtol 0 --atol 0 | FileCheck %s
// CHECK: all outputs match

func.func @main() -> (tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) {
  %c0 = loom.constant dense<0.0> : tensor<1xf32>
  %c1 = loom.constant dense<1.0> : tensor<1xf32>
  %c2 = loom.constant dense<2.0> : tensor<1xf32>
  %c3 = loom.constant dense<3.0> : tensor<1xf32>
  %c4 = loom.constant dense<4.0> : tensor<1xf32>
  %c5 = loom.constant dense<5.0> : tensor<1xf32>
  %c6 = loom.constant dense<6.0> : tensor<1xf32>
  %c7 = loom.constant dense<7.0> : tensor<1xf32>
  %c8 = loom.constant dense<8.0> : tensor<1xf32>
  %c9 = loom.constant dense<9.0> : tensor<1xf32>
  %c10 = loom.constant dense<10.0> : tensor<1xf32>
  %c11 = loom.constant dense<11.0> : tensor<1xf32>
  return %c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %c9, %c10, %c11 : tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
}
