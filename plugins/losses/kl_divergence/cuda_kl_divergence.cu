// cuda_kl_divergence: kl_divergence with its rule run on an NVIDIA GPU.
#include "device_loss.cuh"
#include "kl_divergence.hpp"

DTNN_CUDA_LOSS(dtnn::losses::KlDivergence, "kl_divergence")
