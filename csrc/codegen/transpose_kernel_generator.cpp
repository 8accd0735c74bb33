#include "codegen/transpose_kernel_generator.h"

#include <sstream>

#include "analysis/tensor_shape.h"
#include "codegen/rng_device_helpers.h"
#include "exceptions.h"

namespace nvfuser {
namespace codegen_detail {

namespace {
constexpr int64_t kTile = TransposePlan::kTile;

std::string tileName(size_t k) {
  return "nvf_tile" + std::to_string(k);
}
}  // namespace

Index TransposeKernelGenerator::outputIndex(const IndexExpr& across,
                                            const IndexExpr& inner) const {
  const TransposePlan& t = plan_.transpose;
  Index idx = others_;
  idx[size_t(t.outAcross)] = Ix{across, false};
  idx[size_t(t.outInner)] = Ix{inner, false};
  return idx;
}

Index TransposeKernelGenerator::stagedIndex(size_t k, const Index& out) const {
  Index idx;
  for (int64_t label : plan_.transpose.stagedDims.at(k)) {
    idx.push_back(label < 0 ? Ix{IndexExpr(), false} : out[size_t(label)]);
  }
  return idx;
}

std::optional<Value> TransposeKernelGenerator::stagedLoad(const TensorView* tv,
                                                          const Index& idx) {
  const TransposePlan& t = plan_.transpose;
  for (size_t k = 0; k < t.staged.size(); ++k) {
    if (fusion_.inputs()[t.staged[k]] != tv) {
      continue;
    }
    // Every read of a staged input is at the element's own index (the
    // plan admits index maps only), which the tile holds transposed.
    NVF_ASSERT(keyOf(idx) == keyOf(stagedIndex(k, phase2_)), "staged input ",
               tv->ref(), " read at another index than the element's");
    return Value{tileName(k) + "[tx][r]", false};
  }
  return std::nullopt;
}

std::string TransposeKernelGenerator::stageTile(size_t k) {
  const TransposePlan& t = plan_.transpose;
  const size_t input = t.staged[k];
  const TensorView* tv = fusion_.inputs()[input]->asTensor();
  const std::vector<int64_t>& strides = layouts_.at(input).strides;
  const Index at = stagedIndex(
      k, outputIndex(IndexExpr::named("nvf_a"), IndexExpr::named("nvf_b")));
  IndexExpr offset;
  for (size_t d = 0; d < at.size(); ++d) {
    offset = offset + at[d].e * strides[d];
  }
  return "        " + tileName(k) + "[r][tx] = " + paramName_.at(tv) + "[" +
         offset.str() + "];\n";
}

std::string TransposeKernelGenerator::outputsBody() {
  resetBody(1);
  indent_ = 8;
  for (size_t o = 0; o < fusion_.outputs().size(); ++o) {
    const TensorView* tv = fusion_.outputs()[o]->asTensor();
    storeAt(o, phase2_, valueAt(tv, operandIndex(tv, phase2_)), "");
  }
  return body_.str();
}

std::string TransposeKernelGenerator::untiledIndices(
    const std::vector<int64_t>& shape, int64_t* outer) {
  const TransposePlan& t = plan_.transpose;
  std::vector<int64_t> otherShape;
  for (int64_t d = 0; d < t.rank; ++d) {
    if (d != t.outAcross && d != t.outInner) {
      otherShape.push_back(shape[size_t(d)]);
      *outer *= shape[size_t(d)];
    }
  }
  resetBody(1);
  indent_ = 4;
  const std::vector<IndexExpr> coords =
      delinearize(IndexExpr::named("o"), otherShape);
  others_.assign(size_t(t.rank), Ix{IndexExpr(), false});
  for (int64_t d = 0, next = 0; d < t.rank; ++d) {
    if (d == t.outAcross || d == t.outInner) {
      continue;
    }
    const IndexExpr& c = coords[size_t(next++)];
    others_[size_t(d)] =
        Ix{shape[size_t(d)] == 1 ? IndexExpr() : emitIndex(c), false};
  }
  return body_.str();
}

KernelSource TransposeKernelGenerator::generate(const std::string& name) {
  std::string params;
  KernelSource ks = beginKernel(name, &params);
  const TransposePlan& t = plan_.transpose;
  const std::vector<int64_t> shape =
      concreteShape(fusion_.outputs().at(0)->asTensor());
  const int64_t across = shape[size_t(t.outAcross)];
  const int64_t inner = shape[size_t(t.outInner)];
  const int64_t tilesA = (across + kTile - 1) / kTile;
  const int64_t tilesB = (inner + kTile - 1) / kTile;
  int64_t outer = 1;
  const std::string otherDefs = untiledIndices(shape, &outer);
  phase2_ = outputIndex(IndexExpr::named("nvf_a"), IndexExpr::named("nvf_b"));
  const std::string body = outputsBody();

  for (const OutputFamily& fam : ks.families) {
    NVF_ASSERT(fam.vectorWidth == 1, "a transpose plan with ", fam.vectorWidth,
               " lanes: its threads take one element each");
  }
  ks.slots = outer * tilesA * tilesB;
  ks.block = kTile * TransposePlan::kBlockRows;
  ks.blockPerSlot = true;
  ks.fullGrid = true;
  const std::string ix = indexType_;
  auto n = [](int64_t x) { return std::to_string(x); };
  const std::string inTile =
      "if (nvf_a < " + n(across) + " && nvf_b < " + n(inner) + ") {\n";
  const std::string rows = "    for (unsigned r = ty; r < " + n(kTile) +
                           "; r += " + n(TransposePlan::kBlockRows) + ") {\n";
  std::ostringstream code;
  code << deviceHelpersFor(fusion_) << "\nextern \"C\" __global__ void "
       << ks.name << "(" << params << ") {\n"
       << "  // tiles of " << kTile << " x " << kTile << " (output dims "
       << t.outAcross << " and " << t.outInner << "), " << t.staged.size()
       << " input(s) staged in shared memory\n";
  for (size_t k = 0; k < t.staged.size(); ++k) {
    const Val* in = fusion_.inputs()[t.staged[k]];
    code << "  __shared__ " << cudaType(in->dtype()) << " " << tileName(k)
         << "[" << kTile << "][" << kTile + 1 << "];\n";
  }
  code << "  const unsigned tx = threadIdx.x % " << kTile
       << ", ty = threadIdx.x / " << kTile << ";\n"
       << "  for (" << ix << " tile = blockIdx.x; tile < " << ks.slots
       << "; tile += gridDim.x) {\n"
       << "    const " << ix << " tb = tile % " << tilesB << ";\n"
       << "    const " << ix << " ta = (tile / " << tilesB << ") % " << tilesA
       << ";\n"
       << "    const " << ix << " o = tile / " << tilesA * tilesB << ";\n"
       << otherDefs << rows << "      const " << ix << " nvf_a = ta * " << kTile
       << " + tx, nvf_b = tb * " << kTile << " + r;\n"
       << "      " << inTile;
  for (size_t k = 0; k < t.staged.size(); ++k) {
    code << stageTile(k);
  }
  code << "      }\n    }\n    __syncthreads();\n"
       << rows << "      const " << ix << " nvf_a = ta * " << kTile
       << " + r, nvf_b = tb * " << kTile << " + tx;\n"
       << "      " << inTile << body << "      }\n    }\n"
       << "    __syncthreads();  // the next tile reuses shared memory\n"
       << "  }\n}\n";
  ks.code = code.str();
  return ks;
}

}  // namespace codegen_detail
}  // namespace nvfuser
