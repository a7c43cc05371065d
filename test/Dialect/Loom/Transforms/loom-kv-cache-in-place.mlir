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
