"""The contract between deploy/ and the daemons: metrics with their types and label values,
the command-line flags, checked against the sources where they exist."""
import os
import re

from .report import ROOT, fail, note, ok, read, skip

# ---------------------------------------------------------------------------------------
# The contract: metrics, their types and label values; the command lines.

JOB_KINDS = {"compile", "measure", "whole_kernel"}
JOB_STATES = {"queued", "leased", "done", "failed"}
FAILURE_CLASSES = {"compile_error", "resource_error", "launch_error", "timeout", "wrong_answer", "worker_lost"}

# name -> (type, {label: allowed values or None for any})
METRICS = {
    # mono-tuner-server (tuner_server/metrics.cc)
    "mono_leases_total": ("counter", {"event": {"granted", "expired"}}),
    "mono_reports_total": ("counter", {"outcome": {"accepted", "ignored", "refused"}}),
    "mono_lease_seconds": ("histogram", {}),
    "mono_jobs": ("gauge", {"kind": JOB_KINDS, "state": JOB_STATES}),
    "mono_failures": ("gauge", {"class": FAILURE_CLASSES}),
    "mono_db_bytes": ("gauge", {}),
    "mono_workers": ("gauge", {}),
    # mono-worker (gpu_worker/)
    "mono_worker_jobs_total": ("counter", {"kind": JOB_KINDS, "outcome": None}),
    "mono_worker_candidates_total": ("counter", {"stage": {"compiled", "measured"}}),
    "mono_worker_failures_total": ("counter", {"class": FAILURE_CLASSES}),
    "mono_worker_measurement_spread": ("histogram", {}),
    "mono_worker_gpu_sm_clock_mhz": ("gauge", {"gpu": None}),
    "mono_worker_gpu_temperature_celsius": ("gauge", {"gpu": None}),
    "mono_worker_busy": ("gauge", {"gpu": None}),
    "mono_worker_busy_seconds_total": ("counter", {"gpu": None}),
}
SERVER_METRICS = {m for m in METRICS if not m.startswith("mono_worker_")}
# Series Prometheus itself makes for every target.
BUILTIN = {"up": ("gauge", {})}
TARGET_LABELS = {"job", "instance"}  # plus the labels of prometheus.yml's static_configs

FLAGS = {
    "mono-tuner-server": {"--db", "--listen", "--http", "--token-file", "--lease-seconds", "--data-dir", "--tls-cert",
                          "--tls-key", "--tls-ca", "--allow-no-token"},
    "mono-worker": {"--server", "--gpus", "--compile-only", "--token-file", "--name", "--metrics", "--work-dir",
                    "--tls-cert", "--tls-key", "--tls-ca"},
}
VALUELESS_FLAGS = {"--compile-only", "--allow-no-token"}
FLAG_SOURCES = {"mono-tuner-server": "tuner_server/server_main.cc", "mono-worker": "gpu_worker/worker_main.cc"}
_source_flags = {}


def source_flags(binary):
    """The flags the binary's main() parses (f == "--x"), or None before it exists."""
    if binary not in _source_flags:
        path = os.path.join(ROOT, FLAG_SOURCES[binary])
        flags = None
        if os.path.exists(path):
            text = read(path)
            if "take_tls_flag" in text:  # the TLS flags are parsed in proto/transport.cc
                text += read(os.path.join(ROOT, "proto", "transport.cc"))
            flags = set(re.findall(r'==\s*"(--[a-z0-9-]+)"', text))
        _source_flags[binary] = flags
    return _source_flags[binary]
SEVERITIES = {"critical", "warning", "info"}

RANGE_FUNCS = {"rate", "irate", "increase"}  # counters (and histogram series)
GAUGE_RANGE_FUNCS = {"delta", "deriv", "predict_linear", "idelta"}


def check_contract_against_sources():
    """The label values above must match db/records.cc (job kinds and states) and
    db/failure_class.h (failure classes), and the server metrics tuner_server/*.cc; worker
    metrics are compared with gpu_worker/ once it has any."""
    for source, arrays in (("db/records.cc", (("kJobKinds", JOB_KINDS), ("kJobStates", JOB_STATES))),
                           ("db/failure_class.h", (("kFailureClasses", FAILURE_CLASSES),))):
        path = os.path.join(ROOT, *source.split("/"))
        if not os.path.exists(path):
            skip(f"{source} absent: label values not cross-checked")
            continue
        text = read(path)
        for array, expected in arrays:
            m = re.search(array + r"\[\]\s*=\s*\{([^}]*)\}", text)
            if not m:
                note(f"{source}: {array} not found; label values not cross-checked")
                continue
            values = {v for v in re.findall(r'"([^"]*)"', m.group(1)) if v}
            if values == expected:
                ok(f"label values of {array} match {source}")
            else:
                fail(f"{source} {array} is {sorted(values)} but tests/deploy/deploy_checks/contract.py expects {sorted(expected)}: "
                     "update the dashboard/alerts and the list here")

    def defined_names(folder):
        names = set()
        path = os.path.join(ROOT, folder)
        if not os.path.isdir(path):
            return None
        for dirpath, _, files in os.walk(path):
            for f in files:
                if f.endswith((".cc", ".h")):
                    names |= set(re.findall(r'Name\(\s*"(mono_[a-z0-9_]+)"', read(os.path.join(dirpath, f))))
        return names

    server = defined_names("tuner_server")
    if server is None:
        skip("tuner_server/ absent: server metric names not cross-checked")
    else:
        missing = sorted(SERVER_METRICS - server)
        if missing:
            fail(f"tuner_server/ does not define {missing} (deploy/ relies on them)")
        else:
            ok(f"the {len(SERVER_METRICS)} server metrics are defined in tuner_server/")
    worker = defined_names("gpu_worker")
    worker_metrics = {m for m in METRICS if m.startswith("mono_worker_")}
    if not worker:
        note("gpu_worker/ defines no metrics yet: worker metric names checked against the agreed list only")
    else:
        missing = sorted(worker_metrics - worker)
        if missing:
            note(f"gpu_worker/ does not (yet) define {missing}: the dashboard and alerts use them")
        else:
            ok(f"the {len(worker_metrics)} worker metrics are defined in gpu_worker/")
