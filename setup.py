"""Maps the repository's top-level folders under the one ``clusteremu`` namespace (metadata is in pyproject.toml).

Installing must not put packages named ``tools``, ``agents`` or ``scenarios`` at the top of site-packages, so each
folder installs as ``clusteremu.<folder>``; the subpackages are found here because pyproject.toml cannot list a
mapped folder's subpackages by itself.
"""
from pathlib import Path

from setuptools import find_namespace_packages, setup

ROOT = Path(__file__).parent
FOLDERS = ("base", "emulator", "strategies", "agents", "scenarios", "tools", "systems")

def _subpackages(folder: str) -> list[str]:
    return [p for p in find_namespace_packages(where=folder) if "__pycache__" not in p]


packages = ["clusteremu", *(f"clusteremu.{p}" for p in _subpackages("clusteremu"))]
package_dir = {"clusteremu": "clusteremu"}
for folder in FOLDERS:
    package_dir[f"clusteremu.{folder}"] = folder
    packages.append(f"clusteremu.{folder}")
    packages += [f"clusteremu.{folder}.{sub}" for sub in _subpackages(folder)]

setup(packages=sorted(set(packages)), package_dir=package_dir)
