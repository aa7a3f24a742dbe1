#!/usr/bin/env python3
"""What tools/run-tests.sh promises, checked against what ctest registered and ran.

  test_summary.py registered BUILD EXPECTED [--slow]
      Before the run: every suite of EXPECTED (tests/expected_suites.txt) has tests registered in
      BUILD (from `ctest --show-only=json-v1`), and every gtest executable was built. A missing
      suite fails, naming it; outside CI, a suite whose requirement is absent here is reported as
      skipped with that requirement instead (in CI, CI=true, it fails too).
  test_summary.py results BUILD EXPECTED JUNIT [--slow]
      After the run: the table label / run / skipped (reasons) / failed from ctest's JUnit file
      (`ctest --output-junit`), with the gtest XML of tests that run many cases in one process
      (BUILD/test-results/<test>.xml: the conformance shards) counted case by case. Fails when a
      suite ran fewer tests than EXPECTED's minimum, or when a skip has no named reason.

Exit status 1 names what is wrong; 0 otherwise (ctest's own status reports failed tests).
"""
import collections
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

IN_CI = os.environ.get("CI") == "true"
# Labels that mark a subset of tests that also carry their suite's label, not a suite.
UNLISTED_LABELS = {"slow", "soak"}


class Suite:
    def __init__(self, label, minimum, needs, line):
        self.label, self.minimum, self.needs, self.line = label, minimum, needs, line

    def absent_needs(self):
        """The requirements of this suite that this machine lacks."""
        absent = []
        for need in self.needs:
            kind, _, what = need.partition(":")
            if kind == "cmd":
                ok = shutil.which(what) is not None
            elif kind == "py":
                ok = importlib.util.find_spec(what) is not None
            elif kind == "file":
                ok = os.path.exists(what)
            else:
                raise SystemExit(f"{self.line}: unknown requirement '{need}' "
                                 "(cmd:PROGRAM, py:MODULE or file:PATH)")
            if not ok:
                absent.append(need)
        return absent


def read_expected(path):
    suites = []
    with open(path) as f:
        for number, text in enumerate(f, 1):
            text = text.split("#", 1)[0].strip()
            if not text:
                continue
            fields = text.split()
            where = f"{path}:{number}"
            if len(fields) != 4 or not fields[1].isdigit() or fields[2] not in ("fast", "slow"):
                raise SystemExit(f"{where}: expected '<label> <minimum> <fast|slow> <needs|->'")
            needs = [] if fields[3] == "-" else fields[3].split(",")
            suites.append((fields[2], Suite(fields[0], int(fields[1]), needs, where)))
    return suites


def selected(suites, slow):
    return [s for speed, s in suites if (speed == "slow") == slow]


def registered_tests(build):
    out = subprocess.run(["ctest", "--show-only=json-v1"], cwd=build, check=True,
                         capture_output=True, text=True).stdout
    tests = []
    for t in json.loads(out)["tests"]:
        labels = []
        for p in t.get("properties", []):
            if p["name"] == "LABELS":
                labels = p["value"]
        tests.append((t["name"], labels))
    return tests


def test_key(name):
    """A ctest name without gtest's "  # GetParam() = ..." suffix: a parameter printed as its
    bytes can hold pointer values, which differ between the registration and the run."""
    return name.split("  # GetParam() = ", 1)[0]


def in_run(labels, slow):
    """Whether a test with these labels belongs to the fast run or to the --slow run."""
    return ("slow" in labels) == slow


def check_registered(build, expected, slow):
    tests = registered_tests(build)
    problems = []
    for name, _ in tests:
        if name.endswith("_NOT_BUILT"):
            problems.append(f"{name[:-len('_NOT_BUILT')]} is registered but not built "
                            "(tools/build.sh with no TESSERA_BUILD_TARGETS builds it)")
    count = collections.Counter()
    for name, labels in tests:
        if in_run(labels, slow):
            for label in labels:
                count[label] += 1
    suites = read_expected(expected)
    promised = {s.label for _, s in suites}
    for label in sorted(set(count) - promised - UNLISTED_LABELS):
        problems.append(f"label {label} has {count[label]} registered tests but is not in "
                        f"{os.path.basename(expected)}: add it with its minimum, so that a run "
                        "without it fails")
    for suite in selected(suites, slow):
        if count[suite.label] > 0:
            continue
        absent = suite.absent_needs()
        if absent and not IN_CI:
            print(f"suite {suite.label}: skipped, needs {', '.join(absent)} "
                  "(CI=true makes this a failure)")
            continue
        why = (f"it needs {', '.join(absent)}, absent here, and CI must have it" if absent else
               "its requirements are present: see tools/build.sh's 'suite' lines")
        problems.append(f"suite {suite.label} is not registered: {why}")
    for p in problems:
        print(f"error: {p}", file=sys.stderr)
    return 1 if problems else 0


def skip_reason(output):
    """The reason of a gtest skip: the text after 'Skipped' up to the [  SKIPPED ] line."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.rstrip().endswith(": Skipped") or line.strip() == "Skipped":
            reason = []
            for nxt in lines[i + 1:]:
                if nxt.startswith("[  SKIPPED ]") or nxt.startswith("["):
                    break
                reason.append(nxt.strip())
            return "\n".join(r for r in reason if r) or "(no reason given)"
    return "(no reason given)"


def gtest_cases(path):
    """(run, skipped reasons, failed names) of a gtest XML report."""
    run, skipped, failed = 0, [], []
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname')}.{case.get('name')}"
        if case.get("status") == "notrun" or case.get("result") == "suppressed":
            continue  # another shard's case, or filtered out
        if case.get("result") == "skipped" or case.find("skipped") is not None:
            el = case.find("skipped")
            message = el.get("message", "") if el is not None else ""
            # gtest's message is "file:line\n<reason>"; the reason is what groups.
            reason = message.split("\n", 1)[1] if "\n" in message else message
            skipped.append(reason.strip() or "(no reason given)")
        elif case.find("failure") is not None:
            failed.append(name)
        else:
            run += 1
    return run, skipped, failed


def group_reason(reason):
    # "needs an OpenCL device: probe found none" groups as "needs an OpenCL device"; other
    # reasons (the conformance cases' "ops not registered: X") group by their first words.
    first = reason.strip().split("\n", 1)[0]
    m = re.match(r"(needs [^:]+|CI requires [^:]+|[^:]{1,60})", first)
    return m.group(1).strip() if m else first[:60]


def results(build, expected, junit, slow):
    labels_of = {test_key(name): labels for name, labels in registered_tests(build)}
    rows = collections.OrderedDict()

    def row(label):
        return rows.setdefault(label, {"run": 0, "skipped": collections.Counter(), "failed": []})

    for case in ET.parse(junit).getroot().iter("testcase"):
        name = case.get("name")
        labels = [l for l in labels_of.get(test_key(name), []) if l != "slow"] or ["(no label)"]
        out_el = case.find("system-out")
        output = out_el.text or "" if out_el is not None else ""
        status = case.get("status")
        skipped_el = case.find("skipped")
        report = os.path.join(build, "test-results", name + ".xml")
        for label in labels:
            r = row(label)
            if os.path.exists(report) and status in ("run", "fail"):
                run, skipped, failed = gtest_cases(report)
                r["run"] += run
                r["skipped"].update(group_reason(s) for s in skipped)
                r["failed"] += [f"{name}: {f}" for f in failed]
                if status == "fail" and not failed:
                    r["failed"].append(name)
            elif status == "run":
                r["run"] += 1
            elif status == "notrun" and skipped_el is not None and \
                    skipped_el.get("message") in ("SKIP_REGULAR_EXPRESSION_MATCHED",
                                                  "SKIP_RETURN_CODE"):
                r["skipped"][group_reason(skip_reason(output))] += 1
            else:
                # Failed, or not run for a reason that is no skip (a failed fixture, a missing
                # executable, a timeout).
                why = skipped_el.get("message") if skipped_el is not None else status
                r["failed"].append(name if status == "fail" else f"{name} ({why})")

    problems = []
    for suite in selected(read_expected(expected), slow):
        r = rows.get(suite.label)
        ran = r["run"] + len(r["failed"]) if r else 0
        if ran < suite.minimum and not (suite.absent_needs() and not IN_CI):
            problems.append(f"suite {suite.label} ran {ran} tests, fewer than the "
                            f"{suite.minimum} {os.path.basename(expected)} expects")
        if r:
            for reason, n in r["skipped"].items():
                if reason == "(no reason given)":
                    problems.append(f"suite {suite.label}: {n} tests skipped without a reason")

    width = max([len(l) for l in rows] + [5])
    print(f"\n{'label':<{width}}  {'run':>5}  {'skipped':>7}  {'failed':>6}  skip reasons")
    total = [0, 0, 0]
    for label, r in rows.items():
        skipped = sum(r["skipped"].values())
        reasons = "; ".join(f"{n}x {why}" for why, n in r["skipped"].most_common())
        print(f"{label:<{width}}  {r['run']:>5}  {skipped:>7}  {len(r['failed']):>6}  {reasons}")
        total[0] += r["run"]
        total[1] += skipped
        total[2] += len(r["failed"])
    print(f"{'total':<{width}}  {total[0]:>5}  {total[1]:>7}  {total[2]:>6}")
    failed = [f for r in rows.values() for f in r["failed"]]
    if failed:
        print("failed: " + ", ".join(failed[:40]) + (" ..." if len(failed) > 40 else ""))
    for p in problems:
        print(f"error: {p}", file=sys.stderr)
    return 1 if problems else 0


def main(argv):
    slow = "--slow" in argv
    args = [a for a in argv if a != "--slow"]
    if len(args) == 3 and args[0] == "registered":
        return check_registered(args[1], args[2], slow)
    if len(args) == 4 and args[0] == "results":
        return results(args[1], args[2], args[3], slow)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
