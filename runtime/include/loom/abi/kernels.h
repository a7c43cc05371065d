/*===- kernels.h - Library kernels that compiled code calls ------*- C -*-===*
 *
 * For the shape classes where a kernel library beats the generated code
 * (docs/codegen.md, "Library convolutions"), the CPU target emits a call
 * to one of these functions instead of loops
 * (lib/Target/CPU/LibraryConvolutions.cpp). The runtime exports them and
 * forwards to the library's plugin (libloom_runtime_onednn.so, loaded on
 * first use from the runtime's own directory), so that the runtime itself
 * and code without such calls depend on no kernel library.
 *
 * Like the collectives (collectives.h), a failure does not return into the
 * code: it is recorded, and the runtime reports it when the code returns.
 *
 *===----------------------------------------------------------------------===*/

#ifndef LOOM_ABI_KERNELS_H
#define LOOM_ABI_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The layout of a convolution's descriptor: a constant array of int64 in
   the code, one per call site. Sizes are those of the buffers passed:
   input N x C x H x W (unpadded), filter F x C/G x KH x KW, output
   N x F x OH x OW, all dense row-major f32. */
enum loom_conv_desc_field {
  LOOM_CONV_VERSION, /* LOOM_CONV_DESC_VERSION */
  LOOM_CONV_N,
  LOOM_CONV_C,
  LOOM_CONV_H,
  LOOM_CONV_W,
  LOOM_CONV_F,
  LOOM_CONV_KH,
  LOOM_CONV_KW,
  LOOM_CONV_OH,
  LOOM_CONV_OW,
  LOOM_CONV_STRIDE_H,
  LOOM_CONV_STRIDE_W,
  LOOM_CONV_DILATION_H,
  LOOM_CONV_DILATION_W,
  LOOM_CONV_PAD_TOP,
  LOOM_CONV_PAD_LEFT,
  LOOM_CONV_PAD_BOTTOM,
  LOOM_CONV_PAD_RIGHT,
  LOOM_CONV_GROUPS,
  LOOM_CONV_FLAGS, /* loom_conv_flags */
  LOOM_CONV_DESC_SIZE
};

#define LOOM_CONV_DESC_VERSION 1

enum loom_conv_flags {
  /* The output is accumulated into (out += conv(in, filter)), as
     linalg's convolution does; otherwise it is overwritten. */
  LOOM_CONV_ACCUMULATE = 1,
  /* The filter is a constant of the code (a weight): its pointer always
     holds the same values, so the library may keep it reordered into its
     preferred layout between calls. */
  LOOM_CONV_CONSTANT_FILTER = 2,
  /* `bias` holds F values added per output channel (out = conv + bias). */
  LOOM_CONV_BIAS = 4,
  /* ReLU applied last: out = max(conv (+ bias) (+ out), 0). */
  LOOM_CONV_RELU = 8,
};

/* out (N x F x OH x OW) (+)= conv2d(in, filter) (+ bias), then ReLU when
   flagged; f32, zero padding. `bias` is the address of F floats with
   LOOM_CONV_BIAS, 0 otherwise. `desc` is the address of LOOM_CONV_DESC_SIZE
   int64 (above); `slot` the address of one zero-initialized int64 of the
   code's writable data, where the library keeps what it prepared for this
   call site (its primitive, the reordered filter) for the code's
   lifetime. */
void loom_rt_conv2d_f32(int64_t in, int64_t filter, int64_t bias, int64_t out,
                        int64_t desc, int64_t slot);

#ifdef __cplusplus
}
#endif

#endif /* LOOM_ABI_KERNELS_H */
