//===- LoomVisionOps.td - Vision loom ops ------------------*- tablegen -*-===//
//
// Sampling and detection ops of vision models: grid sampling (spatial
// transformers, optical flow), RoI alignment and non-maximum suppression
// (two-stage and single-stage detectors). Like the NN ops they stay whole,
// because their data-dependent indexing is what a backend must see.
//
//===----------------------------------------------------------------------===//

#ifndef LOOM_DIALECT_LOOM_IR_LOOMVISIONOPS_TD
#define LOOM_DIALECT_LOOM_IR_LOOMVISIONOPS_TD

include "loom/Dialect/Loom/IR/LoomBase.td"

def Loom_GridSampleOp : Loom_Op<"grid_sample",
    [Pure, InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "Sample an image at normalized grid coordinates";
  let description = Loom_OpDoc<[{
    Samples `input` `[N, C, H, W]` at the locations in `grid`
    `[N, Ho, Wo, 2]`, giving `[N, C, Ho, Wo]`, or a volume `[N, C, D, H, W]`
    at `[N, Do, Ho, Wo, 3]`, giving `[N, C, Do, Ho, Wo]`. `grid[n, h, w]`
    holds `(x, y)` (`(x, y, z)` for volumes) in `[-1, 1]`: -1 and 1 are the
    centers of the corner pixels with `align_corners`, and their outer edges
    without it. `mode` is "bilinear" (trilinear for volumes), "nearest" or
    "bicubic" (a = -0.75, 4-D only); `padding_mode` gives values outside the
    image: "zeros", "border" (clamp to the edge) or "reflection" (mirror at
    the border). GridSample-20's "linear" and "cubic" are imported as
    "bilinear" and "bicubic".}],
    "GridSample (opset 16-19; opset 20+ for 4-D and 5-D inputs)",
    "%y = loom.grid_sample %x, %grid {mode = \"bilinear\", padding_mode = \"border\", align_corners = true} : tensor<1x3x32x32xf32>, tensor<1x16x16x2xf32> -> tensor<1x3x16x16xf32>">.text;
  let arguments = (ins Loom_NumericTensor:$input,
                       Loom_FloatTensor:$grid,
                       DefaultValuedStrAttr<StrAttr, "bilinear">:$mode,
                       DefaultValuedStrAttr<StrAttr, "zeros">:$padding_mode,
                       DefaultValuedAttr<BoolAttr, "false">:$align_corners);
  let results = (outs Loom_NumericTensor:$result);
  let assemblyFormat = [{
    $input `,` $grid attr-dict `:` type($input) `,` type($grid) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Loom_RoiAlignOp : Loom_Op<"roi_align",
    [Pure, InferTypeOpAdaptorWithIsCompatible]> {
  let summary = "Pool regions of interest into fixed-size maps (RoI Align)";
  let description = Loom_OpDoc<[{
    For each of the `R` boxes in `rois` `[R, 4]` (`x1, y1, x2, y2` in input
    coordinates before `spatial_scale`), pools the feature map
    `input[batch_indices[r]]` of `input` `[N, C, H, W]` into
    `[output_height, output_width]` bins, giving `[R, C, output_height,
    output_width]`. Each bin samples a `sampling_ratio` x `sampling_ratio`
    grid (0: `ceil(roi_size / output_size)` samples per bin) and averages
    the bilinear samples (`mode` "avg"), or ("max") takes the maximum over
    the samples of the largest weighted corner value of each — ONNX's
    reference and onnxruntime compute "max" that way, not as the maximum of
    the interpolated values.
    `coordinate_transformation_mode` "half_pixel" shifts box coordinates by
    -0.5 (RoiAlign-16's default, torchvision `aligned=True`);
    "output_half_pixel" does not (RoiAlign-10's behavior).}],
    "RoiAlign (opset 10-21)",
    "%y = loom.roi_align %x, %rois, %idx {output_height = 7 : i64, output_width = 7 : i64, sampling_ratio = 2 : i64, spatial_scale = 6.250000e-02 : f32} : tensor<2x256x50x50xf32>, tensor<100x4xf32>, tensor<100xi64> -> tensor<100x256x7x7xf32>">.text;
  let arguments = (ins Loom_FloatTensor:$input,
                       Loom_FloatTensor:$rois,
                       1DTensorOf<[I64]>:$batch_indices,
                       DefaultValuedStrAttr<StrAttr, "avg">:$mode,
                       DefaultValuedAttr<I64Attr, "1">:$output_height,
                       DefaultValuedAttr<I64Attr, "1">:$output_width,
                       DefaultValuedAttr<I64Attr, "0">:$sampling_ratio,
                       DefaultValuedAttr<F32Attr, "1.0">:$spatial_scale,
                       DefaultValuedStrAttr<StrAttr, "half_pixel">:$coordinate_transformation_mode);
  let results = (outs Loom_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $rois `,` $batch_indices attr-dict `:` type($input) `,`
    type($rois) `,` type($batch_indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Loom_NonMaxSuppressionOp : Loom_Op<"non_max_suppression",
                                       [Pure, AttrSizedOperandSegments]> {
  let summary = "Select boxes by score, dropping heavily overlapping ones";
  let description = Loom_OpDoc<[{
    Per batch and class, greedily selects boxes of `boxes` `[B, N, 4]` in
    decreasing order of `scores` `[B, C, N]`, skipping boxes whose IoU with
    an already selected box exceeds `iou_threshold` and boxes whose score is
    not above `score_threshold`, and keeping at most
    `max_output_boxes_per_class` per class. The result lists the selections
    as `[batch, class, box]` rows, so its first dimension is only known at
    run time.

    The three scalar operands (0-D or `[1]`) are optional, as in ONNX:
    without `max_output_boxes_per_class` nothing is selected (ONNX's default
    0), without `iou_threshold` it is 0, and without `score_threshold` no box
    is dropped for its score. Boxes are `[y1, x1, y2, x2]` (either corner
    first), or `[x_center, y_center, width, height]` with
    `center_point_box`. The result type is stated: it depends on the values
    of `boxes`, `scores` and the thresholds.}],
    "NonMaxSuppression (opset 10-21)",
    "%sel = loom.non_max_suppression %boxes, %scores max_output_boxes_per_class %k iou_threshold %iou score_threshold %min : (tensor<1x6x4xf32>, tensor<1x1x6xf32>, tensor<1xi64>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x3xi64>">.text;
  let arguments = (ins Loom_FloatTensor:$boxes,
                       Loom_FloatTensor:$scores,
                       Optional<RankedTensorOf<[I64]>>:$max_output_boxes_per_class,
                       Optional<RankedTensorOf<[F32]>>:$iou_threshold,
                       Optional<RankedTensorOf<[F32]>>:$score_threshold,
                       DefaultValuedAttr<BoolAttr, "false">:$center_point_box);
  let results = (outs 2DTensorOf<[I64]>:$result);
  let assemblyFormat = [{
    $boxes `,` $scores
    (`max_output_boxes_per_class` $max_output_boxes_per_class^)?
    (`iou_threshold` $iou_threshold^)?
    (`score_threshold` $score_threshold^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // LOOM_DIALECT_LOOM_IR_LOOMVISIONOPS_TD
