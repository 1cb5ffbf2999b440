"""Recursive single-block chains for the promote pass (KLAP launch
promotion, docs/promote.md): a kernel run as one block that handles one
chunk (a link) and launches itself, from thread 0, on the rest.

Kinds (rough frequencies):
  map (22%)        out[i] from in[i] and the chunk; nothing postponed; one
                   or several items per thread; chunks walked up, or down
                   from the last (p - c); sometimes atomic counters, a
                   launch condition known only in the body (the chain stops
                   early: speculative launch), or a second host launch.
  scan (14%)       inclusive prefix sums, the running total postponed
                   (a Hillis-Steele scan in shared memory before the
                   overlap boundary).
  compact (13%)    the elements that pass a test, in order; the offset
                   postponed; the last link writes the count.
  partition (11%)  selected ones to the front, the others to the back
                   (reversed); the count of selected postponed.
  max (9%)         running maximum (line of sight), the maximum postponed.
  range (9%)       [begin, end) one chunk at a time: begin + kChunk.
  inplace (9%)     one buffer read and written; whether the chain goes on
                   is decided by the block (__syncthreads_or): speculative.
  grow (5%)        ranges of doubling width (start + width, width * 2): an
                   argument that is not p +- c, so aggregate(n) is refused.
Links: 1 to 20 (P and PO nest as deep as the chain). The self-launch goes
to cudaStreamTailLaunch or the default stream with a block written as a
literal, a constexpr or blockDim.x; host launches on the default stream or
a created one. Pragmas: `promote` with random aggregate(n) and overlap;
`overlap_boundary` in most kernels.

About 12% of programs carry a form the pass must refuse (two self-launches
as in a tree walk, the launch not guarded by threadIdx.x == 0, a return
before it, an else branch, a written pointer without __restrict__, a
fire-and-forget stream, dynamic shared memory, blockIdx in the body under
aggregate(n), a launch in a macro); they still check their results.

Every output is an integer, checked exactly against the host running the
same chain link after link.

Spelled programs (common.Spelling) name the link's block size and items per
thread (where no literal repeats them), the element count, the histogram's
counters and the in-place chain's modulus, as macros with defaults. A -D
may give a larger block or more items (never more links than the device
nests), fewer elements, other counters and another modulus."""

import random
import re

from .aggregate import fold_lines
from .common import Program, Spelling, Variant, fewer, strip_pragmas

PASS = "promote"


def set_promote(pool, overlap):
    """A transform that makes every `#pragma cuda_rewrite promote` line
    name the variant: aggregate(pool) if pool, overlap if asked."""
    line = re.compile(r"^(\s*)#pragma cuda_rewrite promote\b.*$", re.M)

    def apply(text):
        rest = (f" aggregate({pool})" if pool else "") + (
            " overlap" if overlap else "")
        return line.sub(lambda m: m.group(1) + "#pragma cuda_rewrite promote"
                        + rest, text)
    return apply


VARIANTS = [
    Variant("pragma"),                                    # as generated
    Variant("plain", transform=set_promote(None, False)),     # P
    Variant("aggregate", transform=set_promote(4, False)),    # PA
    Variant("overlap", transform=set_promote(None, True)),    # PO
    Variant("auto", flags=["--auto"], transform=strip_pragmas("promote")),
]

MAX_LINKS = 20

KINDS = [("map", 22), ("scan", 14), ("compact", 13), ("partition", 11),
         ("max", 9), ("range", 9), ("inplace", 9), ("grow", 5)]

REFUSALS = ["two-launches", "not-thread0", "return", "else", "alias",
            "fire-and-forget", "dynamic-shared", "blockidx", "macro"]


class Chain:
    def __init__(self, rng, name):
        self.rng, self.name = rng, name
        kinds, weights = zip(*KINDS)
        self.kind = rng.choices(kinds, weights)[0]
        self.block = rng.choice([32, 64, 96, 128, 256, 48, 160])
        self.items = (rng.choice([1, 1, 2, 3, 4]) if self.kind in (
            "map", "range") else 1)
        self.chunk = self.block * self.items
        links = rng.randint(1, MAX_LINKS)
        self.n = max(1, rng.randint((links - 1) * self.chunk + 1,
                                    links * self.chunk))
        if rng.random() < 0.15:
            self.n = links * self.chunk  # a multiple of the chunk
        self.tail = self.kind == "inplace" or rng.random() < 0.7
        self.self_block = rng.choice(["literal", "constexpr", "blockDim"])
        self.host_block = rng.choice(["literal", "constexpr"])
        self.host_stream = rng.random() < 0.2
        self.boundary = rng.random() < 0.85
        self.pool = rng.choice([None, None, 1, 2, 3, 4, 8, 16, 128])
        self.overlap = rng.random() < 0.45
        self.refusal = None
        if rng.random() < 0.12:
            self.refusal = rng.choice(REFUSALS)
            if self.refusal == "blockidx":
                self.kind = rng.choice(["map", "range"])
                self.pool = self.pool or 4
            if self.refusal == "else":  # one element per thread there
                self.kind = rng.choice(["compact", "partition"])
                self.items, self.chunk = 1, self.block
                self.n = min(self.n, links * self.chunk)
            if self.refusal in ("alias", "two-launches") and \
                    self.kind == "inplace":
                self.kind = "map"
            if self.refusal == "dynamic-shared":
                self.kind, self.items = "map", 1
                self.chunk = self.block
        # Kind options.
        self.index = rng.choice(["chunk", "chunk", "begin", "down"])
        if self.kind not in ("map",) and self.index == "down":
            self.index = "chunk"
        self.cond_style = rng.randint(0, 2)
        self.hist = self.kind == "map" and rng.random() < 0.25
        self.spec = self.kind == "map" and rng.random() < 0.2
        self.second = (self.kind in ("map", "scan", "max") and
                       not self.hist and self.refusal is None and
                       rng.random() < 0.15)
        self.modulus = rng.choice([97, 211, 499])
        # The pragma's clauses: what the kernel allows, but for the rare
        # program that asks for overlap without a boundary.
        if self.kind == "grow":
            self.pool = None
        if self.kind == "inplace" or self.spec or (
                not self.boundary and rng.random() < 0.9):
            self.overlap = False
        self.pred = rng.choice(["x % 2 == 0", "x % 3 == 0", "x < 400",
                                "(x & 5) == 1"])
        # How the launching thread is selected: threadIdx.x == 0, !threadIdx.x,
        # a local holding threadIdx.x, or the condition in an if of its own
        # inside the thread's.
        self.guard_style = "plain"
        if self.refusal is None:
            self.guard_style = rng.choices(
                ["plain", "not", "local", "nested"], [5, 1, 2, 2])[0]
        K = f"{name}_kBlock"
        self.K, self.C = K, f"{name}_kChunk"
        self.kname = f"{name}_{self.kind}"
        self.spell, self.text = Spelling(name), {}

    def spell_constants(self, spell):
        """Spells the chain's constants (common.Spelling), with the values
        a -D may give them, drawn from the spelling's own stream."""
        self.spell = spell
        if not spell.on:
            return
        r = spell.rng
        # A larger block or more items per thread: fewer links. Not where
        # a launch writes the block as a literal.
        literal = "literal" in (self.self_block, self.host_block)
        blocks = [b for b in (48, 64, 96, 128, 160, 192, 256, 384, 512)
                  if b > self.block and not literal]
        spell("kBlock", str(self.block),
              r.sample(blocks, min(2, len(blocks))))
        # One item per thread is code without a loop over kItems.
        spell("kItems", str(self.items),
              range(self.items + 1, 5) if self.items > 1 else [])
        spell("kHist", "13", r.sample([5, 31, 64], 2))
        self.text["N"] = spell("N", str(self.n), fewer(r, self.n))
        self.text["kMod"] = spell("kMod", str(self.modulus),
                                  [31, 97, 211, 499])

    # ---- pieces ----------------------------------------------------------

    def pragma(self):
        text = "#pragma cuda_rewrite promote"
        if self.pool:
            text += f" aggregate({self.pool})"
        if self.overlap:
            text += " overlap"
        return text

    def boundary_line(self):
        return ["#pragma cuda_rewrite overlap_boundary"] if self.boundary \
            else []

    def self_block_text(self):
        return {"literal": str(self.block), "constexpr": self.K,
                "blockDim": "blockDim.x"}[self.self_block]

    def launch(self, args, indent="  ", guard="threadIdx.x == 0",
               cond="true"):
        """`if (guard && cond) self<<<...>>>(args);`"""
        cfg = ["1", self.self_block_text()]
        if self.refusal == "dynamic-shared":
            cfg += [f"{self.K} * sizeof(int)"]
        if self.refusal == "fire-and-forget":
            cfg += (["0"] if len(cfg) == 2 else []) + [
                "cudaStreamFireAndForget"]
        elif self.tail:
            cfg += (["0"] if len(cfg) == 2 else []) + ["cudaStreamTailLaunch"]
        if self.refusal == "not-thread0":
            guard = f"threadIdx.x == {self.K} - 1"
        lead = []
        if guard == "threadIdx.x == 0" and self.guard_style == "not":
            guard = "!threadIdx.x"
        elif guard == "threadIdx.x == 0" and self.guard_style == "local":
            lead = [indent + "const int lead = threadIdx.x;"]
            guard = "lead == 0"
        head = f"if ({guard} && {cond})" if cond != "true" else f"if ({guard})"
        if self.refusal == "macro":
            call = f"{self.name}_NEXT({', '.join(args)});"
            self.macro = (f"#define {self.name}_NEXT(...) {self.kname}<<<"
                          f"{', '.join(cfg)}>>>(__VA_ARGS__)")
        else:
            call = f"{self.kname}<<<{', '.join(cfg)}>>>({', '.join(args)});"
        nested = (guard == "threadIdx.x == 0" and cond != "true" and
                  self.guard_style == "nested")
        inner = indent + ("    " if nested else "  ")
        if len(inner + call) > 80:
            cut = call.index(">>>(") + 4
            call = call[:cut] + "\n" + inner + "    " + call[cut:]
        if nested:
            return [indent + f"if ({guard}) {{", indent + f"  if ({cond})",
                    inner + call, indent + "}"]
        return lead + [indent + head, inner + call]

    def chunk_index(self):
        """Declarations of `begin`, the parameter, the step, the condition
        that the next chunk exists, and the host's first value."""
        C, n = self.C, self.name
        if self.index == "chunk":
            decl = [f"const int begin = chunk * {C};"]
            cond = [f"n - begin > {C}", f"(chunk + 1) * {C} < n",
                    "chunk + 1 < links"][self.cond_style]
            return decl, "chunk", "chunk + 1", cond, "0"
        if self.index == "begin":
            cond = [f"begin + {C} < n", f"n - begin > {C}",
                    f"n - {C} > begin"][self.cond_style]
            return [], "begin", f"begin + {C}", cond, "0"
        decl = [f"const int begin = chunk * {C};"]
        return decl, "chunk", "chunk - 1", "chunk > 0", "links - 1"

    def uses_links(self):
        return (self.index == "down" or
                (self.index == "chunk" and self.cond_style == 2))

    # ---- kinds -----------------------------------------------------------

    def kernel(self):
        return getattr(self, "kernel_" + self.kind)()

    def restrict(self):
        return "" if self.refusal == "alias" else " __restrict__"

    def prologue_extras(self, empty="n <= 0"):
        """A return before the launch (refused)."""
        if self.refusal == "return":
            return [f"  if ({empty})", "    return;"]
        return []

    def kernel_map(self):
        n, C, K, E = self.name, self.C, self.K, self.items
        r = self.restrict()
        decl, param, step, cond, _ = self.chunk_index()
        params = [f"const int *{r} in".replace("* ", "*"),
                  f"int *{r} out".replace("* ", "*")]
        if self.hist:
            params.append(f"int *{r} hist".replace("* ", "*"))
        params += ["int n"] + (["int links"] if self.uses_links() else []) + [
            f"int {param}"]
        args = ["in", "out"] + (["hist"] if self.hist else []) + ["n"] + (
            ["links"] if self.uses_links() else []) + [step]
        tid = ("blockIdx.x * blockDim.x + threadIdx.x"
               if self.refusal == "blockidx" else "threadIdx.x")
        body = ["  " + d for d in decl]
        if self.refusal == "dynamic-shared":
            body += ["  extern __shared__ int seen[];"]
        body += self.prologue_extras()
        if E == 1:
            body += [f"  const int i = begin + {tid};",
                     "  const int v = i < n ? in[i] : -1;"]
            if self.refusal == "dynamic-shared":
                body += ["  seen[threadIdx.x] = v;"]
            if self.spec:
                body += ["  const int stop = __syncthreads_or(v == 0);"]
        else:
            body += [f"  int v[{n}_kItems];",
                     f"  for (int k = 0; k < {n}_kItems; ++k) {{",
                     f"    const int i = begin + k * {K} + {tid};",
                     "    v[k] = i < n ? in[i] : -1;", "  }"]
            if self.spec:
                body += ["  bool zero = false;",
                         f"  for (int k = 0; k < {n}_kItems; ++k)",
                         "    zero = zero || v[k] == 0;",
                         "  const int stop = __syncthreads_or(zero);"]
        body += self.boundary_line()
        full = f"!stop && {cond}" if self.spec else cond
        body += self.launch_block(args, full)
        value = "v * 3 + chunk" if param == "chunk" else "v * 3 + begin / 7"
        if self.refusal == "dynamic-shared":
            value = value.replace("v ", "seen[threadIdx.x] ")
        if E == 1:
            body += ["  if (i < n) {" if self.hist else "  if (i < n)",
                     f"    out[i] = {value};"]
            if self.hist:
                body += [f"    atomicAdd(&hist[v % {n}_kHist], 1);", "  }"]
        else:
            value = value.replace("v ", "v[k] ")
            body += [f"  for (int k = 0; k < {n}_kItems; ++k) {{",
                     f"    const int i = begin + k * {K} + {tid};",
                     "    if (i < n) {" if self.hist else "    if (i < n)",
                     f"      out[i] = {value};"]
            if self.hist:
                body += [f"      atomicAdd(&hist[v[k] % {n}_kHist], 1);",
                         "    }"]
            body.append("  }")
        return params, body

    def has_count(self):
        """Whether the program has a count of kept elements to check: not
        when the refusal replaced the chain by a tree walk."""
        return (self.kind in ("compact", "partition") and
                self.refusal != "two-launches")

    def launcher(self):
        """The thread that launches the next link."""
        return f"{self.K} - 1" if self.refusal == "not-thread0" else "0"

    def launch_block(self, args, cond):
        if self.refusal == "two-launches":
            return []  # kernel_tree handles it
        lines = self.launch(args, cond=cond)
        if self.refusal == "else":
            lines += ["  else if (threadIdx.x == 0)",
                      "    *count = next; // The last link."]
        return lines

    def kernel_scan(self):
        n, K = self.name, self.K
        decl, param, step, cond, _ = self.chunk_index()
        r = self.restrict()
        params = [f"const int *{r} in".replace("* ", "*"),
                  f"int *{r} out".replace("* ", "*"), "int n"] + (
            ["int links"] if self.uses_links() else []) + [
            f"int {param}", "int carry"]
        args = ["in", "out", "n"] + (["links"] if self.uses_links() else []) \
            + [step, "next"]
        body = [f"  __shared__ int s[{K}];"] + ["  " + d for d in decl] + [
            "  const int t = threadIdx.x;"] + self.prologue_extras() + [
            "  const int i = begin + t;",
            "  s[t] = i < n ? in[i] : 0;",
            "  __syncthreads();",
            "  // An inclusive scan of the chunk (Hillis-Steele).",
            f"  for (int d = 1; d < {K}; d *= 2) {{",
            "    const int add = t >= d ? s[t - d] : 0;",
            "    __syncthreads();",
            "    s[t] += add;",
            "    __syncthreads();", "  }"] + self.boundary_line() + [
            f"  const int next = carry + s[{K} - 1];"]
        body += self.launch_block(args, cond)
        body += ["  if (i < n)", "    out[i] = carry + s[t];"]
        return params, body

    def select_kernel(self, partition):
        n, K = self.name, self.K
        decl, param, step, cond, _ = self.chunk_index()
        r = self.restrict()
        carry = "before" if partition else "offset"
        params = [f"const int *{r} in".replace("* ", "*"),
                  f"int *{r} out".replace("* ", "*"),
                  f"int *{r} count".replace("* ", "*"), "int n"] + (
            ["int links"] if self.uses_links() else []) + [
            f"int {param}", f"int {carry}"]
        args = ["in", "out", "count", "n"] + (
            ["links"] if self.uses_links() else []) + [step, "next"]
        pred = self.pred.replace("x", "in[i]")
        body = [f"  __shared__ int kept[{K}];"] + ["  " + d for d in decl] + [
            "  const int t = threadIdx.x;"] + self.prologue_extras() + [
            "  const int i = begin + t;",
            f"  const int flag = i < n && ({pred});",
            "  kept[t] = flag;",
            "  __syncthreads();",
            "  int rank = 0, total = 0;",
            f"  for (int k = 0; k < {K}; ++k) {{",
            "    rank += k < t ? kept[k] : 0;",
            "    total += kept[k];", "  }"] + self.boundary_line() + [
            f"  const int next = {carry} + total;"]
        body += self.launch_block(args, cond)
        if partition:
            body += [f"  const int place = {carry} + rank;",
                     "  if (flag)", "    out[place] = in[i];",
                     "  else if (i < n)",
                     "    out[n - 1 - (i - place)] = in[i];"]
        else:
            body += ["  if (flag)", f"    out[{carry} + rank] = in[i];"]
        if self.refusal != "else":
            body += [f"  if (threadIdx.x == 0 && !({cond}))",
                     "    *count = next;"]
        return params, body

    def kernel_compact(self):
        return self.select_kernel(False)

    def kernel_partition(self):
        return self.select_kernel(True)

    def kernel_max(self):
        n, K = self.name, self.K
        decl, param, step, cond, _ = self.chunk_index()
        r = self.restrict()
        params = [f"const int *{r} in".replace("* ", "*"),
                  f"int *{r} out".replace("* ", "*"), "int n"] + (
            ["int links"] if self.uses_links() else []) + [
            f"int {param}", "int highest"]
        args = ["in", "out", "n"] + (["links"] if self.uses_links() else []) \
            + [step, "next"]
        body = [f"  __shared__ int s[{K}];"] + ["  " + d for d in decl] + [
            "  const int t = threadIdx.x;"] + self.prologue_extras() + [
            "  const int i = begin + t;",
            "  s[t] = i < n ? in[i] : -1;",
            "  __syncthreads();",
            "  int upTo = -1, top = -1; // Maxima of s[0..t] and of s.",
            f"  for (int k = 0; k < {K}; ++k) {{",
            "    top = max(top, s[k]);",
            "    if (k <= t)", "      upTo = top;", "  }"] + \
            self.boundary_line() + ["  const int next = max(highest, top);"]
        body += self.launch_block(args, cond)
        body += ["  if (i < n)", "    out[i] = max(highest, upTo);"]
        return params, body

    def kernel_range(self):
        n, C, K = self.name, self.C, self.K
        r = self.restrict()
        params = [f"const int *{r} in".replace("* ", "*"),
                  f"int *{r} out".replace("* ", "*"), "int begin", "int end",
                  "int scale"]
        tid = ("blockIdx.x * blockDim.x + threadIdx.x"
               if self.refusal == "blockidx" else "threadIdx.x")
        body = [f"  const int last = begin + {C} < end ? begin + {C} : end;"]
        body += self.prologue_extras("end <= begin")
        body += self.boundary_line()
        body += self.launch_block(["in", "out", f"begin + {C}", "end",
                                   "scale"], f"begin + {C} < end")
        body += [f"  for (int i = begin + {tid}; i < last; i += {K})",
                 "    out[i] = in[i] * scale - (i - begin);"]
        return params, body

    def kernel_inplace(self):
        n, K, M = self.name, self.K, self.modulus_text()
        params = ["int *data", "int n", "int chunk", "int carry"]
        args = ["data", "n", "chunk + 1", "v % 1000"]
        body = [f"  const int i = chunk * {K} + threadIdx.x;"]
        body += self.prologue_extras()
        body += ["  const int v = i < n ? data[i] + carry : 0;",
                 f"  const int stop = __syncthreads_or(v % {M} == "
                 "1);"]
        body += self.launch_block(args, f"!stop && (chunk + 1) * {K} < n")
        body += ["  if (i < n)", "    data[i] = v / 2;"]
        return params, body

    def kernel_grow(self):
        r = self.restrict()
        params = [f"const int *{r} in".replace("* ", "*"),
                  f"int *{r} out".replace("* ", "*"), "int n", "int start",
                  "int width", "int level"]
        body = self.prologue_extras() + self.boundary_line()
        body += ["  for (int j = threadIdx.x; j < width && start + j < n; "
                 "j += blockDim.x)",
                 "    out[start + j] = in[start + j] + level * 1000;"]
        body += self.launch_block(["in", "out", "n", "start + width",
                                   "width * 2", "level + 1"],
                                  "start + width < n")
        return params, body

    # ---- refusal: a tree walk --------------------------------------------

    def kernel_tree(self):
        """Both halves of a range launched: a tree, not a chain."""
        n, C, K = self.name, self.C, self.K
        params = ["const int *__restrict__ in", "int *__restrict__ out",
                  "int begin", "int end", "int depth"]
        cfg = f"1, {self.self_block_text()}, 0, cudaStreamTailLaunch"
        body = [
            "  if (end - begin > " + C + ") {",
            f"    const int mid = begin + ((end - begin) / {C} + 1) / 2 * "
            f"{C};",
            "    if (threadIdx.x == 0) {",
            f"      {self.kname}<<<{cfg}>>>(in, out, begin, mid, depth + 1);",
            f"      {self.kname}<<<{cfg}>>>(in, out, mid, end, depth + 1);",
            "    }",
            "  } else {",
            f"    for (int i = begin + threadIdx.x; i < end; i += {K})",
            "      out[i] = in[i] + depth * 1000;",
            "  }"]
        return params, body

    # ---- host ------------------------------------------------------------

    def reference(self):
        """Host statements filling `want` (and wantCount, wantHist, data)."""
        n, C, K = self.name, self.C, self.K
        k = self.kind
        if self.refusal == "two-launches":
            return [
                f"  // The tree on the host: halves until at most {C} "
                "elements.",
                "  struct Walk {",
                "    static void run(const std::vector<int> &in, "
                "std::vector<int> &out, int begin, int end, int depth) {",
                f"      if (end - begin > {C}) {{",
                f"        const int mid = begin + ((end - begin) / {C} + 1) "
                f"/ 2 * {C};",
                "        run(in, out, begin, mid, depth + 1);",
                "        run(in, out, mid, end, depth + 1);",
                "      } else {",
                "        for (int i = begin; i < end; ++i)",
                "          out[i] = in[i] + depth * 1000;", "      }", "    }",
                "  };",
                "  Walk::run(in.Host, want, 0, n, 0);"]
        if k == "map":
            if self.index == "begin":
                val = f"in.Host[i] * 3 + link * {C} / 7"
            else:
                val = "in.Host[i] * 3 + link"
            lines = [f"  const int linkCount = (n + {C} - 1) / {C};"]
            if self.index == "down":
                lines += ["  for (int link = linkCount - 1; link >= 0; "
                          "--link) {"]
            else:
                lines += ["  for (int link = 0; link < linkCount; ++link) {"]
            lines += [f"    for (int i = link * {C}; i < n && i < (link + 1) "
                      f"* {C}; ++i) {{",
                      "      want[i] = " + val + ";",
                      "      written[i] = true;"]
            if self.hist:
                lines.append(f"      ++wantHist[in.Host[i] % {n}_kHist];")
            lines.append("    }")
            if self.spec:
                lines += [f"    bool zero = false;",
                          f"    for (int i = link * {C}; i < n && i < "
                          f"(link + 1) * {C}; ++i)",
                          "      zero = zero || in.Host[i] == 0;",
                          "    if (zero)", "      break; // The chain stops."]
            lines.append("  }")
            return lines
        if k == "scan":
            return ["  int sum = 0;",
                    "  for (int i = 0; i < n; ++i)",
                    "    want[i] = sum += in.Host[i];"]
        if k in ("compact", "partition"):
            pred = self.pred.replace("x", "in.Host[i]")
            lines = ["  int front = 0" + (", back = n;" if k == "partition"
                                          else ";"),
                     "  for (int i = 0; i < n; ++i) {",
                     f"    if ({pred})",
                     "      want[front++] = in.Host[i];"]
            if k == "partition":
                lines += ["    else", "      want[--back] = in.Host[i];"]
            lines += ["  }", "  wantCount[0] = front;"]
            if k == "compact":
                lines += ["  for (int i = front; i < n; ++i)",
                          "    written[i] = false;"]
            return lines
        if k == "max":
            return ["  int highest = -1;",
                    "  for (int i = 0; i < n; ++i)",
                    "    want[i] = highest = in.Host[i] > highest ? "
                    "in.Host[i] : highest;"]
        if k == "range":
            return [f"  for (int begin = 0; begin < n; begin += {C})",
                    f"    for (int i = begin; i < n && i < begin + {C}; ++i)",
                    "      want[i] = in.Host[i] * scale - (i - begin);"]
        if k == "inplace":
            return ["  want = in.Host;",
                    "  for (int chunk = 0, carry = 0;; ++chunk) {",
                    "    bool stop = false;",
                    "    int first = 0;",
                    f"    for (int t = 0; t < {K}; ++t) {{",
                    f"      const int i = chunk * {K} + t;",
                    "      const int v = i < n ? want[i] + carry : 0;",
                    f"      stop = stop || v % {self.modulus_text()} == 1;",
                    f"      if (t == {self.launcher()})", "        first = v;",
                    "      if (i < n)", "        want[i] = v / 2;", "    }",
                    f"    if (stop || (chunk + 1) * {K} >= n)", "      break;",
                    "    carry = first % 1000;", "  }"]
        if k == "grow":
            return ["  for (int start = 0, width = 1, level = 0; start < n;",
                    "       start += width, width *= 2, ++level)",
                    "    for (int j = 0; j < width && start + j < n; ++j)",
                    "      want[start + j] = in.Host[start + j] + level * "
                    "1000;"]
        raise AssertionError(k)

    def host_args(self, out="out.data()", n_="n"):
        """Arguments of the first link."""
        k = self.kind
        if self.refusal == "two-launches":
            return ["in.data()", out, "0", n_, "0"]
        if k == "inplace":
            return ["data.data()", n_, "0", "0"]
        if k == "range":
            return ["in.data()", out, "0", n_, "scale"]
        if k == "grow":
            return ["in.data()", out, n_, "0", "1", "0"]
        _, _, _, _, first = self.chunk_index()
        args = ["in.data()", out]
        if k in ("compact", "partition"):
            args.append("count.data()")
        if self.hist:
            args.append("hist.data()")
        args.append(n_)
        if self.uses_links():
            args.append(f"({n_} + {self.C} - 1) / {self.C}")
        args.append(first.replace("links", f"({n_} + {self.C} - 1) / "
                                  f"{self.C}"))
        if k in ("scan", "compact", "partition"):
            args.append("0")
        if k == "max":
            args.append("-1")
        return args

    def code(self):
        n, k = self.name, self.kind
        self.macro = None
        if self.refusal == "two-launches":
            self.kname = f"{n}_walk"
            params, body = self.kernel_tree()
        else:
            params, body = self.kernel()
        lines = [f"constexpr int {n}_kBlock = {self.block};  // threads of a "
                 "link",
                 f"constexpr int {n}_kItems = {self.items};  // elements per "
                 "thread",
                 f"constexpr int {n}_kChunk = {n}_kBlock * {n}_kItems;  // "
                 "elements per link"]
        if self.hist:
            lines.append(f"constexpr int {n}_kHist = 13;  // counters")
        lines.append("")
        if self.macro:
            lines.append(self.macro)
        what = {"map": "maps its chunk", "scan": "scans its chunk, after "
                "the sum of those before",
                "compact": "keeps the elements that pass, after those "
                "kept before",
                "partition": "partitions its chunk, after the elements "
                "selected before",
                "max": "writes running maxima, after the maximum before",
                "range": "handles [begin, begin + kChunk) of [begin, end)",
                "inplace": "updates its chunk in place, carrying a value",
                "grow": "handles [start, start + width), the next one "
                "twice as wide"}[k]
        if self.refusal == "two-launches":
            what = ("walks a range as a tree, halves until a chunk is left "
                    "(thread 0 launches both halves: a tree, not a chain)")
        pragma = [self.pragma()]
        if self.refusal == "two-launches" and self.rng.random() < 0.5:
            pragma = ["#pragma cuda_rewrite promote"]
        head = f"__global__ void {self.kname}("
        sig = head + ", ".join(params) + ") {"
        if len(sig) > 80:
            sig = fold(head, params)
        if self.refusal != "two-launches":
            what += "; thread 0 launches the next link"
        lines += [f"/// One link: {what}.",
                  *pragma, sig, *body, "}"]
        if self.macro:
            lines.append(f"#undef {n}_NEXT")
        lines += ["", self.run()]
        text = "\n".join(lines)
        for const in (f"{n}_kChunk", f"{n}_kItems"):  # unused constants
            if text.count(const) == 1:
                text = re.sub(r"^constexpr int " + const + r" .*\n", "",
                              text, flags=re.M)
        return fold_lines(self.spell.apply(re.sub(r"^ +#", "#", text,
                                                  flags=re.M)))

    def run(self):
        n, k, C = self.name, self.kind, self.C
        blk = str(self.block) if self.host_block == "literal" else self.K
        lines = [f"static void run_{n}(difftest::Rng &rng, "
                 "difftest::Check &check) {",
                 f"  const int n = {self.text.get('N', self.n)};"]
        if k == "range":
            lines.append("  const int scale = int(rng.integer(1, 5));")
        hi = 99 if k in ("scan",) else 999
        outs = "" if k == "inplace" else ", out(n)"
        lines += [f"  difftest::Buffer<int> in(n){outs};",
                  f"  rng.fill(in.Host, 0, {hi});", "  in.upload();"]
        if k != "inplace":
            lines.append("  out.poison();")
        if self.has_count():
            lines += ["  difftest::Buffer<int> count(1);", "  count.poison();"]
        if self.hist:
            lines += [f"  difftest::Buffer<int> hist({n}_kHist);",
                      "  hist.Host.assign(hist.size(), 0);",
                      "  hist.upload();"]
        if k == "inplace":
            lines += ["  difftest::Buffer<int> data(n);",
                      "  data.Host = in.Host;", "  data.upload();"]
        if self.second:
            lines += ["  const int n2 = n / 2 + 1;",
                      "  difftest::Buffer<int> out2(n2);", "  out2.poison();"]
        shared = (f", {self.K} * sizeof(int)" if self.refusal ==
                  "dynamic-shared" else "")
        cfg = f"1, {blk}{shared}"
        launches = [f"{self.kname}<<<{cfg}{{s}}>>>("
                    f"{', '.join(self.host_args())});"]
        if self.second:
            launches.append(f"{self.kname}<<<{cfg}{{s}}>>>(" + ", ".join(
                self.host_args("out2.data()", "n2")) + ");")
        if self.host_stream:
            lines += ["  cudaStream_t stream;",
                      "  DIFFTEST_CUDA(cudaStreamCreate(&stream));"]
            for L in launches:
                s = ", stream" if shared else ", 0, stream"
                lines += ["  " + L.replace("{s}", s),
                          "  DIFFTEST_CUDA(cudaGetLastError());"]
            lines += ["  DIFFTEST_CUDA(cudaStreamSynchronize(stream));",
                      "  DIFFTEST_CUDA(cudaStreamDestroy(stream));"]
        else:
            for L in launches:
                lines += ["  " + L.replace("{s}", ""),
                          "  DIFFTEST_CUDA(cudaGetLastError());"]
        lines += ["", "  // The chain on the host, link after link.",
                  "  std::vector<int> want(n);"]
        if k != "inplace":
            init = "false" if k == "map" and self.refusal != "two-launches" \
                else "true"
            lines.append(f"  std::vector<bool> written(n, {init});")
        if self.has_count():
            lines.append("  std::vector<int> wantCount(1);")
        if self.hist:
            lines.append(f"  std::vector<int> wantHist({n}_kHist);")
        ref = self.reference()
        lines += ref
        if self.second:
            # The second chain, on the first n2 elements into out2.
            lines += ["  {", "    const int n = n2;",
                      "    std::vector<int> want(n);",
                      f"    std::vector<bool> written(n, "
                      f"{'false' if k == 'map' else 'true'});"]
            lines += ["  " + x for x in ref]
            lines += ["    difftest::expectExact(check, \"out2\", "
                      "out2.download(), want, written);", "  }"]
        if k == "inplace":
            lines.append("  difftest::expectExact(check, \"data\", "
                         "data.download(), want);")
        else:
            lines.append("  difftest::expectExact(check, \"out\", "
                         "out.download(), want, written);")
        if self.has_count():
            lines.append("  difftest::expectExact(check, \"count\", "
                         "count.download(), wantCount);")
        if self.hist:
            lines.append("  difftest::expectExact(check, \"hist\", "
                         "hist.download(), wantHist);")
        lines.append("}")
        return "\n".join(lines)

    def modulus_text(self):
        return self.text.get("kMod", str(self.modulus))

    def describe(self):
        links = (self.n.bit_length() if self.kind == "grow" else
                 -(-self.n // self.chunk))
        t = {"kind": self.kind, "links": str(links),
             "items": str(self.items), "pragma": self.pragma()[29:] or "-",
             "boundary": str(self.boundary), "stream": "tail" if self.tail
             else "default", "block": self.self_block}
        if self.kind == "map":
            t["index"] = self.index
            if self.spec:
                t["condition"] = "speculative"
        if self.refusal:
            t["refusal"] = self.refusal
        if self.guard_style != "plain":
            t["guard"] = self.guard_style
        return t


def fold(head, params):
    """A signature with its parameters aligned after the '('."""
    lines, cur = [], head
    pad = " " * len(head)
    for i, p in enumerate(params):
        piece = p + (", " if i + 1 < len(params) else ") {")
        if len(cur) + len(piece.rstrip()) > 80 and cur.strip() != head.strip():
            lines.append(cur.rstrip())
            cur = pad
        cur += piece
    lines.append(cur)
    return "\n".join(lines)


def generate(rng: random.Random, name: str,
             spell: Spelling = None) -> Program:
    c = Chain(rng, name)
    c.spell_constants(spell or Spelling(name))
    code = c.code()
    traits = c.describe()
    if c.spell.on:
        traits["spelled"] = c.spell.style
    return Program(name, code, traits, c.spell.knobs)
