// Register caps for more resident blocks: a kernel whose registers limit
// how many of its blocks an SM holds is compiled once more with a cap for
// one block more, kept only if ptxas spills nothing. (Softmax's row kernel:
// 56 registers and 9 blocks of 128 threads per SM, 48 and 10 with no
// spill.) Needs no GPU.
#pragma once

#include <string>

#include "compiler/nvrtc_compiler.h"

namespace nvfuser {

// Blocks of `blockThreads` threads using `registers` each that one SM
// holds by registers and threads (65536 registers allocated per warp in
// units of 256, 2048 threads, 32 blocks: sm_80 and sm_90 alike).
int residentBlocksByRegisters(int registers, int blockThreads);

// The kernel compiled as compileWithNvrtc does, or with a register cap
// when that holds one more block per SM, costs at most 8 registers and
// spills nothing. Both compiles use `caches`.
CompiledKernel compileForOccupancy(
    const std::string& source, const std::string& name, const std::string& arch,
    int blockThreads, bool ptxasVerbose = false,
    const KernelCaches& caches = KernelCaches::standard());

}  // namespace nvfuser
