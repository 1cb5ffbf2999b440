# lit + FileCheck tests of cuda-rewrite's output, diagnostics and exit codes.
import os
import sys
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
# %check-registers: compile-samples' check of kernels' registers against
# their largest block (test/compile/check-registers.py).
config.substitutions.append(
    ("%check-registers", '"{}" "{}"'.format(
        sys.executable,
        os.path.join(config.project_source_dir, "test", "compile", "check-registers.py"))))
# %nvcc-compile <file> -o <cubin>: compiles a rewritten file for sm_90 with
# the runtime's headers, so that a test of generated code also shows that it
# compiles; without nvcc (NVCC_EXECUTABLE-NOTFOUND) it does nothing. It
# compiles the device side (-cubin): nvcc's front end still checks the whole
# file, host code and static_asserts included, and the host compiler, which
# does not run, was most of each compile's time.
runtime = os.path.join(config.project_source_dir, "runtime", "include")
nvcc = getattr(config, "nvcc", "")
if nvcc and os.path.exists(nvcc):
    config.substitutions.append(
        ("%nvcc-compile", f"{nvcc} -arch=sm_90 -I {runtime} -cubin"))
    config.substitutions.append(("%nvcc", nvcc))
    # Tests that need nvcc's own verdict (a build that must fail) say
    # REQUIRES: nvcc.
    config.available_features.add("nvcc")
else:
    config.substitutions.append(("%nvcc-compile", "true"))
