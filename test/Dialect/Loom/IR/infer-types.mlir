// RUN: loom-opt %s -split-input-file -verify-diagnostics

// Result-type inference, checked through the verifier: each op states a
// result type that cannot match (a 0-element 1-D tensor), so the verifier
// prints the type it inferred. Pooling cases with a comment come from ONNX's
// backend node tests, whose outputs the ONNX reference computed.

func.func @conv_dynamic_batch(%x: tensor<?x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<?x16x8x8xf32>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<0xf32>
  return
}

// -----

func.func @conv_strided_dilated(%x: tensor<1x3x9x10xf32>, %w: tensor<16x3x3x3xf32>) {
  // The dilated window spans 5 elements.
  // expected-error @+2 {{inferred type(s) 'tensor<1x16x3x3xf32>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.conv %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 2, 2>} : (tensor<1x3x9x10xf32>, tensor<16x3x3x3xf32>) -> tensor<0xf32>
  return
}

// -----

func.func @conv_grouped(%x: tensor<1x4x5x5xf32>, %w: tensor<8x2x3x3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x8x3x3xf32>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<8x2x3x3xf32>) -> tensor<0xf32>
  return
}

// -----

func.func @conv_transpose_grouped(%x: tensor<1x4x3x?xf32>, %w: tensor<4x2x3x3xf32>) {
  // 2 * (3 - 1) + 1 + (3 - 1) + 1 - 1 - 1 = 6; 2 groups of 2 channels.
  // expected-error @+2 {{inferred type(s) 'tensor<1x4x6x?xf32>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.conv_transpose %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, group = 2 : i64} : (tensor<1x4x3x?xf32>, tensor<4x2x3x3xf32>) -> tensor<0xf32>
  return
}

// -----

// test_maxpool_2d_ceil
func.func @max_pool_ceil(%x: tensor<1x1x4x4xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x1x2x2xf32>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : tensor<1x1x4x4xf32> -> tensor<0xf32>
  return
}

// -----

// test_maxpool_2d_ceil_output_size_reduce_by_one: ceil gives 2 windows, but
// the second would start past the input.
func.func @max_pool_ceil_reduce_by_one(%x: tensor<1x1x2x2xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x1x1x1xf32>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.max_pool %x {kernel_shape = array<i64: 1, 1>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : tensor<1x1x2x2xf32> -> tensor<0xf32>
  return
}

// -----

// test_averagepool_2d_ceil_last_window_starts_on_pad
func.func @avg_pool_ceil_last_window_on_pad(%x: tensor<1x3x2x2xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x3x1x1xf32>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = true, count_include_pad = true} : tensor<1x3x2x2xf32> -> tensor<0xf32>
  return
}

// -----

// test_averagepool_3d_dilations_large_count_include_pad_is_0_ceil_mode_is_True
func.func @avg_pool_dilated_ceil(%x: tensor<1x1x32x32x32xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x1x9x9x9xf32>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.avg_pool %x {kernel_shape = array<i64: 5, 5, 5>, strides = array<i64: 3, 3, 3>, pads = array<i64: 0, 0, 0, 0, 0, 0>, dilations = array<i64: 2, 2, 2>, ceil_mode = true} : tensor<1x1x32x32x32xf32> -> tensor<0xf32>
  return
}

// -----

// test_averagepool_3d_dilations_large_count_include_pad_is_0_ceil_mode_is_False
func.func @avg_pool_dilated_floor(%x: tensor<1x1x32x32x32xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x1x8x8x8xf32>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.avg_pool %x {kernel_shape = array<i64: 5, 5, 5>, strides = array<i64: 3, 3, 3>, pads = array<i64: 0, 0, 0, 0, 0, 0>, dilations = array<i64: 2, 2, 2>} : tensor<1x1x32x32x32xf32> -> tensor<0xf32>
  return
}

// -----

func.func @max_pool_with_indices_dynamic(%x: tensor<?x3x8x?xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<?x3x4x?xf32>', 'tensor<?x3x4x?xi64>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = loom.max_pool_with_indices %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<?x3x8x?xf32> -> tensor<0xf32>, tensor<0xi64>
  return
}

// -----

func.func @attention_value_head_size(%q: tensor<?x8x16x64xf32>, %k: tensor<1x2x20x64xf32>, %v: tensor<1x2x20x32xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<?x8x16x32xf32>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.attention %q, %k, %v : (tensor<?x8x16x64xf32>, tensor<1x2x20x64xf32>, tensor<1x2x20x32xf32>) -> tensor<0xf32>
  return
}

// -----

func.func @gather_scalar_index(%x: tensor<2x3x4xf32>, %i: tensor<i64>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2x4xf32>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.gather %x, %i {axis = -2 : i64} : tensor<2x3x4xf32>, tensor<i64> -> tensor<0xf32>
  return
}

// -----

func.func @gather_elements_shape_of_indices(%x: tensor<?x4xf16>, %i: tensor<3x?xi32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<3x?xf16>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.gather_elements %x, %i {axis = 1 : i64} : tensor<?x4xf16>, tensor<3x?xi32> -> tensor<0xf16>
  return
}

// -----

func.func @gather_nd_batch_dims(%x: tensor<2x3x4xf32>, %i: tensor<?x5x1xi64>) {
  // The batch dimension is shared, so data gives its size.
  // expected-error @+2 {{inferred type(s) 'tensor<2x5x4xf32>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.gather_nd %x, %i {batch_dims = 1 : i64} : tensor<2x3x4xf32>, tensor<?x5x1xi64> -> tensor<0xf32>
  return
}

// -----

func.func @gather_nd_dynamic_tuple_length(%x: tensor<2x3x4xf32>, %i: tensor<5x?xi64>) {
  // The rank depends on the tuple length; any ranked f32 result refines it.
  %0 = loom.gather_nd %x, %i : tensor<2x3x4xf32>, tensor<5x?xi64> -> tensor<5x?xf32>
  %1 = loom.gather_nd %x, %i : tensor<2x3x4xf32>, tensor<5x?xi64> -> tensor<5xf32>
  return
}

// -----

func.func @argmax_keepdims(%x: tensor<2x?xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2x1xi64>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.argmax %x {axis = -1 : i64} : tensor<2x?xf32> -> tensor<0xi64>
  return
}

// -----

func.func @argmin_drop_axis(%x: tensor<2x?x5xi32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2x5xi64>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.argmin %x {axis = 1 : i64, keepdims = false} : tensor<2x?x5xi32> -> tensor<0xi64>
  return
}

// -----

func.func @shape_clamped(%x: tensor<?x3x4xf32>) {
  // start = -1 counts from the end: one dimension.
  // expected-error @+2 {{inferred type(s) 'tensor<1xi64>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.shape %x {start = -1 : i64} : tensor<?x3x4xf32> -> tensor<0xi64>
  // Bounds clamp to the rank, so an empty range is fine.
  %1 = loom.shape %x {start = 5 : i64, end = -7 : i64} : tensor<?x3x4xf32> -> tensor<0xi64>
  return
}

// -----

func.func @size(%x: tensor<?x3xf32>) -> tensor<i64> {
  // The only type its result constraint allows.
  %0 = loom.size %x : tensor<?x3xf32> -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

func.func @split_equal_last_smaller(%x: tensor<7x4xf32>) {
  // Equal pieces of ceil(7 / 3) = 3; the last one holds what is left.
  // expected-error @+1 {{result 2 has type 'tensor<2x4xf32>', expected 'tensor<1x4xf32>'}}
  %0:3 = loom.split %x {axis = 0 : i64} : tensor<7x4xf32> -> tensor<?x4xf32>, tensor<?x4xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @grid_sample_batch_from_grid(%x: tensor<?x3x8x8xf32>, %g: tensor<2x4x5x2xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2x3x4x5xf32>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.grid_sample %x, %g : tensor<?x3x8x8xf32>, tensor<2x4x5x2xf32> -> tensor<0xf32>
  return
}

// -----

func.func @roi_align_count_from_indices(%x: tensor<1x3x8x8xf32>, %r: tensor<?x4xf32>, %i: tensor<7xi64>) {
  // expected-error @+2 {{inferred type(s) 'tensor<7x3x2x5xf32>' are incompatible}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.roi_align %x, %r, %i {output_height = 2 : i64, output_width = 5 : i64} : tensor<1x3x8x8xf32>, tensor<?x4xf32>, tensor<7xi64> -> tensor<0xf32>
  return
}
