// bf16 arithmetic, broadcasts and selects through an engine: on a host
// without a bf16 conversion instruction these need the pipeline's own
// conversions (loom-cpu-expand-bf16) and the engine's own __truncsfbf2.
func.func @main(%x: tensor<4x37xf32>, %y: tensor<4x37xf32>) -> (tensor<4x37xbf16>, tensor<4x37xf32>, tensor<4x37xbf16>) {
  %hx = loom.cast %x : tensor<4x37xf32> to tensor<4x37xbf16>
  %hy = loom.cast %y : tensor<4x37xf32> to tensor<4x37xbf16>
  %c = loom.less %y, %x : tensor<4x37xf32>, tensor<4x37xf32> -> tensor<4x37xi1>
  %fill = loom.constant dense<-1.5> : tensor<bf16>
  %w = loom.where %c, %hx, %fill : tensor<4x37xi1>, tensor<4x37xbf16>, tensor<bf16> -> tensor<4x37xbf16>
  %sum = loom.add %w, %hy : tensor<4x37xbf16>, tensor<4x37xbf16> -> tensor<4x37xbf16>
  %back = loom.cast %sum : tensor<4x37xbf16> to tensor<4x37xf32>
  %p = loom.mul %hx, %hy : tensor<4x37xbf16>, tensor<4x37xbf16> -> tensor<4x37xbf16>
  return %sum, %back, %p : tensor<4x37xbf16>, tensor<4x37xf32>, tensor<4x37xbf16>
}
