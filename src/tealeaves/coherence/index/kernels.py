"""The numba kernels of the reference index (`index`), pure functions over flat arrays: the
postings' delta + varint code (`encode`, `decode`, `sound`), the vocabulary's order
(`unsorted`), a build's placing of a chunk's
positions (`scatter`), and every counting rule answered from words' sorted global positions.

A word's occurrence at position p of a document of n tokens makes it present in the window starts
[p - w + 1, p], clipped to the n - w + 1 starts (`intervals`); gensim's flags are simulated from
the same positions (`intervals`, gensim=True: set when a copy enters, unset when any copy
leaves); the pair counts are the lengths of the overlaps of two words' presence intervals
(`sweep_merged`, every pair; `pairs`, only the pairs asked for, skipping through the longer of two
words' intervals); Palmetto's context windows pair occurrences at most w apart (`context`).
Imports nothing of tealeaves.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# ---------------------------------------------------------------- varint postings

@njit(cache=True)
def encode(pos, starts, out):
    """Delta + varint code of each word's positions pos[starts[g]:starts[g+1]] into `out`; returns
    the byte offset each word ends at."""
    ends = np.empty(starts.shape[0] - 1, np.int64)
    o = 0
    for g in range(starts.shape[0] - 1):
        prev = 0
        for i in range(starts[g], starts[g + 1]):
            v = pos[i] - prev
            prev = pos[i]
            while v >= 128:
                out[o] = (v & 127) | 128
                v >>= 7
                o += 1
            out[o] = v
            o += 1
        ends[g] = o
    return ends


@njit(cache=True)
def decode(buf, count, limit):
    """The `count` positions coded in `buf`, and whether the code is sound: every byte used,
    positions strictly increasing and below `limit`."""
    out = np.empty(count, np.int64)
    o = 0
    prev = 0
    i = 0
    n = buf.shape[0]
    while o < count:
        v = 0
        shift = 0
        while True:
            if i >= n or shift > 56:
                return out, False
            b = buf[i]
            i += 1
            v |= np.int64(b & 127) << shift
            shift += 7
            if b < 128:
                break
        if o > 0 and v == 0:
            return out, False
        prev += v
        if prev >= limit:
            return out, False
        out[o] = prev
        o += 1
    return out, i == n


@njit(cache=True)
def sound(buf, offsets, counts, limit):
    """The first word whose postings are unsound (`decode`), or whose positions another word
    also holds (every position must belong to exactly one word), else -1."""
    seen = np.zeros(limit // 8 + 1, np.uint8)
    for g in range(counts.shape[0]):
        pos, ok = decode(buf[offsets[g] : offsets[g + 1]], counts[g], limit)
        if not ok:
            return g
        for p in pos:
            bit = np.uint8(1 << (p & 7))
            if seen[p >> 3] & bit:
                return g
            seen[p >> 3] |= bit
    return -1


@njit(cache=True)
def unsorted(vocab, offsets):
    """Whether the words vocab[offsets[g]:offsets[g+1]] are in strictly increasing byte order and
    each starts on a UTF-8 character: (the first word g that is not, kind), kind 1 if word g is not
    after word g - 1, 2 if it starts on a continuation byte (10xxxxxx); (-1, 0) if all are."""
    V = offsets.shape[0] - 1
    for g in range(V):
        a = offsets[g]
        if a < offsets[g + 1] and vocab[a] & 0xC0 == 0x80:
            return g, 2
        if g == 0:
            continue
        p = offsets[g - 1]
        n_prev = a - p
        n = offsets[g + 1] - a
        i = 0
        while i < n_prev and i < n and vocab[p + i] == vocab[a + i]:
            i += 1
        if i == n or (i < n_prev and vocab[p + i] > vocab[a + i]):  # a prefix of, or before, the previous
            return g, 1
    return -1, 0


@njit(cache=True)
def miscounted(counts, offsets):
    """The first word whose count is not 1 .. its postings' bytes offsets[g+1] - offsets[g], or
    whose postings are longer than 10 bytes a position (the longest code of an int64), else -1."""
    for g in range(counts.shape[0]):
        c = counts[g]
        span = offsets[g + 1] - offsets[g]
        if c == 0 or c > span or span > np.uint64(10) * c:
            return g
    return -1


# ---------------------------------------------------------------- counting from positions

@njit(cache=True)
def _doc_of(p, d, starts):
    """The document of global position p, at or after document d (galloping search)."""
    if starts[d + 1] > p:
        return d
    step = 1
    lo = d + 1
    hi = lo + step
    D = starts.shape[0] - 1
    while hi < D and starts[hi] <= p:  # starts[lo] <= p < starts[hi]
        lo = hi
        step *= 2
        hi = lo + step
    hi = min(hi, D)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if starts[mid] <= p:
            lo = mid
        else:
            hi = mid
    return lo


@njit(cache=True)
def docs_of(pos, starts):
    """The document of each of a word's occurrences `pos` (global, sorted)."""
    out = np.empty(pos.shape[0], np.int64)
    d = 0
    for i in range(pos.shape[0]):
        d = _doc_of(pos[i], d, starts)
        out[i] = d
    return out


@njit(cache=True)
def intervals(pos, docs, starts, lengths, window, gensim, a_out, b_out):
    """The window starts (global: document start + local start) in which one word is present, as
    disjoint intervals [a, b); its occurrences `pos` (global, sorted; documents begin at
    `starts`) and their documents `docs`. window 0: whole documents. `gensim`: gensim's flags (a
    word is unset when any copy leaves); otherwise present if any copy is inside. Returns the
    number of intervals written."""
    m = 0
    i = 0
    r = pos.shape[0]
    while i < r:
        d = docs[i]
        j = i
        while j < r and docs[j] == d:
            j += 1
        n = lengths[d]
        base = starts[d]
        w = n if window == 0 or n <= window else window
        last = n - w  # the last window start
        if not gensim:
            ca = -1
            cb = -1
            for t in range(i, j):
                p = pos[t] - base
                a = max(0, p - w + 1)
                b = min(p, last) + 1
                if ca >= 0 and a <= cb:
                    cb = max(cb, b)
                else:
                    if ca >= 0:
                        a_out[m] = base + ca
                        b_out[m] = base + cb
                        m += 1
                    ca = a
                    cb = b
            a_out[m] = base + ca
            b_out[m] = base + cb
            m += 1
        else:
            # enter at step max(0, p - w + 1), leave at step p + 1 (if <= last); leave first on a tie
            e = i
            lv = i
            flag = False
            start = 0
            while e < j or lv < j:
                lp = pos[lv] - base + 1 if lv < j else -1
                if lv < j and lp > last:
                    lv = j  # later copies never leave either
                    continue
                ep = max(0, pos[e] - base - w + 1) if e < j else -1
                if lv < j and (e >= j or lp <= ep):
                    if flag:
                        a_out[m] = base + start
                        b_out[m] = base + lp
                        m += 1
                        flag = False
                    lv += 1
                else:
                    if not flag:
                        flag = True
                        start = ep
                    e += 1
            if flag:
                a_out[m] = base + start
                b_out[m] = base + last + 1
                m += 1
        i = j
    return m


@njit(cache=True)
def _key(a, b, off, fill, s, K):
    """The next event's sort key of stream s (s < K: the leaves of word s; else the enters of word
    s - K): 2 x time (+1 for an enter, so that leaves come first at one time); -1 when done."""
    k = s if s < K else s - K
    i = off[k] + fill[s]
    if i >= off[k + 1]:
        return -1
    return b[i] * 2 if s < K else a[i] * 2 + 1


@njit(cache=True)
def sweep_merged(a, b, off, K, single, joint):
    """Each word's presence length into `single`, each pair's overlap into the upper triangle of
    `joint`, from every word's intervals a[off[k]:off[k+1]], b[...] (each word's sorted), their
    events taken in time order from a heap of the 2K streams (no sort of all events)."""
    fill = np.zeros(2 * K, np.int64)
    heap_key = np.empty(2 * K, np.int64)
    heap_s = np.empty(2 * K, np.int64)
    n = 0
    for s in range(2 * K):
        key = _key(a, b, off, fill, s, K)
        if key >= 0:
            i = n
            n += 1
            while i > 0 and heap_key[(i - 1) // 2] > key:
                heap_key[i] = heap_key[(i - 1) // 2]
                heap_s[i] = heap_s[(i - 1) // 2]
                i = (i - 1) // 2
            heap_key[i] = key
            heap_s[i] = s
    entered = np.zeros(K, np.int64)
    present = np.empty(K, np.int64)
    where = np.empty(K, np.int64)
    m = 0
    while n > 0:
        key = heap_key[0]
        s = heap_s[0]
        t = key // 2
        if s >= K:
            k = s - K
            entered[k] = t
            where[k] = m
            present[m] = k
            m += 1
        else:
            k = s
            single[k] += t - entered[k]
            last = present[m - 1]
            present[where[k]] = last
            where[last] = where[k]
            m -= 1
            for x in range(m):
                j = present[x]
                v = t - max(entered[k], entered[j])
                if k < j:
                    joint[k, j] += v
                else:
                    joint[j, k] += v
        fill[s] += 1
        key = _key(a, b, off, fill, s, K)
        if key < 0:  # the stream is done: the last entry takes the root
            n -= 1
            key = heap_key[n]
            s = heap_s[n]
        i = 0  # sift down
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            if c + 1 < n and heap_key[c + 1] < heap_key[c]:
                c += 1
            if heap_key[c] >= key:
                break
            heap_key[i] = heap_key[c]
            heap_s[i] = heap_s[c]
            i = c
        if n > 0:
            heap_key[i] = key
            heap_s[i] = s


@njit(cache=True)
def _first_end_after(b, lo, hi, t):
    """The first i in [lo, hi) with b[i] > t (galloping from lo; b sorted), or hi."""
    step = 1
    while lo + step < hi and b[lo + step - 1] <= t:
        lo += step
        step *= 2
    hi = min(hi, lo + step)
    while lo < hi:
        mid = (lo + hi) // 2
        if b[mid] <= t:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True)
def overlap(a, b, s0, s1, l0, l1):
    """The total length of the overlaps of two words' disjoint sorted intervals a[s0:s1], b[...]
    (the shorter list) and a[l0:l1] (the longer), skipping ahead in the longer list."""
    total = 0
    j = l0
    for i in range(s0, s1):
        j = _first_end_after(b, j, l1, a[i])  # the longer's first interval ending after a[i]
        k = j
        while k < l1 and a[k] < b[i]:
            total += min(b[i], b[k]) - max(a[i], a[k])
            k += 1
        if k > j:
            j = k - 1  # the last one may reach into the next interval of the shorter list
    return total


@njit(cache=True)
def pairs(a, b, off, first, second, single, joint):
    """Each word's presence length into `single`, and only the listed pairs' overlaps
    (first[x] < second[x]) into `joint`: cost linear in the intervals of the pairs' shorter words
    (times a logarithm), not in all pairs of the words present together."""
    for k in range(off.shape[0] - 1):
        for i in range(off[k], off[k + 1]):
            single[k] += b[i] - a[i]
    for x in range(first.shape[0]):
        p, q = first[x], second[x]
        if off[p + 1] - off[p] > off[q + 1] - off[q]:
            p, q = q, p
        joint[first[x], second[x]] = overlap(a, b, off[p], off[p + 1], off[q], off[q + 1])


@njit(cache=True)
def context(pos, doc, ids, window, single, joint):
    """Palmetto's context windows over the merged occurrences (sorted by position)."""
    r = pos.shape[0]
    for a in range(r):
        ka = ids[a]
        single[ka] += 1
        for b in range(a + 1, r):
            if pos[b] - pos[a] > window or doc[b] != doc[a]:
                break
            kb = ids[b]
            if ka < kb:
                joint[ka, kb] += 1
            elif kb < ka:
                joint[kb, ka] += 1


# ---------------------------------------------------------------- a build's merge

@njit(cache=True)
def scatter(pos, counts, gids, g0, base, out, fill):
    """Place a chunk's positions (grouped by word) at their word's place in `out` (fill[g - g0]:
    the next free slot of word g), adding the chunk's first global position `base`."""
    i = 0
    for x in range(counts.shape[0]):
        g = gids[x] - g0
        for _ in range(counts[x]):
            out[fill[g]] = np.int64(pos[i]) + base
            fill[g] += 1
            i += 1
