// Validates the fleet manifests (a JSON bundle {job: [docs], kueue: [docs], crds: [docs]} made
// from deploy/kubernetes/*.yaml by fleet_manifests.py) the way a cluster would see them: Kubernetes
// objects against the npm kubernetes-models schemas, Kueue objects against Kueue's own CRD schemas
// with ajv, then a lint for what the schemas miss and an API server or Kueue would reject or never
// admit. Prints one line per problem, "RULE: where: what", and exits 1 when there is any.
// With several bundles (node fleet_manifests.mjs CLEAN.json MUTANT=RULE.json...), the first must be
// clean and each further one, named MUTANT=RULE, must report RULE: one process checks them all.
import fs from "node:fs";
import Ajv from "ajv";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Job } from "kubernetes-models/batch/v1/Job";

const nameOf = (o) => `${o.kind}/${o.metadata?.name ?? "?"}`;
const models = { "v1/ConfigMap": ConfigMap, "batch/v1/Job": Job };
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });  // int32, int64: Kubernetes formats
const compiled = new Map();

function check(bundle) {
  const problems = [];
  const report = (rule, where, what) => problems.push(`${rule}: ${where}: ${what}`);

  // --- Kubernetes objects: schema, then unknown fields. The models' validators are compiled code,
  // so the known fields are found by watching which ones a validator reads (a Proxy on every object):
  // a field it never looks at is one the schema does not have (an API server would prune or reject it).
  function watched(value, path, reads) {
    if (value === null || typeof value !== "object") return value;
    return new Proxy(value, {
      get(target, key) {
        if (typeof key === "string") reads.add(`${path}/${key}`);
        return watched(target[key], `${path}/${key}`, reads);
      },
    });
  }
  function unreadFields(value, path, reads, out) {
    if (value === null || typeof value !== "object") return;
    for (const key of Object.keys(value)) {
      const child = `${path}/${key}`;
      if (!reads.has(child)) out.push(child);
      else unreadFields(value[key], child, reads, out);
    }
  }
  for (const doc of bundle.job) {
    const Model = models[`${doc.apiVersion}/${doc.kind}`];
    if (!Model) {
      report("schema", nameOf(doc), `no schema for ${doc.apiVersion} ${doc.kind}`);
      continue;
    }
    try {
      new Model(doc).validate();
    } catch (e) {
      report("schema", nameOf(doc), e.message.split("\n").join("; "));
    }
    const reads = new Set();
    const model = new Model(doc);
    try {
      model.validate.call(watched(model, "", reads));
    } catch {}
    const unknown = [];
    unreadFields(doc, "", reads, unknown);
    for (const path of unknown) report("unknown-field", nameOf(doc), `${path} is not in the schema`);
  }

  // --- Kueue objects: ajv against the CRD's v1beta2 openAPIV3Schema, then unknown fields.
  const crdSchemas = {};
  for (const crd of bundle.crds)
    for (const version of crd.spec.versions)
      crdSchemas[`${crd.spec.group}/${version.name}/${crd.spec.names.kind}`] =
        version.schema.openAPIV3Schema;
  function unknownBySchema(value, schema, path, out) {
    if (!schema || value === null || typeof value !== "object") return;
    if (schema["x-kubernetes-preserve-unknown-fields"]) return;
    if (Array.isArray(value)) {
      value.forEach((item, i) => unknownBySchema(item, schema.items, `${path}/${i}`, out));
      return;
    }
    if (!schema.properties) return;  // a map (additionalProperties) or a free object (metadata)
    for (const [key, child] of Object.entries(value)) {
      if (!(key in schema.properties)) out.push(`${path}/${key}`);
      else unknownBySchema(child, schema.properties[key], `${path}/${key}`, out);
    }
  }
  for (const doc of bundle.kueue) {
    const schema = crdSchemas[`${doc.apiVersion}/${doc.kind}`];
    if (!schema) {
      report("schema", nameOf(doc), `no CRD schema for ${doc.apiVersion} ${doc.kind}`);
      continue;
    }
    if (!compiled.has(schema)) compiled.set(schema, ajv.compile(schema));
    const validate = compiled.get(schema);
    if (!validate(doc))
      for (const e of validate.errors) report("schema", nameOf(doc), `${e.instancePath || "/"} ${e.message}`);
    const unknown = [];
    unknownBySchema(doc, schema, "", unknown);
    for (const path of unknown) report("unknown-field", nameOf(doc), `${path} is not in the CRD schema`);
  }

  // --- Lint: what schemas cannot say.
  const quantity = (text) => {
    const m = /^([0-9.]+)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(String(text));
    if (!m) return NaN;
    const scale = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };
    return Number(m[1]) * (m[2] ? scale[m[2]] : 1);
  };
  const REBOX_VERDICTS = [1, 2, 3, 4];  // docs/fleet.md: bad input, BLOCKER, verification, no such line
  const PEAK_RSS_BYTES = 148e6;         // README, Performance: convert + verify with a real tokenizer
  const byKind = (kind) => bundle.kueue.filter((o) => o.kind === kind);

  for (const job of bundle.job.filter((o) => o.kind === "Job")) {
    const where = nameOf(job);
    const spec = job.spec ?? {};
    const pod = spec.template?.spec ?? {};
    const containers = [...(pod.containers ?? []), ...(pod.initContainers ?? [])];
    const rules = spec.podFailurePolicy?.rules ?? [];
    const namespace = job.metadata?.namespace ?? "default";

    if (spec.completionMode === "Indexed" && spec.completions == null)
      report("indexed-completions", where, "completionMode Indexed without completions (the API server rejects it)");
    if (spec.backoffLimitPerIndex != null && spec.completionMode !== "Indexed")
      report("per-index-needs-indexed", where, "backoffLimitPerIndex needs completionMode Indexed");
    if ((spec.backoffLimitPerIndex != null || spec.podFailurePolicy) && pod.restartPolicy !== "Never")
      report("restart-never", where, `restartPolicy ${pod.restartPolicy ?? "(unset)"}: podFailurePolicy and backoffLimitPerIndex need Never`);
    if (rules.some((r) => r.action === "FailIndex") && spec.backoffLimitPerIndex == null)
      report("failindex-needs-backoff", where, "a FailIndex rule without backoffLimitPerIndex (the API server rejects it)");
    if (spec.maxFailedIndexes != null && spec.backoffLimitPerIndex == null)
      report("failindex-needs-backoff", where, "maxFailedIndexes without backoffLimitPerIndex");
    if (spec.podFailurePolicy && spec.podReplacementPolicy && spec.podReplacementPolicy !== "Failed")
      report("replacement-failed", where, `podReplacementPolicy ${spec.podReplacementPolicy}: a podFailurePolicy needs Failed`);

    // Rule order: first match wins. A disrupted pod must be ignored before any exit-code rule can
    // fail its index; rebox's deterministic codes fail the index; nothing may stop a retry of the rest.
    const ignoreAt = rules.findIndex((r) => r.action === "Ignore" && (r.onPodConditions ?? []).some((c) => c.type === "DisruptionTarget"));
    const failAt = rules.findIndex((r) => r.action === "FailIndex" && r.onExitCodes);
    if (ignoreAt < 0) report("rule-order", where, "no Ignore rule for the DisruptionTarget condition (a preempted pod would count as a failure)");
    if (failAt < 0) report("rule-order", where, "no FailIndex rule on rebox's exit codes (deterministic failures would be retried)");
    if (ignoreAt >= 0 && failAt >= 0 && failAt < ignoreAt)
      report("rule-order", where, `the FailIndex rule (#${failAt}) precedes the DisruptionTarget Ignore rule (#${ignoreAt}): a pod disrupted mid-write would fail its index`);
    rules.forEach((r, i) => {
      const codes = r.onExitCodes;
      if (!codes) return;
      const stops = r.action === "FailIndex" || r.action === "FailJob";
      if (stops && codes.operator === "NotIn")
        report("rule-order", where, `rule #${i} ${r.action} on exit codes NotIn: it also fails OOM kills (137) and signals, which must retry`);
      if (r.action === "FailIndex" && codes.operator === "In") {
        const values = [...codes.values].sort();
        if (JSON.stringify(values) !== JSON.stringify(REBOX_VERDICTS))
          report("exit-codes", where, `FailIndex on [${values}], rebox's deterministic codes are [${REBOX_VERDICTS}]`);
        if (codes.containerName && !containers.some((c) => c.name === codes.containerName))
          report("exit-codes", where, `rule #${i} names container ${codes.containerName}, which the pod does not have`);
      }
    });

    const podRequests = {};
    for (const c of containers) {
      const req = c.resources?.requests ?? {};
      if (!c.image) report("image", where, `container ${c.name} has no image`);
      for (const resource of ["cpu", "memory"])
        if (req[resource] == null) report("requests", where, `container ${c.name} has no ${resource} request (Kueue sizes the quota from requests)`);
      for (const [resource, value] of Object.entries(req))
        podRequests[resource] = (podRequests[resource] ?? 0) + quantity(value);
      if (req.memory != null && quantity(req.memory) < PEAK_RSS_BYTES)
        report("requests", where, `container ${c.name} requests ${req.memory} of memory, below rebox's measured peak RSS of 148 MB`);
    }

    // The manifest in the ConfigMap: completions must match its model lines.
    for (const volume of pod.volumes ?? []) {
      if (!volume.configMap) continue;
      const map = bundle.job.find((o) => o.kind === "ConfigMap" && o.metadata?.name === volume.configMap.name);
      if (!map) {
        report("manifest", where, `volume ${volume.name} names ConfigMap ${volume.configMap.name}, which is not in the bundle`);
        continue;
      }
      for (const [key, text] of Object.entries(map.data ?? {})) {
        const lines = text.split("\n").filter((l, i) => l !== "" && !(i === 0 && l.startsWith("#")));
        if (spec.completions != null && lines.length !== spec.completions)
          report("manifest", where, `completions ${spec.completions}, but ${map.metadata.name}/${key} has ${lines.length} model lines (extra indexes exit 4, missing ones are never converted)`);
      }
    }

    // Kueue: the label must resolve to a LocalQueue in this namespace, its ClusterQueue must admit
    // the namespace, and parallelism x requests must fit the quota of the covered resources.
    const queueName = job.metadata?.labels?.["kueue.x-k8s.io/queue-name"];
    if (!queueName) {
      report("queue-label", where, "no kueue.x-k8s.io/queue-name label (Kueue ignores the Job, it runs unqueued)");
      continue;
    }
    const localQueue = byKind("LocalQueue").find((q) => q.metadata?.name === queueName && (q.metadata?.namespace ?? "default") === namespace);
    if (!localQueue) {
      report("queue-label", where, `queue-name ${queueName}: no LocalQueue of that name in namespace ${namespace} (the Workload is never admitted)`);
      continue;
    }
    const clusterQueue = byKind("ClusterQueue").find((q) => q.metadata?.name === localQueue.spec?.clusterQueue);
    if (!clusterQueue) {
      report("queue-label", where, `LocalQueue ${queueName} points to ClusterQueue ${localQueue.spec?.clusterQueue}, which does not exist`);
      continue;
    }
    const selector = clusterQueue.spec?.namespaceSelector;
    const nsName = selector?.matchLabels?.["kubernetes.io/metadata.name"];
    if (selector == null || (nsName != null && nsName !== namespace))
      report("queue-label", where, `ClusterQueue ${clusterQueue.metadata.name} does not select namespace ${namespace}`);
    const pods = Math.min(spec.parallelism ?? 1, spec.completions ?? 1);
    const quota = {};
    for (const group of clusterQueue.spec?.resourceGroups ?? []) {
      for (const flavor of group.flavors ?? []) {
        if (!byKind("ResourceFlavor").some((f) => f.metadata?.name === flavor.name))
          report("queue-label", where, `ClusterQueue flavor ${flavor.name} has no ResourceFlavor`);
        for (const r of flavor.resources ?? []) quota[r.name] = Math.max(quota[r.name] ?? 0, quantity(r.nominalQuota));
      }
    }
    for (const [resource, perPod] of Object.entries(podRequests)) {
      if (!(resource in quota))
        report("quota", where, `requests ${resource}, which ClusterQueue ${clusterQueue.metadata.name} does not cover (never admitted)`);
      else if (pods * perPod > quota[resource])
        report("quota", where, `${pods} pods x ${resource} ${perPod} = ${pods * perPod} exceeds the nominalQuota ${quota[resource]} (one Workload: never admitted)`);
    }
  }

  return problems;
}

const [cleanPath, ...mutants] = process.argv.slice(2);
const clean = JSON.parse(fs.readFileSync(cleanPath, "utf8"));
const cleanProblems = check(clean);
for (const p of cleanProblems) console.log(p);
if (cleanProblems.length) process.exit(1);
console.log(`fleet manifests: ${clean.job.length + clean.kueue.length} objects valid, lint clean`);
let missed = 0;
for (const path of mutants) {
  const [mutation, rule] = path.replace(/^.*\//, "").replace(/\.json$/, "").split("=");
  const problems = check(JSON.parse(fs.readFileSync(path, "utf8")));
  const hit = problems.find((p) => p.startsWith(`${rule}: `));
  if (hit) console.log(`fires: ${mutation} -> ${hit}`);
  else {
    console.log(`MISSED: mutation ${mutation} did not report ${rule}: ${problems.join(" | ") || "no problems"}`);
    missed++;
  }
}
if (missed) process.exit(1);
