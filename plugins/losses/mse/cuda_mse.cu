// cuda_mse: mse with its rule run on an NVIDIA GPU.
#include "device_loss.cuh"
#include "mse.hpp"

DTNN_CUDA_LOSS(dtnn::losses::Mse, "mse")
