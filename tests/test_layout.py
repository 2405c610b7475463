"""The package layout (docs/development.md): every module has a layer, imports (at the top or inside
functions, relative ones resolved) reach only its own layer or lower, and neither the modules nor the
subsystems (tealeaves.<first name>) import each other in a circle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "tealeaves"

# the layers of docs/development.md, lowest first: a module belongs to the longest entry that is its
# name or a package holding it
LAYERS = {
    "tealeaves.errors": 0,
    "tealeaves.util": 1.0, "tealeaves.files": 1.1, "tealeaves.output": 1.2,  # layer 1: utilities
    "tealeaves.model": 2, "tealeaves.topics": 2,
    "tealeaves.corpus": 2, "tealeaves.io": 2, "tealeaves.datasets": 2,
    "tealeaves.synthetic": 2, "tealeaves.sampling": 2, "tealeaves.judgments": 2,
    "tealeaves.heldout": 3, "tealeaves.compare": 3, "tealeaves.csl": 3, "tealeaves.coherence": 3,
    "tealeaves.clustering": 3, "tealeaves.intrusion": 3, "tealeaves.diagnostics": 3,
    "tealeaves.proxann": 3, "tealeaves.metaeval": 3, "tealeaves.judge": 3,
    "tealeaves.evaluate": 4, "tealeaves.select": 4, "tealeaves.report": 4, "tealeaves.annotate": 4,
    "tealeaves.cli": 5, "tealeaves.__main__": 5,
}
ROOT = "tealeaves"  # __init__.py: the lazy public API, above every layer; others may take __version__


def modules(src: Path = SRC) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package's __init__) for every module under `src`."""
    out = {}
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def imports(name: str, path: Path, is_package: bool, known: set[str]) -> set[str]:
    """The tealeaves modules `name` imports anywhere in its file (a name imported from a package is
    the submodule when there is one, else the package); `from tealeaves import __version__` is left out."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in known else module
                       for a in node.names if not (module == ROOT and a.name == "__version__")]
        else:
            continue
        for target in targets:
            while target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if target.split(".")[0] == ROOT and target != name:
                found.add(target)
    return found


def layer(name: str) -> float | None:
    owners = [k for k in LAYERS if name == k or name.startswith(k + ".")]
    return LAYERS[max(owners, key=len)] if owners else None


def subsystem(name: str) -> str:
    return ".".join(name.split(".")[:2])


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle in `graph` (a path that ends where it starts), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def graph(src: Path = SRC) -> dict[str, set[str]]:
    mods = modules(src)
    return {name: imports(name, path, pkg, set(mods)) for name, (path, pkg) in mods.items() if name != ROOT}


def problems(src: Path = SRC) -> list[str]:
    """Every breach of the layout, as lines a reader can act on."""
    g = graph(src)
    out = [f"{name} has no layer: add it (or its package) to LAYERS in tests/test_layout.py and to the "
           "tree in docs/development.md" for name in g if layer(name) is None]
    for name, targets in sorted(g.items()):
        for t in sorted(targets):
            if t == ROOT:
                out.append(f"{name} imports the package root {ROOT} (only __version__ may be taken from it)")
            elif None not in (layer(name), layer(t)) and layer(t) > layer(name):
                out.append(f"{name} (layer {layer(name)}) imports {t} (layer {layer(t)}), a higher layer")
    if found := cycle(g):
        out.append("modules import each other in a circle: " + " -> ".join(found))
    subsystems: dict[str, set[str]] = {}
    for name, targets in g.items():
        subsystems.setdefault(subsystem(name), set()).update(
            subsystem(t) for t in targets if subsystem(t) != subsystem(name))
    if found := cycle(subsystems):
        out.append("subsystems import each other in a circle: " + " -> ".join(found))
    return out


def test_layout_holds():
    assert problems() == []


def test_every_layer_entry_exists():
    """A stale entry (a module or package that was moved or removed) is an error too."""
    names = set(modules())
    assert [k for k in LAYERS if k not in names] == []


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "tealeaves"
    for path, _ in modules().values():
        target = dst / path.relative_to(SRC)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    return dst


@pytest.mark.parametrize("module, line, expected", [
    ("files/atomic.py", "from ..heldout import heldout", "tealeaves.files.atomic (layer 1.1) imports "
                                                         "tealeaves.heldout (layer 3), a higher layer"),
    ("util/text.py", "from ..output import display", "tealeaves.util.text (layer 1.0) imports "
                                                     "tealeaves.output.display (layer 1.2)"),
    ("heldout/exact.py", "def f():\n    from ..cli.main import main",  # inside a function counts too
     "tealeaves.heldout.exact (layer 3) imports tealeaves.cli.main (layer 5)"),
    ("util/text.py", "from .stages import Stages", None),  # same layer, no circle: fine
    ("files/csvout.py", "from . import records", "modules import each other in a circle"),
    ("heldout/result.py", "from ..compare import align",  # heldout -> compare -> heldout
     "subsystems import each other in a circle"),
    ("helpers.py", "", "tealeaves.helpers has no layer: add it"),
    ("corpus.py", "from . import datasets", "modules import each other in a circle"),
])
def test_a_breach_is_found(tmp_path, module, line, expected):
    """The checks can fail: each edit to a copy of the package breaks the layout in one way."""
    copy = _copy(tmp_path)
    path = copy / module
    path.write_text((path.read_text(encoding="utf-8") if path.exists() else "") + f"\n{line}\n",
                    encoding="utf-8")
    found = problems(copy)
    if expected is None:
        assert found == []
    else:
        assert any(expected in p for p in found), found
