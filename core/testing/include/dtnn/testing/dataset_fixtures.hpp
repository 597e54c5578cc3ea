// Files for the conformance of the dataset plugins that read files: a plugin names in its traits
// the small files it reads and the parameters that point it at them,
//   "fixtures": [{"kind": "...", ...what to write..., "params": {"path": "$dir", ...}}]
// and the harness writes each fixture into a fresh folder and checks the plugin at the params (or
// at each of a list of them), "$dir" in a string replaced by that folder. So a new dataset plugin
// is checked by the suite (and by `dtnn check-plugin`) without a line of test code. The kinds:
//   "files":         "files": {"rel/name": content}, a content being text, {"bytes": [...]}, or
//                    {"png": [height, width, [r, g, b]]} (a solid image, written as PNG);
//   "cifar_binary":  CIFAR-10's binary layout: "train": [file names], "test": file name,
//                    "records": per file (2), "label_bytes" (1), "classes" (every label byte is
//                    below it), "pixels" (bytes per record after the labels);
//   "npz":           x_train (5, ...) and x_test (3, ...) of "sample": [dims] float32, and class
//                    ids 0, 1, 2, 0, ... as y (float32);
//   "image_classes": "<split>/<class>/img<i>.png" for each of "splits" (["train", "val"]) and
//                    "classes" (["blue", "red"]), "per_class" images (3) of sizes that vary;
//   "labelled_images": NIH ChestX-ray14's layout: "count" (8) 16x16 PNGs under images/a and
//                    images/b, Data_Entry_2017_v2020.csv labelling them, train_val_list.txt and
//                    test_list.txt.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>

namespace dtnn::testing {

// Writes the fixture into folder (created) and returns its conformance cases: [{"params": ...}],
// one, or one per entry where "params" is a list, "$dir" replaced. An Error names what in the
// fixture is not understood.
nlohmann::json write_fixture(const nlohmann::json& fixture, const std::filesystem::path& folder);

// A height x width RGB image (rows of r, g, b bytes) as a PNG file (no compression filters, zlib).
void write_png(const std::filesystem::path& file, int height, int width,
               const std::vector<unsigned char>& rgb);

}  // namespace dtnn::testing
