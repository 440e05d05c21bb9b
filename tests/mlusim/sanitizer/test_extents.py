"""The bytes of an access: strided layouts as runs, and the bytes two accesses share, against brute force."""
import numpy as np
from hypothesis import given, settings, strategies as st

from mlusim.sanitizer.extents import MAX_RUNS, Span, merged_runs, overlap, span_of_runs, strided_span

layouts = st.integers(1, 3).flatmap(lambda ndim: st.tuples(
    st.sampled_from([1, 2, 4, 8]), st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim),
    st.lists(st.integers(0, 12), min_size=ndim, max_size=ndim), st.integers(0, 40)))


def _bytes(itemsize, dims, strides, offset) -> set:
    touched = set()
    for index in np.ndindex(*dims):
        first = offset + itemsize * sum(i * s for i, s in zip(index, strides))
        touched.update(range(first, first + itemsize))
    return touched


def _span_bytes(span: Span) -> set:
    return {b for lo, hi in span.as_runs() for b in range(lo, hi)} if span.hi > span.lo else set()


@settings(max_examples=200)
@given(layout=layouts)
def test_a_strided_span_holds_exactly_the_bytes_of_its_elements(layout):
    itemsize, dims, strides, offset = layout
    touched = _bytes(itemsize, dims, strides, offset)
    extent = 0 if not touched else max(touched) + 1 - offset
    span = strided_span(offset, extent, itemsize, dims, strides)
    assert _span_bytes(span) == touched
    if span.runs is not None:
        assert (np.diff(span.runs[:, 0]) > 0).all() and (span.runs[1:, 0] > span.runs[:-1, 1]).all()


@settings(max_examples=200)
@given(first=layouts, second=layouts)
def test_overlap_finds_the_first_common_byte_and_counts_them(first, second):
    spans, sets = [], []
    for itemsize, dims, strides, offset in (first, second):
        touched = _bytes(itemsize, dims, strides, offset)
        extent = 0 if not touched else max(touched) + 1 - offset
        spans.append(strided_span(offset, extent, itemsize, dims, strides))
        sets.append(touched)
    common = sets[0] & sets[1]
    found = overlap(*spans)
    if not common:
        assert found is None
    else:
        assert found == (min(common), len(common))


def test_runs_merge_and_too_many_runs_count_as_the_whole_span():
    assert merged_runs(np.array([[8, 12], [0, 4], [4, 6], [10, 20]])).tolist() == [[0, 6], [8, 20]]
    assert span_of_runs(np.array([[0, 4], [4, 8]])).runs is None
    columns = strided_span(0, 4 * (MAX_RUNS + 1) * 2, 4, [MAX_RUNS + 1], [2])
    assert columns.runs is None and columns.hi == 4 * (MAX_RUNS + 1) * 2
