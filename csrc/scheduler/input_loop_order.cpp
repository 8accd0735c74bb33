#include "scheduler/input_loop_order.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "analysis/element_map.h"
#include "analysis/tensor_shape.h"
#include "ir/dtype.h"

namespace nvfuser {

namespace {

// The input's element `value` reads at `coords`, as an offset in memory
// (elements), or nullopt where it reads none there.
std::optional<int64_t> offsetRead(const Val* value,
                                  const std::vector<int64_t>& coords,
                                  const Val* input,
                                  const std::vector<int64_t>& strides) {
  std::optional<std::vector<int64_t>> at =
      inputCoordinates(value, coords, input);
  if (!at) {
    return std::nullopt;
  }
  int64_t offset = 0;
  for (size_t d = 0; d < at->size(); ++d) {
    offset += (*at)[d] * strides.at(d);
  }
  return offset;
}

// Per loop dim of `out` (its non-size-1 dims), how far one step moves the
// element of `input` it reads, or empty where some step reads none.
std::vector<int64_t> loopStrides(const TensorView* out, const Val* input,
                                 const std::vector<int64_t>& strides) {
  const std::vector<int64_t> shape = concreteShape(out);
  const std::vector<int64_t> base(shape.size(), 0);
  const std::optional<int64_t> origin = offsetRead(out, base, input, strides);
  std::vector<int64_t> steps;
  for (size_t d = 0; d < shape.size() && origin; ++d) {
    if (shape[d] == 1) {
      continue;
    }
    std::vector<int64_t> next = base;
    next[d] = 1;
    const std::optional<int64_t> at = offsetRead(out, next, input, strides);
    if (!at) {
      return {};
    }
    steps.push_back(*at - *origin);
  }
  return origin ? steps : std::vector<int64_t>{};
}

// The kMaxOrderCandidates largest (bytes) tensor inputs a kernel reads
// from memory, largest first.
std::vector<size_t> inputsBySize(const Fusion& segment) {
  std::vector<size_t> order;
  for (size_t i = 0; i < segment.inputs().size(); ++i) {
    const Val* in = segment.inputs()[i];
    if (in->isTensor() && !passedByValue(in)) {
      order.push_back(i);
    }
  }
  auto bytes = [&](size_t i) {
    return denseBytes(segment.inputs()[i]->asTensor());
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return bytes(a) > bytes(b); });
  order.resize(std::min(order.size(), kMaxOrderCandidates));
  return order;
}

bool takesAnOrder(const Fusion& segment, const OutputFamilyPlan& fam,
                  const std::vector<InterleavedCat>& interleavedCats,
                  int64_t minRunBytes) {
  if (fam.threadsPerSlot != 1 || !fam.loopOutputs.empty() ||
      fam.loop.size() < 3 || fam.loop.back() % fam.vectorWidth != 0) {
    return false;
  }
  for (size_t o : fam.outputs) {
    const TensorView* t = segment.outputs()[o]->asTensor();
    const int64_t run = fam.loop.back() * dataTypeSize(t->dtype());
    if (minRunBytes > 0 && (run < minRunBytes || run % minRunBytes != 0)) {
      return false;
    }
    for (const InterleavedCat& c : interleavedCats) {
      if (c.output == o) {
        return false;
      }
    }
  }
  return true;
}

// The loop dims outermost first by the input's strides (empty: the
// outputs' order already), or nullopt where the innermost is not its
// contiguous dim or some other dim does not move it (an expanded dim).
std::optional<std::vector<int64_t>> orderOfStrides(
    const std::vector<int64_t>& steps) {
  if (steps.empty() || steps.back() != 1) {
    return std::nullopt;
  }
  std::vector<int64_t> dims(steps.size() - 1);
  std::iota(dims.begin(), dims.end(), 0);
  for (int64_t d : dims) {
    if (steps[size_t(d)] <= 1) {
      return std::nullopt;
    }
  }
  std::stable_sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) {
    return steps[size_t(a)] > steps[size_t(b)];
  });
  if (std::is_sorted(dims.begin(), dims.end())) {
    return std::vector<int64_t>{};
  }
  dims.push_back(static_cast<int64_t>(steps.size()) - 1);
  return dims;
}

// The order of the largest input some output of the family reads through
// index maps with every loop dim moving it (a GQA forward's q, where its
// k and v outputs repeat their group's element over the heads).
// `inputs`: inputsBySize's.
std::optional<std::vector<int64_t>> familyOrder(
    const Fusion& segment, const OutputFamilyPlan& fam,
    const std::vector<size_t>& inputs,
    const std::vector<std::vector<int64_t>>& inputStrides) {
  const size_t outputs = std::min(fam.outputs.size(), kMaxOrderCandidates);
  for (size_t i : inputs) {
    const TensorView* in = segment.inputs()[i]->asTensor();
    const std::vector<int64_t> strides =
        givenOrDenseStrides(in, inputStrides, i);
    for (size_t k = 0; k < outputs; ++k) {
      const TensorView* out = segment.outputs()[fam.outputs[k]]->asTensor();
      std::optional<std::vector<int64_t>> order =
          orderOfStrides(loopStrides(out, in, strides));
      if (order) {
        return order;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

void planInputLoopOrder(const Fusion& segment,
                        const std::vector<std::vector<int64_t>>& inputStrides,
                        const std::vector<InterleavedCat>& interleavedCats,
                        int64_t minRunBytes,
                        std::vector<OutputFamilyPlan>* families) {
  const std::vector<size_t> inputs = inputsBySize(segment);
  for (OutputFamilyPlan& fam : *families) {
    if (takesAnOrder(segment, fam, interleavedCats, minRunBytes)) {
      fam.slotDims = familyOrder(segment, fam, inputs, inputStrides)
                         .value_or(std::vector<int64_t>{});
    }
  }
}

}  // namespace nvfuser
