"""Turns the fleet's YAML (deploy/kubernetes, the Kueue CRDs) into the JSON bundle that
tests/clients/fleet_manifests.mjs checks, plus one copy broken by each named mutation, so the test can show that
each lint rule fires on a broken copy.

Usage: fleet_manifests.py REPO OUT_DIR   writes OUT_DIR/clean.json and OUT_DIR/MUTATION.json for each
       fleet_manifests.py --list          prints the mutation names
"""
import copy
import json
import sys
from pathlib import Path

import yaml


def load(path):
    return [d for d in yaml.safe_load_all(Path(path).read_text()) if d is not None]


def job_of(bundle):
    return next(d for d in bundle["job"] if d["kind"] == "Job")


def kind_of(bundle, kind):
    return next(d for d in bundle["kueue"] if d["kind"] == kind)


def container(bundle):
    return job_of(bundle)["spec"]["template"]["spec"]["containers"][0]


def rules(bundle):
    return job_of(bundle)["spec"]["podFailurePolicy"]["rules"]


# Each mutation breaks one thing; the test expects the named rule to fire.
MUTATIONS = {
    "schema-enum": lambda b: job_of(b)["spec"].update(completionMode="Indexd"),
    "schema-kueue": lambda b: kind_of(b, "ClusterQueue")["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0].update(nominalQuota="nine"),
    "unknown-field": lambda b: job_of(b)["spec"].update(parallelsim=3),
    "unknown-field-kueue": lambda b: kind_of(b, "LocalQueue")["spec"].update(clusterQueueName="x"),
    "indexed-completions": lambda b: job_of(b)["spec"].pop("completions"),
    "failindex-needs-backoff": lambda b: job_of(b)["spec"].pop("backoffLimitPerIndex"),
    "per-index-needs-indexed": lambda b: job_of(b)["spec"].update(completionMode="NonIndexed"),
    "replacement-failed": lambda b: job_of(b)["spec"].update(podReplacementPolicy="TerminatingOrFailed"),
    "restart-never": lambda b: job_of(b)["spec"]["template"]["spec"].update(restartPolicy="OnFailure"),
    "rule-order": lambda b: rules(b).reverse(),
    "exit-codes": lambda b: rules(b)[1]["onExitCodes"].update(values=[1, 2, 3]),
    "requests": lambda b: container(b)["resources"].pop("requests"),
    "requests-low": lambda b: container(b)["resources"]["requests"].update(memory="64Mi"),
    "image": lambda b: container(b).pop("image"),
    "queue-label": lambda b: job_of(b)["metadata"].pop("labels"),
    "queue-unresolved": lambda b: job_of(b)["metadata"]["labels"].update({"kueue.x-k8s.io/queue-name": "no-such-queue"}),
    "quota": lambda b: job_of(b)["spec"].update(parallelism=5, completions=5),
    "manifest": lambda b: job_of(b)["spec"].update(completions=2, parallelism=2),
}


def main():
    repo, out = Path(sys.argv[1]), Path(sys.argv[2])
    bundle = {
        "job": load(repo / "deploy/kubernetes/job.yaml"),
        "kueue": load(repo / "deploy/kubernetes/kueue.yaml"),
        "crds": [d for f in sorted((repo / "tests/fleet/kueue-crds").glob("*.yaml")) for d in load(f)],
    }
    (out / "clean.json").write_text(json.dumps(bundle))
    for name, mutate in MUTATIONS.items():
        broken = copy.deepcopy(bundle)
        mutate(broken)
        (out / f"{name}.json").write_text(json.dumps(broken))


if __name__ == "__main__":
    if len(sys.argv) == 2 and sys.argv[1] == "--list":
        print("\n".join(MUTATIONS))
    else:
        main()
