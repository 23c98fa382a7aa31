/* Calls the library built from model.py:row_features with no Python at run time.
 * Build and run: make run  (see README.md). */
#include <stdio.h>
#include <stdlib.h>

#include "row_features.h"

static DLTensor tensor(void *data, int32_t ndim, int64_t *shape) {
  DLTensor t = {0};
  t.data = data;
  t.device.device_type = kDLCPU;
  t.ndim = ndim;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 64;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = NULL; /* C-contiguous */
  return t;
}

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 5; /* rows: any N in the range the library was built for */
  printf("%s\nABI version %d, target %s\n", row_features_signature(), (int)row_features_abi_version(), row_features_target());

  double *x = malloc(sizeof(double) * n * 3), w[3 * 2] = {0.5, -1.0, 0.25, 2.0, -0.75, 0.1};
  for (int64_t i = 0; i < n * 3; i++) x[i] = 0.01 * (double)i;
  int64_t x_shape[2] = {n, 3}, w_shape[2] = {3, 2};
  DLTensor inputs[2] = {tensor(x, 2, x_shape), tensor(w, 2, w_shape)};

  int64_t shapes[row_features_OUTPUT_SHAPES_LEN];
  if (row_features_output_shapes(inputs, 2, shapes) != AOT_STATUS_OK) {
    fprintf(stderr, "error: %s\n", row_features_last_error());
    return 1;
  }
  double *h = malloc(sizeof(double) * shapes[0] * shapes[1]), mean[2];
  int64_t h_shape[2] = {shapes[0], shapes[1]}, mean_shape[1] = {shapes[2]};
  DLTensor outputs[2] = {tensor(h, 2, h_shape), tensor(mean, 1, mean_shape)};
  if (row_features(inputs, 2, outputs, 2) != AOT_STATUS_OK) {
    fprintf(stderr, "error: %s\n", row_features_last_error());
    return 1;
  }
  printf("h[0] = %.6f %.6f\nmean = %.6f %.6f\n", h[0], h[1], mean[0], mean[1]);

  /* a bad call: wrong rank for x -> a non-zero code and a message, never a crash */
  inputs[0].ndim = 1;
  int rc = row_features(inputs, 2, outputs, 2);
  printf("bad call: code %d: %s\n", rc, row_features_last_error());
  free(x);
  free(h);
  return 0;
}
