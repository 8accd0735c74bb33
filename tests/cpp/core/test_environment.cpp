// Counts read from the environment (environment.h): the bounds of the
// loaded-module table and of the in-memory kernel cache come through here.
#include <gtest/gtest.h>

#include <string>

#include "../scoped_env.h"
#include "environment.h"
#include "exceptions.h"

namespace nvfuser {

namespace {
constexpr const char* kVariable = "NVFUSER_TEST_POSITIVE_COUNT";
}  // namespace

TEST(EnvironmentTest, PositiveCountOrFallback) {
  {
    ScopedEnv env(kVariable, "16");
    EXPECT_EQ(positiveCountFromEnvironment(kVariable, 5), 16u);
  }
  {
    ScopedEnv env(kVariable, "007");
    EXPECT_EQ(positiveCountFromEnvironment(kVariable, 5), 7u);
  }
  {
    ScopedEnv env(kVariable, "18446744073709551615");  // 2^64 - 1
    EXPECT_EQ(positiveCountFromEnvironment(kVariable, 5),
              size_t{18446744073709551615ULL});
  }
  {
    ScopedEnv env(kVariable, "");
    EXPECT_EQ(positiveCountFromEnvironment(kVariable, 5), 5u);
  }
  {
    ScopedEnv env(kVariable, "restored afterwards");
    unsetenv(kVariable);
    EXPECT_EQ(positiveCountFromEnvironment(kVariable, 5), 5u);
  }
}

TEST(EnvironmentTest, AnythingButAPositiveCountIsAValueError) {
  // "-1", "+3" and " 7" pass strtoull (as 2^64-1, 3 and 7); the last one
  // is 2^64, one too many.
  for (const char* bad : {"0", "-1", "+3", " 7", "7 ", "abc", "12x", "1e3",
                          "0x10", "18446744073709551616"}) {
    ScopedEnv env(kVariable, bad);
    try {
      positiveCountFromEnvironment(kVariable, 5);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Value);
      EXPECT_NE(std::string(e.what()).find(kVariable), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace nvfuser
