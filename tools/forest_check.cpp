// sharebuf-forest-check MODEL.json PREDICTIONS.csv: runs the C++ forest (the `forest` oracle's
// inference) on every row that tools/train_forest.py --predictions wrote and compares its answer
// with scikit-learn's. Exit 0 only if every row agrees.
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
    const auto forest = sharebuf::policies::RandomForest::from_file(argv[1]);
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
      if (forest.predicts_drop(x) != sklearn) {
        if (++mismatches <= 5)
          std::fprintf(stderr, "line %zu: C++ %d, scikit-learn %d (score %.6f)\n", lineno, !sklearn,
                       sklearn, forest.score(x));
      }
    }
    std::printf("%lu rows, %lu disagreements between the C++ forest and scikit-learn\n", rows,
                mismatches);
    return mismatches == 0 && rows > 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "sharebuf-forest-check: " << e.what() << "\n";
    return 2;
  }
}
