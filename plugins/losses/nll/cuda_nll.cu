// cuda_nll: nll with its rule run on an NVIDIA GPU.
#include "device_loss.cuh"
#include "nll.hpp"

DTNN_CUDA_LOSS(dtnn::losses::Nll, "nll")
