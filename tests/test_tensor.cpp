#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

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
