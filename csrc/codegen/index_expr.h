// Index expressions of generated kernels as terms, not text: sums of
// products of named values and constants, and quotients and remainders by
// constants. Constants fold as terms are built, so a generator asks an
// index whether it is a constant instead of parsing its text, and the text
// is written once, where a kernel line needs it (str()). Kernel indices are
// never negative, so the rewrites below hold for the generated index type
// (32-bit unsigned or int64_t) alike.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nvfuser {
namespace codegen_detail {

class IndexExpr {
 public:
  IndexExpr();  // the constant 0
  static IndexExpr constant(int64_t c);
  // A value the kernel names: a variable, a loop index, or an expression
  // written as text that is read as a whole (already parenthesized).
  static IndexExpr named(std::string text);

  std::optional<int64_t> constantValue() const;
  bool isZero() const;
  // A name or a non-negative constant: no temporary or parentheses needed.
  bool isAtom() const;
  // The C expression.
  std::string str() const;
  // str(), parenthesized unless an atom: an operand of *, / or %, or of a
  // comparison next to other text.
  std::string factor() const;
  // The value with each named value from `valueOf` (C semantics on
  // non-negative operands: quotients truncate).
  int64_t evaluate(
      const std::function<int64_t(const std::string&)>& valueOf) const;

  // Sums flatten and fold their constants; x * 1, x / 1 and constants
  // fold; (x * a) * b is x * (a * b); (x * a) / b is x * (a / b) and
  // (x * a) % b is 0 when b divides a. Division and remainder by 0 (a
  // dim of size 0, in a kernel that never runs) are 0.
  friend IndexExpr operator+(const IndexExpr& a, const IndexExpr& b);
  friend IndexExpr operator+(const IndexExpr& a, int64_t c);
  friend IndexExpr operator-(const IndexExpr& a, int64_t c);
  friend IndexExpr operator*(const IndexExpr& a, int64_t c);
  friend IndexExpr operator/(const IndexExpr& a, int64_t c);
  friend IndexExpr operator%(const IndexExpr& a, int64_t c);

 private:
  enum class Kind { Constant, Named, Sum, Product, Quotient, Remainder };
  struct Node {
    Kind kind = Kind::Constant;
    // The constant; the addend of a sum; the factor, divisor or modulus.
    int64_t value = 0;
    std::string text;                 // a named value's
    std::vector<IndexExpr> operands;  // a sum's terms, else the one operand
  };
  explicit IndexExpr(std::shared_ptr<const Node> node)
      : node_(std::move(node)) {}
  static IndexExpr make(Kind kind, int64_t value,
                        std::vector<IndexExpr> operands);

  std::shared_ptr<const Node> node_;
};

// Row-major coordinates of `linear` in `shape`: (linear / inner) % extent
// per dim, the outermost without the remainder.
std::vector<IndexExpr> delinearize(const IndexExpr& linear,
                                   const std::vector<int64_t>& shape);

}  // namespace codegen_detail
}  // namespace nvfuser
