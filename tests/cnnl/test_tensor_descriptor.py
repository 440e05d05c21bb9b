"""Tensor descriptors: set/get in every form, validation, life cycle."""
import pytest

import cnnl

from .helpers import descriptor, empty, raises_status, tensor

LAYOUT_RANKS = {cnnl.CNNL_LAYOUT_NCHW: 4, cnnl.CNNL_LAYOUT_NHWC: 4, cnnl.CNNL_LAYOUT_HWCN: 4,
                cnnl.CNNL_LAYOUT_NDHWC: 5, cnnl.CNNL_LAYOUT_NCDHW: 5, cnnl.CNNL_LAYOUT_TNC: 3,
                cnnl.CNNL_LAYOUT_NTC: 3, cnnl.CNNL_LAYOUT_NC: 2, cnnl.CNNL_LAYOUT_NLC: 3}


def test_enum_values_follow_the_reference():
    assert [cnnl.CNNL_LAYOUT_NCHW, cnnl.CNNL_LAYOUT_NHWC, cnnl.CNNL_LAYOUT_HWCN, cnnl.CNNL_LAYOUT_NDHWC,
            cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_LAYOUT_NCDHW, cnnl.CNNL_LAYOUT_TNC, cnnl.CNNL_LAYOUT_NTC,
            cnnl.CNNL_LAYOUT_NC, cnnl.CNNL_LAYOUT_NLC] == list(range(10))
    assert (cnnl.CNNL_DTYPE_INVALID, cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_DTYPE_INT8,
            cnnl.CNNL_DTYPE_INT16, cnnl.CNNL_DTYPE_INT31, cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_UINT8,
            cnnl.CNNL_DTYPE_BOOL, cnnl.CNNL_DTYPE_INT64, cnnl.CNNL_DTYPE_UINT32, cnnl.CNNL_DTYPE_UINT64,
            cnnl.CNNL_DTYPE_UINT16, cnnl.CNNL_DTYPE_DOUBLE, cnnl.CNNL_DTYPE_COMPLEX_HALF,
            cnnl.CNNL_DTYPE_COMPLEX_FLOAT, cnnl.CNNL_DTYPE_BFLOAT16) == (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13,
                                                                         14, 15, 16, 17)


def test_set_and_get_dense_descriptor():
    desc = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_NCHW, cnnl.CNNL_DTYPE_HALF, [2, 3, 4, 5])
    assert cnnl.getTensorDescriptor(desc) == (cnnl.CNNL_LAYOUT_NCHW, cnnl.CNNL_DTYPE_HALF, (2, 3, 4, 5))
    assert cnnl.getTensorDescriptorEx(desc)[3] == (60, 20, 5, 1)
    assert cnnl.getTensorElementNum(desc) == 120


def test_set_and_get_strided_descriptor():
    desc = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptorEx(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [3, 4], [1, 3])
    assert cnnl.getTensorDescriptorEx(desc) == (cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, (3, 4), (1, 3))
    assert cnnl.getTensorElementNum(desc) == 12


def test_v2_forms_take_64_bit_dims():
    desc = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptor_v2(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_INT8, [1 << 33])
    assert cnnl.getTensorDescriptor_v2(desc)[2] == (1 << 33,)
    cnnl.setTensorDescriptorEx_v2(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_INT8, [2, 1 << 32], [1 << 32, 1])
    assert cnnl.getTensorDescriptorEx_v2(desc)[3] == (1 << 32, 1)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg=r"dimSize\[0\]"):
        cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_INT8, [1 << 33])


@pytest.mark.parametrize("layout,rank", sorted(LAYOUT_RANKS.items()))
def test_a_layout_of_another_rank_is_accepted_with_a_warning_or_refused_when_strict(layout, rank):
    """CNNL keeps a layout that does not match the rank as a tag (DIOPI sets its 1-D conv bias as NHWC): accepted
    with a LenientWarning, once per call site; MLUSIM_STRICT=1 refuses it with BAD_PARAM naming the layout."""
    from mlusim import lenient
    from mlusim import config
    lenient.reset()
    desc = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptor(desc, layout, cnnl.CNNL_DTYPE_FLOAT, [2] * rank)
    with pytest.warns(lenient.LenientWarning, match="describes .* dimensions, got"):
        for _ in range(3):  # one call site: one warning
            cnnl.setTensorDescriptor(desc, layout, cnnl.CNNL_DTYPE_FLOAT, [2] * (rank + 1))
    assert cnnl.getTensorDescriptor(desc) == (layout, cnnl.CNNL_DTYPE_FLOAT, (2,) * (rank + 1))
    with config.overridden(MLUSIM_STRICT="1"), raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="layout"):
        cnnl.setTensorDescriptor(desc, layout, cnnl.CNNL_DTYPE_FLOAT, [2] * (rank + 1))


def test_array_layout_takes_one_to_eight_dims():
    desc = cnnl.createTensorDescriptor()
    for rank in range(1, 9):
        cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [1] * rank)
    for dims in ([], [1] * 9):
        with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="dimSize"):
            cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, dims)


@pytest.mark.parametrize("args,arg", [
    ((99, cnnl.CNNL_DTYPE_FLOAT, [2]), "layout"),
    ((cnnl.CNNL_LAYOUT_ARRAY, 10, [2]), "dtype"),
    ((cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_INVALID, [2]), "dtype"),
    ((cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [2, -1]), r"dimSize\[1\]"),
    ((cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, 5), "dimSize"),
    ((cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [2.5]), r"dimSize\[0\]"),
])
def test_bad_values_are_bad_param(args, arg):
    desc = cnnl.createTensorDescriptor()
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg=arg):
        cnnl.setTensorDescriptor(desc, *args)


def test_bad_strides_are_bad_param():
    desc = cnnl.createTensorDescriptor()
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="dimStride"):
        cnnl.setTensorDescriptorEx(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [2, 2], [1])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg=r"dimStride\[0\]"):
        cnnl.setTensorDescriptorEx(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [2, 2], [-2, 1])


def test_failed_set_keeps_the_previous_state():
    desc = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [3])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM):
        cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_NCHW, cnnl.CNNL_DTYPE_FLOAT, [3, -1, 2, 2])
    assert cnnl.getTensorDescriptor(desc) == (cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, (3,))


def test_onchip_data_type_is_recorded():
    desc = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_HALF, [3])
    cnnl.setTensorDescriptorOnchipDataType(desc, cnnl.CNNL_DTYPE_FLOAT)
    assert cnnl.getTensorDescriptorOnchipDataType(desc) == cnnl.CNNL_DTYPE_FLOAT


def test_unset_reset_and_destroyed_descriptors(handle):
    desc = cnnl.createTensorDescriptor()
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="desc"):
        cnnl.getTensorElementNum(desc)
    src = tensor([1.0, 2.0])
    dst = empty([2])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="input_desc"):
        cnnl.copy(handle, desc, src.ptr, dst.desc, dst.ptr)
    cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [2])
    cnnl.resetTensorDescriptor(desc)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="desc"):
        cnnl.getTensorDescriptor(desc)
    cnnl.destroyTensorDescriptor(src.desc)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="input_desc"):
        cnnl.copy(handle, src.desc, src.ptr, dst.desc, dst.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="desc"):
        cnnl.destroyTensorDescriptor(src.desc)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.copy(handle, dst.desc, dst.ptr, "not a descriptor", dst.ptr)


def test_the_facts_every_op_call_reads_follow_a_descriptor_that_is_set_again():
    """A descriptor caches its span, the bytes a read moves and the element layout of a strided access (op calls
    read them instead of recomputing); setting it again with other dims, strides or dtype renews them all."""
    desc = descriptor([2, 3])
    assert (desc.span_bytes, desc.read_bytes, desc.element_layout) == (24, 24, None)
    cnnl.setTensorDescriptorEx(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_HALF, [2, 3], [10, 2])
    assert desc.span_bytes == (1 + 10 + 4) * 2 and desc.read_bytes == 6 * 2
    assert desc.element_layout == (2, (2, 3), (10, 2))
    cnnl.setTensorDescriptorEx(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_DOUBLE, [4], [0])  # broadcast
    assert (desc.span_bytes, desc.read_bytes, desc.element_layout) == (8, 8, (8, (4,), (0,)))
    cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_INT8, [0, 5])
    assert (desc.span_bytes, desc.read_bytes) == (0, 0)
    cnnl.resetTensorDescriptor(desc)
    assert (desc.span_bytes, desc.read_bytes) == (0, 0)
