"""Fuzz the command line: hundreds of malformed or adversarial command lines, run in-process.

Every case goes through ``theorems.cli.main(argv)`` and must end with exit 0, 1 or 2 and no other
exception; exit 2 comes with exactly one line on stderr, starting ``theorems: error:``; a record
printed with ``--json`` never has verdict ``error`` (that verdict is reserved for a bug: bad input
is exit 2, a legal input the check cannot resolve is ``inconclusive``).  ``explore`` sessions read
random bytes and adversarial commands from standard input and must end normally without an
internal exception shown as ``error: SomethingError: ...``.

The cases are drawn once, at collection, from a fixed seed (Python's ``random``), over claims of
every document.  Most of them fail validation (fast); real checks run only on CHEAP claims, whose
default run and range ends measured under 1.5 s each (scripts/range_ends.py).  ``certify`` never
starts pytest here: ``subprocess.call`` is replaced by a stub (pytest wrote no records: exit 2).
"""
from __future__ import annotations

import io
import json
import math
import random
import re
import sys

import pytest

from theorems.cli import main
from theorems.documents import DOCUMENTS
from theorems.vocabulary import STATUSES
from theorems.registry import all_claims

SEED = 20250117
N_CASES = 460

# default numeric run < 0.05 s and every declared range end < 1.5 s (scripts/range_ends.py, 2 cores)
CHEAP = {
    "jacot": ["jacot.coi_lower_bound", "jacot.coi_equals_rank", "jacot.erratum_prop1_image_hypothesis",
              "jacot.k_norm", "jacot.discrete_step_condition"],
    "vanrossem": ["vanrossem.lyapunov_identity", "vanrossem.two_point_dataset", "vanrossem.gradient_factor",
                  "vanrossem.reduced_system"],
    "menon": ["menon.gd_balance_drift", "menon.end_to_end_any_g", "menon.svd_parametrisation",
              "menon.infinite_depth_entropy", "menon.a_operator_spectrum", "menon.balanced_invariance"],
    "chen": ["chen.truncation_sectors", "chen.theorem_9_1", "chen.output_layer", "chen.gauge_invariance"],
    "sander": ["sander.sinkhorn_attention", "sander.revnet_instability", "sander.topk_lmo",
               "sander.topk_isotonic_min", "sander.init_trivial_ode", "sander.psi_eps_range"],
}

BIG_INT = "1" + "0" * 400          # fits no float
HUGE_INT = "9" * 5000              # over Python's int-from-string digit limit
DEEP = "[" * 3000 + "]" * 3000     # RecursionError in the JSON decoder
JUNK_VALUES = [
    BIG_INT, "-" + BIG_INT, HUGE_INT, DEEP, "[" * 50 + "1" + "]" * 50, "NaN", "Infinity", "-Infinity", "1e400",
    "-1e400", "", " ", "[", "]", "{", '"x"', '""', "true", "false", "null", "[]", "[[]]", "[[], []]",
    "[[1,2],[3]]", "[1,[2]]", "{}", '{"a": 1}', '["1", "2"]', "[true, false]", "[[1e400]]", "[[" + BIG_INT + "]]",
    "[" + BIG_INT + "]", "0x10", "1_000", "--1", "+1", ".5", "1.", "01", "\u00e9", "\udcff\udcfe", "\x00",
    "1 2", "1,2", "[1 2]", "[[1, NaN]]", "-0", "1e-400", "5e-324", "1.7976931348623157e308", "-1.7976931348623157e308",
]


def _claims():
    claims = all_claims()
    by_doc = {d: [c for c in claims if c.document == d] for d in DOCUMENTS}
    assert all(by_doc.values()), "every document has claims"
    return claims, by_doc


def _end(p, which, rng):
    if p.kind == "float":
        if which == "low":
            return math.nextafter(p.low, math.inf) if p.low_open else p.low
        if which == "high":
            return math.nextafter(p.high, -math.inf) if p.high_open else p.high
        lo = math.nextafter(p.low, math.inf) if p.low_open else p.low
        return rng.uniform(lo, p.high) if which == "uniform" else p.default
    if p.kind == "int":
        return {"low": p.low, "high": p.high}.get(which, rng.randint(p.low, p.high) if which == "uniform" else p.default)
    if p.kind == "bool":
        return rng.choice([True, False])
    if p.kind == "choice":
        return rng.choice(list(p.choices))
    return None


def _legal_matrix(rng, kind):
    """A value of the right kind that may have the wrong shape or extreme entries."""
    entry = lambda: rng.choice([0.0, 1.0, -1.0, 1e300, -1e300, 1e-300, 0.5, rng.gauss(0, 1), rng.gauss(0, 1)])  # noqa: E731
    if kind == "vector":
        return [entry() for _ in range(rng.randint(1, 6))]
    shape = (rng.randint(1, 4), rng.randint(1, 4))
    m = [[entry() for _ in range(shape[1])] for _ in range(shape[0])]
    return [m, m] if kind == "matrices" else m


def _make_cases():
    rng = random.Random(SEED)
    claims, by_doc = _claims()
    ids = [c.id for c in claims]
    cheap = [cid for d in DOCUMENTS for cid in CHEAP[d]]
    cases = []

    def claim_any():  # a document first, so that every document is drawn as often
        return rng.choice(by_doc[rng.choice(list(DOCUMENTS))])

    def bad_id():
        cid = rng.choice(ids)
        return rng.choice([
            cid.upper(), cid + "x", cid[:-1], cid.replace(".", "_"), cid.split(".")[0], "." + cid, cid + " ",
            "", " ", ".", "x" * 300, cid.replace("_", "-"), "\udcff" + cid, cid + "\u00e9", "nope.nope"])

    def check_junk_param():
        c = claim_any()
        names = [p.name for p in c.params] or ["x"]
        name = rng.choice(names + ["nonesuch", "", " ", "=", names[0].upper()])
        val = rng.choice(JUNK_VALUES)
        argv = ["check", c.id, "--param", f"{name}={val}" if rng.random() < 0.9 else name]
        if rng.random() < 0.5:
            argv.append("--json")
        return argv

    def check_out_of_range():
        c = claim_any()
        ps = [p for p in c.params if p.kind in ("int", "float")]
        if not ps:
            return check_junk_param()
        p = rng.choice(ps)
        span = (p.high - p.low) or 1
        v = rng.choice([p.low - span, p.high + span, p.low - 1, p.high + 1, -1e308, 1e308,
                        p.low if p.low_open else p.low - 1e-9 * span - 1e-300,
                        p.high if p.high_open else p.high + 1e-9 * span + 1e-300])
        if p.kind == "int":
            v = rng.choice([int(p.low) - 1, int(p.high) + 1, 2**64, -2**64, p.low + 0.5])
        return ["check", c.id, "--param", f"{p.name}={json.dumps(v)}", "--json"]

    def check_bad_option():
        c = claim_any()
        opt = rng.choice(["--variant", "--backend"])
        val = rng.choice(["", " ", "nonesuch", "NUMPY", "stated ", "cupy", "mpmath", "numba", "\udcff",
                          "corrected" if c.status == "holds" else "stated", "x" * 500])
        return ["check", c.id, opt, val, "--json", "--param", f"{rng.choice(JUNK_VALUES[:8])}=1"] \
            if rng.random() < 0.2 else ["check", c.id, opt, val, "--param", "nonesuch=1"]

    def check_params_file():
        c = claim_any()
        other = rng.choice(ids)
        contents = [
            None, "DIR", b"", b"\xff\xfe\x00", b"{not json", b"[1, 2]", b"null", b'"params"', DEEP.encode(),
            ('{"seed": ' + HUGE_INT + "}").encode(),
            json.dumps({"claim": other, "check": "falsifier", "variant": "stated", "params": {}}).encode(),
            json.dumps({"claim": c.id, "params": [1, 2]}).encode(),
            json.dumps({"claim": c.id, "params": {}, "counterexample": {"params": [1]}}).encode(),
            json.dumps({"claim": c.id, "params": {}, "counterexample": "x"}).encode(),
            json.dumps({"claim": c.id, "check": rng.choice(["symbolic", "reproduction", "bogus", 3]),
                        "variant": "stated", "params": {}}).encode(),
            json.dumps({"claim": c.id, "variant": "nonesuch", "params": {}}).encode(),
            json.dumps({"claim": [c.id], "params": {}}).encode(),
            json.dumps({"params": {"nonesuch": 1}}).encode(),
            json.dumps({"nonesuch": 1}).encode(),
            json.dumps({"params": {p.name: rng.choice([BIG_INT, "x", [[1]], None]) for p in c.params[:2]}}).encode()
            .replace(b'"' + BIG_INT.encode() + b'"', BIG_INT.encode()),
        ]
        content = rng.choice(contents)
        argv = ["check", c.id, "--params-file", "{tmp}/pf.json" if content not in (None, "DIR") else
                ("{tmp}/missing.json" if content is None else "{tmp}")]
        if rng.random() < 0.3:
            argv.append("--json")
        return argv, ({"pf.json": content} if isinstance(content, bytes) else {})

    def check_cheap_real():
        from theorems.registry import get_claim
        c = get_claim(rng.choice(cheap))
        argv = ["check", c.id, "--json"]
        ps = list(c.params)
        rng.shuffle(ps)
        for p in ps[: rng.randint(1, 2)]:
            if p.kind in ("matrix", "matrices", "vector"):
                v = _legal_matrix(rng, p.kind)
            else:
                v = _end(p, rng.choice(["low", "high", "uniform", "default"]), rng)
            argv += ["--param", f"{p.name}={json.dumps(v)}"]
        variants = list(c.variants())
        if variants and rng.random() < 0.3:
            argv += ["--variant", rng.choice(variants)]
        return argv

    def list_show():
        return rng.choice([
            ["list", "--status", rng.choice(["", "Holds", "proved", "\udcff", *STATUSES])],
            ["list", "--document", rng.choice(["", "JACOT", "x", *DOCUMENTS]), "--json"],
            ["list", "--status", rng.choice(STATUSES), "--document", rng.choice(list(DOCUMENTS))],
            ["show", bad_id()], ["show", rng.choice(ids)], ["show", rng.choice(ids), "--json"],
            ["check", bad_id()], ["explore", bad_id()],
        ])

    def certify():
        argv = ["certify"]
        if rng.random() < 0.5:
            argv += ["--profile", rng.choice(["", "ci", "dev", "nope", "CI"])]
        if rng.random() < 0.5:
            argv += ["--document", rng.choice(["", " ", "menon", "nope", "MENON"])]
        if rng.random() < 0.5:
            argv += ["--select", rng.choice(["", " ", "a and", "(", "not", "balanced_invariance", "a or b",
                                             "(" * 2000, "x" * 300, "a) or (b"])]
        if rng.random() < 0.3:
            argv += ["--seed", rng.choice(["-1", "4294967296", "x", "1e3", "7", BIG_INT])]
        argv += ["--out", rng.choice(["{tmp}/out", "{tmp}/file/sub", "{tmp}/file", "", "{tmp}/" + "y" * 300])]
        return argv, {"file": b"x"}

    def report():
        content = rng.choice([b"", b"{}", b'{"records": 3}', b'{"records": [1]}', b"\xff", DEEP.encode(),
                              b'{"records": [], "claims": {}}'])
        return (["report", "--results", rng.choice(["{tmp}/r.json", "{tmp}", "{tmp}/missing.json"]),
                 "--format", rng.choice(["html", "latex", "docx", "", "HTML"]),
                 "--out", rng.choice(["{tmp}/o.html", "{tmp}", "{tmp}/file/sub.html"])],
                {"r.json": content, "file": b"x"})

    def argparse_junk():
        return rng.choice([
            [], ["--help-me"], ["check"], ["check", "--param"], ["check", rng.choice(ids), "--param"],
            ["certify", "--seed"], ["certify", "--seed", "x"], ["list", "--json", "extra"], ["frobnicate"],
            ["check", rng.choice(ids), "--params-file"], ["report"], ["show"], ["\udcff"],
        ])

    def explore():
        from theorems.registry import get_claim
        c = get_claim(rng.choice(cheap))
        names = [p.name for p in c.params] or ["x"]
        lines = []
        for _ in range(rng.randint(1, 6)):
            lines.append(rng.choice([
                "show", "help", "record", "reset", "seed x", "seed " + BIG_INT, "profile nope",
                f"set {rng.choice(names)}={rng.choice(JUNK_VALUES)}".encode("utf-8", "surrogateescape"),
                f"set {rng.choice(names)}", "load {tmp}", "load {tmp}/pf.json", "load {tmp}/missing.json",
                "save {tmp}/file/sub.json", "save {tmp}", "save", "load", "run nonesuch", "frobnicate", "run", "run",
                bytes(rng.randrange(256) for _ in range(rng.randint(1, 12))), "\t", "'", '"',
            ]))
        lines.append(rng.choice(["quit", "EOF", ""]))
        data = b"\n".join(x if isinstance(x, bytes) else x.encode("utf-8", "surrogateescape") for x in lines)
        return ["explore", c.id], {"pf.json": rng.choice([DEEP.encode(), b"[1]", b"\xff", b"{}"]), "file": b"x"}, data

    gens = [(check_junk_param, 30), (check_out_of_range, 12), (check_bad_option, 8), (check_params_file, 14),
            (check_cheap_real, 14), (list_show, 7), (certify, 5), (report, 4), (argparse_junk, 2), (explore, 4)]
    pool = [g for g, w in gens for _ in range(w)]
    for i in range(N_CASES):
        g = rng.choice(pool)
        out = g()
        if isinstance(out, list):
            out = (out, {}, None)
        elif len(out) == 2:
            out = (*out, None)
        cases.append(pytest.param(*out, id=f"{i:03d}-{g.__name__}"))
    return cases


CASES = _make_cases()


def test_case_count_and_coverage():
    assert len(CASES) >= 400
    ids = " ".join(" ".join(map(str, c.values[0])) for c in CASES)
    for d in DOCUMENTS:
        assert f" {d}." in ids, d
    for cmd in ("check", "show", "list", "certify", "report", "explore"):
        assert any(c.values[0][:1] == [cmd] for c in CASES), cmd


INTERNAL = re.compile(r"error: [A-Z]\w*(Error|Exception|Warning|Interrupt)\b")


@pytest.mark.parametrize("argv, files, stdin", CASES)
def test_fuzzed_command_line(argv, files, stdin, tmp_path, capsys, monkeypatch):
    import subprocess
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    monkeypatch.setattr(subprocess, "call", lambda *a, **k: 5)  # certify: never start pytest here
    monkeypatch.chdir(tmp_path)
    if stdin is not None:
        stdin = stdin.replace(b"{tmp}", str(tmp_path).encode())
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), (argv, code, err[-500:])
    if code == 2:
        lines = err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("theorems: error: "), (argv, err[-1000:])
    assert "Traceback" not in err and "Traceback" not in out, (argv, err[-2000:], out[-2000:])
    if argv[:1] == ["check"] and "--json" in argv and code in (0, 1):
        rec = json.loads(out)
        assert rec["verdict"] != "error", (argv, rec["message"], rec["values"].get("traceback", "")[-800:])
    if argv[:1] == ["check"] and code in (0, 1) and "--json" not in argv:
        assert ": ERROR" not in out.splitlines()[1 if out.startswith("replaying") else 0], (argv, out[:1000])
    if argv[:1] == ["explore"] and code == 0:
        assert not INTERNAL.search(out), (argv, INTERNAL.search(out).group(0), out[-1500:])
