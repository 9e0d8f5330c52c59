#!/usr/bin/env python3
"""Writes a small DNG, as a camera's RAW stands in for tests: a Bayer (RGGB) mosaic of
16-bit samples, uncompressed, in a SubIFD, and optionally a JPEG preview in IFD0, as
cameras and converters embed one. The mosaic is a picture a decoder can be checked
against: a horizontal gradient in red, a vertical one in blue, green in between, with a
bright square in the top-left quarter.

    make_dng.py OUT.dng --width 1200 --height 800 [--preview PREVIEW.jpg] [--orientation 6]
"""
import argparse, struct, sys
from array import array

TYPES = {"BYTE": 1, "ASCII": 2, "SHORT": 3, "LONG": 4, "RATIONAL": 5, "SRATIONAL": 10}
SIZES = {1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 10: 8}


def mosaic(width, height):
    samples = array("H")
    reds = [int(4000 * x / max(1, width - 1)) for x in range(width)]
    for y in range(height):
        blue = int(4000 * y / max(1, height - 1))
        if y % 2 == 0:
            row = [256 + (red if x % 2 == 0 else (red + blue) // 2) for x, red in enumerate(reds)]
        else:
            row = [256 + ((red + blue) // 2 if x % 2 == 0 else blue) for x, red in enumerate(reds)]
        if y < height // 4:
            row[:width // 4] = [256 + 3800] * (width // 4)
        samples.extend(row)
    if sys.byteorder != "little":
        samples.byteswap()
    return samples.tobytes()


class IFD:
    def __init__(self):
        self.entries = []

    def add(self, tag, kind, values):
        self.entries.append((tag, TYPES[kind], values))


def encode(ifd, offset, blobs):
    """The IFD at `offset`; values that do not fit in 4 bytes go after it."""
    entries = sorted(ifd.entries)
    head = struct.pack("<H", len(entries))
    extra = bytearray()
    extra_start = offset + 2 + 12 * len(entries) + 4
    body = b""
    for tag, kind, values in entries:
        if kind == 2:
            data = values.encode() + b"\0"
            count = len(data)
        elif kind in (5, 10):
            data = b"".join(struct.pack("<ii" if kind == 10 else "<II", *pair) for pair in values)
            count = len(values)
        else:
            fmt = {1: "B", 3: "H", 4: "I"}[kind]
            data = b"".join(struct.pack("<" + fmt, v) for v in values)
            count = len(values)
        if len(data) <= 4:
            field = data.ljust(4, b"\0")
        else:
            field = struct.pack("<I", extra_start + len(extra))
            extra += data
            if len(extra) % 2:
                extra += b"\0"
        body += struct.pack("<HHI", tag, kind, count) + field
    return head + body + struct.pack("<I", 0) + bytes(extra)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--width", type=int, default=1200)
    parser.add_argument("--height", type=int, default=800)
    parser.add_argument("--preview")
    parser.add_argument("--orientation", type=int, default=1)
    args = parser.parse_args()
    width, height = args.width - args.width % 2, args.height - args.height % 2
    raw = mosaic(width, height)
    preview = open(args.preview, "rb").read() if args.preview else None

    # Layout: header, IFD0 (at 8, fixed size estimate below), raw IFD, then data.
    def build(ifd0_size, raw_ifd_size):
        ifd0_at, raw_ifd_at = 8, 8 + ifd0_size
        data_at = raw_ifd_at + raw_ifd_size
        raw_at = data_at
        preview_at = raw_at + len(raw)
        ifd0 = IFD()
        ifd0.add(0x00FE, "LONG", [1 if preview else 0])
        ifd0.add(0x010F, "ASCII", "shutterpipe")
        ifd0.add(0x0110, "ASCII", "Test DNG")
        ifd0.add(0x0112, "SHORT", [args.orientation])
        ifd0.add(0xC612, "BYTE", [1, 4, 0, 0])
        ifd0.add(0xC613, "BYTE", [1, 1, 0, 0])
        ifd0.add(0xC614, "ASCII", "shutterpipe Test DNG")
        ifd0.add(0xC621, "SRATIONAL", [(10000, 10000), (0, 10000), (0, 10000), (0, 10000), (10000, 10000), (0, 10000),
                                        (0, 10000), (0, 10000), (10000, 10000)])
        ifd0.add(0xC628, "RATIONAL", [(1, 1), (1, 1), (1, 1)])
        ifd0.add(0xC65A, "SHORT", [21])
        ifd0.add(0x014A, "LONG", [raw_ifd_at])
        if preview:
            # The preview JPEG's own size, from its SOF marker.
            index, pw, ph = 2, 0, 0
            while index < len(preview):
                marker, length = preview[index + 1], struct.unpack(">H", preview[index + 2:index + 4])[0]
                if marker in (0xC0, 0xC1, 0xC2):
                    ph, pw = struct.unpack(">HH", preview[index + 5:index + 9])
                    break
                index += 2 + length
            ifd0.add(0x0100, "LONG", [pw])
            ifd0.add(0x0101, "LONG", [ph])
            ifd0.add(0x0102, "SHORT", [8, 8, 8])
            ifd0.add(0x0103, "SHORT", [7])
            ifd0.add(0x0106, "SHORT", [6])
            ifd0.add(0x0111, "LONG", [preview_at])
            ifd0.add(0x0115, "SHORT", [3])
            ifd0.add(0x0116, "LONG", [ph])
            ifd0.add(0x0117, "LONG", [len(preview)])
        rawifd = IFD()
        rawifd.add(0x00FE, "LONG", [0])
        rawifd.add(0x0100, "LONG", [width])
        rawifd.add(0x0101, "LONG", [height])
        rawifd.add(0x0102, "SHORT", [16])
        rawifd.add(0x0103, "SHORT", [1])
        rawifd.add(0x0106, "SHORT", [32803])
        rawifd.add(0x0111, "LONG", [raw_at])
        rawifd.add(0x0115, "SHORT", [1])
        rawifd.add(0x0116, "LONG", [height])
        rawifd.add(0x0117, "LONG", [len(raw)])
        rawifd.add(0x011C, "SHORT", [1])
        rawifd.add(0x828D, "SHORT", [2, 2])
        rawifd.add(0x828E, "BYTE", [0, 1, 1, 2])
        rawifd.add(0xC61A, "LONG", [256])
        rawifd.add(0xC61D, "LONG", [256 + 4095])
        return encode(ifd0, ifd0_at, None), encode(rawifd, raw_ifd_at, None), raw_at, preview_at

    sizes = (0, 0)
    for _ in range(3):
        first, second, raw_at, preview_at = build(*sizes)
        sizes = (len(first), len(second))
    first, second, raw_at, preview_at = build(*sizes)
    with open(args.out, "wb") as f:
        f.write(b"II*\0" + struct.pack("<I", 8) + first + second + raw + (preview or b""))


if __name__ == "__main__":
    main()
