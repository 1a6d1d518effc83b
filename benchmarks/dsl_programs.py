"""Generated DSL programs, and a harness that runs their compiled functions without Legion, for differential tests
of the compiler against the evaluator and for fuzzing the front end.

* `program(rng)`: a random program in the grammar's terms: machine models built by chains of transformations
  (merge, split, swap, slice, reverse, balance_split, auto_split, greedy_split), printed sizes, processors and
  processor sets, integer and tuple arithmetic, comprehensions, ternaries, helper functions, and mapping functions of
  index-launched tasks `t0`, `t1`, ... over their launch points.
* `differential(programs, spec)`: compiles every program's generated C++ into one harness executable built on the
  support library's value code (`compiler/runtime/dsl_values.cc`), runs the load phase and every mapping function
  at every launch point on the synthetic machine `spec` (e.g. "3x5": 3 nodes of 5 GPUs and 1 CPU), and returns
  each program's output next to the evaluator's.
* `mutate(rng, text)`: a random edit of a program's text (delete, duplicate or swap a span, insert a token), for
  fuzzing.

Used by tests/compiler/test_generated.py, tests/dsl/test_fuzz.py and benchmarks/fuzz_dsl.py.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import os
import random
import re
import subprocess
from pathlib import Path

from mapperopt import toolchain
from mapperopt.compiler.build import RUNTIME_DIR
from mapperopt.compiler.codegen import generate
from mapperopt.descriptions import parse_machine_spec
from mapperopt.dsl import DslRuntimeError, Evaluator, check, parse
from mapperopt.dsl.evaluator import show
from mapperopt.dsl.machine import Proc, TaskValue

DOMAINS = ((4,), (3, 2), (2, 2, 2))  # launch domain of task t<k> is DOMAINS[k % 3]


# ---------------------------------------------------------------------------------------------------- generation


def _small(rng: random.Random) -> str:
    return str(rng.choice((0, 0, 1, 1, 2, 3, 4, 5, 6, 8, 12)))


def _nonzero(rng: random.Random) -> str:
    return str(rng.choice((1, 2, 3, 4, 5, 7, 8, -3)))


def machine_expr(rng: random.Random, spec: str) -> str:
    """`Machine(K)` followed by 0-4 valid transformations on machine `spec` (chosen by trying them on the
    evaluator's model)."""
    kind = rng.choice(("GPU", "GPU", "CPU"))
    model = Evaluator(parse(f"m = Machine({kind});"), parse_machine_spec(spec)).globals["m"]
    text = f"Machine({kind})"
    for _ in range(rng.randint(0, 4)):
        for _attempt in range(10):
            n = len(model.size)
            op = rng.choice(("merge", "split", "swap", "slice", "reverse", "balance_split", "auto_split",
                             "greedy_split"))
            d = rng.randrange(n)
            if op in ("merge", "swap"):
                args = (d, rng.randrange(n))
            elif op == "split":
                args = (d, rng.choice([f for f in range(1, model.size[d] + 1) if model.size[d] % f == 0] or [1]))
            elif op == "slice":
                lo = rng.randrange(max(model.size[d], 1))
                args = (d, lo, rng.randrange(lo, max(model.size[d], lo + 1)))
            elif op == "reverse":
                args = (d,)
            elif op == "balance_split":
                args = (d, rng.choice((2, 2, 3)))
            else:
                args = (d, tuple(rng.choice((1, 2, 3, 4, 6, 8)) for _ in range(rng.choice((1, 2, 2, 3)))))
            try:
                model = getattr(model, op)(*args)
            except DslRuntimeError:
                continue
            shown = ", ".join(f"({', '.join(map(str, a))},)" if isinstance(a, tuple) else str(a) for a in args)
            text += f".{op}({shown})"
            break
    return text


def int_expr(rng: random.Random, ints: list[str], depth: int = 0) -> str:
    """An int expression over the names `ints` (no division by a literal zero)."""
    choice = rng.randint(0, 9 if depth < 3 else 2)
    if choice <= 1 or not ints:
        return _small(rng) if rng.random() < 0.8 else f"-{_small(rng)}"
    if choice == 2:
        return rng.choice(ints)
    a, b = int_expr(rng, ints, depth + 1), int_expr(rng, ints, depth + 1)
    if choice <= 4:
        return f"({a} {rng.choice(('+', '-', '*'))} {b})"
    if choice <= 6:
        return f"({a} {rng.choice(('/', '%'))} {_nonzero(rng)})"
    if choice == 7:
        return f"({a} {rng.choice(('<', '<=', '==', '!='))} {b} ? {int_expr(rng, ints, depth + 1)} : {b})"
    if choice == 8:
        return f"(({a}, {b}, {_small(rng)})[{rng.choice((0, 1, 2, -1))}])"
    return f"tuple(x * {a} + 1 for x in ({b}, {_small(rng)}))[{rng.choice((0, 1))}]"


def program(rng: random.Random, spec: str = "2x4", tasks: int = 2) -> str:
    """A random program for machine `spec` (usually one that `check` accepts)."""
    lines = []
    models = []
    for g in range(rng.randint(1, 3)):
        name = f"m{g}"
        lines.append(f"{name} = {machine_expr(rng, spec)};")
        models.append(name)
        lines.append(f'print("{name} = {{}} size {{}} volume {{}} len {{}}", {name}, {name}.size, {name}.volume, '
                     f"{name}.len);")
    lines.append("def wrap(int i, int n) { return (i % n + n) % n; }")
    for _ in range(rng.randint(1, 3)):
        m = rng.choice(models)
        lines.append(f'print("first {{}} last {{}}", {m}[*tuple(0 for d in {m}.size)], '
                     f"{m}[*tuple(s - 1 for s in {m}.size)]);")
        lines.append(f'print("int {{}} {{}}", {int_expr(rng, [f"{m}.volume", f"{m}.size[0]"])}, '
                     f"{m}[*tuple(wrap({int_expr(rng, ['s', f'{m}.volume'])}, s) for s in {m}.size)]);"
                     .replace(", s) for s in", ", s) for s in"))
    for k in range(tasks):
        m = rng.choice(models)
        ints = ["task.ipoint[0]", "task.ispace[0]", "i", f"{m}.volume"]
        lines.append(f"def f{k}(Task task) {{")
        lines.append(f"    i = {int_expr(rng, ['task.ipoint[0]', 'task.ispace[0]'])};")
        lines.append(f"    s = {m}.size;")
        coords = f"tuple(wrap(({int_expr(rng, ints)}) * (d + 1) + task.ipoint[0], s[d]) for d in (0, 1, 2, 3, 4, " \
                 f"5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)[:{m}.len])"
        if rng.random() < 0.3:
            # A processor set: every index but the last fixed (it may span nodes: R405 at that point).
            lines.append(f"    return {m}[*{coords}[:-1], *];")
        else:
            lines.append(f"    return {m}[*{coords}];")
        lines.append("}")
        lines.append(f"IndexTaskMap t{k} f{k};")
    return "\n".join(lines) + "\n"


_TOKENS = ("Task", "Region", "Layout", "def", "return", "*", ";", "{", "}", "(", ")", "[", "]", ",", "//", "#", "\\",
           "-", "+", "?", ":", "=", "==", "GPU", "SOA", "Align==", "1", "99999999999999999999", '"', "'", "\n", "\t",
           "é", "m[0,*]", "task.parent", "tuple(", " for x in ", "IndexTaskMap GPU f;")


def mutate(rng: random.Random, text: str) -> str:
    """One random edit of `text`: delete, duplicate or move a span, or insert a token."""
    if not text:
        return rng.choice(_TOKENS)
    i = rng.randrange(len(text))
    j = min(len(text), i + rng.choice((1, 1, 2, 5, 20, 80)))
    op = rng.randint(0, 3)
    if op == 0:
        return text[:i] + text[j:]
    if op == 1:
        return text[:j] + text[i:j] * rng.choice((1, 2, 10)) + text[j:]
    if op == 2:
        k = rng.randrange(len(text))
        return (text[:i] + text[j:])[:k] + text[i:j] + (text[:i] + text[j:])[k:]
    return text[:i] + rng.choice(_TOKENS) + text[i:]


# ---------------------------------------------------------------------------------------------------- harness

_MAIN = r"""
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

using namespace mapperopt::dsl;

static Topology topology(int64_t nodes, int64_t gpus, int64_t cpus) {
  // As mapperopt.descriptions.parse_machine_spec: SYSMEM and ZCMEM (with GPUs) visible from CPUs and GPUs, FBMEM
  // from its GPU.
  Topology t;
  t.nodes = nodes;
  t.per_node[CPU] = cpus;
  t.per_node[GPU] = gpus;
  const uint32_t sys = 1u << (SYSMEM - SYSMEM), fb = 1u << (FBMEM - SYSMEM), zc = 1u << (ZCMEM - SYSMEM);
  t.memories[CPU].assign(size_t(nodes * cpus), sys | (gpus ? zc : 0));
  t.memories[GPU].assign(size_t(nodes * gpus), sys | fb | zc);
  return t;
}

static void run(const Policy &policy, const Topology &topo, const std::vector<std::vector<int64_t>> &domains) {
  std::vector<Value> globals(size_t(policy.num_globals) + 1);
  Ctx cx{&topo, globals.data()};
  try {
    policy.load(cx);
  } catch (const DslError &e) {
    std::fprintf(stderr, "@@error R%d\n", e.code);
    return;
  }
  for (const MapRule &rule : policy.index_maps) {
    const std::vector<int64_t> &dom = domains[size_t(std::stoi(rule.task + 1)) % domains.size()];
    std::vector<int64_t> point(dom.size(), 0);
    for (bool more = true; more;) {
      auto parent = std::make_shared<TaskView>();
      parent->name = "parent";
      parent->ipoint = {0};
      parent->ispace = {1};
      parent->has_proc = true;
      auto view = std::make_shared<TaskView>();
      view->name = rule.task;
      view->ipoint = point;
      view->ispace = dom;
      view->mapping = true;
      view->parent = parent;
      Value arg;
      arg.type = Value::TASK;
      arg.task = view;
      std::string line = std::string("@@map ") + rule.task;
      for (int64_t x : point) line += " " + std::to_string(x);
      try {
        line += " -> " + to_string(rule.fn(cx, {arg}));
      } catch (const DslError &e) {
        line += " -> R" + std::to_string(e.code);
      }
      std::fprintf(stderr, "%s\n", line.c_str());
      more = false;
      for (size_t d = dom.size(); d-- > 0;) {
        if (++point[d] < dom[d]) { more = true; break; }
        point[d] = 0;
      }
    }
  }
}

int main(int argc, char **argv) {
  const Topology topo = topology(std::atoll(argv[1]), std::atoll(argv[2]), std::atoll(argv[3]));
  const std::vector<std::vector<int64_t>> domains = {DOMAINS};
  for (size_t k = 0; k < sizeof(POLICIES) / sizeof(POLICIES[0]); k++) {
    std::fprintf(stderr, "@@program %zu\n", k);
    run(*POLICIES[k], topo, domains);
  }
  return 0;
}
"""


def _embedded(k: int, cpp: str) -> str:
    """The generated file of program `k` inside `namespace p<k>`, without its includes and exported functions."""
    body = [ln for ln in cpp.splitlines() if not ln.startswith(("#include", 'extern "C"'))]
    return f"namespace p{k} {{\n" + "\n".join(body) + f"\n}}  // namespace p{k}\n"


def harness_source(cpps: list[str]) -> str:
    """One C++ file running every generated program (see `_MAIN`)."""
    domains = ", ".join("{" + ", ".join(map(str, d)) + "}" for d in DOMAINS)
    policies = ", ".join(f"&p{k}::policy" for k in range(len(cpps)))
    head = '#include <cstdlib>\n#include "mapperopt_dsl.h"\n'
    main = _MAIN.replace("{DOMAINS}", "{" + domains + "}")
    return (head + "".join(_embedded(k, c) for k, c in enumerate(cpps))
            + f"static const mapperopt::dsl::Policy *const POLICIES[] = {{{policies}}};\n" + main)


def _values_object() -> Path:
    """dsl_values.cc compiled once per content (it has no Legion dependency)."""
    src = RUNTIME_DIR / "dsl_values.cc"
    digest = hashlib.sha256(src.read_bytes() + (RUNTIME_DIR / "mapperopt_dsl.h").read_bytes()).hexdigest()[:16]
    obj = toolchain.cache_dir() / "dsl-harness" / f"dsl_values-{digest}.o"
    if not obj.exists():
        obj.parent.mkdir(parents=True, exist_ok=True)
        tmp = obj.with_suffix(f".{id(obj)}.tmp")
        subprocess.run([toolchain.cxx(), "-std=c++17", "-O1", "-c", str(src), f"-I{RUNTIME_DIR}", "-o", str(tmp)],
                       check=True)
        tmp.replace(obj)
    return obj


def expected_output(text: str, spec: str) -> str:
    """What the evaluator prints for `text` on machine `spec`, in the harness's format."""
    out = io.StringIO()
    program = parse(text, "gen.dsl")
    try:
        ev = Evaluator(program, parse_machine_spec(spec), stream=out)
    except DslRuntimeError as err:
        return out.getvalue() + f"@@error {err.code}\n"
    for s in program.statements:
        if type(s).__name__ != "IndexTaskMapStmt":
            continue
        task = s.tasks.names[0].name
        dom = DOMAINS[int(task[1:]) % len(DOMAINS)]
        for point in itertools.product(*(range(d) for d in dom)):
            parent = TaskValue("parent", (0,), (1,), None, Proc("CPU", 0, 0))
            try:
                value = show(ev.call(s.func.name, [TaskValue(task, point, dom, parent, None)]))
            except DslRuntimeError as err:
                value = err.code
            out.write(f"@@map {task} {' '.join(map(str, point))} -> {value}\n")
    return out.getvalue()


def differential(texts: list[str], spec: str, workdir: Path, jobs: int = 2,
                 cache: bool = False) -> list[tuple[str, str, str]]:
    """Compile `texts` (each accepted by `check` on `spec`) into `jobs` harness executables built concurrently, run
    them on `spec` and return, per program, (text, harness output, evaluator output). Raises AssertionError when a
    harness does not build or run (the compiler's output is in the message).

    `cache`: keep the executables in the build cache (`toolchain.cache_dir()/dsl-harness/`) by the content of their
    source (the generated C++) and of the runtime they include, so that a fixed set of programs (the tests') is
    compiled once per change of the generator or the runtime; a fuzzing run's one-off programs are not kept."""
    values = _values_object()
    flags = ["-std=c++17", "-O0"]
    runtime = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(RUNTIME_DIR.iterdir()) if p.is_file()))
    chunks = [texts[k::jobs] for k in range(jobs) if texts[k::jobs]]
    builds = []
    for k, chunk in enumerate(chunks):
        source = harness_source([generate(parse(t, "gen.dsl")) for t in chunk])
        src = workdir / f"harness{k}.cc"
        src.write_text(source)
        exe = workdir / f"harness{k}"
        if cache:
            key = "\0".join([source, runtime.hexdigest(), values.name, toolchain.cxx(), *flags])
            exe = toolchain.cache_dir() / "dsl-harness" / f"harness-{hashlib.sha256(key.encode()).hexdigest()[:16]}"
            exe.parent.mkdir(parents=True, exist_ok=True)
            if exe.exists():
                builds.append((exe, None, None))
                continue
        tmp = exe.with_name(f"{exe.name}.{os.getpid()}.tmp")  # renamed when whole: a reader never runs half a file
        cmd = [toolchain.cxx(), *flags, str(src), str(values), f"-I{RUNTIME_DIR}", "-o", str(tmp)]
        builds.append((exe, tmp, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
    nodes, gpus, *cpus = (int(x) for x in spec.split("x"))
    out = []
    for chunk, (exe, tmp, build) in zip(chunks, builds):
        if build is not None:
            log = build.communicate()[0]
            assert build.returncode == 0, f"the harness does not build:\n{log[-3000:]}"
            tmp.replace(exe)
        run = subprocess.run([str(exe), str(nodes), str(gpus), str(cpus[0] if cpus else 1)], capture_output=True,
                             text=True, timeout=300)
        outputs = re.split(r"^@@program \d+\n", run.stderr, flags=re.M)[1:]
        assert run.returncode == 0 and len(outputs) == len(chunk), run.stderr[-2000:]
        out += [(t, c, expected_output(t, spec)) for t, c in zip(chunk, outputs)]
    return out


def accepted_programs(seed: int, count: int, spec: str) -> list[str]:
    """`count` generated programs that `check` accepts on machine `spec` (generation is deterministic in `seed`)."""
    rng = random.Random(seed)
    machine = parse_machine_spec(spec)
    out = []
    while len(out) < count:
        text = program(rng, spec)
        if not any(d.is_error for d in check(parse(text, "gen.dsl"), None, machine)):
            out.append(text)
    return out
