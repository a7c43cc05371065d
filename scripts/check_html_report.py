#!/usr/bin/env python3
"""Opens an HTML report of `loomc --report-html` in headless Chromium and
checks what a person would see: the page loads with no console error, its
script ran (it marks <body data-rendered=N> with the number of pictures),
at least --min-pictures SVG pictures are in the rendered DOM, and a
screenshot is drawn (more distinct colours than a blank or text-only page).

  check_html_report.py report.html [--chromium chromium] [--min-pictures 3]
                       [--screenshot out.png]
Exit status 0 when every check passes; each failure is printed.
"""

import argparse
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib


def png_colours(path, sample_step=3):
    """The number of distinct RGB colours of an 8-bit RGB(A) PNG, sampling
    every `sample_step`-th pixel of every `sample_step`-th row."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour_type = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour_type not in (2, 6):
                raise ValueError("expected an 8-bit RGB or RGBA PNG")
            channels = 3 if colour_type == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    previous = bytearray(stride)
    colours = set()
    offset = 0
    for row in range(height):
        kind = raw[offset]
        line = bytearray(raw[offset + 1:offset + 1 + stride])
        offset += 1 + stride
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                predictor = left if pa <= pb and pa <= pc else (
                    up if pb <= pc else up_left)
                line[i] = (line[i] + predictor) & 0xFF
        previous = line
        if row % sample_step == 0:
            for x in range(0, width, sample_step):
                at = x * channels
                colours.add(bytes(line[at:at + 3]))
    return len(colours)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("report")
    parser.add_argument("--chromium", default="chromium")
    parser.add_argument("--min-pictures", type=int, default=3)
    parser.add_argument("--min-colours", type=int, default=12)
    parser.add_argument("--screenshot")
    args = parser.parse_args()

    url = "file://" + os.path.abspath(args.report)
    base = [args.chromium, "--headless", "--no-sandbox", "--disable-gpu",
            "--enable-logging=stderr", "--v=0", "--window-size=1280,2000"]
    failures = []
    dom = subprocess.run(base + ["--dump-dom", url], capture_output=True,
                         text=True, timeout=120)
    # Chromium reports the page's console messages on stderr as
    # "CONSOLE(line)" or with the source "console"; uncaught exceptions too.
    console = [line for line in dom.stderr.splitlines()
               if re.search(r"CONSOLE|Uncaught|console\(", line)]
    if dom.returncode != 0:
        failures.append(f"chromium exited with {dom.returncode}")
    if console:
        failures.append("console messages:\n  " + "\n  ".join(console))
    rendered = re.search(r'<body[^>]*data-rendered="(\d+)"', dom.stdout)
    if not rendered:
        failures.append("the page's script did not run to its end "
                        "(no data-rendered on <body>)")
    pictures = len(re.findall(r"<svg\b", dom.stdout))
    if pictures < args.min_pictures:
        failures.append(f"{pictures} SVG pictures, expected at least "
                        f"{args.min_pictures}")

    with tempfile.TemporaryDirectory() as tmp:
        shot = args.screenshot or os.path.join(tmp, "report.png")
        subprocess.run(base + [f"--screenshot={shot}", url],
                       capture_output=True, text=True, timeout=120)
        if not os.path.exists(shot):
            failures.append("no screenshot was written")
        else:
            colours = png_colours(shot)
            if colours < args.min_colours:
                failures.append(f"the screenshot has {colours} colours: "
                                "nothing was drawn")
            else:
                print(f"screenshot: {colours} distinct colours")
    print(f"pictures: {pictures}; script ran: {bool(rendered)}; "
          f"console messages: {len(console)}")
    for failure in failures:
        print("FAIL: " + failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
