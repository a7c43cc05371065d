// A softmax over the rows of a 512x1024 f32 matrix and the sums of its
// columns: linalg ops of 2^19 points, above loomc's default
// --parallel-elements (2^17), so each runs as a parallel loop over chunks
// of rows (the column sums over chunks of columns, all rows in order).
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#column = affine_map<(d0, d1) -> (d1)>
func.func @main(%x: tensor<512x1024xf32>) -> (tensor<512x1024xf32>, tensor<1024xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<512xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<512xf32>) -> tensor<512xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<512x1024xf32>) outs(%minit : tensor<512xf32>) {
  ^bb0(%a: f32, %m: f32):
    %r = arith.maximumf %a, %m : f32
    linalg.yield %r : f32
  } -> tensor<512xf32>
  %e2 = tensor.empty() : tensor<512x1024xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<512x1024xf32>, tensor<512xf32>) outs(%e2 : tensor<512x1024xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<512x1024xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%e1 : tensor<512xf32>) -> tensor<512xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<512x1024xf32>) outs(%sinit : tensor<512xf32>) {
  ^bb0(%a: f32, %s: f32):
    %r = arith.addf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<512xf32>
  %out = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<512x1024xf32>, tensor<512xf32>) outs(%e2 : tensor<512x1024xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %r = arith.divf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<512x1024xf32>
  %e3 = tensor.empty() : tensor<1024xf32>
  %cinit = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1024xf32>) -> tensor<1024xf32>
  %cols = linalg.generic {indexing_maps = [#id, #column], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<512x1024xf32>) outs(%cinit : tensor<1024xf32>) {
  ^bb0(%a: f32, %s: f32):
    %r = arith.addf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  return %out, %cols : tensor<512x1024xf32>, tensor<1024xf32>
}
