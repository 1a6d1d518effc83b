"""The paper's agent (docs/tuning.md) and the Trace/OptoPrime optimizer that trains it with a language model.

The agent is a Trace module whose six trainable methods each return a list of DSL statements of one kind — tasks,
regions (with CollectMemory), layouts, instance limits, index-task maps (their functions included), single-task maps
— and whose fixed `generate_mapper` joins them, after the machine models `mcpu`/`mgpu`, into one program. The
methods' initial bodies are a single `return [...]` holding the start program's statements, so the model sees the
program it is improving and rewrites whole methods; or, as in the paper, programs that make seeded random decisions
over the search space (`random_agent_sources`, `tune --optimizer trace --start random`). Inputs are the
application description (tasks, their requirements, launch domains) and the machine (processor counts, memories).

trace-opt is imported only here and only when the `trace` optimizer is used (`import_opto`), because importing it
takes about 4 s, prints to stdout, and makes LiteLLM fetch a price list from the network unless told not to
(docs/tuning.md).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import warnings
from typing import Any, Mapping, Sequence

from mapperopt.errors import MapperoptError
from mapperopt.optimizer.base import IterationRecord, Optimizer, Proposal
from mapperopt.optimizer.llm import ChatModel, LLMConfig, ModelError, describe_error
from mapperopt.optimizer.space import SECTIONS, SearchSpace, join_program

METHODS = {
    "task": "task_decision",
    "region": "region_decision",
    "layout": "layout_decision",
    "instance_limit": "instance_limit_decision",
    "index_task_map": "index_task_map_decision",
    "single_task_map": "single_task_map_decision",
}
# The input each method receives (its parameter name), fixed as in the paper's agent.
METHOD_INPUTS = {
    "task": "tasks",
    "region": "regions",
    "layout": "regions",
    "instance_limit": "tasks",
    "index_task_map": "index_tasks",
    "single_task_map": "single_tasks",
}

# A longer answer is refused unread: a server that honours max_tokens (4096) stays far below, and trace-opt formats
# each suggested method with black, which takes minutes over a few megabytes.
MAX_ANSWER_CHARS = 50_000
# The methods' statements may have at most this many characters in all (about 9x the largest program the random
# agent makes for the benchmarks here, 45x the largest mapper in configs/): a short method can return any number,
# and parsing and compiling them have no time limit (20 000 statements took minutes).
MAX_PROGRAM_CHARS = 100_000

DSL_PRIMER = """\
You improve a Legion mapper written in mapperopt's mapping DSL, to maximise the application's throughput.
The mapper is produced by the Python functions in #Variables: each returns a list of DSL statements (strings), and
a fixed function joins them in this order: task, region, layout, instance-limit statements, then the machine models
`mcpu = Machine(CPU);` (and `mgpu = Machine(GPU);` when the machine has GPUs), then the index-task-map section, then
the single-task-map section. Rewrite whole functions; keep their names and parameters; every function must return a
list of strings, each one complete DSL statement ending in ';' (a `def` ends with '}').

DSL statements (tasks and regions are named by the application; '*' means all):
  Task <task|*|t1,t2> K1,K2;               processor kinds in preference order, K in CPU, GPU
  Region <task|*> <region name|*|requirement index> <CPU|GPU|*> M1,M2;   memories in preference order,
                                           M in SYSMEM, FBMEM (GPU framebuffer), ZCMEM (zero-copy), VIRTUAL
  CollectMemory <task|*> <region|*>;        release read-only instances right after the task
  Layout <task|*> <region|*> <kind|memory|*> C1 C2 ...;   C in SOA, AOS, C_order, F_order, Align==N, Exact
  InstanceLimit <task> N;                  at most N instances of the task in flight per processor
  def f(Task task) { x = ...; return m[i, j]; }   a mapping function: locals, then one return
  IndexTaskMap <task|t1,t2> f;             point task.ipoint of launch domain task.ispace runs on processor f(task)
  SingleTaskMap <task> f;                  same for a task launched alone
Machine models: Machine(K) has size (nodes, processors per node); m[n, i] is processor i of node n; m.size[d],
m.volume. Indices must stay in range: reduce them with % m.size[d]. Expressions: + - * / % (integer), comparisons,
c ? a : b, tuples (a, b), task.ipoint[d], task.ispace[d], task.parent.processor(m). Comments start with #.
A task runs on the first listed kind it has a variant for; the index/single map function must return a processor
of that kind. Statements naming a task win over '*'; later statements win over earlier identical ones.

The #Feedback has three lines: Execution (compile error, execution error or the measured performance), Explain and
Suggest (hints from mapperopt's AutoGuide). A failed mapper scores 0. Propose a mapper likely to be faster than the
best one so far; change one or a few decisions at a time."""


def import_opto() -> Any:
    """Imports trace-opt quietly and returns the `opto` package.

    Sets LITELLM_LOCAL_MODEL_COST_MAP (stops LiteLLM's network fetch at import) and swallows the banner it prints
    to stdout, which would corrupt mapperopt's own output.

    Raises:
        MapperoptError: trace-opt is not installed.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            import opto
            import opto.optimizers  # noqa: F401  (the slow part: it imports LiteLLM)
            import opto.trace  # noqa: F401
    except ImportError as exc:
        raise MapperoptError(f"the trace optimizer needs trace-opt ({exc})",
                             hint="pip install trace-opt, or use --optimizer guided") from None
    return opto


# ------------------------------------------------------------------------------------------------ method sources


def _py_string(statement: str) -> str:
    """A Python literal for one DSL statement; multi-line statements (functions) as triple-quoted strings so the
    model reads them as code."""
    if "\n" in statement and '"""' not in statement and "\\" not in statement and not statement.endswith('"'):
        return '"""' + statement + '"""'
    return json.dumps(statement)


def method_source(section: str, statements: Sequence[str]) -> str:
    """The source of the trainable method of `section` whose body returns `statements`."""
    items = "".join(f"        {_py_string(s)},\n" for s in statements)
    body = f"    return [\n{items}    ]\n" if statements else "    return []\n"
    return f"def {METHODS[section]}(self, {METHOD_INPUTS[section]}):\n{body}"


def split_sections(dsl: str) -> dict[str, list[str]]:
    """A DSL program's statements grouped by the agent's sections (`space.SECTIONS`), each formatted on its own.

    Functions go with the map statements that name them (single-task maps, else index-task maps); global
    assignments other than the standard machine models open the index-task-map section; `ControlReplicate` goes
    with the task statements; `print` statements are dropped.

    Raises:
        MapperoptError: the program does not parse (its error, with location).
    """
    from mapperopt.dsl import ast
    from mapperopt.dsl.formatter import format_statement
    from mapperopt.dsl.parser import parse

    program = parse(dsl, "<start>")
    single_funcs = {s.func.name for s in program.statements if isinstance(s, ast.SingleTaskMapStmt)}
    index_funcs = {s.func.name for s in program.statements if isinstance(s, ast.IndexTaskMapStmt)}
    out: dict[str, list[str]] = {name: [] for name in SECTIONS}
    assigns: list[str] = []
    for stmt in program.statements:
        text = format_statement(stmt)
        if isinstance(stmt, (ast.TaskStmt, ast.ControlReplicateStmt)):
            out["task"].append(text)
        elif isinstance(stmt, (ast.RegionStmt, ast.CollectMemoryStmt)):
            out["region"].append(text)
        elif isinstance(stmt, ast.LayoutStmt):
            out["layout"].append(text)
        elif isinstance(stmt, ast.InstanceLimitStmt):
            out["instance_limit"].append(text)
        elif isinstance(stmt, ast.IndexTaskMapStmt):
            out["index_task_map"].append(text)
        elif isinstance(stmt, ast.SingleTaskMapStmt):
            out["single_task_map"].append(text)
        elif isinstance(stmt, ast.FuncDef):
            single = stmt.name in single_funcs and stmt.name not in index_funcs
            out["single_task_map" if single else "index_task_map"].append(text)
        elif isinstance(stmt, ast.Assign):
            if not (isinstance(stmt.value, ast.MachineLit) and stmt.name == f"m{stmt.value.kind.lower()}"):
                assigns.append(text)
    # Functions before the statements that name them (a map statement must follow its function's definition).
    for section in ("index_task_map", "single_task_map"):
        out[section].sort(key=lambda s: not s.startswith("def "))
    out["index_task_map"] = assigns + out["index_task_map"]
    return out


def random_agent_sources(space: SearchSpace, seed: int) -> dict[str, str]:
    """The paper's initial agent: each trainable method is a program that makes random decisions over the search
    space (`space.decisions` of its section), seeded so that the same seed gives the same program. Every choice is
    drawn by `random.Random(f"{seed}:{decision}")`, so the task method and the map methods draw the same processor
    kinds for a task, and a map function is always written for the kind its task runs on.

    Returns:
        method name -> source, for `set_code`.
    """
    default = space.default_point()
    kinds = {d.task: [list(c) for c in d.choices] for d in space.decisions if d.group == "kinds"}
    usable = {n: list(space.usable_kinds(n)) for n in space.tasks}
    memories = {d.name: [list(c) for c in d.choices] for d in space.decisions if d.group == "memory"}
    head = ["import random", f"SEED = {seed}  # the same seed, the same program; another seed, another program",
            "def pick(decision, options):", "    return random.Random(f'{SEED}:{decision}').choice(options)",
            f"USABLE = {usable!r}  # the processor kinds each task has a variant for, best first",
            f"KINDS = {kinds!r}", "def kind(task):",
            "    listed = pick('kinds/' + task, KINDS[task]) if task in KINDS else USABLE[task]",
            "    return next((k for k in listed if k in USABLE[task]), listed[0])"]

    def maps(group: str, section: str) -> dict:
        out: dict[str, dict[str, list]] = {}
        for d in (d for d in space.decisions if d.group == group):
            for kind in usable[d.task] or [space.kinds[-1]]:
                point = dict(default)
                if f"kinds/{d.task}" in point:
                    point[f"kinds/{d.task}"] = next(c for c in space.by_name[f"kinds/{d.task}"].choices
                                                    if c[0] == kind)
                out.setdefault(d.task, {})[kind] = [space.sections({**point, d.name: value})[section]
                                                    for value in d.choices]
        return out

    def method(section: str, lines: list[str]) -> str:
        indented = "".join(f"    {x}\n" for x in [*head, *lines])
        return f"def {METHODS[section]}(self, {METHOD_INPUTS[section]}):\n{indented}"

    base = space.sections(default)
    collect = [d.task for d in space.decisions if d.group == "collect"]
    limits = {d.task: list(d.choices) for d in space.decisions if d.group == "limit"}
    layout = ["out = []"]
    if space.layouts:
        order = repr(space.required_order) if space.required_order else "pick('layout/order', ['F_order', 'C_order'])"
        layout = ["align = pick('layout/align', [0, 64, 128])",
                  "out = ['Layout * * * ' + "
                  + (repr(space.required_interleave) if space.required_interleave
                     else "pick('layout/interleave', ['SOA', 'AOS'])") + " + ' '",
                  f"       + {order}",
                  "       + (f' Align=={align}' if align else '') + ';']"]
    regions = [f"MEMORIES = {memories!r}  # decision 'memory/<task>/<requirement>/<kind>' -> memory lists",
               f"COLLECT = {collect!r}  # tasks with read-only requirements", f"out = {base['region']!r}",
               "for decision, options in MEMORIES.items():",
               "    _, task, req, k = decision.split('/')",
               "    if k == kind(task):",
               "        out.append(f'Region {task} {req} {k} ' + ','.join(pick(decision, options)) + ';')",
               "out += [f'CollectMemory {t} *;' for t in COLLECT if pick('collect/' + t, [False, True])]"]
    mapping = ["out = []", "for task, by_kind in MAPS.items():", "    out += pick(PREFIX + task, by_kind[kind(task)])",
               "functions = [s for s in out if s.startswith('def ')]",
               "return list(dict.fromkeys(functions)) + [s for s in out if not s.startswith('def ')]"]
    return {
        METHODS["task"]: method("task", [f"out = {base['task']!r}", "for task in KINDS:",
                                         "    out.append(f'Task {task} ' + ','.join(pick('kinds/' + task, "
                                         "KINDS[task])) + ';')", "return out"]),
        METHODS["region"]: method("region", [*regions, "return out"]),
        METHODS["layout"]: method("layout", [*layout, "return out"]),
        METHODS["instance_limit"]: method("instance_limit", [
            f"LIMITS = {limits!r}  # 0: no limit", "out = []", "for task, options in LIMITS.items():",
            "    n = pick('limit/' + task, options)", "    if n:", "        out.append(f'InstanceLimit {task} {n};')",
            "return out"]),
        METHODS["index_task_map"]: method("index_task_map", [
            f"MAPS = {maps('index_map', 'index_task_map')!r}  # task -> kind -> statements of each pattern",
            "PREFIX = 'index_map/'", *mapping]),
        METHODS["single_task_map"]: method("single_task_map", [
            f"MAPS = {maps('single_map', 'single_task_map')!r}  # task -> kind -> statements of each pattern",
            "PREFIX = 'single_map/'", *mapping]),
    }


# ------------------------------------------------------------------------------------------------ agent


def _inputs(space: SearchSpace) -> dict[str, Any]:
    """The application and machine facts each method receives (plain data, shown to the model in #Inputs)."""
    tasks = [{"name": n, "variants": t["variants"], "launch": t["launch"]}
             for n, t in space.tasks.items() if not space.is_top_level(n)]
    regions = {n: [{"index": r["index"], "names": r.get("names", []), "privilege": r["privilege"]}
                   for r in t["regions"]] for n, t in space.tasks.items() if t["regions"]}
    procs = space.machine.get("processors", {})
    machine = {
        "nodes": space.machine.get("nodes", 1),
        "processors per node": {k: (procs.get(k) or [0])[0] for k in ("CPU", "GPU")},
        "memories visible per processor kind": {k: list(space.memories[k]) for k in space.kinds},
        "machine models defined for you": {f"m{k.lower()}": f"Machine({k})" for k in space.kinds},
    }
    return {
        "tasks": tasks,
        "regions": regions,
        "index_tasks": {"launch domains": {n: space.tasks[n]["domain"] for n in space.index_tasks()},
                        "machine": machine},
        "single_tasks": {"tasks": space.single_tasks(), "machine": machine},
    }


def make_agent(space: SearchSpace, sections: Mapping[str, Sequence[str]]) -> Any:
    """A fresh agent (a trace Module with its own parameters) whose methods return `sections`' statements.

    Returns:
        the agent; `agent.generate_mapper()` returns a trace node holding the DSL text (or raises
        opto.trace.ExecutionError when a method fails); `agent.parameters_dict()` maps method names to their
        code parameters.
    """
    opto = import_opto()
    trace = opto.trace
    prelude = space.prelude()

    @trace.bundle()
    def emit_program(task, region, layout, instance_limit, index_task_map, single_task_map):
        """Joins the statement lists in this order, with the machine models before the index-task-map section,
        into one DSL program. Each argument must be a list of DSL statement strings."""
        parts = dict(zip(SECTIONS, (task, region, layout, instance_limit, index_task_map, single_task_map)))
        for section, value in parts.items():
            if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
                raise TypeError(f"{METHODS[section]} must return a list of DSL statement strings, "
                                f"not {type(value).__name__} {str(value)[:80]!r}")
        sizes = {section: sum(map(len, value)) for section, value in parts.items()}
        if sum(sizes.values()) > MAX_PROGRAM_CHARS:  # refused before anything parses it
            largest = max(sizes, key=sizes.get)
            raise ValueError(f"the methods returned {sum(sizes.values())} characters of DSL statements "
                             f"({METHODS[largest]}: {sizes[largest]}), more than the {MAX_PROGRAM_CHARS} a mapper "
                             f"may have")
        return join_program(prelude, parts)

    class MapperAgent(trace.Module):
        # Placeholder bodies: replaced below by the start program's statements.
        @trace.bundle(trainable=True)
        def task_decision(self, tasks):
            return []

        @trace.bundle(trainable=True)
        def region_decision(self, regions):
            return []

        @trace.bundle(trainable=True)
        def layout_decision(self, regions):
            return []

        @trace.bundle(trainable=True)
        def instance_limit_decision(self, tasks):
            return []

        @trace.bundle(trainable=True)
        def index_task_map_decision(self, index_tasks):
            return []

        @trace.bundle(trainable=True)
        def single_task_map_decision(self, single_tasks):
            return []

        def generate_mapper(self):
            inputs = {k: trace.node(v, name=k) for k, v in _inputs(space).items()}
            parts = [getattr(self, METHODS[s])(inputs[METHOD_INPUTS[s]]) for s in SECTIONS]
            return emit_program(*parts)

    for name in METHODS.values():  # the model's code runs in a confined child, never in the tuner
        bundle = MapperAgent.__dict__[name]
        bundle.__class__ = _confined(type(bundle))
    agent = MapperAgent()
    set_code(agent, {METHODS[s]: method_source(s, sections.get(s, ())) for s in SECTIONS})
    return agent


def _confined(base: type) -> type:
    """A subclass of trace's FunModule `base` whose trainable code is run by `confine.run_confined` instead of
    being `exec`uted in this process (trace-opt would define and call it here, with the user's rights, secrets and
    no time limit). A syntax error is still reported by trace itself: compiling runs nothing."""
    from mapperopt.optimizer.confine import ConfinedError, run_confined

    class ConfinedFunModule(base):
        @property
        def fun(self):
            if self.parameter is None:
                return self._fun
            code = self.parameter._data
            try:
                compile(code, "<method>", "exec")
            except SyntaxError:
                return base.fun.fget(self)  # raises trace's ExecutionError, with the line marked
            name = self._fun.__name__  # the method's, not the first `def` (a helper may come before it)

            def confined(*args, **kwargs):
                if not defines(code, name):
                    raise ConfinedError("SyntaxError", f"the code does not define {name} (it must start with "
                                                       f"`def {name}(`)")
                return run_confined(code, name, [*args[1:], *kwargs.values()])  # args[0]: the agent
            return confined

        def _construct_error_comment(self, e):
            if not isinstance(e, ConfinedError):
                return super()._construct_error_comment(e)
            message = f"({e.type}) {e.message}."
            code = self.parameter._data
            marked = self.generate_comment(code, message, e.line, 1) if e.line else code
            self.info["traceback"] = str(e)
            self.info["error_comment"] = f"{marked}\n{message}"
            return e

    return ConfinedFunModule


def defines(code: str, name: str) -> bool:
    """Whether `code` defines the function `name` at its top level."""
    return re.search(rf"^def\s+{name}\s*\(", code, re.MULTILINE) is not None


def get_code(agent: Any) -> dict[str, str]:
    """The current source of each trainable method, by method name."""
    return {name: p.data for name, p in agent.parameters_dict().items()}


def set_code(agent: Any, code: Mapping[str, str]) -> None:
    """Replaces the source of the named trainable methods."""
    params = agent.parameters_dict()
    for name, source in code.items():
        params[name]._data = source


# ------------------------------------------------------------------------------------------------ optimizer


class TraceOptimizer(Optimizer):
    """OptoPrime (trace-opt) training the agent with a language model, as in the paper.

    Each `propose` after the first makes one OptoPrime step — backward of the previous iteration's feedback string
    to the node that produced it (the program, or the exception node when the agent raised), then one model call
    that rewrites methods — and a forward pass that generates the next program. A failed or unusable model answer
    leaves the methods unchanged; the note says why, and the unchanged program is served from the cache.

    Args:
        space: the SearchSpace.
        start: the DSL program of iteration 1 (it becomes the methods' initial bodies).
        seed: recorded; model sampling is not seeded (servers differ in whether they support it).
        llm: the endpoint settings, or a ready callable with OptoPrime's `llm` contract (tests).
        memory_size: how many past (variables, feedback) pairs OptoPrime shows the model (0: none).
        init: "start" (the methods return the start program's statements) or "random" (the paper's initial agent:
            methods that make seeded random decisions over the search space, `random_agent_sources`; the start
            program is then not used).

    Raises:
        MapperoptError: the start program does not parse; trace-opt is missing.
    """

    name = "trace"

    def __init__(self, space: SearchSpace, start: str, seed: int = 0, llm: LLMConfig | Any = None,
                 memory_size: int = 0, init: str = "start", **options: Any):
        super().__init__(space, start, seed, **options)
        if init not in ("start", "random"):
            raise MapperoptError(f"unknown initial agent {init!r}", hint="use 'start' or 'random'")
        self.init = init
        self.config = llm if isinstance(llm, LLMConfig) else LLMConfig.from_env()
        self.model = llm if llm is not None and not isinstance(llm, LLMConfig) else ChatModel(self.config)
        self.agent = make_agent(space, split_sections(start))
        if init == "random":
            set_code(self.agent, random_agent_sources(space, seed))
        methods = {p.py_name: name for name, p in self.agent.parameters_dict().items()}
        self.optimizer = _make_optoprime(self.agent.parameters(), methods, self.model, memory_size,
                                         objective=DSL_PRIMER)
        self.target: Any = None  # the node the next feedback is propagated back from
        self.rejected: str | None = None  # why the model's answer of this step was not used

    def describe(self) -> str:
        where = self.config.base_url or "the OpenAI API"
        return (f"trace — OptoPrime with the language model {self.config.model or 'gpt-4o'} at {where} "
                f"({self.config.key_note})")

    def close(self) -> None:
        if isinstance(self.model, ChatModel):  # a stand-in callable (tests) holds no connection
            self.model.close()

    def propose(self, history: Sequence[IterationRecord]) -> Proposal:
        """The next program (see the class).

        Raises:
            ModelError: the endpoint failed beyond its retries or the iteration's model time: no iteration is
                used up (the methods are as before the step).
        """
        if hasattr(self.model, "begin_iteration"):
            self.model.begin_iteration()
        first_call = len(getattr(self.model, "calls", ()))
        origin = f"random decisions, seed {self.seed}" if self.init == "random" else "start program"
        self.rejected = None
        note = f"initial agent ({origin})" if not history else self._step(history[-1])
        code = get_code(self.agent)
        state = {"code": code, **({"rejected": self.rejected} if self.rejected else {})}
        usage = self.model.usage_since(first_call) if hasattr(self.model, "usage_since") else None
        try:
            output = self._forward()
        except _AgentError as err:
            return Proposal(None, note=note, error=err.feedback, state=state, llm=usage)
        return Proposal(output, note=note, state=state, llm=usage)

    def resume(self, history: Sequence[IterationRecord]) -> None:
        """Restores the methods that produced the last stored iteration and regenerates its output node, so the next
        `propose` steps from its feedback. (OptoPrime's memory of earlier steps is not restored.)"""
        last_state = next((r.optimizer_state for r in reversed(history) if r.optimizer_state), None)
        if last_state:
            set_code(self.agent, last_state["code"])
        if history:
            try:
                self._forward()
            except _AgentError:
                pass  # the target is the exception node, as it was when the iteration ran

    # ---------------------------------------------------------------------------------------------- internals

    def _forward(self) -> str:
        """Runs the agent; sets the backward target. Raises _AgentError when a method fails."""
        trace = import_opto().trace
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                output = self.agent.generate_mapper()
        except trace.ExecutionError as exc:
            self.target = exc.exception_node
            raise _AgentError(agent_error_feedback(exc)) from None
        self.target = output
        return output.data

    def _step(self, record: IterationRecord) -> str:
        """One OptoPrime step from `record`'s feedback; returns the note describing what happened."""
        before = get_code(self.agent)
        self.optimizer.zero_feedback()
        feedback = record.feedback_text or "Execution: no feedback"
        rejected = (record.optimizer_state or {}).get("rejected")
        if rejected:  # the model's own answer made this iteration's (unchanged) mapper: say why it was not used
            feedback += (f"\nNote: your previous answer was not used, so the mapper is unchanged: {rejected}. Answer "
                         "with the JSON object asked for, giving new code for variables of #Variables.")
        self.optimizer.backward(self.target, feedback)
        self.optimizer.last_response = None
        first_call = len(getattr(self.model, "calls", ()))
        try:
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.optimizer.step()
        except ModelError:  # the endpoint is down or refuses the key or model: stop without using an iteration
            set_code(self.agent, before)
            raise
        except UnusableAnswer as exc:
            set_code(self.agent, before)
            self.rejected = str(exc)
            return f"LLM answer not used: {exc}; mapper unchanged"
        except Exception as exc:  # an answer the step cannot use must not end tuning: it is reported
            set_code(self.agent, before)
            return f"LLM step failed: {describe_error(exc, self.config)}; mapper unchanged"
        failed = [c for c in getattr(self.model, "calls", ())[first_call:] if c["error"]]
        retried = f" (after {len(failed)} failed request(s), retried: {failed[-1]['error']})" if failed else ""
        changed = [name for name, source in get_code(self.agent).items() if source != before[name]]
        misnamed = next((name for name in changed if not defines(get_code(self.agent)[name], name)), None)
        if misnamed:  # run, it would put another method's statements in this one's section
            wrote = re.search(r"def\s+(\w+)", get_code(self.agent)[misnamed])
            set_code(self.agent, before)
            self.rejected = (f"the code for {misnamed} defines {wrote.group(1) if wrote else 'no function'}, not "
                             f"{misnamed}")
            return f"LLM answer not used: {self.rejected}; mapper unchanged{retried}"
        if not changed:
            self.rejected = diagnose_answer(self.optimizer.last_response, self.agent)
            return f"LLM answer not used: {self.rejected}; mapper unchanged{retried}"
        return f"LLM step: rewrote {', '.join(changed)}{retried}"


class UnusableAnswer(Exception):
    """A model answer refused before trace-opt reads it."""


class _AgentError(Exception):
    def __init__(self, feedback: str):
        super().__init__(feedback)
        self.feedback = feedback


def agent_error_feedback(exc: Any) -> str:
    """The feedback string for an exception raised by the agent's own code (a trace ExecutionError): the error, the
    method it came from and the offending line, marked by trace."""
    node = exc.exception_node
    code = next((p.data for p in getattr(node, "parents", ()) if str(p.data).startswith("def ")), "")
    match = re.match(r"def (\w+)", code)
    if not match:  # raised by the fixed code that joins the program (emit_program): a method's value is at fault
        method = next((m for m in METHODS.values() if re.search(rf"\b{m}\b", str(node.data))), "each method")
        fix = (f"make {method} return fewer or shorter statements" if str(node.data).startswith("(ValueError)")
               else f"make {method} return a list of DSL statement strings")
        return (f"Execution: Agent Error: {node.data}\n"
                f"Explain: {method} returned a value no mapper can be made of, so no mapper was compiled or run.\n"
                f"Suggest: {fix}.")
    where = match.group(1)
    marked = [line.strip() for line in str((node.info or {}).get("error_comment", "")).splitlines() if "<---" in line]
    # What ended the method: a ConfinedError of the confined child's limits (confine.run_confined), else a raise.
    ended = re.search(r"ConfinedError\) (?:(Timeout): |MethodError: \S+ (?:(was ended by signal SIGKILL)|ended "
                      r"without a reply))", str(node.data))
    happened, fix = "raised an exception", "runs and returns a list of DSL statement strings"
    if ended and ended[1]:
        happened, fix = ("was stopped at its time limit before it returned",
                         "returns a list of DSL statement strings well within its time limit")
    elif ended and ended[2]:
        happened, fix = ("was killed (SIGKILL) before it returned",
                         "returns a list of DSL statement strings without killing its process or using up memory")
    elif ended:
        happened, fix = "ended before it returned", "returns a list of DSL statement strings instead of exiting"
    return (f"Execution: Agent Error: {node.data} in {where}" + "".join(f"\n  {line}" for line in marked) + "\n"
            f"Explain: the Python code that generates the mapper {happened}, so no mapper was compiled or run.\n"
            f"Suggest: fix {where} so that it {fix}.")


def diagnose_answer(response: str | None, agent: Any) -> str:
    """Why a model answer changed nothing, in one line (OptoPrime ignores such answers silently)."""
    names = sorted(p.py_name for p in agent.parameters())
    if not response or not response.strip():
        return "the model returned an empty answer"
    if "TERMINATE" in response:
        return "the model answered TERMINATE (no change proposed)"
    data = _answer_json(response)
    if data is None:
        return f"the answer is not JSON: {response.strip()[:120]!r}"
    suggestion = data.get("suggestion") if isinstance(data, dict) else None
    if not isinstance(suggestion, dict) or not suggestion:
        return "the answer has no 'suggestion' object"
    known = [k for k in suggestion if k in names]
    if not known:
        return f"the suggestion names no known variable (got {sorted(suggestion)[:4]}, expected {names})"
    for name in known:  # OptoPrime drops code that black cannot format, and takes code equal to the current
        try:
            compile(str(suggestion[name]), name, "exec")
        except SyntaxError as exc:
            return f"the suggested code is not valid Python (line {exc.lineno}: {exc.msg})"
    return "the suggested code equals the current code"


def _answer_json(response: str) -> Any:
    """The JSON value of an answer (the outermost braces of one with prose or a fence around), None if none."""
    match = re.search(r"{.*}", response, re.DOTALL)
    try:
        return json.loads(match.group(0) if match else response)
    except ValueError:
        return None


def _make_optoprime(parameters: list, methods: Mapping[str, str], llm: Any, memory_size: int,
                    objective: str) -> Any:
    """An OptoPrime of `parameters` (`methods`: each one's method name by its variable name, `__code10`) that makes
    exactly one request per step (OptoPrime's own retry without JSON mode doubles the wait on a timeout, so it is
    kept only for servers that reject JSON mode), remembers the raw answer and refuses a suggested value that is not
    code (`UnusableAnswer`)."""
    from opto.optimizers import OptoPrime

    class MapperOptoPrime(OptoPrime):
        last_response: str | None = None

        def call_llm(self, system_prompt, user_prompt, verbose=False, max_tokens=4096):
            import openai

            messages = [{"role": "system", "content": system_prompt}, {"role": "user", "content": user_prompt}]
            try:
                response = self.llm(messages=messages, response_format={"type": "json_object"}, max_tokens=max_tokens)
            except openai.BadRequestError:  # the server does not support JSON mode
                response = self.llm(messages=messages, max_tokens=max_tokens)
            self.last_response = response.choices[0].message.content or ""
            if len(self.last_response) > MAX_ANSWER_CHARS:  # trace-opt's black would take minutes over it
                raise UnusableAnswer(f"the answer has {len(self.last_response)} characters, more than the "
                                     f"{MAX_ANSWER_CHARS} one may have")
            return self.last_response

        def extract_llm_suggestion(self, response):
            data = _answer_json(response)
            suggestion = data.get("suggestion") if isinstance(data, dict) else None
            for name, value in suggestion.items() if isinstance(suggestion, dict) else ():
                if "__code" in name and not isinstance(value, str):  # trace-opt would fail on its `.strip()`
                    method = f" ({methods[name]})" if name in methods else ""
                    raise UnusableAnswer(f"the suggested value for {name}{method} is not code (a string) but "
                                         f"{type(value).__name__}: {json.dumps(value)[:60]}")
            return super().extract_llm_suggestion(response)

    return MapperOptoPrime(parameters, llm=llm, memory_size=memory_size, objective=objective)


__all__ = ["DSL_PRIMER", "TraceOptimizer", "get_code", "make_agent", "method_source", "random_agent_sources",
           "set_code", "split_sections"]
