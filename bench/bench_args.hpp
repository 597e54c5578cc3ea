// The command line of the benchmarks that run an experiment (dtnn_bench, int8_bench): the options,
// the experiment file as the first positional argument ("config").
#pragma once
#include <boost/program_options.hpp>
#include <cstdio>

// Parses argv into desc's variables; false (after printing `usage`) when --help was asked.
inline bool parse_bench_args(int argc, char** argv,
                             const boost::program_options::options_description& desc,
                             const char* usage) {
  namespace po = boost::program_options;
  po::positional_options_description pos;
  pos.add("config", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(argc, argv).options(desc).positional(pos).run(), vm);
  if (vm.count("help")) {
    std::printf("usage: %s\n", usage);
    return false;
  }
  po::notify(vm);
  return true;
}
