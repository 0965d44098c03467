"""The static checks of deploy/ that tests/deploy/check_deploy.py runs, one module per subject:

report         ok/FAIL/skip/note lines and the failure count, paths
contract       the agreed metrics, label values and daemon flags, checked against the sources
promql         the PromQL subset the dashboard and alerts use
monitoring     YAML files, prometheus.yml, alerts.yml, the Grafana dashboard
command_lines  flags in systemd units, env files, Kubernetes manifests and Dockerfiles
docs           docs/deploy.md against deploy/
"""
