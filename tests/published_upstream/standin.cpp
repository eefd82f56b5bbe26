// A stand-in for a published MBE code, for the tests of mbebench.published (no internet, no
// GPU). It takes the command lines of the real ones and prints their count lines:
//   standin -i <file.adj> -s <7|8> [-t N]   AdaMBE:  "<graph>, AdaMBEFinder, <s>, <MB>, <count>, ..."
//   standin <file.adj>                      ooMBEA:  "<graph>, ooMBEAFinder, <s>, <MB>, <count>, ..."
//   standin -i <file.adj> -s 2 -f           GMBE:    "Total processing time: <s> seconds",
//                                                    "maximal nodes:<count>", counted in an int
// -w <k> adds k to the count: a wrong code (k = 1) or an overflowing one (k near 2^31).
// The count is a brute force over the subsets of the smaller side: tiny graphs only.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

typedef std::vector<std::vector<int>> Adj;

static long long count_maximal(const Adj &left, int n_right) {
  Adj right(n_right);
  for (size_t u = 0; u < left.size(); u++)
    for (int v : left[u]) right[v].push_back((int)u);
  const Adj &small = left.size() <= right.size() ? left : right;
  const Adj &other = left.size() <= right.size() ? right : left;
  if (small.size() > 20) {
    fprintf(stderr, "standin: %zu vertices on the smaller side is too many\n", small.size());
    exit(2);
  }
  std::set<std::vector<int>> closed;
  for (unsigned long mask = 1; mask < (1ul << small.size()); mask++) {
    std::vector<int> common;
    bool first = true;
    for (size_t i = 0; i < small.size(); i++) {
      if (!(mask >> i & 1)) continue;
      std::set<int> nb(small[i].begin(), small[i].end());
      if (first) {
        common.assign(nb.begin(), nb.end());
        first = false;
      } else {
        std::vector<int> keep;
        for (int x : common)
          if (nb.count(x)) keep.push_back(x);
        common.swap(keep);
      }
    }
    if (common.empty()) continue;
    std::vector<int> closure;
    for (size_t i = 0; i < small.size(); i++) {
      bool all = true;
      for (int x : common) {
        const std::vector<int> &nx = other[x];
        bool found = false;
        for (int y : nx) found = found || y == (int)i;
        all = all && found;
      }
      if (all) closure.push_back((int)i);
    }
    closed.insert(closure);
  }
  return (long long)closed.size();
}

int main(int argc, char **argv) {
  const char *input = nullptr;
  bool gmbe = false, oombea = false;
  long long extra = 0;
  if (argc > 1 && argv[1][0] != '-') {
    oombea = true;
    input = argv[1];
  }
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-i") && i + 1 < argc) input = argv[++i];
    else if (!strcmp(argv[i], "-f")) gmbe = true;
    else if (!strcmp(argv[i], "-w") && i + 1 < argc) extra = atoll(argv[++i]);
  }
  if (!input) {
    fprintf(stderr, "usage: standin -i <graph.adj> -s <n> [-t n] [-f] [-w k]\n");
    return 1;
  }
  std::ifstream in(input);
  if (!in) {
    printf("Could not open file \"%s\".\n", input);
    return 1;
  }
  Adj left;
  int n_right = 0;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    left.emplace_back();
    for (int v; words >> v;) {
      left.back().push_back(v);
      if (v + 1 > n_right) n_right = v + 1;
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  long long count = count_maximal(left, n_right) + extra;
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (gmbe) {
    int narrow = (int)count;  // GMBE counts in an int
    printf("Total processing time: %lf seconds\nmaximal nodes:%d\n\n", secs, narrow);
  } else if (oombea) {
    printf("g, ooMBEAFinder, %lf, 1.0, %d, 0, 0, 0.0\n", secs, (int)count);
  } else {
    printf("g, AdaMBEFinder, %lf, 1.0, %lld, 0, 64\n", secs, count);
  }
  return 0;
}
