"""Run-time values of the DSL: processors, processor sets, machine models (dsl-reference.md §9) and task objects (§10).

A `MachineModel` is an n-dimensional view of the processors of one kind. `Machine(K)` is the 2-D model (nodes,
processors per node); each transformation returns a new model that aliases processors of the old one, so a model is a
chain of `_Transform`s over the base model. Indexing maps new coordinates back through the chain; `coords_of`
(`task.processor(m)`) maps a processor forward through the inverses.

Invalid uses raise `DslRuntimeError` with the dsl-reference.md §11.5 code (R400 index out of range, R405 set spanning
nodes, R406 processor not in the model, R408 wrong number of indices, R409 invalid transformation argument).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

from mapperopt.dsl.errors import DslRuntimeError


@dataclass(frozen=True)
class Proc:
    """One processor: processor `index` (Realm order within the node) of `kind` on `node`."""

    kind: str
    node: int
    index: int

    def __str__(self) -> str:
        return f"{self.kind}[node {self.node}, proc {self.index}]"

    def to_json(self) -> dict:
        return {"kind": self.kind, "node": self.node, "index": self.index}


@dataclass(frozen=True)
class ProcSet:
    """A non-empty set of processors (result of indexing with `*`), in index order."""

    procs: tuple[Proc, ...]

    def __str__(self) -> str:
        return "[" + ", ".join(map(str, self.procs)) + "]"


@dataclass(frozen=True)
class KindValue:
    """A processor or memory kind used as a value (`has(FBMEM)`)."""

    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class TaskValue:
    """A task as mapping functions see it: `ipoint`/`ispace` (§10), its parent, and the processor it runs on (None
    for the task being mapped)."""

    name: str
    ipoint: tuple[int, ...]
    ispace: tuple[int, ...]
    parent: TaskValue | None = None
    proc: Proc | None = None

    def __str__(self) -> str:
        return f"{self.name} {fmt_tuple(self.ipoint)}"


def fmt_tuple(t: tuple) -> str:
    """`(1, 2)`, `(1,)`, `()`."""
    return f"({t[0]},)" if len(t) == 1 else "(" + ", ".join(map(str, t)) + ")"


def _fail(code: str, msg: str):
    raise DslRuntimeError(code, msg)


# Stated limits: a machine model has at most MAX_DIMS dimensions (Legion's index spaces have at most 9), and a
# machine at most MAX_PROCS processors of one kind, so that every transformation is cheap.
MAX_DIMS = 16
MAX_PROCS = 2**20


def _args_text(args: tuple) -> str:
    """Method arguments as the messages show them: `0, (4, 2)`."""
    return ", ".join(fmt_tuple(a) if isinstance(a, tuple) else str(a) for a in args)


# ---------------------------------------------------------------------------------------------------- factors


def prime_factors(n: int) -> list[int]:
    """Prime factors of n >= 1 in ascending order, with multiplicity (empty for 1)."""
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out


def balance_factors(size: int, n: int) -> tuple[int, ...]:
    """Factors of `balance_split` (§9.4): primes ascending into the smallest factor, then sorted descending."""
    factors = [1] * n
    for p in prime_factors(size):
        i = factors.index(min(factors))
        factors[i] *= p
    return tuple(sorted(factors, reverse=True))


def greedy_factors(size: int, extents: tuple[int, ...]) -> tuple[int, ...]:
    """Factors of `greedy_split` (§9.4): primes descending, each to the dimension with the largest remaining extent."""
    factors = [1] * len(extents)
    remaining = [Fraction(v) for v in extents]
    for p in reversed(prime_factors(size)):
        i = remaining.index(max(remaining))
        factors[i] *= p
        remaining[i] /= p
    return tuple(factors)


def _divisors(n: int) -> list[int]:
    """Divisors of n >= 1, ascending."""
    out = [1]
    for p in sorted(set(prime_factors(n))):
        k = 0
        while n % p ** (k + 1) == 0:
            k += 1
        out = [d * p**e for d in out for e in range(k + 1)]
    return sorted(out)


def auto_factors(size: int, extents: tuple[int, ...]) -> tuple[int, ...]:
    """Factors of `auto_split` (§9.4): a k-tuple with product `size` minimising sum(O_i / v_i) (exact), ties to the
    greedy result when it is a minimiser, else the lexicographically smallest.

    Dynamic programming over the divisors of `size` (k * D^2 steps for D divisors), on integer costs scaled by the
    product of the extents, instead of enumerating every factorisation."""
    k, scale = len(extents), 1
    for v in extents:
        scale *= v
    weight = [scale // v for v in extents]
    divisors = _divisors(size)
    # best[i][n]: the least cost of factors i.. with product n (n a divisor of size).
    best: list[dict[int, int]] = [{} for _ in range(k)]
    best[k - 1] = {n: n * weight[k - 1] for n in divisors}
    for i in range(k - 2, -1, -1):
        nxt = best[i + 1]
        best[i] = {n: min(d * weight[i] + nxt[n // d] for d in divisors if d <= n and n % d == 0) for n in divisors}
    greedy = greedy_factors(size, extents)
    if sum(f * w for f, w in zip(greedy, weight)) == best[0][size]:
        return greedy
    out, rest = [], size
    for i in range(k - 1):
        d = next(d for d in divisors if rest % d == 0 and d * weight[i] + best[i + 1][rest // d] == best[i][rest])
        out.append(d)
        rest //= d
    return tuple(out) + (rest,)


# ---------------------------------------------------------------------------------------------------- transforms


@dataclass(frozen=True)
class _Transform:
    """One transformation from an old model of sizes `old` to a new one of sizes `new`."""

    op: str
    args: tuple
    old: tuple[int, ...]
    new: tuple[int, ...]
    shown: str = ""  # the arguments as written, for messages

    def to_old(self, idx: tuple[int, ...]) -> tuple[int, ...]:
        """Old coordinates of new coordinates `idx` (all in range)."""
        s, a = self.old, self.args
        if self.op == "merge":
            d1, d2 = a
            pos = d1 if d1 < d2 else d1 - 1
            i = idx[pos]
            rest = list(idx[:pos] + idx[pos + 1 :])
            out = []
            for k in range(len(s)):
                out.append(i // s[d2] if k == d1 else i % s[d2] if k == d2 else rest.pop(0))
            return tuple(out)
        if self.op == "swap":
            d1, d2 = a
            out = list(idx)
            out[d1], out[d2] = idx[d2], idx[d1]
            return tuple(out)
        if self.op == "slice":
            d, lo, _ = a
            return idx[:d] + (idx[d] + lo,) + idx[d + 1 :]
        if self.op == "reverse":
            (d,) = a
            return idx[:d] + (s[d] - 1 - idx[d],) + idx[d + 1 :]
        # A split of dimension d into factors: the first new dimension varies fastest.
        d, factors = a
        o, scale = 0, 1
        for j, f in enumerate(factors):
            o += idx[d + j] * scale
            scale *= f
        return idx[:d] + (o,) + idx[d + len(factors) :]

    def to_new(self, idx: tuple[int, ...]) -> tuple[int, ...] | None:
        """New coordinates of old coordinates `idx`, or None when the old point is not in the new model."""
        s, a = self.old, self.args
        if self.op == "merge":
            d1, d2 = a
            pos = d1 if d1 < d2 else d1 - 1
            rest = [idx[k] for k in range(len(s)) if k not in (d1, d2)]
            rest.insert(pos, idx[d1] * s[d2] + idx[d2])
            return tuple(rest)
        if self.op == "swap":
            return self.to_old(idx)
        if self.op == "slice":
            d, lo, hi = a
            return idx[:d] + (idx[d] - lo,) + idx[d + 1 :] if lo <= idx[d] <= hi else None
        if self.op == "reverse":
            return self.to_old(idx)
        d, factors = a
        o, parts = idx[d], []
        for f in factors:
            parts.append(o % f)
            o //= f
        return idx[:d] + tuple(parts) + idx[d + 1 :]


@dataclass(frozen=True)
class MachineModel:
    """A view of the processors of `kind`: `size` per dimension; `transforms` applied in order to `Machine(kind)`.

    `base` is the size of `Machine(kind)`: (nodes, processors per node).
    """

    kind: str
    base: tuple[int, int]
    transforms: tuple[_Transform, ...] = ()

    @property
    def size(self) -> tuple[int, ...]:
        return self.transforms[-1].new if self.transforms else self.base

    @property
    def volume(self) -> int:
        v = 1
        for s in self.size:
            v *= s
        return v

    def __str__(self) -> str:
        ops = "".join(f".{t.op}({t.shown})" for t in self.transforms)
        return f"Machine({self.kind}){ops} {fmt_tuple(self.size)}"

    # ---- indexing
    def proc_at(self, idx: tuple[int, ...]) -> Proc:
        """The processor at `idx` (one in-range index per dimension). Raises R408 (count), R400 (range)."""
        size = self.size
        if len(idx) != len(size):
            _fail("R408", f"{len(idx)} index value(s) for the {len(size)}-dimensional model {self}")
        for d, (i, s) in enumerate(zip(idx, size)):
            if not 0 <= i < s:
                cmp = f"{i} < 0" if i < 0 else f"{i} >= size {s}"
                err = DslRuntimeError("R400", f"processor index out of bound: index {cmp} in dimension {d} of {self}")
                # every dimension out of range at this index, for the checker's hint (the message names the first)
                err.dims = tuple(k for k, (j, n) in enumerate(zip(idx, size)) if not 0 <= j < n)
                raise err
        for t in reversed(self.transforms):
            idx = t.to_old(idx)
        return Proc(self.kind, idx[0], idx[1])

    def index(self, items: list[int | None]) -> Proc | ProcSet:
        """`m[i0, ..., *, ...]`: `None` items are wildcards. Raises R408, R400, R405 (set spanning nodes)."""
        if len(items) != len(self.size):
            _fail("R408", f"{len(items)} index value(s) for the {len(self.size)}-dimensional model {self}")
        if all(i is not None for i in items):
            return self.proc_at(tuple(items))
        ranges = [range(s) if i is None else (i,) for i, s in zip(items, self.size)]
        for d, i in enumerate(items):
            if i is not None and not 0 <= i < self.size[d]:
                self.proc_at(tuple(0 if j is None else j for j in items))
        procs = [self.proc_at(idx) for idx in itertools.product(*ranges)]
        if not procs:
            _fail("R400", f"processor index out of bound: the wildcard selects no processor of {self}")
        nodes = sorted({p.node for p in procs})
        if len(nodes) > 1:
            _fail("R405", f"processor set spans nodes {nodes} in {self}; all processors of a set must be on one node")
        return ProcSet(tuple(sorted(set(procs), key=lambda p: p.index)))

    def coords_of(self, proc: Proc) -> tuple[int, ...]:
        """`processor(m)`: the coordinates of `proc` in this model. Raises R406 (other kind, or not in the model)."""
        if proc.kind != self.kind:
            _fail("R406", f"processor {proc} is not in {self} (kind {proc.kind}, model of {self.kind})")
        if not (0 <= proc.node < self.base[0] and 0 <= proc.index < self.base[1]):
            _fail("R406", f"processor {proc} is not in {self}")
        idx: tuple[int, ...] | None = (proc.node, proc.index)
        for t in self.transforms:
            idx = t.to_new(idx)
            if idx is None:
                _fail("R406", f"processor {proc} is not in {self}")
        return idx

    # ---- transformations
    def _dim(self, d: int, what: str) -> int:
        if not 0 <= d < len(self.size):
            _fail("R409", f"{what}: dimension {d} is out of range for the {len(self.size)}-dimensional model {self}")
        return d

    def _then(self, op: str, args: tuple, new: tuple[int, ...], shown: tuple) -> MachineModel:
        text = _args_text(shown)
        if len(new) > MAX_DIMS:
            _fail("R409", f"{op}({text}): a machine model has at most {MAX_DIMS} dimensions")
        return MachineModel(self.kind, self.base, self.transforms + (_Transform(op, args, self.size, new, text),))

    def merge(self, d1: int, d2: int) -> MachineModel:
        s = self.size
        self._dim(d1, "merge")
        self._dim(d2, "merge")
        if d1 == d2:
            _fail("R409", f"merge({d1}, {d2}): the two dimensions must differ")
        pos = d1 if d1 < d2 else d1 - 1
        rest = [s[k] for k in range(len(s)) if k not in (d1, d2)]
        rest.insert(pos, s[d1] * s[d2])
        return self._then("merge", (d1, d2), tuple(rest), (d1, d2))

    def split(self, d: int, f: int) -> MachineModel:
        s = self.size
        self._dim(d, "split")
        if f < 1 or s[d] % f:
            _fail("R409", f"split({d}, {f}): the factor must be >= 1 and divide the size {s[d]} of dimension {d}")
        return self._split(d, (f, s[d] // f), "split", (d, f))

    def _split(self, d: int, factors: tuple[int, ...], op: str, shown: tuple) -> MachineModel:
        s = self.size
        return self._then(op, (d, factors), s[:d] + factors + s[d + 1 :], shown)

    def swap(self, d1: int, d2: int) -> MachineModel:
        s = list(self.size)
        self._dim(d1, "swap")
        self._dim(d2, "swap")
        if d1 == d2:
            _fail("R409", f"swap({d1}, {d2}): the two dimensions must differ")
        s[d1], s[d2] = s[d2], s[d1]
        return self._then("swap", (d1, d2), tuple(s), (d1, d2))

    def slice(self, d: int, lo: int, hi: int) -> MachineModel:
        s = self.size
        self._dim(d, "slice")
        if not 0 <= lo <= hi < s[d]:
            _fail("R409", f"slice({d}, {lo}, {hi}): needs 0 <= lo <= hi < {s[d]} (size of dimension {d})")
        return self._then("slice", (d, lo, hi), s[:d] + (hi - lo + 1,) + s[d + 1 :], (d, lo, hi))

    def reverse(self, d: int) -> MachineModel:
        self._dim(d, "reverse")
        return self._then("reverse", (d,), self.size, (d,))

    def _splittable(self, d: int, what: str) -> int:
        size = self.size[self._dim(d, what)]
        if size < 1:
            _fail("R409", f"{what}: dimension {d} of {self} is empty")
        return size

    def balance_split(self, d: int, n: int) -> MachineModel:
        size = self._splittable(d, "balance_split")
        if n < 2:
            _fail("R409", f"balance_split({d}, {n}): the number of factors must be >= 2")
        self._room(n, "balance_split", (d, n))
        return self._split(d, balance_factors(size, n), "balance_split", (d, n))

    def _room(self, factors: int, op: str, shown: tuple):
        """R409 before computing `factors` factors that would give a model of more than MAX_DIMS dimensions."""
        if len(self.size) - 1 + factors > MAX_DIMS:
            _fail("R409", f"{op}({_args_text(shown)}): a machine model has at most {MAX_DIMS} dimensions")

    def auto_split(self, d: int, v: tuple[int, ...]) -> MachineModel:
        size = self._splittable(d, "auto_split")
        self._room(len(self._extents(v, "auto_split")), "auto_split", (d, v))
        return self._split(d, auto_factors(size, v), "auto_split", (d, v))

    def greedy_split(self, d: int, v: tuple[int, ...]) -> MachineModel:
        size = self._splittable(d, "greedy_split")
        self._room(len(self._extents(v, "greedy_split")), "greedy_split", (d, v))
        return self._split(d, greedy_factors(size, v), "greedy_split", (d, v))

    @staticmethod
    def _extents(v: tuple[int, ...], what: str) -> tuple[int, ...]:
        if not v or any(x < 1 for x in v):
            _fail("R409", f"{what}: the extents {fmt_tuple(v)} must be a non-empty tuple of positive integers")
        return v

