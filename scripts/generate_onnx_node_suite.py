#!/usr/bin/env python3
"""Writes the ONNX backend node suite of the installed onnx package.

Wheels of onnx from PyPI carry the node test cases as Python code
(onnx.backend.test.case.node), not as files. This writes each case in the
layout of Debian's libonnx-testdata: OUT/<case>/model.onnx and
OUT/<case>/test_data_set_N/{input,output}_M.pb.

usage: python generate_onnx_node_suite.py OUT_DIR
(run it with the interpreter that has the newer onnx, e.g. a venv)
"""

import os
import shutil
import sys

import onnx
from onnx import numpy_helper
from onnx.backend.test.case import node


def serialize(value, value_info):
    kind = value_info.type
    if kind.HasField("sequence_type"):
        return numpy_helper.from_list(value, value_info.name)
    if kind.HasField("optional_type"):
        return numpy_helper.from_optional(value, value_info.name)
    if kind.HasField("map_type"):
        return numpy_helper.from_dict(value, value_info.name)
    if isinstance(value, onnx.TensorProto):
        return value
    return numpy_helper.from_array(value, value_info.name)


def main():
    out = sys.argv[1]
    cases = node.collect_testcases(None)
    written = 0
    for case in cases:
        case_dir = os.path.join(out, case.name)
        if os.path.exists(case_dir):
            shutil.rmtree(case_dir)
        os.makedirs(case_dir)
        with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
            f.write(case.model.SerializeToString())
        for i, (inputs, outputs) in enumerate(case.data_sets or []):
            data_dir = os.path.join(case_dir, "test_data_set_%d" % i)
            os.makedirs(data_dir)
            for kind, values, infos in (("input", inputs, case.model.graph.input),
                                        ("output", outputs, case.model.graph.output)):
                for j, value in enumerate(values):
                    try:
                        proto = serialize(value, infos[j])
                    except Exception:  # an exotic value kind: keep the model
                        continue
                    with open(os.path.join(data_dir, "%s_%d.pb" % (kind, j)), "wb") as f:
                        f.write(proto.SerializeToString())
        written += 1
    print("onnx %s: wrote %d node cases to %s" % (onnx.__version__, written, out))


if __name__ == "__main__":
    main()
