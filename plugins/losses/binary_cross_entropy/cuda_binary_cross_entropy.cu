// cuda_binary_cross_entropy: binary_cross_entropy with its rule run on an NVIDIA GPU.
#include "binary_cross_entropy.hpp"
#include "device_loss.cuh"

DTNN_CUDA_LOSS(dtnn::losses::BinaryCrossEntropy, "binary_cross_entropy")
