/** The most frequent function words of some languages; enough to tell them apart on a paragraph. */
const STOPWORDS: Record<string, readonly string[]> = {
  en: ['the', 'and', 'of', 'to', 'is', 'in', 'that', 'it', 'for', 'with', 'are', 'this', 'on', 'be', 'as', 'was', 'you', 'not'],
  de: ['der', 'die', 'und', 'das', 'ist', 'nicht', 'ein', 'eine', 'zu', 'mit', 'den', 'von', 'sich', 'auf', 'für', 'auch', 'wird', 'dem'],
  fr: ['le', 'la', 'les', 'et', 'des', 'est', 'une', 'un', 'du', 'que', 'pour', 'dans', 'pas', 'sur', 'avec', 'il', 'au', 'qui'],
  es: ['el', 'la', 'los', 'las', 'y', 'que', 'de', 'es', 'en', 'un', 'una', 'por', 'con', 'para', 'del', 'se', 'al', 'como'],
  it: ['il', 'di', 'che', 'e', 'la', 'per', 'un', 'una', 'sono', 'non', 'con', 'del', 'della', 'gli', 'le', 'è', 'nel', 'anche'],
  nl: ['de', 'het', 'een', 'en', 'van', 'is', 'dat', 'niet', 'op', 'te', 'met', 'voor', 'zijn', 'die', 'ook', 'wordt', 'aan', 'er'],
  pt: ['o', 'a', 'os', 'as', 'e', 'que', 'de', 'do', 'da', 'em', 'um', 'uma', 'não', 'para', 'com', 'no', 'na', 'por'],
  sv: ['och', 'att', 'det', 'som', 'en', 'är', 'av', 'för', 'med', 'till', 'den', 'har', 'inte', 'om', 'ett', 'på', 'jag', 'var'],
  pl: ['i', 'w', 'nie', 'na', 'się', 'z', 'jest', 'że', 'do', 'to', 'jak', 'ale', 'co', 'od', 'po', 'tak', 'przez', 'dla'],
};
const LANGUAGES = Object.keys(STOPWORDS);
/** Each function word with the languages (indexes into LANGUAGES) it belongs to: one lookup per word of a text. */
const STOPWORD_LANGUAGES = new Map<string, number[]>();
for (const [i, lang] of LANGUAGES.entries()) {
  for (const word of STOPWORDS[lang] as readonly string[]) STOPWORD_LANGUAGES.set(word, [...(STOPWORD_LANGUAGES.get(word) ?? []), i]);
}

/**
 * A cheap language guess, no model and no download: scripts tell zh, ja, ko, ru, uk, el, he,
 * ar, hi, th; function words tell en, de, fr, es, it, nl, pt, sv, pl apart. Undefined for
 * short or unclear text. Good enough for metadata, not for NLP.
 */
export function detectLanguage(text: string): string | undefined {
  const sample = text.slice(0, 8000);
  const count = (re: RegExp) => sample.match(re)?.length ?? 0;
  // ASCII text (most documents) has none of the scripts below: one pass instead of ten.
  let ascii = true;
  let asciiLetters = 0;
  for (let i = 0; i < sample.length; i++) {
    const code = sample.charCodeAt(i) | 32;
    if (code >= 128) {
      ascii = false;
      break;
    }
    if (code >= 97 && code <= 122) asciiLetters++;
  }
  const letters = ascii ? asciiLetters : count(/\p{L}/gu);
  if (letters < 20) return undefined;
  if (!ascii) return scriptLanguage(letters, count) ?? wordLanguage(sample);
  return wordLanguage(sample);
}

/** The language a sample's script tells (zh, ja, ko, ru, uk, el, he, ar, hi, th), if one does; `count` counts matches in the sample. */
function scriptLanguage(letters: number, count: (re: RegExp) => number): string | undefined {
  if (count(/[\u3040-\u30ff]/g) / letters > 0.1) return 'ja';
  if (count(/\p{Script=Hangul}/gu) / letters > 0.3) return 'ko';
  if (count(/\p{Script=Han}/gu) / letters > 0.3) return 'zh';
  const scripts: [RegExp, string][] = [
    [/\p{Script=Cyrillic}/gu, 'ru'],
    [/\p{Script=Greek}/gu, 'el'],
    [/\p{Script=Hebrew}/gu, 'he'],
    [/\p{Script=Arabic}/gu, 'ar'],
    [/\p{Script=Devanagari}/gu, 'hi'],
    [/\p{Script=Thai}/gu, 'th'],
  ];
  for (const [re, lang] of scripts) {
    if (count(re) / letters > 0.5) return lang === 'ru' && count(/[іїєґ]/giu) > 2 ? 'uk' : lang;
  }
  return undefined;
}

/** The language whose function words are most frequent in a sample (en, de, fr, es, it, nl, pt, sv, pl), if clear. */
function wordLanguage(sample: string): string | undefined {
  const words = sample.toLowerCase().match(/\p{L}+/gu) ?? [];
  if (words.length < 8) return undefined;
  const hits = new Array<number>(LANGUAGES.length).fill(0);
  for (const w of words) for (const i of STOPWORD_LANGUAGES.get(w) ?? []) hits[i] = (hits[i] as number) + 1;
  // The first language with the most hits, as when they were counted one language after another.
  let best = 0;
  for (let i = 1; i < hits.length; i++) if ((hits[i] as number) > (hits[best] as number)) best = i;
  return (hits[best] as number) > 0 && (hits[best] as number) / words.length >= 0.08 ? LANGUAGES[best] : undefined;
}

/** `en-US` → `en`; undefined for anything that is not a language tag. */
export function normalizeLanguageTag(tag: string | undefined): string | undefined {
  const m = tag ? /^([a-z]{2,3})(?:[-_]|$)/i.exec(tag.trim()) : null;
  return m?.[1]?.toLowerCase();
}
