"""The import graph obeys the layers of DESIGN.md (read from the source with ``ast``, nothing imported).

engine.py and tools/ -> protocol/ -> gomoku_ai search -> evaluator -> board/rules. Checked here:

* ``gomoku_ai`` imports neither ``protocol`` nor ``tools``; ``protocol`` does not import ``tools``;
* the board/rules modules import only the standard library, numpy and each other;
* nothing that the engine, the terminal UI or the HTTP service loads imports torch, at any depth and
  in any function (a lazy ``import torch`` in a play-time module would cost ~3 s and ~640 MB there);
* Ray is reached only through ``gomoku_ai/workers/``;
* there is no cycle between modules. Function-level (lazy) imports count as edges too, since a lazy
  import is how a cycle usually hides; imports under ``if TYPE_CHECKING:`` do not, since they never run.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Set, Tuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("gomoku_ai", "protocol", "tools")
BOARD_LAYER = {"gomoku_ai.board", "gomoku_ai.rules", "gomoku_ai.renju", "gomoku_ai.movegen"}
# What a user starts to play: the brain, the terminal UI and the move service; none of them may reach
# torch by any import, lazy or not. The command line also dispatches to training, lazily, so for it
# only what runs when it is imported counts.
PLAY_ROOTS = ("engine", "tools.tui", "tools.serve.app")
DISPATCH_ROOTS = ("tools.cli",)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _sources() -> Dict[str, Path]:
    found = {"engine": ROOT / "engine.py"}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            found[_module_name(path)] = path
    return found


MODULES = _sources()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST, top_level: bool) -> Iterator[ast.stmt]:
    """Import statements except those under ``if TYPE_CHECKING:``: at any depth, or (``top_level``)
    only those that run when the module is imported (not inside a function)."""
    stack: List[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if top_level and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str, top_level: bool = False) -> Set[str]:
    """Dotted names this module imports: ``from p import m`` names ``p.m`` when that is a module."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: Set[str] = set()
    for node in _import_nodes(tree, top_level):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
            continue
        target = _resolve(module, path.name == "__init__.py", node)
        subs = [f"{target}.{alias.name}" for alias in node.names if f"{target}.{alias.name}" in MODULES]
        out.update(subs if subs else [target])
        if len(subs) < len(node.names):
            out.add(target)
    out.discard(module)
    return out


GRAPH = {m: _imports(m) for m in MODULES}
GRAPH_TOP = {m: _imports(m, top_level=True) for m in MODULES}


def _top(name: str) -> str:
    return name.split(".")[0]


def _internal(name: str) -> Optional[str]:
    """The project module an imported name lands in (a name inside a module maps to that module)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _edges(graph: Optional[Dict[str, Set[str]]] = None) -> Iterator[Tuple[str, str]]:
    for m, names in (GRAPH if graph is None else graph).items():
        for n in names:
            target = _internal(n)
            if target is not None and target != m:
                yield m, target


def test_graph_is_read() -> None:
    # Guards the reader itself: known edges must be seen, or every other check here is vacuous.
    assert "gomoku_ai.board" in GRAPH["gomoku_ai.mcts"] or "gomoku_ai.board" in {
        _internal(n) for n in GRAPH["gomoku_ai.mcts"]}
    assert any(_top(n) == "protocol" for n in GRAPH["engine"])
    assert "numpy" in GRAPH["gomoku_ai.board"]


@pytest.mark.parametrize("lower, forbidden", [("gomoku_ai", {"protocol", "tools", "engine"}),
                                              ("protocol", {"tools", "engine"}),
                                              ("tools", {"engine"})])
def test_layers_point_one_way(lower: str, forbidden: Set[str]) -> None:
    bad = sorted(f"{m} imports {n}" for m, names in GRAPH.items() if _top(m) == lower
                 for n in names if _top(n) in forbidden)
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_board_layer_imports_only_stdlib_numpy_and_itself() -> None:
    import sys
    bad = []
    for m in sorted(BOARD_LAYER & set(MODULES)):
        for n in sorted(GRAPH[m]):
            internal = _internal(n)
            if internal is not None:
                if internal not in BOARD_LAYER and internal != "gomoku_ai":
                    bad.append(f"{m} imports {n}")
            elif _top(n) not in sys.stdlib_module_names and _top(n) != "numpy":
                bad.append(f"{m} imports {n}")
    assert not bad, "the board/rules layer must stand alone:\n" + "\n".join(bad)


def _closure(roots: Tuple[str, ...], graph: Dict[str, Set[str]]) -> Dict[str, str]:
    """Every project module reachable from ``roots`` in ``graph`` (module -> who first imported it)."""
    seen: Dict[str, str] = {}
    todo = [r for r in roots if r in MODULES]
    for r in todo:
        seen[r] = "(root)"
    while todo:
        m = todo.pop()
        for _, target in ((m, t) for a, t in _edges(graph) if a == m):
            if target not in seen:
                seen[target] = m
                todo.append(target)
            # importing a submodule runs its packages' __init__ first
            pkg = target.rpartition(".")[0]
            while pkg:
                if pkg in MODULES and pkg not in seen:
                    seen[pkg] = target
                    todo.append(pkg)
                pkg = pkg.rpartition(".")[0]
    return seen


@pytest.mark.parametrize("roots, graph, must_reach", [
    (PLAY_ROOTS, GRAPH, ("protocol.brain", "gomoku_ai.mcts", "tools.tui.app")),
    (DISPATCH_ROOTS, GRAPH_TOP, ("tools.cli",))])
def test_play_time_modules_never_import_torch(roots: Tuple[str, ...], graph: Dict[str, Set[str]],
                                              must_reach: Tuple[str, ...]) -> None:
    reached = _closure(roots, graph)
    assert set(must_reach) <= set(reached)  # the closure is really walked
    bad = sorted(f"{m} imports {n} (reached via {reached[m]})" for m in reached
                 for n in graph[m] if _top(n) == "torch")
    assert not bad, "play-time modules importing torch:\n" + "\n".join(bad)


def test_ray_only_through_workers() -> None:
    bad = sorted(f"{m} imports {n}" for m, names in GRAPH.items() for n in names
                 if (_top(n) == "ray" and not m.startswith("gomoku_ai.workers."))
                 or (n.startswith("gomoku_ai.workers.ray_backend") and not m.startswith("gomoku_ai.workers")))
    assert not bad, "Ray reached past gomoku_ai/workers:\n" + "\n".join(bad)


def _cycles() -> List[List[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    adj: Dict[str, List[str]] = {m: [] for m in MODULES}
    for a, b in _edges():
        adj[a].append(b)
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    on_stack: Set[str] = set()
    stack: List[str] = []
    comps: List[List[str]] = []
    counter = 0
    for start in sorted(adj):
        if start in index:
            continue
        work = [(start, iter(sorted(adj[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(adj[nxt]))))
                elif nxt in on_stack:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    comps.append(sorted(comp))
    return comps


def test_cycle_finder_finds_a_cycle(monkeypatch: pytest.MonkeyPatch) -> None:
    # The checker must be able to fail: a made-up edge back from board to mcts is a cycle.
    monkeypatch.setitem(GRAPH, "gomoku_ai.board", GRAPH["gomoku_ai.board"] | {"gomoku_ai.mcts"})
    assert any("gomoku_ai.board" in c and "gomoku_ai.mcts" in c for c in _cycles())


def test_no_import_cycles() -> None:
    cycles = _cycles()
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


# ------------------------------------------------------------------ the README's layout table
def _readme_paths() -> List[Path]:
    """The paths in the first column of the README's "What is here" table; a bare name after the
    first path of a cell lives in that path's folder (``gomoku_ai/board.py``, ``rules.py``)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## What is here", 1)[1].split("\n## ", 1)[0]
    paths: List[Path] = []
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        cell = line.split("|")[1]
        names = [n.strip() for n in cell.split("`")[1::2]]
        folder = Path(names[0]).parent if "/" in names[0].rstrip("/") else Path(".")
        for n in names:
            paths.append(ROOT / (Path(n.rstrip("/")) if "/" in n.rstrip("/") else folder / n))
    return paths


def test_readme_layout_table_matches_the_tree() -> None:
    listed = _readme_paths()
    assert len(listed) > 10  # the table was found and read
    missing = sorted(str(p.relative_to(ROOT)) for p in listed if not p.exists())
    assert not missing, f"the README's table names paths that do not exist: {missing}"
    # every module of gomoku_ai/ and every sub-package of the three packages is in the table
    wanted = [p for p in (ROOT / "gomoku_ai").glob("*.py") if p.name != "__init__.py"]
    wanted += [d for pkg in PACKAGES for d in (ROOT / pkg).iterdir()
               if d.is_dir() and (d / "__init__.py").exists()]
    covered = set(listed)
    unlisted = sorted(str(p.relative_to(ROOT)) for p in wanted
                      if p not in covered and p.parent not in covered - {ROOT / "gomoku_ai"})
    assert not unlisted, f"not in the README's table: {unlisted}"


# ------------------------------------------------------------------ sizes
MAX_CLASS_LINES = 400
MAX_FUNCTION_LINES = 80
#: a longer function says why in its docstring, with this phrase (e.g. a prover's innermost recursion)
LONG_REASON = "Kept in one piece"


def _long_definitions(tree: ast.AST) -> Iterator[Tuple[str, int, int]]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            n = (node.end_lineno or node.lineno) - node.lineno + 1
            limit = MAX_CLASS_LINES if isinstance(node, ast.ClassDef) else MAX_FUNCTION_LINES
            if n > limit and LONG_REASON not in (ast.get_docstring(node) or ""):
                yield node.name, node.lineno, n


def test_no_class_or_function_over_the_size_limits() -> None:
    long = sorted(f"{m}:{line} {name} ({n} lines)" for m, path in MODULES.items()
                  for name, line, n in _long_definitions(ast.parse(path.read_text(encoding="utf-8"))))
    assert not long, (f"over {MAX_CLASS_LINES} lines (class) or {MAX_FUNCTION_LINES} (function) without "
                      f"'{LONG_REASON}' and a reason in the docstring:\n" + "\n".join(long))


def test_size_check_can_fail() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES + 1))
    assert [n for n, _, _ in _long_definitions(ast.parse(f"def f():\n{body}\n"))] == ["f"]
    ok = f'def f():\n    """{LONG_REASON}: a reason."""\n{body}\n'
    assert not list(_long_definitions(ast.parse(ok)))
