#!/usr/bin/env python3
"""A stand-in for cuda-rewrite that checks the runner's builds with other
definitions (README.md, "Spelled constants"): it rewrites nothing, but

  - in the `pragma` variant's file, spells every spelled macro's use by its
    default value (the bug those builds look for: a value baked in);
  - in the `default` and `kernel` variants' files, adds a failed-at-other-
    values `static_assert` after every spelled macro (what the tool should
    write for a value it cannot spell);
  - writes every other file unchanged.

  difftest.py prepare --tool test/fuzz/difftest/stand-in-tool.py --pass systolic ...

then `run` on the GPU machine reports the baked programs as failed (where
their results differ) and the others as pinned or same. It takes the tool's
command line: [--remarks] [flags] SOURCE -o OUTPUT [-- compiler args]."""

import re
import sys

DEFINE = re.compile(r"#define (DT_\w+) (\S+)")


def bake(text, macros):
    """Every use of the macros (not their #ifndef or #define) by value."""
    for macro, value in macros:
        text = re.sub(r"(?<!define )(?<!ifndef )\b" + macro + r"\b", value,
                      text)
    return text


def pin(text, macros):
    """A static_assert on each macro's default after its definition."""
    for macro, value in macros:
        block = f"#define {macro} {value}\n#endif\n"
        text = text.replace(block, block + f'static_assert({macro} == {value}'
                            f', "{macro} pinned at {value}");\n')
    return text


def main(argv):
    at = argv.index("-o")
    source, output = argv[at - 1], argv[at + 1]
    text = open(source).read()
    macros = DEFINE.findall(text)
    if ".pragma." in source:
        text = bake(text, macros)
    elif ".default." in source or ".kernel." in source:
        text = pin(text, macros)
    with open(output, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
