"""The two file operations every report's record shares (docs/runs/README.md): a CSV read from a
run's folder or from the gzipped copy a record keeps, and that gzipped copy written
reproducibly (no timestamp in the header, so re-recording the same run changes no byte)."""
import csv
import gzip
import os
import shutil


def read_rows(folder, name):
    """The rows of FOLDER/NAME, or of FOLDER/NAME.gz when only the record's copy is there."""
    path = os.path.join(folder, name)
    if os.path.exists(path):
        with open(path) as f:
            return list(csv.DictReader(f))
    with gzip.open(path + ".gz", "rt") as f:
        return list(csv.DictReader(f))


def copy_fresh(out, dest, names, extra=lambda name: False):
    """DEST emptied and made again, holding OUT's NAMES, its effective*.toml and the files of OUT
    that EXTRA accepts (by name): a record holds exactly what render() reads. Returns DEST."""
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    for name in list(names) + [n for n in sorted(os.listdir(out)) if n not in names and (
            (n.startswith("effective") and n.endswith(".toml")) or extra(n))]:
        shutil.copy(os.path.join(out, name), os.path.join(dest, name))
    return dest


def gzip_copy(src, dst):
    """SRC gzipped to DST, byte for byte the same for the same SRC."""
    with open(src, "rb") as fin, gzip.GzipFile(dst, "wb", mtime=0) as fout:
        shutil.copyfileobj(fin, fout)
