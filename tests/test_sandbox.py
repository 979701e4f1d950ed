"""Choosing a runtime and what every runtime reports about a job."""
from __future__ import annotations


import pytest

from conftest import KERNELS, TINY, require_runtime
from harness.verify import VerifyOptions, verify
from sandbox import Job, docker_runtime, get_sandbox, jail
from sandbox.errors import SandboxUnavailable

BUILD = Job({"mode": "build", "sizes": {}, "seed": 1, "device": "cpu", "arch": 90},
            {"spec.py": str(TINY), "candidate.py": str(KERNELS / "good.py")}, 120)


def require(name: str) -> None:
    require_runtime(name, {"docker": docker_runtime.unavailable, "jail": jail.unavailable}[name]())


def test_unknown_runtime_is_an_error():
    with pytest.raises(SandboxUnavailable, match="sandbox runtime 'vm' is not available"):
        get_sandbox("vm")


def test_auto_prefers_docker_when_an_engine_answers(monkeypatch):
    require("docker")
    monkeypatch.delenv("OPFORGE_SANDBOX")
    assert get_sandbox().name == "docker"


def test_explicit_docker_without_engine_fails_loudly_and_auto_falls_back(monkeypatch, tmp_path):
    require("jail")
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    docker_runtime.client.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="'docker' is unavailable: no Docker engine answers"):
            get_sandbox("docker")
        assert get_sandbox("auto").name == "jail"
    finally:
        monkeypatch.delenv("DOCKER_HOST")
        docker_runtime.client.cache_clear()


@pytest.mark.parametrize("name", ["none", "jail", "docker"])
def test_every_runtime_returns_the_result_and_its_cost(name):
    if name != "none":
        require(name)
    sandbox = get_sandbox(name)
    try:
        result = sandbox.run(BUILD)
    finally:
        sandbox.close()
    assert result.ok and result.cause is None and result.runtime == name
    assert result.payload["build"]["kernels"][0]["kernel"] == "_softmax_kernel"
    assert result.cpu_s > 0.5 and result.peak_rss_mb > 100 and result.wall_s > 0


def test_docker_keeps_one_warm_container_per_sandbox_and_resets_between_jobs():
    require("docker")
    sandbox = get_sandbox("docker")
    try:
        first = sandbox.run(BUILD)
        container = sandbox.container.id
        second = sandbox.run(BUILD)
        assert first.ok and second.ok
        assert sandbox.container.id == container  # the same container served both jobs
    finally:
        sandbox.close()
    assert sandbox.container is None


def test_none_runtime_verdict_carries_a_warning():
    v = verify(TINY, KERNELS / "good.py", VerifyOptions(seed=2, trials=1, device="cpu", sandbox="none"))
    assert v["correct"] and v["sandbox"] == "none"
    assert any("not isolated" in w for w in v["warnings"])


def test_verdict_names_the_runtime():
    require("jail")
    v = verify(TINY, KERNELS / "good.py", VerifyOptions(seed=2, trials=1, device="cpu", sandbox="jail"))
    assert v["correct"] and v["sandbox"] == "jail" and "warnings" not in v


def test_docker_reaps_containers_left_by_a_killed_process():
    require("docker")
    import subprocess
    import sys

    from sandbox.docker_runtime import client, ensure_image

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # its pid now names no process
    orphan = client().containers.create(ensure_image(), command=["sleep", "infinity"], network_mode="none",
                                        labels={"opforge": "sandbox", "opforge.pid": str(dead.pid)})
    sandbox = get_sandbox("docker")
    try:
        assert sandbox.run(BUILD).ok
    finally:
        sandbox.close()
    remaining = [c.id for c in client().containers.list(all=True, filters={"label": "opforge=sandbox"})]
    assert orphan.id not in remaining
