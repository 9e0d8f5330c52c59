#!/usr/bin/python3
"""Independent reads of images for the review screen's tests, with Pillow (Debian's
python3-pil, hence /usr/bin/python3): what the page showed is compared with what Pillow
reads from the same files.

  pixels.py histogram IMAGE
      {"red": [...256], "green", "blue", "luma"}: Pillow's histograms; luma is its "L"
      conversion (ITU-R 601-2).
  pixels.py compare A AX AY B BX BY W H
      {"max", "mean", "pixels"}: the largest and mean difference per value between the
      W×H region of image A at (AX, AY) and that of B at (BX, BY), both in RGB, A turned
      upright by its EXIF orientation.
"""
import json, sys
from PIL import Image, ImageOps


def rgb(path):
    image = Image.open(path)
    return ImageOps.exif_transpose(image).convert("RGB")


def main():
    command = sys.argv[1]
    if command == "histogram":
        image = rgb(sys.argv[2])
        counts = image.histogram()
        print(json.dumps({"red": counts[0:256], "green": counts[256:512], "blue": counts[512:768],
                          "luma": image.convert("L").histogram(), "width": image.width, "height": image.height}))
    elif command == "compare":
        a, ax, ay, b, bx, by, w, h = sys.argv[2], *map(int, sys.argv[3:5]), sys.argv[5], *map(int, sys.argv[6:10])
        first = rgb(a).crop((ax, ay, ax + w, ay + h)).tobytes()
        second = rgb(b).crop((bx, by, bx + w, by + h)).tobytes()
        differences = [abs(x - y) for x, y in zip(first, second)]
        print(json.dumps({"max": max(differences), "mean": sum(differences) / len(differences), "pixels": w * h,
                          "sizes": [len(first), len(second)]}))
    else:
        raise SystemExit("unknown command %r" % command)


if __name__ == "__main__":
    main()
