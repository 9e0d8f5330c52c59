"""Shared pieces of the benchmark scripts: builds, a corpus of camera-sized JPEGs, and
writing results into docs/benchmarks.md."""
import os, shutil, subprocess, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def sh(args, **kw):
    return subprocess.run(args, check=True, **kw)

def build(*products):
    for product in products:
        sh(["swift", "build", "-c", "release", "--product", product], cwd=ROOT, stdout=subprocess.DEVNULL)
    return [os.path.join(ROOT, ".build", "release", p) for p in products]

def build_revision(revision, work, name, products):
    """`products` at `revision`, built once (release) in a worktree of its own under `work`,
    kept between runs; returns their paths and the short commit."""
    import sys
    commit = subprocess.run(["git", "rev-parse", revision], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    tree = os.path.join(work, "%s-%s" % (name, commit[:10]))
    binaries = [os.path.join(tree, ".build", "release", product) for product in products]
    if not all(os.path.exists(binary) for binary in binaries):
        if not os.path.exists(tree):
            sh(["git", "worktree", "add", "--detach", tree, commit], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print("building %s at %s (once; several minutes)" % (", ".join(products), commit[:10]), file=sys.stderr)
        for product in products:
            sh(["swift", "build", "-c", "release", "--product", product], cwd=tree, stdout=subprocess.DEVNULL)
    return binaries, commit[:10]

def build_capture_loop(work):
    """scripts/bench/capture-loop.c (the plain C loop on libgphoto2), compiled into `work`."""
    compiler = shutil.which("clang") or shutil.which("cc")
    binary = os.path.join(work, "capture-loop")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libgphoto2"], capture_output=True, text=True, check=True).stdout.split()
    sh([compiler, "-O2", "-o", binary, os.path.join(ROOT, "scripts", "bench", "capture-loop.c")] + flags)
    return binary

def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path

def fsync_path(path, directory=False):
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    os.fsync(fd)
    os.close(fd)

def make_corpus(binary, folder, count):
    """count camera-sized JPEGs (6000x4000, 8-12 MB) with a real camera's EXIF and
    MakerNote copied in when ../shared/samples is there; cached between runs."""
    stamp = os.path.join(folder, ".complete-%d" % count)
    if os.path.exists(stamp):
        return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".jpg"))
    fresh(folder)
    per = [count // 5 + (1 if i < count % 5 else 0) for i in range(5)]
    for index, detail in enumerate([8, 9, 10, 11, 12]):
        if per[index] == 0:
            continue
        config = os.path.join(folder, "gen.yaml")
        with open(config, "w") as f:
            f.write("version: 1\nsession: bench\nbackend: {type: file-stub, width: 6000, height: 4000, detail: %d}\n"
                    "triggers: [{type: stdin}]\nsinks: [{type: files, directory: %s, filename: \"IMG_%d{seq:03}.jpg\"}]\n"
                    % (detail, folder, index))
        sh([binary, "run", "--config", config], input=("capture\n" * per[index]).encode(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.remove(config)
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".jpg"))
    sample = os.path.join(os.path.dirname(ROOT), "shared", "samples", "camera-jpegs", "Canon_40D.jpg")
    if os.path.exists(sample):
        sh(["exiftool", "-q", "-overwrite_original", "-TagsFromFile", sample, "-all:all", "-makernotes"] + files)
        source = "EXIF and MakerNote of a Canon 40D (../shared/samples)"
    else:
        sh(["exiftool", "-q", "-overwrite_original", "-Make=Canon", "-Model=Canon EOS 40D", "-DateTimeOriginal=2026:06:01 10:00:00"] + files)
        source = "generic EXIF written by exiftool (no MakerNote: ../shared/samples not found)"
    with open(os.path.join(folder, ".source"), "w") as f:
        f.write(source)
    open(stamp, "w").close()
    return files

def corpus_source(folder):
    return open(os.path.join(folder, ".source")).read()

def write_section(key, text):
    """Replaces (or appends) the section between <!-- bench:key --> markers."""
    path = os.path.join(ROOT, "docs", "benchmarks.md")
    begin, end = "<!-- bench:%s -->" % key, "<!-- /bench:%s -->" % key
    current = open(path).read() if os.path.exists(path) else "# Benchmarks\n"
    block = "%s\n%s%s" % (begin, text, end)
    if begin in current:
        current = current[:current.index(begin)] + block + current[current.index(end) + len(end):]
    else:
        current = current.rstrip() + "\n\n" + block + "\n"
    with open(path, "w") as f:
        f.write(current)

def today():
    return time.strftime("%Y-%m-%d")
