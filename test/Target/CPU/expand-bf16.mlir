// RUN: loom-opt %s --loom-cpu-expand-bf16 | FileCheck %s

// f32 to bf16 rounds to nearest even on the i32 bits (add 0x7fff plus the
// lowest kept bit, keep the high half); NaN becomes the quiet NaN 0x7fc0.
// CHECK-LABEL: func.func @convert
// CHECK-DAG: %[[NAN:.+]] = arith.cmpf une, %[[X:.+]], %[[X]] : vector<4xf32>
// CHECK-DAG: %[[BIAS:.+]] = arith.constant dense<32767> : vector<4xi32>
// CHECK-DAG: %[[QUIET:.+]] = arith.constant dense<32704> : vector<4xi16>
// CHECK: %[[BITS:.+]] = arith.bitcast %[[X]] : vector<4xf32> to vector<4xi32>
// CHECK: %[[ODD:.+]] = arith.andi
// CHECK: %[[ROUND:.+]] = arith.addi %[[ODD]], %[[BIAS]]
// CHECK: %[[SUM:.+]] = arith.addi %[[BITS]], %[[ROUND]]
// CHECK: %[[HIGH:.+]] = arith.shrui %[[SUM]]
// CHECK: %[[KEPT:.+]] = arith.trunci %[[HIGH]] : vector<4xi32> to vector<4xi16>
// CHECK: %[[CHOSEN:.+]] = arith.select %[[NAN]], %[[QUIET]], %[[KEPT]]
// CHECK: arith.bitcast %[[CHOSEN]] : vector<4xi16> to vector<4xbf16>
// bf16 to f32 is the bits shifted up.
// CHECK: %[[H:.+]] = arith.bitcast %{{.+}} : bf16 to i16
// CHECK: %[[WIDE:.+]] = arith.extui %[[H]] : i16 to i32
// CHECK: %[[UP:.+]] = arith.shli %[[WIDE]]
// CHECK: arith.bitcast %[[UP]] : i32 to f32
// Other conversions are LLVM's to lower.
// CHECK: arith.truncf %{{.+}} : vector<4xf32> to vector<4xf16>
// CHECK-NOT: arith.truncf
// CHECK-NOT: arith.extf
func.func @convert(%x: vector<4xf32>, %h: bf16) -> (vector<4xbf16>, f32, vector<4xf16>) {
  %t = arith.truncf %x : vector<4xf32> to vector<4xbf16>
  %e = arith.extf %h : bf16 to f32
  %f = arith.truncf %x : vector<4xf32> to vector<4xf16>
  return %t, %e, %f : vector<4xbf16>, f32, vector<4xf16>
}
