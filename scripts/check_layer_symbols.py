"""Fails when a layer's static library calls into a layer it may not see.

The include check (cmake/check_layers.cmake) sees headers; the linker
alone does not stop a call upwards once the object that defines it is
pulled in by someone else. This reads each layer library's undefined
symbols (nm) and fails on one that only a layer above (or a sibling)
defines.

    check_layer_symbols.py NM LAYER=LIB [LAYER=LIB ...]   (lowest first)
"""

import subprocess
import sys

# What each layer sees besides itself (as in cmake/check_layers.cmake).
SEES = {
    "common": [],
    "ir": ["common"],
    "ops": ["common", "ir"],
    "analysis": ["common", "ir", "ops"],
    "scheduler": ["common", "ir", "ops", "analysis"],
    "segmenter": ["common", "ir", "ops", "analysis", "scheduler"],
    "codegen": ["common", "ir", "ops", "analysis", "scheduler"],
    "compiler": ["common", "ir", "ops", "analysis", "scheduler", "segmenter",
                 "codegen"],
}


def symbols(nm, lib):
    out = subprocess.run([nm, "-g", lib], capture_output=True, text=True,
                         check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRVWu":
            defined.add(parts[2])
    return defined, undefined - defined


def main(argv):
    nm, pairs = argv[1], [a.split("=", 1) for a in argv[2:]]
    libs = {layer: symbols(nm, lib) for layer, lib in pairs}
    bad = []
    for layer, (_, undefined) in libs.items():
        visible = set()
        for seen in SEES.get(layer, []):
            if seen in libs:
                visible |= libs[seen][0]
        for sym in sorted(undefined - visible):
            owners = [o for o, (d, _) in libs.items() if o != layer and
                      sym in d]
            if owners:
                bad.append("%s calls %s, defined in %s" %
                           (layer, sym, ", ".join(owners)))
    if bad:
        print("layering: a layer's library calls one it may not see:")
        print("\n".join("  " + b for b in bad))
        return 1
    print("layering: %d libraries, no call into a layer above"
          % len(libs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
