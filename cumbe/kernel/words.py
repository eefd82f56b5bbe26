"""Bit words below a small L (the rounds build's warps; docs/gpu.md, "Dense cores", lead (9)).

Once the search enters a level whose L holds at most WORD_BITS vertices u_0..u_63 (a *root*),
every other-side vertex w adjacent to one of them gets a word B_w = {j : w ∈ N(u_j)}, built
once for the root's subtree.  Every L' below it is a subset of the root's L, a mask of its
positions, and the vertices containing L' (the maximality check's closure) are the w with
B_w ⊇ L'.  The words of two bits or more are kept heaviest first, so a check reads them in
chunks of 32 and stops at the first word lighter than L' (or once more than |R'| contain it):
a popcount and an AND a word, where the list-by-list check binary-searches neighbour lists.

The build (a warp): each u_j's list N(u_j), 32 entries a step and one list after another, goes
into an open-addressing hash of 2 sum |N(u_j)| slots (a compare-and-swap claims w's slot and
its lane writes the word; a later list's lane ORs its bit in: within one list a vertex is one
lane's), then a counting sort by weight places the words of two bits or more, heaviest first
(one list for all positions; one a position would read fewer words a check, docs/gpu.md).  It lives in the warp's own slice of the
``words`` buffer (:mod:`cumbe.words_area`), sized by sum |N(u_j)|: a root whose words do not
fit stays on the lists, so every memory cap stays exact.  A thief never inherits words: its
search builds its own at the first level below a small L."""

from __future__ import annotations

from types import SimpleNamespace

from numba import cuda

from cumbe.kernel.arena import base_at, ld, st
from cumbe.kernel.consts import I32, I64, MASK32, S_NONMAX, WARP
from cumbe.kernel.sync import SIM, ballot, warp_or, warp_sum
from mbebench import envvars

WORD_BITS = 64
# Tests only: roots at a smaller L in numba's CUDA simulator, so that small oracle graphs put
# roots below lists at every depth (tests/test_cumbe_words.py); ignored on a GPU.
WORDS_MAX_ENV = "MBEBENCH_TEST_WORDS_MAX"
WORDS_MAX = WORD_BITS
if envvars.get(WORDS_MAX_ENV) and envvars.simulating():
    WORDS_MAX = max(1, min(WORD_BITS, int(envvars.get(WORDS_MAX_ENV))))
NCNT = WORD_BITS + 2  # a counter a weight 0..64 (0 and 1 unused), and the heavy words' number
EMPTY = -1
HASH_MUL = 2654435761  # Knuth's multiplicative hash (ids are ranks: runs of neighbours)
# The simulator's tally of what ran (tests/test_cumbe_words.py): roots built, those of more
# than 32 vertices (words past their low half), roots that did not fit their slice, checks on
# words, and those that read more than one chunk of 32 words.  A GPU build never reads it
# (``if SIM`` is compiled out: the builds' machine code is the same without these lines).
SIM_STATS = {"roots": 0, "wide": 0, "unfit": 0, "checks": 0, "long": 0}


def _sim_note(what):
    SIM_STATS[what] += 1


def make_words(cfg, grp):
    """The bit-word steps for the switches ``cfg`` and the worker kind ``grp``."""
    dev, gsync = cfg.dev, grp.sync
    # a warp's in the words build (ballots and shuffles); block-wide tasks stay on the lists
    ON = cfg.words and cfg.rounds and cfg.rs and grp.size == WARP
    MAXK = WORDS_MAX

    @dev
    def slice_of(words, nwk, me):
        """(base, size) of worker ``me``'s slice; size 0 where the run has none."""
        if not ON or words.shape[0] <= 1:
            return I64(0), I32(0)
        per = words.shape[0] // nwk
        return I64(me) * per, I32(min(per, I64(0x7FFFFFFF)))

    @dev
    def bit32(j):
        """Bit j of a 32-bit word as an int32 (bit 31: the sign, which the simulator's
        numpy int32 will not take as 2**31)."""
        if j == 31:
            return I32(-2147483648)
        return I32(I32(1) << j)

    @dev
    def hash_slot(w, H):
        """w's first slot of H: its 32-bit multiplicative hash scaled to [0, H)."""
        return I32((((I64(w) * HASH_MUL) & MASK32) * I64(H)) >> 32)

    @dev
    def build_root(A, o, k, d, NV, offV, adjV, WD, wb, size, gl):
        """The words of the root whose L is the k local ids at A[o:o+k] (k <= 64), in the
        slice at ``WD[wb:wb+size]``; returns (heavy words, hash slots), or (-1, 0) when they
        do not fit (the subtree stays on the lists)."""
        if k > MAXK or size == 0:
            return I32(-1), I32(0)
        W = base_at(WD, wb)
        s = I64(0)
        e = I32(gl)
        while e < k:
            y = ld(NV, A[o + e])
            s += offV[y + 1] - offV[y]
            e = I32(e + WARP)
        s = I64(warp_sum(s))
        # at most half full (a slot a vertex of the union, at most s of them), whole warps
        h = (2 * s + 2 * WARP - 1) // WARP * WARP
        if d + NCNT + 3 * h + s + 1 > size:
            if SIM and gl == 0:
                _sim_note("unfit")
            return I32(-1), I32(0)
        if SIM and gl == 0:
            _sim_note("roots")
            if k > 32:
                _sim_note("wide")
        H = I32(h)
        oCNT = I32(d)
        oKEY = I32(d + NCNT)
        oLO = I32(oKEY + H)
        oHI = I32(oLO + H)
        oCW = I32(oHI + H)
        e = I32(gl)
        while e < k:
            st(W, A[o + e], e)  # the position of local id A[o+e]
            e = I32(e + WARP)
        t = I32(gl)
        while t < H:  # (a word is written whole by the lane that claims its slot)
            st(W, I32(oKEY + t), EMPTY)
            t = I32(t + WARP)
        t = I32(gl)
        while t < NCNT:
            st(W, I32(oCNT + t), 0)
            t = I32(t + WARP)
        gsync()
        # one list a step of the warp, so that a vertex's slot is a single lane's (a list
        # holds it once): the lane that claims it writes its word, a later one ORs its bit in
        e = I32(0)
        while e < k:
            y = ld(NV, A[o + e])
            lo = offV[y]
            n = I32(offV[y + 1] - lo)
            blo = bit32(e) if e < 32 else I32(0)
            bhi = bit32(e - 32) if e >= 32 else I32(0)
            t = I32(gl)
            while t < n:
                w = adjV[lo + t]
                p = hash_slot(w, H)
                while True:
                    old = cuda.atomic.cas(WD, wb + oKEY + p, EMPTY, w)
                    if old == EMPTY:
                        st(W, I32(oLO + p), blo)
                        st(W, I32(oHI + p), bhi)
                        break
                    if old == w:
                        st(W, I32(oLO + p), ld(W, I32(oLO + p)) | blo)
                        st(W, I32(oHI + p), ld(W, I32(oHI + p)) | bhi)
                        break
                    p = I32(p + 1)
                    if p == H:
                        p = I32(0)
                t = I32(t + WARP)
            gsync()
            e = I32(e + 1)
        # counting sort by weight, heaviest first; one-bit words are never read (the closure
        # of one vertex is its list)
        t = I32(gl)
        while t < H:
            if ld(W, I32(oKEY + t)) != EMPTY:
                c = cuda.popc(ld(W, I32(oLO + t))) + cuda.popc(ld(W, I32(oHI + t)))
                if c >= 2:
                    cuda.atomic.add(WD, wb + oCNT + c, 1)
            t = I32(t + WARP)
        gsync()
        if gl == 0:
            acc = I32(0)
            c = I32(WORD_BITS)
            while c >= 2:
                n = ld(W, I32(oCNT + c))
                st(W, I32(oCNT + c), acc)
                acc = I32(acc + n)
                c = I32(c - 1)
            st(W, I32(oCNT + WORD_BITS + 1), acc)
        gsync()
        t = I32(gl)
        while t < H:
            if ld(W, I32(oKEY + t)) != EMPTY:
                wlo = ld(W, I32(oLO + t))
                whi = ld(W, I32(oHI + t))
                c = cuda.popc(wlo) + cuda.popc(whi)
                if c >= 2:
                    q = I32(cuda.atomic.add(WD, wb + oCNT + c, 1))
                    st(W, I32(oCW + 2 * q), wlo)
                    st(W, I32(oCW + 2 * q + 1), whi)
            t = I32(t + WARP)
        gsync()
        return ld(W, I32(oCNT + WORD_BITS + 1)), H

    @dev
    def check_words(A, o, kl, target, NV, offV, WD, wb, d, n2, H, sh, g, gl):
        """The maximality check of L' (the kl local ids at A[o:o+kl], a subset of the root's
        L) on the root's words: non-maximal iff more than |R'| (``target``) vertices contain
        it.  Sets S_NONMAX."""
        if SIM and gl == 0:
            _sim_note("checks")
        if kl == 1:  # the vertices containing one vertex: its list
            y = ld(NV, A[o])
            if gl == 0 and offV[y + 1] - offV[y] > target:
                sh[g, S_NONMAX] = 1
            return
        W = base_at(WD, wb)
        m = I64(0)
        e = I32(gl)
        while e < kl:
            m |= I64(1) << ld(W, A[o + e])
            e = I32(e + WARP)
        m = warp_or(m)
        oCW = I32(d + NCNT + 3 * H)
        cnt = I32(0)
        c0 = I32(0)
        while c0 < n2:
            if SIM and gl == 0 and c0 == WARP:
                _sim_note("long")
            i = I32(c0 + gl)
            hit = False
            light = False
            if i < n2:
                b = (I64(ld(W, I32(oCW + 2 * i + 1))) << 32) | (
                    I64(ld(W, I32(oCW + 2 * i))) & MASK32)
                light = cuda.popc(b) < kl
                hit = (b & m) == m
            cnt = I32(cnt + cuda.popc(I64(ballot(hit)) & MASK32))
            if cnt > target:
                if gl == 0:
                    sh[g, S_NONMAX] = 1
                break
            if ballot(light) != 0:
                break
            c0 = I32(c0 + WARP)
        gsync()

    return SimpleNamespace(on=ON, slice_of=slice_of, build_root=build_root,
                           check_words=check_words, maxk=MAXK)
