#include "runtime/aten_ops.h"

#include <algorithm>

#include "exceptions.h"
#include "runtime/aten_more_ops.h"
#include "runtime/aten_rng.h"
#include "runtime/device_index_errors.h"
#include "runtime/runtime_args.h"

namespace nvfuser {

namespace {

at::Tensor as(const at::Tensor& t, DataType d) {
  at::ScalarType s = toAtenType(d);
  return t.scalar_type() == s ? t : t.to(s);
}

// A cast as torch's Tensor.to: complex to a real type casts the real part
// (Bool too), without ATen's warning (the cast's builder warned when it was
// defined, as nvFuser does).
at::Tensor castTo(const at::Tensor& x, DataType d) {
  if (!x.is_complex() || isComplexType(d)) {
    return as(x, d);
  }
  return at::real(x).to(toAtenType(d), /*non_blocking=*/false,
                        /*copy=*/true);
}

// Ops read on the operand as it is: casts, predicates, logical and bitwise
// not, the sign of a Bool. Undefined for every other op.
at::Tensor evalOnOperand(const UnaryOp& e, const at::Tensor& x) {
  switch (e.op()) {
    case UnaryOpType::Cast:
      return castTo(x, e.output(0)->dtype());
    case UnaryOpType::Real:
      return at::real(x).clone();
    case UnaryOpType::Imag:
      return at::imag(x).clone();
    case UnaryOpType::IsReal:
      return at::isreal(x);
    case UnaryOpType::IsNan:
      return at::isnan(x);
    case UnaryOpType::IsInf:
      return at::isinf(x);
    case UnaryOpType::IsFinite:
      return at::isfinite(x);
    case UnaryOpType::IsNegInf:
      return at::isneginf(x);
    case UnaryOpType::IsPosInf:
      return at::isposinf(x);
    case UnaryOpType::Signbit:
      return at::signbit(x);
    case UnaryOpType::LogicalNot:
      return at::logical_not(x);
    case UnaryOpType::BitwiseNot:
      return at::bitwise_not(x);
    case UnaryOpType::Sign:
      return x.scalar_type() == at::kBool ? x.clone() : at::Tensor();
    default:
      return at::Tensor();
  }
}

// ATen has no erfcinv: erfc(x) = y is ndtri(y / 2) = -sqrt(2) x, and ndtri
// keeps its digits for tiny y, where erfinv(1 - y) would have none left.
// Adding 0 makes erfcinv(1) +0, as CUDA's (the product is -0).
at::Tensor erfcinv(const at::Tensor& v) {
  return at::special_ndtri(v * 0.5) * -0.70710678118654752440 + 0.0;
}

// The float-producing math added with nvFuser's full op list.
at::Tensor evalMoreMath(UnaryOpType op, const at::Tensor& v) {
  switch (op) {
    case UnaryOpType::Acos:
      return at::acos(v);
    case UnaryOpType::Asin:
      return at::asin(v);
    case UnaryOpType::Atan:
      return at::atan(v);
    case UnaryOpType::Cosh:
      return at::cosh(v);
    case UnaryOpType::Sinh:
      return at::sinh(v);
    case UnaryOpType::Tan:
      return at::tan(v);
    case UnaryOpType::Exp2:
      return at::exp2(v);
    case UnaryOpType::Expm1:
      return at::expm1(v);
    case UnaryOpType::Log10:
      return at::log10(v);
    case UnaryOpType::Log1p:
      return at::log1p(v);
    case UnaryOpType::Log2:
      return at::log2(v);
    case UnaryOpType::Erfc:
      return at::erfc(v);
    case UnaryOpType::Erfinv:
      return at::erfinv(v);
    case UnaryOpType::Lgamma:
      return at::lgamma(v);
    case UnaryOpType::Acosh:
      return at::acosh(v);
    case UnaryOpType::Asinh:
      return at::asinh(v);
    case UnaryOpType::Atanh:
      return at::atanh(v);
    case UnaryOpType::Erfcinv:
      return erfcinv(v);
    case UnaryOpType::Sign:
      return at::sign(v);
    case UnaryOpType::Trunc:
      return at::trunc(v);
    case UnaryOpType::Frac:
      return at::frac(v);
    default:
      return at::Tensor();
  }
}

at::Tensor evalUnary(const UnaryOp& e, const at::Tensor& x) {
  at::Tensor direct = evalOnOperand(e, x);
  if (direct.defined()) {
    return direct;
  }
  // Complex operands compute in their own type (abs gives the real type).
  at::Tensor v = x.is_complex() ? x : as(x, e.output(0)->dtype());
  switch (e.op()) {
    case UnaryOpType::Neg:
      return at::neg(v);
    case UnaryOpType::Abs:
      return at::abs(v);
    case UnaryOpType::Exp:
      return at::exp(v);
    case UnaryOpType::Log:
      return at::log(v);
    case UnaryOpType::Sqrt:
      return at::sqrt(v);
    case UnaryOpType::Rsqrt:
      return at::rsqrt(v);
    case UnaryOpType::Reciprocal:
      return at::reciprocal(v);
    case UnaryOpType::Sin:
      return at::sin(v);
    case UnaryOpType::Cos:
      return at::cos(v);
    case UnaryOpType::Tanh:
      return at::tanh(v);
    case UnaryOpType::Sigmoid:
      return at::sigmoid(v);
    case UnaryOpType::Relu:
      return at::relu(v);
    case UnaryOpType::Silu:
      return at::silu(v);
    case UnaryOpType::Gelu:
      return at::gelu(v);
    case UnaryOpType::Erf:
      return at::erf(v);
    case UnaryOpType::Floor:
      return at::floor(v);
    case UnaryOpType::Ceil:
      return at::ceil(v);
    case UnaryOpType::Round:
      return at::round(v);
    default:
      break;
  }
  at::Tensor r = evalMoreMath(e.op(), v);
  NVF_ASSERT(r.defined(), "unhandled unary op ", e.opName());
  return r;
}

// Integer div, fmod and remainder as the kernels define them (nvf_idiv in
// the device helpers). ATen on x86 dies of SIGFPE on MIN / -1, so -1
// divisors divide by 1 instead: the remainder is then 0 either way and the
// quotient is negated, wrapping MIN to MIN. A zero divisor raises
// ZeroDivisionError on the CPU, like torch; elsewhere it gives what the
// kernels give (quotient -1, remainder a).
at::Tensor integerDivision(const BinaryOp& e, const at::Tensor& a,
                           const at::Tensor& b) {
  at::Tensor zero = b == 0;
  NVF_CHECK_KIND(!b.is_cpu() || !zero.any().item<bool>(), ZeroDivision,
                 toString(e.op()), ": integer division by zero computing ",
                 e.output(0)->ref());
  at::Tensor minusOne = b == -1;
  at::Tensor safe = at::where(zero | minusOne, at::ones_like(b), b);
  at::Tensor r;
  switch (e.op()) {
    case BinaryOpType::Div:
      r = at::div(a, safe, "trunc");
      r = at::where(minusOne, at::neg(r), r);
      return at::where(zero, at::full_like(r, -1), r);
    case BinaryOpType::Fmod:
      r = at::fmod(a, safe);
      break;
    case BinaryOpType::Remainder:
      r = at::remainder(a, safe);
      break;
    default:
      NVF_THROW(Internal, "integerDivision: ", e.opName());
  }
  return at::where(zero, a, r);
}

// Shifts by counts outside [0, bits) as the kernels define them (nvf_shl
// in the device helpers): 0, or the sign for arithmetic right shifts. ATen
// leaves them to the CPU on some versions (x86 takes the count modulo the
// width), so in-range counts alone reach it.
at::Tensor evalShift(BinaryOpType op, const at::Tensor& a,
                     const at::Tensor& b) {
  const int64_t bits = a.element_size() * 8;
  at::Tensor outside = (b < 0) | (b >= bits);
  at::Tensor count = at::clamp(b, 0, bits - 1);
  switch (op) {
    case BinaryOpType::BitwiseLeftShift:
      return at::where(outside, at::zeros_like(a),
                       at::bitwise_left_shift(a, count));
    case BinaryOpType::BitwiseRightShift:
      return at::bitwise_right_shift(
          a, at::where(outside, at::full_like(count, bits - 1), count));
    case BinaryOpType::LogicalRightShift: {
      // The arithmetic shift with the copies of the sign bit masked off:
      // the mask is ~(-1 << (bits - count)), all ones for a count of 0.
      at::Tensor ones = at::full_like(count, -1);
      at::Tensor mask =
          at::where(count == 0, ones,
                    at::bitwise_not(at::bitwise_left_shift(
                        ones, at::clamp(bits - count, 1, bits - 1))));
      at::Tensor r = at::bitwise_and(at::bitwise_right_shift(a, count), mask);
      return at::where(outside, at::zeros_like(a), r);
    }
    default:
      NVF_THROW(Internal, "evalShift: ", toString(op));
  }
}

// nextafter in Half or BFloat16: one step of the 16-bit pattern (ATen has
// no CPU kernel for Half on every version).
at::Tensor reducedNextafter(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor fa = a.to(at::kFloat);
  at::Tensor fb = b.to(at::kFloat);
  at::Tensor bits = a.contiguous().view(at::kShort).to(at::kInt);
  at::Tensor up = (fa < fb) == (fa > 0);
  at::Tensor next = at::where(up, bits + 1, bits - 1);
  // The smallest subnormal with b's sign (0x8001 as a short is -32767).
  at::Tensor tiny =
      at::where(fb < 0, at::full_like(bits, -32767), at::full_like(bits, 1));
  next = at::where(fa == 0, tiny, next).to(at::kShort).view(a.scalar_type());
  at::Tensor r = at::where(fa == fb, b, next);
  return at::where(at::isnan(fa) | at::isnan(fb), (fa + fb).to(a.scalar_type()),
                   r);
}

bool isDivision(BinaryOpType op) {
  return op == BinaryOpType::Div || op == BinaryOpType::Fmod ||
         op == BinaryOpType::Remainder;
}

// The binary ops added with nvFuser's full op list, in the compute type.
at::Tensor evalMoreBinary(const BinaryOp& e, const at::Tensor& a,
                          const at::Tensor& b) {
  if (isShift(e.op())) {
    return evalShift(e.op(), a, b);
  }
  switch (e.op()) {
    case BinaryOpType::Atan2:
      return at::atan2(a, b);
    case BinaryOpType::Nextafter:
      return isReducedFloat(e.computeType()) ? reducedNextafter(a, b)
                                             : at::nextafter(a, b);
    case BinaryOpType::Gcd:
      return at::gcd(a, b);
    default:
      NVF_THROW(Internal, "unhandled binary op ", e.opName());
  }
}

// An operand of a logical op as Bool: a complex value is true when either
// part is nonzero (torch.logical_and), where a cast would test the real
// part only.
at::Tensor truthOf(const at::Tensor& x) {
  return x.is_complex() ? x != 0 : as(x, DataType::Bool);
}

at::Tensor evalBinary(const BinaryOp& e, const at::Tensor& x,
                      const at::Tensor& y) {
  const bool logical =
      e.op() == BinaryOpType::LogicalAnd || e.op() == BinaryOpType::LogicalOr;
  at::Tensor a = logical ? truthOf(x) : as(x, e.computeType());
  at::Tensor b = logical ? truthOf(y) : as(y, e.computeType());
  if (isIntegralType(e.computeType()) && isDivision(e.op())) {
    return as(integerDivision(e, a, b), e.output(0)->dtype());
  }
  at::Tensor r;
  switch (e.op()) {
    case BinaryOpType::Add:
      r = at::add(a, b);
      break;
    case BinaryOpType::Sub:
      r = at::sub(a, b);
      break;
    case BinaryOpType::Mul:
      r = at::mul(a, b);
      break;
    case BinaryOpType::Div:
      r = at::div(a, b);
      break;
    case BinaryOpType::Pow:
      // torch's x ** c with a complex x takes c as a Scalar: products for
      // c = 2 or 3, where a tensor exponent would go through exp and log.
      r = a.is_complex() && !e.input(1)->isTensor() ? at::pow(a, b.item())
                                                    : at::pow(a, b);
      break;
    case BinaryOpType::Fmod:
      r = at::fmod(a, b);
      break;
    case BinaryOpType::Remainder:
      r = at::remainder(a, b);
      break;
    case BinaryOpType::Maximum:
      r = at::maximum(a, b);
      break;
    case BinaryOpType::Minimum:
      r = at::minimum(a, b);
      break;
    case BinaryOpType::Eq:
      r = at::eq(a, b);
      break;
    case BinaryOpType::Ne:
      r = at::ne(a, b);
      break;
    case BinaryOpType::Lt:
      r = at::lt(a, b);
      break;
    case BinaryOpType::Le:
      r = at::le(a, b);
      break;
    case BinaryOpType::Gt:
      r = at::gt(a, b);
      break;
    case BinaryOpType::Ge:
      r = at::ge(a, b);
      break;
    case BinaryOpType::LogicalAnd:
      r = at::logical_and(a, b);
      break;
    case BinaryOpType::LogicalOr:
      r = at::logical_or(a, b);
      break;
    case BinaryOpType::BitwiseAnd:
      r = at::bitwise_and(a, b);
      break;
    case BinaryOpType::BitwiseOr:
      r = at::bitwise_or(a, b);
      break;
    case BinaryOpType::BitwiseXor:
      r = at::bitwise_xor(a, b);
      break;
    default:
      r = evalMoreBinary(e, a, b);
  }
  return as(r, e.output(0)->dtype());
}

// a * b + c rounded once: ATen's CPU addcmul is that fma; its CUDA kernel
// rounds a * b first, so other devices compute on the CPU (rare: a
// generated kernel computes fma itself).
at::Tensor evalFma(const at::Tensor& a, const at::Tensor& b,
                   const at::Tensor& c) {
  if (a.is_cpu() && b.is_cpu() && c.is_cpu()) {
    return at::addcmul(c, a, b);
  }
  const at::Device device =
      a.is_cpu() ? (b.is_cpu() ? c.device() : b.device()) : a.device();
  return at::addcmul(c.cpu(), a.cpu(), b.cpu()).to(device);
}

at::Tensor evalTernary(const TernaryOp& e, const std::vector<at::Tensor>& in) {
  DataType t = e.computeType();
  switch (e.op()) {
    case TernaryOpType::Where:
      return at::where(in[0], as(in[1], t), as(in[2], t));
    case TernaryOpType::Lerp:
      return at::lerp(as(in[0], t), as(in[1], t), as(in[2], t));
    case TernaryOpType::Clamp:
      return at::minimum(at::maximum(as(in[0], t), as(in[1], t)), as(in[2], t));
    case TernaryOpType::Fma:
      return evalFma(as(in[0], t), as(in[1], t), as(in[2], t));
  }
  NVF_THROW(Internal, "unhandled ternary op");
}

at::Tensor evalReduction(const ReductionOp& e, const at::Tensor& x) {
  DataType outType = e.output(0)->dtype();
  const std::vector<int64_t>& axes = e.axes();
  switch (e.op()) {
    case ReductionOpType::Sum:
      // ATen sums Int32 into Long; the result is cast back.
      return as(at::sum(as(x, outType), axes), outType);
    case ReductionOpType::Mean:
      return at::mean(as(x, outType), axes);
    case ReductionOpType::Max:
      return as(at::amax(x, axes), outType);
    case ReductionOpType::Min:
      return as(at::amin(x, axes), outType);
    case ReductionOpType::Prod: {
      // ATen has no Half/BFloat16 product on the CPU; the kernels multiply
      // those in Float too.
      at::Tensor r = as(x, isReducedFloat(outType) ? DataType::Float : outType);
      for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
        r = at::prod(r, *it);
      }
      return as(r, outType);
    }
  }
  NVF_THROW(Internal, "unhandled reduction");
}

// Matrix products on the CPU have no Half/BFloat16 kernels in every ATen
// version: compute those in Float there.
at::Tensor withCpuUpcast(const std::vector<at::Tensor>& in,
                         at::Tensor (*fn)(const std::vector<at::Tensor>&)) {
  bool upcast = in[0].is_cpu() && (in[0].scalar_type() == at::kHalf ||
                                   in[0].scalar_type() == at::kBFloat16);
  if (!upcast) {
    return fn(in);
  }
  std::vector<at::Tensor> f;
  for (const at::Tensor& t : in) {
    f.push_back(t.to(at::kFloat));
  }
  return fn(f).to(in[0].scalar_type());
}

at::Tensor matmulFn(const std::vector<at::Tensor>& in) {
  return at::matmul(in[0], in[1]);
}
at::Tensor linearFn(const std::vector<at::Tensor>& in) {
  c10::optional<at::Tensor> bias;
  if (in.size() > 2) {
    bias = in[2];
  }
  return at::linear(in[0], in[1], bias);
}

at::TensorOptions optionsFor(DataType d, at::Device device) {
  return at::TensorOptions().dtype(toAtenType(d)).device(device);
}

// index_select, gather and take_along_axis. An index outside [0, size)
// raises IndexError on the CPU, as torch does; elsewhere it gives what
// generated kernels give, 0, and sets the index error word the runtime
// raises from (ATen's device-side assert would end the process's CUDA
// context).
at::Tensor evalGather(const GatherOp& e, const std::vector<at::Tensor>& in,
                      const std::vector<int64_t>& shape) {
  const int64_t dim = e.dim();
  const at::Tensor& lookup = in[0];
  // (A 0-dim CPU index, torch.compile's constant, joins the lookup.)
  at::Tensor index = in[1].to(lookup.options().dtype(at::kLong));
  const int64_t size = lookup.size(dim);
  at::Tensor valid = (index >= 0) & (index < size);
  if (lookup.is_cpu()) {
    checkIndexRange(index, valid, e.opName(), e.dim(), e.lookup()->ref(), size,
                    e.output(0)->ref());
  }
  if (size == 0) {  // every index is out of range (or there is none)
    return at::zeros(shape, lookup.options());
  }
  const bool masked = !lookup.is_cpu();
  if (masked) {  // reported as generated kernels report it
    device_index_errors::wordOn(lookup.device())
        .bitwise_or_(valid.logical_not().any().to(at::kInt));
  }
  at::Tensor safe =
      masked ? at::where(valid, index, at::zeros_like(index)) : index;
  at::Tensor r;
  if (e.op() == GatherOpType::IndexSelect) {
    r = at::index_select(lookup, dim, safe.reshape({-1}));
    std::vector<int64_t> along(shape.size(), 1);
    along[size_t(dim)] = -1;
    valid = valid.reshape(along);
  } else {
    at::Tensor from = lookup;
    if (e.op() == GatherOpType::TakeAlongAxis) {
      std::vector<int64_t> lookupShape = shape;
      lookupShape[size_t(dim)] = size;
      from = lookup.expand(lookupShape);
      safe = safe.expand(shape);
      valid = valid.expand(shape);
    }
    r = at::gather(from, dim, safe);
  }
  return masked ? at::where(valid, r, at::zeros_like(r)) : r;
}

at::Tensor evalBroadcast(const BroadcastOp& e, at::Tensor t) {
  const auto& mask = e.isBroadcastDim();
  for (size_t i = 0; i < mask.size(); ++i) {
    if (mask[i]) {
      t = t.unsqueeze(static_cast<int64_t>(i));
    }
  }
  return t;
}

at::Tensor evalSlice(const SliceOp& e, at::Tensor t) {
  const auto& ranges = e.ranges();
  for (size_t d = 0; d < ranges.size(); ++d) {
    t = t.slice(static_cast<int64_t>(d), ranges[d].start, ranges[d].stop,
                ranges[d].step);
  }
  return t;
}

// constant_pad_nd refuses a result with an empty dim (torch 1.13 even one
// padded by 0), so empty results and empty inputs are built directly.
at::Tensor evalPad(const PadOp& e, const at::Tensor& x, const at::Tensor& v,
                   const std::vector<int64_t>& shape) {
  int64_t outNumel = 1;
  for (int64_t s : shape) {
    outNumel *= s;
  }
  if (outNumel == 0) {
    return at::empty(shape, x.options());
  }
  if (x.numel() == 0) {
    return at::full(shape, v.item(), x.options());
  }
  return at::constant_pad_nd(x, e.flatWidths(), v.item());
}

at::Tensor evalIota(const IotaOp& e, const std::vector<at::Tensor>& in,
                    at::Device device) {
  const DataType outType = e.output(0)->dtype();
  const DataType wide =
      isIntegralType(outType) ? DataType::Int : DataType::Double;
  at::Tensor r = at::arange(e.length(), optionsFor(wide, device));
  return as(r * as(in[1], wide) + as(in[0], wide), outType);
}

}  // namespace

at::Tensor scalarTensor(const ScalarValue& v, DataType dtype,
                        at::Device device) {
  at::Scalar s;
  if (auto* b = std::get_if<bool>(&v)) {
    s = at::Scalar(*b);
  } else if (auto* i = std::get_if<int64_t>(&v)) {
    s = at::Scalar(*i);
  } else if (auto* c = std::get_if<std::complex<double>>(&v)) {
    s = at::Scalar(c10::complex<double>(c->real(), c->imag()));
  } else {
    s = at::Scalar(std::get<double>(v));
  }
  return at::scalar_tensor(s, optionsFor(dtype, device));
}

at::Tensor evalExpr(const Expr& e, const std::vector<at::Tensor>& in,
                    at::Device device) {
  const Val* outVal = e.output(0);
  std::vector<int64_t> shape;
  if (outVal->isTensor()) {
    shape = concreteShape(outVal->asTensor());
  }
  switch (e.type()) {
    case ExprType::Unary:
      return evalUnary(*exprAs<UnaryOp>(&e), in[0]);
    case ExprType::Binary:
      return evalBinary(*exprAs<BinaryOp>(&e), in[0], in[1]);
    case ExprType::Ternary:
      return evalTernary(*exprAs<TernaryOp>(&e), in);
    case ExprType::Broadcast:
      return evalBroadcast(*exprAs<BroadcastOp>(&e), in[0]);
    case ExprType::Expand:
      return in[0].expand(shape);
    case ExprType::Reshape:
      return in[0].reshape(shape);
    case ExprType::Permute:
      return in[0].permute(exprAs<PermuteOp>(&e)->perm());
    case ExprType::Squeeze:
      return in[0].reshape(shape);
    case ExprType::Slice:
      return evalSlice(*exprAs<SliceOp>(&e), in[0]);
    case ExprType::Pad:
      return evalPad(*exprAs<PadOp>(&e), in[0], in[1], shape);
    case ExprType::Cat:
      return at::cat(in, exprAs<CatOp>(&e)->dim());
    case ExprType::Reduction:
      return evalReduction(*exprAs<ReductionOp>(&e), in[0]);
    case ExprType::Matmul:
      return withCpuUpcast(in, matmulFn);
    case ExprType::Linear:
      return withCpuUpcast(in, linearFn);
    case ExprType::Full:
      return at::full(shape, in[0].item(), optionsFor(outVal->dtype(), device));
    case ExprType::Iota:
      return evalIota(*exprAs<IotaOp>(&e), in, device);
    case ExprType::LoadStore:
      return in[0].clone();
    case ExprType::Gather:
      return evalGather(*exprAs<GatherOp>(&e), in, shape);
    case ExprType::Triu:
      return evalTriu(*exprAs<TriuOp>(&e), in[0]);
    case ExprType::Scan:
      return evalCumsum(*exprAs<ScanOp>(&e), in[0]);
    case ExprType::Scatter:
      return evalScatter(*exprAs<ScatterOp>(&e), in);
    case ExprType::Rng:
      return evalRng(*exprAs<RngOp>(&e), in, device);
    case ExprType::VarMean:
    case ExprType::AtenCall:  // several results: AtenEvaluator::evaluate
    case ExprType::Welford:   // expanded by concretization
      break;
  }
  NVF_THROW(Internal, "evalExpr: unhandled op ", e.opName());
}

std::pair<at::Tensor, at::Tensor> evalVarMean(const VarMeanOp& e,
                                              const at::Tensor& in) {
  // Two-pass: mean, then the corrected mean of squared deviations. Written
  // out so it does not depend on the ATen version's var_mean signature.
  DataType outType = e.output(0)->dtype();
  at::Tensor x = as(in, outType);
  at::Tensor mean = at::mean(x, e.axes(), /*keepdim=*/true);
  int64_t n = 1;
  for (int64_t a : e.axes()) {
    n *= x.size(a);
  }
  at::Tensor sq = at::sum((x - mean) * (x - mean), e.axes());
  // torch clamps the divisor at 0: a correction >= n gives inf, or NaN
  // where every deviation is 0 (the kernels divide the same way).
  const int64_t dof = std::max<int64_t>(n - e.correction(), 0);
  at::Tensor var = sq / static_cast<double>(dof);
  return {var, at::mean(x, e.axes())};
}

}  // namespace nvfuser
