/**
 * The loopback fake vLLM as a process of its own, so a test can SIGSTOP it: prints its URL on one
 * line of stdout, then serves until killed. Options come as one JSON argument (FakeVllmOptions).
 */
import { startFakeVllm } from "../../unit/benchmarks/fake-vllm";

void startFakeVllm(JSON.parse(process.argv[2] ?? "{}")).then((fake) => process.stdout.write(`${fake.url}\n`));
