// cuda_categorical_cross_entropy: categorical_cross_entropy with its rule run on an NVIDIA GPU.
#include "categorical_cross_entropy.hpp"
#include "device_loss.cuh"

DTNN_CUDA_LOSS(dtnn::losses::CategoricalCrossEntropy, "categorical_cross_entropy")
