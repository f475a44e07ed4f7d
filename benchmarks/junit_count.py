"""Count the outcomes in a pytest JUnit report: `python benchmarks/junit_count.py report.xml`.

Prints each failure and error, then one line of counts; exits 1 if anything failed or nothing
passed. `gpu_check.sh` uses it for the tests that ran on "cuda".
"""

from __future__ import annotations

import collections
import sys
import xml.etree.ElementTree as ET


def outcome(case: ET.Element) -> str:
    """'failure', 'error', 'skipped' or 'passed': what a <testcase> element reports."""
    return next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")


def main(path: str) -> int:
    counts: collections.Counter[str] = collections.Counter()
    for case in ET.parse(path).iter("testcase"):
        counts[outcome(case)] += 1
        if outcome(case) in ("failure", "error"):
            print(f"  {outcome(case)}: {case.get('classname')}::{case.get('name')}")
    print(f"tests: {sum(counts.values())}: " + ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())))
    return 1 if counts["failure"] or counts["error"] or not counts["passed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
