// GELU (erf form) of a 4096x4096 f32 matrix plus a residual input: one
// fused elementwise loop of 2^24 points that loom-cpu-parallelize-loops
// runs in chunks of rows; the engine that docs/codegen.md ("Threads")
// times with loom-run --benchmark --num-threads 1 and 2.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @main(%x: tensor<4096x4096xf32>, %y: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rsqrt2 = arith.constant 0.707106781 : f32
  %e = tensor.empty() : tensor<4096x4096xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<4096x4096xf32>, tensor<4096x4096xf32>) outs(%e : tensor<4096x4096xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %a, %rsqrt2 : f32
    %f = math.erf %s : f32
    %p = arith.addf %f, %one : f32
    %h = arith.mulf %a, %half : f32
    %g = arith.mulf %h, %p : f32
    %t = arith.addf %g, %b : f32
    linalg.yield %t : f32
  } -> tensor<4096x4096xf32>
  return %r : tensor<4096x4096xf32>
}
