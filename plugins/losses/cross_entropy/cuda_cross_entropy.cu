// cuda_cross_entropy: cross_entropy with its rule run on an NVIDIA GPU.
#include "cross_entropy.hpp"
#include "device_loss.cuh"

DTNN_CUDA_LOSS(dtnn::losses::CrossEntropy, "cross_entropy")
