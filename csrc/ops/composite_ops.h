// Builders of nvFuser's triu, welford, cumsum and scatter
// (ir/more_exprs.h), and the expansion of triu and welford into ordinary
// ops once concretization knows the sizes.
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "ir/fusion.h"
#include "ir/more_exprs.h"

namespace nvfuser {

// torch.triu: the last two dims' upper triangle from `diagonal` on; keeps
// the dtype. Rank >= 2.
TensorView* triu(TensorView* in, int64_t diagonal);
// nvFuser's welford over `dims` (at least one): {avg, var_sum, n}. avg and
// var_sum are Float (Double for Double), n is Int; floating inputs only.
std::tuple<TensorView*, TensorView*, TensorView*> welford(
    TensorView* in, const std::vector<int64_t>& dims);
// torch.cumsum along dim: floating types keep their dtype (Half stays
// Half, as nvFuser's scan and torch), integers and Bool give Int (torch).
TensorView* cumsum(TensorView* in, int64_t dim);
// Out-of-place torch.scatter(arg, dim, index, src); src is a tensor of
// arg's dtype and rank or a scalar.
TensorView* scatter(TensorView* arg, TensorView* index, Val* src, int64_t dim);

// For concretize: triu and welford on inputs with constant extents as the
// iota/compare/where and mean/sum/full ops they stand for; nullopt for any
// other expr.
std::optional<std::vector<Val*>> expandComposite(const Expr* e,
                                                 const std::vector<Val*>& ins);

}  // namespace nvfuser
