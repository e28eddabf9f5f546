"""The checkout, an editable install and a wheel install all expose the same code and tasks."""

import filecmp
import subprocess
import sys
import zipfile
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from inspect_ai import eval

import clinical_cf
from clinical_cf.catalog.css import schema
from clinical_cf.tasks.css_family_d import css_family_d
from helpers import HANDWRITTEN_CASES, MockModel, recommendations_json

pytestmark = [pytest.mark.slow, pytest.mark.writes_checkout, pytest.mark.timeout(900)]  # pip builds a wheel in the checkout (build/), then installs it

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIRS = {
    "catalog": "catalog",
    "solvers": "solvers",
    "scorers": "scorers",
    "analysis": "analysis",
    "tasks": "tasks",
    "clinical_cf": "",
}


def test_pytest_imports_the_checkout():
    assert Path(clinical_cf.__file__).resolve() == ROOT / "clinical_cf" / "__init__.py"
    assert Path(schema.__file__).resolve() == ROOT / "catalog" / "css" / "schema.py"
    # The task package exports its @task (inspect-evals-lint's init_exports); its module is the checkout's.
    assert Path(sys.modules[css_family_d.__module__].__file__).resolve().parent == ROOT / "tasks" / "css_family_d"


def test_inspect_entry_point_is_registered():
    names = {ep.name: ep.value for ep in entry_points(group="inspect_ai")}
    assert names.get("clinical_cf") == "clinical_cf._registry"


def test_task_resolves_by_registry_name():
    model = MockModel("mockllm/model", lambda p: recommendations_json("FOLFOX"))
    judge = MockModel("mockllm/judge", lambda p: '{"score": 1, "rationale": "ok"}')
    log = eval(
        "clinical_cf/css_family_d",
        task_args={"cases": str(HANDWRITTEN_CASES), "unreviewed": "allow"},
        model=model.model,
        model_roles={"judge": judge.model},
        limit=1,
        display="none",
    )[0]
    assert log.status == "success", log.error
    assert log.eval.task == "clinical_cf/css_family_d"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        check=True,
    )
    return next(out.glob("clinical_cf-*.whl"))


def test_wheel_contains_the_checkout_byte_for_byte(wheel, tmp_path):
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(tmp_path)
        names = zf.namelist()
    for sub, folder in PACKAGE_DIRS.items():
        source_root = ROOT / folder if folder else ROOT / "clinical_cf"
        target_root = tmp_path / "clinical_cf" / (sub if folder else "")
        for source in source_root.rglob("*.py"):
            if "__pycache__" in source.parts:
                continue
            target = target_root / source.relative_to(source_root)
            assert target.exists(), f"{target} missing from wheel"
            assert filecmp.cmp(source, target, shallow=False), f"{target} differs from {source}"
    # Every catalog, lock and generated data file ships (package-data patterns per data package).
    for pattern in ("*.yaml", "*.jsonl", "*.lock", "*.json"):
        for data in (ROOT / "catalog").rglob(pattern):
            assert f"clinical_cf/catalog/{data.relative_to(ROOT / 'catalog').as_posix()}" in names, f"{data} missing from wheel"
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    with zipfile.ZipFile(wheel) as zf:
        text = zf.read(entry).decode()
    assert "[inspect_ai]\nclinical_cf = clinical_cf._registry" in text


def test_wheel_install_builds_the_task(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)], check=True)
    script = (
        "import clinical_cf._registry as r, clinical_cf.tasks.css_task as t;"
        "task = r.css_family_d();"
        "print(t.__file__); print(len(task.dataset)); print(task.metadata['registration']['published'])"
    )
    env = {"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    module_file, samples, published = done.stdout.split()
    assert module_file.startswith(str(target))
    assert int(samples) > 0
    assert published == "True"  # catalog/published.json ships, and installed files match it
