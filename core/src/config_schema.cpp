#include "dtnn/config_schema.hpp"

#include <cctype>
#include <nlohmann/json.hpp>
#include <string_view>
#include <type_traits>

#include "dtnn/error.hpp"
#include "dtnn/trainer.hpp"

namespace dtnn::config {

using nlohmann::json;

namespace {

bool positive_integer(const json& v) { return v.get<std::int64_t>() > 0; }
bool non_negative_integer(const json& v) { return v.get<std::int64_t>() >= 0; }
bool at_least_one(const json& v) { return v.get<std::int64_t>() >= 1; }
bool thread_count(const json& v) {
  return v.get<std::int64_t>() >= 0 && v.get<std::int64_t>() <= 1024;
}
bool non_negative(const json& v) { return v.get<double>() >= 0.0; }
bool positive(const json& v) { return v.get<double>() > 0.0; }
bool at_least_one_number(const json& v) { return v.get<double>() >= 1.0; }
bool probability(const json& v) { return v.get<double>() >= 0.0 && v.get<double>() <= 1.0; }
bool fraction_below_one(const json& v) { return v.get<double>() >= 0.0 && v.get<double>() < 1.0; }
bool fraction_above_zero(const json& v) { return v.get<double>() > 0.0 && v.get<double>() <= 1.0; }
bool trace_file_name(const json& v) {
  const std::string s = v.get<std::string>();
  auto ends = [&](const std::string& e) {
    return s.size() > e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
  };
  return s.empty() || ends(".json") || ends(".csv") || ends(".prv");
}
// Sizes an option turns into memory or loop lengths are bounded, so that none overflows or asks
// for more memory than a machine has (a blur of sigma s is a kernel of 8 s + 1 weights).
bool blur_sigma(const json& v) { return v.get<double>() >= 0.0 && v.get<double>() <= 1000.0; }
bool image_side(const json& v) {
  return v.get<std::int64_t>() >= 0 && v.get<std::int64_t>() <= 65536;
}
bool below_half(const json& v) { return v.get<double>() >= 0.0 && v.get<double>() < 0.5; }
bool tensor_format(const json& v) {
  std::string s = v.get<std::string>();
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s == "AUTO" || s == "NHWC" || s == "NCHW";
}

// In docs/config.md's order.
const Key kKeys[] = {
    {"model", R"("")", {}, "model file, model name, or an inline model object (see below)"},
    {"dataset.name",
     R"("")",
     {},
     "dataset plugin (`dtnn plugins` lists them); left empty, the one whose traits declare it "
     "the default"},
    {"dataset.validation_split", nullptr, {fraction_below_one, "a number in [0, 1)"},
     "fraction in [0, 1) of the training split held out for validation (its last samples)",
     [](TrainerOptions& o) -> auto& {return o.validation_split;
}  // namespace
}  // namespace dtnn::config
, {"dataset.train_limit", nullptr, {non_negative_integer, "an integer >= 0"},
   "use only the first N training samples (0: all)",
   [](TrainerOptions& o) -> auto& {return o.train_limit;
}
}
, {"dataset.test_limit", nullptr, {non_negative_integer, "an integer >= 0"},
   "use only the first N test samples (0: all)",
   [](TrainerOptions& o) -> auto& {return o.test_limit;
}
}
, {"dataset.test_as_validation", nullptr, {},
   "validate on the test split after every epoch (PyDTNN's `--test-as-validation`)",
   [](TrainerOptions& o) -> auto& {return o.test_as_validation;
}
}
, {"dataset.percentage", nullptr,
   {non_negative, "a number >= 0 (0: off; below 1: undersampling; above 1: oversampling)"},
   "samples per epoch as a fraction of the training split (PyDTNN's `--dataset-percentage`): "
   "0 off; below 1 a different random part every epoch; above 1 the split gone through again "
   "(oversampling)",
   [](TrainerOptions& o) -> auto& {return o.dataset_percentage;
}
}
, {"dataset.augment_horizontal_flip", nullptr, {probability, "a probability in [0, 1]"},
   "probability that a training image is mirrored left to right",
   [](TrainerOptions& o) -> auto& {return o.augment.horizontal_flip;
}
}
, {"dataset.augment_random_crop", nullptr, {probability, "a probability in [0, 1]"},
   "probability that a training image is shifted by up to `augment_crop_padding` (default 4) "
   "pixels each way, zeros coming in (pad, then crop at a random place)",
   [](TrainerOptions& o) -> auto& {return o.augment.random_crop;
}
}
, {"dataset.augment_vertical_flip", nullptr, {probability, "a probability in [0, 1]"},
   "probability that a training image is mirrored top to bottom",
   [](TrainerOptions& o) -> auto& {return o.augment.vertical_flip;
}
}
, {"dataset.augment_rotate", nullptr, {probability, "a probability in [0, 1]"},
   "probability of turning a training image about its centre by an angle uniform in "
   "[-degree, degree], bilinear, zero outside (PyDTNN uses PIL's nearest neighbour)",
   [](TrainerOptions& o) -> auto& {return o.augment.rotate;
}
}
, {"dataset.augment_rotate_degree", nullptr, {non_negative, "a number >= 0"},
   "see `dataset.augment_rotate`", [](TrainerOptions& o) -> auto& {return o.augment.rotate_degrees;
}
}
, {"dataset.augment_brightness", nullptr, {probability, "a probability in [0, 1]"},
   "probability of multiplying a training image by f, uniform in [0, factor) (PyDTNN's PIL "
   "Brightness; dtnn neither clips to [0, 1] nor rounds to 8 bits, since inputs may already "
   "be standardised)",
   [](TrainerOptions& o) -> auto& {return o.augment.brightness;
}
}
, {"dataset.augment_brightness_factor", nullptr, {non_negative, "a number >= 0"},
   "see `dataset.augment_brightness`",
   [](TrainerOptions& o) -> auto& {return o.augment.brightness_factor;
}
}
, {"dataset.augment_contrast", nullptr, {probability, "a probability in [0, 1]"},
   "probability of m + f (x - m), m each channel's mean, f uniform in [0, factor)",
   [](TrainerOptions& o) -> auto& {return o.augment.contrast;
}
}
, {"dataset.augment_contrast_factor", nullptr, {non_negative, "a number >= 0"},
   "see `dataset.augment_contrast`",
   [](TrainerOptions& o) -> auto& {return o.augment.contrast_factor;
}
}
, {"dataset.augment_saturation", nullptr, {probability, "a probability in [0, 1]"},
   "probability of g + f (x - g), g the pixel's grey level (ITU-R 601 luma for 3 channels, "
   "else the channels' mean), f uniform in [0, factor). PyDTNN applies PIL's Color to each "
   "channel alone, which leaves images unchanged",
   [](TrainerOptions& o) -> auto& {return o.augment.saturation;
}
}
, {"dataset.augment_saturation_factor", nullptr, {non_negative, "a number >= 0"},
   "see `dataset.augment_saturation`",
   [](TrainerOptions& o) -> auto& {return o.augment.saturation_factor;
}
}
, {"dataset.augment_blur", nullptr, {probability, "a probability in [0, 1]"},
   "probability of a Gaussian blur of standard deviation `blur_size` pixels over height and "
   "width (radius round(4 sigma), borders mirrored: scipy's `gaussian_filter`, as PyDTNN)",
   [](TrainerOptions& o) -> auto& {return o.augment.blur;
}
}
, {"dataset.augment_blur_size", nullptr, {blur_sigma, "a number of pixels in [0, 1000]"},
   "see `dataset.augment_blur`", [](TrainerOptions& o) -> auto& {return o.augment.blur_size;
}
}
, {"dataset.augment_perspective", nullptr, {probability, "a probability in [0, 1]"},
   "probability of a perspective distortion: each corner of the image moves inwards by up to "
   "p of the width and height (p uniform in [0, factor), factor below 0.5), and that "
   "quadrilateral is stretched over the image (a projective map, bilinear, zero outside). "
   "PyDTNN's corner jitter, without its rescaling of the corners and with bilinear instead "
   "of bicubic sampling",
   [](TrainerOptions& o) -> auto& {return o.augment.perspective;
}
}
, {"dataset.augment_perspective_factor", nullptr,
   {below_half, "a number in [0, 0.5): how far, as a fraction of the size, corners move inwards"},
   "see `dataset.augment_perspective`",
   [](TrainerOptions& o) -> auto& {return o.augment.perspective_factor;
}
}
, {"dataset.augment_mask", nullptr, {probability, "a probability in [0, 1]"},
   "probability of zeroing a `mask_size` square at a random place (cutout). PyDTNN's mask "
   "zeroes two corner regions around a window and rolls the image; dtnn does the usual "
   "cutout",
   [](TrainerOptions& o) -> auto& {return o.augment.mask;
}
}
, {"dataset.augment_mask_size", nullptr, {at_least_one, "an integer >= 1"},
   "see `dataset.augment_mask`", [](TrainerOptions& o) -> auto& {return o.augment.mask_size;
}
}
, {"dataset.normalize_scale", nullptr, {},
   "every split's inputs become x * scale + offset (after the dataset's own normalisation)",
   [](TrainerOptions& o) -> auto& {return o.augment.normalize_scale;
}
}
, {"dataset.normalize_offset", nullptr, {}, "see `dataset.normalize_scale`",
   [](TrainerOptions& o) -> auto& {return o.augment.normalize_offset;
}
}
, {"dataset.normalize_mean", nullptr, {},
   "per-channel standardisation after that: (x - mean[c]) / std[c], one value per channel",
   [](TrainerOptions& o) -> auto& {return o.augment.channel_mean;
}
}
, {"dataset.normalize_std", nullptr, {}, "see `dataset.normalize_mean`",
   [](TrainerOptions& o) -> auto& {return o.augment.channel_std;
}
}
,
    {"dataset.transform_central_crop",
     R"(1.0)",
     {fraction_above_zero, "the fraction of height and width kept, in (0, 1] (1: off)"},
     "every split's images are cropped to their centre, keeping this fraction of height and "
     "width: round(size x (1 - f) / 2) pixels go from each side, as PyDTNN's "
     "`--transform-crop-perc` (1: off)"},
    {"dataset.transform_resize",
     R"(0)",
     {image_side, "an integer in [0, 65536] (the side of the resized image; 0: off)"},
     "every split's images are then resized to N x N, bilinear with pixel centres aligned "
     "(cv2's INTER_LINEAR; PyDTNN resizes with PIL's default filter, so values differ "
     "slightly); PyDTNN's `--transform-resize-size` (0: off). The model is built for the "
     "transformed size. dtnn applies a transform when its value is set; PyDTNN's switches "
     "`--transform-crop` / `--transform-resize` do not exist"},
    {"dataset.prefetch", nullptr, {},
     "make the next training batch (read, augmentation, normalisation) in a background thread "
     "while the current one trains; that thread runs its OpenMP loops on one thread. Off: the "
     "batch is made at the start of its step (`imagenet` still decodes ahead in its own "
     "threads). Off by default because it only pays when a core is free: with every core "
     "training (2 threads on 2 cores), ResNet-20 on synthetic data ran 3-13% slower with it "
     "(609/618/569 against 627/638/658 samples/s, alternating runs)",
     [](TrainerOptions& o) -> auto& {return o.prefetch;
}
}
, {"training.batch_size", nullptr, {positive_integer, "a positive integer"},
   "samples per batch (per rank)", [](TrainerOptions& o) -> auto& {return o.batch_size;
}
}
, {"training.global_batch_size", nullptr,
   {non_negative_integer, "an integer >= 0 (0: batch_size x ranks)"},
   "samples per step over all ranks, cut into per-rank parts that differ by at most one "
   "(PyDTNN's `--global-batch-size`); 0: `batch_size` x ranks",
   [](TrainerOptions& o) -> auto& {return o.global_batch_size;
}
}
, {"training.eval_batch_size", nullptr, {non_negative_integer, "an integer >= 0"},
   "batch size for evaluation (0: `batch_size`)",
   [](TrainerOptions& o) -> auto& {return o.eval_batch_size;
}
}
, {"training.epochs", nullptr, {non_negative_integer, "an integer >= 0"}, "epochs to train",
   [](TrainerOptions& o) -> auto& {return o.epochs;
}
}
, {"training.steps_per_epoch", nullptr, {non_negative_integer, "an integer >= 0"},
   "batches per epoch (0: the whole training split)",
   [](TrainerOptions& o) -> auto& {return o.steps_per_epoch;
}
}
,
    {"training.dtype",
     R"("float32")",
     {nullptr, "\"float32\" or \"float64\"", "float32|float64"},
     "`\"float32\"` or `\"float64\"`"},
    {"training.precision",
     R"("fp32")",
     {nullptr,
      "\"fp32\", \"bf16\" or \"fp16\" (or PyDTNN's \"float32\", \"bfloat16\", \"float16\")",
      "fp32|bf16|fp16|float32|bfloat16|float16"},
     "the precision of the products of convolutions (algorithms that list it: `i2c`), `fc`, "
     "`patch_embedding` and attention: `\"bf16\"` or `\"fp16\"` round their operands to that "
     "format and sum in float32; parameters, optimizer state, batchnorm, softmax, layer norm and "
     "losses stay float32 (docs/precision.md). `\"fp16\"` scales the loss (`training.loss_scale`). "
     "Needs `training.dtype` float32 and the cpu"},
    {"training.saved_activations",
     R"("fp32")",
     {nullptr, "\"fp32\" or \"bf16\"", "fp32|bf16"},
     "the format of the activations kept for backward: `\"bf16\"` keeps a packed bfloat16 copy "
     "of each (half the memory; backward reads the copies, rounded as a bf16 product's operands "
     "are), and the float32 outputs themselves only until the next layer has read them. "
     "Independent of `training.precision`; needs `training.dtype` float32 and the cpu "
     "(docs/precision.md)"},
    {"training.loss_scale", nullptr, {at_least_one_number, "a number >= 1"},
     "with `training.precision` `\"fp16\"`: the loss's gradient is multiplied by this before "
     "backward and the gradients divided by it before the update (the scale at the start when "
     "dynamic); a step whose gradients overflowed is skipped. Ignored for other precisions",
     [](TrainerOptions& o) -> auto& {return o.loss_scale.initial;
}
}
, {"training.loss_scale_dynamic", nullptr, {},
   "halve the loss scale at every overflowed step and double it after "
   "`training.loss_scale_growth_interval` finite steps in a row (`false`: a fixed scale); the "
   "history reports the final scale and the skipped steps",
   [](TrainerOptions& o) -> auto& {return o.loss_scale.dynamic;
}
}
, {"training.loss_scale_growth_interval", nullptr, {positive_integer, "a positive integer"},
   "finite steps in a row before a dynamic loss scale doubles",
   [](TrainerOptions& o) -> auto& {return o.loss_scale.growth_interval;
}
}
,
    {"training.tensor_format",
     R"("auto")",
     {tensor_format, "\"auto\" (NHWC on the cpu, NCHW on a GPU), \"NHWC\" or \"NCHW\""},
     "`\"NHWC\"`, `\"NCHW\"`, or `\"auto\"`: NHWC on the cpu, NCHW on a GPU (PyDTNN's AUTO; the "
     "CUDA "
     "layers need NCHW)"},
    {"device",
     R"("cpu")",
     {nullptr, "\"cpu\" or \"cuda\" (one NVIDIA GPU per process)", "cpu|cuda"},
     "`\"cpu\"` or `\"cuda\"`: every tensor of the model on one NVIDIA GPU per process (picked by "
     "the local rank), its layers, loss and optimizer the plugins' twins on cuda; PyDTNN's "
     "`--enable-gpu`. See docs/gpu.md"},
    {"gpu.cudnn_auto_conv_alg",
     R"(true)",
     {},
     "cuDNN's search times each convolution's algorithms once at build and keeps the fastest; "
     "off: fixed defaults (PyDTNN's `--enable-cudnn-auto-conv-alg`)"},
    {"gpu.cudnn_workspace_mb",
     R"(0)",
     {non_negative, "a number >= 0 (0: an eighth of the GPU's memory)"},
     "the most scratch memory, in MiB, one convolution algorithm may use (0: an eighth of the "
     "GPU's memory): cuDNN's search skips the algorithms that need more. The fast algorithms of "
     "large activations need gigabytes: VGG-16 at batch 128 trains 1.4x faster with 16 GiB than "
     "with 1 GiB (docs/gpu.md)"},
    {"gpu.gpudirect", nullptr, {},
     "PyDTNN's `--enable-gpudirect`, `--enable-nccl`: how several GPUs exchange gradients: "
     "NCCL when `nccl` (and the `nccl` plugin is usable), else device memory to a "
     "CUDA-aware MPI when `gpudirect`, else MPI through pinned host memory (docs/gpu.md, "
     "\"Several GPUs\")",
     [](TrainerOptions& o) -> auto& {return o.sync.exchange.gpudirect;
}
}
, {"gpu.nccl", R"(true)", {}, "see `gpu.gpudirect`"},
    {"training.seed", nullptr, {non_negative_integer, "an integer >= 0"},
     "seeds weight initialisation, shuffling and dropout",
     [](TrainerOptions& o) -> auto& {return o.seed;
}
}
, {"training.shuffle", nullptr, {},
   "reshuffle the training split every epoch (order is a function of seed and epoch)",
   [](TrainerOptions& o) -> auto& {return o.shuffle;
}
}
, {"training.evaluate", nullptr, {}, "evaluate on the test set before and after training",
   [](TrainerOptions& o) -> auto& {return o.evaluate;
}
}
, {"training.evaluate_only", nullptr, {}, "evaluate on the test set and stop",
   [](TrainerOptions& o) -> auto& {return o.evaluate_only;
}
}
,
    {"training.threads",
     R"(0)",
     {thread_count, "an integer in [0, 1024] (0: all cores)"},
     "OpenMP and BLIS threads (0: `OMP_NUM_THREADS`, else every core)"},
    {"optimizer.name", R"("")", {}, "optimizer plugin; left empty, the default one (its traits)"},
    {"loss",
     R"("")",
     {},
     "loss plugin; left empty, the default one (its traits); a name, or an object "
     "`{\"name\": ..., parameters}` (e.g. `{\"name\": \"nll\", \"weights\": [1, 4]}`)"},
    {"metrics",
     R"(null)",
     {},
     "metric plugins (absent: those whose traits declare them defaults): names, or objects "
     "`{\"name\": ..., parameters}` (e.g. `{\"name\": \"recall\", \"positive_class\": 3}`)"},
    {"schedulers", R"([])", {}, "scheduler plugins, each `{\"name\": ..., parameters...}`"},
    {"conv.algorithm",
     R"("")",
     {},
     "ConvAlgorithm plugin used by every conv2d layer (a layer's own `algorithm` wins); left "
     "empty, the default one (its traits)"},
    {"conv.workspace",
     R"("shared")",
     {nullptr, "\"shared\" (one buffer for all layers) or \"per_layer\"", "shared|per_layer"},
     "`\"shared\"`: one scratch buffer serves every conv layer (PyDTNN's memory cache), as large "
     "as the largest layer's need, not their sum; `\"per_layer\"`: each layer its own (the sum), "
     "which lets i2c's backward-filter reuse forward's columns (about 10% faster on simplecnn, "
     "at the cost of memory). `dtnn summary` shows each layer's need and the total"},
    {"parallel.mode",
     R"("auto")",
     {nullptr, "\"auto\", \"sequential\" or \"data\"", "auto|sequential|data"},
     "`\"auto\"` (data when more than one process runs), `\"sequential\"` (refused under a "
     "multi-process launch), `\"data\"` (PyDTNN's `--parallel`)"},
    {"parallel.communicator",
     R"("auto")",
     {},
     "`\"auto\"` (mpi when launched by MPI, else local), `\"local\"`, or a communicator plugin: "
     "a name, or `{\"name\": ..., parameters}` (e.g. `{\"name\": \"tcp\", \"server\": "
     "\"10.0.0.1:29500\", \"rank\": 1, \"world_size\": 4}`, `\"grpc\"` the same over gRPC, or "
     "`\"mqtt\"` through a broker, "
     "docs/federated.md); also `--communicator`, `--rank`, `--world-size`, `--server`, "
     "`--broker`, `--tls-ca`, `--tls-cert`, `--tls-key`"},
    {"parallel.codec",
     R"("none")",
     {},
     "what goes over the wire: `\"none\"` (float32 sums), or a codec plugin, a name or "
     "`{\"name\": ..., parameters}`: `\"fp16\"`, `\"bf16\"` (2 bytes a value; PyDTNN 3.x's "
     "`--model-sync-quantize --model-sync-dtype float16`), `{\"name\": \"topk\", \"density\": "
     "0.01}` (the largest 1%, as index and value), `\"secagg\"` (secure aggregation: 64-bit "
     "fixed point, `fraction_bits` 32, under pairwise masks that cancel in the sum; "
     "docs/federated.md), `\"ckks\"` (homomorphic encryption through Python's TenSEAL, "
     "`slots` 13, `scale` 40, `security` 128, `key_file`; PyDTNN 3.x's `--encryption "
     "tenseal`), `{\"name\": \"powersgd\", \"rank\": 4}` (PowerSGD: each tensor as a rank-r "
     "product, summed by two allreduces). Each rank's payload is allgathered and decoded by every "
     "rank in rank order, or (secagg) the payloads added and their sum decoded, or (ckks) the "
     "ciphertexts added and their sum decrypted, or (powersgd) the factors all-reduced (blocking: "
     "no overlap with backward); gradients and, when the codec carries weights (the casts, secagg "
     "and ckks do, topk and powersgd not), model averaging go through it. "
     "float32 models on the cpu; also `--codec`, `--encryption`"},
    {"parallel.codec_error_feedback", nullptr, {},
     "with a lossy codec, each bucket keeps what its payloads dropped and adds it to the next "
     "step's gradients (error feedback); false: dropped for good",
     [](TrainerOptions& o) -> auto& {return o.sync.exchange.error_feedback;
}
}
,
    {"parallel.bucket_size_mb",
     R"(4.0)",
     {positive, "a number > 0"},
     "gradients are exchanged in buckets of about this size, each started as soon as backward "
     "has filled it"},
    {"parallel.blocking", nullptr, {},
     "PyDTNN's `--use-blocking-mpi`: each bucket's allreduce completes before backward goes on "
     "(no overlap; for comparison)",
     [](TrainerOptions& o) -> auto& {return o.sync.exchange.blocking;
}
}
, {"parallel.pipeline", nullptr, {},
   "PyDTNN 3.x's `--parallel-pipeline`: a step's gradient sums stay in flight through the next "
   "step's forward and backward and are applied at its end (updates one step stale; an epoch's "
   "last step applies its own too), so the exchange overlaps a whole step; gradient averaging "
   "(`model_sync_freq` 0), models on the cpu",
   [](TrainerOptions& o) -> auto& {return o.sync.exchange.pipeline;
}
}
,
    {"parallel.simulated_network.latency_us",
     R"(0.0)",
     {non_negative, "a number of microseconds >= 0"},
     "with more than one rank, every collective completes no sooner than a network of this "
     "latency (and `bandwidth_gbps`) would let it: ring or tree allreduce, whichever is cheaper "
     "(docs/observability.md); to study overlap and bucket sizes on one machine. 0 and 0: off"},
    {"parallel.simulated_network.bandwidth_gbps",
     R"(0.0)",
     {non_negative, "a number of gigabits per second >= 0 (0: unlimited)"},
     "see `parallel.simulated_network.latency_us`"},
    {"parallel.model_sync_freq", nullptr, {},
     "`0`: average gradients every batch (one model); `N > 0`: every rank updates its own "
     "weights and the weights are averaged every N batches; negative: never (see "
     "`final_model_sync`)",
     [](TrainerOptions& o) -> auto& {return o.sync.frequency;
}
}
,
    {"parallel.model_sync_alg",
     R"("wavg")",
     {nullptr, "\"avg\", \"wavg\" or \"invwavg\" (or 3.x's \"invavg\")", "avg|wavg|invwavg|invavg"},
     "the weight of rank r in an average: `\"avg\"` 1/P; `\"wavg\"` n_r / sum n; `\"invwavg\"` "
     "(PyDTNN 3.x's `\"invavg\"`) (min + max - n_r) normalised to sum to 1; n_r is the rank's "
     "samples in the batch (gradients) or since the last synchronisation (weights)"},
    {"parallel.model_sync_participation",
     R"("all")",
     {nullptr, "\"all\" or \"avail2all\"", "all|avail2all"},
     "`\"all\"`: every rank counts; `\"avail2all\"`: only ranks that hold samples count (the "
     "others weigh 0) and all receive the result; over tcp or mqtt the others also go on "
     "without a rank that leaves (its connection closes, or it is silent for half "
     "`timeout_s`), and the history's `participation` says who took part in the "
     "synchronisations (docs/federated.md)"},
    {"parallel.model_sync_min_avail", nullptr, {non_negative_integer, "an integer >= 0"},
     "skip a synchronisation when fewer ranks hold samples (ranks then update from their own "
     "gradients)",
     [](TrainerOptions& o) -> auto& {return o.sync.min_available;
}
}
, {"parallel.shared_data", nullptr, {},
   "`true`: every rank reads one dataset and trains its share of each step; `false`: each rank "
   "reads its own (PyDTNN 3.x's `--no-shared-data`, the federated setting): `{rank}` in the "
   "dataset's strings becomes the rank, each rank goes through its own samples with "
   "`training.batch_size`, and `model_sync_alg` weighs the ranks by their own sample counts",
   [](TrainerOptions& o) -> auto& {return o.shared_data;
}
}
, {"parallel.initial_model_sync", nullptr, {}, "every rank starts from rank 0's weights",
   [](TrainerOptions& o) -> auto& {return o.sync.initial_sync;
}
}
, {"parallel.final_model_sync", nullptr, {},
   "after training, weights are averaged (when `model_sync_freq` is not 0) and every rank "
   "takes rank 0's, so all hold bit-identical weights",
   [](TrainerOptions& o) -> auto& {return o.sync.final_sync;
}
}
,
    {"parallel.timeout_s",
     R"(600.0)",
     {non_negative, "a number of seconds >= 0 (0: wait forever)"},
     "the longest one rank waits in one collective; past it the rank prints the collective "
     "(number and name) and the ranks holding it up, and the whole job exits non-zero (see "
     "Faults). `0`: wait forever; also `--timeout`"},
    {"output.history",
     R"("")",
     {},
     "write the training history here; also `dtnn run --history FILE` and PyDTNN's "
     "`--history-file`"},
    {"output.history_format",
     R"("auto")",
     {nullptr, "\"auto\", \"json\", \"pydtnn\" or \"yaml\"", "auto|json|pydtnn|yaml"},
     "`json`: dtnn's JSON (every value, confusion matrices, test results, throughput); "
     "`pydtnn`: PyDTNN 1.x's text, a line per epoch: the epoch from 0 (`%3d`), then `%20.4f` of "
     "the loss, of each metric in configured order, then of the same on validation (0 without "
     "a validation split); `yaml`: PyDTNN 3.x's YAML stream, the run's properties (model name, "
     "parameters, ranks, dtnn's configuration) and then a document per event (`part`: train, "
     "val or test, `time`, `epoch`, the loss and each metric by name). Values are dtnn's "
     "(accuracy as a fraction). `auto`: JSON for a `.json` name, YAML for `.yaml` or `.yml`, "
     "else PyDTNN 1.x's text"},
    {"output.checkpoint_dir", nullptr, {},
     "write a checkpoint here after every epoch (rank 0; atomically: temporary file, fsync, "
     "rename); also `--checkpoint-dir`",
     [](TrainerOptions& o) -> auto& {return o.checkpoint_dir;
}
}
, {"output.tensorboard", nullptr, {},
   "TensorBoard event files in this folder as the run goes (rank 0; `tensorboard --logdir` its "
   "parent): per step `train/batch_loss` and `train/learning_rate`; per epoch `epoch/loss`, "
   "each metric, `epoch/val_*`, `epoch/samples_per_second`, `epoch/learning_rate`, "
   "`epoch/joules` (with energy), histograms `weights/<parameter>` (`weights/1.conv2d.weights`) "
   "and `gradients/<parameter>` (rank 0's, of the epoch's last step); the model graph; "
   "`test/*` after training; also `--tensorboard`",
   [](TrainerOptions& o) -> auto& {return o.tensorboard_dir;
}
}
, {"output.checkpoint_keep", nullptr, {at_least_one, "an integer >= 1"},
   "keep the newest N of this run's checkpoints in that folder (see Checkpoints: a run "
   "removes only its own)",
   [](TrainerOptions& o) -> auto& {return o.checkpoint_keep;
}
}
, {"output.checkpoint_overwrite", nullptr, {},
   "a fresh run refuses a checkpoint folder that holds checkpoints it did not write and does "
   "not continue; `true`: it removes them",
   [](TrainerOptions& o) -> auto& {return o.checkpoint_overwrite;
}
}
,
    {"training.on_nonfinite",
     R"("stop")",
     {nullptr, "\"stop\", \"skip_batch\" or \"ignore\"", "stop|skip_batch|ignore"},
     "a loss or gradient that is NaN or infinite: `\"stop\"` ends training with a message naming "
     "the epoch, the batch, the first layer whose output or gradient went non-finite (the "
     "batch is run again with every layer checked) and the learning rate, exit code 1; "
     "`\"skip_batch\"` leaves the parameters as they were and goes on (the mixed-precision "
     "practice; a skipped batch counts in the metrics, not in the loss; the history counts "
     "them); `\"ignore\"` trains on. Under MPI every rank stops or skips the same step. On a GPU "
     "only the loss is checked (gradients would be copied to the host every step)"},
    {"training.resume", nullptr, {},
     "a checkpoint folder (its newest checkpoint) or file: load weights, layer and optimizer "
     "state, shuffle seed and position, and go on from there; also `--resume DIR`",
     [](TrainerOptions& o) -> auto& {return o.resumed_from;
}
}
,
    {"training.weights_and_bias_filename",
     R"("")",
     {},
     "a checkpoint file whose weights (and layer state) the model starts from, for evaluation "
     "or fine-tuning; or a PyDTNN `.npz` weights file (below); PyDTNN's "
     "`--weights-and-bias-filename`"},
    {"output.weights_npz",
     R"("")",
     {},
     "after training, rank 0 writes the weights here in PyDTNN's `.npz` format; also "
     "`--store-weights-and-bias-filename`"},
    {"output.trace",
     R"("")",
     {trace_file_name, "\"\" or a file name ending in .json, .csv or .prv"},
     "record the run's timeline and write it here: `.json` Chrome trace events for Perfetto's "
     "UI or chrome://tracing (a process per rank, a track per thread; data loading, each "
     "layer's forward and backward with its shapes, algorithm and GFLOP/s, the loss, the "
     "optimizer, each gradient bucket's pack, allreduce and wait, model sync, evaluation, "
     "checkpoints, best_of's tuning), `.csv` PyDTNN's simple tracer columns, `.prv` a Paraver "
     "trace (with `.pcf` and `.row`) with PyDTNN's event types; rank 0 writes every rank's "
     "events, the clocks aligned; also `dtnn run --trace FILE` and PyDTNN's `--tracer-output`"},
    {"output.tracing",
     R"(false)",
     {},
     "record a trace even when `output.trace` is empty (then to `trace.json`); PyDTNN's "
     "`--tracing`"},
    {"output.trace_max_events",
     R"(4000000)",
     {at_least_one, "an integer >= 1"},
     "the most events one rank keeps (about 24 bytes each); past it events are dropped, "
     "counted, and a warning says so"},
    {"output.profile",
     R"(false)",
     {},
     "after training, print the profile: per layer (those in blocks included) forward and "
     "backward ms, share of the steps' time, GFLOP/s and algorithm; per step the layers' GFLOP "
     "and their rate over the whole step (on a CPU also as a share of the FP32 peak `dtnn info` "
     "measures), the time waiting for data, in the loss, in the optimizer and waiting for "
     "communication; also in the history JSON (`profile`); also `dtnn run --profile`"},
    {"output.energy",
     R"("auto")",
     {},
     "energy measurement: `\"auto\"` (the first CPU source that works here, rapl then perf, and "
     "nvml for NVIDIA GPUs), `\"none\"`, or a list of energy plugins that must all work (names "
     "or `{\"name\": ..., parameters}`); the history gains joules per epoch and per sample, the "
     "profile and the trace joules per step and per layer (docs/observability.md); where none "
     "works, the profile says so in one line"},
    {"output.progress",
     R"("auto")",
     {nullptr, "\"auto\", \"bar\", \"lines\" or \"none\"", "auto|bar|lines|none"},
     "`\"bar\"` (a terminal), `\"lines\"` (a log), `\"none\"`, or `\"auto\"` (bar on a terminal)"},
    {"dataset.augment_crop_padding", nullptr, {image_side, "an integer of pixels in [0, 65536]"},
     "see `dataset.augment_random_crop`",
     [](TrainerOptions& o) -> auto& {return o.augment.crop_padding;
}
}
,
    {"gpu.tf32",
     R"(false)",
     {},
     "allow TF32 tensor-core math for float32 convolutions and fc (`--tf32`)"},
    {"fusion",
     R"({})",
     {},
     "`fusion.<option>`: `true` fuses the runs of layers that a layer plugin declares under that "
     "option (its traits, `dtnn plugins --verbose`; an option no plugin declares is refused). "
     "The built-in ones are below the table"},
}
;

// Rows of the table that are not keys with a default: the open objects' other keys.
const char* const kOpenRows[][2] = {
    {"dataset.*", "any other key is a parameter of the dataset plugin (e.g. `path`)"},
    {"optimizer.*", "parameters of the optimizer plugin (`learning_rate`, `momentum`, ...)"},
    {"optimizer.learning_rate_scaling",
     "`false`: PyDTNN's `--learning-rate-scaling`: `true` multiplies the learning rate by the "
     "number of ranks (the linear scaling rule for a global batch N times one rank's), "
     "`\"auto\"` does so when `training.global_batch_size` is 0 (PyDTNN 3.x's rule, the default "
     "of a run made of launcher flags); see below"},
    {"conv.*", "parameters of that algorithm (e.g. i2c's `slab_bytes`)"},
};

}  // namespace

bool Rule::allows(const json& value) const {
  if (accepts && !accepts(value)) return false;
  if (!choices) return true;
  if (!value.is_string()) return false;
  const std::string& v = value.get_ref<const std::string&>();
  for (std::string_view rest = choices;;) {
    const auto bar = rest.find('|');
    if (rest.substr(0, bar) == v) return true;
    if (bar == std::string_view::npos) return false;
    rest.remove_prefix(bar + 1);
  }
}

std::span<const Key> keys() { return kKeys; }

json default_of(const Key& key) {
  if (key.default_value) return json::parse(key.default_value);
  TrainerOptions defaults;
  return std::visit(
      [&](auto field) -> json {
        if constexpr (std::is_same_v<decltype(field), std::monostate>)
          throw Error(std::string("config key ") + key.path + " has neither a default nor a field");
        else
          return field(defaults);
      },
      key.trainer);
}

const json& value_at(const json& experiment, std::string_view path) {
  const json* node = &experiment;
  for (auto dot = path.find('.'); dot != std::string_view::npos; dot = path.find('.')) {
    node = &node->at(std::string(path.substr(0, dot)));
    path.remove_prefix(dot + 1);
  }
  return node->at(std::string(path));
}

void set_trainer_fields(const json& j, TrainerOptions& options) {
  for (const Key& key : kKeys)
    std::visit(
        [&](auto field) {
          if constexpr (!std::is_same_v<decltype(field), std::monostate>) {
            auto& target = field(options);
            target = value_at(j, key.path).get<std::remove_reference_t<decltype(target)>>();
          }
        },
        key.trainer);
}

std::string markdown_table() {
  std::string out = "| key | default | meaning |\n| --- | --- | --- |\n";
  for (const Key& k : kKeys)
    out +=
        std::string("| `") + k.path + "` | `" + default_of(k).dump() + "` | " + k.meaning + " |\n";
  for (const auto& row : kOpenRows) out += std::string("| `") + row[0] + "` | | " + row[1] + " |\n";
  return out;
}

}  // namespace dtnn::config
