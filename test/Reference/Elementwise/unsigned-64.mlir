// The reference kernels hold integers in an int64: a ui64 of 2^63 or more
// reads as negative there. Abs and Relu of unsigned values are the values
// and Sign is 1 for any non-zero one (compiled code had it right; the
// reference gave |x - 2^64| and -1).
// RUN: loom-run %s --print-values 16 | FileCheck %s

func.func @main() -> (tensor<4xui64>, tensor<4xui64>, tensor<4xui64>) {
  %x = loom.constant dense<[0, 5, 9223372036854775808, 18446744073709551615]> : tensor<4xui64>
  %abs = loom.abs %x : tensor<4xui64>
  %sign = loom.sign %x : tensor<4xui64>
  %relu = loom.relu %x : tensor<4xui64>
  // CHECK: output 0: ui64[4] [0, 5, 9223372036854775808, 18446744073709551615]
  // CHECK: output 1: ui64[4] [0, 1, 1, 1]
  // CHECK: output 2: ui64[4] [0, 5, 9223372036854775808, 18446744073709551615]
  return %abs, %sign, %relu : tensor<4xui64>, tensor<4xui64>, tensor<4xui64>
}
