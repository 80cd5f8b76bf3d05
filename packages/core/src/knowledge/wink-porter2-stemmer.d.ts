// wink-porter2-stemmer ships no types: its one export, the Porter2 (Snowball English) stemmer.
declare module 'wink-porter2-stemmer' {
  /** The stem of one lower-case English word. */
  export default function stem(word: string): string;
}
