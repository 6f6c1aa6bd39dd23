# SPDX-License-Identifier: MIT
"""test_example.py - client/python/examples/gemm_autotune.py against a real daemon.

tilelang cannot be installed here, so a stand-in `tilelang` package is put on sys.path: its
`jit` wraps the factory like tilelang-ascend's (functools.wraps, calls it with the given
arguments, records them) and `tilelang.language` answers every T.* call with a placeholder, so
the factory's Python runs (loops bounds, flags, T.prim_func definition) without compiling."""
import importlib
import inspect
import os
import sys
import types

import pytest

import tiletune
from conftest import CLIENT_DIR, TUNE, slow

EXAMPLE = os.path.join(CLIENT_DIR, "examples", "gemm_autotune.py")


class _Any:
    """Placeholder for every tilelang.language object: callable, indexable, a context."""

    def __call__(self, *a, **k):
        return a[0] if len(a) == 1 and callable(a[0]) and not k else self

    def __getattr__(self, name):
        return self

    def __getitem__(self, key):
        return self

    def __enter__(self):
        return (self, self)

    def __exit__(self, *exc):
        return False


@pytest.fixture
def example(monkeypatch, daemon):
    calls = []

    def jit(out_idx=None, **opts):
        import functools

        def deco(fn):
            @functools.wraps(fn)
            def wrapper(*args, **kwargs):
                calls.append(dict(inspect.signature(fn).bind(*args, **kwargs).arguments))
                return fn(*args, **kwargs)
            return wrapper
        return deco

    tl = types.ModuleType("tilelang")
    tl.jit = jit
    lang = types.ModuleType("tilelang.language")
    lang.__getattr__ = lambda name: _Any()
    tl.language = lang
    monkeypatch.setitem(sys.modules, "tilelang", tl)
    monkeypatch.setitem(sys.modules, "tilelang.language", lang)
    monkeypatch.setenv("TILETUNE_URL", daemon.url)
    monkeypatch.setenv("TILETUNE_TOKEN", TUNE)
    monkeypatch.syspath_prepend(os.path.dirname(EXAMPLE))
    sys.modules.pop("gemm_autotune", None)
    mod = importlib.import_module("gemm_autotune")
    yield mod, calls
    mod.gemm.wait_tuning(timeout=slow(180))
    sys.modules.pop("gemm_autotune", None)


def test_example_params_are_the_templates(example, daemon):
    mod, _ = example
    tpl = tiletune.Client(daemon.url).template("gemm")
    params = {p["name"] for p in tpl["params"]}
    inputs = {i["name"] for i in tpl["inputs"]}
    args = set(inspect.signature(mod.gemm).parameters)
    assert {"block_M", "block_N", "block_K", "K_L1", "S1", "S2"} <= params
    # every template param reaches the factory, every factory arg is a param, an input or
    # the core count
    assert params <= args, f"template params the example does not take: {params - args}"
    assert args <= params | inputs | {"core_num"}
    assert mod.gemm.__doc__.startswith("C[M, N] = A[M, K] @ B[K, N]")


def test_example_factory_gets_resolved_tunables(example, daemon):
    mod, calls = example
    how = mod.gemm.resolve(1024, 512, 2048)
    assert how.source in ("predicted", "nearest") and how.job      # tuning was submitted
    prog = mod.gemm(1024, 512, 2048)
    assert prog is not None
    got = calls[-1]
    assert {k: got[k] for k in how.config} == how.config
    assert (got["M"], got["N"], got["K"]) == (1024, 512, 2048)
    assert mod.gemm.wait_tuning(timeout=slow(180))
    after = mod.gemm.resolve(1024, 512, 2048)
    assert after.source == "exact" and after.job == how.job
