#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# derive_t_names.py - derive the list of `T.<name>` attributes of tilelang-ascend's
# `tilelang.language` module from a git checkout, without importing it (no TVM needed).
#
#   python3 derive_t_names.py GIT_DIR COMMIT > t_names.txt
#
# A name is listed when one of these holds at COMMIT:
#   lang  it is bound in tilelang/language/__init__.py (an import alias, a def, an assignment),
#         minus names deleted there with `del`;
#   star  it is a public top-level def/class/assignment of a tilelang.language submodule that
#         __init__.py star-imports (or in that module's __all__ when it has one);
#   tile  `tile.<def>` for the public defs of ascend_tile.py (imported as `tile`);
#   (minus the names __init__.py's __getattr__ rejects on purpose, e.g. alloc_local)
#   tvm   __init__.py also star-imports tvm.script.parser.tir, which is not in the repository:
#         such a name is listed when upstream's own examples/ or tilelang/ use it as `T.<name>`
#         at COMMIT (evidence that it resolves) and it is not listed by the rules above.
# Only reads `git show`/`git ls-tree` output; the list is data for tests/unit/compiler/test_sources.c.
import ast
import re
import subprocess
import sys


def git(gd, *args):
    return subprocess.run(["git", "--git-dir", gd, *args], check=True, capture_output=True,
                          text=True).stdout


def public_names(src):
    tree = ast.parse(src)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                for t in node.targets):
            return set(ast.literal_eval(node.value))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return {n for n in names if not n.startswith("_")}


def module_path(base, dotted):
    rel = dotted.lstrip(".").replace(".", "/")
    return f"tilelang/language/{rel}.py"


def main():
    gd, commit = sys.argv[1], sys.argv[2]
    files = set(git(gd, "ls-tree", "-r", "--name-only", commit).split("\n"))
    init = git(gd, "show", f"{commit}:tilelang/language/__init__.py")
    origin = {}
    tree = ast.parse(init)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            mod = ("." * node.level) + (node.module or "")
            for a in node.names:
                if a.name == "*":
                    if node.level == 0:
                        continue  # tvm.script.parser.tir: see rule tvm
                    p = module_path("", mod)
                    if p not in files:
                        p = p[:-3] + "/__init__.py"
                    src = git(gd, "show", f"{commit}:{p}")
                    for n in public_names(src):
                        origin.setdefault(n, "star")
                        if p.endswith("/__init__.py"):
                            pass
                elif node.level and not node.module and a.asname == "tile":
                    src = git(gd, "show", f"{commit}:tilelang/language/{a.name}.py")
                    for n in public_names(src):
                        origin["tile." + n] = "tile"
                else:
                    origin[a.asname or a.name] = "lang"
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            origin[node.name] = "lang"
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    origin[t.id] = "lang"
        elif isinstance(node, ast.Delete):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    origin.pop(t.id, None)
    # names re-bound after a `del` (use_swizzle) are bound again by a later def
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            origin[node.name] = "lang"
    # tilelang.language.tir star-imports tir/ir.py: its public names are in `star` already
    # when __init__ imports `.tir.ir`; rule tvm: names upstream code uses as T.<name>
    used = set()
    pat = re.compile(r"(?<![\w.])T\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)")
    for f in sorted(files):
        if f.endswith(".py") and (f.startswith("examples/") or f.startswith("tilelang/")):
            for m in pat.finditer(git(gd, "show", f"{commit}:{f}")):
                used.add(m.group(1))
    for u in sorted(used):
        head = u.split(".")[0]
        if u in origin or head in origin and head != "tile":
            continue
        if head == "tile":
            continue  # tile.* is complete from ascend_tile.py
        origin[head] = "tvm"
    # names __init__.__getattr__ rejects on purpose (e.g. alloc_local) are not available
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__getattr__":
            for c in ast.walk(node):
                if isinstance(c, ast.Compare) and isinstance(c.comparators[0], ast.Constant):
                    origin.pop(c.comparators[0].value, None)
    origin.pop("__getattr__", None)
    for n in sorted(origin):
        print(f"{n} {origin[n]}")


if __name__ == "__main__":
    main()
