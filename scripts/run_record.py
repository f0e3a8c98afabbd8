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


def gzip_copy(src, dst):
    """SRC gzipped to DST, byte for byte the same for the same SRC."""
    with open(src, "rb") as fin, gzip.GzipFile(dst, "wb", mtime=0) as fout:
        shutil.copyfileobj(fin, fout)
