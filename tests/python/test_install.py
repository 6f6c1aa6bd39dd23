# SPDX-License-Identifier: MIT
"""test_install.py - `pip install ./client/python` works offline (no index, no downloads).

The package is copied first so that the in-tree build leaves nothing in the checkout.
Offline, pip needs --no-build-isolation (an isolated build would download setuptools); a
venv needs --system-site-packages to see Debian's setuptools and wheel."""
import os
import shutil
import subprocess

from conftest import CLIENT_DIR, slow

PY = "/usr/bin/python3"


def offline_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONPATH="")
    return env


def copy_src(tmp_path):
    src = tmp_path / "src"
    shutil.copytree(CLIENT_DIR, src, ignore=shutil.ignore_patterns(
        "__pycache__", "build", "*.egg-info"))
    return src


def test_pip_install_target_offline(tmp_path):
    src, dest = copy_src(tmp_path), tmp_path / "site"
    r = subprocess.run([PY, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                        "--target", str(dest), str(src)], env=offline_env(),
                       capture_output=True, text=True, timeout=slow(300))
    assert r.returncode == 0, r.stdout + r.stderr
    env = dict(offline_env(), PYTHONPATH=str(dest))
    r = subprocess.run([PY, "-c", "import tiletune, sys; print(tiletune.__file__); "
                        "print(tiletune.autotune.__doc__ is not None)"],
                       env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith(str(dest)), r.stderr
    assert (dest / "bin" / "tiletune").exists()


def test_pip_install_into_a_venv_offline(tmp_path):
    src, venv = copy_src(tmp_path), tmp_path / "venv"
    # --without-pip: the venv runs Debian's pip from the system site-packages (fast)
    r = subprocess.run([PY, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
                       capture_output=True, text=True, timeout=slow(300))
    assert r.returncode == 0, r.stderr
    r = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install",
                        "--no-build-isolation", str(src)], env=offline_env(), capture_output=True, text=True,
                       timeout=slow(300))
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([str(venv / "bin" / "tiletune"), "--version"], env=offline_env(),
                       cwd=str(tmp_path), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "tiletune 0.1.0", r.stderr
    r = subprocess.run([str(venv / "bin" / "python"), "-m", "tiletune", "export", "--help"],
                       env=offline_env(), cwd=str(tmp_path), capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and "--format" in r.stdout
