// The convolution layer shapes the perf mode of the harness (conv_perf.hpp, conv_bench, dtnn
// check-plugin --perf) times: simplecnn's, VGG16-CIFAR10's (the labels of
// ../shared/peers/conv_bench.py), ResNet-20-CIFAR's and ResNet-50-ImageNet's (torchvision's v1.5
// bottleneck, stride in the 3x3), each distinct shape once; and, outside the default set, filters
// of other sizes: GoogLeNet-CIFAR's 5x5 branches (inception 3a, 4a, 5a) and 2x2 layers.
#pragma once
#include <cstdint>

#include "dtnn/conv_algorithm.hpp"

namespace dtnn::testing {

struct ConvShape {
  const char* net;    // "scnn", "vgg", "resnet20", "resnet50", "googlenet5x5", "conv2x2"
  const char* label;  // "vgg 64->64@32": input channels -> output channels @ input size
  std::int64_t c, k, size, kernel, stride, pad;
  bool needs_dx;       // false for a network's first layer (its input needs no gradient)
  std::int64_t batch;  // the batch the benchmark uses unless told otherwise
};

inline constexpr ConvShape kConvShapes[] = {
    {"scnn", "scnn 1->4@28", 1, 4, 28, 3, 1, 0, false, 64},
    {"scnn", "scnn 4->8@26", 4, 8, 26, 3, 1, 0, true, 64},
    {"vgg", "vgg 3->64@32", 3, 64, 32, 3, 1, 1, false, 64},
    {"vgg", "vgg 64->64@32", 64, 64, 32, 3, 1, 1, true, 64},
    {"vgg", "vgg 64->128@16", 64, 128, 16, 3, 1, 1, true, 64},
    {"vgg", "vgg 128->128@16", 128, 128, 16, 3, 1, 1, true, 64},
    {"vgg", "vgg 128->256@8", 128, 256, 8, 3, 1, 1, true, 64},
    {"vgg", "vgg 256->256@8", 256, 256, 8, 3, 1, 1, true, 64},
    {"vgg", "vgg 256->512@4", 256, 512, 4, 3, 1, 1, true, 64},
    {"vgg", "vgg 512->512@4", 512, 512, 4, 3, 1, 1, true, 64},
    {"vgg", "vgg 512->512@2", 512, 512, 2, 3, 1, 1, true, 64},
    {"resnet20", "resnet20 3->16@32", 3, 16, 32, 3, 1, 1, false, 64},
    {"resnet20", "resnet20 16->16@32", 16, 16, 32, 3, 1, 1, true, 64},
    {"resnet20", "resnet20 16->32@32 s2", 16, 32, 32, 3, 2, 1, true, 64},
    {"resnet20", "resnet20 16->32@32 1x1 s2", 16, 32, 32, 1, 2, 0, true, 64},
    {"resnet20", "resnet20 32->32@16", 32, 32, 16, 3, 1, 1, true, 64},
    {"resnet20", "resnet20 32->64@16 s2", 32, 64, 16, 3, 2, 1, true, 64},
    {"resnet20", "resnet20 32->64@16 1x1 s2", 32, 64, 16, 1, 2, 0, true, 64},
    {"resnet20", "resnet20 64->64@8", 64, 64, 8, 3, 1, 1, true, 64},
    {"resnet50", "resnet50 3->64@224 7x7 s2", 3, 64, 224, 7, 2, 3, false, 32},
    {"resnet50", "resnet50 64->64@56 1x1", 64, 64, 56, 1, 1, 0, true, 32},
    {"resnet50", "resnet50 64->64@56", 64, 64, 56, 3, 1, 1, true, 32},
    {"resnet50", "resnet50 64->256@56 1x1", 64, 256, 56, 1, 1, 0, true, 32},
    {"resnet50", "resnet50 256->64@56 1x1", 256, 64, 56, 1, 1, 0, true, 32},
    {"resnet50", "resnet50 256->128@56 1x1", 256, 128, 56, 1, 1, 0, true, 32},
    {"resnet50", "resnet50 128->128@56 s2", 128, 128, 56, 3, 2, 1, true, 32},
    {"resnet50", "resnet50 128->512@28 1x1", 128, 512, 28, 1, 1, 0, true, 32},
    {"resnet50", "resnet50 256->512@56 1x1 s2", 256, 512, 56, 1, 2, 0, true, 32},
    {"resnet50", "resnet50 512->128@28 1x1", 512, 128, 28, 1, 1, 0, true, 32},
    {"resnet50", "resnet50 128->128@28", 128, 128, 28, 3, 1, 1, true, 32},
    {"resnet50", "resnet50 512->256@28 1x1", 512, 256, 28, 1, 1, 0, true, 32},
    {"resnet50", "resnet50 256->256@28 s2", 256, 256, 28, 3, 2, 1, true, 32},
    {"resnet50", "resnet50 256->1024@14 1x1", 256, 1024, 14, 1, 1, 0, true, 32},
    {"resnet50", "resnet50 512->1024@28 1x1 s2", 512, 1024, 28, 1, 2, 0, true, 32},
    {"resnet50", "resnet50 1024->256@14 1x1", 1024, 256, 14, 1, 1, 0, true, 32},
    {"resnet50", "resnet50 256->256@14", 256, 256, 14, 3, 1, 1, true, 32},
    {"resnet50", "resnet50 1024->512@14 1x1", 1024, 512, 14, 1, 1, 0, true, 32},
    {"resnet50", "resnet50 512->512@14 s2", 512, 512, 14, 3, 2, 1, true, 32},
    {"resnet50", "resnet50 512->2048@7 1x1", 512, 2048, 7, 1, 1, 0, true, 32},
    {"resnet50", "resnet50 1024->2048@14 1x1 s2", 1024, 2048, 14, 1, 2, 0, true, 32},
    {"resnet50", "resnet50 2048->512@7 1x1", 2048, 512, 7, 1, 1, 0, true, 32},
    {"resnet50", "resnet50 512->512@7", 512, 512, 7, 3, 1, 1, true, 32},
    {"googlenet5x5", "googlenet 16->32@32 5x5", 16, 32, 32, 5, 1, 2, true, 64},
    {"googlenet5x5", "googlenet 16->48@16 5x5", 16, 48, 16, 5, 1, 2, true, 64},
    {"googlenet5x5", "googlenet 48->128@8 5x5", 48, 128, 8, 5, 1, 2, true, 64},
    {"conv2x2", "2x2 64->64@32", 64, 64, 32, 2, 1, 0, true, 64},
    {"conv2x2", "2x2 128->128@16", 128, 128, 16, 2, 1, 0, true, 64},
};

inline ConvGeometry geometry_of(const ConvShape& s, std::int64_t batch, DType dtype,
                                Layout layout) {
  ConvGeometry g;
  g.n = batch;
  g.h = g.w = s.size;
  g.c = s.c;
  g.k = s.k;
  g.kh = g.kw = s.kernel;
  g.stride_h = g.stride_w = s.stride;
  g.pad_h = g.pad_w = s.pad;
  g.dtype = dtype;
  g.layout = layout;
  return g;
}

}  // namespace dtnn::testing
