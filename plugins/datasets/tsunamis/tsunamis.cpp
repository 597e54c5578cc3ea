// tsunamis: PyDTNN 3.x's tsunamis set, laid out as CIFAR-10's binary version: 1-channel 80x80
// fields with a binary target (tsunami or not: one output, for a sigmoid and
// binary_cross_entropy), from
//   <path>/data_batch_1.bin .. data_batch_5.bin, <path>/test_batch.bin
//       (or the same under <path>/tsunamis-batches-bin/, as the archive unpacks)
//   <path> = tsunamis-binary.tar.gz, or a folder holding it: read in place, never unpacked
// A record is 1 label byte (0 or 1) then 80x80 pixel bytes. Pixels / 255 as 3.x scales them
// ("standardize": true standardises them instead).
#include "cifar_binary.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

Plugin* create(const Params& p, const PluginContext&) {
  datasets::CifarFormat format = datasets::cifar10_layout("tsunamis", "tsunamis-batches-bin",
                                                          "tsunamis-binary.tar.gz", 2, 1, 80, 80);
  format.binary_target = true;  // y: the label itself, one value
  return new datasets::CifarBinary(p, std::move(format));
}

}  // namespace

// It reads files: the conformance checks it on files of its layout that the harness writes.
constexpr const char* kTraits = R"({"conformance": [], "fixtures": [{"kind": "cifar_binary",
    "train": ["data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin",
              "data_batch_5.bin"], "test": "test_batch.bin", "classes": 2, "pixels": 6400,
    "params": {"path": "$dir"}}]})";

DTNN_EXPORT_PLUGIN(.kind = "dataset", .name = "tsunamis",
                   .description =
                       "PyDTNN 3.x's tsunamis set (CIFAR-10's binary layout): 80x80x1 fields, "
                       "one binary target",
                   .parameters = R"({"path": "", "standardize": false})", .traits = kTraits,
                   .factory = create)
