// RUN: loom-opt %s -loom-kv-cache-in-place=capacity=32 -split-input-file -verify-diagnostics | FileCheck %s

// A decoder layer's cache as exported: present = Concat(past, new) along
// the positions axis, returned; the past's shape is also read (position
// arithmetic) and, as exporters write it, passed through a Concat of
// itself alone. The past input becomes a cache of 32 positions written in
// place (loom.state = axis), the filled length a new input, the Concat an
// append, and the present output goes.
// CHECK-LABEL: func.func @decoder_step
// CHECK-SAME: %[[NEW:[a-z0-9]+]]: tensor<1x2x?x4xf32>
// CHECK-SAME: %[[CACHE:[a-z0-9]+]]: tensor<1x2x32x4xf32> {loom.state = 2 : i64, onnx.name = "past_key_values.0.key"}
// CHECK-SAME: %[[LEN:[a-z0-9]+]]: tensor<i64> {onnx.name = "cache_length"}
// CHECK-SAME: -> (tensor<1x2x?x4xf32> {onnx.name = "out"}, tensor<4xi64> {onnx.name = "shape"})
// CHECK: %[[LEN1:.*]] = loom.reshape %[[LEN]]
// CHECK: %[[PAST:.*]] = loom.slice %[[CACHE]], %{{.*}}, %[[LEN1]], %{{.*}} : {{.*}} -> tensor<1x2x?x4xf32>
// CHECK: loom.shape %[[PAST]]
// CHECK: %[[KV:.*]] = loom.cache_append %[[CACHE]], %[[NEW]], %[[LEN]] {axis = 2 : i64} : (tensor<1x2x32x4xf32>, tensor<1x2x?x4xf32>, tensor<i64>) -> tensor<1x2x?x4xf32>
// CHECK-NOT: loom.concat
// CHECK: %[[OUT:.*]] = loom.mul %[[KV]], %[[KV]]
// CHECK: return %[[OUT]], %{{.*}} : tensor<1x2x?x4xf32>, tensor<4xi64>
func.func @decoder_step(%new: tensor<1x2x?x4xf32>, %past: tensor<1x2x?x4xf32> {onnx.name = "past_key_values.0.key"})
    -> (tensor<1x2x?x4xf32> {onnx.name = "out"}, tensor<1x2x?x4xf32> {onnx.name = "present.0.key"}, tensor<4xi64> {onnx.name = "shape"}) {
  %same = loom.concat %past {axis = 2 : i64} : (tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32>
  %shape = loom.shape %same : tensor<1x2x?x4xf32> -> tensor<4xi64>
  %kv = loom.concat %same, %new {axis = 2 : i64} : (tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32>
  %out = loom.mul %kv, %kv : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
  return %out, %kv, %shape : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<4xi64>
}

// -----

// Without a past input whose Concat is returned as present.*, there is
// nothing to keep: an error, not a silent no-op.
// expected-error @below {{no input past_key_values.* whose Concat with the new keys/values is returned as present.*}}
func.func @not_a_decoder(%x: tensor<2x?xf32> {onnx.name = "past_key_values.0.key"}, %y: tensor<2x?xf32>) -> (tensor<2x?xf32> {onnx.name = "present.1.key"}) {
  %c = loom.concat %x, %y {axis = 1 : i64} : (tensor<2x?xf32>, tensor<2x?xf32>) -> tensor<2x?xf32>
  return %c : tensor<2x?xf32>
}

// -----

// Partitioned by heads (tensor parallelism over 2 ranks): each rank reads
// its heads' slice of the whole past and the present output gathers the
// ranks' concatenations. The cache input becomes the rank's own slice, so
// that each rank keeps its heads only, and nothing is gathered. A read of
// the whole past's shape is rebuilt from the rank's filled slice, with the
// whole (static) number of heads.
// CHECK-LABEL: func.func @rank_heads
// CHECK-SAME: %[[NEW:[a-z0-9]+]]: tensor<1x1x?x4xf32>
// CHECK-SAME: %[[CACHE:[a-z0-9]+]]: tensor<1x1x32x4xf32> {loom.state = 2 : i64, onnx.name = "past_key_values.0.key"}
// CHECK-SAME: %[[LEN:[a-z0-9]+]]: tensor<i64> {onnx.name = "cache_length"}
// CHECK-SAME: -> (tensor<1x1x?x4xf32> {onnx.name = "out"}, tensor<4xi64> {onnx.name = "shape"})
// CHECK: %[[PAST:.*]] = loom.slice %[[CACHE]], {{.*}} -> tensor<1x1x?x4xf32>
// CHECK-DAG: %[[D0:.*]] = loom.shape %[[PAST]] {end = 1 : i64}
// CHECK-DAG: %[[HEADS:.*]] = loom.constant dense<2> : tensor<1xi64>
// CHECK-DAG: %[[D2:.*]] = loom.shape %[[PAST]] {end = 3 : i64, start = 2 : i64}
// CHECK-DAG: %[[D3:.*]] = loom.shape %[[PAST]] {end = 4 : i64, start = 3 : i64}
// CHECK: %[[SHAPE:.*]] = loom.concat %[[D0]], %[[HEADS]], %[[D2]], %[[D3]] {axis = 0 : i64}
// CHECK-NOT: shard.all_slice
// CHECK: %[[KV:.*]] = loom.cache_append %[[CACHE]], %[[NEW]], %[[LEN]] {axis = 2 : i64} : (tensor<1x1x32x4xf32>, tensor<1x1x?x4xf32>, tensor<i64>) -> tensor<1x1x?x4xf32>
// CHECK-NOT: shard.all_gather
// CHECK: return %{{.*}}, %[[SHAPE]] : tensor<1x1x?x4xf32>, tensor<4xi64>
shard.grid @grid(shape = 2)
func.func @rank_heads(%new: tensor<1x1x?x4xf32>, %past: tensor<1x2x?x4xf32> {onnx.name = "past_key_values.0.key"})
    -> (tensor<1x1x?x4xf32> {onnx.name = "out"}, tensor<1x2x?x4xf32> {onnx.name = "present.0.key"}, tensor<4xi64> {onnx.name = "shape"}) {
  %shape = loom.shape %past : tensor<1x2x?x4xf32> -> tensor<4xi64>
  %mine = shard.all_slice %past on @grid grid_axes = [0] slice_axis = 1 : tensor<1x2x?x4xf32> -> tensor<1x1x?x4xf32>
  %kv = loom.concat %mine, %new {axis = 2 : i64} : (tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32>) -> tensor<1x1x?x4xf32>
  %whole = shard.all_gather %kv on @grid grid_axes = [0] gather_axis = 1 : tensor<1x1x?x4xf32> -> tensor<1x2x?x4xf32>
  %out = loom.mul %kv, %kv : tensor<1x1x?x4xf32>, tensor<1x1x?x4xf32> -> tensor<1x1x?x4xf32>
  return %out, %whole, %shape : tensor<1x1x?x4xf32>, tensor<1x2x?x4xf32>, tensor<4xi64>
}

// -----

// A rank's slice along an axis of run-time size (the batch, split by data
// parallelism) cannot be the rank's cache: its size is not the engine's to
// fix. Refused, as is a gather that does not undo the slice.
shard.grid @grid(shape = 2)
// expected-error @below {{or, partitioned, its cache is split along an axis other than the heads}}
func.func @rank_batches(%new: tensor<?x2x?x4xf32>, %past: tensor<?x2x?x4xf32> {onnx.name = "past_key_values.0.key"})
    -> (tensor<?x2x?x4xf32> {onnx.name = "present.0.key"}) {
  %mine = shard.all_slice %past on @grid grid_axes = [0] slice_axis = 0 : tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  %kv = loom.concat %mine, %new {axis = 2 : i64} : (tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x2x?x4xf32>
  %whole = shard.all_gather %kv on @grid grid_axes = [0] gather_axis = 0 : tensor<?x2x?x4xf32> -> tensor<?x2x?x4xf32>
  return %whole : tensor<?x2x?x4xf32>
}

// -----

// A cache the model writes with TensorScatter (opset 24), imported as a
// scatter_elements of the input that is returned: the input becomes state
// as it is (its length, 32, is the capacity), the scatter stays and writes
// into it, the present output goes, and no cache_length is added (the
// model's write positions say where).
// CHECK-LABEL: func.func @tensor_scatter
// CHECK-SAME: %[[CACHE:[a-z0-9]+]]: tensor<?x2x32x4xf32> {loom.state = 2 : i64, onnx.name = "past_key"}
// CHECK-SAME: %[[NEW:[a-z0-9]+]]: tensor<?x2x1x4xf32>
// CHECK-SAME: %[[AT:[a-z0-9]+]]: tensor<?x2x1x4xi64>)
// CHECK-SAME: -> (tensor<?x2x4xf32> {onnx.name = "summed"})
// CHECK: %[[KV:.*]] = loom.scatter_elements %[[CACHE]], %[[AT]], %[[NEW]] {axis = 2 : i64}
// CHECK: %[[SUM:.*]] = loom.reduce_sum %[[KV]]
// CHECK: return %[[SUM]] : tensor<?x2x4xf32>
func.func @tensor_scatter(%past: tensor<?x2x32x4xf32> {onnx.name = "past_key"}, %new: tensor<?x2x1x4xf32>, %at: tensor<?x2x1x4xi64>)
    -> (tensor<?x2x32x4xf32> {onnx.name = "present_key"}, tensor<?x2x4xf32> {onnx.name = "summed"}) {
  %kv = loom.scatter_elements %past, %at, %new {axis = 2 : i64} : tensor<?x2x32x4xf32>, tensor<?x2x1x4xi64>, tensor<?x2x1x4xf32> -> tensor<?x2x32x4xf32>
  %sum = loom.reduce_sum %kv {axes = array<i64: 2>, keepdims = false} : tensor<?x2x32x4xf32> -> tensor<?x2x4xf32>
  return %kv, %sum : tensor<?x2x32x4xf32>, tensor<?x2x4xf32>
}

// -----

// The model fixes a scattered cache's length: a capacity that differs is
// an error naming both.
// expected-error @below {{input 'past_key' is a cache of 16 positions (the model's TensorScatter cache); --kv-cache asks for 32}}
func.func @tensor_scatter_length(%past: tensor<1x2x16x4xf32> {onnx.name = "past_key"}, %new: tensor<1x2x1x4xf32>, %at: tensor<1x2x1x4xi64>)
    -> (tensor<1x2x16x4xf32> {onnx.name = "present_key"}) {
  %kv = loom.scatter_elements %past, %at, %new {axis = 2 : i64} : tensor<1x2x16x4xf32>, tensor<1x2x1x4xi64>, tensor<1x2x1x4xf32> -> tensor<1x2x16x4xf32>
  return %kv : tensor<1x2x16x4xf32>
}

// -----

// Only the batch may be symbolic: the runtime's session sizes a state's
// symbolic dimensions by the batch.
// expected-error @below {{input 'past_key' of type 'tensor<1x2x?x4xf32>' is written by a TensorScatter: a cache kept in place needs static sizes after the batch}}
func.func @tensor_scatter_symbolic(%past: tensor<1x2x?x4xf32> {onnx.name = "past_key"}, %new: tensor<1x2x1x4xf32>, %at: tensor<1x2x1x4xi64>)
    -> (tensor<1x2x?x4xf32> {onnx.name = "present_key"}) {
  %kv = loom.scatter_elements %past, %at, %new {axis = 2 : i64} : tensor<1x2x?x4xf32>, tensor<1x2x1x4xi64>, tensor<1x2x1x4xf32> -> tensor<1x2x?x4xf32>
  return %kv : tensor<1x2x?x4xf32>
}
