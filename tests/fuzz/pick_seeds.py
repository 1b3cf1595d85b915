#!/usr/bin/env python3
"""Picks a small seed corpus out of a large fuzzing corpus (docs/fuzzing.md).

    pick_seeds.py CONTROL_FILE OUT_DIR [--count 32] [--max-bytes 256]

CONTROL_FILE is the file that `program_fuzzer -merge=1
-merge_control_file=CONTROL_FILE EMPTY_DIR CORPUS_DIR` leaves: the inputs'
paths (as given on that command line: run this script from the same
directory), then per input an "FT <index> <features...>" line. The merge runs
the inputs from the smallest up and lists for each only the coverage features
(edges and hit-count buckets) that no input before it reached, so the lists
are disjoint and the inputs with the longest lists are the ones that add the
most. This script copies the --count inputs of at most --max-bytes bytes with
the longest lists to OUT_DIR, under the SHA-1 of their bytes as libFuzzer
names them.
"""
import argparse
import hashlib
import os
import shutil
import sys


def read_control_file(path):
    with open(path) as f:
        lines = f.read().splitlines()
    count = int(lines[0])
    files = lines[2:2 + count]  # line 1: how many belong to the first corpus
    features = {}
    for line in lines[2 + count:]:
        words = line.split()
        if words and words[0] == "FT":
            features[int(words[1])] = len(words) - 2
    return files, features


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("control_file")
    parser.add_argument("out_dir")
    parser.add_argument("--count", type=int, default=32)
    parser.add_argument("--max-bytes", type=int, default=256)
    args = parser.parse_args()

    files, features = read_control_file(args.control_file)
    small = [i for i in features if os.path.getsize(files[i]) <= args.max_bytes]
    # Longest lists first; on a tie the smaller input.
    small.sort(key=lambda i: (-features[i], os.path.getsize(files[i])))
    picked = [i for i in small[:args.count] if features[i] > 0]

    os.makedirs(args.out_dir, exist_ok=True)
    total = 0
    for i in picked:
        with open(files[i], "rb") as f:
            data = f.read()
        shutil.copyfile(files[i], os.path.join(args.out_dir, hashlib.sha1(data).hexdigest()))
        total += len(data)
        print(f"{files[i]}: {len(data)} bytes, {features[i]} new features")
    print(f"{len(picked)} inputs, {total} bytes, {sum(features[i] for i in picked)} of the "
          f"{sum(features.values())} features listed for all {len(files)} inputs", file=sys.stderr)


if __name__ == "__main__":
    main()
