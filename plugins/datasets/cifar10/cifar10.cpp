// cifar10: the binary version of CIFAR-10 (https://www.cs.toronto.edu/~kriz/cifar.html), from a
// folder or straight from its archive:
//   <path>/data_batch_1.bin .. data_batch_5.bin, <path>/test_batch.bin
//       (or the same under <path>/cifar-10-batches-bin/, as the archive unpacks)
//   <path> = cifar-10-binary.tar.gz: read in place, never unpacked to disk
// A record is 1 label byte (0..9) then 3072 pixel bytes (cifar_binary.hpp reads them).
#include "cifar_binary.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

Plugin* create(const Params& p, const PluginContext&) {
  return new datasets::CifarBinary(
      p, datasets::cifar10_layout("CIFAR-10", "cifar-10-batches-bin", "cifar-10-binary.tar.gz", 10,
                                  3, 32, 32));
}

}  // namespace

// It reads files: the conformance checks it on files of its layout that the harness writes.
constexpr const char* kTraits = R"({"conformance": [], "fixtures": [{"kind": "cifar_binary",
    "train": ["data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin",
              "data_batch_5.bin"], "test": "test_batch.bin", "records": 3, "classes": 10,
    "pixels": 3072, "params": {"path": "$dir"}}]})";

DTNN_EXPORT_PLUGIN(
        .kind = "dataset", .name = "cifar10",
        .description =
            "CIFAR-10 binary version (data_batch_1..5.bin, test_batch.bin, or the .tar.gz read in "
            "place), 32x32x3, 10 classes, standardised per channel",
        .parameters = R"({"path": "", "standardize": true})", .traits = kTraits, .factory = create)
