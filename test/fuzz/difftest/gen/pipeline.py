"""Stage graphs for the pipeline pass (VersaPipe): `#pragma cuda_rewrite
stage [threads(n)]` functions that hand items on to later stages, to
themselves (recursion, bounded by a depth in the item) and to earlier ones
(loops, bounded by an iteration count), under data-dependent conditions and
in fan-out loops; stages of one thread, of n threads without warp
intrinsics (called by n threads together or by one thread in a loop over the
ranks) and of a warp with shuffles; an entry kernel seeding one or two
stages per item; outputs reached through file-scope pointers, file-scope
arrays or pointers in the item. Every output is order-independent: integer
atomics (add, xor, max) into poisoned memory and one slot per entry item.
The host reference runs the same graph sequentially. A rewritten binary is
run under every execution model (CUDA_REWRITE_PIPELINE_MODEL), with small
queues, with online adaptation and green contexts, and as the pragma and
the program's own hybrid configuration (CUDA_REWRITE_PIPELINE_CONFIG, which
some programs write and set for their launch) choose. Some programs carry a
form the pass must refuse (a stage reading blockDim, a helper calling a
stage, an item by reference, a stage call in a macro); they still check.

Spelled programs (common.Spelling) name the entry items, the entry block,
and some stage salts, condition moduli, recursion and loop limits, fans
and histogram buckets, as macros with defaults. A -D may give fewer entry
items, lower limits and fans (the queue and stack bounds hold), another
block that fits the first stage's width, other salts, moduli and buckets."""

import random

from .common import Program, Spelling, Variant, fewer

PASS = "pipeline"


def _model(name, **extra):
    env = {"CUDA_REWRITE_PIPELINE_MODEL": name}
    env.update({f"CUDA_REWRITE_PIPELINE_{k.upper()}": v
                for k, v in extra.items()})
    return env


VARIANTS = [
    Variant("rewrite", runs={
        "": {},  # the pragma's model, or the program's hybrid configuration
        "rtc": _model("rtc"),
        "kbk": _model("kbk"),
        "megakernel": _model("megakernel"),
        "coarse": _model("coarse"),
        "fine": _model("fine"),
        "small": _model("megakernel", capacity="65536"),
        "adapt": _model("fine", adapt="1"),
        "green": _model("coarse", green="1"),
    }),
]

# Forms the pass refuses (PipelinePlan.cpp); the program still checks.
REFUSALS = ["blockdim", "helper", "reference", "macro"]

# Upper bounds, over every condition taken: items per run (the queues hold
# 65536 in the 'small' run) and stage frames of the RTC call chain.
MAX_ITEMS = 60000
MAX_FRAMES = 40

HIST = 32  # histogram buckets per stage


class Edge:
    """A call from one stage to another: 'fwd' (a later stage), 'rec'
    (itself, depth + 1 below `limit`), 'back' (an earlier stage or itself,
    iteration + 1 below `limit`, depth reset)."""

    def __init__(self, kind, target, limit=0, fan=1, cond=None, salt=0,
                 mode="group"):
        self.kind, self.target, self.limit = kind, target, limit
        self.fan, self.cond, self.salt, self.mode = fan, cond, salt, mode


class Stage:
    def __init__(self, index, width, shuffle):
        self.index, self.width, self.shuffle = index, width, shuffle
        self.edges = []
        self.salt = 0
        self.sum_op = "add"
        self.packed = False  # takes its item packed into a 64-bit integer


class PipelineProgram:
    def __init__(self, rng, name):
        self.rng, self.name = rng, name
        r = rng
        self.refusal = r.choice(REFUSALS) if r.random() < 0.1 else None
        self.reach = r.choice(["symbol", "array", "item"])
        self.reps = r.choice([1, 1, 2])
        self.clauses = r.choice([
            [], [], [], ["model(auto)"], ["model(kbk)"], ["model(megakernel)"],
            ["model(coarse)"], ["model(fine)"], ["model(rtc)"],
            [f'config("{name}-missing.cfg")'],
            ["model(fine)", f'config("{name}-missing.cfg")']])
        for _ in range(50):
            self.build()
            if self.bounds_ok():
                break
        else:  # a plain chain always fits
            self.build(plain=True)
            assert self.bounds_ok()
        self.choose_refusal()
        self.hybrid = None
        if len(self.stages) > 1 and not self.refusal and r.random() < 0.4:
            self.hybrid = self.hybrid_groups()
        self.spell, self.text = Spelling(name), {}

    def spell_constants(self, spell):
        """Spells the program's constants (common.Spelling): `self.text`
        maps a key (kBlock, kBuckets, salt<s>, q<s>_<e>, limit<s>_<e>,
        fan<s>_<e>) to its name. Draws from the spelling's stream only."""
        self.spell = spell
        if not spell.on:
            return
        r, t = spell.rng, self.text
        spell("kRoots", str(self.roots), fewer(r, self.roots))
        threads = self.entry_threads()
        t["kBlock"] = spell("kBlock", str(self.block), [
            b for b in (64, 128, 256, 512) if b % threads == 0])
        if r.random() < 0.5:
            t["kBuckets"] = spell("kBuckets", str(HIST), [8, 16, 64])
        for st in self.stages:
            if r.random() < 0.3:
                t[f"salt{st.index}"] = spell(
                    f"salt{st.index}", f"{st.salt}u",
                    [f"{r.getrandbits(32)}u" for _ in range(2)],
                    ctype="unsigned")
            for k, e in enumerate(st.edges):
                key = f"{st.index}_{k}"
                if e.cond and r.random() < 0.4:
                    t["q" + key] = spell("q" + key, str(e.cond[1]),
                                         [2, 3, 4, 5])
                if e.kind in ("rec", "back") and r.random() < 0.4:
                    t["limit" + key] = spell("limit" + key, str(e.limit),
                                             fewer(r, e.limit))
                if e.fan > 1 and r.random() < 0.4:
                    t["fan" + key] = spell("fan" + key, str(e.fan),
                                           fewer(r, e.fan))

    def edge_text(self, st, e, what, value):
        """An edge's constant (q, limit, fan): its name if spelled."""
        key = f"{what}{st.index}_{st.edges.index(e)}"
        return self.text.get(key, str(value))

    def buckets(self):
        return self.text.get("kBuckets", str(HIST))

    # ---- the graph ---------------------------------------------------------

    def build(self, plain=False):
        r = self.rng
        n = 1 if plain else r.choices(range(1, 7), [1, 3, 3, 3, 2, 1])[0]
        self.stages = []
        for i in range(n):
            kind = r.choices(["one", "group", "warp"], [6, 2, 2])[0]
            if plain:
                kind = "one"
            if kind == "one":
                st = Stage(i, 1, False)
            elif kind == "warp":
                st = Stage(i, 32, True)
            else:
                st = Stage(i, r.choice([2, 4, 8, 16, 32, 64, 128, 256]), False)
            st.salt = r.getrandbits(32)
            st.sum_op = r.choice(["add", "add", "xor"])
            st.packed = self.reach != "item" and r.random() < 0.25
            self.stages.append(st)
        # Forward edges: every stage after the first is reached (a stage no
        # earlier one can call runs one thread).
        for j in range(1, n):
            dst = self.stages[j]
            srcs = [s for s in self.stages[:j] if self.callable(s, dst)]
            if not srcs:
                dst.width, dst.shuffle = 1, False
                srcs = [s for s in self.stages[:j] if self.callable(s, dst)]
            i = srcs[-1] if r.random() < 0.65 else r.choice(srcs)
            self.add_edge(i, "fwd", j)
            if r.random() < 0.3 and j + 1 < n:
                self.add_edge(self.stages[j - 1], "fwd",
                              r.randrange(j, n))
        if not plain:
            if r.random() < 0.6:  # recursion
                s = r.choice(self.stages)
                self.add_edge(s, "rec", s.index, limit=r.randint(1, 6),
                              fan=r.choice([1, 2, 2, 3]))
            if r.random() < 0.5:  # a loop back
                j = r.randrange(n)
                i = r.randrange(j + 1)
                self.add_edge(self.stages[j], "back", i,
                              limit=r.randint(1, 5))
        self.entry_width = self.stages[0].width
        self.entry_rank_loop = (self.stages[0].width > 1 and
                                not self.stages[0].shuffle and
                                r.random() < 0.4)
        self.second_seed = None
        seeds = [s for s in self.stages[1:] if s.width == 1]
        if seeds and r.random() < 0.3:
            self.second_seed = r.choice(seeds).index
        self.serial_ranks()
        self.block = r.choice([64, 128, 256])
        if self.entry_width > 1 and not self.entry_rank_loop:
            self.block = max(self.block, self.entry_width)
        self.roots = r.randint(16, 3000)

    def serial_ranks(self):
        """Stages one thread may run rank by rank (a rank loop, and the
        group calls such a stage makes) never shuffle: in the original, a
        shuffle needs the warp's 32 threads at once."""
        serial = {0} if self.entry_rank_loop else set()
        for s in self.stages:
            for e in s.edges:
                if e.mode == "loop":
                    serial.add(e.target)
        grew = True
        while grew:
            grew = False
            for i in list(serial):
                for e in self.stages[i].edges:
                    if e.mode == "group" and self.stages[e.target].width > 1 \
                            and e.target not in serial:
                        serial.add(e.target)
                        grew = True
        for i in serial:
            self.stages[i].shuffle = False

    @staticmethod
    def callable(src, dst):
        """Whether src may call dst: n threads call a threads(n) stage
        together, one thread calls any stage without shuffles (in a loop over
        its ranks), and any calls a one-thread stage."""
        if dst.width == 1 or src.width == dst.width:
            return True
        return src.width == 1 and not dst.shuffle

    def add_edge(self, src, kind, target, limit=0, fan=1):
        """An edge if the widths allow a call (else none)."""
        r = self.rng
        dst = self.stages[target]
        mode = "group"
        if src.width == 1 and dst.width > 1:
            if dst.shuffle:
                return  # a rank loop cannot run a warp's shuffles
            mode = "loop"
        elif src.width > 1 and dst.width == 1:
            mode = r.choice(["rank0", "rank0", "all"])
        elif src.width != dst.width:
            return
        if kind == "fwd" and r.random() < 0.3:
            fan = r.choice([2, 3, 4])
        cond = None
        if r.random() < 0.7:
            cond = (r.randrange(0, 24), r.choice([2, 3, 4, 5]))
        src.edges.append(Edge(kind, target, limit, fan, cond,
                              r.getrandbits(32), mode))

    def calls_back(self, src, dst):
        """Whether stage dst reaches stage src again through calls."""
        seen, todo = set(), [dst]
        while todo:
            i = todo.pop()
            if i == src:
                return True
            if i not in seen:
                seen.add(i)
                todo += [e.target for e in self.stages[i].edges]
        return False

    def first_eligible(self):
        """Whether stage 0 gets exactly one item per entry item (then it
        writes the item's own slot)."""
        return all(e.target != 0 for s in self.stages for e in s.edges)

    def choose_refusal(self):
        """Where the refused form goes: the macro and the helper replace a
        call of a one-thread stage by a one-thread stage."""
        self.refused_edge = None
        if self.refusal == "reference":
            self.stages[-1].packed = False
        if self.refusal in ("macro", "helper"):
            for st in self.stages:
                for e in st.edges:
                    if st.width == 1 and self.stages[e.target].width == 1:
                        self.refused_edge = e
                        return
            self.refusal = "blockdim"

    def count(self, s, depth, it, memo):
        """Items (queue entries) and the deepest RTC call chain, over every
        condition taken, from one item of stage s."""
        key = (s, depth, it)
        if key in memo:
            return memo[key]
        items, frames = 1, 1
        st = self.stages[s]
        for e in st.edges:
            if e.kind == "rec":
                if depth >= e.limit:
                    continue
                nd, ni = depth + 1, it
            elif e.kind == "back":
                if it >= e.limit:
                    continue
                nd, ni = 0, it + 1
            else:
                nd, ni = depth, it
            mult = e.fan * (st.width if e.mode == "all" else 1)
            ci, cf = self.count(e.target, nd, ni, memo)
            items += mult * ci
            frames = max(frames, 1 + cf)
        memo[key] = (items, frames)
        return memo[key]

    def bounds_ok(self):
        memo = {}
        per, frames = self.count(0, 0, 0, memo)
        if self.second_seed is not None:
            p2, f2 = self.count(self.second_seed, 0, 0, memo)
            per += p2
            frames = max(frames, f2)
        if frames > MAX_FRAMES or per > MAX_ITEMS // 16:
            return False
        self.roots = max(16, min(self.roots, MAX_ITEMS // per))
        self.frames = frames + 1
        self.items_bound = per * self.roots
        return True

    def plan_order(self):
        """The stages in the order the pass numbers them: first call from
        the entry, then from each stage in that order (the hybrid
        configuration names ranges of them)."""
        order = [0]
        if self.second_seed is not None:
            order.append(self.second_seed)
        i = 0
        while i < len(order):
            for e in self.stages[order[i]].edges:
                if e.target not in order:
                    order.append(e.target)
            i += 1
        return order

    def hybrid_groups(self):
        r = self.rng
        order = self.plan_order()
        cuts = sorted(r.sample(range(1, len(order)),
                               r.randint(0, min(2, len(order) - 1))))
        groups, start = [], 0
        for c in cuts + [len(order)]:
            groups.append((order[start], order[c - 1], c - start,
                           r.choice(["megakernel", "coarse", "fine"])))
            start = c
        return {"groups": groups, "adapt": r.random() < 0.3,
                "green": r.random() < 0.3}

    # ---- text --------------------------------------------------------------

    def sname(self, i):
        return f"{self.name}_s{i}"

    def acc(self, host):
        if host:
            return "acc"
        return "it.acc" if self.reach == "item" else f"{self.name}_acc"

    def deepest(self, host):
        if host:
            return "deepest"
        return "it.deepest" if self.reach == "item" else \
            f"{self.name}_deepest"

    def item(self, depth, iteration, key):
        extra = ", it.acc, it.deepest" if self.reach == "item" else ""
        return f"{self.name}_Item{{it.id, {depth}, {iteration}, {key}{extra}}}"

    def cond_text(self, cond, q_text=None):
        sh, q = cond
        q = q_text or q
        base = "h" if sh == 0 else f"(h >> {sh})"
        return f"{base} % {q} != 0"

    def edge_lines(self, st, e, host):
        """The call(s) of edge e of stage st, device or host."""
        n = self.name
        guards = []
        if e.kind == "rec":
            guards.append(f"it.depth < "
                          f"{self.edge_text(st, e, 'limit', e.limit)}")
            depth, itn = "it.depth + 1", "it.iter"
        elif e.kind == "back":
            guards.append(f"it.iter < "
                          f"{self.edge_text(st, e, 'limit', e.limit)}")
            depth, itn = "0", "it.iter + 1"
        else:
            depth, itn = "it.depth", "it.iter"
        if e.cond:
            guards.append(self.cond_text(
                e.cond, self.edge_text(st, e, "q", e.cond[1])))
        key = f"h + {e.salt}u" + (" + k" if e.fan > 1 else "")
        rkey = f"{n}_mix({key} + unsigned(rank))"
        key = f"{n}_mix({key})"
        all_ranks = e.mode == "all"
        target = self.stages[e.target]
        body = []
        if host:
            call_name = f"{n}_ref_s{e.target}"
            if all_ranks:
                body = [f"for (int rank = 0; rank < {st.width}; ++rank)",
                        f"  {call_name}({self.item(depth, itn, rkey)}"
                        ", acc, deepest);"]
            else:
                body = [f"{call_name}({self.item(depth, itn, key)}, acc, "
                        "deepest);"]
        else:
            callee = self.sname(e.target)
            wrap = lambda item: self.arg(e.target, item)
            if e is self.refused_edge and self.refusal == "macro":
                callee = f"{n.upper()}_HAND_ON"
            elif e is self.refused_edge:
                callee, wrap = f"{n}_handOn", lambda item: item
            if e.mode == "loop":
                body = [f"const {n}_Item next = "
                        f"{self.item(depth, itn, key)};",
                        f"for (int r = 0; r < {target.width}; ++r)",
                        f"  {callee}({wrap('next')}, r);"]
                if not host and self.calls_back(st.index, e.target):
                    # cicc unrolls the rank loop and inlines the call cycle
                    # into every copy: seed 4's p349 (s2 calls s3 64 times,
                    # s3 calls s1, s1 calls s2) ran cicc past 15 minutes.
                    body.insert(1, "#pragma unroll 1")
            elif all_ranks:
                body = [f"{callee}({wrap(self.item(depth, itn, rkey))});"]
            elif target.width > 1:
                body = [f"{callee}({wrap(self.item(depth, itn, key))}, rank);"]
            elif st.width > 1:
                body = [f"if (rank == 0)",
                        f"  {callee}({wrap(self.item(depth, itn, key))});"]
            else:
                body = [f"{callee}({wrap(self.item(depth, itn, key))});"]
        if e.mode == "loop" and not host and e.fan <= 1 and not guards:
            # Its own scope: a stage may hand on two items this way.
            body = ["{"] + ["  " + b for b in body] + ["}"]
        if e.fan > 1:
            fan = self.edge_text(st, e, "fan", e.fan)
            body = [f"for (unsigned k = 0; k < {fan}; ++k) {{"] + \
                ["  " + b for b in body] + ["}"]
        if guards:
            if len(body) == 1:
                return [f"if ({' && '.join(guards)})", "  " + body[0]]
            return [f"if ({' && '.join(guards)}) {{"] + \
                ["  " + b for b in body] + ["}"]
        return body

    def records(self, st, host):
        """What an item of st leaves behind: its sum (every rank), histogram
        bucket, visit count, the deepest depth seen, and stage 0's slot."""
        n, A, D = self.name, self.acc(host), self.deepest(host)
        s, B = st.index, self.buckets()
        lines = []
        op = "+=" if st.sum_op == "add" else "^="
        atom = "atomicAdd" if st.sum_op == "add" else "atomicXor"
        if st.width == 1:
            lines.append(f"{A}[{s}] {op} h;" if host else
                         f"{atom}(&{A}[{s}], h);")
        elif st.shuffle:
            if host:
                lines += ["unsigned v = 0;",
                          "for (int rank = 0; rank < 32; ++rank)",
                          f"  v += {n}_mix(h + unsigned(rank));",
                          f"{A}[{s}] {op} v;"]
            else:
                lines += [f"unsigned v = {n}_mix(h + unsigned(rank));",
                          "for (int offset = 16; offset > 0; offset /= 2)",
                          "  v += __shfl_xor_sync(0xffffffffu, v, offset);",
                          "if (rank == 0)",
                          f"  {atom}(&{A}[{s}], v);"]
        else:
            if host:
                lines += [f"for (int rank = 0; rank < {st.width}; ++rank)",
                          f"  {A}[{s}] {op} {n}_mix(h + unsigned(rank));"]
            else:
                lines.append(f"{atom}(&{A}[{s}], "
                             f"{n}_mix(h + unsigned(rank)));")
        once = []
        if host:
            once += [f"{A}[{n}_kHist + {s} * {B} + h % {B}] += 1u;",
                     f"{A}[{n}_kVisits + it.id * {len(self.stages)} + {s}] "
                     "+= 1u;",
                     f"if (it.depth > {D}[it.id])",
                     f"  {D}[it.id] = it.depth;"]
            if s == 0 and self.first_eligible():
                once.append(f"{A}[{n}_kFirst + it.id] = h;")
        else:
            once += [f"atomicAdd(&{A}[{n}_kHist + {s} * {B} + h % {B}],"
                     " 1u);",
                     f"atomicAdd(&{A}[{n}_kVisits + it.id * "
                     f"{len(self.stages)} + {s}], 1u);",
                     f"atomicMax(&{D}[it.id], it.depth);"]
            if s == 0 and self.first_eligible():
                once.append(f"{A}[{n}_kFirst + it.id] = h;")
        if st.width > 1 and not host:
            lines.append("if (rank == 0) {")
            lines += ["  " + o for o in once]
            lines.append("}")
        else:
            lines += once
        return lines

    def param(self, st):
        """A stage's parameters (declaration and definition)."""
        n = self.name
        if st.packed:
            p = "unsigned long long packed"
        elif self.refusal == "reference" and st.index == len(self.stages) - 1:
            p = f"const {n}_Item &it"
        else:
            p = f"{n}_Item it"
        return p + (", int rank" if st.width > 1 else "")

    def arg(self, target, item):
        """The item argument of a call of stage `target`."""
        return (f"{self.name}_pack({item})" if self.stages[target].packed
                else item)

    def stage_text(self, st, host):
        n = self.name
        itype = f"{n}_Item"
        if host:
            head = (f"static void {n}_ref_s{st.index}({itype} it, "
                    "std::vector<unsigned> &acc, std::vector<int> &deepest) {")
            lines = [head]
        else:
            clause = f" threads({st.width})" if st.width > 1 else ""
            lines = [f"#pragma cuda_rewrite stage{clause}",
                     f"__device__ void {self.sname(st.index)}"
                     f"({self.param(st)}) {{"]
            if st.packed:
                lines.append(f"  const {itype} it = {n}_unpack(packed);")
        salt = self.text.get(f"salt{st.index}", f"{st.salt}u")
        lines.append(f"  const unsigned h = {n}_mix(it.key ^ {salt});")
        if not host and self.refusal == "blockdim" and \
                st.index == len(self.stages) - 1:
            lines += ["  if (blockDim.x == 0) // never; the pass refuses the "
                      "read", "    return;"]
        lines += ["  " + l for l in self.records(st, host)]
        for e in st.edges:
            lines += ["  " + l for l in self.edge_lines(st, e, host)]
        lines.append("}")
        return "\n".join(lines)

    def entry_text(self):
        n = self.name
        s0 = self.stages[0]
        params = [f"const unsigned *seeds", "int n"]
        extra = ""
        if self.reach == "item":
            params += ["unsigned *acc", "int *deepest"]
            extra = ", acc, deepest"
        lines = [f"__global__ void {n}_entry({', '.join(params)}) {{"]
        item = f"{n}_Item{{i, 0, 0, seeds[i]{extra}}}"
        if s0.width == 1 or self.entry_rank_loop:
            lines += ["  int i = blockIdx.x * blockDim.x + threadIdx.x;",
                      "  if (i >= n)", "    return;"]
            if s0.width == 1:
                lines.append(f"  {self.sname(0)}({self.arg(0, item)});")
            else:
                lines += [f"  const {n}_Item first = {item};",
                          f"  for (int r = 0; r < {s0.width}; ++r)",
                          f"    {self.sname(0)}({self.arg(0, 'first')}, r);"]
        else:
            w = s0.width
            lines += [f"  // {w} threads run each item of {self.sname(0)}.",
                      "  int i = (blockIdx.x * blockDim.x + threadIdx.x) / "
                      f"{w};",
                      f"  if (i >= n)", "    return;",
                      f"  {self.sname(0)}({self.arg(0, item)}, "
                      f"threadIdx.x % {w});"]
        if self.second_seed is not None:
            if s0.width > 1 and not self.entry_rank_loop:
                lines.append(f"  if (threadIdx.x % {s0.width} == 0 && "
                             "seeds[i] % 3 == 0)")
            else:
                lines.append("  if (seeds[i] % 3 == 0)")
            item2 = f"{n}_Item{{i, 0, 0, seeds[i] ^ 0x5bd1e995u{extra}}}"
            lines.append(f"    {self.sname(self.second_seed)}"
                         f"({self.arg(self.second_seed, item2)});")
        lines.append("}")
        return "\n".join(lines)

    def entry_threads(self):
        s0 = self.stages[0]
        return 1 if s0.width == 1 or self.entry_rank_loop else s0.width

    def host_entry(self):
        """The reference of one launch."""
        n = self.name
        s0 = self.stages[0]
        lines = [f"static void {n}_reference(const std::vector<unsigned> "
                 "&seeds, std::vector<unsigned> &acc, std::vector<int> "
                 "&deepest) {",
                 f"  for (int i = 0; i < int(seeds.size()); ++i) {{"]
        extra = ", nullptr, nullptr" if self.reach == "item" else ""
        lines.append(f"    {n}_ref_s0({n}_Item{{i, 0, 0, seeds[i]{extra}}}, "
                     "acc, deepest);")
        if self.second_seed is not None:
            lines += ["    if (seeds[i] % 3 == 0)",
                      f"      {n}_ref_s{self.second_seed}({n}_Item{{i, 0, 0, "
                      f"seeds[i] ^ 0x5bd1e995u{extra}}}, acc, deepest);"]
        lines += ["  }", "}"]
        return "\n".join(lines)

    def config_text(self):
        """C++ that writes the hybrid configuration for `sms` SMs."""
        h = self.hybrid
        k = len(h["groups"])
        lines = []
        lines.append("  std::string text = \"model hybrid\\n\";")
        if h["adapt"]:
            lines.append("  text += \"adapt on\\n\";")
        if h["green"]:
            lines.append("  text += \"green on\\n\";")
        for g, (first, last, count, model) in enumerate(h["groups"]):
            rng = (self.sname(first) if first == last else
                   f"{self.sname(first)}..{self.sname(last)}")
            lines.append(f"  text += \"group {rng} {model} sms \" + "
                         f"std::to_string(sms * {g} / {k}) + \"-\" + "
                         f"std::to_string(sms * {g + 1} / {k} - 1) + \"\\n\";")
        return lines

    def visits_offset(self):
        """Where the visit counts start after the histograms."""
        N = len(self.stages)
        if "kBuckets" in self.text:
            return f"{N} * {self.text['kBuckets']}"
        return str(N * HIST)

    def code(self):
        n = self.name
        N = len(self.stages)
        parts = []
        fields = ["  int id;     // the entry item it comes from",
                  "  int depth;  // recursion depth",
                  "  int iter;   // loop iteration",
                  "  unsigned key;"]
        if self.reach == "item":
            fields += ["  unsigned *acc;", "  int *deepest;"]
        parts.append(f"struct {n}_Item {{\n" + "\n".join(fields) + "\n};")
        parts.append(f"__host__ __device__ inline unsigned {n}_mix("
                     "unsigned x) { return difftest::mix(x); }")
        parts.append("// Accumulators: sums per stage, histograms, visits per "
                     "entry item\n// and stage, stage 0's slot per entry "
                     "item.\n"
                     f"constexpr int {n}_kRoots = {self.roots};\n"
                     f"constexpr int {n}_kHist = {N};\n"
                     f"constexpr int {n}_kVisits = {n}_kHist + "
                     f"{self.visits_offset()};\n"
                     f"constexpr int {n}_kFirst = {n}_kVisits + "
                     f"{n}_kRoots * {N};\n"
                     f"constexpr int {n}_kSize = {n}_kFirst + {n}_kRoots;")
        if self.reach == "symbol":
            parts.append(f"__device__ unsigned *{n}_acc;\n"
                         f"__device__ int *{n}_deepest;")
        elif self.reach == "array":
            parts.append(f"__device__ unsigned {n}_acc[{n}_kSize];\n"
                         f"__device__ int {n}_deepest[{n}_kRoots];")
        if any(st.packed for st in self.stages):
            parts.append(
                f"/// Some stages take their item packed: key, id, depth, "
                f"iteration.\n"
                f"__host__ __device__ inline unsigned long long {n}_pack("
                f"{n}_Item it) {{\n"
                "  return (unsigned long long)it.key | "
                "(unsigned long long)it.id << 32 |\n"
                "         (unsigned long long)it.depth << 48 | "
                "(unsigned long long)it.iter << 56;\n}\n"
                f"__host__ __device__ inline {n}_Item {n}_unpack("
                "unsigned long long v) {\n"
                f"  return {n}_Item{{int(v >> 32 & 0xffff), "
                "int(v >> 48 & 0xff), int(v >> 56),\n"
                "                 unsigned(v)};\n}")
        decls = []
        for st in self.stages:
            decls.append(f"__device__ void {self.sname(st.index)}"
                         f"({self.param(st)});")
        parts.append("\n".join(decls))
        e = self.refused_edge
        if self.refusal == "macro":
            parts.append(f"// A stage call the pass cannot rewrite: it is "
                         f"written in a macro.\n#define {n.upper()}_HAND_ON("
                         f"...) {self.sname(e.target)}(__VA_ARGS__)")
        if self.refusal == "helper":
            parts.append(f"/// Hands an item on from a helper, which the "
                         f"pass refuses.\n__device__ void {n}_handOn("
                         f"{n}_Item it) {{ {self.sname(e.target)}("
                         f"{self.arg(e.target, 'it')}); }}")
        for st in self.stages:
            parts.append(self.stage_text(st, host=False))
        parts.append(self.entry_text())
        parts.append("\n".join(
            f"static void {n}_ref_s{st.index}({n}_Item it, "
            "std::vector<unsigned> &acc, std::vector<int> &deepest);"
            for st in self.stages))
        for st in self.stages:
            parts.append(self.stage_text(st, host=True))
        parts.append(self.host_entry())
        parts.append(self.run_text())
        return "\n\n".join(parts)

    def run_text(self):
        n = self.name
        threads = self.entry_threads()
        B = self.text.get("kBlock", str(self.block))
        lines = [f"static void run_{n}(difftest::Rng &rng, "
                 "difftest::Check &check) {",
                 f"  const int n = {n}_kRoots;",
                 "  difftest::Buffer<unsigned> seeds(n);",
                 "  rng.fill(seeds.Host, 0, 4294967295.0);",
                 "  seeds.upload();"]
        if self.reach == "array":
            lines += [f"  std::vector<unsigned> gotAcc({n}_kSize, "
                      "difftest::poisonValue<unsigned>());",
                      "  std::vector<int> gotDeepest(n, "
                      "difftest::poisonValue<int>());",
                      f"  DIFFTEST_CUDA(cudaMemcpyToSymbol({n}_acc, "
                      "gotAcc.data(), sizeof(unsigned) * gotAcc.size()));",
                      f"  DIFFTEST_CUDA(cudaMemcpyToSymbol({n}_deepest, "
                      "gotDeepest.data(), sizeof(int) * gotDeepest.size()));"]
        else:
            lines += [f"  difftest::Buffer<unsigned> acc({n}_kSize);",
                      "  difftest::Buffer<int> deepest(n);",
                      "  acc.poison();",
                      "  deepest.poison();",
                      "  unsigned *accData = acc.data();",
                      "  int *deepestData = deepest.data();"]
        if self.reach == "symbol":
            lines += [f"  DIFFTEST_CUDA(cudaMemcpyToSymbol({n}_acc, &accData, "
                      "sizeof accData));",
                      f"  DIFFTEST_CUDA(cudaMemcpyToSymbol({n}_deepest, "
                      "&deepestData, sizeof deepestData));"]
        # 256 bytes a frame was too little for one original of 700 (seed
        # 2, 7 frames: cudaErrorIllegalInstruction).
        lines += [f"  // The RTC original calls {self.frames} functions deep "
                  "at most.",
                  "  DIFFTEST_CUDA(cudaDeviceSetLimit(cudaLimitStackSize, "
                  f"1024 + {self.frames} * 512));"]
        if self.hybrid:
            lines += ["  // The rewritten launch's default run: a hybrid of "
                      "the models.",
                      "  int sms = 0;",
                      "  DIFFTEST_CUDA(cudaDeviceGetAttribute(&sms, "
                      "cudaDevAttrMultiProcessorCount, 0));"]
            lines += self.config_text()
            lines += [f"  char config[] = \"/tmp/difftest-{n}-XXXXXX\";",
                      "  const int fd = mkstemp(config);",
                      "  if (std::FILE *f = fd >= 0 ? fdopen(fd, \"w\") : "
                      "nullptr) {",
                      "    std::fputs(text.c_str(), f);",
                      "    std::fclose(f);",
                      "    setenv(\"CUDA_REWRITE_PIPELINE_CONFIG\", config, "
                      "1);",
                      "  }"]
        lines.append("  const unsigned *seedData = seeds.data();")
        args = ["seedData", "n"]
        if self.reach == "item":
            args += ["accData", "deepestData"]
        items = f"n * {threads}" if threads > 1 else "n"
        grid = (f"({items} + {B} - 1) / {B}" if "kBlock" in self.text else
                f"({items} + {int(B) - 1}) / {B}")
        pragma = " ".join(["#pragma cuda_rewrite pipeline"] + self.clauses)
        lines += [f"  for (int rep = 0; rep < {self.reps}; ++rep) {{",
                  pragma,
                  f"    {n}_entry<<<{grid}, {B}>>>({', '.join(args)});",
                  "    DIFFTEST_CUDA(cudaGetLastError());",
                  "  }",
                  "  DIFFTEST_CUDA(cudaDeviceSynchronize());"]
        if self.hybrid:
            lines += ["  unsetenv(\"CUDA_REWRITE_PIPELINE_CONFIG\");",
                      "  std::remove(config);"]
        if self.reach == "array":
            lines += [f"  DIFFTEST_CUDA(cudaMemcpyFromSymbol(gotAcc.data(), "
                      f"{n}_acc, sizeof(unsigned) * gotAcc.size()));",
                      "  DIFFTEST_CUDA(cudaMemcpyFromSymbol("
                      "gotDeepest.data(), "
                      f"{n}_deepest, sizeof(int) * gotDeepest.size()));"]
        else:
            lines += ["  const std::vector<unsigned> &gotAcc = "
                      "acc.download();",
                      "  const std::vector<int> &gotDeepest = "
                      "deepest.download();"]
        lines += ["  // The reference: the same stages, one item after "
                  "another.",
                  f"  std::vector<unsigned> wantAcc({n}_kSize, "
                  "difftest::poisonValue<unsigned>());",
                  "  std::vector<int> wantDeepest(n, "
                  "difftest::poisonValue<int>());",
                  f"  for (int rep = 0; rep < {self.reps}; ++rep)",
                  f"    {n}_reference(seeds.Host, wantAcc, wantDeepest);",
                  '  difftest::expectExact(check, "acc", gotAcc, wantAcc);',
                  '  difftest::expectExact(check, "deepest", gotDeepest, '
                  "wantDeepest);",
                  "}"]
        return "\n".join(lines)


def generate(rng: random.Random, name: str,
             spell: Spelling = None) -> Program:
    p = PipelineProgram(rng, name)
    p.spell_constants(spell or Spelling(name))
    code = p.spell.apply(p.code())
    widths = " ".join(("w" if s.shuffle else str(s.width)) for s in p.stages)
    edges = sorted({e.kind for s in p.stages for e in s.edges})
    traits = {"stages": str(len(p.stages)), "widths": widths,
              "edges": " ".join(edges) or "-", "reach": p.reach,
              "roots": str(p.roots), "items<=": str(p.items_bound),
              "frames": str(p.frames), "reps": str(p.reps),
              "clauses": " ".join(p.clauses) or "-",
              "hybrid": "yes" if p.hybrid else "no"}
    if p.refusal:
        traits["refusal"] = p.refusal
    if p.spell.on:
        traits["spelled"] = p.spell.style
    return Program(name, code, traits, p.spell.knobs)
