"""Release basics: one version for the three packages, and a wheel that ships what a user needs
(the MIT LICENSE, `py.typed` for type checkers, the data `tensorgrad.data` loads offline)."""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterator
from email.parser import Parser
from pathlib import Path

import pytest

import scalargrad
import tensorgrad
import visualize

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["scalargrad", "tensorgrad", "visualize"]


def test_the_three_packages_and_the_installed_metadata_agree_on_the_version():
    assert scalargrad.__version__ == tensorgrad.__version__ == visualize.__version__
    assert importlib.metadata.version("scalargrad") == scalargrad.__version__


def test_pyproject_reads_the_version_from_one_place():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "scalargrad.__version__"}


def test_the_license_is_mit_and_names_its_holders():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "the scalargrad authors" in text
    assert "THE SOFTWARE IS PROVIDED \"AS IS\"" in text


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Iterator[zipfile.ZipFile]:
    """A wheel built from a copy of the source tree, offline (no build isolation, no index)."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    for package in PACKAGES:
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("wheel")
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                            "--no-index", "--quiet", "--wheel-dir", str(out), str(source)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    (built,) = out.glob("scalargrad-*.whl")
    with zipfile.ZipFile(built) as archive:
        yield archive


@pytest.mark.slow
def test_the_wheel_ships_license_typing_marker_and_data(wheel):
    names = set(wheel.namelist())
    dist_info = f"scalargrad-{scalargrad.__version__}.dist-info"
    assert f"{dist_info}/licenses/LICENSE" in names
    assert wheel.read(f"{dist_info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
    assert {f"{package}/py.typed" for package in PACKAGES} <= names
    assert {"tensorgrad/_data/digits.npz", "tensorgrad/_data/README.md"} <= names
    # Every file of the three packages, modules and data alike: nothing the source tree has is left out.
    package_files = {path.relative_to(ROOT).as_posix() for package in PACKAGES
                     for path in (ROOT / package).rglob("*")
                     if path.is_file() and "__pycache__" not in path.parts}
    assert package_files - names == set()


@pytest.mark.slow
def test_the_wheel_metadata(wheel):
    text = wheel.read(f"scalargrad-{scalargrad.__version__}.dist-info/METADATA").decode()
    metadata = Parser().parsestr(text)
    assert metadata["Version"] == scalargrad.__version__
    assert metadata["License-Expression"] == "MIT" and metadata["License-File"] == "LICENSE"
    classifiers = metadata.get_all("Classifier")
    assert {"Typing :: Typed", "Operating System :: OS Independent",
            "Programming Language :: Python :: 3.11"} <= set(classifiers)
    assert 'safetensors>=0.4; extra == "safetensors"' in metadata.get_all("Requires-Dist")
