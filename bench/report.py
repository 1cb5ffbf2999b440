#!/usr/bin/env python3
"""One results.md from the results.json of a bench run made in parts.

    python3 bench/report.py PART.json [PART.json ...] > results.md

`bench/run.py --part K/N` writes one results.md per part; bench/RESULTS.md
records the run as a whole: this prints the report run.py would have
written for all the parts' rows together (its per-sample table, sorted by
sample, and the geometric means per variant), with each part's date and
command. The parts must come from one GPU.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import notes, summarize, summary_table, table  # noqa: E402


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    parts = [json.loads(Path(p).read_text()) for p in sys.argv[1:]]
    gpus = {p["gpu"] for p in parts}
    if len(gpus) != 1:
        sys.exit(f"report.py: parts from more than one GPU: {sorted(gpus)}")
    rows = [row for p in parts for row in p["rows"]]
    # By sample; a sample's rows (all from one part) keep run.py's order.
    rows.sort(key=lambda r: r["sample"])
    copy = [p["copy_bandwidth_gbps"] for p in parts if p["copy_bandwidth_gbps"]]
    copy_gbps = sorted(copy)[len(copy) // 2] if copy else None
    bandwidth = f"{copy_gbps:.0f} GB/s" if copy_gbps else "unknown"
    print(f"GPU: {gpus.pop()}, measured copy bandwidth {bandwidth} (median of "
          f"the parts)")
    for p in parts:
        print(f"Part: {p['date']}, `{p['command']}`")
    for staged in sorted({s for p in parts for s in p["staged"]}):
        print(f"Staged: {staged}")
    print(f"\n{table(rows, copy_gbps)}\n\n{summary_table(summarize(rows))}")
    if notes(rows):
        print(f"\n{notes(rows)}")


if __name__ == "__main__":
    main()
