"""The insertion sort both CPU engines order a short run of candidates with (iMBEA's
candidates by key, ParMBE's slots by list length), moving companion arrays alike."""

from __future__ import annotations

from numba import literal_unroll, njit

from mbebench.jitcache import keyed


@keyed
@njit(cache=True, nogil=True, inline="always")
def _rotate(arr, j, i):
    """arr[j:i+1] one place up, arr[i] to j."""
    v = arr[i]
    for t in range(i, j, -1):
        arr[t] = arr[t - 1]
    arr[j] = v


@keyed
@njit(cache=True, nogil=True)
def insertion_sort(keys, lo, hi, payload):
    """Stable sort of keys[lo:hi] ascending; each array of the tuple ``payload`` (any
    dtypes) takes the same permutation.  Quadratic: for short runs only."""
    for i in range(lo + 1, hi):
        k = keys[i]
        j = i
        while j > lo and keys[j - 1] > k:
            j -= 1
        if j < i:
            for arr in literal_unroll(payload):
                _rotate(arr, j, i)
            _rotate(keys, j, i)
