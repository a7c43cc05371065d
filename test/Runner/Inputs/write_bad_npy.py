"""Writes .npy files whose headers claim shapes their data does not back.

usage: write_bad_npy.py OUT_DIR
claims.npy:   a float32 shape of 2^32 elements (16 GiB) over 12 bytes.
overflow.npy: a shape whose element count overflows 64 bits.
"""
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def write(name, shape_text, payload):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape_text
    # Version 1.0: magic, version, 2-byte header length, header padded
    # with spaces to a 64-byte boundary and ended by '\n'.
    padding = 64 - (10 + len(header) + 1) % 64
    header = header + " " * padding + "\n"
    with open(os.path.join(out, name), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00")
        f.write(len(header).to_bytes(2, "little"))
        f.write(header.encode("latin1"))
        f.write(payload)


write("claims.npy", "(4294967296,)", b"\0" * 12)
write("overflow.npy", "(4611686018427387904, 4, 4)", b"\0" * 12)
