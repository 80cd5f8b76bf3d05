import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddingModel } from '../knowledge/interfaces.js';

export interface EmbeddingSuiteOptions {
  /** A fresh model; the suite closes each one it creates. */
  create(): Promise<EmbeddingModel> | EmbeddingModel;
  /** The model understands meaning: a paraphrase must score closer than an unrelated sentence. */
  readonly semantic?: boolean;
}

const dot = (a: Float32Array, b: Float32Array) => {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] as number) * (b[i] as number);
  return sum;
};

/** About `chars` characters of varied words (a fixed pseudo-random sequence, so runs are repeatable). */
function longText(chars: number): string {
  const words = [
    'protein',
    'signal',
    'the',
    'of',
    'cells',
    'increased',
    'patients',
    'were',
    'analysis',
    'expression',
    'and',
    'model',
    'results',
    'in',
    'data',
    'treatment',
    'we',
    'response',
    'study',
    'significant',
  ];
  const out: string[] = [];
  let length = 0;
  let seed = 42;
  while (length <= chars) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    const word = words[seed % words.length] as string;
    out.push(word);
    length += word.length + 1;
  }
  return out.join(' ');
}

/**
 * The behaviour every `EmbeddingModel` must have. Call it inside a vitest test file:
 * `describeEmbeddingModel('builtin', { create: () => builtinEmbedder(), semantic: true })`.
 * `dimensions` is checked after the first `embed` (a remote model may learn it from the first answer).
 */
export function describeEmbeddingModel(name: string, options: EmbeddingSuiteOptions): void {
  describe(`EmbeddingModel conformance: ${name}`, () => {
    let model: EmbeddingModel;
    beforeAll(async () => {
      model = await options.create();
    });
    afterAll(async () => {
      await model.close?.();
    });

    const expectUnitVectors = (vectors: Float32Array[]) => {
      for (const v of vectors) {
        expect(v).toBeInstanceOf(Float32Array);
        expect(v.length).toBe(model.dimensions);
        expect(v.every(Number.isFinite)).toBe(true);
        expect(Math.abs(Math.sqrt(dot(v, v)) - 1)).toBeLessThanOrEqual(1e-3);
      }
    };

    it('has a non-empty, stable id', async () => {
      expect(model.id).toMatch(/\S/);
      const other = await options.create();
      try {
        expect(other.id).toBe(model.id);
      } finally {
        await other.close?.();
      }
      await model.embed(['id check']);
      expect(model.id).toBe(other.id);
    });

    it('gives unit vectors of its dimensions', async () => {
      const vectors = await model.embed(['first text', 'a second, different text', 'third']);
      expect(vectors).toHaveLength(3);
      expect(Number.isInteger(model.dimensions)).toBe(true);
      expect(model.dimensions).toBeGreaterThan(0);
      expectUnitVectors(vectors);
    });

    it('keeps the order of a batch', async () => {
      const texts = ['apples and pears', 'the stock market fell sharply', 'a recipe for bread', 'quantum field theory', 'football results of the weekend'];
      const batch = await model.embed(texts);
      expect(batch).toHaveLength(texts.length);
      const singles = await Promise.all(texts.map(async (t) => (await model.embed([t]))[0] as Float32Array));
      for (let i = 0; i < texts.length; i++) {
        const same = dot(batch[i] as Float32Array, singles[i] as Float32Array);
        expect(same).toBeGreaterThan(0.9999);
        for (let j = 0; j < texts.length; j++) {
          if (j !== i) expect(dot(batch[i] as Float32Array, singles[j] as Float32Array)).toBeLessThan(same);
        }
      }
    });

    it('is deterministic: the same text gives the same vector', async () => {
      const [a] = await model.embed(['the same text, embedded twice']);
      const [b] = await model.embed(['the same text, embedded twice']);
      expect(a?.length).toBe(model.dimensions);
      let worst = 0;
      for (let i = 0; i < (a as Float32Array).length; i++) worst = Math.max(worst, Math.abs(((a as Float32Array)[i] as number) - ((b as Float32Array)[i] as number)));
      expect(worst).toBeLessThanOrEqual(1e-5);
    });

    it('gives an empty array for no texts', async () => {
      expect(await model.embed([])).toEqual([]);
    });

    it('gives a blank text a vector', async () => {
      const vectors = await model.embed(['', '   ']);
      expect(vectors).toHaveLength(2);
      expectUnitVectors(vectors);
    });

    it('truncates a very long text (100,000 characters) instead of rejecting it', async () => {
      const text = longText(100_000);
      expect(text.length).toBeGreaterThanOrEqual(100_000);
      const vectors = await model.embed(['short one', text, 'short two']);
      expect(vectors).toHaveLength(3);
      expectUnitVectors(vectors);
    });

    it('embeds a batch of 100 in order', async () => {
      const topics = ['cooking', 'astronomy', 'football', 'banking', 'poetry', 'chemistry', 'gardening', 'sailing', 'music', 'law'];
      const texts = Array.from({ length: 100 }, (_, i) => `note ${i} about ${topics[i % 10]} and ${topics[(i * 7 + 3) % 10]}, item ${i * 13}`);
      const vectors = await model.embed(texts);
      expect(vectors).toHaveLength(100);
      expectUnitVectors(vectors);
      for (const i of [0, 41, 99]) {
        const [single] = await model.embed([texts[i] as string]);
        expect(dot(single as Float32Array, vectors[i] as Float32Array)).toBeGreaterThan(0.9999);
      }
    });

    if (options.semantic) {
      it('puts a paraphrase closer than an unrelated sentence', async () => {
        const [q, para, other] = await model.embed(['How do I reset my password?', 'I forgot my password and need to change it', 'The cat sat on the mat']);
        expect(dot(q as Float32Array, para as Float32Array)).toBeGreaterThan(dot(q as Float32Array, other as Float32Array));
      });
    }

    it('closes idempotently', async () => {
      const used = await options.create();
      await used.embed(['warm up']);
      await used.close?.();
      await used.close?.();
      const unused = await options.create();
      await unused.close?.();
      await unused.close?.();
    });
  });
}
