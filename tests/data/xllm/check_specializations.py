#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# check_specializations.py - load a `tlctl export --format specializations` file the way an xLLM
# kernel module would, and check it against xLLM's TilelangKernel contract (written from the
# contract in xllm/compiler/tilelang/common/spec.py as documented in daemon/api/export_xllm.h,
# not from tiletune's code):
#   - the file's relative import `from ....common.spec import DispatchField` resolves when the
#     file is a module of <pkg>/targets/ascend/kernels/ (a stand-in <pkg>/common/spec.py);
#   - DISPATCH_SCHEMA is a non-empty list of DispatchField with C-identifier names, kinds
#     int32/dtype only, no duplicates, equal to the expected field names in order;
#   - every SPECIALIZATIONS entry is a dict with a variant_key of letters/digits/underscore
#     (unique), exactly the schema fields + the expected params, no other key; int32 fields are
#     ints in int32 range; dtype fields are strings xLLM spells (float16, bf16, float32, int8,
#     int32, uint8); every key can be passed to generate_source(**spec) (identifiers);
#   - every entry is preceded by a comment line (the measurement figures).
#
#   python3 check_specializations.py FILE FIELD,FIELD,... PARAM,PARAM,... [MIN_ENTRIES]
import importlib
import os
import re
import shutil
import sys
import tempfile

STAND_IN_SPEC = '''
from dataclasses import dataclass
import re

@dataclass(frozen=True)
class DispatchField:
    name: str
    kind: str

    def validate(self):
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", self.name):
            raise ValueError("DispatchField.name must be a C/C++ identifier")
        if self.kind not in ("int32", "dtype"):
            raise ValueError("DispatchField.kind must be int32 or dtype")
'''
RESERVED = {"variant_key", "specialization", "compile_definitions", "kernel_name", "target",
            "entry_name", "source_entry_symbol"}
DTYPES = {"float16", "bf16", "float32", "int8", "int32", "uint8"}


def fail(msg):
    print(f"check_specializations: {msg}")
    sys.exit(1)


def load(path):
    root = tempfile.mkdtemp(prefix="xllm-standin-")
    try:
        kdir = os.path.join(root, "xpkg", "targets", "ascend", "kernels")
        os.makedirs(kdir)
        os.makedirs(os.path.join(root, "xpkg", "common"))
        for d in ("xpkg", "xpkg/targets", "xpkg/targets/ascend", "xpkg/targets/ascend/kernels",
                  "xpkg/common"):
            open(os.path.join(root, d, "__init__.py"), "w").close()
        with open(os.path.join(root, "xpkg", "common", "spec.py"), "w") as f:
            f.write(STAND_IN_SPEC)
        shutil.copy(path, os.path.join(kdir, "tuned.py"))
        sys.path.insert(0, root)
        mod = importlib.import_module("xpkg.targets.ascend.kernels.tuned")
        spec = importlib.import_module("xpkg.common.spec")
        return mod, spec.DispatchField
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv):
    path, fields, params = argv[1], argv[2].split(","), argv[3].split(",")
    min_entries = int(argv[4]) if len(argv) > 4 else 1
    mod, DispatchField = load(path)
    schema = getattr(mod, "DISPATCH_SCHEMA", None)
    if not isinstance(schema, list) or not schema:
        fail("DISPATCH_SCHEMA is not a non-empty list")
    for f in schema:
        if not isinstance(f, DispatchField):
            fail(f"DISPATCH_SCHEMA holds {type(f).__name__}, not DispatchField")
        f.validate()
    names = [f.name for f in schema]
    if len(set(names)) != len(names):
        fail("duplicate DispatchField names")
    if names != fields:
        fail(f"schema fields {names} != expected {fields}")
    kinds = {f.name: f.kind for f in schema}
    specs = getattr(mod, "SPECIALIZATIONS", None)
    if not isinstance(specs, list) or len(specs) < min_entries:
        fail(f"SPECIALIZATIONS is not a list of at least {min_entries} entries")
    seen = set()
    for e in specs:
        if not isinstance(e, dict):
            fail("an entry is not a dict")
        vk = e.get("variant_key")
        if not isinstance(vk, str) or not re.match(r"^[A-Za-z0-9_]+$", vk) or vk in seen:
            fail(f"bad or duplicate variant_key {vk!r}")
        seen.add(vk)
        keys = set(e) - {"variant_key"}
        if keys & RESERVED:
            fail(f"{vk}: reserved keys {sorted(keys & RESERVED)}")
        if keys != set(fields) | set(params):
            fail(f"{vk}: keys {sorted(keys)} != schema fields + params")
        for k in fields:
            v = e[k]
            if kinds[k] == "int32" and (not isinstance(v, int) or isinstance(v, bool)
                                        or not -2**31 <= v < 2**31):
                fail(f"{vk}: {k}={v!r} is not an int32")
            if kinds[k] == "dtype" and v not in DTYPES:
                fail(f"{vk}: {k}={v!r} is not an xLLM dtype name")
        for k in params:
            if not isinstance(e[k], int):
                fail(f"{vk}: param {k}={e[k]!r} is not an int")

        def generate_source(**spec):
            return spec
        generate_source(**{k: v for k, v in e.items() if k not in RESERVED})
    lines = open(path).read().splitlines()
    entry_lines = [i for i, ln in enumerate(lines) if ln.strip().startswith('{"variant_key"')]
    if len(entry_lines) != len(specs):
        fail("one line per entry expected")
    for i in entry_lines:
        if not lines[i - 1].strip().startswith("#"):
            fail(f"line {i + 1}: no comment with the measurement above the entry")
    print(f"ok: {len(specs)} specializations")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
