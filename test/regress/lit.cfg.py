# Regression tests: programs test/fuzz/difftest found rewritten wrongly (or
# that crashed the tool), each kept with a lit test of what the rewrite must
# now produce. They are whole difftest programs, so on a GPU
# `test/fuzz/difftest/difftest.py regress` also runs them, original against
# rewritten. The configuration is test/lit's, plus %difftest (the programs'
# header).
import os

lit_config.load_config(
    config, os.path.join(config.project_source_dir, "test", "lit", "lit.cfg.py"))
config.name = "cuda-rewrite-regress"
config.suffixes = [".cu"]
config.test_source_root = os.path.dirname(__file__)
config.substitutions.append(
    ("%difftest", os.path.join(config.project_source_dir, "test", "fuzz", "difftest")))
