// The horizontal merge's reachability matrix: transitive paths over sparse
// group ids, kept exact when two unrelated groups merge.
#include <gtest/gtest.h>

#include <map>

#include "segmenter/reachability_matrix.h"

namespace nvfuser {

TEST(ReachabilityTest, TransitivePathsAndMerges) {
  // 10 -> 20 -> 30, 40 -> 50 (ids sparse, as after merges).
  std::map<int64_t, std::vector<int64_t>> edges = {
      {10, {20}}, {20, {30}}, {30, {}}, {40, {50}}, {50, {}}};
  ReachabilityMatrix m(
      {10, 40, 20, 50, 30},
      [&](int64_t id) -> const std::vector<int64_t>& { return edges.at(id); });
  EXPECT_TRUE(m.reaches(10, 30));
  EXPECT_FALSE(m.reaches(30, 10));
  EXPECT_FALSE(m.reaches(10, 50));
  EXPECT_FALSE(m.reaches(40, 30));
  // 20 and 50 have no path between them; merged into 20, the merge links
  // 40 to 30 (through the merged group) and 10 to nothing new but 20's.
  m.merge(20, 50);
  EXPECT_TRUE(m.reaches(40, 20));
  EXPECT_TRUE(m.reaches(40, 30));
  EXPECT_TRUE(m.reaches(10, 30));
  EXPECT_FALSE(m.reaches(30, 40));
  EXPECT_FALSE(m.reaches(10, 40));
}

// Given the ancestors, a merge touches their rows only and gives the same
// matrix as the merge that scans every row for them.
TEST(ReachabilityTest, MergeGivenAncestorsMatchesScan) {
  // 1 -> 2 -> 3, 4 -> 5, 6 (isolated); merge 5 into 2, then 6 into 3.
  std::map<int64_t, std::vector<int64_t>> edges = {{1, {2}}, {2, {3}}, {3, {}},
                                                   {4, {5}}, {5, {}},  {6, {}}};
  auto consumers = [&](int64_t id) -> const std::vector<int64_t>& {
    return edges.at(id);
  };
  std::vector<int64_t> order = {1, 4, 6, 2, 5, 3};
  ReachabilityMatrix scan(order, consumers);
  ReachabilityMatrix given(order, consumers);
  scan.merge(2, 5);
  given.merge(2, 5, {1, 4});
  scan.merge(3, 6);
  given.merge(3, 6, {1, 2, 4});
  for (int64_t a : order) {
    for (int64_t b : order) {
      EXPECT_EQ(scan.reaches(a, b), given.reaches(a, b)) << a << " " << b;
    }
  }
  EXPECT_TRUE(given.reaches(4, 3));
  EXPECT_FALSE(given.reaches(6, 1));
}

}  // namespace nvfuser
