"""What a newcomer meets first (issue 31, item 5): an empty registry says which registry it read and
what to type; `verify --help` explains SPEC and KERNEL with a command that works; a kernel that is not
Python, or is written for another backend than the one verifying it, is refused in one line (exit 2)
before torch loads and is never recorded; a candidate nothing could check here (exit 3) is shown as
"not verifiable here", in yellow, never as a red failure."""
from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from conftest import KERNELS, ROOT, TINY, write
from opforge import cli
from opforge.backends import BACKENDS, DEFAULT, describe, known
from opforge.harness import intake
from opforge.harness.errors import OpforgeError

OPFORGE = str(Path(sys.executable).parent / "opforge")
# The CLI in a fresh interpreter that says afterwards whether torch was imported on the way.
WITNESS = ("import sys\nfrom opforge.cli import main\ncode = main(sys.argv[1:])\n"
           "print('torch imported:', 'torch' in sys.modules)\nsys.exit(code)\n")
ASCENDC = ROOT / "tests" / "data" / "ascendc"


def refused(*args: str) -> tuple[str, str]:
    """Run the CLI on bad input: it exits 2 with one line on stderr and no traceback. (that line,
    whether torch was imported)."""
    done = subprocess.run([sys.executable, "-c", WITNESS, *args], capture_output=True, text=True, cwd=ROOT, timeout=300)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith("opforge: error:"), done.stderr
    return lines[0], done.stdout.strip().splitlines()[-1]


def foreign_examples() -> list[tuple[str, Path]]:
    """(backend, a known-good kernel of it) for each backend whose kernels the default backend does not
    claim: what a newcomer might give `verify` without --backend."""
    found = []
    for name, row in BACKENDS.items():
        examples = sorted((row.folder / "knowledge").glob("*.py"))
        if name != DEFAULT and row.module and examples and not describe(DEFAULT).looks_like(examples[0].read_text()):
            found.append((name, examples[0]))
    return found


def test_there_are_foreign_examples_to_test_with():
    assert len(foreign_examples()) >= 2  # CUDA and AscendC today


@pytest.mark.parametrize("name, kernel", foreign_examples(), ids=[n for n, _ in foreign_examples()])
def test_another_backends_kernel_without_backend_is_named_and_not_recorded(name, kernel, tmp_path):
    db = tmp_path / "r.db"
    line, torch = refused("--db", str(db), "verify", "ops/softmax.py", str(kernel))
    assert f"add --backend {name}" in line and describe(name).label in line, line
    assert torch == "torch imported: False"
    assert not db.exists()  # nothing recorded: the registry was never opened
    # Named, the same file passes the input checks (what its verification says is its own business).
    assert intake.check_verify_input(ROOT / "ops/softmax.py", kernel, name) == kernel.read_text()


def test_each_backends_examples_look_like_its_own():
    for name, row in BACKENDS.items():
        for example in sorted((row.folder / "knowledge").glob("*.py")):
            assert name in intake.claims(example.read_text()), f"{name} does not claim {example}"
    assert intake.claims("import torch\n\nclass ModelNew(torch.nn.Module):\n    pass\n") == []


@pytest.mark.parametrize("args, words", [
    (("verify", "ops/softmax.py", "missing.py"), "missing.py: kernel file not found"),
    (("verify", "missing.py", str(KERNELS / "good.py")), "missing.py: spec file not found"),
    (("verify", "ops/softmax.py", str(KERNELS / "good.py"), "--backend", "metal"), "unknown backend 'metal'"),
    (("verify", "--backend=metal", "ops/softmax.py", str(KERNELS / "good.py")), "unknown backend 'metal'"),
    (("verify", "--trials", "2", "ops/softmax.py", "missing.py", "--json"), "missing.py: kernel file not found"),
])
def test_bad_input_is_refused_before_torch_loads(args, words, tmp_path):
    line, torch = refused("--db", str(tmp_path / "r.db"), *args)
    assert words in line and torch == "torch imported: False", line
    assert not (tmp_path / "r.db").exists()


@pytest.mark.parametrize("name, content, words", [
    ("k.cu", "__global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }\n", "not a Python file: line 1"),
    ("binary.py", b"\x7fELF\x02\x01\x01\x00\x00\x00", "not a Python file (binary, or not UTF-8 text)"),
    ("typo.py", "import torch\nclass ModelNew(torch.nn.Module)\n    pass\n", "not a Python file: line 2"),
])
def test_a_kernel_that_is_not_python_is_one_line_and_not_recorded(name, content, words, tmp_path):
    kernel = tmp_path / name
    kernel.write_bytes(content if isinstance(content, bytes) else content.encode())
    db = tmp_path / "r.db"
    line, torch = refused("--db", str(db), "verify", "ops/softmax.py", str(kernel), "--backend", DEFAULT)
    assert words in line and torch == "torch imported: False", line
    assert not db.exists()


def test_a_cuda_file_is_told_where_the_backends_candidates_are(tmp_path):
    text = "__global__ void scale(float* x) { x[threadIdx.x] *= 2.0f; }\n"
    (name,) = intake.claims(text)
    with pytest.raises(OpforgeError) as info:
        intake.check_verify_input(ROOT / "ops/softmax.py", write(tmp_path / "k.cu", text))
    message = str(info.value)
    assert f"looks like {describe(name).label}" in message and str(Path(known(name).folder.name) / "knowledge") in message


def test_the_command_line_is_read_like_the_parser_reads_it(tmp_path):
    """check_verify_argv finds the files behind flags and their values, and --backend in any spelling
    argparse takes; other command lines and --help are the parser's."""
    kernel = str(KERNELS / "good.py")
    for argv in (["--db", "x.db", "verify", "--trials", "3", "missing.py", kernel],
                 ["--db=x.db", "verify", "missing.py", "--seed=4", kernel, "--json"]):
        with pytest.raises(OpforgeError, match="missing.py: spec file not found"):
            intake.check_verify_argv(argv)
    for flag in (["--backend", "metal"], ["--backend=metal"], ["--back", "metal"]):
        with pytest.raises(OpforgeError, match="unknown backend 'metal'"):
            intake.check_verify_argv(["verify", str(TINY), kernel, *flag])
    for argv in (["verify", "--help", "missing.py", kernel], ["kernels", "missing.py"], ["verify", "missing.py"]):
        intake.check_verify_argv(argv)  # nothing to say before the parser


def test_every_verify_flag_but_json_takes_one_value():
    """What check_verify_argv assumes to tell a flag's value from a file."""
    (verify,) = [a for a in cli._parser(["verify"])._actions if isinstance(a, argparse._SubParsersAction)]
    for action in verify.choices["verify"]._actions:
        if action.option_strings and action.dest not in ("help", "json"):
            assert isinstance(action, argparse._StoreAction) and action.nargs is None, action.option_strings


def test_verify_help_explains_spec_and_kernel_with_a_working_example():
    done = subprocess.run([OPFORGE, "verify", "--help"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "SPEC the op spec: a Python file with class Model" in text
    assert "KERNEL the candidate: a Python file with class ModelNew" in text
    assert "3 not verifiable here" in text
    (spec, kernel), = re.findall(r"opforge verify (\S+\.py) (\S+\.py)", done.stdout)
    assert (ROOT / spec).is_file() and (ROOT / kernel).is_file()


def test_kernels_on_an_empty_registry_names_it_and_a_first_command(tmp_path):
    db = tmp_path / "empty.db"
    done = subprocess.run([OPFORGE, "--db", str(db), "kernels"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0 and f"no kernels recorded yet in the registry {db}" in done.stdout, done.stdout
    (spec, kernel), = re.findall(r"opforge verify (\S+\.py) (\S+\.py)", done.stdout)
    assert (ROOT / spec).is_file() and (ROOT / kernel).is_file()
    assert "opforge run ops/softmax.py" in done.stdout and "make demo" in done.stdout


def colored(monkeypatch, *argv: str) -> tuple[int, str]:
    """cli.main with its console writing ANSI colours to a buffer: (exit code, output)."""
    buffer = io.StringIO()
    monkeypatch.setattr(cli, "out", Console(file=buffer, force_terminal=True, color_system="standard", width=400,
                                            highlight=False))
    return cli.main(list(argv)), buffer.getvalue()


RED, YELLOW = "\x1b[31m", "\x1b[33m"


def test_a_candidate_nothing_could_check_here_is_yellow_not_red(monkeypatch, isolated_registry):
    """An AscendC project without CANN that calls an API the emulator does not model passes its static
    checks and nothing else can run: exit 3, and verify, kernels and show call it "not verifiable here"
    in yellow with the level it reached."""
    from opforge.backends.ascendc import cann
    from test_ascendc_backend import unmodelled_api

    if cann.unavailable() is None:
        pytest.skip("CANN is installed here: the project builds and runs")
    path = isolated_registry.parent.parent / "unmodelled.py"  # tmp_path
    path.write_text((ASCENDC / "direct_add.py").read_text().replace(
        "AscendC::Add(zLocal, xLocal, yLocal, TILE_LENGTH);", f"AscendC::{unmodelled_api()}(zLocal, xLocal, TILE_LENGTH);"))
    code, shown = colored(monkeypatch, "verify", str(ASCENDC / "add_spec.py"), str(path),
                          "--backend", "ascendc", "--trials", "1")
    assert code == 3 and "NOT VERIFIABLE HERE" in shown and RED not in shown, shown
    code, listed = colored(monkeypatch, "kernels")
    (row,) = [line for line in listed.splitlines() if "add2" in line]
    assert f"{YELLOW}not verifiable here" in row and RED not in row and "static" in row, row
    code, detail = colored(monkeypatch, "show", "1")
    (head,) = [line for line in detail.splitlines() if line.startswith("evaluation #1")]
    assert f"{YELLOW}not verifiable here" in head and "level static" in head and RED not in head, head
    assert "✗" not in detail
    verdict = json.loads(subprocess.run([OPFORGE, "show", "1", "--json"], capture_output=True, text=True,
                                        timeout=300).stdout)["evaluations"][0]
    assert verdict["failed_step"] is None and verdict["level"] == "static"
