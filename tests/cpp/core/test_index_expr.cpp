// Index expressions of the kernel generators (codegen/index_expr.h): what
// folds, how the text reads, and a fuzzer that builds random expressions
// with the folding operators and checks each, and its text, against plain
// arithmetic.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "codegen/index_expr.h"

namespace nvfuser {
namespace codegen_detail {
namespace {

IndexExpr var(const std::string& name) {
  return IndexExpr::named(name);
}

TEST(IndexExprTest, ConstantsFold) {
  EXPECT_EQ((IndexExpr::constant(3) * 256).constantValue(), 768);
  EXPECT_EQ((IndexExpr::constant(7) / 2 + 1).constantValue(), 4);
  EXPECT_EQ((IndexExpr::constant(7) % 4).constantValue(), 3);
  EXPECT_TRUE(IndexExpr().isZero());
  EXPECT_TRUE((var("i") * 0).isZero());
  EXPECT_TRUE((var("i") % 1).isZero());
  EXPECT_FALSE((var("i") + 0).constantValue().has_value());
}

TEST(IndexExprTest, SumsFlattenAndCollectTheirConstant) {
  // A pad's shifted index, sliced back: the two shifts cancel.
  EXPECT_EQ(((var("j1") - 32) + 32).str(), "j1");
  EXPECT_EQ(
      (var("a") * 8 + (var("b") + 64) + IndexExpr::constant(3) * 256).str(),
      "a * 8 + b + 832");
  EXPECT_EQ((var("a") - 128).str(), "a - 128");
  EXPECT_EQ(((var("a") + 1) * 4).str(), "(a + 1) * 4");
}

TEST(IndexExprTest, ProductsMergeAndDivideExactly) {
  EXPECT_EQ((var("i") * 4 * 8).str(), "i * 32");
  EXPECT_EQ((var("i") * 128 / 8).str(), "i * 16");
  EXPECT_TRUE((var("i") * 128 % 8).isZero());
  // Not exact: kept.
  EXPECT_EQ((var("i") * 12 / 8).str(), "(i * 12) / 8");
  EXPECT_EQ((var("i") / 128 % 4096).str(), "(i / 128) % 4096");
}

TEST(IndexExprTest, FactorsParenthesizeAllButAtoms) {
  EXPECT_EQ(var("i").factor(), "i");
  EXPECT_EQ(IndexExpr::constant(5).factor(), "5");
  EXPECT_EQ(IndexExpr::constant(-5).factor(), "(-5)");
  EXPECT_EQ((var("i") / 2).factor(), "(i / 2)");
  EXPECT_EQ(delinearize(var("i"), {2, 3, 4})[0].str(), "i / 12");
  EXPECT_EQ(delinearize(var("i"), {2, 3, 4})[1].str(), "(i / 4) % 3");
  EXPECT_EQ(delinearize(var("i"), {2, 3, 4})[2].str(), "i % 4");
}

// The value of C text of +, -, *, / and % over names, numbers and
// parentheses, with C's precedence: checks that str() reads as built.
class TextValue {
 public:
  TextValue(const std::string& text, const std::map<std::string, int64_t>& m)
      : s_(text), m_(m) {}
  int64_t value() {
    const int64_t v = sum();
    EXPECT_EQ(at_, s_.size()) << s_;
    return v;
  }

 private:
  void skip() {
    while (at_ < s_.size() && s_[at_] == ' ') {
      ++at_;
    }
  }
  int64_t sum() {
    int64_t v = product();
    for (skip(); at_ < s_.size() && (s_[at_] == '+' || s_[at_] == '-');
         skip()) {
      const char op = s_[at_++];
      const int64_t r = product();
      v = op == '+' ? v + r : v - r;
    }
    return v;
  }
  int64_t product() {
    int64_t v = unary();
    for (skip(); at_ < s_.size() &&
                 std::string("*/%").find(s_[at_]) != std::string::npos;
         skip()) {
      const char op = s_[at_++];
      const int64_t r = unary();
      v = op == '*' ? v * r : (op == '/' ? v / r : v % r);
    }
    return v;
  }
  int64_t unary() {
    skip();
    if (s_[at_] == '-') {
      ++at_;
      return -unary();
    }
    if (s_[at_] == '(') {
      ++at_;
      const int64_t v = sum();
      skip();
      EXPECT_EQ(s_[at_], ')') << s_;
      ++at_;
      return v;
    }
    size_t end = at_;
    while (end < s_.size() &&
           std::isalnum(static_cast<unsigned char>(s_[end]))) {
      ++end;
    }
    const std::string word = s_.substr(at_, end - at_);
    at_ = end;
    return std::isdigit(static_cast<unsigned char>(word[0])) ? std::stoll(word)
                                                             : m_.at(word);
  }

  const std::string s_;
  const std::map<std::string, int64_t>& m_;
  size_t at_ = 0;
};

// Random trees of sums, products, quotients and remainders over three
// named values, built with the folding operators, against the same tree
// computed directly; every value non-negative, as kernel indices are.
struct Built {
  IndexExpr expr;
  std::vector<int64_t> values;  // per assignment
};

TEST(IndexExprTest, FuzzedExpressionsKeepTheirValue) {
  std::mt19937_64 rng(20261204);
  const std::vector<std::string> names{"a", "b", "c"};
  std::vector<std::map<std::string, int64_t>> assignments;
  for (int k = 0; k < 16; ++k) {
    std::map<std::string, int64_t> m;
    for (const std::string& n : names) {
      m[n] = static_cast<int64_t>(rng() % 5000);
    }
    assignments.push_back(m);
  }
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % n); };
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<Built> pool;
    for (const std::string& n : names) {
      Built b{var(n), {}};
      for (const auto& m : assignments) {
        b.values.push_back(m.at(n));
      }
      pool.push_back(b);
    }
    for (int step = 0; step < 8; ++step) {
      const Built& x = pool[pick(pool.size())];
      const Built& y = pool[pick(pool.size())];
      const int64_t c = 1 + pick(12) * (pick(2) ? 8 : 1);
      Built out;
      switch (pick(6)) {
        case 0:
          out.expr = x.expr + y.expr;
          for (size_t k = 0; k < x.values.size(); ++k) {
            out.values.push_back(x.values[k] + y.values[k]);
          }
          break;
        case 1:
          out.expr = x.expr * c;
          for (int64_t v : x.values) {
            out.values.push_back(v * c);
          }
          break;
        case 2:
          out.expr = x.expr / c;
          for (int64_t v : x.values) {
            out.values.push_back(v / c);
          }
          break;
        case 3:
          out.expr = x.expr % c;
          for (int64_t v : x.values) {
            out.values.push_back(v % c);
          }
          break;
        case 4:
          out.expr = x.expr + c;
          for (int64_t v : x.values) {
            out.values.push_back(v + c);
          }
          break;
        default:  // a shift and its undoing, as pads and slices do
          out.expr = (x.expr + c) - c;
          out.values = x.values;
          break;
      }
      if (out.values.front() > (int64_t(1) << 40)) {
        continue;  // keep away from overflow
      }
      for (size_t k = 0; k < assignments.size(); ++k) {
        const int64_t got = out.expr.evaluate(
            [&](const std::string& n) { return assignments[k].at(n); });
        ASSERT_EQ(got, out.values[k]) << out.expr.str();
        ASSERT_EQ(TextValue(out.expr.str(), assignments[k]).value(),
                  out.values[k])
            << out.expr.str();
      }
      pool.push_back(out);
    }
  }
}

}  // namespace
}  // namespace codegen_detail
}  // namespace nvfuser
