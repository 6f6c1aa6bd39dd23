# SPDX-License-Identifier: MIT
# gen_bad.py - regenerates bad/*.json + bad/*.expect (one case per validation rule: line 1 the
# API error code, line 2 the exact JSON path, line 3 a message substring) and valid/*.json.
# Run from this directory: python3 gen_bad.py
import json, copy, os
base = {"tiletune": 1, "name": "t", "version": "1", "description": "base of the bad cases",
  "inputs": {"M": "int"}, "params": {"b": [16, 32]}, "let": {"n": "ceildiv(M, b)"},
  "constraints": ["b <= M"],
  "tensors": {"A": {"shape": ["M"], "dtype": "float16"}, "C": {"shape": ["M"], "dtype": "float16", "output": True}},
  "buffers": {"a_UB": {"scope": "UB", "shape": ["b"], "dtype": "float16"}},
  "kernel": {"grid": {"bx": "n"}, "cores": "vector", "body": [
     {"copy": ["gm:A", "a_UB"], "along": ["bx"]},
     {"vec": "exp", "out": "a_UB", "in": ["a_UB"]},
     {"copy": ["a_UB", "gm:C"], "along": ["bx"]}]}}
cube = {"tiletune": 1, "name": "c", "inputs": {"M": "int"}, "params": {"b": [16, 32]},
  "tensors": {"A": {"shape": ["M", "M"], "dtype": "float16"}, "C": {"shape": ["M", "M"], "dtype": "float32", "output": True}},
  "buffers": {"a_L1": {"scope": "L1", "shape": ["b", "b"], "dtype": "float16"},
              "a_L0": {"scope": "L0A", "shape": ["b", "b"], "dtype": "float16"},
              "b_L0": {"scope": "L0B", "shape": ["b", "b"], "dtype": "float16"},
              "c_L0": {"scope": "L0C", "shape": ["b", "b"], "dtype": "float32"},
              "u_UB": {"scope": "UB", "shape": ["b", "b"], "dtype": "float32"}},
  "kernel": {"grid": {"bx": "ceildiv(M, b)"}, "cores": "cube", "body": [
     {"copy": ["gm:A", "a_L1"], "along": ["bx"]},
     {"copy": ["a_L1", "a_L0"]}, {"copy": ["a_L1", "b_L0"]},
     {"mma": ["a_L0", "b_L0", "c_L0"], "init": True},
     {"copy": ["c_L0", "gm:C"], "along": ["bx"]}]}}
cases = []
def case(name, doc, path, sub, code="invalid_template"):
    cases.append((name, doc, code, path, sub))
def m(f, b=base):
    d = copy.deepcopy(b); f(d); return d
case("no_format", m(lambda d: d.pop("tiletune")), "tiletune", "missing")
case("bad_format", m(lambda d: d.update(tiletune=2)), "tiletune", "unsupported format version")
case("format_string", m(lambda d: d.update(tiletune="1")), "tiletune", "unsupported format version")
case("unknown_top_key", m(lambda d: d.update(foo=1)), "foo", "unknown top-level key")
case("unknown_top_key_typo", m(lambda d: d.update(paramz=d.pop("params"))), "paramz", "unknown top-level key (did you mean \"params\"?)")
case("no_name", m(lambda d: d.pop("name")), "name", "missing")
case("bad_name", m(lambda d: d.update(name="Gemm!")), "name", "is not [a-z0-9_-]")
case("long_name", m(lambda d: d.update(name="x" * 64)), "name", "1..63 characters")
case("version_int", m(lambda d: d.update(version=1)), "version", "expected a string")
case("param_bool", m(lambda d: d["params"].update(b=[16, True])), "params.b[1]", "not an integer (got boolean)")
case("param_float", m(lambda d: d["params"].update(b=[16, 1.5])), "params.b[1]", "not an integer (got number)")
case("param_dup", m(lambda d: d["params"].update(b=[16, 32, 16])), "params.b[2]", "duplicate value 16")
case("param_empty", m(lambda d: d["params"].update(b=[])), "params.b", "empty domain")
case("param_string", m(lambda d: d["params"].update(b="16")), "params.b", "expected a list of integers or an object")
case("param_default_off_domain", m(lambda d: d["params"].update(b={"values": [16, 32], "default": 8})), "params.b.default", "8 is not in the domain")
case("param_range_step", m(lambda d: d["params"].update(b={"range": [1, 10, 0]})), "params.b.range", "step must be positive")
case("param_range_order", m(lambda d: d["params"].update(b={"range": [10, 1]})), "params.b.range", "lo is above hi")
case("param_range_huge", m(lambda d: d["params"].update(b={"range": [1, 100000, 1]})), "params.b.range", "more than 4096 values")
case("param_range_bool", m(lambda d: d["params"].update(b={"range": [1, True]})), "params.b.range[1]", "not an integer")
case("param_pow2_bad", m(lambda d: d["params"].update(b={"pow2": [3, 64]})), "params.b.pow2", "powers of two")
case("param_two_forms", m(lambda d: d["params"].update(b={"range": [1, 2], "pow2": [1, 2]})), "params.b", "exactly one of")
case("param_values_dup", m(lambda d: d["params"].update(b={"values": [8, 8]})), "params.b.values[1]", "duplicate value 8")
case("param_unknown_form", m(lambda d: d["params"].update(b={"list": [8]})), "params.b", "expected one of")
case("input_bad_type", m(lambda d: d["inputs"].update(M="float")), "inputs.M", "unknown input type")
case("input_bad_dtype", m(lambda d: d["inputs"].update(dt=["float16", "float99"])), "inputs.dt[1]", "unknown dtype \"float99\"")
case("input_dup_dtype", m(lambda d: d["inputs"].update(dt=["float16", "fp16"])), "inputs.dt[1]", "duplicate dtype")
case("input_default_out", m(lambda d: d["inputs"].update(M={"type": "int", "min": 1, "max": 8, "default": 9})), "inputs.M.default", "is outside [1, 8]")
case("input_min_max", m(lambda d: d["inputs"].update(M={"type": "int", "min": 9, "max": 8})), "inputs.M.max", "below min")
case("input_dtype_default", m(lambda d: d["inputs"].update(dt={"type": "dtype", "values": ["float16"], "default": "float32"})), "inputs.dt.default", "not one of the values")
case("input_unknown_key", m(lambda d: d["inputs"].update(M={"type": "int", "maxx": 8})), "inputs.M", "unknown key \"maxx\" (did you mean \"max\"?)")
case("input_reserved", m(lambda d: d["inputs"].update({"min": "int"})), "inputs.min", "reserved word")
case("input_not_ident", m(lambda d: d["inputs"].update({"2x": "int"})), "inputs.2x", "not an identifier")
# keys that could be cut short (two problems made one): 14 long names x 1..2^40 and M -> 1093 bytes
long_inputs = lambda n: {"x%02d" % i + "a" * 59: "int" for i in range(n)}
case("input_problem_key_long", m(lambda d: d["inputs"].update(long_inputs(14))), "inputs", "a problem key could take 1093 bytes")
case("input_variant_key_long", m(lambda d: d["inputs"].update(long_inputs(8))), "inputs", "an export variant key could take 624 bytes")
case("let_collides_param", m(lambda d: d["let"].update(b="M")), "let.b", "already used by a param")
case("param_collides_input", m(lambda d: d["params"].update(M=[1])), "params.M", "already used by an input")
case("let_unknown_name", m(lambda d: d["let"].update(n="ceildiv(M, q)")), "let.n", "unknown name 'q'", "invalid_expression")
case("let_forward_ref", m(lambda d: d.update(let={"x": "y + 1", "y": "2"})), "let.x", "unknown name 'y'", "invalid_expression")
case("let_not_string", m(lambda d: d["let"].update(n=[1])), "let.n", "expected an expression")
case("constraint_syntax", m(lambda d: d.update(constraints=["b <= "])), "constraints[0]", "at offset", "invalid_expression")
case("constraint_bool", m(lambda d: d.update(constraints=[True])), "constraints[0]", "expected an expression (string or integer), got boolean")
case("constraints_object", m(lambda d: d.update(constraints={"a": "b"})), "constraints", "expected an array")
case("constraint_reads_grid", m(lambda d: d.update(constraints=["bx < 2"])), "constraints[0]", "unknown name 'bx'", "invalid_expression")
case("tensor_unknown_dtype", m(lambda d: d["tensors"]["A"].update(dtype="half4")), "tensors.A.dtype", "unknown dtype or dtype input \"half4\"")
case("tensor_int_dtype", m(lambda d: d["tensors"]["A"].update(dtype="M")), "tensors.A.dtype", "input \"M\" is not a dtype")
case("tensor_rank", m(lambda d: d["tensors"]["A"].update(shape=[1, 2, 3, 4, 5])), "tensors.A.shape", "1..4 extents")
case("tensor_no_shape", m(lambda d: d["tensors"]["A"].pop("shape")), "tensors.A.shape", "missing")
case("tensor_output_and_ws", m(lambda d: d["tensors"]["C"].update(workspace=True)), "tensors.C", "not both")
case("tensor_output_string", m(lambda d: d["tensors"]["C"].update(output="yes")), "tensors.C.output", "expected true or false")
case("buffer_gm_scope", m(lambda d: d["buffers"]["a_UB"].update(scope="GM")), "buffers.a_UB.scope", "on chip")
case("buffer_bad_scope", m(lambda d: d["buffers"]["a_UB"].update(scope="L2")), "buffers.a_UB.scope", "unknown scope \"L2\"")
case("buffer_unknown_key", m(lambda d: d["buffers"]["a_UB"].update(copie=2)), "buffers.a_UB", "unknown key \"copie\" (did you mean \"copies\"?)")
case("buffer_collides_tensor", m(lambda d: d["buffers"].update(A={"scope": "UB", "shape": [1], "dtype": "float16"})), "buffers.A", "already used by a tensor")
case("buffer_copies_bad", m(lambda d: d["buffers"]["a_UB"].update(copies="2 +")), "buffers.a_UB.copies", "at offset", "invalid_expression")
case("copy_no_path", m(lambda d: d["kernel"]["body"].insert(1, {"copy": ["a_L0", "a_L1"]}), cube), "kernel.body[1].copy", "no path from L0A to L1")
case("copy_ub_to_l0a", m(lambda d: d.update(kernel={"grid": {}, "cores": "mix", "body": [{"copy": ["u_UB", "a_L0"]}]}), cube), "kernel.body[0].copy", "no path from UB to L0A")
case("copy_gm_gm", m(lambda d: d["kernel"]["body"].insert(0, {"copy": ["gm:A", "gm:C"]})), "kernel.body[0].copy", "no path from GM to GM")
case("copy_unknown_buffer", m(lambda d: d["kernel"]["body"][0].update(copy=["gm:A", "a_ub"])), "kernel.body[0].copy[1]", "unknown buffer \"a_ub\"")
case("copy_tensor_without_gm", m(lambda d: d["kernel"]["body"][0].update(copy=["A", "a_UB"])), "kernel.body[0].copy[0]", "is a tensor: write \"gm:A\"")
case("copy_unknown_tensor", m(lambda d: d["kernel"]["body"][0].update(copy=["gm:Z", "a_UB"])), "kernel.body[0].copy[0]", "unknown tensor \"Z\"")
case("copy_three", m(lambda d: d["kernel"]["body"][0].update(copy=["gm:A", "a_UB", "a_UB"])), "kernel.body[0].copy", "expected [source, destination]")
case("copy_writes_input", m(lambda d: d["kernel"]["body"][2].update(copy=["a_UB", "gm:A"])), "kernel.body[2].copy", "neither an output nor a workspace")
case("along_unknown", m(lambda d: d["kernel"]["body"][0].update(along=["by"])), "kernel.body[0].along[0]", "neither a grid dim nor an enclosing loop variable")
case("along_twice", m(lambda d: d["kernel"]["body"][0].update(along=["bx", "bx"])), "kernel.body[0].along[1]", "listed twice")
case("along_on_chip", m(lambda d: d["kernel"]["body"].insert(1, {"copy": ["a_UB", "a_UB"], "along": ["bx"]})), "kernel.body[1].along", "only copies from or to GM")
case("along_outer_loop_var", m(lambda d: d["kernel"].update(body=[{"for": "i", "trip": 2, "body": [{"vec": "exp", "out": "a_UB"}]}, {"copy": ["gm:A", "a_UB"], "along": ["i"]}])), "kernel.body[1].along[0]", "neither a grid dim")
case("nd2nz_wrong_path", m(lambda d: d["kernel"]["body"][0].update(nd2nz=True)), "kernel.body[0].nd2nz", "only GM->L1")
case("nd2nz_reads_param", m(lambda d: d["kernel"]["body"][0].update(nd2nz="b == 16"), cube), "kernel.body[0].nd2nz", "only the problem inputs")
case("nd2nz_number", m(lambda d: d["kernel"]["body"][0].update(nd2nz=1), cube), "kernel.body[0].nd2nz", "expected true, false or an expression")
case("mma_wrong_scope", m(lambda d: d["kernel"]["body"][3].update(mma=["b_L0", "a_L0", "c_L0"]), cube), "kernel.body[3].mma[0]", "expected a L0A buffer")
case("mma_two", m(lambda d: d["kernel"]["body"][3].update(mma=["a_L0", "b_L0"]), cube), "kernel.body[3].mma", "expected [L0A buffer")
case("mma_init_int", m(lambda d: d["kernel"]["body"][3].update(init=1), cube), "kernel.body[3].init", "expected true or false")
case("vec_unknown_op", m(lambda d: d["kernel"]["body"][1].update(vec="expo")), "kernel.body[1].vec", "unknown vector op \"expo\"")
case("vec_not_ub", m(lambda d: d.update(kernel={"grid": {}, "cores": "mix", "body": [{"vec": "exp", "out": "a_L1"}]}), cube), "kernel.body[0].out", "expected a UB buffer")
case("vec_no_out", m(lambda d: d["kernel"]["body"][1].pop("out")), "kernel.body[1].out", "missing")
case("vec_five_inputs", m(lambda d: d["kernel"]["body"][1].update({"in": ["a_UB"] * 5})), "kernel.body[1].in", "at most 4")
case("cube_kernel_vec_op", m(lambda d: d["kernel"]["body"].insert(4, {"copy": ["gm:A", "u_UB"]}), cube), "kernel.body[4]", "vector-side op in a \"cube\" kernel")
case("vector_kernel_mma", m(lambda d: d["kernel"].update(cores="vector"), cube), "kernel.body[0]", "cube-side op in a \"vector\" kernel")
case("cross_sync_not_mix", m(lambda d: d["kernel"]["body"].insert(1, {"sync": "cross", "from": "vector", "to": "cube"})), "kernel.body[1]", "needs \"cores\": \"mix\"")
case("sync_same_side", m(lambda d: d["kernel"].update(cores="mix", body=[{"sync": "cross", "from": "cube", "to": "cube"}])), "kernel.body[0].to", "between cube and vector")
case("sync_bad_flag", m(lambda d: d["kernel"].update(cores="mix", body=[{"sync": "cross", "from": "cube", "to": "vector", "flag": 11}])), "kernel.body[0].flag", "0..10")
case("sync_unknown", m(lambda d: d["kernel"]["body"].insert(0, {"sync": "fence"})), "kernel.body[0].sync", "unknown sync \"fence\"")
case("loop_var_dup", m(lambda d: d["kernel"].update(body=[{"for": "i", "trip": 2, "body": [{"for": "i", "trip": 2, "body": [{"vec": "exp", "out": "a_UB"}]}]}])), "kernel.body[0].body[0].for", "already used by a loop variable")
case("loop_var_sibling_dup", m(lambda d: d["kernel"].update(body=[{"for": "i", "trip": 2, "body": [{"vec": "exp", "out": "a_UB"}]}, {"for": "i", "trip": 2, "body": [{"vec": "exp", "out": "a_UB"}]}])), "kernel.body[1].for", "already used by a loop variable")
case("loop_var_collides", m(lambda d: d["kernel"].update(body=[{"for": "M", "trip": 2, "body": [{"vec": "exp", "out": "a_UB"}]}])), "kernel.body[0].for", "already used by an input")
def deep(d):
    body = [{"vec": "exp", "out": "a_UB"}]
    for i in range(17): body = [{"for": "i%d" % i, "trip": 2, "body": body}]
    d["kernel"]["body"] = body
case("deep_nesting", m(deep), "kernel.body[0]" + ".body[0]" * 16, "nested deeper than 16")
case("empty_body", m(lambda d: d["kernel"].update(body=[{"for": "i", "trip": 2, "body": []}])), "kernel.body[0].body", "empty body")
case("kernel_empty_body", m(lambda d: d["kernel"].update(body=[])), "kernel.body", "empty body")
case("op_two_kinds", m(lambda d: d["kernel"]["body"][1].update(copy=["a_UB", "a_UB"])), "kernel.body[1]", "an op has one of \"copy\" and \"vec\"")
case("op_unknown", m(lambda d: d["kernel"]["body"].insert(0, {"foo": 1})), "kernel.body[0]", "unknown op")
case("op_unknown_key", m(lambda d: d["kernel"]["body"][0].update(stages=2)), "kernel.body[0]", "unknown key \"stages\"")
case("op_not_object", m(lambda d: d["kernel"]["body"].insert(0, "copy")), "kernel.body[0]", "expected an op object")
case("cores_bad", m(lambda d: d["kernel"].update(cores="gpu")), "kernel.cores", "unknown core kind \"gpu\"")
case("cores_missing", m(lambda d: d["kernel"].pop("cores")), "kernel.cores", "missing")
case("grid_not_object", m(lambda d: d["kernel"].update(grid=["n"])), "kernel.grid", "expected an object")
case("grid_reads_grid", m(lambda d: d["kernel"].update(grid={"bx": "n", "by": "bx"})), "kernel.grid.by", "unknown name 'bx'", "invalid_expression")
case("grid_collides_let", m(lambda d: d["kernel"].update(grid={"n": "n"})), "kernel.grid.n", "already used by a let")
case("kernel_unknown_key", m(lambda d: d["kernel"].update(threads=2)), "kernel", "unknown key \"threads\"")
case("trip_missing", m(lambda d: d["kernel"].update(body=[{"for": "i", "body": [{"vec": "exp", "out": "a_UB"}]}])), "kernel.body[0].trip", "missing")
case("trip_wrong_type", m(lambda d: d["kernel"].update(body=[{"for": "i", "trip": True, "body": [{"vec": "exp", "out": "a_UB"}]}])), "kernel.body[0].trip", "expected an expression")
case("trip_unknown_name", m(lambda d: d["kernel"].update(body=[{"for": "i", "trip": "i + 1", "body": [{"vec": "exp", "out": "a_UB"}]}])), "kernel.body[0].trip", "unknown name 'i'", "invalid_expression")
case("source_abs", m(lambda d: d.update(source={"file": "/etc/passwd"})), "source.file", "relative path")
case("source_dotdot", m(lambda d: d.update(source={"file": "../x.py"})), "source.file", "relative path")
case("source_both", m(lambda d: d.update(source={"file": "a.py", "script": "x"})), "source", "exactly one of")
case("source_unknown_placeholder", m(lambda d: d.update(source={"file": "source_unknown_placeholder.py.in"})), "source.file", "unknown placeholder {{blok}} at line 2 of source_unknown_placeholder.py.in")
case("source_grid_placeholder", m(lambda d: d.update(source={"script": "run --b {{b}}\n--n {{ n }} --x {{bx}}"})), "source.script", "placeholder {{bx}} at line 2 is a grid dim")
case("source_missing_file", m(lambda d: d.update(source={"file": "no_such_file.py.in"})), "source.file", "cannot read", "io_error")
case("too_many_ops", m(lambda d: d["kernel"].update(body=[{"vec": "exp", "out": "a_UB"}] * 4097)), "kernel.body", "more than 4096 ops")
case("too_many_ops_nested", m(lambda d: d["kernel"].update(body=[{"for": "i%d" % i, "trip": 1, "body": [{"vec": "exp", "out": "a_UB"}] * 1000} for i in range(5)])), "kernel.body[4].body[91]", "more than 4096 ops")
case("too_many_names", m(lambda d: d.update(params={"p%d" % i: [1] for i in range(300)})), "params", "more than 256 names")
case("not_object", [base], "", "a template is a JSON object, got array")
for name, doc, code, path, sub in cases:
    with open("bad/%s.json" % name, "w") as f: json.dump(doc, f, indent=1); f.write("\n")
    with open("bad/%s.expect" % name, "w") as f: f.write("%s\n%s\n%s\n" % (code, path, sub))
# raw ones
raw = {
 "truncated": (json.dumps(base)[:200], "malformed_json", "", "line 1"),
 "trailing_garbage": (json.dumps(base) + " x", "malformed_json", "", "end of file expected"),
 "non_utf8": (json.dumps(base).replace('"base of the bad cases"', '"caf\xe9"'), "malformed_json", "", "line 1"),
 "duplicate_key": ('{"tiletune": 1, "name": "a", "name": "b"}', "malformed_json", "", "duplicate object key"),
 "empty_file": ("", "malformed_json", "", "line"),
}
for name, (text, code, path, sub) in raw.items():
    with open("bad/%s.json" % name, "wb") as f:
        f.write(text.encode("latin-1"))
    with open("bad/%s.expect" % name, "w") as f: f.write("%s\n%s\n%s\n" % (code, path, sub))
# the valid base documents
with open("valid/base.json", "w") as f: json.dump(base, f, indent=1); f.write("\n")
with open("valid/cube.json", "w") as f: json.dump(cube, f, indent=1); f.write("\n")
print(len(cases) + len(raw))
