func.func @main(%x: tensor<4x6xf32>) -> (tensor<2x3xf32>, tensor<6x10xf32>, tensor<6x10xf32>, tensor<3x7xf32>, tensor<7x16xf32>, tensor<4x5xf32>, tensor<4x13xf32>) {
  %starts = loom.constant dense<[-1, 5]> : tensor<2xi64>
  %ends = loom.constant dense<[-100, 0]> : tensor<2xi64>
  %axes = loom.constant dense<[0, -1]> : tensor<2xi64>
  %steps = loom.constant dense<[-2, -2]> : tensor<2xi64>
  %s = loom.slice %x, %starts, %ends, %axes, %steps : (tensor<4x6xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x3xf32>
  %pads = loom.constant dense<[1, 2, 1, 2]> : tensor<4xi64>
  %r = loom.pad %x, %pads {mode = "reflect"} : (tensor<4x6xf32>, tensor<4xi64>) -> tensor<6x10xf32>
  %e = loom.pad %x, %pads {mode = "edge"} : (tensor<4x6xf32>, tensor<4xi64>) -> tensor<6x10xf32>
  %crop = loom.constant dense<[0, 2, -1, -1]> : tensor<4xi64>
  %v = loom.constant dense<2.5> : tensor<f32>
  %c = loom.pad %x, %crop, %v : (tensor<4x6xf32>, tensor<4xi64>, tensor<f32>) -> tensor<3x7xf32>
  // Wrap pads longer than the dimension repeat it; a crop on one side
  // narrows the window that the other side's pad repeats or mirrors.
  %wrapPads = loom.constant dense<[1, 7, 2, 3]> : tensor<4xi64>
  %w = loom.pad %x, %wrapPads {mode = "wrap"} : (tensor<4x6xf32>, tensor<4xi64>) -> tensor<7x16xf32>
  %cropPads = loom.constant dense<[1, -2, -1, 1]> : tensor<4xi64>
  %wc = loom.pad %x, %cropPads {mode = "wrap"} : (tensor<4x6xf32>, tensor<4xi64>) -> tensor<4x5xf32>
  %reflectPads = loom.constant dense<[0, 8, 0, -1]> : tensor<4xi64>
  %rc = loom.pad %x, %reflectPads {mode = "reflect"} : (tensor<4x6xf32>, tensor<4xi64>) -> tensor<4x13xf32>
  return %s, %r, %e, %c, %w, %wc, %rc : tensor<2x3xf32>, tensor<6x10xf32>, tensor<6x10xf32>, tensor<3x7xf32>, tensor<7x16xf32>, tensor<4x5xf32>, tensor<4x13xf32>
}
