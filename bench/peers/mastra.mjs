// Mastra's side of `make bench-peers`: @mastra/core in this process, over ai's
// MockLanguageModelV3 (doStream and doGenerate), one workload per process:
//
//   node bench/peers/mastra.mjs WORKLOAD '{"deltas": 2000, ...}'
//
// Prints one JSON line: the workload's figures, the process's peak RSS, and
// `ok` (every workload checks its own output, so nothing is fast by doing less).
// `cold` reports how long `import('@mastra/core/agent')` and one Agent took from
// process start.
import { performance } from 'node:perf_hooks';

const started = performance.timeOrigin;
const { Agent } = await import('@mastra/core/agent');
const coldMs = Date.now() - started;
const { MockLanguageModelV3 } = await import('ai/test');
const { simulateReadableStream } = await import('ai');
const { ResponseCache } = await import('@mastra/core/processors');
const { InMemoryServerCache } = await import('@mastra/core/cache');

const [workload, paramsJson] = process.argv.slice(2);
const params = JSON.parse(paramsJson ?? '{}');

const usage = { inputTokens: { total: 5, noCache: 5, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };
const finish = { unified: 'stop', raw: 'stop' };

/** A mock whose stream is `words` text deltas and whose generate answers `words` joined. */
function mockModel(words) {
  const text = words.join('');
  return new MockLanguageModelV3({
    doGenerate: async () => ({ content: [{ type: 'text', text }], finishReason: finish, usage, warnings: [] }),
    doStream: async () => ({
      stream: simulateReadableStream({
        initialDelayInMs: null,
        chunkDelayInMs: null,
        chunks: [
          { type: 'stream-start', warnings: [] },
          { type: 'text-start', id: 't' },
          ...words.map((delta) => ({ type: 'text-delta', id: 't', delta })),
          { type: 'text-end', id: 't' },
          { type: 'finish', finishReason: finish, usage },
        ],
      }),
    }),
  });
}

class PassThrough {
  constructor(id) {
    this.id = id;
  }
  // Synchronous, like agentd's (bench/peers/agentd_app.py): Mastra awaits the result either way.
  processOutputStream({ part }) {
    return part;
  }
}

const words = (n) => Array.from({ length: n }, (_, i) => `w${i} `);
const percentile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
const stats = (ms) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return { p50_ms: percentile(sorted, 0.5), p99_ms: percentile(sorted, 0.99) };
};
function check(condition, what) {
  if (!condition) throw new Error(`check failed: ${what}`);
}

async function stream(processors) {
  const deltas = words(params.deltas);
  const expected = deltas.join('');
  const agent = new Agent({
    id: 'stream',
    name: 'stream',
    instructions: 'echo',
    model: mockModel(deltas),
    outputProcessors: Array.from({ length: processors }, (_, i) => new PassThrough(`p${i}`)),
  });
  const once = async () => {
    const start = performance.now();
    const output = await agent.stream('go');
    let got = 0;
    let text = '';
    for await (const chunk of output.fullStream) {
      if (chunk.type === 'text-delta') {
        got += 1;
        text += chunk.payload.text;
      }
    }
    const seconds = (performance.now() - start) / 1000;
    check(got === deltas.length && text === expected, `stream: ${got} deltas`);
    return got / seconds;
  };
  for (let i = 0; i < params.warmup; i++) await once();
  const rates = [];
  for (let i = 0; i < params.timed; i++) rates.push(await once());
  rates.sort((a, b) => a - b);
  return { chunks_per_s: rates[Math.floor(rates.length / 2)] };
}

async function generate() {
  const reply = 'one two three four five';
  const agent = new Agent({ id: 'gen', name: 'gen', instructions: 'echo', model: mockModel([reply]) });
  const once = async () => {
    const start = performance.now();
    const result = await agent.generate(reply);
    const ms = performance.now() - start;
    check(result.text === reply, `generate: ${result.text}`);
    return ms;
  };
  for (let i = 0; i < params.warmup; i++) await once();
  const ms = [];
  for (let i = 0; i < params.calls; i++) ms.push(await once());
  return stats(ms);
}

async function concurrent() {
  const reply = 'one two three four five';
  const agent = new Agent({ id: 'gen', name: 'gen', instructions: 'echo', model: mockModel([reply]) });
  const batch = async () => {
    const start = performance.now();
    const results = await Promise.all(Array.from({ length: params.concurrency }, () => agent.generate(reply)));
    const ms = performance.now() - start;
    check(results.every((r) => r.text === reply), 'concurrent: every reply');
    return ms;
  };
  for (let i = 0; i < params.warmup; i++) await batch();
  const ms = [];
  for (let i = 0; i < params.batches; i++) ms.push(await batch());
  ms.sort((a, b) => a - b);
  return { batch_ms: ms[Math.floor(ms.length / 2)] };
}

async function cache() {
  const reply = 'Paris is the capital of France.';
  const model = mockModel([reply]);
  const agent = new Agent({
    id: 'cached',
    name: 'cached',
    instructions: 'echo',
    model,
    inputProcessors: [new ResponseCache({ cache: new InMemoryServerCache(), scope: null })],
  });
  const once = async () => {
    const start = performance.now();
    const result = await agent.generate('What is the capital of France?');
    const ms = performance.now() - start;
    check(result.text === reply, `cache: ${result.text}`);
    return ms;
  };
  await once(); // the miss that fills the cache
  const modelCalls = () => model.doGenerateCalls.length + model.doStreamCalls.length;
  const before = modelCalls();
  check(before === 1, `cache: ${before} model calls to fill it`);
  const ms = [];
  for (let i = 0; i < params.calls; i++) ms.push(await once());
  check(modelCalls() === before, `cache: ${modelCalls() - before} model calls on hits`);
  return stats(ms);
}

const workloads = {
  cold: async () => ({ cold_ms: coldMs, agent: new Agent({ id: 'a', name: 'a', instructions: 'x', model: mockModel(['x']) }).id === 'a' }),
  stream0: () => stream(0),
  stream3: () => stream(3),
  generate,
  concurrent,
  cache,
};

const run = workloads[workload];
if (!run) throw new Error(`no workload ${workload}`);
const result = await run();
// resourceUsage().maxRSS is in kilobytes (getrusage's ru_maxrss).
console.log(JSON.stringify({ ...result, ok: true, peak_rss_kb: process.resourceUsage().maxRSS }));
