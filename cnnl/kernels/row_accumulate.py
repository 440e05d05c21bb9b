"""Gradient rows summed into table rows in one compiled pass (the embedding backward of `indexing`): each thread owns
a range of table rows and walks every gradient row in order, so each table row gets its sum in index order (the
same bits on any number of threads) and no two threads write one row."""
from numba import njit


@njit(nogil=True, cache=True)
def accumulate_rows(rows, grads, skip, counts, scale, result, first, stop):
    """result[first:stop] = 0, then result[rows[i]] += grads[i] (divided by counts[rows[i]] when `scale`) for every
    i in order whose row lies in [first, stop) and is not `skip`. grads (len(rows), width) and result are
    C-contiguous, of one float dtype; counts (of that dtype) is read only when `scale`."""
    result[first:stop] = 0
    width = grads.shape[1]
    for i in range(rows.size):
        row = rows[i]
        if row < first or row >= stop or row == skip:
            continue
        if scale:
            count = counts[row]
            for j in range(width):
                result[row, j] += grads[i, j] / count
        else:
            for j in range(width):
                result[row, j] += grads[i, j]
