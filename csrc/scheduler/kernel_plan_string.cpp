// NVFUSER_DUMP=scheduler_params: a kernel plan as text, one line per
// output family after the strategy's own line.
#include <sstream>

#include "ir/list_string.h"
#include "scheduler/kernel_plan.h"

namespace nvfuser {

namespace {
void printFamily(std::ostream& os, size_t f, const OutputFamilyPlan& fam) {
  os << "\n  family " << f << ": output(s) " << listToString(fam.outputs)
     << ", loop " << listToString(fam.loop) << ", " << fam.vectorWidth
     << " lane(s)";
  if (!fam.narrowedBecause.empty()) {
    os << " (" << fam.narrowedBecause << ")";
  }
  if (fam.threadsPerSlot > 1) {
    os << ", " << fam.threadsPerSlot << " threads per slot";
  }
  for (const LoopOutputPlan& l : fam.loopOutputs) {
    os << ", output " << l.output << " in the loop of "
       << l.reduction->output(0)->ref();
  }
  if (!fam.slotDims.empty()) {
    os << ", slots in loop dim order " << listToString(fam.slotDims)
       << " (the input read most)";
  }
}

void printRows(std::ostream& os, const KernelPlan& plan) {
  const RowLaunch& l = plan.rowLaunch;
  os << ": " << plan.rows.numRows << " rows of " << plan.rows.rowLength
     << " elements, " << plan.rowVectorWidth << " lane(s), " << l.threads
     << " threads per row, "
     << (l.persistent ? std::to_string(l.vectorsPerThread) +
                            " vector(s) per thread held in registers"
                      : std::string("looping"));
  if (!plan.rows.columnSums.empty()) {
    os << ", " << plan.rows.columnSums.size() << " column sum(s)";
  }
  if (!plan.families.empty() && !plan.families[0].narrowedBecause.empty()) {
    os << " (" << plan.families[0].narrowedBecause << ")";
  }
}
// A split sum's kernel (serial_reduction_kernel_generator.cpp): blocks of
// kBlock threads, each a tile of vectors by chunks.
void printSplit(std::ostream& os, const SplitSumPlan& split) {
  const int64_t perBlock = SplitSumPlan::chunksPerBlock(split.factor);
  os << ": " << split.sum->output(0)->ref() << " split over dim " << split.axis
     << " in " << split.factor << " chunks, blocks of " << SplitSumPlan::kBlock
     << " threads each summing a tile of " << SplitSumPlan::kBlock / perBlock
     << " vectors x " << perBlock << " chunks, one wave";
}
}  // namespace

std::string toString(const KernelPlan& plan) {
  std::ostringstream os;
  os << toString(plan.strategy);
  switch (plan.strategy) {
    case KernelStrategy::Rows:
      printRows(os, plan);
      return os.str();
    case KernelStrategy::Transpose:
      os << ": 32 x 32 tiles over output dims " << plan.transpose.outAcross
         << " and " << plan.transpose.outInner << ", input(s) "
         << listToString(plan.transpose.staged) << " staged in shared memory";
      break;
    case KernelStrategy::Pointwise:
    case KernelStrategy::SerialReduction:
      if (plan.split.sum != nullptr && plan.split.factor > 1) {
        printSplit(os, plan.split);
      } else {
        os << ": " << plan.blockThreads << " threads per block, "
           << (plan.fullGrid ? "a block per " +
                                   std::to_string(plan.blockThreads) + " slots"
                             : std::string("one looping wave"));
      }
      for (const InterleavedCat& c : plan.interleavedCats) {
        os << ", output " << c.output << "'s slots in cat order (" << c.extent
           << " positions of " << c.innerElements << " elements, ";
        if (!c.blockUniform) {
          os << "warps on one)";
        } else if (c.sidesPerCatPosition > 1) {
          os << "a block on " << c.sidesPerCatPosition
             << " pad sides of one cat position, warps on one)";
        } else {
          os << "blocks on one)";
        }
      }
      break;
  }
  for (size_t f = 0; f < plan.families.size(); ++f) {
    printFamily(os, f, plan.families[f]);
  }
  return os.str();
}

}  // namespace nvfuser
