"""The layers of app/ (issue 33; docs/architecture.md draws them): no import circles,
every module importable alone, and the protocols reached only through their
registry. The import graph is read from the source (every import statement,
also those inside functions), so a circle hidden in a function shows too."""
import ast
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
APP = os.path.join(ROOT, "app")
# What a protocol package may not import: the orchestration above it and the pages.
ABOVE_PROTOCOLS = ("app.services.answers", "app.services.assignment", "app.services.evaluation",
                   "app.services.review", "app.services.dashboard", "app.services.export",
                   "app.services.importer", "app.auth", "app.volunteer", "app.organiser", "app.cli",
                   "app.sockets", "app.realtime", "app.factory")


def modules():
    """{dotted name: path} of every module of app/."""
    found = {}
    for folder, _dirs, files in os.walk(APP):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                dotted = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                found[dotted.removesuffix(".__init__")] = path
    return found


def imports_of(name, path, known):
    """The modules of app/ that ``name`` imports anywhere in its source."""
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            # "from package import module" names the module; else the names live in ``base``.
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        found.update(t for t in targets if t in known and t != name)
    return found


def graph():
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def circles(edges):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_module_of_app_is_in_an_import_circle():
    assert circles(graph()) == []


def test_shared_code_reaches_a_protocol_only_through_the_registry():
    edges = graph()
    for name, imported in edges.items():
        if name == "app.protocols" or name.startswith("app.protocols."):
            continue  # the registry, and the packages themselves
        reached = sorted(t for t in imported if t.startswith("app.protocols."))
        assert not reached, f"{name} imports {reached}: ask app.protocols.of(campaign) instead"


def test_a_protocol_package_uses_only_the_layers_below_it():
    edges = graph()
    for name, imported in edges.items():
        if not name.startswith("app.protocols."):
            continue
        own = ".".join(name.split(".")[:3])
        for target in imported:
            assert not target.startswith(ABOVE_PROTOCOLS), f"{name} imports {target}, a layer above it"
            if target.startswith("app.protocols."):
                assert target.startswith(own + ".") or target == own, f"{name} imports another protocol: {target}"


def test_the_statistics_do_not_import_flask_nor_the_site():
    edges = graph()
    for name, imported in edges.items():
        if name.startswith("app.stats"):
            outside = sorted(t for t in imported if not t.startswith("app.stats") and t != "app")
            assert not outside, f"{name} imports {outside}"


# The protocols' analyses; formats.py, the registry, is the one module of app.stats that names them.
STATS_PROTOCOLS = ("app.stats.pairwise", "app.stats.da", "app.stats.esa")


def stats_protocol_of(name):
    """The protocol package of app.stats that ``name`` belongs to, or None (shared)."""
    return next((p for p in STATS_PROTOCOLS if name == p or name.startswith(p + ".")), None)


def test_a_protocol_analysis_imports_no_other_protocol_nor_the_dispatcher():
    edges = graph()
    for name, imported in edges.items():
        if not name.startswith("app.stats"):
            continue
        own = stats_protocol_of(name)
        for target in imported:
            reached = stats_protocol_of(target)
            if own is None:   # shared code: the package's front and the registry may name a protocol
                assert reached is None or name in ("app.stats", "app.stats.formats"), \
                    f"{name} imports {target}: shared code asks app.stats.formats"
            else:
                assert reached in (own, None), f"{name} imports another protocol's analysis: {target}"
                assert target not in ("app.stats.cli", "app.stats.formats"), f"{name} imports {target}, above it"


@pytest.mark.parametrize("chunk", range(4))
def test_every_module_imports_alone(chunk):
    """Each module imported first, in a fresh interpreter's state: an import
    that works only after another module was loaded fails here. The app's
    modules are forgotten between two imports (one interpreter per quarter
    of the modules keeps this at seconds)."""
    names = sorted(modules())[chunk::4]
    code = (
        "import importlib, sys\n"
        f"for name in {names!r}:\n"
        "    for loaded in [m for m in sys.modules if m == 'app' or m.startswith('app.')]:\n"
        "        del sys.modules[loaded]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        print(name, type(exc).__name__, exc)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout == "", result.stdout + result.stderr
