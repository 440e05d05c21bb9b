"""Interpolation through the API: cnnlInterp_v3 and cnnlInterpBackward_v2 against PyTorch's upsampling (where
torch is importable; a numpy reference would re-implement the op), and without torch: exact cases (nearest 2x is
repeat, linear reproduces linear ramps, bicubic reproduces constants), the backward as the adjoint of the forward,
layouts and strides, empty tensors and bad arguments."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cnnl

from .nn_helpers import BF16, F16, F32, F64, assert_near, blank, placed, raises_status, rounded, sync

NLC, NHWC, NCHW, NDHWC, NCDHW, ARRAY = (cnnl.CNNL_LAYOUT_NLC, cnnl.CNNL_LAYOUT_NHWC, cnnl.CNNL_LAYOUT_NCHW,
                                       cnnl.CNNL_LAYOUT_NDHWC, cnnl.CNNL_LAYOUT_NCDHW, cnnl.CNNL_LAYOUT_ARRAY)
ALGO0, ALGO2, ALGO3, ALGO7 = (cnnl.CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO0,
                              cnnl.CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO2,
                              cnnl.CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO3,
                              cnnl.CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO7)
#: torch mode -> (forward mode, backward mode)
MODES = {"nearest": (cnnl.CNNL_INTERP_NEAREST, cnnl.CNNL_INTERP_BACKWARD_NEAREST),
         "nearest-exact": (cnnl.CNNL_INTERP_NEAREST, None),
         "linear": (cnnl.CNNL_INTERP_LINEAR, cnnl.CNNL_INTERP_BACKWARD_LINEAR),
         "bilinear": (cnnl.CNNL_INTERP_BILINEAR, cnnl.CNNL_INTERP_BACKWARD_BILINEAR),
         "bicubic": (cnnl.CNNL_INTERP_BICUBIC, cnnl.CNNL_INTERP_BACKWARD_BICUBIC),
         "trilinear": (cnnl.CNNL_INTERP_TRILINEAR, cnnl.CNNL_INTERP_BACKWARD_TRILINEAR)}
CHANNEL_LAST = {3: NLC, 4: NHWC, 5: NDHWC}


def coordinate(mode, align_corners):
    if mode == "nearest":
        return ALGO3
    if mode == "nearest-exact":
        return ALGO7
    return ALGO2 if align_corners else ALGO0


def to_layout(x, layout):
    """An (N, C, *spatial) array in the memory order of `layout`."""
    return np.moveaxis(x, 1, -1) if layout in (NLC, NHWC, NDHWC) else x


def from_layout(x, layout):
    return np.moveaxis(x, -1, 1) if layout in (NLC, NHWC, NDHWC) else x


def interp(handle, x, size, mode, align_corners=False, code=F32, layout=None, scales=None, rounding=None):
    """cnnlInterp_v3 of an (N, C, *spatial) array; returns (N, C, *size)."""
    layout = CHANNEL_LAST[x.ndim] if layout is None else layout
    xt = placed(to_layout(x, layout), code, layout)
    out_shape = x.shape[:2] + tuple(size)
    yt = blank(to_layout(np.empty(out_shape), layout).shape, code, layout)
    desc = cnnl.createInterpDescriptor()
    cnnl.setInterpDescriptor(desc, MODES[mode][0], coordinate(mode, align_corners))
    cnnl.setInterpDescriptorEx(desc, xt.desc, cnnl.CNNL_INTERP_FLOOR if rounding is None else rounding, scales,
                               None, -0.75, False)
    cnnl.interp_v3(handle, desc, xt.desc, xt.ptr, yt.desc, yt.ptr)
    sync(handle)
    return from_layout(yt.read(), layout)


def interp_backward(handle, dy, in_size, mode, align_corners=False, code=F32, layout=None):
    layout = CHANNEL_LAST[dy.ndim] if layout is None else layout
    dyt = placed(to_layout(dy, layout), code, layout)
    dxt = blank(to_layout(np.empty(dy.shape[:2] + tuple(in_size)), layout).shape, code, layout)
    center = mode != "nearest" and not align_corners
    cnnl.interpBackward_v2(handle, align_corners, center, MODES[mode][1], None, True, dyt.desc, dyt.ptr, dxt.desc,
                           dxt.ptr)
    sync(handle)
    return from_layout(dxt.read(), layout)


CASES = [("nearest", (2, 3, 7), (13,)), ("nearest", (2, 3, 5, 7), (9, 4)), ("nearest", (2, 2, 3, 4, 5), (5, 8, 3)),
         ("nearest-exact", (2, 3, 5, 7), (11, 3)), ("linear", (2, 3, 7), (12,)), ("bilinear", (2, 3, 5, 7), (9, 4)),
         ("bicubic", (2, 3, 5, 7), (11, 3)), ("trilinear", (1, 2, 4, 5, 3), (7, 3, 6))]


@pytest.mark.parametrize("mode,shape,size,align_corners",
                         [case + (align,) for case in CASES for align in (False, True)
                          if not (align and case[0].startswith("nearest"))])
def test_forward_and_backward_match_torch(handle, mode, shape, size, align_corners):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(len(shape) + len(mode))
    x = rng.standard_normal(shape)
    kwargs = {} if mode.startswith("nearest") else {"align_corners": align_corners}
    want = torch.nn.functional.interpolate(torch.tensor(x, requires_grad=True), size=size, mode=mode, **kwargs)
    got = interp(handle, x, size, mode, align_corners, F64)
    np.testing.assert_allclose(got, want.detach().numpy(), atol=1e-12)
    if MODES[mode][1] is None:
        return
    dy = rng.standard_normal(want.shape)
    source = torch.tensor(x, requires_grad=True)
    torch.nn.functional.interpolate(source, size=size, mode=mode, **kwargs).backward(torch.tensor(dy))
    np.testing.assert_allclose(interp_backward(handle, dy, shape[2:], mode, align_corners, F64),
                               source.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("code", [F32, F16, BF16])
@pytest.mark.parametrize("layout", [NHWC, NCHW])
def test_dtypes_and_layouts_match_torch(handle, code, layout):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = rounded(rng, (2, 3, 6, 5), code)
    for mode, size in (("bilinear", (12, 10)), ("bicubic", (9, 7)), ("nearest", (4, 11))):
        kwargs = {} if mode == "nearest" else {"align_corners": False}
        want = torch.nn.functional.interpolate(torch.tensor(x), size=size, mode=mode, **kwargs).numpy()
        assert_near(interp(handle, x, size, mode, code=code, layout=layout), want, code, scale=4, what=mode)


def test_scale_factors_match_torch(handle):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(4).standard_normal((1, 2, 5, 7))
    for mode in ("nearest", "bilinear"):
        kwargs = {} if mode == "nearest" else {"align_corners": False}
        want = torch.nn.functional.interpolate(torch.tensor(x), scale_factor=(1.7, 0.6), mode=mode,
                                               recompute_scale_factor=False, **kwargs).numpy()
        got = interp(handle, x, want.shape[2:], mode, code=F64, scales=[1.7, 0.6])
        np.testing.assert_allclose(got, want, atol=1e-12)


def test_backward_with_scale_factors_matches_torch(handle):
    torch = pytest.importorskip("torch")
    x = torch.tensor(np.random.default_rng(8).standard_normal((1, 2, 5, 7)), requires_grad=True)
    y = torch.nn.functional.interpolate(x, scale_factor=(1.7, 0.6), mode="bilinear", align_corners=False,
                                        recompute_scale_factor=False)
    dy = torch.ones_like(y)
    y.backward(dy)
    dyt = placed(to_layout(dy.numpy(), NHWC), F64, NHWC)
    dxt = blank((1, 5, 7, 2), F64, NHWC)
    cnnl.interpBackward_v2(handle, False, True, cnnl.CNNL_INTERP_BACKWARD_BILINEAR, [1.7, 0.6], False, dyt.desc,
                           dyt.ptr, dxt.desc, dxt.ptr)
    sync(handle)
    np.testing.assert_allclose(from_layout(dxt.read(), NHWC), x.grad.numpy(), atol=1e-12)


def test_exact_cases_without_torch(handle):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 4, 5))
    np.testing.assert_array_equal(interp(handle, x, (8, 10), "nearest", code=F64),
                                  x.repeat(2, axis=2).repeat(2, axis=3))
    ramp = np.add.outer(np.arange(6.0), 2 * np.arange(7.0))[None, None]  # linear in both axes
    for size in ((11, 13), (3, 4)):
        got = interp(handle, ramp, size, "bilinear", align_corners=True, code=F64)
        rows, cols = np.linspace(0, 5, size[0]), np.linspace(0, 6, size[1])
        np.testing.assert_allclose(got[0, 0], np.add.outer(rows, 2 * cols), atol=1e-12)
    constant = np.full((1, 2, 5, 5), 3.25)
    np.testing.assert_allclose(interp(handle, constant, (9, 4), "bicubic", code=F64), 3.25, atol=1e-12)
    # nearest rounding modes with align corners: 2 -> 3 samples the middle at 0.5, rounded by the mode
    line = np.array([[[10.0], [20.0]]])  # NLC: one sample, two positions, one channel
    for rounding, middle in ((cnnl.CNNL_INTERP_FLOOR, 10), (cnnl.CNNL_INTERP_CEIL, 20),
                             (cnnl.CNNL_INTERP_ROUND_PERFER_FLOOR, 10), (cnnl.CNNL_INTERP_ROUND_PERFER_CEIL, 20)):
        desc = cnnl.createInterpDescriptor()
        cnnl.setInterpDescriptor(desc, cnnl.CNNL_INTERP_NEAREST, ALGO2)
        xt, yt = placed(line, F64, NLC), blank((1, 3, 1), F64, NLC)
        cnnl.setInterpDescriptorEx(desc, xt.desc, rounding, None, None, -0.75, False)
        cnnl.interp_v3(handle, desc, xt.desc, xt.ptr, yt.desc, yt.ptr)
        sync(handle)
        np.testing.assert_array_equal(yt.read()[0, :, 0], [10, middle, 20])


@settings(max_examples=15)
@given(st.sampled_from(["nearest", "linear", "bilinear", "bicubic", "trilinear"]), st.booleans(),
       st.lists(st.integers(1, 6), min_size=3, max_size=3), st.integers(0, 2**31))
def test_backward_is_the_adjoint(mode, align_corners, extents, seed):
    """<interp(x), dy> == <x, interp_backward(dy)> for every mode: the backward is the forward's transpose."""
    handle = cnnl.create()
    rank = {"nearest": 2, "linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}[mode]
    align_corners = align_corners and mode != "nearest"
    rng = np.random.default_rng(seed)
    in_size, out_size = tuple(extents[:rank]), tuple(rng.integers(1, 8, rank))
    x = rng.standard_normal((2, 3) + in_size)
    dy = rng.standard_normal((2, 3) + out_size)
    forward = interp(handle, x, out_size, mode, align_corners, F64)
    backward = interp_backward(handle, dy, in_size, mode, align_corners, F64)
    assert abs(np.sum(forward * dy) - np.sum(x * backward)) <= 1e-9 * max(1, np.abs(forward * dy).sum())


def test_strided_output_and_empty(handle):
    x = np.random.default_rng(6).standard_normal((1, 2, 3, 3))
    xt = placed(to_layout(x, NHWC), F64, NHWC)
    yt = blank((1, 6, 6, 2), F64, NHWC)
    strided = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptorEx(strided, NHWC, F64, [1, 6, 6, 2], [144, 24, 4, 1])  # every other channel pair
    big = blank((144,), F64)
    desc = cnnl.createInterpDescriptor()
    cnnl.setInterpDescriptor(desc, cnnl.CNNL_INTERP_NEAREST, ALGO3)
    cnnl.interp_v3(handle, desc, xt.desc, xt.ptr, strided, big.ptr)
    cnnl.interp_v3(handle, desc, xt.desc, xt.ptr, yt.desc, yt.ptr)
    sync(handle)
    np.testing.assert_array_equal(big.read().reshape(6, 6, 4)[:, :, :2], yt.read()[0])
    empty_in, empty_out = blank((0, 3, 3, 2), F64, NHWC), blank((0, 6, 6, 2), F64, NHWC)
    cnnl.interp_v3(handle, desc, empty_in.desc, empty_in.ptr, empty_out.desc, empty_out.ptr)
    sync(handle)


def test_rejects_bad_arguments(handle):
    BAD, UNSUPPORTED = cnnl.CNNL_STATUS_BAD_PARAM, cnnl.CNNL_STATUS_NOT_SUPPORTED
    x, y = blank((1, 4, 4, 2), F32, NHWC), blank((1, 8, 8, 2), F32, NHWC)
    desc = cnnl.createInterpDescriptor()
    with raises_status(BAD, arg="desc"):
        cnnl.interp_v3(handle, desc, x.desc, x.ptr, y.desc, y.ptr)  # never set
    with raises_status(BAD, arg="mode"):
        cnnl.setInterpDescriptor(desc, 9, ALGO0)
    cnnl.setInterpDescriptor(desc, cnnl.CNNL_INTERP_TRILINEAR, ALGO0)
    with raises_status(BAD, arg="input_desc"):  # trilinear needs 5-D tensors
        cnnl.interp_v3(handle, desc, x.desc, x.ptr, y.desc, y.ptr)
    cnnl.setInterpDescriptor(desc, cnnl.CNNL_INTERP_BILINEAR, cnnl.CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO5)
    with raises_status(UNSUPPORTED, arg="desc"):
        cnnl.interp_v3(handle, desc, x.desc, x.ptr, y.desc, y.ptr)
    cnnl.setInterpDescriptor(desc, cnnl.CNNL_INTERP_BILINEAR, ALGO7)
    with raises_status(UNSUPPORTED, arg="desc"):  # nearest-exact coordinates are for nearest
        cnnl.interp_v3(handle, desc, x.desc, x.ptr, y.desc, y.ptr)
    cnnl.setInterpDescriptor(desc, cnnl.CNNL_INTERP_BILINEAR, ALGO0)
    with raises_status(BAD, arg="scales"):
        cnnl.setInterpDescriptorEx(desc, x.desc, cnnl.CNNL_INTERP_FLOOR, [2.0], None, -0.75, False)
    with raises_status(BAD, arg=r"scales\[1\]"):
        cnnl.setInterpDescriptorEx(desc, x.desc, cnnl.CNNL_INTERP_FLOOR, [2.0, -1.0], None, -0.75, False)
    with raises_status(UNSUPPORTED, arg="pad"):
        cnnl.setInterpDescriptorEx(desc, x.desc, cnnl.CNNL_INTERP_FLOOR, None, [1.0], -0.75, False)
    with raises_status(BAD, arg="output_desc"):  # channels differ
        cnnl.interp_v3(handle, desc, x.desc, x.ptr, blank((1, 8, 8, 3), F32, NHWC).desc, y.ptr)
    with raises_status(BAD, arg="output_desc"):  # layouts differ
        cnnl.interp_v3(handle, desc, x.desc, x.ptr, blank((1, 2, 8, 8), F32, NCHW).desc, y.ptr)
    with raises_status(BAD, arg="output_desc"):
        cnnl.interp_v3(handle, desc, x.desc, x.ptr, blank((1, 8, 8, 2), F16, NHWC).desc, y.ptr)
    with raises_status(UNSUPPORTED, arg="input_desc"):
        ints = blank((1, 4, 4, 2), cnnl.CNNL_DTYPE_INT32, NHWC)
        cnnl.interp_v3(handle, desc, ints.desc, ints.ptr, blank((1, 8, 8, 2), cnnl.CNNL_DTYPE_INT32, NHWC).desc,
                       y.ptr)
    with raises_status(BAD, arg="output"):
        cnnl.interp_v3(handle, desc, x.desc, x.ptr, y.desc, None)
    with raises_status(BAD, arg="align_center"):
        cnnl.interpBackward_v2(handle, True, True, cnnl.CNNL_INTERP_BACKWARD_BILINEAR, None, True, y.desc, y.ptr,
                               x.desc, x.ptr)
    with raises_status(BAD, arg="scales"):
        cnnl.interpBackward_v2(handle, False, True, cnnl.CNNL_INTERP_BACKWARD_BILINEAR, None, False, y.desc, y.ptr,
                               x.desc, x.ptr)
