// Split and concat along one axis keep the other axes' splits: a
// data-parallel batch stays split through a fused projection's split into
// q, k and v (GPT-2's c_attn) and through a concatenation, instead of
// being gathered and computed whole on every rank. The axis they split or
// join along stays whole: split there, the pieces are gathered first.
// RUN: loom-opt %s --loom-partition="grid=dp=2" | FileCheck %s --check-prefix=DP
// RUN: loom-opt %s --loom-partition="grid=cp=2" | FileCheck %s --check-prefix=CP

// DP-LABEL: func.func @qkv
// DP: shard.all_slice %arg0 on @grid grid_axes = [0] slice_axis = 0 : tensor<4x8x12xf32> -> tensor<2x8x12xf32>
// DP-NEXT: loom.split %{{.*}} {axis = 2 : i64, sizes = array<i64: 4, 4, 4>} : tensor<2x8x12xf32> -> tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>
// DP-NEXT: loom.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x24x4xf32>
// DP-NEXT: shard.all_gather %{{.*}} on @grid grid_axes = [0] gather_axis = 0 : tensor<2x24x4xf32> -> tensor<4x24x4xf32>
// DP-NEXT: return
// With cp (the sequence, axis 1, split), the split along the features
// keeps it; the concatenation along the sequence needs it whole.
// CP-LABEL: func.func @qkv
// CP: shard.all_slice %arg0 on @grid grid_axes = [0] slice_axis = 1 : tensor<4x8x12xf32> -> tensor<4x4x12xf32>
// CP-NEXT: loom.split %{{.*}} {axis = 2 : i64, sizes = array<i64: 4, 4, 4>} : tensor<4x4x12xf32> -> tensor<4x4x4xf32>, tensor<4x4x4xf32>, tensor<4x4x4xf32>
// CP-COUNT-3: shard.all_gather %{{.*}} on @grid grid_axes = [0] gather_axis = 1 : tensor<4x4x4xf32> -> tensor<4x8x4xf32>
// CP-NEXT: loom.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<4x8x4xf32>, tensor<4x8x4xf32>, tensor<4x8x4xf32>) -> tensor<4x24x4xf32>
func.func @qkv(%x: tensor<4x8x12xf32>) -> tensor<4x24x4xf32> {
  %q, %k, %v = loom.split %x {axis = 2 : i64, sizes = array<i64: 4, 4, 4>} : tensor<4x8x12xf32> -> tensor<4x8x4xf32>, tensor<4x8x4xf32>, tensor<4x8x4xf32>
  %joined = loom.concat %q, %k, %v {axis = 1 : i64} : (tensor<4x8x4xf32>, tensor<4x8x4xf32>, tensor<4x8x4xf32>) -> tensor<4x24x4xf32>
  return %joined : tensor<4x24x4xf32>
}
