#!/usr/bin/env python3
"""Writes MODULE with its entry computation called from N call sites (issue 20's scaling check).

The entry becomes an ordinary computation; a new entry takes the same parameters (with their
shardings) and calls it N times, returning every call's first result leaf. Partition time should
grow linearly in N:  bench/call_sites.py in.hlo 8 > c8.hlo; bench/call_sites.py in.hlo 16 > c16.hlo
"""
import re
import sys


def main():
    text = open(sys.argv[1]).read()
    # The header's layout and aliasing describe the old entry; keep only the device count.
    first, rest = text.split("\n", 1)
    partitions = re.search(r"num_partitions=\d+", first)
    text = "HloModule call_sites" + (", " + partitions.group(0) if partitions else "") + "\n" + rest
    sites = int(sys.argv[2])
    start = text.index("\nENTRY ")
    header_end = text.index("{\n", start)
    signature = text[start + len("\nENTRY "):header_end]
    name = signature.split()[0].split("(")[0]
    body_end = text.index("\n}", header_end)
    body = text[header_end + 2:body_end].split("\n")
    params = sorted((l for l in body if re.search(r"\bparameter\(\d+\)", l)),
                    key=lambda l: int(re.search(r"\bparameter\((\d+)\)", l).group(1)))
    root = next(l for l in body if l.strip().startswith("ROOT "))
    result_shape = root.split("=", 1)[1].strip()
    callee = text[:start] + "\n" + signature.replace(name, name, 1) + "{\n" + "\n".join(body) + "\n}\n"
    out = [callee.replace("\nENTRY ", "\n"), "ENTRY %call_sites {"]
    names = []
    for line in params:
        line = line.replace("ROOT ", "")
        out.append(line)
        names.append(line.split("=")[0].strip())
    results = []
    for i in range(sites):
        out.append(f"  %site.{i} = {shape_of(result_shape)} call({', '.join(names)}), to_apply={name}")
        leaf = first_leaf_shape(result_shape)
        out.append(f"  %leaf.{i} = {leaf} get-tuple-element(%site.{i}), index=0")
        results.append((f"%leaf.{i}", leaf))
    out.append(f"  ROOT %all = ({', '.join(s for _, s in results)}) tuple({', '.join(n for n, _ in results)})")
    out.append("}")
    print("\n".join(out))


def shape_of(rest):
    """The result shape at the start of `rest` (balanced parentheses for tuples)."""
    if not rest.startswith("("):
        return rest.split(" ")[0]
    depth = 0
    for i, c in enumerate(rest):
        depth += c == "("
        depth -= c == ")"
        if depth == 0:
            return rest[: i + 1]
    raise ValueError("unbalanced result shape")


def first_leaf_shape(rest):
    shape = shape_of(rest)
    inner = shape[1:]
    return re.match(r"[a-z0-9]+\[[^\]]*\](\{[^}]*\})?", inner).group(0)


if __name__ == "__main__":
    main()
