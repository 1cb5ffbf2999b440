# lit + FileCheck tests of cuda-rewrite's output, diagnostics and exit codes.
import os
import lit.formats

config.name = "cuda-rewrite"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".cu", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)

# FileCheck, not, count, split-file and clang-apply-replacements.
config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])])
config.substitutions.append(("%cuda-rewrite", config.cuda_rewrite))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("%runtime", os.path.join(config.project_source_dir, "runtime", "include")))
