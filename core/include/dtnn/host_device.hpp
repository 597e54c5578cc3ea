// DTNN_HOST_DEVICE marks the functions that one header gives both executors of a rule: the CPU
// plugins (compiled by the host compiler, where it is empty) and the CUDA kernels (compiled by
// nvcc, where it makes them host and device functions). See apply_rule.hpp, row_rule.hpp.
#pragma once

#ifdef __CUDACC__
#define DTNN_HOST_DEVICE __host__ __device__
#else
#define DTNN_HOST_DEVICE
#endif
