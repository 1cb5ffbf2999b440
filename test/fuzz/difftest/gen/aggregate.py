"""Dynamic-parallelism programs for the aggregate pass (KLAP launch
aggregation): parent kernels that launch children the ways real code does.

Shapes (rough frequencies):
  flat (62%)       a 1-D (80%) or 2-D parent grid whose threads launch
                   children under branches, if/else, per-thread loops of
                   varying trip counts (up, down, strided, while with a data
                   dependent stop, a loop inside a branch) or
                   unconditionally; some threads launch nothing; one to three
                   launch sites; sometimes from a __device__ helper
                   (statement pragma: warp granularity only), a shared tile
                   and __syncthreads in the parent (40% of those returning
                   early for a whole block), an explicit null stream,
                   a stream the thread creates for the launch alone (15%),
                   the parent launched into a stream.
  recursive (20%)  a kernel launching itself with a depth argument: one grid
                   of F blocks per split node from thread 0, one block per
                   child from threads t < F, or a loop of launches in thread
                   0; counting up or down; sometimes with shared memory and
                   barriers, sometimes also launching a leaf kernel.
  chain (9%)       top -> mid -> leaf, both launching kernels annotated
                   (mid's launches in a loop or not).
  malloc (9%)      device-side cudaMalloc per parent thread (reached by the
                   whole block, or after an early return), a child fills the
                   buffer, a host-launched kernel gathers it.
Children: 1-D ranges (early return or not, pointer + offset arguments),
grid-stride loops (gridDim.x), 2-D tiles (blockIdx.y, gridDim.y),
shared-memory reversal and tree reductions with barriers, dynamic shared
memory (size per launch), atomicAdd histograms with tiny blocks (packed
several to an aggregated block), helpers (pure, or reading threadIdx under a
constant block). Arguments: literals, kernel parameters, blockIdx.x (uniform
in a block, not in a grid), per-thread values; block sizes constant
(literal or constexpr) or per thread; grids per thread. Pragmas on the
kernel (75%) or on a statement, with granularity(warp|block|kernel) or none.

Outputs are integers: children write disjoint slots of `out` (launch s owns
out[s * kSlot ...]) or atomicAdd into `acc`; the host reference runs the
parent's threads one after the other and each launch as loops over its
blocks and threads, and flags an element written twice (a race: a generator
bug).

About 12% of programs carry a form the pass must refuse (a launch in a
macro, on a named stream, under __CUDA_ARCH__, a template child, a child
with inline asm, a helper reading blockIdx, barriers under a per-thread
block size, a child defined after its parent, an unannotated kernel between
two levels, goto or a barrier and a return in the parent, cudaFree in device
code); they still check their results.

Spelled programs (common.Spelling) name their constants as macros with
defaults: the sizes of in and acc, the slot of a launch, the number of
parent threads, the block size of children whose block is a constant (their
shared memory sized by it), the recursion's block, fan, roots and depth,
the chain's block sizes, the malloc buffers' size. The values a -D may give
instead keep the program valid: counts that bound launches only shrink,
slots only grow, reductions keep powers of two."""

import random
import re

from .common import (Program, Spelling, Variant, fewer, set_clause,
                     strip_pragmas)

PASS = "aggregate"
VARIANTS = [
    Variant("pragma"),                               # clauses as generated
    Variant("warp", transform=set_clause("aggregate", "granularity", "warp")),
    Variant("block", transform=set_clause("aggregate", "granularity",
                                          "block")),
    Variant("kernel", transform=set_clause("aggregate", "granularity",
                                           "kernel")),
    Variant("auto", flags=["--auto"], transform=strip_pragmas("aggregate")),
]

# Device-side launches per program at most: the device runtime's pending
# launch pool holds 2048, and each launch costs microseconds.
LAUNCH_BUDGET = 900


def pragma(granularity):
    return "#pragma cuda_rewrite aggregate" + (
        f" granularity({granularity})" if granularity else "")


def random_granularity(rng):
    return rng.choice([None, None, "warp", "block", "kernel"])


def restrict(rng):
    return " __restrict__" if rng.random() < 0.6 else ""


def translate(text, mapping):
    """Replaces the placeholders {name} of \\p text."""
    for key, value in mapping.items():
        text = text.replace("{" + key + "}", value)
    return text


# Child formulas are written once with placeholders; these spell them for
# the device and for the host reference's loops.
DEVICE = {"in": "in", "bx": "blockIdx.x", "by": "blockIdx.y",
          "tx": "threadIdx.x", "ty": "threadIdx.y", "bdx": "blockDim.x",
          "bdy": "blockDim.y", "gdx": "gridDim.x", "gdy": "gridDim.y"}
HOST = {"in": "w.in", "bx": "bx", "by": "by", "tx": "tx", "ty": "ty",
        "bdx": "block.x", "bdy": "block.y", "gdx": "grid.x", "gdy": "grid.y"}


class Both:
    """A line that differs between the device code and the host reference."""

    def __init__(self, dev, host):
        self.dev, self.host = dev, host


def indent(lines, n=1):
    pad = "  " * n
    return [Both(pad + x.dev, pad + x.host) if isinstance(x, Both)
            else pad + x for x in lines]


def wrap(opener, body):
    """`opener` and a body, braced when it has more than one line."""
    if len(body) == 1:
        return [opener] + indent(body)
    return [opener + " {"] + indent(body) + ["}"]


#===-- Children ----------------------------------------------------------===#

class Child:
    """A child kernel: its definition, the host reference of one launch, and
    how a site launches it. Per launch: base (the first element of the
    launch's slot of out), n (elements), value (mixed into what it
    writes)."""

    kind = "?"
    writes_out = True    # owns a slot of out
    uses_acc = False
    barrier = False      # needs a compile-time constant block size
    const_block = None   # that size (or a helper reads threadIdx)
    has_shared = False   # dynamic shared memory

    def __init__(self, rng, p, suffix):
        self.rng, self.p = rng, p
        self.name = f"{p.name}_{self.kind}{suffix}"
        self.ptr = self.writes_out and rng.random() < 0.3  # out + base
        self.restrict = restrict(rng)
        self.varying = False   # refusal: barriers under a per-thread block
        self.grid = None
        self.block_name = None  # a spelled const_block's name

    # Block sizes a -D may give a constant block instead (the kind's).
    other_blocks = (32, 64, 96, 128)

    def block_text(self):
        """The constant block size where the kernel sizes by it."""
        return self.block_name or str(self.const_block)

    # ---- launching -------------------------------------------------------

    def config(self, n, block):
        """grid and dynamic shared memory of a launch of n elements."""
        b = block if re.fullmatch(r"\w+", block) else f"({block})"
        return f"({n} + {b} - 1) / {b}", None

    def device_args(self, base, n, value):
        args = []
        if self.writes_out:
            args.append(f"out + {base}" if self.ptr else "out")
        if self.uses_acc:
            args.append("acc")
        args.append("in")
        if self.writes_out and not self.ptr:
            args.append(base)
        return args + [n, value]

    def launched_name(self):
        return self.name

    def launch(self, base, n, value, block, stream=None):
        """The device launch and the host reference's call."""
        grid, shared = self.config(n, block)
        cfg = [grid, block]
        if shared or stream:
            cfg.append(shared or "0")
        if stream:
            cfg.append(stream)
        dev = (f"{self.launched_name()}<<<{', '.join(cfg)}>>>("
               f"{', '.join(self.device_args(base, n, value))});")
        args = ["w", f"dim3({grid})", f"dim3({block})"]
        if self.writes_out:
            args.append(base)
        host = f"{self.name}_ref({', '.join(args + [n, value])});"
        return dev, host

    # ---- the kernel ------------------------------------------------------

    def params(self):
        r = self.restrict
        ps = []
        if self.writes_out:
            ps.append(f"int *{r} dst" if self.ptr else f"int *{r} out")
        if self.uses_acc:
            ps.append(f"int *{r} acc")
        ps.append(f"const int *{r} in")
        if self.writes_out and not self.ptr:
            ps.append("int base")
        return [q.replace("* ", "*") for q in ps] + self.value_params()

    def value_params(self):
        return ["int n", "int value"]

    def slot(self, index):
        """The element `index` of the launch's slot, on the device."""
        return f"dst[{index}]" if self.ptr else f"out[base + {index}]"

    def ref_header(self):
        extra = ["int base"] if self.writes_out else []
        return (f"static void {self.name}_ref({self.p.name}_Want &w, "
                f"dim3 grid, dim3 block, "
                + ", ".join(extra + self.value_params()) + ") {")

    def helpers(self):
        return ""

    def definition(self):
        raise NotImplementedError

    def reference(self):
        raise NotImplementedError

    def text(self):
        return (self.helpers() + self.definition()).strip()


def formula(rng, kin):
    """An integer expression over the element index j and the launch's
    value, reading `in`."""
    return rng.choice([
        f"{{in}}[(j + value) % {kin}] + 3 * j - value",
        f"{{in}}[(j * 7 + value) % {kin}] * 2 + value",
        f"({{in}}[j % {kin}] ^ value) + j",
        f"value * 5 - {{in}}[(value + 2 * j) % {kin}]",
        f"{{in}}[(j + value) % {kin}] + (int)({{bx}} * 10 + {{tx}})",
    ])


class Fill(Child):
    """One thread per element: dst[j] for j < n."""
    kind = "fill"

    def __init__(self, rng, p, suffix):
        super().__init__(rng, p, suffix)
        self.expr = formula(rng, p.KIN)
        self.early_return = rng.random() < 0.4
        self.helper_bid = False   # refusal: a helper reading blockIdx
        self.asm = False          # refusal: inline asm
        self.template = False     # refusal: a template child

    def launched_name(self):
        return self.name + ("<3>" if self.template else "")

    def helpers(self):
        if not self.helper_bid:
            return ""
        return (f"/// The first element of the calling block.\n"
                f"__device__ int {self.name}_first() {{ return blockIdx.x * "
                f"blockDim.x; }}\n\n")

    def definition(self):
        d = translate(self.expr, DEVICE)
        if self.template:
            d = f"Scale * ({d})"
        index = (f"{self.name}_first() + threadIdx.x" if self.helper_bid
                 else "blockIdx.x * blockDim.x + threadIdx.x")
        lines = ["/// Child: one thread per element of its range."]
        if self.template:
            lines.append("template <int Scale>")
        lines.append(f"__global__ void {self.name}({', '.join(self.params())})"
                     " {")
        if self.asm:
            lines.append('  asm volatile("" ::: "memory");')
        lines.append(f"  const int j = {index};")
        if self.early_return:
            lines += ["  if (j >= n)", "    return;",
                      f"  {self.slot('j')} = {d};"]
        else:
            lines += ["  if (j < n)", f"    {self.slot('j')} = {d};"]
        return "\n".join(lines + ["}"])

    def reference(self):
        h = translate(self.expr, HOST)
        if self.template:
            h = f"3 * ({h})"
        return "\n".join([
            self.ref_header(),
            "  for (unsigned bx = 0; bx < grid.x; ++bx)",
            "    for (unsigned tx = 0; tx < block.x; ++tx) {",
            "      const int j = bx * block.x + tx;",
            "      if (j < n)",
            f"        w.store(base + j, {h});",
            "    }", "}"])


class Stride(Child):
    """A grid-stride loop (reads gridDim); the grid is chosen per launch."""
    kind = "stride"

    def __init__(self, rng, p, suffix):
        super().__init__(rng, p, suffix)
        self.expr = formula(rng, p.KIN) + rng.choice(
            [" + (int){gdx}", " - (int)({gdx} * {bdx})", ""])

    def config(self, n, block):
        return self.grid, None

    def definition(self):
        return "\n".join([
            "/// Child: a grid-stride loop over its range.",
            f"__global__ void {self.name}({', '.join(self.params())}) {{",
            "  for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < n;",
            "       j += gridDim.x * blockDim.x)",
            f"    {self.slot('j')} = {translate(self.expr, DEVICE)};", "}"])

    def reference(self):
        return "\n".join([
            self.ref_header(),
            "  for (unsigned bx = 0; bx < grid.x; ++bx)",
            "    for (unsigned tx = 0; tx < block.x; ++tx)",
            "      for (int j = bx * block.x + tx; j < n; "
            "j += grid.x * block.x)",
            f"        w.store(base + j, {translate(self.expr, HOST)});", "}"])


class Tile(Child):
    """A 2-D child over a w x h tile: blockIdx.y, blockDim.y, gridDim.y."""
    kind = "tile"

    def __init__(self, rng, p, suffix):
        super().__init__(rng, p, suffix)
        self.bx, self.by = rng.choice([(8, 4), (16, 2), (4, 4), (32, 2),
                                       (8, 8), (5, 3)])
        self.expr = rng.choice([
            "value * 4 + x - y + (int)({gdx} * 100 + {gdy})",
            f"{{in}}[(x * 13 + y + value) % {p.KIN}] - (int)({{by}} * "
            "{bdy})",
            "(x ^ y) + value + (int)({bx} + {by} * {gdx})",
        ])

    def value_params(self):
        return ["int width", "int height", "int value"]

    def device_args(self, base, n, value):
        return super().device_args(base, n, value)[:-2] + [n[0], n[1], value]

    def launch(self, base, n, value, block, stream=None):
        w, h = n
        grid = (f"dim3(({w} + {self.bx - 1}) / {self.bx}, "
                f"({h} + {self.by - 1}) / {self.by})")
        blk = f"dim3({self.bx}, {self.by})"
        cfg = [grid, blk] + (["0", stream] if stream else [])
        dev = (f"{self.name}<<<{', '.join(cfg)}>>>("
               f"{', '.join(self.device_args(base, n, value))});")
        host = f"{self.name}_ref(w, {grid}, {blk}, {base}, {w}, {h}, {value});"
        return dev, host

    def definition(self):
        return "\n".join([
            "/// Child: a 2-D tile of width x height elements, row by row.",
            f"__global__ void {self.name}({', '.join(self.params())}) {{",
            "  const int x = blockIdx.x * blockDim.x + threadIdx.x;",
            "  const int y = blockIdx.y * blockDim.y + threadIdx.y;",
            "  if (x < width && y < height)",
            f"    {self.slot('y * width + x')} = "
            f"{translate(self.expr, DEVICE)};",
            "}"])

    def reference(self):
        return "\n".join([
            self.ref_header(),
            "  for (unsigned by = 0; by < grid.y; ++by)",
            "    for (unsigned bx = 0; bx < grid.x; ++bx)",
            "      for (unsigned ty = 0; ty < block.y; ++ty)",
            "        for (unsigned tx = 0; tx < block.x; ++tx) {",
            "          const int x = bx * block.x + tx;",
            "          const int y = by * block.y + ty;",
            "          if (x < width && y < height)",
            f"            w.store(base + y * width + x, "
            f"{translate(self.expr, HOST)});",
            "        }", "}"])


class Reverse(Child):
    """Static shared memory and a barrier: each block reverses its part."""
    kind = "reverse"
    barrier = True
    other_blocks = (32, 64, 96, 128, 200, 256)

    def __init__(self, rng, p, suffix):
        super().__init__(rng, p, suffix)
        self.const_block = rng.choice([32, 64, 96, 128, 200, 256])

    def definition(self):
        return "\n".join([
            "/// Child: each block loads its part into shared memory and "
            "writes it",
            "/// reversed.",
            f"__global__ void {self.name}({', '.join(self.params())}) {{",
            f"  __shared__ int s[{self.block_text()}];",
            "  const int j = blockIdx.x * blockDim.x + threadIdx.x;",
            f"  s[threadIdx.x] = j < n ? in[(j + value) % {self.p.KIN}] "
            ": -value;",
            "  __syncthreads();",
            "  if (j < n)",
            f"    {self.slot('j')} = 2 * s[blockDim.x - 1 - threadIdx.x] + "
            "blockIdx.x;", "}"])

    def reference(self):
        return "\n".join([
            self.ref_header(),
            "  for (unsigned bx = 0; bx < grid.x; ++bx)",
            "    for (unsigned tx = 0; tx < block.x; ++tx) {",
            "      const int j = bx * block.x + tx;",
            "      const int r = bx * block.x + (block.x - 1 - tx);",
            f"      const int s = r < n ? w.in[(r + value) % {self.p.KIN}] "
            ": -value;",
            "      if (j < n)",
            "        w.store(base + j, 2 * s + bx);",
            "    }", "}"])


class Reduce(Child):
    """A tree reduction in shared memory: each block's sum into its slot,
    and atomicAdd into acc."""
    kind = "reduce"
    barrier = True
    uses_acc = True

    def __init__(self, rng, p, suffix):
        super().__init__(rng, p, suffix)
        self.ptr = False
        self.const_block = rng.choice([32, 64, 128, 256])
        # A tree needs a power of two; fewer threads would need more
        # blocks than the slot has elements.
        self.other_blocks = tuple(b for b in (64, 128, 256, 512)
                                  if b > self.const_block)

    def definition(self):
        return "\n".join([
            "/// Child: each block sums its part (a tree in shared memory); "
            "thread 0",
            "/// stores the block's sum and adds it to a counter.",
            f"__global__ void {self.name}({', '.join(self.params())}) {{",
            f"  __shared__ int s[{self.block_text()}];",
            "  const int j = blockIdx.x * blockDim.x + threadIdx.x;",
            f"  s[threadIdx.x] = j < n ? in[(j * 3 + value) % {self.p.KIN}] "
            ": 0;",
            "  __syncthreads();",
            "  for (int half = blockDim.x / 2; half > 0; half /= 2) {",
            "    if (threadIdx.x < half)",
            "      s[threadIdx.x] += s[threadIdx.x + half];",
            "    __syncthreads();", "  }",
            "  if (threadIdx.x == 0) {",
            "    out[base + blockIdx.x] = s[0];",
            f"    atomicAdd(&acc[value % {self.p.KACC}], s[0]);", "  }", "}"])

    def reference(self):
        return "\n".join([
            self.ref_header(),
            "  for (unsigned bx = 0; bx < grid.x; ++bx) {",
            "    int sum = 0;",
            "    for (unsigned tx = 0; tx < block.x; ++tx) {",
            "      const int j = bx * block.x + tx;",
            f"      sum += j < n ? w.in[(j * 3 + value) % {self.p.KIN}] : 0;",
            "    }",
            "    w.store(base + bx, sum);",
            f"    w.add(value % {self.p.KACC}, sum);", "  }", "}"])


class Rotate(Child):
    """Dynamic shared memory (its size per launch) and a barrier."""
    kind = "rotate"
    barrier = True
    has_shared = True
    other_blocks = (32, 48, 64, 96, 128)

    def __init__(self, rng, p, suffix):
        super().__init__(rng, p, suffix)
        self.const_block = rng.choice([32, 48, 64, 128])
        self.extra = rng.random() < 0.4

    def config(self, n, block):
        shared = (f"({block} + {n} % 3) * sizeof(int)" if self.extra
                  else f"{block} * sizeof(int)")
        return super().config(n, block)[0], shared

    def definition(self):
        return "\n".join([
            "/// Child: dynamic shared memory; each thread writes its "
            "neighbour's",
            "/// element minus its own.",
            f"__global__ void {self.name}({', '.join(self.params())}) {{",
            "  extern __shared__ int buf[];",
            "  const int j = blockIdx.x * blockDim.x + threadIdx.x;",
            f"  buf[threadIdx.x] = j < n ? in[(j + 2 * value) % "
            f"{self.p.KIN}] : value;",
            "  __syncthreads();",
            "  if (j < n)",
            f"    {self.slot('j')} = buf[(threadIdx.x + 1) % blockDim.x] - "
            "buf[threadIdx.x];", "}"])

    def reference(self):
        kin = self.p.KIN
        return "\n".join([
            self.ref_header(),
            "  for (unsigned bx = 0; bx < grid.x; ++bx)",
            "    for (unsigned tx = 0; tx < block.x; ++tx) {",
            "      const int j = bx * block.x + tx;",
            "      const int r = bx * block.x + (tx + 1) % block.x;",
            "      if (j < n)",
            "        w.store(base + j, (r < n ? w.in[(r + 2 * value) % "
            f"{kin}] : value) - w.in[(j + 2 * value) % {kin}]);",
            "    }", "}"])


class Histogram(Child):
    """atomicAdd into acc (order-independent); tiny blocks."""
    kind = "hist"
    writes_out = False
    uses_acc = True

    def definition(self):
        return "\n".join([
            "/// Child: adds to counters picked by the input.",
            f"__global__ void {self.name}({', '.join(self.params())}) {{",
            "  const int j = blockIdx.x * blockDim.x + threadIdx.x;",
            "  if (j < n)",
            f"    atomicAdd(&acc[(in[(j + value) % {self.p.KIN}] + value) % "
            f"{self.p.KACC}], 1 + j % 3);", "}"])

    def reference(self):
        return "\n".join([
            self.ref_header(),
            "  for (unsigned bx = 0; bx < grid.x; ++bx)",
            "    for (unsigned tx = 0; tx < block.x; ++tx) {",
            "      const int j = bx * block.x + tx;",
            "      if (j < n)",
            f"        w.add((w.in[(j + value) % {self.p.KIN}] + value) % "
            f"{self.p.KACC}, 1 + j % 3);",
            "    }", "}"])


class Mix(Child):
    """Calls a pure __host__ __device__ helper, and sometimes one that reads
    threadIdx (accepted only under one constant integer block size)."""
    kind = "mix"

    def __init__(self, rng, p, suffix):
        super().__init__(rng, p, suffix)
        self.lane = rng.random() < 0.4
        if self.lane:
            self.const_block = rng.choice([32, 64, 96])

    def helpers(self):
        text = (f"/// Mixes two values (host and device).\n"
                f"__host__ __device__ inline int {self.name}_hash(int a, "
                f"int b) {{\n  return (a * 31 + b * 7) % 1009;\n}}\n\n")
        if self.lane:
            # The index itself, not its lane: packing one-warp blocks into
            # one aggregated block changes threadIdx.x but keeps the lane.
            text += (f"/// The calling thread's index in its block.\n"
                     f"__device__ int {self.name}_lane() {{ return "
                     f"threadIdx.x; }}\n\n")
        return text

    def definition(self):
        lane = f" + {self.name}_lane()" if self.lane else ""
        return "\n".join([
            "/// Child: calls helper functions.",
            f"__global__ void {self.name}({', '.join(self.params())}) {{",
            "  const int j = blockIdx.x * blockDim.x + threadIdx.x;",
            "  if (j < n)",
            f"    {self.slot('j')} = {self.name}_hash(in[j % {self.p.KIN}], "
            f"value + j){lane};", "}"])

    def reference(self):
        lane = " + int(tx)" if self.lane else ""
        return "\n".join([
            self.ref_header(),
            "  for (unsigned bx = 0; bx < grid.x; ++bx)",
            "    for (unsigned tx = 0; tx < block.x; ++tx) {",
            "      const int j = bx * block.x + tx;",
            "      if (j < n)",
            f"        w.store(base + j, {self.name}_hash(w.in[j % "
            f"{self.p.KIN}], value + j){lane});",
            "    }", "}"])


CHILD_KINDS = [(Fill, 5), (Stride, 2), (Tile, 2), (Reverse, 2), (Reduce, 2),
               (Rotate, 1), (Histogram, 2), (Mix, 2)]


def pick_child(rng, p, suffix):
    kinds, weights = zip(*CHILD_KINDS)
    return rng.choices(kinds, weights)[0](rng, p, suffix)


#===-- Programs ----------------------------------------------------------===#

class Base:
    """What every program has: names, constants, the expected outputs."""

    def __init__(self, rng, name):
        self.rng, self.name = rng, name
        self.kin = rng.choice([257, 509, 1000, 1021, 1543])
        self.kacc = rng.choice([16, 37, 64, 101])
        self.KIN, self.KACC = f"{name}_kIn", f"{name}_kAcc"
        self.constants = []
        self.refusal = None
        self.spell = Spelling(name)
        self.text = {}

    def spell_constants(self, spell):
        """Spells the program's constants (common.Spelling): registers the
        knobs whose constexpr lines or texts the code has, with the values
        a -D may give them (drawn from the spelling's own stream)."""
        self.spell = spell
        if not spell.on:
            return
        r = spell.rng
        spell("kIn", str(self.kin), [str(v) for v in r.sample(
            [97, 257, 509, 1000, 1021, 1543, 2048], 2)])
        spell("kAcc", str(self.kacc), [str(v) for v in r.sample(
            [16, 37, 64, 101, 128], 2)])
        self.spell_more(spell, r)

    def spell_more(self, spell, r):
        """The shape's own knobs."""

    def spelled(self, key, value, others):
        """Spells `key` in the text the generator writes (self.text)."""
        self.text[key] = self.spell(key, str(value),
                                    [str(v) for v in others])

    def header(self, acc=True):
        n = self.name
        return [f"constexpr int {n}_kIn = {self.kin};   // elements of in"] + (
            [f"constexpr int {n}_kAcc = {self.kacc};  // atomic counters"]
            if acc else [])

    def want_struct(self):
        n = self.name
        return (f"/// {n}'s expected outputs, computed on the host.\n"
                f"using {n}_Want = difftest::Want;")

    def checks(self, acc=True, pout=False):
        lines = ["  difftest::expectWant(check, w, out.download());"]
        if acc:
            lines.append("  difftest::expectExact(check, \"acc\", "
                         "acc.download(), w.acc);")
        if pout:
            lines.append("  difftest::expectExact(check, \"pout\", "
                         "pout.download(), w.pout);")
        return lines


LOOPS = ("for", "down", "step2", "while", "nested")


class Site:
    """One launch statement (or if/else pair) of a flat parent."""

    def __init__(self, kind, children):
        self.kind, self.children = kind, children
        self.trips, self.slot0 = 1, 0

    @property
    def looped(self):
        return self.kind in LOOPS


class Flat(Base):
    """A parent grid whose threads launch children."""

    def __init__(self, rng, name):
        super().__init__(rng, name)
        self.kslot = rng.choice([64, 100, 128, 192, 256])
        self.dims = 2 if rng.random() < 0.2 else 1
        self.pb = rng.choice([32, 64, 96, 128, 256, 50])
        self.pbx, self.pby = rng.choice([(8, 4), (16, 2), (4, 8), (32, 1),
                                         (8, 8)])
        self.tile = self.dims == 1 and rng.random() < 0.15
        self.guard = rng.choice(["return", "if"])
        self.pout = rng.random() < 0.5
        self.pout_first = rng.random() < 0.5
        self.stream_host = rng.random() < 0.1
        self.null_stream = rng.random() < 0.1
        self.in_device_fn = rng.random() < 0.07
        self.pragma_on = "kernel" if rng.random() < 0.75 else "statement"
        self.granularity = random_granularity(rng)
        self.macro = None
        if rng.random() < 0.12:
            self.refusal = rng.choice(
                ["macro", "stream", "helper-blockidx", "barrier-varying",
                 "asm", "template", "after", "goto", "sync-return",
                 "cuda-arch"])
        if self.refusal in ("goto", "sync-return", "cuda-arch"):
            self.in_device_fn = False
        if self.refusal == "goto":
            self.pout, self.pout_first = True, False
        if self.refusal == "sync-return":
            self.dims, self.tile, self.guard = 1, True, "return"
        elif self.tile:
            self.guard = "if"  # a parent with barriers does not return...
        # ...but for a whole block at once, which every granularity takes.
        # (Not with pout, which every thread of the grid writes.)
        self.uniform_return = (self.tile and self.refusal is None and
                               not self.pout and rng.random() < 0.4)
        if self.in_device_fn:
            self.pragma_on = "statement"

        nsites = rng.choices([1, 2, 3], [5, 4, 1])[0]
        self.sites = []
        for s in range(nsites):
            kind = rng.choice(["if", "if", "for", "for", "down", "step2",
                               "while", "ifelse", "all", "nested"])
            kids = [pick_child(rng, self, str(s))]
            if kind == "ifelse":
                kids.append(pick_child(rng, self, f"{s}b"))
            self.sites.append(Site(kind, kids))
        self.apply_refusal()

        # Threads and trip counts within the launch budget.
        loops = sum(s.looped for s in self.sites)
        single = len(self.sites) - loops
        most = LAUNCH_BUDGET // (single + 2 * loops)
        if self.dims == 1:
            self.n = rng.randint(20, min(420, most))
        else:
            self.width = rng.randint(3, 30)
            self.height = rng.randint(2, max(2, min(16, most //
                                                    self.width)))
            while self.width * self.height > most:
                self.width -= 1
            self.n = self.width * self.height
        self.trips = (max(1, min(6, (LAUNCH_BUDGET // self.n - single) //
                                 loops)) if loops else 1)
        slot = 0
        for site in self.sites:
            site.trips = self.trips if site.looped else 1
            site.slot0 = slot
            slot += self.n * site.trips
        self.slots = slot

    def apply_refusal(self):
        r, rng = self.refusal, self.rng
        if r in ("helper-blockidx", "asm", "template", "macro", "after"):
            fill = Fill(rng, self, "r")
            fill.helper_bid = r == "helper-blockidx"
            fill.asm = r == "asm"
            fill.template = r == "template"
            self.sites[0].children[0] = fill
        elif r == "barrier-varying":
            rev = Reverse(rng, self, "r")
            rev.const_block = rng.choice([64, 96, 128, 256])
            rev.varying = True
            self.sites[0].children[0] = rev
        self.children = [c for s in self.sites for c in s.children]

    def needs_acc(self):
        return any(c.uses_acc for c in self.children)

    def spell_more(self, spell, r):
        # More elements per slot; fewer threads (their launches are within
        # the budget; the slots and buffers stay as large).
        spell("kSlot", str(self.kslot), [str(self.kslot + d) for d in
                                         r.sample([1, 37, self.kslot], 2)])
        if self.dims == 1:
            self.spelled("N", self.n, fewer(r, self.n))
        else:
            self.spelled("WIDTH", self.width, fewer(r, self.width))
            self.spelled("HEIGHT", self.height, fewer(r, self.height))

    # ---- expressions -----------------------------------------------------

    def host(self, text):
        """A parent expression on the host, where the 1-D built-ins are loop
        variables."""
        return (text.replace("blockIdx.x", "b").replace("threadIdx.x", "t")
                .replace("blockDim.x", str(self.pb)))

    def value_expr(self, looped):
        rng, kin = self.rng, self.KIN
        opts = ["seed", "i", "c", f"in[i % {kin}]", str(rng.randint(0, 99)),
                f"in[(i + seed) % {kin}] + c"]
        if looped:
            opts += ["seed + k", "i + k", "3 * k + c"]
        if self.dims == 1:
            opts += ["blockIdx.x", "threadIdx.x + seed"]
            if self.tile:
                opts += ["nb"]
        else:
            opts += ["x + y", "2 * x + y + seed"]
        return rng.choice(opts)

    def count_expr(self, looped, most):
        """Elements of a launch: 1 .. most."""
        rng, kin = self.rng, self.KIN
        opts = [f"1 + (in[(i + 5) % {kin}] + seed) % {most}",
                f"1 + (i * 7) % {most}", str(rng.randint(1, most)),
                str(most)]
        if looped:
            opts += [f"{most} - k", f"1 + in[(i + k) % {kin}] % {most}"]
        return rng.choice(opts)

    def block_expr(self, child, looped):
        """A block size and the declaration it needs, if any."""
        rng = self.rng
        ik = "(i + k)" if looped else "i"
        ck = "(c + k)" if looped else "c"
        if child.varying:
            return "bs", f"const int bs = {child.const_block} - 32 * (c % 2);"
        if child.const_block:
            # Spelled programs name every constant block.
            if rng.random() < 0.4 or self.spell.on:
                const = f"{child.name}_kBlock"
                decl = f"constexpr int {const} = {child.const_block};"
                if decl not in self.constants:
                    self.constants.append(decl)
                if self.spell.on:
                    child.block_name = self.spell(
                        const[len(self.name) + 1:], str(child.const_block),
                        [str(b) for b in self.spell.rng.sample(
                            child.other_blocks,
                            min(2, len(child.other_blocks)))])
                return const, None
            return str(child.const_block), None
        if isinstance(child, Histogram):
            opts = ["8", "16", "20", "32", f"1 + {ik} % 32"]
        else:
            opts = ["32", "64", "128", "96", "48", "17", "256"]
        choice = rng.choice(opts + ["per-thread"] * 2)
        if choice != "per-thread":
            return choice, None
        text = rng.choice([f"32 * (1 + {ck} % 4)",
                           f"16 + in[{ik} % {self.KIN}] % 100",
                           f"1 + {ik} % 128"])
        return "bs", f"const int bs = {text};"

    # ---- the parent ------------------------------------------------------

    def launch_lines(self, site, child):
        """The statements of one launch: declarations, then the launch."""
        rng = self.rng
        looped = site.looped
        T = site.trips
        slot = (f"{site.slot0} + " if site.slot0 else "") + (
            f"i * {T} + k" if looped else "i")
        base = (f"i * {self.name}_kSlot" if slot == "i" else
                f"({slot}) * {self.name}_kSlot")
        value = self.value_expr(looped)
        if self.tile and not self.nb_used:
            value, self.nb_used = "nb", True
        pre = []
        stream = "0" if self.null_stream and rng.random() < 0.6 else None
        first = child is self.sites[0].children[0]
        if self.refusal == "stream" and first:
            # Not cudaStreamTailLaunch: the originals of 3 programs of 500
            # with every thread tail-launching did not end (seed 1).
            stream = "cudaStreamFireAndForget"
        block = None
        if isinstance(child, Tile):
            wmax = max(1, min(40, self.kslot // 3))
            hmax = max(1, self.kslot // wmax)
            n = (f"1 + (in[(i + 3) % {self.KIN}] + "
                 f"{'k' if looped else 'seed'}) % {wmax}",
                 f"1 + c % {hmax}")
        else:
            most = self.kslot
            if isinstance(child, Reduce):
                most = min(self.kslot * child.const_block, 4000)
            n = self.count_expr(looped, most)
            block, decl = self.block_expr(child, looped)
            if decl:
                pre.append(decl)
            if isinstance(child, Stride):
                child.grid = rng.choice(["1", "2", "3", "1 + i % 3"] +
                                        (["1 + k % 2"] if looped else []))
            if rng.random() < 0.5 or len(n) > 24:
                pre.append(f"const int len = {n};")
                n = "len"
        if child.writes_out and rng.random() < 0.3:
            pre.append(f"const int base = {base};")
            base = "base"
        # A stream the thread creates for this launch alone orders nothing:
        # the launch is aggregated as one into the default stream.
        own = stream is None and self.refusal is None and rng.random() < 0.15
        if own:
            stream = "own"
            pre += [Both("cudaStream_t own;", ""),
                    Both("cudaStreamCreateWithFlags(&own, "
                         "cudaStreamNonBlocking);", "")]
        dev, host = child.launch(base, n, value, block, stream)
        if self.refusal == "macro" and first:
            dev = self.macro_call(dev)
        post = [Both("cudaStreamDestroy(own);", "")] if own else []
        return pre + [Both(dev, self.host(host))] + post

    @staticmethod
    def fold(line):
        """A long launch or call, broken after commas at 80 columns."""
        pad = " " * (len(line) - len(line.lstrip()) + 4)
        out = []
        while len(line) > 80:
            cut = line.rfind(", ", 0, 79)
            if cut <= len(pad):
                break
            out.append(line[:cut + 1])
            line = pad + line[cut + 2:]
        return "\n".join(out + [line])

    def macro_call(self, launch):
        """The launch written through a macro (refused)."""
        self.macro = (f"#define {self.name}_LAUNCH(kernel, grid, block, ...) "
                      "kernel<<<grid, block>>>(__VA_ARGS__)")
        head, rest = launch.split("<<<", 1)
        cfg, args = rest.split(">>>(", 1)
        grid, block = split_top(cfg)[:2]
        return f"{self.name}_LAUNCH({head}, {grid}, {block}, {args}"

    def site_lines(self, site):
        rng, kin = self.rng, self.KIN
        cond = rng.choice(["c > 0", f"(in[i % {kin}] + i) % 3 != 0",
                           "i % 4 == 1", "c % 2 == 1",
                           f"in[(i + seed) % {kin}] % 5 < 3"] +
                          (["threadIdx.x % 32 < 16"] if self.dims == 1
                           else ["(x + y) % 2 == 0"]))
        body = self.launch_lines(site, site.children[0])
        k = site.kind
        if k == "all":
            return body if len(body) == 1 else ["{"] + indent(body) + ["}"]
        if k == "if":
            return wrap(f"if ({cond})", body)
        if k == "ifelse":
            other = self.launch_lines(site, site.children[1])
            return ([f"if ({cond}) {{"] + indent(body) + ["} else {"] +
                    indent(other) + ["}"])
        if k == "for":
            return wrap("for (int k = 0; k < c; ++k)", body)
        if k == "down":
            return wrap("for (int k = c - 1; k >= 0; --k)", body)
        if k == "step2":
            return wrap("for (int k = 0; k < c; k += 2)", body)
        if k == "nested":
            return wrap(f"if ({cond})",
                        wrap("for (int k = 0; k < c - 1; ++k)", body))
        assert k == "while"
        return (["{", "  int k = 0;",
                 f"  while (k < c && in[(i + k) % {kin}] % 7 != 0) {{"] +
                indent(body, 2) + ["    ++k;", "  }", "}"])

    def body_lines(self):
        """The parent's per-thread part, from `c` on (device and host)."""
        self.nb_used = False
        sites = []
        for s, site in enumerate(self.sites):
            lines_ = self.site_lines(site)
            if s == 0 and self.pragma_on == "statement":
                lines_ = [Both(pragma(self.granularity), "")] + lines_
            sites += lines_
        text = " ".join(x.dev if isinstance(x, Both) else x for x in sites)
        if not re.search(r"\bc\b", text):
            self.pout = True  # c must be used
        lines = ["const int c = cnt[i];"]
        pout = Both("pout[i] = c * 10 + seed;", "w.pout[i] = c * 10 + seed;")
        if self.pout and self.pout_first:
            lines.append(pout)
        if self.refusal == "goto":
            lines += ["if (c == 0)", "  goto done;"]
        if self.in_device_fn:
            self.spawn_sites = sites
            args = ["out"] + (["acc"] if self.needs_acc() else []) + [
                "in", "i", "c", "seed"] + (["nb"] if self.tile else []) + (
                ["x", "y"] if self.dims == 2 else [])
            lines.append(Both(f"{self.name}_spawn({', '.join(args)});", ""))
            lines += [Both("", x.host) if isinstance(x, Both)
                      else Both("", self.host(x)) for x in sites]
        elif self.refusal == "cuda-arch":
            lines += [Both("#ifdef __CUDA_ARCH__", "")] + sites + [
                Both("#endif", "")]
        else:
            lines += sites
        if self.refusal == "goto":
            lines.append("done:")
        if self.pout and not self.pout_first:
            lines.append(pout)
        return lines

    def render(self, lines, side):
        out = []
        for x in lines:
            if isinstance(x, Both):
                t = x.dev if side == "dev" else x.host
                if t.strip():
                    out += self.fold(t).split("\n")
                continue
            out.append(x if side == "dev" else self.host(x))
        # Pragma and preprocessor lines start in column 0.
        return [x.lstrip() if x.lstrip().startswith("#") else x for x in out]

    def parent(self):
        """The parent kernel (and its helper) and its host reference."""
        n = self.name
        acc = self.needs_acc()
        body = self.body_lines()
        params = ["int *__restrict__ out"] + (
            ["int *__restrict__ acc"] if acc else []) + [
            "const int *__restrict__ in", "const int *__restrict__ cnt"] + (
            ["int *__restrict__ pout"] if self.pout else []) + (
            ["int n"] if self.dims == 1 else ["int width", "int height"]) + [
            "int seed"]
        dev = []
        if self.uniform_return:
            dev += [f"if (in[blockIdx.x % {self.KIN}] % 5 == 0)",
                    "  return; // The whole block."]
        if self.dims == 1:
            dev.append("const int i = blockIdx.x * blockDim.x + threadIdx.x;")
            if self.tile:
                dev += [f"__shared__ int tile[{self.pb}];",
                        f"tile[threadIdx.x] = i < n ? in[i % {self.KIN}] : 0;",
                        "__syncthreads();",
                        f"const int nb = tile[(threadIdx.x + 1) % {self.pb}];"]
            bad = "i >= n"
        else:
            dev += ["const int x = blockIdx.x * blockDim.x + threadIdx.x;",
                    "const int y = blockIdx.y * blockDim.y + threadIdx.y;"]
            bad = "x >= width || y >= height"
            body = ["const int i = y * width + x;"] + body
        if self.guard == "return":
            dev += [f"if ({bad})", "  return;"] + body
        else:
            dev += wrap(f"if (!({bad}))" if self.dims == 2 else "if (i < n)",
                        body)
        text = ""
        if self.in_device_fn:
            fparams = (["int *out"] + (["int *acc"] if acc else []) +
                       ["const int *in", "int i", "int c", "int seed"] +
                       (["int nb"] if self.tile else []) +
                       (["int x", "int y"] if self.dims == 2 else []))
            text += ("/// Launches a thread's children (from a device "
                     "function: warp granularity only).\n"
                     f"__device__ void {n}_spawn({', '.join(fparams)}) {{\n" +
                     "\n".join(self.render(indent(self.spawn_sites), "dev")) +
                     "\n}\n\n")
        kernel_pragma = (pragma(self.granularity) + "\n"
                         if self.pragma_on == "kernel" else "")
        what = "a 2-D grid" if self.dims == 2 else "one thread per item"
        text += (f"/// Parent ({what}): threads launch children.\n"
                 + kernel_pragma +
                 f"__global__ void {n}_parent({', '.join(params)}) {{\n" +
                 "\n".join(self.render(indent(dev), "dev")) + "\n}")

        # The host reference: the same per-thread part in loops.
        host = [f"/// {n}_parent on the host: its threads one after the "
                "other.",
                f"static void {n}_parent_ref({n}_Want &w, const int *cnt, "
                + ("int n" if self.dims == 1 else "int width, int height")
                + ", int seed) {",
                "  const int *in = w.in;"]
        if self.dims == 1:
            host += [f"  for (int b = 0; b * {self.pb} < n; ++b)",
                     f"    for (int t = 0; t < {self.pb}; ++t) {{",
                     f"      const int i = b * {self.pb} + t;"]
            if self.uniform_return:
                host += [f"      if (in[b % {self.KIN}] % 5 == 0)",
                         "        continue;"]
            if self.tile:
                host += [f"      const int up = b * {self.pb} + (t + 1) % "
                         f"{self.pb};",
                         f"      const int nb = up < n ? in[up % {self.KIN}] "
                         ": 0;"]
            host += ["      if (i >= n)", "        continue;"]
            rest = body
        else:
            host += ["  for (int y = 0; y < height; ++y)",
                     "    for (int x = 0; x < width; ++x) {"]
            rest = body
        host += self.render(indent(rest, 3), "host")
        host += ["    }", "}"]
        if not any(re.search(r"\bin\[", x) for x in host[3:]):
            host.remove("  const int *in = w.in;")
        return text, "\n".join(host)

    # ---- the program -----------------------------------------------------

    def code(self):
        n = self.name
        parent, reference = self.parent()
        parts = self.header() + [
            f"constexpr int {n}_kSlot = {self.kslot};  // outputs per launch: "
            "launch s writes from out[s * kSlot]"] + self.constants
        parts += ["", self.want_struct(), ""]
        after = []
        seen = set()
        for c in self.children:
            if c.name in seen:
                continue
            seen.add(c.name)
            if self.refusal == "after" and c is self.sites[0].children[0]:
                parts += ["// Defined after its parent.",
                          f"__global__ void {c.name}("
                          f"{', '.join(c.params())});", ""]
                after += [c.text(), ""]
            else:
                parts += [c.text(), ""]
            parts += [c.reference(), ""]
        if self.macro:
            parts.append(self.macro)
        parts.append(parent)
        if self.macro:
            parts.append(f"#undef {n}_LAUNCH")
        parts += [""] + after + [reference, "", self.run()]
        return "\n".join(parts)

    def run(self):
        n = self.name
        acc = self.needs_acc()
        lines = [f"static void run_{n}(difftest::Rng &rng, "
                 "difftest::Check &check) {"]
        if self.dims == 1:
            lines.append(f"  const int n = {self.text.get('N', self.n)};")
        else:
            lines.append(f"  const int width = "
                         f"{self.text.get('WIDTH', self.width)}, height = "
                         f"{self.text.get('HEIGHT', self.height)}, "
                         "n = width * height;")
        lines += ["  const int seed = int(rng.integer(0, 999));",
                  f"  difftest::Buffer<int> in({n}_kIn), cnt(n), "
                  f"out({self.slots} * {n}_kSlot), acc({n}_kAcc), pout(n);",
                  "  rng.fill(in.Host, 0, 999);",
                  f"  rng.fill(cnt.Host, 0, {self.trips});",
                  "  in.upload();", "  cnt.upload();", "  out.poison();",
                  "  pout.poison();",
                  "  acc.Host.assign(acc.size(), 0);", "  acc.upload();"]
        args = ["out.data()"] + (["acc.data()"] if acc else []) + [
            "in.data()", "cnt.data()"] + (["pout.data()"] if self.pout
                                          else []) + (
            ["n"] if self.dims == 1 else ["width", "height"]) + ["seed"]
        if self.dims == 1:
            cfg = f"(n + {self.pb - 1}) / {self.pb}, {self.pb}"
        else:
            lines += [f"  const dim3 block({self.pbx}, {self.pby});",
                      f"  const dim3 grid((width + {self.pbx - 1}) / "
                      f"{self.pbx}, (height + {self.pby - 1}) / {self.pby});"]
            cfg = "grid, block"
        if self.stream_host:
            lines += ["  cudaStream_t stream;",
                      "  DIFFTEST_CUDA(cudaStreamCreate(&stream));",
                      f"  {n}_parent<<<{cfg}, 0, stream>>>("
                      f"{', '.join(args)});",
                      "  DIFFTEST_CUDA(cudaGetLastError());",
                      "  DIFFTEST_CUDA(cudaStreamSynchronize(stream));",
                      "  DIFFTEST_CUDA(cudaStreamDestroy(stream));"]
        else:
            lines += [f"  {n}_parent<<<{cfg}>>>({', '.join(args)});",
                      "  DIFFTEST_CUDA(cudaGetLastError());"]
        lines += [f"  {n}_Want w(in.Host, out.size(), acc.size(), "
                  f"{'n' if self.pout else '0'});",
                  f"  {n}_parent_ref(w, cnt.Host.data(), " +
                  ("n" if self.dims == 1 else "width, height") + ", seed);"]
        lines += self.checks(acc=True, pout=self.pout)
        lines.append("}")
        return "\n".join(lines)

    def describe(self):
        t = {"shape": "flat", "dims": str(self.dims),
             "sites": " ".join(s.kind for s in self.sites),
             "children": " ".join(c.kind for c in self.children),
             "pragma": self.pragma_on + (f" {self.granularity}"
                                         if self.granularity else "")}
        if self.tile:
            t["parent"] = "shared tile" + (
                ", block-uniform return" if self.uniform_return else "")
        if self.in_device_fn:
            t["launch in"] = "device function"
        return t


def split_top(text):
    """`text` split at its top-level commas."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return parts + [cur.strip()]


#===-- Recursion ---------------------------------------------------------===#

class Recursive(Base):
    """A kernel that launches itself on the children of split nodes: nodes
    are numbered level by level, the children of node v being
    R + v * F .. R + v * F + F - 1 (R roots)."""

    def __init__(self, rng, name):
        super().__init__(rng, name)
        self.fan = rng.choice([2, 2, 3, 4])
        self.depth = {2: rng.randint(2, 6), 3: rng.randint(2, 4),
                      4: rng.randint(1, 3)}[self.fan]
        self.roots = rng.choice([1, 1, 2, 3])
        self.block = rng.choice([32, 64, 96, 128, 40])
        self.style = rng.choice(["grid", "threads", "loop"])
        self.barrier = rng.random() < 0.3
        self.count_down = rng.random() < 0.4
        self.leaf = rng.random() < 0.3
        self.leaf_block = rng.choice([16, 32, 50])
        self.counter = rng.choice(["none", "thread0", "all"])
        self.block_text = ("blockDim.x" if not self.barrier and
                           rng.random() < 0.3 else
                           rng.choice([str(self.block),
                                       f"{name}_kBlock"]))
        self.granularity = random_granularity(rng)
        self.pragma_on = "kernel" if rng.random() < 0.8 else "statement"
        if rng.random() < 0.06:
            # Barriers and a block size that is not a constant: refused.
            self.refusal = "barrier-varying"
            self.barrier, self.block_text = True, "blockDim.x"
        levels = sum(self.fan ** d for d in range(self.depth + 1))
        self.nodes = self.roots * levels
        self.split_mod = rng.choice([3, 4, 5])

    def spell_more(self, spell, r):
        # kNodes bounds the tree: fewer roots, a smaller fan or depth keep
        # it within. The block may change where no literal repeats it.
        blocks = ([32, 40, 64, 96, 128] if self.block_text != str(self.block)
                  else [])
        spell("kBlock", str(self.block), [str(b) for b in r.sample(
            blocks, min(2, len(blocks)))])
        spell("kFan", str(self.fan), [str(f) for f in range(2, self.fan)])
        spell("kRoots", str(self.roots), [str(v) for v in
                                          range(1, self.roots)])
        spell("kDepth", str(self.depth), fewer(r, self.depth))
        spell("kNodes", str(self.nodes))
        spell("kLeaf", str(self.leaf_block), [str(b) for b in r.sample(
            [16, 32, 50, 64], 2)])

    def code(self):
        n, R, F, B = self.name, self.roots, self.fan, self.block
        kin = self.KIN
        parts = self.header() + [
            f"constexpr int {n}_kBlock = {B};  // threads per node",
            f"constexpr int {n}_kFan = {F};    // children of a split node",
            f"constexpr int {n}_kRoots = {R};  // nodes of the first grid",
            f"constexpr int {n}_kDepth = {self.depth};  // the deepest level",
            f"constexpr int {n}_kNodes = {self.nodes};  // nodes at most",
            f"constexpr int {n}_kLeaf = {self.leaf_block};  // threads per "
            "leaf launch",
            "", self.want_struct(), ""]
        depth_param = "left" if self.count_down else "depth"
        level = (f"({n}_kDepth - left)" if self.count_down else "depth")
        deeper = "left - 1" if self.count_down else "depth + 1"
        can_split = "left > 0" if self.count_down else f"depth < {n}_kDepth"
        value_dev = (f"in[(node * 13 + threadIdx.x + seed) % {kin}] + "
                     f"{level} * 1000 + (int)gridDim.x * 7")
        value_host = (f"w.in[(node * 13 + tx + seed) % {kin}] + "
                      f"{level} * 1000 + blocks * 7")
        if self.barrier:
            value_dev += " + right"
            value_host += " + right"
        split = f"in[(node + seed) % {kin}] % {self.split_mod} != 0"
        first = f"{n}_kRoots + node * {n}_kFan"
        args = f"out, {'acc, ' if self.uses_acc() else ''}in"
        leaf = ""
        leaf_ref = ""
        if self.leaf:
            leaf = "\n".join([
                "/// A leaf's extra work: one block per leaf node.",
                f"__global__ void {n}_leaf(int *__restrict__ out, int node, "
                "int seed) {",
                f"  out[{n}_kNodes * {n}_kBlock + node * {n}_kLeaf + "
                "threadIdx.x] =",
                f"      node * 3 + seed - (int)threadIdx.x;", "}", "",
                f"static void {n}_leaf_ref({n}_Want &w, int node, "
                "int seed) {",
                f"  for (int tx = 0; tx < {n}_kLeaf; ++tx)",
                f"    w.store({n}_kNodes * {n}_kBlock + node * {n}_kLeaf + tx,"
                " node * 3 + seed - tx);", "}", ""])
        params = (["int *__restrict__ out"] +
                  (["int *__restrict__ acc"] if self.uses_acc() else []) +
                  ["const int *__restrict__ in", "int first",
                   f"int {depth_param}", "int seed"])
        blk = self.block_text
        body = ["const int node = first + blockIdx.x;"]
        host = ["    const int node = first + bx;"]
        if self.barrier:
            body += [f"__shared__ int s[{n}_kBlock];",
                     f"s[threadIdx.x] = in[(node * 7 + threadIdx.x) % {kin}];",
                     "__syncthreads();",
                     "const int right = s[(threadIdx.x + 1) % blockDim.x];"]
        body.append(f"out[node * {n}_kBlock + threadIdx.x] = {value_dev};")
        host += [f"    for (int tx = 0; tx < {n}_kBlock; ++tx) {{"]
        if self.barrier:
            host.append(f"      const int right = w.in[(node * 7 + (tx + 1) % "
                        f"{n}_kBlock) % {kin}];")
        host += [f"      w.store(node * {n}_kBlock + tx, {value_host});",
                 "    }"]
        if self.counter == "thread0":
            body += ["if (threadIdx.x == 0)",
                     f"  atomicAdd(&acc[{level}], 1);"]
            host.append(f"    w.add({level}, 1);")
        elif self.counter == "all":
            body.append(f"atomicAdd(&acc[(node + threadIdx.x) % {n}_kAcc], "
                        f"{level} + 1);")
            host += [f"    for (int tx = 0; tx < {n}_kBlock; ++tx)",
                     f"      w.add((node + tx) % {n}_kAcc, {level} + 1);"]
        body.append(f"const bool split = {can_split} && {split};")
        host.append(f"    const bool split = {can_split} && "
                    f"{split.replace('in[', 'w.in[')};")
        ref_call = f"{n}_tree_ref(w, {{first}}, {{blocks}}, {deeper}, seed);"
        pragma_line = ([pragma(self.granularity)]
                       if self.pragma_on == "statement" else [])
        if self.style == "grid":
            body += pragma_line + [
                "if (split && threadIdx.x == 0)",
                f"  {n}_tree<<<{n}_kFan, {blk}>>>({args}, {first}, {deeper}, "
                "seed);"]
            host += ["    if (split)",
                     "      " + ref_call.format(first=first.replace(
                         "node", "node"), blocks=f"{n}_kFan")]
        elif self.style == "threads":
            body += pragma_line + [
                f"if (split && threadIdx.x < {n}_kFan)",
                f"  {n}_tree<<<1, {blk}>>>({args}, {first} + threadIdx.x, "
                f"{deeper}, seed);"]
            host += ["    if (split)",
                     f"      for (int tx = 0; tx < {n}_kFan; ++tx)",
                     "        " + ref_call.format(first=f"{first} + tx",
                                                  blocks="1")]
        else:
            cond = f"in[({first} + c) % {kin}] % 4 != 0"
            body += pragma_line + [
                "if (split && threadIdx.x == 0)",
                f"  for (int c = 0; c < {n}_kFan; ++c)",
                f"    if ({cond})",
                f"      {n}_tree<<<1, {blk}>>>({args}, {first} + c, {deeper}, "
                "seed);"]
            host += ["    if (split)",
                     f"      for (int c = 0; c < {n}_kFan; ++c)",
                     f"        if ({cond.replace('in[', 'w.in[')})",
                     "          " + ref_call.format(first=f"{first} + c",
                                                    blocks="1")]
        if self.leaf:
            t = self.rng.choice(["0", "1", f"{n}_kBlock - 1"])
            body += [f"if (!split && threadIdx.x == {t})",
                     f"  {n}_leaf<<<1, {n}_kLeaf>>>(out, node, seed);"]
            host += ["    if (!split)", f"      {n}_leaf_ref(w, node, seed);"]
        kernel_pragma = ([pragma(self.granularity)]
                         if self.pragma_on == "kernel" else [])
        kernel = "\n".join(
            [f"/// Node first + blockIdx.x of level {level}: writes its "
             "elements, and if it splits launches itself on its children."]
            + kernel_pragma +
            [f"__global__ void {n}_tree({', '.join(params)}) {{"] +
            [x if x.startswith("#") else "  " + x for x in body] + ["}"])
        ref = "\n".join(
            [f"static void {n}_tree_ref({n}_Want &w, int first, int blocks, "
             f"int {depth_param}, int seed) {{",
             "  for (int bx = 0; bx < blocks; ++bx) {"] + host +
            ["  }", "}"])
        # The recursion in the reference calls itself.
        ref = (f"static void {n}_tree_ref({n}_Want &w, int first, int blocks,"
               f" int {depth_param}, int seed);\n" + ref)
        parts += [leaf, kernel, "", ref, "", self.run()]
        return "\n".join(parts)

    def uses_acc(self):
        return self.counter != "none"

    def run(self):
        n = self.name
        start = f"{n}_kDepth" if self.count_down else "0"
        acc = ", acc.data()" if self.uses_acc() else ""
        return "\n".join([
            f"static void run_{n}(difftest::Rng &rng, difftest::Check &check) "
            "{",
            "  const int seed = int(rng.integer(0, 999));",
            f"  difftest::Buffer<int> in({n}_kIn), out({n}_kNodes * "
            f"({n}_kBlock + {n}_kLeaf)), acc({n}_kAcc);",
            "  rng.fill(in.Host, 0, 999);",
            "  in.upload();", "  out.poison();",
            "  acc.Host.assign(acc.size(), 0);", "  acc.upload();",
            f"  {n}_tree<<<{n}_kRoots, {n}_kBlock>>>(out.data(){acc}, "
            f"in.data(), 0, {start}, seed);",
            "  DIFFTEST_CUDA(cudaGetLastError());",
            f"  {n}_Want w(in.Host, out.size(), acc.size(), 0);",
            f"  {n}_tree_ref(w, 0, {n}_kRoots, {start}, seed);"] +
            self.checks(acc=True) + ["}"])

    def describe(self):
        return {"shape": "recursive", "style": self.style,
                "fan": str(self.fan), "depth": str(self.depth),
                "barrier": str(self.barrier), "leaf": str(self.leaf),
                "block": self.block_text,
                "pragma": self.pragma_on + (f" {self.granularity}"
                                            if self.granularity else "")}


#===-- Two levels --------------------------------------------------------===#

class Chain(Base):
    """top -> mid -> leaf: a child that launches kernels itself. Without a
    pragma on mid (a refusal form) the top's launches are refused."""

    def __init__(self, rng, name):
        super().__init__(rng, name)
        self.mid_block = rng.choice([2, 3, 4, 6, 8])
        self.leaf_block = rng.choice([8, 16, 32, 33, 64])
        self.loop = rng.random() < 0.4   # mid launches in a loop of 1..2
        per = self.mid_block * (2 if self.loop else 1)
        self.n = rng.randint(10, max(11, LAUNCH_BUDGET // (1 + per)))
        self.pb = rng.choice([32, 64, 128])
        self.g_top = random_granularity(rng)
        self.g_mid = random_granularity(rng)
        if rng.random() < 0.15:
            self.refusal = "nested-unannotated"

    def spell_more(self, spell, r):
        # Fewer mid threads and items keep the launches within the budget.
        spell("kMid", str(self.mid_block), fewer(r, self.mid_block))
        spell("kLeaf", str(self.leaf_block), [str(b) for b in r.sample(
            [8, 16, 32, 33, 64, 128], 2)])
        self.spelled("N", self.n, fewer(r, self.n))

    def code(self):
        n, kin = self.name, self.KIN
        MB, LB = self.mid_block, self.leaf_block
        trips = 2 if self.loop else 1
        per_mid = MB * trips * LB
        if self.spell.on:  # the elements of a top thread, by name
            per_mid = f"({n}_kMid * {trips} * {n}_kLeaf)"
        parts = self.header(acc=False) + [
            f"constexpr int {n}_kMid = {MB};   // threads of a mid launch",
            f"constexpr int {n}_kLeaf = {LB};  // threads of a leaf launch",
            "", self.want_struct(), "",
            "/// The last level: one element per thread.",
            f"__global__ void {n}_leaf(int *__restrict__ out, int base, "
            "int value) {",
            "  out[base + threadIdx.x] = value * 3 + (int)threadIdx.x;", "}",
            ""]
        mid_pragma = ([] if self.refusal else [pragma(self.g_mid)])
        if self.loop:
            launch = [
                "  for (int k = 0; k < 1 + t % 2; ++k)",
                f"    {n}_leaf<<<1, {n}_kLeaf>>>(out, base + (t * 2 + k) * "
                f"{n}_kLeaf, value + k);"]
            launch_ref = [
                "      for (int k = 0; k < 1 + t % 2; ++k)",
                f"        for (int tx = 0; tx < {n}_kLeaf; ++tx)",
                f"          w.store(base + (t * 2 + k) * {n}_kLeaf + tx, "
                "(value + k) * 3 + tx);"]
        else:
            launch = [
                f"  if ((in[(value + t) % {kin}] + t) % 3 != 0)",
                f"    {n}_leaf<<<1, {n}_kLeaf>>>(out, base + t * {n}_kLeaf, "
                "value + t);"]
            launch_ref = [
                f"      if ((w.in[(value + t) % {kin}] + t) % 3 != 0)",
                f"        for (int tx = 0; tx < {n}_kLeaf; ++tx)",
                f"          w.store(base + t * {n}_kLeaf + tx, (value + t) * "
                "3 + tx);"]
        parts += [
            "/// The middle level: each thread launches leaves.",
            *mid_pragma,
            f"__global__ void {n}_mid(int *__restrict__ out, "
            "const int *__restrict__ in, int base,",
            f"{' ' * (len(n) + 21)}int value) {{",
            "  const int t = threadIdx.x;", *launch, "}", "",
            "/// The top level: one thread per item.",
            pragma(self.g_top),
            f"__global__ void {n}_top(int *__restrict__ out, "
            "const int *__restrict__ in, int n,",
            f"{' ' * (len(n) + 21)}int seed) {{",
            "  const int i = blockIdx.x * blockDim.x + threadIdx.x;",
            f"  if (i < n && in[(i + seed) % {kin}] % 4 != 0)",
            f"    {n}_mid<<<1, {n}_kMid>>>(out, in, i * {per_mid}, "
            f"in[i % {kin}] + seed);", "}", "",
            f"static void {n}_top_ref({n}_Want &w, int n, int seed) {{",
            "  for (int i = 0; i < n; ++i) {",
            f"    if (w.in[(i + seed) % {kin}] % 4 == 0)", "      continue;",
            f"    const int base = i * {per_mid}, value = w.in[i % {kin}] + "
            "seed;",
            f"    for (int t = 0; t < {n}_kMid; ++t)", *launch_ref,
            "  }", "}", "",
            f"static void run_{n}(difftest::Rng &rng, difftest::Check &check) "
            "{",
            f"  const int n = {self.text.get('N', self.n)};",
            "  const int seed = int(rng.integer(0, 999));",
            f"  difftest::Buffer<int> in({n}_kIn), out(n * {per_mid});",
            "  rng.fill(in.Host, 0, 999);",
            "  in.upload();", "  out.poison();",
            f"  {n}_top<<<(n + {self.pb - 1}) / {self.pb}, {self.pb}>>>"
            "(out.data(), in.data(), n, seed);",
            "  DIFFTEST_CUDA(cudaGetLastError());",
            f"  {n}_Want w(in.Host, out.size(), 0, 0);",
            f"  {n}_top_ref(w, n, seed);"] + self.checks(acc=False) + ["}"]
        return "\n".join(parts)

    def describe(self):
        return {"shape": "chain", "loop": str(self.loop),
                "pragma": f"top {self.g_top or '-'} mid "
                          f"{'none' if self.refusal else self.g_mid or '-'}"}


#===-- Device-side cudaMalloc --------------------------------------------===#

class Malloc(Base):
    """Each parent thread allocates a buffer (device-side cudaMalloc) that
    a child fills; a host-launched kernel gathers the buffers."""

    def __init__(self, rng, name):
        super().__init__(rng, name)
        self.n = rng.randint(20, 400)
        self.pb = rng.choice([32, 64, 128, 100])
        self.most = rng.choice([8, 40, 100])
        self.whole_block = rng.random() < 0.5  # every thread reaches it
        self.child_block = rng.choice(["32", "64", "16"])
        self.granularity = random_granularity(rng)
        if rng.random() < 0.15:
            self.refusal = "cudafree"

    def spell_more(self, spell, r):
        spell("kMost", str(self.most), [str(v) for v in r.sample(
            [5, 8, 40, 64, 100, 130], 2)])
        self.spelled("N", self.n, [r.randint(20, 400) for _ in range(2)])

    def code(self):
        n, kin = self.name, self.KIN
        parts = self.header(acc=False) + [
            f"constexpr int {n}_kMost = {self.most};  // elements of a buffer "
            "at most",
            "", self.want_struct(), "",
            "/// Fills one thread's buffer.",
            f"__global__ void {n}_fill(int *buf, int n, int value) {{",
            "  const int j = blockIdx.x * blockDim.x + threadIdx.x;",
            "  if (j < n)",
            "    buf[j] = value * 3 + j;", "}", "",
            "/// Each thread allocates a buffer in device code and launches "
            "a child to fill it.",
            pragma(self.granularity),
            f"__global__ void {n}_parent(int **table, "
            "const int *__restrict__ cnt, int n, int seed) {",
            "  const int i = blockIdx.x * blockDim.x + threadIdx.x;"]
        B = self.child_block
        if self.whole_block:
            parts += [
                f"  const int size = i < n ? 1 + cnt[i] : 1;",
                "  int *buf = nullptr;",
                "  cudaMalloc((void **)&buf, size * sizeof(int));",
                "  if (i < n) {",
                "    table[i] = buf;",
                "    if (buf)",
                f"      {n}_fill<<<(size + {B} - 1) / {B}, {B}>>>(buf, size, "
                "seed + i);", "  }", "}"]
        else:
            parts += [
                "  if (i >= n)", "    return;",
                "  const int size = 1 + cnt[i];",
                "  int *buf = nullptr;",
                "  cudaMalloc((void **)&buf, size * sizeof(int));",
                "  table[i] = buf;",
                "  if (buf)",
                f"    {n}_fill<<<(size + {B} - 1) / {B}, {B}>>>(buf, size, "
                "seed + i);", "}"]
        parts += [
            "",
            "/// Copies every thread's buffer to out (-1 if its allocation "
            "failed).",
            f"__global__ void {n}_gather(int *__restrict__ out, "
            "int *const *__restrict__ table,",
            f"{' ' * (len(n) + 24)}const int *__restrict__ cnt) {{",
            "  const int i = blockIdx.x;",
            "  const int *buf = table[i];",
            "  for (int j = threadIdx.x; j <= cnt[i]; j += blockDim.x)",
            f"    out[i * {n}_kMost + j] = buf ? buf[j] : -1;"]
        if self.refusal == "cudafree":
            parts += ["  __syncthreads();",
                      "  if (threadIdx.x == 0 && buf)",
                      "    cudaFree(table[i]);"]
        parts += ["}", "",
                  f"static void run_{n}(difftest::Rng &rng, "
                  "difftest::Check &check) {",
                  f"  const int n = {self.text.get('N', self.n)};",
                  "  const int seed = int(rng.integer(0, 999));",
                  f"  difftest::Buffer<int> in({n}_kIn), cnt(n), "
                  f"out(n * {n}_kMost);",
                  "  difftest::Buffer<int *> table(n);",
                  f"  rng.fill(cnt.Host, 0, {n}_kMost - 1);",
                  "  cnt.upload();", "  out.poison();",
                  f"  {n}_parent<<<(n + {self.pb - 1}) / {self.pb}, "
                  f"{self.pb}>>>(table.data(), cnt.data(), n, seed);",
                  "  DIFFTEST_CUDA(cudaGetLastError());",
                  f"  {n}_gather<<<n, 32>>>(out.data(), table.data(), "
                  "cnt.data());",
                  "  DIFFTEST_CUDA(cudaGetLastError());",
                  f"  {n}_Want w(in.Host, out.size(), 0, 0);",
                  "  for (int i = 0; i < n; ++i)",
                  "    for (int j = 0; j <= cnt.Host[i]; ++j)",
                  f"      w.store(i * {n}_kMost + j, (seed + i) * 3 + j);"]
        parts += self.checks(acc=False) + ["}"]
        return "\n".join(parts)

    def describe(self):
        return {"shape": "malloc",
                "reached by": "block" if self.whole_block else "warp",
                "pragma": self.granularity or "-"}


def fold_lines(code):
    """Lines longer than 80 columns folded: function heads with their
    parameters aligned after the '(', comments at word boundaries, other
    code after a comma, continued 4 columns deeper."""
    out = []
    for line in code.split("\n"):
        stripped = line.lstrip()
        indent_ = line[:len(line) - len(stripped)]
        if len(line) <= 80 or stripped.startswith("#"):
            out.append(line)
            continue
        if stripped.startswith("//"):
            marker = stripped.split(" ", 1)[0] + " "
            words, cur = stripped[len(marker):].split(" "), indent_ + marker
            for word in words:
                if len(cur) + len(word) > 80 and cur.strip() != marker.strip():
                    out.append(cur.rstrip())
                    cur = indent_ + marker
                cur += word + " "
            out.append(cur.rstrip())
            continue
        if re.match(r"(__global__|__device__|__host__|static) ", line):
            pad = " " * (line.index("(") + 1)
        else:
            pad = indent_ + "    "
        while len(line) > 80:
            cut = line.rfind(", ", 0, 80)
            if cut < len(pad):
                break
            out.append(line[:cut + 1])
            line = pad + line[cut + 2:]
        out.append(line)
    return "\n".join(out)


def generate(rng: random.Random, name: str,
             spell: Spelling = None) -> Program:
    shape = rng.choices([Flat, Recursive, Chain, Malloc], [62, 20, 9, 9])[0]
    p = shape(rng, name)
    p.spell_constants(spell or Spelling(name))
    code = fold_lines(p.spell.apply(p.code()))
    traits = p.describe()
    if p.refusal:
        traits["refusal"] = p.refusal
    if p.spell.on:
        traits["spelled"] = p.spell.style
    return Program(name, code, traits, p.spell.knobs)
