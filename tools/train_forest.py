#!/usr/bin/python3
"""Train Credence's drop oracle: a scikit-learn RandomForestClassifier on LQD-labelled traces
(`sharebuf-replay --lqd-trace`), evaluated on a held-out split, exported as the JSON model the
`forest` oracle loads (policies/forest_oracle.h): an array of trees, each a flat array of nodes
{feature, threshold, left, right, value}; feature -1 marks a leaf whose value is the fraction of
its training samples that LQD dropped or pushed out.

usage: tools/train_forest.py TRACE.csv [TRACE.csv...] -o MODEL.json
           [--trees 4] [--depth 4] [--test-fraction 0.3] [--seed 1] [--max-rows N]
           [--predictions HELDOUT.csv]

--predictions writes the held-out rows' features with scikit-learn's prediction, so the C++
inference can be checked against it (tools/forest_check).
"""
import argparse
import csv
import json
import sys

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score
from sklearn.model_selection import train_test_split

FEATURES = ["queue_cells", "total_cells", "ewma_queue_cells", "ewma_total_cells"]


def load(paths, max_rows):
    xs, ys = [], []
    for path in paths:
        try:
            with open(path) as f:
                reader = csv.DictReader(f)
                missing = [c for c in FEATURES + ["label"] if c not in (reader.fieldnames or [])]
                if missing:
                    sys.exit(f"train_forest.py: {path}: not an LQD trace (missing columns {missing})")
                for i, row in enumerate(reader, start=2):
                    try:
                        xs.append([float(row[c]) for c in FEATURES])
                        ys.append(int(row["label"]))
                    except (TypeError, ValueError):
                        sys.exit(f"train_forest.py: {path}:{i}: bad row {row}")
        except OSError as e:
            sys.exit(f"train_forest.py: {e}")
    x, y = np.array(xs), np.array(ys)
    if max_rows and len(y) > max_rows:
        keep = np.random.default_rng(0).choice(len(y), max_rows, replace=False)
        keep.sort()
        x, y = x[keep], y[keep]
    return x, y


def export(forest):
    trees = []
    for est in forest.estimators_:
        t = est.tree_
        nodes = []
        for i in range(t.node_count):
            counts = t.value[i][0]
            total = float(counts.sum())
            p_drop = float(counts[1]) / total if total > 0 and len(counts) > 1 else 0.0
            if forest.classes_[-1] != 1:  # only one class seen: everything is that class
                p_drop = float(forest.classes_[0] == 1)
            leaf = t.children_left[i] == -1
            nodes.append({
                "feature": -1 if leaf else int(t.feature[i]),
                "threshold": 0.0 if leaf else float(t.threshold[i]),
                "left": -1 if leaf else int(t.children_left[i]),
                "right": -1 if leaf else int(t.children_right[i]),
                "value": p_drop,
            })
        trees.append(nodes)
    return trees


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="+")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--trees", type=int, default=4)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--test-fraction", type=float, default=0.3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-rows", type=int, default=0, help="subsample to this many rows (0: all)")
    ap.add_argument("--predictions", help="write held-out features and sklearn's predictions here")
    a = ap.parse_args()

    x, y = load(a.traces, a.max_rows)
    if len(set(y)) < 2:
        sys.exit(f"train_forest.py: the traces have only label {y[0] if len(y) else '-'}; "
                 "replay a heavier load so that LQD drops something")
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=a.test_fraction, random_state=a.seed, stratify=y)
    forest = RandomForestClassifier(n_estimators=a.trees, max_depth=a.depth, random_state=a.seed)
    forest.fit(x_train, y_train)
    pred = forest.predict(x_test)
    print(f"rows: {len(y)} ({int(y.sum())} labelled drop, {100 * y.mean():.1f} %); "
          f"train {len(y_train)}, held out {len(y_test)}")
    print(f"forest: {a.trees} trees, max depth {a.depth}")
    print(f"held-out accuracy  {accuracy_score(y_test, pred):.4f}")
    print(f"held-out precision {precision_score(y_test, pred, zero_division=0):.4f}")
    print(f"held-out recall    {recall_score(y_test, pred, zero_division=0):.4f}")
    print(f"held-out F1        {f1_score(y_test, pred, zero_division=0):.4f}")
    with open(a.output, "w") as f:
        json.dump(export(forest), f, separators=(",", ":"))
        f.write("\n")
    print(f"model written to {a.output}")
    if a.predictions:
        with open(a.predictions, "w") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(FEATURES + ["sklearn_prediction"])
            for row, p in zip(x_test, pred):
                w.writerow([repr(float(v)) for v in row] + [int(p)])
        print(f"held-out predictions written to {a.predictions}")


if __name__ == "__main__":
    main()
