"""The framework's layering: no import cycle among its modules (function-level imports included),
no frame inspection, the claim index fresh, and loading that costs what it runs."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "theorems"
FRAMEWORK = sorted(p.stem for p in PKG.glob("*.py") if p.stem not in ("__init__", "__main__"))
#: the layers, lowest first: a module may import only modules of earlier layers (DESIGN.md)
LAYERS = [
    {"matrices"},
    {"params", "timebox"},
    {"vocabulary", "documents"},
    {"record", "profiles"},
    {"registry"},
    {"claim", "search"},
    {"runner"},
    {"pytest_plugin", "explore", "sweep"},
    {"cli"},
]


def _imports(path: Path) -> set[str]:
    """Every framework module ``path`` imports, at module level or inside a function."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:
                out.add(node.module.split(".")[0])
            elif node.level == 1:
                out.update(a.name for a in node.names)
            elif node.module and node.module.startswith("theorems."):
                out.add(node.module.split(".")[1])
            elif node.module == "theorems":
                out.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("theorems."):
                    out.add(a.name.split(".")[1])
    return {m for m in out if m in FRAMEWORK}


def test_every_framework_module_has_a_layer():
    assert set().union(*LAYERS) == set(FRAMEWORK)


def test_no_import_cycle_and_imports_point_down():
    layer = {m: i for i, group in enumerate(LAYERS) for m in group}
    graph = {m: _imports(PKG / f"{m}.py") - {m} for m in FRAMEWORK}
    for m, deps in graph.items():
        for d in deps:
            assert layer[d] < layer[m], f"theorems.{m} (layer {layer[m]}) imports theorems.{d} (layer {layer[d]})"
    # and, independently of the layer table, no cycle (depth-first search)
    state: dict[str, int] = {}

    def visit(m, stack):
        state[m] = 1
        for d in graph[m]:
            assert state.get(d) != 1, "import cycle: " + " -> ".join(stack + [m, d])
            if d not in state:
                visit(d, stack + [m])
        state[m] = 2

    for m in graph:
        if m not in state:
            visit(m, [])


def test_document_packages_import_nothing():
    """A document package's __init__ holds its metadata only: `theorems list` imports it, never its claims."""
    for init in PKG.glob("*/__init__.py"):
        tree = ast.parse(init.read_text())
        assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))], init


def test_the_cycle_detector_finds_a_planted_cycle(tmp_path):
    """The walker must see function-level imports (a planted `from .cli import main` inside a
    function of params.py is an upward import)."""
    src = (PKG / "params.py").read_text() + "\n\ndef _planted():\n    from .cli import main\n    return main\n"
    p = tmp_path / "params.py"
    p.write_text(src)
    assert "cli" in _imports(p)


def test_no_frame_inspection():
    for p in list(PKG.rglob("*.py")) + list((ROOT / "solvers").rglob("*.py")):
        assert "inspect.stack(" not in p.read_text(), p


def test_index_is_fresh():
    """`theorems list` and `theorems check` read theorems/index.json; it must describe every claim as
    the modules declare them (rebuild with `python -m theorems.registry`)."""
    from theorems import registry
    assert registry.index_is_fresh(), "theorems/index.json is stale: run `python -m theorems.registry`"
    built = json.loads(json.dumps(registry.build_index(), default=str))
    saved = json.loads(registry.INDEX.read_text())
    from theorems.record import jsonable
    assert jsonable(built) == saved, "theorems/index.json differs from the claims: run `python -m theorems.registry`"


def _imported_by(code: str) -> set[str]:
    r = subprocess.run([sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
                       capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return set(json.loads(r.stdout.strip().splitlines()[-1]))


def test_list_imports_no_claim_sympy_or_numba():
    mods = _imported_by("import io, contextlib\nfrom theorems.cli import main\n"
                        "with contextlib.redirect_stdout(io.StringIO()): main(['list'])")
    assert not {m for m in mods if m.startswith(("sympy", "numba", "scipy", "hypothesis", "dask", "distributed"))}
    assert not {m for m in mods if m.count(".") == 2 and m.startswith("theorems.")
                and m.split(".")[1] in ("jacot", "vanrossem", "menon", "chen", "sander")}


def test_check_imports_only_the_claims_module():
    mods = _imported_by("import io, contextlib\nfrom theorems.cli import main\n"
                        "with contextlib.redirect_stdout(io.StringIO()): main(['check', 'menon.balanced_invariance'])")
    claims = {m for m in mods if m.count(".") == 2 and m.split(".")[1] in ("jacot", "vanrossem", "menon", "chen", "sander")}
    assert claims <= {"theorems.menon.invariance", "theorems.menon._common"}, claims
