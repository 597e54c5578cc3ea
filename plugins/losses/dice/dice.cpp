#include "dice.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "loss", .name = "dice", .description = dtnn::losses::Dice::kDescription,
                   .parameters = dtnn::losses::Dice::kParameters,
                   .traits = dtnn::losses::Dice::kTraits,
                   .factory = dtnn::create_loss<dtnn::losses::Dice>)
