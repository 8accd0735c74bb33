"""More misuses of the API (test_bad_input.py has the first ones): each must
raise the named exception with a message that names the problem."""

import warnings

import pytest
import torch

from nvfuser import DataType, FusionDefinition


def define(build):
    with FusionDefinition() as fd:
        build(fd)
    return fd


def run(build, inputs):
    return define(build).execute(inputs)


def one_input(fd, shape=(-1,), dtype=DataType.Float, **kw):
    t = fd.define_tensor(shape=list(shape), dtype=dtype, **kw)
    fd.add_output(fd.ops.neg(t))
    return t


def scalar_input(dtype):
    """A fusion of a tensor and a scalar input of `dtype`."""
    def build(fd):
        t = fd.define_tensor(shape=[-1])
        s = fd.define_scalar(None, dtype=dtype)
        fd.add_output(fd.ops.where(s, t, t) if dtype == DataType.Bool
                      else fd.ops.mul(t, s))
    return build


CASES = [
    ("static size mismatch",
     lambda: run(lambda fd: one_input(fd, (4,)), [torch.randn(5)]),
     ValueError, r"dim 0 has size 5 but the fusion requires 4"),
    ("expanded broadcast given real strides",
     lambda: run(lambda fd: one_input(fd, (-1, -1), contiguity=[None, True]),
                 [torch.randn(3, 4)]),
     ValueError, r"defined as an expanded broadcast .* stride 4"),
    ("squeeze of a real dim",
     lambda: define(lambda fd: fd.ops.squeeze(
         fd.define_tensor(shape=[3, 4]), dims=[0])),
     ValueError, r"squeeze: dim 0 .* has size 3; only size-1 dims"),
    ("negative pad",
     lambda: define(lambda fd: fd.ops.pad(fd.define_tensor(shape=[3]),
                                          [-1, 0])),
     ValueError, r"negative pad widths are not supported"),
    ("odd pad widths",
     lambda: define(lambda fd: fd.ops.pad(fd.define_tensor(shape=[3]), [1])),
     ValueError, r"even number of entries"),
    ("duplicate reduction dims",
     lambda: define(lambda fd: fd.ops.sum(fd.define_tensor(shape=[3, 4]),
                                          dims=[1, -1])),
     ValueError, r"sum: dim -1 appears more than once"),
    ("matmul dtype mismatch",
     lambda: define(lambda fd: fd.ops.matmul(
         fd.define_tensor(shape=[3, 4]),
         fd.define_tensor(shape=[4, 5], dtype=DataType.Half))),
     TypeError, r"matmul: operands .* must have the same dtype"),
    ("matmul contraction mismatch",
     lambda: define(lambda fd: fd.ops.matmul(fd.define_tensor(shape=[3, 4]),
                                             fd.define_tensor(shape=[5, 2]))),
     ValueError, r"contraction sizes differ: .*\(4 vs 5\)"),
    ("where with a float condition",
     lambda: define(lambda fd: fd.ops.where(fd.define_tensor(shape=[3]), 1.0,
                                            0.0)),
     TypeError, r"where: condition must be Bool"),
    ("bitwise op on floats",
     lambda: define(lambda fd: fd.ops.bitwise_and(
         fd.define_tensor(shape=[3]), fd.define_tensor(shape=[3]))),
     TypeError, r"bitwise_and: operands must be integral or Bool"),
    ("stride_order not a permutation",
     lambda: define(lambda fd: fd.define_tensor(shape=[3, 4],
                                                stride_order=[0, 0])),
     ValueError, r"stride_order must be a permutation of 0..1"),
    ("contiguity of the wrong length",
     lambda: define(lambda fd: fd.define_tensor(shape=[3, 4],
                                                contiguity=[True])),
     ValueError, r"contiguity has 1 entries but shape has 2 dims"),
    ("is_cpu for a tensor of rank 2",
     lambda: define(lambda fd: fd.define_tensor(shape=[3, 4], is_cpu=True)),
     ValueError, r"is_cpu=True is only supported for rank-0"),
    ("reshape with two -1",
     lambda: define(lambda fd: fd.ops.reshape(fd.define_tensor(shape=[12]),
                                              [-1, -1])),
     ValueError, r"more than one -1"),
    ("iota of negative length",
     lambda: define(lambda fd: fd.ops.iota(-2)),
     ValueError, r"iota: length -2 must be >= 0"),
    ("var_mean of an integer tensor",
     lambda: define(lambda fd: fd.ops.var_mean(
         fd.define_tensor(shape=[3], dtype=DataType.Int), dims=[0])),
     TypeError, r"var_mean: input must be floating point"),
    ("from_pytorch of a list",
     lambda: define(lambda fd: fd.from_pytorch([1, 2])),
     TypeError, r"from_pytorch: expected a torch.Tensor, got list"),
    ("unsupported tensor dtype at execute",
     lambda: run(lambda fd: one_input(fd), [torch.zeros(3,
                                                        dtype=torch.uint8)]),
     TypeError, r"tensors of dtype Byte are not supported"),
    ("full with a negative size",
     lambda: define(lambda fd: fd.ops.full([2, -3], 0.0, DataType.Float)),
     ValueError, r"full: shape\[1\] = -3 must be >= 0"),
    ("expand of a real dim",
     lambda: define(lambda fd: fd.ops.expand(fd.define_tensor(shape=[3, 1]),
                                             [4, 5])),
     ValueError, r"expand: dim 0 .* cannot be expanded to 4"),
    ("broadcast mask of the wrong size",
     lambda: define(lambda fd: fd.ops.broadcast(fd.define_tensor(shape=[3]),
                                                [True, True])),
     ValueError, r"broadcast: .* has 1 dims but is_broadcast_dim keeps 0"),
    ("cuda_code_for with a bad arch",
     lambda: define(lambda fd: one_input(fd)).cuda_code_for(
         [torch.randn(3)], arch="hopper"),
     ValueError, r"arch must look like 'sm_90'"),
    ("runtime floating scalar used as a shape",
     lambda: define(lambda fd: fd.ops.reshape(
         fd.define_tensor(shape=[4]), [fd.define_scalar(None,
                                                        DataType.Double)])),
     TypeError, r"reshape: entry 0 is a runtime Double scalar; sizes must "
                r"be integer scalars"),
    ("squeeze of an out-of-range dim",
     lambda: define(lambda fd: fd.ops.squeeze(fd.define_tensor(shape=[1]),
                                              dims=[3])),
     ValueError, r"dim 3 is out of range for a tensor of rank 1"),
    ("reshape to a shape whose size product overflows int64",
     lambda: define(lambda fd: fd.ops.reshape(fd.define_tensor(shape=[24]),
                                              [8, 2**61 + 3])),
     ValueError, r"reshape: new_shape \[8, 2305843009213693955\] has more "
                 r"than 2\^63 - 1 elements"),
    ("full whose element count overflows int64",
     lambda: define(lambda fd: fd.ops.full([2**62, 4], 0.0, DataType.Float)),
     ValueError, r"a tensor of sizes \[4611686018427387904, 4\] has more "
                 r"than 2\^63 - 1 elements"),
    ("expand whose element count overflows int64",
     lambda: define(lambda fd: fd.ops.expand(
         fd.define_tensor(shape=[1, -1]), [2**62, 4])),
     ValueError, r"has more than 2\^63 - 1 elements"),
    ("pad widths that overflow int64",
     lambda: define(lambda fd: fd.ops.pad(fd.define_tensor(shape=[3]),
                                          [2**62, 2**62])),
     ValueError, r"pad: dim 0 of T0 \[3\] Float padded by .* has more than "
                 r"2\^63 - 1 elements"),
    ("sum into Bool",
     lambda: define(lambda fd: fd.ops.sum(fd.define_tensor(shape=[3]),
                                          dims=[0], dtype=DataType.Bool)),
     TypeError, r"sum: dtype Bool is not supported"),
    ("prod into Bool",
     lambda: define(lambda fd: fd.ops.prod(
         fd.define_tensor(shape=[3], dtype=DataType.Bool), dims=[0],
         dtype=DataType.Bool)),
     TypeError, r"prod: dtype Bool is not supported"),
    ("reduction dtype that is not a DataType",
     lambda: define(lambda fd: fd.ops.max(fd.define_tensor(shape=[3]),
                                          dims=[0], dtype=torch.float32)),
     TypeError, r"max: dtype must be a DataType, got torch.float32"),
    ("iota dtype that is not a DataType",
     lambda: define(lambda fd: fd.ops.iota(3, dtype="int")),
     TypeError, r"iota: dtype must be a DataType, got 'int'"),
    ("integer tensor to a negative constant power",
     lambda: define(lambda fd: fd.ops.pow(
         fd.define_tensor(shape=[3], dtype=DataType.Int), -1)),
     ValueError, r"pow: integers to negative integer powers are not "
                 r"allowed, as in torch \(T0 \[3\] Int \*\* -1\)"),
    ("constant beyond int64",
     lambda: define(lambda fd: fd.define_scalar(2**70)),
     ValueError, r"define_scalar: 1180591620717411303424 is out of the int64 "
                 r"range"),
    ("float constant for an Int scalar",
     lambda: define(lambda fd: fd.define_scalar(2.7, dtype=DataType.Int)),
     TypeError, r"define_scalar: Int scalars take a Python int, got "
                r"float 2.7"),
    ("int constant for a Bool scalar",
     lambda: define(lambda fd: fd.define_scalar(1, dtype=DataType.Bool)),
     TypeError, r"Bool scalars take a Python bool, got int 1"),
    ("bool constant for an Int scalar",
     lambda: define(lambda fd: fd.define_scalar(True, dtype=DataType.Int)),
     TypeError, r"Int scalars take a Python int, got bool True"),
    ("constant beyond Int32",
     lambda: define(lambda fd: fd.define_scalar(2**40,
                                                dtype=DataType.Int32)),
     ValueError, r"1099511627776 is out of range for Int32 scalars"),
    ("size beyond int64",
     lambda: define(lambda fd: fd.define_tensor(shape=[2**70])),
     ValueError, r"shape\[0\] = 1180591620717411303424 is out of the int64 "
                 r"range"),
    ("new_shape entry beyond int64",
     lambda: define(lambda fd: fd.ops.reshape(fd.define_tensor(shape=[4]),
                                              [2**64, -1])),
     ValueError, r"reshape: new_shape\[0\] = 18446744073709551616 is out "
                 r"of the int64 range"),
    ("NaN constant as a size",
     lambda: define(lambda fd: fd.ops.reshape(
         fd.define_tensor(shape=[4]), [fd.define_scalar(float("nan"))])),
     TypeError, r"reshape: new_shape\[0\] must be an integer scalar, got a "
                r"Double constant nan"),
    ("float correction",
     lambda: define(lambda fd: fd.ops.var_mean(fd.define_tensor(shape=[4]),
                                               dims=[0], correction=1.5)),
     TypeError, r"var_mean: correction must be an int, got float"),
    ("float for an Int scalar input at execute",
     lambda: run(scalar_input(DataType.Int), [torch.ones(2), 2.7]),
     TypeError, r"execute: input 1 \(s0\): Int scalars take a Python int, "
                r"got float 2.7"),
    ("int beyond int64 for an Int scalar input at execute",
     lambda: run(scalar_input(DataType.Int), [torch.ones(2), 2**70]),
     ValueError, r"execute: input 1: 1180591620717411303424 is out of the "
                 r"int64 range"),
    ("int for a Bool scalar input at execute",
     lambda: run(scalar_input(DataType.Bool), [torch.ones(2), 1]),
     TypeError, r"input 1 \(s0\): Bool scalars take a Python bool, got int "
                r"1"),
    ("bool for a Double scalar input at execute",
     lambda: run(scalar_input(DataType.Double), [torch.ones(2), True]),
     TypeError, r"Double scalars take a Python int or float, got bool True"),
    # Session 24's probe: these were accepted, or failed without naming the
    # input or op.
    ("negative size in sizes",
     lambda: define(lambda fd: fd.define_tensor(sizes=[-3, 4],
                                                strides=[4, 1])),
     ValueError, r"define_tensor: sizes\[0\] is -3; a tensor's sizes are at "
                 r"least 0"),
    ("negative stride in strides",
     lambda: define(lambda fd: fd.define_tensor(sizes=[3, 4],
                                                strides=[-4, 1])),
     ValueError, r"define_tensor: strides\[0\] is -4"),
    ("shape given with sizes",
     lambda: define(lambda fd: fd.define_tensor(
         sizes=[3, 4], strides=[4, 1], shape=[-1, -1])),
     ValueError, r"sizes and strides describe the tensor; shape must not be "
                 r"given with them"),
    ("strides without sizes",
     lambda: define(lambda fd: fd.define_tensor(shape=[-1],
                                                strides=[1])),
     ValueError, r"define_tensor: strides requires sizes"),
    ("Half scalar input beyond Half's range at execute",
     lambda: run(scalar_input(DataType.Half), [torch.ones(2), 70000.0]),
     ValueError, r"execute: input 1 \(s0\): 70000.0 is out of range for "
                 r"Half \(largest finite value 65504.0\)"),
    ("Float constant beyond Float's range",
     lambda: define(lambda fd: fd.define_scalar(1e300, DataType.Float)),
     ValueError, r"define_scalar: 1e\+300 is out of range for Float"),
    ("full of nan as Int",
     lambda: define(lambda fd: fd.ops.full([2], float("nan"),
                                           DataType.Int)),
     ValueError, r"full: fill_value: nan does not fit Int"),
    ("full beyond Int32",
     lambda: define(lambda fd: fd.ops.full([2], 3e9, DataType.Int32)),
     ValueError, r"full: fill_value: 3000000000.0 does not fit Int32"),
    ("full of an int beyond Int32",
     lambda: define(lambda fd: fd.ops.full([2], 3000000000, DataType.Int32)),
     ValueError, r"full: fill_value: 3000000000 does not fit Int32"),
    ("full of a complex beyond ComplexFloat",
     lambda: define(lambda fd: fd.ops.full([2], complex(1e300, 0),
                                           DataType.ComplexFloat)),
     ValueError, r"full: fill_value \(real part\): 1e\+300 is out of range "
                 r"for Float"),
    ("an option name that is not a str",
     lambda: define(lambda fd: one_input(fd)).execute(
         [torch.ones(2)], _enable_options=[None]),
     TypeError, r"_enable_options\[0\] must be an option name \(a str\), "
                r"got None"),
    ("cuda_code_for with a NUL in the arch",
     lambda: define(lambda fd: one_input(fd)).cuda_code_for(
         [torch.ones(2)], "sm_90\x00"),
     ValueError, r"arch must look like 'sm_90'"),
]

def quiet(make):
    """make() without torch's beta/prototype warnings (sparse CSR, nested
    and named tensors warn when made)."""
    def made():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return make()
    return made


# Tensors that are not dense strided memory, rejected at execute naming the
# input: (name, a function making the tensor, rank, what the message says).
TENSOR_KINDS = [
    ("sparse COO", lambda: torch.ones(3).to_sparse(), 1,
     r"a sparse \(torch.sparse_coo\)"),
    ("sparse CSR", lambda: torch.eye(3).to_sparse_csr(), 2,
     r"a sparse \(torch.sparse_csr\)"),
    ("MKL-DNN", lambda: torch.ones(3).to_mkldnn(), 1,
     r"an MKL-DNN \(torch._mkldnn\)"),
    ("nested", lambda: torch.nested.nested_tensor([torch.ones(2),
                                                  torch.ones(3)]), 2,
     r"a nested"),
    ("quantized", lambda: torch.quantize_per_tensor(torch.ones(3), 0.1, 0,
                                                    torch.qint8), 1,
     r"a quantized \(QInt8\)"),
    ("named", lambda: torch.ones(3, names=("n",)), 1,
     r"a named \(drop the names with .rename\(None\)\)"),
    ("meta", lambda: torch.ones(3, device="meta"), 1, r"a meta \(no data\)"),
]
for _name, _make, _rank, _kind in TENSOR_KINDS:
    CASES.append((
        "%s tensor at execute" % _name,
        lambda make=quiet(_make), rank=_rank: run(
            lambda fd: one_input(fd, (-1,) * rank), [make()]),
        TypeError, r"execute: input 0 is %s tensor; only dense strided "
                   r"tensors are supported" % _kind))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input(case):
    _, call, error, pattern = case
    with pytest.raises(error, match=pattern):
        call()


def test_catalog_has_at_least_40_distinct_misuses():
    # test_bad_input.py checks 35 distinct misuses; this file adds the rest.
    assert len(CASES) + 35 >= 40
