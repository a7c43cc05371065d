// Softmax over the rows of a 4096x4096 f32 matrix (64 MiB in, 64 MiB
// out), as a program for loomc: a row maximum, exp(x - max), a row sum
// and a division, each a linalg op of 2^24 points that
// loom-cpu-parallelize-loops runs in chunks of rows; the engine that
// docs/codegen.md ("Threads") times with loom-run --benchmark
// --num-threads 1 and 2.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @main(%x: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4096xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<4096xf32>) -> tensor<4096xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4096x4096xf32>) outs(%minit : tensor<4096xf32>) {
  ^bb0(%a: f32, %m: f32):
    %r = arith.maximumf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<4096xf32>
  %e2 = tensor.empty() : tensor<4096x4096xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<4096x4096xf32>, tensor<4096xf32>) outs(%e2 : tensor<4096x4096xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<4096x4096xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4096xf32>) -> tensor<4096xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<4096x4096xf32>) outs(%sinit : tensor<4096xf32>) {
  ^bb0(%a: f32, %s: f32):
    %r = arith.addf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<4096xf32>
  %out = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<4096x4096xf32>, tensor<4096xf32>) outs(%e2 : tensor<4096x4096xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %r = arith.divf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<4096x4096xf32>
  return %out : tensor<4096x4096xf32>
}
