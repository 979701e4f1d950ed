"""Shared fixtures: every test gets its own registry file; paths to the test data and the suite."""
from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
SPECS = DATA / "specs"
KERNELS = DATA / "kernels"
TINY = SPECS / "tiny_softmax.py"


def require_runtime(name: str, reason: str | None) -> None:
    """Skip a test whose sandbox runtime is unavailable — or fail it where CI promises the runtime
    (OPFORGE_REQUIRE_SANDBOXES, set by .ci/run), so a missing engine cannot pass silently."""
    if not reason:
        return
    if os.environ.get("OPFORGE_REQUIRE_SANDBOXES"):
        pytest.fail(f"sandbox runtime {name} is required here but unavailable: {reason}")
    pytest.skip(f"{name} unavailable: {reason}")


def require_ascend() -> None:
    """Skip a test that needs Huawei's triton-ascend prefix (make setup installs it) when it is
    missing — or fail it under OPFORGE_CI, where setup promises it."""
    from opforge.backends.triton_ascend import toolchain

    _, reason = toolchain.cached()
    if not reason:
        return
    if os.environ.get("OPFORGE_CI"):
        pytest.fail(f"the triton-ascend toolchain is required here but unavailable: {reason}")
    pytest.skip(reason)


# The longest single units of work, scheduled first: pytest-xdist hands scopes (an xdist_group, else
# one test) to workers in collection order, so a 7-minute group collected last would run alone at the
# end while the other worker idles. Per-file totals of a full run (junit, 2 workers): the export
# suite's fixture 319 s, the decoder layer's batch 168 s; the wheel group builds a wheel and a venv.
HEAVY_FIRST = ("test_export_suite.py", "test_suite.py", "test_decoder_layer.py", "test_engine_vllm.py", "test_wheel.py",
               "test_sandbox_adversarial.py", "test_batch.py")


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order


@pytest.fixture(scope="session")
def default_sandbox() -> str:
    """The runtime for tests that are not about isolation: the cheap jail when available, else
    docker; without either (a laptop, not CI) `none`, so the rest of the suite still runs."""
    from opforge.sandbox import docker_runtime, jail

    for name, unavailable in (("jail", jail.unavailable), ("docker", docker_runtime.unavailable)):
        if unavailable() is None:
            return name
    if os.environ.get("OPFORGE_REQUIRE_SANDBOXES"):
        pytest.fail("no isolating sandbox runtime available, and OPFORGE_REQUIRE_SANDBOXES is set")
    return "none"


@pytest.fixture(autouse=True)
def isolated_registry(tmp_path, monkeypatch, default_sandbox):
    """A fresh registry per test via OPFORGE_DB; the test session's sandbox runtime."""
    db = tmp_path / "registry" / "opforge.db"
    monkeypatch.setenv("OPFORGE_DB", str(db))
    monkeypatch.setenv("OPFORGE_SANDBOX", default_sandbox)
    return db


# Seeded trials per input variant in the suite fixture: `make kernels` verifies with the harness's 5;
# the tests take 2 (the export's files do not depend on it, test_export_suite compares them), which
# kept about two minutes out of make test.
SUITE_TRIALS = 2


@pytest.fixture(scope="session")
def suite_export(tmp_path_factory, default_sandbox) -> SimpleNamespace:
    """The standard suite's known-good kernels verified (CPU, the exporter's fixed seed, SUITE_TRIALS)
    and exported with the wheel, once: test_suite.py checks each verdict, test_export_suite.py the
    library. Both modules are in the xdist group "export_suite", so one worker pays for it (it
    was paid twice, about 10 minutes of the suite's CPU time). `error` is the export's refusal,
    if a known-good kernel failed; the per-op verdicts are kept either way."""
    from opforge.exporter.suite import export_suite
    from opforge.harness.errors import OpforgeError
    from opforge.registry import Registry

    tmp = tmp_path_factory.mktemp("export_suite")
    verified: dict = {}
    result, error = None, None
    with Registry(tmp / "suite.db") as reg:
        try:
            result = export_suite(reg, tmp / "kernels_generated", sandbox=default_sandbox, wheel=True,
                                  on_op=lambda op: verified.__setitem__(op.op, op), trials=SUITE_TRIALS)
        except OpforgeError as exc:
            error = str(exc)
    return SimpleNamespace(verified=verified, result=result, error=error)


def require_ray():
    """The ray module; a skip without it, or a failure under OPFORGE_CI (a dev dependency there)."""
    try:
        import ray
    except ImportError:
        if os.environ.get("OPFORGE_CI"):
            pytest.fail("ray is a dev dependency and must be installed in CI (make setup)")
        pytest.skip("ray is not installed: pip install 'opforge[ray]'")
    return ray


@pytest.fixture
def local_ray(monkeypatch):
    """A local Ray instance (2 CPUs) for the tests of the xdist group "ray": the first of them starts
    it and it is shut down after the last of a row of them (pytest_runtest_teardown), so the group
    pays one start (~8 CPU-s: GCS, raylet, workers importing torch) instead of one per test. Its
    workers inherit the environment of ray.init, which is taken without an LLM endpoint."""
    for name in ("OPFORGE_LLM_BASE_URL", "OPFORGE_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    ray = require_ray()
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    return ray


def pytest_runtest_teardown(item, nextitem):
    if "local_ray" in getattr(item, "fixturenames", ()) and "local_ray" not in getattr(nextitem, "fixturenames", ()):
        import ray

        ray.shutdown()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def default_sigint() -> None:
    """preexec_fn for a child a test will Ctrl-C: SIGINT back to its default. A suite started as a
    background job inherits SIGINT ignored, and Python then never raises KeyboardInterrupt."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for(check, timeout: float, what: str, interval: float = 0.1):
    """Poll `check()` until it returns something other than None and return that; fail the test
    after `timeout` seconds. What tests wait on instead of sleeping for a guessed time."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (value := check()) is not None:
            return value
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout:g} s waiting for {what}")
