// Starts local-aws-sqs on 127.0.0.1 and prints one line, "READY <port>",
// once it accepts connections. Usage: node sqs-server.mjs <port>
// Pacer's Go launcher (sdk/standin) starts it and waits for that line.
import { createSqsServer } from "local-aws-sqs";

const port = Number(process.argv[2] ?? 0);
const server = await createSqsServer({
  port,
  hostname: "127.0.0.1",
  emulateQueueCreationLifecycle: false,
});
const addr = server.address();
console.log(`READY ${typeof addr === "object" && addr ? addr.port : port}`);
const stop = () => server.close(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
// Exit when the parent closes our stdin (the launcher died without signalling).
process.stdin.on("end", () => process.exit(0));
process.stdin.resume();
