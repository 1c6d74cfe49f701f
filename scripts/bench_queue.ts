// ../shared/bench/queue_vs_bullmq.sh runs this path by default: the benchmark is
// bench/queue.ts (deno task bench queue).
import "../bench/queue.ts";
