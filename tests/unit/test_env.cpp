// The environment's knobs are checked (base/env.hpp): unset or empty is "not given"; an integer
// knob takes a whole base-10 integer in its range and a choice knob one of its names; anything
// else is an InputError naming the variable, not a silent default (cli.program checks a real
// knob's refusal by the program: exit 2, one message).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "beatnik/base/env.hpp"
#include "beatnik/base/error.hpp"

using namespace beatnik;

namespace {

constexpr const char* kName = "BEATNIK_TEST_ENV_KNOB";

// The message of the InputError that f throws ("" if it throws none).
template <class F>
std::string input_error(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Env, IntegerUnsetOrEmptyIsNotGiven) {
  unsetenv(kName);
  EXPECT_FALSE(env::integer(kName, 0, 9).has_value());
  setenv(kName, "", 1);
  EXPECT_FALSE(env::integer(kName, 0, 9).has_value());
}

TEST(Env, IntegerInRange) {
  setenv(kName, "7", 1);
  EXPECT_EQ(env::integer(kName, 0, 9), 7);
  setenv(kName, "-3", 1);
  EXPECT_EQ(env::integer(kName, -5, 5), -3);
  setenv(kName, "0", 1);
  EXPECT_EQ(env::integer(kName, 0, 0), 0);
}

TEST(Env, IntegerRefusesWhatIsNotOne) {
  for (const char* bad : {"abc", "12x", "1.5", " 3x", "99999999999999999999999"}) {
    setenv(kName, bad, 1);
    const std::string m = input_error([] { env::integer(kName, 0, 1000); });
    EXPECT_NE(m.find(kName), std::string::npos) << bad << ": " << m;
    EXPECT_NE(m.find("0 to 1000"), std::string::npos) << bad << ": " << m;
  }
  setenv(kName, "10", 1);
  EXPECT_NE(input_error([] { env::integer(kName, 0, 9); }), "");  // out of range
  setenv(kName, "-1", 1);
  EXPECT_NE(input_error([] { env::integer(kName, 0, 9); }), "");
  unsetenv(kName);
}

TEST(Env, ChoiceTakesOneOfItsNames) {
  unsetenv(kName);
  EXPECT_FALSE(env::choice(kName, {"host", "device"}).has_value());
  setenv(kName, "", 1);
  EXPECT_FALSE(env::choice(kName, {"host", "device"}).has_value());
  setenv(kName, "device", 1);
  EXPECT_EQ(env::choice(kName, {"host", "device"}), "device");
  for (const char* bad : {"Host", "hostx", "gpu", " host"}) {
    setenv(kName, bad, 1);
    const std::string m = input_error([] { env::choice(kName, {"host", "device"}); });
    EXPECT_NE(m.find(kName), std::string::npos) << bad << ": " << m;
    EXPECT_NE(m.find("host or device"), std::string::npos) << bad << ": " << m;
  }
  setenv(kName, "3", 1);
  EXPECT_NE(input_error([] { env::choice(kName, {"0", "1", "2"}); }).find("0, 1 or 2 is expected"), std::string::npos);
  unsetenv(kName);
}

}  // namespace
