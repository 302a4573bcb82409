"""Every way NumPy calls a loop, applied to a ufunc or a cast.

Each function returns [(name, fn(g), elements compared)].  Outputs the call does not
write are checked to stay untouched (where=), and every output buffer starts as fresh
garbage (machinery.garbage), so a kernel that reads its output before writing it, or
writes a masked element, disagrees with the core.

Conventions: plain; split into irregular chunks (separate calls, the length gate of the
default mode); buffered (NumPy's buffered iterator: the loop called in chunks of 16 / 48
elements); where=; out= reversed / strided; reversed, strided, zero-stride (broadcast)
and transposed operands; unaligned data (a view of a byte buffer at offset 1); out=
aliasing an input (in place) and overlapping it (shifted by one element either way);
accumulate (1-D, both axes of 2-D, into a prefilled and a reversed out=, of a reversed
input); reduce (axes, keepdims, out=, where=); reduceat; ufunc.at.
"""
from __future__ import annotations

import numpy as np

from .machinery import garbage, raw
from .space import chunk_starts

AT_IDX = np.array([0, 3, 3, 1, 7, 0, 5, 5, 5, 2, 11, 4])
REDUCEAT_IDX = np.array([0, 5, 5, 9, 30, 31, 2, 64])


def _bufsize(n):
    class _B:
        def __enter__(self):
            self.old = np.setbufsize(n)

        def __exit__(self, *a):
            np.setbufsize(self.old)
    return _B()


def unaligned(a):
    """A copy of a at an odd address (1-D)."""
    b = np.zeros(a.nbytes + 1, np.uint8)
    b[1:] = np.ascontiguousarray(a).view(np.uint8)
    u = b[1:].view(a.dtype)
    assert a.dtype.itemsize == 1 or not u.flags.aligned
    return u


def _where_mask(n):
    return (np.arange(n) * 7919 % 10) < 6


def _square(x):
    n = x.shape[0]
    if n >= 288:
        return x[:288].reshape(16, 18)
    if n >= 12:
        return x[:12].reshape(3, 4)
    return None


def split(call, n, key):
    """call(lo, hi) on irregular chunks of range(n): the concatenated results."""
    def fn(g):
        st = chunk_starts(n, key)
        outs = [raw(call(lo, hi)) for lo, hi in zip(st, st[1:] + [n])]
        return np.concatenate(outs) if outs else np.zeros(0, np.uint8)
    return fn


def elementwise(uf, ops, odt, key, reductions=True):
    """Conventions of an element-wise call uf(*ops) (1, 2 or 3 operands of equal length n)
    whose result dtype is odt.  reductions: also accumulate / reduce / reduceat / at (binary
    ufuncs whose result has the operands' dtype)."""
    ops = [np.ascontiguousarray(o) for o in ops]
    n = ops[0].shape[0]
    nin = len(ops)
    odt = np.dtype(odt)
    cases = []

    def add(name, fn, count):
        cases.append((name, fn, count))

    add("plain", lambda g: uf(*ops), n)
    add("split", split(lambda lo, hi: uf(*(o[lo:hi] for o in ops)), n, key), n)

    def buffered(size):
        def fn(g):
            out = garbage(g, n, np.float64) if odt.kind != "b" else garbage(g, n, np.bool_)
            with _bufsize(size):
                uf(*ops, out=out, casting="unsafe")
            return out
        return fn
    if odt.kind != "b":
        add("buffered16", buffered(16), n)
        add("buffered48", buffered(48), n)

    mask = _where_mask(n)

    def where(g):
        out = garbage(g, n, odt)
        before = raw(out)
        uf(*ops, out=out, where=mask)
        assert np.array_equal(raw(out)[~mask], before[~mask]), "where= wrote a masked element"
        return out[mask]
    add("where", where, int(mask.sum()))

    def out_rev(g):
        out = garbage(g, n, odt)[::-1]
        uf(*ops, out=out)
        return out
    add("out-reversed", out_rev, n)

    def out_strided(g):
        out = garbage(g, 3 * n, odt)[1::3]
        uf(*ops, out=out)
        return out
    add("out-strided", out_strided, n)
    add("reversed-all", lambda g: uf(*(o[::-1] for o in ops)), n)
    add("reversed-first", lambda g: uf(ops[0][::-1], *ops[1:]), n)
    if n:
        for k in range(nin):
            def zs(g, k=k):
                args = list(ops)
                args[k] = np.broadcast_to(ops[k][n // 2], (n,))
                return uf(*args)
            add(f"zero-stride-{k}", zs, n)
    m = n // 3
    add("strided-odd", lambda g: uf(*(o[k % 2::3][:m] for k, o in enumerate(ops))), m)
    sq = [_square(o) for o in ops]
    if sq[0] is not None:
        add("transposed", lambda g: uf(*(s.T for s in sq)), sq[0].size)
        add("broadcast-2d", lambda g: uf(sq[0], *(s[1:2] for s in sq[1:])), sq[0].size)
        add("fortran", lambda g: uf(*(np.asfortranarray(s) for s in sq)), sq[0].size)
    if n:
        add("unaligned", lambda g: uf(*(unaligned(o) for o in ops)), n)

        def unaligned_out(g):
            b = garbage(g, n * odt.itemsize + 1, np.uint8)
            out = b[1:].view(odt)
            uf(*ops, out=out)
            return out
        add("unaligned-out", unaligned_out, n)
    if odt == ops[0].dtype:
        for k in range(nin):
            if ops[k].dtype != odt:
                continue

            def inplace(g, k=k):
                z = [o.copy() for o in ops]
                uf(*z, out=z[k])
                return z[k]
            add(f"in-place-{k}", inplace, n)

        def shifted(direction):
            def fn(g):
                z = [o.copy() for o in ops]
                if direction > 0:
                    uf(*(o[:-1] for o in z), out=z[0][1:])
                else:
                    uf(*(o[1:] for o in z), out=z[0][:-1])
                return z[0]
            return fn
        if n > 1:
            add("overlap+1", shifted(1), n)
            add("overlap-1", shifted(-1), n)
    if odt.kind == "b" and ops[0].dtype.itemsize == 1 and nin <= 2:
        def inplace_bool(g):
            z = ops[0].copy()
            uf(z, *ops[1:], out=z.view(np.bool_))
            return z.view(np.uint8)
        add("in-place-as-bool", inplace_bool, n)
    if reductions and nin == 2 and odt == ops[0].dtype and n:
        x, y = ops
        add("accumulate", lambda g: uf.accumulate(x), n)
        add("accumulate-reversed", lambda g: uf.accumulate(x[::-1]), n)
        add("accumulate-strided", lambda g: uf.accumulate(x[::3]), (n + 2) // 3)

        def acc_out(rev):
            def fn(g):
                out = garbage(g, n, odt)
                if rev:
                    out = out[::-1]
                uf.accumulate(x, out=out)
                return out
            return fn
        add("accumulate-out", acc_out(False), n)
        add("accumulate-out-reversed", acc_out(True), n)
        add("reduce", lambda g: uf.reduce(x), 1)
        add("reduce-where", lambda g: uf.reduce(x, where=mask, initial=x[0]) if n else x[:0], 1)
        s = sq[0]
        if s is not None:
            add("accumulate-axis0", lambda g: uf.accumulate(s, axis=0), s.size)
            add("accumulate-axis1", lambda g: uf.accumulate(s, axis=1), s.size)
            add("accumulate-T", lambda g: uf.accumulate(s.T, axis=1), s.size)
            add("reduce-axis0", lambda g: uf.reduce(s, axis=0), s.shape[1])
            add("reduce-axis1", lambda g: uf.reduce(s, axis=1), s.shape[0])
            add("reduce-keepdims", lambda g: uf.reduce(s, axis=0, keepdims=True), s.shape[1])

            def reduce_out(g):
                out = garbage(g, s.shape[1], odt)
                uf.reduce(s, axis=0, out=out)
                return out
            add("reduce-out", reduce_out, s.shape[1])
            add("reduceat-2d", lambda g: uf.reduceat(s, [0, 1, 1, s.shape[1] - 1], axis=1), 4 * s.shape[0])
        idx = REDUCEAT_IDX[REDUCEAT_IDX < n]
        add("reduceat", lambda g: uf.reduceat(x, idx), idx.size)
        at_idx = AT_IDX[AT_IDX < n]
        if at_idx.size:
            def at(g):
                z = x.copy()
                uf.at(z, at_idx, y[:at_idx.size])
                return z
            add("at", at, n)
    if reductions and nin == 1 and odt == ops[0].dtype and n:
        at_idx = AT_IDX[AT_IDX < n]
        if at_idx.size:
            def at1(g):
                z = ops[0].copy()
                uf.at(z, at_idx)
                return z
            add("at", at1, n)
    return cases


def casts(x, dst, key):
    """Conventions of the cast x.astype(dst) (x 1-D)."""
    x = np.ascontiguousarray(x)
    n = x.shape[0]
    dst = np.dtype(dst)
    cases = []

    def add(name, fn, count):
        cases.append((name, fn, count))

    add("astype", lambda g: x.astype(dst), n)
    add("split", split(lambda lo, hi: x[lo:hi].astype(dst), n, key), n)
    add("reversed", lambda g: x[::-1].astype(dst), n)
    add("strided-odd", lambda g: x[1::3].astype(dst), len(range(1, n, 3)))
    if n:
        add("zero-stride", lambda g: np.broadcast_to(x[n // 3], (n,)).astype(dst), n)
        add("unaligned", lambda g: unaligned(x).astype(dst), n)

        def unaligned_out(g):
            b = garbage(g, n * dst.itemsize + 1, np.uint8)
            out = b[1:].view(dst)
            np.copyto(out, x, casting="unsafe")
            return out
        add("unaligned-out", unaligned_out, n)

    def copyto_rev(g):
        out = garbage(g, n, dst)[::-1]
        np.copyto(out, x, casting="unsafe")
        return out
    add("copyto-reversed", copyto_rev, n)

    def copyto_strided(g):
        out = garbage(g, 2 * n, dst)[::2]
        np.copyto(out, x, casting="unsafe")
        return out
    add("copyto-strided", copyto_strided, n)
    mask = _where_mask(n)

    def copyto_where(g):
        out = garbage(g, n, dst)
        before = raw(out)
        np.copyto(out, x, casting="unsafe", where=mask)
        assert np.array_equal(raw(out)[~mask], before[~mask]), "copyto where= wrote a masked element"
        return out[mask]
    add("copyto-where", copyto_where, int(mask.sum()))
    s = _square(x)
    if s is not None:
        add("transposed", lambda g: s.T.astype(dst), s.size)
        add("fortran", lambda g: np.asfortranarray(s).astype(dst), s.size)

    def buffered(size):
        def fn(g):
            out = garbage(g, n, dst)
            with _bufsize(size):
                np.positive(x, out=out, casting="unsafe")
            return out
        return fn
    if x.dtype.kind in "fV" or x.dtype.itemsize <= 2:
        add("buffered16", buffered(16), n)
        add("buffered48", buffered(48), n)
    return cases
