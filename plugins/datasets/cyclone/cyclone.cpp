// cyclone: PyDTNN 3.x's cyclone set, laid out as CIFAR-10's binary version: 5-channel 40x40
// fields, 2 classes (cyclone or not), from
//   <path>/data_batch_1.bin .. data_batch_5.bin, <path>/test_batch.bin
//       (or the same under <path>/cyclone-batches-bin/, as the archive unpacks)
//   <path> = cyclone-binary.tar.gz, or a folder holding it: read in place, never unpacked
// A record is 1 label byte (0 or 1) then 5x40x40 pixel bytes, a row-major plane per channel.
// Pixels / 255 as 3.x scales them ("standardize": true standardises each channel instead).
#include "cifar_binary.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

Plugin* create(const Params& p, const PluginContext&) {
  return new datasets::CifarBinary(
      p, datasets::cifar10_layout("cyclone", "cyclone-batches-bin", "cyclone-binary.tar.gz", 2, 5,
                                  40, 40));
}

}  // namespace

// It reads files: the conformance checks it on files of its layout that the harness writes.
constexpr const char* kTraits = R"({"conformance": [], "fixtures": [{"kind": "cifar_binary",
    "train": ["data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin",
              "data_batch_5.bin"], "test": "test_batch.bin", "classes": 2, "pixels": 8000,
    "params": {"path": "$dir"}}]})";

DTNN_EXPORT_PLUGIN(.kind = "dataset", .name = "cyclone",
                   .description =
                       "PyDTNN 3.x's cyclone set (CIFAR-10's binary layout): 40x40x5 fields, 2 "
                       "classes",
                   .parameters = R"({"path": "", "standardize": false})", .traits = kTraits,
                   .factory = create)
