//===- Passes.td - Loom graph passes -----------------------*- tablegen -*-===//
//
// Every pass is a thin driver over a pattern library
// (`populate...Patterns`) that other passes and pipelines can reuse.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD
#define LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LoomRecognizePass : Pass<"loom-recognize", "::mlir::func::FuncOp"> {
  let summary = "Recognize exported spellings of NN building blocks";
  let description = [{
    Rewrites the op sequences that exporters (PyTorch's above all) emit for
    layer normalization, RMS normalization, GELU (erf and tanh forms), SiLU,
    softmax, scaled dot-product attention (with causal or additive masks and
    grouped-query heads) and rotary embeddings into the single loom ops that
    later passes see whole.
  }];
  let dependentDialects = ["::loom::LoomDialect"];
}

def LoomSimplifyPass : Pass<"loom-simplify", "::mlir::func::FuncOp"> {
  let summary = "Fold batch-norm into convolutions and remove redundant "
                "data movement";
  let description = [{
    Folds inference batch normalization into the preceding convolution's
    weights and bias, cancels inverse transposes and chained reshapes,
    removes casts that round-trip, and computes mixture-of-experts
    products of per-token gathered weights as one product with every
    expert (few experts, constant weights).
  }];
  let dependentDialects = ["::loom::LoomDialect"];
}

def LoomStaticShapesPass
    : Pass<"loom-static-shapes", "::mlir::func::FuncOp"> {
  let summary = "Make result types static where their values allow";
  let description = [{
    Code generation needs static shapes (every target runs this first). In program order, each loom op
    whose stated result type has dynamic dimensions gets the more static
    type its type inference (or, for loom.one_hot, a constant depth) proves
    from its now static operands. The function's result types follow the
    returned values (a static result is what a compiled entry needs, and
    ops whose operand and result types must match would not verify
    otherwise). Ops inside loom.fusion regions are left alone.
  }];
}

def LoomPrecisionPass : Pass<"loom-precision", "::mlir::func::FuncOp"> {
  let summary = "Run contractions of an f32 program in fp16 or bf16";
  let description = [{
    Automatic mixed precision for f32 programs: loom.matmul, loom.conv,
    loom.conv_transpose and loom.attention take their float operands in the
    low-precision type and their results are cast back to f32; everything
    else (softmax, normalizations, reductions, transcendental and
    elementwise ops) stays f32. Constant weights are converted once, here,
    and a low -> f32 -> low round trip between two such ops is removed.
  }];
  let options = [
    Option<"precision", "precision", "::loom::Precision",
           /*default=*/"::loom::Precision::FP16",
           "The low-precision type of the contractions",
           [{::llvm::cl::values(
               clEnumValN(::loom::Precision::FP16, "fp16", "IEEE half (f16)"),
               clEnumValN(::loom::Precision::BF16, "bf16", "bfloat16 (bf16)"))
           }]>,
  ];
  let dependentDialects = ["::loom::LoomDialect"];
}

def LoomFoldConstantsPass : Pass<"loom-fold-constants", "::mlir::func::FuncOp"> {
  let summary = "Evaluate small loom ops on constants with the reference "
                "executor";
  let description = [{
    Replaces every loom op whose operands are all constants (loom.constant,
    or arith.constant of tensor type) by loom.constant ops holding the
    values its reference-executor kernel computes, in program order, so
    chains of shape arithmetic (ONNX function bodies: Shape, Slice, Neg,
    ConstantOfShape, Concat, ...) become constants and the results get
    static types. Only small values are computed: no operand may have more
    than `max-operand-elements` elements (weights are never read) and no
    result more than `max-elements`. Ops with regions (loom.fusion,
    loom.pipeline_stage), ops inside them, ops with side effects and ops
    the executor cannot evaluate stay. A folded constant has the static type
    of its value; a use whose op would not verify with that type (func.return,
    a fusion operand) reads it through a tensor.cast to the old type.
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"1024",
           "Largest number of elements of a folded result">,
    Option<"maxOperandElements", "max-operand-elements", "int64_t",
           /*default=*/"65536",
           "Largest number of elements of an operand that is read">,
  ];
  let dependentDialects = ["::loom::LoomDialect",
                           "::mlir::tensor::TensorDialect"];
}

def LoomFormKernelsPass : Pass<"loom-form-kernels", "::mlir::func::FuncOp"> {
  let summary = "Group ops into loom.fusion kernels";
  let description = [{
    Greedy producer-consumer grouping in program order (the policy is in
    docs/kernel-formation.md): elementwise ops join the group of their
    elementwise producer, or of a matmul, convolution, attention,
    reduction, softmax or normalization whose only user they are (an
    epilogue); reductions, softmax and normalizations absorb elementwise
    producers that have no other user. Groups stop at 16 ops, constants stay
    outside as operands, and every group of two or more ops becomes a
    `loom.fusion`. Nothing is recomputed: each op lands in one kernel.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Print the number of ops before and kernels after to stderr">
  ];
  let dependentDialects = ["::loom::LoomDialect"];
}

def LoomFoldQDQPass : Pass<"loom-fold-qdq", "::mlir::func::FuncOp"> {
  let summary = "Turn dequantize -> matmul/conv into quantized contractions";
  let description = [{
    Rewrites loom.matmul and loom.conv whose operands are both
    loom.dequantize results (an activation quantized per tensor, a weight
    per tensor or per output channel, 8-bit integers or f8E4M3FN) into
    loom.qmatmul and loom.qconv, which consume the quantized values and
    their parameters directly. Transposes of dequantized weights are moved
    onto the quantized values first. Then every loom.dequantize of
    constants left is evaluated into a float constant (any size), so that
    no weight is dequantized at run time.
  }];
  let dependentDialects = ["::loom::LoomDialect"];
}

def LoomKVCacheInPlacePass : Pass<"loom-kv-cache-in-place", "::mlir::func::FuncOp"> {
  let summary = "Turn a decoder's past/present key-value tensors into a "
                "cache kept by the runtime and appended to in place";
  let description = [{
    A decoder exported with its cache takes `past_key_values.N.*` inputs and
    returns `present.N.* = Concat(past, new)`: each call copies the whole
    cache into a new output. This pass rewrites each such input whose
    Concat is returned as an output into a cache of `capacity` positions
    along the concatenated axis, written in place:
    - the input's type gets `capacity` along that axis; it is marked
      `loom.state = AXIS` (the runtime's caller keeps it between calls,
      and the code writes it);
    - one new input, `cache_length` (a scalar i64), says how many positions
      are filled; the past value is the cache's first `cache_length`
      positions (a loom.slice), so shape arithmetic on it is unchanged;
    - the Concat becomes `loom.cache_append`, which writes the new positions
      after them and returns the filled part;
    - the `present` outputs are removed: the caller reads them from its
      cache buffers (`cache_length` plus the new positions).
    In a partitioned program, the past may reach its Concat through the
    rank's slice of it (shard.all_slice along a static axis, the heads) and
    the present output through the gather that undoes it: the cache input
    then takes the rank's shape and the gather goes.
    An input whose only use is a scatter_elements without reduction that
    is returned (ONNX TensorScatter-24: the cache at its full length and
    the write positions are inputs) becomes state as it is: its length
    must be `capacity`, the scatter writes into it, the output goes.
    Functions other than the public entry, and inputs that do not follow
    a pattern, are left alone; an entry where no input does is an error.
  }];
  let options = [
    Option<"capacity", "capacity", "int64_t", /*default=*/"2048",
           "Positions each cache holds">,
  ];
  let dependentDialects = ["::loom::LoomDialect"];
}

//===----------------------------------------------------------------------===//
// Partitioning
//===----------------------------------------------------------------------===//

def LoomPartitionPass : Pass<"loom-partition", "::mlir::ModuleOp"> {
  let summary = "Partition a program over a device grid (SPMD)";
  let description = [{
    Creates `shard.grid @grid` with the axes of `grid` (in order) and turns
    every function into one SPMD program for all ranks of the grid:

    - `dp`: data parallelism; dimension 0 (the batch) of every argument is
      split over the axis. No collectives in the body.
    - `cp`: context parallelism; dimension 1 (the sequence) of every
      argument of rank >= 2 is split. Attention all-gathers its keys and
      values; causal attention on split queries gets the mask of their
      global positions.
    - `tp`: Megatron-style tensor parallelism. Attention blocks are split by
      heads (query, key and value projections column-parallel, grouped-query
      aware; the output projection row-parallel) and MLP blocks by their
      hidden size (the projections feeding the hidden activation
      column-parallel, the one after it row-parallel): one `shard.all_reduce`
      per block. Where the vocabulary divides, the LM head is
      column-parallel and embedding tables are split by rows (one
      all-reduce).
    - `sequence-parallel=true` (with `tp`): the output of each block leaves
      split along the sequence over the `tp` axis, so biases, residual adds
      and norms between blocks run on sequence shards; each all-reduce
      becomes a `shard.reduce_scatter`, and the next block all-gathers its
      input (`shard.all_gather`).
    - `pp`: pipeline parallelism. Each function is cut into as many
      stages as the axis has ranks (`loom.pipeline_stage` regions, balanced
      by estimated FLOPs, cut where few bytes cross); a stage sends what
      later stages read with `shard.send` and receives it with `shard.recv`
      (one pair per crossing value per micro-batch). With
      `micro-batches=M` the batch is split in M; the stages process them
      in turn (GPipe). The last stage's results are broadcast along the axis.
    - `zero=true` (with `dp`): ZeRO-style weights. Each weight is stored as
      the piece its use needs, further split over the `dp` axis, and
      all-gathered over `dp` just before use.
    - `ep`: expert parallelism. Dimension 0 (the tokens) of every argument
      is split over the axis (after `dp`), and each `loom.moe` keeps E/ep of
      its experts per rank: local routing, a dispatch `shard.all_to_all`
      of fixed-capacity slots, the local experts, a combine all-to-all.

    The plan is a few `shard.shard` annotations; upstream
    `sharding-propagation` (forward) carries them through the program using
    the ShardingInterface models of the loom ops, and `shard-partition`
    rewrites it with local shapes and collectives. The function interface
    stays the unpartitioned one: every rank receives the whole inputs and
    slices its part (`shard.all_slice`), and every rank returns the whole
    results (`shard.all_gather` where they are split), so
    `loom-run --ranks N` compares each rank with the unpartitioned outputs.

    With `plan=auto devices=N` the grid is chosen: every way to write N as
    dp * cp * tp (with and without sequence parallelism) partitions a copy
    of the program, a cost model reads each result (FLOPs and collective
    bytes per device at the local shapes, weights kept), a remark reports
    them all, and the cheapest is applied.

    Example: `loom-opt --loom-partition="grid=dp=2,tp=2" model.mlir`.
  }];
  let options = [
    Option<"grid", "grid", "std::string", /*default=*/"\"\"",
           "Grid axes and degrees in grid order, e.g. \"dp=2,tp=4\" "
           "(known axes: dp, cp, tp, pp, ep)">,
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"1",
           "With pp: split the batch (dimension 0 of every input) into this "
           "many micro-batches that flow through the stages one after "
           "another (GPipe)">,
    Option<"sequenceParallel", "sequence-parallel", "bool", /*default=*/"false",
           "With tp: run biases, residual adds and norms between the "
           "tensor-parallel blocks on sequence shards (reduce-scatter and "
           "all-gather instead of all-reduce)">,
    Option<"zero", "zero", "bool", /*default=*/"false",
           "With dp: ZeRO-style weights, stored split over the dp axis and "
           "all-gathered just before use">,
    Option<"capacityFactor", "capacity-factor", "double", /*default=*/"0.0",
           "With ep: the capacity factor of every loom.moe that has none "
           "(0: no capacity, no token dropped)">,
    Option<"plan", "plan", "std::string", /*default=*/"\"\"",
           "\"auto\": choose the grid for `devices` devices and report the "
           "plans (instead of `grid`): a decoder with the cluster planner's "
           "analytic ranking, checked on its best grid; other programs by "
           "partitioning a copy with every grid. \"trials\": every grid, "
           "for decoders too">,
    Option<"devices", "devices", "int64_t", /*default=*/"0",
           "With plan=auto: the number of devices">,
    Option<"deviceGflops", "device-gflops", "double", /*default=*/"100.0",
           "With plan=auto: sustained GFLOP/s of a device">,
    Option<"memoryGBps", "memory-gbps", "double", /*default=*/"20.0",
           "With plan=auto: GB/s a device reads its weights and caches at "
           "(the cluster planner's decode steps)">,
    Option<"linkGBps", "link-gbps", "double", /*default=*/"10.0",
           "With plan=auto: GB/s of a device's link to devices of its node">,
    Option<"interNodeGBps", "inter-node-gbps", "double", /*default=*/"2.5",
           "With plan=auto: GB/s between nodes (collectives whose group "
           "spans nodes)">,
    Option<"devicesPerNode", "devices-per-node", "int64_t", /*default=*/"8",
           "With plan=auto: devices per node; tensor parallelism stays "
           "inside one">,
    Option<"deviceMemory", "device-memory", "int64_t",
           /*default=*/"int64_t(80) << 30",
           "With plan=auto: bytes of memory per device; plans needing more "
           "(weights + activations + KV cache) are rejected">,
  ];
  let dependentDialects = ["::loom::LoomDialect", "::mlir::shard::ShardDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // LOOM_DIALECT_LOOM_TRANSFORMS_PASSES_TD
