#!/usr/bin/env bash
# Out-of-tree plugin check: install the main build to a temp prefix, build examples/template_plugin
# against it with find_package(tessera), put it on TESSERA_PLUGIN_PATH, and check that
# `tessera info` loads it, `tessera plan --targets template,reference` places the Relus on it, and a
# small program using the installed tessera::core runs the model with outputs identical to the
# reference kernels, and one using the installed tessera::tune measures a node on the plugin in a
# worker it names.
# usage: template_out_of_tree.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build_dir=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tessera-template.XXXXXX")
trap 'rm -rf "$work"' EXIT
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

echo "== install $build_dir -> $work/prefix"
cmake --install "$build_dir" --prefix "$work/prefix" >"$work/install.log"

echo "== build the template plugin against the installed package"
cmake -S "$source_dir/examples/template_plugin" -B "$work/template" "${generator[@]}" \
  -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/configure.log"
cmake --build "$work/template" >"$work/build.log"
test -f "$work/template/libtessera-plugin-template.so"

echo "== build the checker against the installed tessera::core"
cmake -S "$source_dir/tests/plugins/template_check" -B "$work/check" "${generator[@]}" \
  -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/check-configure.log"
cmake --build "$work/check" >"$work/check-build.log"

echo "== model: x -> Relu -> Sigmoid -> Relu -> Add(., x)"
python3 - "$work/model.onnx" <<'PY'
import sys
import onnx
from onnx import TensorProto, helper
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 8, 8])
nodes = [
    helper.make_node("Relu", ["x"], ["r1"], name="relu1"),
    helper.make_node("Sigmoid", ["r1"], ["s"], name="sigmoid"),
    helper.make_node("Relu", ["s"], ["r2"], name="relu2"),
    helper.make_node("Add", ["r2", "x"], ["y"], name="add"),
]
graph = helper.make_graph(nodes, "template_check", [x], [y])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
PY

export TESSERA_PLUGIN_PATH="$work/template"
tessera="$work/prefix/bin/tessera"
echo "== tessera info"
"$tessera" info | tee "$work/info.txt"
grep -q "^  template 0.1.0 (ABI 2\.[0-9]*)" "$work/info.txt"
grep -q "^  reference " "$work/info.txt"

echo "== tessera plan --targets template,reference --json"
"$tessera" plan "$work/model.onnx" --targets template,reference --json | tee "$work/plan.json"
python3 - "$work/plan.json" <<'PY'
import json, sys
plan = {n["name"]: n for n in json.load(open(sys.argv[1]))["nodes"]}
assert plan["relu1"]["plugin"] == "template", plan["relu1"]
assert plan["relu2"]["plugin"] == "template", plan["relu2"]
assert plan["sigmoid"]["plugin"] == "reference", plan["sigmoid"]
assert plan["sigmoid"]["reason"].startswith("template: unsupported: op Sigmoid not implemented"), plan["sigmoid"]
print("plan OK")
PY

echo "== run with the installed core and compare with the reference kernels"
"$work/check/template_check" "$work/model.onnx"

echo "== measure a node on it with the installed tuner library and worker command"
"$work/check/tune_check" "$work/model.onnx" "$tessera"

echo "== the installed runtime library carries no tuner code"
if nm -DC "$work/prefix/lib/libtessera.so" | grep "tessera::tune::"; then
  echo "libtessera.so exports tuner symbols (they belong in libtessera-tune.so)" >&2
  exit 1
fi
