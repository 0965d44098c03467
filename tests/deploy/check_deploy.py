#!/usr/bin/env python3
"""Static checks of deploy/ (called by check_deploy.sh; no network, no GPU).

Prints one line per check: "ok   ...", "FAIL ...", "skip ...", "note ...". Exit status 1
when anything failed. With --no-yaml it behaves as if PyYAML were missing (the fallback).
The checks live in the package beside this file, deploy_checks/, one module per subject
(contract: the agreed metrics and flags; promql; monitoring: YAML, Prometheus, alerts,
Grafana; command_lines: systemd, Kubernetes, Dockerfiles; docs); this runs them in order.
"""
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree

from deploy_checks import command_lines, contract, docs, monitoring, promql, report  # noqa: E402
from deploy_checks.report import fail, note, ok, skip  # noqa: E402


def main():
    use_yaml = "--no-yaml" not in sys.argv
    yaml = None
    if use_yaml:
        try:
            import yaml as yaml_module  # noqa: PLC0415
            yaml = yaml_module
        except ImportError:
            note("PyYAML not available (apt-get install python3-yaml): YAML gets the minimal check only")
    else:
        note("--no-yaml: checking as if PyYAML were missing")
    contract.check_contract_against_sources()
    for binary, src in contract.FLAG_SOURCES.items():
        flags = contract.source_flags(binary)
        if flags is None:
            note(f"{src} absent: {binary} flags checked against the agreed list only")
        else:
            missing = sorted(contract.FLAGS[binary] - flags)
            (fail if missing else ok)(f"{src} parses the agreed flags of {binary}" + (f" except {missing}" if missing else ""))
    parsed = monitoring.check_yaml_files(yaml)
    target_labels = monitoring.check_prometheus(parsed) if yaml else monitoring.prometheus_target_labels_fallback()
    alert_metrics = monitoring.check_alerts(parsed, target_labels, yaml is not None)
    dash_metrics = monitoring.check_grafana(target_labels)
    used = alert_metrics | dash_metrics
    if not promql.unknown_metrics:
        ours = sorted(used - set(contract.BUILTIN))
        ok(f"metric names used by alerts and dashboard: {len(ours)} of {len(contract.METRICS)}, all in the agreed list: {ours}")
    command_lines.check_systemd()
    if yaml:
        command_lines.check_k8s(parsed)
    else:
        skip("deploy/k8s semantic checks need PyYAML")
    command_lines.check_dockerfiles()
    docs.check_docs()
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
