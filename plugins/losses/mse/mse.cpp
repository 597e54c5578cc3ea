#include "mse.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "loss", .name = "mse", .description = dtnn::losses::Mse::kDescription,
                   .parameters = dtnn::losses::Mse::kParameters,
                   .traits = dtnn::losses::Mse::kTraits,
                   .factory = dtnn::create_loss<dtnn::losses::Mse>)
