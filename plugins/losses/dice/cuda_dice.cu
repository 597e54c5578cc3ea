// cuda_dice: dice with its rule run on an NVIDIA GPU.
#include "device_loss.cuh"
#include "dice.hpp"

DTNN_CUDA_LOSS(dtnn::losses::Dice, "dice")
