#!/usr/bin/env python3
"""Prints an MxKxN f32 matrix product whose right operand is a constant
(a weight), as a program for loomc: `constant-matmul.py M K N [SEED]`.

The weight's values are pseudo-random in [-1, 1) from SEED (default 1),
written as a hex dense attribute; no third-party modules needed.
"""
import random
import struct
import sys


def main():
    m, k, n = (int(x) for x in sys.argv[1:4])
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    data = struct.pack("<%df" % (k * n),
                       *(rng.uniform(-1.0, 1.0) for _ in range(k * n)))
    a, b, c = (f"tensor<{m}x{k}xf32>", f"tensor<{k}x{n}xf32>",
               f"tensor<{m}x{n}xf32>")
    print(f"// A {m}x{k}x{n} f32 matrix product with a constant {k}x{n} "
          "weight.")
    print(f"func.func @main(%a: {a}) -> {c} {{")
    print(f'  %w = arith.constant dense<"0x{data.hex().upper()}"> : {b}')
    print("  %z = arith.constant 0.0 : f32")
    print(f"  %e = tensor.empty() : {c}")
    print(f"  %f = linalg.fill ins(%z : f32) outs(%e : {c}) -> {c}")
    print(f"  %r = linalg.matmul ins(%a, %w : {a}, {b}) outs(%f : {c}) -> {c}")
    print(f"  return %r : {c}")
    print("}")


if __name__ == "__main__":
    main()
