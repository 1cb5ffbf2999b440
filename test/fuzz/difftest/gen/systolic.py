"""Stencils and convolutions for the systolic pass (SSAM): random shapes,
radii, weight sources, index styles, element types, guards and sizes that
are not multiples of the tile. Some programs carry a feature the pass must
refuse (a bias, an integer type, a guard on a flag); they still check.

Spelled programs (common.Spelling) name their sizes (W, H, D: in the host
code, and in the kernel instead of a parameter for some), block shape,
guard margins and some weights: other sizes, blocks, wider margins and
other exact weights keep the program valid and self-checking."""

import random
import re

from .common import (Program, Spelling, Variant, block_others, c_float,
                     set_clause, strip_pragmas)

PASS = "systolic"
VARIANTS = [
    Variant("pragma"),                              # clauses as generated
    Variant("default", transform=lambda t: set_clause(
        "systolic", "p", None)(set_clause("systolic", "block", None)(
            set_clause("systolic", "vector", None)(
                set_clause("systolic", "z", None)(t))))),
    Variant("auto", flags=["--auto"], transform=strip_pragmas("systolic")),
]


def tap_set(rng, dims):
    """Offsets (dx, dy[, dz]) of a random stencil: a star, a box or a
    random subset of a box, never fewer than two points."""
    rx = rng.choice([0, 1, 1, 2, 3, 4])
    ry = rng.choice([1, 1, 2, 3])
    rz = rng.choice([1, 1, 2]) if dims == 3 else 0
    box = [(dx, dy, dz) for dz in range(-rz, rz + 1)
           for dy in range(-ry, ry + 1) for dx in range(-rx, rx + 1)]
    shape = rng.choice(["star", "box", "subset", "shifted"])
    if shape == "star":
        taps = [t for t in box if sum(c != 0 for c in t) <= 1]
    elif shape == "box":
        taps = box
    elif shape == "subset":
        taps = rng.sample(box, max(2, rng.randint(2, len(box))))
    else:  # a one-sided box: x .. x + n (a convolution's corner anchor)
        taps = [(dx + rx, dy + ry, dz) for dx, dy, dz in box]
    if len(taps) > 60:
        taps = rng.sample(taps, 60)
    if len(taps) < 2:
        taps = [(0, 0, 0), (0, 1, 0)]
    return sorted(set(taps))


def weight_value(rng, ctype):
    if ctype == "int":
        return rng.choice([-3, -2, -1, 1, 2, 3])
    return rng.choice([-1, 1]) * rng.randint(1, 63) / 64.0  # exact


def coordinate(axis, offset=0):
    base = f"blockIdx.{axis} * blockDim.{axis} + threadIdx.{axis}"
    return base + (f" + {offset}" if offset else "")


def plus(expr, k):
    return expr if k == 0 else (f"{expr} + {k}" if k > 0 else f"{expr} - {-k}")


def scaled(k, name):
    if k == 0:
        return None
    if k == 1:
        return name
    if k == -1:
        return f"-{name}"
    return f"{k} * {name}"


def offset_sum(parts):
    """`a + b - c` from signed terms (None dropped)."""
    text = ""
    for p in parts:
        if p is None:
            continue
        if not text:
            text = p
        elif p.startswith("-"):
            text += " - " + p[1:]
        else:
            text += " + " + p
    return text or "0"


class Stencil:
    def __init__(self, rng, name, spell=None):
        self.rng, self.name = rng, name
        self.spell = spell or Spelling(name)
        self.dims = 3 if rng.random() < 0.2 else 2
        self.ctype = rng.choices(["float", "double", "int"], [6, 3, 1])[0]
        self.taps = tap_set(rng, self.dims)
        self.weights = [weight_value(rng, self.ctype) for _ in self.taps]
        self.source = rng.choice(["literal", "param", "constant", "local",
                                  "filter"])
        if self.source == "filter" and self.dims == 3:
            self.source = "constant"
        self.index = rng.choice(["flat", "ivar", "rows"] if self.dims == 2
                                else ["flat", "ivar"])
        self.restrict = rng.random() < 0.85
        self.bias = self.ctype != "int" and rng.random() < 0.05
        self.flag_guard = rng.random() < 0.04
        self.guard = rng.choice(["return", "if"])
        reach = [(min(t[a] for t in self.taps), max(t[a] for t in self.taps))
                 for a in range(3)]
        # Margins: the stencil's reach, sometimes wider.
        self.margins = [(max(0, -lo) + rng.choice([0, 0, 0, 1, 2]),
                         max(0, hi) + rng.choice([0, 0, 0, 1, 3]))
                        for lo, hi in reach]
        if self.dims == 2:
            self.size = [rng.randint(40, 700), rng.randint(12, 260), 1]
        else:
            self.size = [rng.randint(33, 150), rng.randint(9, 40),
                         rng.randint(6, 30)]
        self.block = rng.choice([(32, 8, 1), (64, 4, 1), (16, 16, 1),
                                 (128, 1, 1), (32, 4, 1)] if self.dims == 2
                                else [(32, 4, 2), (32, 8, 1), (64, 2, 2)])
        clauses = []
        if rng.random() < 0.5:
            clauses.append(f"p({rng.choice([1, 2, 4, 8, 16])})")
        if rng.random() < 0.3:
            clauses.append(f"block({rng.choice([64, 128, 256])})")
        if self.dims == 3 and rng.random() < 0.4:
            z = rng.choice(['stream', 'shared'])
            # z(shared) cannot take a filter loop over the whole box.
            clauses.append(f"z({'stream' if self.source == 'filter' else z})")
        self.clauses = clauses
        if self.source == "filter":
            # A filter loop needs a full box: spell out the reach box.
            xs = [t[0] for t in self.taps]
            ys = [t[1] for t in self.taps]
            self.box = (min(xs), min(ys), max(xs) - min(xs) + 1,
                        max(ys) - min(ys) + 1)
            bx, by, nx, ny = self.box
            self.taps = [(bx + i, by + j, 0) for j in range(ny)
                         for i in range(nx)]
            self.weights = [weight_value(self.rng, self.ctype)
                            for _ in self.taps]
            self.bias = False  # the filter loop has no place for one
        self.draw_more(rng)

    def draw_more(self, rng):
        """Forms added after seeds 1 and 2 (generated at the commit before)."""
        # Rows that start 16-byte aligned: the aligned-rows form runs only then.
        if rng.random() < 0.4:
            unit = 2 if self.ctype == "double" else 4
            self.size[0] -= self.size[0] % unit
        if self.source != "filter" and rng.random() < 0.25:
            self.index = rng.choice(["ptr", "md"] if self.dims == 2 else
                                    ["ptr"])
        if self.index == "md":
            self.size[0] = rng.choice([64, 96, 128, 200, 256, 333])
        if self.source in ("literal", "local") and rng.random() < 0.3:
            self.source = rng.choice(["global", "cscalar"])
        if self.dims == 2 and rng.random() < 0.2:
            # A clause this kernel cannot take is an error that fails the
            # whole file (docs/systolic.md): wider than 16 bytes of the
            # element type, or a vector form for arrays without unit-stride
            # rows, becomes vector(1) (the same draws, so seeds keep their
            # other choices).
            width = rng.choice([1, 2, 4])
            if self.index in ("md", "ptr"):
                width = 1
            elif self.ctype == "double":
                width = min(width, 2)
            self.clauses.append(f"vector({width})")
        self.launch_tail = rng.choice(["", "", ", 0", ", 0, 0"])
        self.coord = rng.choices(["int", "long long", "unsigned"],
                                 [7, 1.5, 1.5])[0]
        if self.index in ("md", "rows"):
            self.coord = "int"
        self.spell_constants()

    def spell_constants(self):
        """The texts of the spelled constants (`self.text`: key -> name) and
        the dimensions the kernel reads by name instead of a parameter
        (`self.named`). Draws only from the spelling's own stream."""
        sp, self.text, self.named = self.spell, {}, set()
        if not sp.on:
            return
        r, T = sp.rng, self.ctype
        W, H, D = self.size
        (lx, hx), (ly, hy) = self.margins[0], self.margins[1]
        lz, hz = self.margins[2] if self.dims == 3 else (0, 0)
        # Sizes: any that leaves a point to write (small enough for the
        # host reference of a 3-D stencil).
        big = (1100, 300) if self.dims == 2 else (160, 48)
        if self.index == "md":
            others_w = [str(v) for v in r.sample(
                [64, 96, 128, 200, 256, 333, 512], 2)]
        else:
            others_w = [str(r.randint(lx + hx + 4, big[0])),
                        str(4 * r.randint(lx + hx + 4, big[0]) // 4)]
        self.text["W"] = sp("W", str(W), others_w)
        self.text["H"] = sp("H", str(H), [str(r.randint(ly + hy + 3, big[1]))
                                           for _ in range(2)])
        if self.dims == 3:
            self.text["D"] = sp("D", str(D), [str(r.randint(lz + hz + 2, 36))
                                               for _ in range(2)])
        # The row stride (and the bounds) as a compile-time constant in the
        # kernel: the md form's row type names it already.
        if self.index == "md" or r.random() < 0.6:
            self.named.add("W")
        for dim in ("H", "D")[:self.dims - 1]:
            if r.random() < 0.4:
                self.named.add(dim)
        if r.random() < 0.5:
            others = block_others(self.block, [[16, 32, 64, 128],
                                               [1, 2, 4, 8], [1]]
                                  if self.dims == 2 else
                                  [[32, 64], [2, 4, 8], [1, 2]])
            for axis, key in enumerate(["BX", "BY", "BZ"]):
                self.text[key] = sp(key, str(self.block[axis]), others[axis])
        if r.random() < 0.35:
            # Wider margins: fewer points written, every read still inside.
            for key, value in (("LX", lx), ("HX", hx), ("LY", ly),
                               ("HY", hy)):
                self.text[key] = sp(key, str(value), [str(value + d) for d
                                                      in (1, 2, 4)])
        if r.random() < 0.6:
            for k in sorted(r.sample(range(len(self.taps)),
                                     min(3, len(self.taps)))):
                self.text[f"c{k}"] = sp(
                    f"wt{k}", self.literal(self.weights[k]),
                    [self.literal(weight_value(r, T)) for _ in range(2)],
                    ctype=T)

    def literal(self, w):
        return str(w) if self.ctype == "int" else c_float(w, self.ctype)

    # ---- kernel ----------------------------------------------------------

    def weight_expr(self, k):
        n, w = self.name, self.weights[k]
        if self.source == "literal":
            return self.text.get(f"c{k}", self.literal(w))
        if self.source in ("param", "local"):
            return f"c{k}"
        if self.source in ("global", "cscalar"):
            return f"{n}_c{k}"
        return f"{n}_w[{k}]"

    def read(self, tap):
        dx, dy, dz = tap
        x, W, H = "x", "W", "H"
        if self.index == "rows":
            return f"row{self.row_name(dy)}[{plus(x, dx)}]"
        if self.index == "md":
            return f"in[{plus('y', dy)}][{plus(x, dx)}]"
        if self.index in ("ivar", "ptr"):
            off = offset_sum([scaled(dz, "W * H") if dz else None,
                              scaled(dy, W), str(dx) if dx > 0 else
                              (f"-{-dx}" if dx < 0 else None)])
            if self.index == "ptr":
                return f"p[{off}]"
            return "in[i]" if off == "0" else f"in[{plus_text('i', off)}]"
        if self.dims == 2:
            row = "y" if dy == 0 else f"({plus('y', dy)})"
            return f"in[{row} * W + {plus(x, dx)}]"
        zz = "z" if dz == 0 else f"({plus('z', dz)})"
        return f"in[({zz} * H + {plus('y', dy)}) * W + {plus(x, dx)}]"

    def weight_declarations(self):
        """The file-scope weights the kernel reads by name: a __constant__
        filter, constexpr or __constant__ scalars."""
        n, T, lines = self.name, self.ctype, []
        if self.source == "constant":
            lines.append(f"__constant__ {T} {n}_w[{len(self.taps)}];")
        for k, w in enumerate(self.weights):
            lit = self.text.get(f"c{k}", self.literal(w))
            if self.source == "global":
                lines.append(f"constexpr {T} {n}_c{k} = {lit};")
            elif self.source == "cscalar":
                lines.append(f"__constant__ {T} {n}_c{k};")
        return lines

    @staticmethod
    def row_name(dy):
        return f"m{-dy}" if dy < 0 else f"p{dy}"

    def kernel(self):
        n, T = self.name, self.ctype
        R = " __restrict__" if self.restrict else ""
        if self.index == "md":
            params = [f"const {T} (*{R} in)[{n}_W]".replace("* ", "*"),
                      f"{T} (*{R} out)[{n}_W]".replace("* ", "*"), "int W",
                      "int H"]
        else:
            params = [f"const {T} *{R} in".replace("* ", "*"),
                      f"{T} *{R} out".replace("* ", "*"), "int W", "int H"]
        if self.dims == 3:
            params.append("int D")
        if self.source == "param":
            params += [f"{T} c{k}" for k in range(len(self.taps))]
        if self.source == "filter":
            params.append(f"const {T} *{R} w".replace("* ", "*"))
        if self.flag_guard:
            params.append("int flag")
        # Dimensions read by name are no parameters.
        params = [q for q in params
                  if q not in {f"int {dim}" for dim in self.named}]
        lines = self.weight_declarations()
        if self.index == "md":
            lines.append(f"constexpr int {n}_W = {self.size[0]};")
        pragma = " ".join(["#pragma cuda_rewrite systolic"] + self.clauses)
        lines += [pragma,
                  f"__global__ void {n}_stencil({', '.join(params)}) {{",
                  f"  {self.coord} x = {coordinate('x')};",
                  f"  {self.coord} y = {coordinate('y')};"]
        if self.dims == 3:
            lines.append(f"  {self.coord} z = {coordinate('z')};")
        axes = ["x", "y", "z"][:self.dims]
        limits = ["W", "H", "D"]
        conds = []
        for a, (lo, hi) in zip(range(self.dims), self.margins):
            # A spelled margin is written even where it is 0.
            lo = self.text.get("L" + "XYZ"[a], lo or None)
            hi = self.text.get("H" + "XYZ"[a], hi or None)
            if lo:
                conds.append(f"{axes[a]} < {lo}" if self.guard == "return"
                             else f"{axes[a]} >= {lo}")
            conds.append(f"{axes[a]} >= {limits[a]} - {hi}" if hi and
                         self.guard == "return" else
                         (f"{axes[a]} >= {limits[a]}" if self.guard ==
                          "return" else
                          (f"{axes[a]} < {limits[a]} - {hi}" if hi else
                           f"{axes[a]} < {limits[a]}")))
        if self.flag_guard:
            conds.insert(0, "!flag" if self.guard == "return" else "flag")
        joiner = " || " if self.guard == "return" else " && "
        body_indent = "  "
        if self.guard == "return":
            lines += [f"  if ({joiner.join(conds)})", "    return;"]
        else:
            lines.append(f"  if ({joiner.join(conds)}) {{")
            body_indent = "    "
        if self.source == "local":
            for k, w in enumerate(self.weights):
                lit = self.text.get(f"c{k}", self.literal(w))
                lines.append(f"{body_indent}const {T} c{k} = {lit};")
        if self.index == "ivar" and self.source != "filter":
            idx = ("y * W + x" if self.dims == 2 else "(z * H + y) * W + x")
            lines.append(f"{body_indent}{self.coord} i = {idx};")
        if self.index == "ptr":
            idx = ("y * W + x" if self.dims == 2 else "(z * H + y) * W + x")
            lines.append(f"{body_indent}const {T} *p = in + {idx};")
        if self.index == "rows" and self.source != "filter":
            for dy in sorted({t[1] for t in self.taps}):
                lines.append(f"{body_indent}const {T} *row{self.row_name(dy)}"
                             f" = in + {'y' if dy == 0 else '(' + plus('y', dy) + ')'} * W;")
        store = ("out[y][x]" if self.index == "md" else
                 "out[y * W + x]" if self.dims == 2 else
                 "out[(z * H + y) * W + x]")
        if self.source == "filter":
            bx, by, nx, ny = self.box
            lines += [f"{body_indent}{T} s = 0;",
                      f"{body_indent}for (int j = 0; j < {ny}; ++j)",
                      f"{body_indent}  for (int i = 0; i < {nx}; ++i)",
                      f"{body_indent}    s += w[j * {nx} + i] * "
                      f"in[({plus('y + j', by)}) * W + {plus('x + i', bx)}];",
                      f"{body_indent}{store} = s;"]
        else:
            terms = [f"{self.weight_expr(k)} * {self.read(t)}"
                     for k, t in enumerate(self.taps)]
            if self.bias:
                terms.append(c_float(0.5, T))
            expr = (" +\n" + body_indent + "    ").join(terms)
            lines.append(f"{body_indent}{store} = {expr};")
        if self.guard == "if":
            lines.append("  }")
        lines.append("}")
        text = "\n".join(lines)
        for dim in sorted(self.named):
            text = re.sub(r"\b" + dim + r"\b", self.text[dim], text)
        return text

    # ---- host ------------------------------------------------------------

    def blocks(self, size, key, threads):
        """Blocks along an axis of `size` points."""
        if key in self.text:
            return f"({size} + {self.text[key]} - 1) / {self.text[key]}"
        return f"({size} + {threads - 1}) / {threads}"

    def setup(self, sizes, count, args):
        """The first lines of run_<name>: the sizes (`W = .., H = ..`),
        the input filled at random, the output poisoned and the weights
        where the kernel reads them (appended to \\p args for parameters)."""
        n, T, t = self.name, self.ctype, self.text
        lines = [f"static void run_{n}(difftest::Rng &rng, "
                 "difftest::Check &check) {",
                 f"  const int {sizes};",
                 f"  difftest::Buffer<{T}> in({count}), out({count});",
                 "  rng.fill(in.Host, " + ("-100, 100" if T == "int"
                                           else "-1.0, 1.0") + ");",
                 "  in.upload();", "  out.poison();"]
        wlist = ", ".join(t.get(f"c{k}", self.literal(w))
                          for k, w in enumerate(self.weights))
        lines.append(f"  const {T} weights[{len(self.weights)}] = {{{wlist}}};")
        if self.source == "param":
            args += [f"weights[{k}]" for k in range(len(self.weights))]
        if self.source == "constant":
            lines.append(f"  DIFFTEST_CUDA(cudaMemcpyToSymbol({n}_w, weights,"
                         " sizeof(weights)));")
        if self.source == "cscalar":
            for k in range(len(self.weights)):
                lines.append(f"  DIFFTEST_CUDA(cudaMemcpyToSymbol({n}_c{k}, "
                             f"&weights[{k}], sizeof({T})));")
        return lines

    def host(self):
        n, T, t = self.name, self.ctype, self.text
        W, H, D = (t.get(k, str(v)) for k, v in zip("WHD", self.size))
        bx, by, bz = self.block
        count = "W * H" + (" * D" if self.dims == 3 else "")
        args = ["in.data()", "out.data()"] + [
            dim for dim in "WHD"[:self.dims] if dim not in self.named]
        lines = self.setup(f"W = {W}, H = {H}, D = {D}", count, args)
        if self.index == "md":
            args[0] = f"reinterpret_cast<const {T} (*)[{n}_W]>(in.data())"
            args[1] = f"reinterpret_cast<{T} (*)[{n}_W]>(out.data())"
        if self.source == "filter":
            lines += [f"  difftest::Buffer<{T}> w({len(self.weights)});",
                      "  w.Host.assign(weights, weights + "
                      f"{len(self.weights)});", "  w.upload();"]
            args.append("w.data()")
        if self.flag_guard:
            args.append("1")
        lines += [f"  dim3 block({t.get('BX', bx)}, {t.get('BY', by)}, "
                  f"{t.get('BZ', bz)});",
                  f"  dim3 grid({self.blocks('W', 'BX', bx)}, "
                  f"{self.blocks('H', 'BY', by)}"
                  + (f", {self.blocks('D', 'BZ', bz)}" if self.dims == 3
                     else "") + ");",
                  f"  {n}_stencil<<<grid, block{self.launch_tail}>>>"
                  f"({', '.join(args)});",
                  "  DIFFTEST_CUDA(cudaGetLastError());",
                  f"  const std::vector<{T}> &got = out.download();"]
        lx, hx, ly, hy = self.margin_texts()
        lz, hz = self.margins[2] if self.dims == 3 else (0, 0)
        want_t = "long long" if T == "int" else "difftest::Approx"
        lines += self.reference_arrays(3, count)
        lines += [f"  for (int z = {lz}; z < D - {hz}; ++z)",
                  f"    for (int y = {ly}; y < H - {hy}; ++y)",
                  f"      for (int x = {lx}; x < W - {hx}; ++x) {{",
                  f"        std::vector<{want_t}> terms;"]
        lines += ["        for (int k = 0; k < "
                  f"{len(self.taps)}; ++k) {{",
                  "          size_t at = ((size_t)(z + taps[k][2]) * H + y + "
                  "taps[k][1]) * W + x + taps[k][0];"]
        lines.append(self.reference_term(" " * 10))
        lines.append("        }")
        if self.bias:
            lines.append("        terms.push_back(difftest::Approx(0.5));")
        lines.append("        size_t i = ((size_t)z * H + y) * W + x;")
        lines += self.reference_store(" " * 8, "i") + ["      }"]
        return "\n".join(lines + self.expectation())

    # ---- the host reference's shared lines -------------------------------

    def margin_texts(self):
        """The x and y margins as the reference spells them (lx, hx, ly,
        hy): a spelled margin's name, else its value."""
        (lx, hx), (ly, hy) = self.margins[0], self.margins[1]
        return tuple(self.text.get(k, v) for k, v in (
            ("LX", lx), ("HX", hx), ("LY", ly), ("HY", hy)))

    def reference_arrays(self, dims, count):
        """The taps (\\p dims coordinates each), the expected values and
        the written flags of the host reference."""
        taps = ", ".join("{" + ", ".join(str(c) for c in t[:dims]) + "}"
                         for t in self.taps)
        T = self.ctype
        return [f"  const int taps[{len(self.taps)}][{dims}] = {{{taps}}};",
                f"  std::vector<{T}> wantExact({count});" if T == "int" else
                f"  std::vector<difftest::Approx> want({count});",
                f"  std::vector<bool> written({count});"]

    def reference_term(self, indent):
        """Adds tap k's product, `weights[k] * in.Host[at]`, to `terms`."""
        if self.ctype == "int":
            return (f"{indent}terms.push_back((long long)weights[k] * "
                    "in.Host[at]);")
        return (f"{indent}terms.push_back(difftest::Approx(weights[k])"
                " * difftest::Approx(in.Host[at]));")

    def reference_store(self, indent, index):
        """The expected value at \\p index, the sum of `terms`, written."""
        if self.ctype == "int":
            want = [f"{indent}long long s = 0;\n{indent}for (long long t : "
                    f"terms) s += t;\n{indent}wantExact[{index}] = (int)s;"]
        else:
            want = [f"{indent}want[{index}] = difftest::sum(terms);"]
        return want + [f"{indent}written[{index}] = true;"]

    def expectation(self):
        """The check of `got` against the expected values, and the end."""
        if self.ctype == "int":
            return ['  difftest::expectExact(check, "out", got, '
                    "wantExact, written);", "}"]
        return ['  difftest::expectNear(check, "out", got, want, '
                "written);", "}"]


class LinearStencil(Stencil):
    """The same stencil with one thread per point numbered along x and the
    number split into coordinates: `int id = blockIdx.x * blockDim.x +
    threadIdx.x; int x = id % W, y = id / W;`, a guard on `id` (and margins
    on x and y), and in some programs zero borders (no margins, every tap
    that reaches past the grid written `(x < W - 1 && ...) ? in[..] : 0`)
    or periodic ones (no margins, reads wrapped: `in[y * W + (x + 1) % W]`,
    `(W + x - 1) % W`).
    Launches have any block size, with threads beyond the points, or
    fewer (then the rewrite must run the original where they are no whole
    rows)."""

    def __init__(self, drawn, rng):
        """\\p drawn's stencil; the choices of this form from \\p rng."""
        self.__dict__.update(drawn.__dict__)
        self.rng = rng
        self.borders = rng.choice(["zero", "zero", "periodic", "margins"])
        self.zero = self.borders == "zero"
        if self.borders != "margins":
            # A vector form would load across the borders: the clause is an
            # error there (lit systolic/linear-split.cu).
            self.clauses = [c if not c.startswith("vector(") else "vector(1)"
                            for c in self.clauses]
            self.margins = [(0, 0)] * 3
            for key in ("LX", "HX", "LY", "HY"):
                self.text.pop(key, None)
        self.guard_id = rng.choice(["if", "return"])
        self.tpb = rng.choice([64, 128, 256, 512, 96])
        # The launch: enough threads, or those of some whole rows only, or
        # a count that ends inside a row.
        self.threads = rng.choice(["enough", "enough", "rows", "partial"])
        self.unsigned_w = rng.random() < 0.3 and "W" not in self.named

    def mask(self, tap):
        """The zero border's condition for a tap, or None."""
        dx, dy, _ = tap
        conds = []
        if dx > 0:
            conds.append(f"x < W - {dx}")
        if dx < 0:
            conds.append(f"x >= {-dx}" if self.rng.random() < 0.5
                         else f"x > {-dx - 1}")
        if dy > 0:
            conds.append(f"y < H - {dy}")
        if dy < 0:
            conds.append(f"y >= {-dy}")
        return " && ".join(conds) or None

    def wrap(self, axis, d, period):
        """`axis + d` wrapped into [0, period) in one of C's spellings."""
        if d == 0:
            return axis
        if d > 0:
            return f"(({axis} + {d}) % {period})"
        return self.rng.choice([f"(({axis} + {period} - {-d}) % {period})",
                                f"(({period} + {axis} - {-d}) % {period})"])

    def kernel(self):
        n, T = self.name, self.ctype
        R = " __restrict__" if self.restrict else ""
        W = "unsigned W" if self.unsigned_w else "int W"
        params = [f"const {T} *{R} in".replace("* ", "*"),
                  f"{T} *{R} out".replace("* ", "*"), W, "int H"]
        if self.source == "param":
            params += [f"{T} c{k}" for k in range(len(self.taps))]
        params = [q for q in params
                  if q not in {f"int {dim}" for dim in self.named}]
        lines = self.weight_declarations()
        pragma = " ".join(["#pragma cuda_rewrite systolic"] + self.clauses)
        lines += [pragma,
                  f"__global__ void {n}_stencil({', '.join(params)}) {{",
                  "  int id = blockIdx.x * blockDim.x + threadIdx.x;"]
        ind = "  "
        if self.guard_id == "return":
            lines += ["  if (id >= W * H)", "    return;"]
        else:
            lines.append("  if (id < W * H) {")
            ind = "    "
        lines += [f"{ind}int x = id % W;", f"{ind}int y = id / W;"]
        conds = []
        for axis, limit, (lo, hi) in (("x", "W", self.margins[0]),
                                      ("y", "H", self.margins[1])):
            lo = self.text.get("L" + axis.upper(), lo or None)
            hi = self.text.get("H" + axis.upper(), hi or None)
            if lo:
                conds.append(f"{axis} >= {lo}")
            if hi:
                conds.append(f"{axis} < {limit} - {hi}")
        close = []
        if conds:
            lines.append(f"{ind}if ({' && '.join(conds)}) {{")
            close.append(f"{ind}}}")
            ind += "  "
        if self.source == "local":
            for k, w in enumerate(self.weights):
                lit = self.text.get(f"c{k}", self.literal(w))
                lines.append(f"{ind}const {T} c{k} = {lit};")
        terms = []
        zero = "0" if T == "int" else c_float(0.0, T)
        for k, t in enumerate(self.taps):
            dx, dy, _ = t
            row = "y" if dy == 0 else f"({plus('y', dy)})"
            read = f"in[{row} * W + {plus('x', dx)}]"
            if self.borders == "periodic":
                read = (f"in[{self.wrap('y', dy, 'H')} * W + "
                        f"{self.wrap('x', dx, 'W')}]")
            m = self.mask(t) if self.zero else None
            if m:
                read = f"(({m}) ? {read} : {zero})"
            terms.append(f"{self.weight_expr(k)} * {read}")
        expr = (" +\n" + ind + "    ").join(terms)
        lines.append(f"{ind}out[y * W + x] = {expr};")
        lines += close[::-1]
        if self.guard_id == "if":
            lines.append("  }")
        lines.append("}")
        text = "\n".join(lines)
        for dim in sorted(self.named):
            text = re.sub(r"\b" + dim + r"\b", self.text[dim], text)
        return text

    def host(self):
        n, T, t = self.name, self.ctype, self.text
        W, H = (t.get(k, str(v)) for k, v in zip("WH", self.size))
        count = "W * H"
        args = ["in.data()", "out.data()"] + [
            dim for dim in "WH" if dim not in self.named]
        lines = self.setup(f"W = {W}, H = {H}", count, args)
        # Threads: enough for every point, those of H / 2 whole rows, or a
        # count that ends inside a row.
        threads = {"enough": "W * H", "rows": "W * (H / 2)",
                   "partial": "W * (H / 2) + W / 3"}[self.threads]
        lines += [f"  const int threads = {threads};",
                  f"  const int tpb = {self.tpb};",
                  f"  {n}_stencil<<<(threads + tpb - 1) / tpb, tpb>>>"
                  f"({', '.join(args)});",
                  "  DIFFTEST_CUDA(cudaGetLastError());",
                  f"  const std::vector<{T}> &got = out.download();",
                  "  const long long launched = (long long)((threads + tpb - 1)"
                  " / tpb) * tpb;"]
        lx, hx, ly, hy = self.margin_texts()
        want_t = "long long" if T == "int" else "difftest::Approx"
        lines += self.reference_arrays(2, count)
        lines += ["  for (long long id = 0; id < launched && id < W * H; "
                  "++id) {",
                  "    const int x = id % W, y = id / W;",
                  f"    if (x < {lx} || x >= W - {hx} || y < {ly} || "
                  f"y >= H - {hy})",
                  "      continue;",
                  f"    std::vector<{want_t}> terms;",
                  f"    for (int k = 0; k < {len(self.taps)}; ++k) {{",
                  "      int px = x + taps[k][0], py = y + taps[k][1];"]
        if self.borders == "periodic":
            lines += ["      px = (px + W) % W, py = (py + H) % H;"]
        lines += ["      if (px < 0 || px >= W || py < 0 || py >= H)",
                  "        continue; // a zero border",
                  "      size_t at = (size_t)py * W + px;"]
        lines.append(self.reference_term(" " * 6))
        lines.append("    }")
        lines += self.reference_store(" " * 4, "id") + ["  }"]
        return "\n".join(lines + self.expectation())


def plus_text(base, offset_text):
    return (f"{base} - {offset_text[1:]}" if offset_text.startswith("-")
            else f"{base} + {offset_text}")


def generate(rng: random.Random, name: str,
             spell: Spelling = None) -> Program:
    # A linear thread number split into x and y (drawn from a stream of its
    # own, so that the other programs of a seed stay as they were).
    form = random.Random("form" + str(rng.getstate()[1][:8]))
    s = Stencil(rng, name, spell)
    if form.random() < 0.3 and s.dims == 2 and s.source != "filter":
        return generate_linear(LinearStencil(s, form), form)
    traits = {"dims": str(s.dims), "type": s.ctype, "taps": str(len(s.taps)),
              "weights": s.source, "index": s.index,
              "clauses": " ".join(s.clauses) or "-"}
    if s.flag_guard:
        traits["refusal"] = "flag guard"
    return program(s, form, traits)


def program(s: Stencil, form, traits) -> Program:
    """\\p s's kernel (a template in some programs) and host code, its
    constants spelled; \\p traits completed."""
    if s.bias:
        traits.setdefault("refusal", "bias")  # a flag guard's refusal comes first
    kernel, host = templated(s.kernel(), s.host(), s, form, traits)
    code = s.spell.apply(kernel + "\n\n" + host)
    if s.spell.on:
        traits["spelled"] = s.spell.style
    return Program(s.name, code, traits, s.spell.knobs)


def templated(kernel, host, s, form, traits):
    """In a quarter of the float and double programs, the kernel as a
    template over its element type (`template <typename Elem[, int Tag =
    0]>`), launched with the type named or deduced: the rewrite is an
    explicit specialization per instantiation."""
    if form.random() >= 0.25 or s.ctype not in ("float", "double"):
        return kernel, host
    pragma = kernel.index("#pragma cuda_rewrite systolic")
    head, body = kernel[:pragma], kernel[pragma:]
    body = re.sub(r"\b" + s.ctype + r"\b", "Elem", body)
    tag = form.random() < 0.4
    params = "typename Elem" + (", int Tag = 0" if tag else "")
    body = body.replace("\n__global__ void", f"\ntemplate <{params}>\n"
                        "__global__ void", 1)
    args = form.choice(["", f"<{s.ctype}>"] + ([f"<{s.ctype}, 0>"]
                                               if tag else []))
    host = host.replace(f"{s.name}_stencil<<<", f"{s.name}_stencil{args}<<<")
    traits["template"] = f"<{params}>{args or ' deduced'}"
    return head + body, host


def generate_linear(s: LinearStencil, form) -> Program:
    traits = {"dims": "2", "type": s.ctype, "taps": str(len(s.taps)),
              "weights": s.source, "index": "linear split",
              "borders": s.borders,
              "threads": s.threads, "clauses": " ".join(s.clauses) or "-"}
    return program(s, form, traits)
