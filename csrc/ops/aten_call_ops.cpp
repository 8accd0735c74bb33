#include "ops/aten_call_ops.h"

#include <algorithm>
#include <cctype>

#include "exceptions.h"
#include "ops/op_utils.h"

namespace nvfuser {

namespace {
bool isIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) {
    return false;
  }
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// namespace::name[.overload], each part an identifier: what the
// dispatcher can look up and a printed definition can quote.
void checkName(const std::string& op) {
  const size_t sep = op.find("::");
  const size_t dot = op.find('.');
  const std::string ns = op.substr(0, sep);
  const std::string name =
      sep == std::string::npos ? "" : op.substr(sep + 2, dot - sep - 2);
  const std::string overload =
      dot == std::string::npos ? "default" : op.substr(dot + 1);
  NVF_CHECK(sep != std::string::npos && dot > sep && isIdentifier(ns) &&
                isIdentifier(name) && isIdentifier(overload),
            "aten_call: '", op,
            "' is not an operator name (namespace::name[.overload])");
}

void checkArgs(const std::vector<AtenCallArg>& args,
               const std::vector<Val*>& inputs) {
  std::vector<bool> used(inputs.size(), false);
  auto use = [&](size_t i, int64_t k) {
    NVF_CHECK(k >= 0 && k < static_cast<int64_t>(inputs.size()),
              "aten_call: argument ", i, " refers to input ", k, " of ",
              inputs.size());
    used[static_cast<size_t>(k)] = true;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind == AtenCallArg::Kind::Input) {
      use(i, args[i].input);
    } else if (args[i].kind == AtenCallArg::Kind::TensorList) {
      for (int64_t k : args[i].inputs) {
        if (k == -1) {
          continue;  // None
        }
        use(i, k);
        NVF_CHECK(inputs[static_cast<size_t>(k)]->isTensor(),
                  "aten_call: argument ", i, " lists input ", k,
                  ", which is not a tensor");
      }
    }
  }
  NVF_CHECK(std::all_of(used.begin(), used.end(), [](bool u) { return u; }),
            "aten_call: every input must be an argument");
}

IterDomain resultDim(const AtenCallExtent& e, const std::vector<Val*>& inputs,
                     const std::string& what) {
  if (e.input < 0) {
    NVF_CHECK(e.size >= 0, what, " has negative size ", e.size);
    return e.size == 1 ? IterDomain::broadcast()
                       : IterDomain::iteration(Extent::constant(e.size));
  }
  NVF_CHECK(e.input < static_cast<int64_t>(inputs.size()) &&
                inputs[static_cast<size_t>(e.input)]->isTensor(),
            what, " refers to input ", e.input, ", which is not a tensor");
  const TensorView* tv = inputs[static_cast<size_t>(e.input)]->asTensor();
  const int64_t d = normalizeDim(e.dim, tv->nDims(), what);
  const IterDomain& id = tv->axis(d);
  // An expanded broadcast stands for its expanded extent: a result holds
  // that many elements in memory.
  if (id.hasExpanded) {
    return IterDomain::iteration(id.expanded);
  }
  return id.isBroadcast() ? IterDomain::broadcast()
                          : IterDomain::iteration(id.extent);
}
}  // namespace

std::vector<TensorView*> atenCall(const std::string& op,
                                  const std::vector<Val*>& inputs,
                                  std::vector<AtenCallArg> args,
                                  std::vector<AtenCallResult> results) {
  checkName(op);
  const std::string what = "aten_call " + op;
  NVF_CHECK(std::any_of(inputs.begin(), inputs.end(),
                        [](const Val* v) { return v->isTensor(); }),
            what, ": at least one argument must be a tensor of the fusion");
  Fusion* f = commonFusion(inputs, what);
  checkArgs(args, inputs);
  NVF_CHECK(!results.empty(), what, ": keeps no result");
  std::vector<Val*> outs;
  std::vector<TensorView*> tensors;
  for (size_t r = 0; r < results.size(); ++r) {
    const AtenCallResult& res = results[r];
    NVF_CHECK(res.returnIndex >= 0, what, ": result ", r,
              " has a negative return index");
    std::vector<IterDomain> domain;
    for (size_t d = 0; d < res.shape.size(); ++d) {
      domain.push_back(resultDim(res.shape[d], inputs,
                                 what + ": result " + std::to_string(r) +
                                     " dim " + std::to_string(d)));
    }
    TensorView* tv = f->newTensor(std::move(domain), res.dtype);
    outs.push_back(tv);
    tensors.push_back(tv);
  }
  f->addExpr<AtenCallOp>(std::move(outs), inputs, op, std::move(args),
                         std::move(results));
  return tensors;
}

}  // namespace nvfuser
