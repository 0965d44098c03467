"""Command lines: the daemons' flags in systemd units, env files, Kubernetes args and
Dockerfiles, and the invariants of each of those."""
import fnmatch
import json
import os
import re

from .contract import FLAG_SOURCES, FLAGS, VALUELESS_FLAGS, source_flags
from .report import DEPLOY, ROOT, fail, ok, read, rel


# ---------------------------------------------------------------------------------------
# Command lines: systemd units, env files, Kubernetes args, Dockerfiles


def check_flags(where, binary, args):
    allowed = FLAGS[binary]
    parsed = source_flags(binary)
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("--"):
            if a not in allowed:
                fail(f"{where}: {binary} has no flag {a} (it takes {sorted(allowed)})")
            elif parsed is not None and a not in parsed - {"--help"}:
                fail(f"{where}: {FLAG_SOURCES[binary]} does not parse {a}")
            elif a not in VALUELESS_FLAGS:
                if i + 1 >= len(args) or args[i + 1].startswith("--"):
                    fail(f"{where}: {a} needs a value")
                i += 1
        i += 1


def parse_unit(path):
    sections, current = {}, None
    text = read(path).replace("\\\n", " ")
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith(("#", ";")):
            continue
        if s.startswith("["):
            current = s.strip("[]")
            sections.setdefault(current, [])
            continue
        k, _, v = s.partition("=")
        sections.setdefault(current, []).append((k.strip(), v.strip()))
    return sections


def parse_env_file(path):
    env = {}
    for line in read(path).splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if "=" not in s:
            fail(f"{rel(path)}: not KEY=value: {s}")
            continue
        k, _, v = s.partition("=")
        env[k.strip()] = v.strip().strip('"')
    return env


def check_systemd():
    folder = os.path.join(DEPLOY, "systemd")
    units = sorted(f for f in os.listdir(folder) if f.endswith((".service", ".timer")))
    env_files = sorted(f for f in os.listdir(folder) if f.endswith(".env"))
    referenced_vars = set()
    env_by_unit = {}
    for u in units:
        path = os.path.join(folder, u)
        sec = parse_unit(path)
        svc = dict((k, v) for k, v in sec.get("Service", []))
        if u.endswith(".timer"):
            if not os.path.exists(os.path.join(folder, u[: -len(".timer")] + ".service")):
                fail(f"{rel(path)}: no matching .service")
            continue
        defaults = {}
        for k, v in sec.get("Service", []):
            if k == "Environment":
                name, _, value = v.partition("=")
                defaults[name] = value
        env_by_unit[u] = defaults
        exec_start = svc.get("ExecStart", "")
        words = exec_start.split()
        if not words:
            fail(f"{rel(path)}: no ExecStart")
            continue
        binary = os.path.basename(words[0].lstrip("-+@!:"))
        for var in re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", exec_start):
            referenced_vars.add(var)
            if var not in defaults:
                fail(f"{rel(path)}: ExecStart uses ${var}, which has no Environment= default (the env file is optional)")
        if binary in FLAGS:
            check_flags(rel(path), binary, words[1:])
            if svc.get("Restart") != "on-failure":
                fail(f"{rel(path)}: Restart is {svc.get('Restart')!r}, not on-failure")
            if not svc.get("User") or svc.get("User") == "root":
                fail(f"{rel(path)}: no dedicated User=")
            if "mono" not in svc.get("StateDirectory", "").split():
                fail(f"{rel(path)}: StateDirectory does not include mono")
            if not any(k == "EnvironmentFile" and "/etc/mono/" in v for k, v in sec.get("Service", [])):
                fail(f"{rel(path)}: no EnvironmentFile under /etc/mono/")
            if binary == "mono-worker":
                if svc.get("PrivateDevices", "no") not in ("no", "false"):
                    fail(f"{rel(path)}: PrivateDevices hides /dev/nvidia* from the worker")
                allows = [v for k, v in sec["Service"] if k == "DeviceAllow"]
                if svc.get("DevicePolicy") in ("closed", "strict") and not any("nvidia" in a for a in allows):
                    fail(f"{rel(path)}: closed device policy without DeviceAllow for the NVIDIA devices")
        for k, v in sec.get("Service", []):
            if k == "EnvironmentFile":
                continue
            for var in re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", v):
                referenced_vars.add(var)
    ok(f"deploy/systemd: {len(units)} units (flags, environment defaults, user, restart, state, GPU devices)")
    # Env files: every key is used by a unit (catches typos); flags inside *_ARGS are real.
    for e in env_files:
        path = os.path.join(folder, e)
        env = parse_env_file(path)
        binary = "mono-tuner-server" if "server" in e else "mono-worker"
        for k, v in env.items():
            if k not in referenced_vars:
                fail(f"{rel(path)}: {k} is not used by any unit in deploy/systemd")
            if k.endswith("_ARGS"):
                check_flags(f"{rel(path)} {k}", binary, v.split())
    ok(f"deploy/systemd: {len(env_files)} env files (every variable used by a unit, flags valid)")


K8S_KINDS_NAMESPACED = {"ConfigMap", "Secret", "Deployment", "DaemonSet", "Service", "PersistentVolumeClaim", "StatefulSet", "Job", "CronJob"}


def check_k8s(parsed):
    folder = os.path.join(DEPLOY, "k8s")
    kust_path = os.path.join(folder, "kustomization.yaml")
    kust = (parsed.get(kust_path) or [{}])[0]
    resources = kust.get("resources", [])
    for r in resources:
        if not os.path.exists(os.path.join(folder, r)):
            fail(f"deploy/k8s/kustomization.yaml: resource {r} not found")
    listed = set(resources)
    for f in sorted(os.listdir(folder)):
        if f.endswith(".yaml") and f != "kustomization.yaml" and f not in listed and ".example." not in f:
            fail(f"deploy/k8s/{f} is not listed in kustomization.yaml (name it *.example.yaml if that is on purpose)")
    objects = []
    for f in sorted(os.listdir(folder)):
        if f.endswith(".yaml") and f != "kustomization.yaml":
            for d in parsed.get(os.path.join(folder, f), []):
                objects.append((f, d))
    by_kind = {}
    for f, d in objects:
        for key in ("apiVersion", "kind"):
            if not d.get(key):
                fail(f"deploy/k8s/{f}: no {key}")
        md = d.get("metadata") or {}
        if not md.get("name"):
            fail(f"deploy/k8s/{f}: no metadata.name")
        if d.get("kind") in K8S_KINDS_NAMESPACED and md.get("namespace") != "mono":
            fail(f"deploy/k8s/{f}: {d.get('kind')} {md.get('name')} is not in namespace mono")
        by_kind.setdefault(d.get("kind"), []).append((f, d))
    configmap_keys = set()
    for _, d in by_kind.get("ConfigMap", []):
        configmap_keys |= set((d.get("data") or {}).keys())
    secrets = {(d["metadata"]["name"], k) for _, d in by_kind.get("Secret", []) for k in (d.get("stringData") or d.get("data") or {})}
    pvcs = {d["metadata"]["name"] for _, d in by_kind.get("PersistentVolumeClaim", [])}

    workloads = by_kind.get("Deployment", []) + by_kind.get("DaemonSet", [])
    server_seen = gpu_seen = compile_seen = False
    for f, d in workloads:
        name = d["metadata"]["name"]
        where = f"deploy/k8s/{f} {d['kind']} {name}"
        spec = d.get("spec", {})
        pod = spec.get("template", {}).get("spec", {})
        pod_labels = spec.get("template", {}).get("metadata", {}).get("labels", {})
        sel = (spec.get("selector") or {}).get("matchLabels", {})
        if any(pod_labels.get(k) != v for k, v in sel.items()):
            fail(f"{where}: selector {sel} does not match the pod labels")
        if not (pod.get("securityContext") or {}).get("runAsNonRoot"):
            fail(f"{where}: pods do not set runAsNonRoot")
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        for v in volumes.values():
            if "persistentVolumeClaim" in v and v["persistentVolumeClaim"]["claimName"] not in pvcs:
                fail(f"{where}: claim {v['persistentVolumeClaim']['claimName']} is not defined")
            if "secret" in v:  # a Secret of secret.example.yaml, with the keys the volume takes
                name = v["secret"]["secretName"]
                keys = [i["key"] for i in v["secret"].get("items", [])] or (["token"] if name == "mono-token" else [])
                if not any(n == name for n, _ in secrets):
                    fail(f"{where}: secret {name} is not in secret.example.yaml")
                for k in keys:
                    if (name, k) not in secrets:
                        fail(f"{where}: secret {name} with key {k} is not in secret.example.yaml")
        for c in pod.get("containers", []):
            cw = f"{where} container {c.get('name')}"
            image = c.get("image", "")
            binary = "mono-tuner-server" if "server" in image else "mono-worker" if "worker" in image else None
            args = [str(a) for a in c.get("args", [])]
            if binary:
                check_flags(cw, binary, args)
            else:
                fail(f"{cw}: image {image!r} is neither mono-tuner-server nor mono-worker")
            env_names = {e["name"] for e in c.get("env", [])}
            for a in args:
                for var in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", a):
                    if var not in env_names and var not in configmap_keys:
                        fail(f"{cw}: $({var}) is neither in env nor in the ConfigMap")
            ports = {p.get("name") for p in c.get("ports", [])} | {p.get("containerPort") for p in c.get("ports", [])}
            for probe in ("livenessProbe", "readinessProbe"):
                pr = c.get(probe) or {}
                hg = pr.get("httpGet") or {}
                # The server's token guards /metrics: its probes use the open /healthz.
                want = "/healthz" if binary == "mono-tuner-server" else "/metrics"
                if hg.get("path") != want:
                    fail(f"{cw}: {probe} is not an HTTP GET of {want}")
                elif hg.get("port") not in ports:
                    fail(f"{cw}: {probe} port {hg.get('port')} is not a container port")
            for m in c.get("volumeMounts", []):
                if m["name"] not in volumes:
                    fail(f"{cw}: mounts unknown volume {m['name']}")
            gpus = ((c.get("resources") or {}).get("limits") or {}).get("nvidia.com/gpu")
            if binary == "mono-tuner-server":
                server_seen = True
                if spec.get("replicas") != 1 or (spec.get("strategy") or {}).get("type") != "Recreate":
                    fail(f"{where}: the server needs replicas 1 and strategy Recreate (SQLite is single-writer)")
                if not any("persistentVolumeClaim" in v for v in volumes.values()):
                    fail(f"{where}: the database is not on a PersistentVolumeClaim")
                if gpus:
                    fail(f"{where}: the server asks for a GPU")
            elif "--compile-only" in args:
                compile_seen = True
                if gpus:
                    fail(f"{where}: a compile-only worker asks for a GPU")
            elif binary == "mono-worker":
                gpu_seen = True
                if not gpus:
                    fail(f"{where}: a GPU worker without an nvidia.com/gpu limit")
                if not pod.get("nodeSelector") and not pod.get("affinity"):
                    fail(f"{where}: a GPU worker without a nodeSelector for GPU nodes")
    for svc_f, svc in by_kind.get("Service", []):
        selector = svc["spec"].get("selector", {})
        targets = [w for w in workloads if all(w[1]["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in selector.items())]
        if not targets:
            fail(f"deploy/k8s/{svc_f}: the selector {selector} matches no workload")
        for p in svc["spec"].get("ports", []):
            names = {pp.get("name") for _, w in targets for c in w["spec"]["template"]["spec"]["containers"] for pp in c.get("ports", [])}
            if isinstance(p.get("targetPort"), str) and p["targetPort"] not in names:
                fail(f"deploy/k8s/{svc_f}: targetPort {p['targetPort']} is not a port of the selected pods")
    for what, seen in (("server Deployment", server_seen), ("GPU worker", gpu_seen), ("compile-only worker", compile_seen)):
        if not seen:
            fail(f"deploy/k8s: no {what}")
    ok(f"deploy/k8s: {len(objects)} objects (kustomization, namespaces, flags, $(VARS), probes, volumes, "
       f"server replicas/strategy/PVC, GPU and compile-only workers, service ports)")


def dockerignore_patterns(path):
    if not os.path.exists(path):
        return []
    return [l.strip() for l in read(path).splitlines() if l.strip() and not l.startswith("#")]


def ignored(relpath, patterns):
    parts = relpath.split("/")
    for pat in patterns:
        p = pat.lstrip("/")
        for i in range(1, len(parts) + 1):
            prefix = "/".join(parts[:i])
            if fnmatch.fnmatch(prefix, p) or (p.startswith("**/") and fnmatch.fnmatch(parts[i - 1], p[3:])):
                return True
    return False


def check_dockerfiles():
    folder = os.path.join(DEPLOY, "docker")
    files = sorted(f for f in os.listdir(folder) if f.startswith("Dockerfile.") and not f.endswith(".dockerignore"))
    for f in files:
        path = os.path.join(folder, f)
        where = rel(path)
        text = read(path).replace("\\\n", " ")
        patterns = dockerignore_patterns(path + ".dockerignore")
        stages = re.findall(r"^FROM\s+(\S+)(?:\s+AS\s+(\S+))?", text, re.M | re.I)
        if len(stages) < 2:
            fail(f"{where}: not multi-stage")
        if not any(s[0].startswith("debian:") for s in stages):
            fail(f"{where}: does not build from Debian")
        if "scripts/install-deps.sh" not in text:
            fail(f"{where}: does not install the packages of scripts/install-deps.sh")
        for m in re.finditer(r"^(COPY|ADD)\s+(.*)$", text, re.M):
            words = [w for w in m.group(2).split() if not w.startswith("--")]
            if "--from=" in m.group(2) or len(words) < 2:
                continue
            for src in words[:-1]:
                if src.startswith(("http://", "https://")):
                    continue
                if src == ".":
                    continue
                if not os.path.exists(os.path.join(ROOT, src)):
                    fail(f"{where}: {m.group(1)} {src}: not in the repository")
                elif ignored(src, patterns):
                    fail(f"{where}: {m.group(1)} {src}: excluded by {f}.dockerignore")
        final = text[[m.start() for m in re.finditer(r"^FROM\s", text, re.M)][-1]:]
        users = re.findall(r"^USER\s+(\S+)", final, re.M)
        if not users or users[-1].split(":")[0] in ("root", "0"):
            fail(f"{where}: the final stage does not run as a non-root USER")
        ep = re.search(r"^ENTRYPOINT\s+(\[.*\])", final, re.M)
        if not ep:
            fail(f"{where}: no ENTRYPOINT")
            continue
        entry = json.loads(ep.group(1))
        binary = os.path.basename(entry[0])
        if binary not in FLAGS:
            fail(f"{where}: ENTRYPOINT {entry[0]} is not a Mono daemon")
            continue
        cmd = re.search(r"^CMD\s+(\[.*\])", final, re.M)
        check_flags(where, binary, entry[1:] + (json.loads(cmd.group(1)) if cmd else []))
        if binary == "mono-worker" and "NVIDIA_VISIBLE_DEVICES" not in final:
            fail(f"{where}: the worker image does not ask the NVIDIA runtime for GPUs")
        for d in ("build", "tests", ".git"):
            if not ignored(d, patterns):
                fail(f"{where}: {d}/ is sent with the build context ({f}.dockerignore)")
    ok(f"deploy/docker: {len(files)} Dockerfiles (stages, COPY sources present and not ignored, non-root, flags)")
