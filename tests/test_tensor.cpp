#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "dtnn/memory.hpp"
#include "dtnn/rng.hpp"
#include "dtnn/tensor.hpp"

using namespace dtnn;

TEST_CASE("tensor storage is 64-byte aligned and views share it") {
  Tensor t = Tensor::zeros(Shape{4, 3, 5, 2}, DType::float64);
  CHECK(reinterpret_cast<std::uintptr_t>(t.raw()) % 64 == 0);
  CHECK(t.numel() == 120);
  CHECK(t.bytes() == 960);
  Tensor rows = t.slice_batch(1, 3);
  CHECK(rows.shape() == Shape{2, 3, 5, 2});
  rows.data<double>()[0] = 7.0;
  CHECK(t.data<double>()[30] == 7.0);  // row 1 starts at 1 * 3*5*2
  CHECK(t.reshape(Shape{4, 30}).dim(1) == 30);
  CHECK(t.view(Shape{10}).numel() == 10);
  CHECK_THROWS_AS(t.reshape(Shape{7}), Error);
  CHECK_THROWS_AS(t.data<float>(), Error);  // holds float64
}

TEST_CASE("dtype and layout names parse and print") {
  CHECK(parse_dtype("float32") == DType::float32);
  CHECK(parse_layout("nchw") == Layout::nchw);
  CHECK(std::string(to_string(Layout::nhwc)) == "NHWC");
  CHECK_THROWS_WITH_AS(parse_dtype("float16"), doctest::Contains("expected float32 or float64"),
                       Error);
  CHECK(Shape{26, 26, 4}.str() == "(26, 26, 4)");
  CHECK(Shape{10}.str() == "(10,)");
}

TEST_CASE("rng is deterministic and shuffles into a permutation") {
  Rng a(5), b(5);
  CHECK(a.next() == b.next());
  std::vector<int> v(100);
  for (int i = 0; i < 100; ++i) v[static_cast<std::size_t>(i)] = i;
  Rng(3).shuffle(std::span(v));
  std::vector<int> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 100; ++i) CHECK(sorted[static_cast<std::size_t>(i)] == i);
  CHECK(v != sorted);
}

TEST_CASE("tensor memory: 64-byte aligned, 2 MiB blocks and up aligned to 2 MiB for huge pages") {
  for (std::size_t bytes : {std::size_t{1}, std::size_t{100}, std::size_t{1} << 20}) {
    std::byte* p = allocate_aligned(bytes);
    CHECK(reinterpret_cast<std::uintptr_t>(p) % 64 == 0);
    std::free(p);
  }
  std::byte* big = allocate_aligned((std::size_t{2} << 20) + 1);
  CHECK(reinterpret_cast<std::uintptr_t>(big) % (std::size_t{2} << 20) == 0);
  big[(std::size_t{2} << 20)] = std::byte{1};  // the whole block is usable
  std::free(big);
  Tensor t = Tensor::zeros(Shape{3, 1024, 1024}, DType::float32);
  CHECK(reinterpret_cast<std::uintptr_t>(t.data<float>()) % (std::size_t{2} << 20) == 0);
  CHECK(t.data<float>()[3 * 1024 * 1024 - 1] == 0.0f);
}
