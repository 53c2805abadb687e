// Fixes one fidelity bug of local-aws-sqs 2.0.2 in place (idempotent; run
// by install.sh after npm ci): its ChangeMessageVisibility reuses the
// receive path and so counts as a receive. On SQS, ApproximateReceiveCount
// counts receives only, and the redrive policy moves a message to the DLQ
// after maxReceiveCount receives; with the bug, a worker that shortens a
// message's visibility (an arrival candidate's redelivery, see
// docs/asyncevent.md) sends it to the DLQ twice as fast. The patch undoes
// the extra count right after the change. It fails loudly when the code it
// patches is not there (another local-aws-sqs version): update it then.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const file = fileURLToPath(new URL("node_modules/local-aws-sqs/dist/index.js", import.meta.url));
const from = "let n=Number(e);return l(this,D,Wt).call(this,r,n,!0),!0}";
const to = "let n=Number(e);return l(this,D,Wt).call(this,r,n,!0),r.record.attributes.ApproximateReceiveCount=String(Number(r.record.attributes.ApproximateReceiveCount)-1),!0}/*pacer:visibility-not-a-receive*/";
const src = readFileSync(file, "utf8");
if (src.includes("/*pacer:visibility-not-a-receive*/")) process.exit(0);
const n = src.split(from).length - 1;
if (n !== 1) {
  console.error(`standin: cannot patch local-aws-sqs's ChangeMessageVisibility (found the code ${n} times, want 1): update tools/standin/patch-sqs.mjs for this version`);
  process.exit(1);
}
writeFileSync(file, src.replace(from, to));
console.log("standin: patched local-aws-sqs: ChangeMessageVisibility no longer counts as a receive");
