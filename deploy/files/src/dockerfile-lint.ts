import { DockerfileParser, Env, type Instruction } from "dockerfile-ast";

/**
 * The Dockerfile rules that matter for this image, after hadolint's (no PyPI
 * and no hadolint binary here, so they are checked over dockerfile-ast's parse):
 * a base image pinned by digest and never `latest` (DL3006, DL3007), a numeric
 * non-root USER in the final stage (DL3002; numeric so Kubernetes can enforce
 * runAsNonRoot), a HEALTHCHECK, no secret-looking ENV or ARG (build arguments and
 * environment stay in the image's history), COPY rather than ADD (DL3020), and
 * exec-form CMD/ENTRYPOINT so signals reach Node (DL3025).
 */
export interface DockerfileFinding {
  /** 1-based line of the instruction. */
  line: number;
  rule: "pinned-base" | "non-root-user" | "healthcheck" | "secret-in-build" | "copy-not-add" | "exec-form";
  message: string;
}

const DIGEST = /@sha256:[0-9a-f]{64}$/;
const SECRET_NAME = /(SECRET|PASSWORD|PASSWD|TOKEN|PRIVATE|API_?KEY|CREDENTIAL)/i;

export function lintDockerfile(text: string): DockerfileFinding[] {
  const dockerfile = DockerfileParser.parse(text);
  const findings: DockerfileFinding[] = [];
  const at = (i: Instruction) => i.getRange().start.line + 1;
  const instructions = dockerfile.getInstructions();
  const froms = dockerfile.getFROMs();
  if (froms.length === 0) return [{ line: 1, rule: "pinned-base", message: "no FROM" }];

  // Global ARGs (before the first FROM) are the only ones a FROM can use.
  const firstFrom = at(froms[0]!);
  const globalArgs = new Map<string, string | undefined>();
  for (const arg of dockerfile.getARGs()) {
    const property = arg.getProperty();
    if (at(arg) < firstFrom && property) globalArgs.set(property.getName(), property.getValue() ?? undefined);
  }
  const stages = new Set<string>();
  for (const from of froms) {
    const written = from.getImage() ?? "";
    const image = written.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, name: string) => globalArgs.get(name) ?? `\${${name}}`);
    if (!stages.has(image)) {
      if (image.includes("${")) findings.push({ line: at(from), rule: "pinned-base", message: `${written}: a build argument without a default` });
      else {
        if (!DIGEST.test(image)) findings.push({ line: at(from), rule: "pinned-base", message: `${image}: not pinned by digest (@sha256:…)` });
        const tag = /^[^@]*?:([^/@:]+)(@|$)/.exec(image)?.[1];
        if (tag === undefined || tag === "latest")
          findings.push({ line: at(from), rule: "pinned-base", message: `${image}: give a version tag, never latest` });
      }
    }
    const stage = from.getBuildStage();
    if (stage) stages.add(stage);
  }

  const finalStage = instructions.filter((i) => at(i) > at(froms[froms.length - 1]!));
  const users = finalStage.filter((i) => i.getKeyword() === "USER");
  const user = users[users.length - 1]?.getArgumentsContent()?.trim();
  const uid = user?.split(":")[0];
  if (uid === undefined)
    findings.push({ line: at(froms[froms.length - 1]!), rule: "non-root-user", message: "the final stage sets no USER (it would run as root)" });
  else if (!/^[0-9]+$/.test(uid) || Number(uid) === 0)
    findings.push({ line: at(users[users.length - 1]!), rule: "non-root-user", message: `USER ${user}: use a numeric, non-zero UID` });
  const healthchecks = finalStage.filter((i) => i.getKeyword() === "HEALTHCHECK");
  const healthcheck = healthchecks[healthchecks.length - 1];
  if (!healthcheck || /^\s*NONE\s*$/i.test(healthcheck.getArgumentsContent() ?? ""))
    findings.push({ line: at(froms[froms.length - 1]!), rule: "healthcheck", message: "the final stage has no HEALTHCHECK" });

  for (const i of instructions) {
    const keyword = i.getKeyword();
    if (keyword === "ENV" || keyword === "ARG") {
      const names = i instanceof Env ? i.getProperties().map((p) => p.getName()) : [i.getArgumentsContent()?.split("=")[0] ?? ""];
      for (const name of names)
        if (SECRET_NAME.test(name))
          findings.push({ line: at(i), rule: "secret-in-build", message: `${keyword} ${name}: secrets belong in the runtime environment, not in the image` });
    }
    if (keyword === "ADD") findings.push({ line: at(i), rule: "copy-not-add", message: "use COPY (ADD also fetches URLs and unpacks archives)" });
    if ((keyword === "CMD" || keyword === "ENTRYPOINT") && !(i.getArgumentsContent() ?? "").trim().startsWith("["))
      findings.push({ line: at(i), rule: "exec-form", message: `${keyword} in shell form: signals would reach the shell, not Node` });
  }
  return findings;
}
