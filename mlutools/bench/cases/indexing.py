"""Cases of indexing (docs/cnnl_indexing.md): index select, gather, scatter, embedding, masked ops, index put, num true,
where, advanced index, index add/fill, NMS. Indices int32, masks bool."""
from __future__ import annotations

import numpy as np

import cnnl

from .base import Case, DEVICE, f32, index_tensor, scalar_pointer


def masked_scatter(arena, shape, dtype):
    (x, xv), (source, sv) = arena.random(shape, dtype), arena.random(shape, dtype)
    mask, mv = arena.random(shape, "bool")
    out = arena.empty(shape, dtype)
    op = cnnl.CNNL_MASKED_SCATTER
    workspace, size = arena.workspace(cnnl.getMaskedWorkspaceSize(arena.handle, op, x.desc, mask.desc, source.desc,
                                                                  out.desc))
    result = np.empty_like(xv)

    def reference():
        np.copyto(result, xv)
        result[mv] = sv.reshape(-1)[:int(mv.sum())]
    return (lambda: cnnl.masked_v4(arena.handle, op, x.desc, x.ptr, mask.desc, mask.ptr, source.desc, source.ptr,
                                   None, workspace, size, out.desc, out.ptr, None),
            reference)


def advanced_index(arena, shape, dtype):
    """x[rows] with an int32 index of every row, shuffled."""
    x, xv = arena.random(shape, dtype)
    rows = arena.rng.permutation(shape[0]).astype(np.int32)
    index = arena.upload(rows, "int32")
    out = arena.empty(shape, dtype)
    workspace, size = arena.workspace(cnnl.getAdvancedIndexWorkspaceSize(arena.handle, x.desc, [index.desc]))
    return (lambda: cnnl.advancedIndex(arena.handle, x.desc, x.ptr, [index.desc], [index.ptr], workspace, size,
                                       out.desc, out.ptr, None, None),
            lambda: xv[rows])


def index_add(arena, shape, dtype):
    """Add half the rows of a source at shuffled rows."""
    x, xv = arena.random(shape, dtype)
    source, sv = arena.random((shape[0] // 2, shape[1]), dtype)
    rows = arena.rng.permutation(shape[0])[:shape[0] // 2].astype(np.int32)
    index, out = arena.upload(rows, "int32"), arena.empty(shape, dtype)
    x32, s32 = f32(xv), f32(sv)

    def reference():
        result = x32.copy()
        np.add.at(result, rows, s32)
        return result
    return (lambda: cnnl.indexAdd(arena.handle, 0, x.desc, x.ptr, index.desc, index.ptr, source.desc, source.ptr,
                                  out.desc, out.ptr),
            reference)


def index_fill(v2: bool):
    def build(arena, shape, dtype):
        x, xv = arena.random(shape, dtype)
        rows = arena.rng.permutation(shape[0])[:shape[0] // 2].astype(np.int32)
        index, out = arena.upload(rows, "int32"), arena.empty(shape, dtype)

        def reference():
            result = xv.copy()
            result[rows] = 1.5
            return result
        if v2:
            value = scalar_pointer(arena, 1.5, dtype)
            call = lambda: cnnl.indexFill_v2(arena.handle, 0, DEVICE, value, x.desc, x.ptr, index.desc,  # noqa
                                             index.ptr, out.desc, out.ptr)
        else:
            call = lambda: cnnl.indexFill(arena.handle, 0, 1.5, x.desc, x.ptr, index.desc, index.ptr, out.desc,  # noqa
                                          out.ptr)
        return call, reference
    return build


#: (tokens, vocabulary, width) of the embedding: a 64K, 1M, 16M element output
EMBEDDING = {"small": (1024, 4096, 64), "medium": (16384, 32768, 64), "large": (262144, 65536, 64)}


def index_select(arena, shape, dtype):
    """y = x[index] over rows, index a permutation of the rows."""
    (x, values), y = arena.random(shape, dtype), arena.empty(shape, dtype)
    index, iv = index_tensor(arena, arena.rng.permutation(shape[0]))
    out = np.empty_like(values)
    return (lambda: cnnl.indexSelect(arena.handle, 0, x.desc, x.ptr, index.desc, index.ptr, y.desc, y.ptr),
            lambda: np.take(values, iv, axis=0, out=out))


def _row_permutations(arena, shape) -> np.ndarray:
    """Every row a permutation of the column numbers."""
    return arena.rng.permuted(np.broadcast_to(np.arange(shape[1]), shape), axis=1)


def gather(arena, shape, dtype):
    """y[i, j] = x[i, index[i, j]]."""
    (x, values), y = arena.random(shape, dtype), arena.empty(shape, dtype)
    index, iv = index_tensor(arena, _row_permutations(arena, shape))
    return (lambda: cnnl.gather(arena.handle, 1, x.desc, x.ptr, index.desc, index.ptr, y.desc, y.ptr),
            lambda: np.take_along_axis(values, iv, axis=1))


def scatter(arena, shape, dtype):
    """out = x with out[i, index[i, j]] = src[i, j] (no duplicate targets)."""
    (x, values), (src, sv), out = arena.random(shape, dtype), arena.random(shape, dtype), arena.empty(shape, dtype)
    index, iv = index_tensor(arena, _row_permutations(arena, shape))
    host = np.empty_like(values)

    def reference():
        np.copyto(host, values)
        np.put_along_axis(host, iv, sv, axis=1)
    return (lambda: cnnl.scatter(arena.handle, 1, x.desc, x.ptr, index.desc, index.ptr, src.desc, src.ptr, out.desc,
                                 out.ptr, cnnl.CNNL_SCATTER),
            reference)


def embedding(arena, shape, dtype):
    """y = table[indices] for `tokens` random indices."""
    tokens, vocabulary, width = shape
    (table, tv), y = arena.random((vocabulary, width), dtype), arena.empty((tokens, width), dtype)
    indices, iv = index_tensor(arena, arena.rng.integers(0, vocabulary, tokens))
    out = np.empty((tokens, width), tv.dtype)
    return (lambda: cnnl.embeddingForward_v2(arena.handle, table.desc, table.ptr, indices.desc, indices.ptr, -1, None,
                                             None, y.desc, y.ptr),
            lambda: np.take(tv, iv, axis=0, out=out))


def embedding_backward(arena, shape, dtype):
    """The table gradient: the rows of diff added at their indices."""
    tokens, vocabulary, width = shape
    (diff, dv), grad = arena.random((tokens, width), dtype), arena.empty((vocabulary, width), dtype)
    indices, iv = index_tensor(arena, arena.rng.integers(0, vocabulary, tokens))
    workspace, size = arena.workspace(cnnl.getEmbeddingBackwardWorkspaceSize(arena.handle, diff.desc, grad.desc,
                                                                             False))
    out = np.empty((vocabulary, width), dv.dtype)

    def reference():
        out.fill(0)
        np.add.at(out, iv, dv)
    return (lambda: cnnl.embeddingBackward(arena.handle, -1, False, indices.desc, indices.ptr, diff.desc, diff.ptr,
                                           workspace, size, grad.desc, grad.ptr),
            reference)


def masked_fill(arena, shape, dtype):
    """out = where(mask, value, x)."""
    (x, values), (mask, mv), out = arena.random(shape, dtype), arena.random(shape, "bool"), arena.empty(shape, dtype)
    fill_value = np.array([-1.0], values.dtype)
    value = arena.upload(fill_value, dtype)
    op = cnnl.CNNL_MASKED_FILL
    workspace, size = arena.workspace(cnnl.getMaskedWorkspaceSize(arena.handle, op, x.desc, mask.desc, value.desc,
                                                                  out.desc))
    return (lambda: cnnl.masked_v3(arena.handle, op, x.desc, x.ptr, mask.desc, mask.ptr, value.desc, value.ptr,
                                   workspace, size, out.desc, out.ptr, None),
            lambda: np.where(mv, fill_value, values))


def index_put(arena, shape, dtype):
    """out = x with half of the rows (distinct, random) replaced by rows of value."""
    rows = shape[0] // 2
    (x, values), (value, vv) = arena.random(shape, dtype), arena.random((rows,) + tuple(shape[1:]), dtype)
    out = arena.empty(shape, dtype)
    index, iv = index_tensor(arena, arena.rng.permutation(shape[0])[:rows])
    workspace, size = arena.workspace(cnnl.getIndexPutWorkspaceSize(arena.handle, x.desc, [index.desc], value.desc,
                                                                    False))
    host = np.empty_like(values)

    def reference():
        np.copyto(host, values)
        host[iv] = vv
    return (lambda: cnnl.indexPut(arena.handle, x.desc, x.ptr, [index.desc], [index.ptr], value.desc, value.ptr,
                                  workspace, size, False, False, out.desc, out.ptr),
            reference)


def _half_zero(arena, shape, dtype):
    """A device tensor whose values are zero in about half the places, and its host copy."""
    values = arena.host(shape, dtype)
    values[values < 0] = 0
    return arena.upload(values, dtype), values


def num_true(arena, shape, dtype):
    (x, values), count = _half_zero(arena, shape, dtype), arena.empty((1,), "int32")
    return (lambda: cnnl.numTrue_v2(arena.handle, x.desc, x.ptr, count.desc, count.ptr),
            lambda: np.count_nonzero(values))


def where_nonzero(arena, shape, dtype):
    """The (row, column) of every nonzero, given their number."""
    (x, values) = _half_zero(arena, shape, dtype)
    count, _ = index_tensor(arena, np.array([np.count_nonzero(values)]))
    y = arena.empty((int(np.count_nonzero(values)), len(shape)), "int32")
    workspace, size = arena.workspace(cnnl.getWhereWorkspaceSize(arena.handle, count.desc))
    return (lambda: cnnl.where_v2(arena.handle, x.desc, x.ptr, count.desc, count.ptr, False, workspace, size, y.desc,
                                  y.ptr),
            lambda: np.argwhere(values))


#: boxes of NMS
BOXES = {"small": (500,), "medium": (2000,)}


def _numpy_nms(boxes, scores, threshold):
    order = np.argsort(-scores, kind="stable")
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    keep = []
    while order.size:
        i, rest = order[0], order[1:]
        keep.append(i)
        w = np.maximum(np.minimum(boxes[i, 2], boxes[rest, 2]) - np.maximum(boxes[i, 0], boxes[rest, 0]), 0)
        h = np.maximum(np.minimum(boxes[i, 3], boxes[rest, 3]) - np.maximum(boxes[i, 1], boxes[rest, 1]), 0)
        inter = w * h
        order = rest[inter / (area[i] + area[rest] - inter) < threshold]
    return keep


def nms(arena, shape, dtype):
    """cnnlNms_v2 (hard NMS, IoU 0.5, indices) against the numpy greedy loop."""
    count = shape[0]
    corner = arena.rng.uniform(0, 100, (count, 2)).astype(np.float32)
    boxes_host = np.concatenate([corner, corner + arena.rng.uniform(5, 30, (count, 2))], 1).astype(
        arena.numpy_dtype(dtype))
    boxes = arena.upload(boxes_host, dtype)
    (scores, sv) = arena.random((count,), dtype, positive=True)
    out, size_t = arena.empty((count,), "int32"), arena.empty((1,), "int32")
    desc = cnnl.createNmsDescriptor()
    cnnl.setNmsDescriptor_v5(desc, cnnl.CNNL_NMS_BOX_DIAGONAL, cnnl.CNNL_NMS_OUTPUT_TARGET_INDICES,
                             cnnl.CNNL_NMS_ALGO_EXCLUDE_BOUNDARY, cnnl.CNNL_NMS_HARD_NMS, 0.5, 0.0, count, 0.0, 0.0, 0,
                             False)
    workspace, size = arena.workspace(cnnl.getNmsWorkspaceSize_v3(arena.handle, boxes.desc, scores.desc))
    b, s = f32(boxes_host), f32(sv)
    return (lambda: cnnl.nms_v2(arena.handle, desc, boxes.desc, boxes.ptr, scores.desc, scores.ptr, workspace, size,
                                out.desc, out.ptr, size_t.ptr),
            lambda: _numpy_nms(b, s, 0.5))


#: the cases of this family, in the order the table lists them
CASES = (
    Case("index select", "cnnlIndexSelect", index_select),
    Case("gather", "cnnlGather", gather),
    Case("scatter", "cnnlScatter", scatter),
    Case("embedding", "cnnlEmbeddingForward_v2", embedding, shapes=EMBEDDING),
    Case("embedding bwd", "cnnlEmbeddingBackward", embedding_backward, shapes=EMBEDDING,
             reference="np.add.at"),
    Case("masked fill", "cnnlMasked_v3", masked_fill),
    Case("index put", "cnnlIndexPut", index_put),
    Case("num true", "cnnlNumTrue_v2", num_true, reference="np.count_nonzero"),
    Case("where nonzero", "cnnlWhere_v2", where_nonzero, reference="np.argwhere"),
    Case("masked scatter", "cnnlMasked_v4", masked_scatter),
    Case("advanced index", "cnnlAdvancedIndex", advanced_index),
    Case("index add", "cnnlIndexAdd", index_add, reference="np.add.at"),
    Case("index fill", "cnnlIndexFill", index_fill(v2=False)),
    Case("index fill v2", "cnnlIndexFill_v2", index_fill(v2=True)),
    Case("nms", "cnnlNms_v2", nms, shapes=BOXES, reference="numpy greedy NMS"),
)
