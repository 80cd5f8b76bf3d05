import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddingModel } from '../knowledge/interfaces.js';

export interface EmbeddingSuiteOptions {
  create(): Promise<EmbeddingModel> | EmbeddingModel;
  /** The model understands meaning (a paraphrase is closer than an unrelated sentence). */
  readonly semantic?: boolean;
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * (b[i] as number), 0);

/** The behaviour every `EmbeddingModel` must have. */
export function describeEmbeddingModel(name: string, options: EmbeddingSuiteOptions): void {
  describe(`EmbeddingModel conformance: ${name}`, () => {
    let model: EmbeddingModel;
    beforeAll(async () => {
      model = await options.create();
    });
    afterAll(async () => {
      await model.close?.();
    });

    it('has a stable id and gives unit vectors of its dimensions, in order', async () => {
      expect(model.id).toMatch(/\S/);
      const texts = ['first text', 'a second, different text', 'third'];
      const vectors = await model.embed(texts);
      expect(vectors).toHaveLength(3);
      expect(model.dimensions).toBeGreaterThan(0);
      for (const v of vectors) {
        expect(v).toBeInstanceOf(Float32Array);
        expect(v.length).toBe(model.dimensions);
        expect(Math.sqrt(dot(v, v))).toBeCloseTo(1, 3);
      }
      const [again] = await model.embed(['a second, different text']);
      expect(dot(again as Float32Array, vectors[1] as Float32Array)).toBeCloseTo(1, 4);
      expect(dot(again as Float32Array, vectors[0] as Float32Array)).toBeLessThan(0.9999);
    });

    it('is deterministic, takes an empty batch, a blank text, a long text and a large batch', async () => {
      const [a] = await model.embed(['the same text']);
      const [b] = await model.embed(['the same text']);
      for (let i = 0; i < (a as Float32Array).length; i++) expect((a as Float32Array)[i]).toBeCloseTo((b as Float32Array)[i] as number, 5);
      expect(await model.embed([])).toEqual([]);
      expect(await model.embed(['   '])).toHaveLength(1);
      const [long] = await model.embed(['word '.repeat(20_000)]);
      expect(long?.length).toBe(model.dimensions);
      const many = await model.embed(Array.from({ length: 100 }, (_, i) => `sentence number ${i}`));
      expect(many).toHaveLength(100);
    });

    if (options.semantic) {
      it('puts a paraphrase closer than an unrelated sentence', async () => {
        const [q, para, other] = await model.embed([
          'How do I reset my password?',
          'I forgot my password and need to change it',
          'The cat sat on the mat',
        ]);
        expect(dot(q as Float32Array, para as Float32Array)).toBeGreaterThan(dot(q as Float32Array, other as Float32Array) + 0.2);
      });
    }

    it('closes idempotently', async () => {
      const extra = await options.create();
      await extra.embed(['warm up']);
      await extra.close?.();
      await extra.close?.();
    });
  });
}
