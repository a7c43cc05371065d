/* Calls a compiled add_relu.mlir through the packed entry point of
   docs/design/cpu-abi.md: inputs, then outputs. */
#include <stdio.h>

void loom_entry(void **buffers);

int main(void) {
  float a[6] = {1, -2, 3, -4, 5, -6};
  float b[3] = {0.5f, 1, -1};
  float r[6], sum;
  void *buffers[] = {a, b, r, &sum};
  loom_entry(buffers);
  for (int i = 0; i < 6; ++i)
    printf("%g ", r[i]);
  printf("sum %g\n", sum);
  return 0;
}
