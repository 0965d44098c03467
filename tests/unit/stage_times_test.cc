// mono-run --profile's arithmetic: stage times from a profiling build's %globaltimer stamps
// (runtime/cuda_model.h stage_times_from_stamps), on stamps made up here.
#include <gtest/gtest.h>

#include <vector>

#include "compiler/runtime/cuda_model.h"

namespace mono {
namespace {

// Stamps for `stages` stages and `grid` blocks, laid out as the kernel writes them:
// [stage][0: work done, 1: left the barrier][block], then [block] (the kernel's start).
struct Stamps {
  int stages, grid;
  std::vector<unsigned long long> t;
  Stamps(int s, int g) : stages(s), grid(g), t(static_cast<size_t>(2 * s + 1) * g, 0) {}
  unsigned long long& done(int s, int b) { return t[(static_cast<size_t>(s) * 2) * grid + b]; }
  unsigned long long& left(int s, int b) { return t[(static_cast<size_t>(s) * 2 + 1) * grid + b]; }
  unsigned long long& start(int b) { return t[static_cast<size_t>(2 * stages) * grid + b]; }
};

TEST(StageTimes, WorkBarrierMedianAndReleaseSpreadPerStage) {
  Stamps st(2, 3);
  // Blocks start at 1000, 1100, 1300 ns: stage 0's release spread is 300 ns.
  st.start(0) = 1000, st.start(1) = 1100, st.start(2) = 1300;
  // Stage 0: work done at 3000, 5000 (the slowest, block 1), 4000.
  st.done(0, 0) = 3000, st.done(0, 1) = 5000, st.done(0, 2) = 4000;
  // They leave its barrier at 6000, 6500, 6250: the barrier is 5000 -> 6000, the spread 500.
  st.left(0, 0) = 6000, st.left(0, 1) = 6500, st.left(0, 2) = 6250;
  // Stage 1 (the last): work done at 7000, 7500, 9000 (block 2); its barrier is not counted.
  st.done(1, 0) = 7000, st.done(1, 1) = 7500, st.done(1, 2) = 9000;
  st.left(1, 0) = 9500, st.left(1, 1) = 9600, st.left(1, 2) = 9700;

  const std::vector<StageTime> times = stage_times_from_stamps(st.t, 2, 3);
  ASSERT_EQ(times.size(), 2u);
  EXPECT_EQ(times[0].stage, 0);
  EXPECT_DOUBLE_EQ(times[0].work_us, 4.0);    // first start 1000 -> last done 5000
  EXPECT_DOUBLE_EQ(times[0].median_us, 3.0);  // the median block done at 4000
  EXPECT_EQ(times[0].slowest_block, 1);
  EXPECT_DOUBLE_EQ(times[0].barrier_us, 1.0);  // 5000 -> first release 6000
  EXPECT_DOUBLE_EQ(times[0].release_spread_us, 0.3);
  EXPECT_EQ(times[1].stage, 1);
  EXPECT_DOUBLE_EQ(times[1].work_us, 3.0);  // first release 6000 -> last done 9000
  EXPECT_DOUBLE_EQ(times[1].median_us, 1.5);
  EXPECT_EQ(times[1].slowest_block, 2);
  EXPECT_DOUBLE_EQ(times[1].barrier_us, 0.0);
  EXPECT_DOUBLE_EQ(times[1].release_spread_us, 0.5);
}

TEST(StageTimes, TooFewStampsGiveNoStages) {
  EXPECT_TRUE(stage_times_from_stamps(std::vector<unsigned long long>(4, 0), 2, 3).empty());
  EXPECT_TRUE(stage_times_from_stamps({}, 0, 3).empty());
}

}  // namespace
}  // namespace mono
