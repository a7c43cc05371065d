// RUN: loom-opt %s -split-input-file -verify-diagnostics

func.func @unary_type_mismatch(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.exp"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @exp_of_integers(%x: tensor<4xi32>) {
  // expected-error @+1 {{must be ranked tensor of}}
  %0 = loom.exp %x : tensor<4xi32>
  return
}

// -----

func.func @broadcast_mismatch(%a: tensor<4x3xf32>, %b: tensor<5xf32>) {
  // expected-error @+2 {{do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.add %a, %b : tensor<4x3xf32>, tensor<5xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @broadcast_wrong_result(%a: tensor<4x1xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<4x3xf32>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.add %a, %b : tensor<4x1xf32>, tensor<3xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @element_type_mismatch(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{operands have different element types}}
  %0 = loom.mul %a, %b : tensor<4xf32>, tensor<4xf16> -> tensor<4xf32>
  return
}

// -----

func.func @compare_returns_bool(%a: tensor<4xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = loom.less %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @gelu_mode(%x: tensor<4xf32>) {
  // expected-error @+1 {{approximate must be one of "none", "tanh"}}
  %0 = loom.gelu %x {approximate = "fast"} : tensor<4xf32>
  return
}

// -----

func.func @where_types(%c: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{on_false must have the element type of the input}}
  %0 = loom.where %c, %a, %b : tensor<4xi1>, tensor<4xf32>, tensor<4xi32> -> tensor<4xf32>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{contracting dimensions differ: 3 vs 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.matmul %a, %b : tensor<2x3xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{input has 4 channels but weight expects 3 x 1 groups}}
  %0 = loom.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  return
}

// -----

func.func @conv_output_size(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x16x6x6xf32>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32>
  return
}

// -----

func.func @conv_pads(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{expects 4 pads (begin pads, then end pads)}}
  %0 = loom.conv %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x6x6xf32>
  return
}

// -----

func.func @conv_transpose_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<16x3x3x3xf32>) {
  // expected-error @+1 {{input channels must equal weight dimension 0}}
  %0 = loom.conv_transpose %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x3x10x10xf32>
  return
}

// -----

func.func @pool_kernel(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{expects one kernel size per spatial axis}}
  %0 = loom.max_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @pool_size(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x3x4x4xf32>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.avg_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x5xf32>
  return
}

// -----

func.func @batch_norm_params(%x: tensor<1x3x8x8xf32>, %p: tensor<4xf32>) {
  // expected-error @+1 {{per-channel parameters must be 1-D with 3 elements}}
  %0 = loom.batch_norm %x, %p, %p, %p, %p : tensor<1x3x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<1x3x8x8xf32>
  return
}

// -----

func.func @instance_norm_rank(%x: tensor<2x3xf32>, %p: tensor<3xf32>) {
  // expected-error @+1 {{expects an input of rank >= 3}}
  %0 = loom.instance_norm %x, %p, %p : tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @layer_norm_scale(%x: tensor<2x8x64xf32>, %g: tensor<32xf32>) {
  // expected-error @+1 {{does not broadcast to the normalized shape}}
  %0 = loom.layer_norm %x, %g : (tensor<2x8x64xf32>, tensor<32xf32>) -> tensor<2x8x64xf32>
  return
}

// -----

func.func @rms_norm_axis(%x: tensor<2x8x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{axis 3 is out of range for rank 3}}
  %0 = loom.rms_norm %x, %g {axis = 3 : i64} : tensor<2x8x64xf32>, tensor<64xf32> -> tensor<2x8x64xf32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{axis -3 is out of range for rank 2}}
  %0 = loom.softmax %x {axis = -3 : i64} : tensor<2x8xf32>
  return
}

// -----

func.func @attention_heads(%q: tensor<1x8x16x64xf32>, %kv: tensor<1x3x16x64xf32>) {
  // expected-error @+1 {{query heads (8) must be a multiple of key/value heads (3)}}
  %0 = loom.attention %q, %kv, %kv : (tensor<1x8x16x64xf32>, tensor<1x3x16x64xf32>, tensor<1x3x16x64xf32>) -> tensor<1x8x16x64xf32>
  return
}

// -----

func.func @attention_mask(%q: tensor<1x8x16x64xf32>, %kv: tensor<1x2x16x64xf32>, %m: tensor<16x15xi1>) {
  // expected-error @+1 {{does not broadcast to [B, H, S, T]}}
  %0 = loom.attention %q, %kv, %kv, %m : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>, tensor<16x15xi1>) -> tensor<1x8x16x64xf32>
  return
}

// -----

func.func @attention_window(%q: tensor<1x8x16x64xf32>, %kv: tensor<1x2x16x64xf32>) {
  // expected-error @+1 {{windows must be >= 0, or -1 for none}}
  %0 = loom.attention %q, %kv, %kv {left_window = -2 : i64} : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32>) -> tensor<1x8x16x64xf32>
  return
}

// -----

func.func @rotary_tables(%x: tensor<1x8x16x64xf32>, %c: tensor<16x64xf32>) {
  // expected-error @+1 {{cos and sin tables must have D/2 = 32 columns}}
  %0 = loom.rotary_embedding %x, %c, %c : tensor<1x8x16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32> -> tensor<1x8x16x64xf32>
  return
}

// -----

func.func @resize_mode(%x: tensor<1x3x4x4xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{mode must be one of "nearest", "linear", "cubic"}}
  %0 = loom.resize %x, %s {mode = "area"} : (tensor<1x3x4x4xf32>, tensor<4xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----

func.func @reduce_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{reduction axis 2 is out of range [0, 2)}}
  %0 = loom.reduce_sum %x {axes = array<i64: 2>} : tensor<2x8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @reduce_repeated(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{reduction axis 1 is repeated}}
  %0 = loom.reduce_max %x {axes = array<i64: 1, 1>} : tensor<2x8xf32> -> tensor<2x1xf32>
  return
}

// -----

func.func @argmax_shape(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2xi64>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.argmax %x {axis = 1 : i64, keepdims = false} : tensor<2x8xf32> -> tensor<8xi64>
  return
}

// -----

func.func @topk_k(%x: tensor<2x8xf32>, %k: tensor<2xi64>) {
  // expected-error @+1 {{k must hold exactly one value}}
  %0:2 = loom.topk %x, %k : tensor<2x8xf32>, tensor<2xi64> -> tensor<2x2xf32>, tensor<2x2xi64>
  return
}

// -----

func.func @cumsum_axis(%x: tensor<8xf32>) {
  // expected-error @+1 {{axis 1 is out of range for rank 1}}
  %0 = loom.cumsum %x {axis = 1 : i64} : tensor<8xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>, %s: tensor<2xi64>) {
  // expected-error @+1 {{cannot reshape 6 elements into 'tensor<4x2xf32>'}}
  %0 = loom.reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<4x2xf32>
  return
}

// -----

func.func @reshape_rank(%x: tensor<2x3xf32>, %s: tensor<3xi64>) {
  // expected-error @+1 {{shape has 3 elements but the result has rank 2}}
  %0 = loom.reshape %x, %s : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  return
}

// -----

func.func @transpose_perm(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{perm is not a permutation}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.transpose %x {perm = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x2xf32>
  return
}

// -----

func.func @concat_dims(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+2 {{operand dimension 1 differs}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

func.func @split_sizes(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{result sizes add up to 7, not 8}}
  %0:2 = loom.split %x {axis = 1 : i64} : tensor<4x8xf32> -> tensor<4x2xf32>, tensor<4x5xf32>
  return
}

// -----

func.func @slice_lengths(%x: tensor<8xf32>, %a: tensor<1xi64>, %b: tensor<2xi64>) {
  // expected-error @+1 {{starts, ends, axes and steps must have one length}}
  %0 = loom.slice %x, %a, %b : (tensor<8xf32>, tensor<1xi64>, tensor<2xi64>) -> tensor<?xf32>
  return
}

// -----

func.func @gather_shape(%x: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+2 {{inferred type(s) 'tensor<3x4xf32>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.gather %x, %i {axis = 0 : i64} : tensor<10x4xf32>, tensor<3xi64> -> tensor<4x3xf32>
  return
}

// -----

func.func @gather_elements_rank(%x: tensor<10x4xf32>, %i: tensor<3xi64>) {
  // expected-error @+1 {{indices must have the rank of data}}
  %0 = loom.gather_elements %x, %i {axis = 0 : i64} : tensor<10x4xf32>, tensor<3xi64> -> tensor<3xf32>
  return
}

// -----

func.func @gather_nd_tuple(%x: tensor<2x2xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+1 {{index tuples of length 3 do not address data of rank 2}}
  %0 = loom.gather_nd %x, %i : tensor<2x2xf32>, tensor<2x3xi64> -> tensor<2xf32>
  return
}

// -----

func.func @scatter_reduction(%x: tensor<3x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2x3xf32>) {
  // expected-error @+1 {{reduction must be one of "none", "add", "mul", "max", "min", got "sub"}}
  %0 = loom.scatter_elements %x, %i, %u {reduction = "sub"} : tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32> -> tensor<3x3xf32>
  return
}

// -----

func.func @scatter_nd_updates(%x: tensor<8xf32>, %i: tensor<4x1xi64>, %u: tensor<4x2xf32>) {
  // expected-error @+1 {{updates must have rank 1}}
  %0 = loom.scatter_nd %x, %i, %u : tensor<8xf32>, tensor<4x1xi64>, tensor<4x2xf32> -> tensor<8xf32>
  return
}

// -----

func.func @pad_length(%x: tensor<2x3xf32>, %p: tensor<2xi64>) {
  // expected-error @+1 {{pads must hold 2 * rank = 4 values}}
  %0 = loom.pad %x, %p : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  return
}

// -----

func.func @expand_shape(%x: tensor<3x2xf32>, %s: tensor<2xi64>) {
  // expected-error @+1 {{input does not broadcast to the result shape}}
  %0 = loom.expand %x, %s : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<3x4xf32>
  return
}

// -----

func.func @tile_repeats(%x: tensor<3x2xf32>, %r: tensor<3xi64>) {
  // expected-error @+1 {{repeats must have one value per dimension}}
  %0 = loom.tile %x, %r : (tensor<3x2xf32>, tensor<3xi64>) -> tensor<3x2xf32>
  return
}

// -----

func.func @squeeze_non_unit(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{squeezed dimension 0 does not have size 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.squeeze %x {axes = array<i64: 0>} : tensor<2x3xf32> -> tensor<3xf32>
  return
}

// -----

func.func @unsqueeze_axis(%x: tensor<3xf32>) {
  // expected-error @+2 {{unsqueeze axis 2 is out of range or repeated}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.unsqueeze %x {axes = array<i64: 2>} : tensor<3xf32> -> tensor<3x1xf32>
  return
}

// -----

func.func @shape_length(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<2xi64>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.shape %x : tensor<2x3xf32> -> tensor<3xi64>
  return
}

// -----

func.func @range_types(%a: tensor<i64>, %b: tensor<i32>) {
  // expected-error @+1 {{start, limit and delta must be 0-D tensors of the result's element type}}
  %0 = loom.range %a, %b, %a : tensor<i64>, tensor<i32>, tensor<i64> -> tensor<?xi64>
  return
}

// -----

func.func @constant_of_shape_value(%s: tensor<2xi64>) {
  // expected-error @+1 {{value must have the result's element type}}
  %0 = loom.constant_of_shape %s {value = 0 : i64} : tensor<2xi64> -> tensor<2x2xf32>
  return
}

// -----

func.func @one_hot_values(%i: tensor<4xi64>, %d: tensor<i64>, %v: tensor<3xf32>) {
  // expected-error @+1 {{values must be [off, on]}}
  %0 = loom.one_hot %i, %d, %v : tensor<4xi64>, tensor<i64>, tensor<3xf32> -> tensor<4x10xf32>
  return
}

// -----

func.func @trilu_rank(%x: tensor<4xf32>) {
  // expected-error @+1 {{expects an input of rank >= 2}}
  %0 = loom.trilu %x : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @non_zero_rows(%x: tensor<3x4xf32>) {
  // expected-error @+1 {{result must have one row per input dimension}}
  %0 = loom.non_zero %x : tensor<3x4xf32> -> tensor<3x?xi64>
  return
}

// -----

func.func @abs_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.abs"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @neg_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.neg"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @sign_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.sign"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @relu_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.relu"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @log_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.log"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @sqrt_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.sqrt"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @rsqrt_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.rsqrt"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @reciprocal_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.reciprocal"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @sin_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.sin"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @cos_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.cos"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @tan_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.tan"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @asin_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.asin"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @acos_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.acos"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @atan_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.atan"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @sinh_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.sinh"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @cosh_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.cosh"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @asinh_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.asinh"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @acosh_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.acosh"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @atanh_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.atanh"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @tanh_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @erf_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.erf"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @floor_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.floor"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @ceil_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.ceil"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @round_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.round"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @sigmoid_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.sigmoid"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @softplus_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.softplus"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @softsign_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.softsign"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @silu_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.silu"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @elu_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.elu"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @selu_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.selu"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @leaky_relu_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.leaky_relu"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @hard_sigmoid_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "loom.hard_sigmoid"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @float_only(%x: tensor<4xi32>) {
  // expected-error @+1 {{must be ranked tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = loom.sigmoid %x : tensor<4xi32>
  return
}

// -----

func.func @not_bool(%x: tensor<4xf32>) {
  // expected-error @+1 {{must be ranked tensor of 1-bit signless integer values}}
  %0 = loom.not %x : tensor<4xf32>
  return
}

// -----

func.func @bitwise_not_float(%x: tensor<4xf32>) {
  // expected-error @+1 {{must be ranked tensor of signless integer or unsigned integer values}}
  %0 = loom.bitwise_not %x : tensor<4xf32>
  return
}

// -----

func.func @sub_broadcast(%a: tensor<4x3xf32>, %b: tensor<2xf32>) {
  // expected-error @+2 {{do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.sub %a, %b : tensor<4x3xf32>, tensor<2xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @div_broadcast(%a: tensor<4x3xf32>, %b: tensor<2xf32>) {
  // expected-error @+2 {{do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.div %a, %b : tensor<4x3xf32>, tensor<2xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @pow_broadcast(%a: tensor<4x3xf32>, %b: tensor<2xf32>) {
  // expected-error @+2 {{do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.pow %a, %b : tensor<4x3xf32>, tensor<2xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @max_broadcast(%a: tensor<4x3xf32>, %b: tensor<2xf32>) {
  // expected-error @+2 {{do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.max %a, %b : tensor<4x3xf32>, tensor<2xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @min_broadcast(%a: tensor<4x3xf32>, %b: tensor<2xf32>) {
  // expected-error @+2 {{do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.min %a, %b : tensor<4x3xf32>, tensor<2xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @mod_broadcast(%a: tensor<4x3xf32>, %b: tensor<2xf32>) {
  // expected-error @+2 {{do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.mod %a, %b : tensor<4x3xf32>, tensor<2xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @and_float(%a: tensor<4xf32>) {
  // expected-error @+1 {{must be ranked tensor of signless integer or unsigned integer values}}
  %0 = loom.and %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  return
}

// -----

func.func @or_float(%a: tensor<4xf32>) {
  // expected-error @+1 {{must be ranked tensor of signless integer or unsigned integer values}}
  %0 = loom.or %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  return
}

// -----

func.func @xor_float(%a: tensor<4xf32>) {
  // expected-error @+1 {{must be ranked tensor of signless integer or unsigned integer values}}
  %0 = loom.xor %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xi1>
  return
}

// -----

func.func @equal_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = loom.equal %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @greater_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = loom.greater %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @greater_equal_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = loom.greater_equal %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @less_equal_result(%a: tensor<4xf32>) {
  // expected-error @+1 {{result #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = loom.less_equal %a, %a : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @bit_shift_float(%a: tensor<4xf32>) {
  // expected-error @+1 {{must be ranked tensor of signless integer or unsigned integer values}}
  %0 = loom.bit_shift %a, %a {direction = "LEFT"} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

func.func @cast_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape and base type}}
  %0 = loom.cast %a : tensor<4xf32> to tensor<5xf16>
  return
}

// -----

func.func @bitcast_width(%a: tensor<4xf32>) {
  // expected-error @+1 {{needs element types of one width, got 'f32' and 'i16'}}
  %0 = loom.bitcast %a : tensor<4xf32> to tensor<4xi16>
  return
}

// -----

func.func @constant_type() {
  // expected-error @+1 {{failed to verify that all of {value, result} have same type}}
  %0 = "loom.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  return
}

// -----

func.func @is_inf_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape and base type}}
  %0 = loom.is_inf %a : tensor<4xf32> -> tensor<5xi1>
  return
}

// -----

func.func @is_nan_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape and base type}}
  %0 = loom.is_nan %a : tensor<4xf32> -> tensor<5xi1>
  return
}

// -----

func.func @argmin_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{axis is out of range}}
  %0 = loom.argmin %x {axis = 2 : i64} : tensor<2x8xf32> -> tensor<2x8xi64>
  return
}

// -----

func.func @reduce_mean_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{reduction axis -1 is out of range}}
  %0 = loom.reduce_mean %x {axes = array<i64: -1>} : tensor<2x8xf32> -> tensor<2x1xf32>
  return
}

// -----

func.func @reduce_min_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{reduction axis -1 is out of range}}
  %0 = loom.reduce_min %x {axes = array<i64: -1>} : tensor<2x8xf32> -> tensor<2x1xf32>
  return
}

// -----

func.func @reduce_prod_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{reduction axis -1 is out of range}}
  %0 = loom.reduce_prod %x {axes = array<i64: -1>} : tensor<2x8xf32> -> tensor<2x1xf32>
  return
}

// -----

func.func @log_softmax_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{axis 2 is out of range for rank 2}}
  %0 = loom.log_softmax %x {axis = 2 : i64} : tensor<2x8xf32>
  return
}

// -----

func.func @size_result(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{result #0 must be 0D tensor of 64-bit signless integer values}}
  %0 = loom.size %x : tensor<2x8xf32> -> tensor<1xi64>
  return
}

// -----

func.func @resize_scales_length(%x: tensor<1x3x4x4xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{expects one scale per axis (4), got 2}}
  %0 = loom.resize %x, %s : (tensor<1x3x4x4xf32>, tensor<2xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----

func.func @resize_scales_type(%x: tensor<1x3x4x4xf32>, %s: tensor<4xf16>) {
  // expected-error @+1 {{operand #1 must be 1D tensor of 32-bit float values}}
  %0 = loom.resize %x, %s : (tensor<1x3x4x4xf32>, tensor<4xf16>) -> tensor<1x3x8x8xf32>
  return
}

// -----

func.func @resize_scales_value(%x: tensor<1x3x4x4xf32>) {
  %s = loom.constant dense<[1.0, 1.0, 0.0, 2.0]> : tensor<4xf32>
  // expected-error @+1 {{scales must be positive and finite, got 0}}
  %0 = loom.resize %x, %s : (tensor<1x3x4x4xf32>, tensor<4xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----

func.func @resize_roi_length(%x: tensor<1x3x4x4xf32>, %s: tensor<4xf32>, %roi: tensor<4xf32>) {
  // expected-error @+1 {{roi must hold 2 * rank = 8 values, got 4}}
  %0 = loom.resize %x, %s, %roi {coordinate_transformation_mode = "tf_crop_and_resize"} : (tensor<1x3x4x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x3x2x2xf32>
  return
}

// -----

func.func @resize_roi_missing(%x: tensor<1x3x4x4xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{tf_crop_and_resize requires a roi operand}}
  %0 = loom.resize %x, %s {coordinate_transformation_mode = "tf_crop_and_resize"} : (tensor<1x3x4x4xf32>, tensor<4xf32>) -> tensor<1x3x2x2xf32>
  return
}

// -----

func.func @grid_sample_grid(%x: tensor<1x3x8x8xf32>, %g: tensor<1x4x4x3xf32>) {
  // expected-error @+1 {{grid must hold 2 coordinates in its last dimension}}
  %0 = loom.grid_sample %x, %g : tensor<1x3x8x8xf32>, tensor<1x4x4x3xf32> -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @grid_sample_rank(%x: tensor<3x8x8xf32>, %g: tensor<1x4x4x2xf32>) {
  // expected-error @+1 {{expects a 4-D input [N, C, H, W] and grid [N, Ho, Wo, 2]}}
  %0 = loom.grid_sample %x, %g : tensor<3x8x8xf32>, tensor<1x4x4x2xf32> -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @grid_sample_result(%x: tensor<1x3x8x8xf32>, %g: tensor<1x4x5x2xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x3x4x5xf32>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.grid_sample %x, %g : tensor<1x3x8x8xf32>, tensor<1x4x5x2xf32> -> tensor<1x3x5x4xf32>
  return
}

// -----

func.func @grid_sample_volume_bicubic(%x: tensor<1x3x4x8x8xf32>, %g: tensor<1x2x4x4x3xf32>) {
  // expected-error @+1 {{bicubic sampling takes 2 spatial axes (a 4-D input)}}
  %0 = loom.grid_sample %x, %g {mode = "bicubic"} : tensor<1x3x4x8x8xf32>, tensor<1x2x4x4x3xf32> -> tensor<1x3x2x4x4xf32>
  return
}

// -----

func.func @grid_sample_mode(%x: tensor<1x3x8x8xf32>, %g: tensor<1x4x4x2xf32>) {
  // expected-error @+1 {{mode must be one of "bilinear", "nearest", "bicubic", got "linear"}}
  %0 = loom.grid_sample %x, %g {mode = "linear"} : tensor<1x3x8x8xf32>, tensor<1x4x4x2xf32> -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @grid_sample_padding(%x: tensor<1x3x8x8xf32>, %g: tensor<1x4x4x2xf32>) {
  // expected-error @+1 {{padding_mode must be one of "zeros", "border", "reflection", got "wrap"}}
  %0 = loom.grid_sample %x, %g {padding_mode = "wrap"} : tensor<1x3x8x8xf32>, tensor<1x4x4x2xf32> -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @roi_align_rois(%x: tensor<1x3x8x8xf32>, %r: tensor<5x5xf32>, %i: tensor<5xi64>) {
  // expected-error @+1 {{rois must be [R, 4]}}
  %0 = loom.roi_align %x, %r, %i : tensor<1x3x8x8xf32>, tensor<5x5xf32>, tensor<5xi64> -> tensor<5x3x1x1xf32>
  return
}

// -----

func.func @roi_align_indices(%x: tensor<1x3x8x8xf32>, %r: tensor<5x4xf32>, %i: tensor<4xi64>) {
  // expected-error @+1 {{batch_indices must hold one index per roi}}
  %0 = loom.roi_align %x, %r, %i : tensor<1x3x8x8xf32>, tensor<5x4xf32>, tensor<4xi64> -> tensor<5x3x1x1xf32>
  return
}

// -----

func.func @roi_align_result(%x: tensor<1x3x8x8xf32>, %r: tensor<5x4xf32>, %i: tensor<5xi64>) {
  // expected-error @+2 {{inferred type(s) 'tensor<5x3x2x2xf32>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.roi_align %x, %r, %i {output_height = 2 : i64, output_width = 2 : i64} : tensor<1x3x8x8xf32>, tensor<5x4xf32>, tensor<5xi64> -> tensor<5x3x7x7xf32>
  return
}

// -----

func.func @roi_align_size(%x: tensor<1x3x8x8xf32>, %r: tensor<5x4xf32>, %i: tensor<5xi64>) {
  // expected-error @+1 {{output_height and output_width must be positive}}
  %0 = loom.roi_align %x, %r, %i {output_height = 0 : i64} : tensor<1x3x8x8xf32>, tensor<5x4xf32>, tensor<5xi64> -> tensor<5x3x0x1xf32>
  return
}

// -----

func.func @roi_align_sampling(%x: tensor<1x3x8x8xf32>, %r: tensor<5x4xf32>, %i: tensor<5xi64>) {
  // expected-error @+1 {{sampling_ratio must be non-negative}}
  %0 = loom.roi_align %x, %r, %i {sampling_ratio = -1 : i64} : tensor<1x3x8x8xf32>, tensor<5x4xf32>, tensor<5xi64> -> tensor<5x3x1x1xf32>
  return
}

// -----

func.func @roi_align_mode(%x: tensor<1x3x8x8xf32>, %r: tensor<5x4xf32>, %i: tensor<5xi64>) {
  // expected-error @+1 {{coordinate_transformation_mode must be one of "half_pixel", "output_half_pixel", got "align_corners"}}
  %0 = loom.roi_align %x, %r, %i {coordinate_transformation_mode = "align_corners"} : tensor<1x3x8x8xf32>, tensor<5x4xf32>, tensor<5xi64> -> tensor<5x3x1x1xf32>
  return
}

// -----

func.func @roi_align_rois_type(%x: tensor<1x3x8x8xf32>, %r: tensor<5x4xf16>, %i: tensor<5xi64>) {
  // expected-error @+1 {{rois must have the element type of the input}}
  %0 = loom.roi_align %x, %r, %i : tensor<1x3x8x8xf32>, tensor<5x4xf16>, tensor<5xi64> -> tensor<5x3x1x1xf32>
  return
}

// -----

func.func @nms_boxes(%b: tensor<1x6x5xf32>, %s: tensor<1x2x6xf32>) {
  // expected-error @+1 {{boxes must be [B, N, 4]}}
  %0 = loom.non_max_suppression %b, %s : (tensor<1x6x5xf32>, tensor<1x2x6xf32>) -> tensor<?x3xi64>
  return
}

// -----

func.func @nms_scores(%b: tensor<1x6x4xf32>, %s: tensor<1x2x5xf32>) {
  // expected-error @+1 {{do not match boxes}}
  %0 = loom.non_max_suppression %b, %s : (tensor<1x6x4xf32>, tensor<1x2x5xf32>) -> tensor<?x3xi64>
  return
}

// -----

func.func @nms_scalar(%b: tensor<1x6x4xf32>, %s: tensor<1x2x6xf32>, %t: tensor<2xf32>) {
  // expected-error @+1 {{iou_threshold must be a scalar (0-D or [1])}}
  %0 = loom.non_max_suppression %b, %s iou_threshold %t : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<2xf32>) -> tensor<?x3xi64>
  return
}

// -----

func.func @nms_max_type(%b: tensor<1x6x4xf32>, %s: tensor<1x2x6xf32>, %k: tensor<1xi32>) {
  // expected-error @+1 {{operand #2 must be ranked tensor of 64-bit signless integer values}}
  %0 = loom.non_max_suppression %b, %s max_output_boxes_per_class %k : (tensor<1x6x4xf32>, tensor<1x2x6xf32>, tensor<1xi32>) -> tensor<?x3xi64>
  return
}

// -----

func.func @nms_result(%b: tensor<1x6x4xf32>, %s: tensor<1x2x6xf32>) {
  // expected-error @+1 {{result must be tensor<?x3xi64>, got 'tensor<3x3xi64>'}}
  %0 = loom.non_max_suppression %b, %s : (tensor<1x6x4xf32>, tensor<1x2x6xf32>) -> tensor<3x3xi64>
  return
}

// -----

func.func @max_pool_indices_shape(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x3x4x4xf32>', 'tensor<1x3x4x4xi64>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0, %1 = loom.max_pool_with_indices %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>, tensor<1x3x2x2xi64>
  return
}

// -----

func.func @max_pool_storage_order(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{storage_order must be 0 (row-major) or 1 (column-major), got 2}}
  %0, %1 = loom.max_pool_with_indices %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, storage_order = 2 : i64} : tensor<1x3x8x8xf32> -> tensor<1x3x4x4xf32>, tensor<1x3x4x4xi64>
  return
}

// -----

func.func @max_pool_indices_window(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x3x4x4xf32>', 'tensor<1x3x4x4xi64>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0, %1 = loom.max_pool_with_indices %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x8x8xf32> -> tensor<1x3x3x4xf32>, tensor<1x3x3x4xi64>
  return
}

// -----

// Ops that infer their result types reject a stated type that contradicts
// the inferred one.

func.func @conv_transpose_result(%x: tensor<1x4x3x3xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x2x7x7xf32>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.conv_transpose %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, output_padding = array<i64: 0, 0>} : (tensor<1x4x3x3xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x7x7xf32>
  return
}

// -----

func.func @max_pool_ceil_result(%x: tensor<1x3x2x2xf32>) {
  // The last window would start in the end padding: ONNX drops it.
  // expected-error @+2 {{inferred type(s) 'tensor<1x3x1x1xf32>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.max_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = true} : tensor<1x3x2x2xf32> -> tensor<1x3x2x2xf32>
  return
}

// -----

func.func @pool_window_too_large(%x: tensor<1x3x2x2xf32>) {
  // expected-error @+1 {{spatial axis 0 holds 2 elements with pads, fewer than the window of 3}}
  %0 = loom.avg_pool %x {kernel_shape = array<i64: 3, 1>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : tensor<1x3x2x2xf32> -> tensor<1x3x1x2xf32>
  return
}

// -----

func.func @attention_result(%q: tensor<1x8x16x64xf32>, %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x32xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x8x16x32xf32>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.attention %q, %k, %v : (tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x32xf32>) -> tensor<1x8x16x64xf32>
  return
}

// -----

func.func @gather_elements_result(%x: tensor<10x4xf32>, %i: tensor<3x2xi64>) {
  // expected-error @+2 {{inferred type(s) 'tensor<3x2xf32>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.gather_elements %x, %i {axis = 0 : i64} : tensor<10x4xf32>, tensor<3x2xi64> -> tensor<3x4xf32>
  return
}

// -----

func.func @gather_nd_result(%x: tensor<2x3x4xf32>, %i: tensor<5x2xi64>) {
  // expected-error @+2 {{inferred type(s) 'tensor<5x4xf32>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.gather_nd %x, %i : tensor<2x3x4xf32>, tensor<5x2xi64> -> tensor<5x3x4xf32>
  return
}

// -----

func.func @gather_nd_unranked_element_type(%x: tensor<2x3x4xf32>, %i: tensor<5x?xi64>) {
  // The rank is unknown, but not the element type.
  // expected-error @+2 {{inferred type(s) 'tensor<*xf32>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.gather_nd %x, %i : tensor<2x3x4xf32>, tensor<5x?xi64> -> tensor<5x4xf16>
  return
}

// -----

func.func @argmin_result(%x: tensor<2x8xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1x8xi64>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.argmin %x {axis = 0 : i64} : tensor<2x8xf32> -> tensor<8xi64>
  return
}

// -----

func.func @shape_negative_start(%x: tensor<2x3x4xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<1xi64>' are incompatible with return type(s)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = loom.shape %x {start = -2 : i64, end = -1 : i64} : tensor<2x3x4xf32> -> tensor<2xi64>
  return
}

// -----

func.func @split_equal(%x: tensor<7x4xf32>) {
  // Without sizes the pieces are equal and the last may be smaller.
  // expected-error @+1 {{result 0 has type 'tensor<2x4xf32>', expected 'tensor<3x4xf32>'}}
  %0:3 = loom.split %x {axis = 0 : i64} : tensor<7x4xf32> -> tensor<2x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @split_sizes_result(%x: tensor<?x4xf32>) {
  // expected-error @+1 {{result 1 has type 'tensor<2x4xf32>', expected 'tensor<3x4xf32>'}}
  %0:2 = loom.split %x {axis = 0 : i64, sizes = array<i64: 2, 3>} : tensor<?x4xf32> -> tensor<2x4xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @split_sizes_sum(%x: tensor<6x4xf32>) {
  // expected-error @+1 {{sizes add up to 5, not 6}}
  %0:2 = loom.split %x {axis = 0 : i64, sizes = array<i64: 2, 3>} : tensor<6x4xf32> -> tensor<?x4xf32>, tensor<?x4xf32>
  return
}

// -----

func.func @fusion_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{kind must be one of "elementwise", "reduction", "epilogue", got "fused"}}
  %0 = loom.fusion "fused" ins(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %1 = loom.exp %a : tensor<4xf32>
    loom.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @fusion_arg_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has 1 inputs but its block has 2 arguments}}
  %0 = loom.fusion "elementwise" ins(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %1 = loom.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    loom.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @fusion_arg_type(%x: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{block argument 0 has type 'tensor<4xf16>', but input 0 has type 'tensor<4xf32>'}}
  %0 = loom.fusion "elementwise" ins(%x : tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%a: tensor<4xf16>):
    %1 = loom.exp %a : tensor<4xf16>
    loom.yield %1 : tensor<4xf16>
  }
  return %0 : tensor<4xf16>
}

// -----

func.func @fusion_yield_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{yields 2 values for 1 results}}
  %0 = loom.fusion "elementwise" ins(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %1 = loom.exp %a : tensor<4xf32>
    loom.yield %1, %1 : tensor<4xf32>, tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @fusion_yield_type(%x: tensor<4xf32>) -> tensor<4xi1> {
  // expected-error @+1 {{yielded value 0 has type 'tensor<4xf32>', but result 0 has type 'tensor<4xi1>'}}
  %0 = loom.fusion "elementwise" ins(%x : tensor<4xf32>) -> tensor<4xi1> {
  ^bb0(%a: tensor<4xf32>):
    %1 = loom.exp %a : tensor<4xf32>
    loom.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xi1>
}

// -----

func.func @fusion_isolated(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = loom.fusion "elementwise" -> tensor<4xf32> {
    // expected-error @+1 {{using value defined outside the region}}
    %1 = loom.exp %x : tensor<4xf32>
    loom.yield %1 : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @yield_outside_fusion(%x: tensor<4xf32>) {
  // expected-error @+1 {{expects parent op to be one of 'loom.fusion, loom.pipeline_stage, loom.if, loom.loop'}}
  loom.yield %x : tensor<4xf32>
}

// -----

func.func @quantize_scale_does_not_broadcast(%x: tensor<4x8xf32>, %s: tensor<4xf32>) {
  // expected-error @+1 {{scale of type 'tensor<4xf32>' does not broadcast to 'tensor<4x8xf32>'}}
  %0 = loom.quantize %x, %s : (tensor<4x8xf32>, tensor<4xf32>) -> tensor<4x8xi8>
  return
}

// -----

func.func @quantize_zero_point_type(%x: tensor<4x8xf32>, %s: tensor<f32>, %z: tensor<ui8>) {
  // expected-error @+1 {{zero point must have element type 'i8', got 'ui8'}}
  %0 = loom.quantize %x, %s, %z : (tensor<4x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<4x8xi8>
  return
}

// -----

func.func @quantize_fp8_zero_point(%x: tensor<4x8xf32>, %s: tensor<f32>, %z: tensor<f8E4M3FN>) {
  // expected-error @+1 {{float quantized values take no zero point}}
  %0 = loom.quantize %x, %s, %z : (tensor<4x8xf32>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<4x8xf8E4M3FN>
  return
}

// -----

func.func @dequantize_shape(%x: tensor<4x8xi8>, %s: tensor<f32>) {
  // expected-error @+1 {{result must have the shape of the input}}
  %0 = loom.dequantize %x, %s : (tensor<4x8xi8>, tensor<f32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @qmatmul_mixed_kinds(%a: tensor<4x16xi8>, %b: tensor<16x8xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{operands must both be 8-bit integers or both f8E4M3FN}}
  %0 = loom.qmatmul %a, %b scales(%s, %s) : (tensor<4x16xi8>, tensor<16x8xf8E4M3FN>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @qmatmul_per_channel_count(%a: tensor<4x16xi8>, %b: tensor<16x8xi8>, %s: tensor<f32>, %ws: tensor<4xf32>) {
  // expected-error @+1 {{weight scale must be 0-D or one value per output channel (8)}}
  %0 = loom.qmatmul %a, %b scales(%s, %ws) : (tensor<4x16xi8>, tensor<16x8xi8>, tensor<f32>, tensor<4xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @qmatmul_contraction(%a: tensor<4x15xi8>, %b: tensor<16x8xi8>, %s: tensor<f32>) {
  // expected-error @+1 {{contracting dimensions differ: 15 vs 16}}
  %0 = loom.qmatmul %a, %b scales(%s, %s) : (tensor<4x15xi8>, tensor<16x8xi8>, tensor<f32>, tensor<f32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @qmatmul_one_zero_point(%a: tensor<4x16xi8>, %b: tensor<16x8xi8>, %s: tensor<f32>, %z: tensor<i8>) {
  // expected-error @+1 {{zero points come both or neither}}
  %0 = "loom.qmatmul"(%a, %b, %s, %s, %z) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>} : (tensor<4x16xi8>, tensor<16x8xi8>, tensor<f32>, tensor<f32>, tensor<i8>) -> tensor<4x8xf32>
  return
}

// -----

func.func @qconv_result(%x: tensor<1x3x8x8xi8>, %w: tensor<16x3x3x3xi8>, %s: tensor<f32>) {
  // expected-error @+1 {{result type must be 'tensor<1x16x6x6xf32>'}}
  %0 = loom.qconv %x, %w scales(%s, %s) {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x3x8x8xi8>, tensor<16x3x3x3xi8>, tensor<f32>, tensor<f32>) -> tensor<1x16x8x8xf32>
  return
}

// -----

func.func @swiglu_of_integers(%g: tensor<4xi32>, %u: tensor<4xi32>) {
  // expected-error @+1 {{must be ranked tensor of}}
  %0 = loom.swiglu %g, %u : tensor<4xi32>, tensor<4xi32> -> tensor<4xi32>
  return
}

// -----

shard.grid @grid(shape = 2)

func.func @pipeline_stage_outside_grid(%x: tensor<4xf32>) {
  // expected-error @+1 {{stage 2 is outside grid axis 0 of size 2}}
  loom.pipeline_stage @grid axis 0 stage 2 micro_batch 0 ins(%x : tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    loom.yield
  }
  return
}

// -----

shard.grid @grid(shape = 2)

func.func @pipeline_stage_bad_axis(%x: tensor<4xf32>) {
  // expected-error @+1 {{grid axis 1 is not an axis of @grid}}
  loom.pipeline_stage @grid axis 1 stage 0 micro_batch 0 ins(%x : tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    loom.yield
  }
  return
}

// -----

func.func @pipeline_stage_no_grid(%x: tensor<4xf32>) {
  // expected-error @+1 {{refers to @nowhere, which is not a shard.grid}}
  loom.pipeline_stage @nowhere axis 0 stage 0 micro_batch 0 ins(%x : tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    loom.yield
  }
  return
}

// -----

shard.grid @grid(shape = 2)

func.func @pipeline_stage_yield_types(%x: tensor<4xf32>) {
  // expected-error @+1 {{yielded value 0 has type 'tensor<4xf32>', but result 0 has type 'tensor<4xf16>'}}
  %0 = loom.pipeline_stage @grid axis 0 stage 0 micro_batch 0 ins(%x : tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%a: tensor<4xf32>):
    loom.yield %a : tensor<4xf32>
  }
  return
}

// -----

shard.grid @grid(shape = 2)

func.func @pipeline_stage_arguments(%x: tensor<4xf32>) {
  // expected-error @+1 {{has 1 inputs but its block has 0 arguments}}
  loom.pipeline_stage @grid axis 0 stage 0 micro_batch 0 ins(%x : tensor<4xf32>) {
    loom.yield
  }
  return
}

// -----

func.func @moe_experts(%x: tensor<6x16xf32>, %p: tensor<6x4xf32>, %w1: tensor<3x16x32xf32>, %w2: tensor<4x32x16xf32>) {
  // expected-error @+1 {{scores, w_in and w_out disagree on the number of experts}}
  %0 = loom.moe %x, %p, %w1, %w2 {k = 2 : i64} : (tensor<6x16xf32>, tensor<6x4xf32>, tensor<3x16x32xf32>, tensor<4x32x16xf32>) -> tensor<6x16xf32>
  return
}

// -----

func.func @moe_tokens(%x: tensor<6x16xf32>, %p: tensor<5x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>) {
  // expected-error @+1 {{input and scores disagree on the number of tokens}}
  %0 = loom.moe %x, %p, %w1, %w2 {k = 2 : i64} : (tensor<6x16xf32>, tensor<5x4xf32>, tensor<4x16x32xf32>, tensor<4x32x16xf32>) -> tensor<6x16xf32>
  return
}

// -----

func.func @moe_model(%x: tensor<6x16xf32>, %p: tensor<6x4xf32>, %w1: tensor<4x8x32xf32>, %w2: tensor<4x32x16xf32>) {
  // expected-error @+1 {{input, w_in and w_out disagree on the model dimension}}
  %0 = loom.moe %x, %p, %w1, %w2 {k = 2 : i64} : (tensor<6x16xf32>, tensor<6x4xf32>, tensor<4x8x32xf32>, tensor<4x32x16xf32>) -> tensor<6x16xf32>
  return
}

// -----

func.func @moe_hidden(%x: tensor<6x16xf32>, %p: tensor<6x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x64x16xf32>) {
  // expected-error @+1 {{w_in and w_out disagree on the hidden dimension}}
  %0 = loom.moe %x, %p, %w1, %w2 {k = 2 : i64} : (tensor<6x16xf32>, tensor<6x4xf32>, tensor<4x16x32xf32>, tensor<4x64x16xf32>) -> tensor<6x16xf32>
  return
}

// -----

func.func @moe_k(%x: tensor<6x16xf32>, %p: tensor<6x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>) {
  // expected-error @+1 {{k must be in [1, experts], got 5}}
  %0 = loom.moe %x, %p, %w1, %w2 {k = 5 : i64} : (tensor<6x16xf32>, tensor<6x4xf32>, tensor<4x16x32xf32>, tensor<4x32x16xf32>) -> tensor<6x16xf32>
  return
}

// -----

func.func @moe_activation(%x: tensor<6x16xf32>, %p: tensor<6x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>) {
  // expected-error @+1 {{unknown activation 'tanh'; expected relu, gelu, silu or none}}
  %0 = loom.moe %x, %p, %w1, %w2 {k = 2 : i64, activation = "tanh"} : (tensor<6x16xf32>, tensor<6x4xf32>, tensor<4x16x32xf32>, tensor<4x32x16xf32>) -> tensor<6x16xf32>
  return
}

// -----

func.func @moe_capacity(%x: tensor<6x16xf32>, %p: tensor<6x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>) {
  // expected-error @+1 {{capacity_factor must be positive, got 0}}
  %0 = loom.moe %x, %p, %w1, %w2 {k = 2 : i64, capacity_factor = 0.0 : f64} : (tensor<6x16xf32>, tensor<6x4xf32>, tensor<4x16x32xf32>, tensor<4x32x16xf32>) -> tensor<6x16xf32>
  return
}

// -----

func.func @moe_rank(%x: tensor<2x6x16xf32>, %p: tensor<6x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>) {
  // expected-error @+1 {{expects input [T, D] and scores [T, E]}}
  %0 = loom.moe %x, %p, %w1, %w2 {k = 2 : i64} : (tensor<2x6x16xf32>, tensor<6x4xf32>, tensor<4x16x32xf32>, tensor<4x32x16xf32>) -> tensor<2x6x16xf32>
  return
}

// -----

func.func @moe_gate(%x: tensor<6x16xf32>, %p: tensor<6x4xf32>, %w1: tensor<4x16x32xf32>, %w2: tensor<4x32x16xf32>, %g: tensor<4x16x8xf32>) {
  // expected-error @+1 {{expects w_gate of the type of w_in ('tensor<4x16x32xf32>'), got 'tensor<4x16x8xf32>'}}
  %0 = loom.moe %x, %p, %w1, %w2 gate %g {k = 2 : i64} : (tensor<6x16xf32>, tensor<6x4xf32>, tensor<4x16x32xf32>, tensor<4x32x16xf32>, tensor<4x16x8xf32>) -> tensor<6x16xf32>
  return
}

// -----

func.func @cache_append_length(%c: tensor<1x2x8x4xf32>, %u: tensor<1x2x1x4xf32>, %n: tensor<1xi64>) {
  // expected-error @+1 {{expects a scalar length}}
  %0 = loom.cache_append %c, %u, %n {axis = 2 : i64} : (tensor<1x2x8x4xf32>, tensor<1x2x1x4xf32>, tensor<1xi64>) -> tensor<1x2x?x4xf32>
  return
}

// -----

func.func @cache_append_heads(%c: tensor<1x2x8x4xf32>, %u: tensor<1x3x1x4xf32>, %n: tensor<i64>) {
  // expected-error @+1 {{dimension 1 differs from the cache's (2)}}
  %0 = loom.cache_append %c, %u, %n {axis = 2 : i64} : (tensor<1x2x8x4xf32>, tensor<1x3x1x4xf32>, tensor<i64>) -> tensor<1x2x?x4xf32>
  return
}

// -----

func.func @cache_append_static_length(%c: tensor<1x2x8x4xf32>, %u: tensor<1x2x1x4xf32>, %n: tensor<i64>) {
  // expected-error @+1 {{expects the result's length along the axis to be dynamic}}
  %0 = loom.cache_append %c, %u, %n {axis = 2 : i64} : (tensor<1x2x8x4xf32>, tensor<1x2x1x4xf32>, tensor<i64>) -> tensor<1x2x8x4xf32>
  return
}

// -----

func.func @if_condition_of_two(%c: tensor<2xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{condition must hold one element, not 2}}
  %0 = loom.if %c : tensor<2xi1> ins(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    loom.yield %a : tensor<4xf32>
  } else {
  ^bb0(%a: tensor<4xf32>):
    loom.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @if_branch_arguments(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{else branch: has 1 inputs but its block has 0 arguments}}
  %0 = loom.if %c : tensor<i1> ins(%x : tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    loom.yield %a : tensor<4xf32>
  } else {
    %b = loom.constant dense<0.0> : tensor<4xf32>
    loom.yield %b : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @if_yield_type(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{then branch: yielded value 0 has type 'tensor<4xf32>', but result 0 has type 'tensor<?xf32>'}}
  %0 = loom.if %c : tensor<i1> ins(%x : tensor<4xf32>) -> tensor<?xf32> {
  ^bb0(%a: tensor<4xf32>):
    loom.yield %a : tensor<4xf32>
  } else {
  ^bb0(%a: tensor<4xf32>):
    %b = tensor.cast %a : tensor<4xf32> to tensor<?xf32>
    loom.yield %b : tensor<?xf32>
  }
  return %0 : tensor<?xf32>
}

// -----

func.func @if_isolated(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = loom.if %c : tensor<i1> -> tensor<4xf32> {
    // expected-error @+1 {{using value defined outside the region}}
    loom.yield %x : tensor<4xf32>
  } else {
    loom.yield %x : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @loop_arguments(%n: tensor<i64>, %c: tensor<i1>, %y0: tensor<1xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{body must take the iteration number, the condition, the carried values and the inputs (3 arguments), not 2}}
  %y = loom.loop %n, %c : tensor<i64>, tensor<i1> carried(%y0 : tensor<1xf32>) -> tensor<1xf32> {
  ^bb0(%i: tensor<i64>, %go: tensor<i1>):
    loom.yield %go, %y0 : tensor<i1>, tensor<1xf32>
  }
  return %y : tensor<1xf32>
}

// -----

func.func @loop_carried_type(%n: tensor<i64>, %c: tensor<i1>, %y0: tensor<1xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{body yields 'tensor<2xf32>' for carried value 0 of type 'tensor<1xf32>'}}
  %y = loom.loop %n, %c : tensor<i64>, tensor<i1> carried(%y0 : tensor<1xf32>) -> tensor<1xf32> {
  ^bb0(%i: tensor<i64>, %go: tensor<i1>, %y: tensor<1xf32>):
    %0 = loom.concat %y, %y {axis = 0 : i64} : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
    loom.yield %go, %0 : tensor<i1>, tensor<2xf32>
  }
  return %y : tensor<1xf32>
}

// -----

func.func @loop_scan_type(%n: tensor<i64>, %c: tensor<i1>, %y0: tensor<1xf32>) -> tensor<?x2xf32> {
  // expected-error @+1 {{scan output 0 has type 'tensor<?x2xf32>', which does not stack the body's 'tensor<1xf32>'}}
  %y, %s = loom.loop %n, %c : tensor<i64>, tensor<i1> carried(%y0 : tensor<1xf32>) -> tensor<1xf32>, tensor<?x2xf32> {
  ^bb0(%i: tensor<i64>, %go: tensor<i1>, %y: tensor<1xf32>):
    loom.yield %go, %y, %y : tensor<i1>, tensor<1xf32>, tensor<1xf32>
  }
  return %s : tensor<?x2xf32>
}

// -----

func.func @loop_condition(%n: tensor<i64>, %c: tensor<i1>, %y0: tensor<1xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{body must yield the condition (one i1) first}}
  %y = loom.loop %n, %c : tensor<i64>, tensor<i1> carried(%y0 : tensor<1xf32>) -> tensor<1xf32> {
  ^bb0(%i: tensor<i64>, %go: tensor<i1>, %y: tensor<1xf32>):
    loom.yield %i, %y : tensor<i64>, tensor<1xf32>
  }
  return %y : tensor<1xf32>
}
