// sharebuf-forest-check MODEL.json PREDICTIONS.csv: runs the C++ forest (the `forest` oracle's
// inference) on every row that tools/train_forest.py --predictions wrote and compares its answer
// with scikit-learn's, with each of its kernels (the vector one where this CPU runs it, and the
// portable walk). Exit 0 only if every row agrees under every kernel.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "policies/forest_oracle.h"
#include "policies/params.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: sharebuf-forest-check MODEL.json PREDICTIONS.csv\n";
    return 2;
  }
  try {
    using sharebuf::policies::RandomForest;
    const RandomForest forests[] = {RandomForest::from_file(argv[1]),
                                    RandomForest::from_file(argv[1], RandomForest::Kernel::kWalk)};
    std::ifstream in(argv[2]);
    if (!in) throw std::runtime_error(std::string(argv[2]) + ": cannot open");
    std::string line;
    std::getline(in, line);  // header
    uint64_t rows = 0;
    uint64_t mismatches = 0;
    for (size_t lineno = 2; std::getline(in, line); ++lineno) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) continue;
      std::istringstream row(line);
      double x[sharebuf::policies::kOracleFeatures];
      std::string cell;
      for (double& v : x) {
        if (!std::getline(row, cell, ','))
          throw std::runtime_error("line " + std::to_string(lineno) + ": too few fields");
        v = std::strtod(cell.c_str(), nullptr);  // EWMAs decay into subnormals, which stod refuses
      }
      if (!std::getline(row, cell, ','))
        throw std::runtime_error("line " + std::to_string(lineno) + ": no prediction");
      const bool sklearn = std::stoi(cell) != 0;
      ++rows;
      for (const RandomForest& forest : forests) {
        if (forest.predicts_drop(x) != sklearn) {
          if (++mismatches <= 5)
            std::fprintf(stderr, "line %zu: C++ (%s) %d, scikit-learn %d (score %.6f)\n", lineno,
                         forest.kernel(), !sklearn, sklearn, forest.score(x));
        }
      }
    }
    std::printf(
        "%lu rows, %lu disagreements between the C++ forest (kernels %s, %s) and "
        "scikit-learn\n",
        rows, mismatches, forests[0].kernel(), forests[1].kernel());
    return mismatches == 0 && rows > 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "sharebuf-forest-check: " << e.what() << "\n";
    return 2;
  }
}
