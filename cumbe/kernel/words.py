"""Bit words below a small L (the rounds build's warps; docs/dense-cores.md, lead (9)).

At the first level of a path (below the task's) whose L holds at most WORD_BITS vertices
u_0..u_63 and enough candidates (a *root*; :func:`cumbe.words_area.min_candidates`),
every other-side vertex w adjacent to one of them gets a word B_w = {j : w ∈ N(u_j)}, built
once for the root's subtree.  Every L' below it is a subset of the root's L, a mask of its
positions, and the vertices containing L' (the maximality check's closure) are the w with
B_w ⊇ L'.  The words of two bits or more are kept heaviest first, so a check reads them in
chunks of 32 and stops at the first word lighter than L' (or once more than |R'| contain it):
a popcount and an AND a word, where the list-by-list check binary-searches neighbour lists.

The build (a warp): each u_j's list N(u_j), 128 entries a step and one list after another, goes
into an open-addressing hash of 2 sum |N(u_j)| slots (a compare-and-swap claims w's slot and
its lane writes the word; a later list's lane ORs its bit in: within one list a vertex is one
lane's), then a counting sort by weight places the words of two
bits or more, heaviest first (each weight's lanes in a chunk found by ``match.any`` and counted
by their lowest lane; the places by a warp scan; one list for all positions, where one a
position would read fewer words a check, docs/dense-cores.md).  It lives in the warp's own
slice of the ``words`` buffer (:mod:`cumbe.words_area`), sized by sum |N(u_j)|: a root whose
words do not fit stays on the lists, so every memory cap stays exact.  A thief never inherits
words: its search builds its own at the first level below a small L."""

from __future__ import annotations

from types import SimpleNamespace

from numba import cuda

from cumbe.kernel.arena import base_at, ld, st
from cumbe.kernel.consts import I32, I64, MASK32, S_NONMAX, WARP
from cumbe.kernel.sync import SIM, ballot, match_any, shfl_idx, warp_or, warp_scan, warp_sum
from mbebench import envvars

WORD_BITS = 64
# Tests only: roots at a smaller L in numba's CUDA simulator, so that small oracle graphs put
# roots below lists at every depth (tests/test_cumbe_words.py); ignored on a GPU.
WORDS_MAX_ENV = "MBEBENCH_TEST_WORDS_MAX"
WORDS_MAX = WORD_BITS
if envvars.get(WORDS_MAX_ENV) and envvars.simulating():
    WORDS_MAX = max(1, min(WORD_BITS, int(envvars.get(WORDS_MAX_ENV))))
NCNT = WORD_BITS + 2  # a counter a weight 0..64 (0 and 1 unused), and a spare word
EMPTY = -1
HASH_MUL = 2654435761  # Knuth's multiplicative hash (ids are ranks: runs of neighbours)
# The simulator's tally of what ran (tests/test_cumbe_words.py): roots built, those of more
# than 32 vertices (words past their low half), roots that did not fit their slice, checks on
# words, those that read more than one chunk of 32 words, and checks on the lists below a
# level whose L was small enough for words (a root that should have been and was not).  A GPU
# build never reads it (``if SIM`` is compiled out: the builds' machine code is the same
# without these lines).
SIM_STATS = {"roots": 0, "wide": 0, "unfit": 0, "checks": 0, "long": 0, "missed": 0}


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
    def settle(WD, W, wb, oKEY, oLO, oHI, H, w, p, old, blo, bhi):
        """w's entry after its first compare-and-swap, at slot p, returned ``old``: its word
        written whole where it claimed the slot, its bit ORed in where w already had one,
        else the next slots probed."""
        while True:
            if old == EMPTY:
                st(W, I32(oLO + p), blo)
                st(W, I32(oHI + p), bhi)
                return
            if old == w:
                st(W, I32(oLO + p), ld(W, I32(oLO + p)) | blo)
                st(W, I32(oHI + p), ld(W, I32(oHI + p)) | bhi)
                return
            p = I32(p + 1)
            if p == H:
                p = I32(0)
            old = cuda.atomic.cas(WD, wb + oKEY + p, EMPTY, w)

    @dev
    def heavy_word(W, oKEY, oLO, oHI, t):
        """Slot t of the hash: its word's halves, its weight (0 for an empty slot or a word
        of fewer than two bits: no check reads those) and the warp's lanes of that weight."""
        wlo = I32(0)
        whi = I32(0)
        c = I32(0)
        if ld(W, I32(oKEY + t)) != EMPTY:
            wlo = ld(W, I32(oLO + t))
            whi = ld(W, I32(oHI + t))
            c = I32(cuda.popc(wlo) + cuda.popc(whi))
        if c < 2:
            c = I32(0)
        return wlo, whi, c, match_any(c)

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
        # holds it once): the lane that claims it writes its word, a later one ORs its bit in.
        # Four entries a lane a step: their compare-and-swaps go out together (each waits for
        # L2 alone otherwise).
        e = I32(0)
        while e < k:
            y = ld(NV, A[o + e])
            lo = offV[y]
            n = I32(offV[y + 1] - lo)
            blo = bit32(e) if e < 32 else I32(0)
            bhi = bit32(e - 32) if e >= 32 else I32(0)
            t = I32(gl)
            while t < n:
                w0 = I32(adjV[lo + t])
                w1 = I32(adjV[lo + t + WARP]) if t + WARP < n else I32(EMPTY)
                w2 = I32(adjV[lo + t + 2 * WARP]) if t + 2 * WARP < n else I32(EMPTY)
                w3 = I32(adjV[lo + t + 3 * WARP]) if t + 3 * WARP < n else I32(EMPTY)
                p0 = hash_slot(w0, H)
                p1 = hash_slot(w1, H)
                p2 = hash_slot(w2, H)
                p3 = hash_slot(w3, H)
                o0 = cuda.atomic.cas(WD, wb + oKEY + p0, EMPTY, w0)
                o1 = I32(EMPTY)
                o2 = I32(EMPTY)
                o3 = I32(EMPTY)
                if w1 != EMPTY:
                    o1 = cuda.atomic.cas(WD, wb + oKEY + p1, EMPTY, w1)
                if w2 != EMPTY:
                    o2 = cuda.atomic.cas(WD, wb + oKEY + p2, EMPTY, w2)
                if w3 != EMPTY:
                    o3 = cuda.atomic.cas(WD, wb + oKEY + p3, EMPTY, w3)
                settle(WD, W, wb, oKEY, oLO, oHI, H, w0, p0, o0, blo, bhi)
                if w1 != EMPTY:
                    settle(WD, W, wb, oKEY, oLO, oHI, H, w1, p1, o1, blo, bhi)
                if w2 != EMPTY:
                    settle(WD, W, wb, oKEY, oLO, oHI, H, w2, p2, o2, blo, bhi)
                if w3 != EMPTY:
                    settle(WD, W, wb, oKEY, oLO, oHI, H, w3, p3, o3, blo, bhi)
                t = I32(t + 4 * WARP)
            gsync()
            e = I32(e + 1)
        # counting sort by weight, heaviest first; one-bit words are never read (the closure
        # of one vertex is its list).  The lanes of one weight add to its counter through
        # their lowest lane (a warp's own slice: no atomics).
        lt = (I64(1) << gl) - 1  # the lanes below this one
        t0 = I32(0)
        while t0 < H:
            wlo, whi, c, peers = heavy_word(W, oKEY, oLO, oHI, I32(t0 + gl))
            if c >= 2 and (peers & lt) == 0:
                st(W, I32(oCNT + c), ld(W, I32(oCNT + c)) + I32(cuda.popc(peers)))
            gsync()
            t0 = I32(t0 + WARP)
        # each weight's first place, heaviest first: a lane holds weights 64 - gl and 32 - gl
        a = I64(ld(W, I32(oCNT + WORD_BITS - gl)))
        b = I64(0)
        if gl <= WARP - 2:
            b = I64(ld(W, I32(oCNT + WARP - gl)))
        ia = warp_scan(a, gl)
        ib = warp_scan(b, gl)
        ta = shfl_idx(ia, WARP - 1)
        tb = shfl_idx(ib, WARP - 1)
        gsync()
        st(W, I32(oCNT + WORD_BITS - gl), I32(ia - a))
        if gl <= WARP - 2:
            st(W, I32(oCNT + WARP - gl), I32(ta + ib - b))
        gsync()
        t0 = I32(0)
        while t0 < H:
            wlo, whi, c, peers = heavy_word(W, oKEY, oLO, oHI, I32(t0 + gl))
            first = I32(cuda.popc((peers & -peers) - 1))  # the lowest lane of this weight
            q0 = I32(0)
            if c >= 2 and (peers & lt) == 0:
                q0 = ld(W, I32(oCNT + c))
                st(W, I32(oCNT + c), q0 + I32(cuda.popc(peers)))
            q0 = I32(shfl_idx(q0, first))
            if c >= 2:
                q = I32(q0 + cuda.popc(peers & lt))
                st(W, I32(oCW + 2 * q), wlo)
                st(W, I32(oCW + 2 * q + 1), whi)
            gsync()
            t0 = I32(t0 + WARP)
        return I32(ta + tb), H

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
                           check_words=check_words, maxk=MAXK, sim_note=_sim_note)
