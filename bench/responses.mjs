// Time to the first text on the responses route against the completions route, for the same
// agent (a project with no knowledge, no tools, no MCP servers) on the same server: p50/p99 of
// the time to the first `response.output_text.delta` event and to the first content chunk,
// over sequential streaming requests, the two routes interleaved request by request. The
// added time is the responses route's p50 minus the completions route's (target: at most 1 ms):
// what the responses route does on top (the stored response written before the run starts,
// the semantic events before the first delta). BENCH_STORAGE (bench/modes.mjs) picks the
// server's storage mode; with `both`, each mode's pair is measured.
import { interleaved, round, streamOnce } from './completions.mjs';
import { withStorageModes } from './modes.mjs';
import { startBenchUpstream } from './upstream.mjs';

export async function responsesOverhead() {
  const n = Number(process.env.BENCH_RESPONSES ?? 200);
  return withStorageModes('responses', async (modes) => {
    const upstream = await startBenchUpstream({ words: 20 });
    const served = [];
    try {
      for (const mode of modes) {
        const platform = await mode.openPlatform();
        const { key, userId } = await platform.createUserWithKey({ name: 'bench' });
        const agent = (await platform.createProject({ userId }, { name: 'agent', model: 'gpt-bench', provider: 'openai' })).project.id;
        await platform.close();
        const server = await mode.start({ OPENAI_BASE_URL: upstream.url, OPENAI_API_KEY: 'sk-bench', LOG_LEVEL: 'silent' });
        served.push({ mode, server, headers: { authorization: `Bearer ${key}` }, agent });
      }
      const label = (s, side) => (served.length === 1 ? side : `${s.mode.label} ${side}`);
      const question = 'What does topic 12 say?';
      const sides = await interleaved(
        n,
        Object.fromEntries(
          served.flatMap((s) => [
            [label(s, 'completions'), () => streamOnce(`${s.server.url}/api/v1/chat/completions`, s.headers, { model: s.agent, messages: [{ role: 'user', content: question }], stream: true })],
            [label(s, 'responses'), () => streamOnce(`${s.server.url}/api/v1/responses`, s.headers, { model: s.agent, input: question, stream: true }, '"type":"response.output_text.delta"')],
            [
              label(s, 'responses, store false'),
              () => streamOnce(`${s.server.url}/api/v1/responses`, s.headers, { model: s.agent, input: question, stream: true, store: false }, '"type":"response.output_text.delta"'),
            ],
          ]),
        ),
      );
      const added = (s) => ({
        responses: round(sides[label(s, 'responses')].ttft.p50 - sides[label(s, 'completions')].ttft.p50),
        responsesStoreFalse: round(sides[label(s, 'responses, store false')].ttft.p50 - sides[label(s, 'completions')].ttft.p50),
      });
      const perMode = served.length === 1 ? added(served[0]) : Object.fromEntries(served.map((s) => [s.mode.label, added(s)]));
      return {
        name: `responses route: time to the first output_text.delta vs the completions route's first content chunk (ms, ${n} sequential streaming requests per side, interleaved; ${modes.map((m) => m.label).join(' and ')})`,
        sides,
        addedTtftP50: perMode,
        ratio: Math.max(...served.map((s) => added(s).responses)),
        lowerIsBetter: true,
        target: 1,
      };
    } finally {
      await Promise.all(served.map((s) => s.server.stop()));
      await upstream.close();
    }
  });
}
