"""Program generators for differential testing, one module per pass.

Each module exposes PASS (the pass's name), VARIANTS (how the runner rewrites
and runs a file of its programs) and generate(rng, name) -> common.Program.
"""

import importlib

PASSES = ["systolic", "aggregate", "promote", "fuse", "pipeline"]


def generator(pass_name):
    """The generator module of a pass."""
    if pass_name not in PASSES:
        raise ValueError(f"no generator for pass '{pass_name}'")
    return importlib.import_module(f".{pass_name}", __name__)
