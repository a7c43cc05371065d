//===- Passes.td - Passes of the CPU target ----------------*- tablegen -*-===//

#ifndef LOOM_TARGET_CPU_PASSES_TD
#define LOOM_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def LoomCPUBufferizePass : Pass<"loom-cpu-bufferize", "::mlir::ModuleOp"> {
  let summary = "One-shot bufferization with the CPU target's policy";
  let description = [{
    Runs one-shot module bufferization with function boundaries bufferized
    to identity-layout memrefs (what the bare-pointer calling convention
    needs) and every buffer copy emitted as `linalg.copy`, so that copies
    between strided views lower to loops like the rest of the program and
    the object code needs no MLIR runtime library. A copy of a slice onto
    the same slice (what an op that wrote its result in place into a slice
    of a loop-carried tensor leaves) is removed.
  }];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def LoomCPUBatchLoopsPass
    : Pass<"loom-cpu-batch-loops", "::mlir::func::FuncOp"> {
  let summary = "Run ops whose only run-time size is a batch one batch "
                "element at a time";
  let description = [{
    The fast paths for convolutions, pooling and products (im2col, kernel
    library calls, register tiles, packed weights) want static sizes. A
    model exported with a symbolic batch gives them an op whose every size
    is static except the batch, and the op then lowers to plain loops:
    ResNet-50 with a symbolic batch ran 13x slower than compiled for batch
    1. This pass rewrites such an op — a linalg op with a reduction loop
    and a parallel loop `b` that each operand either does not index or
    indexes by `b` alone in one dimension, where that dimension is the
    operand's only run-time size — into an `scf.for` over the batch whose
    body slices each operand at one batch element (size 1, static) and
    runs the op on the slices, inserting its results. The sliced op has
    static types, so the later passes take it as they take a model
    compiled for batch 1. The elementwise op that alone uses such an op's
    result (a convolution's bias and activation) joins it in the loop, on
    the same slice, so that a library call can take it as its epilogue.
    Other elementwise ops are left alone: their loops already vectorize at
    any size.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def LoomCPUContractionOrderPass
    : Pass<"loom-cpu-contraction-order", "::mlir::func::FuncOp"> {
  let summary = "Put the reduction loops of contractions outside the "
                "innermost output loop";
  let description = [{
    Loops lowered from linalg run in the order of the iteration space; for
    a matrix product that is (i, j, k), whose innermost loop walks the right
    operand with a stride of a whole row and accumulates into one element.
    This pass generalizes named contractions and convolutions and, in every
    generic whose innermost loop is a reduction, moves the reductions just
    outside the output's innermost dimension when an input walks along that
    dimension too: (i, k, j) for a matrix product. The innermost loop then
    reads and writes contiguous memory, which LLVM vectorizes. Each output
    element still sums its terms in the same order, so results are
    unchanged bit for bit.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LoomCPURunTimeSizedResultsPass
    : Pass<"loom-cpu-run-time-sized-results", "::mlir::ModuleOp"> {
  let summary = "Return results whose sizes the data decides as records of "
                "a runtime-allocated copy and its sizes";
  let description = [{
    Runs on bufferized code, before results become out-parameters. Each
    result of a public function whose memref type has a dynamic dimension
    becomes a `memref<(1 + rank)xi64>` record: slot 0 the address of a copy
    of the data made by the runtime (`loom_rt_copy_output(data, bytes)`,
    `runtime/include/loom/abi/outputs.h`), owned by the caller after the
    call; slots 1.. the sizes. The record is static, so it becomes an
    out-parameter like any other result.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def LoomCPURunTimeSizedArgumentsPass
    : Pass<"loom-cpu-run-time-sized-arguments", "::mlir::ModuleOp"> {
  let summary = "Take inputs with symbolic dimensions as a data pointer plus "
                "their sizes in one trailing array";
  let description = [{
    Runs on bufferized code, after results became out-parameters. Each
    argument of a public function whose memref type has a dynamic dimension
    (an input the model declares with a symbolic dimension: batch,
    sequence) becomes a rank-0 memref of its element type (the bare pointer
    to its data), viewed inside the function with `memref.reinterpret_cast`
    at the sizes the caller gives. The caller gives them in one trailing
    `memref<Nxi64>` argument appended after the out-parameters: the dynamic
    dimensions of every such argument, in argument order, then dimension
    order (docs/design/cpu-abi.md).
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def LoomCPUExpandRunTimeShapesPass
    : Pass<"loom-cpu-expand-run-time-shapes", "::mlir::func::FuncOp"> {
  let summary = "Rewrite memref.expand_shape with several run-time sizes in "
                "one group into memref.reinterpret_cast";
  let description = [{
    Upstream `expand-strided-metadata` (MLIR 22) infers the sizes of an
    expand_shape group from its source and crashes when a group has more
    than one dynamic size (`?x64` into `?x?x64`, what a reshape of
    [batch * sequence, 64] into [batch, sequence, 64] is). Such an
    expand_shape of a contiguous buffer (identity layout) is a view of the
    same memory at the given sizes and row-major strides: this pass writes
    it as `memref.reinterpret_cast` before `expand-strided-metadata` runs.
    A source with another layout is reported as an error.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def LoomCPUMemoryPlanPass
    : Pass<"loom-cpu-memory-plan", "::mlir::func::FuncOp"> {
  let summary = "Place a function's temporary buffers in one arena, reusing "
                "memory between buffers whose lifetimes do not overlap";
  let description = [{
    Runs on bufferized code, before deallocation is inserted. Every
    `memref.alloc` of a static, identity-layout buffer in the function's
    body (not inside loops) lives from its allocation to the last use of it
    or of any view of it, in program order. The buffers are placed, largest
    first, at the lowest 64-byte-aligned offset that no buffer live at the
    same time occupies, and each becomes a `memref.view` of one arena
    allocated once at the start of the function. A buffer whose address
    escapes as an integer (to a runtime call) stays a separate allocation.
    With `report`, prints the number of buffers, the sum of their sizes and
    the arena's size.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Print the plan's figures to stderr">
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def LoomCPUFuseElementwisePass
    : Pass<"loom-cpu-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Fuse elementwise producers into their consumers where no "
                "value is computed twice";
  let description = [{
    Upstream's elementwise fusion (`linalg-fuse-elementwise-ops`) with a
    cost rule: a producer is fused into a consumer when the consumer reads
    each of the producer's elements once (its indexing map for the operand
    is a permutation of the loops), or when the consumer has no reduction
    loops and the producer's body is cheap (no math functions, no
    division). Fusing a layer norm's tail or an activation into the matrix
    product that consumes it would recompute them once per output column,
    and would leave the product's body no longer a plain multiply-add that
    `loom-cpu-vectorize-contractions` recognizes. Reshapes are propagated
    by expansion, except through ops with reduction loops (a matrix
    product expanded into attention heads would be tiled per head), and
    splat constants are folded, as upstream.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
}

def LoomCPUSelectLibraryConvolutionsPass
    : Pass<"loom-cpu-select-library-convolutions", "::mlir::func::FuncOp"> {
  let summary = "Mark the convolutions a kernel library computes faster";
  let description = [{
    Runs on linalg on tensors, before `loom-cpu-im2col`. Marks each f32
    2-D convolution of the shape class where oneDNN beats the generated
    code (docs/codegen.md, "Library convolutions") with
    `loom.library = "onednn"`: a `linalg.conv_2d_nchw_fchw` of at least
    `min-flops` operations (and, with a 1x1 window, of at least 2^25,
    where the generated matrix product stops winning), and a grouped
    convolution with several input channels per group - the generic
    convert-loom-to-linalg builds for it - whatever its size. Depthwise convolutions (one input channel per
    group) are left to `loom-cpu-vectorize-depthwise`.
    `loom-cpu-im2col` and `loom-cpu-contraction-order` leave marked
    convolutions alone and `loom-cpu-library-convolutions` turns them into
    library calls once they operate on buffers.
  }];
  let options = [
    Option<"minFlops", "min-flops", "int64_t", /*default=*/"1 << 20",
           "Smallest convolution (2 x its multiply-adds) sent to the library">
  ];
}

def LoomCPULibraryConvolutionsPass
    : Pass<"loom-cpu-library-convolutions", "::mlir::ModuleOp"> {
  let summary = "Call the kernel library for the marked convolutions";
  let description = [{
    Runs on buffers (after the memory plan, so that the buffers it passes
    are arena views whose lifetimes the plan already knows). Each
    convolution marked `loom.library = "onednn"` becomes a
    call of `loom_rt_conv2d_f32` (runtime/include/loom/abi/kernels.h) with
    the addresses of its input, filter and output, of a constant descriptor
    (shapes, strides, dilations, padding, flags) and of a zero-initialized
    slot where the library keeps what it prepared for the call site.
    - When the input is a zero-padded copy of another buffer (what
      `tensor.pad` bufferizes to), the unpadded buffer is passed with the
      padding in the descriptor and the copy is removed.
    - When the output was just filled with zeros, the fill is removed and
      the library overwrites the output; otherwise it accumulates into it.
    - A filter that is a constant of the code (a global, or an engine
      weight parameter marked `loom.weight`) is flagged constant, so the
      library reorders it once.
    A marked convolution whose buffers are not dense row-major stays a loop
    nest (correct, slow); the pass warns. With `report`, prints how many
    convolutions became library calls and how many took their epilogue.
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Print the number of library calls to stderr">
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def LoomCPUIm2ColPass : Pass<"loom-cpu-im2col", "::mlir::func::FuncOp"> {
  let summary = "Rewrite 2-D convolutions as an image-to-column copy and a "
                "matrix product";
  let description = [{
    A `linalg.conv_2d_nchw_fchw` whose output has at least `min-columns`
    spatial positions (and that is not marked for a kernel library by
    `loom-cpu-select-library-convolutions`) becomes upstream's im2col form: a generic that copies
    the input windows into a [N, C*KH*KW, OH*OW] tensor and a batched
    contraction [F, C*KH*KW] x [C*KH*KW, OH*OW], which
    `loom-cpu-vectorize-contractions` then tiles and vectorizes along the
    output positions. A 1x1 window with unit strides needs no copy: the
    input viewed as [N, C, H*W] is the column matrix.

    With fewer output positions than `min-columns` (a deep layer's 2x2
    map), the positions would leave the register tiles mostly empty, so
    the product is taken the other way round: the windows are copied into
    [N, OH*OW, C*KH*KW], multiplied by the filter transposed to
    [C*KH*KW, F] (computed once when the filter is a constant), and the
    [N, OH*OW, F] result is transposed back: the tiles' columns are the
    output channels.
  }];
  let options = [
    Option<"minColumns", "min-columns", "int64_t", /*default=*/"16",
           "Smallest OH*OW worth the copy">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def LoomCPUPackConstantWeightsPass
    : Pass<"loom-cpu-pack-constant-weights", "::mlir::func::FuncOp"> {
  let summary = "Store constant right operands of large contractions in "
                "blocks that the register tiles read in place";
  let description = [{
    Runs on linalg on tensors, before the weights are externalized. A
    contraction that `loom-cpu-vectorize-contractions` would tile with
    panels of B copied on every call (B larger than `block-bytes`, rows
    enough to reuse a panel, B's only reduction dimension the one the tile
    steps), whose B is a dense constant `[..., K, N]` with its columns
    innermost, gets B packed once, here, in blocks of a register tile's
    columns: a new constant `[..., ceil(N / T), K, T]` (T = 32 for f32
    with 512-bit vectors; the columns past N are zero) read through the
    map `[..., n floordiv T, k, n mod T]` by a `linalg.generic` computing
    the same product. `loom-cpu-vectorize-contractions` recognizes that
    map and, with the same loops as for a copied panel, has each tile read
    its block in place (one contiguous row of T per step of K) instead of
    copying panels; every output element sums the same terms in the same
    order, so results are equal bit for bit. The packed constant (a
    resource blob named after the weight's when the weight is one, as the
    ONNX importer stores large initializers) is what engines store in
    their weights section. `vector-bits`, `registers` and
    `block-bytes` should be those `loom-cpu-vectorize-contractions` runs
    with (with others the results are still right: the tiles take the
    blocks' width).
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "Vector register width in bits (0: the host's)">,
    Option<"registers", "registers", "unsigned", /*default=*/"0",
           "Number of vector registers (0: the host's)">,
    Option<"blockBytes", "block-bytes", "int64_t", /*default=*/"524288",
           "Size of B above which the panels are used">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect"];
}

def LoomCPUPackDotProductWeightsPass
    : Pass<"loom-cpu-pack-dot-product-weights", "::mlir::func::FuncOp"> {
  let summary = "Store the constant weights of dot products in the layout "
                "of vpdpbusd's and vdpbf16ps's operands";
  let description = [{
    Runs on linalg on tensors, before the weights are externalized. A dot
    product -- a byte product (convert-loom-to-linalg's byte-products form:
    C[m, n] += zext(A[m, k]) * sext(B[k, n]) of i8 operands into i32) or a
    bf16 product summed in f32 (C[m, n] += extf(A[m, k]) * extf(B[k, n]),
    loom-precision's bf16 contractions), 2-D or inside batch loops that B
    does not have -- whose B is a dense constant `[K, N]` gets B stored as
    `[ceil(N / 16), ceil(K / G), 16, G]`, zero-padded, G the elements of
    32 bits (4 bytes, 2 bf16): for each block of 16 columns and group of G
    steps of K, the 64 bytes one instruction reads. The product becomes a
    generic reading it through `(n floordiv 16, k floordiv G, n mod 16,
    k mod G)`, the same product, which `loom-cpu-vectorize-dot-products`
    tiles. Run it before loom-cpu-pack-constant-weights, which would
    otherwise take the bf16 products' weights for its own layout.
  }];
  let options = [
    Option<"bytes", "bytes", "bool", /*default=*/"true",
           "Pack the weights of byte products (for AVX512-VNNI)">,
    Option<"bfloat16", "bf16", "bool", /*default=*/"true",
           "Pack the weights of bf16 products (for AVX512-BF16)">,
    Option<"amxBFloat16", "amx-bf16", "bool", /*default=*/"false",
           "Pad bf16 weights' K to whole AMX tiles (32 steps)">,
    Option<"amxBytes", "amx-int8", "bool", /*default=*/"false",
           "Pad byte weights' K to whole AMX tiles (64 steps)">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect"];
}

def LoomCPUVectorizeDotProductsPass
    : Pass<"loom-cpu-vectorize-dot-products", "::mlir::func::FuncOp"> {
  let summary = "Byte and bf16 products on buffers as register tiles of "
                "vpdpbusd and vdpbf16ps";
  let description = [{
    Runs on buffers. A dot product (see loom-cpu-pack-dot-product-weights)
    with static sizes whose rows are contiguous becomes register tiles of
    8 rows x 2 registers of 16 columns of 32-bit sums: per group of G steps
    of K, two 64-byte loads of B and, per row, A's group (32 bits)
    broadcast to every lane and two dot-product instructions:
    `llvm.x86.avx512.vpdpbusd.512` for bytes (each lane adds the four
    products of its unsigned and signed bytes; 64 multiply-adds per
    instruction), `llvm.x86.avx512bf16.dpbf16ps.512` for bf16 (each lane
    adds its two products to its f32 sum; 32 multiply-adds). A constant B
    is the weight packed by `loom-cpu-pack-dot-product-weights`; any other
    B (an activation's columns, a convolution's channel-major form) has
    each tile column's panel interleaved into the same layout at run time,
    once for all row tiles. A K that is not a multiple of G reads its last
    group of A with a masked load (B's padding is zero); columns past N are
    masked at C's load and store; the last rows form a tile of fewer rows;
    batch loops run one 2-D product after another on views. Byte sums are
    exact in i32 (convert-loom-to-linalg takes the byte form only where
    they are), so the results are the same integers; bf16 products are
    exact in f32 and each lane adds its pair's products one after the
    other, odd step first, so the f32 sums differ from a K-ordered sum by
    rounding only (vdpbf16ps also reads and writes subnormals as zero).
    The blocks of columns (or, with one block, the row tiles) are shared
    among threads when the product has at least `parallel-flops`
    operations and no parallel loop encloses it. Needs AVX512-VNNI for
    bytes and AVX512-BF16 for bf16: the CPU target enables each only on
    hosts that have it.

    With `amx-bf16` (`amx-int8`), bf16 products (byte products with a
    packed weight) run on AMX tiles instead, every tile 16 rows x 64 bytes: up to 2 x 2 C tiles of 16 x 16
    sums held across K; per step of K (32 bf16, 64 bytes) up to two A tiles
    read straight from A's rows and, one at a time, two B tiles, each a
    packed block's 16 group rows; tdpbf16ps (tdpbusd). A packed
    B must hold K rounded up to whole steps (the packing's amx options);
    A and C are copied into zero-padded buffers when their rows, K or
    columns are not whole tiles (LLVM gives each of the 8 tile registers
    one shape per function, so edge tiles of other shapes run out of
    registers). The CPU target sets them on hosts with AMX that let the
    process use it.
  }];
  let options = [
    Option<"parallelFlops", "parallel-flops", "int64_t",
           /*default=*/"0",
           "Products of at least this many operations get a parallel loop "
           "(0: none)">,
    Option<"bytes", "bytes", "bool", /*default=*/"true",
           "Tile byte products (AVX512-VNNI's vpdpbusd)">,
    Option<"bfloat16", "bf16", "bool", /*default=*/"true",
           "Tile bf16 products (AVX512-BF16's vdpbf16ps)">,
    Option<"amxBFloat16", "amx-bf16", "bool", /*default=*/"false",
           "bf16 products on AMX tiles (tdpbf16ps) instead">,
    Option<"amxBytes", "amx-int8", "bool", /*default=*/"false",
           "Byte products with a packed weight on AMX tiles (tdpbusd)">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def LoomCPUVectorizeContractionsPass
    : Pass<"loom-cpu-vectorize-contractions", "::mlir::func::FuncOp"> {
  let summary = "Tile contractions on buffers into register tiles and "
                "vectorize them";
  let description = [{
    Runs on bufferized code. A `linalg.generic` computing
    `C += A * B` (a matrix product with any batch, M, N and K dimensions,
    as generalized named products and im2col convolutions are) whose
    output's innermost dimension is an N dimension that B also walks
    contiguously, and whose output is not a view of A's or B's buffer, is
    tiled into register tiles of `m-tile` rows by two
    vector registers of columns by one step of K (8x32x1 for f32 with
    512-bit vectors: 16 accumulators), K innermost. N is peeled into full
    tiles and power-of-two remainders, M into full tiles and one remainder,
    so that every tile has a static shape. When B is larger than
    `block-bytes`, an outer tile of up to 8 register tiles of columns (256
    for f32 with 512-bit vectors) by up to 256 steps of K (loop order n, k,
    m), copied into a contiguous panel, stays in cache while every row tile
    passes over it. A B that `loom-cpu-pack-constant-weights` stored in
    blocks of T columns (read through `[..., n floordiv T, k, n mod T]`)
    is tiled with the same loops, tiles T columns wide, each reading its
    block in place, with no copy.

    Each tile becomes a rank-reduced three-dimensional generic (m, n, k)
    that is vectorized into `vector.contract`. Then, in this order: memref
    aliases (subviews) are folded into the transfers, common
    subexpressions eliminated, and redundant transfers hoisted, so the
    accumulator tile stays in registers across the K loop (without the
    folding and CSE the hoisting finds nothing). Last, with
    `lower-contractions`, contractions are lowered to outer products
    (`vector.outerproduct`, one fused multiply-add per row); nothing is
    canonicalized after that, which would rebuild the accumulators from
    scalars.

    `vector-bits` is the width of the target's vector registers (0: the
    host's, from its CPU features) and `registers` their number; the CUDA
    or any other target would use other tiles, so both are options.

    A contraction of at least `parallel-flops` floating-point operations
    (2 x the product of its loop ranges; 0: none) has its outermost tile
    loop of independent iterations (batch, rows or column blocks, never a
    reduction) emitted as an `scf.parallel` of one dimension, which
    `convert-scf-to-openmp` turns into an OpenMP work-sharing loop. One
    loop per contraction, the outermost possible, so each fork covers as
    much work as possible; smaller contractions do not pay for a fork. When
    that loop encloses the copies of B's panel, each iteration copies into
    a panel of its own. A contraction inside a parallel loop already
    (attention's items) forks nothing.

    With rows known only at run time, a register tile's rows stand for
    them in that count. Where the loop to share is the row tiles' own (no
    batch or column-block loop of two or more iterations around it), it
    is decided at run time: `scf.if` there are two whole row tiles or more
    and their work reaches `parallel-flops`, a parallel loop over them,
    else the serial one.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "Vector register width in bits (0: the host's)">,
    Option<"registers", "registers", "unsigned", /*default=*/"0",
           "Number of vector registers (0: the host's)">,
    Option<"blockBytes", "block-bytes", "int64_t", /*default=*/"524288",
           "Size of B above which the outer cache tile is used">,
    Option<"lowerContractions", "lower-contractions", "bool",
           /*default=*/"true",
           "Lower vector.contract to outer products at the end">,
    Option<"parallelFlops", "parallel-flops", "int64_t",
           /*default=*/"1048576",
           "Operations from which a contraction's tile loop is parallel "
           "(0: never)">
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect"];
}

def LoomCPUApproximateMathPass
    : Pass<"loom-cpu-approximate-math", "::mlir::func::FuncOp"> {
  let summary = "Inline polynomial approximations of f32 exp, expm1, erf "
                "and tanh";
  let description = [{
    Upstream's polynomial approximations (the ones MLIR's own CPU
    pipelines use) replace calls to libm's `expf`, `expm1f`, `erff` and
    `tanhf` with arithmetic, so that the loops computing softmax, GELU and
    tanh activations contain no calls and LLVM vectorizes them. The
    approximations stay within a few ulp (the compiled fixtures match
    onnxruntime to rtol 1e-4, and the node suite's cases for these ops
    pass).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def LoomCPUExpandBFloat16Pass
    : Pass<"loom-cpu-expand-bf16", "::mlir::func::FuncOp"> {
  let summary = "bf16 conversions as integer arithmetic, for hosts without "
                "a bf16 conversion instruction";
  let description = [{
    Without AVX512-BF16 or AVX-NE-CONVERT, LLVM lowers each f32 to bf16
    truncation - vectors element by element - to a call to
    `__truncsfbf2`, which only newer compiler runtimes define (Debian 12's
    libgcc does not, so such an engine would not load). Upstream's bf16
    expansion patterns rewrite `arith.truncf` to bf16 (round to nearest
    even, NaN kept quiet) and `arith.extf` from bf16 as shifts and masks
    on i32 that vectorize like any other arithmetic. The CPU pipeline runs
    this pass only when the host has no such instruction.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def LoomCPUKernelTimersPass
    : Pass<"loom-cpu-kernel-timers", "::mlir::ModuleOp"> {
  let summary = "Call the runtime's kernel timers around each kernel "
                "(loomc --kernel-timers)";
  let description = [{
    Runs on bufferized code, after the memory plan. Each op at the top
    level of a function that does work (not a view, size computation or
    allocation) gets `loom_rt_kernel_begin(index)` before it and
    `loom_rt_kernel_end(index, label, flops, bytes)` after it
    (loom/abi/profile.h): `label` is the address of a constant string
    naming the op's kind and the ONNX node(s) it came from; `flops` counts
    2 per multiply-accumulate of a product or convolution with static
    shapes (0 otherwise), `bytes` the bytes its static operands span. The
    runtime accumulates each kernel's time while a caller asks for it
    (`loom-run --profile`).
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def LoomCPUReportFailedChecksPass
    : Pass<"loom-cpu-report-failed-checks", "::mlir::ModuleOp"> {
  let summary = "Report failed cf.assert checks through the runtime";
  let description = [{
    Runs after `generate-runtime-verification` (`loomc --runtime-checks`).
    Each `cf.assert %ok, "message"` becomes a call of the runtime's
    `loom_rt_check_or_abort(ok, message)` (loom/abi/checks.h): when `%ok`
    is false the runtime writes the message (the op, its location and the
    check that failed) to standard error and aborts the process before the
    out-of-bounds access happens. The upstream lowering of `cf.assert`
    prints through buffered standard output, whose text an abort loses.
    The call takes the outcome as an argument rather than sitting in a
    branch: tens of thousands of branches in one block (densenet121 has
    that many checks) made the lowering to control flow quadratic and
    LLVM's optimizer take minutes and gigabytes. Messages are one constant
    global per distinct text.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect"];
}

def LoomCPUVectorizeDepthwisePass
    : Pass<"loom-cpu-vectorize-depthwise", "::mlir::func::FuncOp"> {
  let summary = "Depthwise convolutions on buffers as vector pieces of "
                "output rows";
  let description = [{
    Runs on bufferized code. A depthwise convolution summed in f32 (f32
    operands, or bf16/fp16 ones widened) - the grouped
    convolution generic of convert-loom-to-linalg with one input channel
    per group (any channel multiplier), static shapes, its loops in any
    order, its input already padded - becomes a loop over (batch x
    filters), each loading its window's weights once, a loop over output
    rows, and vector pieces along each row (full vectors of the host's
    width, then halving pieces), computed in blocks of up to (registers -
    4) / 2 pieces: each piece's accumulator starts from the output, every
    tap's weight is broadcast once per block and each piece adds its input
    row piece times it (`arith.mulf` and `arith.addf` allowed to contract
    into an FMA), and the accumulators are stored once. Rows of at least
    two blocks of full pieces loop over those blocks. For a horizontal stride s > 1 the input is read s times as
    wide and every s-th lane kept (exactly as wide as needed where the
    wider read would leave the row). The taps are summed in the window's
    order onto the output's initial value, as the scalar loops do. The
    outer loop is an `scf.parallel` when the convolution does at least
    `parallel-flops` operations.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "Vector register width in bits (0: the host's)">,
    Option<"registers", "registers", "unsigned", /*default=*/"0",
           "Number of vector registers (0: the host's)">,
    Option<"parallelFlops", "parallel-flops", "int64_t",
           /*default=*/"262144",
           "Operations from which the loop over filters is parallel "
           "(0: never)">
  ];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def LoomCPUVectorizeElementwisePass
    : Pass<"loom-cpu-vectorize-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Elementwise and reduction generics as vector code along "
                "their innermost loop";
  let description = [{
    Runs on bufferized code, after the contractions, copies and parallel
    chunks are formed. A `linalg.generic` whose body is elementwise
    arithmetic (ops with the elementwise-mappable traits, constants,
    `linalg.index`) and whose operands either walk its innermost loop as
    their last, contiguous index or do not depend on it, becomes loops
    over the other loops and vector pieces of the innermost: full vectors
    of the host's width, then halving pieces for a static remainder (a
    one-element loop for a run-time one). Operands that do not walk the
    innermost loop are loaded once per row and broadcast. When the
    innermost loop is a reduction (each output `combiner(x, out)` with an
    arith add, mul, min, max or bitwise combiner), the pieces accumulate
    in a vector reduced once per output element: a sum's terms are then
    added in another order than the scalar loop's.

    First, an elementwise generic (all loops parallel, every operand
    indexed by loops or constant zeros, no `linalg.index`) whose innermost
    loop is shorter than a vector has its trailing loops merged into one,
    as far as each operand reads them as consecutive indices of a memref
    contiguous there (collapsed with `memref.collapse_shape`) or reads
    none of them: a [1, C, 2, 2] op becomes [1, C, 4].
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "Vector register width in bits (0: the host's)">
  ];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def LoomCPUVectorizeCopiesPass
    : Pass<"loom-cpu-vectorize-copies", "::mlir::func::FuncOp"> {
  let summary = "Copy rows of buffers with vector transfers";
  let description = [{
    Runs on bufferized code. `linalg.copy` and generics that only copy
    (the body yields an input; im2col's window copy, padding, the panels
    of `loom-cpu-vectorize-contractions`) whose output's innermost
    dimension is contiguous, and whose input walks that dimension in its
    own innermost dimension, contiguously or with a constant step of at
    most 4 (a strided convolution's window), become loops over the other
    dimensions around vector transfers of whole row pieces (vector
    registers, then power-of-two remainders). A strided piece is read as
    the contiguous run from its first element to its last and compacted
    by a `vector.shuffle`. Left to LLVM, such loops with small trip counts
    are fully unrolled into scalar moves (a strided one stays a loop of
    scalar loads) before the loop vectorizer sees them.

    A copy of at least `parallel-bytes` bytes (0: none) that is not already
    inside a parallel loop has its outermost loop of two or more
    iterations (an output dimension: the iterations write disjoint rows)
    emitted as an `scf.parallel`, for `convert-scf-to-openmp`.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "Vector register width in bits (0: the host's)">,
    Option<"parallelBytes", "parallel-bytes", "int64_t",
           /*default=*/"1048576",
           "Size of a copy from which its outer loop is parallel (0: never)">
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def LoomCPUParallelizeLoopsPass
    : Pass<"loom-cpu-parallelize-loops", "::mlir::func::FuncOp"> {
  let summary = "Run large elementwise and reduction ops on buffers as "
                "parallel loops over chunks of one dimension";
  let description = [{
    Runs on bufferized code, after `loom-cpu-vectorize-contractions` and
    `loom-cpu-vectorize-copies` and before `convert-linalg-to-loops`. A
    linalg op on buffers that is not already inside an `scf.parallel`,
    whose iteration space (the product of its loop ranges: the output's
    elements for an elementwise op, the input's for a reduction) has at
    least `parallel-elements` points (0: none), is tiled along its
    outermost parallel loop of two or more iterations into chunks of that
    loop, the chunks being the iterations of an `scf.parallel` (for
    `convert-scf-to-openmp`) and each an op of the same kind on subviews,
    which becomes serial loops that LLVM vectorizes. A reduction loop is
    never split: every output element is computed in the same order as on
    one thread, so the results are bitwise those of one thread. An op with
    no such loop (a full reduction to a scalar), or whose outputs do not
    all index that loop directly, is left alone.

    A chunk holds enough rows of that loop for at least `chunk-elements`
    points, so that a one-dimensional loop keeps vector-long pieces.

    An op with loop ranges known only at run time is split the same way,
    decided and sized at run time: `scf.if` its points reach
    `parallel-elements` and its split loops have two or more rows, the
    chunk loop (over the outermost two such loops together, so that a
    batch of one or a single position per sequence still leaves rows to
    share), else the op as it was.
  }];
  let options = [
    Option<"parallelElements", "parallel-elements", "int64_t",
           /*default=*/"131072",
           "Iteration-space points from which an op's loop is parallel "
           "(0: never)">,
    Option<"chunkElements", "chunk-elements", "int64_t", /*default=*/"16384",
           "Smallest number of points of one parallel iteration">
  ];
  let dependentDialects = ["::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

#endif // LOOM_TARGET_CPU_PASSES_TD
