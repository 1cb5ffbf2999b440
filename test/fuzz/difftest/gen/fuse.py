"""Stage chains and DAGs for the fuse pass (PolyMage-GPU): point-wise and
stencil stages, clamped or guarded borders, down- and upsampling stages at
their own scales, channel planes (and a plane every channel reads), float,
double or unsigned elements, constant tables, intermediates that are dead
(allocated and freed around the block) or live (the host reads them), image
sizes that are not multiples of any tile, launches in a random order of the
stage graph. Some programs carry a stage the pass must leave as a launch of
its own (an inline clamp, a row loop, a pointer local, a kernel in a
namespace or a template, dynamic shared memory, an odd guard) or live
outputs in one allocation (the launcher's run-time fallback); they still
check. Host statements sit between some launches: error checks,
synchronizations and event timers, which the fused launch may follow, and
now and then a statement that names a stage's output (a zero-byte
cudaMemset), which the pass must refuse.

Spelled programs (common.Spelling) name the image size, the block shape of
the launches and some stage weights: any size from the generator's range,
any block and any exact weight keep them valid and self-checking."""

import random

from .common import (Program, Spelling, Variant, block_others, c_float,
                     set_clause, strip_pragmas)

PASS = "fuse"


def _clauses(tile, hybrid):
    """A transform that sets the fuse pragma's tile(..) and hybrid(..)."""
    def apply(text):
        return set_clause("fuse", "hybrid", hybrid)(
            set_clause("fuse", "tile", tile)(text))
    return apply


# tile(x, y[, w]): a warp's tile is 32 * x columns by y rows, w warps per
# block (FuseClauses.cpp); hybrid(f[, x|y]): the fraction in registers.
VARIANTS = [
    Variant("pragma"),                                  # clauses as generated
    Variant("default", transform=_clauses(None, None)),  # the cost model
    Variant("tile1x8", transform=_clauses("1, 8", None)),
    Variant("tile2x4", transform=_clauses("2, 4", None)),
    Variant("tile4x3w8", transform=_clauses("4, 3, 8", None)),
    Variant("hybrid0", transform=_clauses(None, "0")),
    Variant("hybrid05", transform=_clauses(None, "0.5")),
    Variant("hybrid1", transform=_clauses("2, 8", "1")),
    Variant("hybrid05y", transform=_clauses("1, 8", "0.5, y")),
    Variant("auto", flags=["--auto"], transform=strip_pragmas("fuse")),
]

# Stages the pass leaves as launches of their own (FusePlan.cpp); the
# program still checks their results.
REFUSALS = ["ternary", "rowsum", "pointer", "namespace", "template",
            "dynshared", "oddguard"]

UP_FORMS = ["({v} + 1) / 2 - 1", "{v} / 2", "({v} + 1) / 2", "{v} / 2 + 1"]


def wrap(indent, stmt, width=80):
    """`stmt` on lines of at most `width` columns where it can be: broken
    before the + and - between its terms (outside brackets)."""
    if len(indent) + len(stmt) <= width:
        return [indent + stmt]
    pieces, depth, start, i = [], 0, 0, 0
    while i < len(stmt):
        ch = stmt[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and stmt.startswith((" + ", " - "), i):
            pieces.append(stmt[start:i])
            start = i + 1
            i += 2
        i += 1
    pieces.append(stmt[start:])
    lines, cur = [], indent + pieces[0]
    for p in pieces[1:]:
        if len(cur) + 1 + len(p) > width:
            lines.append(cur)
            cur = indent + "    " + p
        else:
            cur += " " + p
    lines.append(cur)
    return lines


def plus(expr, k):
    return expr if k == 0 else (f"{expr} + {k}" if k > 0 else f"{expr} - {-k}")


class Buf:
    """An image: its level along x and y (pyramid levels halve), the points
    written (margins: x in [lo, W - hi)), planes, and who reads it after."""

    def __init__(self, name, level, margins, planes, role):
        self.name, self.level, self.margins = name, level, margins
        self.planes, self.role = planes, role
        self.readers = 0

    def full(self):
        return not any(self.margins)


class Read:
    """One load: per axis ('off', k, clamped), ('down', k) or ('up', form)."""

    def __init__(self, param, buf, ax, ay):
        self.param, self.buf, self.axes = param, buf, (ax, ay)


class Stage:
    def __init__(self, name, kind, out):
        self.name, self.kind, self.out = name, kind, out
        self.inputs = []          # (param, Buf)
        self.terms = []           # (weight, [Read]) or ('curve', Read)
        self.margins = [0, 0, 0, 0]
        self.refusal = None
        self.guard = "return"
        self.ivar = False
        self.scaled_param = None  # 'inW' or 'inH'
        self.weights = "literal"  # or 'table' (__constant__), 'gain' (per c)
        self.table = None
        self.table_values = []
        self.row_weight = None    # the 'pointer' refusal's extra term

    def param_of(self, buf):
        for p, b in self.inputs:
            if b is buf:
                return p
        p = "mask" if buf.role == "mask" else "abdefgh"[len(self.inputs)]
        self.inputs.append((p, buf))
        return p


class FuseProgram:
    def __init__(self, rng, name, spell=None):
        self.rng, self.name = rng, name
        self.spell = spell or Spelling(name)
        r = rng
        self.ctype = r.choices(["float", "double", "unsigned"], [6, 3, 2])[0]
        self.channels = r.choices([1, 2, 3], [6, 2, 2])[0]
        self.size = (r.randint(35, 520), r.randint(20, 200))
        self.block = r.choice([(32, 8), (32, 4), (16, 16), (64, 4),
                               (128, 2), (32, 16)])
        self.grid_helper = r.random() < 0.4
        self.counter = 0
        self.gain = None          # per-channel gains
        self.curve = None         # a lookup table indexed by a pixel
        self.refusal = r.choice(REFUSALS) if r.random() < 0.12 else None
        self.shared_alloc = r.random() < 0.08
        # Host statements between launches (HOST_STATEMENTS), after which
        # launch; "touch" names a stage's output: the pass refuses it.
        self.host_statements = {}
        if r.random() < 0.3:
            for _ in range(r.choice([1, 1, 2])):
                self.host_statements[r.random()] = r.choices(
                    HOST_STATEMENTS, [3, 3, 2, 1])[0]
        self.stages = []
        self.inputs = [Buf("in0", (0, 0), [0] * 4, self.channels, "input")]
        if r.random() < 0.4:
            self.inputs.append(Buf("in1", (0, 0), [0] * 4, self.channels,
                                   "input"))
        if self.channels > 1 and r.random() < 0.4:
            self.inputs.append(Buf("m", (0, 0), [0] * 4, 1, "mask"))
        self.bufs = list(self.inputs)
        self.build()
        clauses = []
        if r.random() < 0.6:
            clauses.append(r.choice([
                "tile(auto)", "tile(1, 8)", "tile(1, 4)", "tile(2, 8)",
                "tile(1, 16)", "tile(2, 2)", "tile(4, 4)", "tile(1, 3)",
                "tile(1, 6, 8)", "tile(2, 5)", "tile(1, 1)", "tile(8, 2)"]))
        if r.random() < 0.4:
            clauses.append(r.choice([
                "hybrid(auto)", "hybrid(0)", "hybrid(0.5)", "hybrid(1)",
                "hybrid(0.5, y)", "hybrid(1, y)", "hybrid(auto, y)",
                "hybrid(0.25)", "hybrid(1, x)"]))
        self.clauses = clauses
        self.spell_constants()
        # How the launches spell the levels' sizes: the locals W1, H1; a
        # struct's members (lv.W1), which the launcher must name as a
        # parameter of its own; or locals named as the fused kernel's own
        # variables (x, c, r, y, i, j), which its parameters must not hide.
        self.dim_style = r.choices(["plain", "members", "clash"], [6, 2, 2])[0]

    def spell_constants(self):
        """The texts of the spelled constants (`self.text`: key -> name;
        `self.weight_names`: (stage, term) -> name), drawn from the
        spelling's own stream only."""
        sp, self.text, self.weight_names = self.spell, {}, {}
        if not sp.on:
            return
        r, T = sp.rng, self.ctype
        W, H = self.size
        # The generator's range of sizes: margins fit at every level.
        self.text["W"] = sp("W", str(W), [str(r.randint(35, 700))
                                          for _ in range(2)])
        self.text["H"] = sp("H", str(H), [str(r.randint(20, 260))
                                          for _ in range(2)])
        if r.random() < 0.6:
            bx, by = block_others(self.block, [[16, 32, 64, 128],
                                               [2, 4, 8]])
            self.text["BX"] = sp("BX", str(self.block[0]), bx)
            self.text["BY"] = sp("BY", str(self.block[1]), by)
        terms = [(i, k, w) for i, st in enumerate(self.stages)
                 if st.weights in ("literal", "gain")
                 for k, (w, _) in enumerate(st.terms) if w != "curve"]
        for i, k, w in r.sample(terms, min(len(terms), r.randint(0, 3))):
            st = self.stages[i]
            if T != "unsigned" and w < 0 and st.weights == "literal":
                w = -w  # the term subtracts the weight's magnitude
            self.weight_names[(st.name, k)] = sp(
                f"w{i + 1}_{k}", self.literal(w),
                [self.literal(spelled_weight(r, T)) for _ in range(2)],
                ctype=T)

    # ---- values ---------------------------------------------------------

    def weight(self):
        if self.ctype == "unsigned":
            return self.rng.choice([1, 1, 2, 3, 5, 7, 0xFFFFFFFF])
        return self.rng.choice([-1, 1]) * self.rng.randint(1, 63) / 64.0

    def literal(self, w):
        if self.ctype == "unsigned":
            return "0xFFFFFFFFu" if w == 0xFFFFFFFF else f"{w}u"
        return c_float(w, self.ctype)

    def ref_literal(self, w):
        if self.ctype == "unsigned":
            return "0xFFFFFFFFu" if w == 0xFFFFFFFF else f"{w}u"
        return f"difftest::Approx({repr(float(w))})"

    # ---- the stage graph -------------------------------------------------

    def new_buf(self, level, margins, planes):
        self.counter += 1
        b = Buf(f"t{self.counter}", level, margins, planes, "dead")
        self.bufs.append(b)
        return b

    def pick_source(self, want=None):
        """A buffer to read: mostly the latest one (a chain), else any (a
        DAG); `want` filters."""
        cands = [b for b in self.bufs if b.role != "mask" and
                 (want is None or want(b))]
        if not cands:
            return None
        produced = [b for b in cands if b.role != "input"]
        if produced and self.rng.random() < 0.6:
            return produced[-1]
        unread = [b for b in produced if not b.readers]
        if unread and self.rng.random() < 0.6:
            return self.rng.choice(unread)
        return self.rng.choice(cands)

    def build(self):
        r = self.rng
        n = r.randint(2, 8)
        refusal_at = r.randrange(n) if self.refusal else -1
        for s in range(n):
            kinds = ["pointwise", "stencil", "stencil"]
            if any(b.full() and b.level[0] < 2 for b in self.bufs
                   if b.role != "mask"):
                kinds += ["downx", "downy"]
            if any(b.full() and (b.level[0] > 0 or b.level[1] > 0)
                   for b in self.bufs if b.role != "mask"):
                kinds += ["upx", "upy", "upx", "upy"]
            kind = r.choice(kinds)
            if s == n - 1 and s > 1 and r.random() < 0.7:
                kind = "join"
            refusal = self.refusal if s == refusal_at else None
            if refusal == "rowsum":
                kind = "rowsum"
            elif refusal == "ternary":
                kind = "stencil"
            elif refusal == "pointer":
                kind = "pointwise"
            stage = self.make_stage(kind, refusal)
            self.stages.append(stage)
        last = self.stages[-1].out
        last.role, last.name = "out", "out"
        for b in self.bufs:
            if b.role == "dead" and (b.readers == 0 or r.random() < 0.25):
                b.role = "live"
        if self.shared_alloc and sum(b.role in ("live", "out")
                                     for b in self.bufs) < 2:
            self.shared_alloc = False

    def make_stage(self, kind, refusal):
        r = self.rng
        name = f"{self.name}_s{len(self.stages) + 1}"
        if kind.startswith(("down", "up")):
            axis = 0 if kind.endswith("x") else 1
            if kind.startswith("down"):
                src = self.pick_source(
                    lambda b: b.full() and b.level[axis] < 2)
                if src is None:
                    return self.make_stage("stencil", refusal)
                level = list(src.level)
                level[axis] += 1
            else:
                src = self.pick_source(
                    lambda b: b.full() and b.level[axis] > 0)
                if src is None:
                    return self.make_stage("stencil", refusal)
                level = list(src.level)
                level[axis] -= 1
            out = self.new_buf(tuple(level), [0, 0, 0, 0], src.planes)
            st = Stage(name, kind, out)
            st.scaled_param = "inW" if axis == 0 else "inH"
            p = st.param_of(src)
            src.readers += 1
            taps = ([-2, -1, 0, 1, 2] if kind.startswith("down")
                    else list(range(4)))
            taps = sorted(r.sample(taps, r.randint(2, len(taps))))
            form = "down" if kind.startswith("down") else "up"
            for k in taps:
                a = (form, k)
                other = ("off", 0, False)
                ax, ay = (a, other) if axis == 0 else (other, a)
                st.terms.append((self.weight(), [Read(p, src, ax, ay)]))
            st.guard = r.choice(["return", "return", "if"])
            st.refusal = refusal
            return st

        if kind == "rowsum":
            src = self.pick_source(lambda b: b.full())
            if src is None:
                src = self.inputs[0]
            out = self.new_buf(src.level, [0, 0, 0, 0], src.planes)
            st = Stage(name, kind, out)
            st.param_of(src)
            src.readers += 1
            st.refusal = "rowsum"
            return st

        if kind == "join":
            # The last stage reads what nothing read yet (at one level).
            unread = [b for b in self.bufs if b.role == "dead" and
                      not b.readers]
            src = unread[-1] if unread else self.pick_source()
            kind = "pointwise"
        else:
            src = self.pick_source()
        level = src.level
        st = Stage(name, kind, None)
        st.refusal = refusal
        reads = []  # (buf, dx, dy, cx, cy)
        if kind == "pointwise":
            srcs = [src]
            same = [b for b in self.bufs if b.level == level and b is not src
                    and (b.role != "mask" or level == (0, 0))]
            unread = [b for b in same if b.role == "dead" and not b.readers]
            for b in r.sample(same, min(len(same), r.randint(0, 2))):
                srcs.append(b)
            for b in unread[:2]:
                if b not in srcs and r.random() < 0.7:
                    srcs.append(b)
            for b in srcs:
                reads.append((b, 0, 0, False, False))
            planes = self.channels if any(b.planes > 1 for b in srcs) else 1
        else:
            shape = r.choice(["row", "column", "cross", "box", "subset"])
            rad = r.choice([1, 1, 2])
            box = [(dx, dy) for dy in range(-rad, rad + 1)
                   for dx in range(-rad, rad + 1)]
            if shape == "row":
                taps = [(dx, 0) for dx in range(-rad, rad + 1)]
            elif shape == "column":
                taps = [(0, dy) for dy in range(-rad, rad + 1)]
            elif shape == "cross":
                taps = [t for t in box if t[0] == 0 or t[1] == 0]
            elif shape == "box":
                taps = [t for t in box if abs(t[0]) <= 1 and abs(t[1]) <= 1]
            else:
                taps = r.sample(box, r.randint(2, min(6, len(box))))
            if r.random() < 0.2:  # one-sided: x .. x + n
                taps = [(dx + rad, dy) for dx, dy in taps]
            cx = r.random() < 0.55
            cy = r.random() < 0.55
            if refusal == "ternary":
                cx = cy = True
            for dx, dy in sorted(set(taps)):
                reads.append((src, dx, dy, cx, cy))
            if r.random() < 0.25:  # a second input at the own point
                others = [b for b in self.bufs if b.level == level and
                          b is not src and b.role != "mask"]
                if others:
                    reads.append((r.choice(others), 0, 0, False, False))
            planes = src.planes
        # The points written: inside what every unclamped read reaches.
        m = [0, 0, 0, 0]
        for b, dx, dy, cx, cy in reads:
            if not cx:
                m[0] = max(m[0], b.margins[0] - dx)
                m[1] = max(m[1], b.margins[1] + dx)
            if not cy:
                m[2] = max(m[2], b.margins[2] - dy)
                m[3] = max(m[3], b.margins[3] + dy)
        if r.random() < 0.5:
            # Along a clamped axis, write where the clamp keeps reads of the
            # source (then they are clamped around the reading point).
            for b, dx, dy, cx, cy in reads[:1]:
                for a, clamped in ((0, cx), (1, cy)):
                    if clamped:
                        for k in (2 * a, 2 * a + 1):
                            m[k] = max(m[k], b.margins[k])
        if r.random() < 0.15:
            m[r.randrange(4)] += r.randint(1, 2)
        if m[0] + m[1] > 10 or m[2] + m[3] > 8:
            # Too narrow: read clamped instead.
            reads = [(b, dx, dy, True, True) for b, dx, dy, _, _ in reads]
            m = [0, 0, 0, 0]
        out = self.new_buf(level, m, planes)
        st.out = out
        st.margins = m
        for b, dx, dy, cx, cy in reads:
            p = st.param_of(b)
            b.readers += 1
            rd = Read(p, b, ("off", dx, cx), ("off", dy, cy))
            if kind == "pointwise" and len(st.terms) >= 1 and \
                    r.random() < 0.3:
                w, rs = st.terms[-1]
                if len(rs) == 1:
                    st.terms[-1] = (w, rs + [rd])  # a product
                    continue
            st.terms.append((self.weight(), [rd]))
        if kind == "pointwise" and r.random() < 0.15 and \
                self.inputs[0].level == level and \
                self.inputs[0].planes == planes and self.curve is None:
            self.curve = [self.weight() for _ in range(16)]
            p = st.param_of(self.inputs[0])
            self.inputs[0].readers += 1
            st.terms.append(("curve", Read(p, self.inputs[0],
                                           ("off", 0, False),
                                           ("off", 0, False))))
        st.guard = r.choice(["return", "return", "if"])
        st.ivar = r.random() < 0.3
        st.weights = r.choices(["literal", "table", "gain"], [6, 2, 1])[0]
        if st.weights == "gain" and self.channels == 1:
            st.weights = "literal"
        if st.weights == "table":
            st.table = f"{st.name}_w"
            st.table_values = [w for w, _ in st.terms if w != "curve"]
        if refusal == "pointer":
            st.row_weight = self.weight()
        return st

    # ---- text --------------------------------------------------------------

    def dims(self, st, buf, axis):
        """The kernel's name for \p buf's extent along \p axis."""
        if buf.level[axis] != st.out.level[axis]:
            return "inW" if axis == 0 else "inH"
        return "W" if axis == 0 else "H"

    def coord(self, st, rd, axis):
        v = "xy"[axis]
        a = rd.axes[axis]
        ext = self.dims(st, rd.buf, axis)
        if a[0] == "off":
            _, k, clamped = a
            text = plus(v, k)
            if clamped:
                lo = rd.buf.margins[2 * axis]
                hi = f"{ext} - {1 + rd.buf.margins[2 * axis + 1]}"
                if st.refusal == "ternary":
                    text = (f"({text} < {lo} ? {lo} : {text} > {hi} ? {hi} : "
                            f"{text})")
                else:
                    text = f"{self.name}_clamp({text}, {lo}, {hi})"
            return text, clamped
        if a[0] == "down":
            text = plus(f"2 * {v}", a[1])
        else:
            text = UP_FORMS[a[1]].format(v=v)
        return f"{self.name}_clamp({text}, 0, {ext} - 1)", True

    def index(self, st, rd):
        (xt, cx), (yt, cy) = self.coord(st, rd, 0), self.coord(st, rd, 1)
        W, H = self.dims(st, rd.buf, 0), self.dims(st, rd.buf, 1)
        if self.uses_i(st, rd):
            dx, dy = rd.axes[0][1], rd.axes[1][1]
            text = "i"
            if dy:
                text += (" + W" if dy == 1 else " - W" if dy == -1 else
                         f" + {dy} * W" if dy > 0 else f" - {-dy} * W")
            return plus(text, dx)
        if rd.buf.planes > 1:
            return f"(c * {H} + {yt}) * {W} + {xt}"
        if yt != "y" and not yt.startswith((self.name, "(")):
            yt = f"({yt})"
        return f"{yt} * {W} + {xt}"

    def uses_i(self, st, rd):
        """Whether the read is written `i + k` (the stage's `ivar` style)."""
        (ax, ay) = rd.axes
        return (st.ivar and ax[0] == "off" and ay[0] == "off" and
                not ax[2] and not ay[2] and rd.buf.planes == st.out.planes and
                rd.buf.level == st.out.level)

    def out_index(self, st):
        if st.out.planes > 1:
            return "(c * H + y) * W + x"
        return "y * W + x"

    def skip_condition(self, st):
        lx, hx, ly, hy = st.margins
        conds = []
        if lx:
            conds.append(f"x < {lx}")
        conds.append(f"x >= {plus('W', -hx)}")
        if ly:
            conds.append(f"y < {ly}")
        conds.append(f"y >= {plus('H', -hy)}")
        if st.refusal == "oddguard":
            conds.append("W < 0")
        return conds

    def keep_condition(self, st):
        lx, hx, ly, hy = st.margins
        conds = []
        if lx:
            conds.append(f"x >= {lx}")
        conds.append(f"x < {plus('W', -hx)}")
        if ly:
            conds.append(f"y >= {ly}")
        conds.append(f"y < {plus('H', -hy)}")
        if st.refusal == "oddguard":
            conds.append("W >= 0")
        return conds

    def reads(self, st):
        for w, rs in st.terms:
            yield from ([rs] if w == "curve" else rs)

    def load(self, st, rd, host):
        base = f"r_{rd.buf.name}" if host else rd.param
        return f"{base}[{self.index(st, rd)}]"

    def expr(self, st, host):
        """The stage's value: device text, or (host) the reference's, the
        same operations in the same order."""
        T = self.ctype
        approx = host and T != "unsigned"
        text = ""
        for k, (w, rs) in enumerate(st.terms):
            if w == "curve":
                if T == "unsigned":
                    sel = f"{self.load(st, rs, host)} & 15u"
                else:
                    v = self.load(st, rs, host) + (".V" if host else "")
                    sel = (f"{self.name}_clamp(int({v} * {c_float(8.0, T)}) "
                           "+ 8, 0, 15)")
                term = (f"curve[{sel}]" if host else
                        f"{self.name}_curve[{sel}]")
                if approx:
                    term = f"difftest::Approx({term})"
                text += f" + {term}" if text else term
                continue
            sign, wv = "+", w
            if T != "unsigned" and w < 0 and st.weights == "literal":
                sign, wv = "-", -w
            if st.weights == "table":
                wt = (f"{st.table}_host[{k}]" if host else f"{st.table}[{k}]")
                if approx:
                    wt = f"difftest::Approx({wt})"
            elif st.weights == "gain":
                g = "gain[c]" if host else f"{self.name}_gain[c]"
                named = self.weight_names.get((st.name, k))
                wt = f"({named or self.literal(wv)} * {g})"
                if approx:
                    wt = f"difftest::Approx{wt}"
            else:
                wt = self.ref_literal(wv) if host else self.literal(wv)
                name = self.weight_names.get((st.name, k))
                if name:
                    wt = f"difftest::Approx({name})" if approx else name
            if st.refusal == "template":
                wt += " * " + (self.ref_literal(2) if host else "K")
            term = " * ".join([wt] + [self.load(st, rd, host) for rd in rs])
            if not text:
                if sign == "-":
                    text = (f"difftest::Approx(0.0) - {term}" if approx else
                            f"-{term}")
                else:
                    text = term
            else:
                text += f" {sign} {term}"
        return text

    def kernel(self, st):
        T = self.ctype
        lines = []
        params = []
        for p, b in st.inputs:
            params.append(f"const {T} *__restrict__ {p}")
        params.append(f"{T} *__restrict__ out")
        params += ["int W", "int H"]
        if st.scaled_param:
            params.append(f"int {st.scaled_param}")
        if st.weights == "table":
            lines.append(f"__constant__ {T} {st.table}"
                         f"[{len(st.table_values)}];")
        ns = st.refusal == "namespace"
        if ns:
            lines.append(f"namespace {st.name}_ns {{")
        if st.refusal == "template":
            lines.append("template <int K>")
        head = f"__global__ void {st.name}({', '.join(params)}) {{"
        if len(head) > 80:
            rows, cur = [], f"__global__ void {st.name}("
            for k, q in enumerate(params):
                q += ") {" if k == len(params) - 1 else ","
                if len(cur) + len(q) + 1 > 80 and not cur.endswith("("):
                    rows.append(cur)
                    cur = "    " + q
                else:
                    cur += ("" if cur.endswith("(") else " ") + q
            head = "\n".join(rows + [cur])
        lines.append(head)
        lines += ["  int x = blockIdx.x * blockDim.x + threadIdx.x;",
                  "  int y = blockIdx.y * blockDim.y + threadIdx.y;"]
        if st.out.planes > 1:
            lines.append("  int c = blockIdx.z;")
        body = "  "
        if st.guard == "if":
            lines.append(f"  if ({' && '.join(self.keep_condition(st))}) {{")
            body = "    "
        else:
            lines += [f"  if ({' || '.join(self.skip_condition(st))})",
                      "    return;"]
        for stmt in self.body(st, host=False):
            lines += wrap(body, stmt)
        if st.guard == "if":
            lines.append("  }")
        lines.append("}")
        if ns:
            lines.append(f"}} // namespace {st.name}_ns")
        return "\n".join(lines)

    def body(self, st, host):
        """The statements after the guard (kernel or reference)."""
        T = self.ctype
        dst = (f"r_{st.out.name}[{self.out_index(st)}]" if host
               else f"out[{self.out_index(st)}]")
        if st.kind == "rowsum":
            (p, b), = st.inputs
            src = f"r_{b.name}" if host else p
            row = "(c * H + y) * W" if b.planes > 1 else "y * W"
            acc = ("difftest::Approx s(0.0);" if host and T != "unsigned"
                   else f"{T} s = 0;")
            return [acc, "for (int k = 0; k < W; ++k)",
                    f"  s += {src}[{row} + k];", f"{dst} = s;"]
        stmts = []
        if any(self.uses_i(st, rd) for rd in self.reads(st)):
            stmts.append(f"const int i = {self.out_index(st)};")
        value = self.expr(st, host)
        if st.refusal == "pointer":
            # A pointer local: the pass cannot follow it.
            (p, b) = st.inputs[0]
            row = "(c * H + y) * W" if b.planes > 1 else "y * W"
            w, sign = st.row_weight, "+"
            if T != "unsigned" and w < 0:
                w, sign = -w, "-"
            if host:
                value += (f" {sign} {self.ref_literal(w)} * "
                          f"r_{b.name}[{row} + x]")
            else:
                stmts.append(f"const {T} *row = {p} + {row};")
                value += f" {sign} {self.literal(w)} * row[x]"
        stmts.append(f"{dst} = {value};")
        return stmts

    # ---- host ------------------------------------------------------------

    def level_dims(self, level):
        return f"W{level[0]}", f"H{level[1]}"

    def count(self, buf):
        W, H = self.level_dims(buf.level)
        return f"{'C * ' if buf.planes > 1 else ''}{W} * {H}"

    CLASHING_DIMS = {"W": ["x", "c", "r"], "H": ["y", "i", "j"]}

    def size_arg(self, axis, level):
        """Level `level`'s size along `axis` ("W" or "H") as a launch
        argument (dim_style)."""
        if self.dim_style == "members":
            return f"lv.{axis}{level}"
        if self.dim_style == "clash":
            return self.CLASHING_DIMS[axis][level]
        return f"{axis}{level}"

    def size_aliases(self, levels_x, levels_y):
        """The declarations size_arg's spellings need."""
        names = [f"W{i}" for i in range(levels_x)] + \
                [f"H{i}" for i in range(levels_y)]
        if self.dim_style == "members":
            return [f"  const struct {{ int {', '.join(names)}; }} lv = "
                    f"{{{', '.join(names)}}};"]
        if self.dim_style == "clash":
            aliases = [self.size_arg(n[0], int(n[1:])) for n in names]
            return [f"  const int {', '.join(f'{a} = {n}' for a, n in zip(aliases, names))};",
                    "  " + " ".join(f"(void){a};" for a in aliases)]
        return []

    def launch_args(self, st):
        args = [b.name for _, b in st.inputs] + [st.out.name]
        args += [self.size_arg("W", st.out.level[0]),
                 self.size_arg("H", st.out.level[1])]
        if st.scaled_param == "inW":
            args.append(self.size_arg("W", st.inputs[0][1].level[0]))
        elif st.scaled_param == "inH":
            args.append(self.size_arg("H", st.inputs[0][1].level[1]))
        return args

    def launch_order(self):
        """A random order of the stages that keeps every read after its
        write (each buffer has one writer)."""
        r = self.rng
        done, order = set(b.name for b in self.inputs), []
        left = list(self.stages)
        while left:
            ready = [s for s in left if all(b.name in done
                                            for _, b in s.inputs)]
            s = ready[0] if r.random() < 0.6 else r.choice(ready)
            left.remove(s)
            order.append(s)
            done.add(s.out.name)
        return order

    def stage_function(self):
        n, T = self.name, self.ctype
        bx, by = self.block
        outs = [b for b in self.bufs if b.role in ("live", "out")]
        dead = [b for b in self.bufs if b.role == "dead"]
        params = [f"const {T} *{b.name}" for b in self.inputs]
        params += [f"{T} *{b.name}" for b in outs]
        params += ["int W", "int H"]
        names = ", ".join(b.name for b in outs)
        lines = [f"/// The stages, one launch each; {names} read by the host "
                 "after.",
                 f"static void {n}_stages({', '.join(params)}) {{"]
        levels = sorted({b.level for b in self.bufs})
        lx = sorted({l[0] for l in levels})
        ly = sorted({l[1] for l in levels})
        dims = []
        for i in range(max(lx) + 1):
            dims.append(f"W{i} = W" if i == 0 else
                        f"W{i} = (W{i - 1} + 1) / 2")
        for i in range(max(ly) + 1):
            dims.append(f"H{i} = H" if i == 0 else
                        f"H{i} = (H{i - 1} + 1) / 2")
        lines.append(f"  const int C = {self.channels};")
        lines.append(f"  const int {', '.join(dims)};")
        lines += self.size_aliases(max(lx) + 1, max(ly) + 1)
        BX, BY = self.text.get("BX", str(bx)), self.text.get("BY", str(by))
        lines.append(f"  const dim3 block({BX}, {BY});")
        used = sorted({s.out.level for s in self.stages})
        grids = {}
        for lv in used:
            W, H = self.level_dims(lv)
            g = f"grid{lv[0]}{lv[1]}"
            planes = "C"
            if self.grid_helper:
                grids[lv] = f"{n}_grid(block, {W}, {H}, {planes})"
            else:
                grids[lv] = g
                lines.append(f"  const dim3 {g}({self.blocks(W, 'BX', bx)}, "
                             f"{self.blocks(H, 'BY', by)}, {planes});")
        if dead:
            lines.append("  " + f"{T} " + ", ".join(f"*{b.name} = nullptr"
                                                 for b in dead) + ";")
            for b in dead:
                lines.append(f"  DIFFTEST_CUDA(cudaMalloc(&{b.name}, "
                             f"sizeof({T}) * {self.count(b)}));")
        pragma = " ".join(["#pragma cuda_rewrite fuse"] + self.clauses)
        lines += [pragma, "  {"]
        order = self.launch_order()
        statements_after = {}
        for at, kind in sorted(self.host_statements.items()):
            statements_after.setdefault(int(at * len(order)), []).append(kind)
        for k, st in enumerate(order):
            g = grids[st.out.level]
            # Stages whose output has one plane run one channel.
            if st.out.planes == 1 and self.channels > 1:
                W, H = self.level_dims(st.out.level)
                g = (f"{n}_grid(block, {W}, {H}, 1)" if self.grid_helper else
                     f"dim3({g}.x, {g}.y)")
            shared = ", 16" if st.refusal == "dynshared" else ""
            kname = st.name
            if st.refusal == "namespace":
                kname = f"{st.name}_ns::{st.name}"
            if st.refusal == "template":
                kname = f"{st.name}<2>"
            lines.append(f"    {kname}<<<{g}, block{shared}>>>("
                         f"{', '.join(self.launch_args(st))});")
            for kind in statements_after.get(k, []):
                lines += ["    " + line
                          for line in self.host_statement(kind, st)]
        lines.append("  }")
        for b in dead:
            lines.append(f"  DIFFTEST_CUDA(cudaFree({b.name}));")
        lines.append("}")
        return "\n".join(lines)

    def host_statement(self, kind, stage):
        """A host statement of `kind` after `stage`'s launch."""
        if kind == "check":
            return ["DIFFTEST_CUDA(cudaGetLastError());"]
        if kind == "sync":
            return ["DIFFTEST_CUDA(cudaDeviceSynchronize());"]
        if kind == "timer":
            return ["{",
                    "  cudaEvent_t mark;",
                    "  DIFFTEST_CUDA(cudaEventCreate(&mark));",
                    "  DIFFTEST_CUDA(cudaEventRecord(mark));",
                    "  DIFFTEST_CUDA(cudaEventSynchronize(mark));",
                    "  DIFFTEST_CUDA(cudaEventDestroy(mark));",
                    "}"]
        return [f"DIFFTEST_CUDA(cudaMemset({stage.out.name}, 0, 0));"]

    def blocks(self, size, key, threads):
        """Blocks along an axis of `size` points."""
        if key in self.text:
            return f"({size} + {self.text[key]} - 1) / {self.text[key]}"
        return f"({size} + {threads - 1}) / {threads}"

    def run_function(self):
        n, T = self.name, self.ctype
        W, H = (self.text.get(k, str(v)) for k, v in zip("WH", self.size))
        outs = [b for b in self.bufs if b.role in ("live", "out")]
        R = "unsigned" if T == "unsigned" else "difftest::Approx"
        lines = [f"static void run_{n}(difftest::Rng &rng, "
                 "difftest::Check &check) {",
                 f"  const int C = {self.channels}, W = {W}, H = {H};",
                 f"  const int W0 = W, W1 = (W0 + 1) / 2, W2 = (W1 + 1) / 2;",
                 f"  const int H0 = H, H1 = (H0 + 1) / 2, H2 = (H1 + 1) / 2;",
                 "  (void)C, (void)W2, (void)H2, (void)W1, (void)H1;"]
        for b in self.inputs:
            lines.append(f"  difftest::Buffer<{T}> {b.name}({self.count(b)});")
            lines.append(f"  rng.fill({b.name}.Host, " +
                         ("0, 4294967295.0" if T == "unsigned" else
                          "-1.0, 1.0") + ");")
            lines.append(f"  {b.name}.upload();")
        if self.shared_alloc:
            total = " + ".join(f"({self.count(b)})" for b in outs)
            lines.append(f"  // The outputs share one allocation: the fused "
                         "launch must fall back.")
            lines.append(f"  difftest::Buffer<{T}> outs({total});")
            lines.append("  outs.poison();")
            off = "0"
            for b in outs:
                lines.append(f"  const size_t {b.name}_at = {off};")
                off = f"{b.name}_at + {self.count(b)}"
        else:
            for b in outs:
                lines.append(f"  difftest::Buffer<{T}> {b.name}"
                             f"({self.count(b)});")
                lines.append(f"  {b.name}.poison();")
        # Tables.
        for st in self.stages:
            if st.weights == "table":
                vals = ", ".join(self.literal(w) for w in st.table_values)
                lines.append(f"  const {T} {st.table}_host"
                             f"[{len(st.table_values)}] = {{{vals}}};")
                lines.append(f"  DIFFTEST_CUDA(cudaMemcpyToSymbol({st.table}, "
                             f"{st.table}_host, sizeof({st.table}_host)));")
        if self.gain_used():
            vals = ", ".join(self.literal(self.gain_value(c))
                             for c in range(self.channels))
            lines.append(f"  const {T} gain[{self.channels}] = {{{vals}}};")
            lines.append(f"  DIFFTEST_CUDA(cudaMemcpyToSymbol({n}_gain, gain, "
                         "sizeof(gain)));")
        if self.curve:
            vals = ", ".join(self.literal(w) for w in self.curve)
            lines.append(f"  const {T} curve[16] = {{{vals}}};")
            lines.append(f"  DIFFTEST_CUDA(cudaMemcpyToSymbol({n}_curve, "
                         "curve, sizeof(curve)));")
        args = [f"{b.name}.data()" for b in self.inputs]
        if self.shared_alloc:
            args += [f"outs.data() + {b.name}_at" for b in outs]
        else:
            args += [f"{b.name}.data()" for b in outs]
        args += ["W", "H"]
        lines.append(f"  {n}_stages({', '.join(args)});")
        lines.append("  DIFFTEST_CUDA(cudaGetLastError());")
        # The reference.
        lines.append("  // The reference, stage by stage in launch order.")
        for b in self.inputs:
            lines.append(f"  std::vector<{R}> r_{b.name}("
                         f"{b.name}.Host.begin(), {b.name}.Host.end());")
        for st in self.stages:
            b = st.out
            lines.append(f"  std::vector<{R}> r_{b.name}({self.count(b)});")
            lines.append(f"  std::vector<bool> w_{b.name}({self.count(b)});")
        for st in self.stages:
            lines += self.reference(st)
        if self.shared_alloc:
            lines.append(f"  const std::vector<{T}> &got = outs.download();")
        for b in outs:
            if self.shared_alloc:
                lines.append(f"  std::vector<{T}> got_{b.name}(got.begin() + "
                             f"{b.name}_at, got.begin() + {b.name}_at + "
                             f"{self.count(b)});")
            else:
                lines.append(f"  const std::vector<{T}> &got_{b.name} = "
                             f"{b.name}.download();")
            fn = "expectExact" if T == "unsigned" else "expectNear"
            lines.append(f'  difftest::{fn}(check, "{b.name}", got_{b.name}, '
                         f"r_{b.name}, w_{b.name});")
        lines.append("}")
        return "\n".join(lines)

    def gain_used(self):
        return any(s.weights == "gain" for s in self.stages)

    def gain_value(self, c):
        if self.gain is None:
            self.gain = [self.weight() for _ in range(self.channels)]
        return self.gain[c]

    def reference(self, st):
        W, H = self.level_dims(st.out.level)
        dims = [f"W = {W}", f"H = {H}"]
        if st.scaled_param == "inW":
            dims.append(f"inW = W{st.inputs[0][1].level[0]}")
        elif st.scaled_param == "inH":
            dims.append(f"inH = H{st.inputs[0][1].level[1]}")
        planes = "C" if st.out.planes > 1 else "1"
        lines = [f"  {{ // {st.name}",
                 f"    const int {', '.join(dims)};",
                 f"    for (int c = 0; c < {planes}; ++c)",
                 "      for (int y = 0; y < H; ++y)",
                 "        for (int x = 0; x < W; ++x) {",
                 f"          if ({' || '.join(self.skip_condition(st))})",
                 "            continue;"]
        for stmt in self.body(st, host=True):
            lines += wrap("          ", stmt)
        lines.append(f"          w_{st.out.name}[{self.out_index(st)}] = "
                     "true;")
        lines += ["        }", "  }"]
        return lines

    def code(self):
        n, T = self.name, self.ctype
        parts = [f"__host__ __device__ inline int {n}_clamp(int v, int lo, "
                 "int hi) {\n  return v < lo ? lo : v > hi ? hi : v;\n}"]
        if self.gain_used():
            parts.append(f"__constant__ {T} {n}_gain[{self.channels}];")
        if self.curve:
            parts.append(f"__constant__ {T} {n}_curve[16];")
        if self.grid_helper:
            bx, by = self.block
            parts.append(f"static dim3 {n}_grid(dim3 block, int w, int h, "
                         "int planes) {\n"
                         "  return dim3((w + block.x - 1) / block.x, "
                         "(h + block.y - 1) / block.y, planes);\n}")
        for st in self.stages:
            parts.append(self.kernel(st))
        parts.append(self.stage_function())
        parts.append(self.run_function())
        return "\n\n".join(parts)


# Host statements between launches: three the fused launch may follow, one
# that names a stage's output.
HOST_STATEMENTS = ["check", "sync", "timer", "touch"]


def spelled_weight(rng, ctype):
    """Another weight of the kind the generator draws (exact in floating
    point)."""
    if ctype == "unsigned":
        return rng.choice([1, 2, 3, 5, 7, 0xFFFFFFFF])
    return rng.choice([-1, 1]) * rng.randint(1, 63) / 64.0


def generate(rng: random.Random, name: str,
             spell: Spelling = None) -> Program:
    p = FuseProgram(rng, name, spell)
    code = p.spell.apply(p.code())
    kinds = [s.kind for s in p.stages]
    live = sum(b.role == "live" for b in p.bufs)
    traits = {"type": p.ctype, "channels": str(p.channels),
              "stages": str(len(p.stages)), "kinds": " ".join(kinds),
              "live": str(live),
              "size": f"{p.size[0]}x{p.size[1]}",
              "block": f"{p.block[0]}x{p.block[1]}",
              "clauses": " ".join(p.clauses) or "-"}
    if p.refusal:
        traits["refusal"] = p.refusal
    if p.shared_alloc:
        traits["refusal"] = traits.get("refusal", "") + " shared-allocation"
    if "touch" in p.host_statements.values():
        traits["refusal"] = traits.get("refusal", "") + " host-statement"
    if p.host_statements:
        traits["host-statements"] = " ".join(
            kind for _, kind in sorted(p.host_statements.items()))
    traits["refusal"] = traits.get("refusal", "").strip()
    if not traits["refusal"]:
        del traits["refusal"]
    if p.spell.on:
        traits["spelled"] = p.spell.style
    return Program(name, code, traits, p.spell.knobs)
