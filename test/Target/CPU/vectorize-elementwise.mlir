// RUN: loom-opt %s --split-input-file --loom-cpu-vectorize-elementwise=vector-bits=512 --canonicalize --cse | FileCheck %s

// LayerNorm's last step on [2, 16, 64]: loops over the rows, and the
// 64 columns as 4 vectors of 16. The per-row mean and variance (which do
// not walk the innermost loop) are loaded once per row, before the
// column loop, and what the body computes from them alone (the variance
// plus epsilon, its square root) is computed there too, as scalars, and
// broadcast; gamma walks the columns contiguously.
// CHECK-LABEL: func.func @normalize
// CHECK: scf.for %[[I:.+]] = %c0 to %c2 step %c1
// CHECK-NEXT: scf.for %[[J:.+]] = %c0 to %c16 step %c1
// CHECK-NEXT: %[[MEAN:.+]] = memref.load %arg1[%[[I]], %[[J]], %c0] : memref<2x16x1xf32>
// CHECK-NEXT: %[[VAR:.+]] = memref.load %arg2[%[[I]], %[[J]], %c0] : memref<2x16x1xf32>
// CHECK-NEXT: %[[VE:.+]] = arith.addf %[[VAR]], %{{.+}} : f32
// CHECK-NEXT: %[[SQRT:.+]] = math.sqrt %[[VE]] : f32
// CHECK-NEXT: scf.for %[[K:.+]] = %c0 to %c64 step %c16
// CHECK-NEXT: %[[X:.+]] = vector.transfer_read %arg0[%[[I]], %[[J]], %[[K]]], %{{.+}} {in_bounds = [true]} : memref<2x16x64xf32>, vector<16xf32>
// CHECK-NEXT: %[[M:.+]] = vector.broadcast %[[MEAN]] : f32 to vector<16xf32>
// CHECK-NEXT: %[[G:.+]] = vector.transfer_read %arg3[%[[K]]], %{{.+}} {in_bounds = [true]} : memref<64xf32>, vector<16xf32>
// CHECK-NEXT: %[[D:.+]] = arith.subf %[[X]], %[[M]] : vector<16xf32>
// CHECK-NEXT: %[[S:.+]] = vector.broadcast %[[SQRT]] : f32 to vector<16xf32>
// CHECK-NEXT: %[[N:.+]] = arith.divf %[[D]], %[[S]] : vector<16xf32>
// CHECK-NEXT: %[[R:.+]] = arith.mulf %[[N]], %[[G]] : vector<16xf32>
// CHECK-NEXT: vector.transfer_write %[[R]], %arg4[%[[I]], %[[J]], %[[K]]] {in_bounds = [true]} : vector<16xf32>, memref<2x16x64xf32>
// CHECK-NOT: linalg.generic
func.func @normalize(%x: memref<2x16x64xf32>, %mean: memref<2x16x1xf32>, %var: memref<2x16x1xf32>, %gamma: memref<64xf32>, %out: memref<2x16x64xf32>) {
  %eps = arith.constant 1.0e-5 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, 0)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %mean, %var, %gamma : memref<2x16x64xf32>, memref<2x16x1xf32>, memref<2x16x1xf32>, memref<64xf32>) outs(%out : memref<2x16x64xf32>) {
  ^bb0(%a: f32, %m: f32, %v: f32, %g: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %ve = arith.addf %v, %eps : f32
    %s = math.sqrt %ve : f32
    %n = arith.divf %d, %s : f32
    %r = arith.mulf %n, %g : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A row sum over an innermost reduction of 37: two vectors of 16 into a
// vector accumulator (from zeros), reduced once; then the remainder of 5
// as pieces of 4 and 1, each reduced and added; then the output's old
// value is added and stored.
// CHECK-LABEL: func.func @row_sum
// CHECK-DAG: %[[ZERO:.+]] = arith.constant dense<0.000000e+00> : vector<16xf32>
// CHECK: scf.for %[[I:.+]] = %c0 to %c3 step %c1
// CHECK-NEXT: %[[ACC:.+]] = scf.for %[[K:.+]] = %c0 to %c32 step %c16 iter_args(%[[A:.+]] = %[[ZERO]]) -> (vector<16xf32>)
// CHECK-NEXT: %[[X:.+]] = vector.transfer_read %arg0[%[[I]], %[[K]]], %{{.+}} {in_bounds = [true]} : memref<3x37xf32>, vector<16xf32>
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[A]], %[[X]] : vector<16xf32>
// CHECK-NEXT: scf.yield %[[S]]
// CHECK: %[[R:.+]] = vector.reduction <add>, %[[ACC]] : vector<16xf32> into f32
// CHECK: %[[X4:.+]] = vector.transfer_read %arg0[%[[I]], %c32], %{{.+}} : memref<3x37xf32>, vector<4xf32>
// CHECK: vector.reduction <add>, %[[X4]] : vector<4xf32> into f32
// CHECK: vector.transfer_read %arg0[%[[I]], %c36], %{{.+}} : memref<3x37xf32>, vector<1xf32>
// CHECK: %[[OLD:.+]] = memref.load %arg1[%[[I]]]
// CHECK: %[[SUM:.+]] = vector.extract
// CHECK: %[[NEW:.+]] = arith.addf %[[SUM]], %[[OLD]] : f32
// CHECK: memref.store %[[NEW]], %arg1[%[[I]]]
func.func @row_sum(%x: memref<3x37xf32>, %out: memref<3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<3x37xf32>) outs(%out : memref<3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A row maximum starts from -inf.
// CHECK-LABEL: func.func @row_max
// CHECK: arith.constant dense<0xFF800000> : vector<16xf32>
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: vector.reduction <maximumf>
func.func @row_max(%x: memref<4x32xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x32xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Run-time rows (a parallel chunk, or a symbolic batch) and a run-time
// innermost size: full vectors up to the last multiple of 16, then one
// element at a time. linalg.index of the innermost loop is the lane's
// position.
// CHECK-LABEL: func.func @run_time
// CHECK: %[[N:.+]] = memref.dim %arg0, %c1
// CHECK: %[[FULL:.+]] = arith.muli
// CHECK: scf.for %[[J:.+]] = %c0 to %[[FULL]] step %c16
// CHECK: %[[BASE:.+]] = vector.broadcast %[[J]] : index to vector<16xindex>
// CHECK: %[[STEP:.+]] = vector.step : vector<16xindex>
// CHECK: arith.addi %[[BASE]], %[[STEP]] : vector<16xindex>
// CHECK: scf.for %{{.+}} = %[[FULL]] to %[[N]] step %c1
// CHECK: vector.transfer_read {{.*}} vector<1xf32>
func.func @run_time(%x: memref<?x?xf32>, %out: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<?x?xf32>) outs(%out : memref<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %s = arith.addf %a, %jf : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A gather of rows (an embedding lookup): the index is read and converted
// once per row, and the table's row is read as vectors at [index, j] (the
// body's load whose last index is the innermost loop's).
// CHECK-LABEL: func.func @gather_rows
// CHECK: scf.for %[[T:.+]] = %c0 to %c5 step %c1
// CHECK-NEXT: %[[ID:.+]] = memref.load %arg0[%[[T]]] : memref<5xi64>
// CHECK-NEXT: %[[ROW:.+]] = arith.index_cast %[[ID]] : i64 to index
// CHECK-NEXT: scf.for %[[J:.+]] = %c0 to %c32 step %c16
// CHECK-NEXT: %[[V:.+]] = vector.transfer_read %arg1[%[[ROW]], %[[J]]], %{{.+}} {in_bounds = [true]} : memref<100x32xf32>, vector<16xf32>
// CHECK-NEXT: vector.transfer_write %[[V]], %arg2[%[[T]], %[[J]]]
func.func @gather_rows(%ids: memref<5xi64>, %table: memref<100x32xf32>, %out: memref<5x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%ids : memref<5xi64>) outs(%out : memref<5x32xf32>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %j = linalg.index 1 : index
    %v = memref.load %table[%row, %j] : memref<100x32xf32>
    linalg.yield %v : f32
  }
  return
}

// -----

// A fused softmax step (elementwise fusion keeps the producer's own
// result, broadcast along the row, as a second output): the new row
// maximum does not vary along the innermost loop, so it is computed once
// per row from the row's values, as a scalar, and stored as one; the
// exponentials are vectors.
// CHECK-LABEL: func.func @row_output
// CHECK: scf.for %[[I:.+]] = %c0 to %c4 step %c1
// CHECK-NEXT: %[[M:.+]] = memref.load %arg1[%[[I]], %c0]
// CHECK-NEXT: %[[OLD:.+]] = memref.load %arg2[%[[I]], %c0]
// CHECK-NEXT: %[[NEW:.+]] = arith.maximumf %[[M]], %[[OLD]] : f32
// CHECK-NEXT: scf.for %[[J:.+]] = %c0 to %c32 step %c16
// CHECK: %[[E:.+]] = math.exp %{{.+}} : vector<16xf32>
// CHECK: memref.store %[[NEW]], %arg2[%[[I]], %c0]
// CHECK: vector.transfer_write %[[E]], %arg3[%[[I]], %[[J]]]
func.func @row_output(%x: memref<4x32xf32>, %m: memref<4x1xf32>, %old: memref<4x1xf32>, %out: memref<4x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %m : memref<4x32xf32>, memref<4x1xf32>) outs(%old, %out : memref<4x1xf32>, memref<4x32xf32>) {
  ^bb0(%a: f32, %rowmax: f32, %o: f32, %e: f32):
    %new = arith.maximumf %rowmax, %o : f32
    %d = arith.subf %a, %new : f32
    %x2 = math.exp %d : f32
    linalg.yield %new, %x2 : f32, f32
  }
  return
}

// -----

// Not taken: a transposed read (the innermost loop is not the input's last
// index), booleans in memory (vectors of i1 are bit-packed), and a body
// that loads from memory at an index that varies along the innermost loop
// other than as the last index.
// CHECK-LABEL: func.func @not_taken
// CHECK-COUNT-3: linalg.generic
func.func @not_taken(%x: memref<8x16xf32>, %y: memref<16x8xf32>, %b: memref<16x8xi1>, %t: memref<4xf32>, %z: memref<16x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<8x16xf32>) outs(%y : memref<16x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : memref<16x8xf32>) outs(%b : memref<16x8xi1>) {
  ^bb0(%a: f32, %o: i1):
    %zero = arith.constant 0.0 : f32
    %c = arith.cmpf ogt, %a, %zero : f32
    linalg.yield %c : i1
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y : memref<16x8xf32>) outs(%z : memref<16x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %j = linalg.index 1 : index
    %c0 = arith.constant 0 : index
    %v = memref.load %z[%j, %c0] : memref<16x8xf32>
    %s = arith.addf %a, %v : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A chunk of a gather_nd (loom-cpu-parallelize-loops' view of its rows,
// the row offset an affine.apply): the index arithmetic has no vector
// form but depends on the outer loops alone, so it is computed once per
// row and the rows are copied as vectors.
// CHECK-LABEL: func.func @gather_nd_chunk
// CHECK: scf.for %[[E:.+]] = %c0 to %c2 step %c1
// CHECK-NEXT: %[[R:.+]] = affine.apply #{{.+}}()[%[[E]], %arg0]
// CHECK-NEXT: %[[ID:.+]] = memref.load %arg1[%[[R]], %c0] : memref<8x1xi64>
// CHECK-NEXT: %[[IDX:.+]] = arith.index_cast %[[ID]] : i64 to index
// CHECK: %[[ROW:.+]] = arith.maxsi %{{.+}}, %c0 : index
// CHECK: scf.for %[[J:.+]] = %c0 to %c64 step %c16
// CHECK-NEXT: %[[V:.+]] = vector.transfer_read %arg2[%[[ROW]], %[[J]]], %{{.+}} {in_bounds = [true]} : memref<4x64xf32>, vector<16xf32>
// CHECK-NEXT: vector.transfer_write %[[V]], %arg3[%[[E]], %[[J]]]
func.func @gather_nd_chunk(%start: index, %indices: memref<8x1xi64>, %data: memref<4x64xf32>, %out: memref<2x64xf32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%out : memref<2x64xf32>) {
  ^bb0(%o: f32):
    %e = linalg.index 0 : index
    %r = affine.apply affine_map<(d0)[s0] -> (d0 + s0)>(%start)[%e]
    %id = memref.load %indices[%r, %c0] : memref<8x1xi64>
    %i = arith.index_cast %id : i64 to index
    %neg = arith.cmpi slt, %i, %c0 : index
    %up = arith.addi %i, %c4 : index
    %w = arith.select %neg, %up, %i : index
    %lo = arith.minsi %w, %c3 : index
    %row = arith.maxsi %lo, %c0 : index
    %j = linalg.index 1 : index
    %v = memref.load %data[%row, %j] : memref<4x64xf32>
    linalg.yield %v : f32
  }
  return
}

// -----

// A gather_nd whose indices were reshaped with run-time sizes: the
// bufferized body reads them through memref.extract_strided_metadata and
// affine.(de)linearize_index, which make a memref and depend on the outer
// loops alone; they are computed once per row with the rest of the index
// arithmetic, and the rows are still copied as vectors
// (mixtral_dynamo_dyn's expert weights: 741 -> 92 us a gather).
// CHECK-LABEL: func.func @gather_nd_reshaped
// CHECK: scf.for %[[E:.+]] = %c0 to %{{.+}} step %c1
// CHECK-NEXT: scf.for %[[J:.+]] = %c0 to %c256 step %c1
// CHECK-NEXT: memref.extract_strided_metadata %arg1
// CHECK-NEXT: affine.delinearize_index %[[E]]
// CHECK: %[[ROW:.+]] = arith.maxsi %{{.+}}, %c0 : index
// CHECK: scf.for %[[K:.+]] = %c0 to %c64 step %c16
// CHECK-NEXT: %[[V:.+]] = vector.transfer_read %arg2[%[[ROW]], %[[J]], %[[K]]], %{{.+}} {in_bounds = [true]} : memref<4x256x64xf32>, vector<16xf32>
// CHECK-NEXT: vector.transfer_write %[[V]], %arg3[%[[E]], %[[J]], %[[K]]]
func.func @gather_nd_reshaped(%n: index, %indices: memref<?x2xi64>, %data: memref<4x256x64xf32>, %out: memref<?x256x64xf32>) {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%out : memref<?x256x64xf32>) {
  ^bb0(%o: f32):
    %e = linalg.index 0 : index
    %flat = affine.linearize_index disjoint [%e, %c0] by (%n, 1) : index
    %base, %offset, %sizes:2, %strides:2 = memref.extract_strided_metadata %indices : memref<?x2xi64> -> memref<i64>, index, index, index, index, index
    %at:2 = affine.delinearize_index %flat into (%sizes#0, 2) : index, index
    %id = memref.load %indices[%at#0, %at#1] : memref<?x2xi64>
    %i = arith.index_cast %id : i64 to index
    %neg = arith.cmpi slt, %i, %c0 : index
    %up = arith.addi %i, %c4 : index
    %w = arith.select %neg, %up, %i : index
    %lo = arith.minsi %w, %c3 : index
    %row = arith.maxsi %lo, %c0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %v = memref.load %data[%row, %j, %k] : memref<4x256x64xf32>
    linalg.yield %v : f32
  }
  return
}

// -----

// Rows shorter than a vector (a deep layer's 2x2 map): the two trailing
// loops are merged, every operand that walks them collapsed (the
// per-channel bias reads neither and stays as it is), so each channel is
// one vector of 4 instead of two of 2.
// CHECK-LABEL: func.func @short_rows
// CHECK-DAG: %[[X:.+]] = memref.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : memref<1x8x2x2xf32> into memref<1x8x4xf32>
// CHECK-DAG: %[[Y:.+]] = memref.collapse_shape %arg2 {{\[}}[0], [1], [2, 3]] : memref<1x8x2x2xf32> into memref<1x8x4xf32>
// CHECK: vector.transfer_read %[[X]]{{.*}} vector<4xf32>
// CHECK: vector.transfer_write %{{.+}}, %[[Y]]{{.*}} vector<4xf32>
// CHECK-NOT: vector<2xf32>
func.func @short_rows(%x: memref<1x8x2x2xf32>, %b: memref<8x1x1xf32>, %y: memref<1x8x2x2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, 0, 0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %b : memref<1x8x2x2xf32>, memref<8x1x1xf32>) outs(%y : memref<1x8x2x2xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Not merged: rows that are not contiguous with each other (a view of
// every other pair of columns), and a window's index arithmetic.
// CHECK-LABEL: func.func @short_rows_apart
// CHECK-NOT: memref.collapse_shape
// CHECK: vector<2xf32>
// CHECK-LABEL: func.func @short_window
// CHECK-NOT: memref.collapse_shape
// CHECK: return
func.func @short_rows_apart(%x: memref<1x8x2x2xf32, strided<[64, 8, 4, 1]>>, %y: memref<1x8x2x2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x8x2x2xf32, strided<[64, 8, 4, 1]>>) outs(%y : memref<1x8x2x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.negf %a : f32
    linalg.yield %s : f32
  }
  return
}
func.func @short_window(%x: memref<1x8x3x3xf32>, %y: memref<1x8x2x2x2x2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, kh, kw, oh, ow) -> (n, c, oh + kh, ow + kw)>, affine_map<(n, c, kh, kw, oh, ow) -> (n, c, kh, kw, oh, ow)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%x : memref<1x8x3x3xf32>) outs(%y : memref<1x8x2x2x2x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.negf %a : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A quantized product's exact epilogue: i32 accumulators scaled in f64 and
// rounded to f32. The vectors' width follows the elements read and
// written (32 bits: 16 lanes of 512 bits), not the f64 steps between,
// which take two registers each; at 8 lanes the f32 rows would get half
// the independent work for their long chains.
#epilogue = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @f64_steps
// CHECK: scf.for %{{.+}} = %c0 to %c128 step %c16
// CHECK: vector.transfer_read %arg0{{.+}} : memref<32x128xi32>, vector<16xi32>
// CHECK: arith.sitofp %{{.+}} : vector<16xi32> to vector<16xf64>
// CHECK: arith.mulf %{{.+}} : vector<16xf64>
// CHECK: arith.truncf %{{.+}} : vector<16xf64> to vector<16xf32>
// CHECK: vector.transfer_write %{{.+}} : vector<16xf32>, memref<32x128xf32>
func.func @f64_steps(%acc: memref<32x128xi32>, %scale: memref<f64>, %out: memref<32x128xf32>) {
  linalg.generic {indexing_maps = [#epilogue, #scalar, #epilogue], iterator_types = ["parallel", "parallel"]} ins(%acc, %scale : memref<32x128xi32>, memref<f64>) outs(%out : memref<32x128xf32>) {
  ^bb0(%a: i32, %s: f64, %o: f32):
    %wide = arith.sitofp %a : i32 to f64
    %scaled = arith.mulf %wide, %s : f64
    %narrow = arith.truncf %scaled : f64 to f32
    linalg.yield %narrow : f32
  }
  return
}

// -----

// Bytes computed in f64: 64 lanes of bytes would make each f64 value eight
// registers; the width stops at four registers of the widest value
// computed (32 lanes).
#bytes = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @bytes_in_f64
// CHECK: scf.for %{{.+}} = %c0 to %c128 step %c32
// CHECK: arith.uitofp %{{.+}} : vector<32xi8> to vector<32xf64>
// CHECK: vector.transfer_write %{{.+}} : vector<32xi8>, memref<128xi8>
func.func @bytes_in_f64(%in: memref<128xi8>, %out: memref<128xi8>) {
  linalg.generic {indexing_maps = [#bytes, #bytes], iterator_types = ["parallel"]} ins(%in : memref<128xi8>) outs(%out : memref<128xi8>) {
  ^bb0(%a: i8, %o: i8):
    %wide = arith.uitofp %a : i8 to f64
    %half = arith.mulf %wide, %wide : f64
    %narrow = arith.fptoui %half : f64 to i8
    linalg.yield %narrow : i8
  }
  return
}

// -----

// A 3x3 max pool with stride 2 in the order loom-cpu-contraction-order
// gives it (window loops outside the output row): the input's row steps by
// two along the innermost loop, read as the contiguous run of 2 * 16 - 1
// elements (a masked load of 32, the last lane off) and compacted by a
// shuffle into 16 lanes; the output row is read, combined and written back.
// CHECK-LABEL: func.func @strided_window
// CHECK: %[[MASK:.+]] = vector.constant_mask [31] : vector<32xi1>
// CHECK: %[[SPAN:.+]] = vector.maskedload %{{.+}}, %[[MASK]], %{{.+}} : memref<1x4x33x33xf32>, vector<32xi1>, vector<32xf32> into vector<32xf32>
// CHECK: %[[ROW:.+]] = vector.shuffle %[[SPAN]], %[[SPAN]] [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] : vector<32xf32>, vector<32xf32>
// CHECK: %[[OUT:.+]] = vector.transfer_read %{{.+}} : memref<1x4x16x16xf32>, vector<16xf32>
// CHECK: %[[MAX:.+]] = arith.maximumf %[[ROW]], %[[OUT]] : vector<16xf32>
// CHECK: vector.transfer_write %[[MAX]]
// A step of 5 stays a loop.
// CHECK-LABEL: func.func @wide_step
// CHECK-NOT: vector.shuffle
// CHECK: return
func.func @strided_window(%x: memref<1x4x33x33xf32>, %y: memref<1x4x16x16xf32>) {
  %window = memref.alloc() : memref<3x3xf32>
  linalg.generic {indexing_maps = [affine_map<(n, c, oh, kh, kw, ow) -> (n, c, oh * 2 + kh, ow * 2 + kw)>, affine_map<(n, c, oh, kh, kw, ow) -> (kh, kw)>, affine_map<(n, c, oh, kh, kw, ow) -> (n, c, oh, ow)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%x, %window : memref<1x4x33x33xf32>, memref<3x3xf32>) outs(%y : memref<1x4x16x16xf32>) {
  ^bb0(%a: f32, %w: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  }
  return
}
func.func @wide_step(%x: memref<1x4x81xf32>, %y: memref<1x4x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, w) -> (n, c, w * 5)>, affine_map<(n, c, w) -> (n, c, w)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : memref<1x4x81xf32>) outs(%y : memref<1x4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.negf %a : f32
    linalg.yield %s : f32
  }
  return
}
