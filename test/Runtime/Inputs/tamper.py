"""Damages an engine file the ways the runtime must reject.

usage: tamper.py IN OUT MODE [ARG]
  truncate N      keep the first N bytes
  flip OFFSET     flip one bit of the byte at OFFSET (negative: from the end)
  version V       set the format version to V and re-sign the file
  arch NAME       set the manifest's target architecture (a name of the
                  same length) and re-sign
  weight N OFFSET set the offset of the manifest's N-th weight record and
                  re-sign (the manifest may grow into the padding before
                  the first section)
  sections N      keep only the first N sections of the table and re-sign
  append LINE     add LINE to the manifest and re-sign
  signed-flip OFFSET
                  a signed engine (loomc --sign) changed after signing: flip
                  one bit of the byte at OFFSET and recompute the digest of
                  the bytes the header counts, keeping the signature

"Re-sign" recomputes the SHA-256 the way the writer does (over the file
with the digest field zeroed), so that the check after the digest fires.
"""

import hashlib
import struct
import sys

DIGEST_OFFSET = 24


def resign(data):
    data[DIGEST_OFFSET:DIGEST_OFFSET + 32] = bytes(32)
    data[DIGEST_OFFSET:DIGEST_OFFSET + 32] = hashlib.sha256(data).digest()


def replace_manifest(data, new):
    """Puts `new` in the manifest's place (it may grow into the padding
    before the first section) and re-signs."""
    manifest_offset = struct.unpack_from("<Q", data, 72)[0]
    first_section = struct.unpack_from("<Q", data, struct.unpack_from("<Q", data, 56)[0] + 8)[0]
    if manifest_offset + len(new) > first_section:
        sys.exit("the new manifest does not fit before the first section")
    data[manifest_offset:manifest_offset + len(new)] = new
    struct.pack_into("<Q", data, 80, len(new))
    resign(data)


def main():
    src, dst, mode = sys.argv[1:4]
    arg = sys.argv[4] if len(sys.argv) > 4 else None
    data = bytearray(open(src, "rb").read())
    if mode == "truncate":
        data = data[:int(arg)]
    elif mode == "signed-flip":
        size = struct.unpack_from("<Q", data, 16)[0]
        data[int(arg)] ^= 0x01
        content = data[:size]
        resign(content)
        data[:size] = content
    elif mode == "flip":
        offset = int(arg)
        data[offset] ^= 0x01
    elif mode == "version":
        struct.pack_into("<I", data, 8, int(arg))
        resign(data)
    elif mode == "arch":
        manifest_offset, manifest_size = struct.unpack_from("<QQ", data, 72)
        manifest = data[manifest_offset:manifest_offset + manifest_size].decode()
        lines = manifest.split("\n")
        for i, line in enumerate(lines):
            if line.startswith("target "):
                fields = line.split(" ")
                # Same length, so that no offset moves.
                if len(arg) != len(fields[1]):
                    sys.exit("the new architecture name must be as long as %r" % fields[1])
                fields[1] = arg
                lines[i] = " ".join(fields)
        new = "\n".join(lines).encode()
        data[manifest_offset:manifest_offset + manifest_size] = new
        resign(data)
    elif mode == "weight":
        index, offset = int(arg), sys.argv[5]
        manifest_offset, manifest_size = struct.unpack_from("<QQ", data, 72)
        lines = data[manifest_offset:manifest_offset + manifest_size].decode().split("\n")
        weights = [i for i, line in enumerate(lines) if line.startswith("weight ")]
        fields = lines[weights[index]].split(" ")
        fields[2] = offset
        lines[weights[index]] = " ".join(fields)
        replace_manifest(data, "\n".join(lines).encode())
    elif mode == "append":
        manifest_offset, manifest_size = struct.unpack_from("<QQ", data, 72)
        replace_manifest(data, bytes(data[manifest_offset:manifest_offset + manifest_size])
                         + arg.encode() + b"\n")
    elif mode == "sections":
        struct.pack_into("<I", data, 64, int(arg))
        resign(data)
    else:
        sys.exit("unknown mode " + mode)
    open(dst, "wb").write(data)


if __name__ == "__main__":
    main()
