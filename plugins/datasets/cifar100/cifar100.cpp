// cifar100: the binary version of CIFAR-100 (https://www.cs.toronto.edu/~kriz/cifar.html), from a
// folder or straight from its archive:
//   <path>/train.bin, <path>/test.bin (or under <path>/cifar-100-binary/, as the archive unpacks)
//   <path> = cifar-100-binary.tar.gz: read in place, never unpacked to disk
// A record is 2 label bytes, the coarse class (0..19) then the fine one (0..99), then 3072 pixel
// bytes (cifar_binary.hpp reads them). "labels": "fine" (100 classes, the default) or "coarse"
// (the 20 superclasses).
#include "cifar_binary.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

Plugin* create(const Params& p, const PluginContext&) {
  const std::string labels = p.get_string("labels");
  if (labels != "fine" && labels != "coarse")
    p.fail("labels", "\"fine\" (100 classes) or \"coarse\" (20 superclasses)");
  const bool fine = labels == "fine";
  return new datasets::CifarBinary(p, {.what = "CIFAR-100",
                                       .train_files = {"train.bin"},
                                       .test_file = "test.bin",
                                       .archive_folder = "cifar-100-binary",
                                       .archive_name = "cifar-100-binary.tar.gz",
                                       .label_bytes = 2,
                                       .label_at = fine ? 1 : 0,
                                       .classes = fine ? 100 : 20});
}

}  // namespace

// It reads files: the conformance checks it on files of its layout that the harness writes.
DTNN_EXPORT_PLUGIN(
        .kind = "dataset", .name = "cifar100",
        .description =
            "CIFAR-100 binary version (train.bin, test.bin, or the .tar.gz read in place), "
            "32x32x3, 100 fine classes or 20 coarse ones, standardised per channel",
        .parameters = R"({"path": "", "labels": "fine", "standardize": true})",
        .traits = R"({"conformance": [], "fixtures": [{"kind": "cifar_binary",
            "train": ["train.bin"], "test": "test.bin", "records": 6, "label_bytes": 2,
            "classes": 20, "pixels": 3072, "params": {"path": "$dir"}}]})",
        .factory = create)
