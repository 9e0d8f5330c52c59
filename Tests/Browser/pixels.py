#!/usr/bin/python3
"""Independent reads of images for the review screen's tests, with Pillow (Debian's
python3-pil, hence /usr/bin/python3): what the page showed is compared with what Pillow
reads from the same files.

  pixels.py histogram IMAGE
      {"red": [...256], "green", "blue", "luma"}: Pillow's histograms; luma is its "L"
      conversion (ITU-R 601-2).
  pixels.py tagged OUT W H ORIENTATION
      writes a JPEG of gradients carrying an ICC profile (Pillow's built-in sRGB) and
      the EXIF orientation given.
  pixels.py thumbnailed OUT W H
      writes a W×H JPEG of blue noise (a few MB at 3000×2000) whose EXIF carries a
      160×120 thumbnail of solid red (written by exiftool, as a camera's IFD1).
  pixels.py noise OUT W H
      the same photo without EXIF (no thumbnail).
  pixels.py profile IMAGE
      {"icc": SHA-256 of its ICC profile or null, "width", "height"} (as stored, not turned)
  pixels.py icc IMAGE
      {"description", "grey"}: the description of the image's ICC profile as littleCMS
      (Pillow's ImageCms) reads it, and mid grey (128, 128, 128) in it converted to sRGB.
  pixels.py clipped IMAGE HIGH LOW
      {"high", "low"}: how many pixels have their brightest channel at or above HIGH, and
      at or below LOW.
  pixels.py compare A AX AY B BX BY W H
      {"max", "mean", "pixels"}: the largest and mean difference per value between the
      W×H region of image A at (AX, AY) and that of B at (BX, BY), both in RGB, A turned
      upright by its EXIF orientation.
  pixels.py magnified FRAME CANVAS X0 Y0 W H ZOOM OX OY
      {"mean", "max", "smoothMean"}: how far the W×H crop of FRAME at (X0, Y0), each
      pixel a ZOOM×ZOOM block placed at (OX, OY) of CANVAS, is from CANVAS's pixels; and,
      to show that the comparison tells them apart, how far a smooth (bilinear) upscale of
      a half-size preview of the same crop is.
"""
import hashlib, json, sys
from PIL import Image, ImageCms, ImageOps


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
    elif command in ("thumbnailed", "noise"):
        import os, subprocess
        out, w, h = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        noise = Image.effect_noise((w, h), 60).point(lambda v: v // 2)
        Image.merge("RGB", (noise, noise, Image.new("L", (w, h), 200))).save(out, quality=95)
        if command == "noise":
            print(json.dumps({"size": os.path.getsize(out)}))
            return
        thumb = out + ".thumb.jpg"
        Image.new("RGB", (160, 120), (255, 0, 0)).save(thumb, quality=90)
        subprocess.run(["exiftool", "-q", "-overwrite_original", "-Model=Virtual", "-ThumbnailImage<=" + thumb, out], check=True, timeout=60)
        os.remove(thumb)
        print(json.dumps({"size": os.path.getsize(out)}))
    elif command == "compare":
        a, ax, ay, b, bx, by, w, h = sys.argv[2], *map(int, sys.argv[3:5]), sys.argv[5], *map(int, sys.argv[6:10])
        first = rgb(a).crop((ax, ay, ax + w, ay + h)).tobytes()
        second = rgb(b).crop((bx, by, bx + w, by + h)).tobytes()
        differences = [abs(x - y) for x, y in zip(first, second)]
        print(json.dumps({"max": max(differences), "mean": sum(differences) / len(differences), "pixels": w * h,
                          "sizes": [len(first), len(second)]}))
    elif command == "magnified":
        frame, canvas = rgb(sys.argv[2]), rgb(sys.argv[3])
        x0, y0, w, h, zoom, ox, oy = map(int, sys.argv[4:11])
        crop = frame.crop((x0, y0, x0 + w, y0 + h))
        shown = canvas.crop((ox, oy, ox + w * zoom, oy + h * zoom)).tobytes()
        def distance(image):
            differences = [abs(x - y) for x, y in zip(image.tobytes(), shown)]
            return max(differences), sum(differences) / len(differences)
        largest, mean = distance(crop.resize((w * zoom, h * zoom), Image.Resampling.NEAREST))
        preview = frame.resize((frame.width // 2, frame.height // 2), Image.Resampling.BILINEAR)
        smooth = preview.crop((x0 // 2, y0 // 2, x0 // 2 + w // 2, y0 // 2 + h // 2)).resize((w * zoom, h * zoom), Image.Resampling.BILINEAR)
        print(json.dumps({"max": largest, "mean": mean, "smoothMean": distance(smooth)[1]}))
    elif command == "tagged":
        out, width, height, orientation = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
        image = Image.radial_gradient("L").resize((width, height)).convert("RGB")
        image = Image.merge("RGB", (image.getchannel(0), image.getchannel(1).transpose(Image.Transpose.FLIP_LEFT_RIGHT), image.getchannel(2).rotate(90).resize((width, height))))
        profile = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB"))
        exif = Image.Exif()
        exif[0x0112] = orientation
        image.save(out, "JPEG", quality=92, icc_profile=profile.tobytes(), exif=exif.tobytes())
    elif command == "icc":
        import io
        profile = ImageCms.ImageCmsProfile(io.BytesIO(Image.open(sys.argv[2]).info["icc_profile"]))
        grey = ImageCms.profileToProfile(Image.new("RGB", (1, 1), (128, 128, 128)), profile, ImageCms.createProfile("sRGB"))
        print(json.dumps({"description": ImageCms.getProfileDescription(profile).strip(), "grey": list(grey.getpixel((0, 0)))}))
    elif command == "clipped":
        image, high, low = rgb(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
        brightest = [max(pixel) for pixel in image.getdata()]
        print(json.dumps({"high": sum(1 for b in brightest if b >= high), "low": sum(1 for b in brightest if b <= low)}))
    elif command == "profile":
        image = Image.open(sys.argv[2])
        icc = image.info.get("icc_profile")
        print(json.dumps({"icc": hashlib.sha256(icc).hexdigest() if icc else None, "width": image.width, "height": image.height}))
    else:
        raise SystemExit("unknown command %r" % command)


if __name__ == "__main__":
    main()
