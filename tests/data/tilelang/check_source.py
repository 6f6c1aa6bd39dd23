#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# check_source.py - check a rendered TileLang-Ascend source: it only uses T.<name> (and
# T.tile.<name>) attributes listed in t_names.txt (derived from upstream tilelang-ascend, see
# its header), and it defines what templates/tt_ascend_runner.py calls (kernel, make_inputs,
# reference at top level) and never nests T.Pipelined loops.
#
#   python3 check_source.py t_names.txt SOURCE.py...
# Exit 0 when all holds; 1 (printing file:line: reason) otherwise; 2 on bad input.
# Uses are found in the syntax tree, so names inside comments and strings do not count.
import ast
import sys


def load_names(path):
    names = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                names.add(line.split()[0])
    return names


def uses(tree):
    """(line, dotted name) of every T.x and T.tile.x attribute access."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "T":
            yield node.lineno, node.attr
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) \
                and isinstance(node.value.value, ast.Name) and node.value.value.id == "T" \
                and node.value.attr == "tile":
            yield node.lineno, "tile." + node.attr


RUNNER_CONTRACT = ("kernel", "make_inputs", "reference")


def is_pipelined(node):
    it = node.iter if isinstance(node, ast.For) else None
    return isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) \
        and it.func.attr == "Pipelined" and isinstance(it.func.value, ast.Name) \
        and it.func.value.id == "T"


def nested_pipelined(tree):
    """Lines of T.Pipelined loops inside another T.Pipelined loop."""
    for outer in ast.walk(tree):
        if isinstance(outer, ast.For) and is_pipelined(outer):
            for inner in ast.walk(outer):
                if inner is not outer and isinstance(inner, ast.For) and is_pipelined(inner):
                    yield inner.lineno


def contract_problems(path, tree):
    defs = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    for fn in RUNNER_CONTRACT:
        if fn not in defs:
            yield f"{path}: no top-level {fn}() (templates/tt_ascend_runner.py calls it)"
    for line in nested_pipelined(tree):
        yield f"{path}:{line}: T.Pipelined nested inside T.Pipelined (not supported upstream)"


def main(argv):
    if len(argv) < 3:
        print("usage: check_source.py t_names.txt SOURCE.py...", file=sys.stderr)
        return 2
    names = load_names(argv[1])
    if not names:
        print(f"{argv[1]}: no names", file=sys.stderr)
        return 2
    bad = 0
    for path in argv[2:]:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        count = 0
        for line, name in uses(tree):
            count += 1
            if name not in names and name != "tile":
                print(f"{path}:{line}: T.{name} is not in {argv[1]}")
                bad += 1
        for msg in contract_problems(path, tree):
            print(msg)
            bad += 1
        if count == 0:
            print(f"{path}: uses no T.<name> at all (not a TileLang source?)")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
