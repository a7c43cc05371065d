"""Checks the cluster planner's predictions against the partitioned program.

Reads loomc's --plan=auto report (standard input) and its line
"checked on the partitioned program (GRID): weights W bytes per device
(predicted P, ...); collectives send S bytes per device (predicted Q, ...)",
and fails unless the predicted weights are within --weights percent of the
measured ones and the predicted bytes sent within --sent percent. With
--stats, the bytes sent are also checked against the runtime's counters:
loom-run --collective-stats's "rank R collectives: N ring bytes sent in
all" lines, of the busiest rank.

    check_plan_prediction.py --weights 10 --sent 1 [--stats RUN] < report
"""

import argparse
import re
import sys

LINE = re.compile(r"checked on the partitioned program \((?P<grid>[^)]*)\): "
                  r"weights (?P<w>\d+) bytes per device \(predicted (?P<pw>\d+), [^)]*\); "
                  r"collectives send (?P<s>\d+) bytes per device \(predicted (?P<ps>\d+), ")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", type=float, required=True)
    parser.add_argument("--sent", type=float, required=True)
    parser.add_argument("--stats", help="loom-run --collective-stats output")
    args = parser.parse_args()
    report = sys.stdin.read()
    match = LINE.search(report)
    if not match:
        print("no 'checked on the partitioned program' line in:\n" + report)
        return 1
    checks = [("weights", int(match["w"]), int(match["pw"]), args.weights),
              ("sent", int(match["s"]), int(match["ps"]), args.sent)]
    if args.stats:
        with open(args.stats) as f:
            sent = [int(m) for m in re.findall(
                r"rank \d+ collectives: (\d+) ring bytes sent in all", f.read())]
        if not sent:
            print("no 'ring bytes sent in all' lines in " + args.stats)
            return 1
        checks.append(("sent at run time (busiest rank)", max(sent), int(match["ps"]),
                       args.sent))
    failed = False
    for name, measured, predicted, tolerance in checks:
        error = 100.0 * abs(predicted - measured) / max(measured, 1)
        verdict = "ok" if error <= tolerance else "FAILED"
        failed |= error > tolerance
        print(f"{match['grid']} {name}: measured {measured}, predicted {predicted}, "
              f"{error:.1f} % (within {tolerance:g} %: {verdict})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
