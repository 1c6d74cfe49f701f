// ../shared/bench/pipeline_vs_floor.sh runs this path by default: the benchmark is
// bench/pipeline.ts (deno task bench pipeline).
import "../bench/pipeline.ts";
